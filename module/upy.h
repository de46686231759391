/* SPDX-License-Identifier: GPL-2.0 */
/*
 * upy.h - CPython 3.11-3.13 frames read from outside the process.
 *
 * Three steps, each reading only through a callback, so that the same
 * code runs in the module (the file through the page cache, the process
 * through non-faulting reads in its address space) and in user-space
 * harnesses (tests/upy/: /proc/PID/mem, and a fuzzer):
 *
 *   1. offs_py_elf_scan(): is a mapped file a CPython interpreter
 *      (python3.X, libpython3.X.so)?  Its .dynsym names _PyRuntime,
 *      PyCode_Type, PyUnicode_Type and _PyEval_EvalFrameDefault, and
 *      Py_Version (PY_VERSION_HEX) is read from the file itself.
 *   2. offs_py_layout_init(): the offsets of the structures read below,
 *      built in for 3.11 and 3.12, taken from _Py_DebugOffsets (the first
 *      member of _PyRuntime) for 3.13; offs_py_tstate() finds a thread's
 *      PyThreadState by its native thread id and offs_py_walk() copies its
 *      chain of _PyInterpreterFrames (code object, instruction pointer,
 *      where each C-level evaluation starts): a few reads per frame, fit
 *      for a pinned thread.
 *   3. offs_py_code(): a code object's qualified name, file name and the
 *      line of an instruction (the 3.11+ location table).
 *
 * Everything read in steps 2 and 3 belongs to the process and may be
 * forged: every pointer is checked by the read (a fault is an error),
 * every count and length is bounded here, code objects and strings are
 * compared with the interpreter's own type objects (the location table
 * is only bounded), and no loop runs longer than its bound.  Nothing
 * here allocates or sleeps.
 */
#ifndef OFFS_UPY_H
#define OFFS_UPY_H

#include <linux/types.h>

/* What step 1 found: ELF virtual addresses of the file, and its version. */
struct offs_py_syms {
	u64 runtime;		/* _PyRuntime */
	u64 runtime_size;
	u64 code_type;		/* PyCode_Type */
	u64 unicode_type;	/* PyUnicode_Type */
	u64 eval_start;		/* _PyEval_EvalFrameDefault */
	u64 eval_end;
	u32 version;		/* Py_Version: 0x030b02f0 is 3.11.2 final */
};

/*
 * The file is read like ucfi.h's offs_cfi_src: read(ctx, off, buf, len)
 * fills buf with len bytes at file offset off, 0 or a negative errno;
 * check(check_ctx), if set, is called every OFFS_PY_CHECK_EVERY blocks
 * read (512 bytes of strings, or 21 symbols), may sleep, and ends the
 * scan with its error.
 */
struct offs_py_src {
	int (*read)(void *ctx, u64 off, void *buf, size_t len);
	void *ctx;
	u64 size;
	int (*check)(void *check_ctx);
	void *check_ctx;
};

#define OFFS_PY_CHECK_EVERY	64
#define OFFS_PY_MAX_DYNSTR	(16U << 20)	/* bytes of .dynstr scanned */
#define OFFS_PY_MAX_DYNSYM	(1024U * 1024)	/* symbols of .dynsym */
#define OFFS_PY_MAX_SHNUM	1024U

/* 0 and *out set if the file is a supported CPython, else -ENOENT etc. */
int offs_py_elf_scan(const struct offs_py_src *src, struct offs_py_syms *out);

/* Versions read: 3.11 to 3.13 (PY_VERSION_HEX >> 16). */
#define OFFS_PY_MIN		0x030bU
#define OFFS_PY_MAX		0x030dU

/* _Py_DebugOffsets of 3.13, read as 64-bit words from _PyRuntime + 0. */
#define OFFS_PY_DEBUG_WORDS	73

/* The offsets (bytes) of the fields the walk reads. */
struct offs_py_layout {
	u32 version;
	u16 rt_interp_head;	/* _PyRuntime.interpreters.head */
	u16 is_next;		/* PyInterpreterState.next */
	u16 is_threads;		/* .threads.head */
	u16 ts_next;		/* PyThreadState.next */
	u16 ts_frame;		/* .cframe (3.11, 3.12) or .current_frame */
	u16 ts_native_tid;	/* .native_thread_id */
	s16 cf_frame;		/* _PyCFrame.current_frame, -1: none (3.13) */
	u16 fr_code;		/* _PyInterpreterFrame.f_code / f_executable */
	u16 fr_previous;
	u16 fr_instr;		/* .prev_instr (3.11, 3.12) / .instr_ptr */
	u16 fr_owner;		/* .owner (char) */
	s16 fr_is_entry;	/* .is_entry (bool, 3.11), -1: none */
	u16 co_firstlineno;	/* PyCodeObject, int */
	u16 co_filename;
	u16 co_qualname;
	u16 co_linetable;
	u16 co_firsttraceable;	/* int */
	u16 co_code;		/* co_code_adaptive: the instructions */
	u16 str_ascii;		/* compact ASCII string data */
	u16 str_compact;	/* compact non-ASCII string data */
	u16 ts_interp;		/* PyThreadState.interp */
	s16 rt_gil;		/* the GIL in _PyRuntime (3.11), -1: none */
	s16 is_gil;		/* PyInterpreterState.ceval.gil, a pointer */
	u16 gil_holder;		/* _gil_runtime_state.last_holder */
	u16 gil_locked;		/* ... .locked (int) */
};

/*
 * Fill l for version (Py_Version); dbg is _PyRuntime's first
 * OFFS_PY_DEBUG_WORDS words for 3.13 (NULL before).  -ENOENT for a
 * version not read here, -EINVAL for debug offsets that do not hold.
 */
int offs_py_layout_init(struct offs_py_layout *l, u32 version,
			const u64 *dbg);

/*
 * Reading the process: read(ctx, addr, buf, len) fills buf with len
 * bytes (a multiple of 8) at user address addr, 0 or -EFAULT.  May be
 * called with IRQs off (the module's walk of a pinned thread).
 */
struct offs_py_mem {
	int (*read)(void *ctx, u64 addr, void *buf, size_t len);
	void *ctx;
};

/* Bounds of one process's lists and of one thread's chain. */
#define OFFS_PY_MAX_INTERPS	64
#define OFFS_PY_MAX_THREADS	8192
#define OFFS_PY_MAX_WALK	1024	/* frames of one walk (max) */

/*
 * The PyThreadState whose native_thread_id is tid (as the process's pid
 * namespace numbers it), searched from the _PyRuntime at runtime: 0 and
 * *ts, -ENOENT (no such thread: not a Python thread), -EFAULT, or -ELOOP
 * (a list longer than its bound).
 */
int offs_py_tstate(const struct offs_py_mem *m, const struct offs_py_layout *l,
		   u64 runtime, u32 tid, u64 *ts);

/*
 * Call fn(arg, native thread id, thread state) for every thread state of
 * every interpreter, until it returns true: 0, -EFAULT or -ELOOP as
 * above (fn may have been called for some).
 */
int offs_py_threads(const struct offs_py_mem *m, const struct offs_py_layout *l,
		    u64 runtime,
		    bool (*fn)(void *arg, u64 tid, u64 ts), void *arg);

/*
 * The GIL of the interpreter thread state ts belongs to: where it is
 * (the waiters' futexes lie in its first OFFS_PY_GIL_SIZE bytes: the
 * condition variable and mutex of take_gil()), whether it is held, and
 * by which thread state.  0, or -EFAULT.
 */
#define OFFS_PY_GIL_SIZE	120

struct offs_py_gil {
	u64 addr;
	u64 holder;		/* a PyThreadState, 0 if not held */
};

int offs_py_gil(const struct offs_py_mem *m, const struct offs_py_layout *l,
		u64 runtime, u64 ts, struct offs_py_gil *g);

/* The native thread id of thread state ts: 0, or -EFAULT. */
int offs_py_ts_tid(const struct offs_py_mem *m, const struct offs_py_layout *l,
		   u64 ts, u64 *tid);

/* One frame as the walk found it. */
struct offs_py_frame {
	u64 code;		/* the code object (or anything, unchecked) */
	u64 instr;		/* the instruction pointer */
	u8 last;		/* the outermost frame of its C-level evaluation */
	u8 owner;
};

/*
 * Copy the frame chain of thread state ts, innermost first, into f[max].
 * Returns the number of frames; *truncated when more were there, *err the
 * error that ended the walk (-EFAULT), 0 if it reached the end.  Frames
 * that CPython itself does not show (3.12's and 3.13's C-stack entry
 * frames) are left out; the frame before each has last set.
 */
unsigned int offs_py_walk(const struct offs_py_mem *m,
			  const struct offs_py_layout *l, u64 ts,
			  struct offs_py_frame *f, unsigned int max,
			  bool *truncated, int *err);

/* Names longer than these are cut (truncated set). */
#define OFFS_PY_NAME_MAX	256
#define OFFS_PY_FILE_MAX	512
/*
 * Bytes of one location table read for a line; more: line 0 (no_line).
 * About two bytes per instruction: a function of several thousand
 * lines.  Bounds the reads for one frame at 260 blocks of 64 bytes.
 */
#define OFFS_PY_MAX_LINETABLE	(16U << 10)

struct offs_py_code {
	char qualname[OFFS_PY_NAME_MAX];	/* UTF-8, NUL-terminated */
	char file[OFFS_PY_FILE_MAX];
	u32 line;		/* 0: unknown */
	u32 firstlineno;
	bool truncated;		/* a name was cut */
	bool no_line;		/* the table was too long or damaged */
};

/*
 * Name frame f (a frame of offs_py_walk()): 0 and *out, -ENOENT for a
 * frame CPython would not show (not a code object, or a frame still
 * being set up), -EFAULT.  code_type and unicode_type are the
 * addresses of PyCode_Type and PyUnicode_Type in the process.
 */
int offs_py_code(const struct offs_py_mem *m, const struct offs_py_layout *l,
		 u64 code_type, u64 unicode_type,
		 const struct offs_py_frame *f, struct offs_py_code *out);

#endif /* OFFS_UPY_H */
