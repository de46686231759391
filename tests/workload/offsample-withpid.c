// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-withpid PID COMMAND [ARG...]
 *
 * Run COMMAND as a child process whose pid is exactly PID (clone3 with
 * set_tid, Linux 5.5+, needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE):
 * print "pid PID" on standard output once it exists, wait for it and exit
 * with its status (128 + signal number if a signal ended it).  Used by the
 * pid-reuse test of tests/guest/45-cache.bats; unlike writing
 * /proc/sys/kernel/ns_last_pid it needs no CONFIG_CHECKPOINT_RESTORE and
 * cannot lose the pid to another fork in between.
 *
 * Exit status: COMMAND's; 125 if the pid could not be had (errno printed:
 * EEXIST if it is in use), 126 bad usage, 127 COMMAND not found.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

int main(int argc, char **argv)
{
	struct clone_args args;
	pid_t want, pid;
	char *end;
	long v;
	int status;

	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		printf("usage: %s PID COMMAND [ARG...]\n", argv[0]);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: %s PID COMMAND [ARG...]\n", argv[0]);
		return 126;
	}
	errno = 0;
	v = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || v < 2 || v > INT32_MAX) {
		fprintf(stderr, "%s: bad pid '%s'\n", argv[0], argv[1]);
		return 126;
	}
	want = (pid_t)v;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uint64_t)(uintptr_t)&want;
	args.set_tid_size = 1;
	fflush(stdout);
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		fprintf(stderr, "%s: clone3 with pid %d: %s\n", argv[0],
			(int)want, strerror(errno));
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[2],
			strerror(errno));
		_exit(127);
	}
	printf("pid %d\n", (int)pid);
	fflush(stdout);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("waitpid");
			return 125;
		}
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
