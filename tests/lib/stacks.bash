# SPDX-License-Identifier: GPL-2.0
# Readers of the stacks format (docs/FORMAT.md) for the test suites:
# sourced by tests/guest/lib.bash and tests/host/tools-common.bash (so by
# tests/recorded/ too).  Functions only: the guest suites source this for
# every test, where starting a program costs a tenth of a second.

# Value of one "# name: value" header line of a stacks-format file.
hdr_get() {
	sed -n "s/^# $1: //p" "$2" | head -n1
}

# Sum of the counts of a stacks-format file, optionally of records matching
# an awk condition on the TAB-separated fields ($1 count, $2 reason,
# $3 state, $4 pid, $5 tid, $6 comm, $7 tname, $8 kstack).
sum_counts() {
	local file=$1 cond=${2:-1}
	awk -F'\t' "!/^#/ && ($cond) { s += \$1 } END { print s + 0 }" "$file"
}

# Sum of counts per reason of a stacks file: "reason count" lines, sorted.
reason_totals_stacks() {
	awk -F'\t' '!/^#/ && NF >= 8 { s[$2] += $1 } END { for (r in s) print r, s[r] }' "$@" | sort
}
# The same from folded lines whose root frame is the reason.
reason_totals_folded() {
	awk '{ n = $NF; split($0, f, ";"); s[f[1]] += n } END { for (r in s) print r, s[r] }' "$@" | sort
}
