// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-oncpu - threads that run, for on-CPU samples and GAPP's
 * criticality (tests/guest/59-oncpu.bats).
 *
 *   offsample-oncpu spin N     process "ocp-spin": N threads spinning in
 *                              ocp_user_spin() (user code); its main
 *                              thread sleeps for good
 *   offsample-oncpu kspin      process "ocp-kspin": one thread reading
 *                              /dev/zero 4 MiB at a time from
 *                              ocp_kernel_spin() (kernel code, read())
 *   offsample-oncpu crit N     process "ocp-crit": N threads taking turns
 *                              in ocp_crit_section() under one mutex (a
 *                              serialized process), and process
 *                              "ocp-par": two threads spinning in
 *                              ocp_par_spin() side by side
 *
 * Prints "ready" when every thread has started; runs until killed.
 * Built with frame pointers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static pthread_mutex_t crit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t started;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

__attribute__((noinline)) static void ocp_user_spin(void)
{
	for (;;)
		sink++;
}

__attribute__((noinline)) static void ocp_kernel_spin(void)
{
	size_t len = 4 << 20;
	char *buf = malloc(len);
	int fd = open("/dev/zero", O_RDONLY);

	if (!buf || fd < 0)
		die("/dev/zero");
	for (;;)
		if (read(fd, buf, len) < 0)
			die("read");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * About 20 ms of user-mode work while holding the lock, the clock read
 * rarely so that samples land in this function itself.  Long next to the
 * unlock's futex wake, which is critical too (it runs while the others
 * wait): with 3 ms sections an emulated wake on a slow host weighed more
 * than the section (6.1, 2026-11-25: 41 to 34).
 */
__attribute__((noinline)) static void ocp_crit_section(void)
{
	double end = now() + 0.02;
	unsigned long i;

	do {
		for (i = 0; i < 100000; i++)
			sink++;
	} while (now() < end);
}

__attribute__((noinline)) static void ocp_par_spin(void)
{
	for (;;)
		sink++;
}

static void *spin_fn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	ocp_user_spin();
	return NULL;
}

static void *kspin_fn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	ocp_kernel_spin();
	return NULL;
}

static void *crit_fn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	for (;;) {
		pthread_mutex_lock(&crit_lock);
		ocp_crit_section();
		pthread_mutex_unlock(&crit_lock);
	}
	return NULL;
}

static void *par_fn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	ocp_par_spin();
	return NULL;
}

/* A process named NAME with n threads running fn; its main thread sleeps. */
static pid_t spawn(const char *name, int n, void *(*fn)(void *), int ready)
{
	pid_t pid = fork();
	pthread_t tid;
	char tname[16];
	int i;

	if (pid < 0)
		die("fork");
	if (pid)
		return pid;
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pthread_barrier_init(&started, NULL, n + 1);
	for (i = 0; i < n; i++) {
		if (pthread_create(&tid, NULL, fn, NULL))
			die("pthread_create");
		snprintf(tname, sizeof(tname), "%s-%d", name, i);
		pthread_setname_np(tid, tname);
	}
	pthread_barrier_wait(&started);
	if (write(ready, "r", 1) != 1)
		die("ready");
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int p[2], n = argc > 2 ? atoi(argv[2]) : 2, want = 1, i;
	char c;

	if (argc < 2 || n < 1 || n > 64) {
		fprintf(stderr, "usage: offsample-oncpu spin N | kspin | crit N\n");
		return 2;
	}
	if (pipe(p))
		die("pipe");
	prctl(PR_SET_NAME, "ocp-launcher");
	if (!strcmp(argv[1], "spin")) {
		spawn("ocp-spin", n, spin_fn, p[1]);
	} else if (!strcmp(argv[1], "kspin")) {
		spawn("ocp-kspin", 1, kspin_fn, p[1]);
	} else if (!strcmp(argv[1], "crit")) {
		spawn("ocp-crit", n, crit_fn, p[1]);
		spawn("ocp-par", 2, par_fn, p[1]);
		want = 2;
	} else {
		fprintf(stderr, "offsample-oncpu: unknown scenario %s\n", argv[1]);
		return 2;
	}
	close(p[1]);
	for (i = 0; i < want; i++)
		if (read(p[0], &c, 1) != 1)
			die("ready");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
