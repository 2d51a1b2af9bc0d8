// SPDX-License-Identifier: MIT
/*
 * Check suite "device": the driver registry, devices by URI, allocators and
 * buffers (memory types, usage, map/unmap, subspans), and executables
 * (the cpu shared-object format and its load errors).
 */
#include <limits.h>
#include <sys/stat.h>

#include "test-accel.h"

START_TEST(test_registry_lists_drivers)
{
	accel_driver_info_t info;
	const char *names[] = { "cpu", "vulkan", "cuda", "hip" };

	ck_assert_uint_eq(accel_driver_count(), 4);
	for (uint32_t i = 0; i < 4; i++) {
		ASSERT_OK(accel_driver_info(i, &info));
		ck_assert_str_eq(info.name, names[i]);
		/* vulkan, cuda, hip: where their vendor library loads */
		if (i == 0 || info.available)
			ck_assert_str_eq(info.reason, "");
		else
			ck_assert_msg(info.reason[0], "%s is not available but says no reason",
				      names[i]);
		if (i == 0)
			ck_assert(info.available); /* cpu runs everywhere */
	}
	ASSERT_ERRNO(accel_driver_info(4, &info), ERANGE);
	ASSERT_MESSAGE_CONTAINS("index 4 is not below accel_driver_count() (4)");
	ASSERT_ERRNO(accel_driver_info(0, NULL), EINVAL);
}
END_TEST

START_TEST(test_open_cpu)
{
	const char *uris[] = { "cpu://", "cpu://0" };

	for (int i = 0; i < 2; i++) {
		accel_device_t *d = TEST_NOT_NULL;

		ASSERT_OK(accel_device_open(uris[i], NULL, &d));
		ck_assert_str_eq(accel_device_uri(d), "cpu://0");
		ck_assert_ptr_nonnull(accel_device_scheduler(d));
		ck_assert_ptr_nonnull(accel_device_allocator(d));
		accel_device_release(d);
	}
}
END_TEST

START_TEST(test_open_with_scheduler)
{
	accel_scheduler_t *s;
	accel_device_t *d;

	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ASSERT_OK(accel_device_open("cpu://", s, &d));
	ck_assert_ptr_eq(accel_device_scheduler(d), s);
	accel_scheduler_release(s); /* the device holds its own reference */
	ck_assert_int_eq(accel_scheduler_kind(accel_device_scheduler(d)), ACCEL_SCHEDULER_EMBEDDED);
	accel_device_release(d);
}
END_TEST

/* Where cuda or hip cannot run (test-cuda.c and test-hip.c say more). */
START_TEST(test_open_unavailable)
{
	const char *uris[] = { "cuda://0", "hip://0" };

	for (int i = 0; i < 2; i++) {
		accel_driver_info_t info;
		accel_device_t *d = TEST_NOT_NULL;

		ASSERT_OK(accel_driver_info(2 + (uint32_t)i, &info));
		if (info.available)
			continue; /* the device may be there: not this test's business */
		ASSERT_ERRNO(accel_device_open(uris[i], NULL, &d), ENODEV);
		ck_assert_ptr_null(d);
		ASSERT_MESSAGE_CONTAINS("driver not available");
		ASSERT_MESSAGE_CONTAINS(uris[i]);
		ASSERT_MESSAGE_CONTAINS(info.reason);
	}
}
END_TEST

START_TEST(test_open_bad_uri)
{
	accel_device_t *d = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_device_open("metal://0", NULL, &d), ENOENT);
	ASSERT_MESSAGE_CONTAINS("no driver named \"metal\"");
	ck_assert_ptr_null(d);
	ASSERT_ERRNO(accel_device_open("cpu", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("is not a device URI");
	ASSERT_ERRNO(accel_device_open("cpu://1", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("the cpu driver has one device");
	ASSERT_ERRNO(accel_device_open(NULL, NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("uri is NULL");
	ASSERT_ERRNO(accel_device_open("cpu://", NULL, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("out is NULL");
}
END_TEST

START_TEST(test_open_bad_scheduler_env)
{
	accel_device_t *d = TEST_NOT_NULL;

	setenv(ACCEL_SCHEDULER_ENV, "bogus", 1);
	ASSERT_ERRNO(accel_device_open("cpu://", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("ACCEL_SCHEDULER=\"bogus\"");
	ck_assert_ptr_null(d);
}
END_TEST

/* ---- buffers ---------------------------------------------------------- */

START_TEST(test_allocate_and_map)
{
	accel_buffer_t *b = buffer_new(100);
	accel_buffer_params_t p = accel_buffer_params(b);
	uint8_t *ptr;

	ck_assert_uint_eq(accel_buffer_size(b), 100);
	ck_assert_uint_eq(p.usage, ALL_USAGE);
	ck_assert_uint_eq(p.memory_type, HOST_TYPE | ACCEL_MEMORY_TYPE_DEVICE_VISIBLE);
	ASSERT_OK(accel_buffer_map(b, ACCEL_MAP_WRITE, 10, 20, (void **)&ptr));
	memset(ptr, 0xab, 20);
	ASSERT_OK(accel_buffer_unmap(b));
	ASSERT_OK(accel_buffer_map(b, ACCEL_MAP_READ, 0, ACCEL_WHOLE_BUFFER, (void **)&ptr));
	ck_assert_uint_eq(ptr[10], 0xab);
	ck_assert_uint_eq(ptr[29], 0xab);
	ASSERT_OK(accel_buffer_unmap(b));
	ASSERT_ERRNO(accel_buffer_unmap(b), EBADFD);
	ASSERT_MESSAGE_CONTAINS("the buffer is not mapped");
	accel_buffer_release(b);
}
END_TEST

START_TEST(test_allocate_empty)
{
	accel_buffer_t *b = buffer_new(0);

	ck_assert_uint_eq(accel_buffer_size(b), 0);
	accel_buffer_release(b);
}
END_TEST

START_TEST(test_allocate_errors)
{
	accel_allocator_t *a = accel_device_allocator(dev);
	accel_buffer_params_t p = { HOST_TYPE, 0 };
	accel_buffer_t *b = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_allocator_allocate_buffer(a, &p, 16, &b), EINVAL);
	ASSERT_MESSAGE_CONTAINS("params->usage is 0");
	ck_assert_ptr_null(b);
	p.usage = 1u << 20;
	ASSERT_ERRNO(accel_allocator_allocate_buffer(a, &p, 16, &b), EINVAL);
	ASSERT_MESSAGE_CONTAINS("params->usage 0x100000 has unknown bits");
	p.usage = ALL_USAGE;
	p.memory_type = 1u << 9;
	ASSERT_ERRNO(accel_allocator_allocate_buffer(a, &p, 16, &b), EINVAL);
	ASSERT_MESSAGE_CONTAINS("params->memory_type 0x200 has unknown bits");
	p.memory_type = HOST_TYPE;
	ASSERT_ERRNO(accel_allocator_allocate_buffer(a, &p, ACCEL_BUFFER_MAX_SIZE + 1, &b), ENOMEM);
	ASSERT_MESSAGE_CONTAINS("above ACCEL_BUFFER_MAX_SIZE");
	ASSERT_ERRNO(accel_allocator_allocate_buffer(NULL, &p, 16, &b), EINVAL);
	ASSERT_ERRNO(accel_allocator_allocate_buffer(a, NULL, 16, &b), EINVAL);
	ASSERT_ERRNO(accel_allocator_allocate_buffer(a, &p, 16, NULL), EINVAL);
	ck_assert_ptr_null(b);
}
END_TEST

START_TEST(test_map_errors)
{
	accel_buffer_params_t p = { ACCEL_MEMORY_TYPE_DEVICE_LOCAL, ALL_USAGE };
	accel_buffer_t *device_only, *b = buffer_usage(16, ACCEL_BUFFER_USAGE_TRANSFER);
	void *ptr = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_buffer_map(b, ACCEL_MAP_READ, 0, 16, &ptr), EINVAL);
	ASSERT_MESSAGE_CONTAINS("lacks ACCEL_BUFFER_USAGE_MAPPING");
	ck_assert_ptr_null(ptr);
	accel_buffer_release(b);
	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(dev), &p, 16, &device_only));
	ASSERT_ERRNO(accel_buffer_map(device_only, ACCEL_MAP_READ, 0, 16, &ptr), EINVAL);
	ASSERT_MESSAGE_CONTAINS("not ACCEL_MEMORY_TYPE_HOST_VISIBLE");
	accel_buffer_release(device_only);
	b = buffer_new(16);
	ASSERT_ERRNO(accel_buffer_map(b, ACCEL_MAP_READ, 8, 9, &ptr), ERANGE);
	ASSERT_MESSAGE_CONTAINS("offset 8 + length 9 is outside the buffer (16 bytes)");
	ASSERT_ERRNO(accel_buffer_map(b, ACCEL_MAP_READ, 17, ACCEL_WHOLE_BUFFER, &ptr), ERANGE);
	ASSERT_ERRNO(accel_buffer_map(b, ACCEL_MAP_READ, 8, UINT64_MAX - 4, &ptr), ERANGE);
	ASSERT_ERRNO(accel_buffer_map(b, 0, 0, 16, &ptr), EINVAL);
	ASSERT_MESSAGE_CONTAINS("flags 0x0");
	ASSERT_ERRNO(accel_buffer_map(b, 8, 0, 16, &ptr), EINVAL);
	ASSERT_ERRNO(accel_buffer_map(NULL, ACCEL_MAP_READ, 0, 16, &ptr), EINVAL);
	ASSERT_ERRNO(accel_buffer_map(b, ACCEL_MAP_READ, 0, 16, NULL), EINVAL);
	ASSERT_ERRNO(accel_buffer_unmap(b), EBADFD); /* nothing was mapped */
	accel_buffer_release(b);
}
END_TEST

START_TEST(test_subspan)
{
	accel_buffer_t *b = buffer_new(64), *s = TEST_NOT_NULL, *s2;
	uint8_t *whole = map(b), *part;

	ASSERT_OK(accel_buffer_subspan(b, 16, 32, &s));
	ck_assert_uint_eq(accel_buffer_size(s), 32);
	accel_buffer_release(b); /* the subspan keeps it alive */
	part = map(s);
	ck_assert_ptr_eq(part, whole + 16);
	ASSERT_OK(accel_buffer_subspan(s, 8, ACCEL_WHOLE_BUFFER, &s2));
	ck_assert_uint_eq(accel_buffer_size(s2), 24);
	ck_assert_ptr_eq(map(s2), whole + 24);
	ASSERT_ERRNO(accel_buffer_subspan(s, 8, 25, &b), ERANGE);
	ASSERT_MESSAGE_CONTAINS("offset 8 + length 25 is outside the buffer (32 bytes)");
	ck_assert_ptr_null(b);
	ASSERT_ERRNO(accel_buffer_subspan(s, 33, ACCEL_WHOLE_BUFFER, &b), ERANGE);
	ASSERT_ERRNO(accel_buffer_subspan(NULL, 0, 1, &b), EINVAL);
	accel_buffer_release(s2);
	accel_buffer_release(s);
}
END_TEST

/* ---- executables ------------------------------------------------------ */

START_TEST(test_executable_exports)
{
	accel_executable_t *e = kernels();
	accel_export_info_t info;
	uint32_t o;

	ck_assert_uint_eq(accel_executable_export_count(e), 6);
	o = entry(e, "saxpy");
	ASSERT_OK(accel_executable_export_info(e, o, &info));
	ck_assert_str_eq(info.name, "saxpy");
	ck_assert_uint_eq(info.binding_count, 2);
	ck_assert_uint_eq(info.constant_count, 1);
	ck_assert_uint_eq(info.workgroup_size[0], 64);
	ASSERT_ERRNO(accel_executable_export_info(e, 6, &info), ERANGE);
	ASSERT_MESSAGE_CONTAINS("ordinal 6 is not below the export count 6");
	ASSERT_ERRNO(accel_executable_lookup(e, "nope", &o), ENOENT);
	ASSERT_MESSAGE_CONTAINS("no entry point named 'nope'; the executable has 'fill_u32', 'saxpy'");
	accel_executable_release(e);
}
END_TEST

START_TEST(test_executable_missing_file)
{
	accel_executable_t *e = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_executable_load(dev, "/nonexistent/k.so", &e), ENOENT);
	ASSERT_MESSAGE_CONTAINS("/nonexistent/k.so: no such file");
	ck_assert_ptr_null(e);
}
END_TEST

START_TEST(test_executable_not_shared_object)
{
	accel_executable_t *e = TEST_NOT_NULL;
	char dir[256], path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/junk.so", test_make_tmpdir(dir, sizeof(dir)));
	f = fopen(path, "w");
	fputs("not an ELF file\n", f);
	fclose(f);
	ASSERT_ERRNO(accel_executable_load(dev, path, &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("is not a loadable shared object");
	ck_assert_ptr_null(e);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* The first @n bytes of @from, written to @to. */
static void copy_head(const char *from, const char *to, long n)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[4096];
	size_t got;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while (n > 0 && (got = fread(buf, 1, n < (long)sizeof(buf) ? (size_t)n : sizeof(buf), in)) > 0) {
		ck_assert_uint_eq(fwrite(buf, 1, got, out), got);
		n -= (long)got;
	}
	fclose(in);
	fclose(out);
}

/*
 * A truncated shared object (a copy cut short, a full disk) is refused
 * with -ENOEXEC naming the part that is missing. dlopen() maps its
 * segments from the program headers anyway, and the first touch of a page
 * past the end killed the program with SIGBUS: an outside test found it
 * with the first 5000 bytes of a real executable. A FIFO is refused too
 * (dlopen() would wait for a writer), and the whole file still loads.
 */
START_TEST(test_executable_truncated)
{
	const char *whole = getenv("ACCEL_TEST_KERNELS");
	accel_executable_t *e = TEST_NOT_NULL;
	char dir[256], path[300], fifo[300];
	static const long cut[] = { 5000, 64, 20 };

	ck_assert_ptr_nonnull(whole);
	test_make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/cut.so", dir);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		copy_head(whole, path, cut[i]);
		ASSERT_ERRNO(accel_executable_load(dev, path, &e), ENOEXEC);
		ASSERT_MESSAGE_CONTAINS("is not a loadable shared object: it is truncated");
		ck_assert_ptr_null(e);
	}
	snprintf(fifo, sizeof(fifo), "%s/fifo.so", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ASSERT_ERRNO(accel_executable_load(dev, fifo, &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("it is not a regular file (a FIFO)");
	ASSERT_OK(accel_executable_load(dev, whole, &e));
	accel_executable_release(e);
	unlink(fifo);
	unlink(path);
	rmdir(dir);
}
END_TEST

/*
 * A path without a slash names a file in the current folder, as it does
 * to every other call: dlopen() took it for a library name and searched
 * its path, so "k.so" here was "no such file", and a copy named
 * libm.so.6 loaded the system's libm (an outside test found it). A loop
 * of symbolic links and a name too long say what is wrong in words.
 */
START_TEST(test_executable_relative_path)
{
	const char *whole = getenv("ACCEL_TEST_KERNELS");
	accel_executable_t *e = NULL;
	char dir[256], old[4096], path[300], longname[400];

	ck_assert_ptr_nonnull(whole);
	test_make_tmpdir(dir, sizeof(dir));
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	snprintf(path, sizeof(path), "%s/k.so", dir);
	copy_head(whole, path, LONG_MAX);
	snprintf(path, sizeof(path), "%s/libm.so.6", dir);
	copy_head(whole, path, LONG_MAX);
	ck_assert_int_eq(chdir(dir), 0);
	ASSERT_OK(accel_executable_load(dev, "k.so", &e));
	ck_assert_uint_gt(accel_executable_export_count(e), 0);
	accel_executable_release(e);
	e = NULL;
	ASSERT_OK(accel_executable_load(dev, "libm.so.6", &e));
	ck_assert_uint_gt(accel_executable_export_count(e), 0);
	accel_executable_release(e);
	e = TEST_NOT_NULL;
	ck_assert_int_eq(symlink("loop", "loop"), 0);
	ASSERT_ERRNO(accel_executable_load(dev, "loop", &e), ELOOP);
	ASSERT_MESSAGE_CONTAINS("loop: too many symbolic links");
	ck_assert_ptr_null(e);
	memset(longname, 'x', 300);
	longname[300] = 0;
	ASSERT_ERRNO(accel_executable_load(dev, longname, &e), ENAMETOOLONG);
	ASSERT_MESSAGE_CONTAINS("is too long");
	unlink("loop");
	unlink("k.so");
	unlink("libm.so.6");
	ck_assert_int_eq(chdir(old), 0);
	rmdir(dir);
}
END_TEST

START_TEST(test_executable_bad_abi)
{
	accel_executable_t *e = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_executable_load(dev, getenv("ACCEL_TEST_KERNELS_BAD_ABI"), &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("has abi_version 8, but this libaccel reads versions 1 and 2");
	ck_assert_ptr_null(e);
}
END_TEST

START_TEST(test_executable_no_table)
{
	accel_executable_t *e = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_executable_load(dev, getenv("ACCEL_TEST_KERNELS_NO_TABLE"), &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("does not export accel_cpu_executable_v1");
	ck_assert_ptr_null(e);
}
END_TEST

START_TEST(test_objects_outlive_device_reference)
{
	accel_buffer_t *b = buffer_new(16);
	accel_executable_t *e = kernels();

	accel_device_release(dev); /* buffers and executables hold the device */
	dev = NULL;
	ck_assert_uint_eq(accel_buffer_size(b), 16);
	ck_assert_uint_eq(accel_executable_export_count(e), 6);
	accel_executable_release(e);
	accel_buffer_release(b);
}
END_TEST

/*
 * Every pointer argument of the device, executable, buffer, command buffer
 * and queue calls, NULL: the call is refused (-EINVAL, or the documented
 * empty answer), its message names the call, and an out pointer given
 * reads NULL. Calls the other suites pass NULL to are left out.
 */
#define NULL_REFUSED(call, name) do {                                         \
		ASSERT_ERRNO(call, EINVAL);                                   \
		ASSERT_MESSAGE_CONTAINS(name);                                \
	} while (0)

START_TEST(test_null_arguments)
{
	static const uint32_t wg[3] = { 1, 1, 1 };
	const char *path = getenv("ACCEL_TEST_KERNELS");
	accel_executable_t *e = kernels(), *e2 = TEST_NOT_NULL;
	accel_buffer_t *b = buffer_new(64), *sub = TEST_NOT_NULL;
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_buffer_ref_t r = accel_buffer_ref_direct(b, 0, 16);
	accel_buffer_params_t none;
	accel_export_info_t info;
	accel_queue_t *q = TEST_NOT_NULL;
	uint32_t ordinal;

	ck_assert_str_eq(accel_device_uri(NULL), "");
	ASSERT_MESSAGE_CONTAINS("accel_device_uri");
	ck_assert_ptr_null(accel_device_scheduler(NULL));
	ASSERT_MESSAGE_CONTAINS("accel_device_scheduler");
	ck_assert_ptr_null(accel_device_allocator(NULL));
	ASSERT_MESSAGE_CONTAINS("accel_device_allocator");

	NULL_REFUSED(accel_executable_load(NULL, path ? path : "x", &e2), "accel_executable_load");
	ck_assert_ptr_null(e2);
	e2 = TEST_NOT_NULL;
	NULL_REFUSED(accel_executable_load(dev, NULL, &e2), "accel_executable_load");
	ck_assert_ptr_null(e2);
	NULL_REFUSED(accel_executable_load(dev, path ? path : "x", NULL), "accel_executable_load");
	ck_assert_uint_eq(accel_executable_export_count(NULL), 0);
	NULL_REFUSED(accel_executable_export_info(NULL, 0, &info), "accel_executable_export_info");
	NULL_REFUSED(accel_executable_export_info(e, 0, NULL), "accel_executable_export_info");
	NULL_REFUSED(accel_executable_lookup(NULL, "saxpy", &ordinal), "accel_executable_lookup");
	NULL_REFUSED(accel_executable_lookup(e, NULL, &ordinal), "accel_executable_lookup");
	NULL_REFUSED(accel_executable_lookup(e, "saxpy", NULL), "accel_executable_lookup");

	ck_assert_uint_eq(accel_buffer_size(NULL), 0);
	none = accel_buffer_params(NULL);
	ck_assert_uint_eq(none.memory_type, 0);
	ck_assert_uint_eq(none.usage, 0);
	NULL_REFUSED(accel_buffer_unmap(NULL), "accel_buffer_unmap");
	NULL_REFUSED(accel_buffer_subspan(NULL, 0, 1, &sub), "accel_buffer_subspan");
	ck_assert_ptr_null(sub);
	NULL_REFUSED(accel_buffer_subspan(b, 0, 1, NULL), "accel_buffer_subspan");

	ck_assert_uint_eq(accel_command_buffer_command_count(NULL), 0);
	NULL_REFUSED(accel_command_buffer_end(NULL), "accel_command_buffer_end");
	NULL_REFUSED(accel_command_buffer_barrier(NULL), "accel_command_buffer_barrier");
	NULL_REFUSED(accel_command_buffer_copy(NULL, r, r), "accel_command_buffer_copy");
	NULL_REFUSED(accel_command_buffer_update(NULL, "abcd", r), "accel_command_buffer_update");
	NULL_REFUSED(accel_command_buffer_dispatch(NULL, e, 0, wg, NULL, 0, NULL, 0),
		     "accel_command_buffer_dispatch");
	NULL_REFUSED(accel_command_buffer_dispatch_indirect(NULL, e, 0, r, NULL, 0, NULL, 0),
		     "accel_command_buffer_dispatch_indirect");
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), 0);

	NULL_REFUSED(accel_queue_create(NULL, 0, &q), "accel_queue_create");
	ck_assert_ptr_null(q);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_executable_release(e);
}
END_TEST

static Suite *device_suite(void)
{
	Suite *suite = suite_create("device");
	TCase *tc = tcase_create("registry");

	tcase_add_checked_fixture(tc, test_clear_env, NULL);
	tcase_add_test(tc, test_registry_lists_drivers);
	tcase_add_test(tc, test_open_cpu);
	tcase_add_test(tc, test_open_with_scheduler);
	tcase_add_test(tc, test_open_unavailable);
	tcase_add_test(tc, test_open_bad_uri);
	tcase_add_test(tc, test_open_bad_scheduler_env);
	suite_add_tcase(suite, tc);

	tc = tcase_create("buffer");
	tcase_add_checked_fixture(tc, device_setup, device_teardown);
	tcase_add_test(tc, test_allocate_and_map);
	tcase_add_test(tc, test_allocate_empty);
	tcase_add_test(tc, test_allocate_errors);
	tcase_add_test(tc, test_map_errors);
	tcase_add_test(tc, test_subspan);
	suite_add_tcase(suite, tc);

	tc = tcase_create("executable");
	tcase_add_checked_fixture(tc, device_setup, device_teardown);
	tcase_add_test(tc, test_executable_exports);
	tcase_add_test(tc, test_executable_missing_file);
	tcase_add_test(tc, test_executable_not_shared_object);
	tcase_add_test(tc, test_executable_truncated);
	tcase_add_test(tc, test_executable_relative_path);
	tcase_add_test(tc, test_executable_bad_abi);
	tcase_add_test(tc, test_executable_no_table);
	tcase_add_test(tc, test_objects_outlive_device_reference);
	tcase_add_test(tc, test_null_arguments);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(device_suite());
}
