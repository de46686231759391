#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# inline-reader.pl TOOL LIB VERSION: print TOOL with the block between its
# "# BEGIN reader" and "# END reader" lines replaced by LIB (the
# OffsampleStacks.pm of tools/lib) and the version, so that the installed
# tool is one file that works alone (packaging/install.sh).  A block
# "# BEGIN lazy NAME" ... "# END lazy" (a module the tool requires only on
# some paths) becomes NAME.pm of LIB's directory as text, served to that
# require by an @INC hook: compiled only when needed, as in the checkout.
# A tool without such blocks is printed as it is.  Exit 1 with a message
# on any error.
use strict;
use warnings;

die "usage: inline-reader.pl TOOL LIB VERSION\n" unless @ARGV == 3;
my ($tool, $lib, $version) = @ARGV;
sub slurp {
	my ($f) = @_;
	open(my $fh, '<', $f) or die "inline-reader.pl: cannot read $f: " . lc("$!") . "\n";
	local $/;
	return scalar <$fh>;
}
my $src = slurp($tool);
my $out = $src;
if ($src =~ /^# BEGIN reader\b.*?^# END reader\n/ms) {
	my ($block) = $src =~ /^(# BEGIN reader\b.*?^# END reader\n)/ms;
	my ($imports) = $block =~ /^use OffsampleStacks qw\(([^)]*)\);$/m
		or die "inline-reader.pl: $tool: no 'use OffsampleStacks qw(...);' in its reader block\n";
	my $pm = slurp($lib);
	$pm =~ s/^1;\s*\z//m or die "inline-reader.pl: $lib does not end in '1;'\n";
	$version =~ /^[A-Za-z0-9.+~_-]+\z/ or die "inline-reader.pl: bad version '$version'\n";
	my $inline = "# BEGIN reader: tools/lib/OffsampleStacks.pm $version, put inline by\n"
		. "# packaging/inline-reader.pl at installation.\n"
		. "BEGIN {\n$pm\$OffsampleStacks::VERSION_INLINE = '$version';\n}\n"
		. "BEGIN { OffsampleStacks->import(qw($imports)); }\n"
		. "# END reader\n";
	$out =~ s/^# BEGIN reader\b.*?^# END reader\n/$inline/ms;
}
(my $libdir = $lib) =~ s{/[^/]*\z}{};
$libdir = '.' if $libdir eq $lib;
$out =~ s{^# BEGIN lazy (\w+)\n.*?^# END lazy\n}{lazy($1)}gmse;
sub lazy {
	my ($name) = @_;
	my $pm = slurp("$libdir/$name.pm");
	my $end = "OFFSAMPLE_INLINE_$name";
	die "inline-reader.pl: $libdir/$name.pm has a line '$end'\n" if $pm =~ /^\Q$end\E$/m;
	$pm .= "\n" unless $pm =~ /\n\z/;
	return "# BEGIN lazy: tools/lib/$name.pm $version, put inline as text by\n"
		. "# packaging/inline-reader.pl at installation; compiled when required.\n"
		. "BEGIN {\n\tmy \$src = <<'$end';\n$pm$end\n"
		. "\tunshift \@INC, sub {\n\t\treturn if \$_[1] ne '$name.pm';\n"
		. "\t\topen(my \$fh, '<', \\\$src) or return;\n\t\treturn \$fh;\n\t};\n}\n"
		. "# END lazy\n";
}
print $out or die "inline-reader.pl: write error: " . lc("$!") . "\n";
close STDOUT or die "inline-reader.pl: write error: " . lc("$!") . "\n";
