#!/usr/bin/env bats
# rmmod while sampling and while readers loop over, or hold open, every file.
#
# Kernels: every test kernel: module and procfs lifetimes are the kernel's.

load lib

teardown_file() {
	load lib
	offs_unload
}

start_readers() {
	READERS=()
	for f in stacks drain threads stats; do
		( while :; do cat $P/$f > /dev/null 2>&1; done ) 3>&- &
		READERS+=($!)
	done
	( while :; do echo reset > $P/control 2>/dev/null; echo 7 > $PARAM/hz 2>/dev/null; echo 19 > $PARAM/hz 2>/dev/null; done ) 3>&- &
	READERS+=($!)
}

stop_readers() {
	kill "${READERS[@]}" 2>/dev/null || true
	wait "${READERS[@]}" 2>/dev/null || true
}

@test "load/unload 5 times with readers looping over every file" {
	for i in 1 2 3 4 5; do
		offs_load hz=99
		start_readers
		sleep 1
		run -0 rmmod offsample
		stop_readers
		[ ! -d /sys/module/offsample ]
	done
	dmesg_clean
}

@test "rmmod while files are held open: later reads fail cleanly" {
	offs_load hz=99
	sleep 0.5
	exec 5<$P/stacks 6<$P/drain 7<$P/threads 8<$P/stats
	head -c 100 <&5 > /dev/null
	head -c 100 <&7 > /dev/null
	run -0 rmmod offsample
	run cat <&5
	assert_failure
	run cat <&7
	assert_failure
	exec 5<&- 6<&- 7<&- 8<&-
	dmesg_clean
}
