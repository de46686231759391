// SPDX-License-Identifier: GPL-2.0
/*
 * cache.c - skip what did not change.
 *
 * A thread that has not run since its previous sample has the same kernel
 * stack and the same reason, so it is counted again without pinning,
 * unwinding or classifying it.  "Has not run" means: its context-switch
 * count (nvcsw + nivcsw, bumped on every switch-out) and its whole state
 * word are unchanged, and it is neither on a CPU nor queued.  The state
 * word is compared too because some changes do not make a task run (the
 * 6.1+ freezer sets TASK_FROZEN on a sleeping task from outside).
 *
 * Entries are keyed by thread id and task start time, so a recycled pid
 * never inherits an old stack.  Entries of threads not visited in a tick
 * (exited, or no longer sampled) are freed at the end of that tick.  The
 * number of entries is bounded by the thread_cache parameter (0 disables
 * the cache); threads beyond it are always fully captured.
 *
 * Only the sampler kthread uses this file: no locking of its own.  Entries
 * hold a reference on their stack (table.c), taken and dropped under
 * offs_table_lock by table.c.
 */
#include <linux/slab.h>
#include <linux/hash.h>
#include <linux/sched.h>

#include "offsample.h"
#include "table.h"
#include "cache.h"

#define OFFS_TC_BITS	13

struct offs_tc_ent {
	struct hlist_node node;
	pid_t tid;
	u64 start_time;
	unsigned long ncsw;
	unsigned int state;
	u64 seen;		/* tick of the last visit */
	bool valid;		/* hit describes the thread as it is now */
	struct offs_hit hit;
};

static struct hlist_head offs_tc_buckets[1 << OFFS_TC_BITS];
static struct kmem_cache *offs_tc_cache;
static unsigned int offs_tc_n;
static u64 offs_tc_tick;

static struct hlist_head *offs_tc_head(pid_t tid)
{
	return &offs_tc_buckets[hash_32(tid, OFFS_TC_BITS)];
}

/* The entry of thread t; created if absent and there is room, else NULL. */
struct offs_tc_ent *offs_tc_lookup(struct task_struct *t)
{
	struct hlist_head *head = offs_tc_head(t->pid);
	unsigned int max = READ_ONCE(offs_thread_cache);
	struct offs_tc_ent *e;

	if (!max)
		return NULL;	/* disabled: entries go at the next sweep */
	hlist_for_each_entry(e, head, node) {
		if (e->tid == t->pid && e->start_time == t->start_time)
			goto found;
	}
	if (offs_tc_n >= max) {
		OFFS_STAT_ADD(cache_full, 1);
		return NULL;
	}
	e = kmem_cache_zalloc(offs_tc_cache, GFP_KERNEL | __GFP_NOWARN);
	if (!e)
		return NULL;
	e->tid = t->pid;
	e->start_time = t->start_time;
	hlist_add_head(&e->node, head);
	offs_tc_n++;
	atomic64_add(sizeof(*e), &offs_stats.mem_bytes);
found:
	e->seen = offs_tc_tick;
	return e;
}

/*
 * Lockless: is the thread exactly as it was at its last full capture?
 * A thread being woken right now may still pass; the sample is then what
 * it was a moment ago, which is what sampling means anyway.
 */
bool offs_tc_unchanged(struct task_struct *t, const struct offs_tc_ent *e)
{
	unsigned int state;

	if (!e->valid)
		return false;
	state = offs_task_state(t);
	smp_rmb();		/* state before on_cpu/on_rq, as in pin.c */
	if (state != e->state || READ_ONCE(t->on_cpu) ||
	    READ_ONCE(t->exit_state))
		return false;
	if (READ_ONCE(t->on_rq) && !offs_task_sched_delayed(t))
		return false;
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw) == e->ncsw;
}

struct offs_hit *offs_tc_hit(struct offs_tc_ent *e)
{
	return &e->hit;
}

/* After a full capture of a blocked thread recorded into e's hit. */
void offs_tc_store(struct offs_tc_ent *e, const struct offs_sample *s)
{
	e->ncsw = s->ncsw;
	e->state = s->state;
	e->valid = !!e->hit.stack;
}

void offs_tc_invalidate(struct offs_tc_ent *e)
{
	e->valid = false;
}

void offs_tc_tick_begin(void)
{
	offs_tc_tick++;
}

static void offs_tc_free(struct offs_tc_ent *e)
{
	hlist_del(&e->node);
	offs_table_hit_release(&e->hit);
	kmem_cache_free(offs_tc_cache, e);
	offs_tc_n--;
	atomic64_sub(sizeof(*e), &offs_stats.mem_bytes);
}

/* Free the entries of threads that were not visited in this tick. */
void offs_tc_sweep(bool all)
{
	struct offs_tc_ent *e;
	struct hlist_node *tmp;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(offs_tc_buckets); i++)
		hlist_for_each_entry_safe(e, tmp, &offs_tc_buckets[i], node)
			if (all || e->seen != offs_tc_tick)
				offs_tc_free(e);
	WRITE_ONCE(offs_stats.cache_entries, offs_tc_n);
}

int offs_tc_init(void)
{
	offs_tc_cache = KMEM_CACHE(offs_tc_ent, 0);
	return offs_tc_cache ? 0 : -ENOMEM;
}

/* The sampler is stopped. */
void offs_tc_exit(void)
{
	offs_tc_sweep(true);
	kmem_cache_destroy(offs_tc_cache);
}
