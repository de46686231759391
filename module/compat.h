/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the only place in offsample that knows about kernel versions.
 *
 * Decisions are driven by feature tests that compile (module/probe.sh
 * builds each module/probes/NAME.c against the target kernel and writes
 * OFFS_HAVE_NAME to features.h) or by macros the kernel headers define
 * themselves.  LINUX_VERSION_CODE is never used:
 * distribution kernels backport APIs (Debian 6.1.192 carries 6.2 APIs, RHEL
 * 8 has the 5.14 task state rename) so version numbers lie.
 */
#ifndef OFFS_COMPAT_H
#define OFFS_COMPAT_H

#include <linux/sched.h>
#include <linux/proc_fs.h>
#include <linux/cgroup.h>
#include <linux/mm.h>

/* features.h (module/probe.sh) comes first, by Kbuild's -include. */
#ifndef OFFS_FEATURES
#error "features.h missing: build through module/Kbuild, which runs module/probe.sh first"
#endif

/*
 * Kernel locks whose owner a waiter can be matched to (kholder.c).  The
 * rt_mutex's core with its owner is struct rt_mutex_base since 5.15,
 * struct rt_mutex before; on PREEMPT_RT an rw_semaphore (mmap_lock among
 * them) is an rt_mutex plus a reader count (rwbase), elsewhere a count, an
 * owner and a wait list under a raw spinlock.
 */
#include <linux/rtmutex.h>
#include <linux/rwsem.h>
#include <linux/sched/task.h>
#ifdef OFFS_HAVE_RT_MUTEX_BASE
#define offs_rtm_owner_ptr(l)	(&((struct rt_mutex_base *)(l))->owner)
#else
#define offs_rtm_owner_ptr(l)	(&((struct rt_mutex *)(l))->owner)
#endif
/*
 * A task_struct pointer read from a lock's owner field, referenced unless
 * its count already dropped to zero (a task that died holding the lock:
 * an oops).  Under rcu_read_lock().
 */
static inline struct task_struct *offs_owner_get(unsigned long o)
{
	struct task_struct *h = (struct task_struct *)o;

	return refcount_inc_not_zero(&h->usage) ? h : NULL;
}

#ifdef OFFS_HAVE_RWSEM_RWBASE
/* PREEMPT_RT: waiters of an rw_semaphore sleep on its rt_mutex. */
#define OFFS_RWSEM_ON_RTMUTEX	1
#define offs_rwsem_rtm(sem)	((void *)&(sem)->rwbase.rtmutex)
#else
#define OFFS_RWSEM_ON_RTMUTEX	0
#define offs_rwsem_rtm(sem)	((void)(sem), NULL)
#endif

#ifdef CONFIG_PREEMPT_RT
/*
 * The wait list below is the non-RT rw_semaphore's: on PREEMPT_RT its
 * waiters are seen through offs_rwsem_rtm() (5.15+), or not looked into
 * (5.10-rt's rwsem-rt patch).
 */
static inline int offs_rwsem_writer(struct rw_semaphore *sem,
				    struct task_struct *t,
				    struct task_struct **owner)
{
	*owner = NULL;
	return -ENOENT;
}
#else
/* kernel/locking/rwsem.c (private; the same in 5.10, 6.1 and 6.12). */
#define OFFS_RWSEM_WRITER_LOCKED	1UL	/* count */
#define OFFS_RWSEM_READER_OWNED		1UL	/* owner: a hint, not a task */
#define OFFS_RWSEM_OWNER_FLAGS		7UL	/* owner's flag bits, 5.10-6.12 */
#define OFFS_RWSEM_WAITERS_MAX		64	/* entries looked at */

struct offs_rwsem_waiter {
	struct list_head list;
	struct task_struct *task;
};

/*
 * Whether t is among the first OFFS_RWSEM_WAITERS_MAX waiters of sem and
 * sem is held for writing: then *owner is its writer, referenced.  Returns
 * 0 (*owner may still be NULL: held by readers, or between a writer taking
 * it and writing its owner field), -EBUSY (the wait list is locked: not
 * waited for), -ENOENT (t does not wait on sem).  The wait list is read
 * under its raw spinlock, only ever tried; the writer's task_struct cannot
 * be freed before an RCU grace period after it released sem (the owner
 * field is cleared first), so it is referenced under rcu_read_lock(), as
 * the kernel's optimistic spinning reads it.
 */
static inline int offs_rwsem_writer(struct rw_semaphore *sem,
				    struct task_struct *t,
				    struct task_struct **owner)
{
	struct offs_rwsem_waiter *w;
	unsigned long flags, o;
	int n = 0, ret = -ENOENT;

	*owner = NULL;
	if (!raw_spin_trylock_irqsave(&sem->wait_lock, flags))
		return -EBUSY;
	list_for_each_entry(w, &sem->wait_list, list) {
		if (++n > OFFS_RWSEM_WAITERS_MAX)
			break;
		if (READ_ONCE(w->task) == t) {
			ret = 0;
			break;
		}
	}
	if (!ret && (atomic_long_read(&sem->count) & OFFS_RWSEM_WRITER_LOCKED)) {
		rcu_read_lock();
		o = atomic_long_read(&sem->owner);
		if (o && !(o & OFFS_RWSEM_READER_OWNED))
			*owner = offs_owner_get(o & ~OFFS_RWSEM_OWNER_FLAGS);
		rcu_read_unlock();
	}
	raw_spin_unlock_irqrestore(&sem->wait_lock, flags);
	return ret;
}
#endif

#if defined(CONFIG_PREEMPT_RT) && defined(OFFS_HAVE_RT_MUTEX_BASE)
/* PREEMPT_RT: a mutex is an rt_mutex, seen through task->pi_blocked_on. */
#define offs_mutex_rtm(m)	((void *)&(m)->rtmutex)
#else
#define offs_mutex_rtm(m)	((void)(m), NULL)
#endif

#ifdef CONFIG_PREEMPT_RT
/*
 * The wait list below is the non-RT mutex's: on PREEMPT_RT see
 * offs_mutex_rtm() (5.15+); 5.10-rt's mutex-rt patch is not looked into.
 */
static inline int offs_mutex_owner(struct mutex *m, struct task_struct *t,
				   struct task_struct **owner)
{
	*owner = NULL;
	return -ENOENT;
}
#else
/*
 * kernel/locking/mutex.c and mutex.h (private; the same in 5.10, 6.1 and
 * 6.12): the owner's flag bits, and a waiter's list node and task first.
 * The wait list's lock is a raw spinlock since 5.11, a spinlock_t (the
 * same thing without PREEMPT_RT) before.
 */
#ifdef OFFS_HAVE_MUTEX_RAW_WAIT_LOCK
#define offs_mutex_wait_trylock(m, f)	raw_spin_trylock_irqsave(&(m)->wait_lock, f)
#define offs_mutex_wait_unlock(m, f)	raw_spin_unlock_irqrestore(&(m)->wait_lock, f)
#else
#define offs_mutex_wait_trylock(m, f)	spin_trylock_irqsave(&(m)->wait_lock, f)
#define offs_mutex_wait_unlock(m, f)	spin_unlock_irqrestore(&(m)->wait_lock, f)
#endif
#define OFFS_MUTEX_OWNER_FLAGS		7UL
#define OFFS_MUTEX_WAITERS_MAX		64	/* entries looked at */

struct offs_mutex_waiter {
	struct list_head list;
	struct task_struct *task;
};

/*
 * Whether t is among the first OFFS_MUTEX_WAITERS_MAX waiters of m: then
 * *owner is its owner, referenced (NULL between an unlock and the next
 * owner taking it).  Returns 0, -EBUSY (the wait list is locked: not
 * waited for) or -ENOENT (t does not wait on m).  As offs_rwsem_writer():
 * the wait list under its raw spinlock, only ever tried; the owner's
 * task_struct referenced under rcu_read_lock(), as the kernel's
 * optimistic spinning reads it.
 */
static inline int offs_mutex_owner(struct mutex *m, struct task_struct *t,
				   struct task_struct **owner)
{
	struct offs_mutex_waiter *w;
	unsigned long flags, o;
	int n = 0, ret = -ENOENT;

	*owner = NULL;
	if (!offs_mutex_wait_trylock(m, flags))
		return -EBUSY;
	list_for_each_entry(w, &m->wait_list, list) {
		if (++n > OFFS_MUTEX_WAITERS_MAX)
			break;
		if (READ_ONCE(w->task) == t) {
			ret = 0;
			break;
		}
	}
	if (!ret) {
		rcu_read_lock();
		o = atomic_long_read(&m->owner) & ~OFFS_MUTEX_OWNER_FLAGS;
		if (o && o != (unsigned long)t)
			*owner = offs_owner_get(o);
		rcu_read_unlock();
	}
	offs_mutex_wait_unlock(m, flags);
	return ret;
}
#endif

/* Task state word: "state" (volatile long) before 5.14, "__state" after. */
#ifdef OFFS_HAVE_TASK___STATE
#define offs_task_state(t)	READ_ONCE((t)->__state)
#else
#define offs_task_state(t)	((unsigned int)READ_ONCE((t)->state))
#endif

/*
 * EEVDF delayed dequeue (6.12): a task that blocked may stay on the run
 * queue with se.sched_delayed set until it is picked again.  Such a task is
 * blocked, not runnable (see task_is_runnable() in 6.12).
 */
#ifdef OFFS_HAVE_SCHED_DELAYED
#define offs_task_sched_delayed(t)	READ_ONCE((t)->se.sched_delayed)
#else
#define offs_task_sched_delayed(t)	((void)(t), 0)
#endif

/* State bits that did not exist on every supported kernel. */
#ifndef TASK_FROZEN
#define TASK_FROZEN		0
#endif
#ifndef TASK_RTLOCK_WAIT
#define TASK_RTLOCK_WAIT	0
#endif

/* Frozen tasks: a state bit since 6.1, a task flag before. */
#ifdef PF_FROZEN
#define offs_task_frozen(t, state)	(((state) & TASK_FROZEN) || \
					 (READ_ONCE((t)->flags) & PF_FROZEN))
#else
#define offs_task_frozen(t, state)	((void)(t), (state) & TASK_FROZEN)
#endif

/* Kernel workers that belong to a user process (io_uring 5.12, 6.4). */
#ifdef PF_USER_WORKER
#define OFFS_PF_USER_WORKERS	(PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER)
#elif defined(PF_IO_WORKER)
#define OFFS_PF_USER_WORKERS	(PF_KTHREAD | PF_IO_WORKER)
#else
#define OFFS_PF_USER_WORKERS	PF_KTHREAD
#endif

/*
 * Has an address space's set of mappings stayed as it was when the
 * sampler last copied it (umm.c keeps its copy of the executable mappings
 * from tick to tick)?  offs_mm_wsig() is called with our mmap read lock
 * held, right after a copy: it gives the sign to compare later and false
 * when this kernel gives none.  offs_mm_wsig_same() needs no lock; a
 * false "changed" only costs a new copy, a false "same" must never be.
 *
 * 6.12.y with per-VMA locks: mm_lock_seq, a seqcount begun by every
 * mmap_write_lock() and ended at its unlock or downgrade; every change of
 * the VMA tree or of a VMA's range, flags or file is made under that lock.
 *
 * Elsewhere (5.10, 6.1, and 6.4-6.12 kernels whose mm_lock_seq is an
 * int), not PREEMPT_RT: the rwsem records its last owner, a writer at
 * every way down_write() succeeds (cleared to 0 at up_write()), or the
 * last reader at down_read() and down_read_trylock().  If the owner is
 * still the sampler thread that took the read lock for the copy, no
 * writer has taken the lock since: only a read lock taken in our thread
 * can put our task there again (umm.c marks the copy stale at each read
 * lock it takes after the copy; it also compares the mapping count and
 * the executable size, in case something else did in our context, such
 * as a BPF program in an interrupt).  Any other reader (a page fault)
 * also replaces it: the mappings are walked again (umm.c's recheck).
 * With CONFIG_DEBUG_RWSEMS a reader clears its task at up_read(): never
 * the same, a walk of the mappings every tick.
 */
#ifdef OFFS_HAVE_MM_LOCK_SEQCOUNT
static inline bool offs_mm_wsig(struct mm_struct *mm, unsigned long *sig)
{
	*sig = raw_read_seqcount(&mm->mm_lock_seq);
	return true;
}

static inline bool offs_mm_wsig_same(struct mm_struct *mm, unsigned long sig)
{
	return raw_read_seqcount(&mm->mm_lock_seq) == sig;
}

/* Does a read lock of ours change the sign?  (The snapshot's.) */
#define OFFS_MM_WSIG_READERS	0
#elif !OFFS_RWSEM_ON_RTMUTEX && !defined(CONFIG_PREEMPT_RT)
static inline bool offs_mm_wsig(struct mm_struct *mm, unsigned long *sig)
{
	unsigned long o = atomic_long_read(&mm->mmap_lock.owner);

	*sig = (unsigned long)current;
	return (o & ~OFFS_RWSEM_OWNER_FLAGS) == *sig;
}

static inline bool offs_mm_wsig_same(struct mm_struct *mm, unsigned long sig)
{
	unsigned long o = atomic_long_read(&mm->mmap_lock.owner);

	return sig && (o & ~OFFS_RWSEM_OWNER_FLAGS) == sig;
}

#define OFFS_MM_WSIG_READERS	1
#else
/* PREEMPT_RT without mm_lock_seq: no sign, a copy every tick. */
static inline bool offs_mm_wsig(struct mm_struct *mm, unsigned long *sig)
{
	return false;
}

static inline bool offs_mm_wsig_same(struct mm_struct *mm, unsigned long sig)
{
	return false;
}

#define OFFS_MM_WSIG_READERS	0
#endif

/*
 * Every VMA of an address space in address order, the mmap lock held:
 * since 6.1 an iterator over the maple tree (one step per VMA; a loop of
 * find_vma() would walk the tree from its root every time), before that
 * the VMA list.
 */
#ifdef OFFS_HAVE_VMA_ITER_INIT
#define offs_vma_it	vma_iterator
static inline void offs_vma_start(struct vma_iterator *it,
				  struct mm_struct *mm)
{
	vma_iter_init(it, mm, 0);
}

static inline struct vm_area_struct *offs_vma_next(struct vma_iterator *it)
{
	return vma_next(it);
}
#else
struct offs_vma_it {
	struct vm_area_struct *next;
};

static inline void offs_vma_start(struct offs_vma_it *it,
				  struct mm_struct *mm)
{
	it->next = mm->mmap;
}

static inline struct vm_area_struct *offs_vma_next(struct offs_vma_it *it)
{
	struct vm_area_struct *vma = it->next;

	if (vma)
		it->next = vma->vm_next;
	return vma;
}
#endif

/*
 * The path a user sees for a mapped file: since 6.8 a file mapped through
 * overlayfs is a "backing file" whose f_path is the real (upper or lower)
 * path, and file_user_path() gives the overlay path (/proc/PID/maps uses
 * it).  Before, overlayfs put the user-visible path in f_path itself.
 */
#ifdef OFFS_HAVE_FILE_USER_PATH
#define offs_file_user_path(f)	file_user_path(f)
#else
#define offs_file_user_path(f)	(&(f)->f_path)
#endif

/*
 * cgroup_get_from_id() (a cgroup id back to its cgroup, for printing its
 * path, with a reference): 6.1 has it, 5.10 does not.  There, the default
 * hierarchy is searched for the id (cgrp_dfl_root and
 * css_next_descendant_pre() are exported): O(cgroups) per lookup, once
 * per run of records of one cgroup in a read.  The walk needs RCU (or
 * cgroup_mutex, which a reader must not take here); css_tryget() fails
 * for a cgroup being freed, which then prints as "cgroup-id:N".
 */
#ifdef OFFS_HAVE_CGROUP_GET_FROM_ID
#define offs_cgroup_get_from_id(id)	cgroup_get_from_id(id)
#else
static inline struct cgroup *offs_cgroup_get_from_id(u64 id)
{
	struct cgroup_subsys_state *css;
	struct cgroup *found = ERR_PTR(-ENOENT);

	rcu_read_lock();
	css_for_each_descendant_pre(css, &cgrp_dfl_root.cgrp.self) {
		if (cgroup_id(css->cgroup) != id)
			continue;
		if (css_tryget(css))
			found = css->cgroup;
		break;
	}
	rcu_read_unlock();
	return found;
}
#endif

/* inode_get_mtime() arrived with the 6.7 timestamp accessors. */
#ifdef OFFS_HAVE_INODE_GET_MTIME
#define offs_inode_mtime(inode)	inode_get_mtime(inode)
#else
#define offs_inode_mtime(inode)	((inode)->i_mtime)
#endif

/* inode_get_ctime() arrived with the 6.6 timestamp accessors. */
#ifdef OFFS_HAVE_INODE_GET_CTIME
#define offs_inode_ctime(inode)	inode_get_ctime(inode)
#else
#define offs_inode_ctime(inode)	((inode)->i_ctime)
#endif

/*
 * File locks: struct file_lock's common part is struct file_lock_core in
 * its own header since 6.9 (member c, fields flc_*), fl_* fields of
 * struct file_lock in linux/fs.h before.  The granted locks of an inode
 * hang on its i_flctx lists by OFFS_FL_LIST.
 */
#ifdef OFFS_HAVE_FILE_LOCK_CORE
#include <linux/filelock.h>
#define OFFS_FL_LIST		c.flc_list
#define offs_fl_type(fl)	((fl)->c.flc_type)
#define offs_fl_pid(fl)		((fl)->c.flc_pid)
#define offs_fl_file(fl)	((fl)->c.flc_file)
#define offs_fl_owner(fl)	((fl)->c.flc_owner)
#else
#define OFFS_FL_LIST		fl_list
#define offs_fl_type(fl)	((fl)->fl_type)
#define offs_fl_pid(fl)		((fl)->fl_pid)
#define offs_fl_file(fl)	((fl)->fl_file)
#define offs_fl_owner(fl)	((fl)->fl_owner)
#endif

/* sock_from_file() lost its error argument in 5.12. */
#ifdef OFFS_HAVE_SOCK_FROM_FILE_1
#define offs_sock_from_file(file)	sock_from_file(file)
#else
#define offs_sock_from_file(file)	({ int __err; sock_from_file(file, &__err); })
#endif

/* kmalloc_size_roundup() (6.1): the size kmalloc() really allocates. */
#ifdef OFFS_HAVE_KMALLOC_SIZE_ROUNDUP
#include <linux/slab.h>
#define offs_kmalloc_size_roundup(n)	kmalloc_size_roundup(n)
#else
#define offs_kmalloc_size_roundup(n)	(n)
#endif

/* PDE_DATA() became pde_data() in 5.17. */
#ifdef OFFS_HAVE_PDE_DATA_LOWER
#define offs_pde_data(inode)	pde_data(inode)
#else
#define offs_pde_data(inode)	PDE_DATA(inode)
#endif

/*
 * Where the unwinder read the current frame's return address: the ORC
 * unwinder (every kernel we support builds with it) keeps the frame's
 * stack pointer and, at an interrupt or exception frame, its registers
 * (what unwind_get_return_address_ptr() returns; not exported).  Other
 * unwinders: NULL, and unwind.c remembers no stack.
 */
#include <asm/unwind.h>
#ifdef CONFIG_UNWINDER_ORC
#define OFFS_UNWIND_SLOTS	1
static inline unsigned long *offs_unwind_slot(struct unwind_state *st)
{
	return st->regs ? &st->regs->ip : (unsigned long *)st->sp - 1;
}

/* The current frame is registers saved by an interrupt or exception. */
static inline bool offs_unwind_regs_frame(struct unwind_state *st)
{
	return st->regs;
}

/*
 * Where the ORC unwinder starts on task t, which is not running, without
 * starting it (about 130 instructions: a memset of its state and
 * get_stack_info()): __unwind_start() takes the frame __switch_to_asm()
 * left at t->thread.sp (struct inactive_task_frame, asm/switch_to.h),
 * its return address first, in the word below the frame's end: returns
 * where that word is (not read: the caller bounds it to the task's stack
 * first).  unwind.c checks it against the unwinder's start at each stack
 * it unwinds.
 */
#include <asm/switch_to.h>
static inline unsigned long *offs_unwind_first(struct task_struct *t)
{
	return (unsigned long *)(READ_ONCE(t->thread.sp) +
				 sizeof(struct inactive_task_frame)) - 1;
}

/*
 * The walk reached the registers saved on entry from user space (the top
 * of a user task's stack): the ORC unwinder stops there at its next step,
 * and unwind_get_return_address() already gives 0 (a user address).
 */
static inline bool offs_unwind_at_user(struct unwind_state *st)
{
	return st->regs && user_mode(st->regs);
}
#else
#define OFFS_UNWIND_SLOTS	0
static inline unsigned long *offs_unwind_slot(struct unwind_state *st)
{
	return NULL;
}

static inline bool offs_unwind_regs_frame(struct unwind_state *st)
{
	return true;
}

static inline bool offs_unwind_at_user(struct unwind_state *st)
{
	return false;
}

static inline unsigned long *offs_unwind_first(struct task_struct *t)
{
	return NULL;
}
#endif

#endif /* OFFS_COMPAT_H */
