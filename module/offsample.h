/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offsample.h - types shared by the files of the offsample module.
 *
 * Data flows one way:
 *   sampler.c (kthread, one tick at hz)
 *     -> pin.c      pin a thread, read its state, unwind its kernel stack
 *     -> classify.c state + syscall + frame names -> wait reason
 *     -> table.c    hash-consed stacks, (reason, state, comm, stack) -> count
 *   proc_stacks.c, proc_threads.c  print tables and threads (procfs.c
 *                   makes the files), symbols from symcache.c
 */
#ifndef OFFS_OFFSAMPLE_H
#define OFFS_OFFSAMPLE_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/sched.h>
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/uidgid.h>
#include <linux/string.h>
#include <linux/build_bug.h>

#include "compat.h"

#ifndef OFFS_VERSION
#define OFFS_VERSION		"0.0.0-unknown"
#endif
#define OFFS_FORMAT_VERSION	5

/* Reasons, in output order.  New reasons are appended. */
enum offs_reason {
	OFFS_R_IO,
	OFFS_R_LOCK,
	OFFS_R_SCHED,
	OFFS_R_SLEEP,
	OFFS_R_NET,
	OFFS_R_IPC,
	OFFS_R_FAULT,
	OFFS_R_STOPPED,
	OFFS_R_IDLE,
	OFFS_R_OTHER,
	OFFS_R_CPU,		/* running on a CPU (oncpu.c) */
	OFFS_R_NR
};

extern const char * const offs_reason_names[OFFS_R_NR];

/* What pinning a thread found. */
enum offs_pin {
	OFFS_PIN_BLOCKED,	/* off-CPU and not runnable: stack captured */
	OFFS_PIN_RUNQ,		/* runnable, waiting for a CPU: stack captured */
	OFFS_PIN_ONCPU,		/* running on a CPU: no stack */
	OFFS_PIN_CPU,		/* running: stacks captured on its CPU */
	OFFS_PIN_EXITING,	/* dead, zombie, new or waking: skipped */
	OFFS_PIN_RACED,		/* runnable and ran while being unwound */
};

/* Frame-derived facts about a kernel stack, see classify.c. */
struct offs_frames_info {
	u8 decisive;		/* first decisive reason from the leaf, or OFFS_R_NR */
	u8 weak;		/* first weak reason from the leaf, or OFFS_R_NR */
	u8 fault:1;		/* entered the kernel through a page fault */
	u8 idle_loop:1;		/* a kernel thread's idle wait loop */
};

/*
 * Where a user address sits in a wait-object description: [at, at + len),
 * or with pid set, the process or group id written there, as the initial
 * pid namespace numbers it (each reader sees it as its own namespace does).
 */
struct offs_wobj_addr {
	u16 at;
	u16 len;		/* 0: no address */
	pid_t pid;		/* > 0: [at, at + len) is this id */
};

/*
 * A wait that may name who holds it up (blocker.c), kept by the thread
 * cache for unchanged threads.  OFFS_FX_WAIT, OFFS_FX_PI: a futex wait, the
 * futex word's address and expected value.  OFFS_FX_GIL (pystack.c): a
 * CPython thread waiting to take the GIL at uaddr, whose holder and lock
 * word are at the offsets given, and whose thread states hold their
 * thread's id at py_tid.  OFFS_FX_CHILD: wait4()/waitid(), val the
 * OFFS_WAIT_* kind and uaddr the id as the call gave it.  OFFS_FX_KLOCK: a
 * kernel lock (reason "lock" outside futex()), looked up by its owner;
 * fcmd says which of val (the call's first argument) and uaddr are
 * descriptors whose file's locks may be the one (OFFS_KF_*).
 * OFFS_FX_PEER: a read or write on a connected UNIX stream socket, fd val.
 * OFFS_FX_FILE: a read (fcmd 0) or write (1) on a pipe, FIFO, TCP or UDP
 * socket, fd val.
 * OFFS_FX_FLOCK: a file lock wait on fd val, fcmd the OFFS_FL_* call:
 * flock(2) (uaddr: F_RDLCK or F_WRLCK), fcntl(2) F_SETLKW or F_OFD_SETLKW
 * (uaddr: the struct flock's user address).
 */
enum {
	OFFS_FX_NONE, OFFS_FX_WAIT, OFFS_FX_PI, OFFS_FX_GIL, OFFS_FX_CHILD,
	OFFS_FX_KLOCK, OFFS_FX_PEER, OFFS_FX_FLOCK, OFFS_FX_FILE
};

/* An OFFS_FX_KLOCK wait's descriptors: val, uaddr. */
#define OFFS_KF_FD0	1
#define OFFS_KF_FD1	2

/* Which call an OFFS_FX_FLOCK wait is in. */
enum { OFFS_FL_FLOCK, OFFS_FL_POSIX, OFFS_FL_OFD };

/* What a wait4()/waitid() call (an OFFS_FX_CHILD wait) waits for. */
enum { OFFS_WAIT_PID, OFFS_WAIT_PGID, OFFS_WAIT_ANY, OFFS_WAIT_PIDFD };

struct offs_fxwait {
	unsigned long uaddr;
	u32 val;
	u8 cand;		/* OFFS_FX_* */
	u8 fcmd;		/* FLOCK: OFFS_FL_*; FILE: writing; KLOCK: OFFS_KF_* */
	u8 gil_holder;
	u8 gil_locked;
	u16 py_tid;
};

/*
 * Consumers a tick counts for (session.h): the default one (stacks, drain,
 * control: the module's parameters) and up to OFFS_SESSIONS_MAX sessions.
 */
#define OFFS_SESSIONS_MAX	4
#define OFFS_SLOT_DEFAULT	BIT(0)
#define OFFS_SLOT_SESS(i)	BIT((i) + 1)

/* One thread at one instant, as captured by offs_pin_capture(). */
/*
 * One full capture in OFFS_FULL_TIME_EVERY is timed (its parts too); the
 * time counters add its time multiplied by this, an estimate of the whole.
 */
#define OFFS_FULL_TIME_EVERY	8

struct offs_sample {
	unsigned int state;	/* raw task state word */
	char state_ch;		/* R S D T t I P F, see docs/CLASSIFICATION.md */
	bool iowait;
	bool kthread;
	bool truncated;		/* more frames than max_depth */
	bool blocked_raced;	/* looked blocked but ran while unwound */
	bool degraded;		/* part of the capture failed: never cached */
	bool user;		/* has user-mode registers (not a kernel worker) */
	bool oncpu;		/* captured running, on its CPU (oncpu.c) */
	long syscall;		/* syscall number, -1 for exceptions/kthreads */
	unsigned long args[6];	/* syscall arguments */
	unsigned long uip;	/* user registers at kernel entry */
	unsigned long usp;
	unsigned long ubp;
	u64 cgid;		/* cgroup v2 id */
	unsigned long ncsw;	/* nvcsw + nivcsw when pinned */
	unsigned int depth;
	unsigned long *ips_buf;	/* caller-provided, max_depth entries */
	/*
	 * The kernel stack: ips_buf, or (kcache) the stack cache's entry,
	 * not copied (issue 52), valid until the next offs_unwind_commit():
	 * record it before the sampler captures another thread.
	 */
	const unsigned long *ips;
	bool kcache;		/* the sampler's: use unwind.c's stack cache */
	u64 kstack_id;		/* its cache entry's id when from it, else 0 */
	/*
	 * User stack, walked while pinned when uips is given (the sampler
	 * has entered the thread's address space, umm.c): return addresses,
	 * leaf first; where a read failed; more frames than max_user_depth.
	 */
	unsigned long *uips;	/* caller-provided, OFFS_MAX_DEPTH_LIMIT */
	struct mm_struct *umm;	/* the address space uips is walked in */
	unsigned int udepth;
	unsigned long ufault;
	bool utruncated;
	bool upending;		/* a file's unwind table was not ready */
	bool ustale;		/* walked against mappings that changed */
	/*
	 * CPython frames (pystack.c), copied while pinned when pyf is given
	 * and the window holds an interpreter: innermost first, raw.
	 */
	struct offs_py_frame *pyf;	/* caller-provided, OFFS_MAX_DEPTH_LIMIT */
	unsigned int pydepth;
	bool pytruncated;
	bool pylost;		/* Python frames may be missing: see pystack.c */
	u64 pyts;		/* its PyThreadState, 0 if none was found */
	/*
	 * Time pinned in the kernel unwind, the user walk (pin.c, added
	 * up), read only when timed (one full capture in OFFS_FULL_TIME_EVERY).
	 */
	bool timed;
	u64 ns_kstack;
	u64 ns_uwalk;
	pid_t tgid;
	pid_t tid;
	char comm[TASK_COMM_LEN];	/* process (thread group leader) name */
	char tname[TASK_COMM_LEN];	/* thread name */
	/* Filled by the sampler for the table; references consumed by it. */
	struct offs_ustack *ustack;
	bool ustack_memo;	/* ustack is the memo's: no reference of ours */
	const char *wobj_str;
	struct offs_wobj_addr wobj_addr;
	struct offs_fxwait fx;	/* blocker candidate (blocker.c) */
	/* Which consumers count it (OFFS_SLOT_*), set by the walk. */
	unsigned int smask;
	struct offs_rec *rec;	/* where offs_table_record() counted it */
	struct offs_rec *srec[OFFS_SESSIONS_MAX];	/* ... for each session */
};

/* Fields optionally added to the aggregation key (parameter "key"). */
#define OFFS_KEY_PID	BIT(0)
#define OFFS_KEY_TID	BIT(1)
#define OFFS_KEY_TNAME	BIT(2)
#define OFFS_KEY_WOBJ	BIT(3)

/* A hash-consed kernel stack, shared by every record that uses it. */
struct offs_stack {
	struct hlist_node node;
	u32 hash;
	u16 depth;
	u16 truncated:1;
	u16 pc_leaf:1;		/* ips[0] is an interrupted pc (oncpu.c) */
	struct offs_frames_info info;
	unsigned int refs;		/* under offs_table_lock */
	unsigned long ips[];
};

/*
 * One aggregated record: (reason, state, comm, kernel stack, user stack,
 * system call, cgroup [, pid, tid, tname, wait object]).
 */
struct offs_rec {
	struct hlist_node node;		/* generation hash chain */
	struct list_head list;		/* generation insertion order */
	u32 hash;
	unsigned int id;		/* 1, 2, ...: its line in the output */
	u8 reason;
	char state_ch;
	pid_t tgid;			/* 0 unless OFFS_KEY_PID/TID */
	pid_t tid;			/* 0 unless OFFS_KEY_TID */
	char comm[TASK_COMM_LEN];
	char tname[TASK_COMM_LEN];	/* "" unless OFFS_KEY_TID/TNAME */
	struct offs_stack *stack;	/* reference held */
	struct offs_ustack *ustack;	/* reference held, or NULL */
	struct offs_wobj *wobj;		/* reference held, or NULL */
	long syscall;
	u64 cgid;
	u64 count;
	/*
	 * Samples of the tick in progress counted without offs_table_lock
	 * (offs_table_again_fast()); the sampler alone writes it, and adds it
	 * to count under the lock at the end of the tick (offs_table_fold()).
	 */
	unsigned int pending;
	/*
	 * GAPP criticality: the sum over this record's samples taken while
	 * few of their process's threads were active, of 1 / (active
	 * threads), in millionths (sampler.c, offs_critical_tick_end()).
	 */
	u64 crit_micro;
};

/*
 * A generation: everything counted between two drains or resets.  The
 * sampler adds to the current one; a drain swaps in a fresh one and hands
 * the old one, now immutable, to the reader.
 */
struct offs_gen {
	struct kref ref;
	bool retired;			/* swapped out (offs_table_swap()) */
	/*
	 * A session's window (session.c): its own rate and key, printed in
	 * its header; the default generation prints the parameters'.
	 */
	bool session;
	unsigned int hz;
	unsigned int key_fields;
	unsigned int group_refs;		/* held by group= readers (table lock) */
	bool root_held;			/* counted in offs_retired_root (table.c) */
	u64 seq;
	u64 start_real_ns;		/* wall clock at creation */
	u64 end_real_ns;		/* wall clock when swapped out, or 0 */
	u64 start_mono_ns;
	u64 end_mono_ns;
	u64 ticks;
	u64 samples;
	u64 dropped;
	u64 dropped_reason[OFFS_R_NR];
	unsigned int nrecs;
	unsigned int nbuckets;		/* power of two */
	struct hlist_head *buckets;
	struct list_head recs;
	/* Waiter -> holder edges (blocker.c), counted like records. */
	unsigned int nedges;
	unsigned int nebuckets;		/* power of two */
	struct hlist_head *ebuckets;
	struct list_head edges;
};

/* Bytes kmalloc() really takes for n (accounting, RAM limits). */
static inline size_t offs_ksize(size_t n)
{
	return offs_kmalloc_size_roundup(n);
}

struct offs_ustack;
struct offs_wobj;

/*
 * The id of t's cgroup (v2).  The caller holds rcu_read_lock(): a task's
 * css_set is RCU-protected.  Inline: the sampler's walk calls it for
 * every thread (threadcache.c).
 */
static inline u64 offs_task_cgid_rcu(struct task_struct *t)
{
	return cgroup_id(task_dfl_cgroup(t));
}

/* Context switches of t so far (bumped at every switch-out). */
static inline unsigned long offs_ncsw(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/*
 * Has t been on a CPU since its switch count was ncsw?  The count moves
 * when a task switches out, before finish_task() releases on_cpu = 0; so
 * on_cpu is read with acquire first and the count after it: a task that
 * is still running over what we read shows on_cpu, one that has left the
 * CPU since shows a new count.  Inline: the sampler's walk asks it for
 * every thread (threadcache.c).
 */
static inline bool offs_task_ran(struct task_struct *t, unsigned long ncsw)
{
	if (smp_load_acquire(&t->on_cpu))	/* pairs with finish_task() */
		return true;
	return offs_ncsw(t) != ncsw;
}

/*
 * The comparisons a capture makes to find its stack and record (table.c,
 * ustack.c), inline: the kernel's memcmp() is a call and a loop of about
 * 9 instructions a word, a sixth of a cold capture's recording (make
 * bench-insnprof, issue 52).  Equality only.
 */
static inline bool offs_words_eq(const unsigned long *a, const unsigned long *b,
				 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * The same for a length the compiler knows (a record's key): no branch a
 * word, unrolled (up to 16 words), about half the instructions of
 * offs_words_eq().
 */
static __always_inline bool offs_words_same(const unsigned long *a,
					    const unsigned long *b,
					    unsigned int n)
{
	unsigned long d = 0;
	unsigned int i;

#pragma GCC unroll 16
	for (i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return !d;
}

/*
 * Two names of TASK_COMM_LEN bytes, any alignment: two words each, held
 * in scalars (copies into arrays went through the stack).
 */
static __always_inline bool offs_comm_eq(const char *a, const char *b)
{
	u64 a0, a1, b0, b1;

	BUILD_BUG_ON(TASK_COMM_LEN != 2 * sizeof(u64));
	memcpy(&a0, a, sizeof(a0));
	memcpy(&b0, b, sizeof(b0));
	if (a0 != b0)
		return false;
	memcpy(&a1, a + sizeof(a0), sizeof(a1));
	memcpy(&b1, b + sizeof(b0), sizeof(b1));
	return a1 == b1;
}

#endif /* OFFS_OFFSAMPLE_H */
