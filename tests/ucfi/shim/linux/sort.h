/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_SORT_H
#define OFFS_SHIM_SORT_H
#include <stdlib.h>
static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *),
			void (*swap)(void *, void *, int))
{
	(void)swap;
	if (num)
		qsort(base, num, size, cmp);
}
#endif
