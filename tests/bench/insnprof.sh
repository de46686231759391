#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a sampler tick's instructions go, function by function, interrupts-
# off code included (issue 52): one guest with one vCPU under QEMU
# -icount shift=0 and the insnprof plugin (tests/bench/insnprof/), THREADS
# sleeping threads, TICKS ticks of the module loaded with PARAMS counted
# instruction by instruction, then mapped to the guest kernel's and the
# module's functions.
#
#   tests/bench/insnprof.sh [THREADS [TICKS [PARAM=VALUE...]]]
#
# Defaults: 1000 threads, 6 ticks, thread_cache=0 (every thread captured
# in full: the cold capture).  The table goes to stdout and, with the raw
# counts, to build/bench/insnprof/ (not committed).  BENCH_KERNEL: the
# guest kernel (default: the first of tests/vm/kernels.sh).
# INSNPROF_PIPE=1: `perf bench sched pipe` runs through the ticks too (two
# processes of 28 executable mappings whose threads have run at every
# tick: the flatness case; its own instructions are counted too, so
# compare the module's functions, and the kernel's that only it calls).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-$TOP/build}
case "${1:-}" in
-h|--help) sed -n '3,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
N=${1:-1000}
TICKS=${2:-6}
shift $(($# < 2 ? $# : 2))
[ $# -gt 0 ] || set -- thread_cache=0
case "$N$TICKS" in
*[!0-9]*|"") echo "insnprof.sh: THREADS and TICKS are numbers" >&2; exit 2 ;;
esac

# Always a guest: the plugin needs QEMU.
. "$TOP/tests/vm/where.sh"
where=guest
where_setup build test bench
kver=${BENCH_KERNEL:-$(tests/vm/kernels.sh | head -n1)}
make --no-print-directory BUILD="$BUILD" KVER="$kver" module
make --no-print-directory BUILD="$BUILD" bench-helpers
B=$BUILD/bench		# bench-helpers built the plugin and the mark there

OUT=$B/insnprof
rm -rf "$OUT"
mkdir -p "$OUT"
echo "== $N threads, $TICKS ticks, $* on $kver (one vCPU, instruction count; see $OUT/console.log)"
tests/vm/run-guest.sh --memory 4G --cpus 1 --timeout 3600 \
	--qemu-opts "-icount shift=0 -plugin $B/insnprof.so,out=$OUT/blocks" \
	"$kver" "$OUT" -- env INSNPROF_PIPE="${INSNPROF_PIPE:-0}" \
	tests/bench/insnprof-guest.sh "$OUT" "$N" "$TICKS" "$@"
if [ ! -s "$OUT/blocks.1" ] || [ ! -s "$OUT/stats.1" ]; then
	echo "insnprof.sh: no counts between the two marks (see $OUT/console.log)" >&2
	exit 1
fi
python3 tests/bench/insnprof/symbolize.py "$OUT" > "$OUT/profile.txt"
cat "$OUT/profile.txt"
