// SPDX-License-Identifier: GPL-2.0
/*
 * upath.c - mapped files as the sampled process sees them.
 *
 * A user frame is recorded as (file, offset).  The file is named by the
 * path the sampled process would use (its root directory, hence its mount
 * namespace: a container's "/usr/lib/libc.so.6") and identified by device,
 * inode, size and mtime, so that the symbolizer can tell when the file on
 * disk has been replaced.  Resolving at sample time is what lets a
 * snapshot be symbolized after the process has exited.
 *
 * Paths are interned (one object per distinct identity and path, shared
 * by every user stack that points into the file) and reference-counted
 * under offs_table_lock.  Resolution itself (d_path(), the inode) runs
 * with no lock held, from a file reference taken under the sampled
 * process's mmap lock (umm.c); only interning takes offs_table_lock.
 */
#include <linux/sched.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/fs_struct.h>
#include <linux/path.h>
#include <linux/dcache.h>
#include <linux/slab.h>
#include <linux/jhash.h>

#include "offsample.h"
#include "table.h"
#include "ustack.h"

#define OFFS_UBUCKETS		4096
#define OFFS_UMEMO		16

static struct hlist_head offs_upath_buckets[OFFS_UBUCKETS];
static unsigned int offs_nupaths;

/* ---- interned paths (offs_table_lock held) ---- */

void offs_upath_get(struct offs_upath *p)
{
	lockdep_assert_held(&offs_table_lock);
	p->refs++;
}

void offs_upath_put(struct offs_upath *p)
{
	lockdep_assert_held(&offs_table_lock);
	if (--p->refs)
		return;
	hlist_del(&p->node);
	offs_nupaths--;
	atomic64_sub(offs_ksize(sizeof(*p) + p->len + 1),
		     &offs_stats.mem_bytes);
	kfree(p);
}

unsigned int offs_upath_count(void)
{
	return READ_ONCE(offs_nupaths);
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
	/* No lock of the sampled process is held: reclaim is allowed. */
	p = kmalloc(sizeof(*p) + len + 1, GFP_KERNEL | __GFP_NOWARN);
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
	atomic64_add(offs_ksize(sizeof(*p) + len + 1), &offs_stats.mem_bytes);
	return p;
}

/* ---- roots ---- */

/*
 * d_path() resolves against the current task's root, so the sampler runs
 * with a private fs_struct (unshare_fs_struct() at start) whose root it
 * points at the sampled process's root.  set_fs_root() is not exported;
 * offs_set_root() does the same under fs->lock and fs->seq.
 */
static struct path offs_init_root;
static bool offs_root_moved;		/* not at offs_init_root */

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

/*
 * Resolve paths from t's root from now on (sampler kthread only, no lock
 * held).  Compared by path, not by fs_struct: a freed fs_struct's address
 * may be reused by another process within the tick.  A different root
 * also empties the memo of resolved files (named from the old root).
 */
void offs_root_enter(struct task_struct *t)
{
	struct fs_struct *fs;
	struct path root;

	if (!offs_init_root.dentry || !READ_ONCE(t->fs))
		return;
	/* task_lock() keeps t->fs from going away (exit_fs). */
	task_lock(t);
	fs = t->fs;
	if (fs)
		get_fs_root(fs, &root);
	task_unlock(t);
	if (!fs)
		return;
	/* Only this kthread changes its own (private) fs_struct. */
	if (!path_equal(&root, &current->fs->root)) {
		offs_upath_memo_clear();
		offs_set_root(&root);
		offs_root_moved = true;
	}
	path_put(&root);
}

/* Back to the sampler's own root, so nothing is pinned between ticks. */
void offs_root_leave(void)
{
	if (!offs_root_moved)
		return;
	offs_upath_memo_clear();
	offs_set_root(&offs_init_root);
	offs_root_moved = false;
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

/* ---- files of the current address space ---- */

/*
 * Sampler kthread only.  The memo remembers which interned path a file
 * resolved to, so that the threads of one process do not resolve
 * libc.so.6 once each.  Each slot holds a reference on its file and on
 * its path: an equal file pointer is the same open file, never a new one
 * at a recycled address.  Emptied when the sampler leaves the address
 * space (umm.c), because the same file could be named differently from
 * another process's root.
 */
static struct {
	unsigned int n;
	unsigned int next_evict;
	struct {
		struct file *file;
		struct offs_upath *path;
	} e[OFFS_UMEMO];
} offs_umemo;

static char offs_pathbuf[PATH_MAX];

void offs_upath_memo_clear(void)
{
	unsigned int i, n = offs_umemo.n;

	if (!n)
		return;
	mutex_lock(&offs_table_lock);
	for (i = 0; i < n; i++)
		offs_upath_put(offs_umemo.e[i].path);
	mutex_unlock(&offs_table_lock);
	/* fput() outside the lock: a last reference may tear a file down. */
	for (i = 0; i < n; i++)
		fput(offs_umemo.e[i].file);
	offs_umemo.n = 0;
}

/*
 * The interned path of a mapped file, with a reference for the caller, or
 * NULL (counted).  The caller holds a reference on file and no lock; this
 * takes offs_table_lock to intern.
 */
struct offs_upath *offs_upath_of_file(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct offs_upath key = { 0 }, *p;
	struct file *evicted = NULL;
	unsigned int i;
	char *path;

	for (i = 0; i < offs_umemo.n; i++) {
		if (offs_umemo.e[i].file == file) {
			p = offs_umemo.e[i].path;
			mutex_lock(&offs_table_lock);
			offs_upath_get(p);
			mutex_unlock(&offs_table_lock);
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

	mutex_lock(&offs_table_lock);
	p = offs_upath_intern(&key, path);
	if (p) {
		if (offs_umemo.n < OFFS_UMEMO) {
			i = offs_umemo.n++;
		} else {
			/* Full (many libraries): replace one, in turn. */
			i = offs_umemo.next_evict++ % OFFS_UMEMO;
			offs_upath_put(offs_umemo.e[i].path);
			evicted = offs_umemo.e[i].file;
		}
		offs_umemo.e[i].file = get_file(file);
		offs_umemo.e[i].path = p;
		offs_upath_get(p);	/* one for the memo, one for the caller */
	}
	mutex_unlock(&offs_table_lock);
	if (evicted)
		fput(evicted);
	return p;
}
