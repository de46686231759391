// SPDX-License-Identifier: GPL-2.0
/*
 * pin.c - pin one thread, decide its state, capture its kernel stack.
 *
 * The protocol is the one get_wchan() uses since 5.16: hold p->pi_lock,
 * confirm that the task is blocked and off its CPU, then unwind.
 * try_to_wake_up() takes pi_lock before anything else, so while we hold
 * it a blocked task cannot be woken, cannot run and cannot die (TASK_DEAD
 * is set under pi_lock too): its stack is frozen and stays allocated.
 *
 * A runnable task waiting for a CPU cannot be pinned that way (the run
 * queue lock is not available to modules).  It gets an optimistic unwind;
 * if its context-switch count or on_cpu changed meanwhile the result is
 * thrown away (OFFS_PIN_RACED), and KASAN does not report its walk (a
 * stack in use again, see offs_pin_capture()).  Blocked tasks get the
 * same re-check after their unwind, as a guard: it must never fire for
 * them.
 *
 * The user stack is walked here too, under pi_lock: a blocked thread
 * cannot run while it is walked, so its user stack is exactly the one of
 * the instant its kernel stack was taken (a walk after pi_lock is let go
 * would race with a wakeup, and a thread that is on a CPU has not bumped
 * its switch count yet).  Only the walk: mapping the addresses to files
 * needs the mmap lock and happens later (ustack.c).
 */
#include <linux/kasan.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <asm/syscall.h>

#include "offsample.h"
#include "params.h"
#include "unwind.h"
#include "umm.h"
#include "pin.h"
#include "pystack.h"

/* State letter of an off-CPU task; see docs/CLASSIFICATION.md. */
static char offs_state_char(struct task_struct *t, unsigned int state,
			    enum offs_pin pin)
{
	if (pin == OFFS_PIN_RUNQ)
		return 'R';
	if (state & __TASK_TRACED)
		return 't';
	if (state & __TASK_STOPPED)
		return 'T';
	if (offs_task_frozen(t, state))
		return 'F';
	if (state & TASK_PARKED)
		return 'P';
	if (state & TASK_RTLOCK_WAIT)
		return 'D';	/* PREEMPT_RT sleeping spinlock */
	if ((state & TASK_IDLE) == TASK_IDLE)
		return 'I';
	if (state & TASK_UNINTERRUPTIBLE)
		return 'D';
	if (state & TASK_INTERRUPTIBLE)
		return 'S';
	return '?';
}

/*
 * User registers saved at kernel entry; stable while the task is pinned.
 * Kernel workers of a user process (io_uring, vhost) have an mm but no
 * user context.
 */
void offs_user_regs(struct task_struct *t, struct offs_sample *s)
{
	struct pt_regs *regs = task_pt_regs(t);

	s->user = !(READ_ONCE(t->flags) & OFFS_PF_USER_WORKERS);
	if (!s->user)
		return;
	s->syscall = syscall_get_nr(t, regs);
	/* Only the native x86-64 table is interpreted; see classify.c. */
	if (s->syscall >= 0 && syscall_get_arch(t) != AUDIT_ARCH_X86_64)
		s->syscall = -2;
	syscall_get_arguments(t, regs, s->args);
	s->uip = regs->ip;
	s->usp = regs->sp;
	s->ubp = regs->bp;
}

unsigned int offs_max_udepth(void)
{
	return clamp(READ_ONCE(offs_max_user_depth), 1U,
		     (unsigned int)OFFS_MAX_DEPTH_LIMIT);
}

/*
 * Walk t's user stack from the registers s holds, in s->umm, which must be
 * the address space loaded on this CPU: the sampler's entered one (t
 * pinned), or t's own (oncpu.c, t == current in an interrupt); t->mm is
 * checked to be it (see offs_umm_read()).  Nofault reads only: any
 * context, IRQs off included.
 */
void offs_user_walk(struct task_struct *t, struct offs_sample *s)
{
	if (!s->user || !s->uips || !s->umm || READ_ONCE(t->mm) != s->umm)
		return;
	if (user_64bit_mode(task_pt_regs(t))) {
		s->udepth = offs_umm_walk(s, s->uips, offs_max_udepth(),
					  &s->utruncated, &s->ufault,
					  &s->upending);
		offs_pystack_walk(t, s);
	} else {
		/* 32-bit code: frames of 4-byte words, the leaf only. */
		s->uips[0] = s->uip;
		s->udepth = 1;
	}
	/* After the walk: a change before its end may have misled it. */
	s->ustale = !offs_umm_maps_current(s->umm);
}

enum offs_pin offs_pin_capture(struct task_struct *t, struct offs_sample *s,
			       unsigned int max_depth)
{
	enum offs_pin pin;
	unsigned long flags;
	unsigned int state;
	u64 c0, c1;
	bool runq;

	s->depth = 0;
	s->ips = s->ips_buf;
	s->kstack_id = 0;
	s->udepth = 0;
	s->pydepth = 0;
	s->pyts = 0;
	s->pylost = false;
	s->ufault = 0;
	s->upending = false;
	s->ustale = false;
	s->utruncated = false;
	s->blocked_raced = false;
	s->truncated = false;
	s->user = false;
	s->oncpu = false;
	s->syscall = -1;
	s->iowait = false;
	s->state_ch = '?';
	s->kthread = !!(READ_ONCE(t->flags) & PF_KTHREAD);

	/*
	 * Raw spinlock with IRQs off: nothing below may sleep or allocate.
	 * The reads follow try_to_wake_up() (kernel/sched/core.c): pi_lock
	 * and a full barrier, the state, then on_rq, then on_cpu.
	 */
	raw_spin_lock_irqsave(&t->pi_lock, flags);
	smp_mb__after_spinlock();
	state = offs_task_state(t);
	s->state = state;
	if ((state & (TASK_DEAD | TASK_NEW | TASK_WAKING)) ||
	    READ_ONCE(t->exit_state)) {
		pin = OFFS_PIN_EXITING;
		goto out;
	}
	/*
	 * try_to_wake_up(): "Ensure we load p->on_rq _after_ p->state,
	 * otherwise it would be possible to, falsely, observe p->on_rq == 0".
	 */
	smp_rmb();
	runq = READ_ONCE(t->on_rq) && !offs_task_sched_delayed(t);
	/*
	 * try_to_wake_up(): "Ensure we load p->on_cpu _after_ p->on_rq,
	 * otherwise it would be possible to, falsely, observe p->on_cpu == 0.
	 * One must be running (->on_cpu == 1) in order to remove oneself
	 * from the runqueue."  Read the other way round, a runnable task
	 * that is picked, runs and blocks between the two loads looks
	 * blocked and off-CPU while it is still switching out.  The acquire
	 * pairs with the release of on_cpu in finish_task(): once we see 0,
	 * the old CPU is done with the task's stack.
	 */
	smp_rmb();	/* on_cpu after on_rq, see above */
	if (smp_load_acquire(&t->on_cpu)) {
		pin = OFFS_PIN_ONCPU;
		goto out;
	}
	if (runq) {
		/*
		 * Queued and not running: waiting for a CPU.  This includes
		 * a task preempted between set_current_state() and
		 * schedule(): its state word says "blocked" but it is
		 * runnable.
		 */
		pin = OFFS_PIN_RUNQ;
	} else if (state == TASK_RUNNING) {
		/* Neither queued nor running: a wakeup or migration in flight. */
		pin = OFFS_PIN_EXITING;
		goto out;
	} else {
		/*
		 * Blocked: with pi_lock held it cannot be woken (wakeups
		 * take pi_lock first), so it cannot run until we let go.
		 */
		pin = OFFS_PIN_BLOCKED;
	}

	s->ncsw = offs_ncsw(t);
	s->iowait = t->in_iowait;
	s->state_ch = offs_state_char(t, state, pin);
	/*
	 * The two walks are timed in a timed capture (stats full_kstack_ns,
	 * full_uwalk_ns): a clock read costs about as much as a short walk.
	 */
	c0 = s->timed ? local_clock() : 0;
	/*
	 * A run-queue waiter may be picked and run on another CPU while we
	 * walk its stack, so the walk may read stack words that are in use
	 * again, some of them KASAN redzones of live frames.  That is
	 * harmless (every read stays inside the task's stack, and the
	 * re-check below throws the result away), and the unwinder reads
	 * other tasks' stack words with READ_ONCE_NOCHECK for this reason,
	 * but not the saved registers' cs it tests with user_mode(), nor do
	 * we (offs_unwind_at_user()).  Found on the debug kernel: a KASAN
	 * stack-out-of-bounds report in unwind_next_frame() while user
	 * spinners were preempted and picked (59-oncpu, docs/RELIABILITY.md).
	 * So KASAN reports are off for this walk only, the way kmemleak
	 * scans memory that may be poisoned; a blocked task's walk keeps
	 * them, as its stack must not change.  No-ops without KASAN.
	 */
	if (pin == OFFS_PIN_RUNQ)
		kasan_disable_current();
	s->depth = offs_unwind_kernel(t, s->ips_buf, max_depth, &s->truncated,
				      s->kcache, &s->kstack_id, &s->ips);
	if (pin == OFFS_PIN_RUNQ)
		kasan_enable_current();
	c1 = s->timed ? local_clock() : 0;
	s->ns_kstack += c1 - c0;
	if (!s->kthread)
		offs_user_regs(t, s);
	/*
	 * The user stack at the same instant, while the thread cannot run:
	 * t->mm cannot change under us, exec needs the thread to run.
	 */
	offs_user_walk(t, s);
	if (s->timed)
		s->ns_uwalk += local_clock() - c1;

	/*
	 * Did it run while we walked its stack?  A run-queue waiter may; a
	 * blocked task must not, and a re-check that fires for one means
	 * the decision above was wrong (counted apart: blocked_raced).
	 * Either way the capture is thrown away, never recorded or cached.
	 */
	smp_rmb();
	if (offs_task_ran(t, s->ncsw)) {
		if (pin == OFFS_PIN_BLOCKED)
			s->blocked_raced = true;
		pin = OFFS_PIN_RACED;
	} else if (s->kcache && !s->kstack_id) {
		/*
		 * A stack walked whole while the task stood still (one from
		 * the stack cache has nothing to remember).
		 */
		offs_unwind_commit();
	}
out:
	raw_spin_unlock_irqrestore(&t->pi_lock, flags);
	return pin;
}

/*
 * Names and ids of a sampled thread.  Outside pi_lock: task_lock() would be
 * a sleeping lock on PREEMPT_RT.  comm is copied without the task lock, as
 * perf does; a concurrent prctl(PR_SET_NAME) can at worst mix two names.
 */
void offs_sample_names(struct task_struct *t, struct offs_sample *s)
{
	struct task_struct *leader;

	s->tid = t->pid;
	s->tgid = t->tgid;
	memcpy(s->tname, t->comm, TASK_COMM_LEN);
	s->tname[TASK_COMM_LEN - 1] = '\0';

	/*
	 * task_structs are freed after an RCU grace period, and a task's
	 * css_set is RCU-protected: one read-side section for both.
	 */
	rcu_read_lock();
	leader = READ_ONCE(t->group_leader);
	memcpy(s->comm, leader->comm, TASK_COMM_LEN);
	s->cgid = offs_task_cgid_rcu(t);
	rcu_read_unlock();
	s->comm[TASK_COMM_LEN - 1] = '\0';
}
