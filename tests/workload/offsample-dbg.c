// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-dbg: a program whose own functions only its debug
 * information names once it is stripped (tests/guest/63-debuginfo.bats,
 * built four ways by tests/workload/mk-dbg.sh).  It says "ready PID" and
 * then sleeps forever under main -> dbg_top -> dbg_static_caller ->
 * dbg_middle -> dbg_static_leaf; two of them are static (in no .dynsym).
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline, noclone)) static void dbg_static_leaf(void)
{
	struct timespec ts = { 0, 100000000 };

	for (;;) {
		nanosleep(&ts, NULL);
		sink++;
	}
}

__attribute__((noinline, noclone)) void dbg_middle(void)
{
	dbg_static_leaf();
	sink++;
}

__attribute__((noinline, noclone)) static void dbg_static_caller(void)
{
	dbg_middle();
	sink++;
}

__attribute__((noinline, noclone)) void dbg_top(void)
{
	dbg_static_caller();
	sink++;
}

int main(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	dbg_top();
	return 0;
}
