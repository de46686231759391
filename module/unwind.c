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
 */
#include <linux/sched.h>
#include <asm/unwind.h>

#include "offsample.h"
#include "unwind.h"

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
	struct unwind_state state;
	unsigned int n = 0;
	unsigned long addr;

	*truncated = false;
	for (unwind_start(&state, t, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
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
