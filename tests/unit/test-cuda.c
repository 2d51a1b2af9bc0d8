// SPDX-License-Identifier: MIT
/*
 * Check suite "cuda": the cuda driver where there is no GPU. Its symbol
 * table against whatever libcuda.so.1 the machine has (skipped, saying
 * why, where none loads), and against the CUDA toolkit's stub libcuda
 * (ACCEL_TEST_CUDA_STUB, found by meson next to nvcc), which has every
 * symbol but whose cuInit fails; then that accel_device_open() fails with
 * -ENODEV and a message that says what is missing and how to fix it, and
 * that malformed URIs fail with -EINVAL. The embedded built-ins are
 * checked to hold the three kernels.
 *
 * Every test runs in its own forked process (Check's default), so each
 * loads the library afresh: ACCEL_CUDA_LIBRARY set by one test does not
 * leak into the next.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "../../drivers/gpu/gpu.h"
#include "test-accel.h"

extern const uint8_t accel_cuda_builtins[];
extern const uint32_t accel_cuda_builtins_size;

static void setup(void)
{
	test_clear_env();
	unsetenv("ACCEL_CUDA_LIBRARY");
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
}

static const char *stub_path(void)
{
	const char *p = getenv("ACCEL_TEST_CUDA_STUB");

	return p && *p ? p : NULL;
}

/* Every field of @api is set, and every name of the table is there. */
static void assert_complete(const struct gpu_backend *be, const struct gpu_api *api)
{
	for (size_t i = 0; i < GPU_API_COUNT; i++) {
		void *fn;

		ck_assert_msg(be->symbols[i], "the %s table has no name for field %zu",
			      be->name, i);
		memcpy(&fn, (const char *)api + i * sizeof(void (*)(void)), sizeof(fn));
		ck_assert_msg(fn, "%s: %s was not resolved", be->name, be->symbols[i]);
	}
}

START_TEST(test_symbols_installed)
{
	struct gpu_api api;
	char why[512];
	void *h = gpu_loader_open(&gpu_backend_cuda, NULL, &api, why, sizeof(why));

	if (!h) {
		ASSERT_CONTAINS("why", why, "libcuda.so.1");
		ASSERT_CONTAINS("why", why, "install the NVIDIA driver");
		TEST_SKIP("no libcuda.so.1 loads here: %s", why);
	}
	assert_complete(&gpu_backend_cuda, &api);
}
END_TEST

START_TEST(test_symbols_stub)
{
	struct gpu_api api;
	char why[512];
	void *h;

	if (!stub_path())
		TEST_SKIP("no CUDA toolkit stub libcuda.so was found at build time (no nvcc)");
	h = gpu_loader_open(&gpu_backend_cuda, stub_path(), &api, why, sizeof(why));
	ck_assert_msg(h, "gpu_loader_open(%s): %s", stub_path(), why);
	assert_complete(&gpu_backend_cuda, &api);
	ASSERT_ERRNO(gpu_device_check(&gpu_backend_cuda, &api, 0, "cuda://0"), ENODEV);
	ASSERT_MESSAGE_CONTAINS("\"cuda://0\": the CUDA library loaded is the CUDA toolkit's stub (cuInit returned CUDA_ERROR_STUB_LIBRARY)");
	ASSERT_MESSAGE_CONTAINS("install the NVIDIA driver");
}
END_TEST

/*
 * Enumeration against whatever libcuda.so.1 the machine has: the GPUs it
 * counts (none where it finds none), each named, NVIDIA's, with memory.
 * gpu_enumerate() needs the library only, not the built-in kernels.
 */
START_TEST(test_enumerate_installed)
{
	accel_device_info_t infos[16];
	uint32_t n = 77;
	int err = gpu_enumerate(&gpu_backend_cuda, NULL, 0, &n);

	if (err == -ENODEV && strstr(accel_error_message(), "driver not available")) {
		ck_assert_uint_eq(n, 77);
		TEST_SKIP("no libcuda.so.1 loads here: %s", accel_error_message());
	}
	ASSERT_OK(err);
	printf("# libcuda counts %u GPU(s)\n", n);
	memset(infos, 0, sizeof(infos));
	for (uint32_t i = 0; i < 16; i++)
		infos[i].size = sizeof(infos[i]);
	ASSERT_OK(gpu_enumerate(&gpu_backend_cuda, infos, 16, &n));
	for (uint32_t i = 0; i < n && i < 16; i++) {
		char uri[32];

		snprintf(uri, sizeof(uri), "cuda://%u", i);
		printf("# %s: %s, %llu bytes, kind %s, %u queue families\n",
		       infos[i].uri, infos[i].name,
		       (unsigned long long)infos[i].device_local_bytes,
		       accel_device_kind_name(infos[i].kind),
		       infos[i].queue_family_count);
		ck_assert_str_eq(infos[i].uri, uri);
		ck_assert(infos[i].name[0]);
		ck_assert_str_eq(infos[i].vendor, "NVIDIA");
		ck_assert_uint_eq(infos[i].vendor_id, 0x10de);
		ck_assert_uint_gt(infos[i].device_local_bytes, 0);
		ck_assert_uint_gt(infos[i].host_visible_bytes, 0);
		ck_assert_uint_ge(infos[i].queue_family_count, 1);
		ck_assert(infos[i].kind == ACCEL_DEVICE_KIND_DISCRETE_GPU ||
			  infos[i].kind == ACCEL_DEVICE_KIND_INTEGRATED_GPU);
	}
}
END_TEST

/* The stub library counts no device: it cannot start, and says why. */
START_TEST(test_enumerate_stub)
{
	uint32_t n = 77;

	if (!stub_path())
		TEST_SKIP("no CUDA toolkit stub libcuda.so was found at build time (no nvcc)");
	setenv("ACCEL_CUDA_LIBRARY", stub_path(), 1);
	ASSERT_ERRNO(gpu_enumerate(&gpu_backend_cuda, NULL, 0, &n), ENODEV);
	ASSERT_MESSAGE_CONTAINS("the CUDA driver cannot start: CUDA_ERROR_STUB_LIBRARY");
	ck_assert_uint_eq(n, 77);
}
END_TEST

/* Whatever this machine has, cuda://0 opens or says why not. */
START_TEST(test_open_no_device)
{
	accel_device_t *d = TEST_NOT_NULL;
	accel_driver_info_t info;
	int err = accel_device_open("cuda://0", NULL, &d);

	if (err == 0) {
		accel_device_release(d);
		TEST_SKIP("cuda://0 opened: this machine has a CUDA device");
	}
	ASSERT_ERRNO(err, ENODEV);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("\"cuda://0\"");
	ASSERT_OK(accel_driver_info(2, &info));
	ck_assert_str_eq(info.name, "cuda");
	if (!info.available) { /* no library (or no built-ins): the reason */
		ASSERT_MESSAGE_CONTAINS("driver not available");
		ASSERT_MESSAGE_CONTAINS(info.reason);
	} else { /* a library, no device */
		ck_assert_str_eq(info.reason, "");
		ASSERT_MESSAGE_CONTAINS("CUDA");
	}
}
END_TEST

/*
 * A child forked after its parent started CUDA cannot use it (CUDA is not
 * fork-safe: cuInit() answers CUDA_ERROR_NOT_INITIALIZED there): the open
 * fails with ENODEV and says so, rather than asking for the NVIDIA driver
 * to be installed. Needs a GPU.
 */
START_TEST(test_open_after_fork_names_fork)
{
	accel_device_t *d = NULL;
	int status = 0;
	pid_t pid;

	if (accel_device_open("cuda://0", NULL, &d) != 0)
		TEST_SKIP("cuda://0 does not open here: %s", accel_error_message());
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		accel_device_t *c = NULL;
		int err = accel_device_open("cuda://0", NULL, &c);

		if (err == 0)
			_exit(3); /* a CUDA that is fork-safe after all */
		if (err != -ENODEV)
			_exit(4);
		if (!strstr(accel_error_message(), "forked") ||
		    strstr(accel_error_message(), "install the NVIDIA driver"))
			_exit(5);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	accel_device_release(d);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		TEST_SKIP("the forked child could open cuda://0: this CUDA is fork-safe");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child's open: status %d (4: not ENODEV, 5: the message does not name the fork)",
		      status);
}
END_TEST

START_TEST(test_open_missing_library)
{
	accel_device_t *d = TEST_NOT_NULL;
	accel_driver_info_t info;

	setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
	ASSERT_OK(accel_driver_info(2, &info));
	ck_assert(!info.available);
	ASSERT_CONTAINS("reason", info.reason,
			"cannot load /nonexistent/libcuda.so.1 (named by ACCEL_CUDA_LIBRARY)");
	ASSERT_ERRNO(accel_device_open("cuda://0", NULL, &d), ENODEV);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("accel_device_open: \"cuda://0\": driver not available: cannot load /nonexistent/libcuda.so.1");
}
END_TEST

/*
 * A library named by ACCEL_CUDA_LIBRARY that is cut short (the first 5000
 * bytes of a real shared object) makes cuda unavailable, saying why; it
 * killed the whole program with SIGBUS inside dlopen(), `accelctl
 * devices` included, until the loader looked at the file first.
 */
START_TEST(test_open_truncated_library)
{
	const char *whole = getenv("ACCEL_TEST_KERNELS");
	accel_device_t *d = TEST_NOT_NULL;
	accel_driver_info_t info;
	char dir[256], path[300], buf[5000];
	FILE *in, *out;
	size_t got;

	ck_assert_ptr_nonnull(whole);
	snprintf(path, sizeof(path), "%s/libcuda.so.1", test_make_tmpdir(dir, sizeof(dir)));
	in = fopen(whole, "rb");
	out = fopen(path, "wb");
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	got = fread(buf, 1, sizeof(buf), in);
	ck_assert_uint_eq(got, sizeof(buf));
	ck_assert_uint_eq(fwrite(buf, 1, got, out), got);
	fclose(in);
	fclose(out);
	setenv("ACCEL_CUDA_LIBRARY", path, 1);
	ASSERT_OK(accel_driver_info(2, &info));
	ck_assert(!info.available);
	ASSERT_CONTAINS("reason", info.reason, "(named by ACCEL_CUDA_LIBRARY): it is truncated");
	ASSERT_ERRNO(accel_device_open("cuda://0", NULL, &d), ENODEV);
	ck_assert_ptr_null(d);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Through the stub: the whole open path up to cuInit, and bad URIs. */
START_TEST(test_open_stub)
{
	accel_device_t *d = TEST_NOT_NULL;
	const char *bad[] = { "cuda://x", "cuda://0x", "cuda://-1", "cuda://99999",
			      "cuda://0?threads=2", "cuda:// 1" };

	if (!stub_path())
		TEST_SKIP("no CUDA toolkit stub libcuda.so was found at build time (no nvcc)");
	if (!accel_cuda_builtins_size)
		TEST_SKIP("built without nvcc: the driver stops at its missing built-ins");
	setenv("ACCEL_CUDA_LIBRARY", stub_path(), 1);
	ASSERT_ERRNO(accel_device_open("cuda://0", NULL, &d), ENODEV);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("accel_device_open: \"cuda://0\": the CUDA library loaded is the CUDA toolkit's stub");
	ASSERT_ERRNO(accel_device_open("cuda://", NULL, &d), ENODEV);
	ASSERT_MESSAGE_CONTAINS("\"cuda://0\"");
	ASSERT_ERRNO(accel_device_open("cuda://99", NULL, &d), ENODEV);
	ASSERT_MESSAGE_CONTAINS("\"cuda://99\"");
	for (size_t i = 0; i < ACCEL_ARRAY_SIZE(bad); i++) {
		ASSERT_ERRNO(accel_device_open(bad[i], NULL, &d), EINVAL);
		ck_assert_ptr_null(d);
		ASSERT_MESSAGE_CONTAINS(bad[i]);
		ASSERT_MESSAGE_CONTAINS("is not a device index; write cuda://0, cuda://1, ...");
	}
}
END_TEST

START_TEST(test_builtins_embedded)
{
	const char *ptx = (const char *)accel_cuda_builtins;

	if (!accel_cuda_builtins_size)
		TEST_SKIP("built without nvcc: no built-in kernels");
	ck_assert_uint_eq(strlen(ptx), accel_cuda_builtins_size); /* NUL-terminated */
	ASSERT_CONTAINS("the built-in PTX", ptx, ".entry accel_fill(");
	ASSERT_CONTAINS("the built-in PTX", ptx, ".entry accel_copy(");
	ASSERT_CONTAINS("the built-in PTX", ptx, ".entry accel_scatter(");
}
END_TEST

static Suite *cuda_suite(void)
{
	Suite *suite = suite_create("cuda");
	TCase *tc = tcase_create("no-device");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_symbols_installed);
	tcase_add_test(tc, test_symbols_stub);
	tcase_add_test(tc, test_enumerate_installed);
	tcase_add_test(tc, test_enumerate_stub);
	tcase_add_test(tc, test_open_no_device);
	tcase_add_test(tc, test_open_after_fork_names_fork);
	tcase_add_test(tc, test_open_missing_library);
	tcase_add_test(tc, test_open_truncated_library);
	tcase_add_test(tc, test_open_stub);
	tcase_add_test(tc, test_builtins_embedded);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(cuda_suite());
}
