#!/usr/bin/env bats
# Last: the whole guest run left no BUG/WARNING/Oops/lockdep/... in dmesg.
#
# Kernels: every test kernel: it reads each guest's log.

load lib

@test "kernel log is clean after the whole guest suite" {
	offs_unload
	dmesg_clean
	run -0 grep -c 'offsample: unloaded' <(dmesg)
}
