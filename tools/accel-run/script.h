/* SPDX-License-Identifier: MIT */
/*
 * accel-run: command scripts. script.c parses a script (the grammar is in
 * Documentation/man/accel-run.1.rst) into a list of statements whose names
 * are already resolved to objects; run.c runs them on a device.
 *
 * Errors are "FILE:LINE: what is wrong" (with a "did you mean" when a
 * name is close to a known one), written into the caller's buffer; the
 * parser stops at the first one.
 */
#ifndef ACCEL_RUN_SCRIPT_H
#define ACCEL_RUN_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCRIPT_NAME_MAX 64
#define SCRIPT_ERROR_MAX 1024
/*
 * The largest script accel-run reads, in bytes: far more than any script
 * a person writes (the examples are under 2 KiB), and a bound on what a
 * never-ending input (/dev/zero, a FIFO) can make it hold.
 */
#define SCRIPT_SIZE_MAX (UINT32_C(4) << 20)
/* The most elements a value list may expand to. */
#define SCRIPT_VALUES_MAX (UINT32_C(1) << 24)

enum elem_type {
	T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64,
};

/* Size in bytes and name of an element type. */
unsigned int elem_size(enum elem_type t);
const char *elem_name(enum elem_type t);

/* One element of a value list, interpreted by the list's type. */
union num {
	uint64_t u;
	int64_t i;
	double f;
};

/*
 * struct values - "TYPE:v1,v2*3,v4*" after expansion.
 * @rest: the last element repeats to the end of the range ("v*").
 */
struct values {
	enum elem_type type;
	uint32_t count;
	union num *v;
	bool rest;
};

/* How a buffer starts. */
enum buffer_init { INIT_NONE, INIT_FILL, INIT_LIST, INIT_IOTA };

/*
 * struct ref - a buffer ref: NAME, NAME[OFF], NAME[OFF,LEN], @SLOT, ...
 * @slot:   true: @index is a slot; false: a buffer object.
 * @length: UINT64_MAX when not given (to the end).
 */
struct ref {
	bool slot;
	uint32_t index;
	uint64_t offset;
	uint64_t length;
};

struct point {
	uint32_t sem;     /* semaphore object */
	uint64_t value;
};

struct binding {
	uint32_t slot;
	struct ref ref;   /* a buffer ref (never a slot) */
};

enum stmt_kind {
	ST_DEVICE, ST_BUFFER, ST_EXECUTABLE, ST_SEMAPHORE, ST_BEGIN, ST_FILL,
	ST_UPDATE, ST_COPY, ST_DISPATCH, ST_DISPATCH_INDIRECT, ST_BARRIER,
	ST_END, ST_SUBMIT, ST_SIGNAL, ST_WAIT, ST_EXPECT, ST_PRINT,
};

const char *stmt_name(enum stmt_kind k);

/*
 * struct stmt - one statement. @obj is the object it defines (buffer,
 * executable, semaphore, begin) or uses (dispatch: the executable;
 * submit: the command buffer); @cb is the command buffer a recording
 * statement belongs to.
 */
struct stmt {
	enum stmt_kind kind;
	int line;
	uint32_t obj;
	uint32_t cb;
	char text[SCRIPT_NAME_MAX * 4];  /* device URI, path, entry name */
	uint64_t size;                   /* buffer size; semaphore initial */
	enum buffer_init init;
	struct values values;            /* init, fill, update, consts, expect */
	enum elem_type type;             /* print */
	uint64_t count;                  /* print: elements; submit: repeat */
	bool oneshot;                    /* begin */
	uint32_t capacity;               /* begin */
	struct ref refs[2];              /* target; copy: source, target */
	struct ref *bindings;            /* dispatch */
	uint32_t binding_count;
	uint32_t wg[3];                  /* dispatch */
	struct binding *table;           /* submit */
	uint32_t table_count;
	struct point *waits, *signals;   /* submit, wait, signal */
	uint32_t wait_count, signal_count;
	double tolerance;                /* expect */
	int64_t timeout_ms;              /* wait */
};

enum obj_kind { OBJ_BUFFER, OBJ_EXECUTABLE, OBJ_SEMAPHORE, OBJ_CB };

struct object {
	char name[SCRIPT_NAME_MAX];
	enum obj_kind kind;
	int line;
	uint32_t stmt;    /* the defining statement */
};

struct script {
	char file[256];   /* for messages */
	char dir[256];    /* the script's directory ("." for stdin) */
	struct stmt *stmts;
	uint32_t count;
	struct object *objs;
	uint32_t obj_count;
};

/*
 * script_parse() - parse @text (NUL-terminated) named @file.
 * Returns 0 with @out filled (free with script_free()), or -1 with
 * "FILE:LINE: message" in @err.
 */
int script_parse(const char *text, const char *file, struct script *out,
		 char *err, size_t err_len);
/* Reads @path ("-": stdin) and parses it; -1 with @err on failure. */
int script_load(const char *path, struct script *out, char *err, size_t err_len);
void script_free(struct script *s);

/* The closest of @names[0..n) to @word within a small edit distance, or NULL. */
const char *closest_name(const char *word, const char *const *names, size_t n);

#endif
