/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/cost.h - the cost model: device parameters and predictions
 *
 * libaccel predicts how much device time a submission takes, the way the
 * XLA GPU cost model does, so that a scheduler can charge a job its
 * predicted time when it releases it instead of a running average (and
 * correct the charge with the measured time when the job completes):
 *
 * - a dispatch of W workgroups whose entry point declares a cost per
 *   workgroup (accel_executable_export_cost()) takes
 *   ``max(W * operations / operation_rate, kernel(W * bytes))`` plus the
 *   kernel launch overhead;
 * - a fill or an update of N bytes takes ``fill(N)``, a copy
 *   ``copy(2N)`` (it reads and writes); a barrier nothing;
 * - a submission adds ``submission_ns`` once.
 *
 * ``fill``, ``copy`` and ``kernel`` are time curves by the bytes an item
 * touches, calibrated per device at working sets from 64 KiB to 64 MiB
 * (so that items running from cache, from memory, and a driver's cost per
 * item all show); without a calibration they are ``bytes / bandwidth +
 * dispatch_ns`` (kernel_bandwidth for kernels).
 *
 * A command buffer with a dispatch that declares no cost, or with a
 * dispatch-indirect (whose workgroup count is known only on the device),
 * is predicted from its own measured runs instead: libaccel keeps, per
 * command buffer, a moving average of the device time of its runs
 * (weight 1/4 for the newest), whichever binding table they had.
 *
 * **Device parameters** (struct accel_cost_params) come from a
 * microbenchmark, accel_device_calibrate(), which measures them through
 * the device's own submission path and keeps them in the cache directory
 * of the executable cache ($ACCEL_CACHE_DIR, else
 * $XDG_CACHE_HOME/accelsched, else $HOME/.cache/accelsched; none when
 * ACCEL_CACHE_DISABLE is set), under a key made of the driver and the
 * device's identity (name, driver version, pipeline cache UUID; for cpu
 * the processor model and the worker count): a changed device or driver
 * finds no calibration and must be calibrated again (``accelctl
 * calibrate``). Until it is, a device uses ACCEL_COST_DEFAULT_* values,
 * which are deliberately modest: libaccel never calibrates on its own,
 * because a calibration takes the device for about a second, which must
 * not land on an application's first submission nor on other tenants'
 * work. A cached calibration is read at the first use of the device's
 * parameters and checked (a damaged or foreign file is removed and the
 * defaults used).
 *
 * Thread-safety: all functions are thread-safe.
 */
#ifndef ACCEL_COST_H
#define ACCEL_COST_H

#include <stdint.h>

#include <accel/command_buffer.h>
#include <accel/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ACCEL_COST_DEFAULT_BANDWIDTH - bytes/s assumed before a calibration. */
#define ACCEL_COST_DEFAULT_BANDWIDTH (UINT64_C(4) << 30)
/** ACCEL_COST_DEFAULT_KERNEL_BANDWIDTH - a kernel's bytes/s, likewise. */
#define ACCEL_COST_DEFAULT_KERNEL_BANDWIDTH (UINT64_C(2) << 30)
/** ACCEL_COST_DEFAULT_OPERATION_RATE - operations/s assumed before one. */
#define ACCEL_COST_DEFAULT_OPERATION_RATE UINT64_C(1000000000)
/** ACCEL_COST_DEFAULT_DISPATCH_NS - launch overhead assumed before one. */
#define ACCEL_COST_DEFAULT_DISPATCH_NS UINT64_C(10000)
/** ACCEL_COST_DEFAULT_SUBMISSION_NS - per-submission overhead, likewise. */
#define ACCEL_COST_DEFAULT_SUBMISSION_NS UINT64_C(20000)

/**
 * enum accel_cost_source - where a device's parameters came from.
 * @ACCEL_COST_SOURCE_DEFAULT:    the ACCEL_COST_DEFAULT_* values.
 * @ACCEL_COST_SOURCE_CACHED:     a calibration read from the cache.
 * @ACCEL_COST_SOURCE_CALIBRATED: measured in this process.
 */
typedef enum accel_cost_source {
	ACCEL_COST_SOURCE_DEFAULT = 0,
	ACCEL_COST_SOURCE_CACHED = 1,
	ACCEL_COST_SOURCE_CALIBRATED = 2,
} accel_cost_source_t;

/**
 * struct accel_cost_params - a device's parameters in the model (a
 * summary of a calibration: its curves are internal).
 * @bandwidth:      bytes per second the device's transfers (fill, copy,
 *                  update) read plus write (a copy's, at the largest
 *                  working set calibrated).
 * @operation_rate: operations per second (an FMA counts 2).
 * @dispatch_ns:    launch overhead of each command (dispatch, fill,
 *                  copy, update), in nanoseconds.
 * @submission_ns:  overhead of each submission, in nanoseconds.
 * @source:         enum accel_cost_source.
 * @reserved:       0.
 * @kernel_bandwidth: bytes per second a kernel's plain loop reads plus
 *                  writes in device memory (a dispatch's memory term):
 *                  below @bandwidth where transfers use tuned copies.
 */
typedef struct accel_cost_params {
	uint64_t bandwidth;
	uint64_t operation_rate;
	uint64_t dispatch_ns;
	uint64_t submission_ns;
	uint32_t source;
	uint32_t reserved;
	uint64_t kernel_bandwidth;
} accel_cost_params_t;

/**
 * accel_device_cost_params() - @device's parameters: the calibration in
 * this process or in the cache, else the defaults (see @source).
 *
 * Return: 0, or -EINVAL (NULL argument).
 */
int accel_device_cost_params(accel_device_t *device, accel_cost_params_t *out);

/** ACCEL_CALIBRATE_FORCE - measure even when the cache has a calibration. */
#define ACCEL_CALIBRATE_FORCE (1u << 0)

/**
 * accel_device_calibrate() - measure @device's parameters with a
 * microbenchmark, make them the device's, and store them in the cache.
 * @flags: 0 (use a cached calibration when there is one), or
 *         ACCEL_CALIBRATE_FORCE.
 * @out:   optional: receives the parameters.
 *
 * Runs for about a second, submitting its own work to @device through its
 * scheduler (so other tenants' work on the device slows it, and it slows
 * theirs). Two calibrations of an idle device agree within a few tens of
 * percent; the model needs no better. Calibrations of one device run one
 * at a time: a second call waits for the first, and without
 * ACCEL_CALIBRATE_FORCE takes its result.
 *
 * Return: 0, -EINVAL (NULL @device, unknown @flags), -ENOMEM, or the error
 * of a submission of the microbenchmark (the message says which step).
 * On failure the device keeps its parameters.
 */
int accel_device_calibrate(accel_device_t *device, uint32_t flags,
			   accel_cost_params_t *out);

/**
 * enum accel_prediction_source - what a prediction rests on.
 * @ACCEL_PREDICTION_NONE:     nothing yet: a command buffer with a
 *                             dispatch of no declared cost that never ran.
 *                             @ns holds only what the model knows (launch
 *                             overheads, transfers, declared dispatches);
 *                             a scheduler charges its running average.
 * @ACCEL_PREDICTION_DECLARED: the formula, from declared costs and byte
 *                             counts.
 * @ACCEL_PREDICTION_LEARNED:  the command buffer's measured runs.
 */
typedef enum accel_prediction_source {
	ACCEL_PREDICTION_NONE = 0,
	ACCEL_PREDICTION_DECLARED = 1,
	ACCEL_PREDICTION_LEARNED = 2,
} accel_prediction_source_t;

/**
 * struct accel_prediction - a predicted device time, and what was measured.
 * @ns:          nanoseconds.
 * @source:      enum accel_prediction_source.
 * @runs:        measured runs of the command buffer so far.
 * @measured_ns: the device time of its last run (whatever its table), 0
 *               before the first: set next to @ns, predicted against
 *               measured.
 */
typedef struct accel_prediction {
	uint64_t ns;
	uint32_t source;
	uint32_t runs;
	uint64_t measured_ns;
} accel_prediction_t;

/**
 * accel_command_buffer_predict() - the device time one submission of @cb
 * with @table would take on @device (its own device).
 * @table: as for accel_queue_execute(); NULL when @cb uses no slot.
 *
 * What accel_queue_execute() stores with each submission for its
 * scheduler. O(slots used), like the submission's own checks.
 *
 * A prediction above UINT64_MAX nanoseconds (possible only for enormous
 * grids of costly workgroups) is UINT64_MAX.
 *
 * Return: 0 with *@out set, or what accel_queue_execute() returns for the
 * same command buffer and table (the message says why): -EINVAL (a NULL
 * argument, or a table entry unfit for its slot), -ERANGE (a table with
 * fewer entries than the highest slot used + 1, or a slot's range outside
 * its buffer or shorter than @cb needs), -EBADFD (@cb not ended, ONE_SHOT
 * and submitted already, or recording a buffer since returned by
 * accel_queue_dealloca()), -EXDEV
 * (@cb or a table's buffer is of another device). Nothing changes on
 * failure.
 */
int accel_command_buffer_predict(accel_device_t *device,
				 accel_command_buffer_t *cb,
				 const accel_binding_table_t *table,
				 accel_prediction_t *out);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_COST_H */
