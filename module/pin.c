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
 * thrown away (OFFS_PIN_RACED).
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <asm/syscall.h>

#include "offsample.h"
#include "unwind.h"

static unsigned long offs_ncsw(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

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
static void offs_user_regs(struct task_struct *t, struct offs_sample *s)
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

enum offs_pin offs_pin_capture(struct task_struct *t, struct offs_sample *s,
			       unsigned int max_depth)
{
	enum offs_pin pin;
	unsigned long flags;
	unsigned int state;
	int on_rq;

	s->depth = 0;
	s->truncated = false;
	s->user = false;
	s->syscall = -1;
	s->iowait = false;
	s->state_ch = '?';
	s->kthread = !!(READ_ONCE(t->flags) & PF_KTHREAD);

	/* Raw spinlock with IRQs off: nothing below may sleep or allocate. */
	raw_spin_lock_irqsave(&t->pi_lock, flags);
	state = offs_task_state(t);
	/* Read on_cpu/on_rq after the state, as try_to_wake_up() does. */
	smp_rmb();
	s->state = state;
	if ((state & (TASK_DEAD | TASK_NEW | TASK_WAKING)) ||
	    READ_ONCE(t->exit_state)) {
		pin = OFFS_PIN_EXITING;
		goto out;
	}
	if (READ_ONCE(t->on_cpu)) {
		pin = OFFS_PIN_ONCPU;
		goto out;
	}
	on_rq = READ_ONCE(t->on_rq);
	if (on_rq && !offs_task_sched_delayed(t)) {
		/*
		 * Queued and not running: waiting for a CPU.  This includes
		 * a task preempted between set_current_state() and
		 * schedule(): its state word says "blocked" but it is
		 * runnable.
		 */
		pin = OFFS_PIN_RUNQ;
	} else if (state == TASK_RUNNING) {
		/* Neither queued nor running: a wakeup in flight. */
		pin = OFFS_PIN_EXITING;
		goto out;
	} else {
		pin = OFFS_PIN_BLOCKED;
	}

	s->ncsw = offs_ncsw(t);
	s->iowait = t->in_iowait;
	s->state_ch = offs_state_char(t, state, pin);
	s->depth = offs_unwind_kernel(t, s->ips, max_depth, &s->truncated);
	if (!s->kthread)
		offs_user_regs(t, s);

	if (pin == OFFS_PIN_RUNQ) {
		/* Did it run while we walked its stack? */
		smp_rmb();
		if (READ_ONCE(t->on_cpu) || offs_ncsw(t) != s->ncsw)
			pin = OFFS_PIN_RACED;
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
