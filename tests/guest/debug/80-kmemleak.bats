#!/usr/bin/env bats
# Debug kernel only (make test-debug runs it when the kernel has kmemleak;
# tests/stress/guest.sh): after a loaded, sampling, drained module, no
# unreferenced object allocated by offsample.

load ../lib
load ../../stress/lib

setup_file() {
	load ../lib
	load ../../stress/lib
	stress_setup
}

teardown() {
	workload_stop
	true
}

teardown_file() {
	load ../lib
	offs_unload
}

@test "kmemleak: no unreferenced object allocated by offsample" {
	kmemleak_available
	offs_load hz=100 key=tid,wobj
	workload_start -n 2 sleep mutex pipe
	sleep 3
	workload_stop
	stress_quiesced_memory > /dev/null
	kmemleak_scan loaded > /dev/null
	run grep -c -E 'offs_|\[offsample\]' "$ARTIFACTS/kmemleak-loaded.txt"
	result kmemleak offsample_objects "$output"
	if [ "$output" != 0 ]; then
		cat "$ARTIFACTS/kmemleak-loaded.txt"
		return 1
	fi
}
