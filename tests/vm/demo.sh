#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build the module, load it (here if this kernel can load
# modules, else in a virtme-ng guest running a Debian kernel), profile the
# sample workload, and write an off-CPU flame graph and a text report:
#
#   build/demo/offcpu.svg       interactive flame graph, coloured by wait reason
#   build/demo/report.txt       top off-CPU stacks by reason
#   build/demo/offsample.stacks the raw recording (docs/FORMAT.md)
#
#   tests/vm/demo.sh [--guest | --host] [--seconds N]
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
OUT=$TOP/build/demo
secs=10
where=auto
while [ $# -gt 0 ]; do
	case "$1" in
	--guest) where=guest; shift ;;
	--host) where=host; shift ;;
	--seconds) secs=$2; shift 2 ;;
	-h|--help) sed -n '3,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "demo.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

. "$TOP/tests/vm/where.sh"
where_setup build test
rm -rf "$OUT"
mkdir -p "$OUT"
make --no-print-directory workload

if [ $where = host ]; then
	kver=$(uname -r)
	echo "== building for the running kernel $kver"
	make --no-print-directory KVER="$kver" module
	tests/vm/demo-inner.sh "$OUT" "$secs"
else
	kver=$(tests/vm/kernels.sh | head -n1)
	[ -n "$kver" ] || { echo "demo.sh: no Debian kernel installed for the guest" >&2; exit 1; }
	echo "== this kernel cannot load modules: using a virtual machine with $kver"
	make --no-print-directory KVER="$kver" module
	echo "== booting the guest (software emulation, about a minute)"
	if ! tests/vm/run-guest.sh "$kver" "$OUT" -- tests/vm/demo-inner.sh "$OUT" "$secs"; then
		echo "demo.sh: the demo failed in the guest; console log:" >&2
		tail -n 40 "$OUT/console.log" >&2
		exit 1
	fi
fi

echo
echo "== top off-CPU stacks by reason ($OUT/report.txt)"
head -n 60 "$OUT/report.txt"
echo
echo "flame graph:  $OUT/offcpu.svg   (open in a browser: hover, click to zoom, Ctrl-F to search)"
echo "report:       $OUT/report.txt"
echo "recording:    $OUT/offsample.stacks"
