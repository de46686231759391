#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make matrix`: build the module (top-level Makefile, W=1) against every
# Debian kernel header package offsample supports and tabulate the result.
#
#   bookworm: every linux-headers-*amd64 meta-package of the configured apt
#             sources (6.1 and 6.12; generic, rt and cloud flavours);
#   bullseye: linux-headers-amd64 and linux-headers-rt-amd64 (5.10) with
#             bullseye's gcc-10 (MATRIX_BULLSEYE=0 skips it).
#
# Nothing is installed on the machine: header packages that are not
# installed already are downloaded (apt-get download) and unpacked with
# dpkg -x into $OFFS_CACHE/matrix/<suite>/ (installing some of them would
# pull in a kernel image, e.g. 6.12 cloud, and change which kernels the
# tests boot).  Bullseye is never added to the system's apt sources: a
# private apt configuration under $OFFS_CACHE/apt-bullseye/ (its own
# sources, lists, cache and an empty package status) with only the bullseye
# suites is used to download its packages, gcc-10 included, which runs
# from the unpacked tree.
#
# Results: $BUILD/matrix/results.md (and logs); with MATRIX_DOC unset or 1
# the table in docs/MATRIX.md (between the matrix markers) is replaced.
set -u -o pipefail
# Called from make: do not pass its command-line variables (KVER, BUILD,
# DESTDIR, ...) on to the makes we run (DKMS, kbuild, debhelper).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
OUT=$BUILD/matrix
CACHE=${OFFS_CACHE:-/var/cache/offsample-dev}
DOC=$TOP/docs/MATRIX.md
mkdir -p "$OUT" "$CACHE" || exit 1
RESULTS=$OUT/results.tsv
: > "$RESULTS"
rm -f "$OUT"/errors-*.txt

log() { printf '%s\n' "$*" >&2; }

# The private bullseye apt configuration, dep_of and unpack.
# shellcheck source=packaging/apt-suites.sh
. "$TOP/packaging/apt-suites.sh"

# One matrix entry: SUITE FLAVOUR META-PACKAGE
entry() {
	local suite=$1 flavour=$2 meta=$3 pkg rel kdir root how path=$PATH cc log start secs res warn gccv
	pkg=$(dep_of "$suite" "$meta" '^linux-headers-[0-9]')
	if [ -z "$pkg" ]; then
		printf '%s\t%s\t%s\t-\t-\t-\tNOT AVAILABLE\t-\t-\n' "$suite" "$flavour" "$meta" >> "$RESULTS"
		return
	fi
	rel=${pkg#linux-headers-}
	if [ "$suite" = bookworm ] && [ -e "/usr/src/$pkg/Makefile" ] &&
	   dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q ' installed$'; then
		kdir=/usr/src/$pkg
		how=installed
	else
		root=$CACHE/matrix/$suite
		log "matrix: unpacking $pkg ($suite) into $root"
		if ! unpack "$suite" "$root" "$pkg"; then
			printf '%s\t%s\t%s\t%s\t-\t-\tDOWNLOAD FAILED\t-\t-\n' "$suite" "$flavour" "$meta" "$rel" >> "$RESULTS"
			return
		fi
		kdir=$root/usr/src/$pkg
		how="unpacked"
		# The compiler the headers ask for, from the same tree if there.
		path=$root/usr/bin:$PATH
	fi
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kdir/.config")
	gccv=$(PATH=$path "$cc" -dumpfullversion 2>/dev/null || echo "missing")
	log "matrix: $suite $flavour $rel ($how, $cc $gccv)"
	log=$OUT/build-$rel.log
	start=$(date +%s)
	rm -rf "${OUT:?}/$rel"
	PATH=$path make --no-print-directory -C "$TOP" BUILD="$OUT" KDIR="$kdir" module > "$log" 2>&1
	res=$?
	secs=$(( $(date +%s) - start ))
	warn=$(grep -cE 'warning:|WARNING:' "$log")
	# Kernels outside dkms.conf's BUILD_EXCLUSIVE_KERNEL are built to show
	# where support ends; their failure does not fail the matrix.
	supported=yes
	printf '%s\n' "$rel" | grep -Eq "$EXCLUSIVE" || supported=no
	if [ $res -eq 0 ]; then
		res=OK
		[ $supported = yes ] || res="OK (outside the supported range)"
	else
		res=FAILED
		[ $supported = yes ] || res="no: outside the supported range"
		grep -E 'error:|Error' "$log" | head -n 20 >&2
		# The compiler's diagnostics, for the notes under the table.
		{ echo "$rel"; grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' "$log" |
			sed "s|^$OUT/$rel/||" | sort -u; } > "$OUT/errors-$rel.txt"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ss\n' "$suite" "$flavour" "$meta" "$rel" "$how" \
		"$cc $gccv" "$res" "$warn" "$secs" >> "$RESULTS"
}

EXCLUSIVE=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$TOP/dkms.conf")
[ -n "$EXCLUSIVE" ] || { log "matrix: no BUILD_EXCLUSIVE_KERNEL in dkms.conf"; exit 1; }

# Bookworm: the meta-packages of the configured sources.
metas=$(apt-cache search --names-only '^linux-headers-([0-9]+\.[0-9]+-)?((rt|cloud)-)?amd64$' 2>/dev/null |
	awk '{print $1}' | sort -V)
[ -n "$metas" ] || { log "matrix: no linux-headers meta-packages in apt (apt-get update?)"; exit 1; }
for m in $metas; do
	f=generic
	case "$m" in *-rt-amd64) f=rt ;; *-cloud-amd64) f=cloud ;; esac
	entry bookworm "$f" "$m"
done

if [ "${MATRIX_BULLSEYE:-1}" != 0 ]; then
	if bullseye_apt_setup; then
		entry bullseye generic linux-headers-amd64
		entry bullseye rt linux-headers-rt-amd64
	else
		printf 'bullseye\tgeneric\tlinux-headers-amd64\t-\t-\t-\tAPT FAILED\t-\t-\n' >> "$RESULTS"
	fi
fi

# The table.
{
	echo "Last run: $(date -u '+%Y-%m-%d %H:%M UTC') on $(. /etc/os-release; echo "$PRETTY_NAME"), \`make matrix\`, module $(cat "$TOP/VERSION") ($(git -C "$TOP" describe --always --dirty 2>/dev/null || echo 'no git'))."
	echo
	echo "| suite | flavour | header package (meta) | kernel release | headers | compiler | build (W=1) | warnings | time |"
	echo "|---|---|---|---|---|---|---|---|---|"
	sort -t"$(printf '\t')" -k4,4V -k1,1 "$RESULTS" |
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' 
	for f in "$OUT"/errors-*.txt; do
		[ -f "$f" ] || continue
		echo
		echo "Build errors for $(head -n1 "$f") (log: build/matrix/build-$(head -n1 "$f").log):"
		echo
		echo '```'
		sed 1d "$f"
		echo '```'
	done
} > "$OUT/results.md"
cat "$OUT/results.md"

if [ "${MATRIX_DOC:-1}" != 0 ] && [ -f "$DOC" ] && grep -q '^<!-- matrix:begin -->' "$DOC"; then
	awk -v f="$OUT/results.md" '
		/^<!-- matrix:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
		/^<!-- matrix:end -->/ { skip = 0 }
		!skip' "$DOC" > "$DOC.new" && mv "$DOC.new" "$DOC"
	log "matrix: table written to $DOC"
fi
# Failing entries fail the target (not-available ones do not).
! awk -F'\t' '$7 == "FAILED" || $7 ~ /FAILED/ { bad = 1 } END { exit !bad }' "$RESULTS"
