// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-waitfor: threads and processes that wait in the kernel for a
 * known other one (tests/guest/58-waitfor.bats).  Prints "NAME TID" for
 * every thread and process it makes, then "ready".
 *
 *   wf-waitpid  (thread of the main process) waitpid()s wf-child, a child
 *               process whose main thread waits for a mutex its thread
 *               wf-child-h holds while it sleeps: a chain of two kinds;
 *   wf-anywait  (process) wait()s for any of its children wf-kid-a and
 *               wf-kid-b, which sleep;
 *   wf-grpwait  (process) waitpid(-G)s for group G: its child wf-grp-in
 *               is G's leader, its child wf-grp-out stays in the parent's
 *               group: only wf-grp-in is waited for;
 *   wf-mm-hold, wf-mm-wait (threads of process wf-mm, on CPUs 0 and 1):
 *               wf-mm-hold mprotect()s a large populated mapping over and
 *               over, holding its mmap_lock for writing; wf-mm-wait drops
 *               and touches a page of another mapping (madvise(), a page
 *               fault: mmap_lock for reading; readers do not spin on a
 *               writer since 5.19, they sleep);
 *   wf-usrv, wf-ucli (processes): a UNIX stream socket between them, each
 *               reading from it, waiting for the other to write: a
 *               deadlock of two processes;
 *   wf-flk-h holds flock(LOCK_EX) on a file wf-flk-w waits to lock;
 *               wf-plk-h holds a POSIX write lock on bytes 0-99 of
 *               another, wf-plk-w waits for bytes 50-149, wf-ofd-w (an
 *               OFD read lock) for bytes 0-9, and wf-plk-x took bytes
 *               200-299 (no conflict) and sleeps;
 *   wf-pipe-a | wf-pipe-b | wf-pipe-c (processes): a pipeline whose last
 *               stage sleeps: wf-pipe-b waits to write to wf-pipe-c, and
 *               wf-pipe-a to write to wf-pipe-b (nobody else holds an end);
 *   wf-fifo-r reads from a FIFO that wf-fifo-w holds open for writing and
 *               never writes to;
 *   wf-tcli, wf-tcli6 read from a TCP connection over 127.0.0.1 and ::1
 *               whose servers wf-tsrv, wf-tsrv6 accepted and sleep;
 *               wf-dcli reads from a UDP socket connected to wf-dsrv's,
 *               which sleeps;
 *   wf-kf (process) has a userfaultfd region nobody serves: a copy to or
 *               from it in the kernel sleeps for good, holding the locks
 *               the call took.  wf-pos-h read()s from a file into it
 *               (holding the open file's f_pos_lock), wf-pos-w read()s
 *               from the same open file; wf-ino-h pwrite()s to another
 *               file from it (holding the inode's i_rwsem), wf-ino-w
 *               pwrite()s to that file; wf-pmx-h write()s to a pipe from
 *               it (holding the pipe's mutex), wf-pmx-w read()s from the
 *               pipe; wf-uio-h read()s from a UNIX stream socket with data
 *               waiting into it (holding the socket's iolock), wf-uio-w
 *               read()s from the same socket;
 *   wf-zl-r reads from a pipe whose write end only process wf-zl holds,
 *               whose main thread has exited (pthread_exit()), leaving
 *               its thread wf-zl-t, which sleeps;
 *   wf-pipe-self reads from a pipe whose write end only its own process
 *               holds, and wf-dfar from a UDP socket connected to a port
 *               of 127.0.0.1 nobody has: waits that name no holder;
 *   with --grow, only wf-gr-r, which reads from a pipe whose write end
 *               wf-gr-w holds, waiting for SIGUSR1 (sigwait()): at the
 *               first, it forks wf-gr-w2, which holds the end too and
 *               sleeps; at the second it closes its own ("closed");
 *   with --spin, only wf-spin (process, three threads on CPU 1): each
 *               waits in the run queue for the one running;
 *   with --mixed, only wf-lock (process, eight threads wf-locker taking
 *               turns to run wf_hot_section() for 10 ms under one mutex:
 *               one runs, seven wait) and wf-par (process, three threads
 *               running wf_par_spin()): the critical-path ranking case.
 *
 * Everything is killed with the main process (PR_SET_PDEATHSIG).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>
#include <time.h>
#include <unistd.h>

#define MM_SIZE		(128UL << 20)

static void name(const char *n)
{
	prctl(PR_SET_NAME, n);
	printf("%s %ld\n", n, (long)gettid());
}

static void on_cpu(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		perror("offsample-waitfor: sched_setaffinity");
}

static void start(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg)) {
		fprintf(stderr, "offsample-waitfor: pthread_create failed\n");
		exit(1);
	}
}

/* fork() a child that dies with its parent and runs fn(arg). */
static pid_t child(void (*fn)(const char *), const char *arg)
{
	pid_t ppid = getpid(), pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("offsample-waitfor: fork");
		exit(1);
	}
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(0);
	fn(arg);
	_exit(0);
}

static void sleeper(const char *n)
{
	name(n);
	fflush(stdout);
	for (;;)
		pause();
}

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;

static void *child_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm);
	name("wf-child-h");
	fflush(stdout);
	for (;;)
		pause();
	return NULL;
}

/* wf-child: waits for the mutex its thread wf-child-h holds. */
static void child_main(const char *n)
{
	name(n);
	start(child_holder, NULL);
	sleep(1);
	pthread_mutex_lock(&cm);
	_exit(0);
}

static void *waitpid_thread(void *arg)
{
	pid_t c;

	(void)arg;
	name("wf-waitpid");
	c = child(child_main, "wf-child");
	while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
	return NULL;
}

static void anywait(const char *n)
{
	name(n);
	child(sleeper, "wf-kid-a");
	child(sleeper, "wf-kid-b");
	while (wait(NULL) < 0 && errno == EINTR)
		;
	_exit(0);
}

static void grp_in(const char *n)
{
	setpgid(0, 0);
	sleeper(n);
}

static void grpwait(const char *n)
{
	pid_t g;

	name(n);
	g = child(grp_in, "wf-grp-in");
	setpgid(g, g);		/* either of us may get there first */
	child(sleeper, "wf-grp-out");
	while (waitpid(-g, NULL, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

static void *mm_hold(void *arg)
{
	char *p = arg;
	int prot = PROT_READ;

	on_cpu(0);
	name("wf-mm-hold");
	for (;;) {
		/* Every page table entry of 128 MiB, mmap_lock held for writing. */
		if (mprotect(p, MM_SIZE, prot))
			perror("offsample-waitfor: mprotect");
		prot ^= PROT_WRITE;
	}
	return NULL;
}

static void *mm_wait(void *arg)
{
	volatile char *q;

	(void)arg;
	on_cpu(1);
	name("wf-mm-wait");
	q = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED) {
		perror("offsample-waitfor: mmap");
		_exit(1);
	}
	for (;;) {
		madvise((void *)q, 4096, MADV_DONTNEED);
		*q = 1;
	}
	return NULL;
}

static void mm(const char *n)
{
	char *p;

	name(n);
	p = mmap(NULL, MM_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("offsample-waitfor: mmap");
		_exit(1);
	}
	/* Small pages: one entry each for mprotect() to change. */
	madvise(p, MM_SIZE, MADV_NOHUGEPAGE);
	memset(p, 1, MM_SIZE);
	start(mm_hold, p);
	start(mm_wait, NULL);
	for (;;)
		pause();
}

/* An abstract UNIX socket address of this run. */
static socklen_t usock(struct sockaddr_un *a, pid_t main_pid)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "offsample-waitfor-%d", (int)main_pid);
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a->sun_path + 1);
}

/*
 * wf-usrv: listens (the peer its client's credentials name is who
 * listened), accepts one client and reads: it waits for the client.
 */
static void usrv(const char *n)
{
	struct sockaddr_un a;
	socklen_t len = usock(&a, getppid());
	char b;
	int l, c;

	name(n);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, len) || listen(l, 1)) {
		perror("offsample-waitfor: listen");
		_exit(1);
	}
	c = accept(l, NULL, NULL);
	if (c < 0) {
		perror("offsample-waitfor: accept");
		_exit(1);
	}
	while (read(c, &b, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* wf-ucli: connects and reads: it waits for the server. */
static void ucli(const char *n)
{
	struct sockaddr_un a;
	socklen_t len = usock(&a, getppid());
	char b;
	int s, i;

	name(n);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	/* wf-usrv may not listen yet: up to 10 s. */
	for (i = 0; s >= 0 && connect(s, (struct sockaddr *)&a, len) && i < 100; i++)
		usleep(100000);
	if (s < 0 || i == 100) {
		perror("offsample-waitfor: connect");
		_exit(1);
	}
	while (recv(s, &b, 1, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

static char flk_path[64], plk_path[64];

static int open_lock_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	if (fd < 0) {
		perror("offsample-waitfor: open");
		_exit(1);
	}
	return fd;
}

static void flk(const char *n)
{
	int fd;

	name(n);
	fd = open_lock_file(flk_path);
	if (flock(fd, LOCK_EX))
		perror("offsample-waitfor: flock");
	for (;;)
		pause();
}

/* A POSIX (or OFD) lock of TYPE on [start, start + len), waiting. */
static void plk_take(const char *n, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };
	int fd;

	name(n);
	fd = open_lock_file(plk_path);
	while (fcntl(fd, cmd, &fl) < 0 && errno == EINTR)
		;
	for (;;)
		pause();
}

static void plk_h(const char *n)
{
	plk_take(n, F_SETLK, F_WRLCK, 0, 100);
}

static void plk_w(const char *n)
{
	plk_take(n, F_SETLKW, F_WRLCK, 50, 100);
}

static void plk_x(const char *n)
{
	plk_take(n, F_SETLKW, F_WRLCK, 200, 100);
}

static void ofd_w(const char *n)
{
	plk_take(n, F_OFD_SETLKW, F_RDLCK, 0, 10);
}

/* The pipeline's pipes: wf-pipe-a -> p1 -> wf-pipe-b -> p2 -> wf-pipe-c. */
static int p1[2], p2[2];

/* Close every pipe end but keep (-1: none). */
static void pipes_keep(int keep1, int keep2)
{
	int fds[] = { p1[0], p1[1], p2[0], p2[1] };
	unsigned int i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] != keep1 && fds[i] != keep2)
			close(fds[i]);
}

static void write_all(int fd, const char *b, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			_exit(1);
		b += w;
		n -= (size_t)w;
	}
}

static char pipe_buf[1 << 16];

/* wf-pipe-a: writes as fast as wf-pipe-b reads. */
static void pipe_a(const char *n)
{
	name(n);
	pipes_keep(p1[1], -1);
	for (;;)
		write_all(p1[1], pipe_buf, sizeof(pipe_buf));
}

/* wf-pipe-b: copies p1 to p2. */
static void pipe_b(const char *n)
{
	ssize_t r;

	name(n);
	pipes_keep(p1[0], p2[1]);
	for (;;) {
		r = read(p1[0], pipe_buf, sizeof(pipe_buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(1);
		write_all(p2[1], pipe_buf, (size_t)r);
	}
}

/* wf-pipe-c: the slow last stage, asleep with its read end open. */
static void pipe_c(const char *n)
{
	name(n);
	pipes_keep(p2[0], -1);
	for (;;)
		pause();
}

static char fifo_path[64];

static void fifo_r(const char *n)
{
	char b;
	int fd;

	name(n);
	fd = open(fifo_path, O_RDONLY);	/* until wf-fifo-w opens it */
	if (fd < 0) {
		perror("offsample-waitfor: open fifo");
		_exit(1);
	}
	while (read(fd, &b, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

static void fifo_w(const char *n)
{
	name(n);
	if (open(fifo_path, O_WRONLY) < 0) {
		perror("offsample-waitfor: open fifo");
		_exit(1);
	}
	for (;;)
		pause();
}

/* The listening or bound socket of the next server, and its address. */
static int srv_fd;
static struct sockaddr_storage srv_addr;
static socklen_t srv_len;

/* A socket of type on the loopback address of family, bound, in srv_*. */
static void srv_open(int family, int type)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&srv_addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&srv_addr;

	memset(&srv_addr, 0, sizeof(srv_addr));
	if (family == AF_INET) {
		a4->sin_family = AF_INET;
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		srv_len = sizeof(*a4);
	} else {
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_loopback;
		srv_len = sizeof(*a6);
	}
	srv_fd = socket(family, type, 0);
	if (srv_fd < 0 || bind(srv_fd, (struct sockaddr *)&srv_addr, srv_len) ||
	    getsockname(srv_fd, (struct sockaddr *)&srv_addr, &srv_len) ||
	    (type == SOCK_STREAM && listen(srv_fd, 1))) {
		perror("offsample-waitfor: server socket");
		exit(1);
	}
}

/* wf-tsrv, wf-tsrv6: accept one client and sleep (the slow server). */
static void tsrv(const char *n)
{
	name(n);
	if (accept(srv_fd, NULL, NULL) < 0) {
		perror("offsample-waitfor: accept");
		_exit(1);
	}
	close(srv_fd);
	for (;;)
		pause();
}

/* wf-dsrv: sleeps with its bound UDP socket. */
static void dsrv(const char *n)
{
	sleeper(n);
}

/* wf-tcli, wf-tcli6, wf-dcli: connect to the server and wait for it. */
static void cli(const char *n)
{
	int s, type = strcmp(n, "wf-dcli") ? SOCK_STREAM : SOCK_DGRAM;
	char b;

	name(n);
	close(srv_fd);
	s = socket(srv_addr.ss_family, type, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&srv_addr, srv_len)) {
		perror("offsample-waitfor: connect");
		_exit(1);
	}
	while (recv(s, &b, 1, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* wf-pipe-self: waits for itself (it holds the write end). */
static char *uf_region;
static int kf_pos_fd, kf_ino_fd, kf_pipe[2], kf_sock[2];
static long kf_pg;

static void kf_fail(const char *what)
{
	perror(what);
	_exit(1);
}

static void *pos_h(void *arg)
{
	(void)arg;
	name("wf-pos-h");
	if (read(kf_pos_fd, uf_region, kf_pg) < 0)
		kf_fail("offsample-waitfor: read (wf-pos-h)");
	return NULL;
}

static void *pos_w(void *arg)
{
	char b;

	(void)arg;
	name("wf-pos-w");
	if (read(kf_pos_fd, &b, 1) < 0)
		kf_fail("offsample-waitfor: read (wf-pos-w)");
	return NULL;
}

static void *ino_h(void *arg)
{
	(void)arg;
	name("wf-ino-h");
	if (pwrite(kf_ino_fd, uf_region + kf_pg, kf_pg, 0) < 0)
		kf_fail("offsample-waitfor: pwrite (wf-ino-h)");
	return NULL;
}

static void *ino_w(void *arg)
{
	(void)arg;
	name("wf-ino-w");
	if (pwrite(kf_ino_fd, "x", 1, 0) < 0)
		kf_fail("offsample-waitfor: pwrite (wf-ino-w)");
	return NULL;
}

static void *pmx_h(void *arg)
{
	(void)arg;
	name("wf-pmx-h");
	if (write(kf_pipe[1], uf_region + 2 * kf_pg, kf_pg) < 0)
		kf_fail("offsample-waitfor: write (wf-pmx-h)");
	return NULL;
}

static void *pmx_w(void *arg)
{
	char b;

	(void)arg;
	name("wf-pmx-w");
	if (read(kf_pipe[0], &b, 1) < 0)
		kf_fail("offsample-waitfor: read (wf-pmx-w)");
	return NULL;
}

static void *uio_h(void *arg)
{
	(void)arg;
	name("wf-uio-h");
	if (read(kf_sock[0], uf_region + 3 * kf_pg, kf_pg) < 0)
		kf_fail("offsample-waitfor: read (wf-uio-h)");
	return NULL;
}

static void *uio_w(void *arg)
{
	char b;

	(void)arg;
	name("wf-uio-w");
	if (read(kf_sock[0], &b, 1) < 0)
		kf_fail("offsample-waitfor: read (wf-uio-w)");
	return NULL;
}

/* A holder first, its waiter once it sleeps. */
static void kf_pair(void *(*h)(void *), void *(*w)(void *))
{
	start(h, NULL);
	usleep(300000);
	start(w, NULL);
}

static void kf(const char *n)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	char path[64], *data;
	int uffd, m;

	name(n);
	kf_pg = sysconf(_SC_PAGESIZE);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		kf_fail("offsample-waitfor: userfaultfd");
	uf_region = mmap(NULL, 4 * kf_pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (uf_region == MAP_FAILED)
		kf_fail("offsample-waitfor: mmap");
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)uf_region;
	reg.range.len = 4 * kf_pg;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		kf_fail("offsample-waitfor: UFFDIO_REGISTER");
	/*
	 * Files of memory: a memfd, and one opened again through /proc (an
	 * open(2) of a regular file: its position is locked for read()).
	 */
	data = calloc(1, kf_pg);
	m = memfd_create("wf-kf-pos", 0);
	if (!data || m < 0 || write(m, data, kf_pg) != kf_pg)
		kf_fail("offsample-waitfor: memfd");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", m);
	kf_pos_fd = open(path, O_RDONLY);
	kf_ino_fd = memfd_create("wf-kf-ino", 0);
	if (kf_pos_fd < 0 || kf_ino_fd < 0 || pipe(kf_pipe) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, kf_sock) ||
	    write(kf_sock[1], data, 64) != 64)
		kf_fail("offsample-waitfor: open");
	kf_pair(pos_h, pos_w);
	kf_pair(ino_h, ino_w);
	kf_pair(pmx_h, pmx_w);
	kf_pair(uio_h, uio_w);
	for (;;)
		pause();
}

static int zl_pipe[2];

static void *zl_thread(void *arg)
{
	(void)arg;
	name("wf-zl-t");
	for (;;)
		pause();
	return NULL;
}

/* wf-zl: holds the write end in a thread, its main thread gone. */
static void zl(const char *n)
{
	name(n);
	close(zl_pipe[0]);
	start(zl_thread, NULL);
	usleep(200000);
	pthread_exit(NULL);
}

static void zl_r(const char *n)
{
	char b;

	name(n);
	close(zl_pipe[1]);
	if (read(zl_pipe[0], &b, 1) < 0)
		perror("offsample-waitfor: read (wf-zl-r)");
	_exit(1);
}

static void pipe_self(const char *n)
{
	int p[2];
	char b;

	name(n);
	if (pipe(p))
		_exit(1);
	while (read(p[0], &b, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* wf-dfar: connected to a UDP port of 127.0.0.1 that nobody has. */
static void dfar(const char *n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char b;
	int s;

	name(n);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* A free port: bound, its number read, closed. */
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, len) ||
	    getsockname(s, (struct sockaddr *)&a, &len))
		_exit(1);
	close(s);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, len))
		_exit(1);
	while (recv(s, &b, 1, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* A server (tsrv or dsrv) and its client, then the server's socket closed. */
static void server_pair(int family, int type, const char *srv, const char *c)
{
	srv_open(family, type);
	child(type == SOCK_STREAM ? tsrv : dsrv, srv);
	child(cli, c);
	close(srv_fd);
}

/* --grow: the pipe wf-gr-r reads from, whose write end changes hands. */
static int gr_pipe[2];

static void gr_w(const char *n)
{
	sigset_t set;
	int sig;

	name(n);
	close(gr_pipe[0]);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sigwait(&set, &sig))
		_exit(1);
	child(sleeper, "wf-gr-w2");	/* inherits the write end */
	if (sigwait(&set, &sig))
		_exit(1);
	close(gr_pipe[1]);
	printf("closed\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void gr_r(const char *n)
{
	char b;

	name(n);
	fflush(stdout);
	close(gr_pipe[1]);
	while (read(gr_pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	_exit(1);
}

/*
 * A pipe p between a child w (named wn) holding the write end and a child
 * r (rn) reading: the parent keeps neither end.
 */
static void pipe_pair(int p[2], void (*w)(const char *), const char *wn,
		      void (*r)(const char *), const char *rn)
{
	if (pipe(p)) {
		perror("offsample-waitfor: pipe");
		exit(1);
	}
	child(w, wn);
	child(r, rn);
	close(p[0]);
	close(p[1]);
}

static void *spin(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	on_cpu(1);
	name("wf-spin");
	fflush(stdout);
	for (;;)
		n++;
	return NULL;
}

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 10 ms of CPU work, wall clock. */
__attribute__((noinline)) static void wf_hot_section(void)
{
	double end = now() + 0.010;

	while (now() < end)
		;
}

static void *locker(void *arg)
{
	(void)arg;
	name("wf-locker");
	fflush(stdout);
	for (;;) {
		pthread_mutex_lock(&hot);
		wf_hot_section();
		pthread_mutex_unlock(&hot);
	}
	return NULL;
}

static void lockers(const char *n)
{
	int i;

	name(n);
	for (i = 0; i < 8; i++)
		start(locker, NULL);
	for (;;)
		pause();
}

__attribute__((noinline)) static void *wf_par_spin(void *arg)
{
	volatile unsigned long k = 0;

	(void)arg;
	name("wf-par");
	fflush(stdout);
	for (;;)
		k++;
	return NULL;
}

static void par(const char *n)
{
	(void)n;
	start(wf_par_spin, NULL);
	start(wf_par_spin, NULL);
	wf_par_spin(NULL);
}

static void spinners(const char *n)
{
	(void)n;
	start(spin, NULL);
	start(spin, NULL);
	spin(NULL);
}

int main(int argc, char **argv)
{
	int spinning = argc == 2 && !strcmp(argv[1], "--spin");
	int mixed = argc == 2 && !strcmp(argv[1], "--mixed");
	int grow = argc == 2 && !strcmp(argv[1], "--grow");

	if (argc > 2 || (argc == 2 && !spinning && !mixed && !grow)) {
		fprintf(stderr, "usage: offsample-waitfor [--spin | --mixed | --grow]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	name("wf-main");
	if (grow) {
		pipe_pair(gr_pipe, gr_w, "wf-gr-w", gr_r, "wf-gr-r");
	} else if (spinning) {
		child(spinners, NULL);
	} else if (mixed) {
		child(lockers, "wf-lock");
		child(par, NULL);
	} else {
		start(waitpid_thread, NULL);
		sleep(1);
		child(anywait, "wf-anywait");
		child(grpwait, "wf-grpwait");
		child(mm, "wf-mm");
		child(usrv, "wf-usrv");
		child(ucli, "wf-ucli");
		snprintf(flk_path, sizeof(flk_path), "/tmp/offsample-waitfor-%d.flock", (int)getpid());
		snprintf(plk_path, sizeof(plk_path), "/tmp/offsample-waitfor-%d.posix", (int)getpid());
		child(flk, "wf-flk-h");
		child(plk_h, "wf-plk-h");
		sleep(1);	/* the holders hold */
		child(flk, "wf-flk-w");
		child(plk_w, "wf-plk-w");
		child(ofd_w, "wf-ofd-w");
		child(plk_x, "wf-plk-x");
		if (pipe(p1) || pipe(p2)) {
			perror("offsample-waitfor: pipe");
			return 1;
		}
		child(pipe_a, "wf-pipe-a");
		child(pipe_b, "wf-pipe-b");
		child(pipe_c, "wf-pipe-c");
		pipes_keep(-1, -1);
		snprintf(fifo_path, sizeof(fifo_path), "/tmp/offsample-waitfor-%d.fifo", (int)getpid());
		if (mkfifo(fifo_path, 0600)) {
			perror("offsample-waitfor: mkfifo");
			return 1;
		}
		child(fifo_r, "wf-fifo-r");
		child(fifo_w, "wf-fifo-w");
		server_pair(AF_INET, SOCK_STREAM, "wf-tsrv", "wf-tcli");
		server_pair(AF_INET6, SOCK_STREAM, "wf-tsrv6", "wf-tcli6");
		server_pair(AF_INET, SOCK_DGRAM, "wf-dsrv", "wf-dcli");
		child(kf, "wf-kf");
		pipe_pair(zl_pipe, zl, "wf-zl", zl_r, "wf-zl-r");
		child(pipe_self, "wf-pipe-self");
		child(dfar, "wf-dfar");
		sleep(1);	/* everyone has the files open */
		unlink(flk_path);
		unlink(plk_path);
		unlink(fifo_path);
	}
	sleep(3);			/* everyone waits by now */
	printf("ready\n");
	for (;;)
		pause();
}
