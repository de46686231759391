# SPDX-License-Identifier: GPL-2.0
# guest_share T0 BUDGET NOW LEFT JOBS: the seconds a guest starting at NOW
# may run when the whole test run began at T0 and may take BUDGET seconds,
# with LEFT guests (this one included) still to start, JOBS at a time:
# what is left of the budget, less 2 minutes for `make uninstall` and the
# summary, over the rounds of guests still to run; at least 300 s.  A
# guest that ends early leaves its time to the next ones.  (tests/run.sh;
# tested by tests/host/run-share.bats.)
guest_share() {
	local t0=$1 budget=$2 now=$3 left=$4 jobs=$5 rounds share
	[ "$jobs" -ge 1 ] || jobs=1
	[ "$left" -ge 1 ] || left=1
	rounds=$(( (left + jobs - 1) / jobs ))
	share=$(( (t0 + budget - 120 - now) / rounds ))
	[ "$share" -ge 300 ] || share=300
	echo "$share"
}
