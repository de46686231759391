// SPDX-License-Identifier: GPL-2.0
/*
 * ustack.c - user stacks of other threads, as (file, offset) frames.
 *
 * From the sampler kthread: enter the thread's address space with
 * kthread_use_mm() (once per process: threads come grouped by process, so
 * consecutive threads of a process share one "session"), walk frame
 * pointers with copy_from_user_nofault() (page faults are disabled: a
 * non-resident stack page ends the walk, it is never read in), then map
 * each address to (file, offset) under mmap_read_trylock() (never waiting
 * behind a writer).  Afterwards, a thread whose context-switch count moved
 * has run meanwhile: its walk is thrown away and only the leaf address,
 * taken from its registers while it was pinned, is kept.
 *
 * Resolving frames to files at sample time is what lets a snapshot be
 * symbolized later, after the process has exited or been restarted.
 *
 * Interned objects (paths, user stacks) are reference-counted and live
 * under offs_table_lock.  Lock order: mmap_lock, then offs_table_lock.
 */
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/jhash.h>
#include <linux/uaccess.h>
#include <linux/sched/clock.h>
#include <linux/fs_struct.h>
#include <linux/path.h>

#include "offsample.h"
#include "table.h"
#include "ustack.h"

/* Frame pointers further than this above the stack pointer are garbage. */
#define OFFS_USTACK_SPAN	(16UL << 20)
#define OFFS_UMEMO		16
#define OFFS_UBUCKETS		4096

static struct hlist_head offs_upath_buckets[OFFS_UBUCKETS];
static struct hlist_head offs_ustack_buckets[OFFS_UBUCKETS];
static unsigned int offs_nupaths;
static unsigned int offs_nustacks;

/* ---- interned paths and stacks (offs_table_lock held) ---- */

static void offs_upath_put(struct offs_upath *p)
{
	lockdep_assert_held(&offs_table_lock);
	if (--p->refs)
		return;
	hlist_del(&p->node);
	offs_nupaths--;
	atomic64_sub(sizeof(*p) + p->len + 1, &offs_stats.mem_bytes);
	kfree(p);
}

static struct offs_upath *offs_upath_intern(const struct offs_upath *k,
					    const char *path)
{
	struct hlist_head *head;
	struct offs_upath *p;
	size_t len = strlen(path);
	u32 hash;

	lockdep_assert_held(&offs_table_lock);
	hash = jhash(path, len, jhash_3words(k->dev, (u32)k->ino,
					     (u32)k->size, 0));
	head = &offs_upath_buckets[hash % OFFS_UBUCKETS];
	hlist_for_each_entry(p, head, node) {
		if (p->hash == hash && p->dev == k->dev && p->ino == k->ino &&
		    p->size == k->size &&
		    timespec64_equal(&p->mtime, &k->mtime) &&
		    p->len == len && !memcmp(p->path, path, len)) {
			p->refs++;
			return p;
		}
	}
	if (offs_nupaths >= READ_ONCE(offs_max_stacks)) {
		OFFS_STAT_ADD(user_dropped, 1);
		return NULL;
	}
	/*
	 * The sampled task's mmap lock is held: never enter reclaim here.
	 * Reclaim could wait for the OOM victim, whose exit (or whose
	 * queued mmap writer) waits for that lock.
	 */
	p = kmalloc(sizeof(*p) + len + 1, GFP_NOWAIT | __GFP_NOWARN);
	if (!p) {
		OFFS_STAT_ADD(user_dropped, 1);
		return NULL;
	}
	*p = *k;
	p->hash = hash;
	p->refs = 1;
	p->len = len;
	memcpy(p->path, path, len + 1);
	hlist_add_head(&p->node, head);
	offs_nupaths++;
	atomic64_add(sizeof(*p) + len + 1, &offs_stats.mem_bytes);
	return p;
}

static size_t offs_ustack_size(unsigned int depth)
{
	return struct_size((struct offs_ustack *)NULL, frames, depth);
}

void offs_ustack_get(struct offs_ustack *us)
{
	lockdep_assert_held(&offs_table_lock);
	us->refs++;
}

void offs_ustack_put(struct offs_ustack *us)
{
	unsigned int i;

	lockdep_assert_held(&offs_table_lock);
	if (--us->refs)
		return;
	for (i = 0; i < us->depth; i++)
		if (us->frames[i].path)
			offs_upath_put(us->frames[i].path);
	hlist_del(&us->node);
	offs_nustacks--;
	atomic64_sub(offs_ustack_size(us->depth), &offs_stats.mem_bytes);
	kfree(us);
}

unsigned int offs_ustack_count(void)
{
	return READ_ONCE(offs_nustacks);
}

/*
 * offs_table_lock held.  Returns the interned stack with a reference for
 * the caller, or NULL (counted).
 */
static struct offs_ustack *offs_ustack_intern(const struct offs_uframe *f,
					      unsigned int depth, bool raced,
					      bool truncated)
{
	size_t bytes = depth * sizeof(*f);
	struct hlist_head *head;
	struct offs_ustack *us;
	unsigned int i;
	u32 hash;

	lockdep_assert_held(&offs_table_lock);
	hash = jhash(f, bytes, depth | (raced << 16) | (truncated << 17));
	head = &offs_ustack_buckets[hash % OFFS_UBUCKETS];
	hlist_for_each_entry(us, head, node) {
		if (us->hash == hash && us->depth == depth &&
		    us->raced == raced && us->truncated == truncated &&
		    !memcmp(us->frames, f, bytes)) {
			us->refs++;
			goto out;
		}
	}
	us = NULL;
	if (offs_nustacks >= READ_ONCE(offs_max_stacks)) {
		OFFS_STAT_ADD(user_dropped, 1);
		goto out;
	}
	/* Usually under the sampled task's mmap lock: no reclaim (see above). */
	us = kmalloc(offs_ustack_size(depth), GFP_NOWAIT | __GFP_NOWARN);
	if (!us) {
		OFFS_STAT_ADD(user_dropped, 1);
		goto out;
	}
	us->hash = hash;
	us->depth = depth;
	us->raced = raced;
	us->truncated = truncated;
	us->refs = 1;
	memcpy(us->frames, f, bytes);
	for (i = 0; i < depth; i++)
		if (f[i].path)
			f[i].path->refs++;
	hlist_add_head(&us->node, head);
	offs_nustacks++;
	atomic64_add(offs_ustack_size(depth), &offs_stats.mem_bytes);
out:
	return us;
}

/* ---- the sampler's address-space session ---- */

/*
 * Sampler kthread only.  memo remembers, for the mm in use, which interned
 * path a mapped file resolved to (holding a reference), so the threads of
 * one process do not resolve libc.so.6 once each.  It is only trusted
 * while the mmap lock is held and the vma still maps the same file at the
 * same place.
 */
static struct {
	struct mm_struct *mm;
	unsigned int nmemo;
	unsigned int next_evict;
	struct {
		struct file *file;
		unsigned long start;
		unsigned long pgoff;
		struct offs_upath *path;
	} memo[OFFS_UMEMO];
} offs_usess;

static unsigned long offs_uips[OFFS_MAX_DEPTH_LIMIT];
static struct offs_uframe offs_uframes[OFFS_MAX_DEPTH_LIMIT];
static char offs_pathbuf[PATH_MAX];

static void offs_usess_memo_clear(void)
{
	unsigned int i;

	if (!offs_usess.nmemo)
		return;
	mutex_lock(&offs_table_lock);
	for (i = 0; i < offs_usess.nmemo; i++)
		offs_upath_put(offs_usess.memo[i].path);
	mutex_unlock(&offs_table_lock);
	offs_usess.nmemo = 0;
}

void offs_ustack_session_end(void)
{
	offs_usess_memo_clear();
	if (!offs_usess.mm)
		return;
	offs_unuse_mm(offs_usess.mm);
	/* Never tear down an exited process's memory in the sampler. */
	mmput_async(offs_usess.mm);
	offs_usess.mm = NULL;
}

/*
 * File paths are resolved as the sampled process sees them (its root
 * directory, hence its mount namespace: a container's "/usr/lib/libc.so.6"
 * rather than a path relative to some mount the sampler cannot reach).
 * d_path() resolves against the current task's root, so the sampler runs
 * with a private fs_struct (unshare_fs_struct() at start) whose root it
 * points at the sampled process's root.  set_fs_root() is not exported;
 * offs_set_root() does the same under fs->lock and fs->seq.
 */
static struct path offs_init_root;
static struct fs_struct *offs_root_of;	/* whose root is current */

static void offs_set_root(const struct path *path)
{
	struct fs_struct *fs = current->fs;
	struct path old;

	path_get(path);
	spin_lock(&fs->lock);
	write_seqcount_begin(&fs->seq);
	old = fs->root;
	fs->root = *path;
	write_seqcount_end(&fs->seq);
	spin_unlock(&fs->lock);
	path_put(&old);
}

/* Resolve paths from t's root from now on (sampler kthread only). */
void offs_root_enter(struct task_struct *t)
{
	struct fs_struct *fs = READ_ONCE(t->fs);
	struct path root;

	if (!fs || fs == offs_root_of || !offs_init_root.dentry)
		return;
	/* task_lock() keeps t->fs from going away (exit_fs). */
	task_lock(t);
	fs = t->fs;
	if (fs) {
		get_fs_root(fs, &root);
		offs_root_of = fs;
	}
	task_unlock(t);
	if (!fs)
		return;
	offs_set_root(&root);
	path_put(&root);
}

/* Back to the sampler's own root, so nothing is pinned between ticks. */
void offs_root_leave(void)
{
	if (!offs_root_of)
		return;
	offs_set_root(&offs_init_root);
	offs_root_of = NULL;
}

/* Called by the sampler kthread when it starts and before it exits. */
int offs_root_init(void)
{
	int err = unshare_fs_struct();

	if (err)
		return err;
	get_fs_root(current->fs, &offs_init_root);
	return 0;
}

void offs_root_exit(void)
{
	offs_root_leave();
	path_put(&offs_init_root);
	offs_init_root.dentry = NULL;
}

/* Enter t's address space (sleeps: task_lock, mm switch). */
static bool offs_usess_enter(struct task_struct *t)
{
	struct mm_struct *mm = READ_ONCE(t->mm);

	if (!mm)
		return false;
	if (mm == offs_usess.mm)
		return true;
	offs_ustack_session_end();
	mm = get_task_mm(t);
	if (!mm)
		return false;
	offs_root_enter(t);
	offs_use_mm(mm);
	offs_usess.mm = mm;
	return true;
}

/* Walk frame pointers from the pinned registers; returns the depth. */
static unsigned int offs_uwalk(const struct offs_sample *s, unsigned int max,
			       bool *truncated)
{
	unsigned long fp = s->ubp, lo = s->usp, frame[2];
	unsigned int n = 0;

	*truncated = false;
	offs_uips[n++] = s->uip;	/* the leaf is always recorded */
	while (fp >= lo && fp - lo <= OFFS_USTACK_SPAN && !(fp & 7)) {
		if (offs_copy_from_user_nofault(frame, (void __user *)fp,
						sizeof(frame)))
			break;
		if (frame[1] < PAGE_SIZE)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		offs_uips[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		lo = fp + sizeof(frame);
		fp = frame[0];
	}
	return n;
}

/* x86: the vDSO text mapping starts at mm->context.vdso. */
static bool offs_vma_is_vdso(struct mm_struct *mm, struct vm_area_struct *vma)
{
	return vma->vm_start == (unsigned long)mm->context.vdso;
}

/*
 * mmap lock and offs_table_lock held.  The interned path of vma's file,
 * with a reference for the caller, or NULL.
 */
static struct offs_upath *offs_upath_of(struct vm_area_struct *vma)
{
	struct file *file = vma->vm_file;
	struct inode *inode = file_inode(file);
	struct offs_upath key = { 0 }, *p;
	unsigned int i;
	char *path;

	for (i = 0; i < offs_usess.nmemo; i++) {
		if (offs_usess.memo[i].file == file &&
		    offs_usess.memo[i].start == vma->vm_start &&
		    offs_usess.memo[i].pgoff == vma->vm_pgoff) {
			p = offs_usess.memo[i].path;
			p->refs++;
			return p;
		}
	}
	path = d_path(offs_file_user_path(file), offs_pathbuf,
		      sizeof(offs_pathbuf));
	if (IS_ERR(path))
		return NULL;
	key.dev = inode->i_sb->s_dev;
	key.ino = inode->i_ino;
	key.size = i_size_read(inode);
	key.mtime = offs_inode_mtime(inode);
	p = offs_upath_intern(&key, path);
	if (!p)
		return NULL;
	if (offs_usess.nmemo < OFFS_UMEMO) {
		i = offs_usess.nmemo++;
	} else {
		/* Full (a process with many libraries): replace one, in turn. */
		i = offs_usess.next_evict++ % OFFS_UMEMO;
		offs_upath_put(offs_usess.memo[i].path);
	}
	offs_usess.memo[i].file = file;
	offs_usess.memo[i].start = vma->vm_start;
	offs_usess.memo[i].pgoff = vma->vm_pgoff;
	offs_usess.memo[i].path = p;
	p->refs++;			/* one for the memo, one for the caller */
	return p;
}

/*
 * mmap lock and offs_table_lock held.  Translate offs_uips[0..n) into
 * offs_uframes (FILE frames hold a reference); returns the frames kept.
 */
static unsigned int offs_umap(struct mm_struct *mm, unsigned int n)
{
	struct vm_area_struct *vma;
	struct offs_uframe *f;
	unsigned long addr;
	unsigned int i;

	for (i = 0; i < n; i++) {
		f = &offs_uframes[i];
		addr = offs_uips[i];
		vma = find_vma(mm, addr);
		if (!vma || addr < vma->vm_start) {
			if (i)
				break;	/* a walk into nowhere: stop */
			f->kind = OFFS_UF_UNMAPPED;
			f->off = addr;
			continue;
		}
		/* Past the leaf, a return address must point into code. */
		if (i && !(vma->vm_flags & VM_EXEC))
			break;
		if (vma->vm_file) {
			f->path = offs_upath_of(vma);
			f->kind = f->path ? OFFS_UF_FILE : OFFS_UF_UNMAPPED;
			f->off = f->path ? addr - vma->vm_start +
				 (vma->vm_pgoff << PAGE_SHIFT) : addr;
		} else if (offs_vma_is_vdso(mm, vma)) {
			f->kind = OFFS_UF_VDSO;
			f->off = addr - vma->vm_start;
		} else if (vma->vm_start <= mm->brk &&
			   vma->vm_end >= mm->start_brk) {
			f->kind = OFFS_UF_HEAP;
			f->off = addr;
		} else if (vma->vm_start <= mm->start_stack &&
			   vma->vm_end >= mm->start_stack) {
			f->kind = OFFS_UF_STACK;
			f->off = addr;
		} else {
			f->kind = OFFS_UF_ANON;
			f->off = addr;
		}
	}
	return i;
}

/*
 * The user stack of a pinned user thread, interned, with a reference for
 * the caller; NULL if it has none or it could not be stored.
 */
struct offs_ustack *offs_ustack_capture(struct task_struct *t,
					const struct offs_sample *s)
{
	unsigned int i, n, max = clamp(READ_ONCE(offs_max_user_depth), 1U,
				      (unsigned int)OFFS_MAX_DEPTH_LIMIT);
	bool truncated, raced = false;
	u64 t0 = local_clock();
	struct mm_struct *mm;
	struct offs_ustack *us;

	if (!s->user || !offs_usess_enter(t))
		return NULL;
	mm = offs_usess.mm;
	n = offs_uwalk(s, max, &truncated);
	/* Ran meanwhile?  Then only the pinned leaf is trustworthy. */
	if (READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw) != s->ncsw) {
		OFFS_STAT_ADD(user_raced, 1);
		raced = n > 1;
		n = 1;
		truncated = false;
	}
	memset(offs_uframes, 0, n * sizeof(*offs_uframes));
	if (!offs_mmap_read_trylock(mm)) {
		/* Never wait behind a writer: keep the addresses, untranslated. */
		OFFS_STAT_ADD(user_trylock_failed, 1);
		for (i = 0; i < n; i++) {
			offs_uframes[i].kind = OFFS_UF_BUSY;
			offs_uframes[i].off = offs_uips[i];
		}
		mutex_lock(&offs_table_lock);
		us = offs_ustack_intern(offs_uframes, n, raced, truncated);
		mutex_unlock(&offs_table_lock);
		goto out;
	}
	mutex_lock(&offs_table_lock);
	n = offs_umap(mm, n);
	us = n ? offs_ustack_intern(offs_uframes, n, raced, truncated) : NULL;
	for (i = 0; i < n; i++)
		if (offs_uframes[i].path)
			offs_upath_put(offs_uframes[i].path);
	mutex_unlock(&offs_table_lock);
	offs_mmap_read_unlock(mm);
out:
	OFFS_STAT_ADD(user_walks, 1);
	OFFS_STAT_ADD(user_frames, n);
	OFFS_STAT_ADD(user_ns_total, local_clock() - t0);
	return us;
}

/* The sampler is stopped and every record is gone. */
void offs_ustack_exit(void)
{
	WARN_ON(offs_nustacks || offs_nupaths);
}
