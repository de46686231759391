#!/usr/bin/env bats
# User stacks of programs built without frame pointers (most distribution
# binaries, libc among them), unwound with their .eh_frame compiled into
# tables (module/ucfi.c, ucache.c): the same frames as eu-stack (elfutils)
# finds, thread by thread; frame pointers only with cfi_cache_mb=0; the
# tables' memory bounded by cfi_cache_mb.

load lib

NOFP=$TOP/build/offsample-workload-nofp
CMP=$TOP/tests/guest/ustack-vs-eustack

teardown() {
	if [ -f "$BATS_TEST_TMPDIR/pids" ]; then kill $(cat "$BATS_TEST_TMPDIR/pids") 2>/dev/null || true; fi
	pkill -f offsample-workload-nofp || true
	pkill -f 'offsample-safety sigframe' || true
}

teardown_file() {
	load lib
	offs_unload
}

# nofp_start OUT: the workload without frame pointers, every libc wait.
nofp_start() {
	"$NOFP" -n 1 sleep mutex pipe poll accept wait > "$1" 2>&1 3>&- &
	wait_line "$1" '^ready$' 600 $! > /dev/null
}

@test "cfi: every thread's user stack is eu-stack's, frame for frame" {
	local d=$BATS_TEST_TMPDIR
	offs_load hz=19 key=tid
	nofp_start "$d/wl.out"
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
}

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
