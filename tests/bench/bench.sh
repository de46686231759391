#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: install what is missing, build the module and the helpers,
# run tests/bench/bench-inner.sh where the module can be loaded (here if
# this kernel takes modules, else in ONE virtme-ng guest), and write the
# report from the raw results.
#
#   tests/bench/bench.sh [--guest | --host]
#
# Environment: BENCH_KERNEL (guest kernel release; default the first line
# of tests/vm/kernels.sh), BENCH_QUICK=1 (smoke run: the report goes to
# build/bench/BENCHMARKS.md instead of docs/; so does a run of some of
# the BENCH_SECTIONS only), BENCH_MEMORY (4G), BENCH_CPUS (2),
# BENCH_TIMEOUT (seconds, 5400), BENCH_MODE (wall, or icount: one vCPU
# under QEMU's -icount shift=0, where guest time advances one nanosecond
# per executed guest instruction, so every time the guest takes is an
# instruction count that repeats from run to run), BENCH_AA (1: a second
# guest runs the same measurements right after the first, and the report
# shows every figure of both, section "A/A"; default 1 in icount mode, 0
# in wall mode), and the BENCH_* loop counts of bench-inner.sh.  A full run writes docs/BENCHMARKS.md (on
# another kernel than the default docs/BENCHMARKS-<release>.md, so both
# are kept; in icount mode docs/BENCHMARKS-icount[-<release>].md) and
# keeps its raw results in build/bench-results/<release>[-icount]/, not
# committed; the report names that folder and the command that
# reproduces the run.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-$TOP/build}
QUICK=${BENCH_QUICK:-0}
where=auto
while [ $# -gt 0 ]; do
	case "$1" in
	--guest) where=guest; shift ;;
	--host) where=host; shift ;;
	-h|--help) sed -n '3,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

# icount: two vCPUs under -icount hang at boot (2026-12-02, virtme-ng,
# Debian 6.1), so one; on the host it means nothing.
MODE=${BENCH_MODE:-wall}
qemu_opts=()
case "$MODE" in
wall) cpus=${BENCH_CPUS:-2} ;;
icount)
	[ $where != host ] || { echo "bench.sh: BENCH_MODE=icount needs a guest" >&2; exit 2; }
	where=guest
	cpus=${BENCH_CPUS:-1}
	[ "$cpus" = 1 ] || { echo "bench.sh: BENCH_MODE=icount runs one vCPU (BENCH_CPUS=$cpus)" >&2; exit 2; }
	qemu_opts=(--qemu-opts "-icount shift=0")
	;;
*) echo "bench.sh: BENCH_MODE is wall or icount, not $MODE" >&2; exit 2 ;;
esac
# A/A: the same run twice, so that each figure shows how far it repeats.
AA=${BENCH_AA:-}
if [ -z "$AA" ]; then
	AA=0
	[ "$MODE" != icount ] || AA=1
fi
case "$AA" in
0) ;;
1) [ $where != host ] || { echo "bench.sh: BENCH_AA=1 needs a guest" >&2; exit 2; }
   where=guest ;;
*) echo "bench.sh: BENCH_AA is 0 or 1, not $AA" >&2; exit 2 ;;
esac

. "$TOP/tests/vm/where.sh"
where_setup build test bench

if [ $where = host ]; then
	kver=$(uname -r)
else
	kdefault=$(tests/vm/kernels.sh | head -n1)
	kver=${BENCH_KERNEL:-$kdefault}
	[ -n "$kver" ] || { echo "bench.sh: no Debian kernel installed for the guest" >&2; exit 1; }
fi
echo "== building for $kver"
make --no-print-directory BUILD="$BUILD" KVER="$kver" module bench-floor
make --no-print-directory BUILD="$BUILD" workload bench-helpers

OUT=$BUILD/bench/run
OUT_AA=$BUILD/bench/run-aa
rm -rf "$OUT" "$OUT_AA"
mkdir -p "$OUT"
[ "$AA" = 0 ] || mkdir -p "$OUT_AA"

# What else runs on this machine during the run (other guests add noise).
{
	echo "host_kernel	$(uname -r)"
	echo "host_cpus	$(nproc)"
	echo "host_cpu_model	$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
	echo "where	$where"
	echo "mode	$MODE"
	# What was measured: the commit, and whether the tree differed from it.
	if c=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null); then
		git -C "$TOP" diff --quiet HEAD 2>/dev/null || c="$c with uncommitted changes"
		echo "commit	$c"
	fi
	echo "start	$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "make_command	$(env | grep -E '^BENCH_[A-Z_]+=' | sort | tr '\n' ' ')make bench"
} > "$OUT/host.tsv"
(
	while :; do
		printf '%s\t%s\t%s\n' "$(date +%s)" \
			"$(pgrep -c qemu-system || true)" "$(cut -d' ' -f1 /proc/loadavg)"
		sleep 20
	done
) > "$OUT/host-load.tsv" 2>/dev/null &
mon=$!
trap 'kill $mon 2>/dev/null || :' EXIT

# measure DIR: one guest runs bench-inner.sh, its results in DIR.
measure() {
	local desc="qemu-tcg guest (virtme-ng --disable-kvm), $cpus vCPUs, ${BENCH_MEMORY:-4G}"
	tests/vm/run-guest.sh --memory "${BENCH_MEMORY:-4G}" --cpus "$cpus" \
		${qemu_opts[@]+"${qemu_opts[@]}"} \
		--timeout "${BENCH_TIMEOUT:-5400}" "$kver" "$1" -- \
		env BENCH_WHERE="$desc" \
		BENCH_QUICK="$QUICK" \
		${BENCH_SECTIONS:+BENCH_SECTIONS="$BENCH_SECTIONS"} \
		${BENCH_SIZES:+BENCH_SIZES="$BENCH_SIZES"} \
		${BENCH_MODEL_SIZES:+BENCH_MODEL_SIZES="$BENCH_MODEL_SIZES"} \
		${BENCH_MODEL_PCTS:+BENCH_MODEL_PCTS="$BENCH_MODEL_PCTS"} \
		${BENCH_PROC_PASSES:+BENCH_PROC_PASSES="$BENCH_PROC_PASSES"} \
		${BENCH_TICKS_COLD:+BENCH_TICKS_COLD="$BENCH_TICKS_COLD"} \
		${BENCH_TICKS_WARM:+BENCH_TICKS_WARM="$BENCH_TICKS_WARM"} \
		${BENCH_TICK_HZ:+BENCH_TICK_HZ="$BENCH_TICK_HZ"} \
		${BENCH_PIPE_THREADS:+BENCH_PIPE_THREADS="$BENCH_PIPE_THREADS"} \
		${BENCH_PIPE_LOOPS:+BENCH_PIPE_LOOPS="$BENCH_PIPE_LOOPS"} \
		${BENCH_PIPE_ROUNDS:+BENCH_PIPE_ROUNDS="$BENCH_PIPE_ROUNDS"} \
		${BENCH_PIPE_PEERS:+BENCH_PIPE_PEERS="$BENCH_PIPE_PEERS"} \
		${BENCH_READ_SIZES:+BENCH_READ_SIZES="$BENCH_READ_SIZES"} \
		${BENCH_READS:+BENCH_READS="$BENCH_READS"} \
		${BENCH_CFI_THREADS:+BENCH_CFI_THREADS="$BENCH_CFI_THREADS"} \
		${BENCH_BLK_THREADS:+BENCH_BLK_THREADS="$BENCH_BLK_THREADS"} \
		${BENCH_PY_THREADS:+BENCH_PY_THREADS="$BENCH_PY_THREADS"} \
		${BENCH_PY_DEPTH:+BENCH_PY_DEPTH="$BENCH_PY_DEPTH"} \
		${BENCH_PY_BIN:+BENCH_PY_BIN="$BENCH_PY_BIN"} \
		${BENCH_PROFILE:+BENCH_PROFILE="$BENCH_PROFILE"} \
		tests/bench/bench-inner.sh "$1"
}

t0=$(date +%s)
rc=0
failed=$OUT
if [ $where = host ]; then
	echo "== measuring on this host ($kver)"
	BENCH_WHERE=host tests/bench/bench-inner.sh "$OUT" || rc=$?
else
	echo "== measuring in a virtual machine with $kver (software emulation; see $OUT/bench.log)"
	# The mode is in host.tsv, and the report's "clock" row says it.
	measure "$OUT" || rc=$?
	if [ $rc -eq 0 ] && [ "$AA" = 1 ]; then
		echo "== A/A: the same measurements in a second guest (see $OUT_AA/bench.log)"
		measure "$OUT_AA" || { rc=$?; failed=$OUT_AA; }
	fi
fi
t1=$(date +%s)
kill $mon 2>/dev/null || true
{
	echo "end	$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "duration_s	$((t1 - t0))"
} >> "$OUT/host.tsv"
if [ $rc -ne 0 ]; then
	echo "bench.sh: the measurements failed (exit $rc); see $failed/bench.log and $failed/console.log" >&2
	tail -n 30 "$failed/bench.log" "$failed/console.log" >&2 2>/dev/null || true
	exit 1
fi

# A run of some sections only does not replace the full report either.
# (Each section on its own: one pattern for all of them cannot match
# neighbours, whose separating space both would need.)
all_sections="tick model pipe read cfi blockers waitfor oncpu python"
partial=0
for sec in $all_sections; do
	case " ${BENCH_SECTIONS:-$all_sections} " in
	*" $sec "*) ;;
	*) partial=1 ;;
	esac
done
if [ "$QUICK" = 1 ] || [ $partial = 1 ]; then
	doc=$BUILD/bench/BENCHMARKS.md
	raw=$OUT
else
	sfx=
	[ "$MODE" = wall ] || sfx=-$MODE
	doc=$TOP/docs/BENCHMARKS$sfx.md
	if [ $where = guest ] && [ "$kver" != "$kdefault" ]; then
		doc=$TOP/docs/BENCHMARKS$sfx-$kver.md
	fi
	# The raw results stay under build/, one folder per kernel and mode
	# (a later smoke run empties $OUT, not this); docs/ gets the report.
	raw=$BUILD/bench-results/$kver$sfx
	rm -rf "$raw"
	mkdir -p "$raw"
	cp -r "$OUT"/. "$raw"/
	rm -f "$raw/guest-cmd.sh" "$raw/guest.rc"
	if [ "$AA" = 1 ]; then
		mkdir -p "$raw/aa"
		cp -r "$OUT_AA"/. "$raw/aa"/
		rm -f "$raw/aa/guest-cmd.sh" "$raw/aa/guest.rc"
	fi
fi
# The second run of an A/A pair, where it is kept.
aa_args=()
if [ "$AA" = 1 ]; then
	if [ "$raw" = "$OUT" ]; then
		aa_args=(--aa "$OUT_AA")
	else
		aa_args=(--aa "$raw/aa")
	fi
fi
# The full runs on other kernels (docs/BENCHMARKS-<release>.md, each the
# report of one, naming its kernel in its Setup table; not the partial
# runs' BENCHMARKS-cfi.md or BENCHMARKS-tick.md), and the default
# kernel's, named in this report.
see_also=()
if [ "$doc" != "$BUILD/bench/BENCHMARKS.md" ]; then
	[ "$doc" = "$TOP/docs/BENCHMARKS.md" ] || [ ! -f "$TOP/docs/BENCHMARKS.md" ] ||
		see_also+=(--see-also BENCHMARKS.md)
	for f in "$TOP"/docs/BENCHMARKS-*.md; do
		[ -f "$f" ] && [ "$f" != "$doc" ] || continue
		r=$(basename "$f" .md); r=${r#BENCHMARKS-}
		grep -qF "| kernel (where the module ran) | \`$r\` " "$f" &&
			see_also+=(--see-also "BENCHMARKS-$r.md")
	done
fi
# How the report names the raw results: from the top of the tree when
# they are in it.
case "$raw" in
"$TOP"/*) rawname=${raw#"$TOP"/} ;;
*) rawname=$raw ;;
esac
python3 tests/bench/report.py "$OUT" --raw-dir "$rawname" \
	${see_also[@]+"${see_also[@]}"} ${aa_args[@]+"${aa_args[@]}"} > "$doc.tmp"
mv "$doc.tmp" "$doc"
echo "== report: $doc (raw results: $raw; $((t1 - t0)) s)"
