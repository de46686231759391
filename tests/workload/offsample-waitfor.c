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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

	if (argc > 2 || (argc == 2 && !spinning && !mixed)) {
		fprintf(stderr, "usage: offsample-waitfor [--spin | --mixed]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	name("wf-main");
	if (spinning) {
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
	}
	sleep(3);			/* everyone waits by now */
	printf("ready\n");
	for (;;)
		pause();
}
