#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test-install.sh CHECK BUILDDIR NAME=VALUE...
#
# Installs the build with `meson install --destdir` into a fresh folder of
# BUILDDIR (tests/install/CHECK.destdir), never outside it and without
# root, and checks one aspect of what a package of it holds:
#
#   tree        the installed files, their types and modes, against
#               expected.txt; no build-folder run path; the tools and the
#               packers run from the tree
#   pkgconfig   version.c built and run through the installed libaccel.pc
#               (shared and static) and through the uninstalled one
#   man         each man page: troff (or gzip of it), no groff warning, and
#               the sections a man page of a driver's tool has
#   completion  the bash completion: syntax, links, and the commands,
#               options and benchmarks of each tool's --help offered
#
# NAME=VALUE: meson, cc, srcdir, version, man (yes|no), static (yes|no), and
# the install folders PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR UDEVDIR
# COMPLETIONSDIR. Prints one "ok N - what" or "not ok N - what" line per
# check, with what was seen under a failure; exits 1 if any failed, 77
# (skip) with "SKIP: why" where a tool it needs is absent.
set -u

check=${1:?usage: test-install.sh CHECK BUILDDIR NAME=VALUE...}
build=${2:?usage: test-install.sh CHECK BUILDDIR NAME=VALUE...}
shift 2
case $check in
tree | pkgconfig | man | completion) ;;
*)
	echo "test-install.sh: unknown check '$check' (tree, pkgconfig, man, completion)" >&2
	exit 2
	;;
esac
declare -A opt
for a; do opt[${a%%=*}]=${a#*=}; done
for k in meson cc srcdir version man static \
	PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR UDEVDIR COMPLETIONSDIR; do
	if [ -z "${opt[$k]:-}" ]; then
		echo "test-install.sh: $k=VALUE is missing (tests/install/meson.build passes it)" >&2
		exit 2
	fi
done

build=$(cd "$build" && pwd)
work=$build/tests/install/$check.destdir
. "$(dirname "$0")/../tap.sh"
# expect WHAT CMD...: runs CMD, ok when it exits 0, else its output.
expect() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$what"
	else
		not_ok "$what" "exit $?: $*" "$out"
	fi
}
# oneline TEXT: TEXT's lines joined by spaces.
oneline() { paste -sd' ' <<<"$1"; }
finish() {
	echo "$n checks, $fails failed"
	[ "$fails" = 0 ]
	exit
}

# A fresh tree, files 0644 and programs 0755 whatever the caller's umask.
install_tree() {
	rm -rf "$work"
	mkdir -p "$work"
	umask 022
	local out
	if ! out=$("${opt[meson]}" install -C "$build" --destdir "$work/root" \
		--no-rebuild --quiet 2>&1); then
		not_ok "meson install --destdir into the build folder" "$out"
		finish
	fi
	ok "meson install --destdir into the build folder"
	root=$work/root
}

# The tree's files, one a line, sorted: "PATH file MODE" or "PATH link ->
# TARGET", with the install folders as their names (longest first) and the
# version as VERSION.
listing() {
	local t tokens
	tokens=$(for t in COMPLETIONSDIR UDEVDIR INCLUDEDIR LIBDIR MANDIR BINDIR PREFIX; do
		echo "${#opt[$t]} $t"
	done | sort -rn | cut -d' ' -f2)
	(cd "$root" && find . ! -type d -printf '%y %m /%P %l\n') |
	while read -r type mode path target; do
		for t in $tokens; do
			case $path in
			"${opt[$t]}"/*) path=$t${path#"${opt[$t]}"}; break ;;
			esac
		done
		case $type in
		f) line="$path file 0$mode" ;;
		l) line="$path link -> $target" ;;
		*) line="$path type $type" ;;
		esac
		echo "${line//"${opt[version]}"/VERSION}"
	done | LC_ALL=C sort
}

check_tree() {
	local expected seen elf f out
	install_tree

	# What a build with man pages and a static library installs.
	local drop=('^#' '^$')
	[ "${opt[man]}" = yes ] || drop+=('^MANDIR/')
	[ "${opt[static]}" = yes ] || drop+=('^LIBDIR/libaccel\.a ')
	expected=$(grep -v "${drop[@]/#/-e}" "${opt[srcdir]}/tests/install/expected.txt" |
		LC_ALL=C sort)
	seen=$(listing)
	if [ "$seen" = "$expected" ]; then
		ok "the installed tree is expected.txt ($(echo "$seen" | wc -l) files)"
	else
		not_ok "the installed tree is expected.txt" \
			"diff -u expected.txt installed:"
		diff -u <(echo "$expected") <(echo "$seen") | tail -n +3 | sed 's/^/#   /'
	fi

	# Installed programs and the library must not look into the build
	# folder (meson strips the build run paths at install).
	elf=0
	while IFS= read -r -d '' f; do
		[ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = 177ELF ] || continue
		elf=$((elf + 1))
		if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
			not_ok "${f#"$root"} has no run path into the build folder" \
				"$(readelf -d "$f" | grep -E 'R(UN)?PATH')"
		fi
	done < <(find "$root" -type f -print0)
	ok "no run path into the build folder in $elf ELF files"

	local bin=$root${opt[BINDIR]}
	export LD_LIBRARY_PATH=$root${opt[LIBDIR]}
	out=$("$bin/accelctl" --version 2>&1)
	if [ "$out" = "accelctl (libaccel) ${opt[version]}" ]; then
		ok "installed accelctl --version names ${opt[version]}"
	else
		not_ok "installed accelctl --version names ${opt[version]}" "$out"
	fi
	expect "installed accel-run --help exits 0" "$bin/accel-run" --help
	expect "installed accel-bench --help exits 0" "$bin/accel-bench" --help
	# The dynamic build: it has a program interpreter, the static one none.
	if readelf -l "$bin/accel-bench" | grep -q 'Requesting program interpreter'; then
		ok "installed accel-bench is the dynamically linked build"
	else
		not_ok "installed accel-bench is the dynamically linked build" \
			"readelf -l shows no INTERP: the static build was installed"
	fi
	for f in accel-vkpack accel-gpupack; do
		if [ "$(head -n1 "$bin/$f")" != '#!/usr/bin/env python3' ]; then
			not_ok "$f starts with its python3 shebang" "$(head -n1 "$bin/$f")"
		elif ! out=$("$bin/$f" --help 2>&1) || [[ $out != usage:* ]]; then
			not_ok "$f --help runs from the tree" "$out"
		else
			ok "$f runs from the tree through its shebang"
		fi
	done
	if grep -v -e '^#' -e '^$' "$root${opt[PREFIX]}/lib/modules-load.d/accelsched.conf" |
		grep -qx accelsched; then
		ok "modules-load.d/accelsched.conf names the module"
	else
		not_ok "modules-load.d/accelsched.conf names the module" \
			"$(cat "$root${opt[PREFIX]}/lib/modules-load.d/accelsched.conf")"
	fi
	finish
}

# build_and_run WHAT RUN_LIBDIR CC_ARGS...: compiles version.c and runs
# it; it must print the version and load libaccel from RUN_LIBDIR.
build_and_run() {
	local what=$1 libdir=$2 exe out
	shift 2
	exe=$work/version-${what// /-}
	if ! out=$(${opt[cc]} -Wall -Wextra -Werror -o "$exe" \
		"${opt[srcdir]}/tests/install/version.c" "$@" 2>&1); then
		not_ok "version.c builds $what" "${opt[cc]} ... $*" "$out"
		return
	fi
	ok "version.c builds $what"
	out=$(LD_LIBRARY_PATH=$libdir "$exe" 2>&1)
	if [[ $out == "libaccel ${opt[version]}, uapi ABI "* ]]; then
		ok "it runs $what: $out"
	else
		not_ok "it runs $what" "$out"
	fi
	[ -n "$libdir" ] || return
	out=$(LD_LIBRARY_PATH=$libdir ldd "$exe" | grep libaccel)
	if [[ $out == *"=> $libdir/libaccel.so.0 "* ]]; then
		ok "it loads the libaccel.so.0 of $libdir"
	else
		not_ok "it loads the libaccel.so.0 of $libdir" "$out"
	fi
}

check_pkgconfig() {
	local text args syspath
	command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
	install_tree

	# The installed file, as a cross or package build reads it: from the
	# tree only (liburing, which it requires privately, from the system).
	syspath=$(pkg-config --variable pc_path pkg-config)
	export PKG_CONFIG_SYSROOT_DIR=$root
	export PKG_CONFIG_LIBDIR=$root${opt[LIBDIR]}/pkgconfig:$syspath
	unset PKG_CONFIG_PATH
	if text=$(pkg-config --cflags --libs libaccel 2>&1); then
		ok "installed libaccel.pc: $text"
		read -ra args <<<"$text"
		build_and_run "through the installed libaccel.pc" \
			"$root${opt[LIBDIR]}" "${args[@]}"
	else
		not_ok "pkg-config reads the installed libaccel.pc" "$text"
	fi
	if [ "${opt[static]}" = yes ]; then
		if text=$(pkg-config --static --cflags --libs libaccel 2>&1); then
			# glibc warns that dlopen() in a static program needs
			# the shared C library at run time: true, and not ours.
			read -ra args <<<"$text"
			build_and_run "statically through the installed libaccel.pc" \
				"" -static "${args[@]}"
		else
			not_ok "pkg-config --static reads the installed libaccel.pc" "$text"
		fi
	fi
	unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR

	# The uninstalled file: the build tree as a library of its own.
	export PKG_CONFIG_PATH=$build/meson-uninstalled
	if text=$(pkg-config --cflags --libs libaccel 2>&1); then
		ok "uninstalled libaccel.pc: $text"
		read -ra args <<<"$text"
		build_and_run "through the uninstalled libaccel.pc" "$build/libaccel" "${args[@]}"
	else
		not_ok "pkg-config reads the uninstalled libaccel.pc" "$text"
	fi
	finish
}

check_man() {
	local page file text sections s missing out
	if [ "${opt[man]}" != yes ]; then
		echo "SKIP: the man pages are not built (-Dman=disabled, or no rst2man: python3-docutils)"
		exit 77
	fi
	install_tree
	for page in accelctl accel-run accel-bench; do
		file=$root${opt[MANDIR]}/man1/$page.1
		[ -f "$file.gz" ] && file=$file.gz
		if [ ! -f "$file" ]; then
			not_ok "man1/$page.1 is installed" "absent from ${opt[MANDIR]}/man1"
			continue
		fi
		case $(head -c2 "$file" | od -An -tx1 | tr -d ' ') in
		1f8b) text=$(gzip -dc "$file") ;;
		*) text=$(cat "$file") ;;
		esac
		if ! grep -qE "^\.TH \"?${page^^}\"? \"?1\"?" <<<"$text"; then
			not_ok "man1/${file##*/} is a troff man page of $page(1)" \
				"no '.TH ${page^^} 1' line; it starts: $(head -c 60 <<<"$text")"
			continue
		fi
		ok "man1/${file##*/} is a troff man page of $page(1)"
		if command -v groff >/dev/null; then
			out=$(groff -k -man -Tutf8 -ww -z <<<"$text" 2>&1)
			if [ -z "$out" ]; then
				ok "groff formats $page(1) without a warning"
			else
				not_ok "groff formats $page(1) without a warning" "$out"
			fi
		fi
		sections=$(sed -n 's/^\.SH "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' <<<"$text")
		missing=
		for s in NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES "EXIT STATUS" "SEE ALSO"; do
			grep -qxF "$s" <<<"$sections" || missing="$missing, $s"
		done
		if [ -z "$missing" ]; then
			ok "$page(1) has NAME ... EXIT STATUS, FILES, ENVIRONMENT, SEE ALSO"
		else
			not_ok "$page(1) has every section a tool's page needs" \
				"missing: ${missing#, }" "has: $(oneline "$sections")"
		fi
	done
	finish
}

# offered LINE: the words the completion offers for LINE (the cursor at
# its end), one a line, as bash would call the completion function.
offered() {
	local line=$1 fn
	COMP_LINE=$line
	COMP_POINT=${#line}
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *' ' ]] && COMP_WORDS+=('')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	fn=$(complete -p "${COMP_WORDS[0]}" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	[ -n "$fn" ] || return 1
	"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}"
}

# options TEXT: the options a --help text names (-x, --long).
options() {
	grep -oE '(^|[[:space:][|,])--?[A-Za-z][A-Za-z0-9-]*' <<<"$1" |
		sed 's/^[[:space:][|,]*//' | sort -u
}

# section TEXT HEADING: the names listed under HEADING (two-space indent).
section() {
	awk -v h="$2" '$0 == h { on = 1; next } /^[^ ]/ || /^$/ { on = 0 }
		on && /^  [a-z]/ { print $1 }' <<<"$1"
}

# covers WHAT LINE WORDS: ok when completing LINE offers each of WORDS.
covers() {
	local what=$1 line=$2 got w missing=
	got=$(offered "$line")
	for w in $3; do
		grep -qxF -- "$w" <<<"$got" || missing="$missing $w"
	done
	if [ -n "$3" ] && [ -z "$missing" ]; then
		ok "completing '$line' offers $what: $(oneline "$got")"
	else
		not_ok "completing '$line' offers $what" \
			"missing:${missing:- (--help listed none)}" "offered: $(oneline "$got")"
	fi
}

check_completion() {
	local dir script bc help cmds cmd got
	install_tree
	dir=$root${opt[COMPLETIONSDIR]}
	script=$dir/accelctl
	expect "bash -n on the completion script" bash -n "$script"
	for cmd in accel-run accel-bench; do
		if [ "$(readlink "$dir/$cmd")" = accelctl ]; then
			ok "completions/$cmd links to accelctl's script"
		else
			not_ok "completions/$cmd links to accelctl's script" \
				"$(ls -l "$dir/$cmd" 2>&1)"
		fi
	done

	# bash-completion's helpers, which the script uses as it does when
	# bash-completion loads it.
	bc=$(pkg-config --variable=datadir bash-completion 2>/dev/null)/bash-completion/bash_completion
	[ -f "$bc" ] || bc=/usr/share/bash-completion/bash_completion
	if [ ! -f "$bc" ]; then
		echo "SKIP: bash-completion is not installed (no $bc)"
		exit 77
	fi
	# shellcheck disable=SC1090
	source "$bc"
	# shellcheck disable=SC1090
	source "$script"

	# The installed tools' own --help is the reference.
	export LD_LIBRARY_PATH=$root${opt[LIBDIR]}
	local bin=$root${opt[BINDIR]}
	help=$("$bin/accelctl" --help)
	cmds=$(section "$help" Commands:)
	covers "accelctl's commands" "accelctl " "$cmds"
	covers "accelctl's options" "accelctl -" \
		"$(options "$(sed -n 's/^Usage: //p' <<<"$help")")"
	for cmd in $cmds; do
		covers "accelctl $cmd's options" "accelctl $cmd -" \
			"$(options "$("$bin/accelctl" "$cmd" --help)")"
	done
	if [ "$(offered "accelctl top -d ")" = "" ]; then
		ok "completing 'accelctl top -d ' offers nothing (a number)"
	else
		not_ok "completing 'accelctl top -d ' offers nothing" "$(offered "accelctl top -d ")"
	fi

	help=$("$bin/accel-run" --help)
	covers "accel-run's options" "accel-run -" "$(options "$help")"
	covers "accel-run's device schemes" "accel-run -d " "cpu:// vulkan:// cuda:// hip://"
	mkdir -p "$work/scripts/sub"
	: >"$work/scripts/a.acc"
	: >"$work/scripts/b.txt"
	got=$(cd "$work/scripts" && offered "accel-run ")
	if [ "$(oneline "$got")" = "a.acc sub" ]; then
		ok "completing 'accel-run ' offers command scripts and folders: $(oneline "$got")"
	else
		not_ok "completing 'accel-run ' offers a.acc and sub/, not b.txt" \
			"offered: $(oneline "$got")"
	fi

	help=$("$bin/accel-bench" --help)
	covers "accel-bench's options" "accel-bench -" "$(options "$help")"
	covers "accel-bench's benchmarks" "accel-bench " "$(section "$help" benchmarks:)"
	finish
}

"check_$check"
