#!/usr/bin/env bats
# Security beyond 00-load (root-only files, EACCES, group= at load):
# parameters writable by root only, a refused drain drains nothing, group=
# cannot be changed once loaded, and no raw kernel address in any file
# whatever kptr_restrict says.  See docs/RELIABILITY.md, "Security".
#
# Kernels: one (file tag once-1: make test runs it in one guest only,
# tests/guest/run.sh): parameter permissions, the drain
# policy and address hashing are the module's own code (%pK is not used).
# bats file_tags=once-1

load lib

setup_file() {
	load lib
	offs_load hz=99 key=pid,tid,tname,wobj
	KPTR_SAVED=$(cat /proc/sys/kernel/kptr_restrict)
	export KPTR_SAVED
}

teardown_file() {
	load lib
	[ -n "${KPTR_SAVED:-}" ] && echo "$KPTR_SAVED" > /proc/sys/kernel/kptr_restrict
	offs_unload
}

teardown() {
	workload_stop
}

@test "parameters: only root may change them, group= not even root once loaded" {
	local p before
	for p in enabled hz max_stacks max_depth kthreads key thread_cache user_stacks \
		 max_user_depth cgroup group max_retired threads_rate; do
		before=$(cat $PARAM/$p)
		run setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo 1 > $PARAM/$p"
		assert_failure
		assert_output --partial "Permission denied"
		assert_equal "$(cat $PARAM/$p)" "$before"
	done
	run -0 stat -c '%a' $PARAM/group
	assert_output 444
	run bash -c "echo 0 > $PARAM/group"
	assert_failure
	assert_output --partial "Permission denied"
	assert_equal "$(cat $PARAM/group)" ""
}

@test "a refused drain drains nothing" {
	local d0 g0
	sleep 1
	d0=$(stat_get drains)
	g0=$(awk '$1 == "generation" { print $2 }' $P/stats)
	run setpriv --reuid=65534 --regid=65534 --clear-groups cat $P/drain
	assert_failure
	run setpriv --reuid=65534 --regid=0 --groups=0 cat $P/drain
	assert_failure
	assert_equal "$(stat_get drains)" "$d0"
	assert_equal "$(awk '$1 == "generation" { print $2 }' $P/stats)" "$g0"
}

@test "no raw kernel address in any file or log line, with kptr_restrict 0, 1 and 2" {
	local k f out=$BATS_TEST_TMPDIR/all
	workload_start -n 2 sleep mutex pipe poll accept wait
	sleep 2
	for k in 0 1 2; do
		echo $k > /proc/sys/kernel/kptr_restrict
		: > "$out"
		for f in stacks threads stats drain; do
			cat $P/$f >> "$out"
		done
		cat $PARAM/* >> "$out" 2>/dev/null
		# Something was read: records with kernel frames.
		grep -q 'schedule' "$out"
		run grep -E -o -i '(0x)?ffff[0-9a-f]{12}' "$out"
		assert_output ""
	done
	run grep -E -i 'offsample.*ffff[0-9a-f]{12}' <(dmesg)
	assert_output ""
}
