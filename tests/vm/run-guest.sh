#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a Debian kernel under virtme-ng (QEMU, software emulation) with the
# host filesystem shared read-only and run one command inside as root.
#
#   tests/vm/run-guest.sh [options] KERNEL_RELEASE|KERNEL_TREE OUTDIR -- COMMAND...
#
# OUTDIR is shared read-write with the guest (its /tmp is not the host's):
# whatever the command writes there comes back.  The guest's console goes to
# OUTDIR/console.log.  Exit status: the command's, or 125 if the guest did
# not boot or timed out.
#
# Options: --cpus N (2)  --memory SIZE (2G)  --timeout SECONDS (1500)
#          --append "KERNEL ARGS" (extra kernel command line)
#          --qemu-opts "QEMU OPTIONS" (extra QEMU options: make bench's
#          BENCH_MODE=icount passes "-icount shift=0")
# A Debian kernel boots from its uncompressed vmlinux (tests/vm/vmlinux.sh,
# PVH entry) unless OFFS_PVH=0 or it cannot be extracted.
set -u

cpus=2
memory=2G
timeout=1500
append=()
qemu=()
while [ $# -gt 0 ]; do
	case "$1" in
	--append) append+=(--append "$2"); shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--qemu-opts) qemu=(--qemu-opts "$2"); shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "run-guest.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
	echo "usage: $0 [options] KERNEL_RELEASE OUTDIR -- COMMAND..." >&2
	exit 2
fi
kver=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 3

# KERNEL_RELEASE is an installed Debian kernel, or the directory of a
# kernel built from source (the debug kernel of tests/stress/debug-kernel.sh:
# booted with its own modules, /lib/modules/<release> in the guest links
# into the tree, so it must not be where the guest mounts tmpfs).
if [ -d "$kver" ]; then
	kernel=$(cd "$kver" && pwd)
	if [ ! -r "$kernel/arch/x86/boot/bzImage" ]; then
		echo "run-guest.sh: no $kernel/arch/x86/boot/bzImage" >&2
		exit 125
	fi
else
	kernel=/boot/vmlinuz-$kver
	if [ ! -r "$kernel" ]; then
		echo "run-guest.sh: no kernel image $kernel" >&2
		exit 125
	fi
	# The uncompressed kernel, booted through its PVH entry: no
	# decompressor under emulation (OFFS_PVH=0: the bzImage).
	if [ "${OFFS_PVH:-1}" != 0 ] && elf=$("$(dirname "$0")/vmlinux.sh" "$kver" 2>/dev/null); then
		kernel=$elf
	fi
fi
if ! command -v vng >/dev/null 2>&1; then
	echo "run-guest.sh: vng (virtme-ng) not found; run tests/lib/deps.sh vm" >&2
	exit 125
fi

# The command runs from a script in OUTDIR so quoting survives the trip.
{
	echo '#!/bin/bash'
	echo "cd $(printf '%q' "$PWD") || exit 125"
	printf '%q ' "$@"
	echo
	echo 'rc=$?'
	echo "echo \$rc > $(printf '%q' "$out")/guest.rc"
	echo 'exit $rc'
} > "$out/guest-cmd.sh"
chmod +x "$out/guest-cmd.sh"
rm -f "$out/guest.rc"

# The root and OUTDIR are shared with virtio-fs when tests/lib/deps.sh vm
# built virtiofsd (build/deps/virtiofsd), else with 9p (OFFS_9P=1 forces
# 9p): under TCG, 9p's round trips cost the guest about 15% of its time.
# OUTDIR/rootfs-asked says which (tests/run.sh compares it with the
# guest's own OUTDIR/rootfs: virtme-ng falls back to 9p silently).
fs=(--force-9p)
vfs=$(cd "$(dirname "$0")/../.." && pwd)/build/deps/virtiofsd/bin
if [ "${OFFS_9P:-0}" = 0 ] && [ -x "$vfs/virtiofsd" ]; then
	fs=()
	export PATH=$vfs:$PATH
fi
if [ ${#fs[@]} -eq 0 ]; then echo virtiofs; else echo 9p; fi > "$out/rootfs-asked"
# KVM does not work on these machines (nested virtualisation hangs): TCG.
timeout --kill-after=30 "$timeout" \
	vng --run "$kernel" --disable-kvm --cpus "$cpus" --memory "$memory" \
	${fs[@]+"${fs[@]}"} ${qemu[@]+"${qemu[@]}"} --rwdir "$out" ${append[@]+"${append[@]}"} --exec "$out/guest-cmd.sh" \
	</dev/null >"$out/console.log" 2>&1
vrc=$?
if [ ! -f "$out/guest.rc" ]; then
	echo "run-guest.sh: guest $kver did not finish (vng exit $vrc); see $out/console.log" >&2
	tail -n 20 "$out/console.log" >&2
	if [ -s "$out/dmesg-live.txt" ]; then
		echo "run-guest.sh: the last of its kernel log ($out/dmesg-live.txt):" >&2
		tail -n 20 "$out/dmesg-live.txt" >&2
	fi
	exit 125
fi
exit "$(cat "$out/guest.rc")"
