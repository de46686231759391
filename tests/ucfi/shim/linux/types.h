/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-ins for the kernel headers module/ucfi.c includes. */
#ifndef OFFS_SHIM_TYPES_H
#define OFFS_SHIM_TYPES_H
#include <asm/types.h>
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
#define U16_MAX		UINT16_MAX
#define U32_MAX		UINT32_MAX
#define S32_MIN		INT32_MIN
#define S32_MAX		INT32_MAX
#define S16_MIN		INT16_MIN
#define S16_MAX		INT16_MAX
#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif
#define fallthrough	__attribute__((__fallthrough__))
#endif
