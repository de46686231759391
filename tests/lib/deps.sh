#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what the build, the tests and the demo need, idempotently.
#
#   tests/lib/deps.sh [GROUP...]     groups: build vm test browser metrics otelcol
#                                    python bench all
#
# Debian packages are only requested when missing (no network access at all
# when everything is present).  Safe to run repeatedly, from CI (no stdin)
# and by hand.
set -eu

want_apt=()
need_group() {
	case "$1" in
	build)
		want_apt+=(gcc make libc6-dev kmod dwarves
			linux-headers-amd64 linux-headers-6.12-amd64) ;;
	vm)
		# libseccomp-dev and libcap-ng-dev: virtiofsd's build (below).
		want_apt+=(qemu-system-x86 busybox-static
			linux-image-amd64 linux-image-6.12-amd64
			libseccomp-dev libcap-ng-dev pkg-config) ;;
	test)
		want_apt+=(bats bats-assert bats-support libxml2-utils dmsetup
			util-linux procps binutils libc6-dbg elfutils golang-go
			debuginfod xz-utils curl graphviz
			openjdk-17-jdk-headless nodejs linux-perf) ;;
	browser)
		want_apt+=(chromium nodejs npm) ;;
	metrics)
		# prometheus-node-exporter and promtool are unpacked into
		# build/deps (below), not installed: no service is started.
		want_apt+=(curl) ;;
	otelcol)
		want_apt+=(curl) ;;
	python)
		# py-spy (the oracle of the Python frames, tests/host/upy.bats)
		# and flamegraph.pl from PyPI into build/deps (below); elfutils
		# for eu-stack; debootstrap for Debian 13's python3.13 in a root
		# of its own.
		want_apt+=(python3-pip elfutils debootstrap) ;;
	bench)
		want_apt+=(linux-perf bpfcc-tools) ;;
	rt)
		want_apt+=(linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64) ;;
	all)
		need_group build; need_group vm; need_group test ;;
	# --- packaging (mk/packaging.mk, packaging/): install, deb, check, matrix
	dkms)
		want_apt+=(dkms make gcc kmod openssl xz-utils dwarves) ;;
	deb)
		want_apt+=(debhelper dh-dkms dpkg-dev) ;;
	check)
		want_apt+=(sparse perl xz-utils) ;;
	packaging)
		need_group dkms; need_group deb; need_group check ;;
	*)
		echo "deps.sh: unknown group '$1'" >&2; exit 2 ;;
	esac
}

[ $# -gt 0 ] || set -- all
for g in "$@"; do need_group "$g"; done

missing=()
for p in "${want_apt[@]}"; do
	# nodejs/npm may come from elsewhere (nvm, the machine image): accept
	# the command instead of the package.
	case "$p" in
	nodejs) command -v node >/dev/null 2>&1 && continue ;;
	npm) command -v npm >/dev/null 2>&1 && continue ;;
	esac
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*" installed") ;;
	*) missing+=("$p") ;;
	esac
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: missing packages: ${missing[*]} (run as root)" >&2
		exit 1
	fi
	echo "deps.sh: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The checkout: build/deps holds what is unpacked or built for it.
top=$(cd "$(dirname "$0")/../.." && pwd)
for g in "$@"; do
	case "$g" in
	vm|all)
		if ! command -v vng >/dev/null 2>&1; then
			echo "deps.sh: installing virtme-ng (pip)" >&2
			python3 -m pip install -q virtme-ng >&2 ||
				python3 -m pip install -q --break-system-packages virtme-ng >&2
			hash -r
		fi
		# virtiofsd (the Rust daemon; Debian 12 has none, and QEMU's
		# own C one is not what virtme-ng runs), built with cargo once
		# per machine into $OFFS_ROOTS and linked from build/deps:
		# tests/vm/run-guest.sh shares the root with virtio-fs instead
		# of 9p when it is there (measured, 6.1 guest, 45-cache and
		# 55-user: 158 s instead of 184 s, QEMU's CPU 141 s instead of
		# 177 s).  Without cargo the guests use 9p: slower, not wrong.
		vver=1.14.0
		vdir=$top/build/deps/virtiofsd
		cdir=${OFFS_ROOTS:-/var/lib/offsample-dev}/virtiofsd-$vver
		if [ ! -x "$cdir/bin/virtiofsd" ]; then
			if command -v cargo >/dev/null 2>&1; then
				echo "deps.sh: building virtiofsd $vver into $cdir (cargo, crates.io)" >&2
				rm -rf "$cdir.tmp"
				mkdir -p "$(dirname "$cdir")"
				if nice cargo install -q --locked --root "$cdir.tmp" "virtiofsd@$vver" >&2; then
					rm -rf "$cdir"
					mv "$cdir.tmp" "$cdir"
				else
					rm -rf "$cdir.tmp"
					echo "deps.sh: virtiofsd did not build; the guests will use 9p" >&2
				fi
			else
				echo "deps.sh: no cargo: the guests will use 9p (slower) instead of virtio-fs" >&2
			fi
		fi
		if [ -x "$cdir/bin/virtiofsd" ] && [ "$(readlink "$vdir" 2>/dev/null)" != "$cdir" ]; then
			mkdir -p "$top/build/deps"
			rm -rf "$vdir"
			ln -s "$cdir" "$vdir"
		fi
		;;
	metrics)
		# Debian's node_exporter and promtool, unpacked (dpkg -x) into
		# build/deps/prometheus once per package version: the tests
		# start node_exporter themselves on a loopback port.
		pdir=$top/build/deps/prometheus
		want="$(apt-cache policy prometheus-node-exporter prometheus 2>/dev/null | sed -n 's/^  Candidate: //p' | tr '\n' ' ')"
		if [ ! -x "$pdir/ne/usr/bin/prometheus-node-exporter" ] ||
		   [ ! -x "$pdir/prom/usr/bin/promtool" ] ||
		   [ "$(cat "$pdir/.versions" 2>/dev/null)" != "$want" ]; then
			echo "deps.sh: unpacking prometheus-node-exporter and promtool into $pdir" >&2
			rm -rf "$pdir"
			mkdir -p "$pdir/debs"
			if ! (cd "$pdir/debs" && apt-get download -q prometheus-node-exporter prometheus >&2 2>/dev/null); then
				apt-get update -qq >&2
				(cd "$pdir/debs" && apt-get download -q prometheus-node-exporter prometheus >&2)
			fi
			dpkg -x "$pdir"/debs/prometheus-node-exporter_*.deb "$pdir/ne"
			dpkg -x "$pdir"/debs/prometheus_*.deb "$pdir/prom"
			rm -rf "$pdir/debs"
			printf '%s' "$want" > "$pdir/.versions"
		fi
		;;
	python)
		# py-spy, pinned: one static binary in a wheel (no compiler),
		# unpacked with pip --target, so nothing is installed system-wide.
		ydir=$top/build/deps/pyspy
		if [ ! -x "$ydir/bin/py-spy" ] || [ "$(cat "$ydir/.version" 2>/dev/null)" != 0.4.3 ]; then
			echo "deps.sh: installing py-spy 0.4.3 into $ydir (pip)" >&2
			rm -rf "$ydir"
			python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
				--target "$ydir" py-spy==0.4.3 >&2
			printf '0.4.3' > "$ydir/.version"
		fi
		# The real flamegraph.pl (Brendan Gregg's FlameGraph, CDDL), the
		# oracle of the folded output (tests/host/tools-blockers.bats,
		# tools-cli.bats): Debian does not package it; PyPI's
		# pyramid-flamegraph 0.1.1 carries a copy of 2018 (the chain
		# palette and the _[w] annotations), unpacked with pip --target
		# into build/deps/flamegraph, never installed system-wide.
		gdir=$top/build/deps/flamegraph
		if [ ! -f "$gdir/pyramid_flamegraph/flamegraph.pl" ] ||
		   [ "$(cat "$gdir/.version" 2>/dev/null)" != 0.1.1 ]; then
			echo "deps.sh: installing flamegraph.pl (pyramid-flamegraph 0.1.1) into $gdir (pip)" >&2
			rm -rf "$gdir"
			python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
				--target "$gdir" pyramid-flamegraph==0.1.1 >&2
			printf '0.1.1' > "$gdir/.version"
		fi
		# Debian 13 (trixie) with its python3.13, a minimal root made
		# once per machine (about 260 MB, 30 s from the mirror) in
		# $OFFS_ROOTS (default /var/lib/offsample-dev), linked from
		# build/deps: a Python built by Debian's newer toolchain, in a
		# process whose files are in another root (tests/host/upy.bats,
		# tests/guest/64-python.bats run it with chroot).  Not under
		# /var/cache: virtme-ng mounts a tmpfs there in the guests
		# (2026-12-04: the guests found no root).  The workload is
		# copied in each time.
		troot=$top/build/deps/trixie-root
		croot=${OFFS_ROOTS:-/var/lib/offsample-dev}/trixie-root
		if [ ! -x "$troot/usr/bin/python3.13" ] ||
		   { [ -L "$troot" ] && [ "$(readlink "$troot")" != "$croot" ]; }; then
			if [ ! -x "$croot/usr/bin/python3.13" ]; then
				echo "deps.sh: debootstrap trixie (python3.13) into $croot" >&2
				mkdir -p "$(dirname "$croot")"
				rm -rf "$croot" "$croot.tmp"
				debootstrap --variant=minbase --include=python3.13 trixie "$croot.tmp" \
					"${OFFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
				mv "$croot.tmp" "$croot"
			fi
			mkdir -p "$top/build/deps"
			rm -rf "$troot"
			ln -s "$croot" "$troot"
		fi
		mkdir -p "$troot/opt/offsample"
		cp "$top/tests/workload/offsample-pywait.py" "$troot/opt/offsample/"
		;;
	otelcol)
		# An OpenTelemetry Collector (tests/otelcol: OTLP receiver,
		# debug and file exporters) built with Go from the module
		# proxy into build/deps/otelcol, again only when its sources
		# change.  Needs Go 1.24 or later (the collector's).
		odir=$top/build/deps/otelcol
		want=$(cat "$top"/tests/otelcol/go.mod "$top"/tests/otelcol/go.sum "$top"/tests/otelcol/main.go | cksum)
		if [ ! -x "$odir/otelcol" ] || [ "$(cat "$odir/.sources" 2>/dev/null)" != "$want" ]; then
			command -v go >/dev/null 2>&1 || { echo "deps.sh: otelcol needs Go (go not found)" >&2; exit 1; }
			echo "deps.sh: building the OpenTelemetry Collector into $odir (Go modules from the proxy)" >&2
			mkdir -p "$odir"
			(cd "$top/tests/otelcol" && go build -trimpath -o "$odir/otelcol" .) >&2
			printf '%s' "$want" > "$odir/.sources"
		fi
		;;
	browser)
		# playwright-core (the driver only: the browser is Debian's
		# chromium) from the committed lock file.  The lock file is
		# copied into node_modules after a good install, so npm (and
		# the network) is only used when node_modules is missing or
		# was installed from another lock file.
		bdir=$(cd "$(dirname "$0")/../browser" && pwd)
		stamp=$bdir/node_modules/.offsample-package-lock.json
		if ! cmp -s "$bdir/package-lock.json" "$stamp" ||
		   [ ! -d "$bdir/node_modules/playwright-core" ]; then
			echo "deps.sh: npm ci --prefix $bdir" >&2
			npm ci --prefix "$bdir" --no-audit --no-fund >&2
			cp "$bdir/package-lock.json" "$stamp"
		fi
		;;
	esac
done
exit 0
