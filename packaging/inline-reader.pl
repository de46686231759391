#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# inline-reader.pl TOOL LIB VERSION: print TOOL with the block between its
# "# BEGIN reader" and "# END reader" lines replaced by LIB (the
# OffsampleStacks.pm of tools/lib) and the version, so that the installed
# tool is one file that works alone (packaging/install.sh).  A tool without
# such a block is printed as it is.  Exit 1 with a message on any error.
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
print $out or die "inline-reader.pl: write error: " . lc("$!") . "\n";
close STDOUT or die "inline-reader.pl: write error: " . lc("$!") . "\n";
