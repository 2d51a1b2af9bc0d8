#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# conftest.sh KDIR OUT_HEADER
#
# Find what the target kernel's headers offer by compiling one small probe
# per feature against them (through Kbuild, with the kernel's own flags), and
# write the answers as ACCEL_HAVE_* macros to OUT_HEADER. kmod/compat.h is the
# only file that reads them; version numbers are never compared, because
# distribution kernels carry backports (Debian's 6.1 has the 6.3-era
# io_uring_cmd_done(), for one).
#
# Adding a probe: one probe_<name> heredoc below; the macro is
# ACCEL_HAVE_<NAME>, defined to 1 when the probe compiles.
set -eu

kdir=${1:?usage: conftest.sh KDIR OUT_HEADER}
out=${2:?usage: conftest.sh KDIR OUT_HEADER}
[ -f "$kdir/Makefile" ] || {
	echo "conftest.sh: no kernel build tree at '$kdir' (no Makefile); install" \
	     "the headers for that kernel or pass KDIR=<path to its build tree>" >&2
	exit 1
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/accelsched-conftest.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

probe() { # probe NAME: the probe's C body on stdin
	cat >"$dir/$1.c"
	names="${names:-} $1"
}

# Must always compile: proves the tree and the compiler work at all.
probe sanity <<'EOF'
#include <linux/module.h>
int probe(void) { return 0; }
EOF

# <linux/io_uring/cmd.h> exists (6.7+); before, struct io_uring_cmd lives in
# <linux/io_uring.h>.
probe io_uring_cmd_h <<'EOF'
#include <linux/io_uring/cmd.h>
int probe(struct io_uring_cmd *c) { return c->cmd_op; }
EOF

# struct io_uring_cmd points at the whole SQE (->sqe, 6.7+) rather than at
# its command area (->cmd).
probe io_uring_cmd_sqe <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
const void *probe(struct io_uring_cmd *c) { return io_uring_sqe_cmd(c->sqe); }
EOF

# io_uring_cmd_done(cmd, ret, res2, issue_flags): four arguments (6.3+, and
# Debian's 6.1); 6.18 dropped res2.
probe io_uring_cmd_done_res2 <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
void probe(struct io_uring_cmd *c, unsigned int f) { io_uring_cmd_done(c, 0, 0, f); }
EOF

# Where io_uring_cmd_done() has no res2 (6.18), io_uring_cmd_done32() does.
probe io_uring_cmd_done32 <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
void probe(struct io_uring_cmd *c, unsigned int f) { io_uring_cmd_done32(c, 0, 0, f); }
EOF

# The task-work callback takes issue_flags (6.3+, and Debian's 6.1).
probe io_uring_tw_issue_flags <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
static void cb(struct io_uring_cmd *c, unsigned int f) { }
void probe(struct io_uring_cmd *c) { io_uring_cmd_complete_in_task(c, cb); }
EOF

# Cancelable uring_cmds: io_uring_cmd_mark_cancelable() and IO_URING_F_CANCEL
# (6.7+). Without them, ring exit waits for every pending command.
probe io_uring_cmd_cancelable <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
void probe(struct io_uring_cmd *c, unsigned int f)
{
	if (!(f & IO_URING_F_CANCEL))
		io_uring_cmd_mark_cancelable(c, f);
}
EOF

# The task that issued a uring_cmd (6.7+ helper).
probe io_uring_cmd_get_task <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
struct task_struct *probe(struct io_uring_cmd *c) { return io_uring_cmd_get_task(c); }
EOF

# Typed access to the command's private area (6.11+).
probe io_uring_cmd_to_pdu <<'EOF'
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#endif
struct p { u64 a; };
u64 probe(struct io_uring_cmd *c) { return io_uring_cmd_to_pdu(c, struct p)->a; }
EOF

# The ring behind a uring_cmd, to tell a ring being torn down (kernels
# without cancelable uring_cmds; struct io_ring_ctx is public since 6.1).
probe io_uring_ctx_refs <<'EOF'
#include <linux/io_uring.h>
#include <linux/io_uring_types.h>
#include <linux/percpu-refcount.h>
bool probe(struct io_uring_cmd *c) { return percpu_ref_is_dying(&cmd_to_io_kiocb(c)->ctx->refs); }
EOF

# eventfd_signal(ctx) without a count (6.8+).
probe eventfd_signal_1arg <<'EOF'
#include <linux/eventfd.h>
void probe(struct eventfd_ctx *c) { eventfd_signal(c); }
EOF

# dma_fence_ops.use_64bit_seqno: fences of the context compare their
# seqnos on 64 bits (both 6.1 and 6.12; later kernels moved it to a flag).
probe fence_ops_64bit_seqno <<'EOF'
#include <linux/dma-fence.h>
const struct dma_fence_ops probe_ops = { .use_64bit_seqno = true };
EOF

# DMA_FENCE_FLAG_SEQNO64_BIT: the same, as a fence flag.
probe fence_flag_seqno64 <<'EOF'
#include <linux/dma-fence.h>
int probe(void) { return DMA_FENCE_FLAG_SEQNO64_BIT; }
EOF

# Fence deadlines: dma_fence_ops.set_deadline and dma_fence_set_deadline()
# (6.3+; SYNC_IOC_SET_DEADLINE on a sync_file reaches the ops).
probe fence_set_deadline <<'EOF'
#include <linux/dma-fence.h>
static void probe_cb(struct dma_fence *f, ktime_t d) { }
const struct dma_fence_ops probe_ops = { .set_deadline = probe_cb };
void probe(struct dma_fence *f) { dma_fence_set_deadline(f, 0); }
EOF

# __assign_str(dst) without its source (6.10+). A trace event needs its own
# header, included again by define_trace.h.
cat >"$dir/assign_str_1arg_trace.h" <<'EOF'
#undef TRACE_SYSTEM
#define TRACE_SYSTEM accel_probe
#if !defined(_PROBE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _PROBE_TRACE_H
#include <linux/tracepoint.h>
TRACE_EVENT(accel_probe_ev,
	TP_PROTO(const char *s), TP_ARGS(s),
	TP_STRUCT__entry(__string(s, s)),
	TP_fast_assign(__assign_str(s);),
	TP_printk("%s", __get_str(s)));
#endif
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE assign_str_1arg_trace
#include <trace/define_trace.h>
EOF
probe assign_str_1arg <<'EOF'
#define CREATE_TRACE_POINTS
#include "assign_str_1arg_trace.h"
void probe(void) { trace_accel_probe_ev("x"); }
EOF

echo "ccflags-y := -I\$(src)" >"$dir/Kbuild"
for n in $names; do
	echo "obj-m += $n.o" >>"$dir/Kbuild"
done
objs=
for n in $names; do objs="$objs $n.o"; done

# One Kbuild run compiles every probe; -k keeps going past the failing ones.
# shellcheck disable=SC2086
make -s -k -C "$kdir" M="$dir" $objs >"$dir/log" 2>&1 || true

tmp="$out.tmp.$$"
{
	echo "/* Generated by scripts/conftest.sh against $(basename "$(cd "$kdir" && pwd)"). Do not edit. */"
	echo "#ifndef _ACCEL_COMPAT_PROBED_H"
	echo "#define _ACCEL_COMPAT_PROBED_H"
	for n in $names; do
		[ "$n" = sanity ] && continue
		m=ACCEL_HAVE_$(echo "$n" | tr '[:lower:]' '[:upper:]')
		if [ -s "$dir/$n.o" ]; then
			echo "#define $m 1"
		else
			echo "/* #undef $m */"
		fi
	done
	echo "#endif"
} >"$tmp"
mv "$tmp" "$out"

# A tree where nothing compiles is a broken tree, not a kernel without
# features: say so rather than build against wrong answers.
if [ ! -s "$dir/sanity.o" ]; then
	echo "conftest.sh: no probe compiled against $kdir; its log:" >&2
	cat "$dir/log" >&2
	rm -f "$out"
	exit 1
fi
