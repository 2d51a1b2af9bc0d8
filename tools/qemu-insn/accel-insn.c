// SPDX-License-Identifier: MIT
/*
 * accel-insn.so: a QEMU TCG plugin that counts the guest instructions run
 * between two markers, so that a benchmark in the test VM can report what
 * a path costs in instructions, not in TCG time.
 *
 * Under TCG a guest instruction costs several host instructions, and how
 * many depends on the instruction (a locked one, a helper call, a page
 * walk), so times in the VM rank paths only roughly and drift from run to
 * run. Instructions do not drift: the same path runs the same count. This
 * is what `perf stat -e instructions` would give on hardware with a PMU,
 * which TCG does not emulate.
 *
 * The guest marks a window with a marker instruction (accel-insn.h): a
 * seven-byte NOP, `nopl disp32(%rax)`, whose displacement carries a magic,
 * START or STOP, and a window id. It does nothing on any x86-64 CPU; here
 * the plugin sees it when it translates the block that holds it and asks
 * to be called when it runs. Every block is counted as it starts, on its
 * vCPU, as kernel (an address in the upper half) or user.
 *
 * At STOP the plugin writes one line through QEMU's log (-d plugin,
 * -D FILE):
 *
 *	accel-insn: window ID vcpu V start-vcpu S own-kernel K own-user U
 *	            all-kernel K all-user U own-locked-kernel K own-locked-user U
 *
 * own-*: the vCPU the window started on (the benchmark pins its thread
 * there), from START to STOP; all-*: every vCPU together (the other
 * threads the path woke, interrupts, the idle loop). A window that ends
 * on another vCPU than it started on says so (vcpu != start-vcpu), and
 * its own-* counts are the start vCPU's. own-locked-*: of the own-*
 * instructions, the atomic ones: a LOCK prefix, an XCHG with memory
 * (locked without one) or an MFENCE. Each is a full barrier on x86 (tens
 * of cycles uncontended, a cache line's transfer when another CPU holds
 * it), and TCG runs each through a helper: a path's count of them says
 * what its instruction count does not.
 *
 * Argument: profile=on. The plugin then also counts, for each translation
 * block that runs on a window's vCPU while the window is open, how many
 * of its instructions ran there, and at exit writes one line per window
 * id (below ACCEL_INSN_PROFILE_IDS) and block address:
 *
 *	accel-insn: profile ID ADDRESS INSTRUCTIONS ATOMIC
 *
 * summed over every window with that id (ATOMIC: of the INSTRUCTIONS, the
 * atomic ones). scripts/insn-summary.py
 * --profile maps the addresses to functions.
 *
 * profile=all counts the blocks of every vCPU while a window is open on
 * any, for the window opened last: what the threads a path wakes run
 * (a reaper, an executor, the kernel's work on their behalf) as well.
 * Such a profile is exact while one window is open at a time, and
 * includes whatever else runs meanwhile.
 *
 * The declarations below are the part of QEMU's plugin API (version 1,
 * QEMU 4.2 to 8.1) that this file calls: distributions install the QEMU
 * binary with plugin support but not its qemu-plugin.h.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel-insn.h"

typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
				    void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

#define MAX_VCPUS 64
/* The upper half of the x86-64 address space: the kernel's. */
#define KERNEL_START 0xffff800000000000ull

/* Written only by its own vCPU's thread; read by any at a marker. */
struct vcpu_count {
	uint64_t insns[2]; /* user, kernel */
	uint64_t locked[2]; /* of those, the atomic ones */
} __attribute__((aligned(64)));

static struct vcpu_count counts[MAX_VCPUS];
static unsigned int nvcpus;

/*
 * One per translation (a block translated again gets another): what its
 * execution adds, and with a profile its runs while window ID was open on
 * its vCPU (profile=all: on any).
 */
struct block {
	uint64_t vaddr;
	uint32_t insns;
	uint32_t locked; /* of @insns, the atomic ones (is_locked()) */
	uint32_t kernel;
	struct block *next;
	uint64_t hits[]; /* a profile: runs in each window id's windows */
};

static struct block *blocks; /* every block, pushed at translation */
static bool profile, profile_all;
/* profile=on: the window id open on each vCPU, or -1. */
static int open_id[MAX_VCPUS];
/* profile=all: the window id opened last while it is open, or -1. */
static int open_any = -1;

struct window {
	unsigned int vcpu;
	uint64_t own[2];
	uint64_t all[2];
	uint64_t own_locked[2];
};

static struct window windows[ACCEL_INSN_MAX_WINDOWS];

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;
	uint64_t *c;

	if (vcpu >= MAX_VCPUS)
		return;
	c = &counts[vcpu].insns[b->kernel];
	__atomic_store_n(c, *c + b->insns, __ATOMIC_RELAXED);
	if (b->locked) {
		c = &counts[vcpu].locked[b->kernel];
		__atomic_store_n(c, *c + b->locked, __ATOMIC_RELAXED);
	}
	if (profile) {
		int id = profile_all ? __atomic_load_n(&open_any, __ATOMIC_RELAXED) :
				       open_id[vcpu];

		if (id >= 0)
			b->hits[id]++;
	}
}

static void sum(uint64_t all[2])
{
	all[0] = all[1] = 0;
	for (unsigned int v = 0; v < nvcpus; v++) {
		all[0] += load(&counts[v].insns[0]);
		all[1] += load(&counts[v].insns[1]);
	}
}

static void marker(unsigned int vcpu, void *udata)
{
	uint32_t m = (uint32_t)(uintptr_t)udata;
	unsigned int id = m & ACCEL_INSN_ID_MASK;
	struct window *w = &windows[id];
	uint64_t all[2];
	char line[256];

	if (vcpu >= MAX_VCPUS)
		return;
	sum(all);
	if (id < ACCEL_INSN_PROFILE_IDS) {
		bool start = (m & ACCEL_INSN_MAGIC_MASK) == ACCEL_INSN_START;
		int was = (int)id;

		open_id[vcpu] = start ? (int)id : -1;
		if (start)
			__atomic_store_n(&open_any, (int)id, __ATOMIC_RELAXED);
		else
			__atomic_compare_exchange_n(&open_any, &was, -1, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	if ((m & ACCEL_INSN_MAGIC_MASK) == ACCEL_INSN_START) {
		w->vcpu = vcpu;
		w->own[0] = load(&counts[vcpu].insns[0]);
		w->own[1] = load(&counts[vcpu].insns[1]);
		w->all[0] = all[0];
		w->all[1] = all[1];
		w->own_locked[0] = load(&counts[vcpu].locked[0]);
		w->own_locked[1] = load(&counts[vcpu].locked[1]);
		return;
	}
	snprintf(line, sizeof(line),
		 "accel-insn: window %u vcpu %u start-vcpu %u own-kernel %" PRIu64
		 " own-user %" PRIu64 " all-kernel %" PRIu64 " all-user %" PRIu64
		 " own-locked-kernel %" PRIu64 " own-locked-user %" PRIu64 "\n",
		 id, vcpu, w->vcpu, load(&counts[w->vcpu].insns[1]) - w->own[1],
		 load(&counts[w->vcpu].insns[0]) - w->own[0], all[1] - w->all[1],
		 all[0] - w->all[0], load(&counts[w->vcpu].locked[1]) - w->own_locked[1],
		 load(&counts[w->vcpu].locked[0]) - w->own_locked[0]);
	qemu_plugin_outs(line);
}

/*
 * Is @insn atomic: a LOCK prefix among its legacy prefixes, an XCHG with a
 * memory operand (0x86/0x87, ModRM.mod != 3: locked implicitly), or an
 * MFENCE (0f ae f0)?
 */
static bool is_locked(const struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	size_t n = qemu_plugin_insn_size(insn), i = 0;

	for (; i < n; i++) {
		if (b[i] == 0xf0)
			return true;
		if (b[i] != 0xf2 && b[i] != 0xf3 && b[i] != 0x2e && b[i] != 0x36 &&
		    b[i] != 0x3e && b[i] != 0x26 && b[i] != 0x64 && b[i] != 0x65 &&
		    b[i] != 0x66 && b[i] != 0x67)
			break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (i + 1 < n && (b[i] == 0x86 || b[i] == 0x87))
		return (b[i + 1] >> 6) != 3;
	return i + 2 < n && b[i] == 0x0f && b[i + 1] == 0xae && b[i + 2] == 0xf0;
}

/* The marker's displacement, if @insn is one: nopl disp32(%rax). */
static bool is_marker(const struct qemu_plugin_insn *insn, uint32_t *disp)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t d;

	if (qemu_plugin_insn_size(insn) != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return false;
	memcpy(&d, b + 3, sizeof(d));
	if ((d & ACCEL_INSN_MAGIC_MASK) != ACCEL_INSN_START &&
	    (d & ACCEL_INSN_MAGIC_MASK) != ACCEL_INSN_STOP)
		return false;
	*disp = d;
	return true;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct block *b = calloc(1, sizeof(*b) + (profile ? ACCEL_INSN_PROFILE_IDS *
						  sizeof(b->hits[0]) : 0));

	if (!b) {
		qemu_plugin_outs("accel-insn: out of memory: the counts are short from here\n");
		return;
	}
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = n;
	b->kernel = b->vaddr >= KERNEL_START;
	for (size_t i = 0; i < n; i++)
		b->locked += is_locked(qemu_plugin_tb_get_insn(tb, i));
	b->next = __atomic_load_n(&blocks, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&blocks, &b->next, b, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, b);
	if (b->kernel)
		return;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t d;

		if (is_marker(insn, &d))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)d);
	}
}

static int by_vaddr(const void *x, const void *y)
{
	const struct block *a = *(struct block *const *)x, *b = *(struct block *const *)y;

	return (a->vaddr > b->vaddr) - (a->vaddr < b->vaddr);
}

/*
 * profile=on, at exit: a line per window id and block address, the
 * instructions run there in that id's windows, and how many of them were
 * atomic (a block translated more than once summed).
 */
static void dump_profile(qemu_plugin_id_t id, void *unused)
{
	struct block **v;
	size_t n = 0, i = 0;

	for (struct block *b = blocks; b; b = b->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		qemu_plugin_outs("accel-insn: out of memory: no profile\n");
		return;
	}
	for (struct block *b = blocks; b; b = b->next)
		v[i++] = b;
	qsort(v, n, sizeof(*v), by_vaddr);
	for (int w = 0; w < ACCEL_INSN_PROFILE_IDS; w++)
		for (i = 0; i < n;) {
			uint64_t vaddr = v[i]->vaddr, insns = 0, locked = 0;
			char line[128];

			for (; i < n && v[i]->vaddr == vaddr; i++) {
				insns += v[i]->hits[w] * v[i]->insns;
				locked += v[i]->hits[w] * v[i]->locked;
			}
			if (!insns)
				continue;
			snprintf(line, sizeof(line),
				 "accel-insn: profile %d 0x%016" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				 w, vaddr, insns, locked);
			qemu_plugin_outs(line);
		}
	free(v);
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "accel-insn: counts x86_64 system emulation only (got %s%s)\n",
			info->target_name, info->system_emulation ? "" : ", user mode");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "profile=on") && strcmp(argv[i], "profile=all") &&
		    strcmp(argv[i], "profile=off")) {
			fprintf(stderr,
				"accel-insn: unknown argument '%s' (it takes profile=on or profile=all)\n",
				argv[i]);
			return -1;
		}
		profile = strcmp(argv[i], "profile=off");
		profile_all = !strcmp(argv[i], "profile=all");
	}
	nvcpus = info->system.max_vcpus;
	if (nvcpus > MAX_VCPUS) {
		fprintf(stderr, "accel-insn: counts up to %d vCPUs (the machine has %u)\n",
			MAX_VCPUS, nvcpus);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	for (int v = 0; v < MAX_VCPUS; v++)
		open_id[v] = -1;
	if (profile)
		qemu_plugin_register_atexit_cb(id, dump_profile, NULL);
	return 0;
}
