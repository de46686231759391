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
#   packaging/guest-setup.sh stale              (tests/run.sh, first)
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
# stale: remove an offsample install that an earlier test run left behind
#   (it was killed between before and after: $MARK is still there), or, on
#   a CI machine (CI=true), any offsample install: a leftover there makes
#   the packaging round trip skip and the guests test an old module (CI,
#   2026-11-25: DKMS "built" but not installed for 6.12, modprobe failing
#   with "Unknown symbol").  A developer's own install is left alone.
#   When only the configuration files are left (a run killed while `after`
#   uninstalled), they are removed if unedited, as make uninstall does.
set -u -o pipefail
# Called from make: do not pass its command-line variables (KVER, BUILD,
# DESTDIR, ...) on to the makes we run (DKMS, kbuild, debhelper).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/.." && pwd)
STATE=$TOP/build/packaging-guest
VERSION=$(cat "$TOP/VERSION")
# Written by `before` when it installs, removed by `after`: outside the
# checkout, so that a fresh clone still finds what a killed run left.
MARK=${OFFS_TEST_INSTALL_MARK:-/var/lib/offsample-test-install}

installed_here() {	# is any part of an offsample install on this machine?
	{ command -v dkms >/dev/null 2>&1 && [ -n "$(dkms status -m offsample 2>/dev/null)" ]; } ||
		[ -e /usr/local/sbin/offsample ] ||
		compgen -G '/usr/src/offsample-*' >/dev/null ||
		compgen -G '/lib/modules/*/updates/dkms/offsample.ko*' >/dev/null ||
		compgen -G '/lib/modules/*/updates/offsample.ko*' >/dev/null
}

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
	# The same test as `stale`: any part of an install (DKMS entry, tools,
	# sources, a module) is someone's, and `after` would remove it.
	if installed_here; then
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
	echo "installed by $TOP/packaging/guest-setup.sh before, $(date -u +%FT%TZ)" > "$MARK"
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
		rm -f "$MARK"
	fi
	;;
stale)
	if [ -f "$MARK" ]; then
		why="an earlier test run installed it and did not remove it ($(cat "$MARK"))"
	elif [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
		why="this is a CI machine (CI=$CI)"
	else
		exit 0
	fi
	if ! installed_here; then
		# A run killed while `after` uninstalled can leave the
		# configuration alone (make uninstall removes it last): ours
		# (unedited) goes, an edited one is kept, as make uninstall does.
		if [ -e /etc/modprobe.d/offsample.conf ] || [ -e /etc/modules-load.d/offsample.conf ]; then
			[ "$(id -u)" -eq 0 ] || {
				echo "guest-setup: offsample's configuration is left on this machine ($why), but removing it needs root" >&2
				exit 1
			}
			echo "guest-setup: only offsample's configuration is left on this machine ($why): removing it unless edited"
			make --no-print-directory -C "$TOP" uninstall 2>&1 || exit 1
		fi
		rm -f "$MARK"
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "guest-setup: a leftover offsample install is on this machine ($why), but removing it needs root" >&2
		exit 1
	fi
	echo "guest-setup: removing the offsample install on this machine: $why"
	# No apt here: without DKMS the uninstall removes the kbuild files.
	[ -d /sys/module/offsample ] && modprobe -r offsample
	make --no-print-directory -C "$TOP" uninstall PURGE=1 2>&1 || exit 1
	if installed_here; then
		echo "guest-setup: offsample is still installed after make uninstall" >&2
		exit 1
	fi
	rm -f "$MARK"
	;;
*)
	echo "usage: $0 before KERNEL... | after | stale" >&2
	exit 2
	;;
esac
