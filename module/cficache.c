// SPDX-License-Identifier: GPL-2.0
/*
 * cficache.c - compiled CFI tables (ucfi.c), one per mapped file, shared by
 * every process that maps it.
 *
 * Entries are keyed by the file's identity (device, inode, generation,
 * size, mtime, ctime), not by path or struct file: every process mapping
 * libc.so.6 shares one table, a replaced file gets a new one.  A table is
 * built once, asynchronously (a work item on offs_cficache_wq reads the file
 * through the page cache with kernel_read()), so the sampler never waits
 * for I/O: until it is ready, frames in that file are followed by frame
 * pointers and the capture is not cached (threadcache.c), so the next tick
 * tries again.  A file without usable CFI keeps a failed entry, so it is
 * not read again.
 *
 * Memory is bounded by the cfi_cache_mb parameter: tables not in use by
 * the sampler are evicted, least recently used first; a file whose table
 * alone would not fit is not kept (counted, frame pointers for it).  The
 * number of entries is bounded too (OFFS_CFICACHE_MAX_ENTS, failed ones
 * included: the least recently used goes), and so are the builds queued.
 *
 * CPU is bounded as well, since any user can map a file it wrote: a build
 * does work linear in the file's .eh_frame (ucfi.h), lets the scheduler in
 * every few hundred steps (call-frame instructions, records, sort steps)
 * and ends when it has used cfi_build_ms of CPU (failed, counted); builds
 * together take at most a quarter of one CPU over time: a build starts
 * only once the builds' CPU credit (OFFS_CFICACHE_BURST_NS at most, refilled
 * at a quarter of the time that passes) holds its whole budget, so a burst
 * is at most the credit plus one budget; and a file whose build failed
 * for a reason of its own is remembered by a fingerprint after its entry
 * is evicted, so that no set of files can keep the worker rebuilding
 * them.  rmmod stops a build at its next check, or a wait for credit at
 * once, instead of waiting for it; it still waits for a read of the file
 * in progress (only a file system that does not answer makes that long:
 * FUSE is not read at all).
 *
 * Locking: offs_cficache_lock (a mutex) protects the hash, the LRU list,
 * reference counts and totals; users are the sampler kthread (no lock of a
 * sampled task held: see umm.c) and the build work items.  The table
 * pointer of an entry is published once with release semantics and read
 * locklessly (offs_cficache_table()), also under a task's pi_lock.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/jhash.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/ktime.h>
#include <linux/hash.h>
#include <linux/sched.h>
#include <linux/sizes.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "ucfi.h"
#include "cficache.h"

#define OFFS_CFICACHE_BITS	10
#define OFFS_CFICACHE_MAX_ENTS	8192	/* failed entries included */
#define OFFS_CFICACHE_MAX_JOBS	32	/* builds queued or running */
/* Builds' CPU: a burst of this much, then 1/OFFS_CFICACHE_DUTY of a CPU. */
#define OFFS_CFICACHE_BURST_NS	(4 * NSEC_PER_SEC)
#define OFFS_CFICACHE_DUTY	4
/*
 * Fingerprints of failed files whose entries were evicted: 8,192 sets of
 * 4, most recent first (256 KiB, allocated at load), four times the entry
 * bound.  A set holds four: with as many failing files mapped as there are
 * entries, a few dozen sets get a fifth, and the file pushed out is built
 * (and fails) once more when it comes back; more files, more of that.
 * Those builds' CPU is bounded like any other's (the credit below).
 */
#define OFFS_CFICACHE_FP_BITS	13
#define OFFS_CFICACHE_FP_WAYS	4
/* The page cache is read in pieces this large, rmmod looked at between. */
#define OFFS_CFICACHE_READ_CHUNK	SZ_1M

enum { OFFS_UCFI_PENDING, OFFS_UCFI_READY, OFFS_UCFI_FAILED };

struct offs_ucfi_ent {
	struct hlist_node node;
	struct list_head lru;		/* built or failed, most recent first */
	u32 hash;
	dev_t dev;
	u64 ino;
	u32 gen;
	loff_t size;
	struct timespec64 mtime;
	struct timespec64 ctime;
	unsigned int refs;		/* sessions of the sampler using it */
	u8 state;
	bool cancelled;			/* built at cfi_cache_mb=0: free at refs 0 */
	bool lasting;			/* failed for good: remember when evicted */
	s16 err;			/* why it failed (state FAILED), 0 else */
	bool py;			/* a CPython interpreter: py is set */
	struct offs_py_syms pysyms;	/* set before table is published */
	struct offs_cfi_table *table;	/* set once, release */
};

struct offs_ucfi_job {
	struct work_struct work;
	struct file *file;
	struct offs_ucfi_ent *ent;
};

static DEFINE_MUTEX(offs_cficache_lock);
static struct hlist_head offs_cficache_buckets[1 << OFFS_CFICACHE_BITS];
static LIST_HEAD(offs_cficache_lru);
static unsigned int offs_cficache_nents;
static unsigned int offs_cficache_jobs;
static size_t offs_cficache_bytes;	/* tables of ready entries */
static struct workqueue_struct *offs_cficache_wq;
static bool offs_cficache_stopping;	/* rmmod: builds end at their next check */
/* CPU time builds may still take (may go below 0), refilled at credit_at. */
static s64 offs_cficache_credit = OFFS_CFICACHE_BURST_NS;
static u64 offs_cficache_credit_at;
static u64 (*offs_cficache_fps)[OFFS_CFICACHE_FP_WAYS];
#define OFFS_CFICACHE_FP_BYTES	(sizeof(*offs_cficache_fps) << OFFS_CFICACHE_FP_BITS)

struct offs_cficache_stats offs_cficache_stats;

static void offs_ucfi_key(struct file *file, struct offs_ucfi_ent *k)
{
	struct inode *inode = file_inode(file);

	/*
	 * A new entry is a copy of its key (offs_cficache_get()): every other
	 * field (refs, state, table, ...) must start at zero.  Kernels built
	 * without CONFIG_INIT_STACK_ALL_ZERO (Debian's 5.10) leave a stack
	 * variable as it was: 0.4-0.6.0 copied that garbage into new entries
	 * (a reference never dropped, warnings at rmmod, a table pointer
	 * freed that was never allocated).
	 */
	memset(k, 0, sizeof(*k));
	k->dev = inode->i_sb->s_dev;
	k->ino = inode->i_ino;
	k->gen = inode->i_generation;
	k->size = i_size_read(inode);
	k->mtime = offs_inode_mtime(inode);
	k->ctime = offs_inode_ctime(inode);
	k->hash = jhash_3words(k->dev, (u32)k->ino, (u32)k->size ^ k->gen,
			       (u32)k->mtime.tv_nsec);
}

/* A 64-bit fingerprint of a file's identity, never 0. */
static u64 offs_ucfi_fp(const struct offs_ucfi_ent *k)
{
	u32 w[8] = {
		k->dev, (u32)k->ino, (u32)(k->ino >> 32), k->gen, (u32)k->size,
		(u32)((u64)k->size >> 32), (u32)k->mtime.tv_nsec ^ (u32)k->mtime.tv_sec,
		(u32)k->ctime.tv_nsec ^ (u32)k->ctime.tv_sec,
	};

	return ((u64)jhash2(w, ARRAY_SIZE(w), 0x6f666673) << 32 |
		jhash2(w, ARRAY_SIZE(w), 0x63666921)) | 1;
}

/* Was a file of this fingerprint evicted after failing?  Lock held. */
static bool offs_ucfi_fp_known(u64 fp)
{
	u64 *set = offs_cficache_fps[hash_64(fp, OFFS_CFICACHE_FP_BITS)];
	unsigned int i;

	for (i = 0; i < OFFS_CFICACHE_FP_WAYS; i++)
		if (set[i] == fp)
			return true;
	return false;
}

/* Remember a failed file whose entry goes (the oldest in its set goes). */
static void offs_ucfi_fp_add(u64 fp)
{
	u64 *set = offs_cficache_fps[hash_64(fp, OFFS_CFICACHE_FP_BITS)];
	unsigned int i;

	if (offs_ucfi_fp_known(fp))
		return;
	for (i = OFFS_CFICACHE_FP_WAYS - 1; i > 0; i--)
		set[i] = set[i - 1];
	set[0] = fp;
}

static bool offs_ucfi_same(const struct offs_ucfi_ent *a,
			   const struct offs_ucfi_ent *b)
{
	return a->hash == b->hash && a->dev == b->dev && a->ino == b->ino &&
	       a->gen == b->gen && a->size == b->size &&
	       timespec64_equal(&a->mtime, &b->mtime) &&
	       timespec64_equal(&a->ctime, &b->ctime);
}

/*
 * Is e (held) the entry of file as the file is now: its key unchanged,
 * not rewritten in place since e was looked up?  e's key is set when it
 * is made and never changed: no lock.
 */
bool offs_cficache_same_file(const struct offs_ucfi_ent *e, struct file *file)
{
	struct offs_ucfi_ent key;

	offs_ucfi_key(file, &key);
	return offs_ucfi_same(e, &key);
}

/*
 * Bumped when tables held may no longer be what the parameters ask for
 * (offs_cficache_shrink(), offs_cficache_retry()): users that keep
 * entries from tick to tick (umm.c) let go of them.
 */
static unsigned int offs_cficache_epoch_n;

unsigned int offs_cficache_epoch(void)
{
	return READ_ONCE(offs_cficache_epoch_n);
}

/* offs_cficache_lock held. */
static void offs_ucfi_free(struct offs_ucfi_ent *e)
{
	lockdep_assert_held(&offs_cficache_lock);
	hlist_del_init(&e->node);	/* offs_cficache_retry() may have */
	if (e->state != OFFS_UCFI_PENDING)
		list_del(&e->lru);
	if (e->state == OFFS_UCFI_READY) {
		offs_cficache_bytes -= e->table->bytes;
		atomic64_sub(e->table->bytes, &offs_stats.memory_bytes);
	}
	offs_cficache_nents--;
	offs_cfi_free(e->table);
	kfree(e);
	atomic64_sub(sizeof(*e), &offs_stats.memory_bytes);
}

static size_t offs_cficache_cap(void)
{
	return (size_t)READ_ONCE(offs_cfi_cache_mb) << 20;
}

/*
 * Evict ready tables nobody uses until `need` more bytes fit; returns
 * whether they do.  offs_cficache_lock held.
 */
static bool offs_cficache_make_room(size_t need)
{
	struct offs_ucfi_ent *e, *tmp;
	size_t cap = offs_cficache_cap();

	if (need > cap)
		return false;
	list_for_each_entry_safe_reverse(e, tmp, &offs_cficache_lru, lru) {
		if (offs_cficache_bytes + need <= cap)
			break;
		/* Failed entries take no table: they stay (not read again). */
		if (e->refs || e->state != OFFS_UCFI_READY)
			continue;
		offs_ucfi_free(e);
		offs_cficache_stats.evicted++;
	}
	return offs_cficache_bytes + need <= cap;
}

/*
 * The entry count is at its bound: forget the least recently used entry
 * nobody uses, built or failed (a failed file's fingerprint is kept: it is
 * not built again).  offs_cficache_lock held.
 */
static void offs_cficache_evict_one(void)
{
	struct offs_ucfi_ent *e;

	list_for_each_entry_reverse(e, &offs_cficache_lru, lru) {
		if (!e->refs) {
			/* Not built again when it comes back: its fingerprint. */
			if (e->state == OFFS_UCFI_FAILED && e->lasting)
				offs_ucfi_fp_add(offs_ucfi_fp(e));
			offs_ucfi_free(e);
			offs_cficache_stats.evicted++;
			return;
		}
	}
}

/*
 * Page-cache reads for the compiler (ucfi.c), in pieces: up to 32 MiB of
 * .eh_frame, perhaps not in memory, and rmmod looks in between.
 */
static int offs_ucfi_read(void *ctx, u64 off, void *buf, size_t len)
{
	struct file *file = ctx;
	loff_t pos = off;
	ssize_t n;

	while (len) {
		if (READ_ONCE(offs_cficache_stopping))
			return -ECANCELED;
		n = kernel_read(file, buf, min_t(size_t, len, OFFS_CFICACHE_READ_CHUNK),
				&pos);
		if (n < 0)
			return n;
		if (!n)
			return -EINVAL;		/* the file is shorter */
		buf += n;
		len -= n;
	}
	return 0;
}

/* The CPU time this task has used (ns; updated at ticks and switches). */
static u64 offs_self_cpu_ns(void)
{
	return READ_ONCE(current->se.sum_exec_runtime);
}

struct offs_ucfi_budget {
	u64 cpu0;		/* offs_self_cpu_ns() at the start */
	u64 limit;		/* ns of CPU the build may take */
};

/*
 * Refill the builds' CPU credit: a quarter of the time since the last
 * refill, up to the burst.  offs_cficache_lock held.
 */
static void offs_cficache_refill(void)
{
	u64 now = ktime_get_ns();
	u64 gain = min_t(u64, (now - offs_cficache_credit_at) / OFFS_CFICACHE_DUTY,
			 OFFS_CFICACHE_BURST_NS);

	offs_cficache_credit_at = now;
	offs_cficache_credit = min_t(s64, OFFS_CFICACHE_BURST_NS,
				     offs_cficache_credit + (s64)gain);
}

/*
 * Wait until the credit holds a whole budget of limit ns (or the burst,
 * if the budget is larger), in steps of 20 ms; false on rmmod.  A work
 * item of our own queue: sleeps, TASK_IDLE (not a load, not a hung task).
 */
static bool offs_cficache_wait_credit(u64 limit)
{
	s64 need = min_t(u64, limit, OFFS_CFICACHE_BURST_NS);
	bool waited = false, ok;

	for (;;) {
		mutex_lock(&offs_cficache_lock);
		offs_cficache_refill();
		ok = offs_cficache_credit >= need;
		if (!ok && !waited)
			offs_cficache_stats.throttled++;
		mutex_unlock(&offs_cficache_lock);
		if (ok)
			return true;
		if (READ_ONCE(offs_cficache_stopping))
			return false;
		waited = true;
		schedule_timeout_idle(msecs_to_jiffies(20));
	}
}

/*
 * Did the build fail for a reason of the file's own, that another try
 * would meet again?  Not for no memory, rmmod, a read error, or a table
 * that does not fit cfi_cache_mb (which may be raised).  -ETIME does
 * depend on cfi_build_ms: raising it forgets those (offs_cficache_retry()).
 */
static bool offs_ucfi_lasting(int err)
{
	return err == -ENOEXEC || err == -ENOENT || err == -EINVAL ||
	       err == -E2BIG || err == -ETIME;
}

/*
 * The compiler's check (ucfi.h), every few hundred records and sort
 * steps: a work item on a kernel that does not preempt kernel code keeps
 * its CPU until it gives it up, so give it up here if anyone waits; end
 * the build on rmmod or once it is over its CPU budget.
 */
static int offs_ucfi_check(void *ctx)
{
	struct offs_ucfi_budget *b = ctx;

	cond_resched();
	if (READ_ONCE(offs_cficache_stopping))
		return -ECANCELED;
	if (offs_self_cpu_ns() - b->cpu0 > b->limit)
		return -ETIME;
	return 0;
}

/* Work item: build one table (process context, may sleep and do I/O). */
static void offs_ucfi_build_fn(struct work_struct *work)
{
	struct offs_ucfi_job *job = container_of(work, struct offs_ucfi_job,
						 work);
	struct offs_ucfi_ent *e = job->ent;
	struct offs_ucfi_budget budget = {
		.limit = (u64)READ_ONCE(offs_cfi_build_ms) * NSEC_PER_MSEC,
	};
	struct offs_cfi_src src = {
		.read = offs_ucfi_read,
		.ctx = job->file,
		.size = i_size_read(file_inode(job->file)),
		.check = offs_ucfi_check,
		.check_ctx = &budget,
	};
	struct offs_py_src pysrc = {
		.read = offs_ucfi_read,
		.ctx = job->file,
		.size = src.size,
		.check = offs_ucfi_check,
		.check_ctx = &budget,
	};
	struct offs_cfi_table *t = NULL;
	struct offs_cfi_work cw = { 0 };
	u64 wall = 0, cpu = 0;
	int err = -ECANCELED;

	/* Queued before rmmod: nothing to build for. */
	if (!READ_ONCE(offs_cficache_stopping) &&
	    offs_cficache_wait_credit(budget.limit)) {
		wall = ktime_get_ns();
		budget.cpu0 = offs_self_cpu_ns();
		err = offs_cfi_build(&src, &t, &cw);
		/*
		 * Is it a CPython interpreter (upy.c)?  One pass over its
		 * .dynstr, within the same budget; not knowing is "no".
		 */
		if (!err)
			e->py = !offs_py_elf_scan(&pysrc, &e->pysyms);
		cpu = offs_self_cpu_ns() - budget.cpu0;
		wall = ktime_get_ns() - wall;
	}
	fput(job->file);

	mutex_lock(&offs_cficache_lock);
	offs_cficache_stats.build_ns += wall;
	offs_cficache_stats.build_cpu_ns += cpu;
	if (cpu > offs_cficache_stats.build_cpu_max_ns)
		offs_cficache_stats.build_cpu_max_ns = cpu;
	offs_cficache_credit -= cpu;
	if (cw.over)
		offs_cficache_stats.over_work++;
	if (err == -ETIME)
		offs_cficache_stats.over_time++;
	if (err == -ECANCELED)
		offs_cficache_stats.cancelled++;
	e->lasting = offs_ucfi_lasting(err);
	if (!offs_cficache_cap()) {
		/*
		 * cfi_cache_mb was set to 0 while this was built: keep
		 * nothing (offs_cficache_shrink()); an entry a session still
		 * holds goes when it lets go (offs_cficache_put()).
		 */
		offs_cfi_free(t);
		if (e->refs) {
			list_add(&e->lru, &offs_cficache_lru);
			e->state = OFFS_UCFI_FAILED;
			e->cancelled = true;
		} else {
			offs_ucfi_free(e);
		}
		goto out;
	}
	if (!err && !offs_cficache_make_room(t->bytes)) {
		/* Depends on cfi_cache_mb, which may be raised: not lasting. */
		offs_cficache_stats.too_big++;
		err = -E2BIG;
	}
	list_add(&e->lru, &offs_cficache_lru);
	if (err) {
		offs_cfi_free(t);
		e->state = OFFS_UCFI_FAILED;
		e->err = err;
		offs_cficache_stats.failed++;
	} else {
		offs_cficache_bytes += t->bytes;
		atomic64_add(t->bytes, &offs_stats.memory_bytes);
		e->state = OFFS_UCFI_READY;
		/* Pairs with the acquire in offs_cficache_table(). */
		smp_store_release(&e->table, t);
		offs_cficache_stats.built++;
	}
out:
	offs_cficache_jobs--;
	mutex_unlock(&offs_cficache_lock);
	kfree(job);
}

/*
 * Files on FUSE are served by a user-space daemon, possibly one of the
 * processes we sample: a read could wait for it for good, and with it the
 * build queue and rmmod.  Their frames are followed with frame pointers.
 */
static bool offs_cficache_unsafe_fs(struct file *file)
{
	const char *name = file_inode(file)->i_sb->s_type->name;

	return !strncmp(name, "fuse", 4);
}

/*
 * The entry for the file a process maps, with a reference (drop it with
 * offs_cficache_put()), or NULL: CFI off, a file on FUSE, or (*retry set)
 * no room for another entry or build just now (OFFS_CFICACHE_MAX_JOBS
 * builds queued, waiting for the builds' CPU credit or running, the
 * entry bound, no memory).  In the last case the
 * caller unwinds with frame pointers and must not keep the capture as
 * whole: a later tick asks again (a process mapping 40 new libraries at
 * once would otherwise keep short stacks for its sleeping threads).  A
 * file seen for the first time gets its table built in the background.
 * Sampler kthread; sleeps (mutex, allocations); no lock of a sampled task
 * held.
 */
struct offs_ucfi_ent *offs_cficache_get(struct file *file, bool *retry)
{
	struct offs_ucfi_ent key, *e;
	struct offs_ucfi_job *job;
	struct hlist_head *bucket;
	bool known;
	u64 fp;

	if (!READ_ONCE(offs_cfi_cache_mb) || !offs_cficache_wq ||
	    offs_cficache_unsafe_fs(file))
		return NULL;
	offs_ucfi_key(file, &key);
	mutex_lock(&offs_cficache_lock);
	bucket = &offs_cficache_buckets[hash_32(key.hash, OFFS_CFICACHE_BITS)];
	hlist_for_each_entry(e, bucket, node) {
		if (offs_ucfi_same(e, &key)) {
			if (e->state != OFFS_UCFI_PENDING)
				list_move(&e->lru, &offs_cficache_lru);
			goto found;
		}
	}
	e = NULL;
	if (offs_cficache_nents >= OFFS_CFICACHE_MAX_ENTS)
		offs_cficache_evict_one();
	if (offs_cficache_nents >= OFFS_CFICACHE_MAX_ENTS)
		goto defer;
	fp = offs_ucfi_fp(&key);
	known = offs_ucfi_fp_known(fp);
	if (!known && offs_cficache_jobs >= OFFS_CFICACHE_MAX_JOBS)
		goto defer;
	e = kzalloc(sizeof(*e), GFP_KERNEL | __GFP_NOWARN);
	job = known ? NULL : kzalloc(sizeof(*job), GFP_KERNEL | __GFP_NOWARN);
	if (!e || (!known && !job)) {
		kfree(e);
		kfree(job);
		e = NULL;
		goto defer;
	}
	*e = key;
	INIT_LIST_HEAD(&e->lru);
	hlist_add_head(&e->node, bucket);
	offs_cficache_nents++;
	atomic64_add(sizeof(*e), &offs_stats.memory_bytes);
	if (known) {
		/* Failed before its entry was evicted: fails again. */
		e->state = OFFS_UCFI_FAILED;
		e->lasting = true;
		e->err = -ENOEXEC;
		list_add(&e->lru, &offs_cficache_lru);
		offs_cficache_stats.failed_known++;
		goto found;
	}
	e->state = OFFS_UCFI_PENDING;
	INIT_WORK(&job->work, offs_ucfi_build_fn);
	job->file = get_file(file);
	job->ent = e;
	offs_cficache_jobs++;
	queue_work(offs_cficache_wq, &job->work);
found:
	e->refs++;
	goto out;
defer:
	offs_cficache_stats.deferred++;
	*retry = true;
out:
	mutex_unlock(&offs_cficache_lock);
	return e;
}

/*
 * The last user of an entry lets go: if cfi_cache_mb was lowered while it
 * was in use (offs_cficache_shrink() keeps entries in use), the cache gets
 * back under the bound now rather than at some later build; at 0 the
 * entry goes whatever it holds.  Sleeps (mutex, frees).
 */
void offs_cficache_put(struct offs_ucfi_ent *e)
{
	size_t cap;

	mutex_lock(&offs_cficache_lock);
	cap = offs_cficache_cap();
	if (!--e->refs && e->state != OFFS_UCFI_PENDING) {
		/* Cancelled: never built, whatever the bound is now. */
		if (!cap || e->cancelled)
			offs_ucfi_free(e);
		else if (offs_cficache_bytes > cap)
			offs_cficache_make_room(0);
	}
	mutex_unlock(&offs_cficache_lock);
}

/*
 * The table of e if it is built; *pending: it is not yet.  Lockless, any
 * context (pin.c calls it with a task's pi_lock held): the caller holds a
 * reference, so e and its table stay.
 */
const struct offs_cfi_table *
offs_cficache_table(const struct offs_ucfi_ent *e, bool *pending)
{
	/* Pairs with the release in offs_ucfi_build_fn(): a whole table. */
	const struct offs_cfi_table *t = smp_load_acquire(&e->table);

	/*
	 * The builder sets the state before it publishes the table: READY
	 * with no table yet is still pending, not "no CFI" (umm.c remembers
	 * answers that are not pending for the rest of the window).
	 */
	if (!t && READ_ONCE(e->state) != OFFS_UCFI_FAILED)
		*pending = true;
	return t;
}

/*
 * The CPython interpreter in e's file (upy.c), or NULL: not one, or its
 * table is not built yet.  Lockless like offs_cficache_table(): pysyms is
 * written before the table is published.
 */
const struct offs_py_syms *offs_cficache_py(const struct offs_ucfi_ent *e)
{
	/* Pairs with the release in offs_ucfi_build_fn(): py, pysyms set. */
	if (!smp_load_acquire(&e->table))
		return NULL;
	return e->py ? &e->pysyms : NULL;
}

/* Totals for /proc/offsample/stats. */
void offs_cficache_totals(unsigned int *ents, size_t *bytes, unsigned int *jobs)
{
	*ents = READ_ONCE(offs_cficache_nents);
	*bytes = READ_ONCE(offs_cficache_bytes);
	*jobs = READ_ONCE(offs_cficache_jobs);
}

/*
 * cfi_build_ms was changed: files that failed for taking longer than it
 * are built again when next met, and the fingerprints of evicted failures
 * (which do not say why) are forgotten.  A failed entry in use is taken
 * out of the hash (a new one is made when the file is next met) and freed
 * when its last user lets go; the epoch tells umm.c to let go of kept
 * copies of mappings.
 */
void offs_cficache_retry(void)
{
	struct offs_ucfi_ent *e, *tmp;

	mutex_lock(&offs_cficache_lock);
	WRITE_ONCE(offs_cficache_epoch_n, offs_cficache_epoch_n + 1);
	list_for_each_entry_safe(e, tmp, &offs_cficache_lru, lru) {
		if (e->state != OFFS_UCFI_FAILED ||
		    (e->err != -ETIME && e->lasting))
			continue;
		if (!e->refs) {
			offs_ucfi_free(e);
		} else {
			hlist_del_init(&e->node);
			e->cancelled = true;
		}
	}
	if (offs_cficache_fps)
		memset(offs_cficache_fps, 0, OFFS_CFICACHE_FP_BYTES);
	mutex_unlock(&offs_cficache_lock);
}

/*
 * cfi_cache_mb was lowered: evict down to it (tables in use stay).  At 0
 * the cache is off: every entry nobody uses goes, failed ones included
 * (they only spare a file a second try), so that the module holds nothing
 * for it.  Entries in use go when their last user lets go
 * (offs_cficache_put()), entries still being built when their build ends.
 */
void offs_cficache_shrink(void)
{
	struct offs_ucfi_ent *e, *tmp;

	mutex_lock(&offs_cficache_lock);
	WRITE_ONCE(offs_cficache_epoch_n, offs_cficache_epoch_n + 1);
	if (offs_cficache_cap()) {
		offs_cficache_make_room(0);
	} else {
		list_for_each_entry_safe(e, tmp, &offs_cficache_lru, lru)
			if (!e->refs)
				offs_ucfi_free(e);
	}
	mutex_unlock(&offs_cficache_lock);
}

int offs_cficache_init(void)
{
	offs_cficache_credit_at = ktime_get_ns();
	offs_cficache_fps = kvzalloc(OFFS_CFICACHE_FP_BYTES, GFP_KERNEL);
	if (!offs_cficache_fps)
		return -ENOMEM;
	atomic64_add(OFFS_CFICACHE_FP_BYTES, &offs_stats.memory_bytes);
	/* Unbound, one build at a time: a background job, never a burst. */
	offs_cficache_wq = alloc_workqueue("offsample_cfi", WQ_UNBOUND, 1);
	if (!offs_cficache_wq) {
		kvfree(offs_cficache_fps);
		atomic64_sub(OFFS_CFICACHE_FP_BYTES, &offs_stats.memory_bytes);
		return -ENOMEM;
	}
	return 0;
}

/* The sampler is stopped: no session holds an entry. */
void offs_cficache_exit(void)
{
	struct offs_ucfi_ent *e;
	struct hlist_node *tmp;
	unsigned int i;

	/*
	 * Waits for the builds queued or running, which end at their next
	 * check (ucfi.c: within a few hundred records or a 1 MiB read) or
	 * at once if they have not started.
	 */
	WRITE_ONCE(offs_cficache_stopping, true);
	destroy_workqueue(offs_cficache_wq);
	offs_cficache_wq = NULL;
	mutex_lock(&offs_cficache_lock);
	for (i = 0; i < ARRAY_SIZE(offs_cficache_buckets); i++)
		hlist_for_each_entry_safe(e, tmp, &offs_cficache_buckets[i], node) {
			WARN_ON(e->refs);
			offs_ucfi_free(e);
		}
	mutex_unlock(&offs_cficache_lock);
	kvfree(offs_cficache_fps);
	offs_cficache_fps = NULL;
	atomic64_sub(OFFS_CFICACHE_FP_BYTES, &offs_stats.memory_bytes);
}
