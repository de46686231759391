// SPDX-License-Identifier: GPL-2.0
/*
 * upy.c - CPython 3.11-3.13 frames read from outside the process (upy.h).
 *
 * Offsets are those of x86-64 release builds with the GIL, checked with
 * offsetof() against each version's internal headers (tags v3.11.7,
 * v3.12.1, v3.13.0) and against py-spy on live processes
 * (tests/host/upy.bats).  3.13 publishes its own in _Py_DebugOffsets.
 */
#include <linux/kernel.h>
#include <linux/bits.h>
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/elf.h>

#include "upy.h"

/* ---- step 1: the file ---- */

enum {
	OFFS_PY_SYM_RUNTIME,
	OFFS_PY_SYM_CODE_TYPE,
	OFFS_PY_SYM_UNICODE_TYPE,
	OFFS_PY_SYM_EVAL,
	OFFS_PY_SYM_VERSION,
	OFFS_PY_NSYMS,
};

static const char * const offs_py_sym_names[OFFS_PY_NSYMS] = {
	"_PyRuntime", "PyCode_Type", "PyUnicode_Type",
	"_PyEval_EvalFrameDefault", "Py_Version",
};

/* Where each name (NUL-terminated) occurs in .dynstr; tails count too. */
#define OFFS_PY_STR_HITS	4
#define OFFS_PY_NAME_LEN	25	/* strlen("_PyEval_EvalFrameDefault") + 1 */

struct offs_py_strhits {
	u32 off[OFFS_PY_NSYMS][OFFS_PY_STR_HITS];
	u8 n[OFFS_PY_NSYMS];
};

static void offs_py_hit(struct offs_py_strhits *h, unsigned int k, u32 off)
{
	unsigned int i;

	for (i = 0; i < h->n[k]; i++)
		if (h->off[k][i] == off)
			return;
	if (h->n[k] < OFFS_PY_STR_HITS)
		h->off[k][h->n[k]++] = off;
}

static int offs_py_check(const struct offs_py_src *src, unsigned int *steps)
{
	if (++*steps % OFFS_PY_CHECK_EVERY || !src->check)
		return 0;
	return src->check(src->check_ctx);
}

#define OFFS_PY_BLOCK		512

static_assert(sizeof("_PyEval_EvalFrameDefault") == OFFS_PY_NAME_LEN);
static_assert(OFFS_PY_NAME_LEN < OFFS_PY_BLOCK);

/* Find the names in the string table at [off, off + size); buf: scratch. */
static int offs_py_scan_strtab(const struct offs_py_src *src, u64 off,
			       u64 size, struct offs_py_strhits *h,
			       unsigned int *steps, u8 *buf)
{
	u64 pos = 0;
	int err;

	while (pos < size) {
		u64 len = min_t(u64, OFFS_PY_BLOCK, size - pos);
		unsigned int i, k;

		err = offs_py_check(src, steps);
		if (!err)
			err = src->read(src->ctx, off + pos, buf, len);
		if (err)
			return err;
		for (i = 0; i < len; i++) {
			for (k = 0; k < OFFS_PY_NSYMS; k++) {
				const char *name = offs_py_sym_names[k];
				size_t n = strlen(name) + 1;

				if (i + n <= len && !memcmp(buf + i, name, n))
					offs_py_hit(h, k, pos + i);
			}
		}
		if (pos + len >= size)
			break;
		/* Overlap the blocks by a name, so none is missed at an edge. */
		pos += len - OFFS_PY_NAME_LEN;
	}
	return 0;
}

static int offs_py_name_of(const struct offs_py_strhits *h, u32 st_name)
{
	unsigned int k, i;

	for (k = 0; k < OFFS_PY_NSYMS; k++)
		for (i = 0; i < h->n[k]; i++)
			if (h->off[k][i] == st_name)
				return k;
	return -1;
}

/* The file offset of virtual address va (a byte the file holds), or 0. */
static u64 offs_py_va_to_off(const struct offs_py_src *src,
			     const struct elf64_hdr *eh, u64 va, u64 len)
{
	struct elf64_shdr sh;
	unsigned int i;

	for (i = 0; i < eh->e_shnum; i++) {
		if (src->read(src->ctx, eh->e_shoff + (u64)i * sizeof(sh),
			      &sh, sizeof(sh)))
			return 0;
		if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (va >= sh.sh_addr && va - sh.sh_addr < sh.sh_size &&
		    sh.sh_size - (va - sh.sh_addr) >= len &&
		    sh.sh_offset <= src->size &&
		    src->size - sh.sh_offset >= len &&
		    va - sh.sh_addr <= src->size - sh.sh_offset - len)
			return sh.sh_offset + (va - sh.sh_addr);
	}
	return 0;
}

int offs_py_elf_scan(const struct offs_py_src *src, struct offs_py_syms *out)
{
	/* One block of scratch for both passes: this runs in a kworker. */
	u64 buf[OFFS_PY_BLOCK / sizeof(u64)];
	struct elf64_sym *syms = (struct elf64_sym *)buf;
	const unsigned int nblk = OFFS_PY_BLOCK / sizeof(struct elf64_sym);
	struct offs_py_strhits hits = { };
	struct elf64_shdr dynsym, dynstr;
	unsigned int i, steps = 0, found = 0;
	struct elf64_hdr eh;
	u64 nsyms, s, voff, version;
	bool have_dynsym = false;
	int err;

	memset(out, 0, sizeof(*out));
	if (src->size < sizeof(eh))
		return -ENOENT;
	err = src->read(src->ctx, 0, &eh, sizeof(eh));
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(dynsym) || !eh.e_shnum ||
	    eh.e_shnum > OFFS_PY_MAX_SHNUM || eh.e_shoff > src->size ||
	    src->size - eh.e_shoff < (u64)eh.e_shnum * sizeof(dynsym))
		return -ENOENT;
	for (i = 0; i < eh.e_shnum && !have_dynsym; i++) {
		err = src->read(src->ctx, eh.e_shoff + (u64)i * sizeof(dynsym),
				&dynsym, sizeof(dynsym));
		if (err)
			return err;
		have_dynsym = dynsym.sh_type == SHT_DYNSYM;
	}
	if (!have_dynsym || dynsym.sh_link >= eh.e_shnum ||
	    dynsym.sh_entsize != sizeof(struct elf64_sym))
		return -ENOENT;
	err = src->read(src->ctx, eh.e_shoff + (u64)dynsym.sh_link * sizeof(dynstr),
			&dynstr, sizeof(dynstr));
	if (err)
		return err;
	if (dynstr.sh_type != SHT_STRTAB || dynstr.sh_size > OFFS_PY_MAX_DYNSTR ||
	    dynstr.sh_offset > src->size ||
	    src->size - dynstr.sh_offset < dynstr.sh_size ||
	    dynsym.sh_offset > src->size ||
	    src->size - dynsym.sh_offset < dynsym.sh_size)
		return -ENOENT;

	/* Most files are not Python: one pass over .dynstr tells. */
	err = offs_py_scan_strtab(src, dynstr.sh_offset, dynstr.sh_size, &hits,
				  &steps, (u8 *)buf);
	if (err)
		return err;
	for (i = 0; i < OFFS_PY_NSYMS; i++)
		if (!hits.n[i])
			return -ENOENT;

	nsyms = dynsym.sh_size / sizeof(struct elf64_sym);
	if (nsyms > OFFS_PY_MAX_DYNSYM)
		return -ENOENT;
	for (s = 0; s < nsyms; s += nblk) {
		u64 n = min_t(u64, nblk, nsyms - s);

		err = offs_py_check(src, &steps);
		if (!err)
			err = src->read(src->ctx, dynsym.sh_offset +
					s * sizeof(syms[0]), syms,
					n * sizeof(syms[0]));
		if (err)
			return err;
		for (i = 0; i < n; i++) {
			const struct elf64_sym *y = &syms[i];
			int k;

			if (y->st_shndx == SHN_UNDEF || !y->st_value)
				continue;
			k = offs_py_name_of(&hits, y->st_name);
			if (k < 0 || (found & (1U << k)))
				continue;
			found |= 1U << k;
			switch (k) {
			case OFFS_PY_SYM_RUNTIME:
				out->runtime = y->st_value;
				out->runtime_size = y->st_size;
				break;
			case OFFS_PY_SYM_CODE_TYPE:
				out->code_type = y->st_value;
				break;
			case OFFS_PY_SYM_UNICODE_TYPE:
				out->unicode_type = y->st_value;
				break;
			case OFFS_PY_SYM_EVAL:
				out->eval_start = y->st_value;
				out->eval_end = y->st_value + y->st_size;
				break;
			case OFFS_PY_SYM_VERSION:
				voff = offs_py_va_to_off(src, &eh, y->st_value,
							 sizeof(version));
				if (!voff ||
				    src->read(src->ctx, voff, &version,
					      sizeof(version)))
					return -ENOENT;
				out->version = (u32)version;
				break;
			}
		}
	}
	if (found != (1U << OFFS_PY_NSYMS) - 1 ||
	    out->eval_end <= out->eval_start ||
	    (out->version >> 16) < OFFS_PY_MIN ||
	    (out->version >> 16) > OFFS_PY_MAX)
		return -ENOENT;
	return 0;
}

/* ---- step 2: layouts and the walk ---- */

/* Everything of a frame the walk reads lies in its first bytes. */
#define OFFS_PY_FRAME_READ	80
/* ... and of a code object, of a string's header. */
#define OFFS_PY_CODE_READ	256
#define OFFS_PY_STR_HDR		40

#define OFFS_PY_OWNER_GENERATOR	1
#define OFFS_PY_OWNER_CSTACK	3	/* 3.12, 3.13 */

static const struct offs_py_layout offs_py_311 = {
	.rt_interp_head = 40, .is_next = 0, .is_threads = 16,
	.ts_next = 8, .ts_frame = 56, .cf_frame = 8, .ts_native_tid = 160,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69,
	.fr_is_entry = 68,
	.co_firstlineno = 72, .co_filename = 112, .co_qualname = 128,
	.co_linetable = 136, .co_firsttraceable = 168, .co_code = 184,
	.str_ascii = 48, .str_compact = 72,
	.ts_interp = 16, .rt_gil = 360, .is_gil = -1,
	.gil_holder = 8, .gil_locked = 16,
};

static const struct offs_py_layout offs_py_312 = {
	.rt_interp_head = 40, .is_next = 0, .is_threads = 72,
	.ts_next = 8, .ts_frame = 56, .cf_frame = 0, .ts_native_tid = 144,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	.fr_is_entry = -1,
	.co_firstlineno = 68, .co_filename = 112, .co_qualname = 128,
	.co_linetable = 136, .co_firsttraceable = 176, .co_code = 192,
	.str_ascii = 40, .str_compact = 56,
	.ts_interp = 16, .rt_gil = -1, .is_gil = 384,
	.gil_holder = 8, .gil_locked = 16,
};

/* Word indexes in 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h). */
enum {
	OFFS_PYD_COOKIE = 0, OFFS_PYD_VERSION = 1, OFFS_PYD_FREE_THREADED = 2,
	OFFS_PYD_RT_SIZE = 3, OFFS_PYD_RT_INTERP_HEAD = 5,
	OFFS_PYD_IS_SIZE = 6, OFFS_PYD_IS_NEXT = 8, OFFS_PYD_IS_THREADS = 9,
	OFFS_PYD_IS_CEVAL_GIL = 14, OFFS_PYD_IS_GIL_STATE = 15,
	OFFS_PYD_IS_GIL_LOCKED = 17, OFFS_PYD_IS_GIL_HOLDER = 18,
	OFFS_PYD_TS_SIZE = 19, OFFS_PYD_TS_NEXT = 21, OFFS_PYD_TS_INTERP = 22,
	OFFS_PYD_TS_FRAME = 23,
	OFFS_PYD_TS_NATIVE_TID = 25,
	OFFS_PYD_FR_SIZE = 28, OFFS_PYD_FR_PREVIOUS = 29, OFFS_PYD_FR_CODE = 30,
	OFFS_PYD_FR_INSTR = 31, OFFS_PYD_FR_OWNER = 33,
	OFFS_PYD_CO_SIZE = 34, OFFS_PYD_CO_FILENAME = 35,
	OFFS_PYD_CO_QUALNAME = 37, OFFS_PYD_CO_LINETABLE = 38,
	OFFS_PYD_CO_FIRSTLINENO = 39, OFFS_PYD_CO_CODE = 43,
	OFFS_PYD_STR_ASCII_SIZE = 70,
};

/* Offset w of a structure of size sz: a u16 holding len bytes inside it. */
static bool offs_py_dbg_off(const u64 *dbg, unsigned int w, unsigned int sz,
			    unsigned int len, u16 *out)
{
	if (dbg[w] > U16_MAX - 8 || dbg[w] + len > dbg[sz])
		return false;
	*out = dbg[w];
	return true;
}

static int offs_py_layout_313(struct offs_py_layout *l, const u64 *dbg)
{
	/* "xdebugpy", as a little-endian word. */
	const u64 cookie = 0x7970677562656478ULL;
	u16 ascii, gil;
	u64 gs;

	if (!dbg || dbg[OFFS_PYD_COOKIE] != cookie ||
	    dbg[OFFS_PYD_VERSION] != l->version ||
	    dbg[OFFS_PYD_FREE_THREADED])
		return -EINVAL;
	if (!offs_py_dbg_off(dbg, OFFS_PYD_RT_INTERP_HEAD, OFFS_PYD_RT_SIZE, 8,
			     &l->rt_interp_head) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_IS_NEXT, OFFS_PYD_IS_SIZE, 8,
			     &l->is_next) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_IS_THREADS, OFFS_PYD_IS_SIZE, 8,
			     &l->is_threads) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_TS_NEXT, OFFS_PYD_TS_SIZE, 8,
			     &l->ts_next) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_TS_FRAME, OFFS_PYD_TS_SIZE, 8,
			     &l->ts_frame) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_TS_NATIVE_TID, OFFS_PYD_TS_SIZE, 8,
			     &l->ts_native_tid) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_TS_INTERP, OFFS_PYD_TS_SIZE, 8,
			     &l->ts_interp) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_IS_CEVAL_GIL, OFFS_PYD_IS_SIZE, 8,
			     &gil) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_FR_PREVIOUS, OFFS_PYD_FR_SIZE, 8,
			     &l->fr_previous) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_FR_CODE, OFFS_PYD_FR_SIZE, 8,
			     &l->fr_code) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_FR_INSTR, OFFS_PYD_FR_SIZE, 8,
			     &l->fr_instr) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_FR_OWNER, OFFS_PYD_FR_SIZE, 1,
			     &l->fr_owner) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_CO_FILENAME, OFFS_PYD_CO_SIZE, 8,
			     &l->co_filename) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_CO_QUALNAME, OFFS_PYD_CO_SIZE, 8,
			     &l->co_qualname) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_CO_LINETABLE, OFFS_PYD_CO_SIZE, 8,
			     &l->co_linetable) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_CO_FIRSTLINENO, OFFS_PYD_CO_SIZE, 4,
			     &l->co_firstlineno) ||
	    !offs_py_dbg_off(dbg, OFFS_PYD_CO_CODE, OFFS_PYD_CO_SIZE, 0,
			     &l->co_code))
		return -EINVAL;
	/*
	 * Not published: _co_firsttraceable (an int 16 bytes before the
	 * instructions, after co_extra, in 3.13's PyCodeObject), and the
	 * compact non-ASCII string's data (PyCompactUnicodeObject adds
	 * utf8_length and utf8 to PyASCIIObject).
	 */
	ascii = dbg[OFFS_PYD_STR_ASCII_SIZE] <= 64 ? dbg[OFFS_PYD_STR_ASCII_SIZE] : 0;
	if (l->co_code < 24 || !ascii)
		return -EINVAL;
	l->co_firsttraceable = l->co_code - 16;
	l->str_ascii = ascii;
	l->str_compact = ascii + 16;
	/*
	 * The GIL: ceval.gil points to the interpreter's own (or the main
	 * one's), whose holder and lock word lie where the offsets of the
	 * embedded one say, relative to it.
	 */
	gs = dbg[OFFS_PYD_IS_GIL_STATE];
	if (dbg[OFFS_PYD_IS_GIL_HOLDER] < gs || dbg[OFFS_PYD_IS_GIL_LOCKED] < gs ||
	    dbg[OFFS_PYD_IS_GIL_HOLDER] - gs > OFFS_PY_GIL_SIZE - 8 ||
	    dbg[OFFS_PYD_IS_GIL_LOCKED] - gs > OFFS_PY_GIL_SIZE - 4)
		return -EINVAL;
	l->gil_holder = dbg[OFFS_PYD_IS_GIL_HOLDER] - gs;
	l->gil_locked = dbg[OFFS_PYD_IS_GIL_LOCKED] - gs;
	l->is_gil = gil;
	l->rt_gil = -1;
	l->cf_frame = -1;
	l->fr_is_entry = -1;
	return 0;
}

int offs_py_layout_init(struct offs_py_layout *l, u32 version, const u64 *dbg)
{
	int err = 0;

	switch (version >> 16) {
	case 0x030b:
		*l = offs_py_311;
		break;
	case 0x030c:
		*l = offs_py_312;
		break;
	case 0x030d:
		l->version = version;
		err = offs_py_layout_313(l, dbg);
		break;
	default:
		return -ENOENT;
	}
	l->version = version;
	if (err)
		return err;
	/*
	 * What the walk reads in one go must lie in its block; a code
	 * object's fields before its instructions (offs_py_code() reads up
	 * to them, and 3.13's offsets come from the process).
	 */
	if (l->fr_code + 8 > OFFS_PY_FRAME_READ ||
	    l->fr_previous + 8 > OFFS_PY_FRAME_READ ||
	    l->fr_instr + 8 > OFFS_PY_FRAME_READ ||
	    l->fr_owner >= OFFS_PY_FRAME_READ ||
	    l->co_code > OFFS_PY_CODE_READ || l->co_code < 16 ||
	    l->co_filename + 8 > l->co_code ||
	    l->co_qualname + 8 > l->co_code ||
	    l->co_linetable + 8 > l->co_code ||
	    l->co_firstlineno + 4 > l->co_code ||
	    l->co_firsttraceable + 4 > l->co_code ||
	    l->gil_holder + 8 > 24 || l->gil_locked + 4 > 24)
		return -EINVAL;
	return 0;
}

static int offs_py_word(const struct offs_py_mem *m, u64 addr, u64 *v)
{
	return m->read(m->ctx, addr, v, sizeof(*v));
}

/* The field at off of a block read as words. */
static u64 offs_py_get64(const u64 *blk, unsigned int off)
{
	u64 v;

	memcpy(&v, (const u8 *)blk + off, sizeof(v));
	return v;
}

static u32 offs_py_get32(const u64 *blk, unsigned int off)
{
	u32 v;

	memcpy(&v, (const u8 *)blk + off, sizeof(v));
	return v;
}

static u8 offs_py_get8(const u64 *blk, unsigned int off)
{
	return ((const u8 *)blk)[off];
}

int offs_py_threads(const struct offs_py_mem *m, const struct offs_py_layout *l,
		    u64 runtime,
		    bool (*fn)(void *arg, u64 tid, u64 ts), void *arg)
{
	unsigned int i, seen = 0;
	u64 interp, t, ntid;
	int err;

	err = offs_py_word(m, runtime + l->rt_interp_head, &interp);
	for (i = 0; !err && interp && i < OFFS_PY_MAX_INTERPS; i++) {
		err = offs_py_word(m, interp + l->is_threads, &t);
		while (!err && t) {
			if (++seen > OFFS_PY_MAX_THREADS)
				return -ELOOP;
			err = offs_py_word(m, t + l->ts_native_tid, &ntid);
			if (!err && fn(arg, ntid, t))
				return 0;
			if (!err)
				err = offs_py_word(m, t + l->ts_next, &t);
		}
		if (!err)
			err = offs_py_word(m, interp + l->is_next, &interp);
	}
	if (err)
		return -EFAULT;
	return interp ? -ELOOP : 0;
}

struct offs_py_find {
	u64 tid;
	u64 ts;
	bool found;
};

static bool offs_py_find_fn(void *arg, u64 tid, u64 ts)
{
	struct offs_py_find *f = arg;

	if (tid != f->tid)
		return false;
	f->ts = ts;
	f->found = true;
	return true;
}

int offs_py_tstate(const struct offs_py_mem *m, const struct offs_py_layout *l,
		   u64 runtime, u32 tid, u64 *ts)
{
	struct offs_py_find f = { .tid = tid };
	int err = offs_py_threads(m, l, runtime, offs_py_find_fn, &f);

	if (err)
		return err;
	if (!f.found)
		return -ENOENT;
	*ts = f.ts;
	return 0;
}

unsigned int offs_py_walk(const struct offs_py_mem *m,
			  const struct offs_py_layout *l, u64 ts,
			  struct offs_py_frame *f, unsigned int max,
			  bool *truncated, int *err)
{
	u64 blk[OFFS_PY_FRAME_READ / 8];
	unsigned int n = 0, steps = 0;
	u64 frame;

	*truncated = false;
	*err = offs_py_word(m, ts + l->ts_frame, &frame);
	if (!*err && frame && l->cf_frame >= 0)
		*err = offs_py_word(m, frame + l->cf_frame, &frame);
	/*
	 * Bounded by max kept frames, and by 2 * max + 2 steps: entry
	 * frames are left out, but never two in a row.  A loop in the
	 * chain ends at the bound, as a truncated stack.
	 */
	max = min_t(unsigned int, max, OFFS_PY_MAX_WALK);
	while (!*err && frame) {
		u8 owner;

		if (++steps > 2 * max + 2) {
			*truncated = true;
			break;
		}
		*err = m->read(m->ctx, frame, blk, sizeof(blk));
		if (*err)
			break;
		owner = offs_py_get8(blk, l->fr_owner);
		frame = offs_py_get64(blk, l->fr_previous);
		if (l->version >> 16 >= 0x030c && owner == OFFS_PY_OWNER_CSTACK) {
			if (n)
				f[n - 1].last = 1;
			continue;
		}
		if (n == max) {
			/* One more frame was read for the mark of the last. */
			*truncated = true;
			break;
		}
		f[n].code = offs_py_get64(blk, l->fr_code);
		f[n].instr = offs_py_get64(blk, l->fr_instr);
		f[n].owner = owner;
		f[n].last = l->fr_is_entry >= 0 &&
			    offs_py_get8(blk, l->fr_is_entry);
		n++;
	}
	if (*err)
		*err = -EFAULT;
	else if (n && !*truncated)
		f[n - 1].last = 1;
	return n;
}

int offs_py_ts_tid(const struct offs_py_mem *m, const struct offs_py_layout *l,
		   u64 ts, u64 *tid)
{
	return offs_py_word(m, ts + l->ts_native_tid, tid) ? -EFAULT : 0;
}

int offs_py_gil(const struct offs_py_mem *m, const struct offs_py_layout *l,
		u64 runtime, u64 ts, struct offs_py_gil *g)
{
	u64 interp, blk[3];
	int err = 0;

	g->addr = 0;
	g->holder = 0;
	if (l->rt_gil >= 0) {
		g->addr = runtime + l->rt_gil;
	} else {
		err = offs_py_word(m, ts + l->ts_interp, &interp);
		if (!err)
			err = offs_py_word(m, interp + l->is_gil, &g->addr);
	}
	if (!err && (!g->addr || (g->addr & 7)))
		err = -EFAULT;
	if (!err)
		err = m->read(m->ctx, g->addr, blk, sizeof(blk));
	if (err)
		return -EFAULT;
	/* locked is an int: 1 held, 0 free, -1 not created yet. */
	if ((s32)offs_py_get32(blk, l->gil_locked) == 1)
		g->holder = offs_py_get64(blk, l->gil_holder);
	return 0;
}

/* ---- step 3: names and lines ---- */

/* Bytes of the process, read a block at a time. */
struct offs_py_bytes {
	const struct offs_py_mem *m;
	u64 addr;
	u32 len;
	u32 pos;		/* next byte */
	u32 at;			/* buf holds [at, at + have) */
	u32 have;
	int err;
	u64 buf[8];
};

static void offs_py_bytes_init(struct offs_py_bytes *b,
			       const struct offs_py_mem *m, u64 addr, u32 len)
{
	b->m = m;
	b->addr = addr;
	b->len = len;
	b->pos = 0;
	b->at = 0;
	b->have = 0;
	b->err = 0;
}

/* The next byte, or -1 at the end or after a fault (b->err). */
static int offs_py_next(struct offs_py_bytes *b)
{
	if (b->pos >= b->len || b->err)
		return -1;
	if (b->pos >= b->at + b->have) {
		u32 want = min_t(u32, sizeof(b->buf), b->len - b->pos);

		/*
		 * Whole words: the last read may pass the end by up to 7
		 * bytes, which CPython's objects keep inside their
		 * allocation (a string's or bytes' trailing NUL, and
		 * 8-byte-aligned allocations).
		 */
		want = (want + 7) & ~7U;
		b->err = b->m->read(b->m->ctx, b->addr + b->pos, b->buf, want);
		if (b->err)
			return -1;
		b->at = b->pos;
		b->have = want;
	}
	return ((const u8 *)b->buf)[b->pos++ - b->at];
}

/* Append code point c to out[cap] as UTF-8; false when it does not fit. */
static bool offs_py_utf8(char *out, size_t cap, size_t *len, u32 c)
{
	u8 tmp[4];
	size_t n;

	if (c >= 0xd800 && c < 0xe000)
		c = '?';		/* a lone surrogate */
	if (c < 0x80) {
		tmp[0] = c;
		n = 1;
	} else if (c < 0x800) {
		tmp[0] = 0xc0 | c >> 6;
		tmp[1] = 0x80 | (c & 0x3f);
		n = 2;
	} else if (c < 0x10000) {
		tmp[0] = 0xe0 | c >> 12;
		tmp[1] = 0x80 | (c >> 6 & 0x3f);
		tmp[2] = 0x80 | (c & 0x3f);
		n = 3;
	} else if (c < 0x110000) {
		tmp[0] = 0xf0 | c >> 18;
		tmp[1] = 0x80 | (c >> 12 & 0x3f);
		tmp[2] = 0x80 | (c >> 6 & 0x3f);
		tmp[3] = 0x80 | (c & 0x3f);
		n = 4;
	} else {
		tmp[0] = '?';
		n = 1;
	}
	if (*len + n >= cap)
		return false;
	memcpy(out + *len, tmp, n);
	*len += n;
	return true;
}

/* PyUnicodeObject.state bits (Include/cpython/unicodeobject.h). */
#define OFFS_PY_STATE_KIND(s)	(((s) >> 2) & 7)
#define OFFS_PY_STATE_COMPACT	BIT(5)
#define OFFS_PY_STATE_ASCII	BIT(6)

/* The compact string at addr into out[cap] as UTF-8, NUL-terminated. */
static int offs_py_str(const struct offs_py_mem *m,
		       const struct offs_py_layout *l, u64 unicode_type,
		       u64 addr, char *out, size_t cap, bool *truncated)
{
	u64 hdr[OFFS_PY_STR_HDR / 8];
	struct offs_py_bytes b;
	u64 length, i;
	size_t len = 0;
	unsigned int kind, k;
	u32 state;
	int err;

	out[0] = '\0';
	if (!addr)
		return -ENOENT;
	err = m->read(m->ctx, addr, hdr, sizeof(hdr));
	if (err)
		return -EFAULT;
	if (offs_py_get64(hdr, 8) != unicode_type)
		return -ENOENT;
	length = offs_py_get64(hdr, 16);
	state = offs_py_get32(hdr, 32);
	if (!(state & OFFS_PY_STATE_COMPACT))
		return -ENOENT;
	kind = state & OFFS_PY_STATE_ASCII ? 1 : OFFS_PY_STATE_KIND(state);
	if (kind != 1 && kind != 2 && kind != 4)
		return -ENOENT;
	/* Read no more characters than could fit, were they all ASCII. */
	if (length >= cap) {
		length = cap - 1;
		*truncated = true;
	}
	offs_py_bytes_init(&b, m, addr + (state & OFFS_PY_STATE_ASCII ?
					  l->str_ascii : l->str_compact),
			   length * kind);
	for (i = 0; i < length; i++) {
		u32 c = 0;

		for (k = 0; k < kind; k++) {
			int byte = offs_py_next(&b);

			if (byte < 0)
				return -EFAULT;
			c |= (u32)byte << (8 * k);
		}
		if (!offs_py_utf8(out, cap, &len, c)) {
			*truncated = true;
			break;
		}
	}
	out[len] = '\0';
	return 0;
}

static bool offs_py_varint(struct offs_py_bytes *b, u32 *v)
{
	unsigned int shift = 0;
	int byte;

	*v = 0;
	do {
		byte = offs_py_next(b);
		if (byte < 0 || shift > 30)
			return false;
		*v |= (u32)(byte & 63) << shift;
		shift += 6;
	} while (byte & 64);
	return true;
}

static bool offs_py_svarint(struct offs_py_bytes *b, s32 *v)
{
	u32 u;

	if (!offs_py_varint(b, &u))
		return false;
	*v = u & 1 ? -(s32)(u >> 1) : (s32)(u >> 1);
	return true;
}

/*
 * The line of the instruction at byte offset addr, from the location
 * table at lt (a bytes object) as Objects/locations.md describes it: a
 * list of entries, each covering (first byte & 7) + 1 code units.  0 if
 * the table has no line there, or cannot be read (*bad).
 */
static u32 offs_py_line(const struct offs_py_mem *m, u64 lt, u32 first,
			u64 addr, bool *bad)
{
	struct offs_py_bytes b;
	u64 size, pos = 0;
	s64 line = first;
	int byte;

	if (offs_py_word(m, lt + 16, &size) || size > OFFS_PY_MAX_LINETABLE) {
		*bad = true;
		return 0;
	}
	offs_py_bytes_init(&b, m, lt + 32, size);
	while ((byte = offs_py_next(&b)) >= 0) {
		unsigned int code = byte >> 3 & 15;
		u64 n = ((byte & 7) + 1) * 2;
		bool none = false;
		s32 d = 0;
		u32 skip;

		if (!(byte & 0x80))
			break;		/* not the first byte of an entry */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			if (!offs_py_svarint(&b, &d) || !offs_py_varint(&b, &skip) ||
			    !offs_py_varint(&b, &skip) || !offs_py_varint(&b, &skip))
				break;
		} else if (code == 13) {
			if (!offs_py_svarint(&b, &d))
				break;
		} else if (code >= 10) {
			d = code - 10;
			if (offs_py_next(&b) < 0 || offs_py_next(&b) < 0)
				break;
		} else {
			if (offs_py_next(&b) < 0)
				break;
		}
		line += d;
		if (addr >= pos && addr < pos + n)
			return none || line <= 0 || line > U32_MAX ? 0 : line;
		pos += n;
	}
	*bad = b.err || byte >= 0;
	return 0;
}

int offs_py_code(const struct offs_py_mem *m, const struct offs_py_layout *l,
		 u64 code_type, u64 unicode_type,
		 const struct offs_py_frame *f, struct offs_py_code *out)
{
	u64 blk[OFFS_PY_CODE_READ / 8];
	u64 start, addr;
	s32 first, traceable;
	int err;

	out->qualname[0] = '\0';
	out->file[0] = '\0';
	out->line = 0;
	out->firstlineno = 0;
	out->truncated = false;
	out->no_line = false;
	if (!f->code)
		return -ENOENT;
	memset(blk, 0, sizeof(blk));
	err = m->read(m->ctx, f->code, blk, round_up(l->co_code, 8));
	if (err)
		return -EFAULT;
	if (offs_py_get64(blk, 8) != code_type)
		return -ENOENT;
	first = offs_py_get32(blk, l->co_firstlineno);
	traceable = offs_py_get32(blk, l->co_firsttraceable);
	start = f->code + l->co_code;
	/*
	 * _PyFrame_IsIncomplete(): a frame not owned by a generator that
	 * has not yet passed its RESUME is still being set up.
	 */
	if (traceable < 0 || traceable > (1 << 24))
		return -ENOENT;
	if (f->owner != OFFS_PY_OWNER_GENERATOR &&
	    f->instr < start + 2 * (u64)traceable)
		return -ENOENT;
	err = offs_py_str(m, l, unicode_type, offs_py_get64(blk, l->co_qualname),
			  out->qualname, sizeof(out->qualname), &out->truncated);
	if (!err)
		err = offs_py_str(m, l, unicode_type,
				  offs_py_get64(blk, l->co_filename),
				  out->file, sizeof(out->file),
				  &out->truncated);
	if (err)
		return err;
	out->firstlineno = first > 0 ? first : 0;
	/* Before the first instruction (a generator not started): its def. */
	addr = f->instr >= start ? f->instr - start : 0;
	if (f->instr < start || f->instr - start > (1ULL << 32))
		out->line = out->firstlineno;
	else
		out->line = offs_py_line(m, offs_py_get64(blk, l->co_linetable),
					 out->firstlineno, addr,
					 &out->no_line);
	return 0;
}
