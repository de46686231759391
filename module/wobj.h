/* SPDX-License-Identifier: GPL-2.0 */
#ifndef OFFS_WOBJ_H
#define OFFS_WOBJ_H

#include <linux/types.h>
#include <linux/list.h>

#include "offsample.h"
#include "intern.h"

/* An interned wait-object description, e.g. "pread64(/var/lib/x.db)". */
struct offs_wobj {
	struct offs_interned base;	/* first: intern.c frees it */
	unsigned int len;
	struct offs_wobj_addr addr;
	char str[];
};

/* The longest description the sampler asks for (with its NUL). */
#define OFFS_WOBJ_MAX		512

struct file;
struct task_struct;

const char *offs_syscall_name(long nr);
struct file *offs_task_fget(struct task_struct *t, unsigned int fd);
int offs_wait_decode(const struct offs_sample *s, int *id);
u64 offs_wobj_unit_cost(void);
bool offs_wobj_describe(struct task_struct *t, const struct offs_sample *s,
			char *buf, size_t len, struct offs_wobj_addr *addr);
struct offs_wobj *offs_wobj_intern(const char *str,
				   const struct offs_wobj_addr *addr);
void offs_wobj_get(struct offs_wobj *w);
void offs_wobj_put(struct offs_wobj *w);

#endif /* OFFS_WOBJ_H */
