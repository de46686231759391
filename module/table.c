// SPDX-License-Identifier: GPL-2.0
/*
 * table.c - in-kernel aggregation.
 *
 * Two structures, both bounded by the max_stacks parameter:
 *
 *  - the stack store: every distinct kernel stack is stored once
 *    (hash-consed) with its frame facts computed once (classify.c), and
 *    reference-counted by the records that use it;
 *
 *  - generations: (reason, state, comm, cgroup, system call, kernel stack,
 *    user stack [, pid, tid, tname, wait object]: the key parameter) ->
 *    count.  The sampler adds to the current generation.  A drain or reset swaps in
 *    an empty one; the old one becomes immutable and is freed when its last
 *    reader is done.
 *
 * Locking: offs_table_lock (a mutex: every user is a kthread or a process
 * in a system call) protects the stack store, the current generation
 * pointer and the contents of the current generation.  Nobody holds a
 * lock of a sampled task while waiting for it (see ustack.c), and readers
 * let go of it every OFFS_LOCK_BATCH records.  offs_tick_lock is
 * held by the sampler for a whole tick and by swaps, so a generation always
 * holds whole ticks.  Order: offs_tick_lock, then offs_table_lock.
 * Allocations under offs_table_lock use GFP_KERNEL: reclaim never needs
 * this lock.  A failed allocation is a counted dropped sample.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/ktime.h>
#include <linux/string.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "session.h"
#include "ustack.h"
#include "wobj.h"
#include "blocker.h"
#include "classify.h"
#include "hash.h"

/* Stack store, current generation pointer and its contents. */
DEFINE_MUTEX(offs_table_lock);
/* Held by the sampler for a whole tick and by generation swaps. */
static DEFINE_MUTEX(offs_tick_lock);

static struct hlist_head *offs_stack_buckets;
static unsigned int offs_stack_nbuckets;
static unsigned int offs_nstacks;

static struct offs_gen *offs_cur;
static u64 offs_gen_seq;

/*
 * The last full capture's stack and its record in a generation: the
 * threads of a pool wait where their neighbours in the walk wait, and a
 * cold tick (thread_cache=0, or threads that all ran) records them one
 * after the other.  A comparison with the last one then takes the place
 * of a hash and a bucket's search, for the stack and for the record.
 * offs_table_lock; forgotten when the stack is freed, or the record's
 * generation (records live as long as their generation).  Not for a
 * session's window: its records would take turns with the default's.
 */
static struct offs_stack *offs_last_st;
static u64 offs_last_kid;	/* its capture's stack cache id (unwind.c) */
static struct offs_gen *offs_last_gen;
static struct offs_rec *offs_last_rec;	/* its key: offs_last_key */

/*
 * Old generations: swapped out, not yet released (kept alive by open
 * files).  Two classes among them, each bounded by max_retired on its
 * own, so that group readers can never make the administrator's drains
 * fail: those group= readers hold (offs_retired_group), and those anyone else
 * (a drain, a root reader of stacks) held when they were swapped out
 * (offs_retired_root).  A generation held by both counts in both, until
 * only group readers hold it (offs_gen_put()): at most 2 * max_retired
 * old generations in all.
 */
static unsigned int offs_retired;
static unsigned int offs_retired_group;
static unsigned int offs_retired_root;
static struct kmem_cache *offs_rec_cache;

#define OFFS_BUCKETS_MIN	64U
#define OFFS_BUCKETS_MAX	262144U

static unsigned int offs_nbuckets_for(unsigned int max)
{
	return roundup_pow_of_two(clamp(max, OFFS_BUCKETS_MIN,
					OFFS_BUCKETS_MAX));
}

static void offs_mem_add(long bytes)
{
	atomic64_add(bytes, &offs_stats.memory_bytes);
}

/* ---- stack store (offs_table_lock held) ---- */

static size_t offs_stack_size(unsigned int depth)
{
	return struct_size((struct offs_stack *)NULL, ips, depth);
}

static u32 offs_stack_hash(const unsigned long *ips, unsigned int depth,
			   bool truncated, bool pc_leaf)
{
	return offs_hash_words(ips, depth,
			       depth | (truncated << 16) | (pc_leaf << 17));
}

/*
 * Is st the stack s captured?  frames: compare the frames too (not when
 * both came from the same stack cache entry, offs_stack_get()).  Inline:
 * the constant frames folds away.
 */
static __always_inline bool offs_stack_is(const struct offs_stack *st,
					  const struct offs_sample *s,
					  bool frames)
{
	return st->depth == s->depth && st->truncated == s->truncated &&
	       st->pc_leaf == s->oncpu &&
	       (!frames || offs_words_eq(st->ips, s->ips, s->depth));
}

/*
 * The stored stack of s, with a reference taken, stored now if it was
 * not; compared with the last one returned (offs_last_st) before it is
 * hashed.
 */
static struct offs_stack *offs_stack_get(const struct offs_sample *s)
{
	struct hlist_head *head;
	struct offs_stack *st = offs_last_st;
	bool same_kid;
	size_t size;
	u32 hash;

	lockdep_assert_held(&offs_table_lock);
	/*
	 * From the same entry of the kernel stack cache as the last one: the
	 * same frames, not compared again (unwind.c).
	 */
	same_kid = s->kstack_id && s->kstack_id == offs_last_kid;
	if (st && offs_stack_is(st, s, !same_kid))
		goto found;
	hash = offs_stack_hash(s->ips, s->depth, s->truncated, s->oncpu);
	head = &offs_stack_buckets[hash & (offs_stack_nbuckets - 1)];
	hlist_for_each_entry(st, head, node) {
		if (st->hash == hash && offs_stack_is(st, s, true))
			goto found;
	}
	if (offs_nstacks >= READ_ONCE(offs_max_stacks))
		return ERR_PTR(-ENOSPC);
	size = offs_stack_size(s->depth);
	st = kmalloc(size, GFP_KERNEL | __GFP_NOWARN);
	if (!st)
		return ERR_PTR(-ENOMEM);
	st->hash = hash;
	st->depth = s->depth;
	st->truncated = s->truncated;
	st->pc_leaf = s->oncpu;
	st->refs = 1;
	memcpy(st->ips, s->ips, s->depth * sizeof(*s->ips));
	/* Frame names are looked up once per distinct stack, here. */
	offs_frames_info(st->ips, st->depth, &st->info);
	hlist_add_head(&st->node, head);
	offs_nstacks++;
	offs_mem_add(offs_ksize(size));
	goto remember;
found:
	st->refs++;
remember:
	offs_last_st = st;
	offs_last_kid = s->kstack_id;
	return st;
}

static void offs_stack_put(struct offs_stack *st);

/* Drop the references a record or a cache entry holds. */
static void offs_rec_put_refs(struct offs_stack *st, struct offs_ustack *us,
			      struct offs_wobj *w)
{
	if (st)
		offs_stack_put(st);
	if (us)
		offs_ustack_put(us);
	if (w)
		offs_wobj_put(w);
}

static void offs_stack_put(struct offs_stack *st)
{
	lockdep_assert_held(&offs_table_lock);
	if (--st->refs)
		return;
	if (st == offs_last_st)
		offs_last_st = NULL;
	hlist_del(&st->node);
	offs_nstacks--;
	offs_mem_add(-(long)offs_ksize(offs_stack_size(st->depth)));
	kfree(st);
}

/*
 * What one distinct stack can pin in the table at worst, as allocated
 * (kmalloc rounds up to its size classes): a kernel stack of the largest
 * depth with two buckets of the stack store, and a record and a waiter ->
 * holder edge in the current generation and in each old one that readers
 * may keep (retired for root, as many for group=), and in the sessions'
 * windows (session.c), with their buckets (up
 * to two per record, the count rounded up to a power of two, and an eighth
 * as many for edges).
 */
u64 offs_table_unit_cost(unsigned int retired)
{
	const u64 bucket = sizeof(struct hlist_head);

	return offs_ksize(sizeof(struct offs_stack) +
			  OFFS_MAX_DEPTH_LIMIT * sizeof(unsigned long)) +
	       2 * bucket +
	       /*
		* Sessions: each a window counted and one read, of at most
		* 1/OFFS_SESSIONS_MAX of max_stacks (offs_gen_max()).
		*/
	       (1 + 2 * (u64)retired + 2) * (sizeof(struct offs_rec) +
					 offs_ksize(sizeof(struct offs_edge)) +
					 2 * bucket + bucket / 4);
}

unsigned int offs_table_nstacks(void)
{
	return READ_ONCE(offs_nstacks);
}

unsigned int offs_table_retired(void)
{
	return READ_ONCE(offs_retired);
}

unsigned int offs_table_retired_group(void)
{
	return READ_ONCE(offs_retired_group);
}

/* ---- generations ---- */

/*
 * gfp: GFP_KERNEL_ACCOUNT when a reader causes the allocation (a drain or
 * reset), so that it is charged to the reader's memory cgroup.
 */
static struct offs_gen *offs_gen_alloc(gfp_t gfp)
{
	unsigned int n = offs_nbuckets_for(READ_ONCE(offs_max_stacks));
	struct offs_gen *gen;

	gen = kzalloc(sizeof(*gen), gfp);
	if (!gen)
		return NULL;
	gen->buckets = kvcalloc(n, sizeof(*gen->buckets), gfp);
	/* Fewer edges than records: an eighth as many buckets. */
	gen->nebuckets = max(n / 8, OFFS_BUCKETS_MIN);
	gen->ebuckets = kvcalloc(gen->nebuckets, sizeof(*gen->ebuckets), gfp);
	if (!gen->buckets || !gen->ebuckets) {
		kvfree(gen->buckets);
		kvfree(gen->ebuckets);
		kfree(gen);
		return NULL;
	}
	gen->nbuckets = n;
	kref_init(&gen->ref);
	INIT_LIST_HEAD(&gen->recs);
	INIT_LIST_HEAD(&gen->edges);
	gen->start_real_ns = ktime_get_real_ns();
	gen->start_mono_ns = ktime_get_ns();
	offs_mem_add(sizeof(*gen) + n * sizeof(*gen->buckets) +
		     gen->nebuckets * sizeof(*gen->ebuckets));
	return gen;
}

/*
 * Records (and edges) a generation may hold: max_stacks; a session's
 * window a share of it, so that all sessions' windows together hold no
 * more than two generations (offs_table_unit_cost()).
 */
static unsigned int offs_gen_max(const struct offs_gen *gen)
{
	unsigned int max = READ_ONCE(offs_max_stacks);

	return gen->session ? max(max / OFFS_SESSIONS_MAX, 16U) : max;
}

/* Long walks let go of offs_table_lock every this many records. */
#define OFFS_LOCK_BATCH		256

/* Let the sampler (or another reader) in; offs_table_lock held. */
static void offs_table_relax(void)
{
	mutex_unlock(&offs_table_lock);
	cond_resched();
	mutex_lock(&offs_table_lock);
}

static void offs_gen_release(struct kref *ref)
{
	struct offs_gen *gen = container_of(ref, struct offs_gen, ref);
	struct offs_edge *e, *tmp;
	struct offs_rec *rec;
	unsigned int n = 0;

	/*
	 * Callers of offs_gen_put() never hold offs_table_lock.  Nobody can
	 * reach this generation any more (cache entries that still point at
	 * its records check the generation first), so the lock can be let
	 * go between batches: it protects the stores the records point to.
	 */
	mutex_lock(&offs_table_lock);
	WARN_ON_ONCE(gen->group_refs);
	if (gen == offs_last_gen)
		offs_last_gen = NULL;
	if (gen->retired)
		offs_retired--;
	if (gen->root_held)
		offs_retired_root--;
	/* Edges point at records: free them first (they hold no references). */
	list_for_each_entry_safe(e, tmp, &gen->edges, list) {
		kfree(e);
		if (++n % OFFS_LOCK_BATCH == 0)
			offs_table_relax();
	}
	while (!list_empty(&gen->recs)) {
		rec = list_first_entry(&gen->recs, struct offs_rec, list);
		list_del(&rec->list);
		offs_rec_put_refs(rec->stack, rec->ustack, rec->wobj);
		kmem_cache_free(offs_rec_cache, rec);
		if (++n % OFFS_LOCK_BATCH == 0)
			offs_table_relax();
	}
	mutex_unlock(&offs_table_lock);
	offs_mem_add(-(long)(gen->nrecs * sizeof(struct offs_rec) +
			     gen->nedges * offs_ksize(sizeof(struct offs_edge)) +
			     sizeof(*gen) +
			     gen->nbuckets * sizeof(*gen->buckets) +
			     gen->nebuckets * sizeof(*gen->ebuckets)));
	kvfree(gen->buckets);
	kvfree(gen->ebuckets);
	kfree(gen);
}

/*
 * Every reference but a generation's last is dropped under
 * offs_table_lock, as every reference is taken: the count there is then
 * exact, and a retired generation stops counting against root's bound
 * (offs_retired_root) as soon as only group= readers hold it.  The last
 * reference is dropped without the lock (offs_gen_release() takes it).
 */
static bool offs_gen_drop_locked(struct offs_gen *gen)
{
	lockdep_assert_held(&offs_table_lock);
	if (!refcount_dec_not_one(&gen->ref.refcount))
		return false;	/* the last: kref_put() after unlocking */
	if (gen->root_held && kref_read(&gen->ref) <= gen->group_refs) {
		gen->root_held = false;
		offs_retired_root--;
	}
	return true;
}

void offs_gen_put(struct offs_gen *gen)
{
	bool dropped;

	if (!gen)
		return;
	mutex_lock(&offs_table_lock);
	dropped = offs_gen_drop_locked(gen);
	mutex_unlock(&offs_table_lock);
	if (!dropped)
		kref_put(&gen->ref, offs_gen_release);
}

struct offs_gen *offs_table_get_current(void)
{
	struct offs_gen *gen;

	mutex_lock(&offs_table_lock);
	gen = offs_cur;
	kref_get(&gen->ref);
	mutex_unlock(&offs_table_lock);
	return gen;
}

/*
 * The current generation for a group= reader of stacks, or -EBUSY when
 * group readers already hold max_retired old generations (the one taken
 * now becomes old at the next drain or reset).  Release it with
 * offs_table_put_group().
 */
struct offs_gen *offs_table_get_current_group(void)
{
	struct offs_gen *gen;
	unsigned int max = READ_ONCE(offs_max_retired);

	mutex_lock(&offs_table_lock);
	if (offs_retired_group >= max) {
		mutex_unlock(&offs_table_lock);
		atomic64_inc(&offs_stats.group_opens_refused);
		return ERR_PTR(-EBUSY);
	}
	gen = offs_cur;
	kref_get(&gen->ref);
	gen->group_refs++;
	mutex_unlock(&offs_table_lock);
	return gen;
}

/* The group count and the reference go together: a swap sees both or neither. */
void offs_table_put_group(struct offs_gen *gen)
{
	bool dropped;

	mutex_lock(&offs_table_lock);
	if (!--gen->group_refs && gen->retired)
		offs_retired_group--;
	dropped = offs_gen_drop_locked(gen);
	mutex_unlock(&offs_table_lock);
	if (!dropped)
		kref_put(&gen->ref, offs_gen_release);
}

/*
 * Start a new generation.  With keep, the old one is returned to the
 * caller (who owns its reference); otherwise it is released.  Waits for a
 * tick in progress, so generations hold whole ticks.  On allocation
 * failure nothing changes and an ERR_PTR is returned.
 */
struct offs_gen *offs_table_swap(bool keep)
{
	struct offs_gen *new, *old;
	unsigned int max;
	bool held;

	new = offs_gen_alloc(GFP_KERNEL_ACCOUNT);
	if (!new)
		return ERR_PTR(-ENOMEM);
	/* A tick can take a while: a killed reader does not wait for it. */
	if (mutex_lock_killable(&offs_tick_lock)) {
		offs_gen_put(new);
		return ERR_PTR(-EINTR);
	}
	mutex_lock(&offs_table_lock);
	old = offs_cur;
	/*
	 * Bound the generations readers keep alive: the old one stays alive
	 * if it is handed to a drain, or if readers still hold it.  Besides
	 * offs_cur's own reference, group_refs of them are group= readers'
	 * (bounded in offs_table_get_current_group()); any other holder, or
	 * the drain, counts it against this bound, also when group readers
	 * hold it too (they may close first), until only group readers are
	 * left (offs_gen_put()).  No reference is taken or dropped (but a
	 * last) without offs_table_lock.
	 */
	max = READ_ONCE(offs_max_retired);
	held = keep || kref_read(&old->ref) > 1 + old->group_refs;
	if (held && offs_retired_root >= max) {
		mutex_unlock(&offs_table_lock);
		mutex_unlock(&offs_tick_lock);
		offs_gen_put(new);
		atomic64_inc(&offs_stats.swaps_refused);
		pr_warn_ratelimited("offsample: %s refused: %u old generations are still held open by readers (max_retired=%u)\n",
				    keep ? "drain" : "reset",
				    offs_retired_root, max);
		return ERR_PTR(-EBUSY);
	}
	old->end_real_ns = ktime_get_real_ns();
	old->end_mono_ns = ktime_get_ns();
	old->retired = true;
	offs_retired++;
	if (old->group_refs)
		offs_retired_group++;
	if (held) {
		old->root_held = true;
		offs_retired_root++;
	}
	new->seq = ++offs_gen_seq;
	offs_cur = new;
	mutex_unlock(&offs_table_lock);
	mutex_unlock(&offs_tick_lock);
	if (keep)
		return old;
	offs_gen_put(old);
	return NULL;
}

/* ---- records ---- */

struct offs_key {
	struct offs_stack *stack;
	struct offs_ustack *ustack;
	struct offs_wobj *wobj;
	long syscall;
	u64 cgid;
	pid_t tgid;
	pid_t tid;
	u8 reason;
	char state_ch;
	char comm[TASK_COMM_LEN];
	char tname[TASK_COMM_LEN];
};

static struct offs_key offs_last_key;	/* see offs_last_st */

/*
 * Every field of k is written; its padding is not, and must be zero (the
 * key is hashed and compared as words): k is offs_key_buf, never written
 * whole, or a key the caller zeroed.  (A memset here was a sixth of the
 * recording's instructions, issue 52.)
 */
static void offs_key_fill_state(struct offs_key *k, const struct offs_sample *s,
				struct offs_stack *st, enum offs_reason reason,
				char state_ch, unsigned int fields)
{
	BUILD_BUG_ON(sizeof(*k) % sizeof(long));
	k->stack = st;
	k->reason = reason;
	k->state_ch = state_ch;
	k->syscall = s->syscall;
	k->cgid = s->cgid;
	memcpy(k->comm, s->comm, TASK_COMM_LEN);
	k->tgid = fields & (OFFS_KEY_PID | OFFS_KEY_TID) ? s->tgid : 0;
	k->tid = fields & OFFS_KEY_TID ? s->tid : 0;
	if (fields & (OFFS_KEY_TID | OFFS_KEY_TNAME))
		memcpy(k->tname, s->tname, TASK_COMM_LEN);
	else
		memset(k->tname, 0, TASK_COMM_LEN);
}

/*
 * A key under fields (a consumer's key parameter): the wait object w was
 * captured if any consumer's key has wobj, and is part of this key only
 * if fields has it.
 */
static void offs_key_fill(struct offs_key *k, const struct offs_sample *s,
			  struct offs_stack *st, enum offs_reason reason,
			  struct offs_wobj *w, unsigned int fields)
{
	offs_key_fill_state(k, s, st, reason, s->state_ch, fields);
	k->ustack = s->ustack;
	k->wobj = fields & OFFS_KEY_WOBJ ? w : NULL;
}

static void offs_key_fill_hit(struct offs_key *k, const struct offs_sample *s,
			      const struct offs_hit *hit, unsigned int fields)
{
	offs_key_fill_state(k, s, hit->stack, hit->reason, hit->state_ch,
			    fields);
	k->ustack = hit->ustack;
	k->wobj = fields & OFFS_KEY_WOBJ ? hit->wobj : NULL;
	k->syscall = hit->syscall;
}

static bool offs_rec_match(const struct offs_rec *r, const struct offs_key *k)
{
	return r->stack == k->stack && r->ustack == k->ustack &&
	       r->wobj == k->wobj && r->syscall == k->syscall &&
	       r->cgid == k->cgid && r->reason == k->reason &&
	       r->state_ch == k->state_ch && r->tgid == k->tgid &&
	       r->tid == k->tid && offs_comm_eq(r->comm, k->comm) &&
	       offs_comm_eq(r->tname, k->tname);
}

static void offs_drop(struct offs_gen *gen, enum offs_reason reason, int err)
{
	gen->dropped++;
	gen->dropped_reason[reason]++;
	if (gen->session) {
		OFFS_STAT_ADD(session_dropped, 1);
		return;
	}
	OFFS_STAT_ADD(dropped, 1);
	if (err == -ENOSPC)
		OFFS_STAT_ADD(dropped_table_full, 1);
	else
		OFFS_STAT_ADD(dropped_nomem, 1);
}

/*
 * Count one sample under key in gen (the current generation, or a
 * session's window).  The record takes a reference on key->stack when it
 * is created.  Returns the record, or NULL if the sample was dropped
 * (counted).
 */
static struct offs_rec *offs_gen_count(struct offs_gen *gen,
				       const struct offs_key *key)
{
	struct hlist_head *head;
	struct offs_rec *rec;
	u32 khash;

	lockdep_assert_held(&offs_table_lock);
	if (gen == offs_last_gen &&
	    offs_words_same((const unsigned long *)key,
			    (const unsigned long *)&offs_last_key,
			    sizeof(*key) / sizeof(long))) {
		rec = offs_last_rec;
		goto counted;
	}
	khash = offs_hash_words((const unsigned long *)key,
				sizeof(*key) / sizeof(long), 0);
	head = &gen->buckets[khash & (gen->nbuckets - 1)];
	hlist_for_each_entry(rec, head, node) {
		if (rec->hash == khash && offs_rec_match(rec, key))
			goto found;
	}
	if (gen->nrecs >= offs_gen_max(gen)) {
		offs_drop(gen, key->reason, -ENOSPC);
		return NULL;
	}
	rec = kmem_cache_alloc(offs_rec_cache, GFP_KERNEL | __GFP_NOWARN);
	if (!rec) {
		offs_drop(gen, key->reason, -ENOMEM);
		return NULL;
	}
	rec->hash = khash;
	rec->reason = key->reason;
	rec->state_ch = key->state_ch;
	rec->tgid = key->tgid;
	rec->tid = key->tid;
	memcpy(rec->comm, key->comm, TASK_COMM_LEN);
	memcpy(rec->tname, key->tname, TASK_COMM_LEN);
	rec->stack = key->stack;
	rec->stack->refs++;
	rec->ustack = key->ustack;
	if (rec->ustack)
		offs_ustack_get(rec->ustack);
	rec->wobj = key->wobj;
	if (rec->wobj)
		offs_wobj_get(rec->wobj);
	rec->syscall = key->syscall;
	rec->cgid = key->cgid;
	rec->count = 0;
	rec->pending = 0;
	rec->crit_micro = 0;
	hlist_add_head(&rec->node, head);
	list_add_tail(&rec->list, &gen->recs);
	rec->id = ++gen->nrecs;
	offs_mem_add(sizeof(*rec));
found:
	if (!gen->session) {
		offs_last_gen = gen;
		offs_last_rec = rec;
		memcpy(&offs_last_key, key, sizeof(*key));	/* padding too */
	}
counted:
	rec->count++;
	gen->samples++;
	if (gen->session) {
		OFFS_STAT_ADD(session_samples, 1);
		return rec;
	}
	OFFS_STAT_ADD(samples, 1);
	OFFS_STAT_ADD(samples_reason[key->reason], 1);
	return rec;
}

/*
 * Count s in the windows of the sessions its smask selects, each under
 * its own key (offs_table_lock held; the sampler holds offs_tick_lock, so
 * the sessions stay).  hit: the thread's cached capture, or NULL (then
 * st, w and reason are the capture's).
 */
static noinline void offs_sess_count_in(struct offs_sample *s,
					 const struct offs_hit *hit,
					 struct offs_stack *st,
					 enum offs_reason reason,
					 struct offs_wobj *w)
{
	struct offs_session *se;
	struct offs_key key;
	int i;

	memset(&key, 0, sizeof(key));	/* its padding (offs_key_fill_state()) */
	for (i = 0; i < OFFS_SESSIONS_MAX; i++) {
		se = offs_sessions[i];
		if (!se || !(s->smask & OFFS_SLOT_SESS(i)))
			continue;
		if (hit)
			offs_key_fill_hit(&key, s, hit, se->key_fields);
		else
			offs_key_fill(&key, s, st, reason, w, se->key_fields);
		s->srec[i] = offs_gen_count(se->gen, &key);
	}
}

/*
 * s->srec[] for every session slot: NULL but where offs_sess_count_in()
 * counts it.  Inline: most captures are wanted by no session, and then
 * cost no call and no key on the stack.
 */
static inline void offs_sess_count(struct offs_sample *s,
				   const struct offs_hit *hit,
				   struct offs_stack *st, enum offs_reason reason,
				   struct offs_wobj *w)
{
	memset(s->srec, 0, sizeof(s->srec));
	if (s->smask & ~OFFS_SLOT_DEFAULT)
		offs_sess_count_in(s, hit, st, reason, w);
}

/* A sample the sessions of s->smask could not store either (counted). */
static void offs_sess_drop(struct offs_sample *s, enum offs_reason reason,
			   int err)
{
	int i;

	for (i = 0; i < OFFS_SESSIONS_MAX; i++) {
		s->srec[i] = NULL;
		if (offs_sessions[i] && (s->smask & OFFS_SLOT_SESS(i)))
			offs_drop(offs_sessions[i]->gen, reason, err);
	}
}

/* Remember where a thread's sample went, for offs_table_record_again(). */
static void offs_hit_set(struct offs_hit *hit, struct offs_stack *st,
			 struct offs_rec *rec, const struct offs_key *key,
			 struct offs_wobj *w)
{
	/* Take the new references before dropping the old ones. */
	st->refs++;
	if (key->ustack)
		offs_ustack_get(key->ustack);
	if (w)
		offs_wobj_get(w);
	offs_rec_put_refs(hit->stack, hit->ustack, hit->wobj);
	hit->stack = st;
	hit->ustack = key->ustack;
	/* As captured: a session's key may have it where the default's has not. */
	hit->wobj = w;
	hit->syscall = key->syscall;
	hit->cgid = key->cgid;
	hit->rec = rec;
	hit->gen_seq = offs_cur->seq;
	hit->reason = key->reason;
	hit->state_ch = key->state_ch;
	hit->key_fields = READ_ONCE(offs_key_fields);
}

/*
 * A capture whose stack could not be stored (err): classified from its
 * frames, counted as dropped; hit keeps nothing.  offs_table_lock held.
 */
static noinline enum offs_reason offs_table_drop(struct offs_sample *s,
						 struct offs_hit *hit, int err)
{
	struct offs_frames_info info;
	enum offs_reason reason;

	offs_frames_info(s->ips, s->depth, &info);
	reason = offs_reason_of(s, &info);
	if (s->smask & OFFS_SLOT_DEFAULT)
		offs_drop(offs_cur, reason, err);
	offs_sess_drop(s, reason, err);
	if (hit) {
		/* Nothing to reuse next time. */
		offs_rec_put_refs(hit->stack, hit->ustack, hit->wobj);
		memset(hit, 0, sizeof(*hit));
	}
	return reason;
}

/*
 * The key of the sample being recorded, under offs_table_lock.  Not on
 * the stack, where INIT_STACK_ALL_ZERO kernels zeroed it at each call
 * (issue 52); its padding stays zero, as only its fields are written.
 */
static struct offs_key offs_key_buf;

/*
 * Count one off-CPU sample (full capture) in the current generation.
 * Sampler kthread only.  If hit is given, it is updated to point at the
 * stored stack (holding a reference) so that the next sample of an
 * unchanged thread can skip all of this.  Returns the reason.
 */
enum offs_reason offs_table_record(struct offs_sample *s,
				   struct offs_hit *hit)
{
	struct offs_key *key = &offs_key_buf;
	struct offs_wobj *w = NULL;
	struct offs_stack *st;
	enum offs_reason reason;
	struct offs_rec *rec;

	s->rec = NULL;

	mutex_lock(&offs_table_lock);
	if (s->wobj_str) {
		w = offs_wobj_intern(s->wobj_str, &s->wobj_addr);
		if (!w) {
			OFFS_STAT_ADD(wobj_dropped, 1);
			s->degraded = true;
		}
	}
	st = offs_stack_get(s);
	if (IS_ERR(st)) {
		/* Not stored: classify from the frames directly. */
		reason = offs_table_drop(s, hit, PTR_ERR(st));
		goto out;
	}
	reason = offs_reason_of(s, &st->info);
	offs_key_fill(key, s, st, reason, w, READ_ONCE(offs_key_fields));
	rec = s->smask & OFFS_SLOT_DEFAULT ? offs_gen_count(offs_cur, key) :
					     NULL;
	s->rec = rec;
	if (hit)
		offs_hit_set(hit, st, rec, key, w);
	offs_sess_count(s, NULL, st, reason, w);
	offs_stack_put(st);		/* the records and hit hold their own */
out:
	/*
	 * The caller's references on the user stack (none when the memo's
	 * served, ustack.c) and wait object.
	 */
	offs_rec_put_refs(NULL, s->ustack_memo ? NULL : s->ustack, w);
	if (s->smask & OFFS_SLOT_DEFAULT)
		OFFS_STAT_ADD(offcpu, 1);
	mutex_unlock(&offs_table_lock);
	return reason;
}

/*
 * Count one more sample of a thread that has not run since its last sample:
 * same stack, same reason.  Only the names (comm) are re-read.  If the
 * record is still the current generation's and still matches the key, this
 * is one increment; otherwise the key is looked up again.
 */
struct offs_rec *offs_table_record_again(struct offs_sample *s,
					 struct offs_hit *hit)
{
	struct offs_key *key = &offs_key_buf;
	struct offs_rec *rec = hit->rec;

	mutex_lock(&offs_table_lock);
	offs_sess_count(s, hit, NULL, 0, NULL);
	if (!(s->smask & OFFS_SLOT_DEFAULT)) {
		rec = NULL;
		goto out;
	}
	/* The default consumer's observations: samples + dropped. */
	OFFS_STAT_ADD(offcpu, 1);
	if (offs_hit_fits(hit, offs_cur->seq, READ_ONCE(offs_key_fields),
			  s->cgid, s->comm, s->tname)) {
		rec->count++;
		offs_cur->samples++;
		OFFS_STAT_ADD(samples, 1);
		OFFS_STAT_ADD(samples_reason[rec->reason], 1);
		goto out;
	}
	offs_key_fill_hit(key, s, hit, READ_ONCE(offs_key_fields));
	rec = offs_gen_count(offs_cur, key);
	offs_hit_set(hit, hit->stack, rec, key, hit->wobj);
out:
	mutex_unlock(&offs_table_lock);
	s->rec = rec;
	return rec;
}

/*
 * The current generation's sequence number, for the sampler's walk
 * (offs_table_again_fast()).  It cannot change during a tick: the sampler
 * holds offs_tick_lock, which offs_table_swap() takes before it replaces
 * offs_cur.
 */
u64 offs_table_gen_seq(void)
{
	lockdep_assert_held(&offs_tick_lock);
	return offs_cur->seq;
}

/*
 * End of a tick: add the samples the walk counted (offs_table_again_fast())
 * to their records, n records listed once each.  One hold of
 * offs_table_lock, let go between batches for readers.
 */
void offs_table_fold(struct offs_rec * const *recs, unsigned int n)
{
	u64 reason[OFFS_R_NR] = { 0 };
	struct offs_rec *rec;
	unsigned int i, p;
	u64 total = 0;
	int r;

	if (!n)
		return;
	mutex_lock(&offs_table_lock);
	for (i = 0; i < n; i++) {
		rec = recs[i];
		p = rec->pending;
		rec->pending = 0;
		rec->count += p;
		/* Readers between batches see records and total agree. */
		offs_cur->samples += p;
		reason[rec->reason] += p;
		total += p;
		if ((i + 1) % OFFS_LOCK_BATCH == 0)
			offs_table_relax();
	}
	mutex_unlock(&offs_table_lock);
	OFFS_STAT_ADD(offcpu, total);
	OFFS_STAT_ADD(samples, total);
	for (r = 0; r < OFFS_R_NR; r++)
		if (reason[r])
			OFFS_STAT_ADD(samples_reason[r], reason[r]);
}

/*
 * The walk was given up (sampler.c, snapshot too small): forget what it
 * counted, n records listed once each.
 */
void offs_table_unpend(struct offs_rec * const *recs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		recs[i]->pending = 0;
}

/*
 * Count one waiter -> holder observation in the current generation
 * (blocker.c, at the end of a tick: the records it points at are of this
 * generation).  Bounded by max_stacks like records.  False if dropped.
 * offs_table_lock held (one hold for all the edges of a tick).
 */
bool offs_table_count_edge(struct offs_gen *gen,
			   const struct offs_edge_key *key)
{
	struct hlist_head *head;
	struct offs_edge *e;
	u32 hash = jhash(key, sizeof(*key), 0);

	lockdep_assert_held(&offs_table_lock);
	if (!gen)
		gen = offs_cur;
	head = &gen->ebuckets[hash & (gen->nebuckets - 1)];
	hlist_for_each_entry(e, head, node) {
		if (e->hash == hash && !memcmp(&e->key, key, sizeof(*key)))
			goto counted;
	}
	if (gen->nedges >= offs_gen_max(gen))
		return false;
	e = kmalloc(sizeof(*e), GFP_KERNEL | __GFP_NOWARN);
	if (!e)
		return false;
	e->hash = hash;
	e->key = *key;
	e->count = 0;
	hlist_add_head(&e->node, head);
	list_add_tail(&e->list, &gen->edges);
	gen->nedges++;
	offs_mem_add(offs_ksize(sizeof(*e)));
counted:
	e->count++;
	return true;
}

/*
 * Entry number pos of an append-only generation list (records or edges),
 * from the reader's cursor cur (at position curpos, or NULL) when pos is
 * it or the next one, else walked from the start, letting go of the lock
 * every OFFS_LOCK_BATCH entries.  head if there is none.  offs_table_lock
 * held.
 */
static struct list_head *offs_list_seek(struct list_head *head,
					struct list_head *cur, loff_t curpos,
					loff_t pos)
{
	struct list_head *p;
	loff_t i;

	if (cur && pos == curpos)
		return cur;
	if (cur && pos == curpos + 1)
		return cur->next;
	p = head->next;
	for (i = 0; i < pos && p != head; i++) {
		p = p->next;
		if ((i + 1) % OFFS_LOCK_BATCH == 0)
			offs_table_relax();
	}
	return p;
}

/*
 * Reader side: copy edge number pos (0-based, insertion order) of it->gen
 * into *out, with the ids of the records it points at.  it->edge caches
 * the position, as offs_gen_iter_seek() does for records.
 */
bool offs_gen_edge_seek(struct offs_gen_iter *it, loff_t pos,
			struct offs_edge_out *out)
{
	struct offs_gen *gen = it->gen;
	struct list_head *p;
	struct offs_edge *e;

	mutex_lock(&offs_table_lock);
	p = offs_list_seek(&gen->edges, it->edge ? &it->edge->list : NULL,
			   it->epos, pos);
	if (p == &gen->edges) {
		mutex_unlock(&offs_table_lock);
		return false;
	}
	e = list_entry(p, struct offs_edge, list);
	it->edge = e;
	it->epos = pos;
	out->key = e->key;
	out->count = e->count;
	out->wrec_id = e->key.wrec ? e->key.wrec->id : 0;
	out->hrec_id = e->key.hrec ? e->key.hrec->id : 0;
	mutex_unlock(&offs_table_lock);
	return true;
}

/* Drop what a cache entry holds (offs_table_lock not held). */
void offs_table_hit_release(struct offs_hit *hit)
{
	if (!hit->stack)
		return;
	mutex_lock(&offs_table_lock);
	offs_rec_put_refs(hit->stack, hit->ustack, hit->wobj);
	mutex_unlock(&offs_table_lock);
	memset(hit, 0, sizeof(*hit));
}

/*
 * Start a tick at now: returns which consumers it counts for
 * (OFFS_SLOT_*), whose generations count one more tick; *late as
 * offs_sess_select() says.
 */
unsigned int offs_table_tick_begin(u64 now, bool *late)
{
	unsigned int sel;
	int i;

	mutex_lock(&offs_tick_lock);
	sel = offs_sess_select(now, late);
	mutex_lock(&offs_table_lock);
	if (sel & OFFS_SLOT_DEFAULT)
		offs_cur->ticks++;
	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		if (sel & OFFS_SLOT_SESS(i))
			offs_sessions[i]->gen->ticks++;
	mutex_unlock(&offs_table_lock);
	return sel;
}

/* ---- sessions (session.c): their windows and settings ---- */

/*
 * An empty window for a session; its rate and key are the session's, set
 * when it is installed (under the locks, with the settings).
 */
struct offs_gen *offs_table_sess_gen(void)
{
	struct offs_gen *gen = offs_gen_alloc(GFP_KERNEL_ACCOUNT);

	if (!gen)
		return NULL;
	gen->session = true;
	gen->seq = 1;
	return gen;
}

/* se counts into gen from now on: its window, at its settings. */
static void offs_sess_install(struct offs_session *se, struct offs_gen *gen)
{
	gen->hz = se->hz;
	gen->key_fields = se->key_fields;
	se->gen = gen;
}

/* Between ticks, and with the table: see struct offs_session. */
static int offs_sess_lock(void)
{
	if (mutex_lock_killable(&offs_tick_lock))
		return -EINTR;
	mutex_lock(&offs_table_lock);
	return 0;
}

static void offs_sess_unlock(void)
{
	mutex_unlock(&offs_table_lock);
	mutex_unlock(&offs_tick_lock);
}

/*
 * Install se, counting into gen, in a free slot: 0 or -EBUSY, -EINTR.  A
 * group= reader never takes the last free slot: it cannot keep root's
 * recordings from having one.
 */
int offs_table_sess_add(struct offs_session *se, struct offs_gen *gen,
			bool restricted)
{
	u64 now = ktime_get_ns();
	unsigned int max = min_t(unsigned int, READ_ONCE(offs_max_sessions),
				 OFFS_SESSIONS_MAX);
	unsigned int nfree = 0;
	int i, err = offs_sess_lock();

	if (err)
		return err;
	for (i = 0; i < max; i++)
		nfree += !offs_sessions[i];
	err = -EBUSY;
	for (i = 0; i < max && nfree > restricted; i++) {
		if (offs_sessions[i])
			continue;
		se->slot = i;
		offs_sess_install(se, gen);
		se->due = now;		/* its first tick at once */
		offs_sessions[i] = se;
		err = 0;
		break;
	}
	offs_sess_unlock();
	return err;
}

/*
 * New settings and a new window (gen) for se; *cg and *pid are the new
 * filters, or an ERR_PTR to keep those it has.  On return they are what
 * the caller must put: the filters replaced, or themselves on failure.
 */
int offs_table_sess_settings(struct offs_session *se, struct offs_gen *gen,
			     unsigned int hz, unsigned int key_fields,
			     struct pid **pid, struct cgroup **cg)
{
	struct offs_gen *old;
	struct cgroup *c;
	struct pid *p;
	int err = offs_sess_lock();

	if (err) {
		offs_gen_put(gen);
		return err;
	}
	old = se->gen;
	se->hz = hz;
	se->key_fields = key_fields;
	offs_sess_install(se, gen);
	se->due = ktime_get_ns();
	if (!IS_ERR(*cg)) {
		c = se->cg;
		se->cg = *cg;
		*cg = c;
	}
	if (!IS_ERR(*pid)) {
		p = se->pid;
		se->pid = *pid;
		*pid = p;
	}
	offs_sess_unlock();
	offs_gen_put(old);
	return 0;
}

/*
 * Hand over se's window, now immutable, and count into gen from here on
 * (between ticks: windows hold whole ticks).
 */
struct offs_gen *offs_table_sess_swap(struct offs_session *se,
				      struct offs_gen *gen)
{
	struct offs_gen *old;

	if (offs_sess_lock()) {
		offs_gen_put(gen);
		return ERR_PTR(-EINTR);
	}
	old = se->gen;
	old->end_real_ns = ktime_get_real_ns();
	old->end_mono_ns = ktime_get_ns();
	gen->seq = old->seq + 1;
	offs_sess_install(se, gen);
	offs_sess_unlock();
	return old;
}

/* Take se out (it counts no more): its window and filters to release. */
struct offs_gen *offs_table_sess_remove(struct offs_session *se,
					struct cgroup **cg, struct pid **pid)
{
	struct offs_gen *gen;

	/* Not killable: a closing file must let go of its slot. */
	mutex_lock(&offs_tick_lock);
	mutex_lock(&offs_table_lock);
	offs_sessions[se->slot] = NULL;
	gen = se->gen;
	se->gen = NULL;
	*cg = se->cg;
	se->cg = NULL;
	*pid = se->pid;
	se->pid = NULL;
	offs_sess_unlock();
	return gen;
}

void offs_table_tick_end(void)
{
	mutex_unlock(&offs_tick_lock);
}

/* Return once no tick is in progress (-EINTR if killed meanwhile). */
int offs_table_quiesce(void)
{
	if (mutex_lock_killable(&offs_tick_lock))
		return -EINTR;
	mutex_unlock(&offs_tick_lock);
	return 0;
}

/* ---- iteration for readers (proc_stacks.c) ---- */

/*
 * Position the iterator on record number pos (0-based, insertion order)
 * and snapshot its count.  Records are never removed from a generation
 * while a reference is held, so a cached position stays valid; the list
 * is walked under offs_table_lock because the sampler appends to it.
 */
bool offs_gen_iter_seek(struct offs_gen_iter *it, loff_t pos)
{
	struct offs_gen *gen = it->gen;
	struct list_head *p;

	mutex_lock(&offs_table_lock);
	p = offs_list_seek(&gen->recs, it->rec ? &it->rec->list : NULL,
			   it->pos, pos);
	if (p == &gen->recs) {
		mutex_unlock(&offs_table_lock);
		return false;
	}
	it->rec = list_entry(p, struct offs_rec, list);
	it->pos = pos;
	it->count = it->rec->count;
	mutex_unlock(&offs_table_lock);
	return true;
}

/*
 * Call fn on every record of gen, in insertion order, under
 * offs_table_lock (fn must not sleep long).  The lock is let go every
 * OFFS_LOCK_BATCH records: the list position stays valid because
 * records are never removed from a generation while a reference is held,
 * and records appended meanwhile are visited too.
 */
void offs_gen_each_rec(struct offs_gen *gen,
		       void (*fn)(struct offs_rec *rec, void *arg), void *arg)
{
	struct list_head *p;
	unsigned int n = 0;

	mutex_lock(&offs_table_lock);
	for (p = gen->recs.next; p != &gen->recs; p = p->next) {
		fn(list_entry(p, struct offs_rec, list), arg);
		if (++n % OFFS_LOCK_BATCH == 0)
			offs_table_relax();
	}
	mutex_unlock(&offs_table_lock);
}

/* Consistent copy of a generation's header figures (offs_table_lock held). */
static void offs_gen_summary_locked(struct offs_gen *gen,
				    struct offs_gen_summary *sum)
{
	sum->seq = gen->seq;
	sum->start_real_ns = gen->start_real_ns;
	sum->end_real_ns = gen->end_real_ns ?: ktime_get_real_ns();
	sum->duration_ns = (gen->end_mono_ns ?: ktime_get_ns()) -
			   gen->start_mono_ns;
	sum->live = !gen->end_mono_ns;
	sum->ticks = gen->ticks;
	sum->samples = gen->samples;
	sum->dropped = gen->dropped;
	sum->nrecs = gen->nrecs;
	sum->nedges = gen->nedges;
	memcpy(sum->dropped_reason, gen->dropped_reason,
	       sizeof(sum->dropped_reason));
}

void offs_gen_summary(struct offs_gen *gen, struct offs_gen_summary *sum)
{
	mutex_lock(&offs_table_lock);
	offs_gen_summary_locked(gen, sum);
	mutex_unlock(&offs_table_lock);
}

/*
 * The same for the current generation, without a reference to it: a
 * reference held for a moment (by a reader of stats) would count as a
 * reader's in offs_table_swap() and could make a drain fail.
 */
void offs_cur_summary(struct offs_gen_summary *sum)
{
	mutex_lock(&offs_table_lock);
	offs_gen_summary_locked(offs_cur, sum);
	mutex_unlock(&offs_table_lock);
}

int offs_table_init(void)
{
	offs_rec_cache = KMEM_CACHE(offs_rec, 0);
	if (!offs_rec_cache)
		return -ENOMEM;
	offs_stack_nbuckets = offs_nbuckets_for(READ_ONCE(offs_max_stacks));
	offs_stack_buckets = kvcalloc(offs_stack_nbuckets,
				      sizeof(*offs_stack_buckets), GFP_KERNEL);
	if (!offs_stack_buckets)
		goto err_cache;
	offs_mem_add(offs_stack_nbuckets * sizeof(*offs_stack_buckets));
	offs_cur = offs_gen_alloc(GFP_KERNEL);
	if (!offs_cur)
		goto err_buckets;
	offs_cur->seq = ++offs_gen_seq;
	return 0;

err_buckets:
	offs_mem_add(-(long)(offs_stack_nbuckets * sizeof(*offs_stack_buckets)));
	kvfree(offs_stack_buckets);
err_cache:
	kmem_cache_destroy(offs_rec_cache);
	return -ENOMEM;
}

/* The sampler is stopped and no reader is left. */
void offs_table_exit(void)
{
	offs_gen_put(offs_cur);
	offs_cur = NULL;
	WARN_ON(offs_nstacks);
	offs_mem_add(-(long)(offs_stack_nbuckets * sizeof(*offs_stack_buckets)));
	kvfree(offs_stack_buckets);
	kmem_cache_destroy(offs_rec_cache);
}
