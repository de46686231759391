// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-workload - processes whose threads wait in known ways.
 *
 * Each scenario runs as its own process named "osw-<scenario>" (so records
 * can be told apart by comm); its threads are named "osw-<scenario>-<i>".
 * The launcher prints "ready" once every thread is about to block, then
 * sleeps until SIGTERM/SIGINT or --duration, and kills the scenarios.
 *
 *   sleep   N threads in nanosleep
 *   mutex   N threads blocked on a pthread mutex held by a sleeping thread
 *   pipe    N threads reading an empty pipe
 *   poll    N threads in poll() on an idle socket
 *   epoll   N threads in epoll_wait() on an idle socket
 *   accept  N threads in accept() on a loopback listener
 *   wait    N threads in waitpid() on a sleeping child each
 *   dio     N threads doing O_DIRECT reads of --dio PATH in a loop
 *   spin    N busy threads (use N > CPUs for run-queue wait)
 *   switch  N threads reading a pipe; on SIGUSR1 to the process they move
 *           to nanosleep (a thread that runs and blocks somewhere else)
 *   nap     N threads in nanosleep for 3 ms at a time (a thread that runs
 *           between two ticks and waits where it waited, in a new call)
 *
 * Built with frame pointers so user stacks (later) are walkable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int nthreads = 3;
static const char *dio_path;
static int ready_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t started;
static int shared_fd = -1;		/* listener or idle socket */

static void die(const char *what)
{
	fprintf(stderr, "offsample-workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void long_sleep(void)
{
	struct timespec ts = { .tv_sec = 3600 };

	for (;;)
		nanosleep(&ts, NULL);
}

static void *t_sleep(void *arg __attribute__((unused)))
{
	pthread_barrier_wait(&started);
	long_sleep();
	return NULL;
}

static void *t_nap(void *arg __attribute__((unused)))
{
	struct timespec ts = { .tv_nsec = 3000000 };

	pthread_barrier_wait(&started);
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

static void *t_mutex(void *arg __attribute__((unused)))
{
	pthread_barrier_wait(&started);
	pthread_mutex_lock(&lock);	/* held forever by the main thread */
	return NULL;
}

static void *t_pipe(void *arg __attribute__((unused)))
{
	int p[2];
	char c;

	if (pipe(p))
		die("pipe");
	pthread_barrier_wait(&started);
	for (;;)
		if (read(p[0], &c, 1) < 0 && errno != EINTR)
			die("read");
	return NULL;
}

static int idle_socket(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	return sv[0];		/* the peer stays open and silent */
}

static void *t_poll(void *arg __attribute__((unused)))
{
	struct pollfd pfd = { .fd = idle_socket(), .events = POLLIN };

	pthread_barrier_wait(&started);
	for (;;)
		poll(&pfd, 1, -1);
	return NULL;
}

static void *t_epoll(void *arg __attribute__((unused)))
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0);

	if (ep < 0)
		die("epoll_create1");
	ev.data.fd = idle_socket();
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev))
		die("epoll_ctl");
	pthread_barrier_wait(&started);
	for (;;)
		epoll_wait(ep, &out, 1, -1);
	return NULL;
}

static void *t_accept(void *arg __attribute__((unused)))
{
	pthread_barrier_wait(&started);
	for (;;) {
		int c = accept(shared_fd, NULL, NULL);

		if (c >= 0)
			close(c);
	}
	return NULL;
}

static void *t_wait(void *arg __attribute__((unused)))
{
	pid_t child = fork();

	if (child < 0)
		die("fork");
	if (child == 0) {
		prctl(PR_SET_NAME, "osw-child");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	pthread_barrier_wait(&started);
	for (;;)
		if (waitpid(child, NULL, 0) < 0 && errno != EINTR)
			die("waitpid");
	return NULL;
}

static void *t_dio(void *arg __attribute__((unused)))
{
	void *buf;
	int fd = open(dio_path, O_RDONLY | O_DIRECT);

	if (fd < 0)
		die(dio_path);
	if (posix_memalign(&buf, 4096, 4096))
		die("posix_memalign");
	pthread_barrier_wait(&started);
	for (;;)
		if (pread(fd, buf, 4096, 0) < 0)
			die("pread");
	return NULL;
}

static int switch_pipe[2];

static void on_usr1(int sig __attribute__((unused)))
{
	static const char go[64];

	/* Async-signal-safe: one byte per waiting thread. */
	if (write(switch_pipe[1], go, nthreads) < 0)
		_exit(1);
}

static void *t_switch(void *arg __attribute__((unused)))
{
	char c;

	pthread_barrier_wait(&started);
	while (read(switch_pipe[0], &c, 1) != 1)
		;
	long_sleep();
	return NULL;
}

static void setup_switch(void)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };

	if (nthreads > 64) {
		errno = EINVAL;
		die("switch supports at most 64 threads");
	}
	if (pipe(switch_pipe))
		die("pipe");
	sigaction(SIGUSR1, &sa, NULL);
}

static void *t_spin(void *arg __attribute__((unused)))
{
	volatile unsigned long n = 0;

	pthread_barrier_wait(&started);
	for (;;)
		n++;
	return NULL;
}

struct scenario {
	const char *name;
	void *(*fn)(void *);
	void (*setup)(void);
};

static void setup_accept(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	shared_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (shared_fd < 0 || bind(shared_fd, (void *)&a, sizeof(a)) ||
	    listen(shared_fd, 8))
		die("listen");
}

static void setup_dio(void)
{
	if (!dio_path) {
		errno = EINVAL;
		die("dio needs --dio PATH");
	}
}

static const struct scenario scenarios[] = {
	{ "sleep", t_sleep, NULL },
	{ "mutex", t_mutex, NULL },
	{ "pipe", t_pipe, NULL },
	{ "poll", t_poll, NULL },
	{ "epoll", t_epoll, NULL },
	{ "accept", t_accept, setup_accept },
	{ "wait", t_wait, NULL },
	{ "dio", t_dio, setup_dio },
	{ "spin", t_spin, NULL },
	{ "switch", t_switch, setup_switch },
	{ "nap", t_nap, NULL },
};

/* One scenario process: N worker threads; the main thread holds the mutex
 * (mutex scenario) or sleeps. */
static void run_scenario(const struct scenario *sc)
{
	char name[16];
	pthread_t tid;
	int i;

	snprintf(name, sizeof(name), "osw-%s", sc->name);
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sc->setup)
		sc->setup();
	if (!strcmp(sc->name, "mutex"))
		pthread_mutex_lock(&lock);
	pthread_barrier_init(&started, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		if (pthread_create(&tid, NULL, sc->fn, NULL))
			die("pthread_create");
		snprintf(name, sizeof(name), "osw-%s-%d", sc->name, i);
		pthread_setname_np(tid, name);
	}
	pthread_barrier_wait(&started);
	if (write(ready_fd, "r", 1) != 1)
		die("ready");
	close(ready_fd);
	long_sleep();
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: offsample-workload [-n THREADS] [--dio PATH] [--duration SEC] SCENARIO...\n"
		"Starts one process per scenario (named osw-SCENARIO) with THREADS\n"
		"threads (default 3) waiting in a known way; prints \"ready\" when\n"
		"they are about to block; runs until SIGTERM/SIGINT or --duration.\n"
		"Scenarios:");
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		fprintf(f, " %s", scenarios[i].name);
	fprintf(f, " all (every scenario but spin, switch and nap, and dio only with --dio)\n");
}

static volatile sig_atomic_t stop;

static void on_signal(int sig __attribute__((unused)))
{
	stop = 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 'n' },
		{ "dio", required_argument, NULL, 'd' },
		{ "duration", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct scenario *run[16];
	pid_t pids[16];
	int nrun = 0, i, c, p[2], duration = 0;
	size_t j, nsc = sizeof(scenarios) / sizeof(scenarios[0]);
	struct sigaction sa = { .sa_handler = on_signal };
	char buf;

	while ((c = getopt_long(argc, argv, "n:d:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nthreads = atoi(optarg);
			if (nthreads < 1 || nthreads > 1000) {
				fprintf(stderr, "offsample-workload: bad thread count\n");
				return 2;
			}
			break;
		case 'd':
			dio_path = optarg;
			break;
		case 't':
			duration = atoi(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (i = optind; i < argc; i++) {
		for (j = 0; j < nsc; j++) {
			if (!strcmp(argv[i], "all") &&
			    strcmp(scenarios[j].name, "spin") &&
			    strcmp(scenarios[j].name, "switch") &&
			    strcmp(scenarios[j].name, "nap") &&
			    (strcmp(scenarios[j].name, "dio") || dio_path))
				run[nrun++] = &scenarios[j];
			else if (!strcmp(argv[i], scenarios[j].name))
				run[nrun++] = &scenarios[j];
			if (nrun == 16)
				break;
		}
		if (nrun == 16)
			break;
	}
	if (!nrun) {
		usage(stderr);
		return 2;
	}

	prctl(PR_SET_NAME, "osw-launcher");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (pipe(p))
		die("pipe");
	for (i = 0; i < nrun; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			close(p[0]);
			ready_fd = p[1];
			run_scenario(run[i]);
			_exit(0);
		}
		pids[i] = pid;
	}
	close(p[1]);
	for (i = 0; i < nrun; i++)
		if (read(p[0], &buf, 1) != 1)
			die("a scenario failed to start");
	printf("ready\n");
	fflush(stdout);

	if (duration > 0)
		alarm(duration);
	sigaction(SIGALRM, &sa, NULL);
	while (!stop)
		pause();
	for (i = 0; i < nrun; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
