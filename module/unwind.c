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
 *
 * Kernel stacks repeat: most waiting threads sit in a few hundred distinct
 * stacks.  A walk of another task is remembered (offs_kc) by where it
 * starts (the first return address and its place in the stack) with the
 * stack slot each later return address was read from.  A later walk that
 * starts the same way and finds the same return address in every
 * remembered slot is that stack again and is served without the
 * unwinder: a few reads per frame instead of an ORC lookup per frame.
 *
 * Why that is the same walk: everything above the first frame is the live
 * call chain of the task; the unwinder finds each frame from the previous
 * one's return address (ORC: a fixed offset for each address) and the
 * stack, so the same return addresses in the same slots lead it through
 * the same frames.  Only a frame whose size varies between calls (stack
 * realignment, a frame pointer moved by alloca) could differ, and then
 * another word would have to equal a remembered kernel return address.
 * Entries are forgotten when any module goes away (its text, and the
 * addresses in them, may be reused).
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/module.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "unwind.h"

#define OFFS_KC_SET_BITS	7	/* 128 sets ... */
#define OFFS_KC_WAYS		4	/* ... of 4 stacks: 512 in all */
#define OFFS_KC_DEPTH		48	/* deeper stacks are not remembered */

struct offs_kc_ent {
	unsigned long ips[OFFS_KC_DEPTH];
	u16 slot[OFFS_KC_DEPTH];	/* word index in the stack */
	unsigned long ip0;		/* key: first return address */
	unsigned int sp0;		/* key: its slot's word index */
	unsigned int gen;		/* offs_kc_gen when walked; 0: empty */
	unsigned int depth;
};

struct offs_kc_set {
	struct offs_kc_ent way[OFFS_KC_WAYS];
	unsigned int next;		/* the way replaced next */
};

/*
 * Sampler kthread only (offs_unwind_kernel() with cached set, then
 * offs_unwind_commit()): no lock.  The generation is bumped by the module
 * notifier, in any process.
 */
static struct offs_kc_set *offs_kc;
static struct offs_kc_ent offs_kc_new;	/* the last walk, until committed */
static struct offs_kc_set *offs_kc_new_set;
static atomic_t offs_kc_gen = ATOMIC_INIT(1);
bool offs_kstack_cache = true;

static int offs_kc_module_event(struct notifier_block *nb,
				unsigned long action, void *data)
{
	/* Process context, the going module's text still mapped. */
	if (action == MODULE_STATE_GOING)
		atomic_inc(&offs_kc_gen);
	return NOTIFY_DONE;
}

static struct notifier_block offs_kc_nb = {
	.notifier_call = offs_kc_module_event,
};

static bool offs_kc_registered;

/* At load; without memory the cache is off (kstack_cache_bytes 0). */
int offs_unwind_init(void)
{
	if (!OFFS_UNWIND_SLOTS)
		return 0;
	offs_kc = kvcalloc(1U << OFFS_KC_SET_BITS, sizeof(*offs_kc),
			   GFP_KERNEL);
	if (!offs_kc)
		return 0;
	if (register_module_notifier(&offs_kc_nb)) {
		kvfree(offs_kc);
		offs_kc = NULL;
		return 0;
	}
	offs_kc_registered = true;
	OFFS_STAT_ADD(kstack_cache_bytes,
		      (1U << OFFS_KC_SET_BITS) * sizeof(*offs_kc));
	return 0;
}

/* The sampler is stopped. */
void offs_unwind_exit(void)
{
	if (offs_kc_registered)
		unregister_module_notifier(&offs_kc_nb);
	offs_kc_registered = false;
	kvfree(offs_kc);
	offs_kc = NULL;
	offs_kc_new_set = NULL;
}

/*
 * The set of a walk's start.  For a task that is not running the first
 * return address is nearly always the same (in __schedule()), so the
 * depth of its slot picks the set, and the ways tell stacks apart.
 */
static struct offs_kc_set *offs_kc_set_of(unsigned long ip0, unsigned int sp0)
{
	return &offs_kc[hash_long(ip0 ^ ((unsigned long)sp0 << 32),
				  OFFS_KC_SET_BITS)];
}

/* The word index of slot in stack, or -1 when it lies outside it. */
static int offs_kc_index(const unsigned long *stack, const unsigned long *slot)
{
	if (!slot || slot < stack || slot >= stack + THREAD_SIZE / sizeof(long))
		return -1;
	return slot - stack;
}

/* The word at index i of t's stack (bounded by the caller). */
static unsigned long offs_kc_word(const unsigned long *stack, unsigned int i)
{
	return READ_ONCE_NOCHECK(stack[i]);
}

/*
 * The return addresses from st's current frame on, leaf first.  When ent
 * is given, also where each was read from in stack; ent->depth is left 0
 * when the walk cannot be remembered: a return address the function-graph
 * tracer or a kretprobe put there (the unwinder translated it back), a
 * frame of registers saved in the kernel (interrupt, exception: the next
 * frame depends on a saved stack pointer we do not check), more than
 * OFFS_KC_DEPTH frames, or a walk that did not end cleanly.
 */
static unsigned int offs_unwind_collect(struct unwind_state *st,
					unsigned long *ips, unsigned int max,
					bool *truncated,
					const unsigned long *stack,
					struct offs_kc_ent *ent)
{
	unsigned int n = 0;
	unsigned long addr;
	bool keep = ent;
	int i;

	*truncated = false;
	for (; !unwind_done(st); unwind_next_frame(st)) {
		addr = unwind_get_return_address(st);
		if (!addr)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		if (keep) {
			i = offs_kc_index(stack, offs_unwind_slot(st));
			keep = n < OFFS_KC_DEPTH && !offs_unwind_regs_frame(st) &&
			       i >= 0 && offs_kc_word(stack, i) == addr;
			if (keep) {
				ent->ips[n] = addr;
				ent->slot[n] = i;
			}
		}
		ips[n++] = addr;
	}
	/* Ended where a kernel thread's or a user task's stack ends. */
	if (ent)
		ent->depth = keep && !unwind_error(st) &&
			     (unwind_done(st) || offs_unwind_at_user(st)) ? n : 0;
	return n;
}

/* A remembered stack that starts at st, if its slots still agree. */
static unsigned int offs_kc_lookup(struct offs_kc_set *set, unsigned int gen,
				   unsigned long ip0, unsigned int sp0,
				   const unsigned long *stack,
				   unsigned long *ips, unsigned int max,
				   bool *truncated)
{
	const struct offs_kc_ent *e;
	unsigned int w, i, n;

	for (w = 0; w < OFFS_KC_WAYS; w++) {
		e = &set->way[w];
		if (e->gen != gen || e->ip0 != ip0 || e->sp0 != sp0 || !e->depth)
			continue;
		/* Word indexes inside the stack (offs_unwind_collect()). */
		for (i = 1; i < e->depth; i++)
			if (offs_kc_word(stack, e->slot[i]) != e->ips[i])
				break;
		if (i < e->depth)
			continue;
		n = min(e->depth, max);
		memcpy(ips, e->ips, n * sizeof(*ips));
		*truncated = e->depth > max;
		return n;
	}
	return 0;
}

/*
 * Caller holds t->pi_lock (raw spinlock, IRQs off) and has checked that t
 * is not running on a CPU, so the stack memory stays allocated for the
 * whole walk.  The unwinder bounds every read to the task's stack, and so
 * do the remembered slots, so a task that starts running meanwhile
 * (run-queue waiters, re-checked by the caller) yields a wrong stack,
 * never a fault.  With cached (the sampler kthread only), a stack is taken
 * from the cache when it can be, and a stack unwound is kept aside for
 * offs_unwind_commit(), which the caller calls once it has checked that
 * the task did not run meanwhile.
 */
unsigned int offs_unwind_kernel(struct task_struct *t, unsigned long *ips,
				unsigned int max, bool *truncated, bool cached)
{
	unsigned long *stack = task_stack_page(t);
	unsigned int n;
	int sp0;
	/* Before the walk: a module that goes away meanwhile voids it. */
	unsigned int gen = atomic_read(&offs_kc_gen);
	struct offs_kc_ent *e = NULL;
	struct offs_kc_set *set = NULL;
	struct unwind_state st;

	if (cached)
		offs_kc_new_set = NULL;	/* the sampler's own: see above */
	unwind_start(&st, t, NULL, NULL);
	sp0 = offs_kc_index(stack, offs_unwind_slot(&st));
	if (cached && offs_kc && READ_ONCE(offs_kstack_cache) &&
	    !unwind_done(&st) && !offs_unwind_regs_frame(&st) && sp0 >= 0) {
		set = offs_kc_set_of(st.ip, sp0);
		n = offs_kc_lookup(set, gen, st.ip, sp0, stack, ips, max,
				   truncated);
		if (n) {
			OFFS_STAT_ADD(kstack_cache_hits, 1);
			return n;
		}
		OFFS_STAT_ADD(kstack_cache_misses, 1);
		e = &offs_kc_new;
		e->ip0 = st.ip;
		e->sp0 = sp0;
		e->gen = gen;
	}
	n = offs_unwind_collect(&st, ips, max, truncated, stack, e);
	if (e && e->depth)
		offs_kc_new_set = set;
	return n;
}

/*
 * Remember the stack the last offs_unwind_kernel() unwound, if it can be:
 * the task did not run while it was walked.  Sampler kthread, any context.
 */
void offs_unwind_commit(void)
{
	struct offs_kc_set *set = offs_kc_new_set;
	unsigned int w;

	if (!set)
		return;
	offs_kc_new_set = NULL;
	/* An empty or outdated way first, else each in turn. */
	for (w = 0; w < OFFS_KC_WAYS; w++)
		if (set->way[w].gen != offs_kc_new.gen || !set->way[w].depth)
			break;
	if (w == OFFS_KC_WAYS)
		w = set->next++ % OFFS_KC_WAYS;
	set->way[w] = offs_kc_new;
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
		return offs_unwind_collect(&st, ips, max, truncated, NULL,
					   NULL);
	}
	return 0;
}
