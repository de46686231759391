#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-matrix`: every guest suite on the kernels `make test` does not
# boot: Debian bullseye's 5.10 (the oldest kernel offsample supports,
# standing in for the 5.10-5.15 kernels of RHEL 9 and Ubuntu 22.04).  The
# 6.12 PREEMPT_RT kernel has its own target, `make test-rt`.
#
# For bullseye, nothing but the kernel image is installed on the machine:
# the image package (linux-image-<release>) goes in with dpkg so that
# virtme-ng can boot it with its modules (the /vmlinuz and /initrd.img
# links are put back as they were); the headers and bullseye's gcc-10 are
# downloaded through a private apt configuration and unpacked under
# $OFFS_CACHE (packaging/apt-suites.sh, as `make matrix` does), and the
# module is built against them.
#
# OFFS_SUITES="59-oncpu.bats ..." runs only those suites (and then leaves
# docs/MATRIX.md alone: its table is of whole runs).
#
# Results: build/test-matrix/guest-<release>/ (TAP, dmesg), a summary on
# stdout and in build/test-matrix/summary.txt; with MATRIX_DOC unset or 1
# the table in docs/MATRIX.md between the test-matrix markers is replaced.
# Exit status non-zero if anything failed or did not run.
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
CACHE=${OFFS_CACHE:-/var/cache/offsample-dev}
OUT=$TOP/build/test-matrix
DOC=$TOP/docs/MATRIX.md
mkdir -p "$OUT" "$CACHE" || exit 1
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
log() { printf '%s\n' "$*" >&2; }
say() { echo "$*" | tee -a "$SUMMARY"; }
# shellcheck source=packaging/apt-suites.sh
. "$TOP/packaging/apt-suites.sh"

tests/lib/deps.sh build test vm python || { say "FAILED: installing dependencies"; exit 1; }
hash -r
make --no-print-directory workload >/dev/null || { say "FAILED: building the workload"; exit 1; }
# shellcheck source=tests/lib/guest-share.bash
. "$TOP/tests/lib/guest-share.bash"
# The symbols of the usual programs, read once here as make test does
# (tests/guest/run.sh copies $OUT/symcache into each guest).
symcache_fill "$OUT" > "$OUT/symcache.log" 2>&1 ||
	log "test-matrix: symbol cache seed incomplete (see $OUT/symcache.log)"
# A guest's limit: 1,500 s (run-guest.sh's default) was too short once the
# suites had grown to 135 tests (2026-11-27: stopped after 65 of them).
guest_timeout=${OFFS_GUEST_TIMEOUT:-5400}
suites=()
for s in ${OFFS_SUITES:-}; do
	[ -f "tests/guest/$s" ] || { say "FAILED: no suite tests/guest/$s"; exit 1; }
	suites+=("tests/guest/$s")
done
[ ${#suites[@]} -eq 0 ] || MATRIX_DOC=0
bullseye_apt_setup || { say "FAILED: bullseye apt lists"; exit 1; }

# install_image SUITE RELEASE: the kernel image package, if not there;
# the /vmlinuz links stay as they were (they name the system's kernel).
install_image() {
	local suite=$1 rel=$2 debs=$CACHE/matrix/debs-$1 l links=()
	[ -r "/boot/vmlinuz-$rel" ] && [ -d "/lib/modules/$rel/kernel" ] && return 0
	mkdir -p "$debs"
	(cd "$debs" && apt_cmd "$suite" apt-get -o APT::Sandbox::User=root \
		download -qq "linux-image-$rel" </dev/null >&2) || return 1
	for l in /vmlinuz /vmlinuz.old /initrd.img /initrd.img.old; do
		[ -L "$l" ] && links+=("$l=$(readlink "$l")")
	done
	log "test-matrix: installing linux-image-$rel ($suite) for the guest"
	dpkg -i "$debs"/linux-image-"$rel"_*.deb > "$OUT/install-$rel.log" 2>&1 || return 1
	for l in ${links[@]+"${links[@]}"}; do
		ln -sfn "${l#*=}" "${l%%=*}"
	done
}

failed=0 rows=()
for spec in bullseye:linux-headers-amd64; do
	suite=${spec%%:*} meta=${spec#*:}
	pkg=$(dep_of "$suite" "$meta" '^linux-headers-[0-9]')
	if [ -z "$pkg" ]; then
		say "FAILED: $suite $meta: no header package"
		failed=1
		continue
	fi
	rel=${pkg#linux-headers-}
	root=$CACHE/matrix/$suite
	if ! unpack "$suite" "$root" "$pkg" || ! install_image "$suite" "$rel"; then
		say "FAILED: $suite $rel: download or install (see $OUT/install-$rel.log)"
		failed=1
		continue
	fi
	kdir=$root/usr/src/$pkg
	if ! PATH=$root/usr/bin:$PATH make --no-print-directory KDIR="$kdir" KVER="$rel" module \
		> "$OUT/build-$rel.log" 2>&1; then
		tail -n 20 "$OUT/build-$rel.log" >&2
		say "FAILED: $suite $rel: module build (see $OUT/build-$rel.log)"
		failed=1
		continue
	fi
	g=$OUT/guest-$rel
	rm -rf "$g"
	mkdir -p "$g"
	say "== guest $rel ($suite): started $(date -u +%TZ)"
	start=$(date +%s)
	# The same kernel arguments as make test's guests (tests/run.sh).
	tests/vm/run-guest.sh --timeout "$guest_timeout" --append init_on_alloc=0 \
		"$rel" "$g" -- tests/guest/run.sh "$g" ${suites[@]+"${suites[@]}"} > "$g.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ ! -s "$g/guest.tap" ]; then
		cat "$g.log" >&2
		say "FAILED: guest $rel did not run (exit $rc after ${secs}s)"
		failed=1
		rows+=("| $suite | $rel | did not run | | | | ${secs} s |")
		continue
	fi
	# A guest stopped by its limit still counts what it reported; the
	# tests it did not reach are failures (tap-summary.awk: the plan),
	# and the stop itself fails the run.
	counts=$(awk -f tests/lib/tap-summary.awk "$g/guest.tap" | tail -n1)
	read -r p f s <<< "$counts"
	if [ "$rc" = 125 ]; then
		cat "$g.log" >&2
		say "FAILED: guest $rel stopped (exit $rc after ${secs}s)"
		failed=1
	fi
	say "   guest $rel: $p passed, $f failed, $s skipped in ${secs}s"
	grep '^not ok' "$g/guest.tap" | tee -a "$SUMMARY"
	[ "$f" = 0 ] || failed=1
	rows+=("| $suite | $rel | $(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^"]*\)"/\1/p' "$kdir/.config" | cut -d' ' -f1-4) | $p | $f | $s | ${secs} s |")
done

if [ "${MATRIX_DOC:-1}" != 0 ] && grep -q '^<!-- test-matrix:begin -->' "$DOC"; then
	{
		echo "Last run: $(date -u '+%Y-%m-%d %H:%M UTC'), \`make test-matrix\`, commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)$(git -C "$TOP" diff --quiet 2>/dev/null || echo -dirty)."
		echo
		echo "| suite | kernel | compiler | passed | failed | skipped | guest time |"
		echo "|---|---|---|---|---|---|---|"
		printf '%s\n' ${rows[@]+"${rows[@]}"}
		if grep -q '^not ok' "$OUT"/guest-*/guest.tap 2>/dev/null; then
			echo
			echo "Failed:"
			echo
			grep -h '^not ok' "$OUT"/guest-*/guest.tap | sed 's/^/* /'
		fi
	} > "$OUT/table.md"
	awk -v t="$OUT/table.md" '
		/^<!-- test-matrix:begin -->$/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
		/^<!-- test-matrix:end -->$/ { skip = 0 }
		!skip' "$DOC" > "$DOC.tmp" && mv "$DOC.tmp" "$DOC"
fi
say "test-matrix: $([ $failed = 0 ] && echo passed || echo FAILED)"
exit $failed
