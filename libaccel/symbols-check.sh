#!/bin/sh
# SPDX-License-Identifier: MIT
#
# symbols-check.sh NM LIBRARY EXPECTED
#
# Compares the dynamic symbols LIBRARY exports with the list in EXPECTED
# (one name a line, '#' comments) and fails on any difference, so that the
# exported set never changes by accident.
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 NM LIBRARY EXPECTED" >&2
	exit 2
fi
nm=$1 lib=$2 expected=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "0000000000001234 T accel_x@@ACCEL_0.1" -> "accel_x"
"$nm" -D --defined-only "$lib" |
	awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
	LC_ALL=C sort -u >"$tmp/actual"
grep -v -e '^#' -e '^[[:space:]]*$' "$expected" |
	LC_ALL=C sort -u >"$tmp/expected"

if ! diff -u "$tmp/expected" "$tmp/actual" >"$tmp/diff"; then
	echo "FAIL: the symbols $lib exports differ from $expected" >&2
	echo "('-' listed but not exported, '+' exported but not listed):" >&2
	tail -n +3 "$tmp/diff" >&2
	echo "If the change is intended, update libaccel.sym and libaccel.symbols." >&2
	exit 1
fi
echo "ok: $lib exports exactly the $(wc -l <"$tmp/actual") symbols of $expected"
