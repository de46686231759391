#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# module/probe.sh: the kernel features are decided by compiling
# module/probes/*.c against each test kernel's headers; the results per
# kernel, the cache, and the build errors when a probe can neither pass
# nor fail cleanly.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	PROBE=$ROOT/module/probe.sh
	T=$BATS_TEST_TMPDIR
}

# kdir SERIES: the kernel build directory of the newest installed release
# of a test kernel series, 6.1 or 6.12 (tests/lib/deps.sh build installs
# the headers of both; which build of the series is whatever the archive
# serves today, so the expectations below are per series).
kdir() {
	local r d
	r=$("$ROOT/tests/vm/kernels.sh" series "$1" --headers) ||
		fail "no headers of the $1 series: run tests/lib/deps.sh build"
	d=/lib/modules/$r/build
	[ -d "$d" ] || d=/usr/src/linux-headers-$r
	echo "$d"
}

# have FEATURES_H: the OFFS_HAVE_* names defined, one per line.
have() {
	sed -n 's/^#define \(OFFS_HAVE_[A-Z0-9_]*\) 1$/\1/p' "$1" | sort
}

@test "probes: each test kernel gets exactly its features" {
	local k61 k612
	k61=$(kdir 6.1)
	k612=$(kdir 6.12)
	run -0 sh "$PROBE" "$k61" "$T/61"
	run -0 have "$T/61/features.h"
	# Debian's 6.1 has the 6.6 ctime accessor (a backport), not mtime.
	assert_output "$(printf '%s\n' OFFS_HAVE_CGROUP_GET_FROM_ID OFFS_HAVE_INODE_GET_CTIME \
		OFFS_HAVE_KMALLOC_SIZE_ROUNDUP OFFS_HAVE_MUTEX_RAW_WAIT_LOCK OFFS_HAVE_PDE_DATA_LOWER \
		OFFS_HAVE_RT_MUTEX_BASE OFFS_HAVE_SOCK_FROM_FILE_1 OFFS_HAVE_TASK___STATE \
		OFFS_HAVE_VMA_ITER_INIT)"
	run -0 grep -c 'not in this kernel' "$T/61/features.h"
	assert_output 6
	run -0 sh "$PROBE" "$k612" "$T/612"
	run -0 have "$T/612/features.h"
	assert_output "$(printf '%s\n' OFFS_HAVE_CGROUP_GET_FROM_ID OFFS_HAVE_FILE_LOCK_CORE \
		OFFS_HAVE_FILE_USER_PATH OFFS_HAVE_INODE_GET_CTIME OFFS_HAVE_INODE_GET_MTIME \
		OFFS_HAVE_KMALLOC_SIZE_ROUNDUP OFFS_HAVE_MM_LOCK_SEQCOUNT \
		OFFS_HAVE_MUTEX_RAW_WAIT_LOCK OFFS_HAVE_PDE_DATA_LOWER \
		OFFS_HAVE_RT_MUTEX_BASE OFFS_HAVE_SCHED_DELAYED OFFS_HAVE_SOCK_FROM_FILE_1 \
		OFFS_HAVE_TASK___STATE OFFS_HAVE_VMA_ITER_INIT)"
	# One line per probe (the control excepted), every one decided.
	assert_equal "$(grep -c 'OFFS_HAVE_' "$T/612/features.h")" "$(( $(ls "$ROOT"/module/probes/*.c | wc -l) - 1 ))"
}

@test "probes: cached per kernel and probe set; a changed probe runs them again" {
	local k
	k=$(kdir 6.1)
	run -0 sh "$PROBE" "$k" "$T/c"
	touch -d '2001-01-01' "$T/c/features.h"
	run -0 sh "$PROBE" "$k" "$T/c"
	assert_equal "$(stat -c %Y "$T/c/features.h")" "$(date -d '2001-01-01' +%s)"
	# Another probe set (a copy with one more probe): probed again.
	cp -r "$ROOT/module/probes" "$T/p"
	sed 's/kmalloc_size_roundup - what/kmalloc_size_roundup - copy: what/' \
		"$T/p/kmalloc_size_roundup.c" > "$T/p/kmalloc_size_roundup_again.c"
	OFFS_PROBES=$T/p run -0 sh "$PROBE" "$k" "$T/c"
	assert_equal "$(grep -c '^#define OFFS_HAVE_KMALLOC_SIZE_ROUNDUP_AGAIN 1$' "$T/c/features.h")" 1
}

@test "probes: a probe that fails for another reason than its feature is a build error naming it" {
	local k
	k=$(kdir 6.12)
	cp -r "$ROOT/module/probes" "$T/p"
	# A typo: the error names the misspelt function, not the feature's
	# (the compiler's "did you mean 'pde_data'" does not count).
	sed 's/return pde_data(inode);/return pde_dta(inode);/' "$ROOT/module/probes/pde_data_lower.c" > "$T/p/pde_data_lower.c"
	OFFS_PROBES=$T/p run --separate-stderr sh "$PROBE" "$k" "$T/o"
	assert_failure 1
	[[ $stderr == *"offsample: feature probe OFFS_HAVE_PDE_DATA_LOWER neither passed nor failed cleanly: its errors do not name pde_data"* ]]
	[[ $stderr == *pde_dta* ]]
	[ ! -e "$T/o/features.h" ]
	# A probe without its identifier line cannot fail cleanly either.
	cp "$ROOT/module/probes/pde_data_lower.c" "$T/p/pde_data_lower.c"
	printf '// SPDX-License-Identifier: GPL-2.0\nint offs_probe(void);\nint offs_probe(void) { return no_such_function(); }\n' > "$T/p/unnamed.c"
	OFFS_PROBES=$T/p run --separate-stderr sh "$PROBE" "$k" "$T/o"
	assert_failure 1
	[[ $stderr == *"feature probe OFFS_HAVE_UNNAMED neither passed nor failed cleanly"* ]]
	# Headers that cannot compile anything: the control probe says so.
	rm "$T/p/unnamed.c"
	printf '// SPDX-License-Identifier: GPL-2.0\n#include <linux/no_such_header.h>\n' > "$T/p/control.c"
	OFFS_PROBES=$T/p run --separate-stderr sh "$PROBE" "$k" "$T/o"
	assert_failure 1
	[[ $stderr == "offsample: the feature probes cannot compile against $k at all"* ]]
}

@test "probes: warnings never decide, even where every warning is an error (CONFIG_WERROR)" {
	local k
	k=$(kdir 6.12)
	run -0 sh "$PROBE" "$k" "$T/ref"
	# Probes that warn (as the control probe once did: -Waddress), with
	# every warning an error as on a CONFIG_WERROR kernel.
	cp -r "$ROOT/module/probes" "$T/p"
	for f in "$T"/p/*.c; do
		printf 'int offs_warn(void);\nint offs_warn(void) { int unused; return THIS_MODULE != NULL; }\n' >> "$f"
	done
	sed -i '1a #include <linux/module.h>' "$T"/p/*.c
	KCFLAGS=-Werror OFFS_PROBES=$T/p run -0 sh "$PROBE" "$k" "$T/w"
	assert_equal "$(have "$T/w/features.h")" "$(have "$T/ref/features.h")"
	grep -q 'warning: the comparison will always evaluate' "$T/w/probe-build/build.log"
}

@test "probes: no header grep and no version check decide a feature" {
	run -1 grep -nE 'grep|offs_hdr' "$ROOT/module/Kbuild"
	run -1 grep -rnE '^\s*#\s*(el)?if.*(LINUX_VERSION_CODE|KERNEL_VERSION)' "$ROOT"/module/*.c "$ROOT"/module/*.h
	# Every OFFS_HAVE_ that compat.h reads has a probe, and the reverse.
	local used probed
	used=$(sed -n 's/^#if.*\(OFFS_HAVE_[A-Z0-9_]*\).*/\1/p' "$ROOT/module/compat.h" | sort -u)
	probed=$(for f in "$ROOT"/module/probes/*.c; do
		n=$(basename "$f" .c); [ "$n" = control ] || echo "OFFS_HAVE_${n^^}"; done | sort)
	assert_equal "$used" "$probed"
	# compat.h is the only reader.
	run -1 grep -ln '^#if.*OFFS_HAVE_' $(ls "$ROOT"/module/*.[ch] | grep -v '/compat\.h$')
}

@test "probes: plain kbuild (make -C KDIR M=\$PWD/module) runs them itself; make -C module clean leaves the sources" {
	local k d=$T/tree
	k=$(kdir 6.1)
	mkdir -p "$d"
	cp -a "$ROOT/module" "$ROOT/VERSION" "$d/"
	run -0 sh "$PROBE" "$k" "$T/ref"
	run make -C "$k" M="$d/module" modules
	assert_success
	[ -f "$d/module/offsample.ko" ]
	# The same features as probe.sh run by hand, decided in the build.
	assert_equal "$(have "$d/module/features.h")" "$(have "$T/ref/features.h")"
	[ -f "$d/module/probe-build/build.log" ]
	run -0 modinfo -F version "$d/module/offsample.ko"
	assert_output "$(cat "$ROOT/VERSION")"
	# The user half (module/Makefile) cleans what kbuild generated.
	run make -C "$d/module" KDIR="$k" clean
	assert_success
	run diff -r "$ROOT/module" "$d/module"
	assert_success
}
