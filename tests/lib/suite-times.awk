# SPDX-License-Identifier: GPL-2.0
# The time each suite took, from a TAP stream with "# suite FILE" lines
# (tests/lib/bats-format-offs) whose lines carry the time they came as a
# first field (guest.tap.times: "SECONDS LINE"):
#
#   awk -f tests/lib/suite-times.awk guest.tap.times
#
# prints "FILE SECONDS TESTS FAILED" per suite, in the order they ran
# (setup_file and teardown_file included: a suite lasts until the next one
# starts, the last one until the last line).
$2 == "#" && $3 == "suite" {
	if (n) t[n] = $1 - start
	start = $1
	name[++n] = $4
	next
}
n && ($2 == "ok" || ($2 == "not" && $3 == "ok")) {
	tests[n]++
	if ($2 == "not") failed[n]++
}
{ last = $1 }
END {
	if (n) t[n] = last - start
	for (i = 1; i <= n; i++)
		printf "%s %.0f %d %d\n", name[i], t[i], tests[i], failed[i]
}
