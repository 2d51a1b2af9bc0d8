// SPDX-License-Identifier: MIT
/*
 * insn-selftest: a known workload in accel-insn windows (tools/qemu-insn),
 * for tests/insn/check-insn.py to hold the plugin's counts to.
 *
 * Each of ROUNDS rounds opens, in this order: 1000 getppid() system calls,
 * 2000 of them, an empty window, a user loop of 100,000 iterations, one
 * of 200,000, and 1000 rounds of three atomic instructions (a LOCK ADD, an
 * XCHG with memory, an MFENCE) among three that are not (an ADD to
 * memory, an XCHG of two registers with the same opcode, an LFENCE). The thread is pinned to its CPU first, so every window
 * starts and ends on one vCPU. It prints "# insn: window ID NAME OPS" for
 * each id, then "# insn-selftest: ROUNDS rounds", and needs nothing else
 * of the VM: run it under the plugin (scripts/check.sh does).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "accel-insn.h"

#define ROUNDS 5

static void calls(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* The same instructions per iteration whatever @n: a counted loop. */
static __attribute__((noinline)) unsigned long spin(unsigned long n)
{
	unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		__asm__ volatile("add %1, %0" : "+r"(x) : "r"(i));
	return x;
}

/* ATOMICS_ROUNDS times: three atomic instructions, three look-alikes. */
#define ATOMICS_ROUNDS 1000
static __attribute__((noinline)) long atomics(void)
{
	long v = 0, a = 1;

	for (long i = 0; i < ATOMICS_ROUNDS; i++) {
		__asm__ volatile("lock addq $1, %0" : "+m"(v));
		__asm__ volatile("addq $1, %0" : "+m"(v));
		__asm__ volatile("xchgq %1, %0" : "+m"(v), "+r"(a));
		/* 48 87 f7: the memory form's opcode, ModRM.mod 3 */
		__asm__ volatile("xchgq %%rsi, %%rdi" ::: "rsi", "rdi");
		__asm__ volatile("mfence" ::: "memory");
		__asm__ volatile("lfence" ::: "memory");
	}
	return v + a;
}

int main(void)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0) {
		perror("insn-selftest: sched_getcpu");
		return 1;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		perror("insn-selftest: sched_setaffinity");
		return 1;
	}
	printf("# insn: window 1 getppid_1000 1000\n"
	       "# insn: window 2 getppid_2000 2000\n"
	       "# insn: window 3 empty 1\n"
	       "# insn: window 4 spin_100000 100000\n"
	       "# insn: window 5 spin_200000 200000\n"
	       "# insn: window 6 atomics_3000 3000\n");
	fflush(stdout);
	for (int r = 0; r < ROUNDS; r++) {
		ACCEL_INSN_BEGIN(1);
		calls(1000);
		ACCEL_INSN_END(1);
		ACCEL_INSN_BEGIN(2);
		calls(2000);
		ACCEL_INSN_END(2);
		ACCEL_INSN_BEGIN(3);
		ACCEL_INSN_END(3);
		ACCEL_INSN_BEGIN(4);
		spin(100000);
		ACCEL_INSN_END(4);
		ACCEL_INSN_BEGIN(5);
		spin(200000);
		ACCEL_INSN_END(5);
		ACCEL_INSN_BEGIN(6);
		atomics();
		ACCEL_INSN_END(6);
	}
	printf("# insn-selftest: %d rounds\n", ROUNDS);
	return 0;
}
