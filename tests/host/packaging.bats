#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Packaging, on the host (root): dkms.conf, DKMS builds for the test
# kernels (6.1, 6.12) in a temporary DKMS tree, make install / uninstall
# with DESTDIR, make deb, make lint.  Nothing here touches the machine's
# own install (tests/host/packaging-machine.bats does): tests/run.sh runs
# this suite while the guests, which share the machine's root, run with
# offsample installed.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

load '../lib/packaging'

@test "packaging: dkms.conf, sourced like dkms does, has the package, VERSION and the DKMS settings" {
	# The release DKMS passes: the installed 6.1 (a name that does not
	# exist would do as well; nothing is read from its tree here).
	local k61
	k61=$("$TOP/tests/vm/kernels.sh" series 6.1 --headers)
	run bash -c 'kernelver=$1 arch=x86_64 kernel_source_dir=/lib/modules/$1/build
		. ./dkms.conf
		echo "name=$PACKAGE_NAME"; echo "version=$PACKAGE_VERSION"; echo "auto=$AUTOINSTALL"
		echo "built=${BUILT_MODULE_NAME[0]} at ${BUILT_MODULE_LOCATION[0]}"
		echo "dest=${DEST_MODULE_LOCATION[0]}"; echo "make=${MAKE[0]}"; echo "clean=$CLEAN"
		echo "arch=$BUILD_EXCLUSIVE_ARCH"; echo "config=$BUILD_EXCLUSIVE_CONFIG"
		for k in 6.1.0-56-amd64 6.12.117+deb12-amd64 6.12.117+deb12-rt-amd64 6.18.3 6.20.1 \
			5.10.0-30-amd64 5.19.1 6.0.19 4.19.0-27-amd64 5.4.0-200-generic 5.9.16 \
			7.0.0 16.1.0 15.10.1; do
			[[ $k =~ $BUILD_EXCLUSIVE_KERNEL ]] && echo "builds $k" || echo "refuses $k"
		done' _ "$k61"
	assert_success
	assert_line "name=offsample"
	assert_line "version=$VERSION"
	assert_line "auto=yes"
	assert_line "built=offsample at build/$k61"
	assert_line "dest=/updates/dkms"
	assert_line --partial "make=make -f packaging/dkms.mk KDIR=/lib/modules/$k61/build"
	assert_line --partial "clean=make -f packaging/dkms.mk KDIR=/lib/modules/$k61/build clean"
	for k in 6.1.0-56-amd64 6.12.117+deb12-amd64 6.12.117+deb12-rt-amd64 6.18.3 6.20.1 \
		5.10.0-30-amd64 5.19.1 6.0.19; do
		assert_line "builds $k"
	done
	for k in 4.19.0-27-amd64 5.4.0-200-generic 5.9.16 7.0.0 16.1.0 15.10.1; do
		assert_line "refuses $k"
	done
	[[ x86_64 =~ $(bash -c '. ./dkms.conf; echo "$BUILD_EXCLUSIVE_ARCH"') ]] || false
}

@test "packaging: dkms add from the checkout (dkms add .) registers offsample/VERSION" {
	run dkms add . "${DKMS_OPTS[@]}"
	assert_success
	run --separate-stderr dkms status -m offsample "${DKMS_OPTS[@]}"
	assert_output "offsample/$VERSION: added"
	[ -f "$PKG_TMP/dkms/src/offsample-$VERSION/module/Kbuild" ]
}

@test "packaging: dkms build succeeds for every test kernel (6.1, 6.12), signed, right vermagic" {
	[ -n "$TEST_KERNELS" ] || skip "no test kernel with headers"
	local k ko
	for k in $TEST_KERNELS; do
		run dkms build -m offsample -v "$VERSION" -k "$k" "${DKMS_OPTS[@]}"
		[ "$status" -eq 0 ] || {
			cat "$PKG_TMP"/dkms/tree/offsample/"$VERSION"/build/make.log >&2 2>/dev/null
			echo "$output" >&2
			false
		}
		run --separate-stderr dkms status -m offsample -v "$VERSION" -k "$k" "${DKMS_OPTS[@]}"
		assert_output "offsample/$VERSION, $k, x86_64: built"
		ko=$(ls "$PKG_TMP"/dkms/tree/offsample/"$VERSION"/"$k"/x86_64/module/offsample.ko*)
		run modinfo -F vermagic "$ko"
		assert_output --regexp "^$(rq "$k") "
		run modinfo -F version "$ko"
		assert_output "$VERSION"
		run modinfo -F signer "$ko"
		assert_output "DKMS module signing key"
		# Warning-free, like the development build.
		run grep -iE 'warning:|error:' "$PKG_TMP"/dkms/tree/offsample/"$VERSION"/"$k"/x86_64/log/make.log
		assert_failure
	done
}

@test "packaging: dkms refuses kernels outside the supported range (exit 77)" {
	run dkms build -m offsample -v "$VERSION" -k 4.19.0-27-amd64 "${DKMS_OPTS[@]}"
	assert_equal "$status" 77
	run dkms remove -m offsample -v "$VERSION" --all "${DKMS_OPTS[@]}"
	assert_success
	run --separate-stderr dkms status -m offsample "${DKMS_OPTS[@]}"
	assert_output ""
}

@test "packaging: make dkms-src holds only what the DKMS build needs, version written out" {
	run make --no-print-directory BUILD="$PKG_TMP/b" dkms-src
	assert_success
	run bash -c "cd '$PKG_TMP/b/dkms/offsample-$VERSION' && find . -type f | sort"
	assert_success
	local expected
	expected=$( { echo ./VERSION; echo ./dkms.conf; echo ./packaging/dkms.mk; echo ./module/Kbuild
		for f in module/*.c module/*.h module/probe.sh module/probes/*.c; do
			# Never what an in-place build (make -C module) generated.
			case ${f##*/} in features.h | syscalls.h | *.mod.c) continue ;; esac
			echo "./$f"
		done; } | sort)
	assert_output "$expected"
	run grep '^PACKAGE_VERSION=' "$PKG_TMP/b/dkms/offsample-$VERSION/dkms.conf"
	assert_output "PACKAGE_VERSION=\"$VERSION\""
}

@test "packaging: make install DESTDIR (kbuild fallback) installs module, tools, man, config; uninstall removes them" {
	local k d=$PKG_TMP/root
	k=${TEST_KERNELS%% *}
	[ -n "$k" ] || skip "no test kernel with headers"
	run make --no-print-directory install DESTDIR="$d" MODULE=kbuild KVER="$k" \
		BUILD="$PKG_TMP/kb" LOAD_AT_BOOT=1
	assert_success
	for f in offsample stackcollapse-offsample stackcollapse-procstat offsample-symbolize offsample-flamegraph; do
		[ -x "$d/usr/local/sbin/$f" ] || { echo "missing $f" >&2; false; }
		# --version works from the installed tree too.
		run -0 "$d/usr/local/sbin/$f" --version
		assert_output "$f $(cat "$TOP/VERSION")"
	done
	[ -f "$d/usr/local/share/offsample/lib/offsample-lib.pl" ]
	[ -f "$d/usr/local/share/offsample/lib/OffsampleStacks.pm" ]
	for f in docs/man/*.[1-9]; do
		[ -f "$d/usr/local/share/man/man${f##*.}/${f##*/}" ] || { echo "missing $f" >&2; false; }
	done
	run ls "$d/lib/modules/$k/updates/"
	assert_output --regexp '^offsample\.ko(\.xz)?$'
	run grep -v '^#' "$d/etc/modprobe.d/offsample.conf"
	assert_output ""
	run cat "$d/etc/modules-load.d/offsample.conf"
	assert_line offsample
	# The installed CLI finds its library and the renderer next to it.
	run "$d/usr/local/sbin/offsample" --help
	assert_success
	run make --no-print-directory install DESTDIR="$d" MODULE=kbuild KVER="$k" BUILD="$PKG_TMP/kb"
	assert_success
	run make --no-print-directory uninstall DESTDIR="$d"
	assert_success
	run find "$d" -mindepth 1
	assert_output ""
	run make --no-print-directory uninstall DESTDIR="$d"
	assert_success
}

@test "packaging: make deb builds offsample-dkms and offsample-tools that apt can install" {
	run make --no-print-directory deb BUILD="$PKG_TMP/b" NO_APT=1
	assert_success
	local deb=$PKG_TMP/b/deb/offsample-dkms_${VERSION}_all.deb tools=$PKG_TMP/b/deb/offsample-tools_${VERSION}_all.deb
	[ -f "$deb" ] || false
	[ -f "$tools" ] || false
	run dpkg-deb -f "$deb" Package Version Depends
	assert_line "Package: offsample-dkms"
	assert_line "Version: $VERSION"
	assert_line --regexp '^Depends: .*dkms'
	run dpkg-deb -c "$deb"
	assert_line --regexp " \./usr/src/offsample-$(rq "$VERSION")/dkms\.conf$"
	assert_line --regexp " \./usr/src/offsample-$(rq "$VERSION")/module/Kbuild$"
	assert_line --regexp " \./usr/src/offsample-$(rq "$VERSION")/packaging/dkms\.mk$"
	assert_line --regexp " \./etc/modprobe\.d/offsample\.conf$"
	run bash -c "dpkg-deb --fsys-tarfile '$deb' | tar -xO ./usr/src/offsample-$VERSION/dkms.conf | grep '^PACKAGE_VERSION='"
	assert_output "PACKAGE_VERSION=\"$VERSION\""
	run bash -c "dpkg-deb --ctrl-tarfile '$deb' | tar -xO ./postinst"
	assert_output --partial "common.postinst"
	run dpkg-deb -c "$tools"
	assert_line --regexp " \./usr/sbin/offsample$"
	assert_line --regexp " \./usr/share/offsample/lib/offsample-lib\.pl$"
	# apt resolves them on this (bookworm) machine.
	run apt-get install -s "$deb" "$tools"
	assert_success
	assert_line --regexp '^Inst offsample-dkms '
}

@test "packaging: make lint (checkpatch --strict, sparse C=2) passes" {
	run make --no-print-directory lint BUILD="$PKG_TMP/b"
	assert_success
	assert_line --regexp '^checkpatch .*: 0 errors, 0 warnings'
	assert_line --regexp '^sparse .*\(0 new'
}
