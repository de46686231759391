// SPDX-License-Identifier: GPL-2.0
/*
 * offs-memhog - hold the guest near out-of-memory for a while.
 *
 *   offs-memhog [-d SECONDS] [-l LEAVE_MB]
 *
 * Maps and touches anonymous memory in 8 MiB steps until MemAvailable
 * drops below LEAVE_MB (default 48), then keeps re-touching it (and
 * grabbing more whenever memory is freed) for SECONDS (default 10), so
 * every allocation in the guest runs into reclaim.  It volunteers to be
 * the OOM killer's first choice (oom_score_adj 1000).  Prints "key value"
 * lines: peak_mb, min_available_mb, seconds.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define STEP (8UL << 20)
#define MAXCHUNKS 4096

static long avail_mb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char *chunks[MAXCHUNKS];
	double duration = 10, t0;
	long leave = 48, a, min_avail = 1L << 30;
	int c, n = 0, i;
	FILE *f;

	while ((c = getopt(argc, argv, "d:l:")) != -1) {
		switch (c) {
		case 'd': duration = atof(optarg); break;
		case 'l': leave = atol(optarg); break;
		default:
			fprintf(stderr, "usage: offs-memhog [-d SECONDS] [-l LEAVE_MB]\n");
			return 2;
		}
	}
	f = fopen("/proc/self/oom_score_adj", "w");
	if (f) {
		fputs("1000", f);
		fclose(f);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now();
	while (now() - t0 < duration) {
		a = avail_mb();
		if (a >= 0 && a < min_avail)
			min_avail = a;
		if (a > leave && n < MAXCHUNKS) {
			chunks[n] = mmap(NULL, STEP, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (chunks[n] != MAP_FAILED) {
				memset(chunks[n], n + 1, STEP);
				n++;
				continue;
			}
		}
		/* Hold: touch everything again, one page per 4 KiB. */
		for (i = 0; i < n; i++) {
			size_t off;

			for (off = 0; off < STEP; off += 4096)
				chunks[i][off]++;
		}
		usleep(20000);
	}
	printf("peak_mb %lu\nmin_available_mb %ld\nseconds %.1f\n",
	       n * (STEP >> 20), min_avail, now() - t0);
	return 0;
}
