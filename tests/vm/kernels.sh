#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the kernel releases the suites use, one per line: the newest
# installed kernel of each series (never a hard-coded build: Debian moves
# them with every security update, and a test that names one breaks on the
# next machine; tests/host/pins.bats checks that none does).
#
#   tests/vm/kernels.sh [default|rt|all]
#       the guest kernels: the newest 6.1 and 6.12 (or 6.12 -rt) with both
#       an image in /boot and headers in /usr/src
#   tests/vm/kernels.sh series SERIES [--headers]
#       the newest release of one series (6.1, 6.12, 6.12-rt, 5.10) with an
#       image and headers, or with --headers only headers (what the host
#       suites need: tests/lib/deps.sh build installs no image); nothing
#       printed, exit 1, if none is installed
# OFFS_KERNELS_ROOT=DIR looks under DIR/usr/src and DIR/boot instead (the
# test of this script, tests/host/pins.bats).
set -eu
R=${OFFS_KERNELS_ROOT:-}

# newest GLOB KIND NEED: the newest release matching GLOB (on the release
# string) of KIND (plain or rt), with NEED (image: /boot/vmlinuz and
# headers; headers: headers only).
newest() {
	local best="" r d
	for d in "$R"/usr/src/linux-headers-$1; do
		[ -d "$d" ] || continue
		r=${d#"$R"/usr/src/linux-headers-}
		case "$r" in
		*-rt-*) [ "$2" = rt ] || continue ;;
		*-cloud-*) continue ;;
		*) [ "$2" = plain ] || continue ;;
		esac
		# The arch-independent "-common" tree is not a kernel of its own.
		[ -e "$d/Module.symvers" ] || [ -e "$d/.config" ] || continue
		[ "$3" = headers ] || [ -e "$R/boot/vmlinuz-$r" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$r" | sed '/^$/d' | sort -V | tail -n1)
	done
	[ -n "$best" ] && echo "$best"
	return 0
}

# series SERIES NEED: the newest installed release of SERIES.
series() {
	case "$1" in
	6.1) newest '6.1.*-amd64' plain "$2" ;;
	6.12) newest '6.12.*-amd64' plain "$2" ;;
	6.12-rt) newest '6.12.*-rt-amd64' rt "$2" ;;
	5.10) newest '5.10.*-amd64' plain "$2" ;;
	*) echo "kernels.sh: unknown series '$1' (6.1, 6.12, 6.12-rt, 5.10)" >&2; exit 2 ;;
	esac
}

case "${1:-default}" in
default)
	series 6.1 image
	series 6.12 image ;;
rt)
	series 6.12-rt image ;;
all)
	"$0" default; "$0" rt ;;
series)
	[ $# -ge 2 ] || { echo "usage: $0 series SERIES [--headers]" >&2; exit 2; }
	need=image
	case "${3:-}" in
	--headers) need=headers ;;
	"") ;;
	*) echo "usage: $0 series SERIES [--headers]" >&2; exit 2 ;;
	esac
	r=$(series "$2" "$need")
	[ -n "$r" ] || exit 1
	echo "$r" ;;
-h|--help)
	sed -n '3,18s/^# \{0,1\}//p' "$0" ;;
*)
	echo "usage: $0 [default|rt|all] | series SERIES [--headers]" >&2; exit 2 ;;
esac
