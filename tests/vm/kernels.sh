#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the kernel releases the guest suites run on, one per line:
# the newest installed 6.1 and 6.12 kernels that have both an image in /boot
# and headers in /usr/src (never a hard-coded version: Debian moves them with
# every security update).  With "rt" as argument: the newest 6.12 -rt kernel.
#
#   tests/vm/kernels.sh [default|rt|all]
set -eu

newest() {	# $1 = glob on the release string, $2 = "rt" to want -rt-
	local best="" r
	for img in /boot/vmlinuz-$1; do
		[ -e "$img" ] || continue
		r=${img#/boot/vmlinuz-}
		case "$r" in
		*-rt-*) [ "${2:-}" = rt ] || continue ;;
		esac
		[ -d "/usr/src/linux-headers-$r" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$r" | sed '/^$/d' | sort -V | tail -n1)
	done
	[ -n "$best" ] && echo "$best"
	return 0
}

case "${1:-default}" in
default)
	newest '6.1.*-amd64'
	newest '6.12.*-amd64' ;;
rt)
	newest '6.12.*-rt-amd64' rt ;;
all)
	"$0" default; "$0" rt ;;
*)
	echo "usage: $0 [default|rt|all]" >&2; exit 2 ;;
esac
