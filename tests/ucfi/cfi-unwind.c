// SPDX-License-Identifier: GPL-2.0
/*
 * cfi-unwind - module/ucfi.c's user-stack unwinder, compiled for user
 * space and run on a live process, to be compared with eu-stack
 * (tests/host/ucfi.bats).
 *
 *   cfi-unwind [-f] PID
 *
 * Stops every thread of PID (ptrace), reads its registers, and unwinds it
 * with the tables module/ucfi.c compiles from the files mapped
 * executable in /proc/PID/maps (-f: frame pointers only, no tables), the
 * stack read through /proc/PID/mem.  Prints, per thread, "TID N:" then
 * "#K 0xPC" lines, leaf first, then "cfi-frames N": how many of those
 * frames a CFI rule found (the module's user_cfi_frames); then lets the
 * threads go.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../module/ucfi.c"

#define MAX_MAPS	512
#define MAX_TIDS	1024

struct map {
	u64 start, end, off;
	char path[256];
	struct offs_cfi_table *t;
};

static struct map maps[MAX_MAPS];
static int nmaps, memfd, fp_only;

struct file_src {
	FILE *f;
};

static int file_read(void *ctx, u64 off, void *buf, size_t len)
{
	struct file_src *s = ctx;

	if (fseeko(s->f, (off_t)off, SEEK_SET))
		return -EIO;
	return fread(buf, 1, len, s->f) == len ? 0 : -EINVAL;
}

static struct offs_cfi_table *table_for(const char *path)
{
	struct offs_cfi_table *t = NULL;
	struct offs_cfi_src src = { .read = file_read };
	struct file_src fs;
	struct stat st;
	int i;

	for (i = 0; i < nmaps; i++)
		if (maps[i].t && !strcmp(maps[i].path, path))
			return maps[i].t;
	fs.f = fopen(path, "rb");
	if (!fs.f)
		return NULL;
	if (!fstat(fileno(fs.f), &st)) {
		src.ctx = &fs;
		src.size = st.st_size;
		if (offs_cfi_build(&src, &t, NULL))
			t = NULL;
	}
	fclose(fs.f);
	return t;
}

static const struct offs_cfi_rule *op_rule(void *ctx, u64 pc)
{
	u64 vaddr;
	int i;

	(void)ctx;
	if (fp_only)
		return NULL;
	for (i = 0; i < nmaps; i++)
		if (pc >= maps[i].start && pc < maps[i].end && maps[i].t)
			return offs_cfi_vaddr(maps[i].t, pc - maps[i].start + maps[i].off,
					      &vaddr) ? offs_cfi_lookup(maps[i].t, vaddr) : NULL;
	return NULL;
}

static int op_read(void *ctx, u64 addr, void *buf, size_t len)
{
	(void)ctx;
	return pread(memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

int main(int argc, char **argv)
{
	struct offs_unwind_ops ops = { .rule = op_rule, .read = op_read };
	static unsigned long ips[128];
	char path[64], line[512], perm[8];
	int tids[MAX_TIDS], ntids = 0, i, pid, st;
	struct user_regs_struct regs;
	struct dirent *de;
	unsigned int n, k;
	unsigned long long s, e, o;
	struct offs_unwind_out out;
	FILE *f;
	DIR *d;

	if (argc == 3 && !strcmp(argv[1], "-f")) {
		fp_only = 1;
		argv++;
	} else if (argc != 2) {
		fprintf(stderr, "usage: cfi-unwind [-f] PID\n");
		return 2;
	}
	pid = atoi(argv[1]);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(line, sizeof(line), f) && nmaps < MAX_MAPS) {
		struct map *m = &maps[nmaps];

		m->path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &s, &e, perm, &o,
			   m->path) < 4 || perm[2] != 'x' || m->path[0] != '/')
			continue;
		m->start = s;
		m->end = e;
		m->off = o;
		m->t = table_for(m->path);
		nmaps++;
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && ntids < MAX_TIDS)
		if (de->d_name[0] != '.')
			tids[ntids++] = atoi(de->d_name);
	if (d)
		closedir(d);
	for (i = 0; i < ntids; i++) {
		if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) ||
		    ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) ||
		    waitpid(tids[i], &st, __WALL) < 0) {
			perror("ptrace");
			return 1;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = open(path, O_RDONLY);
	for (i = 0; i < ntids; i++) {
		struct offs_unwind_regs r;

		if (ptrace(PTRACE_GETREGS, tids[i], 0, &regs))
			continue;
		r.ip = regs.rip;
		r.sp = regs.rsp;
		r.bp = regs.rbp;
		n = offs_cfi_unwind(&ops, &r, ips, 128, &out);
		printf("TID %d:\n", tids[i]);
		if (out.bad)
			fprintf(stderr, "cfi-unwind: TID %d: stack ends at call-frame information that cannot be followed\n",
				tids[i]);
		for (k = 0; k < n; k++)
			printf("#%u 0x%lx\n", k, ips[k]);
		printf("cfi-frames %u\n", out.cfi_frames);
	}
	for (i = 0; i < ntids; i++)
		ptrace(PTRACE_DETACH, tids[i], 0, 0);
	return 0;
}
