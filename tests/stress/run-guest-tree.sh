#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Like tests/vm/run-guest.sh, for a kernel built in a source tree (the debug
# kernel of tests/stress/debug-kernel.sh) instead of a Debian package:
# virtme-ng boots TREE's bzImage with TREE's modules, the host's root
# shared read-only, and runs one command inside as root.
#
#   tests/stress/run-guest-tree.sh [options] TREE OUTDIR -- COMMAND...
#
# The guest sees OFFS_KTREE=TREE.  Exit status: the command's, or 125 if
# the guest did not boot or timed out.
# Options: --cpus N (2)  --memory SIZE (2G)  --timeout SECONDS (10800)
set -u

cpus=2
memory=2G
timeout=10800
while [ $# -gt 0 ]; do
	case "$1" in
	--cpus) cpus=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "run-guest-tree.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
	echo "usage: $0 [options] TREE OUTDIR -- COMMAND..." >&2
	exit 2
fi
tree=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 3

if [ ! -r "$tree/arch/x86/boot/bzImage" ]; then
	echo "run-guest-tree.sh: no $tree/arch/x86/boot/bzImage" >&2
	exit 125
fi

{
	echo '#!/bin/bash'
	echo "export OFFS_KTREE=$(printf '%q' "$tree")"
	echo "cd $(printf '%q' "$PWD") || exit 125"
	printf '%q ' "$@"
	echo
	echo 'rc=$?'
	echo "echo \$rc > $(printf '%q' "$out")/guest.rc"
	echo 'exit $rc'
} > "$out/guest-cmd.sh"
chmod +x "$out/guest-cmd.sh"
rm -f "$out/guest.rc"

timeout --kill-after=30 "$timeout" \
	vng --run "$tree" --disable-kvm --cpus "$cpus" --memory "$memory" \
	--force-9p --rwdir "$out" --exec "$out/guest-cmd.sh" \
	</dev/null >"$out/console.log" 2>&1
vrc=$?
if [ ! -f "$out/guest.rc" ]; then
	echo "run-guest-tree.sh: guest did not finish (vng exit $vrc); see $out/console.log" >&2
	tail -n 20 "$out/console.log" >&2
	exit 125
fi
exit "$(cat "$out/guest.rc")"
