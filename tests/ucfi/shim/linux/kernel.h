/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_KERNEL_H
#define OFFS_SHIM_KERNEL_H
#include "types.h"
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define min3(a, b, c)	min(min(a, b), c)
#ifndef PAGE_SIZE
#define PAGE_SIZE	4096UL
#endif
#endif
