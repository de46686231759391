// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-insnmark - the two marks of the insnprof QEMU plugin
 * (insnprof.c) around a measurement: execute the one instruction at the
 * mark address (a page mapped there holding a ret), which the plugin sees
 * being executed.  Marks once, prints "marked", waits for SIGUSR1, marks
 * again and exits: its own start and exit fall outside the two marks.
 * Run in the guest by tests/bench/insnprof-guest.sh.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

#include "mark.h"

int main(void)
{
	void (*mark)(void);
	unsigned char *p;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	p = mmap((void *)MARK_VADDR, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (void *)MARK_VADDR) {
		perror("offsample-insnmark: mmap");
		return 1;
	}
	p[0] = 0xc3;	/* ret */
	mark = (void (*)(void))p;
	mark();
	printf("marked\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	mark();
	return 0;
}
