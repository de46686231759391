/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blocker.h - who holds what a thread waits for (blocker.c).
 */
#ifndef OFFS_BLOCKER_H
#define OFFS_BLOCKER_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/sched.h>

#include "offsample.h"

/* What kind of lock an edge was read from. */
enum offs_blk_kind {
	OFFS_BK_NONE,
	OFFS_BK_MUTEX,		/* glibc pthread mutex: __owner */
	OFFS_BK_ROBUST,		/* glibc robust mutex: owner tid in the word */
	OFFS_BK_PI,		/* priority-inheritance futex: owner tid in the word */
	OFFS_BK_RWLOCK,		/* glibc rwlock held for writing: __cur_writer */
	OFFS_BK_GIL,		/* CPython's GIL: last_holder while locked */
	OFFS_BK_NR
};

/* What the holder was doing at the same tick. */
enum offs_blk_hstate {
	OFFS_BH_SAMPLED,	/* off-CPU, counted in a record (hrec) */
	OFFS_BH_RUNNING,	/* on a CPU */
	OFFS_BH_GONE,		/* no such thread any more (exited) */
	OFFS_BH_UNSAMPLED,	/* alive, but not sampled in this tick */
	OFFS_BH_NR
};

extern const char * const offs_blk_kind_names[OFFS_BK_NR];
extern const char * const offs_blk_hstate_names[OFFS_BH_NR];

/* One waiter -> holder observation, as counted in a generation. */
struct offs_edge_key {
	struct offs_rec *wrec;		/* the waiter's record, same generation */
	struct offs_rec *hrec;		/* the holder's, or NULL */
	unsigned long uaddr;		/* the futex word */
	pid_t wtid, wtgid;		/* initial pid namespace */
	pid_t htid, htgid;		/* initial namespace; as read when gone */
	u8 kind;
	u8 hstate;
	char wname[TASK_COMM_LEN];
	char hname[TASK_COMM_LEN];
	char hcomm[TASK_COMM_LEN];
};

struct offs_edge {
	struct hlist_node node;		/* generation's edge hash */
	struct list_head list;		/* generation's edges, insertion order */
	u32 hash;
	struct offs_edge_key key;
	u64 count;
};

/* sampler.c: what one visit left for the end of the tick. */
struct offs_snap_out {
	struct offs_rec *rec;		/* counted here, or NULL */
	struct offs_rec *srec[OFFS_SESSIONS_MAX];	/* ... in the sessions */
	unsigned int smask;		/* consumers that want it (OFFS_SLOT_*) */
	pid_t tid, tgid;
	bool running;
	bool active;			/* running or waiting for a CPU */
	bool visited;			/* sampled at this tick */
};

void offs_blk_fxwait(const struct offs_sample *s, struct offs_fxwait *fx);
void offs_blk_note(struct task_struct *t, const struct offs_fxwait *fx,
		   struct offs_rec *rec, struct offs_rec * const *srec,
		   unsigned int idx, unsigned long ncsw);
unsigned int offs_blk_share_level(void);
void offs_blk_tick_end(struct task_struct * const *snap,
		       const struct offs_snap_out *out, unsigned int n);

#endif /* OFFS_BLOCKER_H */
