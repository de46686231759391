#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The uncompressed kernel (an ELF vmlinux) of an installed Debian kernel,
# extracted once from /boot/vmlinuz-RELEASE and cached: QEMU boots it
# directly through its PVH entry point (Debian's x86 kernels have
# CONFIG_PVH), skipping the decompressor, which under TCG emulation is
# most of the kernel's boot (measured 4.2 s -> 1.8 s to a shell for 6.1).
# Prints the path; exit 1 (and nothing printed) when it cannot be made
# (no PVH note, no decompressor), so that callers boot the bzImage.
#
#   tests/vm/vmlinux.sh RELEASE|IMAGE
#
# IMAGE: a compressed kernel's path instead of /boot/vmlinuz-RELEASE (the
# test of this script, tests/host/vmlinux.bats).
# OFFS_VMLINUX_CACHE: the cache (default /var/lib/offsample-vmlinux; not
# under /var/cache or /var/tmp, which the guest mounts tmpfs over).
set -eu
rel=${1:?usage: vmlinux.sh RELEASE|IMAGE}
img=/boot/vmlinuz-$rel
case "$rel" in
*/*) img=$rel; rel=$(basename "$rel") ;;
esac
cache=${OFFS_VMLINUX_CACHE:-/var/lib/offsample-vmlinux}
out=$cache/vmlinux-$rel
[ -r "$img" ] || exit 1
# Cached, and made from this very image.
if [ -s "$out" ] && [ "$(cat "$out.src" 2>/dev/null)" = "$(stat -c '%s %Y' "$img")" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# try MAGIC CMD...: decompress the image from the first offset of MAGIC
# (hex) on with CMD (which must stop at the end of the first stream).
try() {
	local magic=$1 off
	shift
	command -v "$1" > /dev/null 2>&1 || return 1
	off=$(perl -e 'local $/; open my $f, "<", $ARGV[0] or exit 1; my $d = <$f>;
		my $i = index($d, pack("H*", $ARGV[1])); print $i if $i >= 0' "$img" "$magic") || return 1
	[ -n "$off" ] || return 1
	tail -c +$((off + 1)) "$img" | "$@" > "$tmp" 2> /dev/null || true
	[ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ]
}
try fd377a585a00 xz -dc --single-stream ||
	try 28b52ffd zstd -dcq ||
	try 1f8b08 gzip -dc ||
	exit 1
# QEMU boots an ELF kernel only through its PVH note (Xen type 18,
# XEN_ELFNOTE_PHYS32_ENTRY).
readelf -n "$tmp" 2> /dev/null | grep -q '(0x00000012)\|PHYS32_ENTRY' || exit 1
chmod 0644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
stat -c '%s %Y' "$img" > "$out.src"
echo "$out"
