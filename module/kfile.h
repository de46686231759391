/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfile.h - the processes holding the other end of a pipe, FIFO or local
 * TCP/UDP connection (kfile.c).
 */
#ifndef OFFS_KFILE_H
#define OFFS_KFILE_H

#include <linux/types.h>
#include <linux/fs.h>
#include <linux/sched.h>

struct sock;

/*
 * What a wait on a descriptor waits for: the open files whose f_op and
 * private_data are these (a pipe's pipe_inode_info, the peer's struct
 * socket), opened for need (0: any way).  Holds a reference to the
 * waiter's file (pipes, FIFOs) or to the peer's sock (sockets) until
 * offs_kf_put().
 */
struct offs_kf_target {
	const void *fop;
	const void *key;
	struct file *file;
	struct sock *peer;
	fmode_t need;
	pid_t wtgid;		/* the waiter's process: never a holder */
	u8 kind;		/* OFFS_BK_PIPE ... OFFS_BK_UDP */
};

/* Targets one descriptor scan matches at once (a bit each). */
#define OFFS_KF_TARGETS		BITS_PER_LONG

u8 offs_kf_kind(struct file *file);
int offs_kf_target(struct task_struct *t, unsigned int fd, bool writing,
		   struct offs_kf_target *tg);
void offs_kf_put(struct offs_kf_target *tg);
unsigned int offs_kf_scan(struct task_struct *c,
			  const struct offs_kf_target *tg, unsigned int n,
			  unsigned int *from, unsigned int max,
			  unsigned long *hit);
void offs_kf_init(void);
void offs_kf_exit(void);

#endif /* OFFS_KFILE_H */
