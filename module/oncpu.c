// SPDX-License-Identifier: GPL-2.0
/*
 * oncpu.c - threads that are running when the sampler visits them.
 *
 * pin.c finds a thread on a CPU (OFFS_PIN_ONCPU) and lets it go.  The
 * sampler then asks that CPU, with a synchronous IPI, to capture whatever
 * it is running: in the callback (hard IRQ on the target CPU, also on
 * PREEMPT_RT, where IPI callbacks are not threaded) current is the
 * interrupted task.  If it is still the thread we found, its kernel stack
 * is unwound from the interrupted context and its user stack from its user
 * registers, with nofault reads of its own address space and the CFI
 * tables the sampler holds for that address space (umm.c); nothing there
 * sleeps, allocates or takes a lock.  If the thread has left the CPU
 * meanwhile the capture misses and the sampler pins it again (it is then
 * blocked, queued, or running elsewhere).
 *
 * Why an IPI to the CPU the walk found the thread on rather than per-CPU
 * timers firing at the tick: a timer samples whatever runs at its own
 * instant, so a thread that blocks or starts running between the timer and
 * the walk's visit would be counted twice or never.  Asking the CPU while
 * the walk is at that thread, and checking that it is the same task, keeps
 * "every thread counts once per tick".  The cost is one IPI round trip and
 * one capture per running thread per tick (169 us under TCG emulation,
 * docs/BENCHMARKS.md) and nothing on idle CPUs.
 *
 * The callback does not use get_irq_regs(): the IPI vector does not set
 * it.  It unwinds its own stack up to the interrupt entry frame, whose
 * registers are the interrupted context; the frames from there on are the
 * thread's kernel stack.  If those registers are user mode, the thread was
 * running user code and has no kernel frames.
 */
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "offsample.h"
#include "stats.h"
#include "unwind.h"
#include "oncpu.h"
#include "pin.h"

struct offs_oncpu_req {
	struct task_struct *t;
	struct offs_sample *s;
	unsigned int max_depth;
	bool hit;
};

/*
 * smp_call_function_single() callback, hard IRQ on the CPU the thread was
 * found on.  The sampler spins until it returns, so the sample and the
 * buffers it points to (the sampler's) are ours alone meanwhile.
 */
static void offs_oncpu_fn(void *arg)
{
	struct offs_oncpu_req *r = arg;
	struct offs_sample *s = r->s;
	struct task_struct *t = current;
	bool umode;

	if (t != r->t)
		return;		/* it left the CPU: the sampler pins it again */
	r->hit = true;
	s->state_ch = 'R';
	s->ncsw = READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
	s->ips = s->ips_buf;
	s->depth = offs_unwind_interrupted(s->ips_buf, r->max_depth,
					   &s->truncated, &umode);
	if (s->kthread)
		return;
	offs_user_regs(t, s);
	if (umode)
		s->syscall = -1;	/* in user code, not in a system call */
	/* t is current: its mm is the one loaded here (see offs_umm_read()). */
	offs_user_walk(t, s);
}

/*
 * t was found on a CPU by offs_pin_capture() (which reset s).  Capture it
 * there: OFFS_PIN_CPU with s filled, or OFFS_PIN_RACED if it is no longer
 * running there.  No lock may be held: smp_call_function_single() waits,
 * with preemption disabled, for the callback to run on the other CPU.
 */
enum offs_pin offs_oncpu_capture(struct task_struct *t, struct offs_sample *s,
				 unsigned int max_depth)
{
	struct offs_oncpu_req r = { .t = t, .s = s, .max_depth = max_depth };
	u64 t0 = local_clock();
	int err;

	err = smp_call_function_single(task_cpu(t), offs_oncpu_fn, &r, 1);
	OFFS_STAT_ADD(oncpu_ns_total, local_clock() - t0);
	if (err || !r.hit) {
		OFFS_STAT_ADD(oncpu_missed, 1);
		return OFFS_PIN_RACED;
	}
	s->oncpu = true;
	OFFS_STAT_ADD(oncpu_sampled, 1);
	return OFFS_PIN_CPU;
}
