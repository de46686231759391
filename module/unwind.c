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
 * stacks.  A walk of another task is remembered (offs_kc) with the stack
 * slot each return address was read from.  A later walk that starts the
 * same way and finds the same return address in every remembered slot is
 * that stack again and is served without the unwinder: a few reads per
 * frame instead of an ORC lookup per frame.
 *
 * Why that is the same walk: everything above the first frame is the live
 * call chain of the task; the unwinder finds each frame from the previous
 * one's return address (ORC: a fixed offset for each address) and the
 * stack, so the same return addresses at the same distances from the
 * first lead it through the same frames.  Only a frame whose size varies
 * between calls (stack realignment, a frame pointer moved by alloca) could
 * differ, and then another word would have to equal a remembered kernel
 * return address.  Entries are forgotten when any module goes away (its
 * text, and the addresses in them, may be reused).
 *
 * One such frame is known and handled: a kernel that moves each system
 * call's stack by a random offset (randomize_kstack_offset, 5.13+, on by
 * default in Debian's kernels) does it with an alloca in do_syscall_64(),
 * so the frames below it sit deeper or shallower at every call and the
 * few above it (the system call's entry, near the top of the stack) stay
 * where they are.  Slots are therefore compared relative to the first,
 * up to the first slot that stays, and from there where they were, which
 * is where the unwinder reads them (do_syscall_64()'s frame pointer is
 * the same at every call).  Which slots stay is learned from the same
 * stack walked at two offsets (offs_kc_learn_fixed()); until then an
 * entry serves its own offset only.  So the key is not the first slot but
 * the first four return addresses, read from the slots the remembered
 * frame sizes of the first three say (offs_kc_key()); a thread that ran
 * and waits again where it waited before, in a new system call, gets its
 * stack from the cache.
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/module.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>

#include "hash.h"
#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "unwind.h"

#define OFFS_KC_SET_BITS	7	/* 128 sets ... */
#define OFFS_KC_WAYS		4	/* ... of 4 stacks: 512 in all */
#define OFFS_KC_DEPTH		48	/* deeper stacks are not remembered */
#define OFFS_KC_KEY_IPS		4	/* return addresses in the key */
#define OFFS_KC_STEP_BITS	9	/* frame sizes remembered: 512 */
#define OFFS_KC_WORDS		(THREAD_SIZE / sizeof(long))
/* Slots that do not move lie this close to the top (the entry's frames). */
#define OFFS_KC_TOP_WORDS	64

struct offs_kc_ent {
	unsigned long ips[OFFS_KC_DEPTH];
	u16 slot[OFFS_KC_DEPTH];	/* word index in the stack, rising */
	unsigned long ip0;		/* key: first return address ... */
	u32 key;			/* ... and offs_kc_key() */
	unsigned int sp0;		/* slot[0] */
	unsigned int gen;		/* offs_kc_gen when walked; 0: empty */
	unsigned int depth;
	unsigned int fixed;		/* slots from this frame on do not move */
	u64 id;				/* new whenever ips[] is written */
};

struct offs_kc_set {
	struct offs_kc_ent way[OFFS_KC_WAYS];
	unsigned int next;		/* the way replaced next */
};

/*
 * The size of the frame a return address returns into, in words: from its
 * slot to the slot of that frame's own return address.  A fixed offset
 * for most kernel functions (ORC), learned from walks, the first address
 * in a slot keeping it for its generation.  Only the key reads it, the
 * same way at a lookup and when the walk is remembered: a wrong size
 * costs a miss, never a wrong stack.  One word each: the address's low
 * 32 bits (kernel and module text lie in the top 2 GiB, so they tell
 * addresses apart), the size, the low 16 bits of the generation.
 */
#define OFFS_KC_STEP(ip, step, gen) \
	((u32)(ip) | (u64)(u16)(step) << 32 | (u64)(u16)(gen) << 48)

/*
 * Sampler kthread only (offs_unwind_kernel() with cached set, then
 * offs_unwind_commit(), under the walked task's pi_lock): no lock.  The
 * generation is bumped by the module notifier, in any process; entries
 * and sizes of an older one are not used.
 */
static struct offs_kc_set *offs_kc;
static u64 *offs_kc_steps;
static struct offs_kc_ent offs_kc_new;	/* the last walk, until committed */
static u64 offs_kc_ids;			/* the last id given */
static bool offs_kc_new_ok;		/* it may be committed */
/*
 * The entry the last hit found: the threads of a pool, one after the
 * other, wait where the one before waited.  It is tried before the key is
 * made (about 70 instructions of a cold capture, issue 52): the key only
 * picks a set, and the entry's slots, checked the same way, are what
 * tells a stack.  Sampler kthread only; entries are rewritten in place
 * (their generation and slots then tell), and the array goes with
 * offs_unwind_exit().
 */
static const struct offs_kc_ent *offs_kc_last;

/*
 * offs_unwind_first() finds the unwinder's start: checked at each walk, and
 * when a walk of a task that did not run meanwhile disagrees (first_bad,
 * the two word indexes in first_at), the cache is off until reloaded.
 */
static bool offs_kc_first_ok = true;
static bool offs_kc_first_bad;
static int offs_kc_first_at[2];
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
	/* Slots are u16 word indexes. */
	BUILD_BUG_ON(OFFS_KC_WORDS > 1U << 16);
	offs_kc = kvcalloc(1U << OFFS_KC_SET_BITS, sizeof(*offs_kc),
			   GFP_KERNEL);
	offs_kc_steps = kvcalloc(1U << OFFS_KC_STEP_BITS,
				 sizeof(*offs_kc_steps), GFP_KERNEL);
	if (!offs_kc || !offs_kc_steps ||
	    register_module_notifier(&offs_kc_nb)) {
		kvfree(offs_kc);
		kvfree(offs_kc_steps);
		offs_kc = NULL;
		offs_kc_steps = NULL;
		return 0;
	}
	offs_kc_registered = true;
	OFFS_STAT_ADD(kstack_cache_bytes,
		      (1U << OFFS_KC_SET_BITS) * sizeof(*offs_kc) +
		      (1U << OFFS_KC_STEP_BITS) * sizeof(*offs_kc_steps));
	return 0;
}

/* The sampler is stopped. */
void offs_unwind_exit(void)
{
	if (offs_kc_registered)
		unregister_module_notifier(&offs_kc_nb);
	offs_kc_registered = false;
	kvfree(offs_kc);
	kvfree(offs_kc_steps);
	offs_kc = NULL;
	offs_kc_steps = NULL;
	offs_kc_new_ok = false;
	offs_kc_last = NULL;
}

/* The word at index i of t's stack (bounded by the caller). */
static unsigned long offs_kc_word(const unsigned long *stack, unsigned int i)
{
	return READ_ONCE_NOCHECK(stack[i]);
}

static __always_inline unsigned int
offs_kc_step_of(unsigned long ip, unsigned int gen)
{
	u64 m = offs_kc_steps[hash_long(ip, OFFS_KC_STEP_BITS)];

	return (u32)m == (u32)ip && m >> 48 == (u16)gen ? (u16)(m >> 32) : 0;
}

static void offs_kc_step_set(unsigned long ip, unsigned int step,
			     unsigned int gen)
{
	u64 *m = &offs_kc_steps[hash_long(ip, OFFS_KC_STEP_BITS)];

	/* This address's, or another's: kept. */
	if (*m >> 48 == (u16)gen && (u16)(*m >> 32))
		return;
	*m = OFFS_KC_STEP(ip, step, gen);
}

/*
 * The key of a walk that starts with ip0 at word index sp0 of stack: the
 * first OFFS_KC_KEY_IPS return addresses, each next one read where the
 * remembered size of the frame before says (the key stops at an unknown
 * size).  The same wherever a system call's random offset put the stack,
 * unless one of those frames is the one that holds the offset
 * (do_syscall_64(), when schedule() is called from the system call
 * itself): such a stack misses.  For a task that is not running the first
 * return address is nearly always the same (in __schedule()), and the next
 * two are often schedule() and schedule_timeout(), or
 * preempt_schedule_common() and __cond_resched(): the fourth tells what it
 * waits in.
 */
static __always_inline u32
offs_kc_key(const unsigned long *stack, unsigned long ip0, unsigned int sp0,
	    unsigned int gen)
{
	unsigned long ip = ip0, k = ip0;
	unsigned int i, at = sp0, step;

	for (i = 1; i < OFFS_KC_KEY_IPS; i++) {
		step = offs_kc_step_of(ip, gen);
		if (!step || at + step >= OFFS_KC_WORDS)
			break;
		at += step;
		ip = offs_kc_word(stack, at);
		k = rol64(k, 21) ^ ip;
	}
	return hash_64(k ^ i, 32);
}

static struct offs_kc_set *offs_kc_set_of(u32 key)
{
	return &offs_kc[key & ((1U << OFFS_KC_SET_BITS) - 1)];
}

/* The word index of slot in stack, or -1 when it lies outside it. */
static int offs_kc_index(const unsigned long *stack, const unsigned long *slot)
{
	if (!slot || slot < stack || slot >= stack + OFFS_KC_WORDS)
		return -1;
	return slot - stack;
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

/*
 * Is e, of generation gen, the stack that starts at word sp0 of stack with
 * return address ip0?  Its slots below e->fixed move with the first one,
 * those from e->fixed on stay where they were.  Slots rise
 * (offs_kc_learn()), so the moved ones lie above sp0 and, as in any walk,
 * below the ones that stay: all inside the stack.  An entry whose fixed
 * slots are not known yet serves its own offset only.
 */
static bool offs_kc_match(const struct offs_kc_ent *e, unsigned int gen,
			  unsigned long ip0, unsigned int sp0,
			  const unsigned long *stack)
{
	int delta = (int)sp0 - (int)e->sp0;
	unsigned int i;

	if (e->gen != gen || e->ip0 != ip0 || !e->depth)
		return false;
	if (delta && (e->fixed == e->depth ||
		      (int)e->slot[e->fixed - 1] + delta >= e->slot[e->fixed]))
		return false;
	for (i = 1; i < e->fixed; i++)
		if (offs_kc_word(stack, e->slot[i] + delta) != e->ips[i])
			return false;
	for (; i < e->depth; i++)
		if (offs_kc_word(stack, e->slot[i]) != e->ips[i])
			return false;
	return true;
}

/* A remembered stack that starts at sp0 with ip0, if its slots agree. */
static const struct offs_kc_ent *
offs_kc_lookup(struct offs_kc_set *set, unsigned int gen, unsigned long ip0,
	       u32 key, unsigned int sp0, const unsigned long *stack)
{
	const struct offs_kc_ent *e;
	unsigned int w;

	for (w = 0; w < OFFS_KC_WAYS; w++) {
		e = &set->way[w];
		if (e->key == key && offs_kc_match(e, gen, ip0, sp0, stack))
			return e;
	}
	return NULL;
}

/*
 * The stack remembered in e (at most max frames), in place: entries are
 * written only by offs_unwind_commit(), after the sampler's next walk, and
 * the caller is done with them by then (a copy cost about 40 instructions
 * of a cold capture, issue 52).
 */
static unsigned int offs_kc_serve(const struct offs_kc_ent *e,
				  const unsigned long **frames,
				  unsigned int max, bool *truncated, u64 *id)
{
	unsigned int n = min(e->depth, max);

	*frames = e->ips;
	*truncated = e->depth > max;
	*id = e->id;
	offs_kc_last = e;
	OFFS_STAT_ADD(kstack_cache_hits, 1);
	return n;
}

/*
 * A walk just collected in e, of stack: can it be remembered (its slots
 * rise, as the unwinder's stack pointer does)?  If so, learn the sizes of
 * its first frames and give it its key.
 */
static bool offs_kc_learn(struct offs_kc_ent *e, const unsigned long *stack)
{
	unsigned int i;

	if (!e->depth)
		return false;
	for (i = 1; i < e->depth; i++)
		if (e->slot[i] <= e->slot[i - 1])
			return false;
	for (i = 0; i + 1 < e->depth && i + 1 < OFFS_KC_KEY_IPS; i++)
		offs_kc_step_set(e->ips[i], e->slot[i + 1] - e->slot[i],
				 e->gen);
	e->key = offs_kc_key(stack, e->ip0, e->sp0, e->gen);
	e->fixed = e->depth;
	return true;
}

/*
 * The walk of offs_unwind_kernel() when the cache had no stack: the
 * unwinder from t's first frame.  cached: remember it (fsp0 and ip0: the
 * start the lookup read, -1 and 0 when it did not look).  Apart, so that
 * a hit does not set up (zero) the unwinder's state.
 */
static noinline unsigned int
offs_unwind_walk(struct task_struct *t, unsigned long *ips, unsigned int max,
		 bool *truncated, bool cached, int fsp0, unsigned long ip0,
		 unsigned int gen)
{
	unsigned long *stack = task_stack_page(t);
	struct offs_kc_ent *e = NULL;
	struct unwind_state st;
	unsigned int n;
	int sp0;

	unwind_start(&st, t, NULL, NULL);
	sp0 = offs_kc_index(stack, offs_unwind_slot(&st));
	if (cached && !unwind_done(&st) && !offs_unwind_regs_frame(&st) &&
	    sp0 >= 0) {
		OFFS_STAT_ADD(kstack_cache_misses, 1);
		/*
		 * Lookups start where the unwinder does, or the cache stays
		 * off: a kernel whose task switch left another frame.
		 */
		if (fsp0 != sp0 || ip0 != st.ip) {
			/*
			 * Unless the task ran between the two (a run-queue
			 * waiter may): offs_unwind_commit() decides.
			 */
			offs_kc_first_bad = offs_kc_first_ok;
			offs_kc_first_at[0] = fsp0;
			offs_kc_first_at[1] = sp0;
			return offs_unwind_collect(&st, ips, max, truncated,
						   stack, NULL);
		}
		e = &offs_kc_new;
		e->ip0 = st.ip;
		e->sp0 = sp0;
		e->gen = gen;
	}
	n = offs_unwind_collect(&st, ips, max, truncated, stack, e);
	if (e)
		offs_kc_new_ok = offs_kc_learn(e, stack);
	return n;
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
 * the task did not run meanwhile.  *frames: where the frames are, ips[]
 * or, from the cache, the entry's own (valid until the next
 * offs_unwind_commit() or offs_unwind_exit(), the sampler's calls).  *id:
 * the cache entry's id when the stack came from the cache, else 0; two
 * hits with the same id served the same frames (ids are never given
 * twice), so table.c need not compare them.
 */
unsigned int offs_unwind_kernel(struct task_struct *t, unsigned long *ips,
				unsigned int max, bool *truncated, bool cached,
				u64 *id, const unsigned long **frames)
{
	unsigned long *stack = task_stack_page(t);
	const struct offs_kc_ent *e;
	int fsp0 = -1;
	/* Before the walk: a module that goes away meanwhile voids it. */
	unsigned int gen = atomic_read(&offs_kc_gen);
	unsigned long ip0 = 0;
	u32 key;

	*id = 0;
	*frames = ips;
	if (cached) {
		/* The sampler's own: see above. */
		offs_kc_new_ok = false;
		offs_kc_first_bad = false;
	}
	cached = cached && offs_kc && READ_ONCE(offs_kstack_cache);
	/* The unwinder's start, found without starting it. */
	if (cached)
		fsp0 = offs_kc_index(stack, offs_unwind_first(t));
	if (fsp0 >= 0 && offs_kc_first_ok) {
		ip0 = offs_kc_word(stack, fsp0);
		e = offs_kc_last;
		if (e && offs_kc_match(e, gen, ip0, fsp0, stack))
			return offs_kc_serve(e, frames, max, truncated, id);
		key = offs_kc_key(stack, ip0, fsp0, gen);
		e = offs_kc_lookup(offs_kc_set_of(key), gen, ip0, key, fsp0,
				   stack);
		if (e)
			return offs_kc_serve(e, frames, max, truncated, id);
	}
	return offs_unwind_walk(t, ips, max, truncated, cached, fsp0, ip0,
				gen);
}

/*
 * o and e are the same stack walked at two offsets: o's slots up to some
 * frame moved by the difference, the others, near the top of the stack
 * (the system call's entry), stayed.  Learn from which frame on they
 * stay; false if the two do not split that way.
 */
static bool offs_kc_learn_fixed(struct offs_kc_ent *o,
				const struct offs_kc_ent *e)
{
	int delta = (int)e->sp0 - (int)o->sp0;
	unsigned int i, k = e->depth;

	for (i = 1; i < e->depth; i++) {
		if (e->slot[i] == o->slot[i]) {
			if (k == e->depth)
				k = i;
		} else if (k < e->depth ||
			   (int)e->slot[i] - (int)o->slot[i] != delta) {
			return false;
		}
	}
	if (k == e->depth || OFFS_KC_WORDS - o->slot[k] > OFFS_KC_TOP_WORDS)
		return false;
	o->fixed = k;
	return true;
}

/*
 * Remember the stack the last offs_unwind_kernel() unwound, if it can be:
 * the task did not run while it was walked.  Sampler kthread, any context.
 */
void offs_unwind_commit(void)
{
	struct offs_kc_ent *e = &offs_kc_new, *o;
	struct offs_kc_set *set;
	unsigned int w;

	if (offs_kc_first_bad) {
		offs_kc_first_bad = false;
		offs_kc_first_ok = false;
		pr_warn("kernel stack cache off: the unwinder starts at word %d of a task's stack, not at %d\n",
			offs_kc_first_at[1], offs_kc_first_at[0]);
	}
	if (!offs_kc_new_ok)
		return;
	offs_kc_new_ok = false;
	/* Stored below, or it stays aside: a new id either way. */
	e->id = ++offs_kc_ids;
	set = offs_kc_set_of(e->key);
	/*
	 * The same frames at the same offset, in other slots: replaced; at
	 * another offset: a way that can serve both.
	 */
	for (w = 0; w < OFFS_KC_WAYS; w++) {
		o = &set->way[w];
		if (o->gen != e->gen || o->ip0 != e->ip0 || o->key != e->key ||
		    o->depth != e->depth ||
		    !offs_words_eq(o->ips, e->ips, e->depth))
			continue;
		if (o->sp0 == e->sp0) {
			*o = *e;
			return;
		}
		if (offs_kc_learn_fixed(o, e))
			return;
	}
	/* An empty or outdated way first, else each in turn. */
	for (w = 0; w < OFFS_KC_WAYS; w++)
		if (set->way[w].gen != e->gen || !set->way[w].depth)
			break;
	if (w == OFFS_KC_WAYS)
		w = set->next++ % OFFS_KC_WAYS;
	set->way[w] = *e;
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
