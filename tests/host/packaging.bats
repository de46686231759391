#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Packaging, on the host (root): dkms.conf, DKMS builds for the test
# kernels (6.1, 6.12) in a temporary DKMS tree, make install / uninstall
# with DESTDIR and for real (DKMS, then a kernel upgrade through the headers
# postinst, then nothing left behind), make deb, make lint.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

# A string as an extended regular expression that matches only itself
# (kernel releases contain "+" and ".").
rq() { printf '%s' "$1" | sed 's/[][\.^$*+?(){}|]/\\&/g'; }

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export TOP
	[ "$(id -u)" -eq 0 ] || skip "packaging tests need root"
	"$TOP/tests/lib/deps.sh" dkms deb check >&2
	PKG_TMP=$(mktemp -d /tmp/offsample-pkgtest.XXXXXX)
	TEST_KERNELS=$("$TOP/tests/vm/kernels.sh" | tr '\n' ' ')
	VERSION=$(cat "$TOP/VERSION")
	export PKG_TMP TEST_KERNELS VERSION
	# A private DKMS (tree, sources, module tree, signing key): nothing of
	# the machine's DKMS state is touched by the dkms add/build tests.
	mkdir -p "$PKG_TMP"/dkms/{tree,src,inst,key}
	export mok_signing_key=$PKG_TMP/dkms/key/mok.key mok_certificate=$PKG_TMP/dkms/key/mok.pub
}

teardown_file() {
	# The real install of the round-trip test, if it failed half-way.
	if [ -f "$PKG_TMP/installed" ]; then
		(cd "$TOP" && make --no-print-directory uninstall >&2)
		[ -f "$PKG_TMP/mok-before" ] || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	fi
	rm -rf "${PKG_TMP:?}"
}

setup() {
	cd "$TOP" || return 1
	DKMS_OPTS=(--dkmstree "$PKG_TMP/dkms/tree" --sourcetree "$PKG_TMP/dkms/src"
		--installtree "$PKG_TMP/dkms/inst")
}

# What an install may touch, for before/after comparisons: file names under
# the install locations, and the depmod indexes' checksums.  DKMS's own
# signing key (created by the first DKMS build on a machine, shared by all
# DKMS modules) is not ours.
snapshot() {
	find /usr/src /var/lib/dkms /lib/modules /usr/local/sbin /usr/local/bin \
		/usr/local/share/man /usr/local/share/offsample /etc/modprobe.d \
		/etc/modules-load.d /etc/dkms -xdev 2>/dev/null |
		grep -vE '^/var/lib/dkms/mok\.(key|pub)$' | sort
	md5sum /lib/modules/*/modules.dep /lib/modules/*/modules.alias 2>/dev/null
}

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
