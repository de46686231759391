/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_KERNEL_H
#define OFFS_SHIM_KERNEL_H
#include "types.h"
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define min3(a, b, c)	min(min(a, b), c)
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define round_up(x, y)	((((x) - 1) | ((__typeof__(x))(y) - 1)) + 1)
#undef static_assert
#define static_assert(expr, ...)	_Static_assert(expr, #expr)
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE	4096UL
#endif
#endif
