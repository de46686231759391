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

/* Descriptors a memo remembers for one target (more: no memo). */
#define OFFS_KF_MEMO_FDS	8

/*
 * What a whole search (every process the walk saw, the waiter's own
 * included, not cut short) found for one target: each descriptor open on
 * a file it waits for, in scan order (a process's descriptors come
 * together).  Files are compared, never followed.  A later tick believes
 * it again only if offs_kf_memo_fd() and offs_kf_memo_whole() say it
 * still holds.
 */
struct offs_kf_memo {
	const void *fop, *key;		/* the target it was made for */
	fmode_t need;
	unsigned int n;			/* descriptors; > OFFS_KF_MEMO_FDS: over */
	struct offs_kf_fd {
		pid_t tgid;		/* the process */
		unsigned int idx;	/* its main thread's snapshot index then */
		unsigned int fd;
		const struct file *f;
	} d[OFFS_KF_MEMO_FDS];
};

/*
 * One descriptor search through one process's table (offs_kf_scan()):
 * the targets tg[0..n) looked for (those in want), where to go on from
 * (UINT_MAX: the table is done), what matched (bits, or-ed into hit), and
 * memo[] (parallel to tg[], or NULL) to record the matches in, with idx.
 */
struct offs_kf_scan {
	const struct offs_kf_target *tg;
	unsigned int n;
	unsigned long want;
	unsigned int from;
	unsigned long hit;
	struct offs_kf_memo *memo;
	unsigned int idx;
};

u8 offs_kf_kind(struct file *file);
int offs_kf_target(struct task_struct *t, unsigned int fd, bool writing,
		   struct offs_kf_target *tg);
void offs_kf_put(struct offs_kf_target *tg);
unsigned int offs_kf_scan(struct task_struct *c, struct offs_kf_scan *s,
			  unsigned int max);
void offs_kf_memo_start(struct offs_kf_memo *m,
			const struct offs_kf_target *tg);
bool offs_kf_memo_for(const struct offs_kf_memo *m,
		      const struct offs_kf_target *tg);
bool offs_kf_memo_over(const struct offs_kf_memo *m);
bool offs_kf_memo_fd(struct task_struct *ft, const struct offs_kf_target *tg,
		     const struct offs_kf_fd *d, long *count);
bool offs_kf_memo_whole(const struct offs_kf_target *tg,
			const struct offs_kf_memo *m, const long *count);
void offs_kf_init(void);
void offs_kf_exit(void);

#endif /* OFFS_KFILE_H */
