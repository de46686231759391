#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The installed module, the way users get it: `make install` on the host
# (DKMS, packaging/guest-setup.sh before the guest boots), then in the
# guest `modprobe offsample && cat /proc/offsample/stacks`, options from
# /etc/modprobe.d, `modprobe -r`.  In the guest of a kernel whose module
# DKMS built when that kernel's headers were installed (the kernel upgrade
# path), also that it is that module.
#
# tests/guest/slow/61-dkms-upgrade.bats (make test-dkms-upgrade) does the
# whole upgrade inside a guest: slow under emulation.
#
# Kernels: every test kernel: DKMS builds and modprobe loads the module of
# that kernel.  The tests tagged once-N check modprobe.d and the installed
# tools, which are the same whichever kernel loaded the module: one guest
# of make test runs them (tests/guest/run.sh, OFFS_ONCE).

load lib

STATE=$TOP/build/packaging-guest
CONF=/etc/modprobe.d/offsample.conf

# A string as an extended regular expression that matches only itself
# (kernel releases contain "+" and ".").
rq() { printf '%s' "$1" | sed 's/[][\.^$*+?(){}|]/\\&/g'; }

# Whether DKMS installed offsample for this kernel is decided once, in
# setup_file (exported to the tests and teardown_file).  A skip in
# setup_file makes bats 1.8 drop the file's tests from the TAP without a
# word: each test skips in setup instead.
setup_file() {
	OFFS_INSTALLED=
	modinfo -n offsample >/dev/null 2>&1 && OFFS_INSTALLED=1
	export OFFS_INSTALLED
	[ -n "$OFFS_INSTALLED" ] || return 0
	offs_unload
	# /etc is a tmpfs overlay in the guest: what we write goes away with it,
	# but keep the installed file to put it back for later suites.
	if [ -f "$CONF" ]; then
		cp "$CONF" "$BATS_FILE_TMPDIR/offsample.conf.saved"
	fi
}

setup() {
	if [ -z "$OFFS_INSTALLED" ]; then
		skip "offsample is not installed for $(uname -r): run packaging/guest-setup.sh before (make install on the host), see docs/PACKAGING.md"
	fi
}

teardown_file() {
	[ -n "$OFFS_INSTALLED" ] || return 0
	modprobe -r offsample 2>/dev/null || offs_unload
	if [ -f "$BATS_FILE_TMPDIR/offsample.conf.saved" ]; then
		cp "$BATS_FILE_TMPDIR/offsample.conf.saved" "$CONF"
	else
		rm -f "$CONF"
	fi
}

@test "install: DKMS has offsample installed for the running kernel, in updates/dkms" {
	run --separate-stderr dkms status -m offsample -k "$KREL"
	assert_success
	assert_output --regexp "^offsample/$(rq "$(cat "$TOP/VERSION")"), $(rq "$KREL"), x86_64: installed"
	run modinfo -n offsample
	assert_output --regexp "^/lib/modules/$(rq "$KREL")/updates/dkms/offsample\.ko(\.xz|\.gz|\.zst)?$"
	run modinfo -F vermagic offsample
	assert_output --regexp "^$(rq "$KREL") "
	run modinfo -F version offsample
	assert_output "$(cat "$TOP/VERSION")"
}

@test "install: modprobe offsample && cat /proc/offsample/stacks" {
	run bash -c 'modprobe offsample && cat /proc/offsample/stacks'
	assert_success
	assert_line --regexp '^# offsample stacks v[0-9]+$'
	assert_line "# kernel: $KREL"
	[ -d /sys/module/offsample ]
}

# bats test_tags=once-1
@test "install: the example /etc/modprobe.d/offsample.conf changes nothing; defaults apply" {
	[ -f "$BATS_FILE_TMPDIR/offsample.conf.saved" ] || skip "no $CONF installed"
	run grep -v '^[[:space:]]*\(#\|$\)' "$BATS_FILE_TMPDIR/offsample.conf.saved"
	assert_failure		# no active line
	# What modprobe would run: the installed module, no options.
	modprobe -r offsample 2>/dev/null || true
	run modprobe -n -v offsample
	assert_success
	assert_output --regexp '^insmod /lib/modules/[^ ]*/offsample\.ko[^ ]* *$'
}

# bats test_tags=once-2
@test "install: the tools in /usr/local/sbin work with the loaded module" {
	[ -d /sys/module/offsample ] || modprobe offsample
	run /usr/local/sbin/offsample status
	assert_success
	assert_output --partial "hz="
	run bash -c '/usr/local/sbin/stackcollapse-offsample < /proc/offsample/stacks > /dev/null'
	assert_success
	run man -w offsample
	assert_success
}

# bats test_tags=once-1
@test "install: options in /etc/modprobe.d/offsample.conf are honoured by modprobe" {
	modprobe -r offsample 2>/dev/null || true
	printf 'options offsample hz=17 max_depth=20 key=pid\n' > "$CONF"
	run modprobe -n -v offsample
	assert_output --regexp '^insmod /lib/modules/[^ ]*/offsample\.ko[^ ]* +hz=17 max_depth=20 key=pid *$'
	run modprobe offsample
	assert_success
	run cat /sys/module/offsample/parameters/hz
	assert_output 17
	run cat /sys/module/offsample/parameters/max_depth
	assert_output 20
	run cat /sys/module/offsample/parameters/key
	assert_output --partial pid
	run grep '^# hz: ' /proc/offsample/stacks
	assert_output '# hz: 17'
	# A command-line option wins over the file.
	modprobe -r offsample
	run modprobe offsample hz=23
	assert_success
	run cat /sys/module/offsample/parameters/hz
	assert_output 23
}

@test "install: modprobe -r offsample unloads it" {
	[ -d /sys/module/offsample ] || modprobe offsample
	run modprobe -r offsample
	assert_success
	[ ! -e /sys/module/offsample ] || false
	[ ! -e /proc/offsample ] || false
	run grep -c '^offsample ' /proc/modules
	assert_output 0
}

@test "install: make install, or a kernel upgrade (headers installed), gave this kernel its DKMS module" {
	run cat "$STATE/$KREL.how"
	assert_success
	if [ "${lines[0]}" = "make install" ]; then
		assert_line --regexp "dkms install .*-k $(rq "$KREL")|Installing to /lib/modules/$(rq "$KREL")/updates/dkms/?$"
		run --separate-stderr dkms status -m offsample -k "$KREL"
		assert_output --regexp ": installed"
		return 0
	fi
	assert_equal "${lines[0]}" "kernel upgrade"
	assert_line --partial "dkms: running auto installation service for kernel $KREL"
	assert_line --regexp "Installing to /lib/modules/$(rq "$KREL")/updates/dkms/?$"
	run --separate-stderr dkms status -m offsample -k "$KREL"
	assert_output --regexp ": installed"
	run bash -c 'modprobe offsample && head -n 3 /proc/offsample/stacks && modprobe -r offsample'
	assert_success
	assert_line --regexp '^# offsample stacks'
}
