// SPDX-License-Identifier: MIT
/* The library's version, as built. */
#include "accel/version.h"
#include "macros.h"

ACCEL_EXPORT const char *accel_version(void)
{
	return ACCEL_VERSION_STRING;
}
