/* SPDX-License-Identifier: MIT */
/*
 * Internal: the objects of the core (device, allocator, buffer, executable,
 * command buffer, queue) and the vtables a driver implements.
 *
 * A driver is one vtable per object kind:
 *
 * - struct accel_driver: the registry entry; opens devices.
 * - struct accel_device_ops: the device, its allocator (buffer_allocate),
 *   its executable loader, and command-buffer replay (execute).
 * - struct accel_buffer_ops / accel_executable_ops: destroy what the driver
 *   allocated for a buffer or executable.
 *
 * The core does everything backend-neutral: argument validation, reference
 * counting, recording, and the binding plan (plan.h) that a driver replays.
 */
#ifndef ACCEL_SRC_CORE_H
#define ACCEL_SRC_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "accel/buffer.h"
#include "accel/command_buffer.h"
#include "accel/cost.h"
#include "accel/device.h"
#include "accel/executable.h"
#include "accel/queue.h"
#include "object.h"
#include "plan.h"
#include "sched.h"

struct accel_driver {
	const char *name;
	const char *uri_example;
	/* NULL when the driver is not available; @unavailable says why. */
	int (*device_open)(const struct accel_driver *drv, const char *device,
			   accel_scheduler_t *s, accel_device_t **out);
	const char *unavailable;
	/*
	 * Optional: whether the driver can run here (its vendor library
	 * loads). NULL when it can, else why not (a static string). Called
	 * by accel_driver_info() and before device_open; cheap after the
	 * first call.
	 */
	const char *(*probe)(const struct accel_driver *drv);
	/*
	 * Enumeration (accel_driver_device_count/_info()): called only when
	 * the driver is available. Sets *@count to the number of devices and
	 * fills @infos[0 .. min(@cap, *@count) - 1] (the core zeroed them and
	 * set their size); @infos is NULL when @cap is 0. 0, or -errno with
	 * the message set.
	 */
	int (*enumerate)(const struct accel_driver *drv,
			 accel_device_info_t *infos, uint32_t cap,
			 uint32_t *count);
};

/* The registry (driver.c) and the drivers it lists. */
extern const struct accel_driver accel_driver_cpu;
extern const struct accel_driver accel_driver_vulkan;
extern const struct accel_driver accel_driver_cuda;
extern const struct accel_driver accel_driver_hip;

struct accel_cb_exec;

/*
 * struct accel_transfer - one synchronous transfer, checked (transfer.c).
 * Each end is a host pointer or a buffer range: @src_host or @src at
 * @src_offset, @dst_host or @dst at @dst_offset.
 * @length:      bytes, above 0.
 * @deadline_ns: when to stop waiting (-ETIME).
 * @fn:          the public function, for messages.
 */
struct accel_transfer {
	const void *src_host;
	accel_buffer_t *src;
	uint64_t src_offset;
	void *dst_host;
	accel_buffer_t *dst;
	uint64_t dst_offset;
	uint64_t length;
	int64_t deadline_ns;
	const char *fn;
};

struct accel_device_ops {
	void (*destroy)(accel_device_t *d);
	/* Allocates a root buffer of @size bytes; core fills the header. */
	int (*buffer_allocate)(accel_device_t *d,
			       const accel_buffer_params_t *params,
			       uint64_t size, accel_buffer_t **out);
	int (*executable_load)(accel_device_t *d, const char *path,
			       accel_executable_t **out);
	/*
	 * Replays one submission of an ended command buffer (struct
	 * accel_cb_exec). Returns 0, or a negative errno with
	 * x->failed_command and x->msg set; or, for a driver that completes
	 * asynchronously, ACCEL_JOB_PENDING: the work is in flight and the
	 * driver calls x->done() once, from any thread, when it finished.
	 */
	int (*execute)(accel_device_t *d, struct accel_cb_exec *x);
	/*
	 * Optional: the cost model's calibration kernels (cost_calibrate.c),
	 * one executable, workgroups of ACCEL_COST_CALIBRATE_WG invocations:
	 * entry 0 takes one binding (a float per workgroup, written) and one
	 * constant, the iteration count I, each invocation performing I * 8
	 * operations (four chains of FMAs) on registers; entry 1 takes two
	 * bindings x and y (float[]) and streams y[i] = y[i] * 0.5 + x[i]
	 * over a grid of (x + y * width) workgroups, one element per
	 * invocation (12 bytes). 0 with *@out set (a reference), or -errno
	 * with the message set. NULL: neither the operation rate nor the
	 * kernel bandwidth is measured (calibrations keep the defaults).
	 */
	int (*calibration_executable)(accel_device_t *d, accel_executable_t **out);
	/*
	 * Optional: translate an ended command buffer for the device, once
	 * (vulkan records its VkCommandBuffer here); may set cb->driver.
	 * Called by accel_command_buffer_end() after the plan is final.
	 * 0, or -errno with the message set (the command buffer then stays
	 * recording, as if end had not been called).
	 */
	int (*command_buffer_end)(accel_device_t *d, accel_command_buffer_t *cb);
	/* Optional: free what command_buffer_end() made; at destroy. */
	void (*command_buffer_destroy)(accel_device_t *d,
				       accel_command_buffer_t *cb);
	/*
	 * Optional (synchronous transfers, transfer.c): copy @t, whose
	 * arguments the core has checked, and return once the bytes are
	 * there; 0, or -errno with the message set. NULL: the core copies
	 * with memmove() when every buffer end is HOST_VISIBLE, else through
	 * a staging buffer, a command buffer and a queue of the device.
	 */
	int (*transfer)(accel_device_t *d, const struct accel_transfer *t);
	/*
	 * Enumeration and queries (accel_device_query_i64()). Optional:
	 * answers @key (below ACCEL_DEVICE_QUERY_COUNT) for this device: 0
	 * with *@out set, or -ENOENT for a key the core answers (the core's
	 * defaults: device.c). Never fails otherwise.
	 */
	int (*query_i64)(const accel_device_t *d, accel_device_query_t key,
			 int64_t *out);
};

struct accel_allocator {
	accel_device_t *device; /* the device that embeds it (no reference) */
};

struct accel_drain;
struct accel_exec_cache;
struct accel_transient_pool;

/*
 * struct accel_device - the header of every driver's device.
 * @cache: the executable cache (exec_cache.h) of a driver that compiles at
 *         load, or NULL (off, or a driver that does not); freed by
 *         accel_device_fini().
 */
/*
 * The cost model's figures (cost.c, cost_calibrate.c). The public
 * struct accel_cost_params keeps its layout; what the model uses beyond
 * it lives here.
 *
 * enum accel_cost_kind - a kind of work with its own time curve and
 * launch: a fill (an update too: bytes written from the host), a copy, a
 * kernel's memory traffic.
 *
 * struct accel_cost_curve - one item's time by the bytes it touches (read
 * plus written), calibrated at @count working sets: @bytes increasing,
 * @ns the time of one item of that size less the submission's overhead,
 * never decreasing. Between two points the time is interpolated linearly
 * (so a cache regime, a memory regime and the fixed cost of a small item
 * all show); past the last point it grows at the last point's bandwidth;
 * below the first, linearly from the kind's launch at 0 bytes. @count 0:
 * the linear model of the public figures (bytes / bandwidth + launch).
 *
 * struct accel_cost_model - a device's parameters in the model.
 * @pub:       the public figures (bandwidth: a copy's at the largest
 *             working set, kernel_bandwidth: the streaming kernel's,
 *             dispatch_ns: a fill's launch).
 * @curve:     per kind.
 * @launch_ns: per kind, the time of a tiny item (its fixed overhead).
 */
enum accel_cost_kind {
	ACCEL_COST_FILL,
	ACCEL_COST_COPY,
	ACCEL_COST_KERNEL,
	ACCEL_COST_KINDS
};

#define ACCEL_COST_POINTS 8

struct accel_cost_curve {
	uint32_t count;
	uint32_t reserved;
	uint64_t bytes[ACCEL_COST_POINTS];
	uint64_t ns[ACCEL_COST_POINTS];
};

struct accel_cost_model {
	accel_cost_params_t pub;
	struct accel_cost_curve curve[ACCEL_COST_KINDS];
	uint64_t launch_ns[ACCEL_COST_KINDS];
};

struct accel_device {
	struct accel_ref ref;
	const struct accel_device_ops *ops;
	const struct accel_driver *driver;
	accel_scheduler_t *scheduler;
	struct accel_allocator allocator;
	/* Its submissions not yet done (drain.c); made at the first one. */
	_Atomic(struct accel_drain *) drain;
	/*
	 * Set by the driver at open: its ->execute honours x->device_wait
	 * and calls x->on_device, so the submissions of this device are
	 * ordered on the device, not on the host (struct accel_cb_exec).
	 */
	bool device_waits;
	struct accel_exec_cache *cache;
	/* Its transient pool (transient.c); made at the first alloca. */
	_Atomic(struct accel_transient_pool *) transient;
	char uri[64];
	/*
	 * Enumeration and queries: the alignment of a dispatch binding's
	 * offset from its root allocation (ACCEL_DEVICE_QUERY_MIN_BINDING_
	 * ALIGNMENT), a power of two; 1 from accel_device_init(), which a
	 * driver raises after it.
	 */
	uint32_t binding_alignment;
	/*
	 * The cost model (cost.c). @identity: what makes one device's
	 * calibration differ from another's (set by the driver at open: its
	 * name, driver version, ...; the URI when left empty). @cost_lock
	 * protects @cost and @cost_loaded; @cost_gen counts the changes of
	 * @cost, so a command buffer's model of older parameters is rebuilt.
	 * @calib_lock: one calibration of the device at a time (two at once
	 * would measure each other's work).
	 */
	char identity[256];
	pthread_mutex_t cost_lock;
	pthread_mutex_t calib_lock;
	bool cost_loaded;
	struct accel_cost_model cost;
	atomic_uint cost_gen;
};

/* The workgroup size of the calibration kernel (device ops). */
#define ACCEL_COST_CALIBRATE_WG 64u

/* Sets up the header: one reference, a reference to @s. */
void accel_device_init(accel_device_t *d, const struct accel_device_ops *ops,
		       const struct accel_driver *drv, accel_scheduler_t *s,
		       const char *uri);
/* Drops the scheduler; the driver's destroy calls it last. */
void accel_device_fini(accel_device_t *d);

struct accel_buffer_ops {
	void (*destroy)(accel_buffer_t *b);
};

/*
 * struct accel_buffer - a root allocation or a subspan of one.
 * @parent:      for a subspan, the buffer it views (a reference).
 * @root_offset: where it starts in its root allocation (alignment checks).
 * @address:     the device address of byte 0; for cpu, the host pointer.
 * @host:        the host pointer of byte 0, or NULL if never mappable.
 * @map_count:   accel_buffer_map() calls not yet unmapped.
 * @transient:   for a buffer of accel_queue_alloca() (itself) and its
 *               subspans (that buffer), else NULL.
 * @returned:    of an accel_queue_alloca() buffer: accel_queue_dealloca()
 *               took it; its memory is the pool's again, so no use of it
 *               (record, submit, map, subspan) is accepted any more.
 * @weak_device: the buffer holds no reference to @device: a transient
 *               pool's chunk, which the device frees before it goes.
 */
struct accel_buffer {
	struct accel_ref ref;
	const struct accel_buffer_ops *ops;
	accel_device_t *device;
	accel_buffer_t *parent;
	uint64_t root_offset;
	uint64_t size;
	uint32_t memory_type;
	uint32_t usage;
	uint64_t address;
	void *host;
	atomic_uint map_count;
	accel_buffer_t *transient;
	atomic_bool returned;
	bool weak_device;
};

/*
 * accel_device_twin() - for an -EXDEV message naming @a's and @b's URIs:
 * the words that tell two devices opened from one URI apart ("" when the
 * URIs differ, and they say it).
 */
static inline const char *accel_device_twin(const accel_device_t *a,
					    const accel_device_t *b)
{
	return strcmp(a->uri, b->uri) ? "" :
	       " (two devices opened from the same URI: an object belongs to the accel_device_t it was made on; use that one)";
}

/*
 * accel_buffer_returned() - whether @b (or the alloca buffer it views) was
 * returned by accel_queue_dealloca(); accel_buffer_fail_returned() says so
 * for @fn and @where ("command 3: fill target", "binding table slot 2"):
 * -EBADFD.
 */
static inline bool accel_buffer_returned(const accel_buffer_t *b)
{
	return b->transient &&
	       atomic_load_explicit(&b->transient->returned, memory_order_acquire);
}
int accel_buffer_fail_returned(const char *fn, const char *where);

/*
 * accel_cb_check_runnable() - whether @cb, ended, could run on @device
 * with @table now: 0, or what accel_queue_execute() refuses it with (the
 * message set for @fn): not ended, ONE_SHOT and submitted, a buffer it
 * recorded returned by accel_queue_dealloca(), a table unfit for its
 * slots. accel_command_buffer_predict() answers the same.
 */
int accel_cb_check_runnable(accel_command_buffer_t *cb, accel_device_t *device,
			    const accel_binding_table_t *table, const char *fn);
/*
 * Checks the memory type and usage bits of @params for @fn: 0, or -EINVAL
 * with the message set (the allocator's and accel_queue_alloca()'s rule).
 */
int accel_buffer_params_check(const accel_buffer_params_t *params,
			      const char *fn);

/*
 * transient.c: the device's pool of queue-ordered memory; freed when the
 * device's last reference goes, before the driver's destroy.
 */
void accel_transient_pool_destroy(accel_device_t *d);

/* The header of a new root buffer (one reference, a device reference). */
void accel_buffer_init(accel_buffer_t *b, const struct accel_buffer_ops *ops,
		       accel_device_t *d, const accel_buffer_params_t *params,
		       uint64_t size);
void accel_buffer_fini(accel_buffer_t *b);

struct accel_executable_ops {
	void (*destroy)(accel_executable_t *e);
};

/*
 * struct accel_export - one entry point, as the core sees it.
 * @cost: what one workgroup costs, as the executable declares it (both
 *        zero: not declared); checked by accel_export_cost_check().
 * @fn:   the driver's handle of the function (cpu: accel_cpu_entry_fn).
 */
struct accel_export {
	accel_export_info_t info;
	accel_export_cost_t cost;
	const void *fn;
};

/*
 * accel_export_cost_check() - the rule every executable format applies to
 * a declared cost: each field at most ACCEL_EXPORT_COST_MAX. 0, or
 * -ERANGE with the message set, naming @fn, @what (the file) and the
 * entry @name.
 */
int accel_export_cost_check(const accel_export_cost_t *cost, const char *fn,
			    const char *what, const char *name);

struct accel_executable {
	struct accel_ref ref;
	const struct accel_executable_ops *ops;
	accel_device_t *device;
	uint32_t export_count;
	struct accel_export *exports;
};

void accel_executable_init(accel_executable_t *e,
			   const struct accel_executable_ops *ops,
			   accel_device_t *d);
void accel_executable_fini(accel_executable_t *e);

/*
 * The largest executable file a driver reads whole (a bundle of kernels).
 * accel_executable_read() reads @path into a malloc'd *@data (free() it);
 * 0, or -errno with the message set (the open's errno: ENOENT, EACCES,
 * ELOOP, ...; ENOEXEC: not a regular file, never waited on, or above
 * ACCEL_EXECUTABLE_MAX_FILE bytes; ENOMEM).
 */
#define ACCEL_EXECUTABLE_MAX_FILE (UINT64_C(256) << 20)
int accel_executable_read(const char *path, uint8_t **data, size_t *size);
/*
 * Reads all @size bytes of @fd (a regular file) into a malloc'd *@out:
 * 0, or an errno (ENOMEM; EIO when the file shrank under us).
 */
int accel_read_all(int fd, size_t size, uint8_t **out);
/* What went wrong opening a path, in words, for @err (an errno). */
const char *accel_path_error(int err);

enum accel_cb_state {
	ACCEL_CB_INITIAL,
	ACCEL_CB_RECORDING,
	ACCEL_CB_EXECUTABLE,
};

/*
 * struct accel_command_buffer - a command buffer and its binding plan.
 * @plan:      the recorded commands and the binding plan (plan.h).
 * @retained:  direct buffers and executables it uses (references).
 * @submitted: set by the first submission (ONE_SHOT check).
 * @transient_buffers: a direct buffer is from accel_queue_alloca(): each
 *             submission checks that none was returned since.
 * @driver:    the driver's translation (device ops command_buffer_end).
 * @model:      the cost model's prediction for the device's parameters
 *              (cost.c), built at the first prediction; older ones are
 *              chained to it and freed with the command buffer.
 * @learned_ns: moving average of the device time of its runs (0: none).
 * @last_ns:    the device time of its last run.
 * @runs:       its runs measured.
 */
struct accel_command_buffer {
	struct accel_ref ref;
	accel_device_t *device;
	uint32_t mode;
	uint32_t binding_capacity;
	enum accel_cb_state state;
	struct accel_plan plan;
	struct accel_vec retained_buffers;   /* accel_buffer_t * */
	struct accel_vec retained_executables; /* accel_executable_t * */
	atomic_bool submitted;
	bool transient_buffers;
	void *driver;
	_Atomic(struct accel_cb_model *) model;
	atomic_uint_fast64_t learned_ns;
	atomic_uint_fast64_t last_ns;
	atomic_uint runs;
};

/*
 * The cost model's internals (cost.c) that the queue uses.
 *
 * accel_cost_predict() - the prediction for one submission of @cb with
 * the captured @slots (accel_plan_capture()), submission overhead
 * included. Builds @cb's model at the first call (O(commands), once per
 * calibration), O(slots used) after.
 *
 * accel_cost_learn() - @cb ran in @ns of device time.
 *
 * accel_cost_cb_free() - frees @cb's models (at its destroy).
 */
struct accel_cb_model;
void accel_cost_predict(accel_command_buffer_t *cb,
			const struct accel_plan_slot *slots,
			accel_prediction_t *out);
void accel_cost_learn(accel_command_buffer_t *cb, uint64_t ns);
void accel_cost_cb_free(accel_command_buffer_t *cb);
/* The device's parameters (loaded from the cache at the first call). */
void accel_cost_params_get(accel_device_t *d, accel_cost_params_t *out);
/* The same with the curves and launches the model uses. */
void accel_cost_model_get(accel_device_t *d, struct accel_cost_model *out);
/* Make @m the device's model (not stored: accel_cost_calib_store_raw()). */
void accel_cost_model_set(accel_device_t *d, const struct accel_cost_model *m);
/*
 * accel_cost_model_default() - the model of the ACCEL_COST_DEFAULT_*
 * values: no curves, the public figures for every kind.
 */
void accel_cost_model_default(struct accel_cost_model *m);
/*
 * accel_cost_item_ns() - what the model charges one item of @kind that
 * touches @bytes (a copy: read plus written; a kernel: its declared
 * bytes, launch included), from the kind's curve.
 */
double accel_cost_item_ns(const struct accel_cost_model *m,
			  enum accel_cost_kind kind, double bytes);
/*
 * accel_cost_calib_store_raw() - stores @len bytes as @d's calibration
 * record, as they are (tests: an old or foreign record).
 */
void accel_cost_calib_store_raw(const accel_device_t *d, const void *rec,
				size_t len);
/*
 * accel_cost_curve_set() - @kind's curve in @m from a calibration sweep of
 * @n (1..ACCEL_COST_POINTS) items: @bytes increasing, @ns each one's time
 * less the submission; a time above the one after it is lowered to it
 * (another process on the machine only ever slows a run, so the faster
 * figure is the less disturbed one), and none is below the kind's launch.
 */
void accel_cost_curve_set(struct accel_cost_model *m, enum accel_cost_kind kind,
			  const double *bytes, const double *ns, int n);
/*
 * accel_cost_measure() - the microbenchmark (cost_calibrate.c): @d's
 * parameters into *@m (source CALIBRATED), not clamped, not stored; 0, or
 * -errno with the message set ("accel_device_calibrate: <step>: ...").
 */
int accel_cost_measure(accel_device_t *d, struct accel_cost_model *m);

/*
 * struct accel_cb_exec - one submission, as a driver replays it.
 * @cb:             the command buffer (ended, immutable).
 * @slots:          this submission's binding table, captured at submit
 *                  (plan.used_count entries, in the order of
 *                  plan.used_slots; NULL when it is 0).
 * @done:           for a driver whose ->execute returned ACCEL_JOB_PENDING:
 *                  call it exactly once when the work finished, with 0 or
 *                  a negative errno (@failed_command set) and what failed,
 *                  in the driver's own buffer. The submission may be freed
 *                  inside it: touch nothing of it afterwards, @cb included.
 * @device_ns:      out, optional: the device time the work took, when the
 *                  driver knows it better than the wall time from
 *                  ->execute to @done (several submissions in flight).
 * @failed_command: out: index of the command that failed.
 * @msg:            out: what failed, when ->execute returns it (a buffer
 *                  of the caller's, gone once ->execute returned).
 * @device_wait:    for a driver with device_waits: a value of the device's
 *                  own timeline the work must wait for on the device
 *                  before it starts (0: none).
 * @on_device:      for a driver with device_waits, NULL when not wanted:
 *                  call it once the work is submitted to the device, with
 *                  the timeline value that the device reaches when it is
 *                  done, before @done can be called.
 */
struct accel_cb_exec {
	const accel_command_buffer_t *cb;
	const struct accel_plan_slot *slots;
	void (*done)(struct accel_cb_exec *x, int status, const char *msg);
	uint64_t device_ns;
	uint32_t failed_command;
	char *msg;
	size_t msg_len;
	uint64_t device_wait;
	void (*on_device)(struct accel_cb_exec *x, uint64_t token);
};

/* The parameter block of command @cmd. */
static inline const uint8_t *accel_cb_exec_params(const struct accel_cb_exec *x,
						  const struct accel_cmd *cmd)
{
	return (const uint8_t *)x->cb->plan.params.data + cmd->params;
}

struct accel_queue {
	struct accel_ref ref;
	accel_device_t *device;
	struct accel_sched_executor *executor;
	atomic_uint_fast64_t next_submission;
	_Atomic(struct accel_drain *) drain; /* drain.c */
	struct accel_pool *pool;             /* its submissions' records (pool.h) */
};

/*
 * accel_queue_submit_barrier() - accel_queue_barrier() of lists already
 * validated, as @fn: 0, or -errno with the message set and nothing
 * submitted.
 */
int accel_queue_submit_barrier(accel_queue_t *q,
			       const accel_semaphore_list_t *waits,
			       const accel_semaphore_list_t *signals,
			       const char *fn);

/*
 * drain.c: a submission counts in its queue's and its device's drains
 * from accel_drain_submit() (@out: the two, for accel_drain_done()) to its
 * destroy; accel_drain_disown() when the queue or device goes.
 */
int accel_drain_submit(accel_queue_t *q, struct accel_drain *out[2]);
void accel_drain_done(struct accel_drain *d[2]);
void accel_drain_disown(_Atomic(struct accel_drain *) *slot);

#endif /* ACCEL_SRC_CORE_H */
