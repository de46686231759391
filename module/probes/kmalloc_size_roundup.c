// SPDX-License-Identifier: GPL-2.0
/* offsample probe: kmalloc_size_roundup - what kmalloc really allocates (6.1) */
#include <linux/slab.h>

size_t offs_probe(size_t n);
size_t offs_probe(size_t n)
{
	return kmalloc_size_roundup(n);
}
