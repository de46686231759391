/* SPDX-License-Identifier: GPL-2.0 */
/* upath.c: files as the sampled process sees them, interned (see umm.h). */
#ifndef OFFS_UPATH_H
#define OFFS_UPATH_H

#include <linux/types.h>
#include <linux/time64.h>

#include "intern.h"

struct file;
struct path;
struct task_struct;

/*
 * A mapped file as it was when sampled: the symbolizer compares this
 * identity with the file on disk and says so when it has been replaced.
 * Interned: one object per distinct (identity, path), shared by all user
 * stacks that point into the file.
 */
struct offs_upath {
	struct offs_interned base;	/* first: intern.c frees it */
	dev_t dev;
	u64 ino;
	loff_t size;
	struct timespec64 mtime;
	u16 len;
	char path[];
};

extern u32 offs_root_hash;

/*
 * Which names files get now: 0 when nothing is stripped (the sampler's
 * root, or another mount namespace's), else a hash of the prefix that is.
 * Names kept beyond the window they were made in (ustack.c's memo of
 * stacks) are only used again under the same.  Inline: asked at each
 * capture.
 */
static inline u32 offs_root_id(void)
{
	return offs_root_hash;
}

void offs_root_exit(void);
void offs_root_enter(struct task_struct *t);
void offs_root_leave(void);
char *offs_d_path(const struct path *path, char *buf, int len);
struct offs_upath *offs_upath_of_file(struct file *file);
void offs_upath_memo_clear(void);
void offs_upath_get(struct offs_upath *p);
void offs_upath_put(struct offs_upath *p);
u64 offs_upath_unit_cost(void);
unsigned int offs_upath_count(void);

#endif /* OFFS_UPATH_H */
