#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample top: a live view of the reasons and stacks, refreshed.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_top() {
	cat <<'EOF'
Usage: offsample top [-i SECONDS] [-n COUNT] [--top N] [--no-symbolize]
                     [--include-idle]

A live view of the reasons and the top stacks of the samples taken since
the previous refresh.  With a module that has sessions (0.7), top is a
session of its own (/proc/offsample/session): each refresh is its
window, exact, and no other reader (a cron job draining) changes what
it shows, nor does top change what they see.  With an older module it is
the difference between two reads of /proc/offsample/stacks (the first
refresh shows the whole current generation; when another reader drains
or resets, the new generation is shown alone, with a note).

  -i, --interval SECONDS   refresh period (default 2; decimals allowed)
  -n, --iterations COUNT   stop after COUNT refreshes (default: until q)
  --top N                  stacks shown (default 10)
  --no-symbolize           show user frames as PATH+0xOFFSET instead of
                           naming them with offsample-symbolize
  --include-idle           show idle kernel threads (reason idle) too; left
                           out by default, with a line saying how many

On a terminal the screen is redrawn and q (or Ctrl-C) quits, restoring
the terminal.  Without a terminal every refresh is printed, followed by
an empty line.  Needs root.
EOF
}

# ------------------------------------------------------------ top

TOP_TTY=0 TOP_STTY=
# The terminal back as it was, then work_exit (the temporary folder).
top_exit() {
	local rc=$?
	if [ $TOP_TTY = 1 ]; then
		[ -z "$TOP_STTY" ] || stty "$TOP_STTY" < /dev/tty 2>/dev/null || true
		printf '\033[?25h\033[?1049l' 2>/dev/null || true
	fi
	[ -z "$WORK" ] || rm -rf -- "$WORK"
	exit "$rc"
}

cmd_top() {
	local interval=2 count= ntop=10 nosym=0 idle=()
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) help_top; exit 0 ;;
		--no-symbolize) nosym=1; shift ;;
		--include-idle) idle=(--include-idle); shift ;;
		-i | -i?* | --interval | --interval=*) optval -i "$@"; interval=$OPTVAL; shift "$SHIFTN" ;;
		-n | -n?* | --iterations | --iterations=*) optval -n "$@"; count=$OPTVAL; shift "$SHIFTN" ;;
		--top | --top=*) optval --top "$@"; ntop=$OPTVAL; shift "$SHIFTN" ;;
		-?*) usage_error "unknown option $1" ;;
		*) usage_error "unexpected argument \"$1\"" ;;
		esac
	done
	is_number "$interval" && [ "$(usec "$interval")" -ge 100000 ] ||
		usage_error "-i needs a number of seconds (at least 0.1), not \"$interval\""
	[ -z "$count" ] || { is_uint "$count" && [ "$count" -ge 1 ]; } ||
		usage_error "-n needs a positive count, not \"$count\""
	is_uint "$ntop" && [ "$ntop" -ge 1 ] || usage_error "--top needs a positive number, not \"$ntop\""
	need_module
	need_read "$PROC/stacks"
	# A session of our own when the module has them and lets us.
	local sfd=
	if [ -e "$PROC/session" ] && { exec {sfd}<>"$PROC/session"; } 2>/dev/null; then
		:
	else
		sfd=
	fi

	if [ -t 1 ] && [ -t 0 ] && [ -r /dev/tty ]; then
		TOP_TTY=1
	fi
	# One temporary folder, the one the symbolizer step uses too
	# (work_dir); top_exit replaces work_exit's trap.  (Before 0.6.2 top
	# made a folder of its own, and the symbolizer step's trap replaced
	# top's: the folder was left behind in TMPDIR at every run.)
	work_dir
	trap top_exit EXIT
	trap 'exit 0' INT TERM HUP
	if [ $TOP_TTY = 1 ]; then
		TOP_STTY=$(stty -g < /dev/tty 2>/dev/null) || TOP_STTY=
		stty -echo -icanon < /dev/tty 2>/dev/null || true
		printf '\033[?1049h\033[?25l'
	fi
	local t=$WORK n=0 width=0 prev=() frame key last now
	last=${EPOCHREALTIME/./}
	while :; do
		if [ -n "$sfd" ]; then
			# The session's window since the last refresh: a read
			# from offset 0 (the descriptor rewound).
			perl -e 'open(my $f, "+<&=", $ARGV[0]) or exit 1; sysseek($f, 0, 0) or exit 1;
				my ($b, $n); while ($n = sysread($f, $b, 65536)) { print $b or exit 1 } exit(defined $n ? 0 : 1)' \
				"$sfd" > "$t/cur" 2>/dev/null || die "cannot read $PROC/session"
		else
			cat -- "$PROC/stacks" > "$t/cur" 2>/dev/null || die "cannot read $PROC/stacks"
		fi
		if [ $nosym = 0 ]; then
			# User frames named (the symbolizer's cache makes the
			# refreshes after the first cheap).
			symbolize_inputs "$t/cur"
			[ "${INPUTS[0]}" = "$t/cur" ] || mv -f -- "${INPUTS[0]}" "$t/cur"
		fi
		now=${EPOCHREALTIME/./}
		local el=$((now - last))
		last=$now
		if [ $TOP_TTY = 1 ]; then
			width=$(stty size < /dev/tty 2>/dev/null | awk '{ print $2 }') || width=0
			is_uint "${width:-}" || width=0
		fi
		frame=$(lib top "${prev[@]}" --interval "$((el / 1000000)).$(((el % 1000000) / 100000))" \
			--top "$ntop" --width "$width" ${idle[@]+"${idle[@]}"} "$t/cur") || exit 1
		mv -f -- "$t/cur" "$t/prev"
		# A session's windows are already the differences.
		[ -n "$sfd" ] || prev=(--prev "$t/prev")
		n=$((n + 1))
		if [ $TOP_TTY = 1 ]; then
			printf '\033[H\033[2J%s\n\n(q quits; refresh every %s s)' "$frame" "$interval"
		else
			printf '%s\n\n' "$frame"
		fi
		if [ -n "$count" ] && [ "$n" -ge "$count" ]; then
			break
		fi
		if [ $TOP_TTY = 1 ]; then
			key=
			if read -rsn1 -t "$interval" key < /dev/tty; then
				case $key in q | Q) break ;; esac
			fi
		else
			sleep "$interval"
		fi
	done
	[ $TOP_TTY = 0 ] || printf '\n'
	exit 0
}
