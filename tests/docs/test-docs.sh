#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The documentation builds with Sphinx with no warning (-W: a warning is
# an error), and its C examples compile.
#
# Usage: test-docs.sh SOURCE_ROOT OUTDIR CC CFLAGS...
set -u

src=${1:?usage: test-docs.sh SOURCE_ROOT OUTDIR CC CFLAGS...}
out=${2:?usage: test-docs.sh SOURCE_ROOT OUTDIR CC CFLAGS...}
cc=${3:?usage: test-docs.sh SOURCE_ROOT OUTDIR CC CFLAGS...}
shift 3
. "$(dirname "$0")/../tap.sh"
echo "TAP version 13"

if ! command -v sphinx-build >/dev/null 2>&1; then
	echo "# sphinx-build is missing: scripts/setup.sh installs python3-sphinx"
	not_ok "sphinx-build -W over Documentation/"
else
	rm -rf "$out/html" "$out/doctrees"
	if sphinx-build -W --keep-going -q -d "$out/doctrees" -b html \
			"$src/Documentation" "$out/html" >"$out/sphinx.log" 2>&1; then
		ok "sphinx-build -W over Documentation/ (no warning)"
	else
		sed 's/^/# /' "$out/sphinx.log"
		not_ok "sphinx-build -W over Documentation/ (no warning)"
	fi
	# Every page made it into the HTML set.
	missing=
	for f in "$src"/Documentation/*.rst "$src"/Documentation/man/*.rst; do
		rel=${f#"$src/Documentation/"}
		[ -f "$out/html/${rel%.rst}.html" ] || missing="$missing $rel"
	done
	if [ -z "$missing" ]; then
		ok "every .rst page is in the HTML set"
	else
		not_ok "every .rst page is in the HTML set (missing:$missing)"
	fi
fi

# cpu.rst's executable example, as a reader would copy it: the literal
# block after "exporting one table", up to the next paragraph.
sed -n '/^    #include <string.h>$/,/^Build it with/p' "$src/Documentation/cpu.rst" |
	sed '$d' | sed 's/^    //' >"$out/cpu-example.c"
if [ -s "$out/cpu-example.c" ] &&
   "$cc" "$@" -Wall -Werror -O2 -shared -fPIC -o "$out/cpu-example.so" \
		"$out/cpu-example.c" >"$out/cc.log" 2>&1; then
	ok "cpu.rst's executable example compiles with -Wall -Werror"
else
	sed 's/^/# /' "$out/cc.log" 2>/dev/null
	not_ok "cpu.rst's executable example compiles with -Wall -Werror"
fi

tap_end
