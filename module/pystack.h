/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pystack.c: CPython frames in user stacks.  For a process whose window
 * (ustack.c) holds a CPython 3.11-3.13 interpreter (cficache.c found it
 * with upy.c), the frames of each sampled thread are copied while it is
 * pinned, named after it is let go, and take the place of the native
 * _PyEval_EvalFrameDefault frames that run them.  Names are interned:
 * one copy of each (qualified name, file), shared by the stacks.
 */
#ifndef OFFS_PYSTACK_H
#define OFFS_PYSTACK_H

#include <linux/types.h>

#include "offsample.h"
#include "intern.h"
#include "upy.h"

/* A Python function as frames print it: "QUALNAME (FILE:LINE)". */
struct offs_pyname {
	struct offs_interned base;	/* first: intern.c frees it */
	u16 qlen;
	u16 flen;
	char s[];		/* qualname, NUL, file, NUL */
};

static inline const char *offs_pyname_file(const struct offs_pyname *p)
{
	return p->s + p->qlen + 1;
}

/* offs_table_lock held. */
void offs_pyname_get(struct offs_pyname *p);
void offs_pyname_put(struct offs_pyname *p);
unsigned int offs_pyname_count(void);
u64 offs_pyname_bytes(void);
u64 offs_pyname_unit_cost(void);

/* The window (sampler kthread; no lock held): see ustack.c. */
void offs_pywin_enter(struct mm_struct *mm);
void offs_pywin_leave(void);

/* Pinned (pin.c; IRQs off, or the IPI of oncpu.c): copy t's frames. */
void offs_pystack_walk(struct task_struct *t, struct offs_sample *s);

/*
 * The capture (ustack.c, in the window): name s's Python frames (no lock
 * held), then, with offs_table_lock held, put them in the place of the
 * evaluation frames among the n native frames in f[] (ips: their
 * addresses), at most max in all.  Python frames hold a reference on
 * their name, moved frames keep theirs, replaced ones drop it.  Returns
 * the new depth; *truncated when frames did not fit.
 */
void offs_pystack_name(struct offs_sample *s);
struct offs_fxwait;
void offs_pystack_gil_wait(const struct offs_sample *s, struct offs_fxwait *fx);
struct offs_uframe;
unsigned int offs_pystack_merge(struct offs_sample *s, struct offs_uframe *f,
				const unsigned long *ips, unsigned int n,
				unsigned int max, bool *truncated);

#endif /* OFFS_PYSTACK_H */
