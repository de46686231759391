// SPDX-License-Identifier: GPL-2.0
/*
 * umm.c - the sampler's window into a sampled process's address space.
 *
 * Enter it with kthread_use_mm() (once per process: threads come grouped
 * by process, so consecutive threads share one window), walk frame
 * pointers with copy_from_user_nofault() while the thread is pinned
 * (pin.c, pi_lock held: page faults are disabled, a non-resident stack
 * page ends the walk, it is never read in), then take a snapshot of the
 * mappings the frames fall in.
 *
 * The snapshot is the only place where a lock of the sampled process is
 * held: mmap_read_trylock() (never waiting behind a writer), for one
 * find_vma() and at most one get_file() per frame.  Nothing under it
 * allocates, sleeps or takes another lock, so a writer of the sampled
 * process (mmap, munmap, brk) that queues behind us waits for a few
 * lookups, never for a reader of /proc/offsample: paths are resolved and
 * stacks interned (offs_table_lock) only after the lock is dropped, from
 * the file references taken here.
 *
 * Sampler kthread only: no locking of its own.
 */
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/uaccess.h>

#include "offsample.h"
#include "ustack.h"

/* Frame pointers further than this above the stack pointer are garbage. */
#define OFFS_USTACK_SPAN	(16UL << 20)

static struct mm_struct *offs_umm_cur;

/* Leave the current window (and forget the files resolved in it). */
void offs_umm_end(void)
{
	offs_upath_memo_clear();
	if (!offs_umm_cur)
		return;
	offs_unuse_mm(offs_umm_cur);
	/* Never tear down an exited process's memory in the sampler. */
	mmput_async(offs_umm_cur);
	offs_umm_cur = NULL;
}

/*
 * Leave at once if we are the last user of the current address space (the
 * process exited meanwhile): holding it would keep its memory, its mapped
 * files and its executable's write lock until the end of the tick.
 */
void offs_umm_end_if_orphaned(void)
{
	if (offs_umm_cur && atomic_read(&offs_umm_cur->mm_users) <= 1)
		offs_umm_end();
}

/*
 * Enter t's address space; returns it, or NULL if t has none (exiting).
 * Sleeps: get_task_mm() takes task_lock(t) for a moment, and switching
 * the mm is a context switch of our own.
 */
struct mm_struct *offs_umm_enter(struct task_struct *t)
{
	struct mm_struct *mm = READ_ONCE(t->mm);

	if (!mm)
		return NULL;
	if (mm == offs_umm_cur)
		return mm;
	offs_umm_end();
	mm = get_task_mm(t);
	if (!mm)
		return NULL;
	offs_root_enter(t);
	offs_use_mm(mm);
	offs_umm_cur = mm;
	return mm;
}

/*
 * Walk frame pointers from the pinned registers into ips[]; returns the
 * depth.  *fault_addr is the frame address whose read failed, 0 if the
 * walk ended otherwise.  Any context (pin.c calls it with IRQs off): it
 * only reads user memory without faulting.
 */
unsigned int offs_umm_walk(const struct offs_sample *s, unsigned long *ips,
			   unsigned int max, bool *truncated,
			   unsigned long *fault_addr)
{
	unsigned long fp = s->ubp, lo = s->usp, frame[2];
	unsigned int n = 0;

	*truncated = false;
	*fault_addr = 0;
	ips[n++] = s->uip;	/* the leaf is always recorded */
	while (fp >= lo && fp - lo <= OFFS_USTACK_SPAN && !(fp & 7)) {
		if (offs_copy_from_user_nofault(frame, (void __user *)fp,
						sizeof(frame))) {
			*fault_addr = fp;
			break;
		}
		if (frame[1] < PAGE_SIZE)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		ips[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		lo = fp + sizeof(frame);
		fp = frame[0];
	}
	return n;
}

/* x86: the vDSO text mapping starts at mm->context.vdso. */
static bool offs_vma_is_vdso(struct mm_struct *mm, struct vm_area_struct *vma)
{
	return vma->vm_start == (unsigned long)mm->context.vdso;
}

/*
 * Translate ips[0..n) into raw frames.  Returns the number of frames
 * kept, or -EBUSY when the mmap lock was not free.  FILE frames hold a
 * reference on their file: offs_umm_release() drops them.  *faulted tells
 * whether the walk stopped at fault_addr inside a mapping, that is at a
 * page that was not resident rather than at the end of the chain.
 */
int offs_umm_snapshot(struct mm_struct *mm, const unsigned long *ips,
		      unsigned int n, unsigned long fault_addr,
		      struct offs_uframe_raw *raw, bool *faulted)
{
	struct vm_area_struct *vma;
	struct offs_uframe_raw *f;
	unsigned long addr;
	unsigned int i;

	*faulted = false;
	if (!offs_mmap_read_trylock(mm))
		return -EBUSY;
	/* No allocation, no sleep, no other lock until the unlock below. */
	for (i = 0; i < n; i++) {
		f = &raw[i];
		addr = ips[i];
		f->file = NULL;
		f->addr = addr;
		f->off = addr;
		vma = find_vma(mm, addr);
		if (!vma || addr < vma->vm_start) {
			if (i)
				break;	/* a walk into nowhere: stop */
			f->kind = OFFS_UF_UNMAPPED;
			continue;
		}
		/* Past the leaf, a return address must point into code. */
		if (i && !(vma->vm_flags & VM_EXEC))
			break;
		if (vma->vm_file) {
			f->kind = OFFS_UF_FILE;
			f->file = get_file(vma->vm_file);
			f->off = addr - vma->vm_start +
				 (vma->vm_pgoff << PAGE_SHIFT);
		} else if (offs_vma_is_vdso(mm, vma)) {
			f->kind = OFFS_UF_VDSO;
			f->off = addr - vma->vm_start;
		} else if (vma->vm_start <= mm->brk &&
			   vma->vm_end >= mm->start_brk) {
			f->kind = OFFS_UF_HEAP;
		} else if (vma->vm_start <= mm->start_stack &&
			   vma->vm_end >= mm->start_stack) {
			f->kind = OFFS_UF_STACK;
		} else {
			f->kind = OFFS_UF_ANON;
		}
	}
	if (fault_addr) {
		vma = find_vma(mm, fault_addr);
		*faulted = vma && fault_addr >= vma->vm_start;
	}
	offs_mmap_read_unlock(mm);
	return i;
}

/* Drop the file references of raw frames (no lock held). */
void offs_umm_release(struct offs_uframe_raw *raw, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (raw[i].file)
			fput(raw[i].file);
		raw[i].file = NULL;
	}
}
