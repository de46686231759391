#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: build offsample-dkms_<version>_all.deb and
# offsample-tools_<version>_all.deb with debhelper (dh + dh_dkms) from a
# staged copy of the tree, so the checkout stays clean.  The .debs land in
# $BUILD/deb/.  Install with: apt install ./build/deb/offsample-dkms_*.deb
#
# Environment: BUILD (build/), NO_APT=1 (do not install build dependencies),
# DEB_MAINTAINER ("Name <email>" for debian/changelog, default: the
# Maintainer of debian/control).
set -eu -o pipefail
# Called from make: do not pass its command-line variables (KVER, BUILD,
# DESTDIR, ...) on to the makes we run (DKMS, kbuild, debhelper).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
VERSION=$(cat "$TOP/VERSION")
OUT=$BUILD/deb
STAGE=$OUT/src/offsample-$VERSION

if [ -z "${NO_APT:-}" ] && [ "$(id -u)" -eq 0 ]; then
	"$TOP/tests/lib/deps.sh" deb
fi
for c in dpkg-buildpackage dh dh_dkms; do
	command -v "$c" >/dev/null 2>&1 ||
		{ echo "deb.sh: $c not found (apt install debhelper dh-dkms dpkg-dev)" >&2; exit 1; }
done

rm -rf "$OUT"
mkdir -p "$STAGE"
# What the packages are made of, nothing else (no build/, no tests/).
cp -a "$TOP/VERSION" "$TOP/dkms.conf" "$TOP/debian" "$STAGE/"
[ ! -f "$TOP/LICENSE" ] || cp -a "$TOP/LICENSE" "$STAGE/"
mkdir -p "$STAGE/module" "$STAGE/packaging" "$STAGE/flamegraph" "$STAGE/docs"
cp -a "$TOP"/module/*.[ch] "$TOP/module/Kbuild" "$TOP/module/probe.sh" "$TOP/module/probes" "$STAGE/module/"
rm -f "$STAGE/module/syscalls.h" "$STAGE/module/features.h" "$STAGE"/module/*.mod.c
cp -a "$TOP/packaging/dkms.mk" "$TOP/packaging/install.sh" "$TOP/packaging/inline-reader.pl" \
	"$TOP/packaging/offsample.modprobe.conf" "$STAGE/packaging/"
cp -a "$TOP/tools" "$STAGE/"
cp -a "$TOP/flamegraph/offsample-flamegraph" "$STAGE/flamegraph/"
[ ! -d "$TOP/docs/man" ] || cp -a "$TOP/docs/man" "$STAGE/docs/"

# Generated from the one version in the tree: the changelog, and the
# dkms.conf dh_dkms installs (version written out; dh_dkms reads it
# without a shell).
maint=${DEB_MAINTAINER:-$(sed -n 's/^Maintainer: *//p' "$TOP/debian/control")}
when=$(git -C "$TOP" log -1 --format=%cD 2>/dev/null || true)
[ -n "$when" ] || when=$(date -R)
cat > "$STAGE/debian/changelog" <<EOF
offsample ($VERSION) bookworm; urgency=medium

  * Built by make deb from the offsample tree, VERSION $VERSION.

 -- $maint  $when
EOF
sed "s|^PACKAGE_VERSION=.*|PACKAGE_VERSION=\"$VERSION\"|" "$TOP/dkms.conf" \
	> "$STAGE/debian/offsample-dkms.dkms"

echo "deb: dpkg-buildpackage in $STAGE"
(cd "$STAGE" && dpkg-buildpackage -b --no-sign) > "$OUT/build.log" 2>&1 || {
	tail -n 40 "$OUT/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed, see $OUT/build.log" >&2
	exit 1
}
mv "$OUT"/src/*.deb "$OUT/"
mv "$OUT"/src/*.buildinfo "$OUT"/src/*.changes "$OUT/" 2>/dev/null || true
for d in "$OUT"/*.deb; do
	echo "deb: $d"
done
echo "install: apt install $OUT/offsample-dkms_${VERSION}_all.deb [$OUT/offsample-tools_${VERSION}_all.deb]"
