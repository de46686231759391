#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample snapshot: drain the stacks into a new file in a folder
# (cron, systemd timers), keeping the newest.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_snapshot() {
	cat <<'EOF'
Usage: offsample snapshot [-v] [--keep N] [--max-age DAYS] DIR

Drain the current generation into a new file in DIR, for cron or a
systemd timer.  The file is named
  offsample-YYYYmmddTHHMMSSZ-gGENERATION.stacks
(UTC end time of the generation, and its number), written to a temporary
file in DIR first and then linked to that name, so readers never see a
partial file and overlapping runs never collide: each drain is its own
generation, so no sample is lost or counted twice between snapshots.

Then old snapshots in DIR are removed (only files named as above):
  --keep N          keep the N newest (default 1000; 0: no limit)
  --max-age DAYS    remove those older than DAYS days (default 7; 0: none)
  -v, --verbose     print the new file and removed ones (default: silent)

If the file cannot be written (disk full...), the drained samples are
lost (the kernel has already started a new generation); the partial
temporary file is removed and the exit status is 1.  Needs root.
EOF
}

# ------------------------------------------------------------ snapshot

SNAP_TMP=
snap_exit() {
	local rc=$?
	[ -z "$SNAP_TMP" ] || rm -f -- "$SNAP_TMP"
	exit "$rc"
}

cmd_snapshot() {
	local keep=1000 age=7 verbose=0 dir=
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) help_snapshot; exit 0 ;;
		-v | --verbose) verbose=1; shift ;;
		--keep | --keep=*) optval --keep "$@"; keep=$OPTVAL; shift "$SHIFTN" ;;
		--max-age | --max-age=*) optval --max-age "$@"; age=$OPTVAL; shift "$SHIFTN" ;;
		--) shift; [ $# -eq 0 ] || { dir=$1; shift; } ;;
		-?*) usage_error "unknown option $1" ;;
		*) [ -z "$dir" ] || usage_error "only one DIR"; dir=$1; shift ;;
		esac
	done
	[ $# -eq 0 ] || usage_error "only one DIR"
	[ -n "$dir" ] || usage_error "DIR is required"
	is_uint "$keep" || usage_error "--keep needs a number of files, not \"$keep\""
	is_uint "$age" || usage_error "--max-age needs a number of days, not \"$age\""
	need_module
	need_read "$PROC/drain"
	[ -d "$dir" ] || die "$dir: no such directory"
	[ -w "$dir" ] || die "cannot write to $dir: permission denied"

	trap snap_exit EXIT
	# Once drained, the samples exist only in our file: from the drain
	# until the file has its name, INT, TERM and HUP are ignored (by cat
	# too, which inherits that).
	trap '' INT TERM HUP
	SNAP_TMP=$(mktemp "$dir/.offsample-snapshot.XXXXXX" 2>/dev/null) ||
		die "cannot create a file in $dir"
	if ! cat -- "$PROC/drain" 2>/dev/null > "$SNAP_TMP"; then
		die "draining into $dir failed (disk full?); the samples of that generation are lost"
	fi
	keep_jit "$SNAP_TMP" "$dir"
	local gen end stamp name cand i
	gen=$(lib hdr generation "$SNAP_TMP") || gen=
	case $gen in '' | *[!0-9]*) gen= ;; esac
	[ -n "$gen" ] || die "the drain output has no generation header (not the offsample stacks format)"
	gen=${gen#"${gen%%[!0]*}"}	# no leading zeros (printf would read octal)
	gen=${gen:-0}
	end=$(lib hdr end "$SNAP_TMP") || end=
	end=${end%%.*}
	case $end in '' | *[!0-9]*) end=$(date +%s) ;; esac
	stamp=$(date -u -d "@$end" +%Y%m%dT%H%M%SZ)
	name=offsample-$stamp-g$(printf '%08d' "$gen").stacks
	chmod 0600 -- "$SNAP_TMP" 2>/dev/null || true
	local done=
	for i in '' .1 .2 .3 .4 .5 .6 .7 .8 .9; do
		cand=$dir/${name%.stacks}$i.stacks
		[ ! -e "$cand" ] || continue
		if ln -- "$SNAP_TMP" "$cand" 2>/dev/null; then
			rm -f -- "$SNAP_TMP"
			done=$cand
			break
		fi
		if mv -n -- "$SNAP_TMP" "$cand" 2>/dev/null && [ ! -e "$SNAP_TMP" ]; then
			done=$cand
			break
		fi
	done
	if [ -z "$done" ]; then
		local left=$SNAP_TMP
		SNAP_TMP=	# keep it: it holds the drained samples
		die "cannot create $dir/$name; the drained samples are left in $left"
	fi
	SNAP_TMP=
	trap - INT TERM HUP
	if [ $verbose = 1 ]; then
		printf '%s: generation %s, %s samples, %s records\n' "$done" "$gen" \
			"$(lib hdr samples "$done" || echo '?')" "$(lib hdr records "$done" || echo '?')"
	fi
	local pv=()
	[ $verbose = 0 ] || pv=(-v)
	lib prune "${pv[@]}" --protect "${done##*/}" -- "$dir" "$keep" "$age" || exit 1
	exit 0
}
