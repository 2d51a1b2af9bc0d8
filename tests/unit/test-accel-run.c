// SPDX-License-Identifier: MIT
/*
 * accel-run's script language: every malformed script is rejected with
 * its file, line and what is wrong (and the nearest known word for a
 * misspelling); well-formed scripts run and check their results; errors
 * that only the library can see (a wrong binding count, a missing entry
 * point, an unknown driver) carry the line and the library's message.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "run.h"
#include "script.h"
#include "test-util.h"

/* @text must fail to parse with exactly "t.acc:@line: @msg". */
static void reject(const char *text, int line, const char *msg)
{
	char err[SCRIPT_ERROR_MAX], want[SCRIPT_ERROR_MAX];
	struct script s;

	snprintf(want, sizeof(want), "t.acc:%d: %s", line, msg);
	ck_assert_msg(script_parse(text, "t.acc", &s, err, sizeof(err)) == -1,
		      "script parsed, expected \"%s\":\n%s", want, text);
	ck_assert_msg(strcmp(err, want) == 0, "error \"%s\", expected \"%s\"", err, want);
}

static const struct {
	const char *text;
	int line;
	const char *msg;
} bad[] = {
	{ "buffer a size=16\n\ndispach k entry=x wg=1\n", 3,
	  "unknown command 'dispach' (did you mean 'dispatch'?)" },
	{ "frobnicate\n", 1, "unknown command 'frobnicate'" },
	{ "device cpu://\n# which?\ndevice cuda://0\n", 3,
	  "a second 'device'; the script's device is given at line 1" },
	{ "buffer a\n", 1, "buffer needs size=..." },
	{ "buffer a size=12Q\n", 1,
	  "size '12Q' is not a byte count (a number >= 1, optionally with K, M or G)" },
	{ "buffer a size=16 fil=u8:0\n", 1,
	  "unknown option 'fil' for buffer (did you mean 'fill'?)" },
	{ "buffer a size=16\nbuffer a size=8\n", 2, "'a' is already defined (a buffer, line 1)" },
	{ "buffer a size=16 fill=u8:300\n", 1, "300 does not fit in u8 (0 to 255)" },
	{ "buffer a size=16 init=i8:-129\n", 1, "-129 does not fit in i8 (-128 to 127)" },
	{ "buffer a size=16 init=u16:0x10000\n", 1, "0x10000 does not fit in u16 (0 to 65535)" },
	{ "buffer a size=16 init=i64:9223372036854775808\n", 1,
	  "9223372036854775808 does not fit in i64 (-9223372036854775808 to 9223372036854775807)" },
	{ "buffer a size=16 init=u64:18446744073709551616\n", 1,
	  "18446744073709551616 does not fit in u64 (0 to 18446744073709551615)" },
	{ "buffer a size=16 init=f32:1e39\n", 1,
	  "1e39 does not fit in f32 (-3.40282347e+38 to 3.40282347e+38)" },
	{ "buffer a size=16 init=f32:-1e39\n", 1,
	  "-1e39 does not fit in f32 (-3.40282347e+38 to 3.40282347e+38)" },
	{ "buffer a size=16 init=f32:1e-50\n", 1,
	  "1e-50 is too close to 0 for f32 (the smallest magnitude is 1.40129846e-45)" },
	{ "buffer a size=16 init=f64:1e309\n", 1,
	  "1e309 does not fit in f64 (-1.7976931348623157e+308 to 1.7976931348623157e+308)" },
	{ "buffer a size=4 iota=u8:250,3\n", 1,
	  "iota reaches 259 at element 3 of the buffer's 4, which does not fit in u8 (0 to 255)" },
	{ "buffer a size=8 iota=i16:-32767,-1\n", 1,
	  "iota reaches -32770 at element 3 of the buffer's 4, which does not fit in i16 (-32768 to 32767)" },
	{ "buffer a size=16 iota=u64:18446744073709551615\n", 1,
	  "iota reaches 18446744073709551616 at element 1 of the buffer's 2, which does not fit in u64 (0 to 18446744073709551615)" },
	{ "buffer a size=8 iota=f32:3e38,1e38\n", 1,
	  "iota reaches 4e+38 at element 1 of the buffer's 2, which does not fit in f32 (-3.40282347e+38 to 3.40282347e+38)" },
	{ "buffer a size=16 init=f33:1\n", 1,
	  "unknown element type 'f33' (did you mean 'f32'?); the types are u8, i8, u16, i16, u32, i32, u64, i64, f32, f64" },
	{ "buffer a size=8 init=u32:1,2,3\n", 1, "3 u32 values are 12 bytes, more than the buffer's 8" },
	{ "buffer a size=6 fill=u32:7\n", 1,
	  "fill=u32 repeats 4-byte elements, but the buffer's 6 bytes are not a multiple of 4" },
	{ "buffer a size=7 iota=u16:1,2\n", 1,
	  "iota=u16 repeats 2-byte elements, but the buffer's 7 bytes are not a multiple of 2" },
	{ "buffer a size=10 init=f64:1*\n", 1,
	  "init=f64 repeats 8-byte elements, but the buffer's 10 bytes are not a multiple of 8" },
	{ "buffer a size=16 init=u32:1,,2\n", 1, "init has an empty item" },
	{ "buffer a size=16 init=u32:1*,2\n", 1, "'1*' (repeat to the end) may only be the last item" },
	{ "buffer a size=16 init=i32:x\n", 1, "'x' is not a i32 number" },
	{ "buffer a size=16 fill=u8:1 iota=u8\n", 1, "give at most one of fill=, init= and iota=" },
	{ "buffer a size=16 size=8\n", 1, "option 'size' is given twice" },
	{ "buffer 9a size=16\n", 1,
	  "'9a' is not a valid name (a letter or '_', then letters, digits, '_', '-' or '.'; under 64 characters)" },
	{ "executable k\n", 1, "executable needs path=..." },
	{ "buffer a size=4\nfill a u32:1\n", 2,
	  "'fill' records a command: it belongs between 'begin' and 'end'" },
	{ "begin\nbegin\n", 2, "'begin' inside the command buffer begun at line 1; end it first" },
	{ "buffer a size=4\n# comment\nbegin cb\n  fill a u32:1\n", 3,
	  "'begin' without 'end': the command buffer 'cb' is never ended" },
	{ "end\n", 1, "'end' without a 'begin'" },
	{ "begin capacity=2\n  fill @2 u8:1\nend\n", 2,
	  "slot @2 is not below the capacity 2 given to 'begin' at line 1" },
	{ "buffer a size=4\nbegin\n  fill a u64:1\nend\n", 3, "a fill pattern is 1, 2 or 4 bytes; u64 is 8" },
	{ "buffer a size=4\nbegin\n  fill a u32:1,2\nend\n", 3, "fill takes one value, such as u32:7" },
	{ "buffer a size=4\nbegin\n  copy a\nend\n", 3, "copy takes two refs: copy SOURCE TARGET" },
	{ "buffer abc size=4\nbegin\n  copy abd abc\nend\n", 3,
	  "unknown buffer 'abd' (did you mean 'abc'?)" },
	{ "buffer b size=16\nexpect b[4,18446744073709551615] u8:0\n", 2,
	  "length '18446744073709551615' is past the end of any buffer; write b[4] for the rest of it" },
	{ "buffer b size=16\nexpect b[0,0xffffffffffffffff] u8:0\n", 2,
	  "length '0xffffffffffffffff' is past the end of any buffer; write b[0] for the rest of it" },
	{ "buffer a size=4\nbegin\n  copy a[2 a\nend\n", 3,
	  "'a[2': a range is [OFFSET] or [OFFSET,LENGTH] (bytes) and ends with ']'" },
	{ "buffer k size=4\nbegin\n  dispatch k entry=e wg=1\nend\n", 3,
	  "'k' is a buffer (line 1), not a executable" },
	{ "executable k path=x.so\nbegin\n  dispatch k wg=1\nend\n", 3, "dispatch needs entry=..." },
	{ "executable k path=x.so\nbegin\n  dispatch k entry=e wg=1 bindngs=a\nend\n", 3,
	  "unknown option 'bindngs' for dispatch (did you mean 'bindings'?)" },
	{ "executable k path=x.so\nbegin\n  dispatch k entry=e wg=1,x\nend\n", 3,
	  "wg 'x' is not a workgroup count" },
	{ "executable k path=x.so\nbegin\n  dispatch k entry=e wg=1 consts=u8:1\nend\n", 3,
	  "consts are 32-bit values (u32, i32 or f32), listed one by one" },
	{ "executable k path=x.so\nbegin\n  dispatch_indirect k entry=e wg=1\nend\n", 3,
	  "unknown option 'wg' for dispatch_indirect" },
	{ "begin\nend\nsubmit cb table=0:a\n", 3,
	  "table entry '0:a': write @SLOT:BUFFER, such as @0:a or @1:b[64,256]" },
	{ "buffer a size=4\nbegin capacity=1\nend\nsubmit cb table=@0:a,@0:a\n", 4,
	  "slot @0 appears twice in the table" },
	{ "buffer a size=4\nbegin capacity=2\nend\nsubmit cb table=@0:a,@9:a\n", 4,
	  "slot @9 is not below the capacity 2 given to 'cb' at line 2" },
	{ "buffer a size=4\nbegin k\nend\nsubmit k table=@0:a\n", 4,
	  "slot @0 is not below the capacity 0 given to 'k' at line 2" },
	{ "buffer a size=4\nbegin capacity=2\nend\nsubmit cb table=@0:@1\n", 4,
	  "'@1': a slot cannot be used here; name a buffer" },
	{ "begin\nend\nsubmit cd\n", 3, "unknown command buffer 'cd' (did you mean 'cb'?)" },
	{ "semaphore s\nbegin\nend\nsubmit cb wait=s\n", 4,
	  "wait 's' needs a value: write SEMAPHORE:VALUE, such as s:1" },
	{ "semaphore s\nbegin\nend\nsubmit cb signal=s:1 repeat=2\n", 4,
	  "repeat= cannot be combined with signal= (each submission would signal the same points)" },
	{ "semaphore s\nwait s:1 timeout=soon\n", 2, "timeout 'soon' is not a number of milliseconds" },
	{ "buffer b size=16\nprint b[8,16] u8\n", 2,
	  "'b[8,16]': the range ends past the end of 'b' (16 bytes)" },
	{ "buffer b size=16\nprint b[17] u8\n", 2,
	  "'b[17...]': offset 17 is past the end of 'b' (16 bytes)" },
	{ "buffer b size=16\nexpect b[16,18446744073709551614] u8:1\n", 2,
	  "'b[16,18446744073709551614]': the range ends past the end of 'b' (16 bytes)" },
	{ "buffer b size=16\nexpect b[0,0] u8:1*\n", 2,
	  "expect on an empty range checks nothing: give the range a length" },
	{ "buffer b size=16\nexpect b[16] u8:1*\n", 2,
	  "expect on an empty range checks nothing: give the range a length" },
	{ "semaphore s\nwait s:1 timeout=86400001\n", 2,
	  "timeout 86400001 ms is above a day (86400000 ms); 0 polls" },
	{ "semaphore s\nwait s:1 timeout=18446744073710\n", 2,
	  "timeout 18446744073710 ms is above a day (86400000 ms); 0 polls" },
	{ "semaphore s\nwait s:1 timeout=18446744073709551615\n", 2,
	  "timeout 18446744073709551615 ms is above a day (86400000 ms); 0 polls" },
	{ "semaphore s\nsignal s:1 timeout=5\n", 2, "signal takes no options, but got 'timeout='" },
	{ "buffer a size=4\nexpect a\n", 2, "expect needs a buffer and values: expect BUFFER TYPE:VALUES" },
	{ "buffer a size=4\nexpect a u32:1 tol=0.1\n", 2, "tol= applies to f32 and f64 values only" },
	{ "buffer a size=4\nexpect a u32\n", 2,
	  "expect 'u32' needs a type: write TYPE:VALUES, such as f32:1,2,3" },
	{ "buffer a size=4\nprint a q32\n", 2,
	  "unknown element type 'q32' (did you mean 'u32'?); the types are u8, i8, u16, i16, u32, i32, u64, i64, f32, f64" },
	{ "buffer a size=4 \\\n  fill=u8:1 \\\n  init=u8:2\nbuffer a size=4\n", 1,
	  "give at most one of fill=, init= and iota=" },
	{ "buffer a size=4 \\\n  fill=u8:1\nbuffer a size=4\n", 3, "'a' is already defined (a buffer, line 1)" },
};

START_TEST(test_malformed)
{
	reject(bad[_i].text, bad[_i].line, bad[_i].msg);
}
END_TEST

/* Integers are decimal, or hexadecimal after 0x: a leading 0 is not octal. */
START_TEST(test_parse_leading_zero)
{
	char err[SCRIPT_ERROR_MAX];
	struct script s;
	const struct stmt *st;

	ck_assert_msg(script_parse("buffer c size=012 init=u32:010,09,0x10\n"
				   "buffer d size=0x10 init=i32:-010,-0x10\n"
				   "semaphore t initial=010\n"
				   "begin\n  fill c[08,02] u8:07\nend\n",
				   "t.acc", &s, err, sizeof(err)) == 0, "parse: %s", err);
	st = &s.stmts[0];
	ck_assert_uint_eq(st->size, 12);
	ck_assert_uint_eq(st->values.count, 3);
	ck_assert_uint_eq(st->values.v[0].u, 10);
	ck_assert_uint_eq(st->values.v[1].u, 9);
	ck_assert_uint_eq(st->values.v[2].u, 16);
	st = &s.stmts[1];
	ck_assert_uint_eq(st->size, 16);
	ck_assert_int_eq(st->values.v[0].i, -10);
	ck_assert_int_eq(st->values.v[1].i, -16);
	ck_assert_uint_eq(s.stmts[2].size, 10);
	st = &s.stmts[4];
	ck_assert_uint_eq(st->refs[0].offset, 8);
	ck_assert_uint_eq(st->refs[0].length, 2);
	ck_assert_uint_eq(st->values.v[0].u, 7);
	script_free(&s);
}
END_TEST

/* Values at the very ends of their types are accepted, and iotas that end there. */
START_TEST(test_parse_type_limits)
{
	char err[SCRIPT_ERROR_MAX];
	struct script s;

	ck_assert_msg(script_parse("buffer a size=16 init=u8:255\n"
				   "buffer a8 size=1 init=i8:-128\n"
				   "buffer b size=16 init=i64:-9223372036854775808,9223372036854775807\n"
				   "buffer c size=16 init=f32:3.40282347e38,-3.40282347e38,1.4e-45,inf\n"
				   "buffer d size=4 iota=u8:252,1\n"
				   "buffer e size=4 iota=i8:127,-85\n"
				   "buffer f size=8 iota=f32:0,3e38\n",
				   "t.acc", &s, err, sizeof(err)) == 0, "parse: %s", err);
	script_free(&s);
}
END_TEST

/* Runs @text with @o; returns the status and leaves the report in @report. */
static int run_text_opts(const char *text, const struct run_opts *o, char *report,
			 size_t len, char *err, size_t err_len)
{
	struct script s;
	FILE *f = fmemopen(report, len, "w");
	int status;

	test_clear_env();
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(script_parse(text, "t.acc", &s, err, err_len) == 0, "parse: %s", err);
	status = script_run(&s, o, f, err, err_len);
	fclose(f);
	script_free(&s);
	return status;
}

/* Runs @text (2 s timeout, text report). */
static int run_text(const char *text, char *report, size_t len, char *err, size_t err_len)
{
	struct run_opts o = { .timeout_ms = 2000 };

	return run_text_opts(text, &o, report, len, err, err_len);
}

/* "executable k path=<the test kernels>\n" followed by @rest. */
static char *with_kernels(const char *rest)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "executable k path=%s\n%s",
		 getenv("ACCEL_TEST_KERNELS"), rest);
	return buf;
}

START_TEST(test_run_good)
{
	char report[8192], err[SCRIPT_ERROR_MAX];
	int status = run_text(with_kernels(
		"buffer x size=256 iota=f32:1,2\n"
		"buffer y size=256 fill=f32:1\n"
		"begin cb reusable capacity=2\n"
		"  dispatch k entry=saxpy wg=1 bindings=@0,@1 consts=f32:0.5\n"
		"end\n"
		"submit cb table=@0:x,@1:y repeat=2\n"
		"expect y f32:2,4,6,8 tol=1e-6\n"
		"print y[0,8] f32\n"), report, sizeof(report), err, sizeof(err));

	ck_assert_msg(status == RUN_OK, "status %d: %s\n%s", status, err, report);
	ASSERT_CONTAINS("report", report, "t.acc:7: submit cb: 2 submitted, 2 completed, 0 failed");
	ASSERT_CONTAINS("report", report, "t.acc:8: expect y: ok (4 f32 values)");
	ASSERT_CONTAINS("report", report, "t.acc:9: y[0,8] f32: 2 4");
	ASSERT_CONTAINS("report", report, "accel-run: pass: 1 checks passed, 0 failed");
}
END_TEST

START_TEST(test_run_check_fails)
{
	char report[8192], err[SCRIPT_ERROR_MAX];
	int status = run_text("buffer a size=16 init=u32:1,2,3,4\nexpect a u32:1,2,9,4\n",
			      report, sizeof(report), err, sizeof(err));

	ck_assert_int_eq(status, RUN_CHECK_FAILED);
	ASSERT_CONTAINS("report", report,
			"t.acc:2: expect a: FAILED: 1 of 4 u32 values differ; first at index 2: expected 9, got 3");
}
END_TEST

/* Errors only the library sees: the line, then libaccel's message. */
START_TEST(test_run_library_errors)
{
	char report[8192], err[SCRIPT_ERROR_MAX];
	int status = run_text(with_kernels(
		"buffer x size=256\n"
		"begin\n"
		"  dispatch k entry=saxpy wg=1 bindings=x consts=f32:1\n"
		"end\n"), report, sizeof(report), err, sizeof(err));

	ck_assert_int_eq(status, RUN_ERROR);
	ASSERT_CONTAINS("error", err, "t.acc:4: dispatch: accel_command_buffer_dispatch: command 0: entry point 'saxpy' takes 2 bindings, but 1 were given");
	ASSERT_CONTAINS("report", report, "accel-run: error: 0 checks passed");

	status = run_text(with_kernels(
		"begin\n  dispatch k entry=saxpi wg=1\nend\n"),
		report, sizeof(report), err, sizeof(err));
	ck_assert_int_eq(status, RUN_ERROR);
	ASSERT_CONTAINS("error", err, "t.acc:3: dispatch: k: accel_executable_lookup:");

	status = run_text("executable k path=/nonexistent/k.so\n", report, sizeof(report),
			  err, sizeof(err));
	ck_assert_int_eq(status, RUN_ERROR);
	ASSERT_CONTAINS("error", err, "t.acc:1: executable: accel_executable_load: /nonexistent/k.so: no such file");

	/* A device no machine opens (cuda://0 opens where a GPU is). */
	status = run_text("device cpu://0?threads=99999\nbuffer a size=4\n", report,
			  sizeof(report), err, sizeof(err));
	ck_assert_int_eq(status, RUN_ERROR);
	ASSERT_CONTAINS("error", err, "t.acc:1: device: accel_device_open: the URI option threads= \"99999\" is not a worker count");
}
END_TEST

/*
 * A submission that waits on a point nothing signals: a failed submission
 * (status 1, not a library error), named by its line, with the error in
 * its own entry of the report; the run stops there.
 */
START_TEST(test_run_stuck_submission)
{
	static const char text[] = "semaphore s\nbegin\nend\nsubmit cb wait=s:1\nsubmit cb\n"
				   "buffer a size=4\nexpect a u8:0\n";
	struct run_opts o = { .timeout_ms = 200, .json = true };
	char report[8192], err[SCRIPT_ERROR_MAX];
	int status = run_text_opts(text, &o, report, sizeof(report), err, sizeof(err));

	ck_assert_int_eq(status, RUN_CHECK_FAILED);
	ASSERT_CONTAINS("error", err, "t.acc:4: submit: a submission of 'cb' did not complete within 200 ms");
	ASSERT_CONTAINS("report", report,
			"{\"line\": 4, \"command_buffer\": \"cb\", \"submitted\": 1, \"completed\": 0, \"failed\": 1,");
	ASSERT_CONTAINS("report", report,
			"\"error\": \"a submission of 'cb' did not complete within 200 ms; does it wait on a point nothing signals?\"}");
	ASSERT_CONTAINS("report", report,
			"{\"line\": 5, \"command_buffer\": \"cb\", \"submitted\": 1, \"completed\": 0, \"failed\": 1,");
	ASSERT_CONTAINS("report", report,
			"\"error\": \"cancelled: a submission at line 4 did not complete within 200 ms\"}");
	ASSERT_CONTAINS("report", report, "\"result\": \"fail\", \"error\": \"t.acc:4: submit: a submission");
	ck_assert_msg(!strstr(report, "\"elapsed_ns\": 0,"), "an entry says elapsed_ns 0: %s", report);

	o.json = false;
	status = run_text_opts(text, &o, report, sizeof(report), err, sizeof(err));
	ck_assert_int_eq(status, RUN_CHECK_FAILED);
	ASSERT_CONTAINS("report", report, "t.acc:4: submit cb: 1 submitted, 0 completed, 1 failed");
	ASSERT_CONTAINS("report", report, "t.acc:4: submit cb: failed: a submission of 'cb' did not complete within 200 ms");
	ASSERT_CONTAINS("report", report, "accel-run: FAIL: 0 checks passed, 0 failed");
}
END_TEST

/* Every check of -j has first_mismatch: null when it passed. */
START_TEST(test_run_json_checks)
{
	struct run_opts o = { .timeout_ms = 2000, .json = true };
	char report[8192], err[SCRIPT_ERROR_MAX];
	int status = run_text_opts("buffer a size=8 init=u32:1,2\nexpect a u32:1,2\nexpect a u32:1,3\n",
				   &o, report, sizeof(report), err, sizeof(err));

	ck_assert_int_eq(status, RUN_CHECK_FAILED);
	ASSERT_CONTAINS("report", report, "\"result\": \"pass\", \"mismatches\": 0, \"first_mismatch\": null}");
	ASSERT_CONTAINS("report", report,
			"\"result\": \"fail\", \"mismatches\": 1, \"first_mismatch\": {\"index\": 1, \"expected\": \"3\", \"got\": \"2\"}}");
}
END_TEST

/* ---- the program ------------------------------------------------------------ */

/*
 * What main() does (the options, the environment, reading the script, the
 * standard streams) is checked on the accel-run program itself, which the
 * build puts in tools/ of the build tree, two folders above this suite.
 */
static const char *accel_run_program(void)
{
	static char path[4096];
	const char *env = getenv("ACCEL_TEST_ACCEL_RUN");
	char self[2048], *slash;
	ssize_t n;

	/* meson says where it built the program; else next to this one. */
	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ck_assert_msg(n > 0, "readlink(/proc/self/exe): %s", strerror(errno));
	self[n] = '\0';
	slash = strrchr(self, '/');
	ck_assert_ptr_nonnull(slash);
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/../../tools/accel-run", self);
	ck_assert_msg(access(path, X_OK) == 0, "%s: %s; build the tree first",
		      path, strerror(errno));
	return path;
}

/* Built with ASan or TSan (the program under test is then built so too). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif

/* Where a standard stream of the program is: captured (NULL), closed (""). */
#define CLI_CLOSED ""

struct cli {
	uint64_t mem_limit;   /* RLIMIT_AS of the program, 0 for none */
	int status;           /* its exit status, or 128 + the signal */
	char out[16384];      /* its stdout, when captured */
	char err[4096];       /* its stderr */
};

static void slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Opens @path onto @fd, or closes @fd for CLI_CLOSED (in the child). */
static void redirect(int fd, const char *path, int flags)
{
	int o;

	if (!*path) {
		close(fd);
		return;
	}
	o = open(path, flags);
	if (o < 0 || dup2(o, fd) < 0)
		_exit(126);
	close(o);
}

/*
 * Runs accel-run with @argv (after the program's name), stdin from @in
 * (NULL: /dev/null) and stdout to @out (NULL: into c->out).
 */
static void cli_run(struct cli *c, const char *in, const char *out,
		    const char *const *argv)
{
	const char *prog = accel_run_program();
	const char *args[16] = { "accel-run" };
	FILE *fo = tmpfile(), *fe = tmpfile();
	pid_t pid;
	int ws, n = 1;

	ck_assert_msg(fo && fe, "tmpfile: %s", strerror(errno));
	while (*argv && n < 15)
		args[n++] = *argv++;
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct rlimit rl = { c->mem_limit, c->mem_limit };

		if (c->mem_limit && setrlimit(RLIMIT_AS, &rl))
			_exit(126);
		if (dup2(fileno(fe), 2) < 0)
			_exit(126);
		if (out)
			redirect(1, out, O_WRONLY);
		else if (dup2(fileno(fo), 1) < 0)
			_exit(126);
		redirect(0, in ? in : "/dev/null", O_RDONLY);
		fcntl(fileno(fo), F_SETFD, FD_CLOEXEC);
		fcntl(fileno(fe), F_SETFD, FD_CLOEXEC);
		execv(prog, (char *const *)args);
		_exit(127);
	}
	ck_assert_msg(waitpid(pid, &ws, 0) == pid, "waitpid: %s", strerror(errno));
	c->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	slurp(fo, c->out, sizeof(c->out));
	slurp(fe, c->err, sizeof(c->err));
}

/* Writes @text to @name in the fresh folder @dir; the path, in @path. */
static const char *write_script(const char *dir, const char *name, const char *text,
				char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* A script that runs on cpu:// with nothing but itself. */
static const char ok_script[] = "buffer a size=16 fill=u32:7\nexpect a u32:7*\n";

#define ASSERT_STATUS(c, want) \
	ck_assert_msg((c).status == (want), "accel-run exited %d, expected %d; stderr: \"%s\"; stdout: \"%s\"", \
		      (c).status, (want), (c).err, (c).out)

/* An empty ACCEL_RUN_PATH is no extra folder (it freed getenv()'s string). */
START_TEST(test_cli_empty_run_path)
{
	char dir[256], path[512];
	struct cli c = { 0 };

	write_script(test_make_tmpdir(dir, sizeof(dir)), "ok.acc", ok_script, path, sizeof(path));
	setenv("ACCEL_RUN_PATH", "", 1);
	cli_run(&c, NULL, NULL, (const char *[]){ "--check", path, NULL });
	ASSERT_STATUS(c, 0);
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	cli_run(&c, NULL, NULL, (const char *[]){ path, NULL });
	ASSERT_STATUS(c, 0);
	ASSERT_CONTAINS("stdout", c.out, "accel-run: pass: 1 checks passed");
	setenv("ACCEL_RUN_PATH", ":", 1);
	cli_run(&c, NULL, NULL, (const char *[]){ path, NULL });
	ASSERT_STATUS(c, 0);
	/* 16 folders in all are taken; a 17th is refused, not dropped. */
	setenv("ACCEL_RUN_PATH", "/a:/b:/c:/d:/e:/f:/g:/h:/i:/j:/k:/l:/m:/n:/o", 1);
	cli_run(&c, NULL, NULL, (const char *[]){ "-L", "/x", "--check", path, NULL });
	ASSERT_STATUS(c, 0);
	setenv("ACCEL_RUN_PATH", "/a:/b:/c:/d:/e:/f:/g:/h:/i:/j:/k:/l:/m:/n:/o:/p", 1);
	cli_run(&c, NULL, NULL, (const char *[]){ "-L", "/x", "--check", path, NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "-L and ACCEL_RUN_PATH name more than 16 folders in all");
	unsetenv("ACCEL_RUN_PATH");
}
END_TEST

/* A script that cannot be read is an error (status 2), never an empty pass. */
START_TEST(test_cli_unreadable_script)
{
	char dir[256], err[SCRIPT_ERROR_MAX];
	struct script s;
	struct cli c = { 0 };

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	cli_run(&c, test_make_tmpdir(dir, sizeof(dir)), NULL, (const char *[]){ "-", NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "accel-run: the standard input (-) is a folder; give one script file");
	cli_run(&c, dir, NULL, (const char *[]){ "-j", "-", NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stdout", c.out, "\"result\": \"error\"");
	cli_run(&c, CLI_CLOSED, NULL, (const char *[]){ "-", NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "<stdin>: cannot read: Bad file descriptor");
	ck_assert_msg(!strstr(c.out, "pass"), "stdout says pass: \"%s\"", c.out);

	/* script_load() itself, for a folder that main()'s stat() missed */
	ck_assert_int_eq(script_load(dir, &s, err, sizeof(err)), -1);
	ASSERT_CONTAINS("error", err, "is a folder; give one script file");
}
END_TEST

/* A script is at most SCRIPT_SIZE_MAX bytes: /dev/zero cannot fill memory. */
/*
 * A NUL byte in a script is refused with its line: the text is parsed as a
 * C string, so everything after it was silently dropped (a script cut at
 * its first NUL ran as if it ended there).
 */
START_TEST(test_cli_script_with_nul)
{
	char dir[256], path[512];
	struct cli c = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/nul.acc", test_make_tmpdir(dir, sizeof(dir)));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(ok_script, f);
	fputs("# a comment, then a NUL\n", f);
	fputc('\0', f);
	fputs("expect nothing\n", f);
	ck_assert_int_eq(fclose(f), 0);
	cli_run(&c, NULL, NULL, (const char *[]){ "--check", path, NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, ": a NUL byte; a script is text");
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_cli_script_size)
{
	char dir[256], path[512], big[512];
	/*
	 * A cap on the address space proves the read stops at the limit;
	 * under a sanitizer, whose shadow memory reserves terabytes of it,
	 * the program could not start, so the message alone is checked.
	 */
	struct cli c = { .mem_limit = TEST_SANITIZED ? 0 : 256 << 20 };
	FILE *f;

	cli_run(&c, NULL, NULL, (const char *[]){ "--check", "/dev/zero", NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "/dev/zero: the script is longer than 4 MiB, the most accel-run reads");
	cli_run(&c, "/dev/zero", NULL, (const char *[]){ "--check", "-", NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "<stdin>: the script is longer than 4 MiB");

	/* exactly the limit is read; one byte more is not */
	write_script(test_make_tmpdir(dir, sizeof(dir)), "ok.acc", ok_script, path, sizeof(path));
	snprintf(big, sizeof(big), "%s/big.acc", dir);
	f = fopen(big, "w");
	ck_assert_ptr_nonnull(f);
	fputs(ok_script, f);
	fputc('#', f);
	for (size_t n = strlen(ok_script) + 2; n < SCRIPT_SIZE_MAX; n++)
		fputc('.', f);
	fputc('\n', f);
	ck_assert_int_eq(fclose(f), 0);
	cli_run(&c, NULL, NULL, (const char *[]){ "--check", big, NULL });
	ASSERT_STATUS(c, 0);
	f = fopen(big, "a");
	ck_assert_ptr_nonnull(f);
	fputc('\n', f);
	ck_assert_int_eq(fclose(f), 0);
	cli_run(&c, NULL, NULL, (const char *[]){ "--check", big, NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "big.acc: the script is longer than 4 MiB");
	unlink(big);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A report that cannot be written (a full disk, a closed stdout) is status 1. */
START_TEST(test_cli_write_error)
{
	char dir[256], path[512];
	struct cli c = { 0 };

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	write_script(test_make_tmpdir(dir, sizeof(dir)), "ok.acc", ok_script, path, sizeof(path));
	cli_run(&c, NULL, "/dev/full", (const char *[]){ path, NULL });
	ASSERT_STATUS(c, 1);
	ASSERT_CONTAINS("stderr", c.err, "accel-run: cannot write the output: No space left on device");
	cli_run(&c, NULL, "/dev/full", (const char *[]){ "-j", path, NULL });
	ASSERT_STATUS(c, 1);
	ASSERT_CONTAINS("stderr", c.err, "accel-run: cannot write the output: No space left on device");
	cli_run(&c, NULL, CLI_CLOSED, (const char *[]){ path, NULL });
	ASSERT_STATUS(c, 1);
	ASSERT_CONTAINS("stderr", c.err, "accel-run: cannot write the output: Bad file descriptor");
	cli_run(&c, NULL, CLI_CLOSED, (const char *[]){ "-j", path, NULL });
	ASSERT_STATUS(c, 1);
	cli_run(&c, NULL, "/dev/full", (const char *[]){ "--version", NULL });
	ASSERT_STATUS(c, 1);
	/* --check of a good script writes nothing: nothing to fail */
	cli_run(&c, NULL, CLI_CLOSED, (const char *[]){ "--check", path, NULL });
	ASSERT_STATUS(c, 0);
	cli_run(&c, NULL, "/dev/full", (const char *[]){ "--check", path, NULL });
	ASSERT_STATUS(c, 0);
}
END_TEST

/*
 * What the environment gets wrong is said without a script line (there is
 * no line 0), and not blamed on the 'device' line.
 */
START_TEST(test_run_environment_errors)
{
	char dir[256], path[512], report[8192], err[SCRIPT_ERROR_MAX];
	struct cli c = { 0 };
	int status;

	setenv("ACCEL_ENGINE_CREDITS", "0", 1);
	status = run_text("buffer a size=4\n", report, sizeof(report), err, sizeof(err));
	ck_assert_int_eq(status, RUN_ERROR);
	ASSERT_CONTAINS("error", err,
			"accel-run: cpu://0: cannot create a queue: accel_queue_create: ACCEL_ENGINE_CREDITS is \"0\"");
	ck_assert_msg(!strstr(err, "t.acc"), "the error names a script line: \"%s\"", err);
	unsetenv("ACCEL_ENGINE_CREDITS");

	write_script(test_make_tmpdir(dir, sizeof(dir)), "dev.acc", "device cpu://\nbuffer a size=4\n",
		     path, sizeof(path));
	setenv(ACCEL_SCHEDULER_ENV, "bogus", 1);
	cli_run(&c, NULL, NULL, (const char *[]){ path, NULL });
	ASSERT_STATUS(c, 3);
	ASSERT_CONTAINS("stderr", c.err, "accel-run: cannot open a scheduler: accel_scheduler_open: ACCEL_SCHEDULER=\"bogus\"");
	ck_assert_msg(!strstr(c.err, "dev.acc:"), "stderr blames the script: \"%s\"", c.err);

	cli_run(&c, NULL, NULL, (const char *[]){ "", NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stderr", c.err, "accel-run: '' is not a script path; name a script file, or - for the standard input");
}
END_TEST

/* -j output is UTF-8 whatever bytes a script's name and tokens hold. */
START_TEST(test_cli_json_not_utf8)
{
	char dir[256], path[512];
	struct cli c = { 0 };

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	test_make_tmpdir(dir, sizeof(dir));
	write_script(dir, "b\xff.acc", "bu\xfe\xc3 a\n", path, sizeof(path));
	cli_run(&c, NULL, NULL, (const char *[]){ "-j", path, NULL });
	ASSERT_STATUS(c, 2);
	ASSERT_CONTAINS("stdout", c.out, "b\xef\xbf\xbd.acc");
	ASSERT_CONTAINS("stdout", c.out, "unknown command 'bu\xef\xbf\xbd\xef\xbf\xbd'");
	ck_assert_msg(!strpbrk(c.out, "\xff\xfe\xc3"), "stdout is not UTF-8: \"%s\"", c.out);
	unlink(path);

	/* a report: valid sequences (é, €, 𝄞) stay as they are */
	write_script(dir, "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xed\xa0\x80\xc0\xaf.acc", ok_script,
		     path, sizeof(path));
	cli_run(&c, NULL, NULL, (const char *[]){ "-j", path, NULL });
	ASSERT_STATUS(c, 0);
	ASSERT_CONTAINS("stdout", c.out,
			"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			"\xef\xbf\xbd\xef\xbf\xbd.acc\"");
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *run_suite(void)
{
	Suite *s = suite_create("accel-run");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_malformed, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_parse_leading_zero);
	tcase_add_test(tc, test_parse_type_limits);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_add_test(tc, test_run_good);
	tcase_add_test(tc, test_run_check_fails);
	tcase_add_test(tc, test_run_library_errors);
	tcase_add_test(tc, test_run_stuck_submission);
	tcase_add_test(tc, test_run_json_checks);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_add_test(tc, test_cli_empty_run_path);
	tcase_add_test(tc, test_cli_unreadable_script);
	tcase_add_test(tc, test_cli_script_size);
	tcase_add_test(tc, test_cli_script_with_nul);
	tcase_add_test(tc, test_cli_write_error);
	tcase_add_test(tc, test_run_environment_errors);
	tcase_add_test(tc, test_cli_json_not_utf8);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(run_suite());
}
