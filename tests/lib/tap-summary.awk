# SPDX-License-Identifier: GPL-2.0
# Count a TAP stream: prints "passed failed skipped" on the last line and
# echoes failures (with their diagnostics) before it.  Results missing from
# the plan (a suite that crashed midway) count as failures.
/^1\.\.[0-9]+/ { split($0, a, "\\.\\."); plan = a[2] + 0; next }
/^ok / {
	n++
	if ($0 ~ /# [Ss][Kk][Ii][Pp]/) skipped++; else passed++
	infail = 0
	next
}
/^not ok / {
	n++
	if ($0 ~ /# TODO/) { passed++; next }
	failed++
	print
	infail = 1
	next
}
/^# suite / { infail = 0; next }	# tests/lib/bats-format-offs
infail && /^#/ { print; next }
{ infail = 0 }
END {
	if (plan > n) {
		print "not ok - " (plan - n) " planned tests did not report"
		failed += plan - n
	}
	print passed + 0, failed + 0, skipped + 0
}
