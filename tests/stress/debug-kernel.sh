#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) and cache a checking kernel, configured by virtme-ng's
# minimal defconfig plus tests/stress/debug-base.config (what the module
# and the suites need) and the variant's fragment.  Prints the tree's path.
#
#   tests/stress/debug-kernel.sh [--print]
#
# OFFS_DEBUG_VARIANT:
#   debug   (default, `make test-debug`) Debian's linux-source-6.12 with
#           tests/stress/debug.config: KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
#           DEBUG_OBJECTS, KMEMLEAK, UBSAN, fault injection, full preemption
#   atomic  (`make test-atomic`) Debian's linux-source-6.1 with
#           tests/stress/atomic.config: voluntary preemption as Debian's,
#           DEBUG_ATOMIC_SLEEP and nothing slower (a user access in IRQ
#           with page faults enabled warns on 6.1's x86, issue 53)
# --print: only print the tree if it is built (exit 1 otherwise).
# Environment: OFFS_DEBUG_CACHE (default /var/lib/offsample-debug-kernel;
# not under /var/cache, /var/log or /var/tmp: the guest mounts tmpfs
# there, so it would not see the tree's modules),
# OFFS_DEBUG_JOBS (default: number of CPUs).  The build runs under
# `nice -n 19`; its log is $OFFS_DEBUG_CACHE/build.log.  It is rebuilt only
# when the fragment or the source package changes.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${OFFS_DEBUG_CACHE:-/var/lib/offsample-debug-kernel}
# virtme-ng's guest init mounts tmpfs over these: the guest would boot the
# kernel but find neither its modules (/lib/modules/<release> links into
# the tree) nor the tree.
case "$(realpath -m "$CACHE")/" in
/var/cache/*|/var/log/*|/var/tmp/*)
	echo "debug-kernel: OFFS_DEBUG_CACHE=$CACHE is hidden from the guest (tmpfs there); use another directory, e.g. /var/lib/offsample-debug-kernel" >&2
	exit 2 ;;
esac
BASE=$TOP/tests/stress/debug-base.config
case "${OFFS_DEBUG_VARIANT:-debug}" in
debug)
	FRAG=$TOP/tests/stress/debug.config SERIES=6.12
	CHECK="KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS DEBUG_KMEMLEAK UBSAN MODULES FAILSLAB PREEMPT"
	;;
atomic)
	FRAG=$TOP/tests/stress/atomic.config SERIES=6.1
	CHECK="DEBUG_ATOMIC_SLEEP PREEMPT_VOLUNTARY HARDENED_USERCOPY MODULES"
	# A cache of its own beside the debug kernel's.
	CACHE=$CACHE/atomic
	;;
*)
	echo "debug-kernel: OFFS_DEBUG_VARIANT must be debug or atomic" >&2
	exit 2 ;;
esac
TARBALL=/usr/src/linux-source-$SERIES.tar.xz
TREE=$CACHE/linux-source-$SERIES
JOBS=${OFFS_DEBUG_JOBS:-$(nproc)}

srcstamp() {	# the source package the tree was extracted from
	dpkg-query -W -f='${Version}' "linux-source-$SERIES" 2>/dev/null
}
stamp() {	# what the cached build was made from
	echo "$(srcstamp) $(cat "$BASE" "$FRAG" | sha256sum | cut -d' ' -f1)"
}

built() {
	[ -f "$TREE/arch/x86/boot/bzImage" ] &&
	[ -f "$TREE/include/generated/utsrelease.h" ] &&
	[ -f "$TREE/Module.symvers" ] &&
	[ "$(cat "$CACHE/stamp" 2>/dev/null)" = "$(stamp)" ]
}

if [ "${1:-}" = --print ]; then
	built && echo "$TREE" && exit 0
	exit 1
fi
if built; then
	echo "$TREE"
	exit 0
fi

# Packages: the source, and what a kernel build needs beyond `make test`.
want=()
for p in "linux-source-$SERIES" flex bison bc libelf-dev libssl-dev gcc make xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
	echo "debug-kernel: installing ${want[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >&2
fi
command -v vng >/dev/null || "$TOP/tests/lib/deps.sh" vm >&2

mkdir -p "$CACHE"
log=$CACHE/build.log
start=$(date +%s)
{
	echo "== $(date -u +%FT%TZ) debug kernel build: $(stamp)"
	if [ ! -f "$TREE/Makefile" ] || [ "$(cat "$CACHE/stamp.src" 2>/dev/null)" != "$(srcstamp)" ]; then
		rm -rf "$TREE"
		echo "== extracting $TARBALL"
		tar -C "$CACHE" -xaf "$TARBALL"
		srcstamp > "$CACHE/stamp.src"
	fi
	cd "$TREE"
	# vng configures a tree only when it has no .config: make one now,
	# with its minimal defconfig plus our fragment, then drop the DWARF
	# debug info that vng's own defaults force on (it triples the build
	# time; KASAN and lockdep reports only need kallsyms).
	rm -f .config
	echo "== vng --kconfig --config $BASE --config $FRAG"
	vng --kconfig --verbose --config "$BASE" --config "$FRAG"
	scripts/config -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4 \
		-d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
	make olddefconfig
	echo "== vng --build -j $JOBS"
	nice -n 19 vng --build --verbose --jobs "$JOBS"
	# Check the fragment took: a silently dropped option is a useless kernel.
	for opt in $CHECK; do
		grep -q "^CONFIG_$opt=y" .config || { echo "CONFIG_$opt is not set in .config" >&2; exit 1; }
	done
} >> "$log" 2>&1 || { echo "debug-kernel: build failed, see $log" >&2; tail -n 30 "$log" >&2; exit 1; }
stamp > "$CACHE/stamp"
echo "== built in $(( $(date +%s) - start ))s" >> "$log"
echo "debug-kernel: built in $(( $(date +%s) - start ))s ($log)" >&2
echo "$TREE"
