# SPDX-License-Identifier: GPL-2.0
# Shared set-up of the tests/host/tools-*.bats suites: paths, and a fake
# /proc/offsample + /sys/module/offsample/parameters tree made of plain
# files, which the tools use through OFFSAMPLE_PROC and OFFSAMPLE_SYS.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bats-fix.bash"
# hdr_get, sum_counts, reason_totals_stacks, reason_totals_folded
source "$(dirname "${BASH_SOURCE[0]}")/../lib/stacks.bash"

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
OFFS=$ROOT/tools/offsample
SCO=$ROOT/tools/stackcollapse-offsample
SCP=$ROOT/tools/stackcollapse-procstat
FG=$ROOT/flamegraph/offsample-flamegraph
SFIX=$ROOT/tests/fixtures/stacks
TFIX=$ROOT/tests/fixtures/tools
D61=$SFIX/workload-drain-6.1.0.txt
D612=$SFIX/workload-drain-6.12.117.txt
D61V2=$SFIX/workload-drain-v2-6.1.0.txt
D612V2=$SFIX/workload-drain-v2-6.12.117.txt
SMALL=$TFIX/small-v1.stacks
V2=$TFIX/v2-ustack.stacks
V2S=$TFIX/v2-small.stacks

# The flamegraph.pl input regex: every folded line must match it.
FOLDED_RE='^(.*)\s+?(\d+(?:\.\d*)?)$'

# The real flamegraph.pl (tests/lib/deps.sh python puts it there).
FGPL=$ROOT/build/deps/flamegraph/pyramid_flamegraph/flamegraph.pl
need_fgpl() {
	[ -f "$FGPL" ] || fail "flamegraph.pl not found at $FGPL: run tests/lib/deps.sh python"
}

# fake_tree [DRAIN_FIXTURE [DIR]]: build the fake tree, export the
# variables.  The stats file says generation = drain generation - 1, so
# that a record sees no other reader.  Sets FAKE, FP (proc), FS (sys).
fake_tree() {
	local drain=${1:-$SMALL} gen
	FAKE=${2:-$BATS_TEST_TMPDIR/fake}
	FP=$FAKE/proc/offsample
	FS=$FAKE/sys
	mkdir -p "$FP" "$FS"
	cp "$drain" "$FP/drain"
	cp "$drain" "$FP/stacks"
	cp "$SFIX/workload-threads-6.1.0.txt" "$FP/threads"
	gen=$(sed -n 's/^# generation: //p' "$drain" | head -n1)
	sed "s/^generation .*/generation               $((gen - 1))/" "$TFIX/stats.txt" > "$FP/stats"
	: > "$FP/control"
	echo N > "$FS/enabled"
	echo 9 > "$FS/hz"
	echo comm > "$FS/key"
	echo 8192 > "$FS/max_stacks"
	echo 48 > "$FS/max_depth"
	echo Y > "$FS/kthreads"
	export OFFSAMPLE_PROC=$FP OFFSAMPLE_SYS=$FS
}

# Count lines of a file.
nlines() { wc -l < "$1" | tr -d ' '; }
