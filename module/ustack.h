/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_USTACK_H
#define OFFS_USTACK_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/time64.h>

#include "offsample.h"

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

void offs_ustack_exit(void);
void offs_ustack_put(struct offs_ustack *us);
void offs_ustack_get(struct offs_ustack *us);
unsigned int offs_ustack_count(void);

/* Sampler side. */
struct offs_ustack *offs_ustack_capture(struct task_struct *t,
					const struct offs_sample *s);
void offs_ustack_session_end(void);
int offs_root_init(void);
void offs_root_exit(void);
void offs_root_enter(struct task_struct *t);
void offs_root_leave(void);

#endif /* OFFS_USTACK_H */
