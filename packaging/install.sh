#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install and uninstall offsample (what `make install` / `make uninstall`
# run).  Idempotent both ways: re-running either is harmless.
#
#   packaging/install.sh install | uninstall | tools | dkms-src DIR | kernels
#
# install:   the module for every installed kernel that has headers, through
#            DKMS (rebuilt automatically for new kernels) or, without DKMS,
#            kbuild `modules_install` + depmod; the tools in $PREFIX/sbin,
#            their perl library in $PREFIX/share/offsample, man pages, an
#            example /etc/modprobe.d/offsample.conf and, with
#            LOAD_AT_BOOT=1, /etc/modules-load.d/offsample.conf.
# uninstall: all of the above, for every version of offsample DKMS knows.
# tools:     only the tools, their library and the man pages.
# dkms-src:  write the DKMS source tree (what /usr/src/offsample-VERSION
#            holds) into DIR.
# kernels:   the kernels `install` targets, one per line.
#
# Environment (mk/packaging.mk passes the make variables of the same name):
#   DESTDIR       staging root: no DKMS, no depmod, no apt (for packagers)
#   PREFIX        /usr/local
#   MODULE        auto (default): DKMS, installed with apt when missing, or
#                 the kbuild fallback when DKMS cannot be had or DESTDIR is
#                 set; dkms; kbuild; none (tools and configuration only)
#   KERNELS       kernel releases to install for (default: `kernels`)
#   LOAD_AT_BOOT  1: also load the module at boot (modules-load.d)
#   PURGE         1: uninstall also removes an edited modprobe.d file
#   NO_APT        1: never install missing Debian packages
#   BUILD         build folder of the checkout (kbuild fallback)
set -u -o pipefail
# Called from make: do not pass its command-line variables (KVER, BUILD,
# DESTDIR, ...) on to the makes we run (DKMS, kbuild, debhelper).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=$(cat "$TOP/VERSION")
NAME=offsample
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
BUILD=${BUILD:-$TOP/build}
LOAD_AT_BOOT=${LOAD_AT_BOOT:-}
PURGE=${PURGE:-}
NO_APT=${NO_APT:-}
MODULE=${MODULE:-auto}
DKMS=$(command -v dkms 2>/dev/null || true)

SBINDIR=$PREFIX/sbin
SHAREDIR=$PREFIX/share/$NAME
MANDIR=$PREFIX/share/man
MODPROBE_CONF=/etc/modprobe.d/$NAME.conf
LOAD_CONF=/etc/modules-load.d/$NAME.conf
MANIFEST=$SHAREDIR/installed-files
MODPROBE_TEMPLATE=$TOP/packaging/offsample.modprobe.conf
LOAD_CONTENT="# Load offsample at boot (installed by offsample's make install LOAD_AT_BOOT=1).
$NAME"

say() { printf '%s\n' "$*"; }
warn() { printf 'offsample install: warning: %s\n' "$*" >&2; }
die() { printf 'offsample install: %s\n' "$*" >&2; exit 1; }

need_root() {
	[ -n "$DESTDIR" ] || [ "$(id -u)" -eq 0 ] ||
		die "$1 writes to /usr, /lib/modules and /etc: run it as root (sudo make $1), or set DESTDIR"
}

# ------------------------------------------------------------------ kernels
# A kernel is a target when it is installed (modules directory with the
# kernel's own modules, or an image in /boot) and its headers are there.
kernels() {
	local d k
	for d in /lib/modules/*/; do
		k=$(basename "$d")
		[ -d "$d/kernel" ] || [ -e "/boot/vmlinuz-$k" ] || continue
		[ -e "$d/build/include" ] && [ -e "$d/build/Makefile" ] || continue
		printf '%s\n' "$k"
	done | sort -V
}

# Kernels installed but without headers, to say what is missing.
kernels_without_headers() {
	local d k
	for d in /lib/modules/*/; do
		k=$(basename "$d")
		[ -d "$d/kernel" ] || [ -e "/boot/vmlinuz-$k" ] || continue
		[ -e "$d/build/include" ] || printf '%s\n' "$k"
	done
}

# Install Debian packages we need when they are missing (root, apt, not
# staging).  dkms brings the compiler and make; headers for the running
# kernel if the archive has them.
apt_need() {
	local missing=() p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		case "$st" in *" installed") ;; *) missing+=("$p") ;; esac
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	say "installing Debian packages: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" </dev/null
}
ensure_deps() {
	[ -z "$DESTDIR" ] && [ -z "$NO_APT" ] && [ "$(id -u)" -eq 0 ] || return 0
	command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1 || return 0
	local want=() k
	case "$MODULE" in auto|dkms) [ -n "$DKMS" ] || want+=(dkms) ;; esac
	case "$MODULE" in kbuild) want+=(make gcc kmod) ;; esac
	k=$(uname -r)
	if [ "$MODULE" != none ] && [ -d "/lib/modules/$k" ] &&
	   [ ! -e "/lib/modules/$k/build/include" ] &&
	   apt-cache show "linux-headers-$k" >/dev/null 2>&1; then
		want+=("linux-headers-$k")
	fi
	[ ${#want[@]} -gt 0 ] || return 0
	if ! apt_need "${want[@]}"; then
		{ apt-get update -qq </dev/null && apt_need "${want[@]}"; } ||
			warn "could not install ${want[*]}"
	fi
	hash -r
	DKMS=$(command -v dkms 2>/dev/null || true)
}

# ---------------------------------------------------------- DKMS source tree
# The minimal tree DKMS needs: dkms.conf (version written out), VERSION,
# the module sources and Kbuild, and packaging/dkms.mk.
dkms_src() {
	local dir=$1 f
	mkdir -p "$dir/module" "$dir/packaging" || return 1
	sed "s|^PACKAGE_VERSION=.*|PACKAGE_VERSION=\"$VERSION\"|" "$TOP/dkms.conf" > "$dir/dkms.conf" &&
	install -m 644 "$TOP/VERSION" "$dir/VERSION" &&
	install -m 644 "$TOP/packaging/dkms.mk" "$dir/packaging/dkms.mk" || return 1
	for f in "$TOP"/module/*.c "$TOP"/module/*.h "$TOP/module/Kbuild"; do
		# Only sources: never a generated header left by an in-place build.
		case "${f##*/}" in syscalls.h|features.h|*.mod.c) continue ;; esac
		install -m 644 "$f" "$dir/module/" || return 1
	done
	# The feature probes (module/probe.sh runs them before the build).
	mkdir -p "$dir/module/probes" &&
	install -m 755 "$TOP/module/probe.sh" "$dir/module/probe.sh" &&
	install -m 644 "$TOP"/module/probes/*.c "$dir/module/probes/" || return 1
	chmod 755 "$dir" "$dir/module" "$dir/module/probes" "$dir/packaging"
}

# Is PATH (a file) owned by a Debian package?  Prints the package.
dpkg_owner() {
	command -v dpkg-query >/dev/null 2>&1 || return 1
	dpkg-query -S "$1" 2>/dev/null | head -n1 | cut -d: -f1
}

# A /usr/src/offsample-* folder we may remove: offsample's dkms.conf inside,
# not owned by a package.
ours_src() {
	[ -f "$1/dkms.conf" ] && grep -q '^PACKAGE_NAME="offsample"' "$1/dkms.conf" &&
		[ -z "$(dpkg_owner "$1/dkms.conf")" ]
}

# Versions of offsample DKMS knows about.
dkms_versions() {
	"$DKMS" status -m "$NAME" 2>/dev/null |
		sed -n 's|^'"$NAME"'[/,] *\([^,: ]*\).*|\1|p' | sort -u
}

# "installed" when DKMS has VERSION installed for kernel $1.
dkms_state() {
	"$DKMS" status -m "$NAME" -v "$VERSION" -k "$1" 2>/dev/null |
		sed -n 's/.*: *\([a-z]*\).*/\1/p' | head -n1
}

# dkms_q ARGS...: dkms with its chatter (and readelf's) kept out of sight
# unless it fails.
dkms_q() {
	local log rc
	log=$(mktemp)
	"$DKMS" "$@" > "$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || sed 's/^/        /' "$log" | tail -n 15 >&2
	rm -f "$log"
	return $rc
}

# ------------------------------------------------------------------ install
install_module_dkms() {
	local src=/usr/src/$NAME-$VERSION owner v k st rc failed=() skipped=() stage
	owner=$(dpkg_owner "$src/dkms.conf" || true)
	if [ -n "$owner" ]; then
		say "module: $src belongs to the Debian package $owner; DKMS already rebuilds it"
		say "        for new kernels (apt remove $owner to switch to make install)"
		return 0
	fi

	stage=$(mktemp -d) || return 1
	dkms_src "$stage/$NAME-$VERSION" || { rm -rf "$stage"; die "cannot stage the DKMS source tree"; }

	# Up to date when the same sources are registered and installed for
	# every target kernel: nothing to rebuild.
	local fresh=1
	if [ -d "$src" ] && diff -r -q "$stage/$NAME-$VERSION" "$src" >/dev/null 2>&1 &&
	   [ "$(dkms_versions)" = "$VERSION" ]; then
		for k in $KERNELS; do
			[ "$(dkms_state "$k")" = installed ] || fresh=
		done
	else
		fresh=
	fi
	if [ -n "$fresh" ]; then
		rm -rf "$stage"
		say "module: offsample/$VERSION is already built and installed by DKMS for: $(echo $KERNELS)"
		return 0
	fi

	# Replace whatever offsample DKMS has (this or an older version), and
	# keep it on the kernels that had it (KVER=... installs for one more).
	local prev
	prev=$("$DKMS" status -m "$NAME" 2>/dev/null |
		sed -n 's|^[^,]*, *\([^,]*\),.*: *installed.*|\1|p')
	for k in $prev; do
		[ -e "/lib/modules/$k/build/include" ] || continue
		case " $KERNELS " in *" $k "*) ;; *) KERNELS="$KERNELS $k" ;; esac
	done
	for v in $(dkms_versions); do
		say "module: dkms remove $NAME/$v --all"
		dkms_q remove -m "$NAME" -v "$v" --all || warn "dkms remove $NAME/$v failed"
		[ "$v" = "$VERSION" ] || ! ours_src "/usr/src/$NAME-$v" || rm -rf "/usr/src/$NAME-$v"
	done
	rm -rf "$src"
	mkdir -p /usr/src
	cp -a "$stage/$NAME-$VERSION" "$src" && rm -rf "$stage" || die "cannot write $src"

	say "module: dkms add $src"
	dkms_q add -m "$NAME" -v "$VERSION" || die "dkms add failed"
	for k in $KERNELS; do
		say "module: dkms install $NAME/$VERSION -k $k"
		"$DKMS" install -m "$NAME" -v "$VERSION" -k "$k" > "$BUILD_LOG_DIR/dkms-$k.log" 2>&1
		rc=$?
		case $rc in
		0) ;;
		77) skipped+=("$k"); say "        skipped: $k is outside BUILD_EXCLUSIVE in dkms.conf" ;;
		*) failed+=("$k")
		   sed 's/^/        /' "$BUILD_LOG_DIR/dkms-$k.log" | tail -n 15 >&2
		   [ -f "/var/lib/dkms/$NAME/$VERSION/build/make.log" ] &&
			say "        see /var/lib/dkms/$NAME/$VERSION/build/make.log" >&2 ;;
		esac
	done
	if [ ${#failed[@]} -gt 0 ]; then
		die "DKMS could not build/install offsample for: ${failed[*]}"
	fi
	say "module: installed by DKMS; it is rebuilt automatically for new kernels"
}

install_module_kbuild() {
	local k kdir failed=() root=${DESTDIR:-/}
	say "module: DKMS not used; kbuild modules_install into ${DESTDIR}/lib/modules/<release>/updates"
	for k in $KERNELS; do
		kdir=/lib/modules/$k/build
		say "module: build for $k"
		if ! make --no-print-directory -C "$TOP" BUILD="$BUILD" KVER="$k" module \
			> "$BUILD_LOG_DIR/kbuild-$k.log" 2>&1; then
			tail -n 20 "$BUILD_LOG_DIR/kbuild-$k.log" >&2
			failed+=("$k"); continue
		fi
		# depmod is ours to run (not for a staging root); signing is skipped
		# by kbuild for external modules when the kernel's key is absent.
		if ! make --no-print-directory -C "$kdir" M="$BUILD/$k" \
			INSTALL_MOD_PATH="${DESTDIR}" INSTALL_MOD_DIR=updates DEPMOD=/bin/true \
			modules_install >> "$BUILD_LOG_DIR/kbuild-$k.log" 2>&1; then
			tail -n 20 "$BUILD_LOG_DIR/kbuild-$k.log" >&2
			failed+=("$k"); continue
		fi
		if [ -z "$DESTDIR" ]; then
			depmod -a "$k" || failed+=("$k")
		fi
		say "module: installed $(ls "$root/lib/modules/$k/updates/$NAME".ko* 2>/dev/null | head -n1)"
	done
	[ ${#failed[@]} -eq 0 ] || die "could not build/install offsample for: ${failed[*]}"
}

# Executables of tools/ (not tests) and the renderer.
tool_files() {
	local f
	for f in "$TOP"/tools/* "$TOP/flamegraph/$NAME-flamegraph"; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		case "${f##*/}" in *test*|*.bats|*.md) continue ;; esac
		printf '%s\n' "$f"
	done
}
lib_files() {
	local f
	for f in "$TOP"/tools/lib/*; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done
}
man_files() {
	local f
	for f in "$TOP"/docs/man/*.[1-9]; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done
}

# inst MODE SRC DEST: install one file; remember it and the folders made
# for it (for uninstall).
inst() {
	local d=${3%/*}
	while [ -n "$d" ] && [ ! -d "$DESTDIR$d" ]; do
		CREATED+=("$d/")
		d=${d%/*}
	done
	install -D -m "$1" "$2" "$DESTDIR$3" || die "cannot install $3"
	INSTALLED+=("$3")
}

install_tools() {
	local f sec one
	# A stand-alone tool (a "# BEGIN reader" block) gets the stacks
	# reader put inline: one file that works alone, copied anywhere.
	one=$(mktemp) || die "cannot make a temporary file"
	while read -r f; do
		if grep -q '^# BEGIN reader' "$f"; then
			perl "$TOP/packaging/inline-reader.pl" "$f" "$TOP/tools/lib/OffsampleStacks.pm" "$VERSION" > "$one" ||
				{ rm -f "$one"; die "cannot put the reader inline in ${f##*/}"; }
			inst 755 "$one" "$SBINDIR/${f##*/}"
		else
			inst 755 "$f" "$SBINDIR/${f##*/}"
		fi
	done < <(tool_files)
	rm -f "$one"
	while read -r f; do inst 644 "$f" "$SHAREDIR/lib/${f##*/}"; done < <(lib_files)
	# What --version of every tool prints.
	inst 644 "$TOP/VERSION" "$SHAREDIR/VERSION"
	while read -r f; do
		sec=${f##*.}
		inst 644 "$f" "$MANDIR/man$sec/${f##*/}"
	done < <(man_files)
	say "tools: ${#INSTALLED[@]} files in $DESTDIR$PREFIX (sbin, share/$NAME, share/man)"
}

install_config() {
	# Example module options: never overwrite a file the admin edited.
	if [ ! -e "$DESTDIR$MODPROBE_CONF" ]; then
		install -D -m 644 "$MODPROBE_TEMPLATE" "$DESTDIR$MODPROBE_CONF" ||
			die "cannot install $MODPROBE_CONF"
		say "config: $DESTDIR$MODPROBE_CONF (example module options, all commented out)"
	elif ! cmp -s "$MODPROBE_TEMPLATE" "$DESTDIR$MODPROBE_CONF"; then
		say "config: kept your edited $DESTDIR$MODPROBE_CONF (the example is $MODPROBE_TEMPLATE)"
	fi
	if [ "$LOAD_AT_BOOT" = 1 ]; then
		mkdir -p "$DESTDIR${LOAD_CONF%/*}"
		printf '%s\n' "$LOAD_CONTENT" > "$DESTDIR$LOAD_CONF" || die "cannot write $LOAD_CONF"
		say "config: $DESTDIR$LOAD_CONF (offsample is loaded at boot)"
	fi
}

write_manifest() {
	[ -z "$DESTDIR" ] || return 0
	mkdir -p "$SHAREDIR"
	{
		printf '%s\n' "${INSTALLED[@]}" "${CREATED[@]}"
		[ -e "$MANIFEST" ] && cat "$MANIFEST"
	} | sed '/^$/d' | sort -u | grep -vxF "$MANIFEST" > "$MANIFEST.new"
	mv -f "$MANIFEST.new" "$MANIFEST"
}

do_install() {
	need_root install
	case "$MODULE" in
	auto|dkms|kbuild|none) ;;
	*) die "MODULE must be auto, dkms, kbuild or none, not '$MODULE'" ;;
	esac
	ensure_deps
	if [ "$MODULE" = auto ]; then
		if [ -n "$DKMS" ] && [ -z "$DESTDIR" ]; then MODULE=dkms; else MODULE=kbuild; fi
	fi
	[ "$MODULE" != dkms ] || [ -n "$DKMS" ] || die "dkms not found (apt install dkms, or MODULE=kbuild)"
	[ "$MODULE" != dkms ] || [ -z "$DESTDIR" ] || die "DKMS cannot install into DESTDIR (MODULE=kbuild or none)"
	BUILD_LOG_DIR=$(mktemp -d)
	trap 'rm -rf "$BUILD_LOG_DIR"' EXIT
	if [ "$MODULE" = none ]; then
		say "module: not installed (MODULE=none)"
	else
		local nohdr
		KERNELS=${KERNELS:-$(kernels)}
		nohdr=$(kernels_without_headers | tr '\n' ' ')
		[ -z "$nohdr" ] || say "module: no headers for $nohdr(install linux-headers-<release>; DKMS builds then)"
		if [ -z "$KERNELS" ]; then
			warn "no installed kernel has its headers: the module is not built now"
		fi
		if [ "$MODULE" = dkms ]; then
			# Registered even without a kernel to build for: DKMS builds it
			# when headers or a new kernel arrive.
			install_module_dkms
		else
			install_module_kbuild
		fi
	fi
	INSTALLED=() CREATED=()
	install_tools
	install_config
	write_manifest
	if [ -z "$DESTDIR" ] && [ "$MODULE" != none ]; then
		say "done: modprobe $NAME && cat /proc/$NAME/stacks"
	fi
}

# ---------------------------------------------------------------- uninstall
# rm_file FILE [STOP]: remove a file and, with STOP, the folders it leaves
# empty up to STOP (a staging root).
rm_file() {
	local f=$1 stop=${2:-} d
	[ -e "$f" ] || [ -L "$f" ] || return 0
	rm -f "$f"
	[ -n "$stop" ] || return 0
	d=${f%/*}
	while [ "$d" != "$stop" ] && [ "${d#"$stop"/}" != "$d" ]; do
		rmdir "$d" 2>/dev/null || break
		d=${d%/*}
	done
}

do_uninstall() {
	need_root uninstall
	local v k f owner depmod_k=()
	[ -d /sys/module/$NAME ] && [ -z "$DESTDIR" ] &&
		warn "offsample is loaded; unload it with: modprobe -r $NAME"

	# DKMS: every version it knows, unless a Debian package owns it.
	if [ -z "$DESTDIR" ] && [ -n "$DKMS" ]; then
		for v in $(dkms_versions); do
			owner=$(dpkg_owner "/usr/src/$NAME-$v/dkms.conf" || true)
			if [ -n "$owner" ]; then
				say "module: $NAME/$v belongs to the Debian package $owner: apt remove $owner"
				continue
			fi
			say "module: dkms remove $NAME/$v --all"
			dkms_q remove -m "$NAME" -v "$v" --all || warn "dkms remove $NAME/$v failed"
		done
	fi
	for f in "$DESTDIR"/usr/src/$NAME-*; do
		[ -d "$f" ] && ours_src "$f" || continue
		rm -rf "$f" && say "module: removed $f"
	done
	[ -n "$DESTDIR" ] || rmdir /var/lib/dkms/$NAME 2>/dev/null || true

	# Modules installed by the kbuild fallback, and DKMS's when DKMS no
	# longer knows offsample (its tree was lost) but the files stayed.
	local left=(updates)
	if [ -n "$DESTDIR" ] || [ -z "$DKMS" ] || [ -z "$(dkms_versions)" ]; then
		left+=(updates/dkms)
	fi
	local pat
	for pat in "${left[@]}"; do
		for f in "$DESTDIR"/lib/modules/*/"$pat"/$NAME.ko*; do
			[ -e "$f" ] || continue
			k=${f#"$DESTDIR"/lib/modules/}
			k=${k%%/*}
			rm_file "$f" "${DESTDIR:-/lib/modules/$k}"
			say "module: removed $f"
			depmod_k+=("$k")
		done
	done
	if [ -z "$DESTDIR" ]; then
		for k in "${depmod_k[@]}"; do
			[ -f "/lib/modules/$k/modules.dep" ] && depmod -a "$k"
		done
	fi

	# Tools, library, man pages: the manifest of the last install (files,
	# and folders it created, ending in /) plus what this checkout installs.
	local stop=
	[ -z "$DESTDIR" ] || stop=$DESTDIR
	{
		[ -f "$DESTDIR$MANIFEST" ] && grep -v '/$' "$DESTDIR$MANIFEST"
		tool_files | sed "s|.*/|$SBINDIR/|"
		lib_files | sed "s|.*/|$SHAREDIR/lib/|"
		echo "$SHAREDIR/VERSION"
		man_files | while read -r f; do echo "$MANDIR/man${f##*.}/${f##*/}"; done
	} | sort -u | while read -r f; do
		case "$f" in "$PREFIX"/*) ;; *) continue ;; esac
		rm_file "$DESTDIR$f" "$stop"
	done
	if [ -f "$DESTDIR$MANIFEST" ]; then
		grep '/$' "$DESTDIR$MANIFEST" | sort -r | while read -r f; do
			rmdir "$DESTDIR$f" 2>/dev/null || true
		done
	fi
	rm -f "$DESTDIR$MANIFEST"
	rmdir "$DESTDIR$SHAREDIR/lib" "$DESTDIR$SHAREDIR" 2>/dev/null || true

	# Configuration: ours unless edited (PURGE=1 removes it anyway).
	if [ -f "$DESTDIR$MODPROBE_CONF" ]; then
		if [ "$PURGE" = 1 ] || cmp -s "$MODPROBE_TEMPLATE" "$DESTDIR$MODPROBE_CONF"; then
			rm_file "$DESTDIR$MODPROBE_CONF" "$stop"
		else
			say "config: kept your edited $DESTDIR$MODPROBE_CONF (PURGE=1 removes it)"
		fi
	fi
	if [ -f "$DESTDIR$LOAD_CONF" ] &&
	   { [ "$PURGE" = 1 ] || [ "$(cat "$DESTDIR$LOAD_CONF")" = "$LOAD_CONTENT" ]; }; then
		rm_file "$DESTDIR$LOAD_CONF" "$stop"
	fi
	say "uninstalled offsample"
}

# One install or uninstall at a time on a machine.
lock() {
	[ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ] && command -v flock >/dev/null 2>&1 || return 0
	mkdir -p /run/lock 2>/dev/null
	exec 9>/run/lock/offsample-install.lock && flock 9
}

case "${1:-}" in
install) lock; do_install ;;
uninstall) lock; do_uninstall ;;
tools) need_root install; INSTALLED=() CREATED=(); install_tools; write_manifest ;;
dkms-src) [ -n "${2:-}" ] || die "usage: $0 dkms-src DIR"; dkms_src "$2" ;;
kernels) kernels ;;
*) echo "usage: $0 install | uninstall | tools | dkms-src DIR | kernels" >&2; exit 2 ;;
esac
