# SPDX-License-Identifier: GPL-2.0
# Helpers for the bats suites that run inside the guest, as root, against
# the real module.  Loaded by every tests/guest/*.bats.

# bats runs this file again for every test, and under emulation a fork
# and exec costs a tenth of a second or more (measured 2026-11-26: 0.09 to
# 0.12 s in a 6.1 guest): nothing here may start a program.
# tests/guest/run.sh exports OFFS_TOP and KREL; the fallbacks are for
# running one suite by hand.
#
# bats-support and bats-assert: their load.bash files source each part
# through "$(dirname ...)", 15 programs started, 1.5 s per test (a fifth
# of the guest suites' time).  Source the parts they list, in their order.
offs_load_bats_lib() {
	local dir=$1 line re='^source "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)/([A-Za-z0-9_/.-]+)"$'
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			source "$dir/${BASH_REMATCH[1]}" || return 1
		elif [[ $line == source* ]]; then
			# A loader of another shape: let bats load it.
			load "$dir/load"
			return
		fi
	done < "$dir/load.bash"
}
offs_load_bats_lib /usr/lib/bats/bats-support
offs_load_bats_lib /usr/lib/bats/bats-assert
bats_require_minimum_version 1.5.0
# This file is tests/guest/lib.bash, whatever directory the suite is in.
if [ -z "${OFFS_TOP:-}" ]; then
	OFFS_TOP=$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)
	export OFFS_TOP
fi
TOP=$OFFS_TOP
source "$TOP/tests/lib/bats-fix.bash"
if [ -z "${KREL:-}" ]; then
	KREL=$(uname -r)
	export KREL
fi
OFFS_KO=${OFFS_KO:-$TOP/build/$KREL/offsample.ko}
OFFS_WORKLOAD=${OFFS_WORKLOAD:-$TOP/build/offsample-workload}
OFFS_WITHPID=${OFFS_WITHPID:-$TOP/build/offsample-withpid}
P=/proc/offsample
PARAM=/sys/module/offsample/parameters

# Where to keep captured outputs that should come back to the host.
ARTIFACTS=${OFFS_ARTIFACTS:-$BATS_RUN_TMPDIR}

# SPLAT_RE: what a kernel log line reporting a problem looks like.
source "$TOP/tests/lib/splat.bash"

offs_unload() {
	if [ -d /sys/module/offsample ]; then
		rmmod offsample
	fi
}

# offs_load [param=value ...]: a freshly loaded module.
offs_load() {
	offs_unload
	insmod "$OFFS_KO" "$@"
}

# stat_get NAME [FILE]: value of one /proc/offsample/stats line (or of a
# copy of that file); fails if there is none.  In bash, without starting
# a program: the guest suites call it some thousands of times, often in
# loops that poll a counter, and each awk cost some 30 ms of an emulated
# CPU (process accounting, OFFS_ACCT, 2026-12-05: 451 awks, 13.7 s, in
# five suites).  mapfile reads the file in 4 KiB blocks from its
# start to its end (one generation of the seq_file), never seeking back
# as `read` does line by line.
stat_get() {
	local line v
	local -a lines
	mapfile -t lines < "${2:-$P/stats}" || return 1
	for line in "${lines[@]}"; do
		[ "${line%% *}" = "$1" ] || continue
		v=${line#"$1"}
		v=${v#"${v%%[! ]*}"}
		echo "${v%% *}"
		return 0
	done
	return 1
}

# stat_delta NAME BEFORE [AFTER]: how much stat NAME grew between two
# copies of /proc/offsample/stats (AFTER: the file itself if not given).
# Copies taken with one cat each hold every counter at one moment.
stat_delta() {
	local a b
	a=$(stat_get "$1" "$2") && b=$(stat_get "$1" "${3:-$P/stats}") || return 1
	echo $((b - a))
}

# hdr_get NAME FILE, sum_counts FILE [AWK_CONDITION], ...
source "$TOP/tests/lib/stacks.bash"

# wait_line FILE ERE [TRIES [PID]]: wait up to TRIES tenths of a second
# (300 unless told) for a line of FILE matching ERE and print the first
# one.  Fails when time is up, or as soon as PID (if given) has exited
# without writing it.
wait_line() {
	local i n=${3:-300}
	for ((i = 0; i < n; i++)); do
		grep -m1 -E -e "$2" "$1" 2>/dev/null && return 0
		[ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || break
		offs_sleep 0.1
	done
	grep -m1 -E -e "$2" "$1" 2>/dev/null
}

# offs_sleep SECONDS: sleep without starting a program (a sleep(1) costs
# 20-45 ms of an emulated CPU): a read that times out, from a FIFO no one
# writes (tests/guest/run.sh makes it; opened read-write, the open does
# not wait for a writer).  sleep(1) where there is none.
offs_sleep() {
	if [ -p "${OFFS_SLEEP_FIFO:-}" ]; then
		read -r -t "$1" _ <> "$OFFS_SLEEP_FIFO" || :
	else
		sleep "$1"
	fi
}

# Start the workload in the background; wait until it says "ready".
# Sets WL_PID.  Usage: workload_start ARGS...
workload_start() {
	local out=$BATS_FILE_TMPDIR/workload.out
	: > "$out"
	"$OFFS_WORKLOAD" "$@" >"$out" 2>&1 3>&- &
	WL_PID=$!
	wait_line "$out" '^ready$' 600 "$WL_PID" > /dev/null && return 0
	echo "workload did not become ready:" >&2
	cat "$out" >&2
	return 1
}

workload_stop() {
	if [ -n "${WL_PID:-}" ]; then
		kill -TERM "$WL_PID" 2>/dev/null || true
		wait "$WL_PID" 2>/dev/null || true
		WL_PID=
	fi
}

# dmesg_clean [EXTRA_REGEX]: fail with the offending lines if the kernel
# log has a splat (or a line matching EXTRA_REGEX).
dmesg_clean() {
	local bad
	bad=$(dmesg | grep -E "$SPLAT_RE${1:+|$1}" || true)
	if [ -n "$bad" ]; then
		echo "kernel log has errors:" >&2
		echo "$bad" >&2
		return 1
	fi
}

# slow_disk_setup NAME: a block device whose reads take 500 ms (dm-delay
# over a loop device on a tmpfs file).  Prints the /dev/mapper path.
slow_disk_setup() {
	local name=$1 lo
	# Modules on Debian's kernels, built in on the debug kernel.
	[ -e /dev/loop-control ] || modprobe loop
	dmsetup targets | grep -q '^delay ' || modprobe dm-delay
	# udev's disk rules would probe the new device (blkid): some thirty
	# reads of 500 ms each, and `udevadm settle` below waited 16 s for
	# them (measured 2026-12-04, 6.1 guest).  No test needs that probe:
	# our devices (osw-*) skip it, named by 55-dm.rules just before.
	if [ ! -f /run/udev/rules.d/56-offsample-slow-disk.rules ]; then
		mkdir -p /run/udev/rules.d
		echo 'SUBSYSTEM=="block", KERNEL=="dm-*", ENV{DM_NAME}=="osw-*", ENV{DM_UDEV_DISABLE_DISK_RULES_FLAG}="1", ENV{DM_UDEV_DISABLE_OTHER_RULES_FLAG}="1", OPTIONS+="nowatch"' \
			> /run/udev/rules.d/56-offsample-slow-disk.rules
		udevadm control --reload 2>/dev/null || true
	fi
	truncate -s 16M "/tmp/$name.img"
	lo=$(losetup -f --show "/tmp/$name.img")
	echo "$lo" > "/tmp/$name.loop"
	echo "0 $(blockdev --getsz "$lo") delay $lo 0 500" | dmsetup create "$name"
	udevadm settle 2>/dev/null || true
	[ -b "/dev/mapper/$name" ]
	echo "/dev/mapper/$name"
}

slow_disk_teardown() {
	local name=$1
	dmsetup remove "$name" 2>/dev/null || true
	if [ -f "/tmp/$name.loop" ]; then
		losetup -d "$(cat "/tmp/$name.loop")" 2>/dev/null || true
	fi
	rm -f "/tmp/$name.img" "/tmp/$name.loop"
}

# start_ustack BINARY DEVICE OUTFILE: start tests/workload/offsample-ustack
# (or a variant) in the background and wait for its "ready" line.  Sets
# US_PID and US_READY (that line).
start_ustack() {
	"$1" "$2" > "$3" 2>&1 3>&- &
	US_PID=$!
	US_READY=$(wait_line "$3" '^ready ' 300 "$US_PID") && return 0
	cat "$3"
	return 1
}

# share FILE COMM: "named/all" user frames of COMM's records in a stacks
# file, weighted by count (named: neither [anon]+0x.. nor /path+0x..).
share() {
	awk -F'\t' -v c="$2" '/^# columns: / { n = split(substr($0, 12), h, " "); for (i = 1; i <= n; i++) col[h[i]] = i }
		!/^#/ && $col["comm"] == c && $col["ustack"] != "-" {
			k = split($col["ustack"], f, ";")
			for (i = 1; i <= k; i++) { all += $1; if (f[i] !~ /^(\[anon\]|\/.*)\+0x[0-9a-f]+$/) named += $1 }
		}
		END { printf "%d/%d\n", named, all }' "$1"
}
