// SPDX-License-Identifier: GPL-2.0
/*
 * threadcache.c - skip what did not change.
 *
 * A thread that has not run since its previous sample has the same kernel
 * stack and the same reason, so it is counted again without pinning,
 * unwinding or classifying it.  "Has not run" means: its context-switch
 * count (nvcsw + nivcsw, bumped on every switch-out) and its whole state
 * word are unchanged, and it is neither on a CPU nor queued.  The state
 * word is compared too because some changes do not make a task run (the
 * 6.1+ freezer sets TASK_FROZEN on a sleeping task from outside).
 *
 * Entries are keyed by the task_struct's address and its start time.  Not
 * by thread id: a thread that execs from a non-leader takes over the
 * leader's tid and start time (de_thread()), and would inherit the old
 * program's entry.  A task_struct address is only reused by a task that
 * started later, and an exec keeps the address but changes the start
 * time, so the pair names exactly one task and one program.  The pointer
 * is only compared, never followed.  A capture is cached only if it is
 * whole (not degraded, see sampler.c) and only while the parameters that
 * shape a capture are those it was taken under (offs_config_seq).
 * Entries of threads not seen in a tick (exited, or no longer sampled)
 * are freed at the end of a tick once they are a sixteenth of the
 * entries, the cache is full, or 10 s have passed (offs_tc_sweep_due());
 * a tick in which every entry was seen (counted) does not look.  The
 * number of entries is bounded by the thread_cache parameter (0 disables
 * the cache); threads beyond it are always fully captured.  The hash table
 * follows the number of entries (one to eight buckets per entry, at least
 * 1024 buckets), so a lookup is about one comparison: it is resized at the
 * end of a tick, and stays as it is if the new array cannot be allocated.
 *
 * Only the sampler kthread uses this file: no locking of its own.  Entries
 * hold a reference on their stack (table.c), taken and dropped under
 * offs_table_lock by table.c.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/sched.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "threadcache.h"

#define OFFS_TC_MIN_BITS	10
#define OFFS_TC_MAX_BITS	22	/* thread_cache is at most 4194304 */

struct hlist_head *offs_tc_buckets;
unsigned int offs_tc_bits;
static struct kmem_cache *offs_tc_cache;
static unsigned int offs_tc_n;
u64 offs_tc_tick;
unsigned int offs_tc_seen;
struct offs_tc_walk_state offs_tc_walk;

static struct hlist_head *offs_tc_alloc_buckets(unsigned int bits)
{
	struct hlist_head *b;

	/* kvcalloc() zeroes: an empty hlist_head is a NULL first pointer. */
	b = kvcalloc(1U << bits, sizeof(*b), GFP_KERNEL | __GFP_NOWARN);
	if (b)
		atomic64_add((1ULL << bits) * sizeof(*b), &offs_stats.memory_bytes);
	return b;
}

static void offs_tc_free_buckets(struct hlist_head *b, unsigned int bits)
{
	kvfree(b);
	atomic64_sub((1ULL << bits) * sizeof(*b), &offs_stats.memory_bytes);
}

/* Move every entry into a table of 2^bits buckets (if one can be had). */
static void offs_tc_rehash(unsigned int bits)
{
	struct hlist_head *nb = offs_tc_alloc_buckets(bits);
	struct hlist_head *ob = offs_tc_buckets;
	unsigned int obits = offs_tc_bits, i;
	struct offs_tc_ent *e;
	struct hlist_node *tmp;

	if (!nb)
		return;
	for (i = 0; i < (1U << obits); i++)
		hlist_for_each_entry_safe(e, tmp, &ob[i], node) {
			hlist_del(&e->node);
			hlist_add_head(&e->node, &nb[hash_ptr(e->task, bits)]);
		}
	offs_tc_buckets = nb;
	offs_tc_bits = bits;
	offs_tc_free_buckets(ob, obits);
}

/* The entry of thread t; created if absent and there is room, else NULL. */
struct offs_tc_ent *offs_tc_lookup(struct task_struct *t)
{
	struct hlist_head *head = offs_tc_head(t);
	unsigned int max = READ_ONCE(offs_thread_cache);
	struct offs_tc_ent *e;

	if (!max)
		return NULL;	/* disabled: entries go at the next sweep */
	e = offs_tc_find(t);
	if (e)
		goto found;
	if (offs_tc_n >= max) {
		OFFS_STAT_ADD(cache_full, 1);
		return NULL;
	}
	e = kmem_cache_zalloc(offs_tc_cache, GFP_KERNEL | __GFP_NOWARN);
	if (!e)
		return NULL;
	e->task = t;
	e->start_time = t->start_time;
	e->seen = offs_tc_tick;
	offs_tc_seen++;
	hlist_add_head(&e->node, head);
	offs_tc_n++;
	atomic64_add(sizeof(*e), &offs_stats.memory_bytes);
found:
	offs_tc_mark_seen(e);
	return e;
}

/* Is the thread exactly as it was at its last full capture? */
bool offs_tc_unchanged(struct task_struct *t, const struct offs_tc_ent *e)
{
	return offs_tc_current(t, e, READ_ONCE(offs_config_seq));
}

/* Start of a tick (offs_tick_lock held): see offs_tc_walk_hit(). */
void offs_tc_tick_begin(unsigned int config_seq)
{
	offs_tc_tick++;
	offs_tc_seen = 0;
	offs_tc_walk.config_seq = config_seq;
	offs_tc_walk.key_fields = READ_ONCE(offs_key_fields);
	offs_tc_walk.gen_seq = offs_table_gen_seq();
	offs_tc_walk.blockers = READ_ONCE(offs_blockers);
	offs_tc_walk.on = READ_ONCE(offs_thread_cache);
}

/*
 * t is not visited at this tick, but a consumer may want it at the next
 * (session.c): keep its entry (mark it seen).  rcu_read_lock() held.
 */
void offs_tc_touch(struct task_struct *t)
{
	struct offs_tc_ent *e;

	if (!offs_tc_walk.on)
		return;
	e = offs_tc_find(t);
	if (e)
		offs_tc_mark_seen(e);
}

struct offs_hit *offs_tc_hit(struct offs_tc_ent *e)
{
	return &e->hit;
}

/*
 * After a full capture of a blocked thread recorded into e's hit.  A
 * degraded capture is remembered (its references are reused) but not
 * served: the next tick captures the thread again.
 */
void offs_tc_store(struct offs_tc_ent *e, const struct offs_sample *s,
		   unsigned int config_seq)
{
	e->ncsw = s->ncsw;
	e->state = s->state;
	e->config_seq = config_seq;
	e->hit.fx = s->fx;
	e->valid = e->hit.stack && !s->degraded;
	if (e->hit.stack && s->degraded)
		OFFS_STAT_ADD(cache_degraded, 1);
}

/* The context-switch count the cached capture was taken at. */
unsigned long offs_tc_ncsw(const struct offs_tc_ent *e)
{
	return e->ncsw;
}

void offs_tc_invalidate(struct offs_tc_ent *e)
{
	e->valid = false;
}

static void offs_tc_free(struct offs_tc_ent *e)
{
	hlist_del(&e->node);
	offs_table_hit_release(&e->hit);
	kmem_cache_free(offs_tc_cache, e);
	offs_tc_n--;
	atomic64_sub(sizeof(*e), &offs_stats.memory_bytes);
}

/*
 * Millions of entries may go in one sweep (a mass exit, thread_cache
 * lowered from millions): let the scheduler in every 1024 frees.  Only
 * the sampler kthread touches the cache, so the walk may pause anywhere.
 */
static void offs_tc_relax(unsigned int *n)
{
	if (++*n % 1024 == 0)
		cond_resched();
}

/* jiffies at the last sweep that freed the unseen entries. */
static unsigned long offs_tc_swept;

/* The longest an unseen entry stays, if nothing else makes a sweep due. */
#define OFFS_TC_SWEEP_EVERY	(10 * HZ)

/*
 * Is this tick's sweep worth its cost?  Finding the unseen entries means
 * going through the buckets (about half of them on average), which at
 * 1,000 threads was 4% of a tick whose threads had not changed (make
 * bench BENCH_MODE=icount, issue 52), for the one or two short-lived
 * threads a busy host has in any tick.  An unseen entry is harmless until
 * then: it names one task (address and start time) and is checked like
 * any other before it serves.  So they go once they are a sixteenth of
 * the entries, once the cache is at its bound, or OFFS_TC_SWEEP_EVERY
 * after the last sweep: with a second there, a host where a process
 * started and ended now and then (perf bench sched pipe's timed runs)
 * paid a walk of the buckets every second: 150k instructions in 18
 * ticks at 2,000 threads and 19 Hz (tests/bench/insnprof.sh).
 */
static bool offs_tc_sweep_due(unsigned int max)
{
	unsigned int unseen = offs_tc_n - offs_tc_seen;

	return unseen && (unseen >= offs_tc_n / 16 || offs_tc_n >= max ||
			  time_after_eq(jiffies,
					offs_tc_swept + OFFS_TC_SWEEP_EVERY));
}

/*
 * The sweep proper, from now (offs_tc_swept): free the entries of threads
 * that were not visited in this tick, or every entry with all.  Stops once
 * the unseen entries are gone: each free lowers offs_tc_n.
 */
static void offs_tc_sweep_now(bool all, unsigned int *n)
{
	struct offs_tc_ent *e;
	struct hlist_node *tmp;
	unsigned int i;

	offs_tc_swept = jiffies;
	for (i = 0; i < (1U << offs_tc_bits); i++) {
		if (!all && offs_tc_seen >= offs_tc_n)
			break;
		hlist_for_each_entry_safe(e, tmp, &offs_tc_buckets[i], node)
			if (all || e->seen != offs_tc_tick) {
				offs_tc_free(e);
				offs_tc_relax(n);
			}
	}
}

/*
 * Free the entries of threads that were not visited in this tick (when
 * due: offs_tc_sweep_due(); all of them with all), and any beyond
 * thread_cache (lowered since they were made), then size the table for
 * the entries left: grow when there are more entries than buckets, shrink
 * when there are eight or more buckets per entry (down to
 * OFFS_TC_MIN_BITS).
 */
void offs_tc_sweep(bool all)
{
	unsigned int max = READ_ONCE(offs_thread_cache);
	struct offs_tc_ent *e;
	struct hlist_node *tmp;
	unsigned int i, want, n = 0;

	if (all || offs_tc_sweep_due(max))
		offs_tc_sweep_now(all, &n);
	/*
	 * Over the bound: the parameter was lowered.  The threads whose
	 * entries go are captured in full when next visited, and find no
	 * room for a new entry (cache_full) while the rest keep theirs.
	 */
	for (i = 0; offs_tc_n > max && i < (1U << offs_tc_bits); i++)
		hlist_for_each_entry_safe(e, tmp, &offs_tc_buckets[i], node) {
			if (offs_tc_n <= max)
				break;
			offs_tc_free(e);
			offs_tc_relax(&n);
		}
	WRITE_ONCE(offs_stats.cache_entries, offs_tc_n);
	if (all)
		return;
	want = clamp_t(unsigned int, order_base_2(offs_tc_n),
		       OFFS_TC_MIN_BITS, OFFS_TC_MAX_BITS);
	if (want > offs_tc_bits || want + 2 < offs_tc_bits)
		offs_tc_rehash(want);
}

/* Bytes per entry, for the thread_cache limit (main.c). */
size_t offs_tc_entry_size(void)
{
	return sizeof(struct offs_tc_ent);
}

int offs_tc_init(void)
{
	offs_tc_swept = jiffies;
	offs_tc_buckets = offs_tc_alloc_buckets(OFFS_TC_MIN_BITS);
	if (!offs_tc_buckets)
		return -ENOMEM;
	offs_tc_bits = OFFS_TC_MIN_BITS;
	offs_tc_cache = KMEM_CACHE(offs_tc_ent, 0);
	if (!offs_tc_cache) {
		offs_tc_free_buckets(offs_tc_buckets, offs_tc_bits);
		return -ENOMEM;
	}
	return 0;
}

/* The sampler is stopped. */
void offs_tc_exit(void)
{
	offs_tc_sweep(true);
	kmem_cache_destroy(offs_tc_cache);
	offs_tc_free_buckets(offs_tc_buckets, offs_tc_bits);
	offs_tc_buckets = NULL;
}
