# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# resolve PATH: PATH resolved without creating anything: its nearest
# existing ancestor with symbolic links followed and `..` removed, then
# the rest of PATH after it. build-kmod.sh and dkms-source.sh source this
# to compare an output folder with the sources before they write: a string
# compare would let OUTDIR=. or a link to the checkout delete the sources.
resolve() {
	p=$1 rest=
	while [ ! -d "$p" ]; do
		rest=/${p##*/}$rest
		case "$p" in */*) p=${p%/*} ;; *) p=. ;; esac
		[ -n "$p" ] || p=/
	done
	echo "$(cd "$p" && pwd -P)$rest"
}
