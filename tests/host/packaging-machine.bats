#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Packaging on this machine, for real (root): make install (DKMS), a
# kernel upgrade through the headers' postinst, make uninstall leaving
# nothing behind; guest-setup's clean-up of what a killed run left.
# tests/run.sh runs this suite first and alone among the suites that use
# the machine's install, then `make install` for the guests.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

load '../lib/packaging'

@test "packaging: make install (DKMS) + kernel upgrade + make uninstall on this machine leave no trace" {
	[ -n "$TEST_KERNELS" ] || skip "no test kernel with headers"
	if [ -n "$(dkms status -m offsample 2>/dev/null)" ] || [ -e /usr/local/sbin/offsample ]; then
		skip "offsample is installed on this machine already: not touching it"
	fi
	local first rest k mok_before=
	first=${TEST_KERNELS%% *}
	rest=${TEST_KERNELS#"$first"}
	[ -f /var/lib/dkms/mok.key ] && mok_before=1 && touch "$PKG_TMP/mok-before"
	snapshot > "$PKG_TMP/before"
	touch "$PKG_TMP/installed"
	# Not the private key of setup_file: the real DKMS's.
	unset mok_signing_key mok_certificate

	run make --no-print-directory install KVER="$first" NO_APT=1
	assert_success
	assert_output --partial "dkms install offsample/$VERSION -k $first"
	# A new kernel's headers arrive: Debian runs their postinst, DKMS builds.
	for k in $rest; do
		run /var/lib/dpkg/info/linux-headers-"$k".postinst configure
		assert_success
		assert_output --partial "running auto installation service for kernel $k"
	done
	for k in $TEST_KERNELS; do
		run --separate-stderr dkms status -m offsample -v "$VERSION" -k "$k"
		assert_output "offsample/$VERSION, $k, x86_64: installed"
		# depmod knows it: modprobe would load it from updates/dkms.
		run modprobe -S "$k" --show-depends offsample
		assert_output --regexp "^insmod /lib/modules/$(rq "$k")/updates/dkms/offsample\.ko"
	done
	[ -x /usr/local/sbin/offsample ]
	[ -f /etc/modprobe.d/offsample.conf ]
	run /usr/local/sbin/offsample --help
	assert_success

	# Re-running is harmless; with every kernel installed nothing is rebuilt.
	run make --no-print-directory install NO_APT=1
	assert_success
	if [ "$(packaging/install.sh kernels | tr '\n' ' ')" = "$TEST_KERNELS" ]; then
		assert_output --partial "already built and installed by DKMS"
	fi

	run make --no-print-directory uninstall
	assert_success
	run --separate-stderr dkms status -m offsample
	assert_output ""
	rm -f "$PKG_TMP/installed"
	[ -n "$mok_before" ] || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	snapshot > "$PKG_TMP/after"
	run diff "$PKG_TMP/before" "$PKG_TMP/after"
	assert_success
	run make --no-print-directory uninstall
	assert_success
}

@test "packaging: guest-setup stale removes what a killed test run (or CI) left behind, and keeps a user's install" {
	if [ -n "$(dkms status -m offsample 2>/dev/null)" ] || [ -e /usr/local/sbin/offsample ] ||
	   [ -e /etc/modprobe.d/offsample.conf ] || [ -e /etc/modules-load.d/offsample.conf ]; then
		skip "offsample is installed (or configured) on this machine already: not touching it"
	fi
	local mark=$PKG_TMP/test-install-mark
	snapshot > "$PKG_TMP/before"
	touch "$PKG_TMP/installed"
	unset mok_signing_key mok_certificate
	# The state CI found on 2026-11-25: tools installed, offsample
	# registered with the machine's DKMS.
	run make --no-print-directory install MODULE=none NO_APT=1
	assert_success
	run dkms add .
	assert_success

	# No marker, not CI: a user's install, kept as it is.
	run env -u CI OFFS_TEST_INSTALL_MARK="$mark" packaging/guest-setup.sh stale
	assert_success
	assert_output ""
	[ -x /usr/local/sbin/offsample ]
	run --separate-stderr dkms status -m offsample
	assert_output "offsample/$VERSION: added"

	# The marker of a run killed between before and after: removed.
	echo "installed by packaging.bats" > "$mark"
	run env -u CI OFFS_TEST_INSTALL_MARK="$mark" packaging/guest-setup.sh stale
	assert_success
	assert_line "guest-setup: removing the offsample install on this machine: an earlier test run installed it and did not remove it (installed by packaging.bats)"
	[ ! -e "$mark" ]
	run --separate-stderr dkms status -m offsample
	assert_output ""
	snapshot > "$PKG_TMP/after"
	run diff "$PKG_TMP/before" "$PKG_TMP/after"
	assert_success

	# On a CI machine any install is a leftover.
	run make --no-print-directory install MODULE=none NO_APT=1
	assert_success
	run env CI=true OFFS_TEST_INSTALL_MARK="$mark" packaging/guest-setup.sh stale
	assert_success
	assert_line "guest-setup: removing the offsample install on this machine: this is a CI machine (CI=true)"
	rm -f "$PKG_TMP/installed"
	snapshot > "$PKG_TMP/after"
	run diff "$PKG_TMP/before" "$PKG_TMP/after"
	assert_success
	# Nothing installed: nothing to do.
	run env CI=true OFFS_TEST_INSTALL_MARK="$mark" packaging/guest-setup.sh stale
	assert_success
	assert_output ""

	# A run killed while `after` uninstalled: only the configuration is
	# left (make uninstall removes it last; seen 2026-11-28, when the next
	# run's packaging round trip then failed on it).  Ours goes ...
	install -m 644 packaging/offsample.modprobe.conf /etc/modprobe.d/offsample.conf
	echo "installed by packaging.bats" > "$mark"
	run env -u CI OFFS_TEST_INSTALL_MARK="$mark" packaging/guest-setup.sh stale
	assert_success
	assert_line "guest-setup: only offsample's configuration is left on this machine (an earlier test run installed it and did not remove it (installed by packaging.bats)): removing it unless edited"
	[ ! -e /etc/modprobe.d/offsample.conf ]
	[ ! -e "$mark" ]
	# ... an edited one is the user's and stays.
	{ cat packaging/offsample.modprobe.conf; echo "options offsample hz=7"; } > /etc/modprobe.d/offsample.conf
	run env CI=true OFFS_TEST_INSTALL_MARK="$mark" packaging/guest-setup.sh stale
	assert_success
	assert_line "config: kept your edited /etc/modprobe.d/offsample.conf (PURGE=1 removes it)"
	run tail -n1 /etc/modprobe.d/offsample.conf
	assert_output "options offsample hz=7"
	rm -f /etc/modprobe.d/offsample.conf
	snapshot > "$PKG_TMP/after"
	run diff "$PKG_TMP/before" "$PKG_TMP/after"
	assert_success
}
