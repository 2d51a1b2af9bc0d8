// SPDX-License-Identifier: MIT
/*
 * accel-run: the script parser.
 *
 * A script is lines of whitespace-separated words: a command, positional
 * arguments, then KEY=VALUE options; '#' starts a comment and a trailing
 * '\' continues a line. Objects (buffers, executables, semaphores,
 * command buffers) are defined before use, so every name is resolved
 * here, and everything that can be checked without a device is: unknown
 * commands and options (with the nearest known word), missing or repeated
 * options, malformed numbers and value lists, values out of their type's
 * range, refs to objects of the wrong kind, recording commands outside
 * begin/end, and begin without end.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "script.h"

/* The longest host wait= timeout, as accel-run -t allows (a day). */
#define WAIT_TIMEOUT_MS_MAX 86400000ull

#define MAX_WORDS 64

struct parser {
	struct script *s;
	int line;
	char *err;
	size_t err_len;
	int open_cb;        /* the command buffer being recorded, or -1 */
	int open_line;
	int device_line;    /* the 'device' statement, or 0 */
};

static const char *const type_names[] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64",
};

static const unsigned int type_sizes[] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

unsigned int elem_size(enum elem_type t)
{
	return type_sizes[t];
}

const char *elem_name(enum elem_type t)
{
	return type_names[t];
}

static const char *const stmt_names[] = {
	"device", "buffer", "executable", "semaphore", "begin", "fill",
	"update", "copy", "dispatch", "dispatch_indirect", "barrier", "end",
	"submit", "signal", "wait", "expect", "print",
};

const char *stmt_name(enum stmt_kind k)
{
	return stmt_names[k];
}

static const char *const kind_names[] = {
	"buffer", "executable", "semaphore", "command buffer",
};

static int fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->err_len, "%s:%d: ", p->s->file, p->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->err_len)
		vsnprintf(p->err + n, p->err_len - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- did you mean ------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[SCRIPT_NAME_MAX + 1];

	if (la > SCRIPT_NAME_MAX || lb > SCRIPT_NAME_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *closest_name(const char *word, const char *const *names, size_t n)
{
	size_t best = SIZE_MAX, limit = strlen(word) < 4 ? 1 : 2;
	const char *found = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, names[i]);

		if (d < best) {
			best = d;
			found = names[i];
		}
	}
	return best <= limit ? found : NULL;
}

/* " (did you mean 'x'?)" or "" in @buf. */
static const char *suggest(char *buf, size_t len, const char *word,
			   const char *const *names, size_t n)
{
	const char *c = closest_name(word, names, n);

	if (c)
		snprintf(buf, len, " (did you mean '%s'?)", c);
	else
		buf[0] = '\0';
	return buf;
}

/* ---- numbers and values --------------------------------------------------- */

/*
 * The base of the integer @t: 16 after "0x", else 10. strtoull()'s base 0
 * would read a leading 0 as octal ("010" is 8, "09" an error), which no
 * script means and the language does not have.
 */
static int int_base(const char *t)
{
	if (*t == '-' || *t == '+')
		t++;
	return t[0] == '0' && (t[1] == 'x' || t[1] == 'X') ? 16 : 10;
}

static int parse_u64(const char *t, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)t[0]))
		return -1;
	errno = 0;
	*out = strtoull(t, &end, int_base(t));
	return errno || *end ? -1 : 0;
}

/* A size: a number with an optional K, M or G (powers of 1024). */
static int parse_size(const char *t, uint64_t *out)
{
	char buf[64], *end;
	size_t n = strlen(t);
	unsigned int shift = 0;

	if (!n || n >= sizeof(buf))
		return -1;
	memcpy(buf, t, n + 1);
	switch (buf[n - 1]) {
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	}
	if (shift)
		buf[n - 1] = '\0';
	if (!isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	*out = strtoull(buf, &end, int_base(buf));
	if (errno || *end || (shift && *out > (UINT64_MAX >> shift)))
		return -1;
	*out <<= shift;
	return 0;
}

static int parse_type(struct parser *p, const char *t, size_t len,
		      enum elem_type *out)
{
	char name[16], hint[64];

	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strlen(type_names[i]) == len && !strncmp(t, type_names[i], len)) {
			*out = (enum elem_type)i;
			return 0;
		}
	snprintf(name, sizeof(name), "%.*s", (int)(len < 15 ? len : 15), t);
	return fail(p, "unknown element type '%s'%s; the types are u8, i8, u16, i16, u32, i32, u64, i64, f32, f64",
		    name, suggest(hint, sizeof(hint), name, type_names,
				  sizeof(type_names) / sizeof(type_names[0])));
}

static bool is_float(enum elem_type t)
{
	return t == T_F32 || t == T_F64;
}

static bool is_signed(enum elem_type t)
{
	return t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64;
}

/* The values type @t holds, "MIN to MAX", in @buf. */
static const char *type_range(enum elem_type t, char *buf, size_t len)
{
	unsigned int bits = 8 * elem_size(t);

	if (t == T_F32)
		snprintf(buf, len, "%.9g to %.9g", -FLT_MAX, FLT_MAX);
	else if (t == T_F64)
		snprintf(buf, len, "%.17g to %.17g", -DBL_MAX, DBL_MAX);
	else if (is_signed(t))
		snprintf(buf, len, "%lld to %lld", (long long)(-(INT64_MAX >> (64 - bits)) - 1),
			 (long long)(INT64_MAX >> (64 - bits)));
	else
		snprintf(buf, len, "0 to %llu", (unsigned long long)(UINT64_MAX >> (64 - bits)));
	return buf;
}

/* "'@t' does not fit in TYPE (MIN to MAX)". */
static int does_not_fit(struct parser *p, const char *t, enum elem_type type)
{
	char range[96];

	return fail(p, "%s does not fit in %s (%s)", t, elem_name(type),
		    type_range(type, range, sizeof(range)));
}

/*
 * A float of type @type: strtod() refuses what a double cannot hold
 * (ERANGE); an f32 must also hold it, or 1e39 would be stored as inf and
 * 1e-50 as 0. "inf" and "nan" written as such are values of their own.
 */
static int parse_float(struct parser *p, const char *t, enum elem_type type,
		       union num *out)
{
	char *end;
	float f;

	errno = 0;
	out->f = strtod(t, &end);
	if (end == t || *end)
		return fail(p, "'%s' is not a %s number", t, elem_name(type));
	if (errno == ERANGE && (isinf(out->f) || fabs(out->f) > 1))
		return does_not_fit(p, t, type);
	f = (float)out->f;
	if (type == T_F32 && isinf(f) && !isinf(out->f))
		return does_not_fit(p, t, type);
	if (errno == ERANGE || (type == T_F32 && f == 0 && out->f != 0))
		return fail(p, "%s is too close to 0 for %s (the smallest magnitude is %.9g)", t,
			    elem_name(type), type == T_F32 ? FLT_TRUE_MIN : DBL_TRUE_MIN);
	return 0;
}

/* One number of type @t; checks its range. */
static int parse_num(struct parser *p, const char *t, enum elem_type type,
		     union num *out)
{
	unsigned int bits = 8 * elem_size(type);
	char *end;

	if (is_float(type))
		return parse_float(p, t, type, out);
	errno = 0;
	if (is_signed(type)) {
		out->i = strtoll(t, &end, int_base(t));
		if (end == t || *end)
			return fail(p, "'%s' is not a %s number", t, elem_name(type));
		if (errno || (bits < 64 && (out->i < -(INT64_C(1) << (bits - 1)) ||
					    out->i >= (INT64_C(1) << (bits - 1)))))
			return does_not_fit(p, t, type);
		return 0;
	}
	if (t[0] == '-' || !isdigit((unsigned char)t[0]))
		return fail(p, "'%s' is not a %s number", t, elem_name(type));
	out->u = strtoull(t, &end, int_base(t));
	if (*end)
		return fail(p, "'%s' is not a %s number", t, elem_name(type));
	if (errno || (bits < 64 && out->u >> bits))
		return does_not_fit(p, t, type);
	return 0;
}

/* Splits @t at top-level commas (not inside [...]) into @parts. */
static int split_list(struct parser *p, char *t, char **parts, uint32_t max,
		      uint32_t *n, const char *what)
{
	int depth = 0;

	*n = 0;
	if (!*t)
		return fail(p, "%s is empty", what);
	parts[(*n)++] = t;
	for (; *t; t++) {
		if (*t == '[')
			depth++;
		else if (*t == ']')
			depth--;
		else if (*t == ',' && depth == 0) {
			if (*n == max)
				return fail(p, "%s has more than %u items", what, max);
			*t = '\0';
			parts[(*n)++] = t + 1;
		}
	}
	for (uint32_t i = 0; i < *n; i++)
		if (!*parts[i])
			return fail(p, "%s has an empty item", what);
	return 0;
}

static int push_value(struct parser *p, struct values *v, uint32_t *cap,
		      union num x, uint64_t times)
{
	if (v->count + times > SCRIPT_VALUES_MAX)
		return fail(p, "the value list is longer than %u elements", SCRIPT_VALUES_MAX);
	if (v->count + times > *cap) {
		uint32_t c = *cap ? *cap : 16;
		union num *n;

		while (c < v->count + times)
			c *= 2;
		n = realloc(v->v, c * sizeof(*n));
		if (!n)
			return fail(p, "out of memory");
		v->v = n;
		*cap = c;
	}
	for (uint64_t i = 0; i < times; i++)
		v->v[v->count++] = x;
	return 0;
}

/* One item: "v", "v*N" or (last only) "v*". */
static int parse_item(struct parser *p, char *item, bool last, struct values *v,
		      uint32_t *cap)
{
	char *star = strchr(item, '*');
	uint64_t times = 1;
	union num x;

	if (star) {
		*star = '\0';
		if (!star[1]) {
			if (!last)
				return fail(p, "'%s*' (repeat to the end) may only be the last item", item);
			v->rest = true;
		} else if (parse_u64(star + 1, &times) || times == 0) {
			return fail(p, "'%s' after '*' is not a repeat count (a number >= 1)", star + 1);
		}
	}
	if (parse_num(p, item, v->type, &x))
		return -1;
	return push_value(p, v, cap, x, times);
}

/* "TYPE:v1,v2*3,v4*" */
static int parse_values(struct parser *p, char *t, const char *what,
			struct values *v)
{
	char *colon = strchr(t, ':'), *item;
	uint32_t cap = 0;

	memset(v, 0, sizeof(*v));
	if (!colon)
		return fail(p, "%s '%s' needs a type: write TYPE:VALUES, such as f32:1,2,3", what, t);
	if (parse_type(p, t, (size_t)(colon - t), &v->type))
		return -1;
	item = colon + 1;
	if (!*item)
		return fail(p, "%s has no values after '%.*s:'", what, (int)(colon - t), t);
	for (;;) {
		char *comma = strchr(item, ',');

		if (comma)
			*comma = '\0';
		if (!*item)
			return fail(p, "%s has an empty item", what);
		if (parse_item(p, item, !comma, v, &cap))
			return -1;
		if (!comma)
			return 0;
		item = comma + 1;
	}
}

/* ---- names and refs ---------------------------------------------------- */

static bool valid_name(const char *t)
{
	if (!(isalpha((unsigned char)t[0]) || t[0] == '_'))
		return false;
	for (const char *c = t; *c; c++)
		if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.'))
			return false;
	return strlen(t) < SCRIPT_NAME_MAX;
}

static int find_object(const struct script *s, const char *name)
{
	for (uint32_t i = 0; i < s->obj_count; i++)
		if (!strcmp(s->objs[i].name, name))
			return (int)i;
	return -1;
}

/* Object @name of kind @kind; its index or -1 (message set). */
static int lookup(struct parser *p, const char *name, enum obj_kind kind)
{
	const char *names[256];
	size_t n = 0;
	char hint[96];
	int i = find_object(p->s, name);

	if (i >= 0 && p->s->objs[i].kind == kind)
		return i;
	if (i >= 0)
		return fail(p, "'%s' is a %s (line %d), not a %s", name,
			    kind_names[p->s->objs[i].kind], p->s->objs[i].line,
			    kind_names[kind]);
	for (uint32_t j = 0; j < p->s->obj_count && n < 256; j++)
		if (p->s->objs[j].kind == kind)
			names[n++] = p->s->objs[j].name;
	return fail(p, "unknown %s '%s'%s", kind_names[kind], name,
		    suggest(hint, sizeof(hint), name, names, n));
}

static int define(struct parser *p, const char *name, enum obj_kind kind,
		  uint32_t *index)
{
	struct object *o;
	int i;

	if (!valid_name(name))
		return fail(p, "'%s' is not a valid name (a letter or '_', then letters, digits, '_', '-' or '.'; under %d characters)",
			    name, SCRIPT_NAME_MAX);
	i = find_object(p->s, name);
	if (i >= 0)
		return fail(p, "'%s' is already defined (a %s, line %d)", name,
			    kind_names[p->s->objs[i].kind], p->s->objs[i].line);
	o = realloc(p->s->objs, (p->s->obj_count + 1) * sizeof(*o));
	if (!o)
		return fail(p, "out of memory");
	p->s->objs = o;
	o = &o[p->s->obj_count];
	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->kind = kind;
	o->line = p->line;
	o->stmt = p->s->count - 1; /* parse_words() counted it already */
	*index = p->s->obj_count++;
	return 0;
}

/* NAME | NAME[OFF] | NAME[OFF,LEN] | @SLOT[...]; slots only if @slots. */
/* The size of the buffer @r names (a buffer's size is given literally). */
static uint64_t ref_size(const struct parser *p, const struct ref *r)
{
	return p->s->stmts[p->s->objs[r->index].stmt].size;
}

static int parse_ref(struct parser *p, char *t, bool slots, struct ref *r)
{
	char *br = strchr(t, '['), *comma;
	int i;

	r->offset = 0;
	r->length = UINT64_MAX;
	if (br) {
		size_t n = strlen(br);

		if (br[n - 1] != ']')
			return fail(p, "'%s': a range is [OFFSET] or [OFFSET,LENGTH] (bytes) and ends with ']'", t);
		br[n - 1] = '\0';
		*br = '\0';
		comma = strchr(br + 1, ',');
		if (comma)
			*comma = '\0';
		if (parse_size(br + 1, &r->offset))
			return fail(p, "'%s' is not a byte offset", br + 1);
		if (comma && parse_size(comma + 1, &r->length))
			return fail(p, "'%s' is not a byte length", comma + 1);
		/*
		 * UINT64_MAX stands for "to the end" (no length given): as a
		 * length it is past the end of any buffer, not the rest of it.
		 */
		if (comma && r->length == UINT64_MAX)
			return fail(p, "length '%s' is past the end of any buffer; write %s[%s] for the rest of it",
				    comma + 1, t, br + 1);
	}
	if (t[0] == '@') {
		uint64_t slot;

		if (!slots)
			return fail(p, "'%s': a slot cannot be used here; name a buffer", t);
		if (p->open_cb < 0)
			return fail(p, "'%s': slots exist only inside begin/end", t);
		if (parse_u64(t + 1, &slot) || slot > UINT32_MAX)
			return fail(p, "'%s' is not a slot: write @N, such as @0", t);
		if (slot >= p->s->stmts[p->s->objs[p->open_cb].stmt].capacity)
			return fail(p, "slot @%llu is not below the capacity %u given to 'begin' at line %d",
				    (unsigned long long)slot,
				    p->s->stmts[p->s->objs[p->open_cb].stmt].capacity,
				    p->open_line);
		r->slot = true;
		r->index = (uint32_t)slot;
		return 0;
	}
	i = lookup(p, t, OBJ_BUFFER);
	if (i < 0)
		return -1;
	r->slot = false;
	r->index = (uint32_t)i;
	/* Its size is known now: a range outside it is the script's error. */
	{
		uint64_t size = ref_size(p, r);

		if (r->offset > size)
			return fail(p, "'%s[%llu...]': offset %llu is past the end of '%s' (%llu bytes)",
				    t, (unsigned long long)r->offset,
				    (unsigned long long)r->offset, t,
				    (unsigned long long)size);
		if (r->length != UINT64_MAX && r->length > size - r->offset)
			return fail(p, "'%s[%llu,%llu]': the range ends past the end of '%s' (%llu bytes)",
				    t, (unsigned long long)r->offset,
				    (unsigned long long)r->length, t,
				    (unsigned long long)size);
	}
	return 0;
}

/* "SEM:VALUE,..." */
static int parse_points(struct parser *p, char *t, const char *what,
			struct point **out, uint32_t *count)
{
	char *parts[256];
	uint32_t n;

	if (split_list(p, t, parts, 256, &n, what))
		return -1;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return fail(p, "out of memory");
	*count = n;
	for (uint32_t i = 0; i < n; i++) {
		char *colon = strchr(parts[i], ':');
		int s;

		if (!colon)
			return fail(p, "%s '%s' needs a value: write SEMAPHORE:VALUE, such as s:1",
				    what, parts[i]);
		*colon = '\0';
		s = lookup(p, parts[i], OBJ_SEMAPHORE);
		if (s < 0)
			return -1;
		if (parse_u64(colon + 1, &(*out)[i].value))
			return fail(p, "'%s' is not a semaphore value", colon + 1);
		(*out)[i].sem = (uint32_t)s;
	}
	return 0;
}

/* ---- options -------------------------------------------------------------- */

struct opt {
	const char *key;
	char *value;   /* NULL: not given */
	bool required;
};

/*
 * Sorts @words[@first..@n) into @opts (KEY=VALUE); the words before
 * @first are positional. Unknown and repeated keys are errors.
 */
static int take_opts(struct parser *p, const char *cmd, char **words,
		     int first, int n, struct opt *opts, size_t nopts)
{
	const char *keys[16];
	char hint[96];

	for (size_t k = 0; k < nopts; k++)
		keys[k] = opts[k].key;
	for (int w = first; w < n; w++) {
		char *eq = strchr(words[w], '=');
		size_t k;

		if (!eq)
			return fail(p, "'%s': %s takes KEY=VALUE options here, such as %s=...",
				    words[w], cmd, nopts ? opts[0].key : "key");
		*eq = '\0';
		for (k = 0; k < nopts; k++)
			if (!strcmp(words[w], opts[k].key))
				break;
		if (k == nopts) {
			if (!nopts)
				return fail(p, "%s takes no options, but got '%s='", cmd, words[w]);
			return fail(p, "unknown option '%s' for %s%s", words[w], cmd,
				    suggest(hint, sizeof(hint), words[w], keys, nopts));
		}
		if (opts[k].value)
			return fail(p, "option '%s' is given twice", words[w]);
		opts[k].value = eq + 1;
	}
	for (size_t k = 0; k < nopts; k++)
		if (opts[k].required && !opts[k].value)
			return fail(p, "%s needs %s=...", cmd, opts[k].key);
	return 0;
}

/* Exactly @want positional words (after the command). */
static int positional(struct parser *p, const char *cmd, int have, int want,
		      const char *usage)
{
	if (have < want)
		return fail(p, "%s needs %s", cmd, usage);
	return 0;
}

/* ---- statements --------------------------------------------------------- */

static int st_device(struct parser *p, struct stmt *st, char **w, int n)
{
	if (n != 2)
		return fail(p, "device takes one URI, such as cpu://");
	/* One device runs the script: a second line would be ignored. */
	if (p->device_line)
		return fail(p, "a second 'device'; the script's device is given at line %d",
			    p->device_line);
	p->device_line = p->line;
	snprintf(st->text, sizeof(st->text), "%s", w[1]);
	return 0;
}

/*
 * Every element of an iota (START, START + STEP, ... over the buffer)
 * must fit its type, as a listed value must: u8 250 by 3 would wrap to
 * 0 and 3. The sequence is linear, so its last element decides.
 */
static int iota_fits(struct parser *p, const struct stmt *st)
{
	enum elem_type t = st->values.type;
	union num start = st->values.v[0], step = st->values.v[1];
	uint64_t n = st->size / elem_size(t);
	unsigned int bits = 8 * elem_size(t);
	__int128 first, by, last, min, max;
	char range[96], end[64];
	bool fits;

	if (n < 2)
		return 0;
	if (is_float(t)) {
		double f = start.f + step.f * (double)(n - 1);

		fits = isnan(f) || (t == T_F32 ? fabs(f) <= FLT_MAX : !isinf(f)) ||
		       isinf(start.f) || isinf(step.f);
		snprintf(end, sizeof(end), "%.9g", f);
	} else {
		first = is_signed(t) ? (__int128)start.i : (__int128)start.u;
		by = is_signed(t) ? (__int128)step.i : (__int128)step.u;
		min = is_signed(t) ? -((__int128)1 << (bits - 1)) : 0;
		max = ((__int128)1 << (bits - !!is_signed(t))) - 1;
		fits = !__builtin_mul_overflow(by, (__int128)(n - 1), &last) &&
		       !__builtin_add_overflow(last, first, &last) &&
		       last >= min && last <= max;
		snprintf(end, sizeof(end), "%.0Lf",
			 (long double)first + (long double)by * (long double)(n - 1));
	}
	if (fits)
		return 0;
	return fail(p, "iota reaches %s at element %llu of the buffer's %llu, which does not fit in %s (%s)",
		    end, (unsigned long long)(n - 1), (unsigned long long)n, elem_name(t),
		    type_range(t, range, sizeof(range)));
}

static int st_buffer(struct parser *p, struct stmt *st, char **w, int n)
{
	struct opt o[] = { { "size", NULL, true }, { "fill", NULL, false },
			   { "init", NULL, false }, { "iota", NULL, false } };
	int given = 0;

	if (positional(p, "buffer", n - 1, 1, "a name: buffer NAME size=BYTES ...") ||
	    take_opts(p, "buffer", w, 2, n, o, 4) ||
	    define(p, w[1], OBJ_BUFFER, &st->obj))
		return -1;
	if (parse_size(o[0].value, &st->size) || st->size == 0)
		return fail(p, "size '%s' is not a byte count (a number >= 1, optionally with K, M or G)",
			    o[0].value);
	for (int k = 1; k < 4; k++)
		given += o[k].value != NULL;
	if (given > 1)
		return fail(p, "give at most one of fill=, init= and iota=");
	if (o[1].value) {
		st->init = INIT_FILL;
		if (parse_values(p, o[1].value, "fill", &st->values))
			return -1;
		if (st->values.count != 1 || st->values.rest)
			return fail(p, "fill= takes one value, such as fill=u32:0");
	} else if (o[2].value) {
		st->init = INIT_LIST;
		if (parse_values(p, o[2].value, "init", &st->values))
			return -1;
	} else if (o[3].value) {
		char *colon = strchr(o[3].value, ':');
		union num start = { 0 }, step = { 0 };

		st->init = INIT_IOTA;
		memset(&st->values, 0, sizeof(st->values));
		if (parse_type(p, o[3].value, colon ? (size_t)(colon - o[3].value) : strlen(o[3].value),
			       &st->values.type))
			return -1;
		step.u = 1;
		if (is_float(st->values.type))
			step.f = 1;
		if (colon) {
			char *comma = strchr(colon + 1, ',');

			if (comma)
				*comma = '\0';
			if (parse_num(p, colon + 1, st->values.type, &start) ||
			    (comma && parse_num(p, comma + 1, st->values.type, &step)))
				return -1;
		}
		st->values.v = calloc(2, sizeof(union num));
		if (!st->values.v)
			return fail(p, "out of memory");
		st->values.v[0] = start;
		st->values.v[1] = step;
		st->values.count = 2;
		if (iota_fits(p, st))
			return -1;
	}
	/*
	 * What repeats to the end (fill=, iota=, a last "v*") would leave
	 * the bytes after the last whole element unset without a word.
	 */
	if ((st->init == INIT_FILL || st->init == INIT_IOTA || st->values.rest) &&
	    st->size % elem_size(st->values.type))
		return fail(p, "%s=%s repeats %u-byte elements, but the buffer's %llu bytes are not a multiple of %u",
			    o[1].value ? "fill" : o[2].value ? "init" : "iota",
			    elem_name(st->values.type), elem_size(st->values.type),
			    (unsigned long long)st->size, elem_size(st->values.type));
	if (st->init != INIT_NONE && st->init != INIT_IOTA &&
	    (uint64_t)st->values.count * elem_size(st->values.type) > st->size)
		return fail(p, "%u %s values are %llu bytes, more than the buffer's %llu",
			    st->values.count, elem_name(st->values.type),
			    (unsigned long long)st->values.count * elem_size(st->values.type),
			    (unsigned long long)st->size);
	return 0;
}

static int st_executable(struct parser *p, struct stmt *st, char **w, int n)
{
	struct opt o[] = { { "path", NULL, true } };

	if (positional(p, "executable", n - 1, 1, "a name: executable NAME path=FILE.so") ||
	    take_opts(p, "executable", w, 2, n, o, 1) ||
	    define(p, w[1], OBJ_EXECUTABLE, &st->obj))
		return -1;
	snprintf(st->text, sizeof(st->text), "%s", o[0].value);
	return 0;
}

static int st_semaphore(struct parser *p, struct stmt *st, char **w, int n)
{
	struct opt o[] = { { "initial", NULL, false } };

	if (positional(p, "semaphore", n - 1, 1, "a name: semaphore NAME [initial=N]") ||
	    take_opts(p, "semaphore", w, 2, n, o, 1) ||
	    define(p, w[1], OBJ_SEMAPHORE, &st->obj))
		return -1;
	if (o[0].value && parse_u64(o[0].value, &st->size))
		return fail(p, "initial '%s' is not a semaphore value", o[0].value);
	return 0;
}

static int st_begin(struct parser *p, struct stmt *st, char **w, int n)
{
	struct opt o[] = { { "capacity", NULL, false } };
	const char *name = "cb";
	int first = 1;
	uint64_t cap = 0;

	if (p->open_cb >= 0)
		return fail(p, "'begin' inside the command buffer begun at line %d; end it first",
			    p->open_line);
	if (n > first && !strchr(w[first], '=') && strcmp(w[first], "reusable") &&
	    strcmp(w[first], "oneshot"))
		name = w[first++];
	if (n > first && !strcmp(w[first], "reusable")) {
		first++;
	} else if (n > first && !strcmp(w[first], "oneshot")) {
		st->oneshot = true;
		first++;
	}
	if (take_opts(p, "begin", w, first, n, o, 1) ||
	    define(p, name, OBJ_CB, &st->obj))
		return -1;
	if (o[0].value && (parse_u64(o[0].value, &cap) || cap > (1u << 20)))
		return fail(p, "capacity '%s' is not a slot count (0 to 1048576)", o[0].value);
	st->capacity = (uint32_t)cap;
	p->open_cb = (int)st->obj;
	p->open_line = p->line;
	return 0;
}

static int need_open(struct parser *p, const char *cmd, struct stmt *st)
{
	if (p->open_cb < 0)
		return fail(p, "'%s' records a command: it belongs between 'begin' and 'end'", cmd);
	st->cb = (uint32_t)p->open_cb;
	return 0;
}

static int st_fill_update(struct parser *p, struct stmt *st, char **w, int n)
{
	const char *cmd = stmt_name(st->kind);

	if (need_open(p, cmd, st))
		return -1;
	if (n != 3)
		return fail(p, "%s takes a ref and values: %s REF TYPE:VALUES", cmd, cmd);
	if (parse_ref(p, w[1], true, &st->refs[0]) ||
	    parse_values(p, w[2], cmd, &st->values))
		return -1;
	if (st->kind == ST_FILL) {
		if (st->values.count != 1 || st->values.rest)
			return fail(p, "fill takes one value, such as u32:7");
		if (elem_size(st->values.type) > 4)
			return fail(p, "a fill pattern is 1, 2 or 4 bytes; %s is %u",
				    elem_name(st->values.type), elem_size(st->values.type));
	}
	return 0;
}

static int st_copy(struct parser *p, struct stmt *st, char **w, int n)
{
	if (need_open(p, "copy", st))
		return -1;
	if (n != 3)
		return fail(p, "copy takes two refs: copy SOURCE TARGET");
	return parse_ref(p, w[1], true, &st->refs[0]) ||
	       parse_ref(p, w[2], true, &st->refs[1]) ? -1 : 0;
}

static int parse_wg(struct parser *p, char *t, uint32_t wg[3])
{
	char *parts[3];
	uint32_t n;

	wg[0] = wg[1] = wg[2] = 1;
	if (split_list(p, t, parts, 3, &n, "wg"))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;

		if (parse_u64(parts[i], &v) || v > UINT32_MAX)
			return fail(p, "wg '%s' is not a workgroup count", parts[i]);
		wg[i] = (uint32_t)v;
	}
	return 0;
}

static int st_dispatch(struct parser *p, struct stmt *st, char **w, int n)
{
	bool indirect = st->kind == ST_DISPATCH_INDIRECT;
	const char *cmd = stmt_name(st->kind);
	struct opt o[] = { { "entry", NULL, true }, { "bindings", NULL, false },
			   { "consts", NULL, false },
			   { indirect ? "count" : "wg", NULL, true } };
	int e;

	if (need_open(p, cmd, st) ||
	    positional(p, cmd, n - 1, 1, "an executable: dispatch EXE entry=NAME ...") ||
	    take_opts(p, cmd, w, 2, n, o, 4))
		return -1;
	e = lookup(p, w[1], OBJ_EXECUTABLE);
	if (e < 0)
		return -1;
	st->obj = (uint32_t)e;
	snprintf(st->text, sizeof(st->text), "%s", o[0].value);
	if (o[1].value) {
		char *parts[256];

		if (split_list(p, o[1].value, parts, 256, &st->binding_count, "bindings"))
			return -1;
		st->bindings = calloc(st->binding_count, sizeof(*st->bindings));
		if (!st->bindings)
			return fail(p, "out of memory");
		for (uint32_t i = 0; i < st->binding_count; i++)
			if (parse_ref(p, parts[i], true, &st->bindings[i]))
				return -1;
	}
	if (o[2].value) {
		if (parse_values(p, o[2].value, "consts", &st->values))
			return -1;
		if (elem_size(st->values.type) != 4 || st->values.rest)
			return fail(p, "consts are 32-bit values (u32, i32 or f32), listed one by one");
	}
	if (indirect)
		return parse_ref(p, o[3].value, true, &st->refs[0]);
	return parse_wg(p, o[3].value, st->wg);
}

static int st_barrier_end(struct parser *p, struct stmt *st, char **w, int n)
{
	const char *cmd = stmt_name(st->kind);

	if (n != 1)
		return fail(p, "%s takes no arguments", cmd);
	if (p->open_cb < 0)
		return fail(p, "'%s' without a 'begin'", cmd);
	st->cb = (uint32_t)p->open_cb;
	if (st->kind == ST_END)
		p->open_cb = -1;
	return 0;
}

static int parse_table(struct parser *p, char *t, struct stmt *st)
{
	const struct stmt *cb = &p->s->stmts[p->s->objs[st->obj].stmt];
	char *parts[256];

	if (split_list(p, t, parts, 256, &st->table_count, "table"))
		return -1;
	st->table = calloc(st->table_count, sizeof(*st->table));
	if (!st->table)
		return fail(p, "out of memory");
	for (uint32_t i = 0; i < st->table_count; i++) {
		char *colon = strchr(parts[i], ':');
		uint64_t slot;

		if (parts[i][0] != '@' || !colon)
			return fail(p, "table entry '%s': write @SLOT:BUFFER, such as @0:a or @1:b[64,256]",
				    parts[i]);
		*colon = '\0';
		if (parse_u64(parts[i] + 1, &slot) || slot > UINT32_MAX)
			return fail(p, "'%s' is not a slot: write @N, such as @0", parts[i]);
		/* As a recorded @N is: a slot past the capacity does not exist. */
		if (slot >= cb->capacity)
			return fail(p, "slot @%llu is not below the capacity %u given to '%s' at line %d",
				    (unsigned long long)slot, cb->capacity,
				    p->s->objs[st->obj].name, cb->line);
		for (uint32_t j = 0; j < i; j++)
			if (st->table[j].slot == slot)
				return fail(p, "slot @%llu appears twice in the table",
					    (unsigned long long)slot);
		st->table[i].slot = (uint32_t)slot;
		if (parse_ref(p, colon + 1, false, &st->table[i].ref))
			return -1;
	}
	return 0;
}

static int st_submit(struct parser *p, struct stmt *st, char **w, int n)
{
	struct opt o[] = { { "table", NULL, false }, { "wait", NULL, false },
			   { "signal", NULL, false }, { "repeat", NULL, false } };
	int c;

	if (p->open_cb >= 0)
		return fail(p, "'submit' inside the command buffer begun at line %d; 'end' it first",
			    p->open_line);
	if (positional(p, "submit", n - 1, 1, "a command buffer: submit CB [table=...] [wait=...] [signal=...]") ||
	    take_opts(p, "submit", w, 2, n, o, 4))
		return -1;
	c = lookup(p, w[1], OBJ_CB);
	if (c < 0)
		return -1;
	st->obj = (uint32_t)c;
	st->count = 1;
	if (o[0].value && parse_table(p, o[0].value, st))
		return -1;
	if (o[1].value && parse_points(p, o[1].value, "wait", &st->waits, &st->wait_count))
		return -1;
	if (o[2].value && parse_points(p, o[2].value, "signal", &st->signals, &st->signal_count))
		return -1;
	if (o[3].value && (parse_u64(o[3].value, &st->count) || !st->count || st->count > 1000000))
		return fail(p, "repeat '%s' is not a count (1 to 1000000)", o[3].value);
	if (st->count > 1 && st->signal_count)
		return fail(p, "repeat= cannot be combined with signal= (each submission would signal the same points)");
	return 0;
}

static int st_host_sem(struct parser *p, struct stmt *st, char **w, int n)
{
	struct opt o[] = { { "timeout", NULL, false } };
	bool wait = st->kind == ST_WAIT;
	const char *cmd = stmt_name(st->kind);
	uint64_t ms = 10000;

	if (p->open_cb >= 0)
		return fail(p, "host '%s' inside the command buffer begun at line %d", cmd, p->open_line);
	if (positional(p, cmd, n - 1, 1, "points: SEMAPHORE:VALUE[,...]") ||
	    take_opts(p, cmd, w, 2, n, o, wait ? 1 : 0))
		return -1;
	if (o[0].value && parse_u64(o[0].value, &ms))
		return fail(p, "timeout '%s' is not a number of milliseconds", o[0].value);
	/* As -t: no more than a day (ns past 2^64 wrapped to a short wait). */
	if (ms > WAIT_TIMEOUT_MS_MAX)
		return fail(p, "timeout %" PRIu64 " ms is above a day (%llu ms); 0 polls",
			    ms, WAIT_TIMEOUT_MS_MAX);
	st->timeout_ms = (int64_t)ms;
	if (wait)
		return parse_points(p, w[1], "wait", &st->waits, &st->wait_count);
	return parse_points(p, w[1], "signal", &st->signals, &st->signal_count);
}

static int st_expect_print(struct parser *p, struct stmt *st, char **w, int n)
{
	bool expect = st->kind == ST_EXPECT;
	struct opt eo[] = { { "tol", NULL, false } };
	struct opt po[] = { { "count", NULL, false } };
	const char *cmd = stmt_name(st->kind);

	if (p->open_cb >= 0)
		return fail(p, "'%s' inside the command buffer begun at line %d", cmd, p->open_line);
	if (positional(p, cmd, n - 1, 2, expect ? "a buffer and values: expect BUFFER TYPE:VALUES" :
				   "a buffer and a type: print BUFFER TYPE") ||
	    take_opts(p, cmd, w, 3, n, expect ? eo : po, 1) ||
	    parse_ref(p, w[1], false, &st->refs[0]))
		return -1;
	if (!expect) {
		st->count = 16;
		if (po[0].value && (parse_u64(po[0].value, &st->count) || !st->count))
			return fail(p, "count '%s' is not a number of elements", po[0].value);
		return parse_type(p, w[2], strlen(w[2]), &st->type);
	}
	if (parse_values(p, w[2], "expect", &st->values))
		return -1;
	if (!st->refs[0].length ||
	    (st->refs[0].length == UINT64_MAX && st->refs[0].offset == ref_size(p, &st->refs[0])))
		return fail(p, "expect on an empty range checks nothing: give the range a length");
	if (eo[0].value) {
		char *end;

		st->tolerance = strtod(eo[0].value, &end);
		if (end == eo[0].value || *end || st->tolerance < 0 || isnan(st->tolerance))
			return fail(p, "tol '%s' is not a tolerance (a number >= 0)", eo[0].value);
		if (!is_float(st->values.type))
			return fail(p, "tol= applies to f32 and f64 values only");
	}
	return 0;
}

typedef int (*stmt_fn)(struct parser *p, struct stmt *st, char **w, int n);

static const stmt_fn stmt_fns[] = {
	st_device, st_buffer, st_executable, st_semaphore, st_begin,
	st_fill_update, st_fill_update, st_copy, st_dispatch, st_dispatch,
	st_barrier_end, st_barrier_end, st_submit, st_host_sem, st_host_sem,
	st_expect_print, st_expect_print,
};

/* ---- lines -------------------------------------------------------------- */

static int parse_words(struct parser *p, char **w, int n)
{
	const size_t nkinds = sizeof(stmt_names) / sizeof(stmt_names[0]);
	struct stmt *st;
	char hint[96];
	size_t k;

	for (k = 0; k < nkinds; k++)
		if (!strcmp(w[0], stmt_names[k]))
			break;
	if (k == nkinds)
		return fail(p, "unknown command '%s'%s", w[0],
			    suggest(hint, sizeof(hint), w[0], stmt_names, nkinds));
	st = realloc(p->s->stmts, (p->s->count + 1) * sizeof(*st));
	if (!st)
		return fail(p, "out of memory");
	p->s->stmts = st;
	st = &st[p->s->count];
	memset(st, 0, sizeof(*st));
	st->kind = (enum stmt_kind)k;
	st->line = p->line;
	p->s->count++; /* counted before parsing, so script_free() frees it */
	return stmt_fns[k](p, st, w, n);
}

/* Parses the logical line @text (continuations joined) at p->line. */
static int parse_line(struct parser *p, char *text)
{
	char *w[MAX_WORDS], *save = NULL, *t;
	char *hash = strchr(text, '#');
	int n = 0;

	if (hash)
		*hash = '\0';
	for (t = strtok_r(text, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_WORDS)
			return fail(p, "more than %d words on one line", MAX_WORDS);
		w[n++] = t;
	}
	return n ? parse_words(p, w, n) : 0;
}

int script_parse(const char *text, const char *file, struct script *out,
		 char *err, size_t err_len)
{
	struct parser p = { .s = out, .err = err, .err_len = err_len, .open_cb = -1 };
	char *copy = strdup(text), *line = copy;
	int ret = 0, number = 1;

	memset(out, 0, sizeof(*out));
	snprintf(out->file, sizeof(out->file), "%s", file);
	snprintf(out->dir, sizeof(out->dir), ".");
	if (!copy) {
		snprintf(err, err_len, "%s: out of memory", file);
		return -1;
	}
	while (line && !ret) {
		char *nl, *end;
		int lines = 1;

		/* join continuation lines: a '\' before the newline */
		for (end = line;; ) {
			nl = strchr(end, '\n');
			if (!nl || nl == line || nl[-1] != '\\')
				break;
			nl[-1] = ' ';
			nl[0] = ' ';
			end = nl + 1;
			lines++;
		}
		if (nl)
			*nl = '\0';
		p.line = number;
		ret = parse_line(&p, line);
		number += lines;
		line = nl ? nl + 1 : NULL;
	}
	if (!ret && p.open_cb >= 0) {
		p.line = p.open_line;
		ret = fail(&p, "'begin' without 'end': the command buffer '%s' is never ended",
			   out->objs[p.open_cb].name);
	}
	free(copy);
	if (ret)
		script_free(out);
	return ret;
}

/*
 * Reads all of @f into a NUL-terminated buffer (malloc'ed); NULL, with
 * "@name: why" in @err, when it cannot be read: a read error is never
 * taken for the end of a (then empty, "passing") script.
 */
static char *read_text(FILE *f, const char *name, char *err, size_t err_len)
{
	char *text = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		size_t got, want;

		if (len + 4096 + 1 > cap) {
			char *t = realloc(text, cap = cap ? cap * 2 : 8192);

			if (!t) {
				free(text);
				snprintf(err, err_len, "%s: out of memory", name);
				return NULL;
			}
			text = t;
		}
		/* One byte past the limit is enough to know the script is. */
		want = cap - len - 1;
		if (want > SCRIPT_SIZE_MAX + 1 - len)
			want = SCRIPT_SIZE_MAX + 1 - len;
		errno = 0;
		got = fread(text + len, 1, want, f);
		len += got;
		if (got == 0 || len > SCRIPT_SIZE_MAX)
			break;
	}
	if (ferror(f)) {
		snprintf(err, err_len, "%s: cannot read: %s", name,
			 strerror(errno ? errno : EIO));
		free(text);
		return NULL;
	}
	if (len > SCRIPT_SIZE_MAX) {
		snprintf(err, err_len, "%s: the script is longer than %u MiB, the most accel-run reads",
			 name, SCRIPT_SIZE_MAX >> 20);
		free(text);
		return NULL;
	}
	text[len] = '\0';
	/* Parsed as a C string: a NUL would end the script where it stands. */
	if (strlen(text) != len) {
		const char *at = text, *nul = text + strlen(text);
		unsigned int line = 1;

		for (; at < nul; at++)
			line += *at == '\n';
		snprintf(err, err_len, "%s:%u: a NUL byte; a script is text", name, line);
		free(text);
		return NULL;
	}
	return text;
}

int script_load(const char *path, struct script *out, char *err, size_t err_len)
{
	bool std_in = !strcmp(path, "-");
	const char *name = std_in ? "<stdin>" : path;
	FILE *f = std_in ? stdin : *path ? fopen(path, "r") : NULL;
	char *text, *slash;
	struct stat st;
	int ret;

	if (!*path) {
		snprintf(err, err_len, "accel-run: '' is not a script path; name a script file, or - for the standard input");
		return -1;
	}
	if (!f) {
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	/* fopen() opens a folder (and stdin may be one); only read() fails. */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "accel-run: %s is a folder; give one script file",
			 std_in ? "the standard input (-)" : path);
		text = NULL;
	} else {
		text = read_text(f, name, err, err_len);
	}
	if (!std_in)
		fclose(f);
	if (!text)
		return -1;
	ret = script_parse(text, name, out, err, err_len);
	free(text);
	if (ret)
		return ret;
	slash = strrchr(path, '/');
	if (slash && !std_in)
		snprintf(out->dir, sizeof(out->dir), "%.*s", (int)(slash - path), path);
	return 0;
}

void script_free(struct script *s)
{
	for (uint32_t i = 0; i < s->count; i++) {
		free(s->stmts[i].values.v);
		free(s->stmts[i].bindings);
		free(s->stmts[i].table);
		free(s->stmts[i].waits);
		free(s->stmts[i].signals);
	}
	free(s->stmts);
	free(s->objs);
	memset(s, 0, sizeof(*s));
}
