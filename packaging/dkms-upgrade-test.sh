#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make test-dkms-upgrade: a kernel upgrade through DKMS, inside a guest.
# `make install` here for the first test kernel only, boot a guest of it,
# and there run tests/guest/slow/61-dkms-upgrade.bats: the other kernel's
# headers postinst makes DKMS build offsample for it.  Slow under
# emulation (DKMS and depmod over 9p).  `make uninstall` afterwards.
#
#   packaging/dkms-upgrade-test.sh
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
tests/lib/deps.sh build test vm dkms || exit 1
hash -r
kernels=$(tests/vm/kernels.sh)
first=$(echo "$kernels" | head -n1)
[ "$(echo "$kernels" | wc -l)" -ge 2 ] || { echo "dkms-upgrade-test: needs two test kernels with headers" >&2; exit 1; }
out=$TOP/build/test-results/dkms-upgrade
rm -rf "$out"
mkdir -p "$out"
packaging/guest-setup.sh before "$first" > "$out/guest-setup.log" 2>&1 ||
	{ cat "$out/guest-setup.log" >&2; exit 1; }
trap 'packaging/guest-setup.sh after >> "$out/guest-setup.log" 2>&1' EXIT
start=$(date +%s)
tests/vm/run-guest.sh --timeout 3600 "$first" "$out" -- env OFFS_ARTIFACTS="$out" \
	sh -c "bats --tap --timing tests/guest/slow/61-dkms-upgrade.bats > '$out/dkms-upgrade.tap'"
rc=$?
cat "$out/dkms-upgrade.tap"
echo "dkms-upgrade-test: guest exit $rc after $(( $(date +%s) - start ))s"
exit $rc
