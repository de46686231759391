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
#include <linux/jhash.h>

#include "offsample.h"
#include "stats.h"
#include "table.h"
#include "upath.h"

#define OFFS_UBUCKETS		4096
#define OFFS_UMEMO		16

static struct hlist_head offs_upath_buckets[OFFS_UBUCKETS];
static struct offs_istore offs_upaths = {
	.buckets = offs_upath_buckets,
	.nbuckets = OFFS_UBUCKETS,
};

static_assert(offsetof(struct offs_upath, base) == 0);

/* ---- interned paths (offs_table_lock held) ---- */

void offs_upath_get(struct offs_upath *p)
{
	offs_interned_get(&p->base);
}

void offs_upath_put(struct offs_upath *p)
{
	if (offs_interned_unref(&p->base))
		offs_istore_free(&offs_upaths, &p->base,
				 sizeof(*p) + p->len + 1);
}

/* What one interned path of PATH_MAX takes, as allocated. */
u64 offs_upath_unit_cost(void)
{
	return offs_ksize(sizeof(struct offs_upath) + PATH_MAX);
}

unsigned int offs_upath_count(void)
{
	return offs_istore_count(&offs_upaths);
}

static struct offs_upath *offs_upath_intern(const struct offs_upath *k,
					    const char *path)
{
	struct offs_upath *p;
	size_t len = strlen(path);
	u32 hash;

	hash = jhash(path, len, jhash_3words(k->dev, (u32)k->ino,
					     (u32)k->size, 0));
	hlist_for_each_entry(p, offs_istore_bucket(&offs_upaths, hash),
			     base.node) {
		if (p->base.hash == hash && p->dev == k->dev &&
		    p->ino == k->ino && p->size == k->size &&
		    timespec64_equal(&p->mtime, &k->mtime) &&
		    p->len == len && !memcmp(p->path, path, len)) {
			offs_interned_get(&p->base);
			return p;
		}
	}
	/* Past max_stacks, or no memory. */
	p = offs_istore_alloc(&offs_upaths, sizeof(*p) + len + 1);
	if (!p) {
		OFFS_STAT_ADD(user_dropped, 1);
		return NULL;
	}
	*p = *k;
	p->len = len;
	memcpy(p->path, path, len + 1);
	offs_istore_add(&offs_upaths, &p->base, hash, sizeof(*p) + len + 1);
	return p;
}

/* ---- roots ---- */

/*
 * d_path() names a file from the caller's root.  To name it as the sampled
 * process sees it, the sampler names the process's root directory the same
 * way and strips that prefix: a process chrooted to /srv/jail that maps
 * /srv/jail/lib/libc.so.6 sees /lib/libc.so.6.  A process in another mount
 * namespace (a container after pivot_root) needs nothing stripped: d_path()
 * stops at the root of that namespace's mount tree, which is the
 * process's root.  A file outside the process's root keeps its full path.
 * Only exported path APIs are used; the sampler's own fs_struct is never
 * changed.
 *
 * Sampler kthread only: offs_root and its name are this thread's state.
 */
static struct path offs_root;		/* the current process's root, or none */
static char offs_root_name[256];
static int offs_root_len;		/* 0: nothing to strip */
u32 offs_root_hash;		/* of the prefix stripped; 0: none */

/*
 * Name files from t's root from now on (sampler kthread only, no lock
 * held).  Compared by path, not by fs_struct: a freed fs_struct's address
 * may be reused by another process within the tick.  A different root
 * also empties the memo of resolved files (named from the old root).
 */
void offs_root_enter(struct task_struct *t)
{
	struct fs_struct *fs;
	struct path root, mine;
	char *name;

	if (!READ_ONCE(t->fs))
		return;
	/* task_lock() keeps t->fs from going away (exit_fs). */
	task_lock(t);
	fs = t->fs;
	if (fs)
		get_fs_root(fs, &root);
	task_unlock(t);
	if (!fs)
		return;
	if (offs_root.dentry && path_equal(&root, &offs_root)) {
		path_put(&root);
		return;
	}
	offs_root_leave();
	offs_root = root;		/* the reference moves here */
	get_fs_root(current->fs, &mine);
	if (!path_equal(&root, &mine)) {
		name = d_path(&root, offs_root_name, sizeof(offs_root_name));
		/* "/" (a namespace's own root) strips nothing; nor an error. */
		if (!IS_ERR(name) && name[0] == '/' && name[1]) {
			offs_root_len = strlen(name);
			memmove(offs_root_name, name, offs_root_len + 1);
			offs_root_hash = jhash(name, offs_root_len,
					       offs_root_len) | 1;
		}
	}
	path_put(&mine);
}

/* Forget the process's root, so nothing is pinned between ticks. */
void offs_root_leave(void)
{
	if (!offs_root.dentry)
		return;
	offs_upath_memo_clear();
	path_put(&offs_root);
	offs_root.dentry = NULL;
	offs_root.mnt = NULL;
	offs_root_len = 0;
	offs_root_hash = 0;
}

/*
 * d_path() of path as the process of the last offs_root_enter() sees it:
 * a pointer into buf, or an ERR_PTR.  Sampler kthread; may sleep.
 */
char *offs_d_path(const struct path *path, char *buf, int len)
{
	char *p = d_path(path, buf, len);
	int n = offs_root_len;

	if (IS_ERR(p) || !n || strncmp(p, offs_root_name, n))
		return p;
	if (p[n] == '/')
		return p + n;
	if (p[n])
		return p;		/* /srv/jail2 is not under /srv/jail */
	p[n - 1] = '/';			/* the root itself */
	return p + n - 1;
}

void offs_root_exit(void)
{
	offs_root_leave();
}

/* ---- files of the current address space ---- */

/*
 * Sampler kthread only.  The memo remembers which interned path a file
 * resolved to, so that the threads of a tick do not resolve libc.so.6
 * once each.  Each slot holds a reference on its file and on its path: an
 * equal file pointer is the same open file, an equal path and inode the
 * same dentry, mount and file, never new ones at recycled addresses (the
 * inode too: on overlayfs a mapped file's path is the overlay's and its
 * inode the layer's, which a copy-up changes).  Emptied when the root
 * files are named from changes (offs_root_enter(): the same file is named
 * differently from another process's root) and at the end of a tick
 * (offs_uwin_tick_end(), ustack.c): its files, those of processes that
 * exited in the tick too, are held for part of a tick at most.
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
	const struct path *up = offs_file_user_path(file);
	struct inode *inode = file_inode(file);
	struct offs_upath key = { 0 }, *p;
	struct file *evicted = NULL;
	unsigned int i;
	char *path;

	/*
	 * By the path named, not the open file: every process has its own
	 * open file of libc.so.6, each naming the same path.  The memo's
	 * reference keeps that path's dentry and mount from being reused.
	 */
	for (i = 0; i < offs_umemo.n; i++) {
		if (offs_umemo.e[i].file == file ||
		    (file_inode(offs_umemo.e[i].file) == inode &&
		     path_equal(offs_file_user_path(offs_umemo.e[i].file),
				up))) {
			p = offs_umemo.e[i].path;
			mutex_lock(&offs_table_lock);
			offs_upath_get(p);
			mutex_unlock(&offs_table_lock);
			return p;
		}
	}
	path = offs_d_path(up, offs_pathbuf,
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
