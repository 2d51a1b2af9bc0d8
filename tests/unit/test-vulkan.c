// SPDX-License-Identifier: MIT
/*
 * Check suite "vulkan": what is particular to the vulkan driver (the
 * device-agnostic behaviour runs in the queue, command-buffer and cpu
 * suites on vulkan://0): device URIs by index and by name, the executable
 * bundle format and its load errors, the entry table it carries, and
 * device-local buffers that the host cannot map. Exits 77 (SKIP) where no
 * Vulkan device can be opened.
 */
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-accel.h"

static void setup(void)
{
	setenv("ACCEL_TEST_DEVICE", "vulkan://0", 1);
	device_setup();
}

/* Device 0's name, from the list an unknown name prints. */
static void first_device_word(char *out, size_t len)
{
	accel_device_t *d = TEST_NOT_NULL;
	const char *m, *p;
	size_t n = 0;

	ASSERT_ERRNO(accel_device_open("vulkan://?name=no-such-gpu", NULL, &d), ENODEV);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("no Vulkan device's name contains \"no-such-gpu\"; the devices are 0: ");
	m = accel_error_message();
	p = strstr(m, "0: ") + 3;
	while (p[n] && p[n] != ' ' && p[n] != ',' && n + 1 < len)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
}

START_TEST(test_uris)
{
	accel_device_t *d = TEST_NOT_NULL;
	char name[64], uri[96];

	ASSERT_OK(accel_device_open("vulkan://", sched, &d));
	ck_assert_str_eq(accel_device_uri(d), "vulkan://0");
	accel_device_release(d);
	ASSERT_ERRNO(accel_device_open("vulkan://99", sched, &d), ENODEV);
	ASSERT_MESSAGE_CONTAINS("there is no Vulkan device 99; the devices are 0: ");
	ASSERT_ERRNO(accel_device_open("vulkan://0?threads=2", sched, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("the vulkan driver takes \"vulkan://N\" or \"vulkan://?name=NAME\"");
	ASSERT_ERRNO(accel_device_open("vulkan://1x", sched, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("is not a device index");
	first_device_word(name, sizeof(name));
	snprintf(uri, sizeof(uri), "vulkan://?name=%s", name);
	ASSERT_OK(accel_device_open(uri, sched, &d));
	ck_assert_str_eq(accel_device_uri(d), "vulkan://0");
	accel_device_release(d);
	snprintf(uri, sizeof(uri), "vulkan://%s", name);
	ASSERT_OK(accel_device_open(uri, sched, &d));
	accel_device_release(d);
}
END_TEST

START_TEST(test_registry_available)
{
	accel_driver_info_t info;

	ASSERT_OK(accel_driver_info(1, &info));
	ck_assert_str_eq(info.name, "vulkan");
	ck_assert(info.available);
	ck_assert_str_eq(info.reason, "");
}
END_TEST

START_TEST(test_executable_table)
{
	accel_executable_t *e = kernels();
	accel_export_info_t info;
	uint32_t o;

	ck_assert_uint_eq(accel_executable_export_count(e), 6);
	ASSERT_OK(accel_executable_lookup(e, "saxpy", &o));
	ck_assert_uint_eq(o, 1);
	ASSERT_OK(accel_executable_export_info(e, o, &info));
	ck_assert_uint_eq(info.binding_count, 2);
	ck_assert_uint_eq(info.constant_count, 1);
	ck_assert_uint_eq(info.workgroup_size[0], 64); /* the SPIR-V's LocalSize */
	ck_assert_uint_eq(info.workgroup_size[1], 1);
	ASSERT_OK(accel_executable_lookup(e, "write_count", &o));
	ASSERT_OK(accel_executable_export_info(e, o, &info));
	ck_assert_uint_eq(info.constant_count, 3);
	ck_assert_uint_eq(info.workgroup_size[0], 1);
	accel_executable_release(e);
}
END_TEST

/* The bundle of ACCEL_TEST_KERNELS, read into memory. */
static uint8_t *read_bundle(size_t *size)
{
	FILE *f = fopen(getenv("ACCEL_TEST_KERNELS"), "rb");
	uint8_t *data = malloc(1 << 20);

	ck_assert_ptr_nonnull(f);
	*size = fread(data, 1, 1 << 20, f);
	fclose(f);
	ck_assert_uint_gt(*size, 16 + 112);
	return data;
}

/* Writes @data to a file and loads it: must fail with -@err and @needle. */
static void load_bad(const uint8_t *data, size_t size, int err, const char *needle)
{
	char dir[256], path[300];
	accel_executable_t *e = TEST_NOT_NULL;
	FILE *f;

	test_make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/bad.vkexe", dir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(data, 1, size, f);
	fclose(f);
	ASSERT_ERRNO(accel_executable_load(dev, path, &e), err);
	ck_assert_ptr_null(e);
	ASSERT_MESSAGE_CONTAINS(needle);
	unlink(path);
	rmdir(dir);
}

START_TEST(test_bad_bundles)
{
	size_t size;
	uint8_t *good = read_bundle(&size), *b = malloc(size);
	uint64_t big;
	uint32_t v;
	accel_executable_t *e;

	load_bad((const uint8_t *)"this is not a bundle\n", 21, ENOEXEC,
		 "is not a vulkan executable (no \"ACCELVK\" bundle header");
	memcpy(b, good, size);
	v = 3;
	memcpy(b + 8, &v, 4);
	load_bad(b, size, ENOEXEC, "bundle version 3, but this libaccel reads versions 1 and 2");
	memcpy(b, good, size);
	v = 100000;
	memcpy(b + 12, &v, 4);
	load_bad(b, size, ENOEXEC, "100000 entries do not fit");
	memcpy(b, good, size);
	memcpy(&v, b + 16 + 84, 4); /* entry 0's SPIR-V offset */
	b[v] ^= 0xff;
	load_bad(b, size, ENOEXEC, "entry 'fill_u32' is not SPIR-V");
	memcpy(b, good, size);
	v = (uint32_t)size;
	memcpy(b + 16 + 84, &v, 4);
	load_bad(b, size, ENOEXEC, "entry 'fill_u32': its SPIR-V");
	memcpy(b, good, size);
	memcpy(b + 16 + 112, "fill_u32", 9); /* entry 1 renamed as entry 0 */
	load_bad(b, size, ENOEXEC, "two entries are named 'fill_u32'");
	memcpy(b, good, size);
	memset(b + 16 + 64 + 8, 0, 4); /* entry 0's workgroup_size[0] */
	load_bad(b, size, ENOEXEC, "entry 'fill_u32' has a zero workgroup size");
	memcpy(b, good, size);
	big = ACCEL_EXPORT_COST_MAX + 1;
	memcpy(b + 16 + 104, &big, 8); /* entry 0's bytes per workgroup */
	load_bad(b, size, ERANGE,
		 "entry 'fill_u32' declares 1099511627777 bytes per workgroup, above ACCEL_EXPORT_COST_MAX");
	ASSERT_ERRNO(accel_executable_load(dev, "/nonexistent/k.vkexe", &e), ENOENT);
	ASSERT_MESSAGE_CONTAINS("/nonexistent/k.vkexe: no such file");
	free(b);
	free(good);
}
END_TEST

/*
 * Not regular files: refused at once, never read or waited on. A FIFO
 * blocked the load for ever, waiting for a writer, and /dev/zero was read
 * (an outside test found both); a loop of symbolic links said only
 * "ELOOP".
 */
START_TEST(test_not_regular_files)
{
	accel_executable_t *e = TEST_NOT_NULL;
	char dir[256], fifo[300], loop[300];

	test_make_tmpdir(dir, sizeof(dir));
	snprintf(fifo, sizeof(fifo), "%s/k.vkexe", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ASSERT_ERRNO(accel_executable_load(dev, fifo, &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("it is not a regular file (a FIFO)");
	ck_assert_ptr_null(e);
	ASSERT_ERRNO(accel_executable_load(dev, "/dev/zero", &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("/dev/zero: it is not a regular file (a character device)");
	ASSERT_ERRNO(accel_executable_load(dev, dir, &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("it is not a regular file (a directory)");
	snprintf(loop, sizeof(loop), "%s/loop", dir);
	ck_assert_int_eq(symlink(loop, loop), 0);
	ASSERT_ERRNO(accel_executable_load(dev, loop, &e), ELOOP);
	ASSERT_MESSAGE_CONTAINS("too many symbolic links");
	ck_assert_ptr_null(e);
	unlink(loop);
	unlink(fifo);
	rmdir(dir);
}
END_TEST

/* Device-local memory: not mappable, but a copy target and source. */
START_TEST(test_device_local_round_trip)
{
	accel_buffer_params_t lp = { ACCEL_MEMORY_TYPE_DEVICE_LOCAL, ALL_USAGE };
	accel_buffer_t *local = NULL, *in = buffer_new(256), *out = buffer_new(256);
	uint8_t *pin = map(in), *pout = map(out);
	accel_command_buffer_t *cb;
	accel_queue_t *q;
	accel_semaphore_t *s = sem_new(0);
	void *p;
	POINT(sig, s, 1);

	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(dev), &lp, 256, &local));
	ASSERT_ERRNO(accel_buffer_map(local, ACCEL_MAP_READ, 0, 4, &p), EINVAL);
	ASSERT_MESSAGE_CONTAINS("not ACCEL_MEMORY_TYPE_HOST_VISIBLE");
	for (int i = 0; i < 256; i++)
		pin[i] = (uint8_t)(i * 3 + 1);
	memset(pout, 0, 256);
	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_ONE_SHOT, 0, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(in, 0, 256),
					    accel_buffer_ref_direct(local, 0, 256)));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(local, 1, 250),
					    accel_buffer_ref_direct(out, 3, 250)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(q, NULL, &sig, cb, NULL, 0));
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, accel_deadline_after(30 * SECOND)));
	for (int i = 0; i < 256; i++)
		ck_assert_uint_eq(pout[i], i < 3 || i >= 253 ? 0 : pin[i - 2]);
	accel_command_buffer_release(cb);
	accel_queue_release(q);
	accel_semaphore_release(s);
	accel_buffer_release(local);
	accel_buffer_release(in);
	accel_buffer_release(out);
}
END_TEST

static Suite *vulkan_suite(void)
{
	Suite *suite = suite_create("vulkan");
	TCase *tc = tcase_create("driver");

	tcase_add_checked_fixture(tc, setup, device_teardown);
	tcase_add_test(tc, test_uris);
	tcase_add_test(tc, test_registry_available);
	tcase_add_test(tc, test_executable_table);
	tcase_add_test(tc, test_bad_bundles);
	tcase_add_test(tc, test_not_regular_files);
	tcase_add_test(tc, test_device_local_round_trip);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	setenv("ACCEL_TEST_DEVICE", "vulkan://0", 1);
	test_require_device();
	return test_run_suite(vulkan_suite());
}
