// SPDX-License-Identifier: GPL-2.0
/* offsample probe: mm_lock_seq - seqcount bumped by mmap_write_lock() (6.12.y, per-VMA locks) */
#include <linux/build_bug.h>
#include <linux/mm_types.h>
#include <linux/seqlock.h>

static_assert(__builtin_types_compatible_p(typeof(((struct mm_struct *)0)->mm_lock_seq),
					   seqcount_t),
	      "mm_lock_seq is not a seqcount_t");

unsigned int offs_probe(struct mm_struct *mm);
unsigned int offs_probe(struct mm_struct *mm)
{
	return raw_read_seqcount(&mm->mm_lock_seq);
}
