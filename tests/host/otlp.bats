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

OTELCOL=$ROOT/build/deps/otelcol/otelcol
FOLD=$ROOT/tests/lib/otlp-fold.pl

setup_file() {
	local d=$BATS_FILE_TMPDIR port i
	[ -x "$OTELCOL" ] || return 0
	for i in 1 2 3 4 5; do
		port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport')
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
	done
	echo "the collector did not start:" >&2
	cat "$d/col.log" >&2
	return 1
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
		"$SFIX"/oncpu-crit-v3-6.12.117.txt "$SFIX"/blockers-drain-6.12.117.txt "$SMALL" "$V2S" "$V2"; do
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
		: > "$T/req.log"
		perl -MIO::Socket::INET -e '
			my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 5, ReuseAddr => 1) or die;
			open(my $l, ">>", $ARGV[0]) or die; $l->autoflush(1); print $l "port ", $s->sockport, "\n";
			while (my $c = $s->accept) {
				my $len = 0;
				while (my $h = <$c>) { last if $h =~ /^\r?\n\z/; print $l $h; $len = $1 if $h =~ /^content-length:\s*(\d+)/i }
				read($c, my $b, $len);
				print $c "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
				close $c }' "$T/req.log" 3>&- &
		LISTENER_PID=$!
		for _ in $(seq 50); do grep -q '^port ' "$T/req.log" && break; sleep 0.1; done
		OFFSAMPLE_OTLP_CLIENT=$how OTEL_EXPORTER_OTLP_HEADERS='x-scope-orgid=team%20a, authorization=Basic%20eDp5' \
			run -0 "$OFFS" otlp --send --header 'x-extra=1' --endpoint "http://127.0.0.1:$(sed -n 's/^port //p' "$T/req.log")" "$V2S"
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
