#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample record: sample for a while (or while a command runs) and
# save the stacks to a file.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_record() {
	cat <<'EOF'
Usage: offsample record -d SECONDS [-F HZ] [-o FILE] [-p PID | -c CGROUP]
       offsample record [-F HZ] [-o FILE] -- COMMAND [ARGS...]

Sample for SECONDS (or while COMMAND runs) and write what was sampled to
FILE.  With a module that has sessions (0.7, /proc/offsample/session),
the recording is a session of its own: its rate, key and filter apply to
it alone, and nothing another reader will read (a cron job's drains,
offsample top, the stacks file) is reset, drained or changed.  With an
older module it enables the sampler, starts a new generation (reset),
drains it at the end and restores the parameters it changed (enabled,
hz, key; cgroup if the module has it), also when interrupted.  The file
is the session's (or drain's) output (docs/FORMAT.md) with extra header
lines: "# recorded-by:", and "# pid:" / "# cgroup:" for filters.

  -d, --duration SECONDS   how long to sample (decimals allowed); required
  -F, --frequency HZ       sampling rate for the recording, 1..1000
                           (default: the module's current hz)
  -o, --output FILE        where to write (default: offsample.stacks in the
                           current directory, replaced if it exists);
                           "-" is standard output
  -p, --pid PID            only the threads of process PID (sets key to
                           include pid for the recording)
  -c, --cgroup CGROUP      only the threads of a cgroup v2 group and its
                           descendants: a path relative to the cgroup
                           root (system.slice/x.service or
                           /system.slice/x.service), or the directory
                           (/sys/fs/cgroup/system.slice/x.service)
  -- COMMAND [ARGS...]     run COMMAND and record it and its children
                           (all their threads) until it exits

With -- COMMAND, the command runs in the foreground (its standard input,
output and exit status are its own; Ctrl-C reaches it and the recording
alike) in a new cgroup v2 group, /offsample-record-PID under the root of
the cgroup2 mount, to which the session (or the module's cgroup
parameter) is restricted: every process it starts is recorded, however
it is named, and nothing else.
The key includes pid for the recording, as with -p (report --by process
tells the children apart).  The recording ends when COMMAND exits;
processes it left running are
moved back to offsample's own group and the group is removed.  The file
gets "# command:" and "# command-exit:" header lines; a non-zero exit of
COMMAND is a warning, not a failure of the recording.  Needs a module
with the cgroup parameter (0.2) and a cgroup2 mount.

With -c, the session samples only that subtree (a module without
sessions: its cgroup parameter is set for the recording, so other
readers, such as a snapshot timer, see only it meanwhile, and restored
afterwards); a group that does not exist is an error.  An older module
without the parameter: the
recording keys by pid and keeps the processes listed in the group's
cgroup.procs at the start or at the end (processes that came and went in
between are missed).

Ctrl-C (SIGINT) or SIGTERM ends the recording early: what was sampled so
far is drained and written, as `perf record` does.  The output is written
to a temporary file and renamed: FILE is complete or absent.  Progress is
shown when standard error is a terminal; otherwise nothing but warnings.
Without sessions, a warning says when another reader drained or reset
during the recording (its samples went there).  Needs root.
EOF
}

# ------------------------------------------------------------ record

REC_TMP=() REC_RESTORE=0 REC_INTERRUPTED= REC_SLEEP=
REC_OLD_ENABLED= REC_OLD_HZ= REC_OLD_KEY= REC_OLD_CGROUP= REC_SET=()

rec_restore() {	# write back what we changed; never fails
	[ "$REC_RESTORE" = 1 ] || return 0
	REC_RESTORE=0
	local p
	for p in "${REC_SET[@]}"; do
		case $p in
		key) printf '%s\n' "$REC_OLD_KEY" > "$SYS/key" 2>/dev/null || warn "could not restore key=$REC_OLD_KEY" ;;
		hz) printf '%s\n' "$REC_OLD_HZ" > "$SYS/hz" 2>/dev/null || warn "could not restore hz=$REC_OLD_HZ" ;;
		cgroup) printf '%s\n' "$REC_OLD_CGROUP" > "$SYS/cgroup" 2>/dev/null || warn "could not restore cgroup" ;;
		esac
	done
	for p in "${REC_SET[@]}"; do
		if [ "$p" = enabled ]; then
			printf '%s\n' "$REC_OLD_ENABLED" > "$SYS/enabled" 2>/dev/null ||
				warn "could not restore enabled=$REC_OLD_ENABLED"
		fi
	done
}

# rec_cgroup_remove: the group made for -- COMMAND, emptied (processes
# the command left running go back to our own group) and removed; never
# fails.
REC_CGDIR= REC_CGHOME=
rec_cgroup_remove() {
	[ -n "$REC_CGDIR" ] || return 0
	local p n=0
	while read -r p; do
		n=$((n + 1))
		printf '%s\n' "$p" > "$REC_CGHOME/cgroup.procs" 2>/dev/null || true
	done < "$REC_CGDIR/cgroup.procs" 2>/dev/null
	local home=${REC_CGHOME#"$CG_MOUNT"}
	[ "$n" = 0 ] || warn "$n process(es) of the command still run; moved back to ${home:-/}"
	rmdir -- "$REC_CGDIR" 2>/dev/null || warn "could not remove the cgroup $REC_CGDIR"
	REC_CGDIR=
}

rec_exit() {
	local rc=$?
	trap - INT TERM HUP
	[ -z "$REC_SLEEP" ] || kill "$REC_SLEEP" 2>/dev/null || true
	rec_restore
	rec_cgroup_remove
	if [ ${#REC_TMP[@]} -gt 0 ]; then rm -f -- "${REC_TMP[@]}"; fi
	exit "$rc"
}

rec_signal() {
	if [ -n "$REC_INTERRUPTED" ]; then	# a second signal: give up
		printf '\n' >&2
		die "interrupted again; nothing written"
	fi
	REC_INTERRUPTED=$1
	[ -z "$REC_SLEEP" ] || kill "$REC_SLEEP" 2>/dev/null || true
}

# cg_resolve CGROUP: the group's directory and its path relative to the
# cgroup v2 root, in CG_DIR and CG_PATH (CG_MOUNT: the v2 mount point).
# CGROUP is a directory under a cgroup2 mount, or a path relative to the
# root, with or without its leading "/"; an absolute directory elsewhere
# with a cgroup.procs (an unusual mount) is taken as it is.
CG_DIR= CG_PATH= CG_MOUNT=
cg_resolve() {
	local c=$1 m mounts=()
	while read -r _ m _; do
		mounts+=("$m")
	done < <(awk '$3 == "cgroup2" { print $1, $2, $3 }' /proc/self/mounts 2>/dev/null || true)
	CG_MOUNT=${mounts[0]:-/sys/fs/cgroup}
	for m in "${mounts[@]}" /sys/fs/cgroup; do
		case $c in
		"$m" | "$m"/*)
			CG_MOUNT=$m CG_DIR=${c%/} CG_PATH=${c#"$m"}
			CG_PATH=/${CG_PATH#/}
			CG_PATH=${CG_PATH%/}
			[ -n "$CG_PATH" ] || CG_PATH=/
			return 0 ;;
		esac
	done
	c=/${c#/}
	c=${c%/}
	[ -n "$c" ] || c=/
	if [ ! -f "$CG_MOUNT$c/cgroup.procs" ] && [ -f "$c/cgroup.procs" ]; then
		CG_DIR=$c CG_PATH=$c
	else
		CG_DIR=$CG_MOUNT${c%/} CG_PATH=$c
	fi
}

# pids of a cgroup (cgroup.procs), comma separated
cg_pids() {
	local p list=
	while read -r p; do
		list+="${list:+,}$p"
	done < "$1/cgroup.procs" || return 1
	printf '%s' "$list"
}

# rec_session HZ PID CGPATH BYCMD: open a session of the module
# ($PROC/session, fd REC_SFD) counting from now at HZ (the module's rate
# when empty), under the module's key (with pid for PID or a command),
# only PID's threads or CGPATH's subtree when given.
REC_SFD=
rec_session() {
	local hz=$1 pid=$2 cgpath=$3 bycmd=$4 key set err
	key=$(read_param key)
	if [ -n "$pid" ] || [ "$bycmd" = 1 ]; then
		case ,$key, in
		*,pid,* | *,tid,*) ;;
		*) key=$key,pid ;;
		esac
	fi
	set="key=$key${hz:+ hz=$hz}${pid:+ pid=$pid}${cgpath:+ cgroup=$cgpath}"
	if ! { exec {REC_SFD}<>"$PROC/session"; } 2>/dev/null; then
		REC_SFD=
		err=$( { : <> "$PROC/session"; } 2>&1 ) || true
		case $err in
		*busy*) die "no session free: max_sessions sessions are open already (offsample(4))" ;;
		*) die "cannot open $PROC/session${err:+: ${err##*: }}" ;;
		esac
	fi
	if ! err=$( { printf '%s\n' "$set" >&"$REC_SFD"; } 2>&1 ); then
		case $err in
		*"No such file"*) die "no such cgroup: $cgpath (the module found no cgroup v2 group at that path)" ;;
		*"No such process"*) die "no process $pid" ;;
		*) die "the module refused the session's settings \"$set\"${err:+ (${err##*: })}" ;;
		esac
	fi
}

cmd_record() {
	local dur= hz= out=offsample.stacks pid= cg= argv run=()
	argv=$(shquote offsample record "$@")
	while [ $# -gt 0 ]; do
		case $1 in
		--) shift
			[ $# -gt 0 ] || usage_error "-- needs a command to run"
			run=("$@"); break ;;
		-h | --help) help_record; exit 0 ;;
		-d | -d?* | --duration | --duration=*) optval -d "$@"; dur=$OPTVAL; shift "$SHIFTN" ;;
		-F | -F?* | --frequency | --frequency=* | --hz | --hz=*) optval -F "$@"; hz=$OPTVAL; shift "$SHIFTN" ;;
		-o | -o?* | --output | --output=*) optval -o "$@"; out=$OPTVAL; shift "$SHIFTN" ;;
		-p | -p?* | --pid | --pid=*) optval -p "$@"; pid=$OPTVAL; shift "$SHIFTN" ;;
		-c | -c?* | --cgroup | --cgroup=*) optval -c "$@"; cg=$OPTVAL; shift "$SHIFTN" ;;
		-?*) usage_error "unknown option $1" ;;
		*) usage_error "unexpected argument \"$1\"" ;;
		esac
	done
	if [ ${#run[@]} -gt 0 ]; then
		[ -z "$dur" ] || usage_error "-d and -- COMMAND exclude each other (the command's run is the duration)"
		[ -z "$pid$cg" ] || usage_error "-p and -c exclude -- COMMAND (its own group is recorded)"
		command -v -- "${run[0]}" > /dev/null 2>&1 || die "${run[0]}: command not found"
	else
		[ -n "$dur" ] || usage_error "-d SECONDS (or -- COMMAND) is required"
		is_number "$dur" && [ "$(usec "$dur")" -gt 0 ] ||
			usage_error "-d needs a positive number of seconds, not \"$dur\""
	fi
	if [ -n "$hz" ]; then
		is_uint "$hz" && [ "$((10#$hz))" -ge 1 ] && [ "$((10#$hz))" -le 1000 ] ||
			usage_error "-F needs a rate of 1..1000 Hz, not \"$hz\""
		hz=$((10#$hz))
	fi
	[ -n "$out" ] || usage_error "-o needs a file name"
	[ -z "$pid" ] || [ -z "$cg" ] || usage_error "-p and -c exclude each other"
	if [ -n "$pid" ]; then
		is_uint "$pid" && [ "$pid" -gt 0 ] || usage_error "-p needs a process id, not \"$pid\""
		[ -d "/proc/$pid" ] || die "no process $pid"
	fi
	local cgdir= cgpath=
	if [ -n "$cg" ]; then
		cg_resolve "$cg"
		cgdir=$CG_DIR cgpath=$CG_PATH
		if [ ! -f "$cgdir/cgroup.procs" ]; then
			# The module checks the path itself when the hierarchy is
			# not mounted here (a container); otherwise we say it.
			if [ ! -e "$SYS/cgroup" ] || [ -f "$CG_MOUNT/cgroup.procs" ]; then
				die "no such cgroup: $cgpath ($cgdir is not a cgroup v2 directory)"
			fi
		fi
	fi

	need_module
	[ -d "$SYS" ] || die "module parameters not found ($SYS)"
	# A module with sessions (0.7): the recording is a session of its
	# own, and nothing of the module's settings or data is touched.
	local use_sess=0 use_cgparam=0
	[ ! -e "$PROC/session" ] || use_sess=1
	if [ $use_sess = 1 ]; then
		need_write "$PROC/session"
		[ -z "$cg" ] || use_cgparam=1
	else
		need_read "$PROC/drain"
		need_write "$PROC/control"
		need_write "$SYS/enabled"
		[ -z "$hz" ] || need_write "$SYS/hz"
		[ -z "$pid$cg" ] || need_write "$SYS/key"
	fi
	if [ -n "$cg" ] && [ -e "$SYS/cgroup" ] && [ $use_sess = 0 ]; then
		need_write "$SYS/cgroup"
		use_cgparam=1
	fi
	if [ ${#run[@]} -gt 0 ]; then
		[ -e "$SYS/cgroup" ] || die "record -- COMMAND needs a module with the cgroup parameter (0.2 or later)"
		if [ $use_sess = 0 ]; then
			need_write "$SYS/cgroup"
			need_write "$SYS/key"
		fi
		cg_resolve /
		[ -f "$CG_MOUNT/cgroup.procs" ] ||
			die "record -- COMMAND needs a cgroup v2 hierarchy, and none is mounted"
		cg=$CG_MOUNT/offsample-record-$$
		cgdir=$cg cgpath=/offsample-record-$$
		use_cgparam=1
	fi

	local outdir
	if [ "$out" = - ]; then
		outdir=${TMPDIR:-/tmp}
	else
		[ ! -d "$out" ] || die "$out is a directory"
		outdir=$(dirname -- "$out")
		[ -d "$outdir" ] || die "cannot write $out: no directory $outdir"
		[ -w "$outdir" ] || die "cannot write $out: permission denied"
	fi
	local raw fin
	trap rec_exit EXIT
	raw=$(mktemp "$outdir/.offsample-record.XXXXXX" 2>/dev/null) || die "cannot create a temporary file in $outdir"
	REC_TMP+=("$raw")
	fin=$(mktemp "$outdir/.offsample-record.XXXXXX" 2>/dev/null) || die "cannot create a temporary file in $outdir"
	REC_TMP+=("$fin")

	REC_OLD_ENABLED=$(read_param enabled)
	REC_OLD_HZ=$(read_param hz)
	REC_OLD_KEY=$(read_param key)
	trap 'rec_signal SIGINT' INT
	trap 'rec_signal SIGTERM' TERM
	trap 'rec_signal SIGHUP' HUP
	[ $use_sess = 1 ] || REC_RESTORE=1
	if [ ${#run[@]} -gt 0 ]; then
		mkdir -- "$cgdir" 2>/dev/null || die "cannot create the cgroup $cgdir for the command"
		REC_CGDIR=$cgdir
		REC_CGHOME=$(awk -F: '$1 == "0" { print $3; exit }' /proc/self/cgroup 2>/dev/null) || REC_CGHOME=
		REC_CGHOME=$CG_MOUNT${REC_CGHOME%/}
	fi

	local g0= pids0= pids1=
	if [ $use_sess = 1 ]; then
		rec_session "$hz" "$pid" "$cgpath" "$((${#run[@]} > 0))"
	else
		# A module without sessions.  Apply: key first, then the rate,
		# then enable; the reset comes last so that the generation
		# holds only samples taken with our settings.
		if [ -n "$pid" ] || [ ${#run[@]} -gt 0 ] || { [ -n "$cg" ] && [ $use_cgparam = 0 ]; }; then
			case ,$REC_OLD_KEY, in
			*,pid,* | *,tid,*) ;;
			*) REC_SET+=(key); write_param key "$REC_OLD_KEY,pid" ;;
			esac
		fi
		if [ $use_cgparam = 1 ]; then
			REC_OLD_CGROUP=$(read_param cgroup)
			REC_SET+=(cgroup)
			local err
			if ! err=$( { printf '%s\n' "$cgpath" > "$SYS/cgroup"; } 2>&1 ); then
				case $err in
				*"No such file"*) die "no such cgroup: $cgpath (the module found no cgroup v2 group at that path)" ;;
				*) die "the module rejected the cgroup \"$cgpath\"${err:+ (${err##*: })}" ;;
				esac
			fi
		fi
		if [ -n "$hz" ] && [ "$hz" != "$REC_OLD_HZ" ]; then
			REC_SET+=(hz)
			write_param hz "$hz"
		fi
		case $REC_OLD_ENABLED in
		Y | y | 1) ;;
		*) REC_SET+=(enabled); write_param enabled 1 ;;
		esac
		if [ -r "$PROC/stats" ]; then
			g0=$(sed -n 's/^generation[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' "$PROC/stats" 2>/dev/null | head -n1) || g0=
		fi
		if [ -n "$cg" ] && [ $use_cgparam = 0 ]; then
			pids0=$(cg_pids "$cgdir") || die "cannot read $cgdir/cgroup.procs"
		fi
	fi
	local start_us end_us left step frac tty=0 dur_us
	[ -t 2 ] && tty=1
	dur_us=$(usec "$dur")
	start_us=${EPOCHREALTIME/./}
	end_us=$((start_us + dur_us))
	[ $use_sess = 1 ] || printf 'reset\n' 2>/dev/null > "$PROC/control" || die "cannot reset $PROC/control"

	local rc=
	if [ ${#run[@]} -gt 0 ]; then
		# In the foreground, in its group (entered before exec, so that
		# all it starts is in the group too); our traps wait for it.
		[ $tty = 0 ] || printf 'offsample: recording %s at %s Hz\n' "$(shquote "${run[@]}")" "${hz:-$REC_OLD_HZ}" >&2
		set +e
		(
			trap - INT TERM HUP EXIT
			echo "$BASHPID" > "$cgdir/cgroup.procs" || exit 126
			# The session is ours, not the command's.
			[ -z "$REC_SFD" ] || exec {REC_SFD}<&-
			exec "${run[@]}"
		)
		rc=$?
		set -e
		dur_us=0
	fi
	while [ -z "$REC_INTERRUPTED" ]; do
		left=$((end_us - ${EPOCHREALTIME/./}))
		[ "$left" -gt 0 ] || break
		if [ $tty = 1 ]; then
			printf '\roffsample: recording at %s Hz, %d s left ' "${hz:-$REC_OLD_HZ}" \
				$(((left + 999999) / 1000000)) >&2
		fi
		step=$left
		[ "$step" -le 1000000 ] || step=1000000
		printf -v frac '%06d' $((step % 1000000))
		sleep "$((step / 1000000)).$frac" &
		REC_SLEEP=$!
		wait "$REC_SLEEP" 2>/dev/null || true
		REC_SLEEP=
	done
	[ $tty = 0 ] || [ ${#run[@]} -gt 0 ] || printf '\r\033[K' >&2

	if [ $use_sess = 1 ]; then
		# The session's window, ended between two ticks; closing the
		# file ends the session.
		cat <&"$REC_SFD" 2>/dev/null > "$raw" || die "cannot read $PROC/session"
		exec {REC_SFD}<&-
		REC_SFD=
	else
		# The drain: the generation we started, atomically ended.
		cat -- "$PROC/drain" 2>/dev/null > "$raw" || die "cannot read $PROC/drain"
	fi
	local elapsed=$((${EPOCHREALTIME/./} - start_us))
	rec_restore
	rec_cgroup_remove
	if [ -n "$cg" ] && [ $use_cgparam = 0 ]; then
		pids1=$(cg_pids "$cgdir") || pids1=
	fi

	local hdrs=() gd filter=()
	hdrs+=(--header "recorded-by: $argv")
	if [ ${#run[@]} -gt 0 ]; then
		hdrs+=(--header "command: $(shquote "${run[@]}")")
		hdrs+=(--header "command-exit: $rc")
		[ "$rc" = 0 ] || warn "$(shquote "${run[@]}") exited with status $rc"
	fi
	[ -z "$pid" ] || hdrs+=(--header "pid: $pid")
	if [ -n "$cg" ]; then
		hdrs+=(--header "cgroup: $cgpath")
		if [ $use_sess = 1 ]; then
			hdrs+=(--header "cgroup-filter: session")
		elif [ $use_cgparam = 1 ]; then
			hdrs+=(--header "cgroup-filter: module")
		else
			hdrs+=(--header "cgroup-filter: processes in cgroup.procs at start or end")
		fi
	fi
	if [ -n "$REC_INTERRUPTED" ] && [ ${#run[@]} -eq 0 ]; then
		hdrs+=(--header "interrupted: $REC_INTERRUPTED after $((elapsed / 1000000)).$(printf '%03d' $((elapsed % 1000000 / 1000))) s")
	fi
	gd=$(lib hdr generation "$raw") || gd=
	[ -n "$gd" ] || die "the drain output has no generation header (not the offsample stacks format)"
	if [ -n "$g0" ] && [ "$gd" != "$((g0 + 1))" ]; then
		warn "another reader drained or reset during the recording (generation $gd, expected $((g0 + 1))): samples went to another reader"
		hdrs+=(--header "warning: another reader drained or reset during the recording; samples are missing")
	fi
	if [ $use_sess = 1 ]; then
		:	# the session counted only what was asked
	elif [ -n "$pid" ]; then
		filter=(--pids "$pid")
	elif [ -n "$cg" ] && [ $use_cgparam = 0 ]; then
		filter=(--pids "$pids0,$pids1")
	fi
	lib filter "${hdrs[@]}" "${filter[@]}" < "$raw" > "$fin" || exit 1
	keep_jit "$fin" "$outdir"
	if [ ${#filter[@]} -gt 0 ] && [ "$(lib hdr samples "$fin" 2>/dev/null || echo 0)" = 0 ]; then
		warn "no samples of ${pid:+process $pid}${cg:+cgroup $cgpath} were recorded"
	fi

	if [ "$out" = - ]; then
		cat -- "$fin" || die "write error"
	else
		mv -f -- "$fin" "$out" 2>/dev/null || die "cannot write $out"
	fi
	if [ $tty = 1 ]; then
		local s r
		if [ "$out" != - ]; then
			s=$(lib hdr samples "$out" 2>/dev/null) || s=?
			r=$(lib hdr records "$out" 2>/dev/null) || r=?
			printf 'offsample: %s samples in %s records written to %s\n' "$s" "$r" "$out" >&2
		fi
	fi
	exit 0
}
