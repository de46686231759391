# SPDX-License-Identifier: GPL-2.0
# The time each suite took, from a TAP stream with "# suite FILE" lines
# (tests/lib/bats-format-offs) whose lines carry, as their first two
# fields, the time they came and the machine's busy CPU seconds then
# (guest.tap.times, tests/lib/tap-stamp: "SECONDS CPUSECONDS LINE"):
#
#   awk -f tests/lib/suite-times.awk guest.tap.times
#
# prints "FILE SECONDS TESTS FAILED CPUSECONDS" per suite, in the order
# they ran (setup_file and teardown_file included: a suite lasts until the
# next one starts, the last one until the last line); CPUSECONDS is "-"
# where the stream has no CPU times.
$3 == "#" && $4 == "suite" {
	if (n) { t[n] = $1 - start; c[n] = cpu($2) }
	start = $1
	cstart = $2
	name[++n] = $5
	next
}
n && ($3 == "ok" || ($3 == "not" && $4 == "ok")) {
	tests[n]++
	if ($3 == "not") failed[n]++
}
{ last = $1; clast = $2 }
function cpu(now) {
	return (now == "-" || cstart == "-") ? "-" : sprintf("%.0f", now - cstart)
}
END {
	if (n) { t[n] = last - start; c[n] = cpu(clast) }
	for (i = 1; i <= n; i++)
		printf "%s %.0f %d %d %s\n", name[i], t[i], tests[i], failed[i], c[i]
}
