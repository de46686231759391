// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-blockers - threads that wait for locks other threads hold, in
 * every way blocker attribution knows (tests/guest/58-blockers.bats):
 *
 *   blk-chain-a waits for m1, held by blk-chain-b, which waits for m2,
 *               held by blk-chain-c, which sleeps (a chain of two mutexes)
 *   blk-timed-w waits for m2 too, in pthread_mutex_timedlock()
 *   blk-pi-wait waits for a PTHREAD_PRIO_INHERIT mutex blk-pi-hold holds
 *   blk-rd-wait, blk-wr-wait wait for an rwlock blk-rw-hold holds for writing
 *   blk-rb-wait waits for a robust mutex blk-rb-hold holds
 *   blk-dl-x, blk-dl-y each hold one mutex and wait for the other (deadlock)
 *   blk-gone-w  waits for a mutex whose owner blk-gone-h exited holding it
 *   blk-junk2, blk-junk3 wait with raw futex() calls inside memory filled
 *               with garbage, shaped like a locked mutex (value 2) and a
 *               write-locked rwlock (value 3): no holder may be reported
 *   blk-bigid   waits on a word shaped like a locked mutex whose owner
 *               field holds 0x12345678: no thread id (above PID_MAX_LIMIT),
 *               as when it is half of a pointer (stdio's lock keeps one
 *               there): no holder may be reported, not even a gone one
 *   blk-unmapped waits on a lock-shaped word in a page that is unmapped
 *               while it waits (the futex wait goes on): the module's read
 *               fails, is counted, and nothing else happens
 *
 * Prints "NAME TID" for every thread, then "ready" when all waiters are
 * blocked (as far as a sleep can tell), and waits until killed.
 *
 *   offsample-blockers --crowd N
 *
 * instead: blk-main holds one mutex and N threads blk-crowd wait for it
 * (a process with more lock waiters than the module looks up per tick).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t my = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mgone = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mpi, mrb;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t held;		/* a holder has its lock */
static unsigned char *junk;	/* garbage-filled memory */

static void say(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	printf("%s %ld\n", name, (long)gettid());
	fflush(stdout);
}

/* The holders sleep here, holding their locks: a frame of our own. */
static void __attribute__((noinline)) blk_hold_and_sleep(void)
{
	for (;;)
		sleep(1000);
}

static void *chain_c(void *arg)
{
	(void)arg;
	say("blk-chain-c");
	pthread_mutex_lock(&m2);
	sem_post(&held);
	blk_hold_and_sleep();
	return NULL;
}

static void *chain_b(void *arg)
{
	(void)arg;
	say("blk-chain-b");
	pthread_mutex_lock(&m1);
	sem_post(&held);
	pthread_mutex_lock(&m2);	/* waits for blk-chain-c */
	return NULL;
}

static void *chain_a(void *arg)
{
	(void)arg;
	say("blk-chain-a");
	pthread_mutex_lock(&m1);	/* waits for blk-chain-b */
	return NULL;
}

static void *timed_wait(void *arg)
{
	struct timespec far;

	(void)arg;
	say("blk-timed-w");
	clock_gettime(CLOCK_REALTIME, &far);
	far.tv_sec += 86400;
	pthread_mutex_timedlock(&m2, &far);	/* waits for blk-chain-c */
	return NULL;
}

static void *hold(void *arg)
{
	pthread_mutex_t *m = arg;

	say(m == &mpi ? "blk-pi-hold" : "blk-rb-hold");
	pthread_mutex_lock(m);
	sem_post(&held);
	blk_hold_and_sleep();
	return NULL;
}

static void *wait_for(void *arg)
{
	pthread_mutex_t *m = arg;

	say(m == &mpi ? "blk-pi-wait" : m == &mrb ? "blk-rb-wait" : "blk-gone-w");
	pthread_mutex_lock(m);
	return NULL;
}

static void *rw_hold(void *arg)
{
	(void)arg;
	say("blk-rw-hold");
	pthread_rwlock_wrlock(&rw);
	sem_post(&held);
	blk_hold_and_sleep();
	return NULL;
}

static void *rw_wait(void *arg)
{
	if (arg) {
		say("blk-wr-wait");
		pthread_rwlock_wrlock(&rw);
	} else {
		say("blk-rd-wait");
		pthread_rwlock_rdlock(&rw);
	}
	return NULL;
}

static void *dl(void *arg)
{
	int x = arg != NULL;

	say(x ? "blk-dl-x" : "blk-dl-y");
	pthread_mutex_lock(x ? &mx : &my);
	sem_post(&held);
	sleep(1);			/* both hold theirs before asking */
	pthread_mutex_lock(x ? &my : &mx);
	return NULL;
}

static void *gone(void *arg)
{
	(void)arg;
	say("blk-gone-h");
	pthread_mutex_lock(&mgone);
	sem_post(&held);
	return NULL;			/* exits holding it */
}

/* Wait on a word in garbage, as a lock waiter would (never woken). */
static void *junk_wait(void *arg)
{
	long v = (long)arg;
	uint32_t *w;

	if (v == 2) {
		say("blk-junk2");
		w = (uint32_t *)(junk + 64);
		*w = 2;
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	} else if (v == 4) {
		/* glibc's mutex: lock, count, owner, nusers, kind. */
		say("blk-bigid");
		w = (uint32_t *)(junk + 512);
		w[0] = 2;
		w[1] = 0;
		w[2] = 0x12345678;
		w[3] = 1;
		w[4] = 0;
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	} else {
		say("blk-junk3");
		w = (uint32_t *)(junk + 256 + 8);
		*w = 3;
		syscall(SYS_futex, w, FUTEX_WAIT_BITSET_PRIVATE, 3, NULL, NULL,
			FUTEX_BITSET_MATCH_ANY);
	}
	return NULL;
}

static void *unmapped_wait(void *arg)
{
	uint32_t *w = arg;

	say("blk-unmapped");
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	return NULL;
}

static void start(void *(*fn)(void *), void *arg, int wait_held)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "offsample-blockers: pthread_create: %s\n",
			strerror(err));
		exit(1);
	}
	pthread_detach(t);
	if (wait_held)
		while (sem_wait(&held) && errno == EINTR)
			;
}

static void *crowd_wait(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "blk-crowd");
	pthread_mutex_lock(&m1);	/* blk-main holds it */
	return NULL;
}

static int crowd(int n)
{
	pthread_attr_t a;
	pthread_t t;
	int i;

	pthread_setname_np(pthread_self(), "blk-main");
	printf("blk-main %ld\n", (long)gettid());
	pthread_mutex_lock(&m1);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, &a, crowd_wait, NULL)) {
			fprintf(stderr, "offsample-blockers: pthread_create failed at %d\n", i);
			return 1;
		}
	}
	sleep(3);
	printf("ready\n");
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t a;
	uint32_t *page;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--crowd"))
		return crowd(atoi(argv[2]));
	if (argc != 1) {
		fprintf(stderr, "usage: offsample-blockers [--crowd N]\n");
		return 2;
	}
	sem_init(&held, 0, 0);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&mpi, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&mrb, &a);
	pthread_mutexattr_destroy(&a);
	/* Garbage where a lock could have been: 0xa5 everywhere. */
	junk = malloc(4096);
	if (!junk)
		return 1;
	memset(junk, 0xa5, 4096);

	say("blk-main");
	start(chain_c, NULL, 1);
	start(chain_b, NULL, 1);
	start(chain_a, NULL, 0);
	start(timed_wait, NULL, 0);
	start(hold, &mpi, 1);
	start(wait_for, &mpi, 0);
	start(hold, &mrb, 1);
	start(wait_for, &mrb, 0);
	start(rw_hold, NULL, 1);
	start(rw_wait, NULL, 0);
	start(rw_wait, (void *)1, 0);
	start(dl, (void *)1, 1);
	start(dl, NULL, 1);
	start(gone, NULL, 1);
	start(wait_for, &mgone, 0);
	start(junk_wait, (void *)2L, 0);
	start(junk_wait, (void *)3L, 0);
	start(junk_wait, (void *)4L, 0);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	*page = 2;
	start(unmapped_wait, page, 0);
	sleep(3);			/* the waiters are blocked by now */
	munmap(page, 4096);		/* blk-unmapped keeps waiting */
	printf("ready\n");
	for (;;)
		pause();
}
