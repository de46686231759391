# SPDX-License-Identifier: GPL-2.0
# A fix for the bats-core we run (Debian 12's 1.8): its bats_version_lt()
# loops with a variable it does not declare local, and every `run -N`
# (run with flags) calls it, so a test looping with its own `i` around a
# `run -0` had that `i` set to 2 behind its back.  Seen on 2026-11-25:
# 47-safety's exec test checked the output file of its second try after
# its first one.  The same comparison, leaving the caller's variables
# alone: 0 if $1 < $2, 1 if $1 > $2, 2 if equal (major.minor.patch).
bats_version_lt() {
	local a b k
	IFS=. read -ra a <<< "$1"
	IFS=. read -ra b <<< "$2"
	for k in 0 1 2; do
		((${a[k]:-0} < ${b[k]:-0})) && return 0
		((${a[k]:-0} > ${b[k]:-0})) && return 1
	done
	return 2
}

# bats --timing reads the clock before and after each test with date(1)
# (get_mills_since_epoch in bats-exec-test): two programs per test, about
# 30 ms of an emulated CPU each in the guests.  The same milliseconds from
# bash's own clock.
get_mills_since_epoch() {
	local us=${EPOCHREALTIME/[.,]/}
	printf '%d\n' $((us / 1000))
}

# bats runs a DEBUG trap before every simple command of a test, of its
# helpers included (bats_debug_trap: some 30 statements that copy the
# call stack, for the report of a failure).  In the guests a helper that
# loops (stat_get over the lines of the stats file, the polls of
# wait_line) paid it at every step.  Commands in our own helper libraries
# (every file under $OFFS_TOP/tests/ but the suites themselves, which bats
# runs from a preprocessed copy elsewhere) and in bats-support and
# bats-assert skip it: a failure inside them is reported at the line of
# the test that called them, as bats already does for its own library.
# The test's own lines are traced as before.  OFFS_BATS_FULL_TRACE=1
# keeps bats's trap as it is.
offs_fast_debug_trap() {
	local f IFS=$'\n'
	local -a src
	[ -n "${OFFS_TOP:-}" ] && [ -z "${OFFS_BATS_FULL_TRACE:-}" ] || return 0
	[ -z "${OFFS_FAST_DEBUG_TRAP:-}" ] || return 0
	declare -F bats_debug_trap > /dev/null || return 0
	# bats's function with a test in front, read back without starting
	# a program; as itself (a wrapper would add a frame to the stacks
	# it records).
	f=${BATS_RUN_TMPDIR:-/tmp}/.offs-debug-trap
	declare -f bats_debug_trap > "$f" && mapfile -t src < "$f" || return 0
	[ "${src[0]}" = 'bats_debug_trap () ' ] && [ "${src[1]}" = '{ ' ] || return 0
	# shellcheck disable=SC2016
	src[1]+='case $1 in "$OFFS_TOP"/tests/* | /usr/lib/bats/*) return 0 ;; esac;'
	eval "${src[*]}"
	OFFS_FAST_DEBUG_TRAP=1
}
offs_fast_debug_trap

# Each test costs programs of bats's own besides the test: in the guests
# a fork and exec cost 50 to 100 ms (under emulation, two guests on two
# CPUs).  Two of them go without changing what a test sees:
# - bats-exec-test starts through "#!/usr/bin/env bash" (env, then a
#   search of PATH for bash): bash runs it directly;
# - bats's per-test watchdog (BATS_TEST_TIMEOUT) is a subshell that starts
#   sleep(1) and another subshell to look for ps or pkill: one subshell
#   that waits with a timed read from a FIFO nobody writes
#   (OFFS_SLEEP_FIFO, made by tests/guest/run.sh) and, when the time is
#   up, does what bats's does: SIGABRT to the test, its children killed.
#   A SIGABRT that comes before its trap is set ends it as well.
# Only where those bats functions exist (bats-exec-file defines the
# first, bats-exec-test the second; each sources the suite).
if [ -n "${OFFS_TOP:-}" ] && declare -F bats_run_test_with_retries > /dev/null &&
   [ -n "${BATS_LIBEXEC:-}" ] && [ -n "${BATS_RETRY_RETURN_CODE:-}" ]; then
	bats_run_test_with_retries() {
		local try=1 rc
		while :; do
			bash "$BATS_LIBEXEC/bats-exec-test" "$@" "$try" && return 0
			rc=$?
			if [ "$rc" -ne "$BATS_RETRY_RETURN_CODE" ]; then
				bats_exec_file_status=$rc
				return "$rc"
			fi
			try=$((try + 1))
		done
	}
fi
if [ -p "${OFFS_SLEEP_FIFO:-}" ] && declare -F bats_start_timeout_countdown > /dev/null; then
	bats_start_timeout_countdown() {
		local -ri timeout=$1 target_pid=$$
		# shellcheck disable=SC2064
		trap "bats_timeout_trap $target_pid" ABRT
		(
			trap 'exit 0' ABRT
			read -r -t "$timeout" <> "$OFFS_SLEEP_FIFO" || :
			kill -ABRT "$target_pid" && pkill -P "$target_pid"
		) < /dev/null > /dev/null 2>&1 &
	}
fi
