// SPDX-License-Identifier: GPL-2.0
/*
 * offs-churn - thread and process churn for offsample's stress suite.
 *
 *   offs-churn [-d SECONDS] [-t THREAD_WORKERS] [-b BATCH] [-p EXEC_WORKERS]
 *              [-z ZOMBIE_WORKERS] [-x THREADS_PER_PROC]
 *
 * For SECONDS (default 10) it runs, at once:
 *  - THREAD_WORKERS (4) loops, each creating BATCH (16) threads and joining
 *    them; a thread blocks for a moment (nanosleep, a futex held by its
 *    creator, a pipe read) before it exits, so the sampler sees it off-CPU
 *    and it dies while being sampled;
 *  - EXEC_WORKERS (2) loops that fork, exec this program again (a short-
 *    lived child that starts two threads and exits) and reap it;
 *  - ZOMBIE_WORKERS (1) loops that fork a child whose main thread exits
 *    with pthread_exit() while its THREADS_PER_PROC (4) other threads are
 *    still blocked: a zombie group leader with live threads, then threads
 *    exiting after their leader, the case where a thread's group_leader
 *    pointer is most fragile.
 *
 * Prints "key value" lines: threads, execs, zombie_procs, seconds and the
 * rates.  Threads are named osc-*, processes osc-exec / osc-zombie.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double duration = 10;
static int thread_workers = 4, batch = 16, exec_workers = 2;
static int zombie_workers = 1, per_proc = 4;
static atomic_long n_threads, n_execs, n_zombies, n_errors;
static volatile int stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

struct blocker {
	pthread_mutex_t *mutex;
	int pipe_rd;
	unsigned int kind;
};

static void *short_thread(void *arg)
{
	struct blocker *b = arg;
	char c;

	prctl(PR_SET_NAME, "osc-thread");
	switch (b->kind % 3) {
	case 0:
		nap_us(200 + (b->kind % 7) * 100);
		break;
	case 1:
		pthread_mutex_lock(b->mutex);	/* held by the creator for a moment */
		pthread_mutex_unlock(b->mutex);
		break;
	case 2:
		if (read(b->pipe_rd, &c, 1) < 0)
			atomic_fetch_add(&n_errors, 1);
		break;
	}
	return NULL;
}

static void *thread_worker(void *arg)
{
	pthread_t *tids = calloc(batch, sizeof(*tids));
	struct blocker *bs = calloc(batch, sizeof(*bs));
	pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
	unsigned int seq = (unsigned int)(long)arg * 7919;
	int p[2], i, started, err;

	prctl(PR_SET_NAME, "osc-spawner");
	if (!tids || !bs || pipe(p))
		abort();
	while (!stop) {
		pthread_mutex_lock(&mutex);
		for (i = 0, started = 0; i < batch; i++) {
			bs[i].mutex = &mutex;
			bs[i].pipe_rd = p[0];
			bs[i].kind = seq++;
			err = pthread_create(&tids[i], NULL, short_thread, &bs[i]);
			if (err) {
				atomic_fetch_add(&n_errors, 1);
				tids[i] = 0;
				continue;
			}
			started++;
		}
		nap_us(300);
		pthread_mutex_unlock(&mutex);
		for (i = 0; i < batch; i++)
			if (tids[i] && bs[i].kind % 3 == 2 && write(p[1], "x", 1) != 1)
				atomic_fetch_add(&n_errors, 1);
		for (i = 0; i < batch; i++)
			if (tids[i])
				pthread_join(tids[i], NULL);
		atomic_fetch_add(&n_threads, started);
	}
	close(p[0]);
	close(p[1]);
	free(tids);
	free(bs);
	return NULL;
}

/* The exec'd child: two threads that block briefly, then exit. */
static int exec_child(void)
{
	struct blocker b[2] = { { .kind = 0 }, { .kind = 3 } };
	pthread_t t[2];
	int i;

	prctl(PR_SET_NAME, "osc-exec");
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, short_thread, &b[i]))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void *exec_worker(void *arg)
{
	char *argv[] = { "offs-churn", "--exec-child", NULL };
	pid_t pid;
	int st;

	(void)arg;
	while (!stop) {
		pid = fork();
		if (pid < 0) {
			atomic_fetch_add(&n_errors, 1);
			nap_us(10000);
			continue;
		}
		if (pid == 0) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			atomic_fetch_add(&n_execs, 1);
		else
			atomic_fetch_add(&n_errors, 1);
	}
	return NULL;
}

static void *zombie_thread(void *arg)
{
	prctl(PR_SET_NAME, "osc-zthread");
	nap_us(1000 + (long)arg * 500);
	return NULL;
}

static void zombie_child(void)
{
	pthread_t t;
	long i;

	prctl(PR_SET_NAME, "osc-zombie");
	for (i = 0; i < per_proc; i++)
		if (pthread_create(&t, NULL, zombie_thread, (void *)i))
			_exit(1);
	pthread_exit(NULL);	/* the leader goes first */
}

static void *zombie_worker(void *arg)
{
	pid_t pid;
	int st;

	(void)arg;
	while (!stop) {
		pid = fork();
		if (pid < 0) {
			atomic_fetch_add(&n_errors, 1);
			nap_us(10000);
			continue;
		}
		if (pid == 0)
			zombie_child();
		if (waitpid(pid, &st, 0) == pid)
			atomic_fetch_add(&n_zombies, 1);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: offs-churn [-d SECONDS] [-t THREAD_WORKERS] [-b BATCH] "
		"[-p EXEC_WORKERS] [-z ZOMBIE_WORKERS] [-x THREADS_PER_PROC]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	pthread_t *workers;
	int c, n = 0, i;
	double t0, dt;

	if (argc == 2 && !strcmp(argv[1], "--exec-child"))
		return exec_child();
	while ((c = getopt(argc, argv, "d:t:b:p:z:x:")) != -1) {
		switch (c) {
		case 'd': duration = atof(optarg); break;
		case 't': thread_workers = atoi(optarg); break;
		case 'b': batch = atoi(optarg); break;
		case 'p': exec_workers = atoi(optarg); break;
		case 'z': zombie_workers = atoi(optarg); break;
		case 'x': per_proc = atoi(optarg); break;
		default: usage();
		}
	}
	if (batch < 1 || per_proc < 0 || duration <= 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	workers = calloc(thread_workers + exec_workers + zombie_workers,
			 sizeof(*workers));
	t0 = now();
	for (i = 0; i < thread_workers; i++)
		pthread_create(&workers[n++], NULL, thread_worker, (void *)(long)i);
	for (i = 0; i < exec_workers; i++)
		pthread_create(&workers[n++], NULL, exec_worker, NULL);
	for (i = 0; i < zombie_workers; i++)
		pthread_create(&workers[n++], NULL, zombie_worker, NULL);
	while (now() - t0 < duration)
		nap_us(50000);
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(workers[i], NULL);
	dt = now() - t0;
	printf("threads %ld\nexecs %ld\nzombie_procs %ld\nerrors %ld\n",
	       atomic_load(&n_threads), atomic_load(&n_execs),
	       atomic_load(&n_zombies), atomic_load(&n_errors));
	printf("seconds %.1f\nthreads_per_sec %.0f\nprocs_per_sec %.1f\n", dt,
	       (atomic_load(&n_threads) + 2.0 * atomic_load(&n_execs) +
		per_proc * (double)atomic_load(&n_zombies)) / dt,
	       (atomic_load(&n_execs) + atomic_load(&n_zombies)) / dt);
	return 0;
}
