#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# No test, packaging script or make file uses one particular kernel build
# to find something on the machine: Debian replaces its kernels (6.1.0-56
# by 6.1.0-57, 6.12.117 by the next) with every security update, so a test
# that names one passes where the old packages are still installed and
# fails on every new machine (issue 51).  Releases come from
# tests/vm/kernels.sh, the newest installed build of each series.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	PINS=$ROOT/tests/lib/kernel-pins.pl
	KS=$ROOT/tests/vm/kernels.sh
	T=$BATS_TEST_TMPDIR
}

@test "pins: no test, packaging script or make file uses a particular kernel build" {
	local files
	# Every text file the suites, packaging and the build run; fixtures
	# are data (their "# kernel:" lines name the kernel they came from).
	files=$(cd "$ROOT" && git ls-files tests mk packaging debian .ci Makefile dkms.conf |
		grep -v '^tests/fixtures/' | xargs grep -Il . )
	[ "$(wc -l <<< "$files")" -gt 100 ]
	cd "$ROOT"
	# shellcheck disable=SC2086
	run "$PINS" $files
	assert_success
	assert_output ""
}

@test "pins: the check finds a build used to find headers, modules, an image, a package or a guest" {
	# Lines of the kind issue 51 found, and data that merely quotes a
	# release (tests/fixtures/pins/).
	run -1 "$PINS" "$ROOT/tests/fixtures/pins/pinned.txt" "$ROOT/tests/fixtures/pins/data.txt"
	assert_equal "$(grep -c "^$ROOT/tests/fixtures/pins/pinned.txt:" <<< "$output")" 9
	refute_output --partial data.txt
	run -2 "$PINS" "$T/no-such-file"
}

# A machine with several builds of each series installed, as one has
# after a security update (old headers still there) or a fresh one (only
# the new).
fake_kernels() {
	local r
	for r in "$@"; do
		mkdir -p "$T/root/usr/src/linux-headers-$r"
		touch "$T/root/usr/src/linux-headers-$r/.config"
	done
	mkdir -p "$T/root/usr/src/linux-headers-6.1.0-57-common" "$T/root/boot"
}

@test "pins: kernels.sh picks the newest installed build of each series, image and headers or headers alone" {
	fake_kernels 6.1.0-9-amd64 6.1.0-56-amd64 6.1.0-57-amd64 6.12.117+deb12-amd64 \
		6.12.119+deb12-amd64 6.12.119+deb12-rt-amd64 6.12.119+deb12-cloud-amd64 \
		6.12.121+deb12-rt-amd64 5.10.0-30-amd64 5.10.0-35-amd64
	# Images of the older builds only, and of one newer rt build.
	touch "$T"/root/boot/vmlinuz-{6.1.0-56-amd64,6.12.117+deb12-amd64,6.12.119+deb12-rt-amd64}
	export OFFS_KERNELS_ROOT=$T/root
	run -0 "$KS" series 6.1 --headers
	assert_output 6.1.0-57-amd64
	run -0 "$KS" series 6.12 --headers
	assert_output 6.12.119+deb12-amd64
	run -0 "$KS" series 6.12-rt --headers
	assert_output 6.12.121+deb12-rt-amd64
	run -0 "$KS" series 5.10 --headers
	assert_output 5.10.0-35-amd64
	# A guest needs the image too: the newest build that has both.
	run -0 "$KS"
	assert_output "$(printf '6.1.0-56-amd64\n6.12.117+deb12-amd64')"
	run -0 "$KS" rt
	assert_output 6.12.119+deb12-rt-amd64
	run -1 "$KS" series 5.10
	assert_output ""
	run -2 "$KS" series 4.19
	assert_output --partial "unknown series '4.19'"
}

@test "pins: the host suites find the headers of both test series that deps.sh installs" {
	run -0 "$KS" series 6.1 --headers
	[ -d "/usr/src/linux-headers-$output" ]
	run -0 "$KS" series 6.12 --headers
	[ -d "/usr/src/linux-headers-$output" ]
}
