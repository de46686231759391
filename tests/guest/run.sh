#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (as root): every tests/guest/*.bats suite against
# the module built for the running kernel.  Results go to OUTDIR, which the
# host shares read-write with the guest.
#
#   tests/guest/run.sh OUTDIR
set -u
out=${1:?usage: run.sh OUTDIR}
cd "$(dirname "$0")/../.." || exit 125
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export OFFS_ARTIFACTS=$out
uname -r > "$out/kernel"
ko=build/$(uname -r)/offsample.ko
if [ ! -f "$ko" ]; then
	echo "1..1" > "$out/guest.tap"
	echo "not ok 1 module built for $(uname -r) ($ko missing)" >> "$out/guest.tap"
	exit 1
fi
# bats in a session of its own: whatever a failed test left running is
# killed afterwards, so it cannot hold the console and keep the guest up.
setsid bats --tap --timing --print-output-on-failure tests/guest/ > "$out/guest.tap" 2> "$out/guest.stderr" &
bats_pid=$!
wait $bats_pid
rc=$?
kill -KILL -- -$bats_pid 2>/dev/null
dmesg > "$out/dmesg.txt"
exit $rc
