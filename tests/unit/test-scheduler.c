// SPDX-License-Identifier: MIT
/*
 * Check suite "scheduler": which scheduler accel_scheduler_open() picks, why,
 * and how it fails. Black-box: links the shared libaccel like a program.
 *
 * This machine normally has no accelsched module: the tests that need
 * /dev/accelsched print "SKIP: ..." there, and the tests that need it absent
 * skip inside the VM where it exists.
 */
#include <accelsched.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "test-util.h"

#define DEFAULT_DEVICE ACCEL_SCHEDULER_DEFAULT_DEVICE

static bool default_device_exists(void)
{
	return access(DEFAULT_DEVICE, F_OK) == 0;
}

/* Opens with @opts and the current environment; must yield @kind. */
static accel_scheduler_t *open_expect(const accel_scheduler_options_t *opts,
				      accel_scheduler_kind_t kind)
{
	accel_scheduler_t *s = TEST_NOT_NULL;

	ASSERT_OK(accel_scheduler_open(opts, &s));
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(accel_scheduler_kind(s) == kind,
		      "accel_scheduler_kind() is %s, expected %s; reason: \"%s\"",
		      accel_scheduler_kind_name(accel_scheduler_kind(s)),
		      accel_scheduler_kind_name(kind),
		      accel_scheduler_reason(s));
	return s;
}

/* Opens with @opts and the current environment; must fail with -@err. */
#define OPEN_EXPECT_ERRNO(opts, err) do {                                     \
	accel_scheduler_t *s_ = TEST_NOT_NULL;                                \
	ASSERT_ERRNO(accel_scheduler_open((opts), &s_), err);                 \
	ck_assert_msg(s_ == NULL, "*out is %p after a failure, expected NULL", \
		      (void *)s_);                                            \
} while (0)

#define ASSERT_REASON_CONTAINS(s, needle) \
	ASSERT_CONTAINS("accel_scheduler_reason()", accel_scheduler_reason(s), needle)

static accel_scheduler_options_t kernel_options(void)
{
	accel_scheduler_options_t opts;

	accel_scheduler_options_init(&opts);
	opts.kind = ACCEL_SCHEDULER_KERNEL;
	return opts;
}

/* ---- environment and options ------------------------------------------ */

START_TEST(test_options_init_defaults)
{
	accel_scheduler_options_t opts;

	memset(&opts, 0xab, sizeof(opts));
	accel_scheduler_options_init(&opts);
	ck_assert_int_eq(opts.kind, ACCEL_SCHEDULER_AUTO);
	ck_assert_ptr_null(opts.device_path);
	accel_scheduler_options_init(NULL);
}
END_TEST

START_TEST(test_env_embedded)
{
	accel_scheduler_t *s;

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "ACCEL_SCHEDULER=embedded");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_env_overrides_options_kind)
{
	accel_scheduler_options_t opts = kernel_options();
	accel_scheduler_t *s;

	opts.device_path = "/nonexistent";
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	s = open_expect(&opts, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "ACCEL_SCHEDULER=embedded");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_options_embedded)
{
	accel_scheduler_options_t opts;
	accel_scheduler_t *s;

	accel_scheduler_options_init(&opts);
	opts.kind = ACCEL_SCHEDULER_EMBEDDED;
	s = open_expect(&opts, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "options->kind = ACCEL_SCHEDULER_EMBEDDED");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_env_bogus_kind)
{
	setenv(ACCEL_SCHEDULER_ENV, "bogus", 1);
	OPEN_EXPECT_ERRNO(NULL, EINVAL);
	ASSERT_MESSAGE_CONTAINS("ACCEL_SCHEDULER");
	ASSERT_MESSAGE_CONTAINS("\"bogus\"");
	ASSERT_MESSAGE_CONTAINS("auto, kernel and embedded");
}
END_TEST

START_TEST(test_env_kind_is_case_sensitive)
{
	setenv(ACCEL_SCHEDULER_ENV, "Kernel", 1);
	OPEN_EXPECT_ERRNO(NULL, EINVAL);
	ASSERT_MESSAGE_CONTAINS("\"Kernel\"");
}
END_TEST

START_TEST(test_env_empty_counts_as_unset)
{
	accel_scheduler_t *s;

	setenv(ACCEL_SCHEDULER_ENV, "", 1);
	setenv(ACCEL_DEVICE_ENV, "/nonexistent", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "/nonexistent");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_options_bad_kind)
{
	accel_scheduler_options_t opts;

	accel_scheduler_options_init(&opts);
	opts.kind = (accel_scheduler_kind_t)42;
	OPEN_EXPECT_ERRNO(&opts, EINVAL);
	ASSERT_MESSAGE_CONTAINS("options->kind is 42");
	ASSERT_MESSAGE_CONTAINS("ACCEL_SCHEDULER_EMBEDDED");
}
END_TEST

START_TEST(test_options_empty_path)
{
	accel_scheduler_options_t opts;

	accel_scheduler_options_init(&opts);
	opts.device_path = "";
	OPEN_EXPECT_ERRNO(&opts, EINVAL);
	ASSERT_MESSAGE_CONTAINS("options->device_path is an empty string");
}
END_TEST

START_TEST(test_env_path_too_long)
{
	char *path = malloc(PATH_MAX + 16);

	memset(path, 'a', PATH_MAX + 15);
	path[0] = '/';
	path[PATH_MAX + 15] = '\0';
	setenv(ACCEL_DEVICE_ENV, path, 1);
	OPEN_EXPECT_ERRNO(NULL, ENAMETOOLONG);
	ASSERT_MESSAGE_CONTAINS("ACCEL_DEVICE is");
	ASSERT_MESSAGE_CONTAINS("PATH_MAX");
	free(path);
}
END_TEST

START_TEST(test_null_out)
{
	ASSERT_ERRNO(accel_scheduler_open(NULL, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_scheduler_open: out is NULL");
}
END_TEST

/* ---- AUTO falls back, KERNEL fails ------------------------------------- */

START_TEST(test_auto_default_without_module)
{
	accel_scheduler_t *s;

	if (default_device_exists())
		TEST_SKIP(DEFAULT_DEVICE " exists (the module is loaded)");
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, DEFAULT_DEVICE " does not exist");
	ASSERT_REASON_CONTAINS(s, "module is not loaded");
	ASSERT_REASON_CONTAINS(s, "using the embedded scheduler");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kernel_default_without_module)
{
	accel_scheduler_options_t opts = kernel_options();

	if (default_device_exists())
		TEST_SKIP(DEFAULT_DEVICE " exists (the module is loaded)");
	OPEN_EXPECT_ERRNO(&opts, ENOENT);
	ASSERT_MESSAGE_CONTAINS("options->kind = ACCEL_SCHEDULER_KERNEL");
	ASSERT_MESSAGE_CONTAINS("modprobe accelsched");
}
END_TEST

START_TEST(test_auto_missing_device)
{
	accel_scheduler_t *s;

	setenv(ACCEL_DEVICE_ENV, "/nonexistent", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "/nonexistent (from ACCEL_DEVICE) does not exist");
	ASSERT_REASON_CONTAINS(s, "using the embedded scheduler");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kernel_missing_device)
{
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, "/nonexistent", 1);
	OPEN_EXPECT_ERRNO(NULL, ENOENT);
	ASSERT_MESSAGE_CONTAINS("ACCEL_SCHEDULER=kernel");
	ASSERT_MESSAGE_CONTAINS("/nonexistent (from ACCEL_DEVICE) does not exist");
}
END_TEST

START_TEST(test_options_device_path)
{
	accel_scheduler_options_t opts;
	accel_scheduler_t *s;

	accel_scheduler_options_init(&opts);
	opts.device_path = "/nonexistent-from-options";
	s = open_expect(&opts, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "/nonexistent-from-options (from options->device_path)");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_env_overrides_options_path)
{
	accel_scheduler_options_t opts;
	accel_scheduler_t *s;

	accel_scheduler_options_init(&opts);
	opts.device_path = "/nonexistent-from-options";
	setenv(ACCEL_DEVICE_ENV, "/nonexistent-from-env", 1);
	s = open_expect(&opts, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "/nonexistent-from-env (from ACCEL_DEVICE)");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_auto_not_our_device)
{
	accel_scheduler_t *s;

	setenv(ACCEL_DEVICE_ENV, "/dev/null", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "/dev/null (from ACCEL_DEVICE) is not the accelsched device");
	ASSERT_REASON_CONTAINS(s, "ACCEL_IOCTL_INFO");
	ASSERT_REASON_CONTAINS(s, "ENOTTY");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kernel_not_our_device)
{
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, "/dev/null", 1);
	OPEN_EXPECT_ERRNO(NULL, ENOTTY);
	ASSERT_MESSAGE_CONTAINS("ACCEL_IOCTL_INFO");
	ASSERT_MESSAGE_CONTAINS("/dev/null");
}
END_TEST

START_TEST(test_kernel_directory)
{
	char dir[256];

	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, test_make_tmpdir(dir, sizeof(dir)), 1);
	OPEN_EXPECT_ERRNO(NULL, EISDIR);
	ASSERT_MESSAGE_CONTAINS(dir);
	ASSERT_MESSAGE_CONTAINS("is a directory, not the accelsched device node");
	rmdir(dir);
}
END_TEST

START_TEST(test_auto_directory)
{
	accel_scheduler_t *s;
	char dir[256];

	setenv(ACCEL_DEVICE_ENV, test_make_tmpdir(dir, sizeof(dir)), 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "is a directory");
	accel_scheduler_release(s);
	rmdir(dir);
}
END_TEST

START_TEST(test_kernel_regular_file)
{
	char dir[256], path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/file",
		 test_make_tmpdir(dir, sizeof(dir)));
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
	fclose(f);
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, path, 1);
	OPEN_EXPECT_ERRNO(NULL, ENOTTY);
	ASSERT_MESSAGE_CONTAINS("is a regular file, not a character device");
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_kernel_socket)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[sizeof(addr.sun_path) - 8];
	int sock;

	test_make_tmpdir(dir, sizeof(dir));
	ck_assert_msg(strlen(dir) + 5 < sizeof(addr.sun_path),
		      "%s is too long for a socket path", dir);
	memcpy(addr.sun_path, dir, strlen(dir));
	memcpy(addr.sun_path + strlen(dir), "/sock", 6);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_msg(sock >= 0, "socket: %s", strerror(errno));
	ck_assert_msg(bind(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0,
		      "bind(%s): %s", addr.sun_path, strerror(errno));
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, addr.sun_path, 1);
	OPEN_EXPECT_ERRNO(NULL, ENXIO);
	ASSERT_MESSAGE_CONTAINS("is a socket, not a device node");
	close(sock);
	unlink(addr.sun_path);
	rmdir(dir);
}
END_TEST

/*
 * Root bypasses file permissions: as root, run the open with the effective
 * ids of 'nobody' (keeping the saved uid 0, to clean up afterwards).
 */
static bool become_nobody(void)
{
	if (geteuid() != 0)
		return true;
	return setgroups(0, NULL) == 0 && setegid(65534) == 0 &&
	       seteuid(65534) == 0;
}

static void become_root_again(uid_t uid)
{
	if (uid == 0)
		ck_assert_msg(seteuid(0) == 0, "seteuid(0): %s", strerror(errno));
}

START_TEST(test_kernel_permission_denied)
{
	uid_t uid = geteuid();
	char dir[256], path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/node",
		 test_make_tmpdir(dir, sizeof(dir)));
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
	fclose(f);
	ck_assert_int_eq(chmod(path, uid == 0 ? 0600 : 0), 0);
	if (!become_nobody())
		TEST_SKIP("cannot take the effective ids of nobody: %s",
			  strerror(errno));
	if (euidaccess(path, R_OK | W_OK) == 0) {
		become_root_again(uid);
		TEST_SKIP("%s stays accessible (CAP_DAC_OVERRIDE?)", path);
	}
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, path, 1);
	OPEN_EXPECT_ERRNO(NULL, EACCES);
	ASSERT_MESSAGE_CONTAINS("may not open it read-write");
	ASSERT_MESSAGE_CONTAINS("udev rule");
	ASSERT_MESSAGE_CONTAINS("'render' group");
	become_root_again(uid);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_kernel_failures_leak_no_fd)
{
	int before = test_count_fds();

	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, "/dev/null", 1);
	for (int i = 0; i < 16; i++)
		OPEN_EXPECT_ERRNO(NULL, ENOTTY);
	setenv(ACCEL_DEVICE_ENV, "/proc/self/status", 1);
	for (int i = 0; i < 16; i++)
		OPEN_EXPECT_ERRNO(NULL, ENOTTY);
	ck_assert_int_eq(test_count_fds(), before);
}
END_TEST

START_TEST(test_auto_fallback_keeps_thread_message)
{
	accel_scheduler_t *s;

	/* A known message first; a successful fallback must not replace it. */
	ASSERT_ERRNO(accel_scheduler_open(NULL, NULL), EINVAL);
	setenv(ACCEL_DEVICE_ENV, "/dev/null", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_MESSAGE_CONTAINS("out is NULL");
	accel_scheduler_release(s);
}
END_TEST

/* ---- with the module loaded (inside the VM) ----------------------------- */

START_TEST(test_auto_picks_kernel_when_device_answers)
{
	accel_scheduler_info_t info;
	accel_scheduler_t *s;

	if (!default_device_exists())
		TEST_SKIP(DEFAULT_DEVICE " does not exist (the accelsched module is not loaded)");
	s = open_expect(NULL, ACCEL_SCHEDULER_KERNEL);
	ASSERT_REASON_CONTAINS(s, DEFAULT_DEVICE " answered: module ");
	ASSERT_OK(accel_scheduler_query(s, &info));
	ck_assert_int_eq(info.kind, ACCEL_SCHEDULER_KERNEL);
	ck_assert_uint_eq(info.abi_major, ACCEL_ABI_MAJOR);
	ck_assert_msg(info.module_version[0] != '\0', "module_version is empty");
	ck_assert_msg(info.kernel_release[0] != '\0', "kernel_release is empty");
	ASSERT_REASON_CONTAINS(s, info.module_version);
	ASSERT_REASON_CONTAINS(s, info.uring ? "io_uring ok" : "io_uring unavailable");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kernel_explicit_when_device_answers)
{
	accel_scheduler_t *s;

	if (!default_device_exists())
		TEST_SKIP(DEFAULT_DEVICE " does not exist (the accelsched module is not loaded)");
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_KERNEL);
	ASSERT_REASON_CONTAINS(s, "chosen by ACCEL_SCHEDULER=kernel; " DEFAULT_DEVICE " answered");
	accel_scheduler_release(s);
}
END_TEST

/* ---- the object ---------------------------------------------------------- */

START_TEST(test_query_embedded)
{
	accel_scheduler_info_t info;
	accel_scheduler_t *s;

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	memset(&info, 0xab, sizeof(info));
	ASSERT_OK(accel_scheduler_query(s, &info));
	ck_assert_int_eq(info.kind, ACCEL_SCHEDULER_EMBEDDED);
	ck_assert_uint_eq(info.abi_major, 0);
	ck_assert_uint_eq(info.abi_minor, 0);
	ck_assert_uint_eq(info.features, 0);
	ck_assert_uint_eq(info.client_id, 0);
	ck_assert(!info.uring);
	ck_assert_str_eq(info.module_version, "");
	ck_assert_str_eq(info.kernel_release, "");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_query_null_arguments)
{
	accel_scheduler_info_t info, untouched;
	accel_scheduler_t *s;

	memset(&info, 0xab, sizeof(info));
	memcpy(&untouched, &info, sizeof(info));
	ASSERT_ERRNO(accel_scheduler_query(NULL, &info), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_scheduler_query: s is NULL");
	ck_assert_msg(memcmp(&info, &untouched, sizeof(info)) == 0,
		      "accel_scheduler_query(NULL, &info) wrote into info");
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_ERRNO(accel_scheduler_query(s, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_scheduler_query: info is NULL");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_getters_null)
{
	ck_assert_int_eq(accel_scheduler_kind(NULL), ACCEL_SCHEDULER_AUTO);
	ASSERT_MESSAGE_CONTAINS("accel_scheduler_kind: s is NULL");
	ck_assert_str_eq(accel_scheduler_reason(NULL), "");
	ASSERT_MESSAGE_CONTAINS("accel_scheduler_reason: s is NULL");
	accel_scheduler_retain(NULL);
	accel_scheduler_release(NULL);
}
END_TEST

START_TEST(test_retain_release)
{
	accel_scheduler_t *s;

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	s = open_expect(NULL, ACCEL_SCHEDULER_EMBEDDED);
	accel_scheduler_retain(s);
	accel_scheduler_retain(s);
	accel_scheduler_release(s);
	accel_scheduler_release(s);
	/* One reference left: still alive. */
	ck_assert_int_eq(accel_scheduler_kind(s), ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_REASON_CONTAINS(s, "ACCEL_SCHEDULER=embedded");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kind_names)
{
	ck_assert_str_eq(accel_scheduler_kind_name(ACCEL_SCHEDULER_AUTO), "auto");
	ck_assert_str_eq(accel_scheduler_kind_name(ACCEL_SCHEDULER_KERNEL), "kernel");
	ck_assert_str_eq(accel_scheduler_kind_name(ACCEL_SCHEDULER_EMBEDDED), "embedded");
	ck_assert_str_eq(accel_scheduler_kind_name((accel_scheduler_kind_t)7), "unknown");
}
END_TEST

START_TEST(test_feature_names)
{
	ck_assert_str_eq(accel_scheduler_feature_name(ACCEL_SCHEDULER_FEATURE_URING_CMD), "uring_cmd");
	ck_assert_str_eq(accel_scheduler_feature_name(ACCEL_SCHEDULER_FEATURE_URING_CANCEL), "uring_cancel");
	ck_assert_uint_eq(ACCEL_SCHEDULER_FEATURE_URING_CMD, ACCEL_FEATURE_URING_CMD);
	ck_assert_uint_eq(ACCEL_SCHEDULER_FEATURE_URING_CANCEL, ACCEL_FEATURE_URING_CANCEL);
	ck_assert_ptr_null(accel_scheduler_feature_name(0));
	ck_assert_ptr_null(accel_scheduler_feature_name(3));
	ck_assert_ptr_null(accel_scheduler_feature_name(UINT64_C(1) << 63));
}
END_TEST

static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, test_clear_env, NULL);
	return tc;
}

static Suite *scheduler_suite(void)
{
	Suite *suite = suite_create("scheduler");
	TCase *tc;

	tc = tcase("selection");
	tcase_add_test(tc, test_options_init_defaults);
	tcase_add_test(tc, test_env_embedded);
	tcase_add_test(tc, test_env_overrides_options_kind);
	tcase_add_test(tc, test_options_embedded);
	tcase_add_test(tc, test_env_bogus_kind);
	tcase_add_test(tc, test_env_kind_is_case_sensitive);
	tcase_add_test(tc, test_env_empty_counts_as_unset);
	tcase_add_test(tc, test_options_bad_kind);
	tcase_add_test(tc, test_options_empty_path);
	tcase_add_test(tc, test_env_path_too_long);
	tcase_add_test(tc, test_null_out);
	suite_add_tcase(suite, tc);

	tc = tcase("device");
	tcase_add_test(tc, test_auto_default_without_module);
	tcase_add_test(tc, test_kernel_default_without_module);
	tcase_add_test(tc, test_auto_missing_device);
	tcase_add_test(tc, test_kernel_missing_device);
	tcase_add_test(tc, test_options_device_path);
	tcase_add_test(tc, test_env_overrides_options_path);
	tcase_add_test(tc, test_auto_not_our_device);
	tcase_add_test(tc, test_kernel_not_our_device);
	tcase_add_test(tc, test_kernel_directory);
	tcase_add_test(tc, test_auto_directory);
	tcase_add_test(tc, test_kernel_regular_file);
	tcase_add_test(tc, test_kernel_socket);
	tcase_add_test(tc, test_kernel_permission_denied);
	tcase_add_test(tc, test_kernel_failures_leak_no_fd);
	tcase_add_test(tc, test_auto_fallback_keeps_thread_message);
	tcase_add_test(tc, test_auto_picks_kernel_when_device_answers);
	tcase_add_test(tc, test_kernel_explicit_when_device_answers);
	suite_add_tcase(suite, tc);

	tc = tcase("object");
	tcase_add_test(tc, test_query_embedded);
	tcase_add_test(tc, test_query_null_arguments);
	tcase_add_test(tc, test_getters_null);
	tcase_add_test(tc, test_retain_release);
	tcase_add_test(tc, test_kind_names);
	tcase_add_test(tc, test_feature_names);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(scheduler_suite());
}
