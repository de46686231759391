#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mk-dbg.sh CC SRC OUT: offsample-dbg.c built as distributions ship
# programs, stripped, with its names in one place each (a build-id of its
# own per copy, so that no copy is named through another's route):
#   OUT/buildid/offs-dbg-bid    debug file in OUT/debugroot/.build-id/NN/REST.debug
#   OUT/link/offs-dbg-link      .gnu_debuglink to OUT/link/offs-dbg-link.debug
#   OUT/mini/offs-dbg-mini      MiniDebugInfo (.gnu_debugdata), Fedora's recipe
#   OUT/dfd/offs-dbg-dfd        debug file only in OUT/served/ (for debuginfod)
# Needs gcc, binutils (objcopy, strip, nm) and xz.
set -eu
cc=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out/buildid" "$out/link" "$out/mini" "$out/dfd" "$out/served" "$out/tmp"
t=$out/tmp
build() {	# build NAME BUILDID [CFLAGS...]: $t/NAME, with -g
	name=$1 id=$2
	shift 2
	"$cc" -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -Werror \
		-Wl,--build-id=0x"$id" "$@" -o "$t/$name" "$src"
}
# build-id directory
build offs-dbg-bid 0ff5a3d1b91d00000000000000000000000000b1
id=0ff5a3d1b91d00000000000000000000000000b1
mkdir -p "$out/debugroot/.build-id/0f"
objcopy --only-keep-debug "$t/offs-dbg-bid" "$out/debugroot/.build-id/0f/${id#0f}.debug"
strip -o "$out/buildid/offs-dbg-bid" "$t/offs-dbg-bid"
# .gnu_debuglink beside the file
build offs-dbg-link 0ff5a3d1b91d00000000000000000000000000b2
objcopy --only-keep-debug "$t/offs-dbg-link" "$out/link/offs-dbg-link.debug"
strip -o "$t/offs-dbg-link.stripped" "$t/offs-dbg-link"
(cd "$out/link" && objcopy --add-gnu-debuglink=offs-dbg-link.debug "../tmp/offs-dbg-link.stripped" offs-dbg-link)
# MiniDebugInfo: the functions .dynsym lacks, xz-compressed
build offs-dbg-mini 0ff5a3d1b91d00000000000000000000000000b3 -rdynamic
nm -D "$t/offs-dbg-mini" --format=posix --defined-only | awk '{ print $1 }' | sort > "$t/dynsyms"
nm "$t/offs-dbg-mini" --format=posix --defined-only | awk '$2 ~ /^[TtD]$/ { print $1 }' | sort > "$t/funcsyms"
comm -13 "$t/dynsyms" "$t/funcsyms" > "$t/keep_symbols"
objcopy --only-keep-debug "$t/offs-dbg-mini" "$t/mini.debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$t/keep_symbols" \
	"$t/mini.debug" "$t/mini_debuginfo"
xz -f "$t/mini_debuginfo"
strip --strip-all -R .comment -o "$t/mini.stripped" "$t/offs-dbg-mini"
objcopy --add-section .gnu_debugdata="$t/mini_debuginfo.xz" "$t/mini.stripped" "$out/mini/offs-dbg-mini"
# debuginfod: nothing local
build offs-dbg-dfd 0ff5a3d1b91d00000000000000000000000000b4
objcopy --only-keep-debug "$t/offs-dbg-dfd" "$out/served/offs-dbg-dfd.debug"
strip -o "$out/dfd/offs-dbg-dfd" "$t/offs-dbg-dfd"
rm -rf "$t"
