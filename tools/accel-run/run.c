// SPDX-License-Identifier: MIT
/*
 * accel-run: running a script.
 *
 * Statements run in order. Objects are created when their statement runs;
 * begin..end records a command buffer; submit calls accel_queue_execute()
 * (repeat=N times) on one queue, adding to each submission a private
 * semaphore it signals, so that accel-run knows when each one is done.
 * Before an expect or a print, and at the end, every outstanding
 * submission is waited for (the drain), so a check always sees finished
 * work; a submission that cannot finish within the timeout (it waits on a
 * point nothing signals) is an error naming its line.
 *
 * Everything the report says is gathered in records and written at the
 * end, as text or as JSON with the same content.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#include "json.h"
#include "run.h"

struct sub_rec {
	const struct stmt *st;
	uint64_t submitted, ok, failed;
	double *host_ns;         /* per submission */
	double t_first, t_done;  /* first submit, last completion seen */
	char error[1024];        /* the first failure */
};

struct check_rec {
	const struct stmt *st;
	uint64_t count, mismatches, first;
	char expected[64], got[64];
};

struct print_rec {
	const struct stmt *st;
	uint64_t count;
	char *values;            /* "v v v" */
};

struct pending {
	accel_semaphore_t *done;
	struct sub_rec *rec;
};

struct rt {
	const struct script *s;
	const struct run_opts *o;
	char *err;
	size_t err_len;
	const struct stmt *cur;
	accel_device_t *dev;
	accel_queue_t *queue;
	void **h;                /* per object: the library handle */
	struct sub_rec *subs;
	uint32_t nsubs;
	struct check_rec *checks;
	uint32_t nchecks;
	struct print_rec *prints;
	uint32_t nprints;
	struct pending *pend;
	uint32_t npend, cap_pend;
	double t0;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int rt_fail(struct rt *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * "FILE:LINE: STATEMENT: message" into r->err, or "FILE: message" outside
 * any statement (there is no line 0 to blame); returns RUN_ERROR.
 */
static int rt_fail(struct rt *r, const char *fmt, ...)
{
	va_list ap;
	int n = r->cur ? snprintf(r->err, r->err_len, "%s:%d: %s: ", r->s->file,
				  r->cur->line, stmt_name(r->cur->kind)) :
			 snprintf(r->err, r->err_len, "%s: ", r->s->file);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->err_len)
		vsnprintf(r->err + n, r->err_len - n, fmt, ap);
	va_end(ap);
	return RUN_ERROR;
}

/* A library call failed: its message, prefixed. */
static int lib_fail(struct rt *r, int err)
{
	(void)err;
	return rt_fail(r, "%s", accel_error_message());
}

static const char *obj_name(const struct rt *r, uint32_t i)
{
	return r->s->objs[i].name;
}

/* ---- values ------------------------------------------------------------- */

static void put(uint8_t *dst, enum elem_type t, union num x)
{
	float f;
	uint64_t u = x.u;

	if (t == T_F32) {
		f = (float)x.f;
		memcpy(dst, &f, 4);
		return;
	}
	if (t == T_F64) {
		memcpy(dst, &x.f, 8);
		return;
	}
	memcpy(dst, &u, elem_size(t)); /* little-endian: the low bytes */
}

static union num get(const uint8_t *src, enum elem_type t)
{
	union num x = { 0 };
	float f;

	switch (t) {
	case T_F32:
		memcpy(&f, src, 4);
		x.f = f;
		break;
	case T_F64:
		memcpy(&x.f, src, 8);
		break;
	case T_I8:
		x.i = *(const int8_t *)src;
		break;
	case T_I16: {
		int16_t v;

		memcpy(&v, src, 2);
		x.i = v;
		break;
	}
	case T_I32: {
		int32_t v;

		memcpy(&v, src, 4);
		x.i = v;
		break;
	}
	default:
		memcpy(&x.u, src, elem_size(t));
		break;
	}
	return x;
}

static void fmt_num(char *buf, size_t len, enum elem_type t, union num x)
{
	if (t == T_F32 || t == T_F64)
		snprintf(buf, len, "%.9g", x.f);
	else if (t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64)
		snprintf(buf, len, "%" PRId64, x.i);
	else
		snprintf(buf, len, "%" PRIu64, x.u);
}

/* The elements of @v spread over @n elements (the last repeats if rest). */
static union num value_at(const struct values *v, uint64_t i)
{
	return v->v[i < v->count ? i : v->count - 1];
}

/* @n elements of @v as bytes (malloc'ed). */
static uint8_t *encode(const struct values *v, uint64_t n)
{
	unsigned int es = elem_size(v->type);
	uint8_t *b = malloc(n ? n * es : 1);

	if (!b)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		put(b + i * es, v->type, value_at(v, i));
	return b;
}

/* ---- refs ------------------------------------------------------------------ */

static accel_buffer_ref_t lib_ref(const struct rt *r, const struct ref *ref)
{
	uint64_t len = ref->length == UINT64_MAX ? ACCEL_WHOLE_BUFFER : ref->length;

	if (ref->slot)
		return accel_buffer_ref_indirect(ref->index, ref->offset, len);
	return accel_buffer_ref_direct(r->h[ref->index], ref->offset, len);
}

static void ref_text(const struct rt *r, const struct ref *ref, char *buf, size_t len)
{
	int n = ref->slot ? snprintf(buf, len, "@%u", ref->index) :
			    snprintf(buf, len, "%s", obj_name(r, ref->index));

	if (ref->offset || ref->length != UINT64_MAX) {
		if (ref->length == UINT64_MAX)
			snprintf(buf + n, len - n, "[%" PRIu64 "]", ref->offset);
		else
			snprintf(buf + n, len - n, "[%" PRIu64 ",%" PRIu64 "]", ref->offset, ref->length);
	}
}

/* Maps the byte range of buffer ref @ref; the pointer and its length. */
static int map_ref(struct rt *r, const struct ref *ref, uint32_t flags,
		   uint8_t **p, uint64_t *len)
{
	accel_buffer_t *b = r->h[ref->index];
	uint64_t size = accel_buffer_size(b);
	void *ptr;
	int err;

	/* Within the buffer: parse_ref() refused the rest. */
	*len = ref->length == UINT64_MAX ? size - ref->offset : ref->length;
	err = accel_buffer_map(b, flags, ref->offset, *len ? *len : ACCEL_WHOLE_BUFFER, &ptr);
	if (err)
		return lib_fail(r, err);
	*p = ptr;
	return 0;
}

/* ---- submissions and the drain --------------------------------------------- */

/*
 * Submission @i of the drain did not complete in time: it failed, and so
 * did every one still pending behind it (the cleanup cancels them). That
 * is a failed submission (status 1), not a failed library call, and it
 * stops the run: nothing after it could see finished work.
 */
static int timed_out(struct rt *r, uint32_t i)
{
	const struct stmt *st = r->pend[i].rec->st;
	double t = now_ns();

	for (uint32_t j = i; j < r->npend; j++) {
		struct sub_rec *rec = r->pend[j].rec;

		rec->t_done = t;
		if (rec->failed++)
			continue;
		if (j == i)
			snprintf(rec->error, sizeof(rec->error),
				 "a submission of '%s' did not complete within %" PRId64 " ms; does it wait on a point nothing signals?",
				 obj_name(r, st->obj), r->o->timeout_ms);
		else
			snprintf(rec->error, sizeof(rec->error),
				 "cancelled: a submission at line %d did not complete within %" PRId64 " ms",
				 st->line, r->o->timeout_ms);
	}
	/* The ones before @i are released; the cleanup ends the rest. */
	memmove(r->pend, r->pend + i, (r->npend - i) * sizeof(*r->pend));
	r->npend -= i;
	r->cur = st;
	rt_fail(r, "%s", r->pend[0].rec->error);
	return RUN_CHECK_FAILED;
}

static int drain(struct rt *r)
{
	int64_t deadline = accel_deadline_after((uint64_t)r->o->timeout_ms * 1000000);

	for (uint32_t i = 0; i < r->npend; i++) {
		struct pending *p = &r->pend[i];
		int err = accel_semaphore_wait(p->done, 1, 0, deadline);

		if (err == -ETIME)
			return timed_out(r, i);
		p->rec->t_done = now_ns();
		if (err) {
			if (!p->rec->failed++)
				snprintf(p->rec->error, sizeof(p->rec->error), "%s",
					 accel_semaphore_failure_message(p->done));
		} else {
			p->rec->ok++;
		}
		accel_semaphore_release(p->done);
	}
	r->npend = 0;
	return 0;
}

static int submit_one(struct rt *r, struct sub_rec *rec, const accel_binding_table_t *table,
		      const accel_semaphore_list_t *waits, accel_semaphore_t **sems,
		      uint64_t *values, uint32_t nsig)
{
	accel_semaphore_t *done;
	accel_semaphore_list_t sig = { nsig + 1, sems, values };
	double t;
	int err;

	err = accel_semaphore_create(accel_device_scheduler(r->dev), 0, &done);
	if (err)
		return lib_fail(r, err);
	sems[nsig] = done;
	values[nsig] = 1;
	if (r->npend == r->cap_pend) {
		uint32_t cap = r->cap_pend ? r->cap_pend * 2 : 64;
		struct pending *p = realloc(r->pend, cap * sizeof(*p));

		if (!p) {
			accel_semaphore_release(done);
			return rt_fail(r, "out of memory");
		}
		r->pend = p;
		r->cap_pend = cap;
	}
	t = now_ns();
	err = accel_queue_execute(r->queue, waits, &sig, r->h[rec->st->obj], table, 0);
	rec->host_ns[rec->submitted] = now_ns() - t;
	if (!rec->submitted)
		rec->t_first = t;
	if (err) {
		accel_semaphore_release(done);
		return lib_fail(r, err);
	}
	rec->submitted++;
	r->pend[r->npend++] = (struct pending){ done, rec };
	return 0;
}

static int lists(struct rt *r, const struct point *pts, uint32_t n,
		 accel_semaphore_t **sems, uint64_t *values)
{
	for (uint32_t i = 0; i < n; i++) {
		sems[i] = r->h[pts[i].sem];
		values[i] = pts[i].value;
	}
	return 0;
}

static int do_submit(struct rt *r, const struct stmt *st)
{
	accel_semaphore_t *ws[256], *ss[257];
	uint64_t wv[256], sv[257];
	accel_semaphore_list_t waits = { st->wait_count, ws, wv };
	accel_binding_t *b = NULL;
	accel_binding_table_t table = { 0, NULL };
	struct sub_rec *rec = &r->subs[r->nsubs++];
	int err = 0;

	rec->st = st;
	rec->host_ns = calloc(st->count, sizeof(double));
	if (!rec->host_ns)
		return rt_fail(r, "out of memory");
	for (uint32_t i = 0; i < st->table_count; i++)
		if (st->table[i].slot + 1 > table.count)
			table.count = st->table[i].slot + 1;
	if (table.count) {
		b = calloc(table.count, sizeof(*b));
		if (!b)
			return rt_fail(r, "out of memory");
		for (uint32_t i = 0; i < st->table_count; i++) {
			const struct ref *ref = &st->table[i].ref;

			b[st->table[i].slot] = (accel_binding_t){
				r->h[ref->index], ref->offset,
				ref->length == UINT64_MAX ? ACCEL_WHOLE_BUFFER : ref->length,
			};
		}
		table.bindings = b;
	}
	lists(r, st->waits, st->wait_count, ws, wv);
	lists(r, st->signals, st->signal_count, ss, sv);
	for (uint64_t k = 0; k < st->count && !err; k++)
		err = submit_one(r, rec, &table, &waits, ss, sv, st->signal_count);
	free(b);
	return err;
}

/* ---- statements ------------------------------------------------------------ */

static int do_buffer(struct rt *r, const struct stmt *st)
{
	accel_buffer_params_t p = {
		ACCEL_MEMORY_TYPE_HOST_LOCAL | ACCEL_MEMORY_TYPE_HOST_VISIBLE |
		ACCEL_MEMORY_TYPE_HOST_COHERENT,
		ACCEL_BUFFER_USAGE_ALL,
	};
	struct ref whole = { false, st->obj, 0, UINT64_MAX };
	accel_buffer_t *b;
	unsigned int es;
	uint64_t len;
	uint8_t *ptr;
	int err = accel_allocator_allocate_buffer(accel_device_allocator(r->dev), &p,
						  st->size, &b);

	if (err)
		return lib_fail(r, err);
	r->h[st->obj] = b;
	err = map_ref(r, &whole, ACCEL_MAP_WRITE, &ptr, &len);
	if (err)
		return err;
	memset(ptr, 0, len);
	es = elem_size(st->values.type);
	if (st->init == INIT_FILL || (st->init == INIT_LIST && st->values.rest)) {
		for (uint64_t i = 0; i + es <= len; i += es)
			put(ptr + i, st->values.type, value_at(&st->values, i / es));
	} else if (st->init == INIT_LIST) {
		for (uint32_t i = 0; i < st->values.count; i++)
			put(ptr + (uint64_t)i * es, st->values.type, st->values.v[i]);
	} else if (st->init == INIT_IOTA) {
		union num x = st->values.v[0], step = st->values.v[1];

		for (uint64_t i = 0; i + es <= len; i += es) {
			put(ptr + i, st->values.type, x);
			if (st->values.type == T_F32 || st->values.type == T_F64)
				x.f += step.f;
			else
				x.u += step.u;
		}
	}
	accel_buffer_unmap(b);
	return 0;
}

static int find_exe(struct rt *r, const char *path, char *out, size_t len)
{
	if (path[0] == '/') {
		snprintf(out, len, "%s", path);
		return 0;
	}
	snprintf(out, len, "%s/%s", r->s->dir, path);
	if (access(out, R_OK) == 0)
		return 0;
	for (int i = 0; i < r->o->libdir_count; i++) {
		snprintf(out, len, "%s/%s", r->o->libdirs[i], path);
		if (access(out, R_OK) == 0)
			return 0;
	}
	if (access(path, R_OK) == 0) {
		snprintf(out, len, "%s", path);
		return 0;
	}
	return rt_fail(r, "cannot find '%s' in the script's directory (%s)%s; add -L DIR (or ACCEL_RUN_PATH) for where it was built",
		       path, r->s->dir, r->o->libdir_count ? " nor in the -L directories" : "");
}

static int do_executable(struct rt *r, const struct stmt *st)
{
	char path[1024];
	int err = find_exe(r, st->text, path, sizeof(path));

	if (err)
		return err;
	err = accel_executable_load(r->dev, path, (accel_executable_t **)&r->h[st->obj]);
	return err ? lib_fail(r, err) : 0;
}

static int do_begin(struct rt *r, const struct stmt *st)
{
	accel_command_buffer_t **cb = (accel_command_buffer_t **)&r->h[st->obj];
	int err = accel_command_buffer_create(r->dev, st->oneshot ? ACCEL_COMMAND_BUFFER_ONE_SHOT :
					      ACCEL_COMMAND_BUFFER_REUSABLE, st->capacity, cb);

	if (!err)
		err = accel_command_buffer_begin(*cb);
	return err ? lib_fail(r, err) : 0;
}

/* The length a ref's values must cover ("rest" lists), or 0 if unknown. */
static uint64_t known_length(struct rt *r, const struct ref *ref)
{
	if (ref->length != UINT64_MAX)
		return ref->length;
	if (!ref->slot) {
		uint64_t size = accel_buffer_size(r->h[ref->index]);

		return ref->offset < size ? size - ref->offset : 0;
	}
	return 0;
}

static int do_update(struct rt *r, const struct stmt *st, accel_command_buffer_t *cb)
{
	unsigned int es = elem_size(st->values.type);
	uint64_t n = st->values.count, len = known_length(r, &st->refs[0]);
	accel_buffer_ref_t ref = lib_ref(r, &st->refs[0]);
	uint8_t *bytes;
	int err;

	if (st->values.rest) {
		if (!len)
			return rt_fail(r, "'v*' needs a known length: give the slot ref one, such as @0[0,64]");
		n = len / es;
	}
	if (st->refs[0].length == UINT64_MAX)
		ref.length = n * es;
	bytes = encode(&st->values, n);
	if (!bytes)
		return rt_fail(r, "out of memory");
	err = accel_command_buffer_update(cb, bytes, ref);
	free(bytes);
	return err ? lib_fail(r, err) : 0;
}

static int do_dispatch(struct rt *r, const struct stmt *st, accel_command_buffer_t *cb)
{
	accel_buffer_ref_t b[256];
	uint32_t ordinal, consts[1024 + 1];
	accel_executable_t *exe = r->h[st->obj];
	int err;

	if (st->values.count > 1024)
		return rt_fail(r, "more than 1024 constants");
	err = accel_executable_lookup(exe, st->text, &ordinal);
	if (err)
		return rt_fail(r, "%s: %s", obj_name(r, st->obj), accel_error_message());
	for (uint32_t i = 0; i < st->binding_count; i++)
		b[i] = lib_ref(r, &st->bindings[i]);
	for (uint32_t i = 0; i < st->values.count; i++)
		put((uint8_t *)&consts[i], st->values.type, st->values.v[i]);
	if (st->kind == ST_DISPATCH)
		err = accel_command_buffer_dispatch(cb, exe, ordinal, st->wg, consts,
						    st->values.count, b, st->binding_count);
	else
		err = accel_command_buffer_dispatch_indirect(cb, exe, ordinal,
							     lib_ref(r, &st->refs[0]), consts,
							     st->values.count, b, st->binding_count);
	return err ? lib_fail(r, err) : 0;
}

static int do_record(struct rt *r, const struct stmt *st)
{
	accel_command_buffer_t *cb = r->h[st->cb];
	uint64_t pattern = 0; /* little-endian: the fill reads its low bytes */
	int err = 0;

	switch (st->kind) {
	case ST_FILL:
		put((uint8_t *)&pattern, st->values.type, st->values.v[0]);
		err = accel_command_buffer_fill(cb, lib_ref(r, &st->refs[0]), &pattern,
						elem_size(st->values.type));
		break;
	case ST_UPDATE:
		return do_update(r, st, cb);
	case ST_COPY:
		err = accel_command_buffer_copy(cb, lib_ref(r, &st->refs[0]),
						lib_ref(r, &st->refs[1]));
		break;
	case ST_DISPATCH:
	case ST_DISPATCH_INDIRECT:
		return do_dispatch(r, st, cb);
	case ST_BARRIER:
		err = accel_command_buffer_barrier(cb);
		break;
	case ST_END:
		err = accel_command_buffer_end(cb);
		break;
	default:
		break;
	}
	return err ? lib_fail(r, err) : 0;
}

static int do_host_sem(struct rt *r, const struct stmt *st)
{
	accel_semaphore_t *sems[256];
	uint64_t values[256];
	int err = 0;

	if (st->kind == ST_SIGNAL) {
		for (uint32_t i = 0; i < st->signal_count && !err; i++)
			err = accel_semaphore_signal(r->h[st->signals[i].sem], st->signals[i].value);
		return err ? lib_fail(r, err) : 0;
	}
	lists(r, st->waits, st->wait_count, sems, values);
	{
		accel_semaphore_list_t l = { st->wait_count, sems, values };

		err = accel_semaphore_list_wait(&l, ACCEL_SEMAPHORE_WAIT_ALL,
						accel_deadline_after((uint64_t)st->timeout_ms * 1000000),
						NULL);
	}
	return err ? lib_fail(r, err) : 0;
}

static bool equal(enum elem_type t, union num want, union num got, double tol)
{
	if (t == T_F32 || t == T_F64) {
		if (isnan(want.f))
			return isnan(got.f);
		/* inf - inf is NaN: an infinity matches only itself. */
		if (isinf(want.f) || isinf(got.f))
			return want.f == got.f;
		return fabs(got.f - want.f) <= tol;
	}
	return want.u == got.u;
}

static int do_expect(struct rt *r, const struct stmt *st)
{
	struct check_rec *c = &r->checks[r->nchecks];
	unsigned int es = elem_size(st->values.type);
	uint64_t len, n;
	uint8_t *p;
	int err = map_ref(r, &st->refs[0], ACCEL_MAP_READ, &p, &len);

	if (err)
		return err;
	n = st->values.rest ? len / es : st->values.count;
	if (n * es > len) {
		accel_buffer_unmap(r->h[st->refs[0].index]);
		return rt_fail(r, "%" PRIu64 " %s values are %" PRIu64 " bytes, more than the %" PRIu64 " of the range",
			       n, elem_name(st->values.type), n * es, len);
	}
	r->nchecks++;
	c->st = st;
	c->count = n;
	for (uint64_t i = 0; i < n; i++) {
		union num want = value_at(&st->values, i), got = get(p + i * es, st->values.type);

		if (equal(st->values.type, want, got, st->tolerance))
			continue;
		if (!c->mismatches++) {
			c->first = i;
			fmt_num(c->expected, sizeof(c->expected), st->values.type, want);
			fmt_num(c->got, sizeof(c->got), st->values.type, got);
		}
	}
	accel_buffer_unmap(r->h[st->refs[0].index]);
	return 0;
}

static int do_print(struct rt *r, const struct stmt *st)
{
	struct print_rec *pr = &r->prints[r->nprints];
	unsigned int es = elem_size(st->type);
	uint64_t len, n;
	uint8_t *p;
	size_t at = 0;
	int err = map_ref(r, &st->refs[0], ACCEL_MAP_READ, &p, &len);

	if (err)
		return err;
	n = len / es < st->count ? len / es : st->count;
	pr->values = malloc(n * 32 + 1);
	if (!pr->values) {
		accel_buffer_unmap(r->h[st->refs[0].index]);
		return rt_fail(r, "out of memory");
	}
	pr->values[0] = '\0';
	for (uint64_t i = 0; i < n; i++) {
		char v[32];

		fmt_num(v, sizeof(v), st->type, get(p + i * es, st->type));
		at += (size_t)snprintf(pr->values + at, 32, "%s%s", i ? " " : "", v);
	}
	accel_buffer_unmap(r->h[st->refs[0].index]);
	pr->st = st;
	pr->count = n;
	r->nprints++;
	return 0;
}

static int run_stmt(struct rt *r, const struct stmt *st)
{
	int err;

	r->cur = st;
	switch (st->kind) {
	case ST_DEVICE:
		return 0;
	case ST_BUFFER:
		return do_buffer(r, st);
	case ST_EXECUTABLE:
		return do_executable(r, st);
	case ST_SEMAPHORE:
		err = accel_semaphore_create(accel_device_scheduler(r->dev), st->size,
					     (accel_semaphore_t **)&r->h[st->obj]);
		return err ? lib_fail(r, err) : 0;
	case ST_BEGIN:
		return do_begin(r, st);
	case ST_SUBMIT:
		return do_submit(r, st);
	case ST_SIGNAL:
	case ST_WAIT:
		return do_host_sem(r, st);
	case ST_EXPECT:
		err = drain(r);
		return err ? err : do_expect(r, st);
	case ST_PRINT:
		err = drain(r);
		return err ? err : do_print(r, st);
	default:
		return do_record(r, st);
	}
}

/* ---- the report ------------------------------------------------------------- */

static double median_of(double *v, uint64_t n)
{
	for (uint64_t i = 1; i < n; i++) /* insertion sort: n is small */
		for (uint64_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}


/* JSON numbers for "v v v" (nan/inf become null). */
static void json_values(FILE *f, const char *text)
{
	char *copy = strdup(text), *save = NULL, *t;
	int first = 1;

	fputc('[', f);
	for (t = copy ? strtok_r(copy, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
		bool bad = strstr(t, "nan") || strstr(t, "inf");

		fprintf(f, "%s%s", first ? "" : ", ", bad ? "null" : t);
		first = 0;
	}
	fputc(']', f);
	free(copy);
}

static void report_json(struct rt *r, FILE *f, int status, uint32_t passed,
			uint32_t failed, double elapsed)
{
	char ref[160];

	fprintf(f, "{\"script\": ");
	json_fstring(f, r->s->file);
	fprintf(f, ", \"device\": ");
	json_fstring(f, r->dev ? accel_device_uri(r->dev) : "");
	fprintf(f, ", \"scheduler\": ");
	json_fstring(f, r->dev ? accel_scheduler_kind_name(accel_scheduler_kind(accel_device_scheduler(r->dev))) : "");
	fprintf(f, ",\n \"submissions\": [");
	for (uint32_t i = 0; i < r->nsubs; i++) {
		struct sub_rec *s = &r->subs[i];
		double total = 0;

		for (uint64_t k = 0; k < s->submitted; k++)
			total += s->host_ns[k];
		fprintf(f, "%s\n  {\"line\": %d, \"command_buffer\": ", i ? "," : "", s->st->line);
		json_fstring(f, obj_name(r, s->st->obj));
		fprintf(f, ", \"submitted\": %" PRIu64 ", \"completed\": %" PRIu64 ", \"failed\": %" PRIu64
			   ", \"host_submit_ns_median\": %.0f, \"host_submit_ns_total\": %.0f, \"elapsed_ns\": %.0f, \"error\": ",
			s->submitted, s->ok, s->failed, median_of(s->host_ns, s->submitted), total,
			s->t_done > s->t_first ? s->t_done - s->t_first : 0.0);
		if (s->failed)
			json_fstring(f, s->error);
		else
			fprintf(f, "null");
		fputc('}', f);
	}
	fprintf(f, "],\n \"checks\": [");
	for (uint32_t i = 0; i < r->nchecks; i++) {
		struct check_rec *c = &r->checks[i];

		ref_text(r, &c->st->refs[0], ref, sizeof(ref));
		fprintf(f, "%s\n  {\"line\": %d, \"ref\": ", i ? "," : "", c->st->line);
		json_fstring(f, ref);
		fprintf(f, ", \"type\": \"%s\", \"count\": %" PRIu64 ", \"result\": \"%s\", \"mismatches\": %" PRIu64,
			elem_name(c->st->values.type), c->count, c->mismatches ? "fail" : "pass", c->mismatches);
		/* Always there, as the man page lists it: null when nothing differs. */
		if (c->mismatches)
			fprintf(f, ", \"first_mismatch\": {\"index\": %" PRIu64 ", \"expected\": \"%s\", \"got\": \"%s\"}",
				c->first, c->expected, c->got);
		else
			fputs(", \"first_mismatch\": null", f);
		fputc('}', f);
	}
	fprintf(f, "],\n \"prints\": [");
	for (uint32_t i = 0; i < r->nprints; i++) {
		struct print_rec *p = &r->prints[i];

		ref_text(r, &p->st->refs[0], ref, sizeof(ref));
		fprintf(f, "%s\n  {\"line\": %d, \"ref\": ", i ? "," : "", p->st->line);
		json_fstring(f, ref);
		fprintf(f, ", \"type\": \"%s\", \"values\": ", elem_name(p->st->type));
		json_values(f, p->values);
		fputc('}', f);
	}
	fprintf(f, "],\n \"checks_passed\": %u, \"checks_failed\": %u, \"elapsed_ns\": %.0f, \"result\": \"%s\", \"error\": ",
		passed, failed, elapsed, status == RUN_OK ? "pass" : status == RUN_ERROR ? "error" : "fail");
	if (r->err[0])
		json_fstring(f, r->err);
	else
		fprintf(f, "null");
	fprintf(f, "}\n");
}

/* Text: one line per submission, check and print, in script order. */
static void report_text(struct rt *r, FILE *f, int status, uint32_t passed,
			uint32_t failed, double elapsed)
{
	uint32_t si = 0, ci = 0, pi = 0;
	char ref[160];

	if (r->dev)
		fprintf(f, "accel-run: %s on %s (%s scheduler)\n", r->s->file, accel_device_uri(r->dev),
			accel_scheduler_kind_name(accel_scheduler_kind(accel_device_scheduler(r->dev))));
	for (;;) {
		int ls = si < r->nsubs ? r->subs[si].st->line : INT32_MAX;
		int lc = ci < r->nchecks ? r->checks[ci].st->line : INT32_MAX;
		int lp = pi < r->nprints ? r->prints[pi].st->line : INT32_MAX;

		if (ls == INT32_MAX && lc == INT32_MAX && lp == INT32_MAX)
			break;
		if (ls <= lc && ls <= lp) {
			struct sub_rec *s = &r->subs[si++];

			fprintf(f, "%s:%d: submit %s: %" PRIu64 " submitted, %" PRIu64 " completed, %" PRIu64
				   " failed; host %.2f us per submit (median), done in %.3f ms\n",
				r->s->file, ls, obj_name(r, s->st->obj), s->submitted, s->ok, s->failed,
				median_of(s->host_ns, s->submitted) / 1e3,
				s->t_done > s->t_first ? (s->t_done - s->t_first) / 1e6 : 0.0);
			if (s->failed)
				fprintf(f, "%s:%d: submit %s: failed: %s\n", r->s->file, ls,
					obj_name(r, s->st->obj), s->error);
		} else if (lc <= lp) {
			struct check_rec *c = &r->checks[ci++];

			ref_text(r, &c->st->refs[0], ref, sizeof(ref));
			if (!c->mismatches)
				fprintf(f, "%s:%d: expect %s: ok (%" PRIu64 " %s values)\n", r->s->file, lc,
					ref, c->count, elem_name(c->st->values.type));
			else
				fprintf(f, "%s:%d: expect %s: FAILED: %" PRIu64 " of %" PRIu64
					   " %s values differ; first at index %" PRIu64 ": expected %s, got %s\n",
					r->s->file, lc, ref, c->mismatches, c->count,
					elem_name(c->st->values.type), c->first, c->expected, c->got);
		} else {
			struct print_rec *p = &r->prints[pi++];

			ref_text(r, &p->st->refs[0], ref, sizeof(ref));
			fprintf(f, "%s:%d: %s %s: %s\n", r->s->file, lp, ref,
				elem_name(p->st->type), p->values);
		}
	}
	fprintf(f, "accel-run: %s: %u checks passed, %u failed; %u submit statements; %.3f ms\n",
		status == RUN_OK ? "pass" : status == RUN_ERROR ? "error" : "FAIL",
		passed, failed, r->nsubs, elapsed / 1e6);
}

static const char *device_uri(const struct script *s, const struct run_opts *o)
{
	if (o->device)
		return o->device;
	for (uint32_t i = 0; i < s->count; i++)
		if (s->stmts[i].kind == ST_DEVICE)
			return s->stmts[i].text;
	return "cpu://";
}

/* The device would not open: blame --device, or the script's line. */
static int device_fail(struct rt *r)
{
	if (r->o->device) {
		snprintf(r->err, r->err_len, "accel-run: --device %s: %s", r->o->device,
			 accel_error_message());
		return RUN_ERROR;
	}
	for (uint32_t i = 0; i < r->s->count; i++)
		if (r->s->stmts[i].kind == ST_DEVICE) {
			r->cur = &r->s->stmts[i];
			return rt_fail(r, "%s", accel_error_message());
		}
	snprintf(r->err, r->err_len, "accel-run: cpu://: %s", accel_error_message());
	return RUN_ERROR;
}

/*
 * The scheduler is opened first, by itself: what makes it fail is the
 * environment (ACCEL_SCHEDULER, ACCEL_DEVICE), never the script's
 * 'device' line or --device, and the message must not blame them. So is
 * what makes the queue fail (ACCEL_ENGINE_CREDITS): it has no line.
 */
static int open_device(struct rt *r)
{
	accel_scheduler_t *sched;
	int err = accel_scheduler_open(NULL, &sched);

	if (err) {
		snprintf(r->err, r->err_len, "accel-run: cannot open a scheduler: %s",
			 accel_error_message());
		return RUN_ERROR;
	}
	err = accel_device_open(device_uri(r->s, r->o), sched, &r->dev);
	accel_scheduler_release(sched); /* the device holds its own reference */
	if (err)
		return device_fail(r);
	err = accel_queue_create(r->dev, 0, &r->queue);
	if (err) {
		snprintf(r->err, r->err_len, "accel-run: %s: cannot create a queue: %s",
			 accel_device_uri(r->dev), accel_error_message());
		return RUN_ERROR;
	}
	return 0;
}

static void cleanup(struct rt *r)
{
	/*
	 * Submissions still pending after an error wait on points nothing
	 * will signal: fail the script's semaphores so that they end (with
	 * that error, not run) and give back what they hold.
	 */
	for (uint32_t i = 0; r->npend && i < r->s->obj_count; i++)
		if (r->s->objs[i].kind == OBJ_SEMAPHORE && r->h[i])
			accel_semaphore_fail(r->h[i], -ECANCELED);
	for (uint32_t i = 0; i < r->npend; i++) {
		accel_semaphore_wait(r->pend[i].done, 1, 0, accel_deadline_after(1000000000));
		accel_semaphore_release(r->pend[i].done);
	}
	for (uint32_t i = r->s->obj_count; i-- > 0; ) {
		if (!r->h[i])
			continue;
		switch (r->s->objs[i].kind) {
		case OBJ_BUFFER:
			accel_buffer_release(r->h[i]);
			break;
		case OBJ_EXECUTABLE:
			accel_executable_release(r->h[i]);
			break;
		case OBJ_SEMAPHORE:
			accel_semaphore_release(r->h[i]);
			break;
		case OBJ_CB:
			accel_command_buffer_release(r->h[i]);
			break;
		}
	}
	accel_queue_release(r->queue);
	accel_device_release(r->dev);
	for (uint32_t i = 0; i < r->nsubs; i++)
		free(r->subs[i].host_ns);
	for (uint32_t i = 0; i < r->nprints; i++)
		free(r->prints[i].values);
	free(r->pend);
	free(r->subs);
	free(r->checks);
	free(r->prints);
	free(r->h);
}

int script_run(const struct script *s, const struct run_opts *o, FILE *out,
	       char *err, size_t err_len)
{
	struct rt r = { .s = s, .o = o, .err = err, .err_len = err_len };
	uint32_t passed = 0, failed = 0, sub_failed = 0;
	int status = RUN_OK;

	r.t0 = now_ns();
	err[0] = '\0';
	r.h = calloc(s->obj_count + 1, sizeof(void *));
	r.subs = calloc(s->count + 1, sizeof(*r.subs));
	r.checks = calloc(s->count + 1, sizeof(*r.checks));
	r.prints = calloc(s->count + 1, sizeof(*r.prints));
	if (!r.h || !r.subs || !r.checks || !r.prints)
		status = rt_fail(&r, "out of memory");
	if (!status)
		status = open_device(&r);
	for (uint32_t i = 0; i < s->count && !status; i++)
		status = run_stmt(&r, &s->stmts[i]);
	r.cur = NULL;
	if (!status)
		status = drain(&r);
	for (uint32_t i = 0; i < r.nchecks; i++)
		r.checks[i].mismatches ? failed++ : passed++;
	for (uint32_t i = 0; i < r.nsubs; i++)
		sub_failed += r.subs[i].failed != 0;
	if (!status && (failed || sub_failed))
		status = RUN_CHECK_FAILED;
	if (o->json)
		report_json(&r, out, status, passed, failed, now_ns() - r.t0);
	else
		report_text(&r, out, status, passed, failed, now_ns() - r.t0);
	cleanup(&r);
	return status;
}
