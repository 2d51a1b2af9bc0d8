/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched tracepoints, modelled on gpu_scheduler_trace.h: one event per
 * step of a job's life. Their fields are stable: tools parse them.
 *
 *   accelsched:job_submit   a job entered a queue
 *   accelsched:job_wait     one per wait of a job, right after its job_submit:
 *                           the point fence it waits on
 *   accelsched:job_signal   one per signal of a job, likewise: the point
 *                           fence that reaching the point signals
 *   accelsched:job_runnable its last wait was reached
 *   accelsched:job_release  the policy released it to its executor
 *   accelsched:job_complete the executor completed it (status, device time,
 *                           and the time it predicted, 0 for none)
 *   accelsched:job_fail     it failed without running (a failed wait, a
 *                           cancellation, its file closed)
 *   accelsched:job_timeout  it ran past its timeout
 *   accelsched:job_boost    a waiter of a higher class raised it (priority
 *                           inheritance): it is released as of class
 *                           boost=, not its own prio=
 *   accelsched:job_boost_end its boost ended (it was released, failed or
 *                           cancelled)
 *   accelsched:job_ahead    the policy releases it ahead of fair share, for
 *                           its queue's first deadline (deadline_ns=) whose
 *                           latest start (latest_start_ns=) is near; a
 *                           job_release follows
 *
 * Every event carries client=<file's client id> queue=<handle> job=<id>;
 * all but job_wait and job_signal also engine=<name>. A point is named by
 * its fence, fence=<context>:<seqno> (the seqno is the point), as the
 * kernel's dma_fence events name fences: a trace joins a job_signal to the
 * job_waits on the same context with a seqno at or below it, and both to
 * dma_fence:dma_fence_signaled. A syncobj's "reached" fences all share one
 * context; a job waits on them and its signals reach them.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM accelsched

#if !defined(_ACCEL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _ACCEL_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(accel_job,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio),
	TP_ARGS(client, engine, queue, job, prio),
	TP_STRUCT__entry(
		__field(u64, client)
		__string(engine, engine)
		__field(u32, queue)
		__field(u32, job)
		__field(u32, prio)
	),
	TP_fast_assign(
		__entry->client = client;
		__assign_str_compat(engine, engine);
		__entry->queue = queue;
		__entry->job = job;
		__entry->prio = prio;
	),
	TP_printk("client=%llu engine=%s queue=%u job=%u prio=%u",
		  __entry->client, __get_str(engine), __entry->queue,
		  __entry->job, __entry->prio)
);

DEFINE_EVENT(accel_job, job_submit,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio),
	TP_ARGS(client, engine, queue, job, prio));
DEFINE_EVENT(accel_job, job_runnable,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio),
	TP_ARGS(client, engine, queue, job, prio));
DEFINE_EVENT(accel_job, job_release,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio),
	TP_ARGS(client, engine, queue, job, prio));
DEFINE_EVENT(accel_job, job_timeout,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio),
	TP_ARGS(client, engine, queue, job, prio));

DECLARE_EVENT_CLASS(accel_job_boost,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio,
		 u32 boost),
	TP_ARGS(client, engine, queue, job, prio, boost),
	TP_STRUCT__entry(
		__field(u64, client)
		__string(engine, engine)
		__field(u32, queue)
		__field(u32, job)
		__field(u32, prio)
		__field(u32, boost)
	),
	TP_fast_assign(
		__entry->client = client;
		__assign_str_compat(engine, engine);
		__entry->queue = queue;
		__entry->job = job;
		__entry->prio = prio;
		__entry->boost = boost;
	),
	TP_printk("client=%llu engine=%s queue=%u job=%u prio=%u boost=%u",
		  __entry->client, __get_str(engine), __entry->queue,
		  __entry->job, __entry->prio, __entry->boost)
);

DEFINE_EVENT(accel_job_boost, job_boost,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio,
		 u32 boost),
	TP_ARGS(client, engine, queue, job, prio, boost));
DEFINE_EVENT(accel_job_boost, job_boost_end,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio,
		 u32 boost),
	TP_ARGS(client, engine, queue, job, prio, boost));

DECLARE_EVENT_CLASS(accel_job_point,
	TP_PROTO(u64 client, u32 queue, u32 job, u64 context, u64 seqno),
	TP_ARGS(client, queue, job, context, seqno),
	TP_STRUCT__entry(
		__field(u64, client)
		__field(u32, queue)
		__field(u32, job)
		__field(u64, context)
		__field(u64, seqno)
	),
	TP_fast_assign(
		__entry->client = client;
		__entry->queue = queue;
		__entry->job = job;
		__entry->context = context;
		__entry->seqno = seqno;
	),
	TP_printk("client=%llu queue=%u job=%u fence=%llu:%llu",
		  __entry->client, __entry->queue, __entry->job,
		  __entry->context, __entry->seqno)
);

DEFINE_EVENT(accel_job_point, job_wait,
	TP_PROTO(u64 client, u32 queue, u32 job, u64 context, u64 seqno),
	TP_ARGS(client, queue, job, context, seqno));
DEFINE_EVENT(accel_job_point, job_signal,
	TP_PROTO(u64 client, u32 queue, u32 job, u64 context, u64 seqno),
	TP_ARGS(client, queue, job, context, seqno));

TRACE_EVENT(job_complete,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, int status,
		 u64 device_ns, u64 predicted_ns),
	TP_ARGS(client, engine, queue, job, status, device_ns, predicted_ns),
	TP_STRUCT__entry(
		__field(u64, client)
		__string(engine, engine)
		__field(u32, queue)
		__field(u32, job)
		__field(int, status)
		__field(u64, device_ns)
		__field(u64, predicted_ns)
	),
	TP_fast_assign(
		__entry->client = client;
		__assign_str_compat(engine, engine);
		__entry->queue = queue;
		__entry->job = job;
		__entry->status = status;
		__entry->device_ns = device_ns;
		__entry->predicted_ns = predicted_ns;
	),
	TP_printk("client=%llu engine=%s queue=%u job=%u status=%d device_ns=%llu predicted_ns=%llu",
		  __entry->client, __get_str(engine), __entry->queue,
		  __entry->job, __entry->status, __entry->device_ns,
		  __entry->predicted_ns)
);

TRACE_EVENT(job_ahead,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, u32 prio,
		 u64 deadline_ns, u64 latest_start_ns),
	TP_ARGS(client, engine, queue, job, prio, deadline_ns, latest_start_ns),
	TP_STRUCT__entry(
		__field(u64, client)
		__string(engine, engine)
		__field(u32, queue)
		__field(u32, job)
		__field(u32, prio)
		__field(u64, deadline_ns)
		__field(u64, latest_start_ns)
	),
	TP_fast_assign(
		__entry->client = client;
		__assign_str_compat(engine, engine);
		__entry->queue = queue;
		__entry->job = job;
		__entry->prio = prio;
		__entry->deadline_ns = deadline_ns;
		__entry->latest_start_ns = latest_start_ns;
	),
	TP_printk("client=%llu engine=%s queue=%u job=%u prio=%u deadline_ns=%llu latest_start_ns=%llu",
		  __entry->client, __get_str(engine), __entry->queue,
		  __entry->job, __entry->prio, __entry->deadline_ns,
		  __entry->latest_start_ns)
);

TRACE_EVENT(job_fail,
	TP_PROTO(u64 client, const char *engine, u32 queue, u32 job, int error),
	TP_ARGS(client, engine, queue, job, error),
	TP_STRUCT__entry(
		__field(u64, client)
		__string(engine, engine)
		__field(u32, queue)
		__field(u32, job)
		__field(int, error)
	),
	TP_fast_assign(
		__entry->client = client;
		__assign_str_compat(engine, engine);
		__entry->queue = queue;
		__entry->job = job;
		__entry->error = error;
	),
	TP_printk("client=%llu engine=%s queue=%u job=%u error=%d",
		  __entry->client, __get_str(engine), __entry->queue,
		  __entry->job, __entry->error)
);

#endif /* _ACCEL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
