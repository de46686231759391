#!/usr/bin/env bats
# Loading, the files it creates, their permissions, parameter defaults.

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
	run -0 stat -c '%n %a %U' $P/stacks $P/drain $P/threads $P/stats $P/control
	assert_line "$P/stacks 400 root"
	assert_line "$P/drain 400 root"
	assert_line "$P/threads 400 root"
	assert_line "$P/stats 400 root"
	assert_line "$P/control 200 root"
	run -0 ls $P
	assert_output "$(printf '%s\n' control drain stacks stats threads)"
}

@test "parameters have their documented defaults" {
	run -0 cat $PARAM/enabled $PARAM/hz $PARAM/max_stacks $PARAM/max_depth $PARAM/kthreads $PARAM/key
	assert_output "$(printf '%s\n' Y 9 8192 48 Y comm)"
}

@test "an unprivileged user gets EACCES, never data" {
	for f in stacks drain threads stats; do
		run setpriv --reuid=65534 --regid=65534 --clear-groups cat $P/$f
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
