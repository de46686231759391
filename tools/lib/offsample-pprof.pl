#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# offsample stacks -> pprof (a gzipped profile.proto, the format of
# github.com/google/pprof/proto/profile.proto), for go tool pprof,
# Pyroscope, Parca, speedscope and the like.  Not a user command:
# `offsample pprof` runs it as
#
#   perl offsample-pprof.pl [-o OUT] [--names SYMBOLIZED]... [--] FILE...
#
# FILEs are stacks files as the module wrote them ("-": standard input).
# Each --names file is the same input after offsample-symbolize, in the
# same order: its user frames give the function names, while the raw
# frames (PATH+0xOFFSET) give each location its mapping (the file) and
# address (the offset in the file), so that pprof tools can symbolize by
# file and offset themselves.
#
# The profile has two sample types, samples/count and wall/nanoseconds
# (count x 1e9/hz of its generation, so files of different rates add up),
# period wall/nanoseconds, the time and duration from the headers, and
# labels reason, state, comm, tname, cgroup, wobj (strings) and pid, tid
# (numbers) where the key has them.  Kernel frames get the mapping
# [kernel.kallsyms] (or [MODULE]) and their function; pseudo frames
# ([truncated], [busy]+0x...) a function of that name.
#
# Errors: one line on stderr prefixed with $OFFSAMPLE_PROG, status 1
# (input) or 2 (usage).  Perl 5, core modules only.
use strict;
use warnings;
no warnings 'portable';	# 64-bit addresses of JIT frames
use Getopt::Long qw(GetOptionsFromArray :config no_ignore_case bundling no_auto_abbrev);
use IO::Compress::Gzip qw(gzip $GzipError);
use FindBin;
use lib $FindBin::RealBin;
use OffsampleStacks qw(fail fail_on_die);
use OffsampleProto qw(f_int f_bytes f_packed kernel_frame user_frame build_id inputs write_out);

my $PROG = $ENV{OFFSAMPLE_PROG} || 'offsample pprof';
fail_on_die($PROG);

# ---------------------------------------------------------------- model

my @strings = ('');
my %string = ('' => 0);
sub str {
	my ($s) = @_;
	return $string{$s} //= do { push @strings, $s; $#strings };
}

my (@mappings, %mapping, @functions, %function, @locations, %location);

# mapping_id(FILE[, BUILD_ID]): one per file (and build-id: a file
# replaced between generations is another mapping).
sub mapping_id {
	my ($file, $bid) = @_;
	$bid //= '';
	return $mapping{"$file\0$bid"} //= do {
		push @mappings, [$file, $bid];
		scalar @mappings;
	};
}
sub function_id {
	my ($name, $file) = @_;
	return $function{"$name\0$file"} //= do {
		push @functions, [$name, $file];
		scalar @functions;
	};
}
# location_id(KEY, MAPPING_ID, ADDRESS, FUNCTION_ID[, LINE]): one per
# distinct frame.
sub location_id {
	my ($key, $m, $addr, $fn, $line) = @_;
	return $location{$key} //= do {
		push @locations, [$m, $addr, $fn, $line];
		scalar @locations;
	};
}

# A kernel frame: its function in its mapping (OffsampleProto).
sub kernel_location {
	my ($f) = @_;
	my ($name, $file) = kernel_frame($f);
	return location_id("k\0$f", mapping_id($file), 0, function_id($name, $file));
}

# A user frame (OffsampleProto::user_frame): a file's with its mapping
# and file offset, one named already with its file as mapping, JIT code
# with mapping [jit] and its address, pseudo frames as a function alone.
sub user_location {
	my ($raw, $named, $nrec) = @_;
	my $f = user_frame($raw, $named);
	if ($f->{kind} eq 'file') {
		my $m = mapping_id($f->{file}, build_id($nrec, $f->{file}));
		my $fn = defined $f->{name} ? function_id($f->{name}, $f->{file}) : 0;
		return location_id("u\0$raw\0$fn\0$m", $m, $f->{addr}, $fn);
	}
	return location_id("n\0$raw", mapping_id($f->{file}), 0, function_id($f->{name}, $f->{file}))
		if $f->{kind} eq 'named';
	return location_id("j\0$raw\0$f->{name}", mapping_id($f->{file}), $f->{addr}, function_id($f->{name}, $f->{file}))
		if $f->{kind} eq 'jit';
	# A Python function: no mapping, its source file and line.
	return location_id("y\0$raw", 0, 0, function_id($f->{name}, $f->{file}), $f->{line})
		if $f->{kind} eq 'python';
	return location_id("p\0$f->{name}", 0, 0, function_id($f->{name}, ''));
}

# ---------------------------------------------------------------- main

my (%o, @names);
{
	my @errs;
	local $SIG{__WARN__} = sub { push @errs, $_[0] };
	GetOptionsFromArray(\@ARGV, \%o, 'o|output=s', 'names=s' => \@names)
		or fail(2, lcfirst(($errs[0] // "invalid option\n") =~ s/\n.*//sr) . ' (see --help)');
}
my @files = @ARGV ? @ARGV : ('-');
fail(2, 'as many --names files as inputs expected') if @names && @names != @files;
if ((!defined $o{o} || $o{o} eq "-") && -t STDOUT) {
	fail(2, 'will not write a binary profile to a terminal; use -o FILE or a redirection');
}

my (@samples, $t0, $dur, $hz0);
for my $in (inputs(\@files, \@names)) {
	my ($d, $n) = @$in;
	for my $g (@{$d->{gens}}) {
		$hz0 //= $g->{hz};
		if (defined $g->{start} && $g->{start} =~ /^\d+(?:\.\d+)?\z/) {
			$t0 = $g->{start} if !defined $t0 || $g->{start} < $t0;
		}
		$dur += $g->{duration} if defined $g->{duration} && $g->{duration} =~ /^\d+(?:\.\d+)?\z/;
	}
	my $recs = $d->{recs};
	for my $j (0 .. $#$recs) {
		my $r = $recs->[$j];
		my @loc;
		if ($r->{kstack} ne '-') {
			push @loc, kernel_location($_) for grep { $_ ne '' } split /;/, $r->{kstack};
		}
		if ($r->{ustack} ne '-') {
			my @raw = grep { $_ ne '' } split /;/, $r->{ustack};
			my @nam = $n ? grep { $_ ne '' } split(/;/, $n->{recs}[$j]{ustack}) : ();
			@nam = () if @nam != @raw;
			push @loc, user_location($raw[$_], $nam[$_], $n && $n->{recs}[$j]) for 0 .. $#raw;
		}
		my @labels;
		for my $k (qw(reason state comm tname cgroup wobj)) {
			push @labels, f_int(1, str($k)) . f_int(2, str($r->{$k})) if $r->{$k} ne '-';
		}
		for my $k (qw(pid tid)) {
			push @labels, f_int(1, str($k)) . f_int(3, $r->{$k}) if $r->{$k} =~ /^\d+\z/;
		}
		my $ns = int($r->{count} * 1e9 / $r->{gen}{hz} + 0.5);
		push @samples, f_packed(1, @loc) . f_packed(2, $r->{count}, $ns)
			. join('', map { f_bytes(3, $_) } @labels);
	}
}

my $pb = '';
$pb .= f_bytes(1, f_int(1, str('samples')) . f_int(2, str('count')));
$pb .= f_bytes(1, f_int(1, str('wall')) . f_int(2, str('nanoseconds')));
$pb .= f_bytes(2, $_) for @samples;
for my $i (0 .. $#mappings) {
	# Addresses of user locations are offsets in the file: the mapping
	# starts at 0 with file offset 0.  Kernel mappings have functions.
	my ($file, $bid) = @{$mappings[$i]};
	my $kernel = $file =~ /^\[/ ? 1 : 0;
	$pb .= f_bytes(3, f_int(1, $i + 1) . f_int(2, 0) . f_int(3, 0) . f_int(4, 0)
		. f_int(5, str($file)) . ($bid ne '' ? f_int(6, str($bid)) : '') . f_int(7, $kernel));
}
for my $i (0 .. $#locations) {
	my ($m, $addr, $fn, $line) = @{$locations[$i]};
	my $l = f_int(1, $i + 1);
	$l .= f_int(2, $m) if $m;
	$l .= f_int(3, $addr) if $addr;
	$l .= f_bytes(4, f_int(1, $fn) . ($line ? f_int(2, $line) : '')) if $fn;
	$pb .= f_bytes(4, $l);
}
for my $i (0 .. $#functions) {
	my ($name, $file) = @{$functions[$i]};
	$pb .= f_bytes(5, f_int(1, $i + 1) . f_int(2, str($name)) . f_int(3, str($name))
		. f_int(4, str($file)));
}
# Strings last but one: every index above is final now.
my $tail = '';
$tail .= f_int(9, int($t0 * 1e9)) if defined $t0;
$tail .= f_int(10, int($dur * 1e9 + 0.5)) if defined $dur;
$tail .= f_bytes(11, f_int(1, str('wall')) . f_int(2, str('nanoseconds')));
$tail .= f_int(12, int(1e9 / $hz0 + 0.5));
$tail .= f_int(13, str('offsample stacks, ' . scalar(@files) . ' input(s)'));
$tail .= f_int(14, str('samples'));
$pb .= f_bytes(6, $_) for @strings;
$pb .= $tail;

my $gz;
gzip(\$pb => \$gz) or fail(1, "gzip: $GzipError");
write_out($o{o}, $gz);
exit 0;
