// SPDX-License-Identifier: GPL-2.0
/* offsample probe: vma_iter_init - the maple tree's VMA iterator (6.1) */
#include <linux/mm.h>

void offs_probe(struct mm_struct *mm, void *it);
void offs_probe(struct mm_struct *mm, void *it)
{
	vma_iter_init(it, mm, 0);
}
