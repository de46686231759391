#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Draw the README's flame graph again: docs/images/offcpu-workload.svg
# with the checkout's tools, and docs/images/offcpu-workload.png as
# headless Chromium renders that SVG.  Run it after a change to the
# renderer (tests/host/tools-docs.bats fails until the picture is newer).
#
#   docs/images/draw.sh [STACKS]
#
# STACKS: a recording; default the test workload recorded with the
# module in a Debian 6.1 guest (tests/fixtures), so that the picture is
# the same on every machine.  build/demo/offsample.stacks (make demo)
# draws this machine's own run instead.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
in=${1:-$top/tests/fixtures/stacks/workload-drain-v2-6.1.0.txt}
img=$top/docs/images
browser=$(command -v chromium || command -v chromium-browser) ||
	{ echo "draw.sh: chromium not found (tests/lib/deps.sh browser installs it)" >&2; exit 1; }
"$top/tools/offsample" flamegraph --title 'Off-CPU time of a test workload (offsample, Debian 6.1 guest)' \
	-o "$img/offcpu-workload.svg" "$in"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --hide-scrollbars --user-data-dir="$profile" --window-size=1200,388 \
	--screenshot="$img/offcpu-workload.png" "$img/offcpu-workload.svg" > /dev/null 2>&1
[ -s "$img/offcpu-workload.png" ] || { echo "draw.sh: chromium wrote no picture" >&2; exit 1; }
echo "drew $img/offcpu-workload.svg and .png from $in"
