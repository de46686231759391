// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-cfilib.so - a shared library whose only job is to wait in
 * libc under three frames of its own, built like distribution software
 * (-O2, no frame pointers, .eh_frame only).  tests/guest/56-cfi.bats loads
 * many copies of it into offsample-cfihost, then damages the copies'
 * .eh_frame, .eh_frame_hdr and ELF headers on disk while they are mapped:
 * the module compiles its tables from those bytes and unwinds through
 * them.
 *
 *   cfl_outer(fd) -> cfl_middle(fd) -> cfl_inner(fd) -> read(fd)
 */
#include <unistd.h>

#define EXPORT __attribute__((noinline, visibility("default")))

/* Keeps each call from being a tail call, whatever the optimiser does. */
volatile int cfl_sink;

EXPORT long cfl_inner(int fd)
{
	char c;
	long n = read(fd, &c, 1);

	cfl_sink++;
	return n;
}

EXPORT long cfl_middle(int fd)
{
	long n = cfl_inner(fd);

	cfl_sink++;
	return n;
}

EXPORT long cfl_outer(int fd)
{
	long n = cfl_middle(fd);

	cfl_sink++;
	return n;
}
