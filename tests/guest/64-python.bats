#!/usr/bin/env bats
# Python frames in the module's stacks (issue 44): CPython 3.11 (Debian's
# and pyenv's), 3.12 and 3.13 (pyenv's, and Debian 13's in a root of its
# own), running
# tests/workload/offsample-pywait.py (threads in a lock, a queue, a socket
# accept, a CPU loop, a recursion, a call back from C; the main thread in
# a sleep).  The oracle is py-spy 0.4.3 (`py-spy dump --json` on the same
# threads): every thread's Python functions and files equal offsample's,
# frame for frame, and their lines too for threads that wait.  The frames
# take the place of the interpreter's _PyEval_EvalFrameDefault frames
# (named by offsample-symbolize), and `offsample report` and the flame
# graph show the program's functions with files and lines.
#
# Kernels: every test kernel: the module reads the interpreter's memory
# through each kernel's mm and finds threads by their id in their own pid
# namespace: Debian's interpreter, the pid namespace and threads that exit
# while sampled run on every kernel.  Tests tagged once-1 or once-2 differ
# from those only in what the module reads from that memory (another
# interpreter's layout, a parameter, the GIL's fields, the memo, the
# stats): they run in one guest of make test (tests/guest/run.sh,
# OFFS_ONCE).  The tools' rendering of what these tests record (naming
# the native frames, report, collapse, flame graph) runs on the host after
# the guests, on every interpreter's recording from whichever guest made
# it: tests/recorded/python.bats.

load lib

OFFS=$TOP/tools/offsample
PYSPY=$TOP/build/deps/pyspy/bin/py-spy

source "$TOP/tests/lib/python.bash"

setup_file() {
	load lib
	offs_load hz=19 key=tid
}

teardown_file() {
	load lib
	pkill -f offsample-pywait.py || true
	offs_unload
}

teardown() {
	[ -z "${PY_PID:-}" ] || kill -KILL "$PY_PID" 2>/dev/null || :
	echo 1 > /sys/module/offsample/parameters/python_stacks
	echo 32 > /sys/module/offsample/parameters/max_user_depth
	echo 19 > /sys/module/offsample/parameters/hz
	echo 1 > /sys/module/offsample/parameters/enabled
}

# sample_py PYTHON [ARGS]: the workload, 3 s of its samples drained to
# $BATS_TEST_TMPDIR/d, py-spy's view of it in spy.json (not with
# PY_NO_SPY=1: a dump costs seconds under emulation), then stopped.
sample_py() {
	local d=$BATS_TEST_TMPDIR
	py_start "$d/ready" "$@"
	sleep 1
	cat $P/drain > /dev/null
	sleep 3
	cat $P/drain > "$d/d"
	# (Not through unshare: py-spy would be given the wrapper.)
	if [ -x "$PYSPY" ] && [ -z "${PY_NO_SPY:-}" ] && [[ "${PY_WRAP:-}" != unshare* ]]; then
		"$PYSPY" dump --json --pid "$PY_PID" > "$d/spy.json"
	fi
	# unshare ignores SIGTERM while its child runs; --kill-child takes
	# the child with it when it is killed.
	kill ${PY_WRAP:+-KILL} "$PY_PID"
	wait "$PY_PID" 2>/dev/null || :
	PY_PID=
}

# check_py LABEL: offsample's Python frames equal py-spy's.
check_py() {
	local py
	py=$(py_interp "$1")
	[ -x "$PYSPY" ]
	sample_py "$py"
	# report, collapse and the flame graph of it: on the host
	# (tests/recorded/python.bats).
	cp "$BATS_TEST_TMPDIR/d" "$ARTIFACTS/python-$1-$KREL.stacks"
	run -0 "$TOP/tests/upy/py-compare" --stacks "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/spy.json"
	echo "$output"
	assert_output --regexp 'threads=7 frames=[0-9]+ mismatches=0'
	# The issue's five functions, by name, with file and line.
	local f
	for f in Sleeper.nap hold_lock wait_queue serve spin; do
		grep -qF "[py]$f ($TOP/tests/workload/offsample-pywait.py:" "$BATS_TEST_TMPDIR/d" ||
			{ echo "no $f"; return 1; }
	done
	# Both reasons: waits, and the spinner's on-CPU samples.
	awk -F'\t' '!/^#/ && $2 == "cpu" && $9 ~ /\[py\]spin \(/ { c += $1 }
		!/^#/ && $2 == "lock" && $9 ~ /\[py\]hold_lock \(/ { l += $1 }
		END { print "cpu", c, "lock", l; exit !(c > 0 && l > 0) }' "$BATS_TEST_TMPDIR/d"
}

@test "python: Debian's python3.11: every thread's Python frames equal py-spy's" {
	check_py debian
}

# bats test_tags=once-1
@test "python: pyenv 3.11: every thread's Python frames equal py-spy's" {
	check_py 3.11
}

# bats test_tags=once-2
@test "python: pyenv 3.12: every thread's Python frames equal py-spy's" {
	check_py 3.12
}

# bats test_tags=once-2
@test "python: pyenv 3.13: every thread's Python frames equal py-spy's" {
	check_py 3.13
}

# bats test_tags=once-1
@test "python: Debian 13's python3.13 in its own root (chroot): Python frames equal py-spy's" {
	local d=$BATS_TEST_TMPDIR
	[ -x "$PY_TRIXIE/usr/bin/python3.13" ] || fail "no Debian 13 root at $PY_TRIXIE (tests/lib/deps.sh python makes it)"
	PY_WRAP="chroot $PY_TRIXIE" PY_SCRIPT=$PY_TRIXIE_SCRIPT sample_py python3.13
	cp "$d/d" "$ARTIFACTS/python-trixie-$KREL.stacks"
	run -0 "$TOP/tests/upy/py-compare" --stacks "$d/d" "$d/spy.json"
	echo "$output"
	assert_output --regexp 'threads=7 frames=[0-9]+ mismatches=0'
	# Files as the process sees them: the interpreter's and the script's.
	grep -qF '[py]hold_lock (/opt/offsample/offsample-pywait.py:' "$d/d"
	grep -qE '# file: .* path=/usr/bin/python3\.13$' "$d/d"
}

# bats test_tags=once-2
@test "python: Python frames take the place of _PyEval_EvalFrameDefault; python_stacks=0 gives them back" {
	local py d=$BATS_TEST_TMPDIR
	py=$(py_interp 3.12)
	PY_NO_SPY=1 sample_py "$py"
	# Named and checked frame by frame on the host, where
	# offsample-symbolize costs a fraction of what it costs here
	# (tests/recorded/python.bats).
	cp "$d/d" "$ARTIFACTS/python-merged-$KREL.stacks"
	grep -qF '[py]hold_lock (' "$d/d"
	# Turned off: the interpreter's frames, no Python ones.
	echo 0 > /sys/module/offsample/parameters/python_stacks
	PY_NO_SPY=1 sample_py "$py"
	cp "$d/d" "$ARTIFACTS/python-native-$KREL.stacks"
	run -1 grep -F '[py]' "$d/d"
	grep -qE 'python3\.12[^;[:space:]]*\+0x[0-9a-f]+' "$d/d"
}

@test "python: a process in its own pid namespace (threads found by their namespace's ids)" {
	local py d=$BATS_TEST_TMPDIR
	py=$(py_interp debian)
	PY_WRAP="unshare -p -f --kill-child --mount-proc" sample_py "$py"
	for f in Sleeper.nap hold_lock wait_queue serve spin; do
		grep -qF "[py]$f (" "$d/d" || { echo "no $f"; return 1; }
	done
}

# bats test_tags=once-1
@test "python: a recursion deeper than max_user_depth ends in [truncated]" {
	local py d=$BATS_TEST_TMPDIR
	py=$(py_interp 3.12)
	echo 16 > /sys/module/offsample/parameters/max_user_depth
	PY_NO_SPY=1 sample_py "$py" --depth 60
	run -0 awk -F'\t' '!/^#/ && $6 == "python3.12" && $9 ~ /\[py\]recurse / { print $9 }' "$d/d"
	[ "${#lines[@]}" -ge 1 ]
	local us=${lines[0]} n
	n=$(tr ';' '\n' <<< "$us" | grep -c .)
	echo "$us" | tr ';' '\n'
	# 16 frames and the mark.
	[ "$n" -eq 17 ]
	[ "${us##*;}" = "[truncated]" ]
	[ "$(tr ';' '\n' <<< "$us" | grep -c '^\[py\]recurse ')" -ge 10 ]
}

@test "python: threads that exit while sampled: their frames while they live, no error" {
	local py d=$BATS_TEST_TMPDIR e0
	py=$(py_interp 3.13)
	e0=$(stat_get py_errors)
	PY_NO_SPY=1 sample_py "$py" --churn
	# The churning thread's frames, and the short-lived threads' now and
	# then (each lives 2 ms of the tick's 52).
	grep -qF '[py]churn (' "$d/d"
	grep -F '[py]short_life (' "$d/d" | head -n3 || :
	stat_get py_errors
	echo "py_errors before $e0"
}

# bats test_tags=once-2
@test "python: a thread waiting for the GIL has the GIL as its lock, and its holder is named (offsample blockers)" {
	local py d=$BATS_TEST_TMPDIR
	py=$(py_interp 3.12)
	echo tid,wobj > /sys/module/offsample/parameters/key
	PY_NO_SPY=1 sample_py "$py" --gil
	echo tid > /sys/module/offsample/parameters/key
	# The two spinners' thread ids, from their Python frames.
	local spinners
	spinners=$(awk -F'\t' '!/^#/ && $9 ~ /\[py\]spin \(/ { print $5 }' "$d/d" | sort -u | tr '\n' ' ')
	echo "spinners: $spinners"
	[ "$(wc -w <<< "$spinners")" -eq 2 ]
	# Waiting for the GIL: a futex wait on it (wobj futex(gil)) under
	# spin's Python frames ...
	run -0 awk -F'\t' '!/^#/ && $10 == "futex(gil)" && $9 ~ /\[py\]spin \(/ { n += $1 } END { print n + 0 }' "$d/d"
	echo "samples waiting for the GIL: $output"
	[ "$output" -gt 0 ]
	# ... and the holder named: the other spinner, as kind=gil edges
	# (those that name one: at a hand-off the GIL may read unlocked,
	# holder=? why=invalid).
	run -0 awk -F'\t' -v sp="$spinners" 'BEGIN { split(sp, a, " "); for (i in a) s[a[i]] = 1 }
		/^# blocker: / && /\tkind=gil\t/ && !/\thstate=unknown/ {
			for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			sub(/^# blocker: samples=/, "", $1)
			if (s[f["waiter"]] && s[f["holder"]] && f["waiter"] != f["holder"]) good += $1; else bad += $1
		}
		END { print good + 0, bad + 0 }' "$d/d"
	echo "gil edges (waiter and holder the two spinners / other): $output"
	[ "${output% *}" -gt 0 ]
	[ "${output#* }" -eq 0 ]
	run -0 "$OFFS" blockers "$d/d"
	echo "$output"
	assert_output --partial 'gil'
	[ "$(stat_get py_gil_waits)" -gt 0 ]
}

# bats test_tags=once-1
@test "python: threads waiting at the same place are named from the window's memo, as py-spy names them" {
	local py h0 d=$BATS_TEST_TMPDIR
	py=$(py_interp debian)
	h0=$(stat_get py_code_memo_hits)
	# 30 threads, each 6 calls deep in the same functions, then asleep.
	PY_SCRIPT=$TOP/tests/bench/pysleepers.py sample_py "$py" -n 30 -d 6
	run -0 "$TOP/tests/upy/py-compare" --stacks "$d/d" "$d/spy.json"
	echo "$output"
	assert_output --regexp 'threads=31 frames=[0-9]+ mismatches=0'
	grep -qF '[py]same_level_5 (' "$d/d"
	# Captured at least once (the first tick in the window): the other 29
	# threads' 6 level frames each come from the memo, at least.
	echo "memo hits: $(($(stat_get py_code_memo_hits) - h0))"
	[ $(($(stat_get py_code_memo_hits) - h0)) -ge $((29 * 6)) ]
}

# The sampler meets a process before the table of its interpreter's file
# is built (in the background): it cannot tell then whether the process
# runs Python, and a thread it captured once the table was ready, within
# the same visit of the process, had its native frames whole but no
# Python frames.  That capture was cached, and served for as long as the
# thread waited (make test of 266034e: a pyenv 3.13 thread with 63
# samples, none with a Python frame).  1,000 threads 20 calls deep, at
# 1000 Hz while the table is built: the sampler is in the process's visit
# most of the time (about 30 ms a visit here), so the build ends during
# one.  Without the fix 275 to 982 records had no Python frame (4 runs
# on 6.1 and 6.12).
# bats test_tags=once-1
@test "python: threads captured while the interpreter's table is built are not kept without their Python frames" {
	local py d=$BATS_TEST_TMPDIR l0 p0 i
	py=$(py_interp 3.13)
	echo 0 > $PARAM/enabled
	# Every table forgotten: libpython's is built again when next met.
	echo 0 > $PARAM/cfi_cache_mb
	echo 64 > $PARAM/cfi_cache_mb
	PY_SCRIPT=$TOP/tests/bench/pysleepers.py py_start "$d/ready" "$py" -n 1000 -d 20
	l0=$(stat_get py_lost)
	p0=$(stat_get py_processes)
	echo 1000 > $PARAM/hz
	echo 1 > $PARAM/enabled
	# Until the interpreter was read in a window: its table is built.
	for i in $(seq 300); do
		[ "$(stat_get py_processes)" -eq "$p0" ] || break
		sleep 0.1
	done
	echo 19 > $PARAM/hz
	[ "$(stat_get py_processes)" -gt "$p0" ]
	sleep 0.5
	cat $P/drain > /dev/null
	sleep 2
	cat $P/drain > "$d/d"
	cp "$d/d" "$ARTIFACTS/python-building-$KREL.stacks"
	echo "py_lost: $(($(stat_get py_lost) - l0))"
	# Captures were made while the table was pending: counted, not cached.
	[ "$(stat_get py_lost)" -gt "$l0" ]
	# Every thread of the process (1,001), each sample with Python frames.
	run -0 awk -F'\t' -v pid="$PY_PID" '!/^#/ && $4 == pid {
			t[$5] = 1
			if ($9 !~ /\[py\]/) { bad = bad " " $5; nbad++ }
		}
		END {
			for (k in t) n++
			print "threads", n, "records without Python frames", nbad + 0 ":" bad
			exit !(n == 1001 && bad == "")
		}' "$d/d"
	echo "$output"
}

# bats test_tags=once-2
@test "python: stats count interpreters, frames and names" {
	local py
	py=$(py_interp debian)
	# Read while the workload runs: its names are held by its records
	# and cache entries, and freed with them once it is gone and drained
	# (make test of 90acd11 read 0 names right after a drain and a kill).
	# teardown() stops it.
	py_start "$BATS_TEST_TMPDIR/ready" "$py"
	sleep 2
	cat $P/stats | grep '^py_'
	[ "$(stat_get py_processes)" -gt 0 ]
	[ "$(stat_get py_frames)" -gt 0 ]
	local n b
	n=$(stat_get py_names_unique)
	b=$(stat_get py_names_bytes)
	[ "$n" -gt 0 ]
	# Each name as allocated: the header and two short strings (a kmalloc
	# of 64 bytes at least), at most the longest kind's 1 KiB; all of
	# them part of memory_bytes.
	[ "$b" -ge $((n * 64)) ]
	[ "$b" -le $((n * 1024)) ]
	[ "$(stat_get memory_bytes)" -gt "$b" ]
	[ "$(stat_get py_names_dropped)" -eq 0 ]
	[ "$(stat_get py_threads_over)" -eq 0 ]
}
