#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offsample otlp: OpenTelemetry profiles (OTLP), to a file or sent to an
# OpenTelemetry Collector.
# Sourced by tools/offsample (not a command of its own) with
# offsample-input.sh; uses their helpers.
# shellcheck shell=bash

help_otlp() {
	cat <<'EOF'
Usage: offsample otlp [-o OUT] [--json] [FILTERS] [--no-symbolize] [FILE...]
       offsample otlp --send [--endpoint URL] [--header K=V]... [--json]
                      [--timeout SECONDS] [FILTERS] [FILE...]
       offsample otlp --send --spool SPOOL [--spool-max-mb N]
                      [--spool-max-age HOURS] [...] [WINDOW|DIR...]

Write the stacks as OpenTelemetry profiles (OTLP profiles, the
v1development signal: ProfilesData, protobuf or with --json OTLP/JSON),
or send them to an OTLP/HTTP endpoint (an OpenTelemetry Collector with
its service.profilesSupport feature gate) as one gzipped request.

One resource per process (host.name, process.executable.name,
process.pid where the key has it, service.name, and container.id and
k8s.pod.uid where the cgroup path names them); per resource a profile of
off-CPU time (off_cpu/nanoseconds) and one of on-CPU time
(cpu/nanoseconds) when threads were sampled running.  Each sample's value
is its thread time (samples x 1e9/hz).  Samples carry thread.id and
thread.name where keyed, offsample.reason, offsample.state,
offsample.wait_object and offsample.cgroup.  Kernel frames get the
mapping [kernel.kallsyms] (or [MODULE]), user frames their file and file
offset (a backend can symbolize them; the file's mapping has
process.executable.build_id.gnu when the symbolizer found the file still
the one sampled) and the function offsample-symbolize names.

  -o, --output OUT     write to OUT ("-": standard output, the default;
                       protobuf is refused on a terminal)
  --json               OTLP/JSON instead of protobuf
  --send               send instead of writing (exit 1 when the endpoint
                       does not accept it)
  --endpoint URL       where to send: the profiles URL, or a base URL to
                       which /v1development/profiles is added (default:
                       OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT, else
                       OTEL_EXPORTER_OTLP_ENDPOINT + /v1development/profiles,
                       else http://localhost:4318/v1development/profiles)
  --header K=V         an HTTP header (repeatable; also
                       OTEL_EXPORTER_OTLP_HEADERS and
                       OTEL_EXPORTER_OTLP_PROFILES_HEADERS: K=V,K2=V2)
  --timeout SECONDS    give up after SECONDS (default 10;
                       OTEL_EXPORTER_OTLP_TIMEOUT in milliseconds)
  --spool SPOOL        continuous mode (cron, systemd): each WINDOW (a
                       drained file; DIR: the snapshots in it not spooled
                       before) becomes a request in the directory SPOOL,
                       then SPOOL is sent oldest first, each request
                       removed once the endpoint took it.  When the
                       endpoint fails the rest waits for a later run (not
                       asked again for 60 s, doubling up to an hour); a
                       reboot keeps SPOOL.  Exit 1 while windows wait.
  --spool-max-mb N     at most N MiB of requests (default 256): beyond,
                       the oldest are dropped, said and counted in
                       SPOOL/dropped
  --spool-max-age H    requests older than H hours are dropped (default
                       168, a week; 0: no limit, as for --spool-max-mb 0)

EOF
	help_read
	cat <<'EOF'

Examples:
  offsample otlp --json -o rec.json rec.stacks
  offsample otlp --send --endpoint http://collector:4318 rec.stacks
  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 offsample otlp --send rec.stacks
EOF
}

# otlp_headers LIST: K=V,K2=V2 (values URL-encoded, as the OTLP exporter
# variables have them) as --header options in HDRS.
otlp_headers() {
	local IFS=, kv
	for kv in $1; do
		kv=$(printf '%s' "$kv" | perl -pe 's/%([0-9A-Fa-f]{2})/chr(hex $1)/ge; s/^\s+|\s+$//g')
		case $kv in *=*) HDRS+=(--header "$kv") ;; '') ;; *) usage_error "bad OTLP header \"$kv\" (K=V expected)" ;; esac
	done
}

cmd_otlp() {
	local out=- json=0 send=0 endpoint= timeout= files=() names=() f spool= smax=256 sage=168
	HDRS=()
	while [ $# -gt 0 ]; do
		if read_opt "$@"; then shift "$SHIFTN"; continue; fi
		case $1 in
		-h | --help) help_otlp; exit 0 ;;
		-o | -o?* | --output | --output=*) optval -o "$@"; out=$OPTVAL; shift "$SHIFTN" ;;
		--json) json=1; shift ;;
		--send) send=1; shift ;;
		--endpoint | --endpoint=*) optval --endpoint "$@"; endpoint=$OPTVAL; shift "$SHIFTN" ;;
		--header | --header=*) optval --header "$@"
			case $OPTVAL in ?*=*) HDRS+=(--header "$OPTVAL") ;; *) usage_error "--header needs K=V, not \"$OPTVAL\"" ;; esac
			shift "$SHIFTN" ;;
		--spool | --spool=*) optval --spool "$@"; spool=$OPTVAL; shift "$SHIFTN"
			[ -n "$spool" ] || usage_error "--spool needs a directory" ;;
		--spool-max-mb | --spool-max-mb=*) optval --spool-max-mb "$@"; smax=$OPTVAL; shift "$SHIFTN"
			case $smax in '' | *[!0-9]*) usage_error "--spool-max-mb needs a number, not \"$smax\"" ;; esac ;;
		--spool-max-age | --spool-max-age=*) optval --spool-max-age "$@"; sage=$OPTVAL; shift "$SHIFTN"
			case $sage in '' | *[!0-9]*) usage_error "--spool-max-age needs hours, not \"$sage\"" ;; esac ;;
		--timeout | --timeout=*) optval --timeout "$@"; timeout=$OPTVAL; shift "$SHIFTN"
			case $timeout in '' | *[!0-9]* | 0) usage_error "--timeout needs whole seconds, not \"$timeout\"" ;; esac ;;
		--) shift; files+=("$@"); break ;;
		-) files+=(-); shift ;;
		-?*) usage_error "unknown option $1" ;;
		*) files+=("$1"); shift ;;
		esac
	done
	[ -n "$out" ] || usage_error "-o needs a file name"
	local opts=()
	[ $json = 0 ] || opts+=(--json)
	if [ $send = 1 ]; then
		[ "$out" = - ] || usage_error "--send and -o exclude each other"
		# As the OTLP exporters read them: the signal's own variable is
		# the URL, the general one (and --endpoint unless it is the
		# profiles URL already) a base the signal's path is added to.
		if [ -n "$endpoint" ]; then
			case $endpoint in */v1development/profiles) ;; *) endpoint=${endpoint%/}/v1development/profiles ;; esac
		elif [ -n "${OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT:-}" ]; then
			endpoint=$OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT
		else
			endpoint=${OTEL_EXPORTER_OTLP_ENDPOINT:-http://localhost:4318}
			endpoint=${endpoint%/}/v1development/profiles
		fi
		case $endpoint in
		http://?* | https://?*) ;;
		*) usage_error "the endpoint needs an http:// or https:// URL, not \"$endpoint\"" ;;
		esac
		if [ -z "$timeout" ] && [ -n "${OTEL_EXPORTER_OTLP_TIMEOUT:-}" ]; then
			case $OTEL_EXPORTER_OTLP_TIMEOUT in
			'' | *[!0-9]*) usage_error "OTEL_EXPORTER_OTLP_TIMEOUT needs milliseconds, not \"$OTEL_EXPORTER_OTLP_TIMEOUT\"" ;;
			esac
			timeout=$(( (OTEL_EXPORTER_OTLP_TIMEOUT + 999) / 1000 ))
		fi
		otlp_headers "${OTEL_EXPORTER_OTLP_HEADERS:-}"
		otlp_headers "${OTEL_EXPORTER_OTLP_PROFILES_HEADERS:-}"
		opts+=(--endpoint "$endpoint" ${timeout:+--timeout "$timeout"} ${HDRS[@]+"${HDRS[@]}"})
	else
		[ ${#HDRS[@]} = 0 ] && [ -z "$endpoint" ] && [ -z "$timeout" ] ||
			usage_error "--endpoint, --header and --timeout go with --send"
		if [ "$out" = - ] && [ $json = 0 ] && [ -t 1 ]; then
			usage_error "will not write a binary profile to a terminal; use -o FILE, --json or a redirection"
		fi
		opts+=(-o "$out")
	fi
	if [ -n "$spool" ]; then
		[ $send = 1 ] || usage_error "--spool goes with --send"
		[ $json = 0 ] || usage_error "--spool sends protobuf; --json does not apply"
		otlp_spool "$spool" "$smax" "$sage" "${opts[@]}" -- ${files[@]+"${files[@]}"}
		return
	fi
	gather_inputs o ${files[@]+"${files[@]}"}
	if [ $NOSYM = 0 ]; then
		for f in "${INPUTS[@]}"; do names+=(--names "$f"); done
	fi
	local v
	v=$(show_version) && v=${v#offsample }
	perl_helper offsample-otlp.pl ${v:+--version "$v"} "${opts[@]}" ${names[@]+"${names[@]}"} -- "${RAW[@]}"
}

# otlp_spool SPOOL MAX_MB MAX_HOURS SEND_OPTIONS... -- WINDOW|DIR...:
# each window into SPOOL as a request (NNNNNNNNNN.pb, made beside and
# renamed), then SPOOL flushed (offsample-otlp.pl --flush).  A DIR stands
# for its snapshots (offsample-*.stacks) whose names sort after the last
# one spooled from it (SPOOL/queued.ID, ID a checksum of the DIR's path).
# One run at a time (flock on SPOOL/.lock).
otlp_spool() {
	local dir=$1 max=$2 age=$3 send=() ws=() marks=() w d n i seq v names=() mark last
	shift 3
	while [ "$1" != -- ]; do send+=("$1"); shift; done
	shift
	[ $# -gt 0 ] || usage_error "--spool needs WINDOW files or snapshot directories"
	mkdir -p -m 0700 -- "$dir" 2>/dev/null && [ -d "$dir" ] && [ -w "$dir" ] || die "cannot write in $dir"
	exec 9> "$dir/.lock" || die "cannot write in $dir"
	flock -w 60 9 || die "$dir is busy (another offsample otlp --spool for a minute)"
	v=$(show_version) && v=${v#offsample }
	for w in "$@"; do
		[ "$w" != - ] || usage_error "WINDOWs are files (standard input is not a window)"
		if [ -d "$w" ]; then
			mark=$dir/queued.$(printf '%s' "$(cd -- "$w" && pwd -P)" | cksum | cut -d' ' -f1)
			last=$(cat -- "$mark" 2>/dev/null) || last=
			for d in "$w"/offsample-*.stacks; do
				[ -f "$d" ] || continue
				[ -n "$last" ] && ! [[ ${d##*/} > $last ]] && continue
				ws+=("$d") marks+=("$mark")
			done
		elif [ -f "$w" ]; then
			ws+=("$w") marks+=("")
		else
			die "$w: no such window or directory"
		fi
	done
	for i in ${ws[@]+"${!ws[@]}"}; do
		w=${ws[i]}
		seq=$(cat -- "$dir/seq" 2>/dev/null) || seq=0
		seq=$((10#$seq + 1))
		gather_inputs "s$seq" "$w"
		names=()
		if [ $NOSYM = 0 ]; then
			for f in "${INPUTS[@]}"; do names+=(--names "$f"); done
		fi
		n=$(printf '%010d' "$seq")
		perl_helper offsample-otlp.pl ${v:+--version "$v"} -o "$dir/.$n.pb" ${names[@]+"${names[@]}"} -- "${RAW[@]}" ||
			{ rm -f -- "$dir/.$n.pb"; exit 1; }
		mv -f -- "$dir/.$n.pb" "$dir/$n.pb" && printf '%s\n' "$seq" > "$dir/seq" || die "cannot write in $dir"
		[ -z "${marks[i]}" ] || printf '%s\n' "${w##*/}" > "${marks[i]}" || die "cannot write in $dir"
	done
	perl_helper offsample-otlp.pl --flush "$dir" --max-bytes $((max * 1048576)) --max-age $((age * 3600)) "${send[@]}"
}
