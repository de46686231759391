/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kholder.h - who holds up a thread waiting in the kernel (kholder.c).
 */
#ifndef OFFS_KHOLDER_H
#define OFFS_KHOLDER_H

#include <linux/types.h>
#include <linux/sched.h>
#include <asm/unistd.h>

#include "offsample.h"

struct pid;

void offs_kh_child_wait(const struct offs_sample *s, struct offs_fxwait *fx);
bool offs_kh_child(struct task_struct *t, const struct offs_fxwait *fx,
		   struct task_struct **child, struct pid **pgrp);
bool offs_kh_is_child(const struct task_struct *was, pid_t tgid, pid_t ptgid,
		      struct pid *pgrp, char *name, char *comm);

/*
 * The waits below name a holder for a few system calls only: which ones
 * is asked inline, at every capture (a call that returned at once cost
 * about 30 instructions of a cold capture, issue 52).
 */
#define OFFS_KH_PEER_READ	1
#define OFFS_KH_PEER_WRITE	2

/* Does system call nr read (1) or write (2) a descriptor's stream, or 0? */
static inline int offs_kh_peer_call(long nr)
{
	switch (nr) {
	case __NR_read: case __NR_readv: case __NR_recvfrom:
	case __NR_recvmsg: case __NR_recvmmsg:
		return OFFS_KH_PEER_READ;
	case __NR_write: case __NR_writev: case __NR_sendto:
	case __NR_sendmsg: case __NR_sendmmsg:
		return OFFS_KH_PEER_WRITE;
	}
	return 0;
}

void offs_kh_peer_wait_in(struct task_struct *t, const struct offs_sample *s,
			  struct offs_fxwait *fx, bool writing);

/* A UNIX stream's other end, or a pipe's (kfile.c), that s may wait for. */
static inline void offs_kh_peer_wait(struct task_struct *t,
				     const struct offs_sample *s,
				     struct offs_fxwait *fx)
{
	int call;

	if (fx->cand != OFFS_FX_NONE || !s->user)
		return;
	call = offs_kh_peer_call(s->syscall);
	if (call)
		offs_kh_peer_wait_in(t, s, fx, call == OFFS_KH_PEER_WRITE);
}

struct task_struct *offs_kh_peer(struct task_struct *t, unsigned int fd);
void offs_kh_flock_wait_in(const struct offs_sample *s, struct offs_fxwait *fx);

/* A file lock (flock(), fcntl() F_SETLKW / F_OFD_SETLKW) s may wait for. */
static inline void offs_kh_flock_wait(const struct offs_sample *s,
				      struct offs_fxwait *fx)
{
	if (fx->cand == OFFS_FX_NONE && s->user &&
	    (s->syscall == __NR_flock || s->syscall == __NR_fcntl))
		offs_kh_flock_wait_in(s, fx);
}

/*
 * The process holding a lock that conflicts with what t waits for as fx
 * says (its main thread, referenced), NULL if none is found, or an
 * ERR_PTR (-EFAULT: the request could not be read).
 */
struct task_struct *offs_kh_flock(struct task_struct *t,
				  const struct offs_fxwait *fx);
/*
 * The owner of the kernel lock t sleeps on (fx: an OFFS_FX_KLOCK wait):
 * 0 and *owner referenced (or NULL: held by readers, or not known yet),
 * -ENOENT (no lock recognised), -EBUSY (could not be looked at now).
 * *kind (OFFS_BK_*) and *obj (OFFS_KO_*, with the descriptor for a file's
 * lock) say which lock.
 */
int offs_kh_klock(struct task_struct *t, const struct offs_fxwait *fx,
		  struct task_struct **owner, u8 *kind, unsigned long *obj);

#endif /* OFFS_KHOLDER_H */
