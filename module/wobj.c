// SPDX-License-Identifier: GPL-2.0
/*
 * wobj.c - what a thread blocked in a system call is waiting on.
 *
 * "futex(0x7f3a1c0008c0)", "pread64(/var/lib/db/data.bin)",
 * "recvfrom(tcp 10.0.0.1:5432->10.0.0.2:40112)", "read(pipe:[4711])",
 * "epoll_wait(anon_inode:[eventpoll])", "wait4(pid 812)".
 *
 * Built by the sampler kthread for each full capture when the key includes
 * wobj, and interned (refcounted strings under offs_table_lock) so records
 * can be keyed on them.  The descriptor is looked up in one slot of the
 * table under task_lock() and the files lock, then described from a file
 * reference with no lock held (sleeping locks on PREEMPT_RT, which is
 * fine in a kthread).
 */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <uapi/linux/wait.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/net.h>
#include <linux/jhash.h>
#include <linux/string.h>
#include <linux/limits.h>
#include <net/sock.h>
#include <asm/unistd.h>

#include "offsample.h"
#include "stats.h"
#include "table.h"
#include "wobj.h"
#include "upath.h"

static const char * const offs_syscall_names[] = {
#include "syscalls.h"
};

/* Name of an x86-64 system call, or NULL. */
const char *offs_syscall_name(long nr)
{
	if (nr < 0 || nr >= (long)ARRAY_SIZE(offs_syscall_names))
		return NULL;
	return offs_syscall_names[nr];
}

/* Which argument of a system call is the file descriptor waited on. */
static int offs_fd_arg(long nr)
{
	switch (nr) {
	case __NR_read: case __NR_write: case __NR_pread64:
	case __NR_pwrite64: case __NR_readv: case __NR_writev:
	case __NR_preadv: case __NR_pwritev: case __NR_preadv2:
	case __NR_pwritev2: case __NR_recvfrom: case __NR_recvmsg:
	case __NR_recvmmsg: case __NR_sendto: case __NR_sendmsg:
	case __NR_sendmmsg: case __NR_accept: case __NR_accept4:
	case __NR_connect: case __NR_fsync: case __NR_fdatasync:
	case __NR_sync_file_range: case __NR_ioctl: case __NR_flock:
	case __NR_fcntl: case __NR_epoll_wait: case __NR_epoll_pwait:
#ifdef __NR_epoll_pwait2
	case __NR_epoll_pwait2:
#endif
	case __NR_io_uring_enter: case __NR_splice: case __NR_getdents64:
	case __NR_fallocate: case __NR_ftruncate:
		return 0;
	case __NR_sendfile:
		return 1;	/* in_fd: what is being read */
	default:
		return -1;
	}
}

static bool offs_is_futex(long nr)
{
#ifdef __NR_futex_waitv
	if (nr == __NR_futex_waitv)
		return true;
#endif
	return nr == __NR_futex;
}

static void offs_describe_sock(struct file *file, char *buf, size_t len)
{
	struct socket *sock = offs_sock_from_file(file);
	struct sock *sk = sock ? sock->sk : NULL;
	const char *proto;

	if (!sk) {
		snprintf(buf, len, "socket");
		return;
	}
	switch (sk->sk_protocol) {
	case IPPROTO_TCP:
		proto = "tcp";
		break;
	case IPPROTO_UDP:
		proto = "udp";
		break;
	default:
		proto = sk->sk_type == SOCK_STREAM ? "stream" : "dgram";
		break;
	}
	switch (sk->sk_family) {
	case AF_INET:
		if (sk->sk_state == TCP_LISTEN)
			snprintf(buf, len, "%s %pI4:%u listen", proto,
				 &sk->sk_rcv_saddr, sk->sk_num);
		else if (!sk->sk_daddr && !sk->sk_dport)
			snprintf(buf, len, "%s %pI4:%u", proto,
				 &sk->sk_rcv_saddr, sk->sk_num);
		else
			snprintf(buf, len, "%s %pI4:%u->%pI4:%u", proto,
				 &sk->sk_rcv_saddr, sk->sk_num, &sk->sk_daddr,
				 ntohs(sk->sk_dport));
		break;
#if IS_ENABLED(CONFIG_IPV6)
	case AF_INET6:
		if (sk->sk_state == TCP_LISTEN)
			snprintf(buf, len, "%s6 [%pI6c]:%u listen", proto,
				 &sk->sk_v6_rcv_saddr, sk->sk_num);
		else
			snprintf(buf, len, "%s6 [%pI6c]:%u->[%pI6c]:%u",
				 proto, &sk->sk_v6_rcv_saddr, sk->sk_num,
				 &sk->sk_v6_daddr, ntohs(sk->sk_dport));
		break;
#endif
	case AF_UNIX:
		snprintf(buf, len, "unix %s", proto);
		break;
	case AF_NETLINK:
		snprintf(buf, len, "netlink");
		break;
	default:
		snprintf(buf, len, "socket family %u", sk->sk_family);
		break;
	}
}

/*
 * The file behind descriptor fd of t, with a reference, or NULL.  One slot
 * of the table is read, under t's task lock (t->files) and its files lock
 * (the slot), held for that read only: O(1) however large the table.
 * (iterate_fd() scans from fd to the next open descriptor: up to the whole
 * table, a million slots, under the files lock, when fd was closed.)
 */
struct file *offs_task_fget(struct task_struct *t, unsigned int fd)
{
	struct files_struct *files;
	struct file *file = NULL;

	task_lock(t);
	files = t->files;
	if (files) {
		spin_lock(&files->file_lock);
		file = files_lookup_fd_locked(files, fd);
		if (file)
			get_file(file);
		spin_unlock(&files->file_lock);
	}
	task_unlock(t);
	return file;
}

/* Describe t's descriptor fd into buf; false if it is not open. */
static bool offs_describe_fd(struct task_struct *t, unsigned int fd,
			     char *buf, size_t len)
{
	struct file *file = offs_task_fget(t, fd);
	char *p;

	if (!file) {
		OFFS_STAT_ADD(wobj_fd_closed, 1);
		return false;
	}
	if (S_ISSOCK(file_inode(file)->i_mode)) {
		offs_describe_sock(file, buf, len);
	} else {
		/* Files, FIFOs, "pipe:[N]", "anon_inode:[eventfd]" ... */
		offs_root_enter(t);	/* paths as t sees them */
		p = offs_d_path(&file->f_path, buf, len);
		if (IS_ERR(p))
			snprintf(buf, len, "?");
		else
			memmove(buf, p, strlen(p) + 1);
	}
	/* No lock held: if fd was closed meanwhile, this may free the file. */
	fput(file);
	return true;
}

/*
 * What a wait4() or waitid() call waits for: OFFS_WAIT_PID (*id the
 * pid), OFFS_WAIT_PGID (*id the group, 0: the caller's own),
 * OFFS_WAIT_ANY, OFFS_WAIT_PIDFD (*id the descriptor), or -EINVAL: ids
 * with which the call fails rather than wait (wait4(INT_MIN), waitid()
 * P_PID <= 0, P_PGID < 0, an unknown id type).  Ids are numbered in the
 * waiter's pid namespace.
 */
int offs_wait_decode(const struct offs_sample *s, int *id)
{
	int a;

	if (s->syscall == __NR_wait4) {
		/* wait4(pid, ...): > 0 a child, -1 any, 0 or < -1 a group. */
		a = (int)s->args[0];
		*id = a;
		if (a > 0)
			return OFFS_WAIT_PID;
		if (a == -1)
			return OFFS_WAIT_ANY;
		if (a == INT_MIN)
			return -EINVAL;
		*id = -a;
		return OFFS_WAIT_PGID;
	}
	if (s->syscall != __NR_waitid)
		return -EINVAL;
	a = (int)s->args[1];
	*id = a;
	switch (s->args[0]) {
	case P_ALL:
		return OFFS_WAIT_ANY;
	case P_PID:
		return a > 0 ? OFFS_WAIT_PID : -EINVAL;
	case P_PGID:
		return a >= 0 ? OFFS_WAIT_PGID : -EINVAL;
	case P_PIDFD:
		return OFFS_WAIT_PIDFD;
	}
	return -EINVAL;
}

/*
 * wait4(pid) and waitid(idtype, id): which children.  A process or group
 * id is numbered in the waiter's pid namespace: it is kept as the initial
 * namespace numbers it (addr->pid), for each reader to see it as its own
 * namespace does (proc_stacks.c); "-" if no such process (any more).
 */
static void offs_wait_describe(struct task_struct *t,
			       const struct offs_sample *s, const char *name,
			       char *buf, size_t len,
			       struct offs_wobj_addr *addr)
{
	struct pid_namespace *ns;
	const char *what;
	struct pid *pid;
	int id = 0, n, k;
	pid_t nr = 0;

	switch (offs_wait_decode(s, &id)) {
	case OFFS_WAIT_PID:
		what = "pid";
		break;
	case OFFS_WAIT_PGID:
		what = "pgid";
		break;
	case OFFS_WAIT_ANY:
		snprintf(buf, len, "%s(any)", name);
		return;
	case OFFS_WAIT_PIDFD:
		snprintf(buf, len, "%s(pidfd %d)", name, id);
		return;
	default:
		snprintf(buf, len, "%s(-)", name);
		return;
	}
	if (!id) {	/* its own process group */
		snprintf(buf, len, "%s(pgid own)", name);
		return;
	}
	/* find_pid_ns() needs RCU; ns is NULL once t has been reaped. */
	rcu_read_lock();
	ns = task_active_pid_ns(t);
	pid = ns && id > 0 ? find_pid_ns(id, ns) : NULL;
	if (pid)
		nr = pid_nr(pid);
	rcu_read_unlock();
	n = snprintf(buf, len, "%s(%s ", name, what);
	k = nr > 0 && (size_t)n < len ? snprintf(buf + n, len - n, "%d", nr) : 0;
	/* Marked only if whole: proc_stacks.c reads [at, at + len) of it. */
	if (k && (size_t)(n + k) < len) {
		addr->at = n;
		addr->len = k;
		addr->pid = nr;
	} else if (!k) {
		strlcat(buf, "-", len);
	}
	strlcat(buf, ")", len);
}

/*
 * Describe what s (a user thread in a system call) waits on into buf.
 * Returns false if there is nothing to say (not in a system call).
 */
bool offs_wobj_describe(struct task_struct *t, const struct offs_sample *s,
			char *buf, size_t len, struct offs_wobj_addr *addr)
{
	const char *name = offs_syscall_name(s->syscall);
	char obj[256];
	int arg, n;

	addr->at = 0;
	addr->len = 0;
	addr->pid = 0;
	if (!name)
		return false;
	arg = offs_fd_arg(s->syscall);
	if (arg >= 0) {
		if (!offs_describe_fd(t, (unsigned int)s->args[arg], obj,
				      sizeof(obj)))
			snprintf(obj, sizeof(obj), "fd %lu", s->args[arg]);
		snprintf(buf, len, "%s(%s)", name, obj);
	} else if (offs_is_futex(s->syscall)) {
		/* A user address: hidden from group= readers (proc_stacks.c). */
		n = snprintf(buf, len, "%s(", name);
		addr->at = n;
		addr->len = snprintf(buf + n, len - n, "0x%lx", s->args[0]);
		strlcat(buf, ")", len);
	} else if (s->syscall == __NR_wait4 || s->syscall == __NR_waitid) {
		offs_wait_describe(t, s, name, buf, len, addr);
	} else {
		snprintf(buf, len, "%s", name);
	}
	return true;
}

/* ---- interned strings (offs_table_lock held) ---- */

#define OFFS_WBUCKETS	1024

static struct hlist_head offs_wobj_buckets[OFFS_WBUCKETS];
static struct offs_istore offs_wobjs = {
	.buckets = offs_wobj_buckets,
	.nbuckets = OFFS_WBUCKETS,
};

static_assert(offsetof(struct offs_wobj, base) == 0);

/* What one wait object of the longest description takes, as allocated. */
u64 offs_wobj_unit_cost(void)
{
	return offs_ksize(sizeof(struct offs_wobj) + OFFS_WOBJ_MAX);
}

struct offs_wobj *offs_wobj_intern(const char *str,
				   const struct offs_wobj_addr *addr)
{
	size_t len = strlen(str);
	struct offs_wobj *w;
	u32 hash;

	hash = jhash(str, len, 0);
	hlist_for_each_entry(w, offs_istore_bucket(&offs_wobjs, hash),
			     base.node) {
		if (w->base.hash == hash && w->len == len &&
		    w->addr.at == addr->at && w->addr.len == addr->len &&
		    w->addr.pid == addr->pid &&
		    !memcmp(w->str, str, len)) {
			offs_interned_get(&w->base);
			return w;
		}
	}
	/* Past max_stacks, or no memory. */
	w = offs_istore_alloc(&offs_wobjs, sizeof(*w) + len + 1);
	if (!w)
		return NULL;
	w->len = len;
	w->addr = *addr;
	memcpy(w->str, str, len + 1);
	offs_istore_add(&offs_wobjs, &w->base, hash, sizeof(*w) + len + 1);
	return w;
}

void offs_wobj_get(struct offs_wobj *w)
{
	offs_interned_get(&w->base);
}

void offs_wobj_put(struct offs_wobj *w)
{
	if (offs_interned_unref(&w->base))
		offs_istore_free(&offs_wobjs, &w->base, sizeof(*w) + w->len + 1);
}
