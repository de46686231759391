#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make lint`: style and static checks of module/ (`make check` runs it
# with every other host suite).
#
#   packaging/check.sh all | checkpatch | sparse
#
# checkpatch: the kernel's scripts/checkpatch.pl --no-tree --strict -f on
#   module/*.c module/*.h.  checkpatch.pl comes from KSRC=/path/to/kernel
#   or from Debian's newest linux-source-X.Y package (installed when
#   missing); only checkpatch.pl, spelling.txt and const_structs.checkpatch
#   are extracted, once, into $OFFS_CACHE (/var/cache/offsample-dev).
#   Fails on any ERROR or WARNING; CHECKs (--strict) are listed and counted.
# sparse: `make C=2 CHECK=sparse W=1` against the headers of every test
#   kernel (CHECK_KERNELS, default tests/vm/kernels.sh), in
#   $BUILD/check/sparse-<release>/.  Diagnostics in kernel headers are
#   counted as noise; ours must be listed in packaging/sparse-baseline.txt
#   (file: message, no line numbers) or the check fails.
#
# Logs and a summary: $BUILD/check/; CHECK_DOC=1 also writes the summary
# into docs/MATRIX.md.
set -u -o pipefail
# Called from make: do not pass its command-line variables (KVER, BUILD,
# DESTDIR, ...) on to the makes we run (DKMS, kbuild, debhelper).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
OUT=$BUILD/check
CACHE=${OFFS_CACHE:-/var/cache/offsample-dev}
BASELINE=$TOP/packaging/sparse-baseline.txt
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
rc=0

apt_ok() { [ -z "${NO_APT:-}" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; }

# ---------------------------------------------------------------- checkpatch
find_checkpatch() {
	local tarball top dir ver
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/scripts/checkpatch.pl" ] || { echo "check: no scripts/checkpatch.pl in KSRC=$KSRC" >&2; return 1; }
		echo "$KSRC/scripts/checkpatch.pl"
		return 0
	fi
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
	if [ -z "$tarball" ] && apt_ok; then
		local pkg
		pkg=$(apt-cache search --names-only '^linux-source-[0-9]+\.[0-9]+$' 2>/dev/null |
			awk '{print $1}' | sort -V | tail -n1)
		if [ -n "$pkg" ]; then
			echo "check: installing $pkg (for scripts/checkpatch.pl)" >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" </dev/null >&2
			tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
		fi
	fi
	if [ -z "$tarball" ]; then
		echo "check: no checkpatch.pl: install Debian's linux-source-X.Y or pass KSRC=/path/to/linux" >&2
		return 1
	fi
	top=$(basename "$tarball" .tar.xz)
	ver=$(dpkg-query -W -f='${Version}' "$top" 2>/dev/null || stat -c %Y "$tarball")
	[ -w "$CACHE" ] || mkdir -p "$CACHE" 2>/dev/null || CACHE=$BUILD/cache
	dir=$CACHE/$top-$ver
	if [ ! -f "$dir/scripts/checkpatch.pl" ]; then
		echo "check: extracting checkpatch.pl from $tarball into $dir" >&2
		mkdir -p "$dir.tmp" &&
		tar -xJf "$tarball" -C "$dir.tmp" --strip-components=1 \
			"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
			"$top/scripts/const_structs.checkpatch" &&
		rm -rf "$dir" && mv "$dir.tmp" "$dir" || { rm -rf "$dir.tmp"; return 1; }
	fi
	echo "$dir/scripts/checkpatch.pl"
}

run_checkpatch() {
	local cp log=$OUT/checkpatch.log e w c
	echo "== checkpatch"
	cp=$(find_checkpatch) || { echo "checkpatch: NOT RUN" | tee -a "$SUMMARY"; return 1; }
	# The sources only, not what an in-place build (make -C module) made.
	local -a srcs
	mapfile -t srcs < <(cd "$TOP" && ls module/*.[ch] | grep -vE '/(features\.h|syscalls\.h|.*\.mod\.c)$')
	(cd "$TOP" && perl "$cp" --no-tree --strict --terse --show-types -f "${srcs[@]}") > "$log" 2>&1
	e=$(grep -c ': ERROR:' "$log")
	w=$(grep -c ': WARNING:' "$log")
	c=$(grep -c ': CHECK:' "$log")
	grep -E ': (ERROR|WARNING|CHECK):' "$log"
	printf 'checkpatch (%s --strict): %d errors, %d warnings, %d checks in %d files\n' \
		"${cp#"$CACHE"/}" "$e" "$w" "$c" "${#srcs[@]}" | tee -a "$SUMMARY"
	[ "$e" -eq 0 ] && [ "$w" -eq 0 ]
}

# -------------------------------------------------------------------- sparse
run_sparse() {
	local k kdir dir log ours noise new n=0 kernels
	echo "== sparse"
	if ! command -v sparse >/dev/null 2>&1; then
		apt_ok && "$TOP/tests/lib/deps.sh" check >&2
		hash -r
	fi
	command -v sparse >/dev/null 2>&1 || { echo "sparse: NOT RUN (apt install sparse)" | tee -a "$SUMMARY"; return 1; }
	kernels=${CHECK_KERNELS:-$("$TOP/tests/vm/kernels.sh")}
	[ -n "$kernels" ] || { echo "sparse: no kernel headers found" | tee -a "$SUMMARY"; return 1; }
	local status=0
	for k in $kernels; do
		kdir=/lib/modules/$k/build
		[ -d "$kdir" ] || kdir=/usr/src/linux-headers-$k
		dir=$OUT/sparse-$k
		log=$OUT/sparse-$k.log
		rm -rf "$dir"
		mkdir -p "$dir"
		for f in "$TOP"/module/*.[ch]; do
			case ${f##*/} in features.h|syscalls.h|*.mod.c) ;; *) ln -sf "$f" "$dir/" ;; esac
		done
		ln -sf "$TOP/module/Kbuild" "$TOP/VERSION" "$dir/"
		# Kbuild runs the feature probes first.
		if ! make -j"$(nproc)" -C "$kdir" M="$dir" C=2 CHECK=sparse W=1 modules > "$log" 2>&1; then
			grep -E 'error' "$log" | head -n 20
			printf 'sparse %s: BUILD FAILED (%s)\n' "$k" "$log" | tee -a "$SUMMARY"
			status=1
			continue
		fi
		# file:line:col: warning|error: message -> ours (in $dir) or noise.
		# modpost's WARNING lines are ours too.
		ours=$( { grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | grep -F "$dir/"
			grep -E '^(WARNING|ERROR): ' "$log"; } |
			D=$dir/ perl -pe 's/\Q$ENV{D}\E//g; s/^(\S+):\d+:\d+:/$1:/' | sort -u)
		noise=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | grep -vcF "$dir/")
		new=$(printf '%s\n' "$ours" | sed '/^$/d' | grep -vxF -f <(grep -v '^#' "$BASELINE" 2>/dev/null | sed '/^$/d') || true)
		printf 'sparse %s (C=2 W=1): %d of ours (%d new, not in the baseline), %d in kernel headers\n' \
			"$k" "$(printf '%s\n' "$ours" | sed '/^$/d' | wc -l)" \
			"$(printf '%s\n' "$new" | sed '/^$/d' | wc -l)" "$noise" | tee -a "$SUMMARY"
		if [ -n "$new" ]; then
			printf '  new: %s\n' "$new" | tee -a "$SUMMARY"
			status=1
		fi
		n=$((n + 1))
	done
	# Baseline entries nothing reports any more: say so (they can go).
	local b
	while IFS= read -r b; do
		[ -n "$b" ] || continue
		grep -qF -- "${b#*: }" "$OUT"/sparse-*.log 2>/dev/null ||
			echo "sparse: baseline entry no longer seen (remove it): $b" | tee -a "$SUMMARY"
	done < <(grep -v '^#' "$BASELINE" 2>/dev/null)
	return $status
}

: > "$SUMMARY"
case "${1:-all}" in
checkpatch) run_checkpatch || rc=1 ;;
sparse) run_sparse || rc=1 ;;
all) run_checkpatch || rc=1; run_sparse || rc=1 ;;
*) echo "usage: $0 all|checkpatch|sparse" >&2; exit 2 ;;
esac
echo "== summary ($SUMMARY)"
cat "$SUMMARY"
# CHECK_DOC=1: record the result in docs/MATRIX.md (between the markers).
DOC=$TOP/docs/MATRIX.md
if [ "${CHECK_DOC:-}" = 1 ] && grep -q '^<!-- check:begin -->' "$DOC" 2>/dev/null; then
	{
		echo '```'
		echo "$(date -u '+%Y-%m-%d %H:%M UTC'), module $(cat "$TOP/VERSION") ($(git -C "$TOP" describe --always --dirty 2>/dev/null || echo 'no git')): make lint -> $([ $rc -eq 0 ] && echo OK || echo FAILED)"
		sed "s|$TOP/||g" "$SUMMARY"
		echo '```'
	} > "$OUT/summary.md"
	awk -v f="$OUT/summary.md" '
		/^<!-- check:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
		/^<!-- check:end -->/ { skip = 0 }
		!skip' "$DOC" > "$DOC.new" && mv "$DOC.new" "$DOC"
fi
[ $rc -eq 0 ] && echo "check: OK" || echo "check: FAILED"
exit $rc
