/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kholder.h - who holds up a thread waiting in the kernel (kholder.c).
 */
#ifndef OFFS_KHOLDER_H
#define OFFS_KHOLDER_H

#include <linux/types.h>
#include <linux/sched.h>

#include "offsample.h"

struct pid;

void offs_kh_child_wait(const struct offs_sample *s, struct offs_fxwait *fx);
bool offs_kh_child(struct task_struct *t, const struct offs_fxwait *fx,
		   struct task_struct **child, struct pid **pgrp);
bool offs_kh_is_child(const struct task_struct *was, pid_t tgid, pid_t ptgid,
		      struct pid *pgrp, char *name, char *comm);
void offs_kh_peer_wait(struct task_struct *t, const struct offs_sample *s,
		       struct offs_fxwait *fx);
struct task_struct *offs_kh_peer(struct task_struct *t, unsigned int fd);
void offs_kh_flock_wait(const struct offs_sample *s, struct offs_fxwait *fx);
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
