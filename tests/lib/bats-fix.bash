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
