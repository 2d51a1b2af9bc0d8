// SPDX-License-Identifier: MIT
/*
 * accel-bench insn: the submission paths of issue 19 in instructions, not
 * time. Run it in the VM under the accel-insn QEMU plugin
 * (scripts/insn-vm.sh, which `make bench` runs): the plugin counts the
 * guest instructions each marked window runs, kernel and user, on the
 * window's vCPU and on all of them, and scripts/insn-summary.py divides
 * by the operations the window ran.
 *
 * Under TCG a time mixes what a path does with what TCG makes each of its
 * instructions cost, and drifts between runs of the same module; a count
 * of instructions is the same each run, so it ranks two modules on
 * whatever noisy machine, and it is the figure `perf stat -e
 * instructions` would give on hardware.
 *
 * Without the plugin this benchmark runs and counts nothing: its markers
 * are NOPs.
 */
#include <sched.h>
#include <stdio.h>

#include "bench.h"

static cpu_set_t saved;
static int pinned;

void insn_window(enum insn_window id, const char *name, long ops)
{
	fprintf(notes, "# insn: window %d %s %ld\n", (int)id, name, ops);
	fflush(notes);
}

void insn_pin(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	pinned = cpu >= 0 && !sched_getaffinity(0, sizeof(saved), &saved);
	if (!pinned)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		pinned = 0;
}

void insn_unpin(void)
{
	if (pinned)
		sched_setaffinity(0, sizeof(saved), &saved);
	pinned = 0;
}

int bench_insn(const struct opts *o)
{
	int rc = insn_kernel(o);

	return rc ? rc : insn_libaccel(o);
}
