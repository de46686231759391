#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# tests/lib/splat.bash: SPLAT_RE (what dmesg_clean and the stress summary
# count as a kernel problem) matches every kind of report the debug kernel's
# checkers print, and none of the lines a debug kernel logs when all is
# well (taken from the boot log of the make test-debug kernel).

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	source "$ROOT/tests/lib/splat.bash"
	FIX=$ROOT/tests/fixtures/dmesg
}

@test "splat: every report line of the checkers matches" {
	local line missed=0
	while IFS= read -r line; do
		if ! grep -qE "$SPLAT_RE" <<< "$line"; then
			echo "not matched: $line"
			missed=$((missed + 1))
		fi
	done < "$FIX/splats.txt"
	[ "$(wc -l < "$FIX/splats.txt")" -ge 19 ]
	assert_equal "$missed" 0
}

@test "splat: a debug kernel's boot messages and offsample's own lines do not match" {
	run grep -E "$SPLAT_RE" "$FIX/debug-kernel-boot.txt"
	assert_failure 1
	assert_output ""
	# The fixture has the lines that a looser pattern would trip on.
	grep -q 'KernelAddressSanitizer initialized' "$FIX/debug-kernel-boot.txt"
	grep -q 'RCU lockdep checking is enabled' "$FIX/debug-kernel-boot.txt"
	grep -q 'kmemleak: Kernel memory leak detector initialized' "$FIX/debug-kernel-boot.txt"
	grep -q 'offsample: version' "$FIX/debug-kernel-boot.txt"
}
