#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The input side of offsample's reading commands (report, collapse,
# flamegraph, diff, pprof, top): which files to read (FILE..., "-", piped
# standard input, or the live /proc/offsample/stacks), the options they
# share (filters, --seconds, --no-symbolize), filtering by
# offsample-select.pl and naming user frames by offsample-symbolize.
# Sourced by tools/offsample (not a command of its own); uses its helpers.
# shellcheck shell=bash

input_files() {	# input_files FILE...: each must be "-" or a readable file
	local f
	for f in "$@"; do
		[ "$f" = - ] && continue
		[ -e "$f" ] || die "$f: no such file"
		[ ! -d "$f" ] || die "$f: is a directory"
		[ -r "$f" ] || die "cannot read $f: permission denied"
	done
}

# symbolize_inputs FILE...: the files to read instead, in INPUTS: those
# with user frames not named yet (PATH+0xOFFSET, format v2) go through
# offsample-symbolize into a temporary file.  FILEs are regular files
# (gather_inputs has copied standard input, pipes and the live /proc
# file).  When the symbolizer is missing or fails, the raw frames are
# kept, with one warning: the output is never lost for it.
INPUTS=() SYMN=0
symbolize_inputs() {
	local f i sym= warned=0 err
	INPUTS=()
	for f in "$@"; do
		SYMN=$((SYMN + 1))
		i=$SYMN
		if lib needsym "$f"; then
			work_dir
			if [ -z "$sym" ] && ! sym=$(symbolizer); then
				sym=
				[ $warned = 1 ] || warn "offsample-symbolize not found; user frames are not named (--no-symbolize skips this)"
				warned=1
			elif run_script "$sym" -- "$f" > "$WORK/sym.$i" 2> "$WORK/sym.err"; then
				[ ! -s "$WORK/sym.err" ] || cat -- "$WORK/sym.err" >&2
				f=$WORK/sym.$i
			else
				err=$(head -n1 -- "$WORK/sym.err" 2>/dev/null) || err=
				err=${err#offsample-symbolize: }
				[ $warned = 1 ] || warn "offsample-symbolize failed${err:+ ($err)}; user frames are not named"
				warned=1
			fi
		fi
		INPUTS+=("$f")
	done
}

# ------------------------------------------------------------ shared options

# The options every reading command takes, set by read_opt.
FILTERS=()	# offsample-select.pl options
WSECONDS=	# --seconds 1, --samples 0; not given: the command's default
NOSYM=0		# --no-symbolize
FORCE=0		# --force
INCIDLE=0	# --include-idle
HIDE_IDLE=0	# set by report and flamegraph: idle kernel threads left out by default

# help_read: the part of a reading command's help about them.
help_read() {
	cat <<'HELP'
Input: FILE is a recorded, drained or snapshot file (several are merged);
"-" is standard input.  Without FILE, standard input when it is a pipe or
a file (`... | offsample report`), else the live /proc/offsample/stacks
(also when piped standard input is empty, as under cron).

Filters (each LIST is comma-separated; a record must match all given):
  --reason LIST          only these wait reasons: io lock sched sleep net
                         ipc fault stopped idle other cpu
  --exclude-reason LIST  all but these
  --include-idle         keep idle kernel threads (reason idle), which
                         report and flamegraph leave out by default unless
                         a --reason, --exclude-reason, --comm, --pid, --tid
                         or --state filter is given (they are most of a
                         whole-host profile); the output says how many
                         samples were left out
  --comm LIST            only these process names (exact)
  --pid LIST, --tid LIST only these processes / threads (data recorded
                         with key=pid or key=tid)
  --cgroup PATH          only this cgroup v2 group and those below it
  --state LIST           only these states: R S D I P T t F
  --user-only            user frames only (kernel frames dropped)
  --kernel-only          kernel frames only (user frames dropped)
Weights:
  --seconds              weigh by thread-seconds (samples / hz of each
                         file), so that files recorded at different rates
                         add up: the default of flamegraph and of the
                         diff graph
  --samples              weigh by samples: the default of report,
                         collapse and diff --folded; inputs of different
                         rates get a warning
  --no-symbolize         leave user frames not named yet as PATH+0xOFFSET
                         (default: named by offsample-symbolize)
  --force                read a file cut short or damaged (fewer records or
                         samples than its header says, a last line cut):
                         a warning instead of exit 1
HELP
}

# is_idlist LIST: "812" or "812,813"
is_idlist() {
	case $1 in '' | *[!0-9,]* | ,* | *, | *,,*) return 1 ;; esac
}

# read_opt ARGS...: when $1 is one of the shared options, take it (and
# its value), set SHIFTN and return 0; else return 1.
read_opt() {
	local o=${1%%=*}
	case $o in
	--reason | --exclude-reason | --comm | --pid | --tid | --cgroup | --state)
		case $1 in
		--*=*) ;;
		*) [ $# -ge 2 ] && [ -n "$2" ] && [ "${2#-}" = "$2" ] ||
			usage_error "$o needs a value${2:+, not \"$2\"}" ;;
		esac
		optval "$o" "$@"
		[ -n "$OPTVAL" ] || usage_error "$o needs a value"
		case $o in
		--pid | --tid) is_idlist "$OPTVAL" ||
			usage_error "$o needs ids (812 or 812,813), not \"$OPTVAL\"" ;;
		esac
		FILTERS+=("$o=$OPTVAL") ;;
	--user-only | --kernel-only) FILTERS+=("$1"); SHIFTN=1 ;;
	--seconds) WSECONDS=1; SHIFTN=1 ;;
	--samples) WSECONDS=0; SHIFTN=1 ;;
	--no-symbolize) NOSYM=1; SHIFTN=1 ;;
	--force) FORCE=1; SHIFTN=1 ;;
	--include-idle) INCIDLE=1; SHIFTN=1 ;;
	*) return 1 ;;
	esac
	case " ${FILTERS[*]-} " in
	*" --user-only "*) case " ${FILTERS[*]} " in *" --kernel-only "*)
		usage_error "--user-only and --kernel-only exclude each other" ;; esac ;;
	esac
	return 0
}

select_lib() {
	local l
	l=$(find_helper offsample-select.pl) ||
		die "helper offsample-select.pl not found in $LIBDIR"
	OFFSAMPLE_PROG="offsample${CMD:+ $CMD}" perl -- "$l" "$@"
}

# check_inputs LABEL FILE ...: a file cut short or damaged stops the
# command (exit 1), named by its LABEL; with --force (FORCE=1) a warning.
check_inputs() {
	local force=()
	[ "$FORCE" = 0 ] || force=(--force)
	lib check ${force[@]+"${force[@]}"} "$@" || exit 1
}

# stdin_has_data: standard input is a pipe or a regular file (not a
# terminal, /dev/null or closed).
stdin_has_data() {
	[ -p /dev/stdin ] || [ -f /dev/stdin ]
}

# gather_inputs TAG FILE...: read the input once, filter it, name its
# user frames.  Sets RAW (the files as read, filtered; what pprof makes
# locations of), INPUTS (the same, symbolized unless --no-symbolize) and
# LABELS (what the user named, for headers).  TAG keeps the temporary
# files of two calls apart (diff).  With no FILE, the default input
# (help_read).
RAW=() LABELS=()
gather_inputs() {
	local tag=$1 f i=0 files=()
	shift
	files=("$@")
	work_dir
	# Bad filter values are usage errors, before any input is read.
	if [ ${#FILTERS[@]} -gt 0 ]; then
		select_lib "${FILTERS[@]}" --check || exit
	fi
	if [ ${#files[@]} -eq 0 ]; then
		if stdin_has_data; then
			cat > "$WORK/$tag.stdin" 2>/dev/null || die "cannot read standard input"
		fi
		if [ -s "$WORK/$tag.stdin" ] 2>/dev/null; then
			files=("$WORK/$tag.stdin")
			LABELS=(stdin)
		else
			need_module
			need_read "$PROC/stacks"
			files=("$PROC/stacks")
			LABELS=("$PROC/stacks")
		fi
	else
		input_files "${files[@]}"
		LABELS=()
		for f in "${files[@]}"; do
			if [ "$f" = - ]; then LABELS+=(stdin); else LABELS+=("$f"); fi
		done
	fi
	RAW=()
	# Standard input, the live /proc file and pipes (<(...)) can be read
	# only once: copied first.
	for f in "${files[@]}"; do
		i=$((i + 1))
		if [ "$f" = - ] || [ ! -f "$f" ] || [ "${f#"$PROC"/}" != "$f" ]; then
			cat -- "$f" > "$WORK/$tag.in.$i" 2>/dev/null ||
				die "cannot read ${f/#-/standard input}"
			f=$WORK/$tag.in.$i
		fi
		RAW+=("$f")
	done
	# A file cut short or damaged stops here (--force: a warning), named
	# as the user named it; the helpers below need not check again.
	local chk=() j
	for j in "${!RAW[@]}"; do chk+=("${LABELS[$j]}" "${RAW[$j]}"); done
	check_inputs "${chk[@]}"
	export OFFSAMPLE_CHECKED=1
	local hide=() lab=() rc=0
	hide_idle && hide=(--hide-idle)
	for f in "${LABELS[@]}"; do lab+=(--label "$f"); done
	if [ ${#FILTERS[@]} -gt 0 ]; then
		select_lib "${FILTERS[@]}" ${hide[@]+"${hide[@]}"} "${lab[@]}" \
			-o "$WORK/$tag.sel" -- "${RAW[@]}" || rc=$?
		# 3: nothing but idle kernel threads; shown after all.
		if [ $rc = 3 ]; then
			rc=0
			select_lib "${FILTERS[@]}" "${lab[@]}" -o "$WORK/$tag.sel" -- "${RAW[@]}" || rc=$?
		fi
		[ $rc = 0 ] || exit 1
		RAW=("$WORK/$tag.sel")
	elif [ ${#hide[@]} -gt 0 ]; then
		# Idle kernel threads left out by default.  Input this pass
		# cannot use (empty, not ours), or holding nothing but idle
		# threads (3), goes to the command as it is, which says what
		# is wrong with it in its own words.
		if select_lib --hide-idle "${lab[@]}" -o "$WORK/$tag.sel" -- "${RAW[@]}" \
		    2> "$WORK/$tag.selerr"; then
			cat -- "$WORK/$tag.selerr" >&2
			RAW=("$WORK/$tag.sel")
		fi
	fi
	if [ $NOSYM = 0 ]; then
		symbolize_inputs "${RAW[@]}"
	else
		INPUTS=("${RAW[@]}")
	fi
}

# hide_idle: leave idle kernel threads out of this command's input?  Yes
# for report and flamegraph (HIDE_IDLE=1) unless --include-idle or a
# filter that chooses reasons, processes, threads or states was given.
hide_idle() {
	local f
	[ "$HIDE_IDLE" = 1 ] && [ "$INCIDLE" = 0 ] || return 1
	for f in ${FILTERS[@]+"${FILTERS[@]}"}; do
		case $f in
		--reason=* | --exclude-reason=* | --comm=* | --pid=* | --tid=* | --state=*) return 1 ;;
		esac
	done
	return 0
}

# ------------------------------------------------------------ collapse

# Options of stackcollapse-offsample that take no value (the frames of a
# folded line).
is_collapse_opt() {
	case $1 in
	--no-reason | --no-comm | --tname | --wobj | --no-wobj | --no-cgroup | \
	--dso | --no-dso | --sep | --kernel-suffix | --no-kernel-suffix | \
	--offsets | --no-offsets | --modules | --no-modules) return 0 ;;
	esac
	return 1
}

# collapse_opt ARGS...: a frame option of collapse and flamegraph (one of
# is_collapse_opt, or --show LIST) into COPTS; sets SHIFTN, returns 1 if
# $1 is none of them.
COPTS=()
collapse_opt() {
	local x
	if is_collapse_opt "$1"; then
		COPTS+=("$1")
		SHIFTN=1
		return 0
	fi
	case $1 in
	--show | --show=*) ;;
	*) return 1 ;;
	esac
	optval --show "$@"
	[ -n "$OPTVAL" ] || usage_error "--show needs a list of frames"
	for x in ${OPTVAL//,/ }; do
		case $x in
		pid | tid | tname | cgroup | wobj | dso) COPTS+=("--$x") ;;
		*) usage_error "--show takes pid, tid, tname, cgroup, wobj or dso, not \"$x\"" ;;
		esac
	done
}

# check_by BY: the --by of critical and flamegraph --critical is both,
# waits or gapp (offsample critical --help), else a usage error.
check_by() {
	case $1 in
	both | waits | gapp) ;;
	*) usage_error "--by needs both, waits or gapp, not $1" ;;
	esac
}

# crit_weights BY: each of INPUTS with its records' critical column the
# weight BY asks for (offsample-lib.pl waitcrit); gapp: the column as is.
crit_weights() {
	local i
	[ "$1" != gapp ] || return 0
	for i in "${!INPUTS[@]}"; do
		lib waitcrit --by "$1" "${INPUTS[$i]}" > "$WORK/crit.in.$i" || exit 1
		INPUTS[i]=$WORK/crit.in.$i
	done
}
