// SPDX-License-Identifier: MIT
/*
 * hello-scheduler: open the accelsched scheduler and say what was found.
 *
 * This is the first program to run on a new machine: it shows which
 * scheduler libaccel picked (the kernel module's, or the embedded one) and
 * why. Try it with ACCEL_SCHEDULER=embedded or ACCEL_DEVICE=/dev/null too.
 *
 * Build: cc hello-scheduler.c $(pkg-config --cflags --libs libaccel)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

static void print_features(uint64_t features)
{
	printf("features:       0x%" PRIx64, features);
	for (int bit = 0; bit < 64; bit++) {
		uint64_t f = UINT64_C(1) << bit;
		const char *name = accel_scheduler_feature_name(f);

		if (!(features & f))
			continue;
		if (name)
			printf(" %s", name);
		else
			printf(" bit%d", bit);
	}
	printf("\n");
}

static void print_module(const accel_scheduler_info_t *info)
{
	printf("module:         %s (ABI %" PRIu32 ".%" PRIu32 ")\n",
	       info->module_version, info->abi_major, info->abi_minor);
	printf("kernel:         %s\n", info->kernel_release);
	printf("client id:      %" PRIu64 "\n", info->client_id);
	print_features(info->features);
	printf("io_uring:       %s\n", info->uring ? "yes" : "no");
}

int main(void)
{
	accel_scheduler_t *sched;
	accel_scheduler_info_t info;
	int err;

	err = accel_scheduler_open(NULL, &sched);
	if (err) {
		fprintf(stderr, "hello-scheduler: cannot open a scheduler: %s (%s)\n",
			accel_error_message(), strerror(-err));
		return EXIT_FAILURE;
	}
	accel_scheduler_query(sched, &info);

	printf("libaccel:       %s\n", accel_version());
	printf("scheduler:      %s\n", accel_scheduler_kind_name(info.kind));
	printf("reason:         %s\n", accel_scheduler_reason(sched));
	if (info.kind == ACCEL_SCHEDULER_KERNEL)
		print_module(&info);
	else
		printf("module:         none (the embedded scheduler runs in this process)\n");

	accel_scheduler_release(sched);
	return EXIT_SUCCESS;
}
