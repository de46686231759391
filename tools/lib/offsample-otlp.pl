#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# offsample stacks -> OpenTelemetry profiles (OTLP, opentelemetry-proto
# v1.10/v1.11 profiles/v1development: ProfilesData, which is also the
# body of an ExportProfilesServiceRequest), as protobuf or as OTLP/JSON;
# written to a file or sent to an OTLP/HTTP endpoint.  Not a user
# command: `offsample otlp` runs it as
#
#   perl offsample-otlp.pl [-o OUT] [--json] [--endpoint URL]
#        [--header K=V]... [--version V] [--names SYMBOLIZED]... [--] FILE...
#
# FILEs are stacks files as the module wrote them; each --names file is
# the same input after offsample-symbolize (as for offsample-pprof.pl).
#
# One ResourceProfiles per process (comm, pid where keyed, cgroup), with
# host.name, process.executable.name, process.pid, service.name and,
# from the cgroup path, container.id and k8s.pod.uid; per resource a
# Profile of off-CPU time (off_cpu/nanoseconds) and one of on-CPU time
# (cpu/nanoseconds, reason cpu) when there is any, each sample's value
# its thread time (count x 1e9/hz of its generation).  Samples carry
# thread.id, thread.name (where keyed) and offsample.reason,
# offsample.state, offsample.wait_object, offsample.cgroup.  Locations:
# kernel frames (mapping [kernel.kallsyms] or [MODULE], frame type
# kernel), user frames with their file as mapping and the file offset as
# address (frame type native) and the function offsample-symbolize named.
#
# Errors: one line on stderr prefixed with $OFFSAMPLE_PROG, status 1
# (input, or the endpoint refused) or 2 (usage).  Perl 5, core modules
# only; curl when installed sends (HTTP::Tiny otherwise, or with
# OFFSAMPLE_OTLP_CLIENT=perl).
use strict;
use warnings;
no warnings 'portable';
use Getopt::Long qw(GetOptionsFromArray :config no_ignore_case bundling no_auto_abbrev);
use Digest::MD5 qw(md5);
use IO::Compress::Gzip qw(gzip $GzipError);
use POSIX qw(strftime);
use FindBin;
use lib $FindBin::RealBin;
use OffsampleStacks qw(fail fail_on_die);
use OffsampleProto qw(f_int f_bytes f_packed f_fixed64 kernel_frame user_frame build_id inputs write_out);

my $PROG = $ENV{OFFSAMPLE_PROG} || 'offsample otlp';
fail_on_die($PROG);

# ---------------------------------------------------------------- dictionary

# Every table starts with its zero value (index 0: "unset").
my @strings = ('');
my %string = ('' => 0);
sub str {
	my ($s) = @_;
	return $string{$s} //= do { push @strings, $s; $#strings };
}

# Attributes: [key, type (s: string, i: int), value], one per distinct.
my (@attrs, %attr) = ([]);
sub attr {
	my ($k, $t, $v) = @_;
	return $attr{"$k\0$t\0$v"} //= do { push @attrs, [$k, $t, $v]; $#attrs };
}

my (@mappings, %mapping, @functions, %function, @locations, %location, @stacks, %stack);
@mappings = @functions = @locations = @stacks = ([]);
# mapping_ix(FILE[, BUILD_ID]): [file, attribute indices], one per file
# and build-id (semantic conventions: process.executable.build_id.gnu).
sub mapping_ix {
	my ($file, $bid) = @_;
	$bid //= '';
	return $mapping{"$file\0$bid"} //= do {
		push @mappings, [$file, $bid ne '' ? [attr('process.executable.build_id.gnu', 's', $bid)] : []];
		$#mappings;
	};
}
sub function_ix {
	my ($name, $file) = @_;
	return $function{"$name\0$file"} //= do { push @functions, [$name, $file]; $#functions };
}
# location_ix(MAPPING, ADDRESS, FUNCTION, TYPE): one per distinct frame.
sub location_ix {
	my @l = @_;
	return $location{join("\0", map { $_ // '' } @l)} //= do { push @locations, \@l; $#locations };
}
sub stack_ix {
	my @loc = @_;
	return $stack{join(',', @loc)} //= do { push @stacks, \@loc; $#stacks };
}

# Locations of kernel and user frames; names and files are the text the
# stacks file escapes (unesc).
sub kernel_loc {
	my ($name, $file) = map { unesc($_) } kernel_frame($_[0]);
	return location_ix(mapping_ix($file), 0, function_ix($name, $file), 'kernel');
}
sub user_loc {
	my ($raw, $named, $nrec) = @_;
	my $f = user_frame($raw, $named, 1);
	my $bid = $f->{kind} eq 'file' ? build_id($nrec, $f->{file}) : '';
	$_ = unesc($_) for grep { defined } @$f{qw(name file)};
	return location_ix(0, 0, function_ix($f->{name}, ''), undef) if $f->{kind} eq 'pseudo';
	return location_ix(0, 0, function_ix($f->{name}, $f->{file}), 'cpython', $f->{line})
		if $f->{kind} eq 'python';
	my $fn = defined $f->{name} ? function_ix($f->{name}, $f->{file}) : 0;
	return location_ix(mapping_ix($f->{file}, $bid), $f->{addr}, $fn, $f->{kind} eq 'jit' ? undef : 'native');
}

# ---------------------------------------------------------------- resources

# The stacks format escapes bytes below 0x20, 0x7f, "\" and ";" as \xNN
# (docs/FORMAT.md): attribute values are the text itself.
sub unesc {
	my ($s) = @_;
	$s =~ s/\\x([0-9a-fA-F]{2})/chr(hex $1)/ge;
	return $s;
}

# What the cgroup path says of the service, the container and the pod:
# a systemd unit (/system.slice/nginx.service), a container runtime's
# scope (docker-, cri-containerd-, crio-, libpod- + 64 hex digits), a
# Kubernetes pod (kubepods...-pod<uid>.slice with systemd, pod<uid> with
# cgroupfs).
sub from_cgroup {
	my ($cg) = @_;
	my %a;
	return %a if !defined $cg || $cg eq '-';
	$a{'container.id'} = $1 if $cg =~ m{(?:^|/)(?:docker-|cri-containerd-|crio-|libpod-)?([0-9a-f]{64})(?:\.scope)?(?:/|\z)};
	if ($cg =~ m{-pod([0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12})\.slice(?:/|\z)}) {
		($a{'k8s.pod.uid'} = $1) =~ tr/_/-/;
	} elsif ($cg =~ m{/pod([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:/|\z)}) {
		$a{'k8s.pod.uid'} = $1;
	}
	my @units = $cg =~ m{(?:^|/)([^/]+)\.service(?=/|\z)}g;
	@units = grep { !/^user@\d+\z/ } @units;
	$a{'service.name'} = $units[-1] if @units;
	return %a;
}

# ---------------------------------------------------------------- main

my (%o, @names, @headers);
{
	my @errs;
	local $SIG{__WARN__} = sub { push @errs, $_[0] };
	GetOptionsFromArray(\@ARGV, \%o, 'o|output=s', 'json', 'endpoint=s', 'header=s' => \@headers,
		'version=s', 'timeout=i', 'names=s' => \@names, 'flush=s', 'max-bytes=i', 'max-age=i')
		or fail(2, lcfirst(($errs[0] // "invalid option\n") =~ s/\n.*//sr) . ' (see --help)');
}
flush($o{flush}) if defined $o{flush};
my @files = @ARGV ? @ARGV : ('-');
fail(2, 'as many --names files as inputs expected') if @names && @names != @files;
if (!defined $o{endpoint} && !$o{json} && (!defined $o{o} || $o{o} eq '-') && -t STDOUT) {
	fail(2, 'will not write a binary profile to a terminal; use -o FILE, --json or a redirection');
}

# %res: resource key -> {attrs => [[k, t, v]...], prof => {off_cpu|cpu => [samples]}}
my (%res, @res_order, $t0, $t1, $hz0, $host);
for my $in (inputs(\@files, \@names)) {
	my ($d, $n) = @$in;
	for my $g (@{$d->{gens}}) {
		$hz0 //= $g->{hz};
		$host //= $g->{hostname} if defined $g->{hostname} && $g->{hostname} ne '';
		next unless defined $g->{start} && $g->{start} =~ /^\d+(?:\.\d+)?\z/;
		$t0 = $g->{start} if !defined $t0 || $g->{start} < $t0;
		my $end = defined $g->{end} && $g->{end} =~ /^\d+(?:\.\d+)?\z/ ? $g->{end}
			: defined $g->{duration} && $g->{duration} =~ /^\d+(?:\.\d+)?\z/ ? $g->{start} + $g->{duration} : undef;
		$t1 = $end if defined $end && (!defined $t1 || $end > $t1);
	}
	my $recs = $d->{recs};
	for my $j (0 .. $#$recs) {
		my $r = $recs->[$j];
		my @loc;
		push @loc, kernel_loc($_) for $r->{kstack} eq '-' ? () : grep { $_ ne '' } split /;/, $r->{kstack};
		if ($r->{ustack} ne '-') {
			my @raw = grep { $_ ne '' } split /;/, $r->{ustack};
			my @nam = $n ? grep { $_ ne '' } split(/;/, $n->{recs}[$j]{ustack}) : ();
			@nam = () if @nam != @raw;
			push @loc, user_loc($raw[$_], $nam[$_], $n && $n->{recs}[$j]) for 0 .. $#raw;
		}
		my $pid = $r->{pid} =~ /^\d+\z/ ? $r->{pid} : undef;
		my $cg = $r->{cgroup} // '-';
		my $rk = join("\0", $r->{comm}, $pid // '-', $cg);
		my $rs = $res{$rk} //= do {
			push @res_order, $rk;
			my %c = from_cgroup($cg);
			my $comm = unesc($r->{comm});
			my @a = (['host.name', 's', $r->{gen}{hostname} // $host // ''],
				['process.executable.name', 's', $comm]);
			push @a, ['process.pid', 'i', $pid] if defined $pid;
			push @a, ['service.name', 's', $c{'service.name'} // "unknown_service:$comm"];
			push @a, [$_, 's', $c{$_}] for grep { defined $c{$_} } 'container.id', 'k8s.pod.uid';
			{ attrs => \@a, prof => {} };
		};
		my @sa;
		push @sa, attr('thread.id', 'i', $r->{tid}) if $r->{tid} =~ /^\d+\z/;
		push @sa, attr('thread.name', 's', unesc($r->{tname})) if $r->{tname} ne '-';
		push @sa, attr('offsample.reason', 's', $r->{reason});
		push @sa, attr('offsample.state', 's', $r->{state}) if $r->{state} ne '-';
		push @sa, attr('offsample.wait_object', 's', unesc($r->{wobj})) if ($r->{wobj} // '-') ne '-';
		push @sa, attr('offsample.cgroup', 's', unesc($cg)) if $cg ne '-';
		my $ns = int($r->{count} * 1e9 / $r->{gen}{hz} + 0.5);
		push @{$rs->{prof}{$r->{reason} eq 'cpu' ? 'cpu' : 'off_cpu'}}, [stack_ix(@loc), \@sa, $ns];
	}
}
fail(1, 'no samples in the input') unless @res_order;

# ---------------------------------------------------------------- protobuf

# AnyValue: 1 string_value, 3 int_value.
sub any_pb { my ($t, $v) = @_; return $t eq 'i' ? f_int(3, $v) : f_bytes(1, $v); }
# int64 values are varints of their two's complement: never negative here.

my $version = $o{version} // '';
# Header times ("1700000000.123456789") in integer nanoseconds: a
# double holds no 19 digits.
sub ns {
	my ($t) = @_;
	my ($s, $f) = split /\./, $t, 2;
	return $s * 1_000_000_000 + substr(($f // '') . '000000000', 0, 9);
}
my $tns = defined $t0 ? ns($t0) : 0;
my $dns = defined $t1 ? ns($t1) - $tns : 0;
my $period = int(1e9 / ($hz0 || 1) + 0.5);

# The profiles, in an order and with ids that depend only on the input.
my @rp;	# [resource attrs, [[type, id, samples]...]]
for my $rk (@res_order) {
	my $rs = $res{$rk};
	my @p;
	for my $type (grep { $rs->{prof}{$_} } 'off_cpu', 'cpu') {
		push @p, [$type, md5("$rk\0$type\0$tns"), $rs->{prof}{$type}];
	}
	push @rp, [$rs->{attrs}, \@p];
}
# Frame types, and the strings every table needs, before the
# dictionary is written.
my $FT_KERNEL = attr('profile.frame.type', 's', 'kernel');
my $FT_NATIVE = attr('profile.frame.type', 's', 'native');
my $FT_CPYTHON = attr('profile.frame.type', 's', 'cpython');
my %FT = (kernel => $FT_KERNEL, native => $FT_NATIVE, cpython => $FT_CPYTHON);
str($_) for 'off_cpu', 'cpu', 'nanoseconds', 'wall', 'profile.frame.type', 'kernel', 'native';
str($_->[0]) for @attrs[1 .. $#attrs];
str($_->[0]) for @mappings[1 .. $#mappings];
str($_->[0]), str($_->[1]) for @functions[1 .. $#functions];

sub profile_pb {
	my ($type, $id, $samples) = @_;
	my $b = f_bytes(1, f_int(1, str($type)) . f_int(2, str('nanoseconds')));
	for my $s (@$samples) {
		my ($st, $sa, $ns) = @$s;
		$b .= f_bytes(2, f_int(1, $st) . f_packed(2, @$sa) . f_packed(4, $ns));
	}
	$b .= f_fixed64(3, $tns) if $tns;
	$b .= f_int(4, $dns) if $dns;
	$b .= f_bytes(5, f_int(1, str('wall')) . f_int(2, str('nanoseconds')));
	$b .= f_int(6, $period);
	$b .= f_bytes(7, $id);
	return $b;
}

sub request_pb {
	my $pb = '';
	for my $r (@rp) {
		my ($ra, $profs) = @$r;
		my $res = join('', map { f_bytes(1, f_bytes(1, $_->[0]) . f_bytes(2, any_pb($_->[1], $_->[2]))) } @$ra);
		my $scope = f_bytes(1, f_bytes(1, 'offsample') . ($version ne '' ? f_bytes(2, $version) : ''));
		$scope .= f_bytes(2, profile_pb(@$_)) for @$profs;
		$pb .= f_bytes(1, f_bytes(1, $res) . f_bytes(2, $scope));
	}
	my $d = '';
	$d .= f_bytes(1, @$_ ? f_int(4, str($_->[0])) . (@{$_->[1]} ? f_packed(5, @{$_->[1]}) : '') : '') for @mappings;
	for (@locations) {
		my ($m, $addr, $f, $type, $line) = @$_;
		my $l = '';
		if (@$_) {
			$l .= f_int(1, $m) if $m;
			$l .= f_int(2, $addr) if $addr;
			$l .= f_bytes(3, f_int(1, $f) . ($line ? f_int(2, $line) : '')) if $f;
			$l .= f_packed(4, $FT{$type}) if defined $type;
		}
		$d .= f_bytes(2, $l);
	}
	$d .= f_bytes(3, @$_ ? f_int(1, str($_->[0])) . f_int(2, str($_->[0])) . ($_->[1] ne '' ? f_int(3, str($_->[1])) : '') : '')
		for @functions;
	$d .= f_bytes(4, '');
	$d .= f_bytes(5, $_) for @strings;
	$d .= f_bytes(6, @$_ ? f_int(1, str($_->[0])) . f_bytes(2, any_pb($_->[1], $_->[2])) : '') for @attrs;
	$d .= f_bytes(7, f_packed(1, @$_)) for @stacks;
	return $pb . f_bytes(2, $d);
}

# ---------------------------------------------------------------- JSON

# OTLP/JSON: lowerCamelCase names, 64-bit integers as strings, ids in
# hex, zero values left out.
sub js {
	my ($s) = @_;
	$s =~ s/(["\\])/\\$1/g;
	$s =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
	return qq{"$s"};
}
sub any_js { my ($t, $v) = @_; return $t eq 'i' ? qq({"intValue":"$v"}) : '{"stringValue":' . js($v) . '}'; }
sub obj { my @kv = @_; my @p; while (my ($k, $v) = splice(@kv, 0, 2)) { push @p, qq("$k":$v) if defined $v } return '{' . join(',', @p) . '}'; }
sub arr { return '[' . join(',', @_) . ']'; }

sub request_json {
	str('nanoseconds');
	my @r;
	for my $r (@rp) {
		my ($ra, $profs) = @$r;
		my @p;
		for (@$profs) {
			my ($type, $id, $samples) = @$_;
			push @p, obj(
				sampleType => obj(typeStrindex => str($type), unitStrindex => str('nanoseconds')),
				samples => arr(map { obj(stackIndex => $_->[0], attributeIndices => @{$_->[1]} ? arr(@{$_->[1]}) : undef,
					values => arr(qq("$_->[2]"))) } @$samples),
				timeUnixNano => $tns ? qq("$tns") : undef, durationNano => $dns ? qq("$dns") : undef,
				periodType => obj(typeStrindex => str('wall'), unitStrindex => str('nanoseconds')),
				period => qq("$period"), profileId => '"' . unpack('H*', $id) . '"');
		}
		push @r, obj(resource => obj(attributes => arr(map { obj(key => js($_->[0]), value => any_js($_->[1], $_->[2])) } @$ra)),
			scopeProfiles => arr(obj(scope => obj(name => '"offsample"', version => $version ne '' ? js($version) : undef),
				profiles => arr(@p))));
	}
	my $dict = obj(
		mappingTable => arr(map { @$_ ? obj(filenameStrindex => str($_->[0]), attributeIndices => @{$_->[1]} ? arr(@{$_->[1]}) : undef) : '{}' } @mappings),
		locationTable => arr(map { my ($m, $a, $f, $t, $ln) = @$_; @$_ ? obj(mappingIndex => $m || undef, address => $a ? qq("$a") : undef,
			lines => $f ? arr(obj(functionIndex => $f, line => $ln ? qq("$ln") : undef)) : undef,
			attributeIndices => defined $t ? arr($FT{$t}) : undef) : '{}' } @locations),
		functionTable => arr(map { @$_ ? obj(nameStrindex => str($_->[0]), systemNameStrindex => str($_->[0]),
			filenameStrindex => $_->[1] ne '' ? str($_->[1]) : undef) : '{}' } @functions),
		linkTable => '[{}]',
		stringTable => arr(map { js($_) } @strings),
		attributeTable => arr(map { @$_ ? obj(keyStrindex => str($_->[0]), value => any_js($_->[1], $_->[2])) : '{}' } @attrs),
		stackTable => arr(map { @$_ ? obj(locationIndices => arr(@$_)) : '{}' } @stacks));
	return obj(resourceProfiles => arr(@r), dictionary => $dict) . "\n";
}

# ---------------------------------------------------------------- out

# Both forms fix the string table: each is made from the whole model.
my $body = $o{json} ? request_json() : request_pb();

if (defined $o{endpoint}) {
	send_body($o{endpoint}, $body, $o{json} ? 'application/json' : 'application/x-protobuf');
	exit 0;
}
write_out($o{o}, $body);
exit 0;

# send_body(URL, BODY, TYPE): POST BODY gzipped; a 2xx answer is success,
# anything else an error naming the status and what the server said.
sub send_body {
	my $err = try_send(@_);
	fail(1, $err) if defined $err;
}

# try_send(URL, BODY, TYPE) -> undef when sent, else why not.
sub try_send {
	my ($url, $b, $type) = @_;
	local *fail = sub { die "$_[1]\n" };
	my $r = eval { post(@_); 1 };
	return if $r;
	(my $e = $@) =~ s/\n\z//;
	return $e;
}

sub post {
	my ($url, $b, $type) = @_;
	my $gz;
	gzip(\$b => \$gz) or fail(1, "gzip: $GzipError");
	my $t = $o{timeout} // 10;
	my @h = ("Content-Type: $type", 'Content-Encoding: gzip', map { my ($k, $v) = split /=/, $_, 2; "$k: $v" } @headers);
	my ($code, $msg);
	# curl when installed (OFFSAMPLE_OTLP_CLIENT=perl: HTTP::Tiny,
	# which speaks HTTPS only with IO::Socket::SSL).
	my $how = $ENV{OFFSAMPLE_OTLP_CLIENT} // '';
	if ($how ne 'perl' && grep { -x "$_/curl" } split /:/, $ENV{PATH} // '') {
		my ($fh, $tmp);
		require File::Temp;
		($fh, $tmp) = File::Temp::tempfile('offsample-otlp.XXXXXX', TMPDIR => 1, UNLINK => 1);
		binmode $fh;
		print $fh $gz;
		close $fh;
		my $err = "$tmp.err";
		my @cmd = ('curl', '-q', '-sS', '--stderr', $err, '--proto', '=http,https', '-m', $t, '-X', 'POST',
			(map { ('-H', $_) } @h), '--data-binary', "\@$tmp", '-w', '\n%{http_code}', $url);
		open(my $c, '-|', @cmd) or fail(1, "cannot run curl: " . lc "$!");
		my $out = do { local $/; <$c> } // '';
		close $c;
		my $rc = $? >> 8;
		my $e = '';
		if (open(my $ef, '<', $err)) {
			local $/;
			$e = <$ef> // '';
		}
		unlink $err;
		($msg, $code) = $out =~ /\A(.*?)\n?(\d{3})\z/s ? ($1, $2 + 0) : ($out, 0);
		if (!$code) {
			$e =~ s/\A\s*curl: \(\d+\)\s*//;
			$e =~ s/\s+\z//;
			fail(1, "$url: " . ($e ne '' ? $e : "curl exit status $rc"));
		}
	} else {
		require HTTP::Tiny;
		my %hh = map { my ($k, $v) = split /: /, $_, 2; ($k => $v) } @h;
		my $r = HTTP::Tiny->new(timeout => $t, max_size => 1 << 20)->request('POST', $url, { headers => \%hh, content => $gz });
		($code, $msg) = ($r->{status}, $r->{content} // $r->{reason});
		fail(1, "$url: " . ($r->{content} // 'failed') =~ s/\s+\z//r) if $code == 599;
	}
	return if $code =~ /^2/;
	$msg //= '';
	$msg =~ s/\s+\z//;
	$msg = substr($msg, 0, 300);
	fail(1, "$url: HTTP $code" . ($msg ne '' ? ": $msg" : ''));
}

# ---------------------------------------------------------------- spool

# flush(DIR): send the windows spooled in DIR (NNNNNNNNNN.pb, a request
# each, made by `offsample otlp --spool`), oldest first, each removed once
# the endpoint took it.  First the bounds: windows beyond --max-bytes in
# all (the oldest) or older than --max-age seconds are dropped, said and
# counted in DIR/dropped.  An endpoint that fails is not asked again
# before DIR/retry says (60 s after the first failure, doubling up to an
# hour); what is left stays for the next run, in order.  Exit status 0
# when the spool is empty, 1 when windows are left or were dropped.
sub flush {
	my ($dir) = @_;
	my $url = $o{endpoint} // fail(2, '--flush needs --endpoint');
	opendir(my $dh, $dir) or fail(1, "cannot read $dir: " . lc "$!");
	my @w = sort grep { /\A\d{10}\.pb\z/ } readdir $dh;
	closedir $dh;
	my ($max, $age, $now, $bad) = ($o{'max-bytes'} // 0, $o{'max-age'} // 0, time, 0);
	my (@keep, @drop, $total);
	$total += (-s "$dir/$_" // 0) for @w;
	for my $f (@w) {
		my @st = stat "$dir/$f" or next;
		if (($age && $now - $st[9] > $age) || ($max && $total > $max)) {
			push @drop, $f;
			$total -= $st[7];
		} else {
			push @keep, $f;
		}
	}
	if (@drop) {
		unlink "$dir/$_" for @drop;
		my $n = @drop + (slurp("$dir/dropped") // 0);
		put("$dir/dropped", "$n\n");
		print STDERR "$PROG: $dir: " . @drop . ' window' . (@drop == 1 ? '' : 's')
			. " dropped (the spool keeps at most $max bytes and $age s); $n dropped in all\n";
		$bad = 1;
	}
	my ($next, $delay) = split ' ', slurp("$dir/retry") // '0 0';
	if (@keep && $now < ($next // 0)) {
		printf STDERR "%s: %s: %d window%s spooled; %s is not asked again before %s\n", $PROG, $dir,
			scalar @keep, @keep == 1 ? '' : 's', $url, strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $next);
		exit 1;
	}
	while (my $f = shift @keep) {
		open(my $fh, '<:raw', "$dir/$f") or next;
		my $b = do { local $/; <$fh> };
		close $fh;
		my $err = try_send($url, $b, 'application/x-protobuf');
		if (defined $err) {
			unshift @keep, $f;
			$delay = $delay ? ($delay * 2 > 3600 ? 3600 : $delay * 2) : 60;
			put("$dir/retry", ($now + $delay) . " $delay\n");
			printf STDERR "%s: %s; %d window%s spooled in %s, next try in %d s\n", $PROG, $err,
				scalar @keep, @keep == 1 ? '' : 's', $dir, $delay;
			exit 1;
		}
		unlink "$dir/$f";
	}
	unlink "$dir/retry";
	exit $bad;
}

sub slurp {
	my ($f) = @_;
	open(my $fh, '<', $f) or return;
	my $v = <$fh>;
	chomp $v if defined $v;
	return $v;
}

# put(FILE, TEXT): FILE replaced by TEXT (through a temporary file).
sub put {
	my ($f, $t) = @_;
	open(my $fh, '>', "$f.$$") or fail(1, "cannot write $f.$$: " . lc "$!");
	print $fh $t;
	close $fh or fail(1, "cannot write $f.$$: " . lc "$!");
	rename("$f.$$", $f) or fail(1, "cannot rename $f.$$: " . lc "$!");
}
