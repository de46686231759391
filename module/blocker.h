/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blocker.h - who holds what a thread waits for (blocker.c).
 */
#ifndef OFFS_BLOCKER_H
#define OFFS_BLOCKER_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <asm/unistd.h>

#include "offsample.h"

/* What kind of lock an edge was read from. */
enum offs_blk_kind {
	OFFS_BK_NONE,
	OFFS_BK_MUTEX,		/* glibc pthread mutex: __owner */
	OFFS_BK_ROBUST,		/* glibc robust mutex: owner tid in the word */
	OFFS_BK_PI,		/* priority-inheritance futex: owner tid in the word */
	OFFS_BK_RWLOCK,		/* glibc rwlock held for writing: __cur_writer */
	OFFS_BK_GIL,		/* CPython's GIL: last_holder while locked */
	OFFS_BK_CHILD,		/* wait4()/waitid(): a child process */
	OFFS_BK_CPU,		/* runnable: the thread running on its CPU */
	OFFS_BK_RWSEM,		/* kernel rw_semaphore held for writing */
	OFFS_BK_RTMUTEX,	/* kernel rt_mutex (PREEMPT_RT: most locks) */
	OFFS_BK_UNIX,		/* UNIX stream socket: the peer process */
	OFFS_BK_FLOCK,		/* flock(2): a conflicting lock's process */
	OFFS_BK_POSIX,		/* fcntl(2) F_SETLKW: a conflicting lock's */
	OFFS_BK_OFD,		/* fcntl(2) F_OFD_SETLKW: likewise */
	OFFS_BK_PIPE,		/* pipe: the processes with the other end open */
	OFFS_BK_FIFO,		/* FIFO: likewise */
	OFFS_BK_TCP,		/* TCP: the processes with the local peer open */
	OFFS_BK_UDP,		/* connected UDP socket: likewise */
	OFFS_BK_FUTEX,		/* a futex lock wait whose words named nobody */
	OFFS_BK_KLOCK,		/* a kernel lock not identified */
	OFFS_BK_KMUTEX,		/* kernel mutex: its recorded owner */
	OFFS_BK_NR
};

/* What the holder was doing at the same tick. */
enum offs_blk_hstate {
	OFFS_BH_SAMPLED,	/* off-CPU, counted in a record (hrec) */
	OFFS_BH_RUNNING,	/* on a CPU */
	OFFS_BH_GONE,		/* no such thread any more (exited) */
	OFFS_BH_UNSAMPLED,	/* alive, but not sampled in this tick */
	OFFS_BH_UNKNOWN,	/* none named: the edge's why says why */
	OFFS_BH_NR
};

/* Why a wait that was looked up names no holder (why=, docs/FORMAT.md). */
enum offs_blk_why {
	OFFS_BW_NONE,
	OFFS_BW_INVALID,	/* the lock's words did not validate */
	OFFS_BW_UNREADABLE,	/* its words or request could not be read */
	OFFS_BW_BUSY,		/* a kernel lock's wait list was busy */
	OFFS_BW_NOCHILD,	/* no such child, or none in the group */
	OFFS_BW_KERNEL,		/* a kernel lock whose owner is not recorded */
	OFFS_BW_READERS,	/* a kernel lock held by readers */
	OFFS_BW_NOPEER,		/* no socket or process of this host at the other end */
	OFFS_BW_NOLOCK,		/* no conflicting file lock held any more */
	OFFS_BW_NOBODY,		/* nobody else has the other end open */
	OFFS_BW_CUT,		/* the search for it stopped at its bound */
	OFFS_BW_NR
};

extern const char * const offs_blk_kind_names[OFFS_BK_NR];
extern const char * const offs_blk_hstate_names[OFFS_BH_NR];
extern const char * const offs_blk_why_names[OFFS_BW_NR];

/*
 * Which kernel object a kernel-lock edge names (object=): OFFS_KO_* in
 * the low byte, for a file's lock the waiter's descriptor above it
 * (OFFS_KO_FILE()).
 */
enum offs_blk_kobj {
	OFFS_KO_NONE,
	OFFS_KO_MMAP_LOCK,	/* the waiter's mm->mmap_lock */
	OFFS_KO_F_POS,		/* an open file's f_pos_lock (read, lseek...) */
	OFFS_KO_I_RWSEM,	/* its inode's i_rwsem (write, truncate...) */
	OFFS_KO_PIPE,		/* its pipe's mutex */
	OFFS_KO_UNIX_IO,	/* its UNIX socket's iolock */
	OFFS_KO_NR
};

#define OFFS_KO_FILE(ko, fd)	((unsigned long)(fd) << 8 | (ko))
#define OFFS_KO_OF(obj)		((obj) & 0xff)
#define OFFS_KO_FD(obj)		((obj) >> 8)

/* One waiter -> holder observation, as counted in a generation. */
struct offs_edge_key {
	struct offs_rec *wrec;		/* the waiter's record, same generation */
	struct offs_rec *hrec;		/* the holder's, or NULL */
	/*
	 * The futex word; for kind child the OFFS_WAIT_* kind, for cpu the
	 * CPU, for rwsem, rtmutex and kmutex the OFFS_KO_* object, for unix
	 * and the file locks the fd.
	 */
	unsigned long uaddr;
	pid_t wtid, wtgid;		/* initial pid namespace */
	pid_t htid, htgid;		/* initial namespace; as read when gone */
	u8 kind;
	u8 hstate;
	u8 why;				/* OFFS_BW_*: hstate unknown */
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
	/* ... in the sessions: set by a visit, for the sessions in smask */
	struct offs_rec *srec[OFFS_SESSIONS_MAX];
	unsigned int smask;		/* consumers that want it (OFFS_SLOT_*) */
	pid_t tid, tgid;
	pid_t ptgid;			/* leaders: the parent's process */
	bool running;
	bool active;			/* running or waiting for a CPU */
	bool visited;			/* sampled at this tick */
};

void offs_blk_fxwait_in(const struct offs_sample *s, struct offs_fxwait *fx);

/*
 * Whether s, a full capture, waits in futex() (or for a child) in a way
 * that may name a holder: fx says, OFFS_FX_NONE if not.  The system call
 * is looked at inline, at every capture (issue 52).
 */
static inline void offs_blk_fxwait(const struct offs_sample *s,
				   struct offs_fxwait *fx)
{
	fx->cand = OFFS_FX_NONE;
	if (s->user && (s->syscall == __NR_futex || s->syscall == __NR_wait4 ||
			s->syscall == __NR_waitid))
		offs_blk_fxwait_in(s, fx);
}

void offs_blk_note_cand(struct task_struct *t, const struct offs_fxwait *fx,
			struct offs_rec *rec, struct offs_rec * const *srec,
			unsigned int idx, unsigned long ncsw);

/*
 * A visited thread that waits as fx says (blocker.c).  Most waits name no
 * holder: that test is inline (the call cost about 30 instructions of a
 * capture, issue 52).
 */
static inline void offs_blk_note(struct task_struct *t,
				 const struct offs_fxwait *fx,
				 struct offs_rec *rec,
				 struct offs_rec * const *srec,
				 unsigned int idx, unsigned long ncsw)
{
	if (fx->cand != OFFS_FX_NONE)
		offs_blk_note_cand(t, fx, rec, srec, idx, ncsw);
}

void offs_blk_kwait_in(const struct offs_sample *s, struct offs_fxwait *fx);

/* After classification: a lock wait's kernel lock (blocker.c); inline test. */
static inline void offs_blk_kwait(const struct offs_sample *s,
				  unsigned int reason, struct offs_fxwait *fx)
{
	if (reason == OFFS_R_LOCK && !s->oncpu)
		offs_blk_kwait_in(s, fx);
}

void offs_blk_note_running(struct task_struct *t, unsigned int idx,
			   unsigned int cpu);
void offs_blk_note_runq(struct task_struct *t, unsigned int cpu,
			struct offs_rec *rec, struct offs_rec * const *srec,
			unsigned int idx);
unsigned int offs_blk_share_level(void);
void offs_blk_copy_names(struct task_struct *t, char *name, char *comm);
int offs_blk_init(void);
void offs_blk_exit(void);
void offs_blk_tick_end(struct task_struct * const *snap,
		       const struct offs_snap_out *out, unsigned int n,
		       const unsigned int *lead, unsigned int nlead);

#endif /* OFFS_BLOCKER_H */
