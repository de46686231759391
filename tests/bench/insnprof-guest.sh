#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Inside the guest of tests/bench/insnprof.sh (one vCPU, -icount shift=0,
# the insnprof plugin loaded): THREADS sleeping threads (offsample-sleepers
# -m same), the module loaded with hz=9 and PARAMS, and TICKS whole ticks
# between two marks (offsample-insnmark), so that the plugin's second
# file counts every instruction the guest executed in those ticks.
# Writes OUTDIR/stats.0 and stats.1 (the module's stats around the ticks)
# and OUTDIR/kallsyms (the kernel's and the module's symbols, this boot).
#
#   tests/bench/insnprof-guest.sh OUTDIR THREADS TICKS [PARAM=VALUE...]
set -u
OUT=${1:?usage: insnprof-guest.sh OUTDIR THREADS TICKS [PARAM=VALUE...]}
N=${2:?threads}
TICKS=${3:?ticks}
shift 3
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
KO=$TOP/build/$(uname -r)/offsample.ko
BB=$TOP/build/bench
P=/proc/offsample
PARAM=/sys/module/offsample/parameters
HZ=9

log() { echo "insnprof-guest: $*" >&2; }
. "$TOP/tests/bench/lib.sh"

sysctl -qw kernel.threads-max=200000 kernel.pid_max=4194304 vm.max_map_count=1048576
start_ready /tmp/sleepers.out sleepers "$BB/offsample-sleepers" -n "$N" -m same || exit 1
sl=$ready_pid
# INSNPROF_PIPE=1 (insnprof.sh): the pipe load, its own process group.
pp=
if [ "${INSNPROF_PIPE:-0}" = 1 ]; then
	setsid perf bench sched pipe -l 2000000000 > /dev/null 2>&1 &
	pp=$!
fi
insmod "$KO" hz=$HZ "$@" || exit 1
# The files' .eh_frame tables built, then two ticks that used them.
wait_ticks 2 600 || exit 1
wait_cfi 600 || exit 1
# Nothing starts a program between the two marks: the marks come from
# one process (started before, it exits after), the pause is bash's read
# on a FIFO no one writes, and enabled=0 returns once the tick in
# progress has ended (whole ticks; the stats count them).
secs=$(awk -v t="$TICKS" -v h=$HZ 'BEGIN { printf "%.2f", (t + 0.5) / h }')
mkfifo /tmp/insnprof.fifo
exec {pause}<>/tmp/insnprof.fifo
echo 0 > $PARAM/enabled
cat $P/stats > "$OUT/stats.0"
exec {mark}< <(exec "$BB/offsample-insnmark")
mark_pid=$!
read -r -u "$mark" line && [ "$line" = marked ] || exit 1
echo 1 > $PARAM/enabled
read -r -t "$secs" -u "$pause" line
echo 0 > $PARAM/enabled
kill -USR1 "$mark_pid"
wait "$mark_pid" || exit 1
cat $P/stats > "$OUT/stats.1"
cat /proc/kallsyms > "$OUT/kallsyms"
rmmod offsample
[ -z "$pp" ] || kill -- -"$pp" 2>/dev/null
kill $sl
wait $sl 2>/dev/null
exit 0
