// SPDX-License-Identifier: GPL-2.0
/*
 * unwind.c - kernel stack of another, pinned task.
 *
 * Uses the x86 unwinder that the kernel exports to modules
 * (__unwind_start, unwind_next_frame, unwind_get_return_address).  Unlike
 * stack_trace_save_tsk() (what /proc/PID/stack uses) it keeps the __sched
 * functions (schedule, io_schedule, do_nanosleep, __mutex_lock ...), which
 * are the frames that say why a thread waits.  No kallsyms-resolved
 * function pointer is ever called (x86 IBT is enabled on Debian 6.12).
 * The same walk, started in an interrupt, gives the stack that interrupt
 * stopped (oncpu.c).
 */
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>

#include "offsample.h"
#include "unwind.h"

/* The return addresses from st's current frame on, leaf first. */
static unsigned int offs_unwind_collect(struct unwind_state *st,
					unsigned long *ips, unsigned int max,
					bool *truncated)
{
	unsigned int n = 0;
	unsigned long addr;

	*truncated = false;
	for (; !unwind_done(st); unwind_next_frame(st)) {
		addr = unwind_get_return_address(st);
		if (!addr)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		ips[n++] = addr;
	}
	return n;
}

/*
 * Caller holds t->pi_lock (raw spinlock, IRQs off) and has checked that t
 * is not running on a CPU, so the stack memory stays allocated for the
 * whole walk.  The unwinder bounds every read to the task's stack, so a
 * task that starts running meanwhile (run-queue waiters, re-checked by the
 * caller) yields a wrong stack, never a fault.
 */
unsigned int offs_unwind_kernel(struct task_struct *t, unsigned long *ips,
				unsigned int max, bool *truncated)
{
	struct unwind_state st;

	unwind_start(&st, t, NULL, NULL);
	return offs_unwind_collect(&st, ips, max, truncated);
}

/*
 * The kernel stack of the context an interrupt (oncpu.c's IPI) stopped on
 * this CPU, leaf first: our own frames are skipped up to the interrupt's
 * entry registers, and what follows them is the interrupted stack.  Sets
 * *umode and returns 0 when user code was interrupted (no kernel frames).
 * Hard IRQ; current's own stack, which cannot go away under us.
 */
unsigned int offs_unwind_interrupted(unsigned long *ips, unsigned int max,
				     bool *truncated, bool *umode)
{
	struct unwind_state st;
	struct pt_regs *regs;
	bool partial;

	*truncated = false;
	*umode = false;
	for (unwind_start(&st, current, NULL, NULL); !unwind_done(&st);
	     unwind_next_frame(&st)) {
		regs = unwind_get_entry_regs(&st, &partial);
		if (!regs || partial)
			continue;
		if (user_mode(regs)) {
			*umode = true;
			return 0;
		}
		return offs_unwind_collect(&st, ips, max, truncated);
	}
	return 0;
}
