# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# tap.sh: what the shell test scripts share, sourced by each
# (. "$(dirname "$0")/../tap.sh"). TAP on stdout:
#
#   ok NAME                  a check that held
#   not_ok NAME [DETAIL...]  one that did not; each DETAIL's lines follow
#                            as diagnostics ("#   ...")
#   check NAME COMMAND...    ok when COMMAND exits 0, else not_ok
#   tap_tmp TAG              $tmp: a temporary folder, removed at exit
#   tap_end                  the plan; exit status 0 if none failed, else 1
n=0 fails=0

ok() { n=$((n + 1)); echo "ok $n $1"; }

not_ok() {
	n=$((n + 1)) fails=$((fails + 1))
	echo "not ok $n $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/#   /'
	return 0
}

check() {
	_name=$1
	shift
	if "$@"; then ok "$_name"; else not_ok "$_name"; fi
}

tap_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelsched-$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT INT TERM
}

tap_end() {
	echo "1..$n"
	[ "$fails" = 0 ]
	exit
}
