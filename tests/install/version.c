// SPDX-License-Identifier: MIT
/*
 * A program built as a user builds one: with the flags of libaccel's
 * pkg-config file only, including the library's header and the module's
 * uapi header. It prints the version of the libaccel it runs with (which
 * must be the one its headers name) and the uapi's ABI.
 */
#include <stdio.h>
#include <string.h>

#include <accel/accel.h>
#include <accelsched.h>

int main(void)
{
	const char *v = accel_version();

	if (strcmp(v, ACCEL_VERSION_STRING) != 0) {
		fprintf(stderr, "accel_version() is \"%s\", the headers' ACCEL_VERSION_STRING \"%s\"\n",
			v, ACCEL_VERSION_STRING);
		return 1;
	}
	printf("libaccel %s, uapi ABI %d.%d, struct accel_info %zu bytes\n",
	       v, ACCEL_ABI_MAJOR, ACCEL_ABI_MINOR, sizeof(struct accel_info));
	return 0;
}
