#!/usr/bin/env bats
# Bad input: tests/stress/offs-fuzz.c writes random bytes, huge, negative
# and malformed numbers, empty and over-long strings, word lists and
# cgroup paths to every writable parameter and to /proc/offsample/control,
# one write(2) each, and checks every result against the documented
# parsing: rejected with the documented errno and nothing changed, or
# applied exactly as documented.  The module must stay healthy.
#
# OFFS_STRESS=short: 10000 inputs; long: 100000 (make stress, test-debug).
#
# Kernels: one (file tag once-2: make test runs it in one guest only,
# tests/guest/run.sh): the parsers under test are the module's
# own (kstrto*, the control words), the same on every kernel.
# bats file_tags=once-2

load lib
load ../stress/lib

setup_file() {
	load lib
	load ../stress/lib
	stress_setup
}

teardown() {
	workload_stop
	true
}

teardown_file() {
	load lib
	offs_unload
	rmdir /sys/fs/cgroup/offs-fuzz/a/b/c /sys/fs/cgroup/offs-fuzz/a/b \
		/sys/fs/cgroup/offs-fuzz/a /sys/fs/cgroup/offs-fuzz 2>/dev/null || true
}

@test "fuzzer: every input rejected or applied as documented, module healthy" {
	local n seed out limit=1800
	n=$(stress_dur fuzz)
	seed=${OFFS_FUZZ_SEED:-$(date +%s)}
	# A guard against a hang, not a timing check (the fuzzer also gives
	# up on any one input after 300 s): 10,000 inputs took 113 s on the
	# debug kernel, 100,000 took 1,347 s there (docs/RELIABILITY.md).
	[ "$STRESS_MODE" != long ] || limit=3600
	offs_load hz=50
	workload_start -n 2 sleep mutex pipe poll
	run timeout "$limit" "$(stress_bin offs-fuzz)" -n "$n" -s "$seed"
	out=$output
	echo "$out"
	echo "$out" > "$ARTIFACTS/fuzz-$STRESS_MODE.txt"
	[ "$status" -eq 0 ]
	result fuzz seed "$seed"
	result fuzz inputs "$(awk '$1 == "inputs" { print $2 }' <<< "$out")"
	result fuzz accepted "$(awk '$1 == "accepted" { print $2 }' <<< "$out")"
	result fuzz rejected "$(awk '$1 == "rejected" { print $2 }' <<< "$out")"
	result fuzz mismatches "$(awk '$1 == "mismatches" { print $2 }' <<< "$out")"
	result fuzz seconds "$(awk '$1 == "seconds" { print $2 }' <<< "$out")"
	result fuzz seconds_health "$(awk '$1 == "seconds_health" { print $2 }' <<< "$out")"
	result fuzz slowest "$(awk '$1 ~ /^target_/ { print $NF "s", substr($1, 8) }' <<< "$out" |
		sort -rn | head -n 3 | paste -sd, -)"
	[ "$(awk '$1 == "inputs" { print $2 }' <<< "$out")" -ge "$n" ]
	# Still sampling, still consistent, and it unloads.
	workload_stop
	echo 0 > $PARAM/enabled
	run -0 cat $P/stacks
	assert_line --index 0 "# offsample stacks v5"
	assert_equal "$(stat_get offcpu)" $(( $(stat_get samples) + $(stat_get dropped) ))
	run -0 rmmod offsample
	stress_dmesg_clean
}

@test "fuzzer: stopped by timeout(1), it restores the parameters and says what it did" {
	offs_load hz=50
	run timeout 10 "$(stress_bin offs-fuzz)" -n 100000000 -s 7
	echo "$output"
	assert_equal "$status" 124
	assert_line "interrupted 1"
	assert_line --regexp '^inputs [1-9][0-9]*$'
	assert_line --regexp '^target_hz [0-9]+ accepted [0-9]+ rejected [0-9]+ seconds [0-9]+\.[0-9]$'
	assert_line --regexp '^seconds_health [0-9]+\.[0-9]$'
	assert_equal "$(cat $PARAM/hz)" 19
	assert_equal "$(cat $PARAM/max_stacks)" 8192
	assert_equal "$(cat $PARAM/enabled)" Y
	run -0 rmmod offsample
	stress_dmesg_clean
}

@test "parameters given at load time are validated the same way" {
	local v
	offs_unload
	for v in hz=0 hz=1001 hz=-1 hz=abc max_stacks=15 max_depth=129 \
		 thread_cache=4194305 key=bogus enabled=2 group=4294967295 \
		 cgroup=/offs-no-such-cgroup max_user_depth=0 max_retired=0 max_retired=17 \
		 threads_rate=0 max_stacks=1048576; do
		run insmod "$OFFS_KO" "$v"
		assert_failure
		[ ! -d /sys/module/offsample ]
	done
	run -0 insmod "$OFFS_KO" hz=1000 max_stacks=16 max_depth=1 key=pid,tid,tname,wobj \
		thread_cache=0 user_stacks=0 max_user_depth=128 group=4294967294 cgroup=/ \
		max_retired=16 threads_rate=1
	assert_equal "$(cat $PARAM/group)" 4294967294
	run -0 rmmod offsample
	stress_dmesg_clean
}

@test "a load that fails on a later parameter leaks no cgroup reference" {
	local dying0 dying1 i
	mkdir -p /sys/fs/cgroup/offs-loadleak
	dying0=$(cgroups_dying)
	# cgroup= is parsed before hz=0 fails the load: nothing may hold the cgroup.
	run insmod "$OFFS_KO" cgroup=/offs-loadleak hz=0
	assert_failure
	rmdir /sys/fs/cgroup/offs-loadleak
	dying1=$(cgroups_dying_settle "$dying0")
	result fuzz load_fail_cgroups_left_dying $((dying1 - dying0))
	assert_equal "$dying1" "$dying0"
}

# A kernfs walk does not check that a component is a directory; through an
# open cgroup file it used to oops (kernfs_find_ns on 6.1 and 6.12).  The
# module now resolves one component at a time.  See
# tests/stress/repro-cgroup-file-walk.sh and docs/RELIABILITY.md.
@test "cgroup path through an open cgroup file is rejected (ENOTDIR), no oops" {
	offs_load
	exec 9</sys/fs/cgroup/cgroup.procs
	run bash -c "echo /cgroup.procs/x > $PARAM/cgroup"
	exec 9<&-
	assert_failure
	assert_output --partial "Not a directory"
	run bash -c "echo /cgroup.procs > $PARAM/cgroup"
	assert_failure
	assert_output --partial "Not a directory"
	assert_equal "$(cat $PARAM/cgroup)" ""
	run insmod "$OFFS_KO" cgroup=/cgroup.procs/x
	assert_failure
	stress_dmesg_clean
}

@test "cgroup= writes racing rmmod leave no cgroup reference behind" {
	local dying0 dying1 i w
	mkdir -p /sys/fs/cgroup/offs-rmrace
	dying0=$(cgroups_dying)
	for i in $(seq 1 10); do
		offs_load hz=1000
		# set +e: the writes fail once the module is gone; keep writing.
		( set +e; while :; do echo /offs-rmrace > $PARAM/cgroup; done ) >/dev/null 2>&1 &
		w=$!
		sleep 0.2
		rmmod offsample
		kill $w
		wait $w 2>/dev/null || true
	done
	rmdir /sys/fs/cgroup/offs-rmrace
	dying1=$(cgroups_dying_settle "$dying0")
	assert_equal "$dying1" "$dying0"
}
