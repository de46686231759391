// SPDX-License-Identifier: GPL-2.0
/*
 * umm.c - the sampler's window into a sampled process's address space.
 *
 * Enter it with kthread_use_mm() (once per process: threads come grouped
 * by process, so consecutive threads share one window), walk the stack
 * with non-faulting reads (offs_umm_read()) while the thread is pinned
 * (pin.c, pi_lock held: page faults are disabled, a non-resident stack
 * page ends the walk, it is never read in), then take a snapshot of the
 * mappings the frames fall in.
 *
 * A lock of the sampled process is held in three places only, each time
 * with mmap_read_trylock() (never waiting behind a writer): to copy its
 * executable file mappings (offs_umaps, whose file references are held
 * until the window ends, or while the copy is kept for the next ticks: a
 * umount in that time may see them busy), or to compare a kept copy with
 * them (offs_ukeep_recheck()), once per process per tick and again when
 * they changed under a walk (at most 4 more times, ustack.c); to compare
 * a walk's frames with the copy after they changed (offs_umm_verify());
 * and in the snapshot for a frame outside them (anonymous code, the vDSO,
 * a walk into nowhere), for one find_vma() and at most one get_file() per
 * frame.  Nothing under it allocates, sleeps
 * or takes another lock, so a writer of the sampled process (mmap, munmap,
 * brk) that queues behind us waits for a few lookups, never for a reader
 * of /proc/offsample: paths are resolved and stacks interned
 * (offs_table_lock) only after the lock is dropped, from the file
 * references taken here.
 *
 * Sampler kthread only: no locking of its own.
 */
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/uaccess.h>
#include <linux/hash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "umm.h"
#include "ucfi.h"
#include "cficache.h"

struct mm_struct *offs_umm_cur;		/* umm.h */

/*
 * The executable file mappings of the current address space, each with its
 * file and its compiled CFI (cficache.c), sorted by address: what the
 * unwinder looks frames up in while a thread is pinned (no lock can be
 * taken then), and what the snapshot maps those frames to files with,
 * without the mmap lock.  Copied under mmap_read_trylock() (find_vma() and
 * get_file() only) when a process's first thread is captured in a tick,
 * or taken over from the copy of an earlier tick (offs_ukeep below).  A
 * mapping replaced after the copy keeps its old file here, so each walk
 * checks afterwards that the copy still holds (offs_umm_maps_current():
 * the sampler copies again and walks again if not).
 */
#define OFFS_UMAPS_MAX		256

struct offs_umap {
	unsigned long start;
	unsigned long end;
	unsigned long pgoff;
	struct file *file;		/* reference held */
	struct offs_ucfi_ent *ent;	/* reference held, or NULL */
	bool retry;			/* NULL for now: ask again next tick */
};

/* What a copy of mm's mappings is checked against later. */
struct offs_mmsig {
	unsigned long sig;		/* offs_mm_wsig() at the copy */
	int map_count;			/* mm's, at the copy */
	unsigned long exec_vm;		/* mm's, at the copy */
};

static struct offs_umap offs_umaps_buf[OFFS_UMAPS_MAX];	/* a new copy */
static struct offs_umap *offs_umaps = offs_umaps_buf;	/* the window's */
static unsigned int offs_numaps;
static bool offs_umaps_busy;		/* no tables: the mmap lock was busy */
bool offs_umaps_built;		/* for offs_umm_cur (umm.h) */

/*
 * The window's copy is checked after each walk against the sign it was
 * made with (offs_umm_maps_current()), when it has one.  Moved: the sign
 * moved before a read lock of ours, which where the sign is the lock's
 * owner (compat.h) would make it look unmoved again.
 */
static struct offs_mmsig offs_umaps_at;
static bool offs_umaps_signed;
static bool offs_umaps_moved;

/*
 * Copies kept from one tick to the next.  The threads of a process that
 * run between ticks are captured again at every tick, and its mappings
 * were copied again each time: a step per VMA (a process has a few
 * hundred), a file reference and a table lookup under offs_cficache_lock
 * per executable mapping; about 2,000 instructions per executable mapping
 * against some 3,000 for the capture of a thread (docs/BENCHMARKS-icount.md,
 * "flat").  A copy is used again while compat.h's offs_mm_wsig() says no
 * writer of that mmap lock came since it was made (and the mapping count
 * and executable size agree), or, when that sign moved, a walk of the
 * mappings finds the executable file mappings unchanged
 * (offs_ukeep_recheck()), and the CFI parameters did not change
 * (cficache.c's epoch).  It is let go when its process is seen to exit,
 * and at the end of the first tick that did not use it: its file
 * references may make a umount see the files busy for that long (one
 * tick interval, at most a second), where a window held them for part of
 * a tick.  A bound hit is counted (user_maps_keep_full); that process's
 * copy then lasts its window only.  A library rewritten in place keeps
 * its old table for a second at most: the table was looked up by the
 * file's size and times at the copy, and each kept copy compares them
 * with its files' once a second (offs_ukeep_files_same(); 0.9.6: before,
 * for as long as the copy was kept, which with 8 slots was rarely long).
 */
/*
 * Slots: with 8 (0.9.1-0.9.5) a guest's own two dozen processes, captured
 * in full at every tick with thread_cache=0, filled them, and the other
 * copies were made again each tick: about 450 instructions of a cold
 * capture's 3,600 (tests/bench/insnprof.sh, 1,000 threads, 2026-12-07).
 * The slots are searched one by one, once per window and per kept stack
 * at a sweep (ustack.c); a copy takes 48 bytes per executable mapping
 * (memory_bytes), and the cfi tables it refers to cannot be evicted while
 * it is kept: those of processes that ran at every tick, which each tick
 * asks for again anyway.
 */
#define OFFS_UKEEP_SLOTS	64
/*
 * ... and at most this many mappings in all: each holds a cficache entry,
 * which cannot be evicted while held, and the entries are bounded
 * (OFFS_CFICACHE_MAX_ENTS, 8,192): with 64 copies of up to 256 mappings
 * they could all be held, and files met later never got one (33
 * processes of 250 mappings, 57-cfi-bounds, 2026-12-07).  8 of the
 * largest copies, as with 8 slots; a copy over it is not kept
 * (user_maps_keep_full).
 */
#define OFFS_UKEEP_MAPS		(8 * OFFS_UMAPS_MAX)

static struct offs_ukeep {
	struct mm_struct *mm;		/* mmgrab()bed; NULL: a free slot */
	struct offs_mmsig at;		/* mm's sign at the copy */
	struct offs_umap *maps;		/* n entries, references held */
	unsigned int n;
	unsigned int nretry;		/* entries with retry set */
	u64 gen;			/* its offs_rmemo generation */
	unsigned int epoch;		/* offs_cficache_epoch() at the copy */
	bool used;			/* by a window of this tick */
	bool cfi;			/* copied with CFI tables on */
	bool stale;			/* a read lock of ours since: recheck */
	unsigned long copied;		/* jiffies at the copy */
	unsigned long checked;		/* ... when its files were compared */
	struct offs_umm_pymemo py;	/* pystack.c's, for these mappings */
} offs_ukeep[OFFS_UKEEP_SLOTS];
static struct offs_ukeep *offs_ukeep_cur;	/* holds offs_umaps, or NULL */
static u64 offs_ukeep_dropped;			/* kept copies let go */
static unsigned int offs_ukeep_nmaps;		/* mappings they hold */

/*
 * Taken with our mmap read lock held; false: no sign (this kernel gives
 * none, or another reader took the lock beside ours).
 */
static bool offs_mmsig_take(struct mm_struct *mm, struct offs_mmsig *g)
{
	g->map_count = mm->map_count;
	g->exec_vm = mm->exec_vm;
	return offs_mm_wsig(mm, &g->sig);
}

/* Has no writer of mm's mappings come since g was taken?  Any context. */
static bool offs_mmsig_same(struct mm_struct *mm, const struct offs_mmsig *g)
{
	return offs_mm_wsig_same(mm, g->sig) &&
	       READ_ONCE(mm->map_count) == g->map_count &&
	       READ_ONCE(mm->exec_vm) == g->exec_vm;
}

/*
 * The rules the unwinder found in the current window, by return address:
 * the threads of a process wait at the same few addresses, so a cold tick
 * looks each one up once per process instead of once per thread (a binary
 * search in the mappings, then one in the file's table).  The rule
 * pointers point into tables the mappings hold (offs_umap.ent), so each
 * set of mappings has its own generation: a new copy gets a new one, and
 * a kept copy its own again, for as long as it is kept.
 * Only complete answers are kept: none where a table was still pending.
 * Used with IRQs off (pin.c) or in the IPI of oncpu.c, while the sampler
 * waits for it: never two users at once.
 */
#define OFFS_RMEMO_BITS		8

static struct offs_rmemo {
	u64 pc;
	const struct offs_cfi_rule *rule;	/* NULL: no CFI there */
	u64 gen;
} offs_rmemo[1 << OFFS_RMEMO_BITS];
u64 offs_rmemo_gen = 1;			/* the window's (umm.h) */
static u64 offs_rmemo_last = 1;		/* the last one given */

/*
 * A generation no entry has: the mappings change, or get one.  64 bits
 * never wrap (one a window: 2^32 took days on a busy host), so an entry
 * can never match by an old generation given again, here or in
 * ustack.c's memo of stacks, which keys on it too (offs_umm_gen()).
 */
static void offs_rmemo_forget(void)
{
	offs_rmemo_gen = ++offs_rmemo_last;
}

/* Is gen that of a copy still kept (offs_umm_tick_end() ran)? */
bool offs_umm_gen_kept(u64 gen)
{
	unsigned int i;

	for (i = 0; i < OFFS_UKEEP_SLOTS; i++)
		if (offs_ukeep[i].mm && offs_ukeep[i].gen == gen)
			return true;
	return false;
}

/* Is the window's copy one kept from tick to tick (its generation too)? */
bool offs_umm_gen_current_kept(void)
{
	return offs_ukeep_cur && offs_ukeep_cur->gen == offs_rmemo_gen;
}

/*
 * Kept copies let go so far: a generation stops being kept only when this
 * grows (or was never kept, offs_umm_gen_current_kept()).
 */
u64 offs_umm_kept_dropped(void)
{
	return offs_ukeep_dropped;
}

/* Drop the references of n copied mappings (no lock held; sleeps). */
static void offs_umaps_put(struct offs_umap *m, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (m[i].ent)
			offs_cficache_put(m[i].ent);
		fput(m[i].file);
	}
}

/* Let a kept copy go (not the window's); sleeps. */
static void offs_ukeep_free(struct offs_ukeep *k)
{
	if (WARN_ON_ONCE(k == offs_ukeep_cur))
		return;
	offs_umaps_put(k->maps, k->n);
	offs_ukeep_nmaps -= k->n;
	kvfree(k->maps);
	atomic64_sub(offs_ksize(k->n * sizeof(*k->maps)),
		     &offs_stats.memory_bytes);
	mmdrop(k->mm);
	memset(k, 0, sizeof(*k));
	offs_ukeep_dropped++;
}

static struct offs_ukeep *offs_ukeep_find(struct mm_struct *mm)
{
	unsigned int i;

	for (i = 0; i < OFFS_UKEEP_SLOTS; i++)
		if (offs_ukeep[i].mm == mm)
			return &offs_ukeep[i];
	return NULL;
}

/*
 * A read lock of ours was taken outside a copy: where the sign is the
 * rwsem's owner (compat.h), it would now hide a writer that came before.
 */
static void offs_ukeep_touched(struct mm_struct *mm)
{
	struct offs_ukeep *k;

	if (OFFS_MM_WSIG_READERS) {
		k = offs_ukeep_find(mm);
		if (k)
			k->stale = true;
	}
}

/*
 * Ask cficache for mapping m's table (none with cfi off); m->retry: not
 * built yet, ask again at a later tick.  Sleeps (cficache.c's mutex).
 */
static void offs_umap_table(struct offs_umap *m, bool cfi)
{
	m->retry = false;
	m->ent = cfi ? offs_cficache_get(m->file, &m->retry) : NULL;
}

/* Were kept copy k's tables asked for as they are now (parameter cfi)? */
static bool offs_ukeep_tables_now(const struct offs_ukeep *k, bool cfi)
{
	return k->cfi == cfi && k->epoch == offs_cficache_epoch();
}

/* Is kept copy k of mm's mappings still right for parameters cfi? */
static bool offs_ukeep_valid(const struct offs_ukeep *k,
			     struct mm_struct *mm, bool cfi)
{
	return !k->stale && offs_ukeep_tables_now(k, cfi) &&
	       offs_mmsig_same(mm, &k->at);
}

/* Does copied mapping m hold vma's file at the same address and offset? */
static bool offs_umap_is(const struct offs_umap *m,
			 const struct vm_area_struct *vma)
{
	return m->file == vma->vm_file && m->start == vma->vm_start &&
	       m->pgoff == vma->vm_pgoff;
}

/*
 * Kept copy k lost mm's sign (a writer of the mmap lock came, to map
 * memory of any kind; on 5.10 and 6.1 also any other reader, such as a
 * page fault): walk mm's mappings again and compare its executable file
 * mappings with k's.  Where they are the same files, ranges and offsets,
 * k is what a new copy would be, without a file reference and a table
 * lookup per mapping (about 2,000 instructions each), and the rules
 * memoized under its generation still hold: it takes the new sign.  Not
 * for a copy over a second old: a library rewritten in place (the same
 * file) keeps the table looked up at the copy, for a second at most.
 * Under mmap_read_trylock() (false if busy); no allocation, no sleep.
 */
static bool offs_ukeep_recheck(struct offs_ukeep *k, struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	const struct offs_umap *m;
	struct offs_vma_it it;
	struct offs_mmsig at;
	unsigned int n = 0;
	bool same = true;

	if (time_after(jiffies, k->copied + HZ) || !mmap_read_trylock(mm))
		return false;
	if (!offs_mmsig_take(mm, &at)) {
		mmap_read_unlock(mm);
		return false;
	}
	/* As offs_umaps_build() copies: in order, OFFS_UMAPS_MAX at most. */
	offs_vma_start(&it, mm);
	while (same && n < OFFS_UMAPS_MAX && (vma = offs_vma_next(&it))) {
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		if (n == k->n) {
			same = false;	/* one more than k has */
			break;
		}
		m = &k->maps[n++];
		same = offs_umap_is(m, vma) && m->end == vma->vm_end;
	}
	mmap_read_unlock(mm);
	if (!same || n != k->n)
		return false;
	k->at = at;
	k->stale = false;
	return true;
}

/*
 * Are kept copy k's tables still those of its files as they are now?  A
 * file rewritten in place (the same inode, new times or size) needs a
 * table of its own: asked for by a new copy.  Once a second per kept
 * copy, a few dozen instructions per mapping.
 */
static bool offs_ukeep_files_same(struct offs_ukeep *k)
{
	unsigned int i;

	if (time_before(jiffies, k->checked + HZ))
		return true;
	k->checked = jiffies;
	for (i = 0; i < k->n; i++)
		if (k->maps[i].ent &&
		    !offs_cficache_same_file(k->maps[i].ent, k->maps[i].file))
			return false;
	return true;
}

/*
 * Make a kept copy of mm's mappings the window's if it is still right.
 * Sleeps (a table asked for again: cficache.c's mutex).
 */
static bool offs_ukeep_enter(struct mm_struct *mm, bool cfi)
{
	struct offs_ukeep *k = offs_ukeep_find(mm);
	struct offs_umap *m;
	unsigned int i;

	if (!k)
		return false;
	if (!offs_ukeep_valid(k, mm, cfi)) {
		if (!offs_ukeep_tables_now(k, cfi) ||
		    !offs_ukeep_recheck(k, mm)) {
			offs_ukeep_free(k);
			return false;
		}
		OFFS_STAT_ADD(user_maps_rechecked, 1);
	}
	if (!offs_ukeep_files_same(k)) {
		offs_ukeep_free(k);
		return false;
	}
	for (i = 0; k->nretry && i < k->n; i++) {
		m = &k->maps[i];
		if (!m->retry)
			continue;
		offs_umap_table(m, true);
		if (!m->retry)
			k->nretry--;
	}
	k->used = true;
	offs_ukeep_cur = k;
	offs_umaps = k->maps;
	offs_numaps = k->n;
	offs_rmemo_gen = k->gen;
	return true;
}

/*
 * Keep the copy just made (offs_umaps_buf; *k0 holds the sign, mm's
 * mapping count and executable size and the CFI epoch at the copy; cfi
 * the parameter it was made with) for the ticks to come, in a free slot
 * or that of a process that exited.  Slots in use are not taken over: with more
 * processes than slots changing at every tick, the first ones keep
 * theirs.  Sleeps (allocation).
 */
static void offs_ukeep_store(struct mm_struct *mm, const struct offs_ukeep *k0,
			     bool cfi)
{
	struct offs_ukeep *k = NULL;
	struct offs_umap *maps;
	unsigned int i;

	for (i = 0; i < OFFS_UKEEP_SLOTS && !k; i++)
		if (!offs_ukeep[i].mm)
			k = &offs_ukeep[i];
	for (i = 0; i < OFFS_UKEEP_SLOTS && !k; i++)
		if (!atomic_read(&offs_ukeep[i].mm->mm_users))
			k = &offs_ukeep[i];
	if (k && k->mm)
		offs_ukeep_free(k);	/* its process exited */
	if (!k || offs_ukeep_nmaps + offs_numaps > OFFS_UKEEP_MAPS) {
		OFFS_STAT_ADD(user_maps_keep_full, 1);
		return;
	}
	maps = kvmalloc_array(offs_numaps, sizeof(*maps),
			      GFP_KERNEL | __GFP_NOWARN);
	if (!maps)
		return;		/* this window's copy only */
	memcpy(maps, offs_umaps_buf, offs_numaps * sizeof(*maps));
	atomic64_add(offs_ksize(offs_numaps * sizeof(*maps)),
		     &offs_stats.memory_bytes);
	mmgrab(mm);
	*k = *k0;
	k->mm = mm;
	k->maps = maps;
	k->n = offs_numaps;
	offs_ukeep_nmaps += k->n;
	k->nretry = 0;
	for (i = 0; i < k->n; i++)
		k->nretry += maps[i].retry;
	k->gen = offs_rmemo_gen;
	k->used = true;
	k->cfi = cfi;
	k->stale = false;
	k->copied = jiffies;
	k->checked = jiffies;
	offs_ukeep_cur = k;
	offs_umaps = maps;
}

/*
 * End of a tick, no window open: let go of the copies this tick did not
 * use, those of exited processes, and all of them with CFI tables off.
 * Sleeps.
 */
void offs_umm_tick_end(bool all)
{
	bool cfi = READ_ONCE(offs_cfi_cache_mb);
	struct offs_ukeep *k;
	unsigned int i;

	for (i = 0; i < OFFS_UKEEP_SLOTS; i++) {
		k = &offs_ukeep[i];
		if (!k->mm)
			continue;
		if (all || !k->used || !offs_ukeep_tables_now(k, cfi) ||
		    !atomic_read(&k->mm->mm_users))
			offs_ukeep_free(k);
		else
			k->used = false;
	}
}

/* Leave the window's mappings: a kept copy keeps its references. */
static void offs_umaps_clear(void)
{
	offs_rmemo_forget();
	if (offs_ukeep_cur)
		offs_ukeep_cur = NULL;
	else
		offs_umaps_put(offs_umaps, offs_numaps);
	offs_umaps = offs_umaps_buf;
	offs_numaps = 0;
	offs_umaps_busy = false;
	offs_umaps_built = false;
	offs_umaps_signed = false;
	offs_umaps_moved = false;
}

/*
 * Copy mm's executable mappings into offs_umaps_buf, with tables if cfi;
 * -EBUSY if the mmap lock was not free, else 0 if *k0 tells when the
 * copy stops being right (offs_mm_wsig(), the mapping count, the
 * executable size, the CFI epoch), 1 if nothing does.  Sleeps
 * (cficache.c's mutex, allocations); no lock held on entry.
 */
static int offs_umaps_build(struct mm_struct *mm, bool cfi,
			    struct offs_ukeep *k0)
{
	struct offs_umap *u = offs_umaps_buf;
	struct vm_area_struct *vma;
	struct offs_vma_it it;
	unsigned int i, n = 0;
	bool signed_ok;

	if (!mmap_read_trylock(mm)) {
		/* Tables would be missing: a later tick can do better. */
		offs_umaps_busy = cfi;
		return -EBUSY;
	}
	signed_ok = offs_mmsig_take(mm, &k0->at);
	/* Before the lookups: a later bump must find this copy stale. */
	k0->epoch = offs_cficache_epoch();
	/*
	 * One step per VMA: a process with 5,000 threads has over 10,000
	 * (stacks and their guard pages).
	 */
	offs_vma_start(&it, mm);
	while (n < OFFS_UMAPS_MAX && (vma = offs_vma_next(&it))) {
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		u[n].start = vma->vm_start;
		u[n].end = vma->vm_end;
		u[n].pgoff = vma->vm_pgoff;
		u[n].file = get_file(vma->vm_file);
		n++;
	}
	mmap_read_unlock(mm);
	for (i = 0; i < n; i++)
		offs_umap_table(&u[i], cfi);
	offs_umaps = u;
	offs_numaps = n;
	offs_rmemo_forget();
	return signed_ok && n ? 0 : 1;
}

/*
 * What the unwinder (ucfi.c) asks of the address space, with IRQs off.
 * Each read is a read of the bytes asked for (a word, two for a
 * frame-pointer frame), not a copy of a larger chunk: copies made the
 * walk slower and put more bytes on the stack of the on-CPU IPI
 * (oncpu.c; docs/BENCHMARKS-tick.md, 0.5.8).  See offs_umm_read() for
 * how a word is read.
 */
struct offs_uctx {
	bool pending;		/* a table was still being built */
	unsigned int memo_hits;	/* rules found in offs_rmemo */
};

/* The file offset of pc, inside executable file mapping m. */
static u64 offs_umap_off(int m, u64 pc)
{
	return pc - offs_umaps[m].start + (offs_umaps[m].pgoff << PAGE_SHIFT);
}

/* The index of the executable file mapping holding pc, or -1. */
static int offs_umaps_find(u64 pc)
{
	unsigned int lo = 0, hi = offs_numaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < offs_umaps[mid].start)
			hi = mid;
		else if (pc >= offs_umaps[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static const struct offs_cfi_rule *offs_umm_lookup(u64 pc, bool *pending)
{
	const struct offs_cfi_table *t;
	int mid = offs_umaps_find(pc);
	u64 vaddr;

	if (mid < 0)
		return NULL;
	if (!offs_umaps[mid].ent) {
		/* Not taken on this time: the capture is not whole. */
		if (offs_umaps[mid].retry)
			*pending = true;
		return NULL;
	}
	t = offs_cficache_table(offs_umaps[mid].ent, pending);
	if (!t || !offs_cfi_vaddr(t, offs_umap_off(mid, pc), &vaddr))
		return NULL;
	return offs_cfi_lookup(t, vaddr);
}

/*
 * The slot of pc under the window's generation: a process and the children
 * it forked wait at the same addresses under generations of their own, and
 * with the slot of the address alone each one's capture evicted the other's
 * rules (a pipe's two ends: one hit in five, 2026-12-06).
 */
static struct offs_rmemo *offs_rmemo_slot(u64 pc)
{
	return &offs_rmemo[hash_64(pc ^ (offs_rmemo_gen << 32),
				   OFFS_RMEMO_BITS)];
}

static const struct offs_cfi_rule *offs_umm_rule(void *ctx, u64 pc)
{
	struct offs_rmemo *m = offs_rmemo_slot(pc);
	const struct offs_cfi_rule *r;
	struct offs_uctx *uc = ctx;
	bool pending = false;

	if (m->gen == offs_rmemo_gen && m->pc == pc) {
		uc->memo_hits++;
		return m->rule;
	}
	r = offs_umm_lookup(pc, &pending);
	if (pending) {
		uc->pending = true;
		return r;
	}
	m->pc = pc;
	m->rule = r;
	m->gen = offs_rmemo_gen;
	return r;
}

/*
 * A read of user memory that never faults a page in: page faults are
 * disabled first, then the range is checked with access_ok() and read a
 * word at a time with __get_user() (a fault is fixed up to -EFAULT
 * through the exception table, never served).  The unwinder (ucfi.c)
 * reads words, frame-pointer pairs and signal contexts: whole words.
 * offs_umm_walk() disables page faults once around all of a walk's
 * reads (0.9.6: about 45 instructions a capture fewer than once a read).
 *
 * In that order because the walk also runs in hard IRQ (oncpu.c's IPI):
 * on kernels built with CONFIG_DEBUG_ATOMIC_SLEEP, x86's access_ok()
 * warns there unless page faults are disabled (WARN_ON_IN_IRQ, 5.10 and
 * 6.1; a panic with panic_on_warn), and copy_from_user_nofault() called
 * access_ok() before disabling them until 2023 (d319f344561d, in 6.4 and
 * backported to 6.1.y; 5.10 and early 6.1 kernels have the old order), so
 * it is not used here.  Words, not __copy_from_user_inatomic(): with
 * CONFIG_HARDENED_USERCOPY that checks the destination object, which in
 * the IPI lies on the IRQ stack and can make it look the address up under
 * vmap_area_lock in hard IRQ.
 *
 * The other check of the newer copy_from_user_nofault(),
 * nmi_uaccess_okay() (that the address space loaded on this CPU is
 * current's), holds by construction in both places the walk runs.  In the
 * sampler kthread between kthread_use_mm() and kthread_unuse_mm(), the
 * sampled mm is loaded whenever the kthread runs.  In the IPI, pin.c's
 * offs_user_walk() walks only if t->mm is the window's mm, which the
 * sampler took with get_task_mm() under task_lock(): exec_mmap(), which
 * enables IRQs between setting t->mm and loading it, holds task_lock()
 * across that, so there t->mm is already the new mm and differs; switch_mm()
 * and temporary mms run with IRQs off; and the window holds mm_users, so
 * the page tables stay.
 *
 * Word by word with __get_user() rather than copy_from_user_nofault()'s
 * per-call checks and copy loop also made the walk about 30% faster in
 * one 6.1 guest (2026-11-27, 2,000 threads with 22 frames;
 * docs/BENCHMARKS-tick.md, "User-walk experiments"): 20.5 / 18.8 us down
 * to 14.4 / 11.2 us.
 */
/* The read itself, page faults already disabled by the caller. */
static __always_inline int offs_umm_rd_nopf(void *ctx, u64 addr, void *buf,
					    size_t len)
{
	const u64 __user *p = (const u64 __user *)addr;
	u64 *out = buf;
	size_t i, n = len / sizeof(u64);
	int err = 0;

	if (len % sizeof(u64))
		return -EINVAL;
	if (!access_ok(p, len))
		return -EFAULT;
	for (i = 0; i < n && !err; i++)
		err = __get_user(out[i], p + i);
	return err ? -EFAULT : 0;
}

int offs_umm_read(void *ctx, u64 addr, void *buf, size_t len)
{
	int err;

	pagefault_disable();
	err = offs_umm_rd_nopf(ctx, addr, buf, len);
	pagefault_enable();
	return err;
}

/*
 * The CPython interpreter among the current window's executable mappings
 * (the first whose file's table says so, cficache.c), and its load bias
 * (what to add to the file's virtual addresses), or NULL.  *pending: a
 * file's table is not built yet, so NULL cannot rule an interpreter out
 * (pystack.c looks again at the process's next thread).  Sampler kthread,
 * after offs_umm_map_code().
 */
const struct offs_py_syms *offs_umm_python(u64 *bias, bool *pending)
{
	const struct offs_cfi_table *t;
	const struct offs_py_syms *py;
	unsigned int i;
	u64 va;

	*pending = false;
	for (i = 0; i < offs_numaps; i++) {
		if (!offs_umaps[i].ent)
			continue;
		t = offs_cficache_table(offs_umaps[i].ent, pending);
		if (!t)
			continue;
		py = offs_cficache_py(offs_umaps[i].ent);
		if (!py ||
		    !offs_cfi_vaddr(t, offs_umap_off(i, offs_umaps[i].start), &va))
			continue;
		*bias = offs_umaps[i].start - va;
		return py;
	}
	return NULL;
}

/*
 * The interpreter memo of the window's copy when it is kept from tick to
 * tick and every mapping got its table (one still to come could hold an
 * interpreter), else NULL.  Sampler kthread, after offs_umm_map_code().
 * A copy kept again after a recheck (offs_ukeep_recheck()) maps the same
 * files at the same addresses: its memo holds.
 */
struct offs_umm_pymemo *offs_umm_pymemo(void)
{
	struct offs_ukeep *k = offs_ukeep_cur;

	return k && !k->nretry ? &k->py : NULL;
}

/* Leave the current address space: its code map, then the mm itself. */
void offs_umm_leave(void)
{
	struct offs_ukeep *k;

	offs_umaps_clear();
	if (offs_umm_cur) {
		/* Exited meanwhile: its files are let go now, not at tick end. */
		k = offs_ukeep_find(offs_umm_cur);
		if (k && atomic_read(&offs_umm_cur->mm_users) <= 1)
			offs_ukeep_free(k);
		kthread_unuse_mm(offs_umm_cur);
		/* Never tear down an exited process's memory in the sampler. */
		mmput_async(offs_umm_cur);
		offs_umm_cur = NULL;
	}
}

/*
 * Enter t's address space (none is current: offs_umm_leave() first);
 * returns it, or NULL if t has none (exiting).
 * Sleeps: get_task_mm() takes task_lock(t) for a moment, and switching
 * the mm is a context switch of our own.
 */
struct mm_struct *offs_umm_use(struct task_struct *t)
{
	struct mm_struct *mm;

	if (WARN_ON_ONCE(offs_umm_cur))
		offs_umm_leave();
	mm = get_task_mm(t);
	if (!mm)
		return NULL;
	kthread_use_mm(mm);
	offs_umm_cur = mm;
	return mm;
}

/* The map of the current address space's code the unwinder needs, once. */
void offs_umm_map_code_build(void)
{
	/* Read once: the copy, its tables and the kept slot must agree. */
	bool cfi = READ_ONCE(offs_cfi_cache_mb);
	struct mm_struct *mm = offs_umm_cur;
	struct offs_ukeep k0 = { };
	int err;

	if (!mm)
		return;
	offs_umaps_built = true;
	if (offs_ukeep_enter(mm, cfi)) {
		OFFS_STAT_ADD(user_maps_kept, 1);
		offs_umaps_at = offs_ukeep_cur->at;
		offs_umaps_signed = true;
		return;
	}
	err = offs_umaps_build(mm, cfi, &k0);
	if (err < 0)
		return;
	OFFS_STAT_ADD(user_maps_copied, 1);
	offs_umaps_at = k0.at;
	offs_umaps_signed = true;
	if (!err) {
		offs_ukeep_store(mm, &k0, cfi);
	} else if (offs_numaps) {
		/* No sign to check walks against: each one is verified. */
		offs_umaps_moved = true;
	}
}

/*
 * The mappings changed under a walk (offs_umm_verify()): copy them again
 * for the window.  Sleeps, as offs_umm_map_code().
 */
void offs_umm_recopy(void)
{
	offs_umaps_clear();
	offs_umm_map_code();
}

/*
 * Do the window's copied mappings still describe mm, as far as their sign
 * tells (compat.h: no writer of its mmap lock came since the copy; on 5.10
 * and 6.1 no other reader either)?  A thread of the process may have
 * unmapped a library and mapped another in its place, or run code the
 * copy does not have, between the copy and the walk of a thread that runs
 * it: that walk followed the wrong tables and would name the wrong files.
 * pin.c asks right after the walk, the thread still pinned (any context).
 * A copy made without a sign (PREEMPT_RT kernels without mm_lock_seq,
 * another reader beside ours) is never current: each walk is verified.
 * A window whose mmap lock was busy has no copy (offs_umaps_busy): its
 * walks follow frame pointers and its frames are named under the lock.
 */
bool offs_umm_maps_current(struct mm_struct *mm)
{
	if (mm != offs_umm_cur || !offs_umaps_built || !offs_umaps_signed)
		return true;
	return !offs_umaps_moved && offs_mmsig_same(mm, &offs_umaps_at);
}

/*
 * mmap_read_trylock() for the snapshot and offs_umm_verify().  Where the
 * sign is the lock's owner, our read lock makes it the sampler again: note
 * first whether it moved, with preemption off so that only a writer on
 * another CPU within those few instructions can go unseen by the walks
 * after it (the kept copy is rechecked next tick anyway,
 * offs_ukeep_touched()).
 */
static bool offs_umm_trylock(struct mm_struct *mm)
{
	bool locked;

	if (!OFFS_MM_WSIG_READERS)
		return mmap_read_trylock(mm);
	preempt_disable();
	if (!offs_umm_maps_current(mm))
		offs_umaps_moved = true;
	locked = mmap_read_trylock(mm);	/* never sleeps */
	preempt_enable();
	return locked;
}

/*
 * s was walked after the window's copy's sign moved (s->ustale): are the
 * mappings its frames lie in now those of the copy?  Each frame in a
 * copied mapping must lie in a mapping of the same file, start and offset,
 * each other frame in no executable file mapping (past a copy cut at
 * OFFS_UMAPS_MAX, anything): then the walk followed the right tables and
 * the copy names the right files.  The thread may have run since its walk,
 * so a change after the walk counts as one before it; two changes that
 * undo each other between the walk and this look go unseen.  1 if they
 * are, 0 if not, -EBUSY if the mmap lock was not free.  Under
 * mmap_read_trylock(), which leaves the copy's sign moved for the rest of
 * the window (offs_umm_trylock()).  Sampler kthread, no lock held on
 * entry.
 */
int offs_umm_verify(const struct offs_sample *s)
{
	struct mm_struct *mm = s->umm;
	struct vm_area_struct *vma;
	bool same = true;
	unsigned long ip;
	unsigned int i;
	int m;

	if (!mm || mm != offs_umm_cur || !offs_umaps_built)
		return 0;
	if (!offs_umm_trylock(mm))
		return -EBUSY;
	/* No allocation, no sleep, no other lock until the unlock. */
	for (i = 0; i < s->udepth && same; i++) {
		ip = s->uips[i];
		m = offs_umaps_find(ip);
		vma = find_vma(mm, ip);
		if (vma && ip < vma->vm_start)
			vma = NULL;
		if (m < 0) {
			same = !vma || !vma->vm_file ||
			       !(vma->vm_flags & VM_EXEC) ||
			       (offs_numaps == OFFS_UMAPS_MAX &&
				ip >= offs_umaps[offs_numaps - 1].end);
			continue;
		}
		same = vma && (vma->vm_flags & VM_EXEC) &&
		       offs_umap_is(&offs_umaps[m], vma);
	}
	mmap_read_unlock(mm);
	offs_ukeep_touched(mm);
	return same ? 1 : 0;
}

/*
 * Walk the user stack from the pinned registers into ips[]; returns the
 * depth.  Frames in files are followed with their compiled CFI, others
 * (and files whose table is not built yet: *pending) with frame pointers.
 * *fault_addr is the address whose read failed, 0 if the walk ended
 * otherwise.  Any context (pin.c calls it with IRQs off): it only reads
 * user memory without faulting and tables the session holds.
 */
unsigned int offs_umm_walk(const struct offs_sample *s, unsigned long *ips,
			   unsigned int max, bool *truncated,
			   unsigned long *fault_addr, bool *pending)
{
	struct offs_uctx uc;
	struct offs_unwind_ops ops = {
		.rule = offs_umm_rule, .read = offs_umm_rd_nopf, .ctx = &uc,
	};
	struct offs_unwind_regs r = {
		.ip = s->uip, .sp = s->usp, .bp = s->ubp,
	};
	struct offs_unwind_out out;
	unsigned int n;

	uc.pending = false;
	uc.memo_hits = 0;
	/* Once for the walk's reads (offs_umm_read()'s order). */
	pagefault_disable();
	n = offs_cfi_unwind_inline(&ops, &r, ips, max, &out);
	pagefault_enable();
	*truncated = out.truncated;
	*fault_addr = out.fault_addr;
	*pending = uc.pending || offs_umaps_busy;
	OFFS_STAT_ADD(user_cfi_frames, out.cfi_frames);
	OFFS_STAT_ADD(user_rule_memo_hits, uc.memo_hits);
	if (out.bad)
		OFFS_STAT_ADD(unwind_errors, 1);
	return n;
}

/* x86: the vDSO text mapping starts at mm->context.vdso. */
static bool offs_vma_is_vdso(struct mm_struct *mm, struct vm_area_struct *vma)
{
	return vma->vm_start == (unsigned long)mm->context.vdso;
}

/*
 * Translate ips[0..n) into raw frames.  Returns the number of frames
 * kept, or -EBUSY when the mmap lock was needed and not free.  FILE
 * frames hold a reference on their file: offs_umm_release() drops them.
 * *faulted tells whether the walk stopped at fault_addr inside a mapping,
 * that is at a page that was not resident rather than at the end of the
 * chain.  Frames in the executable file mappings copied when the window
 * was entered (offs_umaps) need no lock; the others (anonymous code, the
 * vDSO, a walk into nowhere) and fault_addr are looked up under
 * mmap_read_trylock().  *in_maps tells that every frame was in offs_umaps
 * and the walk did not end at a read fault: the result depends on the
 * addresses alone for as long as the window lasts.
 */
int offs_umm_snapshot(struct mm_struct *mm, const unsigned long *ips,
		      unsigned int n, unsigned long fault_addr,
		      struct offs_uframe_raw *raw, bool *faulted, bool *in_maps)
{
	bool mapped = mm == offs_umm_cur && offs_umaps_built, locked = false;
	struct vm_area_struct *vma;
	struct offs_uframe_raw *f;
	unsigned long addr;
	unsigned int i;
	int m;

	*faulted = false;
	*in_maps = false;
	for (i = 0; i < n; i++) {
		f = &raw[i];
		addr = ips[i];
		f->file = NULL;
		f->addr = addr;
		f->off = addr;
		m = mapped ? offs_umaps_find(addr) : -1;
		if (m >= 0) {
			f->kind = OFFS_UF_FILE;
			f->file = get_file(offs_umaps[m].file);
			f->off = offs_umap_off(m, addr);
			continue;
		}
		if (!locked) {
			if (!offs_umm_trylock(mm))
				goto busy;
			locked = true;
		}
		/* No allocation, no sleep, no other lock until the unlock. */
		vma = find_vma(mm, addr);
		if (!vma || addr < vma->vm_start) {
			if (i)
				break;	/* a walk into nowhere: stop */
			f->kind = OFFS_UF_UNMAPPED;
			continue;
		}
		/* Past the leaf, a return address must point into code. */
		if (i && !(vma->vm_flags & VM_EXEC))
			break;
		if (vma->vm_file) {
			f->kind = OFFS_UF_FILE;
			f->file = get_file(vma->vm_file);
			f->off = addr - vma->vm_start +
				 (vma->vm_pgoff << PAGE_SHIFT);
		} else if (offs_vma_is_vdso(mm, vma)) {
			f->kind = OFFS_UF_VDSO;
			f->off = addr - vma->vm_start;
		} else if (vma->vm_start <= mm->brk &&
			   vma->vm_end >= mm->start_brk) {
			f->kind = OFFS_UF_HEAP;
		} else if (vma->vm_start <= mm->start_stack &&
			   vma->vm_end >= mm->start_stack) {
			f->kind = OFFS_UF_STACK;
		} else {
			f->kind = OFFS_UF_ANON;
		}
	}
	if (fault_addr) {
		if (!locked && !offs_umm_trylock(mm)) {
			/* Cannot tell: degraded, tried again next tick. */
			*faulted = true;
			return i;
		}
		locked = true;
		vma = find_vma(mm, fault_addr);
		*faulted = vma && fault_addr >= vma->vm_start;
	}
	if (locked) {
		mmap_read_unlock(mm);
		offs_ukeep_touched(mm);
	} else {
		*in_maps = mapped && !fault_addr && i == n;
	}
	return i;
busy:
	/* Not locked here: frames so far came from offs_umaps only. */
	offs_umm_release(raw, i);
	return -EBUSY;
}

/* Drop the file references of raw frames (no lock held). */
void offs_umm_release(struct offs_uframe_raw *raw, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (raw[i].file)
			fput(raw[i].file);
		raw[i].file = NULL;
	}
}
