#!/usr/bin/env bats
# The test harness's changes to bats (tests/lib/bats-fix.bash), run on
# small suites (tests/fixtures/harness/) as the guests run theirs: the
# per-test watchdog still stops a test that outlives BATS_TEST_TIMEOUT,
# the tests after it still run; failures are still reported at the test's
# line, in its body and when a helper of ours fails (with the helper's own
# line when OFFS_BATS_FULL_TRACE=1); retries and the suite's exit status
# as bats's own.

load tools-common

H=$BATS_TEST_DIRNAME/../fixtures/harness

setup() {
	export OFFS_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export OFFS_SLEEP_FIFO=$BATS_TEST_TMPDIR/sleep.fifo
	mkfifo "$OFFS_SLEEP_FIFO"
	unset OFFS_BATS_FULL_TRACE BATS_TEST_RETRIES
}

@test "harness: a test that outlives BATS_TEST_TIMEOUT is stopped, the next one runs" {
	BATS_TEST_TIMEOUT=2 run -1 bats "$H/timeout.bats"
	# Stopped by the watchdog: a test run to its end (30 s) is "ok 1".
	assert_line --index 1 "not ok 1 outlives the timeout # timeout after 2s"
	assert_line "ok 2 runs after it"
}

@test "harness: failures are reported at the test's line, helpers of ours included" {
	run -1 bats "$H/trace.bats"
	assert_line --index 1 "not ok 1 fails in its body"
	assert_line --index 2 --regexp "^# \(in test file .*/trace\.bats, line 6\)$"
	assert_line --index 3 "#   \`[ \"\$y\" = 4 ]' failed"
	assert_line --index 4 "not ok 2 fails inside a helper"
	assert_line --index 5 --regexp "^# \(in test file .*/trace\.bats, line 11\)$"
	assert_line --index 6 "#   \`wait_line /nonexistent '^x' 1' failed with status 2"
	OFFS_BATS_FULL_TRACE=1 run -1 bats "$H/trace.bats"
	assert_line --index 5 --regexp "^# \(from function \`wait_line' in file .*guest/lib\.bash, line [0-9]+,$"
}

@test "harness: a retried test passes on its second try, a failing one fails the suite" {
	run -1 bats "$H/retry.bats"
	assert_line --index 1 "ok 1 passes on its second try"
	assert_line --index 2 "not ok 2 never passes"
}
