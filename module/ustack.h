/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack.c: user stacks of other threads, interned, and the capture that
 * ties the user-stack layers together (umm.h draws them); it owns the
 * window: one process's address space (umm.c) and root (upath.c), entered
 * together, and the memos of what was resolved in it, dropped with the
 * address space when the window ends (the root is kept until another
 * process's is entered or the tick ends).
 */
#ifndef OFFS_USTACK_H
#define OFFS_USTACK_H

#include <linux/types.h>
#include <linux/overflow.h>
#include <linux/list.h>

#include "offsample.h"
#include "intern.h"
#include "umm.h"
#include "upath.h"
#include "pystack.h"

struct offs_pyname;

struct offs_uframe {
	union {
		struct offs_upath *path;  /* OFFS_UF_FILE: reference held */
		struct offs_pyname *py;	  /* OFFS_UF_PY: reference held */
	};
	unsigned long off;		/* OFFS_UF_PY: the line */
	unsigned long kind;
};

/* A hash-consed user stack: frames leaf first. */
struct offs_ustack {
	struct offs_interned base;	/* first: intern.c frees it */
	u16 depth;
	u16 raced:1;		/* thread ran during the walk: leaf only */
	u16 truncated:1;	/* more frames than max_user_depth */
	struct offs_uframe frames[];
};

static inline size_t offs_ustack_size(unsigned int depth)
{
	return struct_size((struct offs_ustack *)NULL, frames, depth);
}

/* The window (sampler kthread only; each may sleep). */
struct mm_struct *offs_uwin_enter_code(struct task_struct *t);
struct mm_struct *offs_uwin_enter_data(struct task_struct *t);

/*
 * Enter t's window for a capture (ustack.c): its address space, its code
 * mapped and its interpreter looked for; NULL if it has none.  Most
 * captures are of a thread of the window already entered, with nothing
 * left to do: that is tested inline (issue 52).
 */
static inline struct mm_struct *offs_uwin_enter(struct task_struct *t)
{
	struct mm_struct *mm = READ_ONCE(t->mm);

	if (mm && mm == offs_umm_current() && offs_umaps_built &&
	    !offs_pywin_gate.look)
		return mm;
	return offs_uwin_enter_code(t);
}

bool offs_uwin_recheck(struct offs_sample *s, bool may_recopy);

/*
 * Capture s again, with a new copy of its process's mappings (ustack.c)?
 * Only when its walk saw them change (s->ustale), tested inline.
 */
static inline bool offs_uwin_recapture(struct offs_sample *s, bool may_recopy)
{
	return s->ustale && offs_uwin_recheck(s, may_recopy);
}

void offs_uwin_end(void);
void offs_uwin_tick_end(bool idle);
void offs_uwin_end_if_orphaned(void);

void offs_ustack_exit(void);
void offs_ustack_put(struct offs_ustack *us);
void offs_uframe_ref(const struct offs_uframe *f, bool get);
void offs_ustack_get(struct offs_ustack *us);
u64 offs_ustack_unit_cost(void);
unsigned int offs_ustack_count(void);
struct offs_ustack *offs_ustack_capture(struct offs_sample *s);

#endif /* OFFS_USTACK_H */
