// SPDX-License-Identifier: MIT
// The same checks as abi.c, compiled as C++: the header must be usable there.
#include "abi.c"
