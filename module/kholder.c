// SPDX-License-Identifier: GPL-2.0
/*
 * kholder.c - who holds up a thread that waits in the kernel: the child
 * it waits for in wait4()/waitid(), the writer of the kernel lock it
 * sleeps on.  blocker.c keeps the observations and counts the edges; the
 * run queue's holder (the thread running on the waiter's CPU) needs no
 * lookup and is matched there.
 *
 * UNIX stream sockets.  A thread reading from (or writing to) a connected
 * UNIX stream socket waits for the process at its other end: the peer the
 * socket's credentials name (SO_PEERCRED: the process that connected, or
 * for a client the one that called listen(): with a pre-forking server or
 * socket activation that is the master or init, not the worker; for a
 * socketpair() its creator), its main thread standing for it.  A peer of
 * the waiter's own process names nobody.
 * Decided at a full capture (one descriptor lookup); the peer is looked up
 * at each tick the thread still waits.
 *
 * File locks.  A thread in flock(2) or fcntl(2) F_SETLKW / F_OFD_SETLKW
 * waits for a granted lock that conflicts with its request; the request
 * itself is not reachable from the task (the kernel's blocked-lock lists
 * are under a lock of its own, not exported), so the inode's granted locks
 * are searched, under the inode's flc_lock, for one that conflicts (another
 * open file for flock; another owner and an overlapping range for POSIX
 * and OFD locks, the range read from the waiter's struct flock).  Its
 * holder is the process that took it (fl_pid), as /proc/locks says, if it
 * still holds it: for a POSIX lock its files table is the lock's owner,
 * for a flock or OFD lock (the open file's) it has the file open among its
 * first 1,024 descriptors; a lock whose taker has gone (its pid perhaps
 * reused) names nobody.  Up to four conflicting locks are tried.
 *
 * Pipes, FIFOs and TCP/UDP peers: kfile.c (found at the end of the tick).
 *
 * Kernel locks.  Which lock a sleeping task waits on is not recorded on a
 * production kernel (task->blocked_on needs CONFIG_DEBUG_MUTEXES), except
 * for rt_mutexes: task->pi_blocked_on, under the task's pi_lock.  On
 * PREEMPT_RT every mutex, rw_semaphore and spinlock_t is an rt_mutex, so
 * there any kernel lock wait names its owner.  Elsewhere the candidates
 * are checked in turn, each by finding the waiter on its wait list: the
 * waiter's own mm->mmap_lock (page faults, mmap(), munmap(), mprotect()
 * ... waiting for a writer), then the locks of the files its system call
 * names by descriptor (offs_klock_fds(), blocker.c): the open file's
 * f_pos_lock (read, write, lseek, getdents on a file shared by threads),
 * a pipe's mutex, a UNIX socket's iolock, the inode's i_rwsem (writes,
 * truncation, directory reads).  A lock that is not found names nobody:
 * a holder is never guessed.
 *
 * Called from the sampler kthread with the waiter not pinned (may sleep
 * between the steps); each step takes at most one raw spinlock, with
 * interrupts off for a bounded walk.
 */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/file.h>
#include <linux/fdtable.h>
#include <linux/fs.h>
#include <linux/pipe_fs_i.h>
#include <linux/overflow.h>
#include <linux/fcntl.h>
#include <linux/net.h>
#include <net/sock.h>
#include <net/af_unix.h>
#include <asm/unistd.h>

#include "offsample.h"
#include "compat.h"
#include "blocker.h"
#include "kholder.h"
#include "kfile.h"
#include "wobj.h"
#include "ustack.h"

void offs_kh_child_wait(const struct offs_sample *s, struct offs_fxwait *fx)
{
	int id = 0, what = offs_wait_decode(s, &id);

	/* A pidfd wait is not followed; an invalid id does not wait. */
	if (what != OFFS_WAIT_PID && what != OFFS_WAIT_PGID &&
	    what != OFFS_WAIT_ANY)
		return;
	fx->val = what;
	fx->uaddr = id;
	fx->cand = OFFS_FX_CHILD;
}

/* A connected UNIX stream or seqpacket socket's sock, from a file. */
static struct sock *offs_unix_stream(struct file *file)
{
	struct socket *sock;
	struct sock *sk;

	if (!S_ISSOCK(file_inode(file)->i_mode))
		return NULL;
	sock = offs_sock_from_file(file);
	sk = sock ? sock->sk : NULL;
	if (!sk || sk->sk_family != AF_UNIX ||
	    (sk->sk_type != SOCK_STREAM && sk->sk_type != SOCK_SEQPACKET) ||
	    READ_ONCE(sock->state) != SS_CONNECTED)
		return NULL;
	return sk;
}

void offs_kh_peer_wait_in(struct task_struct *t, const struct offs_sample *s,
			  struct offs_fxwait *fx, bool writing)
{
	struct file *file;
	unsigned int fd;

	fd = (unsigned int)s->args[0];
	file = offs_task_fget(t, fd);
	if (!file)
		return;
	if (offs_unix_stream(file)) {
		fx->cand = OFFS_FX_PEER;
		fx->val = fd;
	} else if (offs_kf_kind(file) != OFFS_BK_NONE) {
		/* Its other end's processes: found at tick end (kfile.c). */
		fx->cand = OFFS_FX_FILE;
		fx->val = fd;
		fx->fcmd = writing;
	}
	fput(file);
}

/*
 * The main thread of the process at the other end of t's UNIX stream
 * socket fd (referenced), or NULL (closed, no longer such a socket, no
 * peer process any more).
 */
struct task_struct *offs_kh_peer(struct task_struct *t, unsigned int fd)
{
	struct task_struct *h = NULL;
	struct file *file;
	struct pid *pid = NULL;
	struct sock *sk;

	file = offs_task_fget(t, fd);
	if (!file)
		return NULL;
	sk = offs_unix_stream(file);
	if (sk) {
		/* sk_peer_pid is replaced under it (connect, listen). */
		spin_lock(&sk->sk_peer_lock);
		pid = get_pid(sk->sk_peer_pid);
		spin_unlock(&sk->sk_peer_lock);
	}
	fput(file);
	if (!pid)
		return NULL;
	/* A task of a struct pid: RCU-protected. */
	rcu_read_lock();
	h = pid_task(pid, PIDTYPE_TGID);
	/* Its own process (a socketpair's creator, say): nobody else named. */
	if (h && same_thread_group(h, t))
		h = NULL;
	if (h)
		get_task_struct(h);
	rcu_read_unlock();
	put_pid(pid);
	return h;
}

void offs_kh_flock_wait_in(const struct offs_sample *s, struct offs_fxwait *fx)
{
	unsigned long op;

	if (s->syscall == __NR_flock) {
		op = s->args[1];
		if ((op & LOCK_NB) || !(op & (LOCK_SH | LOCK_EX)))
			return;
		fx->fcmd = OFFS_FL_FLOCK;
		fx->uaddr = op & LOCK_EX ? F_WRLCK : F_RDLCK;
	} else if (s->syscall == __NR_fcntl &&
		   ((int)s->args[1] == F_SETLKW || (int)s->args[1] == F_OFD_SETLKW)) {
		fx->fcmd = (int)s->args[1] == F_SETLKW ? OFFS_FL_POSIX : OFFS_FL_OFD;
		fx->uaddr = s->args[2];
	} else {
		return;
	}
	fx->val = (u32)s->args[0];
	fx->cand = OFFS_FX_FLOCK;
}

/* Granted locks of an inode looked at per lookup. */
#define OFFS_KH_LOCKS_MAX	256

/*
 * The byte range and type a POSIX or OFD request asks for, from the
 * waiter's struct flock (its address space is entered: may sleep).
 */
static bool offs_kh_flock_req(struct task_struct *t, unsigned long uaddr,
			      struct file *file, loff_t *start, loff_t *end,
			      short *type)
{
	struct flock fl;
	loff_t base;

	if (!offs_uwin_enter_data(t) ||
	    copy_from_user_nofault(&fl, (void __user *)uaddr, sizeof(fl)))
		return false;
	switch (fl.l_whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = READ_ONCE(file->f_pos);
		break;
	case SEEK_END:
		base = i_size_read(file_inode(file));
		break;
	default:
		return false;
	}
	/* As the kernel turns a struct flock into a range, overflow checked. */
	if (check_add_overflow(base, (loff_t)fl.l_start, start) || *start < 0)
		return false;
	if (fl.l_len > 0) {
		if (check_add_overflow(*start, (loff_t)fl.l_len - 1, end))
			return false;
	} else if (fl.l_len < 0) {
		*end = *start - 1;
		if (check_add_overflow(*start, (loff_t)fl.l_len, start))
			return false;
	} else {
		*end = OFFSET_MAX;
	}
	*type = fl.l_type;
	return *start >= 0 && *start <= *end &&
	       (fl.l_type == F_RDLCK || fl.l_type == F_WRLCK);
}

/* Descriptors of a holder looked at for the locked file (flock, OFD). */
#define OFFS_KH_FDS_MAX		1024

/*
 * Whether h's process has file open among its first OFFS_KH_FDS_MAX
 * descriptors: a flock or OFD lock belongs to its open file, which may
 * outlive the process that took it (and its pid be reused).
 */
static bool offs_kh_has_file(struct task_struct *h, struct file *file)
{
	struct files_struct *files;
	unsigned int fd;
	bool found = false;

	/* As offs_task_fget(): the task lock for ->files, then its lock. */
	task_lock(h);
	files = h->files;
	if (files) {
		spin_lock(&files->file_lock);
		for (fd = 0; fd < OFFS_KH_FDS_MAX && !found; fd++)
			found = files_lookup_fd_locked(files, fd) == file;
		spin_unlock(&files->file_lock);
	}
	task_unlock(h);
	return found;
}

/* A conflicting lock, as read under flc_lock. */
struct offs_kh_lock {
	pid_t pid;
	void *owner;		/* POSIX: the owner's files table */
	struct file *file;	/* flock, OFD: only compared */
};

#define OFFS_KH_CANDS		4

/*
 * The process of a conflicting lock, if it still is the one that took it
 * (referenced), else NULL.
 */
static struct task_struct *offs_kh_lock_holder(struct task_struct *t,
					       const struct offs_fxwait *fx,
					       const struct offs_kh_lock *c)
{
	struct task_struct *h;

	/* The pid hash and a pid's tasks: RCU-protected. */
	rcu_read_lock();
	h = pid_task(find_pid_ns(c->pid, &init_pid_ns), PIDTYPE_TGID);
	/* A POSIX lock's owner is its process's files table. */
	if (h && fx->fcmd == OFFS_FL_POSIX && READ_ONCE(h->files) != c->owner)
		h = NULL;
	if (h)
		get_task_struct(h);
	rcu_read_unlock();
	if (h && fx->fcmd != OFFS_FL_POSIX && !offs_kh_has_file(h, c->file)) {
		put_task_struct(h);
		h = NULL;
	}
	return h;
}

struct task_struct *offs_kh_flock(struct task_struct *t,
				  const struct offs_fxwait *fx)
{
	struct offs_kh_lock cand[OFFS_KH_CANDS];
	struct file_lock_context *ctx;
	struct task_struct *h = NULL;
	loff_t start = 0, end = OFFSET_MAX;
	struct file_lock *fl;
	struct file *file;
	struct list_head *head;
	void *owner;
	short type;
	int n = 0, nc = 0, i;

	file = offs_task_fget(t, fx->val);
	if (!file)
		return NULL;
	/* A POSIX lock is its process's (files table), flock's and OFD its file's. */
	owner = fx->fcmd == OFFS_FL_POSIX ? (void *)READ_ONCE(t->files) :
					    (void *)file;
	type = fx->uaddr;
	if (fx->fcmd != OFFS_FL_FLOCK &&
	    !offs_kh_flock_req(t, fx->uaddr, file, &start, &end, &type)) {
		fput(file);
		return ERR_PTR(-EFAULT);
	}
	/* As locks_inode_context(): set once, then stays. */
	ctx = smp_load_acquire(&file_inode(file)->i_flctx);
	if (ctx) {
		head = fx->fcmd == OFFS_FL_FLOCK ? &ctx->flc_flock : &ctx->flc_posix;
		/* The granted locks; spin_lock only (not _irq): no IRQ takes it. */
		spin_lock(&ctx->flc_lock);
		list_for_each_entry(fl, head, OFFS_FL_LIST) {
			if (++n > OFFS_KH_LOCKS_MAX || nc == OFFS_KH_CANDS)
				break;
			/* Only reads and writes (5.10's LOCK_MAND never conflicts). */
			if (offs_fl_type(fl) != F_RDLCK && offs_fl_type(fl) != F_WRLCK)
				continue;
			if (offs_fl_type(fl) != F_WRLCK && type != F_WRLCK)
				continue;	/* two readers */
			if (fx->fcmd == OFFS_FL_FLOCK ?
			    offs_fl_file(fl) == owner : offs_fl_owner(fl) == owner)
				continue;	/* the waiter's own */
			if (fx->fcmd != OFFS_FL_FLOCK &&
			    (fl->fl_end < start || fl->fl_start > end))
				continue;
			if ((pid_t)offs_fl_pid(fl) <= 0)
				continue;
			cand[nc].pid = offs_fl_pid(fl);
			cand[nc].owner = offs_fl_owner(fl);
			cand[nc++].file = offs_fl_file(fl);
		}
		spin_unlock(&ctx->flc_lock);
	}
	/* The first conflicting lock whose process still holds it. */
	for (i = 0; i < nc && !h; i++)
		h = offs_kh_lock_holder(t, fx, &cand[i]);
	fput(file);
	return h;
}

/*
 * The child an OFFS_WAIT_PID wait of t names (referenced), or NULL: no
 * such process in t's pid namespace, or not t's process's child.  For a
 * group wait, *pgrp gets the process group (referenced): the children are
 * matched at the end of the tick.  Returns false when t was reaped.
 */
bool offs_kh_child(struct task_struct *t, const struct offs_fxwait *fx,
		   struct task_struct **child, struct pid **pgrp)
{
	struct pid_namespace *ns;
	struct task_struct *c;
	struct pid *pid;

	*child = NULL;
	*pgrp = NULL;
	/* The pid hash, task links and a task's pids are RCU-protected. */
	rcu_read_lock();
	ns = task_active_pid_ns(t);
	if (!ns) {
		rcu_read_unlock();
		return false;
	}
	switch (fx->val) {
	case OFFS_WAIT_PID:
		pid = find_pid_ns(fx->uaddr, ns);
		c = pid ? pid_task(pid, PIDTYPE_TGID) : NULL;
		if (c && rcu_dereference(c->real_parent)->tgid == t->tgid) {
			get_task_struct(c);
			*child = c;
		}
		break;
	case OFFS_WAIT_PGID:
		pid = fx->uaddr ? find_pid_ns(fx->uaddr, ns) : task_pgrp(t);
		*pgrp = get_pid(pid);
		break;
	}
	rcu_read_unlock();
	return true;
}

/*
 * Whether the leader that the walk saw as was (only compared: it may have
 * exited), with process id tgid (initial namespace), is still that
 * process, a child of process ptgid, and in process group pgrp (NULL:
 * any); name and comm get its names.
 */
bool offs_kh_is_child(const struct task_struct *was, pid_t tgid, pid_t ptgid,
		      struct pid *pgrp, char *name, char *comm)
{
	struct task_struct *c;
	bool in = false;

	/* As in offs_kh_child(). */
	rcu_read_lock();
	c = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (c == was && rcu_dereference(c->real_parent)->tgid == ptgid &&
	    (!pgrp || task_pgrp(c) == pgrp)) {
		offs_blk_copy_names(c, name, comm);
		in = true;
	}
	rcu_read_unlock();
	return in;
}

/*
 * struct rt_mutex_waiter (kernel/locking/rtmutex_common.h, private): the
 * task and the lock follow two tree nodes, struct rb_node (24 bytes) in
 * 5.10, struct rt_waiter_node (rb_node, prio, deadline: 40 bytes) since
 * 6.6 and in Debian's 6.1.  The layout is told apart by the task field,
 * which must be the waiter itself, tried at 48 first: in the newer layout
 * that is a tree node's child pointer (another node, never a task), while
 * 80 is past the end of the 5.10 waiter (its caller's stack frame, where
 * a saved register may hold the task).
 */
static const unsigned int offs_rtw_task_off[] = { 48, 80 };

/*
 * The rt_mutex t sleeps on, from t->pi_blocked_on, and its owner
 * (referenced; NULL if none or not recognised).  Takes t->pi_lock, which
 * keeps the waiter (on t's stack) and so the lock in place: the owner
 * can release the lock meanwhile, but its task_struct lives until an RCU
 * grace period after it exits.
 */
static void *offs_kh_rtmutex(struct task_struct *t, struct task_struct **owner)
{
	struct rt_mutex_waiter *w;
	unsigned long flags, o;
	struct task_struct *wt;
	void *lock = NULL;
	unsigned int i;

	*owner = NULL;
	raw_spin_lock_irqsave(&t->pi_lock, flags);
	w = t->pi_blocked_on;
	for (i = 0; w && i < ARRAY_SIZE(offs_rtw_task_off); i++) {
		if (copy_from_kernel_nofault(&wt, (u8 *)w + offs_rtw_task_off[i],
					     sizeof(wt)) || wt != t)
			continue;
		if (copy_from_kernel_nofault(&lock, (u8 *)w +
					     offs_rtw_task_off[i] + sizeof(wt),
					     sizeof(lock)))
			lock = NULL;
		break;
	}
	/* A lock of the kernel's: in the kernel half of the address space. */
	if ((unsigned long)lock < TASK_SIZE_MAX)
		lock = NULL;
	if (lock) {
		rcu_read_lock();
		if (copy_from_kernel_nofault(&o, offs_rtm_owner_ptr(lock),
					     sizeof(o)))
			o = 0;
		o &= ~1UL;	/* RT_MUTEX_HAS_WAITERS */
		if (o && o != (unsigned long)t)
			*owner = offs_owner_get(o);
		rcu_read_unlock();
	}
	raw_spin_unlock_irqrestore(&t->pi_lock, flags);
	return lock;
}

/*
 * The locks of a file a system call may sleep on, whose owner the kernel
 * records: the open file's f_pos_lock (only for regular files and
 * directories: since 6.12 a pipe keeps other data in its place), a pipe's
 * mutex, a UNIX socket's iolock (one reader or writer at a time), all
 * mutexes, and the inode's i_rwsem.  The file is referenced, which keeps
 * its inode, pipe and socket.
 */
#define OFFS_KH_FMUTEX	3

static struct pipe_inode_info *offs_kh_pipe(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct pipe_inode_info *pipe = file->private_data;

	/* A pipe or an open FIFO: its pipe, kept by this open file. */
	if (!S_ISFIFO(inode->i_mode) || !pipe || pipe != READ_ONCE(inode->i_pipe))
		return NULL;
	return pipe;
}

/* file's mutexes (as above) into m[] and their OFFS_KO_* into ko[]. */
static unsigned int offs_kh_file_mutexes(struct file *file, struct mutex **m,
					 u8 *ko)
{
	struct pipe_inode_info *pipe = offs_kh_pipe(file);
	struct inode *inode = file_inode(file);
	unsigned int n = 0;
	struct socket *sock;

	if ((file->f_mode & FMODE_ATOMIC_POS) || S_ISDIR(inode->i_mode)) {
		m[n] = &file->f_pos_lock;
		ko[n++] = OFFS_KO_F_POS;
	}
	if (pipe) {
		m[n] = &pipe->mutex;
		ko[n++] = OFFS_KO_PIPE;
	}
	sock = S_ISSOCK(inode->i_mode) ? offs_sock_from_file(file) : NULL;
	if (sock && sock->sk && sock->sk->sk_family == AF_UNIX) {
		m[n] = &unix_sk(sock->sk)->iolock;
		ko[n++] = OFFS_KO_UNIX_IO;
	}
	return n;
}

/* PREEMPT_RT: which of file's locks the rt_mutex lock is. */
static u8 offs_kh_file_rtm(struct file *file, void *lock)
{
	struct mutex *m[OFFS_KH_FMUTEX];	/* not taken: compared */
	u8 ko[OFFS_KH_FMUTEX];
	unsigned int i, n = offs_kh_file_mutexes(file, m, ko);

	for (i = 0; i < n; i++)
		if (lock == offs_mutex_rtm(m[i]))
			return ko[i];
	if (lock == offs_rwsem_rtm(&file_inode(file)->i_rwsem))
		return OFFS_KO_I_RWSEM;
	return OFFS_KO_NONE;
}

/*
 * Elsewhere: which of file's locks t is queued on, and its owner
 * (offs_mutex_owner(), offs_rwsem_writer()).  -EBUSY if t is on none of
 * those that could be looked at and another's wait list was busy.
 */
static int offs_kh_file_lock(struct task_struct *t, struct file *file,
			     struct task_struct **owner, u8 *kind, u8 *obj)
{
	struct mutex *m[OFFS_KH_FMUTEX];	/* wait lists only tried */
	u8 ko[OFFS_KH_FMUTEX];
	unsigned int i, n = offs_kh_file_mutexes(file, m, ko);
	bool busy = false;
	int ret;

	for (i = 0; i < n; i++) {
		ret = offs_mutex_owner(m[i], t, owner);
		if (!ret) {
			*kind = OFFS_BK_KMUTEX;
			*obj = ko[i];
			return 0;
		}
		busy |= ret == -EBUSY;
	}
	ret = offs_rwsem_writer(&file_inode(file)->i_rwsem, t, owner);
	if (!ret) {
		*kind = OFFS_BK_RWSEM;
		*obj = OFFS_KO_I_RWSEM;
		return 0;
	}
	return busy ? -EBUSY : ret;
}

/*
 * The locks of the files fx names (t's descriptors of its system call),
 * tried in turn: on PREEMPT_RT (lock non-NULL) only which one the rt_mutex
 * lock is, into *obj; elsewhere whether t waits on one and its owner
 * (-EBUSY: on none that could be looked at, and a wait list was busy).
 */
static int offs_kh_files(struct task_struct *t, const struct offs_fxwait *fx,
			 void *lock, struct task_struct **owner, u8 *kind,
			 unsigned long *obj)
{
	unsigned int i, fd;
	struct file *file;
	bool busy = false;
	int ret = -ENOENT;
	u8 ko;

	for (i = 0; i < 2 && ret; i++) {
		if (!(fx->fcmd & (i ? OFFS_KF_FD1 : OFFS_KF_FD0)))
			continue;
		fd = i ? (unsigned int)fx->uaddr : fx->val;
		file = offs_task_fget(t, fd);
		if (!file)
			continue;
		if (lock) {
			ko = offs_kh_file_rtm(file, lock);
			ret = ko == OFFS_KO_NONE ? -ENOENT : 0;
		} else {
			ret = offs_kh_file_lock(t, file, owner, kind, &ko);
		}
		if (!ret)
			*obj = OFFS_KO_FILE(ko, fd);
		busy |= ret == -EBUSY;
		fput(file);
	}
	return !ret ? 0 : busy ? -EBUSY : -ENOENT;
}

int offs_kh_klock(struct task_struct *t, const struct offs_fxwait *fx,
		  struct task_struct **owner, u8 *kind, unsigned long *obj)
{
	struct task_struct *o;
	struct mm_struct *mm;
	void *lock;
	int ret, mret = -ENOENT;

	*obj = OFFS_KO_NONE;
	lock = offs_kh_rtmutex(t, owner);
	if (lock) {
		*kind = OFFS_BK_RTMUTEX;
		/*
		 * Only compared: t sleeps, its mm cannot change meanwhile (no
		 * task_lock(): on PREEMPT_RT a sleeping lock, which t itself
		 * may hold while it waits).
		 */
		mm = READ_ONCE(t->mm);
		if (mm && lock == offs_rwsem_rtm(&mm->mmap_lock))
			*obj = OFFS_KO_MMAP_LOCK;
		/*
		 * The descriptors' files, under t's task lock, as the full
		 * capture looks them up (offs_kh_peer_wait()): not while t
		 * waits for a spinlock_t (an rtlock), which it may take with
		 * its task lock or files lock held; a thread asleep on a
		 * mutex or rw_semaphore holds no spinlock_t.
		 */
		else if (!(offs_task_state(t) & TASK_RTLOCK_WAIT))
			offs_kh_files(t, fx, lock, &o, kind, obj);
		return 0;
	}
	/* On PREEMPT_RT rw_semaphores are rt_mutexes: seen above. */
	if (OFFS_RWSEM_ON_RTMUTEX)
		return -ENOENT;
	/* mm_struct itself (not its pages): kept by mmgrab(). */
	task_lock(t);
	mm = t->mm;
	if (mm)
		mmgrab(mm);
	task_unlock(t);
	if (mm) {
		mret = offs_rwsem_writer(&mm->mmap_lock, t, owner);
		mmdrop(mm);
		if (!mret) {
			*kind = OFFS_BK_RWSEM;
			*obj = OFFS_KO_MMAP_LOCK;
			return 0;
		}
	}
	ret = offs_kh_files(t, fx, NULL, owner, kind, obj);
	/*
	 * A busy wait list, and no other candidate with t on it: not looked
	 * at, and which lock is not known either.
	 */
	if (ret && (ret == -EBUSY || mret == -EBUSY)) {
		*kind = OFFS_BK_KLOCK;
		*obj = OFFS_KO_NONE;
		return -EBUSY;
	}
	return ret;
}
