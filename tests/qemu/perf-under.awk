# SPDX-License-Identifier: MIT
#
# perf script -F comm,tid,ip,sym | awk -v want=SYM -f perf-under.awk
#
# Of the samples whose call chain passes through SYM: the share of each
# function on the chain from the leaf up to SYM (inclusive), and of each
# leaf (self). Works with busybox awk, inside the VM.
/^\S/ { n = 0; next }
/^\s+[0-9a-f]+ / { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); st[n++] = sym; next }
/^$/ {
	if (n == 0) next
	hit = 0
	for (i = 0; i < n; i++) if (st[i] == want) { hit = i + 1; break }
	if (hit) {
		total++; leaf[st[0]]++
		delete seen
		for (i = 0; i < hit; i++) if (!(st[i] in seen)) { seen[st[i]] = 1; incl[st[i]]++ }
	}
	n = 0
}
END {
	printf "total %d samples under %s\n", total, want
	for (s in incl) printf "incl %5.1f%% %s\n", 100 * incl[s] / total, s | "sort -k2 -rn | head -45"
	close("sort -k2 -rn | head -45")
	for (s in leaf) printf "leaf %5.1f%% %s\n", 100 * leaf[s] / total, s | "sort -k2 -rn | head -25"
}
