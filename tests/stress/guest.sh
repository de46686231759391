#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (as root), from tests/stress/run.sh.
#
#   tests/stress/guest.sh long OUTDIR        the long stress and fuzz suites
#   tests/stress/guest.sh full+long OUTDIR   every guest suite (as make test
#                                            runs them), then the long ones
#
# Results (TAP, stress-results.txt, dmesg, kmemleak) go to OUTDIR, which
# the host shares read-write.
set -u
what=${1:?usage: guest.sh long|full+long OUTDIR}
out=${2:?usage: guest.sh long|full+long OUTDIR}
cd "$(dirname "$0")/../.." || exit 125
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
uname -r > "$out/kernel"
rc=0

if [ "$what" = full+long ]; then
	mkdir -p "$out/core"
	tests/guest/run.sh "$out/core" || rc=1
fi

mkdir -p "$out/long"
export OFFS_ARTIFACTS=$out/long OFFS_STRESS=long
start=$(date +%s)
suites="tests/guest/05-security.bats tests/guest/70-stress.bats tests/guest/75-fuzz.bats"
# kmemleak (the debug kernel): its own suite, run only where it exists.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -w /sys/kernel/debug/kmemleak ] && suites="$suites tests/guest/debug/80-kmemleak.bats"
# shellcheck disable=SC2086
setsid bats --tap --print-output-on-failure $suites tests/guest/99-dmesg.bats \
	> "$out/long/stress.tap" 2> "$out/long/stress.stderr" &
bats_pid=$!
wait $bats_pid || rc=1
kill -KILL -- -$bats_pid 2>/dev/null
echo "long_suite_seconds $(( $(date +%s) - start ))" >> "$out/long/stress-results.txt"

# A last kmemleak scan after everything was unloaded (debug kernel).
if mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null; then
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan > /sys/kernel/debug/kmemleak; sleep 5
		echo scan > /sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak > "$out/kmemleak-final.txt"
	fi
fi
dmesg > "$out/dmesg.txt"
exit $rc
