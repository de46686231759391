/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_THREADCACHE_H
#define OFFS_THREADCACHE_H

#include <linux/hash.h>
#include <linux/list.h>
#include <linux/sched.h>

#include "offsample.h"
#include "table.h"

/*
 * The walk's fast path, offs_tc_walk_hit(), is inline in the sampler's
 * walk (sampler.c): it runs for every thread at every tick, and two calls
 * there were about 15 of the ~150 instructions of a warm visit (make bench
 * BENCH_MODE=icount, issue 52).  So the entries, the hash table and what
 * the tick compares with are declared here.  Only threadcache.c and the
 * inline functions below use them, all from the sampler kthread: no
 * locking of their own.
 */
struct offs_tc_ent {
	struct hlist_node node;
	const struct task_struct *task;	/* identity only, never followed */
	u64 start_time;
	unsigned long ncsw;
	unsigned int state;
	unsigned int config_seq;	/* offs_config_seq at the capture */
	u64 seen;		/* tick of the last visit */
	bool valid;		/* hit describes the thread as it is now */
	struct offs_hit hit;
};

extern struct hlist_head *offs_tc_buckets;
extern unsigned int offs_tc_bits;
extern u64 offs_tc_tick;		/* ticks so far */
extern unsigned int offs_tc_seen;	/* entries seen in this tick */

/*
 * What offs_tc_walk_hit() compares with, read once per tick: the
 * parameters' sequence and key fields of the tick, the current
 * generation, whether lock holders are looked up.
 */
struct offs_tc_walk_state {
	unsigned int config_seq;
	unsigned int key_fields;
	u64 gen_seq;
	bool blockers;
	bool on;
};

extern struct offs_tc_walk_state offs_tc_walk;

/* The entry's thread is visited in this tick: keep the entry. */
static inline void offs_tc_mark_seen(struct offs_tc_ent *e)
{
	if (e->seen != offs_tc_tick) {
		e->seen = offs_tc_tick;
		offs_tc_seen++;
	}
}

static inline struct hlist_head *offs_tc_head(const struct task_struct *t)
{
	return &offs_tc_buckets[hash_ptr(t, offs_tc_bits)];
}

/* Thread t's entry, or NULL. */
static inline struct offs_tc_ent *offs_tc_find(struct task_struct *t)
{
	struct offs_tc_ent *e;

	hlist_for_each_entry(e, offs_tc_head(t), node) {
		if (e->task == t && e->start_time == t->start_time)
			return e;
	}
	return NULL;
}

/*
 * Lockless: are the task's fields (state word, queued, on a CPU, switch
 * count) as they were at the cached capture?  A thread being woken right
 * now may still pass; the sample is then what it was a moment ago, which
 * is what sampling means anyway.
 */
static inline bool offs_tc_same(struct task_struct *t,
				const struct offs_tc_ent *e)
{
	unsigned int state;

	/* The order of pin.c (try_to_wake_up()): state, on_rq, on_cpu. */
	state = offs_task_state(t);
	smp_rmb();	/* on_rq after the state */
	if (state != e->state || READ_ONCE(t->exit_state))
		return false;
	if (READ_ONCE(t->on_rq) && !offs_task_sched_delayed(t))
		return false;
	smp_rmb();	/* on_cpu after on_rq */
	return !offs_task_ran(t, e->ncsw);
}

/*
 * Does e describe t as it is now: a whole capture, taken under the
 * parameters' sequence config_seq, and t has not changed since?
 */
static inline bool offs_tc_current(struct task_struct *t,
				   const struct offs_tc_ent *e,
				   unsigned int config_seq)
{
	return e->valid && e->config_seq == config_seq && offs_tc_same(t, e);
}

/*
 * The sampler's RCU walk (sampler.c): count thread t again right there if
 * it has not changed since its cached capture (offs_tc_unchanged()) and
 * its record can take the sample without offs_table_lock
 * (offs_table_again_fast()).  Returns the record, or NULL when t must be
 * visited: no entry yet, changed, captured under other parameters than
 * this tick's, waiting on a lock whose holder is looked up (that reads the
 * waiter's memory, which may sleep), or a record that needs the lock.
 * Never allocates; marks the entry seen, as offs_tc_lookup() does.
 * rcu_read_lock() held.
 */
static inline struct offs_rec *offs_tc_walk_hit(struct task_struct *t,
						bool *first)
{
	struct offs_tc_ent *e;

	if (!offs_tc_walk.on)
		return NULL;
	e = offs_tc_find(t);
	if (!e)
		return NULL;
	offs_tc_mark_seen(e);
	if (!offs_tc_current(t, e, offs_tc_walk.config_seq) ||
	    (e->hit.fx.cand != OFFS_FX_NONE && offs_tc_walk.blockers))
		return NULL;
	return offs_table_again_fast(t, &e->hit, offs_tc_walk.gen_seq,
				     offs_tc_walk.key_fields, first);
}

int offs_tc_init(void);
size_t offs_tc_entry_size(void);
void offs_tc_exit(void);
void offs_tc_tick_begin(unsigned int config_seq);
void offs_tc_sweep(bool all);
struct offs_tc_ent *offs_tc_lookup(struct task_struct *t);
void offs_tc_touch(struct task_struct *t);
bool offs_tc_unchanged(struct task_struct *t, const struct offs_tc_ent *e);
struct offs_hit *offs_tc_hit(struct offs_tc_ent *e);
void offs_tc_store(struct offs_tc_ent *e, const struct offs_sample *s,
		   unsigned int config_seq);
void offs_tc_invalidate(struct offs_tc_ent *e);
unsigned long offs_tc_ncsw(const struct offs_tc_ent *e);

#endif /* OFFS_THREADCACHE_H */
