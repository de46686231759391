// SPDX-License-Identifier: GPL-2.0
/*
 * kholder.c - who holds up a thread that waits in the kernel: the child
 * it waits for in wait4()/waitid(), the writer of the kernel lock it
 * sleeps on.  blocker.c keeps the observations and counts the edges; the
 * run queue's holder (the thread running on the waiter's CPU) needs no
 * lookup and is matched there.
 *
 * Kernel locks.  Which lock a sleeping task waits on is not recorded on a
 * production kernel (task->blocked_on needs CONFIG_DEBUG_MUTEXES), except
 * for rt_mutexes: task->pi_blocked_on, under the task's pi_lock.  On
 * PREEMPT_RT every mutex, rw_semaphore and spinlock_t is an rt_mutex, so
 * there any kernel lock wait names its owner.  Elsewhere one candidate is
 * checked: the waiter's own mm->mmap_lock (page faults, mmap(), munmap(),
 * mprotect() ... waiting for a writer), by finding the waiter on its wait
 * list.  A lock that is not found names nobody: a holder is never guessed.
 *
 * Called from the sampler kthread with the waiter not pinned (may sleep
 * between the steps); each step takes at most one raw spinlock, with
 * interrupts off for a bounded walk.
 */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/unistd.h>

#include "offsample.h"
#include "compat.h"
#include "blocker.h"
#include "kholder.h"

/* waitid()'s id types (include/uapi/linux/wait.h; P_PGID 0: the caller's). */
#define OFFS_P_ALL	0
#define OFFS_P_PID	1
#define OFFS_P_PGID	2

void offs_kh_child_wait(const struct offs_sample *s, struct offs_fxwait *fx)
{
	long id;

	if (s->syscall == __NR_wait4) {
		/* wait4(pid, ...): > 0 a child, -1 any, 0 or < -1 a group. */
		id = (int)s->args[0];
		if (id > 0)
			fx->val = OFFS_WAIT_PID;
		else if (id == -1)
			fx->val = OFFS_WAIT_ANY;
		else
			fx->val = OFFS_WAIT_PGID;
		if (id < -1)
			id = -id;
	} else if (s->syscall == __NR_waitid) {
		id = (int)s->args[1];
		switch ((int)s->args[0]) {
		case OFFS_P_ALL:
			fx->val = OFFS_WAIT_ANY;
			break;
		case OFFS_P_PID:
			if (id <= 0)
				return;
			fx->val = OFFS_WAIT_PID;
			break;
		case OFFS_P_PGID:
			if (id < 0)
				return;
			fx->val = OFFS_WAIT_PGID;
			break;
		default:
			return;		/* P_PIDFD: not followed */
		}
	} else {
		return;
	}
	fx->uaddr = id;
	fx->cand = OFFS_FX_CHILD;
}

/*
 * The child an OFFS_WAIT_PID wait of t names (referenced), or NULL: no
 * such process in t's pid namespace, or not t's process's child.  For a
 * group wait, *pgrp gets the process group (referenced): the children are
 * matched at the end of the tick.  Returns false when t was reaped.
 */
bool offs_kh_child(struct task_struct *t, const struct offs_fxwait *fx,
		   struct task_struct **child, struct pid **pgrp)
{
	struct pid_namespace *ns;
	struct task_struct *c;
	struct pid *pid;

	*child = NULL;
	*pgrp = NULL;
	/* The pid hash, task links and a task's pids are RCU-protected. */
	rcu_read_lock();
	ns = task_active_pid_ns(t);
	if (!ns) {
		rcu_read_unlock();
		return false;
	}
	switch (fx->val) {
	case OFFS_WAIT_PID:
		pid = find_pid_ns(fx->uaddr, ns);
		c = pid ? pid_task(pid, PIDTYPE_TGID) : NULL;
		if (c && rcu_dereference(c->real_parent)->tgid == t->tgid) {
			get_task_struct(c);
			*child = c;
		}
		break;
	case OFFS_WAIT_PGID:
		pid = fx->uaddr ? find_pid_ns(fx->uaddr, ns) : task_pgrp(t);
		*pgrp = get_pid(pid);
		break;
	}
	rcu_read_unlock();
	return true;
}

/*
 * Whether the leader that the walk saw as was (only compared: it may have
 * exited), with process id tgid (initial namespace), is still that
 * process, a child of process ptgid, and in process group pgrp (NULL:
 * any); name and comm get its names.
 */
bool offs_kh_is_child(const struct task_struct *was, pid_t tgid, pid_t ptgid,
		      struct pid *pgrp, char *name, char *comm)
{
	struct task_struct *c;
	bool in = false;

	/* As in offs_kh_child(). */
	rcu_read_lock();
	c = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (c == was && rcu_dereference(c->real_parent)->tgid == ptgid &&
	    (!pgrp || task_pgrp(c) == pgrp)) {
		memcpy(name, c->comm, TASK_COMM_LEN);
		memcpy(comm, READ_ONCE(c->group_leader)->comm, TASK_COMM_LEN);
		name[TASK_COMM_LEN - 1] = '\0';
		comm[TASK_COMM_LEN - 1] = '\0';
		in = true;
	}
	rcu_read_unlock();
	return in;
}

/*
 * struct rt_mutex_waiter (kernel/locking/rtmutex_common.h, private): the
 * task and the lock follow two tree nodes, struct rb_node (24 bytes) in
 * 5.10, struct rt_waiter_node (rb_node, prio, deadline: 40 bytes) since
 * 6.6 and in Debian's 6.1.  The layout is told apart by the task field,
 * which must be the waiter itself, tried at 48 first: in the newer layout
 * that is a tree node's child pointer (another node, never a task), while
 * 80 is past the end of the 5.10 waiter (its caller's stack frame, where
 * a saved register may hold the task).
 */
static const unsigned int offs_rtw_task_off[] = { 48, 80 };

/*
 * The rt_mutex t sleeps on, from t->pi_blocked_on, and its owner
 * (referenced; NULL if none or not recognised).  Takes t->pi_lock, which
 * keeps the waiter (on t's stack) and so the lock in place: the owner
 * can release the lock meanwhile, but its task_struct lives until an RCU
 * grace period after it exits.
 */
static void *offs_kh_rtmutex(struct task_struct *t, struct task_struct **owner)
{
	struct rt_mutex_waiter *w;
	unsigned long flags, o;
	struct task_struct *wt;
	void *lock = NULL;
	unsigned int i;

	*owner = NULL;
	raw_spin_lock_irqsave(&t->pi_lock, flags);
	w = t->pi_blocked_on;
	for (i = 0; w && i < ARRAY_SIZE(offs_rtw_task_off); i++) {
		if (copy_from_kernel_nofault(&wt, (u8 *)w + offs_rtw_task_off[i],
					     sizeof(wt)) || wt != t)
			continue;
		if (copy_from_kernel_nofault(&lock, (u8 *)w +
					     offs_rtw_task_off[i] + sizeof(wt),
					     sizeof(lock)))
			lock = NULL;
		break;
	}
	/* A lock of the kernel's: in the kernel half of the address space. */
	if ((unsigned long)lock < TASK_SIZE_MAX)
		lock = NULL;
	if (lock) {
		rcu_read_lock();
		if (copy_from_kernel_nofault(&o, offs_rtm_owner_ptr(lock),
					     sizeof(o)))
			o = 0;
		o &= ~1UL;	/* RT_MUTEX_HAS_WAITERS */
		if (o && o != (unsigned long)t)
			*owner = offs_owner_get(o);
		rcu_read_unlock();
	}
	raw_spin_unlock_irqrestore(&t->pi_lock, flags);
	return lock;
}

int offs_kh_klock(struct task_struct *t, struct task_struct **owner,
		  u8 *kind, u8 *obj)
{
	struct mm_struct *mm;
	void *lock;
	int ret;

	*obj = OFFS_KO_NONE;
	lock = offs_kh_rtmutex(t, owner);
	if (lock) {
		*kind = OFFS_BK_RTMUTEX;
		/*
		 * Only compared: t sleeps, its mm cannot change meanwhile (no
		 * task_lock(): on PREEMPT_RT a sleeping lock, which t itself
		 * may hold while it waits).
		 */
		mm = READ_ONCE(t->mm);
		if (mm && lock == offs_rwsem_rtm(&mm->mmap_lock))
			*obj = OFFS_KO_MMAP_LOCK;
		return 0;
	}
	/* On PREEMPT_RT rw_semaphores are rt_mutexes: seen above. */
	if (OFFS_RWSEM_ON_RTMUTEX)
		return -ENOENT;
	/* mm_struct itself (not its pages): kept by mmgrab(). */
	task_lock(t);
	mm = t->mm;
	if (mm)
		mmgrab(mm);
	task_unlock(t);
	if (!mm)
		return -ENOENT;
	*kind = OFFS_BK_RWSEM;
	*obj = OFFS_KO_MMAP_LOCK;
	ret = offs_rwsem_writer(&mm->mmap_lock, t, owner);
	mmdrop(mm);
	return ret;
}
