#!/usr/bin/env bats
# Loading, the files it creates, their permissions, parameter defaults.
#
# Kernels: every test kernel: the probed kernel features, the files and
# defaults a load creates, are what differ between kernels.

load lib

setup_file() {
	load lib
	offs_load
}

teardown_file() {
	load lib
	offs_unload
}

@test "module loads and announces itself" {
	run -0 grep -c "offsample: version $(cat "$TOP/VERSION") loaded" <(dmesg)
}

@test "/proc/offsample has exactly the documented files, root-only" {
	run -0 stat -c '%n %a %U %G' $P/stacks $P/drain $P/threads $P/stats $P/control $P/session
	assert_line "$P/stacks 440 root root"
	assert_line "$P/drain 400 root root"
	assert_line "$P/threads 440 root root"
	assert_line "$P/stats 440 root root"
	assert_line "$P/control 200 root root"
	assert_line "$P/session 660 root root"
	run -0 ls $P
	assert_output "$(printf '%s\n' control drain session stacks stats threads)"
}

@test "parameters have their documented defaults" {
	run -0 cat $PARAM/enabled $PARAM/hz $PARAM/max_stacks $PARAM/max_depth $PARAM/kthreads $PARAM/key \
		$PARAM/thread_cache $PARAM/user_stacks $PARAM/max_user_depth $PARAM/cgroup $PARAM/group \
		$PARAM/max_retired $PARAM/threads_rate
	assert_output "$(printf '%s\n' Y 9 8192 48 Y comm 65536 Y 32 '' '' 4 20000)"
}

@test "an unprivileged user gets EACCES, never data" {
	for f in stacks drain threads stats; do
		run setpriv --reuid=65534 --regid=65534 --clear-groups cat $P/$f
		assert_failure
		assert_output --partial "Permission denied"
		# Being in group root is not being root.
		run setpriv --reuid=65534 --regid=0 --clear-groups cat $P/$f
		assert_failure
		assert_output --partial "Permission denied"
	done
	run setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo reset > $P/control"
	assert_failure
	assert_output --partial "Permission denied"
}

@test "no raw kernel addresses in any output" {
	sleep 1
	run -0 cat $P/stacks $P/threads $P/stats
	refute_output --regexp '(0x)?ffff[0-9a-f]{12}'
}

@test "stats report the sampler running at hz" {
	sleep 2
	ticks=$(stat_get ticks)
	[ "$ticks" -ge 5 ]
	run -0 stat_get samples
	[ "$output" -gt 0 ]
	run -0 stat_get memory_bytes
	[ "$output" -gt 0 ]
}

@test "group=GID at load lets that group read, never write control" {
	offs_load group=4242
	assert_equal "$(cat $PARAM/group)" 4242
	run -0 stat -c '%a %g' $P/stats $P/stacks $P/drain $P/threads $P/control
	assert_output "$(printf '%s\n' '440 4242' '440 4242' '400 0' '440 4242' '200 0')"
	run -0 setpriv --reuid=65534 --regid=4242 --clear-groups head -n1 $P/stacks
	assert_output --regexp '^# offsample stacks v[0-9]+$'
	run -0 setpriv --reuid=65534 --regid=65534 --groups=4242 cat $P/stats
	run setpriv --reuid=65534 --regid=4242 --clear-groups sh -c "echo reset > $P/control"
	assert_failure
	run setpriv --reuid=65534 --regid=4243 --clear-groups cat $P/stats
	assert_failure
	# Fixed once loaded: the files' owner cannot follow later changes.
	run bash -c "echo 7 > $PARAM/group"
	assert_failure
	assert_equal "$(cat $PARAM/group)" 4242
	offs_unload
	for v in -2 abc 99999999999 4294967295; do
		run insmod "$OFFS_KO" "group=$v"
		assert_failure
	done
	offs_load
	assert_equal "$(cat $PARAM/group)" ""
	run setpriv --reuid=65534 --regid=4242 --clear-groups cat $P/stats
	assert_failure
}
