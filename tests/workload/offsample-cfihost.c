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
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef long (*wait_fn)(int fd);

struct job {
	wait_fn fn;
	int fd;
};

static void *run(void *arg)
{
	struct job *j = arg;

	j->fn(j->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int i, loaded = 0, refused = 0;

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
