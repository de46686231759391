/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_RANDOM_H
#define OFFS_SHIM_RANDOM_H
#include <stdlib.h>
#include "types.h"
/* Seeds of the rule hash: random as in the kernel (rand(), from srand()). */
static inline u64 get_random_u64(void)
{
	return (u64)rand() << 42 ^ (u64)rand() << 21 ^ (u64)rand();
}
#endif
