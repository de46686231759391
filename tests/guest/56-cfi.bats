#!/usr/bin/env bats
# User stacks of programs built without frame pointers (most distribution
# binaries, libc among them), unwound with their .eh_frame compiled into
# tables (module/ucfi.c, cficache.c): the same frames as eu-stack (elfutils)
# finds, thread by thread; frame pointers only with cfi_cache_mb=0; the
# tables' memory bounded by cfi_cache_mb; CFI that cannot be followed ends
# a stack (counted), code without CFI is followed with frame pointers;
# call-frame information damaged
# on disk under running code (tests/guest/cfi-mutate) never harms the
# module.
#
# Kernels: every test kernel: user memory, mmap locks and file reads are
# the kernel's, and eu-stack checks each of them.
# Tests tagged once-1 or once-2 test only the module's own logic and run
# in one guest of make test (tests/guest/run.sh, OFFS_ONCE).

load lib

NOFP=$TOP/build/offsample-workload-nofp
CMP=$TOP/tests/guest/ustack-vs-eustack

teardown() {
	if [ -f "$BATS_TEST_TMPDIR/pids" ]; then kill $(cat "$BATS_TEST_TMPDIR/pids") 2>/dev/null || true; fi
	if mountpoint -q "$BATS_TEST_TMPDIR/libs"; then
		pkill -KILL -f offsample-cfihost || true
		for i in $(seq 50); do umount "$BATS_TEST_TMPDIR/libs" 2>/dev/null && break; sleep 0.1; done
	fi
	pkill -f offsample-workload-nofp || true
	pkill -f 'offsample-safety sigframe' || true
}

teardown_file() {
	load lib
	offs_unload
}

# nofp_start OUT [N]: the workload without frame pointers, every libc
# wait, N threads each (default 1).
nofp_start() {
	"$NOFP" -n "${2:-1}" sleep mutex pipe poll accept wait > "$1" 2>&1 3>&- &
	wait_line "$1" '^ready$' 600 $! > /dev/null
}

@test "cfi: every thread's user stack is eu-stack's, frame for frame" {
	local d=$BATS_TEST_TMPDIR
	# thread_cache=0: every record below is a fresh walk, most of its
	# rules taken from the sampler's memo of the process, and the second
	# thread of each kind's stack from its memo of stacks (0.5.5).
	offs_load hz=19 key=tid thread_cache=0
	nofp_start "$d/wl.out" 2
	"$TOP/build/offsample-safety" sigframe > "$d/sf.out" 2>&1 3>&- &
	wait_line "$d/sf.out" '^ready$' 300 $! > /dev/null
	# Tables are built in the background; then captures are whole.
	for i in $(seq 100); do
		[ "$(stat_get cfi_builds_pending)" = 0 ] && [ "$(stat_get cfi_built)" -ge 3 ] && break
		sleep 0.1
	done
	sleep 0.5
	cat $P/drain > /dev/null
	sleep 1.5
	cat $P/drain > "$d/d"
	echo "cfi: $(stat_get cfi_built) built, $(stat_get cfi_failed) failed, $(stat_get cfi_bytes) bytes, $(stat_get user_cfi_frames) frames"
	run -0 "$CMP" "$d/d" $(pgrep -f offsample-workload-nofp) $(pgrep -f 'offsample-safety sigframe')
	echo "$output"
	refute_output --partial differs
	refute_output --partial "no record"
	# Through libc's waits to the program's own functions and main.
	"$TOP/tools/offsample-symbolize" < "$d/d" > "$d/sym"
	run -0 awk -F'\t' '!/^#/ && $7 == "osw-mutex-0" { print $9 }' "$d/sym"
	assert_output --regexp 'pthread_mutex_lock.*t_mutex\+0x[0-9a-f]+ \(offsample-workload-nofp\);start_thread'
	run -0 awk -F'\t' '!/^#/ && $7 == "oss-sigframe" { print $9 }' "$d/sym"
	assert_output --regexp 'sig_handler\+0x[0-9a-f]+ \(offsample-safety\);.*;sig_reader\+'
	[ "$(stat_get user_cfi_frames)" -gt 0 ]
	echo "memo: $(stat_get user_rule_memo_hits) rules, $(stat_get user_stack_memo_hits) stacks"
	[ "$(stat_get user_rule_memo_hits)" -gt 0 ]
	[ "$(stat_get user_stack_memo_hits)" -gt 0 ]
}

# bats test_tags=once-1
@test "cfi: cfi_cache_mb=0 walks frame pointers only (the leaf and little else)" {
	local d=$BATS_TEST_TMPDIR
	offs_load hz=19 key=tid cfi_cache_mb=0
	nofp_start "$d/wl.out"
	sleep 1.5
	cat $P/drain > "$d/d"
	assert_equal "$(stat_get cfi_tables)" 0
	assert_equal "$(stat_get user_cfi_frames)" 0
	"$TOP/tools/offsample-symbolize" < "$d/d" > "$d/sym"
	run -0 awk -F'\t' '!/^#/ && $7 == "osw-mutex-0" { print $9 }' "$d/sym"
	refute_output --partial t_mutex
	# Turned on while loaded: the next captures use the tables.
	echo 64 > $PARAM/cfi_cache_mb
	for i in $(seq 100); do [ "$(stat_get cfi_built)" -ge 2 ] && break; sleep 0.1; done
	sleep 0.5
	cat $P/drain > /dev/null
	sleep 1
	cat $P/drain | "$TOP/tools/offsample-symbolize" > "$d/sym2"
	run -0 awk -F'\t' '!/^#/ && $7 == "osw-mutex-0" { print $9 }' "$d/sym2"
	assert_output --partial t_mutex
}

# Once (make test): the table cache's own bound.
# bats test_tags=once-1
@test "cfi: tables stay within cfi_cache_mb, evicting or refusing the rest" {
	offs_load hz=19 cfi_cache_mb=1
	# Many programs without frame pointers: perl, python3, bash, ours.
	perl -e 'sleep 600' > /dev/null 2>&1 3>&- &
	echo $! > "$BATS_TEST_TMPDIR/pids"
	python3 -c 'import time; time.sleep(600)' > /dev/null 2>&1 3>&- &
	echo $! >> "$BATS_TEST_TMPDIR/pids"
	nofp_start "$BATS_TEST_TMPDIR/wl.out"
	for i in $(seq 150); do [ "$(stat_get cfi_builds_pending)" = 0 ] && break; sleep 0.1; done
	sleep 1
	echo "cfi: $(stat_get cfi_tables) tables, $(stat_get cfi_bytes) bytes, built $(stat_get cfi_built), evicted $(stat_get cfi_evicted), too big $(stat_get cfi_too_big)"
	[ "$(stat_get cfi_bytes)" -le $((1 << 20)) ]
	[ "$(stat_get cfi_built)" -ge 2 ]
	[ $(( $(stat_get cfi_evicted) + $(stat_get cfi_too_big) )) -gt 0 ]
	run bash -c "echo 1000000 > $PARAM/cfi_cache_mb"
	assert_failure
	run -0 dmesg
	assert_output --partial "cfi_cache_mb=1000000 refused"
}

# bats test_tags=once-2
@test "cfi: cfi_cache_mb=0 written while tables are in use frees them all" {
	local i b bad=0
	# thread_cache=0 and a high rate: the sampler is in some process's
	# window (holding its tables) most of the time, so writes land there.
	offs_load hz=99 thread_cache=0
	perl -e 'sleep 600' > /dev/null 2>&1 3>&- &
	echo $! > "$BATS_TEST_TMPDIR/pids"
	nofp_start "$BATS_TEST_TMPDIR/wl.out" 20
	for i in $(seq 8); do
		echo 64 > $PARAM/cfi_cache_mb
		for b in $(seq 100); do [ "$(stat_get cfi_tables)" -ge 3 ] && [ "$(stat_get cfi_builds_pending)" = 0 ] && break; sleep 0.1; done
		echo 0 > $PARAM/cfi_cache_mb
		sleep 0.3
		b=$(stat_get cfi_bytes)
		echo "round $i: cfi_bytes $b, tables $(stat_get cfi_tables)"
		[ "$b" = 0 ] || bad=$((bad + 1))
	done
	assert_equal "$bad" 0
	# A build queued just before the last write ends and keeps nothing.
	cfi_settled
	assert_equal "$(stat_get cfi_tables)" 0
}

# threads_of FILE K...: fails naming the first cfh-K thread with no sample
# in FILE (a drain).
threads_of() {
	local f=$1 k
	shift
	for k in "$@"; do
		[ "$(sum_counts "$f" "\$7 == \"cfh-$k\"")" -gt 0 ] ||
			{ echo "thread cfh-$k has no sample" >&2; return 1; }
	done
}

# cfi_settled: wait until no table build is queued or running.
cfi_settled() {
	local i
	for i in $(seq 300); do
		[ "$(stat_get cfi_builds_pending)" = 0 ] && return 0
		sleep 0.1
	done
	echo "table builds still pending: $(stat_get cfi_builds_pending)" >&2
	return 1
}

@test "cfi: a stack ends where its call-frame information cannot be followed (unwind_errors); code without an FDE goes on with frame pointers" {
	local d=$BATS_TEST_TMPDIR L=$TOP/build/offsample-cfilib.so e0 e1 bad k f
	# Hand-written callers of cfl_inner with wrong or no CFI
	# (tests/workload/offsample-cfilib.c): cfh-0..2 wrong, cfh-3 none,
	# cfh-4 the compiled chain.
	"$TOP/build/offsample-cfihost" "$L:cfl_bad_cfa" "$L:cfl_bad_align" \
		"$L:cfl_bad_expr" "$L:cfl_nocfi" "$L" > "$d/host.out" 2>&1 3>&- &
	echo $! > "$d/pids"
	wait_line "$d/host.out" '^ready$' 600 $! > /dev/null
	offs_load hz=19 key=tid thread_cache=0
	cfi_settled
	sleep 0.5
	# Read before the first drain and after the second: every sample of
	# the second drain had its walk counted in between.
	e0=$(stat_get unwind_errors)
	cat $P/drain > /dev/null
	sleep 1.5
	cat $P/drain > "$d/d"
	e1=$(stat_get unwind_errors)
	"$TOP/tools/offsample-symbolize" < "$d/d" > "$d/sym"
	k=0
	for f in cfl_bad_cfa cfl_bad_align cfl_bad_expr; do
		run -0 awk -F'\t' -v t=cfh-$k '!/^#/ && $7 == t { print $9 }' "$d/sym"
		echo "cfh-$k: $output"
		[ -n "$output" ]
		# Every stack of the thread ends at the frame whose rule is wrong.
		assert_output --regexp "(^|;)cfl_inner\\+0x[0-9a-f]+ \\(offsample-cfilib\\.so\\);$f\\+0x[0-9a-f]+ \\(offsample-cfilib\\.so\\)$"
		[ "$(echo "$output" | grep -cv ";$f+0x[0-9a-f]* (offsample-cfilib.so)\$")" = 0 ]
		k=$((k + 1))
	done
	bad=$(sum_counts "$d/d" '$7 == "cfh-0" || $7 == "cfh-1" || $7 == "cfh-2"')
	echo "unwind_errors $e0 -> $e1, samples of the three threads $bad"
	[ "$bad" -gt 0 ]
	[ $((e1 - e0)) -ge "$bad" ]
	# No FDE: its frame pointer leads on to the thread's start.
	run -0 awk -F'\t' '!/^#/ && $7 == "cfh-3" { print $9 }' "$d/sym"
	assert_output --regexp 'cfl_inner\+0x[0-9a-f]+ \(offsample-cfilib\.so\);cfl_nocfi\+0x[0-9a-f]+ \(offsample-cfilib\.so\);run\+0x[0-9a-f]+ \(offsample-cfihost\);start_thread'
	run -0 awk -F'\t' '!/^#/ && $7 == "cfh-4" { print $9 }' "$d/sym"
	assert_output --regexp 'cfl_inner\+0x[0-9a-f]+ \(offsample-cfilib\.so\);cfl_middle\+0x[0-9a-f]+ \(offsample-cfilib\.so\);cfl_outer\+0x[0-9a-f]+ \(offsample-cfilib\.so\);run\+0x[0-9a-f]+ \(offsample-cfihost\);start_thread'
	pkill -KILL -f offsample-cfihost
	offs_unload
	dmesg_clean
}

# swap_run [--anon] [--mmap] [--churn N]: offsample-cfihost --swap with
# two copies of one library, loaded in turn every $SWAP_MS ms (300) by
# thread swap-a / swap-b at one address (checked); swap-tick makes the
# process change at every tick, so its copy of the mappings is kept from
# tick to tick (module/umm.c) until it must be copied again.  Records 3 s
# (up to 13 s: below); sets $d/sym and the deltas of ticks (dt), copies
# kept (dk) and made (dc), walks found against a copy that had changed
# (dr), and kept copies found unchanged by a walk of the mappings after
# their sign moved (dq); asserts that every stack of swap-a / swap-b
# through cfl_outer names its own library, never the other (a copy kept
# past a swap names the other file).
swap_run() {
	local L=$TOP/build/offsample-cfilib.so a b x y
	mkdir -p "$d/sw"
	cp "$L" "$d/sw/swap-a.so"
	cp "$L" "$d/sw/swap-b.so"
	offs_load hz=19 key=tid
	"$TOP/build/offsample-cfihost" --swap "${SWAP_MS:-300}" "$@" "$d/sw/swap-a.so" "$d/sw/swap-b.so" \
		> "$d/host.out" 2>&1 3>&- &
	echo $! > "$d/pids"
	wait_line "$d/host.out" '^ready$' 600 $! > /dev/null
	run -0 sed -n 's/^base a=\(0x[0-9a-f]*\) b=\(0x[0-9a-f]*\)$/\1 \2/p' "$d/host.out"
	read -r a b <<< "$output"
	echo "cfl_outer in swap-a.so at $a, in swap-b.so at $b"
	[ -n "$a" ] && [ "$a" = "$b" ]
	cfi_settled
	sleep 0.6
	cat $P/drain > /dev/null
	cat $P/stats > "$d/s0"
	# 3 s, then 2 s more at a time (5 at most) until both threads were
	# captured inside the library: in a slow guest a swap thread spends
	# most of its time in dlopen() and dlclose() (6.12, a loaded host,
	# 2026-12-06: one capture of swap-a inside it in 3 s, none of swap-b).
	: > "$d/sym"
	sleep 3
	for x in 1 2 3 4 5 6; do
		cat $P/drain > "$d/d"
		"$TOP/tools/offsample-symbolize" < "$d/d" >> "$d/sym"
		awk -F'\t' '!/^#/ && $9 ~ /cfl_outer/ { n[$7]++ } END { exit !(n["swap-a"] && n["swap-b"]) }' "$d/sym" && break
		sleep 2
	done
	cat $P/stats > "$d/s1"
	dt=$(stat_delta ticks "$d/s0" "$d/s1")
	dk=$(stat_delta user_maps_kept "$d/s0" "$d/s1")
	dc=$(stat_delta user_maps_copied "$d/s0" "$d/s1")
	dr=$(stat_delta user_maps_raced "$d/s0" "$d/s1")
	dq=$(stat_delta user_maps_rechecked "$d/s0" "$d/s1")
	echo "# swap $*: ticks $dt: copies kept $dk (rechecked $dq), made $dc; walks against a changed copy $dr;" \
		"captures inside the library: $(awk -F'\t' '!/^#/ && $9 ~ /cfl_outer/ { n[$7] += $1 } END { printf "swap-a %d, swap-b %d", n["swap-a"], n["swap-b"] }' "$d/sym")" >&3
	for x in a b; do
		y=$([ $x = a ] && echo b || echo a)
		run -0 awk -F'\t' -v t=swap-$x '!/^#/ && $7 == t && $9 ~ /cfl_outer/ { print $9 }' "$d/sym"
		echo "swap-$x: $(echo "$output" | sort | uniq -c)"
		[ -n "$output" ]
		[ "$(echo "$output" | grep -c "cfl_outer+0x[0-9a-f]* (swap-$x\\.so)")" = "$(echo "$output" | wc -l)" ]
		[ "$(echo "$output" | grep -c "(swap-$y\\.so)")" = 0 ]
	done
	pkill -KILL -f offsample-cfihost
	offs_unload
	dmesg_clean
}

@test "cfi: mappings kept from tick to tick are copied again once they change: a library swapped at the same address is named" {
	local d=$BATS_TEST_TMPDIR dt dk dc dr dq
	swap_run
	# Ten swaps in the 3 s; the other ticks find the copy unchanged.
	[ "$dk" -ge $((dt / 2)) ]
}

@test "cfi: a kept copy of the mappings the snapshot locked for (a frame in anonymous code) is copied again, swapped library named" {
	local d=$BATS_TEST_TMPDIR dt dk dc dr dq
	# swap-tick sleeps from anonymous code: each capture of it takes the
	# mmap lock to map that frame, which on 5.10 and 6.1 hides whether a
	# writer came before (the lock's owner is the sampler again): the
	# copy must be checked again at the next tick, by a walk of the
	# mappings, and copied again after each swap (6.12's mm_lock_seq is
	# not moved by readers: kept there until a swap).
	swap_run --anon
	[ "$dc" -gt 0 ]
}

@test "cfi: a library swapped between the copy of the mappings and a thread's capture is named, never the other" {
	local d=$BATS_TEST_TMPDIR dt dk dc dr dq
	# 160 threads captured before the swapping one keep the window open
	# for a while; a swap every 2 ms falls in it at most ticks.  The walk
	# of a thread whose library changed after the copy is caught (the
	# copy's sign moved and its frame's mapping is another file's), the
	# mappings copied again and the thread captured again.
	SWAP_MS=2 swap_run --churn 160
	[ "$dr" -gt 0 ]
}

@test "cfi: a kept copy is used again after a writer that changed no executable mapping (a walk of the mappings, no new copy)" {
	local d=$BATS_TEST_TMPDIR dt dk dc dr dq
	# swap-tick maps and unmaps an anonymous page every 5 ms: the copy's
	# sign moves at every tick, and each tick made a new copy of it.  The
	# library is swapped every 1.5 s, so two swaps need one in the 3 s
	# (the other copies counted are the test's own short-lived processes:
	# 10-25 in this window of 60-70 ticks).
	SWAP_MS=1500 swap_run --mmap
	[ "$dq" -ge $((dt / 2)) ]
	[ "$dc" -le $((dt / 2)) ]
}

@test "cfi: each of 16 processes captured at every tick keeps its copy of the mappings from tick to tick" {
	local d=$BATS_TEST_TMPDIR i p dt dk dc df
	# 16 processes with a thread that naps 3 ms at a time: each is
	# captured in full at every tick, in a window of its own.  Up to
	# 0.9.5 eight copies were kept and the others' made again at every
	# tick (user_maps_keep_full), about an eighth of a cold capture.
	offs_load hz=19 kthreads=0
	for i in $(seq 16); do
		"$OFFS_WORKLOAD" -n 1 nap > "$d/nap$i.out" 2>&1 3>&- &
		echo $! >> "$d/pids"
	done
	i=0
	for p in $(cat "$d/pids"); do
		i=$((i + 1))
		wait_line "$d/nap$i.out" '^ready$' 600 "$p" > /dev/null
	done
	sleep 1
	cat $P/drain > /dev/null
	cat $P/stats > "$d/s0"
	sleep 3
	cat $P/stats > "$d/s1"
	dt=$(stat_delta ticks "$d/s0" "$d/s1")
	dk=$(stat_delta user_maps_kept "$d/s0" "$d/s1")
	dc=$(stat_delta user_maps_copied "$d/s0" "$d/s1")
	df=$(stat_delta user_maps_keep_full "$d/s0" "$d/s1")
	echo "# ticks $dt: copies kept $dk, made $dc, not kept for want of a slot $df" >&3
	[ "$dt" -ge 20 ]
	[ "$df" -eq 0 ]
	# The 16 nappers at (nearly) every tick, from their kept copies.
	[ "$dk" -ge $((dt * 14)) ]
	# New copies: the test's own short-lived processes only.
	[ "$dc" -le "$dt" ]
}

@test "cfi: a library rewritten in place under a kept copy of the mappings gets a table of its new contents" {
	local d=$BATS_TEST_TMPDIR b0 i
	# A file changed in place (new times) is another file to the module:
	# its process's kept copy compares its files with their tables once a
	# second and is made again (0.9.6).  Before, on kernels whose copies
	# stay valid while no writer comes (6.12), the old table served for
	# as long as the process ran between ticks.
	mkdir "$d/libs"
	mount -t tmpfs -o size=8m offs-rw "$d/libs"
	mkfifo "$d/fifo"
	cp "$TOP/build/offsample-cfilib.so" "$d/libs/rw.so"
	"$TOP/build/offsample-cfihost" "$d/libs/rw.so" > "$d/host.out" 2>&1 3>&- &
	echo $! > "$d/pids"
	wait_line "$d/host.out" '^ready$' 600 $! > /dev/null
	offs_load hz=19 key=tid thread_cache=0
	cfi_settled
	sleep 1.5
	cat $P/stats > "$d/s0"
	sleep 1.5
	cat $P/stats > "$d/s1"
	# From here on no new program runs (its own table would be built):
	# builtins only, after the tables of the last ones were built.  The
	# file's first byte is written again as it is.
	read -r -t 0.3 <> "$d/fifo" || true
	for ((i = 1; i <= 50; i++)); do
		[ "$(stat_get cfi_builds_pending)" = 0 ] && break
		read -r -t 0.1 <> "$d/fifo" || true
	done
	b0=$(stat_get cfi_built)
	exec 4<> "$d/libs/rw.so"
	printf '\177' >&4
	exec 4>&-
	for ((i = 1; i <= 60; i++)); do
		[ "$(stat_get cfi_built)" -gt "$b0" ] && break
		read -r -t 0.1 <> "$d/fifo" || true
	done
	cat $P/stats > "$d/s2"
	echo "# tables built before the change $b0, after it $(stat_get cfi_built) (waited $i tenths of a second);" \
		"copies of the mappings kept, made: before $(stat_delta user_maps_kept "$d/s0" "$d/s1"), $(stat_delta user_maps_copied "$d/s0" "$d/s1")" \
		"in $(stat_delta ticks "$d/s0" "$d/s1") ticks, after $(stat_delta user_maps_kept "$d/s1" "$d/s2"), $(stat_delta user_maps_copied "$d/s1" "$d/s2")" >&3
	# Kept from tick to tick before the change.
	[ "$(stat_delta user_maps_kept "$d/s0" "$d/s1")" -ge 10 ]
	[ "$(stat_get cfi_built)" -gt "$b0" ]
}

# control_sym DRAIN: the header and the records of thread cfh-0, named.
control_sym() {
	awk -F'\t' '/^#/ || $7 == "cfh-0"' "$1" | "$TOP/tools/offsample-symbolize"
}

# Once (make test): the module's parser and its bounds on damaged
# call-frame information, the same on every kernel.
# bats test_tags=once-2
@test "cfi: .eh_frame damaged on disk under running code: refused or used, counted, never a crash" {
	local d=$BATS_TEST_TMPDIR n=24 rounds=2 seed=$RANDOM libs=() i r built failed
	[ "${OFFS_STRESS:-short}" != long ] || { n=100; rounds=20; }
	# OFFS_CFI_DAMAGE="COPIES ROUNDS" sizes it by hand: on the debug
	# kernel "100 3" took 627 s, the long form about 45 min by that rate
	# (docs/RELIABILITY.md).
	if [ -n "${OFFS_CFI_DAMAGE:-}" ]; then
		read -r n rounds <<< "$OFFS_CFI_DAMAGE"
		[[ "$n" =~ ^[1-9][0-9]{0,2}$ && "$rounds" =~ ^[1-9][0-9]{0,2}$ ]] &&
			[ "$n" -le 200 ] || {
			echo "OFFS_CFI_DAMAGE=\"$OFFS_CFI_DAMAGE\": want \"COPIES ROUNDS\", COPIES 1-200, ROUNDS 1-999" >&2
			return 1
		}
	fi
	echo "seed $seed, $n damaged copies, $rounds rounds"
	# Copies on a tmpfs of their own: distinct files (inodes) on a local
	# file system, umounted afterwards.
	mkdir "$d/libs"
	mount -t tmpfs -o size=64m offs-cfi "$d/libs"
	for i in $(seq 0 $n); do
		cp "$TOP/build/offsample-cfilib.so" "$d/libs/c$i.so"
		libs+=("$d/libs/c$i.so")
	done
	"$TOP/build/offsample-cfihost" "${libs[@]}" > "$d/host.out" 2>&1 3>&- &
	echo $! > "$d/pids"
	wait_line "$d/host.out" '^ready$' 600 $! > /dev/null
	assert_equal "$(head -n1 "$d/host.out")" "loaded $((n + 1)) refused 0"
	# Copy 0 stays whole: the control.  The others are damaged in place
	# while mapped, before the module first reads them.
	"$TOP/tests/guest/cfi-mutate" "$seed" "${libs[@]:1}" > "$d/mutations"
	# thread_cache=0: every tick unwinds every thread again (a cached
	# capture of a thread that has not run would not look at its files).
	offs_load hz=19 key=tid thread_cache=0
	cfi_settled
	sleep 0.5
	cat $P/drain > /dev/null
	sleep 1.5
	cat $P/drain > "$d/d0"
	# Every thread sampled (the same leaf either way: libc's read).
	threads_of "$d/d0" $(seq 0 $n)
	# The control is unwound whole through its table.  Only its records
	# are named: nm on every damaged copy took a minute under emulation
	# (the symbolizer on damaged files: tests/host/symbolize.bats).
	control_sym "$d/d0" > "$d/sym"
	run -0 awk -F'\t' '!/^#/ && $7 == "cfh-0" { print $9 }' "$d/sym"
	assert_output --regexp 'cfl_inner\+0x[0-9a-f]+ \(c0\.so\);cfl_middle\+0x[0-9a-f]+ \(c0\.so\);cfl_outer\+0x[0-9a-f]+ \(c0\.so\);run\+'
	built=$(stat_get cfi_built)
	failed=$(stat_get cfi_failed)
	echo "round 0: built $built, failed $failed, deferred $(stat_get cfi_deferred)"
	# Some damage is refused (counted), some still compiles: both are seen.
	[ "$failed" -gt 0 ]
	[ "$built" -gt 3 ]
	# Damaged again while the tables are in use: a file changed in place
	# is a new file to the module (its identity has a new mtime and ctime).
	for r in $(seq 1 $rounds); do
		"$TOP/tests/guest/cfi-mutate" $((seed + r)) "${libs[@]:1}" >> "$d/mutations"
		cat $P/drain > /dev/null
		sleep 0.3
		cfi_settled
		sleep 0.5
		cat $P/drain > "$d/d$r"
		threads_of "$d/d$r" $(seq 0 $n)
	done
	echo "after $rounds rounds: built $(stat_get cfi_built), failed $(stat_get cfi_failed), tables $(stat_get cfi_tables), bytes $(stat_get cfi_bytes)"
	[ $(( $(stat_get cfi_built) + $(stat_get cfi_failed) )) -gt $((built + failed)) ]
	# The control is still whole.
	control_sym "$d/d$rounds" > "$d/sym"
	run -0 awk -F'\t' '!/^#/ && $7 == "cfh-0" { print $9 }' "$d/sym"
	assert_output --partial 'cfl_outer+'
	pkill -KILL -f offsample-cfihost
	offs_unload
	dmesg_clean
}
