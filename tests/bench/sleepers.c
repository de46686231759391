// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-sleepers - many threads that block and never run again.
 *
 *   offsample-sleepers [-n THREADS] [-m same|distinct|lock] [-k KINDS] [-s STACK_KB]
 *                      [-w PCT] [-p PERIOD_MS]
 *
 * Benchmark load for tests/bench: up to hundreds of thousands of threads
 * (small stacks, 64 KiB by default), each blocked for good once started,
 * so that a sampler tick sees N unchanged off-CPU threads.
 *
 *   -m same      every thread in nanosleep() through the same call path:
 *                one kernel stack and one user stack for all of them
 *   -m distinct  thread i descends a chain of 16 calls whose call sites
 *                encode i in binary, then blocks in wait kind i % KINDS:
 *                every thread has its own user stack (so N threads give N
 *                distinct stack records) and there are KINDS different
 *                kernel stacks (nanosleep, futex, pipe read, poll,
 *                epoll_wait, select, pause, sigwaitinfo)
 *   -m lock      every thread waits in pthread_mutex_lock() for a mutex the
 *                main thread holds for good (blocker attribution: one
 *                lock-waiting thread per thread, all naming the same holder)
 *
 *   -w PCT       (with -m same) PCT of the threads (thread i when i % 100
 *                < PCT) wake up every PERIOD_MS (default 100) and go back
 *                to nanosleep() at once: at a sampling rate
 *                below 1000 / PERIOD_MS Hz they have run between any two
 *                ticks (the cost model of make bench: changed threads)
 *
 * Prints "ready N" on stdout once every thread is about to block, then
 * waits for SIGTERM/SIGINT and exits (which ends every thread).  The
 * process is named "osb-sleepers".  Build with frame pointers and -O0 (the
 * call sites of descend() must stay distinct): see mk/bench.mk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#define CODE_BITS	16
#define NKINDS		8

static int distinct;
static int wake_pct;
static long period_ms = 100;
static int lockwait;
static pthread_mutex_t held_mutex = PTHREAD_MUTEX_INITIALIZER;
static int kinds = NKINDS;
static int pipefd[2];
static int epfd;
static int futex_word;
static volatile int started;	/* threads about to block (atomic adds) */
static volatile unsigned long sink;

static void block_forever(int kind)
{
	struct timespec ts = { .tv_sec = 86400 };
	struct epoll_event ev;
	struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
	fd_set rfds;
	sigset_t set;
	char c;

	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		switch (kind) {
		case 1:
			syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0,
				NULL, NULL, 0);
			break;
		case 2:
			if (read(pipefd[0], &c, 1) < 0 && errno != EINTR)
				return;
			break;
		case 3:
			poll(&pfd, 1, -1);
			break;
		case 4:
			epoll_wait(epfd, &ev, 1, -1);
			break;
		case 5:
			FD_ZERO(&rfds);
			FD_SET(pipefd[0], &rfds);
			/*
			 * Through syscall(): glibc's select() wrapper uses
			 * %rbp as a scratch register, which ends a frame-
			 * pointer walk at the first frame.
			 */
			syscall(SYS_select, pipefd[0] + 1, &rfds, NULL, NULL,
				NULL);
			break;
		case 6:
			pause();
			break;
		case 7:
			sigemptyset(&set);
			sigaddset(&set, SIGUSR2);
			sigwaitinfo(&set, NULL);
			break;
		default:
			nanosleep(&ts, NULL);
			break;
		}
	}
}

/* -w: sleep PERIOD_MS at a time, in nanosleep() as kind 0 does. */
static void block_briefly(void)
{
	struct timespec ts = {
		.tv_sec = period_ms / 1000,
		.tv_nsec = (period_ms % 1000) * 1000000L,
	};

	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (;;)
		nanosleep(&ts, NULL);
}

/*
 * Two call sites per level: the return addresses on the user stack spell
 * the thread's code in binary.  The different statements after each call
 * keep the compiler from merging the two calls.
 */
static void descend(unsigned int code, int level, int kind)
{
	if (level == 0) {
		block_forever(kind);
		return;
	}
	if (code & 1) {
		descend(code >> 1, level - 1, kind);
		sink += 1;
	} else {
		descend(code >> 1, level - 1, kind);
		sink += 2;
	}
}

static void *thread_main(void *arg)
{
	unsigned long i = (unsigned long)arg;

	if (lockwait) {
		__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&held_mutex);	/* never returns */
	} else if (distinct)
		descend((unsigned int)i, CODE_BITS, (int)(i % kinds));
	else if ((int)(i % 100) < wake_pct)
		block_briefly();
	else
		block_forever(0);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long n = 1000, stack_kb = 64, i;
	struct sigaction sa;
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };
	pthread_attr_t attr;
	sigset_t set;
	int c, err;

	while ((c = getopt(argc, argv, "n:m:k:s:w:p:h")) != -1) {
		switch (c) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 'm':
			if (!strcmp(optarg, "distinct"))
				distinct = 1;
			else if (!strcmp(optarg, "lock"))
				lockwait = 1;
			else if (strcmp(optarg, "same"))
				goto usage;
			break;
		case 'k':
			kinds = atoi(optarg);
			if (kinds < 1 || kinds > NKINDS)
				goto usage;
			break;
		case 's':
			stack_kb = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			wake_pct = atoi(optarg);
			if (wake_pct < 0 || wake_pct > 100)
				goto usage;
			break;
		case 'p':
			period_ms = atol(optarg);
			if (period_ms < 1 || period_ms > 60000)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (n < 1 || n > (1UL << CODE_BITS) * 16 || stack_kb < 16 ||
	    (wake_pct && (distinct || lockwait)))
		goto usage;

	prctl(PR_SET_NAME, "osb-sleepers");
	if (pipe(pipefd))
		return perror("pipe"), 1;
	epfd = epoll_create1(0);
	if (epfd < 0)
		return perror("epoll_create1"), 1;
	ev.data.fd = pipefd[0];
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &ev))
		return perror("epoll_ctl"), 1;

	/* SIGUSR2 stays blocked in every thread (sigwaitinfo waits for it). */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	pthread_mutex_lock(&held_mutex);	/* held by main for good (-m lock) */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, stack_kb * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n; i++) {
		pthread_t t;

		err = pthread_create(&t, &attr, thread_main, (void *)i);
		if (err) {
			fprintf(stderr, "offsample-sleepers: thread %lu of %lu: %s\n",
				i, n, strerror(err));
			return 1;
		}
	}
	while ((unsigned long)__atomic_load_n(&started, __ATOMIC_SEQ_CST) < n)
		nanosleep(&ts, NULL);
	/* Give the last threads time to get from the counter into the kernel. */
	ts.tv_nsec = 200 * 1000 * 1000;
	nanosleep(&ts, NULL);
	printf("ready %lu\n", n);
	fflush(stdout);
	for (;;)
		pause();
usage:
	fprintf(stderr, "usage: offsample-sleepers [-n THREADS] [-m same|distinct|lock] [-k KINDS] [-s STACK_KB] [-w PCT] [-p PERIOD_MS]\n");
	return 2;
}
