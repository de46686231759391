#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (as root): every tests/guest/*.bats suite against
# the module built for the running kernel.  Results go to OUTDIR, which the
# host shares read-write with the guest.
#
#   tests/guest/run.sh OUTDIR [SUITE.bats...]   (default: all of tests/guest/)
#
# OFFS_ONCE=K/N: this is guest K of the N that one test run boots.  Each
# suite says in its header, on a "# Kernels:" line, on which kernels it
# must run and why (tests/host/run-share.bats checks that it does).  Tests
# that nothing of the kernel decides (the tools on the module's output,
# the module's own parsing) carry the bats tag once-1 or once-2, and
# suites whose every test is such carry it as a file tag (# bats
# file_tags=once-1): they run in one guest of the run only: guest K runs
# group G when (G - 1) % N == K - 1; with one guest, both groups.  Unset
# (a suite run by hand, make test-debug): every test.
#
# OFFS_FILTER=REGEX: only the tests whose names match (bats --filter), for
# a chunk of a long run (make test-debug OFFS_SUITES=... OFFS_FILTER=...).
#
# OFFS_ACCT=1: the kernel's process accounting over the run, summed per
# program into OUTDIR/acct.txt (tests/lib/acct-table): where the guest's
# CPU time went (bats and the shell, the tools, the workloads, the
# sampler's kthread).
set -u
out=${1:?usage: run.sh OUTDIR [SUITE.bats...]}
shift
mkdir -p "$out" || exit 125
[ $# -gt 0 ] || set -- tests/guest/
cd "$(dirname "$0")/../.." || exit 125
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Read by tests/guest/lib.bash, which must not start programs (per test).
export OFFS_TOP=$PWD KREL=$(uname -r)
export OFFS_ARTIFACTS=$out
# The symbolizer's cache: the guest sees the host's home read-only, and
# without a cache every naming of the live stacks reads every program's
# symbols again (half a minute each under emulation).
# tests/run.sh seeds it with the symbols of the usual programs, read on
# the host (RESULTS/symcache, next to OUTDIR; read-only here).
export OFFSAMPLE_CACHE_DIR=/tmp/offsample-symcache
if [ -d "$out/../symcache/syms" ]; then
	mkdir -p -m 0700 "$OFFSAMPLE_CACHE_DIR"
	cp -r "$out/../symcache/syms" "$OFFSAMPLE_CACHE_DIR/" &&
		chmod 0700 "$OFFSAMPLE_CACHE_DIR/syms"
fi
echo "$KREL" > "$out/kernel"
# How the host's root is shared (virtiofs or 9p: tests/vm/run-guest.sh).
findmnt -n -o FSTYPE / > "$out/rootfs" 2>/dev/null
filter=()
if [ -n "${OFFS_ONCE:-}" ]; then
	source tests/lib/guest-share.bash
	skip=$(once_skip "$OFFS_ONCE") || exit 125
	[ -z "$skip" ] || filter=(--filter-tags "$skip")
	echo "$OFFS_ONCE ${skip:-all}" > "$out/once"
fi
[ -z "${OFFS_FILTER:-}" ] || filter+=(--filter "$OFFS_FILTER")
ko=build/$KREL/offsample.ko
if [ ! -f "$ko" ]; then
	echo "1..1" > "$out/guest.tap"
	echo "not ok 1 module built for $KREL ($ko missing)" >> "$out/guest.tap"
	exit 1
fi
# If anything hangs, leave evidence: the hung-task detector reports after
# 60 s and the kernel log is copied out as it is written (dmesg.txt at the
# end is not written when the guest is killed by the timeout).
echo 60 > /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
# Errors and worse (hung tasks, RCU stalls, lockups) also go to the serial
# console, which reaches the host even when the shared directories do not.
dmesg -n 4 2>/dev/null
dmesg -w > "$out/dmesg-live.txt" 2>&1 &
dmesg_pid=$!
# No single test may take the whole guest down with it.
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-600}
# The helpers' pauses read from this FIFO with a timeout (offs_sleep in
# tests/guest/lib.bash): no sleep(1) started for each.
rm -f /tmp/offs-sleep.fifo
mkfifo /tmp/offs-sleep.fifo && export OFFS_SLEEP_FIFO=/tmp/offs-sleep.fifo
# acct(2) is system call 163 on x86_64, the guests' only architecture.
acct=
if [ -n "${OFFS_ACCT:-}" ]; then
	acct=/tmp/offs-acct.bin
	: > "$acct"
	# Why it could not, in the table's place (the host prints it).
	perl -e 'my $f = $ARGV[0]; syscall(163, $f) == 0 or die "acct($f): $!\n"' "$acct" \
		2> "$out/acct.txt" || acct=
fi
# bats in a session of its own: whatever a failed test left running is
# killed afterwards, so it cannot hold the console and keep the guest up.
# guest.tap.times: each TAP line with the guest's clock when it came, so
# that the time between tests (setup_file, teardown) shows too; the TAP
# has a "# suite FILE" line where each suite starts (bats-format-offs),
# from which tests/lib/suite-times.awk tells each suite's time.
# shellcheck disable=SC2016
setsid bash -c 'set -o pipefail
	out=$1
	shift
	bats --formatter "$PWD/tests/lib/bats-format-offs" --timing --print-output-on-failure \
		"$@" < /dev/null 2> "$out/guest.stderr" |
		tee "$out/guest.tap" |
		tests/lib/tap-stamp > "$out/guest.tap.times"' \
	run.sh "$out" ${filter[@]+"${filter[@]}"} "$@" &
bats_pid=$!
wait $bats_pid
rc=$?
kill -KILL -- -$bats_pid 2>/dev/null
kill $dmesg_pid 2>/dev/null
if [ -n "$acct" ]; then
	perl -e 'my $off = 0; syscall(163, $off)'
	tests/lib/acct-table "$acct" > "$out/acct.txt" 2>&1
fi
dmesg > "$out/dmesg.txt"
exit $rc
