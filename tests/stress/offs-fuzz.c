// SPDX-License-Identifier: GPL-2.0
/*
 * offs-fuzz - hostile input for every writable offsample file.
 *
 *   offs-fuzz [-n INPUTS] [-s SEED] [-c CGROUP_ROOT] [-v]
 *
 * Writes INPUTS (default 10000) generated inputs, each with one write(2)
 * on a freshly opened file, to the module parameters in
 * /sys/module/offsample/parameters and to /proc/offsample/control (and
 * tries writes on the read-only /proc files and odd reads of them).
 * Inputs: random bytes, boundary, huge, negative and malformed numbers,
 * empty and over-long strings, word lists, cgroup paths, mutations of
 * valid values.
 *
 * Every input is checked against a model of the documented parsing
 * (offsample(4) "PARAMETERS", params.c): a rejected input must fail with the
 * documented errno and leave the value unchanged; an accepted one must
 * read back exactly as documented ("19\n" -> 19, "y" -> Y, key lists in
 * canonical order ...).  The model also knows what sysfs does before the
 * module sees a value: a write is cut at 4096 bytes and at the first NUL
 * byte, and an empty write returns 0 without calling the module.
 *
 * The module must stay healthy: every 500 inputs the /proc files are read
 * in full; at the end sane parameters are restored and the sampler must
 * tick.  Prints "key value" lines, with the time spent on each target
 * and on the health checks; exit status 1 on any mismatch.  SIGTERM or
 * SIGINT (timeout(1)) ends it after the current input: it restores, prints
 * what it did so far with "interrupted 1" and exits 1.  One input that
 * takes more than 300 s is a hang: it says which and exits 3.
 *
 * max_stacks, thread_cache and cfi_cache_mb accept at most the limits
 * the module derives from RAM (max_stacks_limit, thread_cache_limit,
 * cfi_cache_mb_limit in stats).
 *
 * group= is set at load time only: every write to it must fail with
 * EACCES.  Paths through a cgroup *file* ("/cgroup.procs/x") must fail
 * with ENOTDIR (they used to crash the kernel while the file was open:
 * tests/stress/repro-cgroup-file-walk.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PARAMS	"/sys/module/offsample/parameters"
#define PROC	"/proc/offsample"
#define SYSFS_MAX	4096
#define BUF_MAX	(70 * 1024)

enum kind { K_UINT, K_BOOL, K_KEY, K_GROUP, K_CGROUP, K_CONTROL, K_RO };

struct target {
	const char *name;
	enum kind kind;
	unsigned long long min, max;
	const char *restore;		/* the value left at the end */
	unsigned long inputs, accepted, rejected;
	double secs;			/* time spent writing and checking */
};

static struct target targets[] = {
	{ .name = "enabled", .kind = K_BOOL, .min = 0, .max = 1, .restore = "1" },
	{ .name = "hz", .kind = K_UINT, .min = 1, .max = 1000, .restore = "19" },
	{ .name = "max_stacks", .kind = K_UINT, .min = 16, .max = 1048576, .restore = "8192" },
	{ .name = "max_depth", .kind = K_UINT, .min = 1, .max = 128, .restore = "48" },
	{ .name = "thread_cache", .kind = K_UINT, .min = 0, .max = 4194304, .restore = "65536" },
	{ .name = "kthreads", .kind = K_BOOL, .min = 0, .max = 1, .restore = "1" },
	{ .name = "key", .kind = K_KEY, .min = 0, .max = 0, .restore = "comm" },
	{ .name = "user_stacks", .kind = K_BOOL, .min = 0, .max = 1, .restore = "1" },
	{ .name = "max_user_depth", .kind = K_UINT, .min = 1, .max = 128, .restore = "32" },
	{ .name = "max_retired", .kind = K_UINT, .min = 1, .max = 16, .restore = "4" },
	{ .name = "threads_rate", .kind = K_UINT, .min = 1, .max = 10000000, .restore = "20000" },
	{ .name = "cfi_cache_mb", .kind = K_UINT, .min = 0, .max = 65536, .restore = "64" },
	{ .name = "blockers", .kind = K_BOOL, .min = 0, .max = 1, .restore = "1" },
	{ .name = "oncpu", .kind = K_BOOL, .min = 0, .max = 1, .restore = "1" },
	{ .name = "critical_pct", .kind = K_UINT, .min = 1, .max = 100, .restore = "50" },
	{ .name = "kstack_cache", .kind = K_BOOL, .min = 0, .max = 1, .restore = "1" },
	{ .name = "group", .kind = K_GROUP, .min = 0, .max = 0, .restore = NULL },
	{ .name = "cgroup", .kind = K_CGROUP, .min = 0, .max = 0, .restore = "" },
	{ .name = "control", .kind = K_CONTROL, .min = 0, .max = 0, .restore = NULL },
	{ .name = "stacks", .kind = K_RO, .min = 0, .max = 0, .restore = NULL },
	{ .name = "drain", .kind = K_RO, .min = 0, .max = 0, .restore = NULL },
	{ .name = "threads", .kind = K_RO, .min = 0, .max = 0, .restore = NULL },
	{ .name = "stats", .kind = K_RO, .min = 0, .max = 0, .restore = NULL },
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))
#define NPARAMS	18	/* targets[0..NPARAMS) are module parameters */

static const char *cgroot = "/sys/fs/cgroup";
static bool verbose;
static volatile sig_atomic_t stop;
#define HANG_SECS 300	/* one input or health check longer than this: hung */
static char hang_msg[128];	/* what SIGALRM reports: the current input */
static unsigned long mismatches, health_checks, reads_odd;
static unsigned long long rng_state = 88172645463325252ULL;

static unsigned long long rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned long long rndn(unsigned long long n)
{
	return n ? rnd() % n : 0;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "offs-fuzz: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void path_of(const struct target *t, char *p, size_t len)
{
	if (t->kind == K_CONTROL || t->kind == K_RO)
		snprintf(p, len, PROC "/%s", t->name);
	else
		snprintf(p, len, PARAMS "/%s", t->name);
}

/* Whole contents of a small file, NUL-terminated; -1 on error. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1 &&
	       (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* Read a whole /proc file and throw it away; bytes read or -1. */
static long long read_all(const char *path)
{
	static char buf[65536];
	long long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

static long long stat_get(const char *name)
{
	static char buf[16384];
	size_t nl = strlen(name);
	char *p;

	if (read_small(PROC "/stats", buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, nl) && (p[nl] == ' ' || p[nl] == '\t'))
			return strtoll(p + nl, NULL, 10);
	return -1;
}

/* One write(2) of buf on a fresh descriptor.  Returns result, sets *err. */
static ssize_t write_once(const char *path, const char *buf, size_t len,
			  int *err)
{
	ssize_t r;
	int fd = open(path, O_WRONLY);

	*err = 0;
	if (fd < 0) {
		*err = errno;
		return -2;
	}
	r = write(fd, buf, len);
	if (r < 0)
		*err = errno;
	close(fd);
	return r;
}

/* ---- the model of the kernel's parsing ---- */

static bool k_isspace(unsigned char c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0xa0;
}

/* strim() into out (size >= strlen(s) + 1). */
static void k_strim(const char *s, char *out)
{
	size_t n = strlen(s);

	while (n && k_isspace(s[n - 1]))
		n--;
	while (n && k_isspace(*s)) {
		s++;
		n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

/* kstrtoull(s, 10): 0 or -EINVAL/-ERANGE. */
static int k_strtoull(const char *s, unsigned long long *res)
{
	unsigned long long v = 0;
	bool overflow = false;
	int digits = 0;

	if (*s == '+')
		s++;
	while (*s >= '0' && *s <= '9') {
		unsigned int d = *s - '0';

		if (v > (ULLONG_MAX - d) / 10)
			overflow = true;
		v = v * 10 + d;
		digits++;
		s++;
	}
	if (overflow)
		return -ERANGE;
	if (!digits)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = v;
	return 0;
}

static int k_strtouint(const char *s, unsigned int *res)
{
	unsigned long long v;
	int err = k_strtoull(s, &v);

	if (err)
		return err;
	if (v > UINT_MAX)
		return -ERANGE;
	*res = v;
	return 0;
}

/*
 * kstrtobool(): y/Y/1, n/N/0, on/off; t/T/f/F not on every kernel (5.10
 * refuses them: the running kernel is asked at start, bool_tf).
 */
static bool bool_tf = true;

static int k_strtobool(const char *s, bool *res)
{
	switch (s[0]) {
	case 't': case 'T':
		if (!bool_tf)
			return -EINVAL;
		/* fall through */
	case 'y': case 'Y': case '1':
		*res = true;
		return 0;
	case 'f': case 'F':
		if (!bool_tf)
			return -EINVAL;
		/* fall through */
	case 'n': case 'N': case '0':
		*res = false;
		return 0;
	case 'o': case 'O':
		if (s[1] == 'n' || s[1] == 'N') {
			*res = true;
			return 0;
		}
		if (s[1] == 'f' || s[1] == 'F') {
			*res = false;
			return 0;
		}
	}
	return -EINVAL;
}

struct expect {
	bool accept;
	int err;			/* errno when rejected */
	char value[512];		/* read-back when accepted */
};

static void model_key(const char *v, struct expect *e)
{
	static const char *names[] = { "comm", "pid", "tid", "tname", "wobj" };
	char buf[64], *s, *tok;
	unsigned int fields = 0, i;

	e->accept = false;
	e->err = EINVAL;
	if (strlen(v) >= sizeof(buf))
		return;
	k_strim(v, buf);
	s = buf;
	if (!*s)
		return;
	while ((tok = strsep(&s, ",+")) != NULL) {
		for (i = 0; i < 5; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == 5)
			return;
		if (i)
			fields |= 1U << i;
	}
	strcpy(e->value, "comm");
	for (i = 1; i < 5; i++)
		if (fields & (1U << i)) {
			strcat(e->value, ",");
			strcat(e->value, names[i]);
		}
	strcat(e->value, "\n");
	e->accept = true;
}

/* group= is read-only once loaded (0444): open(O_WRONLY) fails, EACCES. */
static void model_group(const char *v, struct expect *e)
{
	(void)v;
	e->accept = false;
	e->err = EACCES;
}

/*
 * The module resolves the path one component at a time (empty ones
 * skipped; "." and ".." are ordinary, absent names in kernfs): ENOENT for
 * a missing component, ENOTDIR as soon as one is not a directory.
 */
static void model_cgroup(const char *v, struct expect *e)
{
	char buf[256], copy[256], real[4096], *s, *comp;
	struct stat st;

	e->accept = false;
	e->err = EINVAL;
	if (strlen(v) >= sizeof(buf))
		return;
	k_strim(v, buf);
	if (!*buf || !strcmp(buf, "/")) {
		e->accept = true;
		strcpy(e->value, "\n");
		return;
	}
	strcpy(copy, buf);
	snprintf(real, sizeof(real), "%s", cgroot);
	s = copy;
	while ((comp = strsep(&s, "/")) != NULL) {
		if (!*comp)
			continue;
		if (!strcmp(comp, ".") || !strcmp(comp, "..") ||
		    strlen(real) + strlen(comp) + 2 > sizeof(real)) {
			e->err = ENOENT;
			return;
		}
		strcat(real, "/");
		strcat(real, comp);
		if (lstat(real, &st)) {
			e->err = ENOENT;
			return;
		}
		if (!S_ISDIR(st.st_mode)) {
			e->err = ENOTDIR;
			return;
		}
	}
	e->accept = true;
	if (!buf[strspn(buf, "/")])	/* only slashes: no restriction */
		strcpy(e->value, "\n");
	else
		snprintf(e->value, sizeof(e->value), "%s\n", buf);
}

static void model(const struct target *t, const char *v, struct expect *e)
{
	unsigned int u;
	bool b;

	memset(e, 0, sizeof(*e));
	switch (t->kind) {
	case K_UINT:
		if (k_strtouint(v, &u) || u < t->min || u > t->max) {
			e->err = EINVAL;	/* ERANGE is reported as EINVAL */
			return;
		}
		e->accept = true;
		snprintf(e->value, sizeof(e->value), "%u\n", u);
		return;
	case K_BOOL:
		if (k_strtobool(v, &b)) {
			e->err = EINVAL;
			return;
		}
		e->accept = true;
		strcpy(e->value, b ? "Y\n" : "N\n");
		return;
	case K_KEY:
		model_key(v, e);
		return;
	case K_GROUP:
		model_group(v, e);
		return;
	case K_CGROUP:
		model_cgroup(v, e);
		return;
	default:
		return;
	}
}

/* ---- input generation ---- */

static char in[BUF_MAX];

static const char *words[] = {
	"", "y", "n", "Y", "N", "yes", "no", "on", "off", "of", "o", "oN",
	"OFF", "true", "false", "t", "f", "1", "0", "2", "-1", "-0", "+1",
	"reset", "reset\n", "RESET", "resett", "reset\n\n", " reset",
	"reset ", "drain", "comm", "pid", "tid", "tname", "wobj", "pid,tid",
	"comm,pid,tid,tname,wobj", "wobj+pid", ",", ",,", "+", "pid,",
	",pid", "pid,,tid", "PID", "comm,comm", "pid tid", "pid;tid",
	"pid\ttid", " pid ", "pid\n", "\n", "\n\n", " ", "\t", "\xa0pid\xa0",
	"/", "//", "/.", "/..", "..", ".", "/offs-fuzz", "/offs-fuzz/",
	"offs-fuzz/a", "/offs-fuzz/a/b", "/offs-fuzz//a//b/", "/offs-fuzz/a/b/c",
	"/offs-fuzz/../offs-fuzz", "/no-such-cgroup", "/offs-fuzz/zz",
	"/offs-fuzz\n", "cgroup.procs", "/cgroup.procs", "/offs-fuzz/cgroup.procs",
	"/offs-fuzz/a/cgroup.type", "/offs-fuzz/a/cgroup.procs/",
	"4294967295", "4294967294", "4294967296", "18446744073709551615",
	"18446744073709551616", "99999999999999999999999999999999",
	"0x10", "010", "1e3", "1.5", "19 20", "19,20", "١٩",
	"%s%s%s%n", "\\x00", "\x01\x02\x03", "\xff\xfe", "nan", "inf",
};

static const unsigned long long interesting[] = {
	0, 1, 2, 7, 9, 15, 16, 17, 19, 31, 32, 33, 47, 48, 49, 99, 100,
	127, 128, 129, 255, 256, 999, 1000, 1001, 4095, 4096, 8191, 8192,
	65535, 65536, 65537, 1048575, 1048576, 1048577, 4194303, 4194304,
	4194305, 2147483647ULL, 2147483648ULL, 4294967294ULL, 4294967295ULL,
	4294967296ULL, 9223372036854775807ULL, 9223372036854775808ULL,
	18446744073709551615ULL,
};

/* Append formatted text to in[] at *len. */
static void addf(size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(in + *len, BUF_MAX - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < BUF_MAX - *len ? (size_t)n : BUF_MAX - *len - 1;
}

static size_t gen_number(const struct target *t)
{
	unsigned long long v;
	size_t len = 0;
	unsigned int i;

	switch (rndn(6)) {
	case 0:
		v = interesting[rndn(sizeof(interesting) / sizeof(interesting[0]))];
		break;
	case 1:
		v = t->min + rndn(t->max - t->min + 2);
		break;
	case 2:
		v = (t->min ? t->min : 1) - 1 + rndn(3);
		break;
	case 3:
		v = t->max - 1 + rndn(3);
		break;
	case 4:
		v = rnd() & 0xffffffffULL;
		break;
	default:
		v = rnd();
		break;
	}
	switch (rndn(14)) {
	case 0: addf(&len, "+%llu", v); break;
	case 1: addf(&len, "-%llu", v); break;
	case 2: addf(&len, "%0*llu", (int)(2 + rndn(30)), v); break;
	case 3: addf(&len, " %llu", v); break;
	case 4: addf(&len, "%llu ", v); break;
	case 5: addf(&len, "%llu\n\n", v); break;
	case 6: addf(&len, "%llu", v); in[len++] = '\0'; addf(&len, "junk"); break;
	case 7: addf(&len, "0x%llx", v); break;
	case 8: addf(&len, "%llu.%u", v, (unsigned int)rndn(10)); break;
	case 9:
		for (i = 0, len = 0; i < 20 + rndn(300); i++)
			in[len++] = '0' + rndn(10);
		break;
	case 10: addf(&len, "%llu\t", v); break;
	case 11: addf(&len, "%lld", (long long)v); break;
	case 12: addf(&len, "%llu", v); break;
	default: addf(&len, "%llu\n", v); break;
	}
	return len;
}

static size_t gen_random_bytes(void)
{
	static const size_t lens[] = { 1, 2, 3, 8, 15, 16, 17, 63, 64, 65, 255,
		256, 257, 4095, 4096, 4097, 8192, BUF_MAX - 1 };
	size_t len, i;

	len = rndn(4) ? rndn(40) : lens[rndn(sizeof(lens) / sizeof(lens[0]))];
	for (i = 0; i < len; i++)
		in[i] = rndn(3) ? (char)rndn(256) : "0123456789ynYN\n ,+-/x"[rndn(22)];
	return len;
}

static size_t gen_long(void)
{
	static const size_t lens[] = { 15, 16, 17, 63, 64, 65, 255, 256, 257,
		4094, 4095, 4096, 4097, 5000, 65536 };
	size_t len = lens[rndn(sizeof(lens) / sizeof(lens[0]))], i;
	const char *fill = "9A y/,\n0";
	char c = fill[rndn(strlen(fill))];

	for (i = 0; i < len; i++)
		in[i] = c;
	if (rndn(2))	/* a valid prefix, then padding */
		memcpy(in, rndn(2) ? "19" : "pid", rndn(2) ? 2 : 3);
	if (rndn(2) && len)
		in[len - 1] = '\n';
	return len;
}

static size_t gen_word(void)
{
	const char *w = words[rndn(sizeof(words) / sizeof(words[0]))];
	size_t len = strlen(w);

	memcpy(in, w, len);
	if (rndn(4) == 0)
		in[len++] = '\n';
	return len;
}

static size_t gen_key_combo(void)
{
	static const char *names[] = { "comm", "pid", "tid", "tname", "wobj", "x", "" };
	static const char *seps[] = { ",", "+", ",", " ,", ";", ",,", "\n" };
	size_t len = 0;
	unsigned int i, n = 1 + rndn(6);

	if (rndn(5) == 0)
		addf(&len, " ");
	for (i = 0; i < n; i++) {
		if (i)
			addf(&len, "%s", seps[rndn(rndn(3) ? 2 : 7)]);
		addf(&len, "%s", names[rndn(rndn(4) ? 5 : 7)]);
	}
	if (rndn(3) == 0)
		addf(&len, "\n");
	return len;
}

static size_t gen_cgroup_path(void)
{
	static const char *comps[] = { "offs-fuzz", "a", "b", "c", "", ".", "..",
		"zz", "cgroup.procs", "cgroup.type", "memory.max", "no-such",
		"a b", "\xa0", "\x7f", "\xff" };
	size_t len = 0;
	unsigned int i, n = rndn(6);

	if (rndn(4))
		addf(&len, "/");
	for (i = 0; i < n; i++) {
		if (i)
			addf(&len, rndn(5) ? "/" : "//");
		/* mostly walk the real tree: offs-fuzz/a/b/c */
		if (rndn(3))
			addf(&len, "%s", i == 0 ? "offs-fuzz" : comps[1 + (i - 1) % 3]);
		else
			addf(&len, "%s", comps[rndn(sizeof(comps) / sizeof(comps[0]))]);
	}
	if (rndn(4) == 0)
		addf(&len, "/");
	if (rndn(5) == 0)
		addf(&len, "\n");
	return len;
}

static size_t gen_control(void)
{
	static const char *v[] = { "reset", "reset\n", "reset\n\n", "reset\r\n",
		" reset", "reset ", "Reset", "rese", "resett", "reset\0", "reset\0junk",
		"reset\n\0", "\0reset", "reset reset", "resetresetreset" };
	unsigned int i = rndn(sizeof(v) / sizeof(v[0]));
	size_t len = strlen(v[i]);

	/* the entries with a NUL: their length is written out */
	if (i >= 9 && i <= 12)
		len = (size_t[]){ 6, 10, 7, 6 }[i - 9];
	memcpy(in, v[i], len);
	return len;
}

static size_t mutate(size_t len)
{
	unsigned int n = 1 + rndn(3);

	while (n--) {
		switch (rndn(3)) {
		case 0:
			if (len)
				in[rndn(len)] = (char)rndn(256);
			break;
		case 1:
			if (len < BUF_MAX - 1) {
				size_t at = rndn(len + 1);

				memmove(in + at + 1, in + at, len - at);
				in[at] = (char)rndn(256);
				len++;
			}
			break;
		default:
			if (len) {
				size_t at = rndn(len);

				memmove(in + at, in + at + 1, len - at - 1);
				len--;
			}
			break;
		}
	}
	return len;
}

static size_t gen_input(const struct target *t)
{
	unsigned int r = rndn(100);
	size_t len;

	if (r < 4)
		return 0;	/* empty */
	if (r < 30)
		len = gen_random_bytes();
	else if (r < 40)
		len = gen_long();
	else if (r < 60)
		len = gen_word();
	else if (t->kind == K_UINT || t->kind == K_GROUP)
		len = gen_number(t);
	else if (t->kind == K_KEY)
		len = gen_key_combo();
	else if (t->kind == K_CGROUP)
		len = gen_cgroup_path();
	else if (t->kind == K_CONTROL)
		len = gen_control();
	else
		len = gen_word();
	if (rndn(8) == 0)
		len = mutate(len);
	return len;
}

/* ---- checks ---- */

static void hexdump(const char *buf, size_t len, FILE *f)
{
	size_t i;

	for (i = 0; i < len && i < 48; i++)
		fprintf(f, (unsigned char)buf[i] >= 0x20 && (unsigned char)buf[i] < 0x7f &&
			buf[i] != '\\' ? "%c" : "\\x%02x", (unsigned char)buf[i]);
	if (len > 48)
		fprintf(f, "...(%zu bytes)", len);
}

static void mismatch(const struct target *t, size_t len, const char *fmt, ...)
{
	va_list ap;

	mismatches++;
	if (mismatches > 30)
		return;
	fprintf(stderr, "MISMATCH %s <- \"", t->name);
	hexdump(in, len, stderr);
	fprintf(stderr, "\": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void fuzz_param(struct target *t, size_t len)
{
	char path[256], before[4096], after[4096], eff[SYSFS_MAX + 1];
	size_t efflen = len < SYSFS_MAX ? len : SYSFS_MAX;
	struct expect e;
	ssize_t r;
	int err;

	path_of(t, path, sizeof(path));
	memcpy(eff, in, efflen);
	eff[efflen] = '\0';		/* sysfs: cut at 4096 and at a NUL */
	model(t, eff, &e);
	t->inputs++;
	if (read_small(path, before, sizeof(before)) < 0)
		die("cannot read %s: %s", path, strerror(errno));
	r = write_once(path, in, len, &err);
	if (read_small(path, after, sizeof(after)) < 0)
		die("cannot read %s after a write: %s", path, strerror(errno));
	if (len == 0 && t->kind != K_GROUP) {
		if (r != 0 || strcmp(before, after))
			mismatch(t, len, "empty write returned %zd (%s)", r, strerror(err));
		t->rejected++;
		return;
	}
	if (e.accept) {
		t->accepted++;
		if (r != (ssize_t)efflen)
			mismatch(t, len, "expected success (%zu), got %zd (%s)",
				 efflen, r, strerror(err));
		else if (strcmp(after, e.value))
			mismatch(t, len, "reads back \"%.*s\", expected \"%.*s\"",
				 (int)strcspn(after, "\n"), after,
				 (int)strcspn(e.value, "\n"), e.value);
	} else {
		t->rejected++;
		if (r >= 0)
			mismatch(t, len, "accepted (now \"%.*s\"), expected %s",
				 (int)strcspn(after, "\n"), after, strerror(e.err));
		else if (err != e.err)
			mismatch(t, len, "failed with %s, expected %s",
				 strerror(err), strerror(e.err));
		if (strcmp(before, after))
			mismatch(t, len, "rejected but changed \"%.*s\" -> \"%.*s\"",
				 (int)strcspn(before, "\n"), before,
				 (int)strcspn(after, "\n"), after);
	}
}

/*
 * control: "reset" with an optional final newline, under 16 bytes, resets;
 * the module parses a C string, so bytes after a NUL are ignored.
 */
static void fuzz_control(struct target *t, size_t len)
{
	char buf[16];
	long long g0, g1, r0, r1;
	bool accept = false;
	ssize_t r;
	int err;

	t->inputs++;
	if (len && len < sizeof(buf)) {
		memcpy(buf, in, len);
		buf[len] = '\0';
		if (buf[len - 1] == '\n')
			buf[len - 1] = '\0';
		accept = !strcmp(buf, "reset");
	}
	g0 = stat_get("generation");
	r0 = stat_get("resets");
	r = write_once(PROC "/control", in, len, &err);
	g1 = stat_get("generation");
	r1 = stat_get("resets");
	if (accept) {
		t->accepted++;
		if (r != (ssize_t)len)
			mismatch(t, len, "reset failed: %zd (%s)", r, strerror(err));
		if (r1 != r0 + 1)
			mismatch(t, len, "resets %lld -> %lld", r0, r1);
		if (g1 <= g0)
			mismatch(t, len, "generation %lld -> %lld", g0, g1);
	} else {
		t->rejected++;
		if (r >= 0 || err != EINVAL)
			mismatch(t, len, "expected EINVAL, got %zd (%s)", r, strerror(err));
		if (r1 != r0)
			mismatch(t, len, "rejected but resets %lld -> %lld", r0, r1);
	}
}

/* Writes to read-only files fail; odd reads work or fail cleanly. */
static void fuzz_ro(struct target *t, size_t len)
{
	static char buf[8192];
	char path[256];
	ssize_t r;
	off_t off;
	int err, fd;

	path_of(t, path, sizeof(path));
	t->inputs++;
	/* open(O_WRONLY) of drain would drain: only reads of drain */
	if (rndn(2) && strcmp(t->name, "drain")) {
		r = write_once(path, in, len, &err);
		if (r >= 0 && len) {
			t->accepted++;
			mismatch(t, len, "write to a read-only file returned %zd", r);
		} else {
			t->rejected++;
		}
		return;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		mismatch(t, len, "open for reading failed: %s", strerror(errno));
		return;
	}
	reads_odd++;
	off = rndn(4) ? (off_t)rndn(200000) : (off_t)(rnd() >> 2);
	r = pread(fd, buf, 1 + rndn(sizeof(buf)), off);
	(void)r;	/* any result but a crash is fine: EINVAL, 0, data */
	if (lseek(fd, (off_t)rndn(5000), SEEK_SET) >= 0)
		r = read(fd, buf, 1 + rndn(64));
	close(fd);
	t->rejected++;
}

static void health(void)
{
	static const char *files[] = { "stacks", "threads", "stats" };
	unsigned int i;

	health_checks++;
	for (i = 0; i < 3; i++) {
		char path[64];

		snprintf(path, sizeof(path), PROC "/%s", files[i]);
		if (read_all(path) <= 0)
			die("health check: reading %s failed: %s", path, strerror(errno));
	}
}

/* Keep the guest responsive: no long stretch at 1000 Hz with a tiny table. */
static void tame(void)
{
	char buf[64];

	/* A threads file read at 1 thread per second would take minutes. */
	if (read_small(PARAMS "/threads_rate", buf, sizeof(buf)) > 0 &&
	    atoi(buf) < 1000) {
		int fd = open(PARAMS "/threads_rate", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "20000", 5) != 5)
				die("cannot tame threads_rate");
			close(fd);
		}
	}

	if (read_small(PARAMS "/hz", buf, sizeof(buf)) > 0 && atoi(buf) > 200) {
		int fd = open(PARAMS "/hz", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "97", 2) != 2)
				die("cannot tame hz");
			close(fd);
		}
	}
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* The watchdog: async-signal-safe, the message was formatted beforehand. */
static void on_hang(int sig)
{
	ssize_t r;

	(void)sig;
	r = write(STDERR_FILENO, hang_msg, strlen(hang_msg));
	(void)r;
	_exit(3);
}

/*
 * Arm the watchdog for one step: on_hang() reports the message formatted
 * here if the step has not called alarm(0) within HANG_SECS.
 */
static void watchdog_arm(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hang_msg, sizeof(hang_msg), fmt, ap);
	va_end(ap);
	alarm(HANG_SECS);
}

/* hz and threads_rate change only when an input to them is accepted. */
static bool may_need_taming(const struct target *t)
{
	return !strcmp(t->name, "hz") || !strcmp(t->name, "threads_rate");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void restore(void)
{
	char path[256];
	unsigned int i;
	int err;

	for (i = 0; i < NTARGETS; i++) {
		if (!targets[i].restore)
			continue;
		path_of(&targets[i], path, sizeof(path));
		if (write_once(path, *targets[i].restore ? targets[i].restore : "\n",
			       strlen(targets[i].restore) ?: 1, &err) < 0)
			die("restoring %s: %s", path, strerror(err));
	}
}

static void mk_cgroups(void)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/offs-fuzz", cgroot);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/offs-fuzz/a", cgroot);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/offs-fuzz/a/b", cgroot);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/offs-fuzz/a/b/c", cgroot);
	mkdir(p, 0755);
}

static void rm_cgroups(void)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/offs-fuzz/a/b/c", cgroot);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/offs-fuzz/a/b", cgroot);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/offs-fuzz/a", cgroot);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/offs-fuzz", cgroot);
	rmdir(p);
}

/*
 * Does this kernel's kstrtobool() take "t"/"f"?  Asked of the module's
 * user_stacks parameter (a bool), written back as it was.
 */
static bool probe_bool_tf(void)
{
	char old[16] = "";
	bool tf;
	int fd;

	if (read_small(PARAMS "/user_stacks", old, sizeof(old)) <= 0)
		die("cannot read " PARAMS "/user_stacks");
	fd = open(PARAMS "/user_stacks", O_WRONLY);
	if (fd < 0)
		die("cannot open " PARAMS "/user_stacks");
	tf = write(fd, "t", 1) == 1;
	close(fd);
	fd = open(PARAMS "/user_stacks", O_WRONLY);
	if (fd < 0 || write(fd, old, strlen(old)) != (ssize_t)strlen(old))
		die("cannot restore " PARAMS "/user_stacks");
	close(fd);
	return tf;
}

int main(int argc, char **argv)
{
	unsigned long n = 10000, i, sent, acc = 0, rej = 0;
	unsigned long long seed = (unsigned long long)time(NULL);
	long long t0, t1;
	double s0, s1, h, health_secs = 0, tame_secs = 0;
	/* SA_RESTART: a signal must not turn a write into an EINTR mismatch. */
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART };
	struct sigaction sa_hang = { .sa_handler = on_hang };
	unsigned int k;
	size_t len;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&sa_hang.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) ||
	    sigaction(SIGALRM, &sa_hang, NULL))
		die("sigaction: %s", strerror(errno));
	for (i = 1; i < (unsigned long)argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < (unsigned long)argc)
			n = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-s") && i + 1 < (unsigned long)argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-c") && i + 1 < (unsigned long)argc)
			cgroot = argv[++i];
		else if (!strcmp(argv[i], "-v"))
			verbose = true;
		else
			die("usage: offs-fuzz [-n INPUTS] [-s SEED] [-c CGROUP_ROOT] [-v]");
	}
	rng_state ^= seed * 0x9e3779b97f4a7c15ULL;
	if (!rng_state)
		rng_state = 1;
	if (access(PARAMS "/hz", W_OK))
		die("offsample is not loaded (or not root)");
	bool_tf = probe_bool_tf();
	printf("kstrtobool takes t/f: %s\n", bool_tf ? "yes" : "no");
	/*
	 * max_stacks, thread_cache and cfi_cache_mb are also bounded by a
	 * share of this machine's RAM: the module says where (stats), the
	 * model follows.
	 */
	for (k = 0; k < NTARGETS; k++) {
		long long lim = -1;

		if (!strcmp(targets[k].name, "max_stacks"))
			lim = stat_get("max_stacks_limit");
		else if (!strcmp(targets[k].name, "thread_cache"))
			lim = stat_get("thread_cache_limit");
		else if (!strcmp(targets[k].name, "cfi_cache_mb"))
			lim = stat_get("cfi_cache_mb_limit");
		else
			continue;
		if (lim < 0)
			die("no %s limit in " PROC "/stats", targets[k].name);
		if ((unsigned long long)lim < targets[k].max)
			targets[k].max = lim;
	}
	mk_cgroups();
	s0 = now();
	for (i = 0, sent = 0; sent < n && !stop; i++) {
		/* parameters most of the time, control and the rest less */
		k = rndn(100) < 85 ? rndn(NPARAMS) :
				     NPARAMS + rndn(NTARGETS - NPARAMS);
		len = gen_input(&targets[k]);
		watchdog_arm("offs-fuzz: input %lu to %s took more than %d s: hung\n",
			     i, targets[k].name, HANG_SECS);
		h = now();
		switch (targets[k].kind) {
		case K_CONTROL:
			fuzz_control(&targets[k], len);
			break;
		case K_RO:
			fuzz_ro(&targets[k], len);
			break;
		default:
			fuzz_param(&targets[k], len);
			break;
		}
		targets[k].secs += now() - h;
		if (verbose) {
			fprintf(stderr, "%lu %s <- \"", i, targets[k].name);
			hexdump(in, len, stderr);
			fprintf(stderr, "\"\n");
		}
		sent++;
		if (may_need_taming(&targets[k])) {
			h = now();
			tame();
			tame_secs += now() - h;
		}
		alarm(0);
		if (i % 500 == 499) {
			watchdog_arm("offs-fuzz: the health check after input %lu took more than %d s: hung\n",
				     i, HANG_SECS);
			h = now();
			health();
			health_secs += now() - h;
			alarm(0);
		}
	}
	restore();
	rm_cgroups();
	s1 = now();

	/* Healthy: files readable, the sampler ticking. */
	health();
	t0 = stat_get("ticks");
	sleep(2);
	t1 = stat_get("ticks");
	if (t0 < 0 || t1 <= t0) {
		fprintf(stderr, "offs-fuzz: sampler not ticking after restore (%lld -> %lld)\n", t0, t1);
		mismatches++;
	}

	for (k = 0; k < NTARGETS; k++) {
		printf("target_%s %lu accepted %lu rejected %lu seconds %.1f\n",
		       targets[k].name, targets[k].inputs, targets[k].accepted,
		       targets[k].rejected, targets[k].secs);
		acc += targets[k].accepted;
		rej += targets[k].rejected;
	}
	printf("seed %llu\ninputs %lu\naccepted %lu\nrejected %lu\n", seed,
	       acc + rej, acc, rej);
	printf("odd_reads %lu\nhealth_checks %lu\nmismatches %lu\n",
	       reads_odd, health_checks, mismatches);
	printf("seconds %.1f\nseconds_health %.1f\nseconds_tame %.1f\n",
	       s1 - s0, health_secs, tame_secs);
	if (stop)
		printf("interrupted 1\n");
	return mismatches || stop ? 1 : 0;
}
