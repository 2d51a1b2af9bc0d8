// SPDX-License-Identifier: MIT
/*
 * Check suite "hip": the hip driver where there is no GPU. Where a HIP
 * runtime loads (Debian: libamdhip64-5), its symbol table resolves every
 * symbol the driver needs and the runtime reports "no device" cleanly;
 * accel_device_open("hip://0") fails with -ENODEV and a message that
 * names what is missing. Skipped, saying why, where no libamdhip64 loads.
 *
 * Each test runs in its own forked process (Check's default): the HIP
 * runtime is initialised in the child only.
 */
#include "../../drivers/gpu/gpu.h"
#include "test-accel.h"

extern const uint32_t accel_hip_builtins_size;

static void setup(void)
{
	test_clear_env();
	unsetenv("ACCEL_HIP_LIBRARY");
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
}

static void *load(struct gpu_api *api, char *why, size_t len)
{
	return gpu_loader_open(&gpu_backend_hip, NULL, api, why, len);
}

START_TEST(test_symbols)
{
	struct gpu_api api;
	char why[512];

	if (!load(&api, why, sizeof(why))) {
		ASSERT_CONTAINS("why", why, "libamdhip64");
		ASSERT_CONTAINS("why", why, "libamdhip64-5");
		TEST_SKIP("no HIP runtime loads here: %s", why);
	}
	for (size_t i = 0; i < GPU_API_COUNT; i++) {
		void *fn;

		ck_assert_msg(gpu_backend_hip.symbols[i], "the hip table has no name for field %zu", i);
		memcpy(&fn, (const char *)&api + i * sizeof(void (*)(void)), sizeof(fn));
		ck_assert_msg(fn, "hip: %s was not resolved", gpu_backend_hip.symbols[i]);
	}
}
END_TEST

/* The runtime starts, finds no GPU, and the driver says so. */
START_TEST(test_no_device)
{
	struct gpu_api api;
	char why[512];
	int err;

	if (!load(&api, why, sizeof(why)))
		TEST_SKIP("no HIP runtime loads here: %s", why);
	err = gpu_device_check(&gpu_backend_hip, &api, 0, "hip://0");
	if (err == 0)
		TEST_SKIP("hip://0 exists: this machine has a HIP device");
	ASSERT_ERRNO(err, ENODEV);
	ASSERT_MESSAGE_CONTAINS("accel_device_open: \"hip://0\": no HIP device: the HIP library loads, but finds no GPU");
	ASSERT_MESSAGE_CONTAINS("HIP_VISIBLE_DEVICES");
	printf("hip: %s\n", accel_error_message());
}
END_TEST

/* Whatever this machine has, hip://0 opens or says why not. */
START_TEST(test_open)
{
	accel_device_t *d = TEST_NOT_NULL;
	accel_driver_info_t info;
	int err = accel_device_open("hip://0", NULL, &d);

	if (err == 0) {
		accel_device_release(d);
		TEST_SKIP("hip://0 opened: this machine has a HIP device");
	}
	ASSERT_ERRNO(err, ENODEV);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("\"hip://0\"");
	ASSERT_OK(accel_driver_info(3, &info));
	ck_assert_str_eq(info.name, "hip");
	if (!info.available) {
		ASSERT_MESSAGE_CONTAINS("driver not available");
		ASSERT_MESSAGE_CONTAINS(info.reason);
		if (!accel_hip_builtins_size && !getenv("ACCEL_HIP_LIBRARY") &&
		    strstr(info.reason, "libamdhip64") == NULL)
			ASSERT_CONTAINS("reason", info.reason, "hipcc");
	} else {
		ASSERT_MESSAGE_CONTAINS("HIP");
	}
}
END_TEST

START_TEST(test_open_missing_library)
{
	accel_device_t *d = TEST_NOT_NULL;

	setenv("ACCEL_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
	ASSERT_ERRNO(accel_device_open("hip://0", NULL, &d), ENODEV);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("\"hip://0\": driver not available: cannot load /nonexistent/libamdhip64.so (named by ACCEL_HIP_LIBRARY)");
}
END_TEST

static Suite *hip_suite(void)
{
	Suite *suite = suite_create("hip");
	TCase *tc = tcase_create("no-device");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_symbols);
	tcase_add_test(tc, test_no_device);
	tcase_add_test(tc, test_open);
	tcase_add_test(tc, test_open_missing_library);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(hip_suite());
}
