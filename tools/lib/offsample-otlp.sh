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
offset (a backend can symbolize them) and the function
offsample-symbolize names.

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
	local out=- json=0 send=0 endpoint= timeout= files=() names=() f
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
	gather_inputs o ${files[@]+"${files[@]}"}
	if [ $NOSYM = 0 ]; then
		for f in "${INPUTS[@]}"; do names+=(--names "$f"); done
	fi
	local v
	v=$(show_version) && v=${v#offsample }
	perl_helper offsample-otlp.pl ${v:+--version "$v"} "${opts[@]}" ${names[@]+"${names[@]}"} -- "${RAW[@]}"
}
