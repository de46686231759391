#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The part of `make demo` that runs where the module can be loaded (the host
# or a guest), as root:
#
#   tests/vm/demo-inner.sh OUTDIR SECONDS
#
# Loads the module unless it is already loaded, starts the sample workload
# (threads sleeping, contending a mutex, reading pipes, polling sockets,
# accepting, waiting for children, reading a slow disk, spinning), records
# SECONDS of samples with `offsample record`, and writes the report and the
# flame graph into OUTDIR.  Leaves the system as it found it.
set -eu
out=${1:?usage: demo-inner.sh OUTDIR SECONDS}
secs=${2:-10}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
OFFSAMPLE=$TOP/tools/offsample

loaded_here=no
kthreads_saved=
slow_dev=
loop_dev=
wl_pid=
img=/tmp/offsample-demo-disk.img
cleanup() {
	[ -n "$wl_pid" ] && kill "$wl_pid" 2>/dev/null && wait "$wl_pid" 2>/dev/null
	[ -n "$slow_dev" ] && dmsetup remove offsample-demo-slow 2>/dev/null
	[ -n "$loop_dev" ] && losetup -d "$loop_dev" 2>/dev/null
	rm -f "$img"
	[ -n "$kthreads_saved" ] && echo "$kthreads_saved" > /sys/module/offsample/parameters/kthreads
	[ $loaded_here = yes ] && rmmod offsample
	return 0
}
trap cleanup EXIT

if [ ! -d /sys/module/offsample ]; then
	insmod "build/$(uname -r)/offsample.ko" hz=19
	loaded_here=yes
fi

# Idle kernel threads would dominate the picture: leave them out while
# recording (restored afterwards when the module was already loaded).
kthreads_saved=$(cat /sys/module/offsample/parameters/kthreads)
echo 0 > /sys/module/offsample/parameters/kthreads

# A disk that takes 500 ms per read (dm-delay over a loop device), so the
# demo shows real I/O waits.  Optional: skipped if device-mapper is missing.
dio=()
if modprobe loop 2>/dev/null && modprobe dm-delay 2>/dev/null &&
   command -v dmsetup >/dev/null; then
	truncate -s 16M "$img"
	loop_dev=$(losetup -f --show "$img")
	if echo "0 $(blockdev --getsz "$loop_dev") delay $loop_dev 0 500" |
	   dmsetup create offsample-demo-slow 2>/dev/null; then
		udevadm settle 2>/dev/null || true
		slow_dev=/dev/mapper/offsample-demo-slow
		dio=(--dio "$slow_dev")
	fi
fi

wl_out=$out/workload.log
build/offsample-workload -n 4 "${dio[@]}" all spin > "$wl_out" 2>&1 &
wl_pid=$!
for _ in $(seq 1 300); do
	grep -q '^ready$' "$wl_out" && break
	sleep 0.1
done
grep -q '^ready$' "$wl_out" || { echo "demo: workload did not start" >&2; cat "$wl_out" >&2; exit 1; }

"$OFFSAMPLE" record -d "$secs" -F 19 -o "$out/offsample.stacks"
"$OFFSAMPLE" report --top 5 "$out/offsample.stacks" > "$out/report.txt"
"$OFFSAMPLE" flamegraph "$out/offsample.stacks" > "$out/offcpu.svg"
"$OFFSAMPLE" collapse "$out/offsample.stacks" > "$out/offcpu.folded"
cat /proc/offsample/stats > "$out/stats.txt"
