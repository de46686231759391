// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-ustack - one process (comm "osw-ustack") whose threads block
 * in distinctly named functions, for the user-stack tests:
 *
 *   main -> main_wait -> do_sleep                nanosleep       (sleep)
 *   thread "us-io":   worker_io -> do_pread      pread64 of PATH (io)
 *   thread "us-lock": worker_lock -> take_lock   futex wait      (lock)
 *   thread "us-net":  worker_net -> do_recv      recvfrom, UDP   (net)
 *
 * The system calls are issued with inline assembly from the named
 * functions themselves, so with frame pointers the leaf user frame is the
 * named function and the walk finds every caller; glibc's wrappers (built
 * without frame pointers) would hide the innermost caller.  Built twice:
 * with frame pointers and without (offsample-ustack-nofp).
 *
 * Prints "ready pid=P futex=0xADDR port=N" when every thread is about to
 * block.  Usage: offsample-ustack PATH   (PATH: a file or device that
 * O_DIRECT reads of are slow, e.g. a dm-delay device)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#define NOINLINE __attribute__((noinline))

static inline __attribute__((always_inline))
long sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile ("syscall"
			  : "=a"(ret)
			  : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			    "r"(r8), "r"(r9)
			  : "rcx", "r11", "memory");
	return ret;
}

static const char *io_path;
static int futex_word;
static int udp_fd;
static pthread_barrier_t started;

NOINLINE void do_pread(int fd, void *buf)
{
	for (;;)
		if (sys6(SYS_pread64, fd, (long)buf, 4096, 0, 0, 0) < 0)
			_exit(3);
}

NOINLINE void *worker_io(void *arg)
{
	void *buf;
	int fd = open(io_path, O_RDONLY | O_DIRECT);

	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(io_path);
		_exit(3);
	}
	pthread_barrier_wait(&started);
	do_pread(fd, buf);
	return arg;
}

NOINLINE void take_lock(int *word)
{
	for (;;)
		sys6(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
}

NOINLINE void *worker_lock(void *arg)
{
	pthread_barrier_wait(&started);
	take_lock(&futex_word);
	return arg;
}

NOINLINE void do_recv(int fd)
{
	char buf[64];

	for (;;)
		sys6(SYS_recvfrom, fd, (long)buf, sizeof(buf), 0, 0, 0);
}

NOINLINE void *worker_net(void *arg)
{
	pthread_barrier_wait(&started);
	do_recv(udp_fd);
	return arg;
}

NOINLINE void do_sleep(void)
{
	struct timespec ts = { .tv_sec = 3600 };

	for (;;)
		sys6(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

NOINLINE void main_wait(void)
{
	do_sleep();
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	static void *(*const fns[])(void *) = { worker_io, worker_lock,
						worker_net };
	static const char *const names[] = { "us-io", "us-lock", "us-net" };
	pthread_t tid;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: offsample-ustack PATH\n");
		return 2;
	}
	io_path = argv[1];
	prctl(PR_SET_NAME, "osw-ustack");
	prctl(PR_SET_PDEATHSIG, 9);
	udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp_fd < 0 || bind(udp_fd, (void *)&a, sizeof(a)) ||
	    getsockname(udp_fd, (void *)&a, &alen)) {
		perror("udp");
		return 1;
	}
	pthread_barrier_init(&started, NULL, 4);
	for (i = 0; i < 3; i++) {
		if (pthread_create(&tid, NULL, fns[i], NULL))
			return 1;
		pthread_setname_np(tid, names[i]);
	}
	pthread_barrier_wait(&started);
	printf("ready pid=%d futex=%p port=%u\n", getpid(), (void *)&futex_word,
	       ntohs(a.sin_port));
	fflush(stdout);
	main_wait();
	return 0;
}
