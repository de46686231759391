#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side of `make stress`, `make test-debug` and `make test-rt`.
#
#   tests/stress/run.sh stress   long stress + fuzz suites (05-security,
#                                47-safety, 56-cfi, 70-stress, 75-fuzz,
#                                99-dmesg with OFFS_STRESS=long) on each
#                                test kernel
#                                (OFFS_KERNELS: default|rt|all|"rel ...")
#   tests/stress/run.sh rt       every guest suite, then the long suites, on
#                                Debian's 6.12 PREEMPT_RT kernel
#   tests/stress/run.sh debug    the same on the debug kernel built (once,
#                                cached) by tests/stress/debug-kernel.sh
#   tests/stress/run.sh atomic   the same on Debian's 6.1 built with
#                                DEBUG_ATOMIC_SLEEP (debug-kernel.sh's
#                                atomic variant; issue 53)
#
# OFFS_PARTS=core|long|core+long (default core+long) picks what rt and
# debug run: the whole debug run takes hours under emulation and can be
# done in two boots (docs/RELIABILITY.md).  OFFS_SUITES="00-load.bats ..."
# limits the core part to those guest suites (a chunk; its results go to
# <mode>-<kernel>-core-<first suite>), or with OFFS_PARTS=long (and in
# stress mode) the long part (<mode>-<kernel>-<first suite>);
# OFFS_FILTER=REGEX limits the chosen part to the tests of those suites
# whose names match (bats --filter; in the long part the kmemleak and
# lockdep suites and the clean-log check still run whole after them).
# OFFS_CFI_DAMAGE="COPIES ROUNDS" sizes 56-cfi's damaged-.eh_frame test
# (short 24 2, long 100 20; the debug kernel's form: docs/RELIABILITY.md).
#
# Results: build/stress-results/<mode>-<kernel>[-<parts>]/ (TAP,
# stress-results.txt, dmesg.txt, kmemleak); a summary with the figures and
# the time each guest took is printed and written to
# build/stress-results/summary-<mode>.txt (summary-<mode>-<parts>.txt for
# rt and debug).
# Exit status non-zero if anything failed.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
# shellcheck source=tests/lib/splat.bash
source tests/lib/splat.bash
mode=${1:-}
case "$mode" in
stress|rt|debug|atomic) ;;
*) echo "usage: $0 stress|rt|debug|atomic" >&2; exit 2 ;;
esac

RES=$TOP/build/stress-results
mkdir -p "$RES"
parts=${OFFS_PARTS:-core+long}
case "$parts" in
core|long|core+long) ;;
*) echo "$0: OFFS_PARTS must be core, long or core+long" >&2; exit 2 ;;
esac
SUMMARY=$RES/summary-$mode.txt
[ "$mode" = stress ] || SUMMARY=$RES/summary-$mode-$parts.txt
[ -z "${OFFS_SUITES:-}" ] ||
	SUMMARY=${SUMMARY%.txt}-$(set -- $OFFS_SUITES; echo "${1%.bats}").txt
: > "$SUMMARY"
failed=0
# Seconds a single test of the core suites may take (tests/guest/run.sh
# allows 600 unless told); set for the debug kernel.
core_tmo=

say() { echo "$*" | tee -a "$SUMMARY"; }

groups="build test vm python"
[ "$mode" = rt ] && groups="$groups rt"
# shellcheck disable=SC2086
tests/lib/deps.sh $groups || { say "FAILED: installing dependencies"; exit 1; }
hash -r
make --no-print-directory workload stress-helpers >/dev/null || { say "FAILED: building workload and helpers"; exit 1; }

# tap_counts FILE: "P passed, F failed, S skipped"
tap_counts() {
	if [ ! -s "$1" ]; then
		echo "no results"
		return
	fi
	awk -f tests/lib/tap-summary.awk "$1" | tail -n1 |
		awk '{ printf "%d passed, %d failed, %d skipped", $1, $2, $3 }'
}

# run_one NAME RUNNER KERNEL_ARG WHAT [runner options...]
run_one() {
	local name=$1 runner=$2 karg=$3 what=$4 out start rc
	shift 4
	[ "$what" = long ] || name=$name-$what
	[ -z "${OFFS_SUITES:-}" ] || [ "$what" = core+long ] ||
		name=$name-$(set -- $OFFS_SUITES; echo "${1%.bats}")
	out=$RES/$name
	rm -rf "$out"
	mkdir -p "$out"
	say "== $name: guest ($what), $(date -u +%H:%M:%SZ)"
	start=$(date +%s)
	local boots=0
	while :; do
		"$runner" "$@" "$karg" "$out" -- env ${core_tmo:+BATS_TEST_TIMEOUT=$core_tmo} \
			${OFFS_SUITES:+OFFS_SUITES="$OFFS_SUITES"} \
			${OFFS_FILTER:+OFFS_FILTER="$OFFS_FILTER"} \
			${OFFS_CFI_DAMAGE:+OFFS_CFI_DAMAGE="$OFFS_CFI_DAMAGE"} \
			tests/stress/guest.sh "$what" "$out"
		rc=$?
		# The kernel's own boot splat (guest.sh): boot again, twice at most.
		[ "$rc" = 3 ] && [ -f "$out/boot-splat.txt" ] && [ $boots -lt 2 ] || break
		boots=$((boots + 1))
		say "   $name: the kernel reported a problem while booting (not ours, before any test):" \
			"$(grep -m1 -E "$SPLAT_RE" "$out/boot-splat.txt"); booting again"
		mv "$out/boot-splat.txt" "$out/boot-splat-$boots.txt"
	done
	say "   $name: exit $rc after $(( $(date +%s) - start ))s"
	if [ -d "$out/core" ]; then
		say "   core suites:   $(tap_counts "$out/core/guest.tap")"
		[ -f "$out/core/stress.tap" ] &&
			say "   kmemleak, log: $(tap_counts "$out/core/stress.tap")"
	fi
	[ -d "$out/long" ] && say "   long suites:   $(tap_counts "$out/long/stress.tap")"
	[ -f "$out/long/checks.tap" ] &&
		say "   kmemleak, log: $(tap_counts "$out/long/checks.tap")"
	cat "$out"/core/stress-results.txt "$out"/long/stress-results.txt 2>/dev/null |
		sed 's/^/     /' | tee -a "$SUMMARY" > /dev/null
	local splats
	splats=$(grep -c -E "$SPLAT_RE" "$out/dmesg.txt" 2>/dev/null || true)
	say "   dmesg splat lines: ${splats:-unknown}"
	if [ -f "$out/kmemleak-final.txt" ]; then
		say "   kmemleak (final scan): $(grep -c '^unreferenced object' "$out/kmemleak-final.txt") objects," \
			"$(grep -c -E 'offs_|\[offsample\]' "$out/kmemleak-final.txt") lines naming offsample"
	fi
	[ "$rc" = 0 ] || failed=1
}

case "$mode" in
stress)
	case "${OFFS_KERNELS:-default}" in
	default|rt|all) kernels=$(tests/vm/kernels.sh "${OFFS_KERNELS:-default}") ;;
	*) kernels=$OFFS_KERNELS ;;
	esac
	for k in $kernels; do
		make --no-print-directory KVER="$k" module > "$RES/build-$k.log" 2>&1 ||
			{ say "FAILED: module build for $k"; failed=1; continue; }
		run_one "stress-$k" tests/vm/run-guest.sh "$k" long --timeout 5400
	done
	;;
rt)
	k=$(tests/vm/kernels.sh rt)
	[ -n "$k" ] || { say "FAILED: no 6.12 -rt kernel with headers installed"; exit 1; }
	make --no-print-directory KVER="$k" module > "$RES/build-$k.log" 2>&1 ||
		{ say "FAILED: module build for $k"; exit 1; }
	run_one "rt-$k" tests/vm/run-guest.sh "$k" "$parts" --timeout 7200
	;;
debug|atomic)
	start=$(date +%s)
	tree=$(OFFS_DEBUG_VARIANT=$mode tests/stress/debug-kernel.sh) ||
		{ say "FAILED: building the $mode kernel"; exit 1; }
	say "== $mode kernel: $tree (ready after $(( $(date +%s) - start ))s; build log in $(dirname "$tree")/build.log)"
	make --no-print-directory KDIR="$tree" module > "$RES/build-$mode.log" 2>&1 ||
		{ cat "$RES/build-$mode.log"; say "FAILED: module build against $tree"; exit 1; }
	k=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$tree/include/generated/utsrelease.h")
	if [ "$mode" = debug ]; then
		core_tmo=6000	# ten times the usual: the suites run 5 times slower
		# kasan_multi_shot: every KASAN report is printed, not only the first.
		run_one "debug-$k" tests/vm/run-guest.sh "$tree" "$parts" --timeout 21600 --memory 3G \
			--append kasan_multi_shot
	else
		run_one "atomic-$k" tests/vm/run-guest.sh "$tree" "$parts" --timeout 7200 \
			--append init_on_alloc=0
	fi
	;;
esac

say "== $mode: $([ $failed = 0 ] && echo PASSED || echo FAILED)"
exit $failed
