#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (as root), from tests/stress/run.sh.
#
#   tests/stress/guest.sh PARTS OUTDIR
#
# PARTS is what to run, in this order:
#   core        every guest suite, as make test runs them (OUTDIR/core)
#   long        the long stress and fuzz suites (OUTDIR/long)
#   core+long   both
# Where the kernel has kmemleak (the debug kernel), its suite runs after
# the last part and a final scan is written to OUTDIR/kmemleak-final.txt;
# where it has lockdep, the lock-order suite (tests/guest/debug/) too.
# Results (TAP, stress-results.txt, dmesg) go to OUTDIR, which the host
# shares read-write.  BATS_TEST_TIMEOUT (seconds per test) is passed on.
# OFFS_SUITES (file names under tests/guest/, e.g. "00-load.bats
# 45-cache.bats") limits the core part to those suites, and with PARTS
# long the long part (e.g. "70-stress.bats 75-fuzz.bats"; the kmemleak
# and lockdep suites and 99-dmesg still end it); OFFS_FILTER=REGEX (bats
# --filter) limits either part to the tests whose names match (with PARTS
# long, the kmemleak and lockdep suites and 99-dmesg then run whole after
# them, TAP in OUTDIR/long/checks.tap); the debug kernel takes
# about ten times as long as a Debian guest (5 hours for the whole core
# part, measured 2026-11-26), so it can be done in chunks.
set -u
parts=${1:?usage: guest.sh core|long|core+long OUTDIR}
out=${2:?usage: guest.sh core|long|core+long OUTDIR}
case "$parts" in
core|long|core+long) ;;
*) echo "guest.sh: unknown parts '$parts'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.." || exit 125
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
uname -r > "$out/kernel"
# A splat before anything of ours has run is the kernel's own (seen once
# on the debug kernel under emulation: KASAN in handle_edge_irq during
# start_kernel, 0.0026 s after boot, intermittent).  It turns lock
# debugging off for the whole boot ("Disabling lock debugging due to
# kernel taint"), so this boot cannot check anything: say so and exit 3,
# and the host boots again (tests/stress/run.sh).
# shellcheck source=../lib/splat.bash
source tests/lib/splat.bash
if dmesg | grep -qE "$SPLAT_RE"; then
	dmesg > "$out/boot-splat.txt"
	echo "guest.sh: the kernel reported a problem while booting, before any test; see boot-splat.txt" >&2
	exit 3
fi
rc=0
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
kmemleak=
[ -w /sys/kernel/debug/kmemleak ] && kmemleak=tests/guest/debug/80-kmemleak.bats
# No automatic kmemleak scans: the tests scan when they check (an "echo
# scan" runs the scan in the writer, at the test's priority).  The scan
# thread runs at nice 10 and its first pass over every object is one RCU
# read-side section; with the suites' CPU spinners on both emulated CPUs
# it got so little CPU that RCU reported a 26-second stall naming it
# (59-oncpu on the debug kernel, 2026-11-28: docs/RELIABILITY.md).
if [ -n "$kmemleak" ]; then
	echo scan=off > /sys/kernel/debug/kmemleak
fi
# Where the kernel has lockdep: the lock-order suite after the core suites.
lockdep=
[ -r /proc/lockdep ] && lockdep=tests/guest/debug/81-lockdep.bats

# run_bats DIR MODE TAPNAME [BATS OPTION...] SUITE...: the suites with
# OFFS_STRESS=MODE and their artifacts in DIR, in a session of their own
# (whatever a failed test left running is killed afterwards), TAP to
# DIR/TAPNAME.tap.
run_bats() {
	local dir=$1 mode=$2 tap=$3 pid r
	shift 3
	OFFS_ARTIFACTS=$dir OFFS_STRESS=$mode \
		setsid bats --tap --timing --print-output-on-failure "$@" \
		> "$dir/$tap.tap" 2> "$dir/$tap.stderr" &
	pid=$!
	wait $pid
	r=$?
	kill -KILL -- -$pid 2>/dev/null
	return $r
}

# The suites OFFS_SUITES names: the core part's, or with PARTS long the
# long part's.
suites=()
for s in ${OFFS_SUITES:-}; do
	suites+=("tests/guest/$s")
done

if [ "$parts" != long ]; then
	mkdir -p "$out/core"
	start=$(date +%s)
	tests/guest/run.sh "$out/core" "${suites[@]}" || rc=1
	echo "core_suite_seconds $(( $(date +%s) - start ))" >> "$out/core/stress-results.txt"
fi

if [ "$parts" != core ]; then
	mkdir -p "$out/long"
	start=$(date +%s)
	if [ "$parts" = core+long ] || [ ${#suites[@]} -eq 0 ]; then
		suites=(tests/guest/05-security.bats tests/guest/47-safety.bats tests/guest/56-cfi.bats
			tests/guest/70-stress.bats tests/guest/75-fuzz.bats)
	fi
	# No limit per test here (100 load/unload cycles take over an hour on
	# the debug kernel): the guest's own timeout is the bound.
	if [ -z "${OFFS_FILTER:-}" ]; then
		# shellcheck disable=SC2086
		BATS_TEST_TIMEOUT='' run_bats "$out/long" long stress \
			"${suites[@]}" $kmemleak $lockdep tests/guest/99-dmesg.bats || rc=1
	else
		# Only the long suites' tests whose names match; the kmemleak
		# and lockdep suites and the clean-log check then run whole
		# (TAP in checks.tap).
		BATS_TEST_TIMEOUT='' run_bats "$out/long" long stress \
			--filter "$OFFS_FILTER" "${suites[@]}" || rc=1
		# shellcheck disable=SC2086
		run_bats "$out/long" short checks $kmemleak $lockdep \
			tests/guest/99-dmesg.bats || rc=1
	fi
	echo "long_suite_seconds $(( $(date +%s) - start ))" >> "$out/long/stress-results.txt"
elif [ -n "$kmemleak$lockdep" ]; then
	# After the core suites: the kmemleak and lockdep suites and the
	# clean-log check.
	# shellcheck disable=SC2086
	run_bats "$out/core" short stress $kmemleak $lockdep tests/guest/99-dmesg.bats || rc=1
fi

# A last kmemleak scan after everything was unloaded (debug kernel).
if [ -n "$kmemleak" ]; then
	echo scan > /sys/kernel/debug/kmemleak; sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$out/kmemleak-final.txt"
fi
dmesg > "$out/dmesg.txt"
exit $rc
