#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# offsample otlp: OpenTelemetry profiles sent to a real OpenTelemetry
# Collector (v0.161.0, built by tests/lib/deps.sh otelcol from
# tests/otelcol: OTLP/HTTP receiver, file exporter).  The oracle is what
# the collector decoded: its file exporter's JSON, folded again by
# tests/lib/otlp-fold.pl, must be offsample collapse's folded stacks of
# the same input, sample for sample; the attributes are read from it.

load tools-common
load symbolize-common

OTELCOL=$ROOT/build/deps/otelcol/otelcol
FOLD=$ROOT/tests/lib/otlp-fold.pl

# start_collector DIR [PORT]: the collector on 127.0.0.1:PORT (a free
# one when not given), its file exporter writing DIR/out.json; its URL in
# DIR/url, its pid in DIR/col.pid.
start_collector() {
	local d=$1 port=${2:-} i
	for i in 1 2 3 4 5; do
		[ -n "${2:-}" ] || port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport')
		cat > "$d/cfg.yaml" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$port
exporters:
  file:
    path: $d/out.json
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [file]
EOF
		"$OTELCOL" --config="file:$d/cfg.yaml" --feature-gates=service.profilesSupport > "$d/col.log" 2>&1 3>&- &
		echo $! > "$d/col.pid"
		for _ in $(seq 100); do
			grep -q 'Everything is ready' "$d/col.log" && { echo "http://127.0.0.1:$port" > "$d/url"; return 0; }
			kill -0 "$(cat "$d/col.pid")" 2>/dev/null || break
			sleep 0.1
		done
		kill "$(cat "$d/col.pid")" 2>/dev/null || true
		wait "$(cat "$d/col.pid")" 2>/dev/null || true
		sleep 0.5
	done
	echo "the collector did not start:" >&2
	cat "$d/col.log" >&2
	return 1
}

setup_file() {
	[ -x "$OTELCOL" ] || return 0
	start_collector "$BATS_FILE_TMPDIR"
}

teardown_file() {
	local p
	p=$(cat "$BATS_FILE_TMPDIR/col.pid" 2>/dev/null) || return 0
	kill "$p" 2>/dev/null || true
}

setup() {
	T=$BATS_TEST_TMPDIR
	[ -x "$OTELCOL" ] || fail "no collector at $OTELCOL (tests/lib/deps.sh otelcol builds it)"
	URL=$(cat "$BATS_FILE_TMPDIR/url")
	OUT=$BATS_FILE_TMPDIR/out.json
	export OFFSAMPLE_PROC=$T/no-module OFFSAMPLE_SYS=$T/no-sys
	unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT OTEL_EXPORTER_OTLP_HEADERS \
		OTEL_EXPORTER_OTLP_PROFILES_HEADERS OTEL_EXPORTER_OTLP_TIMEOUT OFFSAMPLE_OTLP_CLIENT
	LISTENER_PID=
}

teardown() {
	[ -z "$LISTENER_PID" ] || kill "$LISTENER_PID" 2>/dev/null || true
}

# collapsed FILE...: offsample collapse of FILE, sorted, without the
# symbolizer's marks of files it could not read ("app+0x1f00 (missing)"):
# a profile's location has its file and address, not the mark.
collapsed() {
	"$OFFS" collapse "$@" | sed -E 's/ \((missing|replaced)\)(;| [0-9.]+$)/\2/g' | sort
}

# http_server LOG STATUS: an HTTP server on 127.0.0.1 that logs each
# request's headers to LOG, then "request", and answers STATUS (200: no
# body; else "busy"); its URL in HURL, its pid in LISTENER_PID.
http_server() {
	: > "$1"
	perl -MIO::Socket::INET -e '
		my ($logf, $status) = @ARGV;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 5, ReuseAddr => 1) or die;
		open(my $l, ">>", $logf) or die; $l->autoflush(1); print $l "port ", $s->sockport, "\n";
		while (my $c = $s->accept) {
			my $len = 0;
			while (my $h = <$c>) { last if $h =~ /^\r?\n\z/; print $l $h; $len = $1 if $h =~ /^content-length:\s*(\d+)/i }
			read($c, my $b, $len); print $l "request\n";
			print $c $status == 200 ? "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n"
				: "HTTP/1.1 $status Service Unavailable\r\nContent-Length: 4\r\n", "Connection: close\r\n\r\n",
				$status == 200 ? "" : "busy";
			close $c }' "$1" "$2" 3>&- &
	LISTENER_PID=$!
	for _ in $(seq 50); do grep -q '^port ' "$1" && break; sleep 0.1; done
	HURL=http://127.0.0.1:$(sed -n 's/^port //p' "$1")
}

# received FILE: what the collector wrote for the request sent last
# (its file exporter writes one line a request) into FILE.
received() {
	local n=$(( $(cat "$BATS_FILE_TMPDIR/nsent" 2>/dev/null || echo 0) + 1 )) i
	echo "$n" > "$BATS_FILE_TMPDIR/nsent"
	for i in $(seq 100); do
		[ "$(tr -d '\0' < "$OUT" 2>/dev/null | grep -c '^{')" -ge "$n" ] && break
		sleep 0.1
	done
	tr -d '\0' < "$OUT" | grep '^{' | sed -n "${n}p" > "$1"
	[ -s "$1" ] || { echo "the collector wrote nothing for request $n" >&2; return 1; }
}

@test "otlp --send: the collector decodes every sample of every fixture, and folds them as offsample collapse does" {
	local f n=0
	for f in "$SFIX"/workload-drain-6.1.0.txt "$SFIX"/workload-drain-v2-6.12.117.txt \
		"$SFIX"/oncpu-crit-v3-6.12.117.txt "$SFIX"/blockers-drain-6.12.117.txt "$SMALL" "$V2S" "$V2" \
		"$SFIX"/python-drain-v4-6.1.0.txt; do
		run --separate-stderr "$OFFS" otlp --send --endpoint "$URL" "$f"
		assert_success
		assert_equal "$stderr" ""
		assert_output ""
		received "$T/got.json"
		assert_equal "$(perl "$FOLD" "$T/got.json")" "$(collapsed "$f")"
		n=$((n + 1))
	done
	# Thread time: each sample's value is count x 1e9/hz.
	"$OFFS" otlp --send --endpoint "$URL" "$SFIX/oncpu-spin-v3-6.12.117.txt"
	received "$T/got.json"
	assert_equal "$(perl "$FOLD" --seconds "$T/got.json")" "$(collapsed --seconds "$SFIX/oncpu-spin-v3-6.12.117.txt")"
}

@test "otlp: resources per process with host, pid, service, container and pod from the cgroup; samples with thread and wait attributes; off-CPU and on-CPU profiles" {
	# v2-small with its cgroups replaced by a container runtime's, a pod's
	# and a user unit's.
	sed -e 's|/system.slice/app.service$|/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope|' \
		-e 's|/system.slice/cron.service$|/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_4798_8a9b_0c1d2e3f4a5b.slice/cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope|' \
		"$V2S" > "$T/in.stacks"
	"$ROOT/tests/lib/restamp-stacks" "$T/in.stacks"
	run -0 "$OFFS" otlp --send --endpoint "$URL" "$T/in.stacks"
	received "$T/got.json"
	# The collector's view, flattened: resource attributes, then each
	# profile's type and period, and per sample its attributes.
	perl -MJSON::PP -e '
		my $j = decode_json(do { local $/; <STDIN> });
		my $d = $j->{dictionary}; my @s = @{$d->{stringTable}};
		my $v = sub { my $x = $_[0]; $x->{stringValue} // (defined $x->{stringValueStrindex} ? $s[$x->{stringValueStrindex}] : $x->{intValue}) };
		my $kv = sub { ($_[0]{key} // $s[$_[0]{keyStrindex}]) . "=" . $v->($_[0]{value}) };
		for my $rp (@{$j->{resourceProfiles}}) {
			print "resource ", join(" ", map { $kv->($_) } @{$rp->{resource}{attributes}}), "\n";
			my $sc = $rp->{scopeProfiles}[0];
			print " scope $sc->{scope}{name}\n";
			for my $p (@{$sc->{profiles}}) {
				print " profile $s[$p->{sampleType}{typeStrindex}]/$s[$p->{sampleType}{unitStrindex}] period $p->{period} $s[$p->{periodType}{typeStrindex}] time $p->{timeUnixNano} duration $p->{durationNano}\n";
				for my $x (@{$p->{samples}}) {
					print "  sample @{$x->{values}} ", join(" ", map { $kv->($d->{attributeTable}[$_]) } @{$x->{attributeIndices}}), "\n";
				}
			}
		}' < "$T/got.json" > "$T/view"
	run -0 cat "$T/view"
	local c=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	local k=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
	assert_line "resource host.name=v2small process.executable.name=app process.pid=100 service.name=unknown_service:app container.id=$c"
	assert_line " scope offsample"
	assert_line " profile off_cpu/nanoseconds period 100000000 wall time 1700000200000000000 duration 10000000000"
	assert_line "  sample 4000000000 thread.id=101 thread.name=app-worker offsample.reason=lock offsample.state=S offsample.wait_object=futex(0x5581a0c0) offsample.cgroup=/system.slice/docker-$c.scope"
	assert_line "  sample 2500000000 thread.id=103 thread.name=app-io offsample.reason=io offsample.state=D offsample.wait_object=pread64(/var/lib/app/a;b.db) offsample.cgroup=/system.slice/docker-$c.scope"
	assert_line "resource host.name=v2small process.executable.name=env process.pid=200 service.name=unknown_service:env container.id=$k k8s.pod.uid=1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b"
	assert_line "  sample 300000000 thread.id=201 thread.name=env-t offsample.reason=sleep offsample.state=S offsample.cgroup=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_4798_8a9b_0c1d2e3f4a5b.slice/cri-containerd-$k.scope"
	assert_line "resource host.name=v2small process.executable.name=kworker/u4:2 service.name=unknown_service:kworker/u4:2"
	# A systemd unit names the service (not a user manager's own unit).
	sed -n '1,16p' "$V2S" > "$T/u.stacks"
	sed -n '17p' "$V2S" | sed 's|/system.slice/app.service$|/user.slice/user-1000.slice/user@1000.service/app.slice/web.service|' >> "$T/u.stacks"
	"$ROOT/tests/lib/restamp-stacks" "$T/u.stacks"
	"$OFFS" otlp --send --endpoint "$URL" "$T/u.stacks"
	received "$T/u.json"
	run -0 perl "$FOLD" "$T/u.json"
	grep -q '"stringValue":"web"\|"web"' "$T/u.json"
	# On-CPU samples go to a cpu/nanoseconds profile of their process.
	"$OFFS" otlp --send --endpoint "$URL" "$SFIX/oncpu-spin-v3-6.12.117.txt"
	received "$T/cpu.json"
	perl -MJSON::PP -e '
		my $j = decode_json(do { local $/; <STDIN> }); my @s = @{$j->{dictionary}{stringTable}}; my %t;
		for my $rp (@{$j->{resourceProfiles}}) { $t{$s[$_->{sampleType}{typeStrindex}]}++ for @{$rp->{scopeProfiles}[0]{profiles}} }
		print join(" ", map { "$_" } sort keys %t), "\n"' < "$T/cpu.json" > "$T/types"
	assert_equal "$(cat "$T/types")" "cpu off_cpu"
}

@test "otlp: user frames' mappings carry process.executable.build_id.gnu (readelf's) when the file is the one sampled" {
	local id
	printf 'int main(void) { return 0; }\n' > "$T/p.c"
	gcc -O1 -Wl,--build-id -o "$T/prog" "$T/p.c"
	id=$(readelf -nW "$T/prog" | sed -n 's/.*Build ID: *//p')
	[ -n "$id" ]
	{
		printf '%s\n' '# offsample stacks v3' '# source: drain' '# hostname: bidhost' '# start: 1700000000.000' \
			'# duration: 1.000' '# hz: 10' '# samples: 3' '# records: 1' '# key: comm,pid' \
			'# columns: count reason state pid tid comm tname kstack ustack wobj cgroup critical'
		fileline "$T/prog"
		printf '3\tsleep\tS\t42\t-\tprog\t-\tschedule+0x5a/0xd0\t%s+0x1040;%s+0x1100\t-\t/\t0.000\n' "$T/prog" "$T/prog"
	} > "$T/in.stacks"
	mapping_view() {
		perl -MJSON::PP -e '
			my $j = decode_json(do { local $/; <STDIN> }); my $d = $j->{dictionary}; my @s = @{$d->{stringTable}};
			for my $m (@{$d->{mappingTable}}) {
				next unless defined $m->{filenameStrindex};
				my @a = map { my $a = $d->{attributeTable}[$_]; $s[$a->{keyStrindex}] . "=" . $a->{value}{stringValue} } @{$m->{attributeIndices} // []};
				print join(" ", $s[$m->{filenameStrindex}], @a), "\n";
			}' < "$1"
	}
	"$OFFS" otlp --send --endpoint "$URL" "$T/in.stacks"
	received "$T/got.json"
	run -0 mapping_view "$T/got.json"
	assert_line "[kernel.kallsyms]"
	assert_line "$T/prog process.executable.build_id.gnu=$id"
	# Replaced since the recording: the file there is not the one sampled.
	touch -d '2001-02-03 04:05:06' "$T/prog"
	"$OFFS" otlp --send --endpoint "$URL" "$T/in.stacks"
	received "$T/got2.json"
	run -0 mapping_view "$T/got2.json"
	assert_line "$T/prog"
	refute_output --partial "$id"
}

@test "otlp --json is the same request: the collector takes it as application/json, and -o writes the bytes it takes" {
	"$OFFS" otlp --send --endpoint "$URL" "$V2S"
	received "$T/pb.json"
	run -0 "$OFFS" otlp --send --json --endpoint "$URL" "$V2S"
	received "$T/js.json"
	assert_equal "$(perl "$FOLD" "$T/js.json")" "$(perl "$FOLD" "$T/pb.json")"
	# Written to a file: protobuf and JSON, posted as they are.
	run -0 "$OFFS" otlp -o "$T/p.pb" "$V2S"
	run -0 "$OFFS" otlp --json -o "$T/p.json" "$V2S"
	perl "$FOLD" "$T/p.json" > "$T/own.fold"
	assert_equal "$(cat "$T/own.fold")" "$(perl "$FOLD" "$T/pb.json")"
	run -0 curl -sS -f -H 'Content-Type: application/x-protobuf' --data-binary "@$T/p.pb" "$URL/v1development/profiles"
	received "$T/file.json"
	assert_equal "$(perl "$FOLD" "$T/file.json")" "$(cat "$T/own.fold")"
	# Binary output is not written to a terminal (script(1) gives one).
	run script -qec "$OFFS otlp $V2S" /dev/null
	assert_output --partial "will not write a binary profile to a terminal"
}

@test "otlp --send: HTTP::Tiny when asked (or without curl), the endpoint variables, headers" {
	OFFSAMPLE_OTLP_CLIENT=perl run -0 "$OFFS" otlp --send --endpoint "$URL" "$V2S"
	received "$T/t.json"
	assert_equal "$(perl "$FOLD" "$T/t.json")" "$(collapsed "$V2S")"
	# OTEL_EXPORTER_OTLP_ENDPOINT is a base; the profiles variable a URL.
	OTEL_EXPORTER_OTLP_ENDPOINT=$URL/ run -0 "$OFFS" otlp --send "$V2S"
	received "$T/e.json"
	OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT=$URL/v1development/profiles OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 \
		run -0 "$OFFS" otlp --send "$V2S"
	received "$T/p.json"
	# Headers reach the server (a listener that logs the request).
	local how
	for how in curl perl; do
		http_server "$T/req.log" 200
		OFFSAMPLE_OTLP_CLIENT=$how OTEL_EXPORTER_OTLP_HEADERS='x-scope-orgid=team%20a, authorization=Basic%20eDp5' \
			run -0 "$OFFS" otlp --send --header 'x-extra=1' --endpoint "$HURL" "$V2S"
		run -0 cat "$T/req.log"
		assert_line --regexp '^POST /v1development/profiles HTTP/1\.1'
		assert_line --regexp '^(x-scope-orgid|X-Scope-Orgid): team a'
		assert_line --regexp '^(authorization|Authorization): Basic eDp5'
		assert_line --regexp '^(x-extra|X-Extra): 1'
		assert_line --regexp '^(content-type|Content-Type): application/x-protobuf'
		assert_line --regexp '^(content-encoding|Content-Encoding): gzip'
		kill "$LISTENER_PID"
		LISTENER_PID=
	done
}

@test "otlp: an endpoint that is down or refuses is exit 1 with what it said; usage errors exit 2" {
	local how
	for how in curl perl; do
		OFFSAMPLE_OTLP_CLIENT=$how run --separate-stderr "$OFFS" otlp --send --endpoint http://127.0.0.1:1 "$V2S"
		assert_failure 1
		assert_regex "$stderr" '^offsample otlp: http://127\.0\.0\.1:1/v1development/profiles: .*(onnect|refused).*$'
		OFFSAMPLE_OTLP_CLIENT=$how run --separate-stderr "$OFFS" otlp --send --endpoint "$URL/v2/x/v1development/profiles" "$V2S"
		assert_failure 1
		assert_equal "$stderr" "offsample otlp: $URL/v2/x/v1development/profiles: HTTP 404: 404 page not found"
	done
	run --separate-stderr "$OFFS" otlp --send -o "$T/x" "$V2S"
	assert_failure 2
	assert_equal "$stderr" "offsample otlp: --send and -o exclude each other (see offsample otlp --help)"
	run --separate-stderr "$OFFS" otlp --endpoint "$URL" -o "$T/x" "$V2S"
	assert_failure 2
	run --separate-stderr "$OFFS" otlp --send --endpoint ftp://x "$V2S"
	assert_failure 2
	assert_equal "$stderr" "offsample otlp: the endpoint needs an http:// or https:// URL, not \"ftp://x/v1development/profiles\" (see offsample otlp --help)"
	run --separate-stderr "$OFFS" otlp --send --timeout 0 "$V2S"
	assert_failure 2
	run --separate-stderr "$OFFS" otlp --send --header nokey "$V2S"
	assert_failure 2
	OTEL_EXPORTER_OTLP_HEADERS=bad run --separate-stderr "$OFFS" otlp --send --endpoint "$URL" "$V2S"
	assert_failure 2
	assert_equal "$stderr" "offsample otlp: bad OTLP header \"bad\" (K=V expected) (see offsample otlp --help)"
	# Input that is not a stacks file: 1, nothing sent.
	run --separate-stderr "$OFFS" otlp --send --endpoint "$URL" "$TFIX/stats.txt"
	assert_failure 1
}

# snapdir DIR FIXTURE...: a snapshot directory as offsample snapshot
# makes it, one window per FIXTURE, in order (restamped: whole files).
snapdir() {
	local d=$1 i=0 f
	shift
	mkdir -p "$d"
	for f in "$@"; do
		i=$((i + 1))
		cp "$f" "$d/offsample-20261204T01${i}000Z-g$(printf '%08d' "$i").stacks"
	done
}
# times FILE: the start time of each profile the collector got, in the
# order of its requests (a window's start is in its header).
times() {
	tr -d '\0' < "$OUT" | grep '^{' | perl -MJSON::PP -ne 'my $j = decode_json($_); print $j->{resourceProfiles}[0]{scopeProfiles}[0]{profiles}[0]{timeUnixNano}, "\n"'
}

@test "otlp --spool: the windows of a snapshot directory are sent in order, each once; later runs send only new ones" {
	snapdir "$T/snap" "$V2S" "$SMALL"
	local before after
	before=$(times | wc -l)
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --endpoint "$URL" "$T/snap"
	assert_success
	assert_equal "$stderr" ""
	received "$T/a.json"
	received "$T/b.json"
	assert_equal "$(perl "$FOLD" "$T/a.json")" "$(collapsed "$V2S")"
	assert_equal "$(perl "$FOLD" "$T/b.json")" "$(collapsed "$SMALL")"
	run -0 find "$T/spool" -name '*.pb'
	assert_output ""
	# Nothing new: nothing sent.
	run -0 "$OFFS" otlp --send --spool "$T/spool" --endpoint "$URL" "$T/snap"
	sleep 0.5
	assert_equal "$(times | wc -l)" $((before + 2))
	# A new window: only it.
	cp "$V2" "$T/snap/offsample-20261204T019000Z-g00000009.stacks"
	run -0 "$OFFS" otlp --send --spool "$T/spool" --endpoint "$URL" "$T/snap"
	received "$T/c.json"
	assert_equal "$(perl "$FOLD" "$T/c.json")" "$(collapsed "$V2")"
	assert_equal "$(times | wc -l)" $((before + 3))
	# The spool is private (0700), as the snapshots are.
	run -0 stat -c %a "$T/spool"
	assert_output 700
}

@test "otlp --spool: an endpoint that fails keeps the windows, asked again after a backoff that doubles; then sent in order" {
	snapdir "$T/snap" "$V2S" "$SMALL"
	# A server that answers 503 and counts the requests.
	http_server "$T/req.log" 503
	local down=$HURL
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --endpoint "$down" "$T/snap"
	assert_failure 1
	assert_equal "$stderr" "offsample otlp: $down/v1development/profiles: HTTP 503: busy; 2 windows spooled in $T/spool, next try in 60 s"
	assert_equal "$(grep -c '^request$' "$T/req.log")" 1
	run -0 ls "$T/spool"
	assert_output $'0000000001.pb\n0000000002.pb\nqueued.'"$(printf '%s' "$(cd "$T/snap" && pwd -P)" | cksum | cut -d' ' -f1)"$'\nretry\nseq'
	# Within the backoff: not asked.
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --endpoint "$down" "$T/snap"
	assert_failure 1
	assert_regex "$stderr" "^offsample otlp: $T/spool: 2 windows spooled; $down/v1development/profiles is not asked again before 20[0-9-]+T[0-9:]+Z\$"
	assert_equal "$(grep -c '^request$' "$T/req.log")" 1
	# After it (the retry time put in the past): asked once, the next
	# backoff doubled.
	read -r _ delay < "$T/spool/retry"
	echo "0 $delay" > "$T/spool/retry"
	run -1 "$OFFS" otlp --send --spool "$T/spool" --endpoint "$down" "$T/snap"
	assert_equal "$(grep -c '^request$' "$T/req.log")" 2
	run -0 cat "$T/spool/retry"
	assert_output --regexp '^[0-9]+ 120$'
	# The endpoint back: the two windows, oldest first, and the backoff
	# forgotten.
	echo "0 120" > "$T/spool/retry"
	local before
	before=$(times | wc -l)
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --endpoint "$URL" "$T/snap"
	assert_success
	assert_equal "$stderr" ""
	received "$T/a.json"
	received "$T/b.json"
	assert_equal "$(times | tail -n 2)" "1700000200000000000
$(perl -MJSON::PP -e 'my $j = decode_json(<STDIN>); print $j->{resourceProfiles}[0]{scopeProfiles}[0]{profiles}[0]{timeUnixNano}' < "$T/b.json")"
	assert_equal "$(perl "$FOLD" "$T/b.json")" "$(collapsed "$SMALL")"
	[ ! -e "$T/spool/retry" ] || false
}

@test "otlp --spool: windows beyond the spool's age or size are dropped, oldest first, said and counted" {
	snapdir "$T/snap" "$V2S" "$SMALL" "$V2"
	run -1 "$OFFS" otlp --send --spool "$T/spool" --endpoint http://127.0.0.1:1 "$T/snap"
	run -0 find "$T/spool" -name '*.pb'
	assert_equal "${#lines[@]}" 3
	# Two days old, a limit of a day: the two oldest go.
	touch -d '-2 days' "$T/spool/0000000001.pb" "$T/spool/0000000002.pb"
	echo "0 60" > "$T/spool/retry"
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --spool-max-age 24 --endpoint http://127.0.0.1:1 "$T/snap"
	assert_failure 1
	assert_equal "${stderr_lines[0]}" "offsample otlp: $T/spool: 2 windows dropped (the spool keeps at most 268435456 bytes and 86400 s); 2 dropped in all"
	run -0 ls "$T/spool"
	assert_line 0000000003.pb
	refute_line 0000000001.pb
	assert_equal "$(cat "$T/spool/dropped")" 2
	# Size: a window of over 1 MiB beside a limit of 1 MiB.
	{
		sed -n '1,16p' "$V2S"
		perl -e 'for my $i (1 .. 30000) { printf "1\tsleep\tS\t100\t%d\tapp\tapp-w\t__schedule+0x1/0x2;f%d+0x1/0x2\t-\t-\t/\n", 1000 + $i, $i }'
	} | sed 's/^# records: .*/# records: 30000/; s/^# samples: .*/# samples: 30000/' > "$T/snap/offsample-20261204T019000Z-g00000009.stacks"
	"$ROOT/tests/lib/restamp-stacks" "$T/snap/offsample-20261204T019000Z-g00000009.stacks"
	echo "0 60" > "$T/spool/retry"
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --spool-max-mb 1 --endpoint http://127.0.0.1:1 "$T/snap"
	assert_failure 1
	assert_regex "${stderr_lines[0]}" "^offsample otlp: $T/spool: 2 windows dropped \\(the spool keeps at most 1048576 bytes and 604800 s\\); 4 dropped in all\$"
	run -0 ls "$T/spool"
	refute_line --regexp '\.pb$'
}

@test "examples/offsample-otlp.cron and .service run as written: the snapshot, then its window at the collector" {
	local cron=$ROOT/examples/offsample-otlp.cron cmd svc=$ROOT/examples/offsample-otlp.service
	run -0 grep -Ev '^(#|$|[A-Z_]+=)' "$cron"
	assert_equal "${#lines[@]}" 1
	cmd=$(sed -E 's/^\* \* \* \* \* root //' <<< "$output")
	assert_equal "$cmd" "{ [ ! -d /proc/offsample ] || offsample snapshot --keep 1440 --max-age 1 /var/lib/offsample; } && offsample otlp --send --spool /var/lib/offsample-otlp /var/lib/offsample/"
	run -0 grep -c '^OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318$' "$cron"
	# With the cron PATH, a fake module and this test's collector.
	fake_tree "$V2S"
	# (As the install line makes it; the spool makes itself.)
	mkdir -m 0700 "$T/offsample"
	cmd=${cmd//\/var\/lib/$T}
	cmd=${cmd//\/proc\/offsample/$FP}
	run --separate-stderr env -i PATH="$ROOT/tools:/usr/bin:/bin" OFFSAMPLE_PROC="$FP" OFFSAMPLE_SYS="$FS" \
		OTEL_EXPORTER_OTLP_ENDPOINT="$URL" sh -c "$cmd"
	assert_success
	assert_equal "$stderr" ""
	run -0 ls "$T/offsample"
	assert_equal "${#lines[@]}" 1
	received "$T/c.json"
	assert_equal "$(perl "$FOLD" "$T/c.json")" "$(collapsed "$V2S")"
	# The service runs the same two commands.
	run -0 grep -c "^ExecStart=/usr/local/sbin/offsample snapshot --keep 1440 --max-age 1 /var/lib/offsample$" "$svc"
	run -0 grep -c "^ExecStart=/usr/local/sbin/offsample otlp --send --spool /var/lib/offsample-otlp /var/lib/offsample/$" "$svc"
	if command -v systemd-analyze > /dev/null; then
		mkdir "$T/units"
		sed "s|/usr/local/sbin/offsample|$OFFS|" "$svc" > "$T/units/offsample-otlp.service"
		cp "$ROOT/examples/offsample-otlp.timer" "$T/units/"
		run systemd-analyze verify "$T/units/offsample-otlp.service" "$T/units/offsample-otlp.timer"
		refute_output --regexp 'Unknown|unknown|Invalid|invalid|not executable|Failed to parse'
	fi
}

@test "otlp --spool: the collector stopped mid-stream and started again: every window arrives exactly once, in order" {
	local c=$T/col port n
	mkdir -p "$c" "$T/snap"
	start_collector "$c"
	port=$(sed 's/.*://' "$c/url")
	snapdir "$T/snap" "$V2S" "$SMALL"
	run -0 "$OFFS" otlp --send --spool "$T/spool" --endpoint "$(cat "$c/url")" "$T/snap"
	for n in $(seq 100); do [ "$(grep -c '^{' "$c/out.json" 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done
	# Stopped: two more windows wait.
	kill "$(cat "$c/col.pid")"
	wait "$(cat "$c/col.pid")" 2>/dev/null || true
	cp "$V2" "$T/snap/offsample-20261204T018000Z-g00000008.stacks"
	cp "$SFIX/oncpu-spin-v3-6.12.117.txt" "$T/snap/offsample-20261204T019000Z-g00000009.stacks"
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --endpoint "$(cat "$c/url")" "$T/snap"
	assert_failure 1
	assert_regex "$stderr" "; 2 windows spooled in $T/spool, next try in 60 s\$"
	# Started again on the same port, writing a new file; a run after the
	# backoff sends the two, in order.
	mv "$c/out.json" "$c/before.json"
	start_collector "$c" "$port"
	echo "0 60" > "$T/spool/retry"
	run --separate-stderr "$OFFS" otlp --send --spool "$T/spool" --endpoint "$(cat "$c/url")" "$T/snap"
	assert_success
	assert_equal "$stderr" ""
	for n in $(seq 100); do [ "$(grep -c '^{' "$c/out.json" 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done
	kill "$(cat "$c/col.pid")"
	wait "$(cat "$c/col.pid")" 2>/dev/null || true
	# Before the stop: the first two; after: the last two, once each.
	assert_equal "$(grep -c '^{' "$c/before.json")" 2
	assert_equal "$(grep -c '^{' "$c/out.json")" 2
	grep '^{' "$c/before.json" | sed -n 1p > "$T/1.json"
	grep '^{' "$c/before.json" | sed -n 2p > "$T/2.json"
	grep '^{' "$c/out.json" | sed -n 1p > "$T/3.json"
	grep '^{' "$c/out.json" | sed -n 2p > "$T/4.json"
	assert_equal "$(perl "$FOLD" "$T/1.json")" "$(collapsed "$V2S")"
	assert_equal "$(perl "$FOLD" "$T/2.json")" "$(collapsed "$SMALL")"
	assert_equal "$(perl "$FOLD" "$T/3.json")" "$(collapsed "$V2")"
	assert_equal "$(perl "$FOLD" "$T/4.json")" "$(collapsed "$SFIX/oncpu-spin-v3-6.12.117.txt")"
}
