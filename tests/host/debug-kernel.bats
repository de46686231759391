#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# tests/stress/debug-kernel.sh refuses a cache the guest cannot see
# (virtme-ng's guest init mounts tmpfs over /var/cache, /var/log and
# /var/tmp; the guest's /lib/modules/<release> links into the tree) and
# otherwise, with --print, only reports whether the kernel is built.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	DK=$ROOT/tests/stress/debug-kernel.sh
}

@test "debug-kernel: a cache under /var/cache, /var/log or /var/tmp is refused" {
	local d
	for d in /var/cache/offs-dk /var/log/offs-dk /var/tmp/offs-dk /var/lib/../cache/offs-dk; do
		OFFS_DEBUG_CACHE=$d run --separate-stderr "$DK" --print
		assert_failure 2
		assert_output ""
		[[ "$stderr" == *"OFFS_DEBUG_CACHE=$d is hidden from the guest"* ]] ||
			{ echo "stderr for $d: $stderr"; return 1; }
		[ ! -e "$d" ] || { echo "$d was created"; return 1; }
	done
}

@test "debug-kernel: --print with an empty cache elsewhere says nothing and fails" {
	OFFS_DEBUG_CACHE=$BATS_TEST_TMPDIR/dk run --separate-stderr "$DK" --print
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" ""
	[ ! -e "$BATS_TEST_TMPDIR/dk" ]
}
