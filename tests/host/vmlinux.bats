#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# tests/vm/vmlinux.sh: the uncompressed kernel that the guests boot through
# QEMU's PVH entry (tests/vm/run-guest.sh), taken out of a compressed
# image as Debian ships them (xz for 6.1, zstd for 6.12), checked for the
# PVH note, cached per image.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	VM=$ROOT/tests/vm/vmlinux.sh
	T=$BATS_TEST_TMPDIR
	export OFFS_VMLINUX_CACHE=$T/cache
}

# elf OUT [PVH]: a small ELF file, with the PVH note (Xen, type 18) if asked.
elf() {
	local note=
	[ -z "${2:-}" ] || note='__attribute__((section(".note.Xen"), used, aligned(4)))
		static const struct { unsigned int nsz, dsz, type; char name[4]; unsigned int entry; }
		pvh = { 4, 4, 18, "Xen", 0x1000000 };'
	printf '%s\nint main(void) { return 0; }\n' "$note" > "$T/k.c"
	gcc -O1 -o "$1" "$T/k.c"
}

# image OUT ELF COMPRESSOR: a "bzImage": a setup stub, then the payload.
image() {
	{ head -c 20000 /dev/urandom | tr -d '\375\050\037'; "$3" -c < "$2"; head -c 700 /dev/zero; } > "$1"
}

@test "vmlinux: the ELF inside an xz, zstd or gzip image, with its PVH note, cached" {
	local c
	elf "$T/vmlinux" pvh
	for c in xz zstd gzip; do
		image "$T/vmlinuz-$c" "$T/vmlinux" "$c"
		run -0 "$VM" "$T/vmlinuz-$c"
		assert_output "$T/cache/vmlinux-vmlinuz-$c"
		cmp "$T/vmlinux" "$output"
	done
	# The same image again: the cache, not a second extraction.
	touch -d 2001-01-01 "$T/cache/vmlinux-vmlinuz-xz"
	run -0 "$VM" "$T/vmlinuz-xz"
	assert_equal "$(stat -c %Y "$T/cache/vmlinux-vmlinuz-xz")" "$(date -d 2001-01-01 +%s)"
	# A new image of that name: extracted again.
	touch -d 2002-02-02 "$T/vmlinuz-xz"
	run -0 "$VM" "$T/vmlinuz-xz"
	[ "$(stat -c %Y "$T/cache/vmlinux-vmlinuz-xz")" -gt "$(date -d 2002-02-02 +%s)" ]
}

@test "vmlinux: no PVH note, no payload or no image: exit 1, nothing printed, the bzImage is booted" {
	elf "$T/nopvh"
	image "$T/vmlinuz-nopvh" "$T/nopvh" xz
	run -1 "$VM" "$T/vmlinuz-nopvh"
	assert_output ""
	head -c 30000 /dev/urandom | tr -d '\375\050\037' > "$T/vmlinuz-junk"
	run -1 "$VM" "$T/vmlinuz-junk"
	assert_output ""
	run -1 "$VM" no-such-release-0.0
	assert_output ""
	[ ! -e "$T/cache/vmlinux-vmlinuz-nopvh" ]
}
