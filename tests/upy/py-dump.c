// SPDX-License-Identifier: GPL-2.0
/*
 * py-dump - module/upy.c compiled for user space: the Python frames of a
 * live process, read as the module reads them, through /proc/PID/mem.
 *
 *   py-dump -e FILE      the ELF scan: runtime=ADDR size=N code_type=ADDR
 *                        unicode_type=ADDR eval=START-END version=HEX
 *                        (ELF virtual addresses); exit 1 if not CPython
 *   py-dump PID          every Python thread of PID:
 *                          thread TID
 *                          QUALNAME<TAB>FILE<TAB>LINE<TAB>ENTRY
 *                        innermost frame first; ENTRY is 1 on the
 *                        outermost frame of each C-level evaluation;
 *                        then "gil ADDR holder TID" (TID 0: not held)
 *
 * Used by tests/host/upy.bats, which compares it with py-spy dump.  The
 * process is not stopped: run it on threads that wait.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include "../../module/upy.c"

static int file_read(void *ctx, u64 off, void *buf, size_t len)
{
	int fd = *(int *)ctx;

	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EINVAL;
}

static int mem_read(void *ctx, u64 addr, void *buf, size_t len)
{
	int fd = *(int *)ctx;

	if (len % 8)
		return -EINVAL;
	return pread(fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

static int scan_fd(int fd, struct offs_py_syms *syms)
{
	struct offs_py_src src = { .read = file_read, .ctx = &fd };
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	src.size = st.st_size;
	return offs_py_elf_scan(&src, syms);
}

/* The load bias of a mapping of fd whose offset-0 page is at start. */
static int load_bias(int fd, u64 start, u64 *bias)
{
	struct elf64_hdr eh;
	struct elf64_phdr ph;
	unsigned int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*bias = start - (ph.p_vaddr & ~0xfffULL);
			return 0;
		}
	}
	return -1;
}

static int dump_elf(const char *path)
{
	struct offs_py_syms s;
	int fd = open(path, O_RDONLY), err;

	if (fd < 0) {
		perror(path);
		return 2;
	}
	err = scan_fd(fd, &s);
	close(fd);
	if (err) {
		fprintf(stderr, "py-dump: %s: not a CPython 3.11-3.13 (%s)\n",
			path, strerror(-err));
		return 1;
	}
	printf("runtime=%#llx size=%llu code_type=%#llx unicode_type=%#llx eval=%#llx-%#llx version=%#x\n",
	       (unsigned long long)s.runtime,
	       (unsigned long long)s.runtime_size,
	       (unsigned long long)s.code_type,
	       (unsigned long long)s.unicode_type,
	       (unsigned long long)s.eval_start,
	       (unsigned long long)s.eval_end, s.version);
	return 0;
}

/* Find the interpreter among PID's mappings: its symbols, relocated. */
static int find_python(int pid, struct offs_py_syms *s)
{
	char path[256], line[4096];
	unsigned long long start, end, off;
	FILE *maps;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "r");
	if (!maps)
		return -1;
	while (found && fgets(line, sizeof(line), maps)) {
		u64 bias;
		int fd;

		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3 ||
		    off || !strchr(line, '/'))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx",
			 pid, start, end);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		if (!scan_fd(fd, s) && !load_bias(fd, start, &bias)) {
			s->runtime += bias;
			s->code_type += bias;
			s->unicode_type += bias;
			s->eval_start += bias;
			s->eval_end += bias;
			found = 0;
		}
		close(fd);
	}
	fclose(maps);
	return found;
}

static void dump_thread(const struct offs_py_mem *m,
			const struct offs_py_layout *l,
			const struct offs_py_syms *s, int tid)
{
	static struct offs_py_frame f[128];
	struct offs_py_code c;
	unsigned int n, i;
	bool truncated;
	int err, printed = 0;
	u64 ts;

	err = offs_py_tstate(m, l, s->runtime, tid, &ts);
	if (err)
		return;
	printf("thread %d\n", tid);
	n = offs_py_walk(m, l, ts, f, 128, &truncated, &err);
	for (i = 0; i < n; i++) {
		err = offs_py_code(m, l, s->code_type, s->unicode_type, &f[i],
				   &c);
		if (err == -ENOENT) {
			/* Not shown: its entry mark goes to the frame before. */
			if (f[i].last && printed)
				printf("\t\t\t1\n");
			continue;
		}
		if (err) {
			printf("[fault]\t-\t0\t0\n");
			break;
		}
		printf("%s\t%s\t%u\t%u\n", c.qualname, c.file, c.line, f[i].last);
		printed++;
	}
	if (truncated)
		printf("[truncated]\t-\t0\t0\n");
}

#ifndef PY_DUMP_NO_MAIN
int main(int argc, char **argv)
{
	struct offs_py_layout l;
	struct offs_py_syms s;
	struct offs_py_mem m = { .read = mem_read };
	u64 dbg[OFFS_PY_DEBUG_WORDS];
	char path[64];
	struct dirent *d;
	DIR *dir;
	int pid, fd, err;

	if (argc == 3 && !strcmp(argv[1], "-e"))
		return dump_elf(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: py-dump PID | py-dump -e FILE\n");
		return 2;
	}
	pid = atoi(argv[1]);
	if (find_python(pid, &s)) {
		fprintf(stderr, "py-dump: %d: no CPython 3.11-3.13 mapped\n", pid);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	m.ctx = &fd;
	err = m.read(m.ctx, s.runtime, dbg, sizeof(dbg));
	if (!err)
		err = offs_py_layout_init(&l, s.version, dbg);
	if (err) {
		fprintf(stderr, "py-dump: %d: version %#x: no layout (%s)\n", pid,
			s.version, strerror(-err));
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		perror(path);
		return 1;
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			dump_thread(&m, &l, &s, atoi(d->d_name));
	closedir(dir);
	/* The GIL of the main thread's interpreter. */
	{
		struct offs_py_gil g;
		u64 ts, tid = 0;

		if (offs_py_tstate(&m, &l, s.runtime, pid, &ts) ||
		    offs_py_gil(&m, &l, s.runtime, ts, &g) ||
		    (g.holder && offs_py_ts_tid(&m, &l, g.holder, &tid))) {
			printf("gil unreadable\n");
			return 1;
		}
		printf("gil %#llx holder %llu\n", (unsigned long long)g.addr,
		       (unsigned long long)tid);
	}
	return 0;
}
#endif
