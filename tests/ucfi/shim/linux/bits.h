/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_BITS_H
#define OFFS_SHIM_BITS_H
#define BIT(n)		(1UL << (n))
#endif
