/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_SHIM_SLAB_H
#define OFFS_SHIM_SLAB_H
#include <stdlib.h>
#define GFP_KERNEL	0
#define __GFP_NOWARN	0
static inline void *kzalloc(size_t n, int gfp) { (void)gfp; return calloc(1, n); }
static inline void *kmalloc(size_t n, int gfp) { (void)gfp; return malloc(n); }
static inline void kfree(const void *p) { free((void *)p); }
static inline void *kvmalloc_array(size_t n, size_t size, int gfp)
{
	(void)gfp;
	if (size && n > (size_t)-1 / size)
		return NULL;
	return malloc(n * size > 0 ? n * size : 1);
}
static inline void kvfree(const void *p) { free((void *)p); }
#endif
