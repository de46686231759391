// SPDX-License-Identifier: GPL-2.0
/*
 * blocker.c - who holds the lock a thread waits for.
 *
 * A thread blocked in futex() on a user-space lock often names its holder
 * in memory: glibc keeps the owner's thread id in a mutex (__owner, or the
 * lock word itself for robust and priority-inheritance mutexes) and in an
 * rwlock held for writing (__cur_writer).  At a sample, the sampler reads
 * those words (copy_from_user_nofault() from inside the waiter's address
 * space, umm.c: no lock of the waiter is taken, a page that is not resident
 * is a failed read), validates them, and looks the owner up in the
 * waiter's pid namespace.  At the end of the tick each observation is
 * matched with the record the holder was counted in at the same tick, and
 * counted as an edge of the generation (table.c).
 *
 * What the futex call says decides how the words are read (glibc 2.36 and
 * 2.41, x86-64, ../shared/notes/wave2.md section 3):
 *
 *   FUTEX_LOCK_PI(2)              PI futex: owner tid in the word
 *   FUTEX_WAIT[_BITSET], val has  robust mutex: owner tid in val and word
 *     FUTEX_WAITERS
 *   FUTEX_WAIT[_BITSET], val == 2 mutex: __owner at word + 8 (BITSET:
 *                                 pthread_mutex_timedlock/clocklock)
 *   FUTEX_WAIT_BITSET, val == 3   rwlock: __cur_writer at base + 24, the
 *                                 word being base + 12 (a writer waits)
 *                                 or base + 8 (a reader waits)
 *
 * and every field read must agree (lock word still held, known __kind
 * bits, the owner a live thread of the waiter's process; for
 * process-shared and PI locks, of the waiter's pid namespace).  When
 * they do not, the holder is unknown and nothing is recorded: a holder is
 * never guessed.  An owner id that validates but
 * names no thread any more (the owner exited holding a mutex) is recorded
 * as gone.  Waits in the kernel (a child, a kernel lock, a socket's peer,
 * a file lock) are looked up by kholder.c; the processes at the other end
 * of a pipe or local TCP/UDP connection by kfile.c at the end of the tick.
 *
 * At most OFFS_BLK_PENDING observations are kept per tick, shared fairly
 * between processes (offs_blk_share()): one process with thousands of
 * lock waiters cannot take them from everyone visited after it.
 *
 * Sampler kthread only: no locking of its own.  Holders found during the
 * walk are referenced (get_task_struct()) until the end of the tick.
 */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/signal.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/threads.h>
#include <linux/uaccess.h>
#include <linux/futex.h>
#include <linux/string.h>
#include <linux/sort.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <asm/unistd.h>

#include "offsample.h"
#include "params.h"
#include "stats.h"
#include "table.h"
#include "session.h"
#include "ustack.h"
#include "classify.h"
#include "kholder.h"
#include "kfile.h"
#include "blocker.h"

const char * const offs_blk_kind_names[OFFS_BK_NR] = {
	[OFFS_BK_NONE] = "none",
	[OFFS_BK_MUTEX] = "mutex",
	[OFFS_BK_ROBUST] = "robust",
	[OFFS_BK_PI] = "pi",
	[OFFS_BK_RWLOCK] = "rwlock",
	[OFFS_BK_GIL] = "gil",
	[OFFS_BK_CHILD] = "child",
	[OFFS_BK_CPU] = "cpu",
	[OFFS_BK_RWSEM] = "rwsem",
	[OFFS_BK_RTMUTEX] = "rtmutex",
	[OFFS_BK_UNIX] = "unix",
	[OFFS_BK_FLOCK] = "flock",
	[OFFS_BK_POSIX] = "posix",
	[OFFS_BK_OFD] = "ofd",
	[OFFS_BK_PIPE] = "pipe",
	[OFFS_BK_FIFO] = "fifo",
	[OFFS_BK_TCP] = "tcp",
	[OFFS_BK_UDP] = "udp",
	[OFFS_BK_FUTEX] = "futex",
	[OFFS_BK_KLOCK] = "klock",
	[OFFS_BK_KMUTEX] = "kmutex",
};

const char * const offs_blk_hstate_names[OFFS_BH_NR] = {
	[OFFS_BH_SAMPLED] = "sampled",
	[OFFS_BH_RUNNING] = "running",
	[OFFS_BH_GONE] = "gone",
	[OFFS_BH_UNSAMPLED] = "unsampled",
	[OFFS_BH_UNKNOWN] = "unknown",
};

const char * const offs_blk_why_names[OFFS_BW_NR] = {
	[OFFS_BW_NONE] = "-",
	[OFFS_BW_INVALID] = "invalid",
	[OFFS_BW_UNREADABLE] = "unreadable",
	[OFFS_BW_BUSY] = "busy",
	[OFFS_BW_NOCHILD] = "nochild",
	[OFFS_BW_KERNEL] = "kernel",
	[OFFS_BW_READERS] = "readers",
	[OFFS_BW_NOPEER] = "nopeer",
	[OFFS_BW_NOLOCK] = "nolock",
	[OFFS_BW_NOBODY] = "nobody",
	[OFFS_BW_CUT] = "cut",
};

/* glibc x86-64 layouts (the same in 2.36 and 2.41). */
#define OFFS_MUTEX_OWNER	8	/* int __owner */
#define OFFS_MUTEX_NUSERS	12	/* unsigned int __nusers */
#define OFFS_MUTEX_KIND		16	/* int __kind */
#define OFFS_MUTEX_KIND_KNOWN	(3 | 16 | 32 | 64 | 128 | 256 | 512)
#define OFFS_MUTEX_ROBUST	16
#define OFFS_MUTEX_PI		32
#define OFFS_MUTEX_PSHARED	128
#define OFFS_RW_READERS		0	/* unsigned int __readers */
#define OFFS_RW_CUR_WRITER	24	/* int __cur_writer */
#define OFFS_RW_SHARED		28	/* int __shared */
#define OFFS_RW_FLAGS		48	/* unsigned int __flags */
#define OFFS_RW_SIZE		56
#define OFFS_RW_WRLOCKED	3	/* __readers: WRPHASE | WRLOCKED */

/* FUTEX_LOCK_PI2 (uapi since 5.14; the number is ABI, 5.10 lacks the name). */
#define OFFS_FUTEX_LOCK_PI2	13

/* Observations of one tick, resolved at its end; more are counted. */
#define OFFS_BLK_PENDING	1024
/* Holders outside the waiter's process searched for per tick. */
#define OFFS_BLK_FAR_SEARCH	16
/*
 * Edges found at the end of a tick, per tick: to the children of "any
 * child" and group waits, to the processes at the other end of pipes and
 * sockets.
 */
#define OFFS_BLK_CHILD_EDGES	256
/*
 * Open descriptors looked at per tick for the other ends of pipe, FIFO and
 * socket waits (the walk's processes, in its order); a tick that stops
 * there is counted (blocker_fds_cut).
 */
#define OFFS_BLK_SCAN_FDS	32768
/* ... of one process under one hold of its task lock. */
#define OFFS_BLK_SCAN_CHUNK	1024
/* "Any child" and group waits whose children are looked for, per tick. */
#define OFFS_BLK_CHILD_WAITS	256

struct offs_blk_pending {
	struct offs_edge_key key;	/* for the default consumer */
	struct task_struct *holder;	/* reference held, or NULL: gone */
	struct pid *pgrp;		/* group wait: the group, referenced */
	unsigned int widx;		/* the waiter's index in the snapshot */
	int hidx;			/* the holder's, or -1 (tick end) */
	bool children;			/* kind child, any or group: tick end */
	bool kids;			/* ... and a child was found */
	int file;			/* pipe, FIFO, socket: its target, or -1 */
	/* The waiter's records in the sessions' windows (session.c). */
	struct offs_rec *wsrec[OFFS_SESSIONS_MAX];
};

static struct offs_blk_pending offs_blk_pend[OFFS_BLK_PENDING];
static unsigned int offs_blk_npend;

/* One edge to a child or another end's process, found at tick end. */
struct offs_blk_child {
	unsigned int pend;		/* the wait, in offs_blk_pend[] */
	unsigned int cidx;		/* the holder's leader in the snapshot */
	char hname[TASK_COMM_LEN];
	char hcomm[TASK_COMM_LEN];
};

static struct offs_blk_child offs_blk_kids[OFFS_BLK_CHILD_EDGES];

/* This tick's pipe, FIFO and socket waits (kfile.c), and their waits. */
static struct offs_kf_target offs_blk_ftg[OFFS_KF_TARGETS];
static unsigned int offs_blk_fpend[OFFS_KF_TARGETS];
static unsigned int offs_blk_nft;

/* This tick's "any child" and group waits, sorted by the waiter's process. */
struct offs_blk_cwait {
	pid_t tgid;
	unsigned int pend;		/* in offs_blk_pend[] */
};

static struct offs_blk_cwait offs_blk_cwaits[OFFS_BLK_CHILD_WAITS];

static int offs_blk_cwait_cmp(const void *a, const void *b)
{
	const struct offs_blk_cwait *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/*
 * The thread the walk found running on each CPU (nr_cpu_ids slots), valid
 * for the tick whose number it holds: the holder of the threads waiting
 * in that CPU's run queue.
 */
struct offs_blk_cpu {
	u64 tick;
	unsigned int idx;		/* in the snapshot */
	char name[TASK_COMM_LEN];
	char comm[TASK_COMM_LEN];
};

static struct offs_blk_cpu *offs_blk_cpus;
static u64 offs_blk_tickno = 1;

/*
 * Fair shares of OFFS_BLK_PENDING.  Threads are visited process by
 * process, so without a share the first processes of the walk could take
 * every slot.  A process may keep at most offs_blk_level observations in a
 * tick: the max-min fair level of the previous tick's demands (processes
 * that asked for less than an equal share get what they asked for, the
 * others share the rest equally).  The demands of OFFS_BLK_PROCS processes
 * are remembered per tick; any more are counted as wanting everything.
 * Lookups in a tick stay within OFFS_BLK_PENDING whatever the shares say
 * (demands may jump from one tick to the next).
 */
#define OFFS_BLK_PROCS		256

static u32 offs_blk_demand[OFFS_BLK_PROCS];
static unsigned int offs_blk_nproc;	/* demands remembered this tick */
static unsigned int offs_blk_more;	/* processes beyond those */
static pid_t offs_blk_tgid;		/* the process being visited, 0: none */
static u32 *offs_blk_cur;		/* its demand, NULL if not remembered */
static unsigned int offs_blk_run;	/* its lookups this tick */
static unsigned int offs_blk_looks;	/* everyone's lookups this tick */
static unsigned int offs_blk_level = OFFS_BLK_PENDING;

static int offs_u32_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The fair level for the demands of a tick (sorts them). */
static unsigned int offs_blk_fair_level(u32 *d, unsigned int n,
					unsigned int more)
{
	unsigned int left = OFFS_BLK_PENDING, i, share;

	sort(d, n, sizeof(*d), offs_u32_cmp, NULL);
	for (i = 0; i < n; i++) {
		share = left / (n + more - i);
		if (d[i] > share)
			return max(share, 1U);
		left -= d[i];
	}
	return more ? max(left / more, 1U) : OFFS_BLK_PENDING;
}

/*
 * A lock wait of a thread of tgid is about to be looked up: count the
 * process's demand, and say whether its share allows one more.
 */
static bool offs_blk_share(pid_t tgid)
{
	if (tgid != offs_blk_tgid) {
		offs_blk_tgid = tgid;
		offs_blk_run = 0;
		if (offs_blk_nproc < OFFS_BLK_PROCS) {
			offs_blk_cur = &offs_blk_demand[offs_blk_nproc++];
			*offs_blk_cur = 0;
		} else {
			offs_blk_cur = NULL;
			offs_blk_more++;
		}
	}
	if (offs_blk_cur)
		(*offs_blk_cur)++;
	if (offs_blk_run >= offs_blk_level || offs_blk_looks >= OFFS_BLK_PENDING)
		return false;
	offs_blk_run++;
	offs_blk_looks++;
	return true;
}

/* The share of the next tick, from this tick's demands. */
static void offs_blk_share_tick_end(void)
{
	/* Read locklessly by stats. */
	WRITE_ONCE(offs_blk_level, offs_blk_nproc || offs_blk_more ?
		   offs_blk_fair_level(offs_blk_demand, offs_blk_nproc, offs_blk_more) :
		   OFFS_BLK_PENDING);
	offs_blk_nproc = 0;
	offs_blk_more = 0;
	offs_blk_tgid = 0;
	offs_blk_cur = NULL;
	offs_blk_run = 0;
	offs_blk_looks = 0;
}

unsigned int offs_blk_share_level(void)
{
	return READ_ONCE(offs_blk_level);
}

/* The futex command of a futex() call (op without PRIVATE and CLOCK flags). */
static int offs_futex_cmd(unsigned long op)
{
	return op & FUTEX_CMD_MASK;
}

/*
 * Decide from a full capture whether s waits in futex() in a way that may
 * name a holder; the thread cache keeps the answer for unchanged threads.
 */
void offs_blk_fxwait_in(const struct offs_sample *s, struct offs_fxwait *fx)
{
	u32 val = (u32)s->args[2];
	int cmd;

	if (s->syscall == __NR_wait4 || s->syscall == __NR_waitid) {
		offs_kh_child_wait(s, fx);
		return;
	}
	if (s->syscall != __NR_futex)
		return;
	cmd = offs_futex_cmd(s->args[1]);
	/*
	 * pthread_mutex_lock() waits with FUTEX_WAIT, the timed variants
	 * (timedlock, clocklock) and rwlocks with FUTEX_WAIT_BITSET.
	 */
	if (cmd == FUTEX_LOCK_PI || cmd == OFFS_FUTEX_LOCK_PI2)
		fx->cand = OFFS_FX_PI;
	else if ((cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) &&
		 (val == 2 || (val & FUTEX_WAITERS) ||
		  (cmd == FUTEX_WAIT_BITSET && val == 3)))
		fx->cand = OFFS_FX_WAIT;
	fx->uaddr = s->args[0];
	fx->val = val;
}

/*
 * The descriptors a system call works on whose file's locks it may wait
 * for (f_pos_lock, the inode's i_rwsem, a pipe's mutex): OFFS_KF_FD0 for
 * the first argument, OFFS_KF_FD1 for the one *fd1 says.
 */
static u8 offs_klock_fds(int nr, int *fd1)
{
	switch (nr) {
	case __NR_read: case __NR_write: case __NR_readv: case __NR_writev:
	case __NR_pread64: case __NR_pwrite64: case __NR_preadv:
	case __NR_pwritev: case __NR_preadv2: case __NR_pwritev2:
	case __NR_lseek: case __NR_getdents64: case __NR_getdents:
	case __NR_ftruncate: case __NR_fallocate: case __NR_fsync:
	case __NR_fdatasync: case __NR_sync_file_range: case __NR_fchmod:
	case __NR_fchown: case __NR_fsetxattr: case __NR_fremovexattr:
	case __NR_vmsplice: case __NR_ioctl:
		return OFFS_KF_FD0;
	case __NR_sendfile:		/* out_fd, in_fd */
	case __NR_tee:			/* fd_in, fd_out */
		*fd1 = 1;
		return OFFS_KF_FD0 | OFFS_KF_FD1;
	case __NR_splice:		/* fd_in, off_in, fd_out */
	case __NR_copy_file_range:
		*fd1 = 2;
		return OFFS_KF_FD0 | OFFS_KF_FD1;
	}
	return 0;
}

/*
 * After classification: a lock wait that is not a user-space lock's
 * (futex(), file locks) may be a kernel lock's whose owner is known.  A
 * read or write of a pipe or socket that sleeps on a lock waits for that
 * lock (the pipe's mutex), not for the other end.  The descriptors of
 * the call go with it (fcmd: OFFS_KF_*; val the first, uaddr the second).
 */
void offs_blk_kwait_in(const struct offs_sample *s, struct offs_fxwait *fx)
{
	int fd1 = 0;

	if (fx->cand != OFFS_FX_NONE && fx->cand != OFFS_FX_FILE &&
	    fx->cand != OFFS_FX_PEER)
		return;
	switch (s->syscall) {
	case __NR_futex:
#ifdef __NR_futex_waitv
	case __NR_futex_waitv:
#endif
	case __NR_flock:
	case __NR_fcntl:
		return;
	}
	fx->cand = OFFS_FX_KLOCK;
	/*
	 * No system call: no arguments (the sampler's sample holds the last
	 * user thread's, sampler.c).
	 */
	if (!s->user) {
		fx->fcmd = 0;
		fx->val = 0;
		fx->uaddr = 0;
		return;
	}
	fx->fcmd = offs_klock_fds(s->syscall, &fd1);
	fx->val = (u32)s->args[0];
	fx->uaddr = (u32)s->args[fd1];
}

static u32 offs_u32_at(const u8 *buf, unsigned int off)
{
	u32 v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/*
 * Read the lock around fx->uaddr (the waiter's address space is the
 * current one).  Returns the owner's thread id as the waiter's pid
 * namespace numbers it, 0 if the words do not name one (an id of
 * PID_MAX_LIMIT or more is no thread's: such a word, e.g. half of a
 * pointer in stdio's lock, is never taken for one), -EFAULT if they
 * could not be read.  *kind and *shared say what was read.
 */
static int offs_blk_read_owner(const struct offs_fxwait *fx, u8 *kind,
			       bool *shared)
{
	u8 buf[OFFS_RW_SIZE];
	unsigned long base;
	u32 word, owner, k;
	int i, failed;

	*shared = false;
	if (fx->uaddr & 3)
		return 0;
	if (fx->cand == OFFS_FX_GIL) {
		u64 gil[3], ts, tid;

		/*
		 * The GIL (pystack.c found it): its holder's thread state
		 * while locked is 1, and that thread state's thread id.
		 */
		if (copy_from_user_nofault(gil, (void __user *)fx->uaddr,
					   sizeof(gil)))
			return -EFAULT;
		if (fx->gil_locked > sizeof(gil) - 4 ||
		    fx->gil_holder > sizeof(gil) - 8 ||
		    offs_u32_at((u8 *)gil, fx->gil_locked) != 1)
			return 0;
		memcpy(&ts, (u8 *)gil + fx->gil_holder, sizeof(ts));
		if (!ts)
			return 0;
		if (copy_from_user_nofault(&tid, (void __user *)(ts + fx->py_tid),
					   sizeof(tid)))
			return -EFAULT;
		if (!tid || tid >= PID_MAX_LIMIT)
			return 0;
		*kind = OFFS_BK_GIL;
		return tid;
	}
	if (fx->cand == OFFS_FX_PI) {
		/* Any PI futex, glibc's or not: the word is the owner's tid. */
		if (copy_from_user_nofault(&word, (u32 __user *)fx->uaddr,
					   sizeof(word)))
			return -EFAULT;
		word &= FUTEX_TID_MASK;
		if (word >= PID_MAX_LIMIT)
			return 0;	/* no thread id: not a lock word */
		*kind = OFFS_BK_PI;
		*shared = true;		/* may be another process's thread */
		return word;
	}
	if (fx->val == 3) {
		/*
		 * A writer waits at base + 12, a reader at base + 8: try
		 * both (either read may fail alone, e.g. at a page start).
		 */
		for (i = 0, failed = 0; i < 2; i++) {
			base = fx->uaddr - (i ? 8 : 12);
			if (copy_from_user_nofault(buf, (void __user *)base,
						   OFFS_RW_SIZE)) {
				failed++;
				continue;
			}
			owner = offs_u32_at(buf, OFFS_RW_CUR_WRITER);
			if ((offs_u32_at(buf, OFFS_RW_READERS) &
			     OFFS_RW_WRLOCKED) != OFFS_RW_WRLOCKED ||
			    offs_u32_at(buf, OFFS_RW_FLAGS) > 2 ||
			    offs_u32_at(buf, OFFS_RW_SHARED) > 1 ||
			    !owner || owner >= PID_MAX_LIMIT ||
			    offs_u32_at(buf, fx->uaddr - base) != 3)
				continue;
			*kind = OFFS_BK_RWLOCK;
			*shared = offs_u32_at(buf, OFFS_RW_SHARED);
			return owner;
		}
		return failed == 2 ? -EFAULT : 0;
	}
	if (copy_from_user_nofault(buf, (void __user *)fx->uaddr,
				   OFFS_MUTEX_KIND + 4))
		return -EFAULT;
	word = offs_u32_at(buf, 0);
	owner = offs_u32_at(buf, OFFS_MUTEX_OWNER);
	k = offs_u32_at(buf, OFFS_MUTEX_KIND);
	if ((k & ~OFFS_MUTEX_KIND_KNOWN) || (k & OFFS_MUTEX_PI) ||
	    !offs_u32_at(buf, OFFS_MUTEX_NUSERS) ||
	    !owner || owner >= PID_MAX_LIMIT)
		return 0;
	*shared = k & OFFS_MUTEX_PSHARED;
	if (fx->val & FUTEX_WAITERS) {
		/* Robust: the word is the owner's tid, as __owner says. */
		if (!(k & OFFS_MUTEX_ROBUST) ||
		    (word & FUTEX_TID_MASK) != owner ||
		    (fx->val & FUTEX_TID_MASK) != owner)
			return 0;
		*kind = OFFS_BK_ROBUST;
		return owner;
	}
	/* Normal, recursive, errorcheck, adaptive: "locked, waiters". */
	if ((k & OFFS_MUTEX_ROBUST) || word != 2)
		return 0;
	*kind = OFFS_BK_MUTEX;
	return owner;
}

/*
 * t's thread name and its process's (the leader's, as records show
 * "comm"), as offs_sample_names() copies them (a racy rename is fine).
 */
void offs_blk_copy_names(struct task_struct *t, char *name, char *comm)
{
	memcpy(name, t->comm, TASK_COMM_LEN);
	name[TASK_COMM_LEN - 1] = '\0';
	/* RCU keeps the leader. */
	rcu_read_lock();
	memcpy(comm, READ_ONCE(t->group_leader)->comm, TASK_COMM_LEN);
	rcu_read_unlock();
	comm[TASK_COMM_LEN - 1] = '\0';
}

static void offs_blk_hnames(struct offs_edge_key *k, struct task_struct *h)
{
	k->htid = h->pid;
	k->htgid = h->tgid;
	offs_blk_copy_names(h, k->hname, k->hcomm);
}

/*
 * Whether a wait of t (counted in rec and the sessions' srec[]) is to be
 * looked up: some consumer counted it, blockers are on, and its process's
 * share of the tick's lookups allows one more.
 */
static bool offs_blk_want(struct task_struct *t, struct offs_rec *rec,
			  struct offs_rec * const *srec)
{
	bool counted = rec;
	int i;

	for (i = 0; i < OFFS_SESSIONS_MAX; i++)
		counted |= !!srec[i];
	if (!counted || !READ_ONCE(offs_blockers))
		return false;
	if (!offs_blk_share(t->tgid) || offs_blk_npend >= OFFS_BLK_PENDING) {
		OFFS_STAT_ADD(blocker_dropped, 1);
		return false;
	}
	OFFS_STAT_ADD(blocker_looked, 1);
	return true;
}

/* The waiter being looked up: where it was counted, and its switch count. */
struct offs_blk_w {
	struct task_struct *t;
	struct offs_rec *rec;
	struct offs_rec * const *srec;
	unsigned int idx;		/* in the snapshot */
	unsigned long ncsw;		/* when captured */
};

/*
 * Keep the observation "t (snapshot index idx) waits for h" (h referenced,
 * or NULL: gone or found at the end of the tick) for the end of the tick.
 */
static struct offs_blk_pending *
offs_blk_add(const struct offs_blk_w *w, u8 kind, unsigned long obj,
	     struct task_struct *h)
{
	struct offs_blk_pending *p = &offs_blk_pend[offs_blk_npend++];

	memset(p, 0, sizeof(*p));	/* the key is hashed as bytes */
	p->key.wrec = w->rec;
	memcpy(p->wsrec, w->srec, sizeof(p->wsrec));
	p->key.uaddr = obj;
	p->key.wtid = w->t->pid;
	p->key.wtgid = w->t->tgid;
	p->key.kind = kind;
	/* Names as offs_sample_names() copies them (a racy rename is fine). */
	memcpy(p->key.wname, w->t->comm, TASK_COMM_LEN);
	p->key.wname[TASK_COMM_LEN - 1] = '\0';
	p->holder = h;
	p->widx = w->idx;
	p->file = -1;
	if (h)
		offs_blk_hnames(&p->key, h);
	return p;
}

/*
 * p names no holder, for the reason why (OFFS_BW_*): counted as it is, an
 * edge to "?", not matched at the end of the tick.
 */
static void offs_blk_set_unknown(struct offs_blk_pending *p, u8 why)
{
	p->children = false;
	p->file = -1;
	p->key.hstate = OFFS_BH_UNKNOWN;
	p->key.why = why;
}

/*
 * w's wait names no holder, for the reason why (OFFS_BW_*): kept as an
 * edge to "?" unless w has run meanwhile (then it waits no more).
 */
static void offs_blk_unknown(const struct offs_blk_w *w, u8 kind,
			     unsigned long obj, u8 why)
{
	if (offs_task_ran(w->t, w->ncsw)) {
		OFFS_STAT_ADD(blocker_raced, 1);
		return;
	}
	offs_blk_set_unknown(offs_blk_add(w, kind, obj, NULL), why);
}

/* The kind of a futex wait whose words named nobody (kind: as read). */
static u8 offs_blk_fkind(const struct offs_fxwait *fx, u8 kind)
{
	if (kind != OFFS_BK_NONE)
		return kind;
	if (fx->cand == OFFS_FX_GIL)
		return OFFS_BK_GIL;
	return fx->cand == OFFS_FX_PI ? OFFS_BK_PI : OFFS_BK_FUTEX;
}

/* A user-space lock (futex word) or the GIL: read the owner's id. */
static void offs_blk_note_futex(const struct offs_blk_w *w,
				const struct offs_fxwait *fx)
{
	struct task_struct *t = w->t;
	struct offs_blk_pending *p;
	struct task_struct *h = NULL;
	struct pid_namespace *ns;
	struct pid *pid;
	bool shared;
	u8 kind = OFFS_BK_NONE;
	int nr;

	/* No CFI map needed: only data is read. */
	nr = offs_uwin_enter_data(t) ?
	     offs_blk_read_owner(fx, &kind, &shared) : -EFAULT;
	if (nr < 0) {
		OFFS_STAT_ADD(blocker_read_failed, 1);
		offs_blk_unknown(w, offs_blk_fkind(fx, kind), fx->uaddr,
				 OFFS_BW_UNREADABLE);
		return;
	}
	if (!nr) {
		OFFS_STAT_ADD(blocker_unknown, 1);
		offs_blk_unknown(w, offs_blk_fkind(fx, kind), fx->uaddr,
				 OFFS_BW_INVALID);
		return;
	}
	/* Woke (or exited) while we entered its memory: not waiting now. */
	if (offs_task_ran(t, w->ncsw)) {
		OFFS_STAT_ADD(blocker_raced, 1);
		return;
	}
	/* The task list and pid hash are RCU-protected; nothing sleeps. */
	rcu_read_lock();
	/* NULL once t has been reaped (its pid detached): it waits no more. */
	ns = task_active_pid_ns(t);
	pid = ns ? find_pid_ns(nr, ns) : NULL;
	h = pid ? pid_task(pid, PIDTYPE_PID) : NULL;
	/*
	 * A tid now used by another process: the owner is gone.  A shared
	 * lock's owner wrote its tid as its own pid namespace numbers it:
	 * only a thread of the waiter's namespace can be meant.
	 */
	if (h && (shared ? task_active_pid_ns(h) != ns :
			   !same_thread_group(h, t)))
		h = NULL;
	if (h)
		get_task_struct(h);
	rcu_read_unlock();
	if (!ns) {
		OFFS_STAT_ADD(blocker_raced, 1);
		return;
	}
	if (h == t || offs_task_ran(t, w->ncsw)) {
		/* Took the lock itself, or woke: not waiting as sampled. */
		OFFS_STAT_ADD(blocker_raced, 1);
		if (h)
			put_task_struct(h);
		return;
	}
	p = offs_blk_add(w, kind, fx->uaddr, h);
	if (!h) {
		p->key.htid = nr;	/* as the waiter's namespace numbers it */
		p->key.hstate = OFFS_BH_GONE;
	}
}

/* wait4()/waitid(): the child, or (group, any) the children at tick end. */
static void offs_blk_note_child(const struct offs_blk_w *w,
				const struct offs_fxwait *fx)
{
	struct task_struct *t = w->t;
	struct offs_blk_pending *p;
	struct task_struct *c;
	struct pid *pgrp;

	if (!offs_kh_child(t, fx, &c, &pgrp) || offs_task_ran(t, w->ncsw)) {
		OFFS_STAT_ADD(blocker_raced, 1);
		goto put;
	}
	/* No such child, or a group that no longer exists: nobody named. */
	if ((fx->val == OFFS_WAIT_PID && !c) ||
	    (fx->val == OFFS_WAIT_PGID && !pgrp)) {
		OFFS_STAT_ADD(blocker_unknown, 1);
		offs_blk_unknown(w, OFFS_BK_CHILD, fx->val, OFFS_BW_NOCHILD);
		return;
	}
	p = offs_blk_add(w, OFFS_BK_CHILD, fx->val, c);
	p->children = fx->val != OFFS_WAIT_PID;
	p->pgrp = pgrp;
	return;
put:
	if (c)
		put_task_struct(c);
	put_pid(pgrp);
}

/*
 * A holder h (referenced, or NULL: none named, for the reason why) for
 * w's wait: kept for the end of the tick unless w has run meanwhile (or h
 * is w itself).
 */
static void offs_blk_found(const struct offs_blk_w *w, u8 kind,
			   unsigned long obj, struct task_struct *h, u8 why)
{
	if (!h) {
		OFFS_STAT_ADD(blocker_unknown, 1);
		offs_blk_unknown(w, kind, obj, why);
		return;
	}
	if (h == w->t || offs_task_ran(w->t, w->ncsw)) {
		OFFS_STAT_ADD(blocker_raced, 1);
		put_task_struct(h);
		return;
	}
	offs_blk_add(w, kind, obj, h);
}

/* A kernel lock: its owner where kholder.c can tell. */
static void offs_blk_note_klock(const struct offs_blk_w *w,
				const struct offs_fxwait *fx)
{
	unsigned long obj;
	struct task_struct *h;
	u8 kind;
	int ret;

	kind = OFFS_BK_KLOCK;
	ret = offs_kh_klock(w->t, fx, &h, &kind, &obj);
	if (ret == -EBUSY) {
		OFFS_STAT_ADD(blocker_read_failed, 1);
		offs_blk_unknown(w, kind, obj, OFFS_BW_BUSY);
		return;
	}
	/* Not recognised: which lock is not known either. */
	if (ret)
		offs_blk_found(w, OFFS_BK_KLOCK, OFFS_KO_NONE, NULL,
			       OFFS_BW_KERNEL);
	else
		offs_blk_found(w, kind, obj, h, kind == OFFS_BK_RWSEM ?
			       OFFS_BW_READERS : OFFS_BW_BUSY);
}

/* A UNIX stream socket: the process at its other end. */
static void offs_blk_note_peer(const struct offs_blk_w *w,
			       const struct offs_fxwait *fx)
{
	offs_blk_found(w, OFFS_BK_UNIX, fx->val, offs_kh_peer(w->t, fx->val),
		       OFFS_BW_NOPEER);
}

/*
 * A pipe, FIFO or socket: what its other end is, for the end of the tick
 * to find the processes holding it (offs_blk_files()).
 */
static void offs_blk_note_file(const struct offs_blk_w *w,
			       const struct offs_fxwait *fx)
{
	struct offs_kf_target *tg;
	struct offs_blk_pending *p;
	int ret;

	if (offs_blk_nft >= OFFS_KF_TARGETS) {
		OFFS_STAT_ADD(blocker_dropped, 1);
		return;
	}
	tg = &offs_blk_ftg[offs_blk_nft];
	ret = offs_kf_target(w->t, fx->val, fx->fcmd, tg);
	if (ret == -ENOTCONN) {
		/* Unconnected, or a peer outside the host. */
		OFFS_STAT_ADD(blocker_unknown, 1);
		offs_blk_unknown(w, tg->kind, fx->val, OFFS_BW_NOPEER);
		return;
	}
	if (ret) {
		/* The descriptor was closed or replaced: not this wait. */
		OFFS_STAT_ADD(blocker_raced, 1);
		return;
	}
	if (offs_task_ran(w->t, w->ncsw)) {
		OFFS_STAT_ADD(blocker_raced, 1);
		offs_kf_put(tg);
		return;
	}
	p = offs_blk_add(w, tg->kind, fx->val, NULL);
	p->file = offs_blk_nft;
	offs_blk_fpend[offs_blk_nft++] = p - offs_blk_pend;
}

/* A file lock: the process holding a conflicting one. */
static void offs_blk_note_flock(const struct offs_blk_w *w,
				const struct offs_fxwait *fx)
{
	static const u8 kind[] = {
		[OFFS_FL_FLOCK] = OFFS_BK_FLOCK, [OFFS_FL_POSIX] = OFFS_BK_POSIX,
		[OFFS_FL_OFD] = OFFS_BK_OFD,
	};
	struct task_struct *h;

	if (fx->fcmd >= ARRAY_SIZE(kind))
		return;		/* offs_kh_flock_wait() sets no other */
	h = offs_kh_flock(w->t, fx);
	if (IS_ERR(h)) {
		OFFS_STAT_ADD(blocker_read_failed, 1);
		offs_blk_unknown(w, kind[fx->fcmd], fx->val,
				 OFFS_BW_UNREADABLE);
		return;
	}
	offs_blk_found(w, kind[fx->fcmd], fx->val, h, OFFS_BW_NOLOCK);
}

/*
 * t (counted in rec, and in the sessions' srec[], at snapshot index idx,
 * context-switch count ncsw when captured) waits as fx says, a candidate
 * (blocker.h): find the holder and keep the observation for the end of
 * the tick.  Sleeps (entering t's address space).
 */
void offs_blk_note_cand(struct task_struct *t, const struct offs_fxwait *fx,
			struct offs_rec *rec, struct offs_rec * const *srec,
			unsigned int idx, unsigned long ncsw)
{
	struct offs_blk_w w = {
		.t = t, .rec = rec, .srec = srec, .idx = idx, .ncsw = ncsw,
	};
	u64 t0;

	if (!offs_blk_want(t, rec, srec))
		return;
	t0 = local_clock();
	switch (fx->cand) {
	case OFFS_FX_CHILD:
		offs_blk_note_child(&w, fx);
		break;
	case OFFS_FX_KLOCK:
		offs_blk_note_klock(&w, fx);
		break;
	case OFFS_FX_PEER:
		offs_blk_note_peer(&w, fx);
		break;
	case OFFS_FX_FLOCK:
		offs_blk_note_flock(&w, fx);
		break;
	case OFFS_FX_FILE:
		offs_blk_note_file(&w, fx);
		break;
	default:
		offs_blk_note_futex(&w, fx);
		break;
	}
	OFFS_STAT_ADD(blocker_ns_total, local_clock() - t0);
}

/* The walk's thread t, at snapshot index idx, was running on cpu. */
void offs_blk_note_running(struct task_struct *t, unsigned int idx,
			   unsigned int cpu)
{
	struct offs_blk_cpu *c;

	if (cpu >= nr_cpu_ids || !offs_blk_cpus || !READ_ONCE(offs_blockers))
		return;
	c = &offs_blk_cpus[cpu];
	c->tick = offs_blk_tickno;
	c->idx = idx;
	offs_blk_copy_names(t, c->name, c->comm);
}

/*
 * t waits in cpu's run queue: for the thread running there, found at the
 * end of the tick.  A thread queued behind the sampler itself waits for
 * the sampling, not for anything of the host's: no edge, only counted.
 */
void offs_blk_note_runq(struct task_struct *t, unsigned int cpu,
			struct offs_rec *rec, struct offs_rec * const *srec,
			unsigned int idx)
{
	struct offs_blk_w w = { .t = t, .rec = rec, .srec = srec, .idx = idx };

	/* Preemption on: this may be stale, then the holder is unknown. */
	if (cpu == raw_smp_processor_id()) {
		if (READ_ONCE(offs_blockers))
			OFFS_STAT_ADD(blocker_self, 1);
		return;
	}
	if (offs_blk_want(t, rec, srec))
		offs_blk_add(&w, OFFS_BK_CPU, cpu, NULL);
}

/* Where h was counted in this tick: near the waiter, its own process. */
static int offs_blk_find(struct task_struct * const *snap,
			 const struct offs_snap_out *out, unsigned int n,
			 const struct offs_blk_pending *p, unsigned int *far)
{
	struct task_struct *h = p->holder;
	unsigned int i;
	int j;

	for (j = p->widx; j >= 0 && out[j].tgid == h->tgid; j--)
		if (snap[j] == h && out[j].tid == h->pid)
			return j;
	for (i = p->widx + 1; i < n && out[i].tgid == h->tgid; i++)
		if (snap[i] == h && out[i].tid == h->pid)
			return i;
	if (h->tgid == out[p->widx].tgid || ++*far > OFFS_BLK_FAR_SEARCH)
		return -1;
	for (i = 0; i < n; i++)
		if (snap[i] == h && out[i].tid == h->pid)
			return i;
	return -1;
}

/*
 * What the holder at o was doing for one consumer (slot): counted in its
 * record hrec, running as that consumer saw it, or not sampled by it.
 */
static void offs_blk_holder(struct offs_edge_key *k,
			    const struct offs_snap_out *o,
			    struct offs_rec *hrec, unsigned int slot)
{
	k->hrec = hrec;
	if (hrec)
		k->hstate = OFFS_BH_SAMPLED;
	else
		k->hstate = o->running && (o->smask & slot) ?
			    OFFS_BH_RUNNING : OFFS_BH_UNSAMPLED;
}

/*
 * The observation p in the windows of the sessions that counted its waiter,
 * with the holder's record there (a holder a session filtered out is
 * unsampled for it).  offs_table_lock held.
 */
static void offs_blk_count_sessions(const struct offs_blk_pending *p,
				    const struct offs_snap_out *out)
{
	struct offs_edge_key k;
	int s;

	for (s = 0; s < OFFS_SESSIONS_MAX; s++) {
		if (!p->wsrec[s] || !offs_sessions[s])
			continue;
		k = p->key;
		k.wrec = p->wsrec[s];
		/* A holder the session does not sample has no record there. */
		if (p->hidx >= 0)
			offs_blk_holder(&k, &out[p->hidx],
					out[p->hidx].smask & OFFS_SLOT_SESS(s) ?
					out[p->hidx].srec[s] : NULL,
					OFFS_SLOT_SESS(s));
		offs_table_count_edge(offs_sessions[s]->gen, &k);
	}
}

/* p names no holder after all: counted by no consumer. */
static void offs_blk_forget(struct offs_blk_pending *p)
{
	p->key.wrec = NULL;
	memset(p->wsrec, 0, sizeof(p->wsrec));
}

/* p's holder: the walk's thread at snapshot index j, with its names. */
static void offs_blk_set_holder(struct offs_blk_pending *p,
				const struct offs_snap_out *out,
				unsigned int j, const char *name,
				const char *comm)
{
	p->hidx = j;
	p->key.htid = out[j].tid;
	p->key.htgid = out[j].tgid;
	memcpy(p->key.hname, name, TASK_COMM_LEN);
	memcpy(p->key.hcomm, comm, TASK_COMM_LEN);
	offs_blk_holder(&p->key, &out[j], out[j].rec, OFFS_SLOT_DEFAULT);
}

/*
 * A run-queue wait: the thread the walk found running on the waiter's CPU
 * at this tick.  False if none was (idle, or not visited): nobody named.
 */
static bool offs_blk_cpu_holder(struct offs_blk_pending *p,
				const struct offs_snap_out *out, unsigned int n)
{
	unsigned long cpu = p->key.uaddr;
	const struct offs_blk_cpu *c;

	if (cpu >= nr_cpu_ids || !offs_blk_cpus)
		return false;
	c = &offs_blk_cpus[cpu];
	if (c->tick != offs_blk_tickno || c->idx >= n)
		return false;
	offs_blk_set_holder(p, out, c->idx, c->name, c->comm);
	return true;
}

/*
 * The children of this tick's "any child" and group waits: the leaders of
 * the walk (lead[], nlead of them: snapshot indexes) whose parent is the
 * waiter's process (the walk noted each leader's parent), in the group
 * asked for.  Returns how many edges offs_blk_kids[] holds.
 */
static unsigned int offs_blk_children(struct task_struct * const *snap,
				      const struct offs_snap_out *out,
				      const unsigned int *lead,
				      unsigned int nlead)
{
	struct offs_blk_cwait *w = offs_blk_cwaits;
	unsigned int i, l, lo, hi, mid, nw = 0, nk = 0;
	unsigned long waiting = 0;	/* the waiters' tgids, as bits */
	struct offs_blk_child *c;
	struct offs_blk_pending *p;
	pid_t ptgid;

	for (i = 0; i < offs_blk_npend; i++) {
		p = &offs_blk_pend[i];
		if (!p->children)
			continue;
		if (nw < OFFS_BLK_CHILD_WAITS) {
			w[nw].tgid = p->key.wtgid;
			w[nw++].pend = i;
			waiting |= BIT((u32)p->key.wtgid % BITS_PER_LONG);
		} else {
			/* Not looked at: counted as dropped, not counted. */
			p->children = false;
			offs_blk_forget(p);
			OFFS_STAT_ADD(blocker_dropped, 1);
		}
	}
	if (!nw)
		return 0;
	sort(w, nw, sizeof(*w), offs_blk_cwait_cmp, NULL);
	/*
	 * Each leader of the walk: the waits of its parent's process.  Most
	 * parents wait for nothing: one bit test rules them out before the
	 * search (a few hundred leaders, a wait or two, at every tick).
	 */
	for (l = 0; l < nlead; l++) {
		i = lead[l];
		ptgid = out[i].ptgid;
		if (!(waiting & BIT((u32)ptgid % BITS_PER_LONG)) || !ptgid ||
		    ptgid == out[i].tgid)
			continue;
		for (lo = 0, hi = nw; lo < hi; ) {
			mid = lo + (hi - lo) / 2;
			if (w[mid].tgid < ptgid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nw && w[lo].tgid == ptgid; lo++) {
			p = &offs_blk_pend[w[lo].pend];
			c = &offs_blk_kids[nk < OFFS_BLK_CHILD_EDGES ? nk : 0];
			if (!offs_kh_is_child(snap[i], out[i].tgid,
					      p->key.wtgid, p->pgrp,
					      c->hname, c->hcomm))
				continue;
			p->kids = true;
			if (nk >= OFFS_BLK_CHILD_EDGES) {
				OFFS_STAT_ADD(blocker_dropped, 1);
				continue;
			}
			c->pend = w[lo].pend;
			c->cidx = i;
			nk++;
		}
	}
	/* Waits none of whose children the walk saw: nobody named. */
	for (i = 0; i < nw; i++) {
		p = &offs_blk_pend[w[i].pend];
		if (p->kids)
			continue;
		OFFS_STAT_ADD(blocker_unknown, 1);
		offs_blk_set_unknown(p, OFFS_BW_NOCHILD);
	}
	return nk;
}

/*
 * The main thread the walk saw as was (only compared: it may have exited)
 * if it still is process tgid's and not a kernel thread: referenced, its
 * names in name and comm.  Else NULL.
 */
static struct task_struct *offs_blk_leader(const struct task_struct *was,
					   pid_t tgid, char *name, char *comm)
{
	struct task_struct *c;

	/* The pid hash and a pid's tasks: RCU-protected. */
	rcu_read_lock();
	c = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (c != was || (READ_ONCE(c->flags) & PF_KTHREAD))
		c = NULL;
	if (c) {
		get_task_struct(c);
		offs_blk_copy_names(c, name, comm);
	}
	rcu_read_unlock();
	return c;
}

/*
 * The thread whose descriptor table stands for c's process: c, or once c
 * (the main thread) has exited and let go of its table, one of the first
 * OFFS_BLK_FILES_OF threads of the group that still has one (a thread
 * with a table of its own is not looked for).  Referenced; NULL if none.
 */
#define OFFS_BLK_FILES_OF	16

static struct task_struct *offs_blk_files_of(struct task_struct *c)
{
	struct task_struct *t, *r = NULL;
	unsigned int n = 0;

	/*
	 * The group's thread list is RCU-protected; ->files is only a hint
	 * here, offs_kf_scan() reads it again under the task lock.
	 */
	rcu_read_lock();
	if (READ_ONCE(c->files)) {
		r = c;
	} else {
		for_each_thread(c, t) {
			if (READ_ONCE(t->files)) {
				r = t;
				break;
			}
			if (++n == OFFS_BLK_FILES_OF)
				break;
		}
	}
	if (r)
		get_task_struct(r);
	rcu_read_unlock();
	return r;
}

/* Drop this tick's pipe, FIFO and socket targets. */
static void offs_blk_files_put(void)
{
	unsigned int j;

	for (j = 0; j < offs_blk_nft; j++)
		offs_kf_put(&offs_blk_ftg[j]);
	offs_blk_nft = 0;
}

/* Targets of t's wait that are not its own process's, as bits. */
static unsigned long offs_blk_others(pid_t tgid)
{
	unsigned long m = 0;
	unsigned int j;

	for (j = 0; j < offs_blk_nft; j++)
		if (offs_blk_ftg[j].wtgid != tgid)
			m |= BIT(j);
	return m;
}

/*
 * Process c's (the walk's leader at snapshot index i) edges to the waits
 * in hit, after the nk in offs_blk_kids[]; returns the new count.
 */
static unsigned int offs_blk_file_edges(unsigned long hit, unsigned int i,
					const char *name, const char *comm,
					unsigned int nk)
{
	struct offs_blk_child *k;
	unsigned int j;

	for (j = 0; j < offs_blk_nft; j++) {
		if (!(hit & BIT(j)))
			continue;
		if (nk >= OFFS_BLK_CHILD_EDGES) {
			OFFS_STAT_ADD(blocker_dropped, 1);
			continue;
		}
		k = &offs_blk_kids[nk++];
		k->pend = offs_blk_fpend[j];
		k->cidx = i;
		memcpy(k->hname, name, TASK_COMM_LEN);
		memcpy(k->hcomm, comm, TASK_COMM_LEN);
	}
	return nk;
}

/* Where the next tick's descriptor search starts, after one was cut. */
static unsigned int offs_blk_scan_from;

/*
 * What whole searches found (kfile.c's memos): offs_blk_nmemo of them in
 * offs_blk_memos[offs_blk_mcur] (the last tick's first, then older ones
 * no tick has asked for since, at most OFFS_BLK_MEMOS), those a wait of
 * this tick looked at in offs_blk_mused; offs_blk_fmemo[j] is this tick's
 * for target j once offs_blk_fmemo_ok has bit j.
 */
#define OFFS_BLK_MEMOS	16
static struct offs_kf_memo offs_blk_memos[2][OFFS_BLK_MEMOS];
static unsigned int offs_blk_nmemo, offs_blk_mcur;
static unsigned long offs_blk_mused;
static struct offs_kf_memo offs_blk_fmemo[OFFS_KF_TARGETS];
static unsigned long offs_blk_fmemo_ok;

/* The processes of the memo being checked: snapshot index and names. */
static struct offs_blk_mproc {
	pid_t tgid;
	unsigned int idx;
	char name[TASK_COMM_LEN];
	char comm[TASK_COMM_LEN];
} offs_blk_mprocs[OFFS_KF_MEMO_FDS];

/*
 * The snapshot index of process d->tgid's main thread among the walk's
 * leaders: where it was when the memo was made, else looked for.  -1: the
 * walk did not see it.
 */
static int offs_blk_lead_of(const struct offs_snap_out *out, unsigned int n,
			    const unsigned int *lead, unsigned int nlead,
			    const struct offs_kf_fd *d)
{
	unsigned int l;

	if (d->idx < n && out[d->idx].tgid == d->tgid &&
	    out[d->idx].tid == d->tgid)
		return d->idx;
	for (l = 0; l < nlead; l++)
		if (out[lead[l]].tgid == d->tgid)
			return lead[l];
	return -1;
}

/*
 * Target j's holders as the last tick's memo of what it waits for says, if
 * that memo still holds (kfile.c): their edges added after the *nk in
 * offs_blk_kids[] (*nk moved on), *found bit j set if there is one, the
 * memo kept for the next tick.  False if there is none or it no longer
 * holds: search.
 */
static bool offs_blk_memo_holders(struct task_struct * const *snap,
				  const struct offs_snap_out *out,
				  unsigned int n, const unsigned int *lead,
				  unsigned int nlead, unsigned int j,
				  unsigned int *nk, unsigned long *found)
{
	const struct offs_kf_target *tg = &offs_blk_ftg[j];
	struct offs_blk_mproc *mp = offs_blk_mprocs;
	const struct offs_kf_memo *m = NULL;
	struct task_struct *c, *ft = NULL;
	long count[OFFS_KF_MEMO_FDS];
	unsigned int k, np = 0;
	bool ok = true;
	int i;

	/* Every memo for what tg waits for is looked at (not kept as old). */
	for (k = 0; k < offs_blk_nmemo; k++) {
		if (!offs_kf_memo_for(&offs_blk_memos[offs_blk_mcur][k], tg))
			continue;
		if (!m)
			m = &offs_blk_memos[offs_blk_mcur][k];
		offs_blk_mused |= BIT(k);
	}
	if (!m || offs_kf_memo_over(m))
		return false;
	for (k = 0; ok && k < m->n; k++) {
		if (!k || m->d[k].tgid != m->d[k - 1].tgid) {
			/* The next process: its table, its names. */
			if (ft)
				put_task_struct(ft);
			ft = NULL;
			i = offs_blk_lead_of(out, n, lead, nlead, &m->d[k]);
			c = i < 0 ? NULL : offs_blk_leader(snap[i], m->d[k].tgid,
							   mp[np].name,
							   mp[np].comm);
			if (c) {
				ft = offs_blk_files_of(c);
				put_task_struct(c);
			}
			if (!ft)
				break;
			mp[np].tgid = m->d[k].tgid;
			mp[np++].idx = i;
		}
		ok = offs_kf_memo_fd(ft, tg, &m->d[k], &count[k]);
	}
	if (ft)
		put_task_struct(ft);
	if (!ok || k < m->n || !offs_kf_memo_whole(tg, m, count))
		return false;
	for (k = 0; k < np; k++) {
		if (mp[k].tgid == tg->wtgid)
			continue;	/* never its own holder */
		*nk = offs_blk_file_edges(BIT(j), mp[k].idx, mp[k].name,
					  mp[k].comm, *nk);
		*found |= BIT(j);
	}
	/* Kept, with where each process is in this tick's snapshot. */
	offs_blk_fmemo[j] = *m;
	for (k = 0, np = 0; k < m->n; k++) {
		if (mp[np].tgid != m->d[k].tgid)
			np++;
		offs_blk_fmemo[j].d[k].idx = mp[np].idx;
	}
	offs_blk_fmemo_ok |= BIT(j);
	OFFS_STAT_ADD(blocker_files_kept, 1);
	return true;
}

/*
 * The next tick's memos: this tick's (offs_blk_fmemo_ok), then the older
 * ones no wait of this tick looked at (a memo is checked before it is
 * believed, so its age does not matter).
 */
static void offs_blk_memo_keep(void)
{
	const struct offs_kf_memo *old = offs_blk_memos[offs_blk_mcur];
	struct offs_kf_memo *next = offs_blk_memos[offs_blk_mcur ^ 1];
	unsigned int j, k, nn = 0;

	for (j = 0; j < offs_blk_nft && nn < OFFS_BLK_MEMOS; j++) {
		/* One per thing waited for (two readers of a pipe: one). */
		if (!(offs_blk_fmemo_ok & BIT(j)) ||
		    offs_kf_memo_over(&offs_blk_fmemo[j]))
			continue;
		for (k = 0; k < nn; k++)
			if (offs_kf_memo_for(&next[k], &offs_blk_ftg[j]))
				break;
		if (k == nn)
			next[nn++] = offs_blk_fmemo[j];
	}
	for (k = 0; k < offs_blk_nmemo && nn < OFFS_BLK_MEMOS; k++)
		if (!(offs_blk_mused & BIT(k)))
			next[nn++] = old[k];
	offs_blk_mcur ^= 1;
	offs_blk_nmemo = nn;
	offs_blk_mused = 0;
	offs_blk_fmemo_ok = 0;
}

/*
 * The processes holding the other end of this tick's pipe, FIFO and socket
 * waits.  First the memos of the last tick's whole searches
 * (offs_blk_memo_holders()); the waits they do not settle are searched
 * for: the descriptor tables of the walk's processes (its leaders,
 * lead[]: each looked at through its main thread, or another thread once
 * that one has exited: offs_blk_files_of(); a thread with a table of its
 * own is not), in the walk's order from where the last cut search
 * stopped (a snapshot index), within
 * OFFS_BLK_SCAN_FDS descriptors, OFFS_BLK_SCAN_CHUNK under one hold of a
 * table.  A wait's own process is never its holder (it may hold both
 * ends), but its table is searched too, for the memo.  A search not cut
 * short makes the memos of the next tick.  Edges follow the nk already in
 * offs_blk_kids[]; returns the new count.  Sleeps between chunks.
 */
static unsigned int offs_blk_files(struct task_struct * const *snap,
				   const struct offs_snap_out *out,
				   unsigned int n, const unsigned int *lead,
				   unsigned int nlead, unsigned int nk)
{
	unsigned int i, j, k, s, looked, budget = OFFS_BLK_SCAN_FDS;
	unsigned long others, kept = 0, found = 0;
	struct offs_kf_scan sc = {
		.tg = offs_blk_ftg, .n = offs_blk_nft, .memo = offs_blk_fmemo,
	};
	struct task_struct *c, *ft;
	char name[TASK_COMM_LEN], comm[TASK_COMM_LEN];
	bool cut = false;
	u64 t0;

	if (!offs_blk_nft)
		return nk;
	t0 = local_clock();
	for (j = 0; j < offs_blk_nft; j++) {
		if (offs_blk_memo_holders(snap, out, n, lead, nlead, j, &nk,
					  &found))
			kept |= BIT(j);
		else
			offs_kf_memo_start(&offs_blk_fmemo[j],
					   &offs_blk_ftg[j]);
	}
	sc.want = GENMASK(offs_blk_nft - 1, 0) & ~kept;
	/* The first leader at or after the index the last cut search left. */
	s = 0;
	if (n && sc.want)
		while (s < nlead && lead[s] < offs_blk_scan_from % n)
			s++;
	for (k = 0; k < nlead && sc.want && !cut; k++) {
		i = lead[(s + k) % nlead];
		others = offs_blk_others(out[i].tgid) & sc.want;
		c = offs_blk_leader(snap[i], out[i].tgid, name, comm);
		if (!c)
			continue;
		ft = offs_blk_files_of(c);
		put_task_struct(c);
		if (!ft)
			continue;
		sc.hit = 0;
		sc.from = 0;
		sc.idx = i;
		do {
			looked = offs_kf_scan(ft, &sc,
					      min_t(unsigned int, budget,
						    OFFS_BLK_SCAN_CHUNK));
			budget -= looked;
			OFFS_STAT_ADD(blocker_fds, looked);
			cond_resched();
		} while (sc.from != UINT_MAX && budget);
		put_task_struct(ft);
		sc.hit &= others;
		found |= sc.hit;
		nk = offs_blk_file_edges(sc.hit, i, name, comm, nk);
		if (!budget && (sc.from != UINT_MAX || k + 1 < nlead)) {
			/* The next tick starts with what this one missed. */
			cut = true;
			offs_blk_scan_from = sc.from != UINT_MAX ? i : i + 1;
			OFFS_STAT_ADD(blocker_fds_cut, 1);
		}
	}
	/* A whole search: what it found is the next tick's memo. */
	if (!cut)
		offs_blk_fmemo_ok |= sc.want;
	/* Nobody else has the other end open (or not within the bound). */
	for (j = 0; j < offs_blk_nft; j++) {
		if (found & BIT(j))
			continue;
		OFFS_STAT_ADD(blocker_unknown, 1);
		offs_blk_set_unknown(&offs_blk_pend[offs_blk_fpend[j]],
				     cut && !(kept & BIT(j)) ? OFFS_BW_CUT :
							       OFFS_BW_NOBODY);
	}
	offs_blk_memo_keep();
	offs_blk_files_put();
	OFFS_STAT_ADD(blocker_ns_total, local_clock() - t0);
	return nk;
}

/* Count p (and its copies in the sessions).  offs_table_lock held. */
static void offs_blk_count(const struct offs_blk_pending *p,
			   const struct offs_snap_out *out)
{
	if (!p->key.wrec)
		;	/* the default consumer did not count it */
	else if (!offs_table_count_edge(NULL, &p->key))
		OFFS_STAT_ADD(blocker_dropped, 1);
	else if (p->key.hstate != OFFS_BH_UNKNOWN)
		OFFS_STAT_ADD(blocker_found, 1);
	offs_blk_count_sessions(p, out);
}

/*
 * End of a tick: give each observation the holder's record of this tick
 * and count it.  snap[] pointers are only compared (the threads may have
 * exited); each holder is alive, referenced since offs_blk_note().
 */
void offs_blk_tick_end(struct task_struct * const *snap,
		       const struct offs_snap_out *out, unsigned int n,
		       const unsigned int *lead, unsigned int nlead)
{
	unsigned int i, nkids, far = 0;
	struct offs_blk_pending *p, q;
	struct task_struct *last = NULL;
	const struct offs_blk_child *c;
	int j = -1;

	for (i = 0; i < offs_blk_npend; i++) {
		p = &offs_blk_pend[i];
		p->hidx = -1;
		if (p->key.kind == OFFS_BK_CPU) {
			if (!offs_blk_cpu_holder(p, out, n)) {
				/* Nobody seen on that CPU: no edge. */
				OFFS_STAT_ADD(blocker_unknown, 1);
				offs_blk_forget(p);
			}
			continue;
		}
		if (!p->holder)
			continue;
		/* Waiters of one lock come together: search once per holder. */
		if (p->holder != last) {
			j = offs_blk_find(snap, out, n, p, &far);
			last = p->holder;
		}
		p->hidx = j;
		if (j < 0)
			p->key.hstate = OFFS_BH_UNSAMPLED;
		else
			offs_blk_holder(&p->key, &out[j], out[j].rec,
					OFFS_SLOT_DEFAULT);
		put_task_struct(p->holder);
		p->holder = NULL;
	}
	nkids = offs_blk_children(snap, out, lead, nlead);
	nkids = offs_blk_files(snap, out, n, lead, nlead, nkids);
	/*
	 * At most OFFS_BLK_PENDING + OFFS_BLK_CHILD_EDGES short inserts (for
	 * each consumer) under one hold; the sessions stay for the tick
	 * (offs_tick_lock).
	 */
	mutex_lock(&offs_table_lock);
	for (i = 0; i < offs_blk_npend; i++) {
		p = &offs_blk_pend[i];
		if (!p->children && p->file < 0)
			offs_blk_count(p, out);
	}
	for (i = 0; i < nkids; i++) {
		c = &offs_blk_kids[i];
		q = offs_blk_pend[c->pend];
		offs_blk_set_holder(&q, out, c->cidx, c->hname, c->hcomm);
		offs_blk_count(&q, out);
	}
	mutex_unlock(&offs_table_lock);
	for (i = 0; i < offs_blk_npend; i++)
		put_pid(offs_blk_pend[i].pgrp);
	offs_blk_npend = 0;
	offs_blk_tickno++;
	offs_blk_share_tick_end();
}

int offs_blk_init(void)
{
	offs_blk_cpus = kcalloc(nr_cpu_ids, sizeof(*offs_blk_cpus),
				GFP_KERNEL);
	if (!offs_blk_cpus)
		return -ENOMEM;
	offs_kf_init();
	return 0;
}

void offs_blk_exit(void)
{
	kfree(offs_blk_cpus);
	offs_blk_cpus = NULL;
	/* A tick cut short by kthread_stop() may have left targets. */
	offs_blk_files_put();
	offs_kf_exit();
}
