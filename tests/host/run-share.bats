#!/usr/bin/env bats
# The time each guest of `make test` may run (tests/lib/guest-share.bash):
# on 2026-11-25 CI ran at half speed and both guests hit a fixed 1,500 s
# limit with 40 minutes of the 90 left unused.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

setup() {
	source "$BATS_TEST_DIRNAME/../lib/guest-share.bash"
}

@test "guest_share: two guests one at a time split what is left; the second gets what the first left" {
	# Run began at 1000, 4800 s budget, host part took 600 s.
	run -0 guest_share 1000 4800 1600 2 1
	assert_output 2040
	# The first guest took 1000 s of its 2040: the second gets the rest.
	run -0 guest_share 1000 4800 2600 1 1
	assert_output 3080
	# Slow machine: the first used all of its share.
	run -0 guest_share 1000 4800 3640 1 1
	assert_output 2040
}

@test "guest_share: guests at once share rounds; never under 300 s" {
	run -0 guest_share 0 4800 600 3 2
	assert_output 2040
	run -0 guest_share 0 4800 600 2 2
	assert_output 4080
	run -0 guest_share 0 4800 4700 1 1
	assert_output 300
	run -0 guest_share 0 4800 9000 2 0
	assert_output 300
}
