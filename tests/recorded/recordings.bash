# SPDX-License-Identifier: GPL-2.0
# What the suites on the guests' recordings share (tests/recorded/*.bats).

# recordings NAME: the guests' files NAME-KREL.stacks in OFFS_RECORDED,
# one per line; fails when no guest left one (the guest test that writes
# it failed or did not run).
recordings() {
	local f n=0
	for f in "$OFFS_RECORDED"/guest-*/"$1"-*.stacks; do
		[ -s "$f" ] || continue
		echo "$f"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "no guest left $1-*.stacks in $OFFS_RECORDED" >&2; return 1; }
}
