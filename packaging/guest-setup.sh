#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of tests/guest/60-install.bats: the guests share the host's
# root filesystem, so offsample is installed on the host before they boot
# and removed after.  (A DKMS build inside the emulated guest takes about a
# quarter of an hour, mostly depmod over 9p, so it is not done there by
# default.)
#
#   packaging/guest-setup.sh before KERNEL...   (tests/run.sh, before the guests)
#   packaging/guest-setup.sh after              (tests/run.sh, after the guests)
#
# before: `make install KVER=<first kernel>` (DKMS), then, for each other
#   kernel, what Debian does when that kernel's headers are installed: the
#   headers package's postinst (linux-run-hooks -> /etc/kernel/
#   header_postinst.d/dkms -> dkms autoinstall), so the guest of that kernel
#   runs a module DKMS built on its own for a "new" kernel.  How each
#   kernel got its module is written to build/packaging-guest/<kernel>.how
#   (first line "make install" or "kernel upgrade"), with the DKMS output.
#   If offsample was already installed on this machine it is left as it is
#   (and not removed by `after`).
# after: `make uninstall` if `before` installed it.
set -u -o pipefail
# Called from make: do not pass its command-line variables (KVER, BUILD,
# DESTDIR, ...) on to the makes we run (DKMS, kbuild, debhelper).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/.." && pwd)
STATE=$TOP/build/packaging-guest
VERSION=$(cat "$TOP/VERSION")

case "${1:-}" in
before)
	shift
	rm -rf "$STATE"
	mkdir -p "$STATE"
	if [ "$(id -u)" -ne 0 ]; then
		echo "guest-setup: not root, offsample not installed" >&2
		exit 1
	fi
	if ! command -v dkms >/dev/null 2>&1; then
		"$TOP/tests/lib/deps.sh" dkms >&2 || exit 1
		hash -r
	fi
	if [ -n "$(dkms status -m offsample 2>/dev/null)" ] || [ -e /usr/local/sbin/offsample ]; then
		echo "guest-setup: offsample is already installed on this machine; using it as it is" >&2
		echo preinstalled > "$STATE/state"
		for k in "$@"; do
			{ echo "preinstalled"; dkms status -m offsample -k "$k"; } > "$STATE/$k.how"
		done
		exit 0
	fi
	first=$1
	shift
	echo installed > "$STATE/state"
	{
		echo "make install"
		make --no-print-directory -C "$TOP" install KVER="$first" NO_APT=1 2>&1
	} > "$STATE/$first.how"
	rc=$?
	[ $rc -eq 0 ] || { cat "$STATE/$first.how" >&2; exit $rc; }
	for k in "$@"; do
		post=/var/lib/dpkg/info/linux-headers-$k.postinst
		{
			echo "kernel upgrade"
			if [ -x "$post" ]; then
				echo "# $post configure"
				"$post" configure 2>&1
			else
				echo "# /etc/kernel/header_postinst.d/dkms $k"
				/etc/kernel/header_postinst.d/dkms "$k" 2>&1
			fi
			echo "# dkms status"
			dkms status -m offsample -v "$VERSION" -k "$k" 2>&1
		} > "$STATE/$k.how"
		if ! grep -q ": installed" "$STATE/$k.how"; then
			cat "$STATE/$k.how" >&2
			rc=1
		fi
	done
	exit $rc
	;;
after)
	if [ "$(cat "$STATE/state" 2>/dev/null)" = installed ]; then
		make --no-print-directory -C "$TOP" uninstall > "$STATE/uninstall.log" 2>&1 ||
			{ cat "$STATE/uninstall.log" >&2; exit 1; }
		echo uninstalled > "$STATE/state"
	fi
	;;
*)
	echo "usage: $0 before KERNEL... | after" >&2
	exit 2
	;;
esac
