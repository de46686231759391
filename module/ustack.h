/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack.h - user stacks of other threads, in three files:
 *
 *   umm.c     the window into a sampled process: its address space,
 *             a frame-pointer walk, and a snapshot of the mappings the
 *             frames fall in (taken under mmap_read_trylock(), which is
 *             the only lock of the sampled process held, and never
 *             while waiting for anything else);
 *   upath.c   files as the sampled process sees them: its root, the
 *             path and identity of a mapped file, interned;
 *   ustack.c  interned user stacks, and the capture that ties the three
 *             together.
 */
#ifndef OFFS_USTACK_H
#define OFFS_USTACK_H

#include <linux/types.h>
#include <linux/overflow.h>
#include <linux/list.h>
#include <linux/time64.h>

#include "offsample.h"

struct file;
struct path;

/*
 * A mapped file as it was when sampled: the symbolizer compares this
 * identity with the file on disk and says so when it has been replaced.
 * Interned: one object per distinct (identity, path), shared by all user
 * stacks that point into the file.
 */
struct offs_upath {
	struct hlist_node node;
	u32 hash;
	unsigned int refs;		/* under offs_table_lock */
	dev_t dev;
	u64 ino;
	loff_t size;
	struct timespec64 mtime;
	u16 len;
	char path[];
};

enum offs_uframe_kind {
	OFFS_UF_FILE,		/* path + file offset */
	OFFS_UF_ANON,		/* anonymous executable memory (JIT): address */
	OFFS_UF_HEAP,
	OFFS_UF_STACK,
	OFFS_UF_VDSO,		/* offset in the vDSO */
	OFFS_UF_UNMAPPED,	/* no mapping at the address: address */
	OFFS_UF_BUSY,		/* mmap lock busy, not translated: address */
};

/* Kinds whose offset is a raw user address (hidden from group= readers). */
static inline bool offs_uframe_is_addr(unsigned long kind)
{
	return kind != OFFS_UF_FILE && kind != OFFS_UF_VDSO;
}

struct offs_uframe {
	struct offs_upath *path;	/* OFFS_UF_FILE only, reference held */
	unsigned long off;
	unsigned long kind;
};

/* A hash-consed user stack: frames leaf first. */
struct offs_ustack {
	struct hlist_node node;
	u32 hash;
	u16 depth;
	u16 raced:1;		/* thread ran during the walk: leaf only */
	u16 truncated:1;	/* more frames than max_user_depth */
	unsigned int refs;	/* under offs_table_lock */
	struct offs_uframe frames[];
};

static inline size_t offs_ustack_size(unsigned int depth)
{
	return struct_size((struct offs_ustack *)NULL, frames, depth);
}

/*
 * One frame as seen under the mmap lock, before anything is interned:
 * a FILE frame holds a reference on the mapped file (get_file()), so the
 * file can be resolved after the lock is dropped.
 */
struct offs_uframe_raw {
	unsigned long addr;
	unsigned long off;
	unsigned long kind;
	struct file *file;
};

/* ustack.c */
void offs_ustack_exit(void);
void offs_ustack_put(struct offs_ustack *us);
void offs_ustack_get(struct offs_ustack *us);
unsigned int offs_ustack_count(void);
struct offs_ustack *offs_ustack_capture(struct offs_sample *s);
void offs_ustack_memo_clear(void);

/* umm.c (sampler kthread only) */
struct mm_struct *offs_umm_enter(struct task_struct *t);
struct mm_struct *offs_umm_enter_data(struct task_struct *t);
void offs_umm_end(void);
void offs_umm_end_if_orphaned(void);
unsigned int offs_umm_walk(const struct offs_sample *s, unsigned long *ips,
			   unsigned int max, bool *truncated,
			   unsigned long *fault_addr, bool *pending);
int offs_umm_snapshot(struct mm_struct *mm, const unsigned long *ips,
		      unsigned int n, unsigned long fault_addr,
		      struct offs_uframe_raw *raw, bool *faulted, bool *in_maps);
void offs_umm_release(struct offs_uframe_raw *raw, unsigned int n);

/* upath.c */
void offs_root_exit(void);
void offs_root_enter(struct task_struct *t);
void offs_root_leave(void);
char *offs_d_path(const struct path *path, char *buf, int len);
struct offs_upath *offs_upath_of_file(struct file *file);
void offs_upath_memo_clear(void);
void offs_upath_get(struct offs_upath *p);
void offs_upath_put(struct offs_upath *p);
unsigned int offs_upath_count(void);

#endif /* OFFS_USTACK_H */
