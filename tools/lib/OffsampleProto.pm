# SPDX-License-Identifier: GPL-2.0
#
# OffsampleProto - what the profile writers share (offsample-pprof.pl,
# offsample-otlp.pl): the protocol buffers wire format, as far as they
# need it, and the reading of a stacks file's frames into what a
# profile's locations are made of.  Not a user command.
#
# Perl 5, core modules only.
package OffsampleProto;

use strict;
use warnings;
no warnings 'portable';	# 64-bit addresses of JIT frames
use Exporter 'import';
use OffsampleStacks qw(parse fail);

our @EXPORT_OK = qw(varint f_int f_bytes f_packed f_fixed64 kernel_frame user_frame build_id inputs write_out);

# inputs(FILES, NAMES) -> ([DATA, NAMED]...): each stacks file of FILES
# parsed (OffsampleStacks), with NAMED the parse of the same input after
# offsample-symbolize (NAMES, in the same order; undef when there are none
# or they do not have the same records).  A file that is not a stacks
# file, or has a generation without a valid rate, fails (exit 1).
sub inputs {
	my ($files, $names) = @_;
	my @r;
	for my $i (0 .. $#$files) {
		my $d = parse($files->[$i]);
		fail(1, "$files->[$i]: not an offsample stacks file (no \"# offsample stacks\" header)")
			unless @{$d->{gens}};
		my $n = @$names ? parse($names->[$i]) : undef;
		undef $n if $n && @{$n->{recs}} != @{$d->{recs}};
		for my $g (@{$d->{gens}}) {
			fail(1, "$files->[$i]: generation without a valid \"# hz:\" line")
				unless defined $g->{hz} && $g->{hz} =~ /^\d+\z/ && $g->{hz} > 0;
		}
		push @r, [$d, $n];
	}
	return @r;
}

# write_out(OUT, BYTES): BYTES to the file OUT, or to standard output
# when OUT is undef or "-"; a write error fails (exit 1).
sub write_out {
	my ($out, $b) = @_;
	if (defined $out && $out ne '-') {
		open(my $fh, '>:raw', $out) or fail(1, "cannot write $out: " . lc "$!");
		print $fh $b or fail(1, "cannot write $out: " . lc "$!");
		close $fh or fail(1, "cannot write $out: " . lc "$!");
	} else {
		binmode STDOUT;
		print $b or fail(1, 'cannot write to standard output: ' . lc "$!");
	}
}

# ---------------------------------------------------------------- wire

# varint(N): N (a non-negative integer below 2**64) as a base-128
# varint.
sub varint {
	my ($n) = @_;
	my $b = '';
	while ($n >= 0x80) {
		$b .= chr(($n & 0x7f) | 0x80);
		$n >>= 7;
	}
	return $b . chr($n);
}
# Field FIELD: a varint, length-delimited bytes, packed varints, fixed64.
sub f_int { my ($f, $v) = @_; return varint($f << 3) . varint($v); }
sub f_bytes { my ($f, $b) = @_; return varint(($f << 3) | 2) . varint(length $b) . $b; }
sub f_packed {
	my ($f, @v) = @_;
	return '' unless @v;
	return f_bytes($f, join('', map { varint($_) } @v));
}
sub f_fixed64 { my ($f, $v) = @_; return varint(($f << 3) | 1) . pack('Q<', $v); }

# ---------------------------------------------------------------- frames

# kernel_frame(FRAME) -> (NAME, FILE): a kernel frame "func+0x6d/0x150
# [mod]" is function func of [mod], or of [kernel.kallsyms] when it has
# no module.
sub kernel_frame {
	my ($f) = @_;
	my ($name, $mod) = $f =~ /^(.*?)(?:\+0x[0-9a-fA-F]+(?:\/0x[0-9a-fA-F]+)?)?(?: \[(\S+)\])?\z/;
	$name = $f if !defined $name || $name eq '';
	return ($name, defined $mod ? "[$mod]" : '[kernel.kallsyms]');
}

# user_frame(RAW, NAMED, PLAIN) -> {kind, file, addr, name}: a user frame
# of a stacks file, RAW as the module wrote it and NAMED as
# offsample-symbolize named it (undef: not named).
#   file:   "PATH+0xOFF" (with or without a mark such as " (replaced)"):
#           the file and the offset in it, the function when NAMED has it
#   named:  "func+0x12 (libc.so.6)", an input named already: function and
#           file, no address
#   jit:    "[anon]+0xADDR" that the symbolizer named from a JIT map:
#           file "[jit]", the address, the function
#   python: "[py]QUALNAME (FILE:LINE)" (module 0.7, format v4): function
#           QUALNAME of source file FILE, at line LINE (key line)
#   pseudo: anything else ([truncated], [anon]+0x..., [busy]+0x...): a
#           function of that name (without the address of [...] frames)
sub user_frame {
	my ($raw, $named, $plain) = @_;
	if ($raw =~ /^\[py\](.*?) \((.*):(\d+)\)\z/s) {
		return { kind => 'python', file => $2, addr => 0, name => $1, line => $3 };
	}
	if ($raw =~ m{^(/.*?)\+0x([0-9a-fA-F]+)(?: \(\w+\))?\z}) {
		my %f = (kind => 'file', file => $1, addr => hex $2);
		# With PLAIN, the path again with the symbolizer's mark
		# ("(missing)", "(replaced)") is no name: the location keeps
		# its file and offset for a backend to symbolize.  pprof
		# readers that show only functions (speedscope) get the path.
		$f{name} = $1 if defined $named && $named ne $raw && $named =~ /^(.+?)\+0x[0-9a-fA-F]+ \([^()]*\)\z/s
			&& !($plain && substr($1, 0, 1) eq '/');
		return \%f;
	}
	if ($raw =~ /^(.+?)\+0x[0-9a-fA-F]+ \(([^()]*)\)\z/s) {
		return { kind => 'named', file => $2, addr => 0, name => $1 };
	}
	my ($addr) = $raw =~ /^\[(?:anon|busy)\]\+0x([0-9a-fA-F]{1,16})\z/;
	if (defined $addr && defined $named && $named =~ /^(.+?)\+0x[0-9a-fA-F]+ \((\[jit\])\)\z/s) {
		return { kind => 'jit', file => $2, addr => hex $addr, name => $1 };
	}
	my $name = $raw;
	$name =~ s/\+0x[0-9a-fA-F]+\z// if $name =~ /^\[/;
	return { kind => 'pseudo', file => '', addr => 0, name => $name };
}

# build_id(NAMED_RECORD, FILE) -> the GNU build-id (hex) that
# offsample-symbolize found in FILE (as frames print it) for the
# generation of NAMED_RECORD, or '' (not named, file replaced or gone,
# no build-id).
sub build_id {
	my ($n, $file) = @_;
	return '' unless $n && defined $file;
	return $n->{gen}{build_id}{$file} // '';
}

1;
