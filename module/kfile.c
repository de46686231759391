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
 * OFFS_BLK_SCAN_FDS descriptors a tick, blocker.c).  A socket whose peer is
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
 * f_mode, and a socket's sk once it is known to be the peer's socket),
 * never referenced.
 */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/file.h>
#include <linux/fdtable.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/module.h>
#include <linux/net.h>
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
 * Which of the n targets tg[] process c (its main thread, referenced) has
 * open among its open descriptors from *from on, or-ed into *hit as bits:
 * looks at no more than max of them, sets *from to the next one to look
 * at (UINT_MAX: none left) and returns how many it looked at.  Holds c's
 * task lock (spinlock_t: sleeps on PREEMPT_RT; the caller may sleep) and
 * the RCU read lock for those max, so the caller scans in chunks.
 */
unsigned int offs_kf_scan(struct task_struct *c,
			  const struct offs_kf_target *tg, unsigned int n,
			  unsigned int *from, unsigned int max,
			  unsigned long *hit)
{
	struct files_struct *files;
	struct fdtable *fdt;
	unsigned int fd = *from, j, looked = 0;
	struct file *f;

	*from = UINT_MAX;
	/* exit_files() detaches and frees c->files under the task lock. */
	task_lock(c);
	files = c->files;
	if (!files)
		goto out;
	/* The descriptor table and the files in it are freed after RCU. */
	rcu_read_lock();
	fdt = files_fdtable(files);
	for (fd = find_next_bit(fdt->open_fds, fdt->max_fds, fd);
	     fd < fdt->max_fds;
	     fd = find_next_bit(fdt->open_fds, fdt->max_fds, fd + 1)) {
		if (looked == max) {
			*from = fd;
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
		for (j = 0; j < n; j++)
			if (offs_kf_match(f, &tg[j]) &&
			    rcu_dereference(fdt->fd[fd]) == f)
				*hit |= BIT(j);
	}
	rcu_read_unlock();
out:
	task_unlock(c);
	return looked;
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
