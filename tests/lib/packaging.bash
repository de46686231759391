# SPDX-License-Identifier: GPL-2.0
# What the packaging suites share (tests/host/packaging.bats,
# tests/host/packaging-machine.bats): a private DKMS for builds, the
# clean-up of a real install a failed test left, and snapshots of what an
# install may touch.

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
