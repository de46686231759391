// SPDX-License-Identifier: GPL-2.0
/*
 * kfile.c - who holds the other end of a pipe, a FIFO or a TCP or UDP
 * connection within the host.
 *
 * A thread in read() or write() (recv*, send*) on a pipe or FIFO waits for
 * the processes that have it open the other way: a reader for the
 * writers, a writer for the readers.  On a connected TCP or UDP socket
 * whose peer is a socket of this host (loopback or a local address), it
 * waits for the processes that have the peer socket open.  The kernel
 * records neither (a pipe counts its readers and writers, a socket has no
 * owner; only UNIX sockets keep their peer's pid, kholder.c), so the end
 * of a tick looks through the descriptor tables of the processes the walk
 * visited for the files the tick's waits name (offs_kf_scan(), at most
 * OFFS_BLK_SCAN_FDS descriptors a tick, blocker.c), unless what an earlier
 * search found is checked to be all there still is (a memo, below).  A
 * socket whose peer is
 * not on this host (the lookups find no established or connected socket
 * for its four-tuple) names nobody: the chain ends there, at the network.
 *
 * The peer socket is found as the stack would deliver our next segment or
 * datagram to it: __inet_lookup_established() / __inet6_lookup_established()
 * in the waiter's network namespace's TCP hash, udp4_lib_lookup() /
 * udp6_lib_lookup() for UDP (exported only when the netfilter socket or
 * TPROXY matches are configured, as on Debian: looked up with symbol_get(),
 * so a kernel without them loads the module and names no UDP peer).
 *
 * Lifetimes: the waiter's file is referenced until the end of the tick,
 * which keeps its pipe (the key compared) alive (if the waiter closes it
 * meanwhile, the other end sees the close when the tick ends, a few ms
 * late); the peer's sock is
 * referenced, so its address cannot name another socket meanwhile.  A
 * scanned descriptor's file is only read under RCU (f_op, private_data,
 * f_mode, f_count, and a socket's sk once it is known to be the peer's
 * socket), never referenced.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/file.h>
#include <linux/fdtable.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/pipe_fs_i.h>
#include <linux/rcupdate.h>
#include <net/sock.h>
#include <net/inet_sock.h>
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>
#include <net/ipv6.h>
#include <net/tcp_states.h>
#include <net/udp.h>

#include "offsample.h"
#include "compat.h"
#include "blocker.h"
#include "kfile.h"
#include "wobj.h"

/* NULL where the kernel does not export them (see above). */
static typeof(udp4_lib_lookup) *offs_kf_udp4;
static typeof(udp6_lib_lookup) *offs_kf_udp6;

/* Which kind of wait a read or write on file is: OFFS_BK_NONE if none. */
u8 offs_kf_kind(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct socket *sock;
	struct sock *sk;

	if (S_ISFIFO(inode->i_mode))
		return inode->i_sb->s_magic == PIPEFS_MAGIC ? OFFS_BK_PIPE :
							       OFFS_BK_FIFO;
	if (!S_ISSOCK(inode->i_mode))
		return OFFS_BK_NONE;
	sock = offs_sock_from_file(file);
	sk = sock ? sock->sk : NULL;
	if (!sk || (sk->sk_family != AF_INET && sk->sk_family != AF_INET6))
		return OFFS_BK_NONE;
	if (sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP)
		return OFFS_BK_TCP;
	if (sk->sk_type == SOCK_DGRAM && sk->sk_protocol == IPPROTO_UDP)
		return OFFS_BK_UDP;
	return OFFS_BK_NONE;
}

#define OFFS_KF_TCP_STATES	(TCPF_ESTABLISHED | TCPF_CLOSE_WAIT | \
				 TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2)

/* Whether sk's addresses are IPv6 ones (not an IPv4-mapped connection). */
static bool offs_kf_v6(const struct sock *sk)
{
	return IS_ENABLED(CONFIG_IPV6) && sk->sk_family == AF_INET6 &&
	       !ipv6_addr_v4mapped(&sk->sk_v6_daddr);
}

/*
 * The socket of this host that receives what connected sk sends
 * (referenced), or NULL: not connected, or the peer is elsewhere.
 */
static struct sock *offs_kf_peer(struct sock *sk, u8 kind)
{
	const struct inet_sock *in = inet_sk(sk);
	struct net *net = sock_net(sk);
	struct inet_hashinfo *h = net->ipv4.tcp_death_row.hashinfo;
	/* A peer bound to a device (VRF) matches the waiter's device. */
	int dif = READ_ONCE(sk->sk_bound_dev_if);
	struct sock *p = NULL;

	/*
	 * Connected: a TCP connection either side of a half-close still has
	 * its peer; a connected UDP socket is TCP_ESTABLISHED
	 * (ip4_datagram_connect()).
	 */
	if (!((1 << READ_ONCE(sk->sk_state)) &
	      (kind == OFFS_BK_TCP ? OFFS_KF_TCP_STATES : TCPF_ESTABLISHED)))
		return NULL;
	/* The hash chains are RCU-protected; a sock found is referenced. */
	rcu_read_lock();
	if (kind == OFFS_BK_TCP && offs_kf_v6(sk))
		p = __inet6_lookup_established(net, h, &sk->sk_v6_rcv_saddr,
					       in->inet_sport,
					       &sk->sk_v6_daddr,
					       ntohs(in->inet_dport), dif, 0);
	else if (kind == OFFS_BK_TCP)
		p = __inet_lookup_established(net, h, in->inet_saddr,
					      in->inet_sport, in->inet_daddr,
					      ntohs(in->inet_dport), dif, 0);
	else if (offs_kf_v6(sk) && offs_kf_udp6)
		p = (*offs_kf_udp6)(net, &sk->sk_v6_rcv_saddr, in->inet_sport,
				 &sk->sk_v6_daddr, in->inet_dport, dif);
	else if (!offs_kf_v6(sk) && offs_kf_udp4)
		p = (*offs_kf_udp4)(net, in->inet_saddr, in->inet_sport,
				 in->inet_daddr, in->inet_dport, dif);
	rcu_read_unlock();
	/* A TCP time-wait or request mini-socket has no file. */
	if (p && (p == sk || !sk_fullsock(p))) {
		sock_gen_put(p);
		p = NULL;
	}
	return p;
}

/*
 * What t waits for in a read (writing: write) on its descriptor fd: 0 and
 * *tg filled (references held: offs_kf_put()); -ENOTCONN: a TCP or UDP
 * socket (tg->kind) with no peer socket on this host (unconnected, or the
 * peer is elsewhere); -EBADF, -ENOENT: fd is closed, or no longer a pipe,
 * FIFO or such socket.
 */
int offs_kf_target(struct task_struct *t, unsigned int fd, bool writing,
		   struct offs_kf_target *tg)
{
	struct socket *sock;
	struct file *file;
	struct sock *peer;

	memset(tg, 0, sizeof(*tg));
	file = offs_task_fget(t, fd);
	if (!file)
		return -EBADF;
	tg->kind = offs_kf_kind(file);
	tg->fop = file->f_op;
	tg->wtgid = t->tgid;
	switch (tg->kind) {
	case OFFS_BK_PIPE:
	case OFFS_BK_FIFO:
		/* The pipe: its readers wait for writers and vice versa. */
		tg->key = READ_ONCE(file->private_data);
		tg->need = writing ? FMODE_READ : FMODE_WRITE;
		tg->file = file;
		break;
	case OFFS_BK_TCP:
	case OFFS_BK_UDP:
		sock = offs_sock_from_file(file);
		peer = sock && sock->sk ? offs_kf_peer(sock->sk, tg->kind) :
					  NULL;
		if (peer) {
			/* sock_orphan() clears sk_socket under this lock. */
			read_lock_bh(&peer->sk_callback_lock);
			tg->key = peer->sk_socket;
			read_unlock_bh(&peer->sk_callback_lock);
			tg->peer = peer;
		}
		fput(file);
		break;
	default:
		fput(file);
		break;
	}
	if (!tg->key) {
		offs_kf_put(tg);
		return tg->kind == OFFS_BK_TCP || tg->kind == OFFS_BK_UDP ?
		       -ENOTCONN : -ENOENT;
	}
	return 0;
}

/* Drops what offs_kf_target() referenced. */
void offs_kf_put(struct offs_kf_target *tg)
{
	if (tg->file)
		fput(tg->file);
	if (tg->peer)
		sock_gen_put(tg->peer);
	tg->file = NULL;
	tg->peer = NULL;
}

/* Whether open file f is what tg waits for.  RCU read side. */
static bool offs_kf_match(const struct file *f, const struct offs_kf_target *tg)
{
	if (f->f_op != tg->fop || READ_ONCE(f->private_data) != tg->key)
		return false;
	if (tg->need && !(READ_ONCE(f->f_mode) & tg->need))
		return false;
	/* f is the peer's socket file: is its sock still the peer? */
	return !tg->peer ||
	       READ_ONCE(((const struct socket *)tg->key)->sk) == tg->peer;
}

/*
 * Descriptor fd of process tgid is file f: one more in memo m.  fd
 * UINT_MAX: one the memo cannot vouch for (it is over, as with more than
 * OFFS_KF_MEMO_FDS descriptors).
 */
static void offs_kf_memo_add(struct offs_kf_memo *m, pid_t tgid,
			     unsigned int idx, unsigned int fd,
			     const struct file *f)
{
	if (fd == UINT_MAX)
		m->n = OFFS_KF_MEMO_FDS + 1;
	if (m->n < OFFS_KF_MEMO_FDS)
		m->d[m->n] = (struct offs_kf_fd) {
			.tgid = tgid, .idx = idx, .fd = fd, .f = f,
		};
	if (m->n <= OFFS_KF_MEMO_FDS)
		m->n++;
}

/*
 * Which of the targets s->tg[] in s->want process c (its main thread,
 * referenced) has open among its open descriptors from s->from on, or-ed
 * into s->hit as bits (and recorded in s->memo[]): looks at no more than
 * max of them, sets s->from to the next one to look at (UINT_MAX: none
 * left) and returns how many it looked at.  Holds c's task lock
 * (spinlock_t: sleeps on PREEMPT_RT; the caller may sleep) and the RCU
 * read lock for those max, so the caller scans in chunks.
 */
unsigned int offs_kf_scan(struct task_struct *c, struct offs_kf_scan *s,
			  unsigned int max)
{
	const struct offs_kf_target *tg = s->tg;
	struct files_struct *files;
	struct fdtable *fdt;
	unsigned int fd = s->from, j, looked = 0;
	bool shared;
	struct file *f;

	s->from = UINT_MAX;
	/* exit_files() detaches and frees c->files under the task lock. */
	task_lock(c);
	files = c->files;
	if (!files)
		goto out;
	/* The descriptor table and the files in it are freed after RCU. */
	rcu_read_lock();
	fdt = files_fdtable(files);
	/*
	 * A table shared with another process (CLONE_FILES without
	 * CLONE_THREAD): one descriptor, one reference, for two processes,
	 * so counting references could not tell when one of them is missed.
	 */
	shared = s->memo && atomic_read(&files->count) > get_nr_threads(c);
	for (fd = find_next_bit(fdt->open_fds, fdt->max_fds, fd);
	     fd < fdt->max_fds;
	     fd = find_next_bit(fdt->open_fds, fdt->max_fds, fd + 1)) {
		if (looked == max) {
			s->from = fd;
			break;
		}
		looked++;
		f = rcu_dereference(fdt->fd[fd]);
		if (!f)
			continue;
		/*
		 * Still in the slot after the match: a file freed and
		 * reused meanwhile (typesafe by RCU since 6.7) is not c's.
		 */
		for (j = 0; j < s->n; j++) {
			if (!(s->want & BIT(j)) || !offs_kf_match(f, &tg[j]) ||
			    rcu_dereference(fdt->fd[fd]) != f)
				continue;
			s->hit |= BIT(j);
			if (s->memo)
				offs_kf_memo_add(&s->memo[j], c->tgid, s->idx,
						 shared ? UINT_MAX : fd, f);
		}
	}
	rcu_read_unlock();
out:
	task_unlock(c);
	return looked;
}

/*
 * A memo.  The holders of a pipe or a socket rarely change from tick to
 * tick, but finding them means reading the descriptor tables of every
 * process (20,000 instructions a tick with 70 processes, make bench
 * BENCH_MODE=icount, issue 52).  What one whole search found is checked
 * at the next tick instead, in three steps that together leave no one
 * out: each remembered descriptor is still open on a file the wait waits
 * for (offs_kf_memo_fd()); each of those files has no reference but the
 * remembered descriptors (and the waiter's own, offs_kf_target()); and no
 * other file has the pipe open the way asked (a pipe counts its readers'
 * and writers' files; a socket has one).  A process that opened the other
 * end, or was given it (fork, dup, SCM_RIGHTS), holds a reference of its
 * own, so the counts differ and the tick searches.  A reference that is
 * not a descriptor (a system call in progress in a process of several
 * threads, a descriptor in flight) makes it search too.  Each fact is read
 * as it is now, so a pipe or file freed and its memory reused is judged
 * as what it is now.
 */

/* m is empty, for target tg. */
void offs_kf_memo_start(struct offs_kf_memo *m,
			const struct offs_kf_target *tg)
{
	m->fop = tg->fop;
	m->key = tg->key;
	m->need = tg->need;
	m->n = 0;
}

/* Was m made for a wait on what tg waits for? */
bool offs_kf_memo_for(const struct offs_kf_memo *m,
		      const struct offs_kf_target *tg)
{
	return m->fop == tg->fop && m->key == tg->key && m->need == tg->need;
}

/* Has m more descriptors than it can vouch for (it is never believed)? */
bool offs_kf_memo_over(const struct offs_kf_memo *m)
{
	return m->n > OFFS_KF_MEMO_FDS;
}

/*
 * Is descriptor d->fd of ft (a thread of d's process with its table,
 * referenced) still d->f, open on what tg waits for?  Then its reference
 * count in *count.  Holds ft's task lock (see offs_kf_scan()).
 */
bool offs_kf_memo_fd(struct task_struct *ft, const struct offs_kf_target *tg,
		     const struct offs_kf_fd *d, long *count)
{
	struct files_struct *files;
	struct fdtable *fdt;
	struct file *f;
	bool ok = false;

	task_lock(ft);
	files = ft->files;
	if (files) {
		/* As in offs_kf_scan(): the table and its files, after RCU. */
		rcu_read_lock();
		fdt = files_fdtable(files);
		f = d->fd < fdt->max_fds ? rcu_dereference(fdt->fd[d->fd]) :
					   NULL;
		if (f && f == d->f && offs_kf_match(f, tg)) {
			*count = file_count(f);
			ok = rcu_dereference(fdt->fd[d->fd]) == f;
		}
		rcu_read_unlock();
	}
	task_unlock(ft);
	return ok;
}

/*
 * After offs_kf_memo_fd() passed for every descriptor of m (count[k]: the
 * count of m->d[k]'s file): are they all there is?
 */
bool offs_kf_memo_whole(const struct offs_kf_target *tg,
			const struct offs_kf_memo *m, const long *count)
{
	const struct pipe_inode_info *pipe;
	unsigned int k, l, files = 0;
	long refs;

	for (k = 0; k < m->n; k++) {
		for (l = 0; l < k && m->d[l].f != m->d[k].f; l++)
			;
		if (l < k)
			continue;	/* counted with its first descriptor */
		files++;
		refs = m->d[k].f == tg->file;
		for (l = k; l < m->n; l++) {
			if (m->d[l].f != m->d[k].f)
				continue;
			/* Read process by process: all must agree. */
			if (count[l] != count[k])
				return false;
			refs++;
		}
		if (count[k] != refs)
			return false;
	}
	if (tg->kind != OFFS_BK_PIPE && tg->kind != OFFS_BK_FIFO)
		return files == 1;
	/* The waiter's file keeps the pipe (tg->key) alive. */
	pipe = tg->key;
	return files == (tg->need & FMODE_WRITE ? READ_ONCE(pipe->writers) :
						  READ_ONCE(pipe->readers));
}

void offs_kf_init(void)
{
	offs_kf_udp4 = symbol_get(udp4_lib_lookup);
	offs_kf_udp6 = IS_ENABLED(CONFIG_IPV6) ? symbol_get(udp6_lib_lookup) :
						  NULL;
}

void offs_kf_exit(void)
{
	if (offs_kf_udp4)
		symbol_put(udp4_lib_lookup);
	if (offs_kf_udp6)
		symbol_put(udp6_lib_lookup);
}
