// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-cfihost - loads each shared library named on the command line
 * (copies of offsample-cfilib.so) and starts one thread per library that
 * blocks in it: thread "cfh-K" (K = the argument's position, from 0) calls
 * cfl_outer() of library K (or the function named after a colon,
 * LIB:FUNC), which reads an empty pipe for good.
 *
 * Prints "loaded N refused R" and "ready" when every thread has been
 * started, then waits until killed.  A library that cannot be loaded is
 * named on stderr and skipped (its thread is not started).
 *
 * Usage: offsample-cfihost LIB[:FUNC]...
 *
 * offsample-cfihost --swap MS [--anon] [--mmap] [--churn N] LIB_A LIB_B:
 * one thread "swap-a" or "swap-b" (renamed at each load) loads LIB_A,
 * blocks in its
 * cfl_outer() for MS milliseconds, unloads it, does the same with LIB_B,
 * and so on; another thread, "swap-tick", sleeps 5 ms at a time for good
 * (its process changes at every sampler tick), with --anon from code in
 * anonymous memory (its stack has a frame in no file).  Two copies of one
 * library land at the same address, so a sampler that kept the old
 * mapping would name the other file (umm.c's copies kept from tick to
 * tick).  Before it blocks, each load has run the library's code once
 * (no page fault after) and called mprotect() (munmap() would end with
 * the lock downgraded to a read lock): the last user of the process's
 * mmap lock is a writer, whose up_write() leaves no owner recorded.
 * --mmap: swap-tick also maps and unmaps an anonymous page before each
 * sleep (a writer of the mmap lock that changes no executable mapping).
 * --churn N starts N threads "swap-churn" first, each sleeping 20 ms at
 * a time: the sampler captures them all at every tick before
 * the swapping thread, so its window into the process stays open long
 * enough for a swap to fall between its copy of the mappings and that
 * thread's capture.  Prints "base a=ADDR b=ADDR" (cfl_outer's address in
 * each) and "ready" after the first load of each, then loops until
 * killed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef long (*wait_fn)(int fd);

struct job {
	wait_fn fn;
	int fd;
};

typedef long (*sleep_fn)(const struct timespec *req, struct timespec *rem);

static int tick_mmap;		/* swap-tick maps and unmaps a page too */

static void *tick(void *arg)
{
	const struct timespec ts = { 0, 5 * 1000 * 1000 };
	sleep_fn fn = arg;
	void *p;

	for (;;) {
		if (tick_mmap) {
			p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED || munmap(p, 4096)) {
				perror("offsample-cfihost: mmap");
				exit(1);
			}
		}
		fn(&ts, NULL);
	}
	return arg;
}

static volatile int churn_stop;	/* never set */

/* Sleep 20 ms at a time for good, depth frames down (not a tail call). */
static __attribute__((noinline)) long churn_at(long depth)
{
	const struct timespec ts = { 0, 20 * 1000 * 1000 };
	volatile long keep = depth;

	if (depth > 0)
		return churn_at(depth - 1) + keep;
	while (!churn_stop)
		nanosleep(&ts, NULL);
	return keep;
}

/*
 * A thread that runs between any two sampler ticks (19 Hz), 32 to 63
 * frames deep: each capture of it walks all of them (no two alike).
 */
static void *churn(void *arg)
{
	churn_at(32 + (long)arg % 32);
	return arg;
}

/* nanosleep() from anonymous memory: mov $35, %eax; syscall; ret. */
static sleep_fn anon_nanosleep(void)
{
	static const unsigned char code[] = {
		0xb8, 0x23, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3,
	};
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("offsample-cfihost: mmap");
		exit(1);
	}
	memcpy(p, code, sizeof(code));
	return (sleep_fn)p;
}

static long libc_nanosleep(const struct timespec *req, struct timespec *rem)
{
	return nanosleep(req, rem);
}

static const char *swap_lib[2];
static int swap_fd[2], warm_fd[2];
static void *swap_page;

/* Load lib k, block in it until a byte comes, unload it; the address. */
static void *swap_once(int k)
{
	void *h = dlopen(swap_lib[k], RTLD_NOW | RTLD_LOCAL);
	wait_fn fn;

	if (!h || !(fn = (wait_fn)dlsym(h, "cfl_outer"))) {
		fprintf(stderr, "offsample-cfihost: %s: %s\n", swap_lib[k],
			dlerror());
		exit(1);
	}
	pthread_setname_np(pthread_self(), k ? "swap-b" : "swap-a");
	/* Its pages in (a byte waits), then a writer of the mmap lock last. */
	if (write(warm_fd[1], "", 1) != 1 || fn(warm_fd[0]) != 1 ||
	    mprotect(swap_page, 4096, PROT_READ)) {
		perror("offsample-cfihost: warm-up");
		exit(1);
	}
	fn(swap_fd[0]);
	dlclose(h);
	return (void *)fn;
}

static void *swapper(void *arg)
{
	void *a = swap_once(0), *b = swap_once(1);

	printf("base a=%p b=%p\nready\n", a, b);
	fflush(stdout);
	for (;;) {
		swap_once(0);
		swap_once(1);
	}
	return arg;
}

static int swap_main(int argc, char **argv)
{
	sleep_fn sleeper = libc_nanosleep;
	long ms, nchurn = 0, i;
	struct timespec ts;
	int a = 3;
	pthread_t t;

	for (; a + 2 < argc; a++) {
		if (!strcmp(argv[a], "--anon"))
			sleeper = anon_nanosleep();
		else if (!strcmp(argv[a], "--mmap"))
			tick_mmap = 1;
		else if (!strcmp(argv[a], "--churn") && a + 3 < argc &&
			 (nchurn = atol(argv[a + 1])) > 0)
			a++;
		else
			break;
	}
	if (argc != a + 2 || (ms = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: offsample-cfihost --swap MS [--anon] [--mmap] [--churn N] LIB_A LIB_B\n");
		return 2;
	}
	for (i = 0; i < nchurn; i++) {
		if (pthread_create(&t, NULL, churn, (void *)i)) {
			perror("offsample-cfihost");
			return 1;
		}
		pthread_setname_np(t, "swap-churn");
	}
	swap_lib[0] = argv[a];
	swap_lib[1] = argv[a + 1];
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000;
	swap_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (swap_page == MAP_FAILED || pipe(swap_fd) || pipe(warm_fd) ||
	    pthread_create(&t, NULL, tick, (void *)sleeper)) {
		perror("offsample-cfihost");
		return 1;
	}
	pthread_setname_np(t, "swap-tick");
	if (pthread_create(&t, NULL, swapper, NULL)) {
		perror("offsample-cfihost");
		return 1;
	}
	for (;;) {
		nanosleep(&ts, NULL);
		if (write(swap_fd[1], "", 1) != 1) {
			perror("offsample-cfihost: write");
			return 1;
		}
	}
}

static void *run(void *arg)
{
	struct job *j = arg;

	j->fn(j->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int i, loaded = 0, refused = 0;

	if (argc > 1 && !strcmp(argv[1], "--swap"))
		return swap_main(argc, argv);
	if (argc < 2) {
		fprintf(stderr, "usage: offsample-cfihost LIB[:FUNC]...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		struct job *j = calloc(1, sizeof(*j));
		char *fn = strchr(argv[i], ':');
		void *h;
		int p[2];
		pthread_t t;
		char name[16];

		if (fn)
			*fn++ = '\0';
		h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!j || !h ||
		    !(j->fn = (wait_fn)dlsym(h, fn ? fn : "cfl_outer"))) {
			fprintf(stderr, "offsample-cfihost: %s: %s\n", argv[i],
				j ? dlerror() : "out of memory");
			refused++;
			continue;
		}
		if (pipe(p)) {
			perror("pipe");
			return 1;
		}
		j->fd = p[0];
		if (pthread_create(&t, NULL, run, j)) {
			perror("pthread_create");
			return 1;
		}
		snprintf(name, sizeof(name), "cfh-%d", i - 1);
		pthread_setname_np(t, name);
		loaded++;
	}
	printf("loaded %d refused %d\nready\n", loaded, refused);
	fflush(stdout);
	for (;;)
		pause();
}
