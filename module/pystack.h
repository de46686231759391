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

/*
 * What every capture asks of the current window before calling in, kept
 * by pystack.c: most windows hold no interpreter, and three calls that
 * returned at once cost about 70 instructions of a cold capture (issue
 * 52).  look: look (again) for an interpreter at the next thread.
 * walk_mm: the window whose threads' Python frames are read, or marked
 * lost (the window was unsure); NULL for none.  gil_mm: the window with
 * an interpreter, whose threads may wait for its GIL.  Written by the
 * sampler kthread; read by it, and by the IPI of oncpu.c while the
 * sampler waits for it.
 */
struct offs_pywin_gate {
	bool look;
	struct mm_struct *walk_mm;
	struct mm_struct *gil_mm;
};

extern struct offs_pywin_gate offs_pywin_gate;

/* The window (sampler kthread; no lock held): see ustack.c. */
void offs_pywin_enter_look(struct mm_struct *mm);
void offs_pywin_leave(void);

static inline void offs_pywin_enter(struct mm_struct *mm)
{
	if (offs_pywin_gate.look)
		offs_pywin_enter_look(mm);
}

/* Pinned (pin.c; IRQs off, or the IPI of oncpu.c): copy t's frames. */
void offs_pystack_walk_in(struct task_struct *t, struct offs_sample *s);

static inline void offs_pystack_walk(struct task_struct *t,
				     struct offs_sample *s)
{
	s->pydepth = 0;
	s->pytruncated = false;
	s->pylost = false;
	if (s->pyf && s->umm && s->umm == offs_pywin_gate.walk_mm)
		offs_pystack_walk_in(t, s);
}

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
void offs_pystack_gil_wait_in(const struct offs_sample *s,
			      struct offs_fxwait *fx);

static inline void offs_pystack_gil_wait(const struct offs_sample *s,
					 struct offs_fxwait *fx)
{
	if (s->pyts && s->umm && s->umm == offs_pywin_gate.gil_mm)
		offs_pystack_gil_wait_in(s, fx);
}

struct offs_uframe;
unsigned int offs_pystack_merge(struct offs_sample *s, struct offs_uframe *f,
				const unsigned long *ips, unsigned int n,
				unsigned int max, bool *truncated);

#endif /* OFFS_PYSTACK_H */
