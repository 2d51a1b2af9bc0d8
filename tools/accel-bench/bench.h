/* SPDX-License-Identifier: MIT */
/*
 * accel-bench: what every benchmark shares. A benchmark is a function
 * registered in main.c's table; it measures its path and a baseline side by
 * side (rounds interleaved, medians kept) and reports ratios with metric().
 */
#ifndef ACCEL_BENCH_H
#define ACCEL_BENCH_H

#include <stdio.h>

struct opts {
	int json;    /* one JSON object per benchmark instead of text */
	int rounds;  /* interleaved rounds per figure */
	long ops;    /* operations per round (each benchmark scales it) */
};

#define NAMED_ONLY 2

struct bench {
	const char *name;
	const char *what;  /* one line for --help */
	/*
	 * 1: runs only where /dev/accelsched exists (the VM); NAMED_ONLY: that,
	 * and only when named (insn, which wants a QEMU plugin to mean much).
	 */
	int needs_module;
	int (*run)(const struct opts *o);
};

/*
 * Where the '#' lines (the absolute figures behind the metrics, skips)
 * go: stdout, or stderr with --json, whose stdout holds JSON alone.
 */
extern FILE *notes;

double now_ns(void);
double median(double *v, int n);

/*
 * kernel.c: /dev/accelsched opened read-write, or -1 with why printed
 * (@bench names the benchmark); one ACCEL_URING_CMD_NOP on @ring to the
 * module's file @fd, entered alone as libaccel enters a SUBMIT
 * (io_uring_submit(), no GETEVENTS) and reaped: 0, or -errno.
 */
struct io_uring;
int bench_open_dev(const char *bench);
int bench_uring_cmd_nop_alone(struct io_uring *ring, int fd);

/* Where temporary files go: $TMPDIR if set, else the system's P_tmpdir. */
const char *bench_tmpdir(void);

#ifdef ACCEL_BENCH_VULKAN
/*
 * vkcache.c: write the built-in vulkan test kernels (linked in) to @path,
 * for accel_executable_load(); 0, or -1 with errno set.
 */
int bench_write_vk_kernels(const char *path);
#endif

/*
 * Print one figure: "METRIC name value" (text), or a "name": value member
 * of the current JSON object (*first tracks the separator).
 */
void metric(const struct opts *o, const char *name, double v, int *first);

/*
 * insn: windows for the accel-insn QEMU plugin (tools/qemu-insn), which
 * counts the guest instructions each window runs; scripts/insn-summary.py
 * turns the counts into METRIC lines. A window's id, its name and its
 * operations are printed as "# insn: window ID NAME OPS" before it runs.
 */
enum insn_window {
	INSN_URING_SUBMIT = 1, /* a batch of inline SUBMITs through the ring */
	INSN_URING_CMD_NOP,    /* a batch of ACCEL_URING_CMD_NOP */
	INSN_RING_NOP,         /* a batch of IORING_OP_NOP */
	INSN_IOCTL_NOP,        /* one ACCEL_IOCTL_NOP */
	INSN_EMBEDDED_SUBMIT,  /* libaccel's REUSABLE submit, embedded scheduler */
	INSN_KERNEL_SUBMIT,    /* the same on the module's scheduler */
	INSN_EMBEDDED_STREAM,  /* a stream of one-dispatch jobs until the last signal */
	INSN_KERNEL_STREAM,    /* the same on the module's scheduler */
	INSN_URING_CMD_NOP_ALONE, /* one ACCEL_URING_CMD_NOP entered alone */
	INSN_URING_COMPLETE,   /* a batch of COMPLETEs through the ring */
	INSN_IOCTL_JOB,        /* one job's SUBMIT and COMPLETE by ioctl */
};
/* Prints window @id's line: its name and the operations one window runs. */
void insn_window(enum insn_window id, const char *name, long ops);
/* Pins the calling thread to the CPU it runs on (windows count per vCPU). */
void insn_pin(void);
void insn_unpin(void);
int bench_insn(const struct opts *o);
/* kernel.c and cmdbuf.c: their windows, run by bench_insn(). */
int insn_kernel(const struct opts *o);
int insn_libaccel(const struct opts *o);

/* kernel.c: the module's submission and wake-up paths. */
int bench_nop(const struct opts *o);
int bench_wake(const struct opts *o);
int bench_jobs(const struct opts *o);
int bench_latency(const struct opts *o);
int bench_inversion(const struct opts *o);
int bench_fair(const struct opts *o);
int bench_deadline(const struct opts *o);

/* cpu.c, cmdbuf.c, sem.c: libaccel on cpu:// with the embedded scheduler. */
int bench_cpu(const struct opts *o);
int bench_cmdbuf(const struct opts *o);
/* cmdbuf.c: the same submission on the module's scheduler and the embedded. */
int bench_ksubmit(const struct opts *o);
int bench_sem(const struct opts *o);
/* alloca.c: queue-ordered memory against the allocator (cpu, vulkan). */
int bench_alloca(const struct opts *o);

/*
 * tenant.c: tenants sharing the cpu engine through libaccel: the embedded
 * scheduler (tenant) and the module (ktenant, a process per tenant).
 */
int bench_tenant(const struct opts *o);
int bench_ktenant(const struct opts *o);

/* vulkan.c: libaccel on vulkan://0 against raw Vulkan (dynamic builds only). */
int bench_vulkan(const struct opts *o);
/* chain.c: a dependent chain on vulkan://0 and cuda://0, ordered on the device vs the host. */
int bench_chain(const struct opts *o);
/* vkcache.c: loads on vulkan://0 with a warm executable cache vs a cold one. */
int bench_vkcache(const struct opts *o);
/* vkcache.c: the same on cuda://0 (ACCEL_BENCH_CUDA_EXECUTABLES). */
int bench_cucache(const struct opts *o);

/*
 * model.c: the cost model's predictions against measured device time
 * (model), and fair share charged by prediction vs by the running
 * average on the embedded scheduler (share).
 */
int bench_model(const struct opts *o);
int bench_share(const struct opts *o);

#endif
