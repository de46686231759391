// SPDX-License-Identifier: GPL-2.0
/*
 * ustack.c - user stacks of other threads, as (file, offset) frames.
 *
 * A capture (sampler kthread) goes in three steps, each holding less:
 *
 *   1. walk: in the thread's address space (umm.c), frame pointers are
 *      followed from its user registers while the thread is pinned
 *      (pin.c: pi_lock held, so a blocked thread cannot run meanwhile,
 *      and a run-queue waiter that ran is caught by pin.c's re-check);
 *   2. snapshot: under mmap_read_trylock() each address is mapped to a
 *      kind and offset, and a reference is taken on each mapped file
 *      (umm.c); the lock is dropped before anything else happens;
 *   3. intern: files are resolved to interned paths (upath.c) and the
 *      stack is interned, under offs_table_lock.
 *
 * So the sampled process's mmap lock is never held while we wait for
 * offs_table_lock, which readers of /proc/offsample hold for a whole
 * generation: a writer of the sampled process queued behind our read
 * lock would otherwise stall the process (and its page faults) for as
 * long as a reader chose.
 *
 * Interned stacks are reference-counted under offs_table_lock.
 */
#include <linux/sched.h>
#include <linux/mm.h>
#include <linux/sched/clock.h>
#include <linux/hash.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "ustack.h"
#include "pystack.h"
#include "pin.h"
#include "hash.h"

#define OFFS_UBUCKETS		4096

static struct hlist_head offs_ustack_buckets[OFFS_UBUCKETS];
static struct offs_istore offs_ustacks = {
	.buckets = offs_ustack_buckets,
	.nbuckets = OFFS_UBUCKETS,
};

static_assert(offsetof(struct offs_ustack, base) == 0);

/* ---- interned stacks (offs_table_lock held) ---- */

/* A frame's reference: a file's path or a Python function's name. */
void offs_uframe_ref(const struct offs_uframe *f, bool get)
{
	if (f->kind == OFFS_UF_FILE && f->path) {
		if (get)
			offs_upath_get(f->path);
		else
			offs_upath_put(f->path);
	} else if (f->kind == OFFS_UF_PY && f->py) {
		if (get)
			offs_pyname_get(f->py);
		else
			offs_pyname_put(f->py);
	}
}

void offs_ustack_get(struct offs_ustack *us)
{
	offs_interned_get(&us->base);
}

void offs_ustack_put(struct offs_ustack *us)
{
	unsigned int i;

	if (!offs_interned_unref(&us->base))
		return;
	for (i = 0; i < us->depth; i++)
		offs_uframe_ref(&us->frames[i], false);
	offs_istore_free(&offs_ustacks, &us->base,
			 offs_ustack_size(us->depth));
}

/* What one user stack of the largest depth takes, as allocated. */
u64 offs_ustack_unit_cost(void)
{
	return offs_ksize(offs_ustack_size(OFFS_MAX_DEPTH_LIMIT));
}

unsigned int offs_ustack_count(void)
{
	return offs_istore_count(&offs_ustacks);
}

/* The interned stack with a reference for the caller, or NULL (counted). */
static struct offs_ustack *offs_ustack_intern(const struct offs_uframe *f,
					      unsigned int depth, bool raced,
					      bool truncated)
{
	size_t bytes = depth * sizeof(*f);
	struct offs_ustack *us;
	unsigned int i;
	u32 hash;

	BUILD_BUG_ON(sizeof(*f) % sizeof(long));
	hash = offs_hash_words((const unsigned long *)f,
			       bytes / sizeof(long),
			       depth | (raced << 16) | (truncated << 17));
	hlist_for_each_entry(us, offs_istore_bucket(&offs_ustacks, hash),
			     base.node) {
		if (us->base.hash == hash && us->depth == depth &&
		    us->raced == raced && us->truncated == truncated &&
		    offs_words_eq((const unsigned long *)us->frames,
				  (const unsigned long *)f,
				  bytes / sizeof(long))) {
			offs_interned_get(&us->base);
			return us;
		}
	}
	/* Past max_stacks, or no memory. */
	us = offs_istore_alloc(&offs_ustacks, offs_ustack_size(depth));
	if (!us) {
		OFFS_STAT_ADD(user_dropped, 1);
		return NULL;
	}
	us->depth = depth;
	us->raced = raced;
	us->truncated = truncated;
	memcpy(us->frames, f, bytes);
	for (i = 0; i < depth; i++)
		offs_uframe_ref(&f[i], true);
	offs_istore_add(&offs_ustacks, &us->base, hash,
			offs_ustack_size(depth));
	return us;
}

/* ---- capture (sampler kthread only) ---- */

static struct offs_uframe_raw offs_uraw[OFFS_MAX_DEPTH_LIMIT];
static struct offs_uframe offs_uframes[OFFS_MAX_DEPTH_LIMIT];

/*
 * The stacks interned, by their return addresses and the generation of the
 * copy of the mappings their frames were named from (umm.c's
 * offs_umm_gen()): the threads of a process that wait in the same place (a
 * pool's workers) have the same addresses, and so does a thread that ran
 * between two ticks and waits where it waited before (a pipe's two ends,
 * a server's loop).  Mapping those to files gives the same stack again as
 * long as every frame lies in the executable mappings of that copy
 * (offs_umm_snapshot()'s in_maps) and files are named from the same root
 * (upath.c's offs_root_id()).  A copy kept from tick to tick keeps its
 * generation, so its entries serve the ticks to come; a copy made for one
 * window gets a generation of its own, so they serve that window only.
 * Only such whole stacks are kept, each with a reference
 * (offs_table_lock), for a second at most: a library renamed over by an
 * upgrade is then named " (deleted)" as a new capture would, within that
 * second.  The end of a tick drops the entries of copies no longer kept
 * and those over their second (offs_ustack_memo_drop()).
 */
#define OFFS_USMEMO_SLOTS	64
#define OFFS_USMEMO_DEPTH	48

static struct offs_usmemo {
	struct offs_ustack *us;		/* reference held; NULL: empty */
	u64 gen;			/* of the copy of the mappings */
	unsigned long made;		/* jiffies */
	u32 root;			/* offs_root_id() */
	u32 hash;
	unsigned int n;
	bool truncated;
	unsigned long ips[OFFS_USMEMO_DEPTH];
} offs_usmemo[OFFS_USMEMO_SLOTS];
static unsigned int offs_usmemo_used;	/* entries held */
/*
 * When a sweep has something to drop (offs_ustack_memo_drop()): an entry
 * was kept under a copy made for its window only, a kept copy was let go
 * (umm.c counts them), or the oldest entry's second is over.
 */
static bool offs_usmemo_window_only;
static u64 offs_usmemo_dropped;		/* offs_umm_kept_dropped() seen */
static unsigned long offs_usmemo_oldest;	/* jiffies, at most the oldest */

static bool offs_usmemo_live(const struct offs_usmemo *m)
{
	return time_before(jiffies, m->made + HZ);
}

/*
 * Drop the entries all (true), or those of copies no longer kept and
 * those over their second, if there may be any.  No lock held: takes
 * offs_table_lock if a stack is kept.
 */
static void offs_ustack_memo_drop(bool all)
{
	u64 dropped = offs_umm_kept_dropped();
	struct offs_usmemo *m;
	unsigned int i;

	if (!offs_usmemo_used)
		return;
	if (!all && !offs_usmemo_window_only &&
	    dropped == offs_usmemo_dropped &&
	    time_before(jiffies, offs_usmemo_oldest + HZ))
		return;
	offs_usmemo_window_only = false;
	offs_usmemo_dropped = dropped;
	offs_usmemo_oldest = jiffies;
	mutex_lock(&offs_table_lock);
	for (i = 0; i < OFFS_USMEMO_SLOTS; i++) {
		m = &offs_usmemo[i];
		if (!m->us)
			continue;
		if (!all && offs_usmemo_live(m) && offs_umm_gen_kept(m->gen)) {
			if (time_before(m->made, offs_usmemo_oldest))
				offs_usmemo_oldest = m->made;
			continue;
		}
		offs_ustack_put(m->us);
		m->us = NULL;
		offs_usmemo_used--;
	}
	mutex_unlock(&offs_table_lock);
}

static void offs_ustack_memo_clear(void)
{
	offs_ustack_memo_drop(true);
}

/*
 * ---- the window (sampler kthread only) ----
 *
 * One process at a time: its address space (umm.c) and its root
 * (upath.c).  Threads come grouped by process, so consecutive threads
 * share a window; entering another process's, or ending the tick, ends
 * it.  The memos of stacks (above) and of files' names (upath.c) outlive
 * a window: see each.
 */

/* Copies made again in a tick (offs_uwin_recapture()), by address space. */
#define OFFS_UWIN_RECOPIES	4

static struct mm_struct *offs_recopy_mm;	/* compared only */
static unsigned int offs_recopies;

/*
 * Leave the window; sleeps (fput()).  The memos of stacks and of the
 * files' names stay: a stack is only taken again under the same copy of
 * the mappings (see offs_usmemo), a name depends on the file and the root
 * it is named from, and a new root empties that memo (offs_root_enter());
 * so two processes whose threads alternate, such as a pipe's two ends, do
 * not name the same libraries again at each capture (d_path() and an
 * interning each: 2,000 instructions a capture, 2026-12-06).
 */
void offs_uwin_end(void)
{
	offs_pywin_leave();
	offs_umm_leave();
}

/*
 * The tick ended (or, idle, the sampler stops or waits for good): leave
 * the window, let go of the files named in the tick, of the copies of
 * mappings kept from tick to tick that this tick did not use (umm.c), all
 * of them if idle, and of the stacks memoized under copies let go.
 * Sleeps (offs_table_lock, which a reader may hold for a while: the
 * processes' memory is let go first).
 */
void offs_uwin_tick_end(bool idle)
{
	offs_recopy_mm = NULL;
	offs_uwin_end();
	offs_umm_tick_end(idle);
	offs_ustack_memo_drop(idle);
	offs_upath_memo_clear();
}

/* Leave at once a window whose process exited meanwhile (umm.c). */
void offs_uwin_end_if_orphaned(void)
{
	if (offs_umm_orphaned())
		offs_uwin_end();
}

/*
 * Enter t's window to read its data (blocker.c, and the capture below);
 * returns its address space, or NULL if t has none (exiting).  Sleeps.
 */
struct mm_struct *offs_uwin_enter_data(struct task_struct *t)
{
	struct mm_struct *mm = READ_ONCE(t->mm);

	if (!mm)
		return NULL;
	if (mm == offs_umm_current())
		return mm;
	offs_uwin_end();
	/*
	 * The root first: a new one empties the memo of names (upath.c),
	 * which takes offs_table_lock, a lock a reader may hold for a
	 * while; not with the process's memory held.
	 */
	offs_root_enter(t);
	return offs_umm_use(t);
}

/* The same, with the map of its code the unwinder needs (built once). */
struct mm_struct *offs_uwin_enter_code(struct task_struct *t)
{
	struct mm_struct *mm = offs_uwin_enter_data(t);

	if (mm) {
		offs_umm_map_code();
		offs_pywin_enter(mm);
	}
	return mm;
}

/*
 * Did the walk of s follow a copy of its process's mappings that no
 * longer holds?  Only asked when the copy's sign moved (s->ustale, umm.c's
 * offs_umm_maps_current()): then the mappings its frames lie in are
 * compared with the copy's (offs_umm_verify(); on 5.10 and 6.1 any page
 * fault moves the sign).  If they differ, and may_recopy, the window gets
 * a new copy: true, capture the thread again.  At most OFFS_UWIN_RECOPIES
 * times for one address space in a tick, so a process that maps and
 * unmaps all the time costs a few copies, not one per thread.  False with
 * s->ustale still set (so also when the mmap lock was busy): the walk's
 * frames stay untranslated, its Python frames dropped.  Sleeps.
 */
bool offs_uwin_recheck(struct offs_sample *s, bool may_recopy)
{
	int same;

	OFFS_STAT_ADD(user_maps_checked, 1);
	same = offs_umm_verify(s);
	if (same > 0) {
		s->ustale = false;
		return false;
	}
	if (same < 0) {
		/* A writer at work: never waited for, as in the snapshot. */
		OFFS_STAT_ADD(user_trylock_failed, 1);
		goto untranslated;
	}
	OFFS_STAT_ADD(user_maps_raced, 1);
	if (offs_recopy_mm != s->umm) {
		offs_recopy_mm = s->umm;
		offs_recopies = 0;
	}
	if (!may_recopy || offs_recopies == OFFS_UWIN_RECOPIES)
		goto untranslated;
	offs_recopies++;
	/*
	 * Same address space and root; the stacks memoized were named from
	 * the old copy, and the interpreter is looked for in the new one.
	 */
	offs_pywin_leave();
	offs_ustack_memo_clear();
	offs_umm_recopy();
	offs_pywin_enter(s->umm);
	return true;
untranslated:
	/* Its Python frames were read where the old copy said, too. */
	s->pydepth = 0;
	s->pylost = true;
	return false;
}

/*
 * May s's walk have an answer in the memo?  A walk that ended at a fault
 * is looked at under the mmap lock; the same native frames may run other
 * Python frames.
 */
static bool offs_usmemo_may(const struct offs_sample *s)
{
	return !s->ufault && !s->upending && !s->ustale && !s->pydepth &&
	       s->udepth <= OFFS_USMEMO_DEPTH && s->umm == offs_umm_current();
}

/* The memo's slot for s's walk (offs_usmemo_may()). */
static struct offs_usmemo *offs_usmemo_slot(const struct offs_sample *s,
					    u32 *hash)
{
	unsigned int n = s->udepth;

	/* The generation too: a forked child has its parent's addresses. */
	*hash = offs_hash_words(s->uips, n, n | s->utruncated << 16) ^
		hash_64(offs_umm_gen(), 32);
	return &offs_usmemo[*hash % OFFS_USMEMO_SLOTS];
}

/* Does m hold s's walk (whatever its slot)? */
static bool offs_usmemo_same(const struct offs_usmemo *m,
			     const struct offs_sample *s)
{
	return m->us && m->gen == offs_umm_gen() &&
	       m->root == offs_root_id() && offs_usmemo_live(m) &&
	       m->n == s->udepth &&
	       m->truncated == s->utruncated &&
	       offs_words_eq(m->ips, s->uips, m->n);
}

/*
 * The entry the last capture found or kept: a pool's threads, one after
 * the other, wait where the one before waited, and then the walk is
 * compared with it before it is hashed (about 45 instructions of a cold
 * capture, issue 52).  An entry dropped since has no stack (never same).
 */
static struct offs_usmemo *offs_usmemo_last;

/* offs_table_lock held: keep us (whole, every frame in the maps). */
static void offs_usmemo_keep(struct offs_usmemo *m,
			     const struct offs_sample *s, u32 hash,
			     struct offs_ustack *us)
{
	if (m->us)
		offs_ustack_put(m->us);
	else if (!offs_usmemo_used++)
		offs_usmemo_oldest = jiffies;
	if (!offs_umm_gen_current_kept())
		offs_usmemo_window_only = true;
	offs_ustack_get(us);
	offs_usmemo_last = m;
	m->us = us;
	m->gen = offs_umm_gen();
	m->made = jiffies;
	m->root = offs_root_id();
	m->hash = hash;
	m->n = s->udepth;
	m->truncated = s->utruncated;
	memcpy(m->ips, s->uips, m->n * sizeof(*s->uips));
}

/*
 * Step 3 for a snapshot: resolve files to interned paths (FILE frames
 * then hold a reference, dropped by the caller).  Returns false if a
 * file could not be resolved (its frame shows the raw address).
 */
static bool offs_ustack_resolve(unsigned int n)
{
	struct offs_uframe *f;
	bool whole = true;
	unsigned int i;

	for (i = 0; i < n; i++) {
		f = &offs_uframes[i];
		f->path = NULL;
		f->kind = offs_uraw[i].kind;
		f->off = offs_uraw[i].off;
		if (f->kind != OFFS_UF_FILE)
			continue;
		f->path = offs_upath_of_file(offs_uraw[i].file);
		if (!f->path) {
			f->kind = OFFS_UF_UNMAPPED;
			f->off = offs_uraw[i].addr;
			whole = false;
		}
	}
	return whole;
}

/*
 * The part of offs_ustack_capture() past the memo: map the walk to files,
 * intern it, keep it in memo (its slot, under hash) when it is whole.  A
 * function of its own: its locals are not zeroed at a memo hit (issue
 * 52).  *n: the frames stored.
 */
static noinline struct offs_ustack *
offs_ustack_build(struct offs_sample *s, struct offs_usmemo *memo, u32 hash,
		  unsigned int *np)
{
	bool faulted = false, whole = true, in_maps = false, truncated = false;
	unsigned int i, n = *np;
	struct offs_ustack *us;
	int got;

	/*
	 * Walked against mappings that changed, copied again as often as
	 * allowed (offs_uwin_recapture()): its files are not known.
	 */
	got = s->ustale ? -ESTALE :
	      offs_umm_snapshot(s->umm, s->uips, n, s->ufault, offs_uraw,
				&faulted, &in_maps);
	if (got < 0) {
		/*
		 * Never wait behind a writer, never name from a copy that
		 * changed: keep the addresses, untranslated.
		 */
		if (got == -EBUSY)
			OFFS_STAT_ADD(user_trylock_failed, 1);
		for (i = 0; i < n; i++) {
			offs_uframes[i].path = NULL;
			offs_uframes[i].kind = OFFS_UF_BUSY;
			offs_uframes[i].off = s->uips[i];
		}
		whole = false;
	} else {
		n = got;
		whole = offs_ustack_resolve(n);
		offs_umm_release(offs_uraw, n);
	}
	if (faulted)
		OFFS_STAT_ADD(user_faulted, 1);
	/* Python frames: named before the lock (reads of the process). */
	if (s->pydepth)
		offs_pystack_name(s);

	mutex_lock(&offs_table_lock);
	if (s->pydepth)
		n = offs_pystack_merge(s, offs_uframes, s->uips, n,
				       offs_max_udepth(), &truncated);
	us = n ? offs_ustack_intern(offs_uframes, n, false,
				    s->utruncated || truncated) :
		 NULL;
	for (i = 0; i < n; i++)
		offs_uframe_ref(&offs_uframes[i], false);
	if (memo && us && in_maps && whole && !faulted)
		offs_usmemo_keep(memo, s, hash, us);
	mutex_unlock(&offs_table_lock);

	/* Degraded: a later try could do better (then not cached). */
	if (faulted || !whole || (n && !us) || s->upending)
		s->degraded = true;
	*np = n;
	return us;
}

/*
 * The user stack walked while t was pinned (s->uips, offs_pin_capture()),
 * mapped to files and interned, with a reference for the caller unless
 * s->ustack_memo (the memo's, valid until offs_table_record()); NULL if
 * it has none or it could not be stored.  No lock is held on entry.  Sets
 * s->degraded when the result is not the whole stack that a later try
 * could get (the mmap lock was busy, a page was not resident, something
 * could not be stored, Python frames may be missing: s->pylost).
 */
struct offs_ustack *offs_ustack_capture(struct offs_sample *s)
{
	u64 t0 = s->timed ? local_clock() : 0;
	unsigned int n = s->udepth;
	struct offs_usmemo *memo;
	struct offs_ustack *us;
	u32 hash = 0;

	/* Ours unless a memo hit below says otherwise. */
	s->ustack_memo = false;
	if (!n || !s->umm) {
		/* A user thread whose stack was not walked: it is exiting. */
		s->degraded = true;
		return NULL;
	}
	memo = NULL;
	if (offs_usmemo_may(s)) {
		memo = offs_usmemo_last;
		if (!memo || !offs_usmemo_same(memo, s)) {
			memo = offs_usmemo_slot(s, &hash);
			/* Kept in that slot below, if it can be. */
			if (memo->hash != hash || !offs_usmemo_same(memo, s))
				goto build;
		}
		/*
		 * The stack another thread of this process has, whole.  The
		 * memo's reference serves the caller (s->ustack_memo): only
		 * this thread drops it, at the end of the tick or before a
		 * recapture, never between here and offs_table_record().  No
		 * lock, no reference taken and dropped: about 60 instructions
		 * of a cold capture (issue 52).
		 */
		us = memo->us;
		s->ustack_memo = true;
		offs_usmemo_last = memo;
		OFFS_STAT_ADD(user_stack_memo_hits, 1);
		goto out;
	}
build:
	us = offs_ustack_build(s, memo, hash, &n);
out:
	if (s->pylost) {
		OFFS_STAT_ADD(py_lost, 1);
		s->degraded = true;
	}
	OFFS_STAT_ADD(user_walks, 1);
	OFFS_STAT_ADD(user_frames, n);
	if (s->timed)
		OFFS_STAT_ADD(user_ns_total, (local_clock() - t0) *
			      OFFS_FULL_TIME_EVERY);
	return us;
}

/* The sampler is stopped and every record is gone. */
void offs_ustack_exit(void)
{
	WARN_ON(offs_usmemo_used);
	WARN_ON(offs_ustack_count() || offs_upath_count() ||
		offs_pyname_count());
}
