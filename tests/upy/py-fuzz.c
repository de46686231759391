// SPDX-License-Identifier: GPL-2.0
/*
 * py-fuzz - module/upy.c against forged memory: a live process's Python
 * structures, recorded page by page as the walk reads them, then damaged
 * at random and walked again, round after round.
 *
 *   py-fuzz PID ROUNDS [SEED]
 *
 * Each round overwrites 1-16 words of the recorded pages, four in five
 * among the words the clean pass read (random values, 0, -1, small
 * numbers, pointers into the recorded pages, a flipped bit) and runs every
 * step for every thread of PID on them.  Built with AddressSanitizer and
 * UndefinedBehaviorSanitizer by tests/host/upy.bats: any out-of-bounds
 * access, overflow or overlong loop (more reads than upy.h's bounds
 * allow, checked per call) ends it with exit status 1.  Prints
 * "rounds=N reads=N max_walk_reads=N max_code_reads=N".
 */
#define PY_DUMP_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "py-dump.c"

#define MAX_PAGES	8192
#define PG		4096UL

static struct page_rec {
	u64 base;
	bool bad;		/* not readable in the process */
	u8 live[PG];		/* as read */
	u8 cur[PG];		/* this round's */
} *pages;
static unsigned int npages;
static int memfd;
static bool recording;
static u64 reads;
/* The words the clean pass read: most damage goes there. */
#define MAX_HOT		65536
static u64 hot[MAX_HOT];
static unsigned int nhot;

static struct page_rec *page_of(u64 base)
{
	unsigned int i;

	for (i = 0; i < npages; i++)
		if (pages[i].base == base)
			return &pages[i];
	if (!recording || npages == MAX_PAGES)
		return NULL;
	pages[npages].base = base;
	pages[npages].bad = pread(memfd, pages[npages].live, PG, (off_t)base) !=
			    (ssize_t)PG;
	memcpy(pages[npages].cur, pages[npages].live, PG);
	return &pages[npages++];
}

static int img_read(void *ctx, u64 addr, void *buf, size_t len)
{
	u8 *out = buf;
	size_t done = 0;

	(void)ctx;
	reads++;
	if (len % 8 || addr + len < addr)
		return -EFAULT;
	for (done = 0; recording && done < len && nhot < MAX_HOT; done += 8)
		hot[nhot++] = addr + done;
	done = 0;
	while (done < len) {
		u64 a = addr + done, base = a & ~(PG - 1);
		size_t n = min_t(size_t, len - done, PG - (a - base));
		struct page_rec *p = page_of(base);

		if (!p || p->bad)
			return -EFAULT;
		memcpy(out + done, p->cur + (a - base), n);
		done += n;
	}
	return 0;
}

static u64 rng;

static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static u64 max_walk, max_code, max_ts;

static void fail(const char *what, u64 n)
{
	fprintf(stderr, "py-fuzz: %s took %llu reads, over its bound\n", what,
		(unsigned long long)n);
	exit(1);
}

/* Every step for thread tid; the reads of each call checked. */
static void walk_all(const struct offs_py_layout *l,
		     const struct offs_py_syms *s, const int *tids, int ntids)
{
	static struct offs_py_frame f[128];
	struct offs_py_mem m = { .read = img_read };
	struct offs_py_code c;
	unsigned int n, i;
	bool truncated;
	int t, err;
	u64 ts, r0;

	for (t = 0; t < ntids; t++) {
		r0 = reads;
		err = offs_py_tstate(&m, l, s->runtime, tids[t], &ts);
		if (reads - r0 > 2 + 2 * OFFS_PY_MAX_INTERPS +
				 2 * OFFS_PY_MAX_THREADS)
			fail("offs_py_tstate", reads - r0);
		max_ts = max(max_ts, reads - r0);
		if (err)
			continue;
		r0 = reads;
		{
			struct offs_py_gil g;
			u64 tid;

			if (!offs_py_gil(&m, l, s->runtime, ts, &g) && g.holder)
				offs_py_ts_tid(&m, l, g.holder, &tid);
		}
		if (reads - r0 > 4)
			fail("offs_py_gil", reads - r0);
		r0 = reads;
		n = offs_py_walk(&m, l, ts, f, 128, &truncated, &err);
		if (reads - r0 > 2 * 128 + 4 || n > 128)
			fail("offs_py_walk", reads - r0);
		max_walk = max(max_walk, reads - r0);
		for (i = 0; i < n; i++) {
			r0 = reads;
			err = offs_py_code(&m, l, s->code_type, s->unicode_type,
					   &f[i], &c);
			/* A header, two names, the location table. */
			if (reads - r0 > 1 + 2 * (1 + OFFS_PY_FILE_MAX * 4 / 64 + 1) +
					 1 + OFFS_PY_MAX_LINETABLE / 64 + 1)
				fail("offs_py_code", reads - r0);
			max_code = max(max_code, reads - r0);
			if (!err && (strlen(c.qualname) >= OFFS_PY_NAME_MAX ||
				     strlen(c.file) >= OFFS_PY_FILE_MAX))
				fail("a name past its buffer", 0);
		}
	}
}

int main(int argc, char **argv)
{
	struct offs_py_layout l;
	struct offs_py_syms s;
	struct offs_py_mem m = { .read = img_read };
	u64 dbg[OFFS_PY_DEBUG_WORDS];
	unsigned long rounds, r;
	int tids[256], ntids = 0, pid;
	char path[64];
	struct dirent *d;
	DIR *dir;

	if (argc < 3) {
		fprintf(stderr, "usage: py-fuzz PID ROUNDS [SEED]\n");
		return 2;
	}
	pid = atoi(argv[1]);
	rounds = strtoul(argv[2], NULL, 0);
	rng = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x9e3779b97f4a7c15ULL;
	if (!rng)
		rng = 1;
	pages = calloc(MAX_PAGES, sizeof(*pages));
	if (!pages || find_python(pid, &s)) {
		fprintf(stderr, "py-fuzz: %d: no CPython 3.11-3.13 mapped\n", pid);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (memfd < 0 || !dir) {
		perror(path);
		return 1;
	}
	while ((d = readdir(dir)) && ntids < 256)
		if (d->d_name[0] != '.')
			tids[ntids++] = atoi(d->d_name);
	closedir(dir);

	/* Record: one clean pass reads in every page the walk touches. */
	recording = true;
	if (img_read(NULL, s.runtime, dbg, sizeof(dbg)) ||
	    offs_py_layout_init(&l, s.version, dbg)) {
		fprintf(stderr, "py-fuzz: %d: no layout\n", pid);
		return 1;
	}
	(void)m;
	walk_all(&l, &s, tids, ntids);
	recording = false;

	for (r = 0; r < rounds; r++) {
		unsigned int i, k = 1 + rnd() % 16;

		for (i = 0; i < npages; i++)
			memcpy(pages[i].cur, pages[i].live, PG);
		for (i = 0; i < k; i++) {
			struct page_rec *p = &pages[rnd() % npages];
			u64 v, off = (rnd() % (PG / 8)) * 8;

			if (nhot && rnd() % 5) {
				u64 a = hot[rnd() % nhot] & ~7ULL;

				p = page_of(a & ~(PG - 1));
				off = a & (PG - 1) & ~7ULL;
				if (!p || off > PG - 8)
					continue;
			}

			switch (rnd() % 6) {
			case 0: v = rnd(); break;
			case 1: v = 0; break;
			case 2: v = ~0ULL; break;
			case 3: v = rnd() % 512; break;
			case 4: v = pages[rnd() % npages].base + (rnd() % PG & ~7UL); break;
			default: v = offs_py_get64((const u64 *)p->cur, off) ^ (1ULL << (rnd() % 64)); break;
			}
			memcpy(p->cur + off, &v, 8);
		}
		/* The layout too comes from the process (3.13). */
		if (img_read(NULL, s.runtime, dbg, sizeof(dbg)) ||
		    offs_py_layout_init(&l, s.version, dbg))
			continue;
		walk_all(&l, &s, tids, ntids);
	}
	printf("rounds=%lu pages=%u hot=%u reads=%llu max_tstate_reads=%llu max_walk_reads=%llu max_code_reads=%llu\n",
	       rounds, npages, nhot, (unsigned long long)reads,
	       (unsigned long long)max_ts, (unsigned long long)max_walk,
	       (unsigned long long)max_code);
	return 0;
}
