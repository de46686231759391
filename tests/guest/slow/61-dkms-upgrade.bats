#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The kernel upgrade, entirely inside a guest (make test-dkms-upgrade; too
# slow under emulation for make test: DKMS and depmod over 9p): with
# offsample installed by `make install` on the host, what apt does when
# another kernel's headers are installed makes DKMS build for that kernel.

load ../lib

rq() { printf '%s' "$1" | sed 's/[][\.^$*+?(){}|]/\\&/g'; }

@test "install: in the guest, installing another kernel's headers makes DKMS build for it" {
	local other="" k post v
	v=$(cat "$TOP/VERSION")
	for k in $("$TOP/packaging/install.sh" kernels); do
		[ "$k" != "$KREL" ] && other=$k
	done
	[ -n "$other" ]
	# Forget what DKMS has for it (in the guest's overlay only), then do what
	# apt does when that kernel's headers package is installed.
	dkms remove -m offsample -v "$v" -k "$other" >/dev/null 2>&1 || true
	run --separate-stderr dkms status -m offsample -k "$other"
	refute_output --partial installed
	post=/var/lib/dpkg/info/linux-headers-$other.postinst
	if [ -x "$post" ]; then
		run timeout 1800 "$post" configure
	else
		run timeout 1800 /etc/kernel/header_postinst.d/dkms "$other"
	fi
	echo "$output" > "$ARTIFACTS/dkms-upgrade-in-guest-$other.log"
	assert_success
	assert_output --partial "dkms: running auto installation service for kernel $other"
	run --separate-stderr dkms status -m offsample -v "$v" -k "$other"
	assert_output --regexp "^offsample/$(rq "$v"), $(rq "$other"), x86_64: installed"
	run modinfo -k "$other" -F vermagic offsample
	assert_output --regexp "^$(rq "$other") "
}
