// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-benchtool - timing helpers for tests/bench.
 *
 *   offsample-benchtool procpass [PASSES] [FILE]
 *       PASSES (default 5) full passes over /proc/[0-9]*\/task/[0-9]*\/FILE
 *       (FILE default "stack"): each file is opened, read to the end and
 *       closed, which is what a user-space /proc/PID/stack sampler does per
 *       thread per tick.  One line per pass:
 *         pass I threads T failed F bytes B wall_ns W cpu_ns C
 *       cpu_ns is this process's user+system time for the pass.
 *
 *   offsample-benchtool read FILE [REPEAT]
 *       Reads FILE to the end REPEAT times (default 1) with 64 KiB reads,
 *       one line per read:  read I bytes B wall_ns W cpu_ns C
 *
 *   offsample-benchtool now
 *       CLOCK_MONOTONIC in ns (for shell scripts timing windows).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static int numeric(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* Read fd to the end; bytes read, or -1. */
static long long drain(int fd)
{
	long long total = 0;
	ssize_t r;

	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			return total;
		total += r;
	}
}

static int procpass(int passes, const char *file)
{
	char path[600];
	int p;

	for (p = 0; p < passes; p++) {
		unsigned long long w0 = now_ns(), c0 = cpu_ns();
		unsigned long threads = 0, failed = 0;
		long long bytes = 0, r;
		struct dirent *pe, *te;
		DIR *proc, *task;
		int fd;

		proc = opendir("/proc");
		if (!proc)
			return perror("/proc"), 1;
		while ((pe = readdir(proc))) {
			if (!numeric(pe->d_name))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
			task = opendir(path);
			if (!task)
				continue;	/* exited meanwhile */
			while ((te = readdir(task))) {
				if (!numeric(te->d_name))
					continue;
				snprintf(path, sizeof(path), "/proc/%s/task/%s/%s",
					 pe->d_name, te->d_name, file);
				threads++;
				fd = open(path, O_RDONLY | O_CLOEXEC);
				if (fd < 0) {
					failed++;
					continue;
				}
				r = drain(fd);
				if (r < 0)
					failed++;
				else
					bytes += r;
				close(fd);
			}
			closedir(task);
		}
		closedir(proc);
		printf("pass %d threads %lu failed %lu bytes %lld wall_ns %llu cpu_ns %llu\n",
		       p, threads, failed, bytes, now_ns() - w0, cpu_ns() - c0);
		fflush(stdout);
	}
	return 0;
}

static int readfile(const char *file, int repeat)
{
	int i, fd;

	for (i = 0; i < repeat; i++) {
		unsigned long long w0 = now_ns(), c0 = cpu_ns();
		long long bytes;

		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return perror(file), 1;
		bytes = drain(fd);
		close(fd);
		if (bytes < 0)
			return perror(file), 1;
		printf("read %d bytes %lld wall_ns %llu cpu_ns %llu\n",
		       i, bytes, now_ns() - w0, cpu_ns() - c0);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "procpass"))
		return procpass(argc > 2 ? atoi(argv[2]) : 5,
				argc > 3 ? argv[3] : "stack");
	if (argc >= 3 && !strcmp(argv[1], "read"))
		return readfile(argv[2], argc > 3 ? atoi(argv[3]) : 1);
	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", now_ns());
		return 0;
	}
	fprintf(stderr, "usage: offsample-benchtool procpass [PASSES] [FILE] | read FILE [REPEAT] | now\n");
	return 2;
}
