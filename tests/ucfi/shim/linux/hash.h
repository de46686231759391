/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_HASH_H
#define OFFS_SHIM_HASH_H
#include "types.h"
/* As the kernel's: multiply by 2^64 / phi, keep the high bits. */
static inline u32 hash_64(u64 val, unsigned int bits)
{
	return (u32)((val * 0x61C8864680B583EBULL) >> (64 - bits));
}
#endif
