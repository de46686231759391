#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# examples.pl [--update] DOC: run the commands of DOC's ```console blocks
# ("$ COMMAND" on the block's first line, what it prints after it) and
# check that each block holds what the command prints now; --update
# writes the outputs into DOC instead.  Exit 1 (with a diff) when a block
# differs.
#
# The commands run in a fresh folder holding recordings made in guests
# with the real module (tests/fixtures/examples), under the names the
# examples use; a `<!-- live: NAME -->` line before a block makes a fake module
# serve NAME there (OFFSAMPLE_PROC: stacks and drain), for top and
# snapshot.  PATH has the checkout's tools first; TZ=UTC, LC_ALL=C.
use strict;
use warnings;
use File::Temp qw(tempdir);
use File::Copy qw(copy);
use Cwd qw(abs_path);
use FindBin;

my $update = @ARGV && $ARGV[0] eq '--update' ? shift : 0;
my $doc = shift // die "usage: examples.pl [--update] DOC\n";
my $root = abs_path("$FindBin::Bin/../..");
# Symbolized once (tests/fixtures/examples/README.md): the outputs do not
# depend on the files of the host that runs the check.
my %files = map { ("$_.stacks" => "tests/fixtures/examples/$_.stacks") } qw(web web2 locks app);

my $dir = tempdir('offsample-examples.XXXXXX', TMPDIR => 1, CLEANUP => 1);
copy("$root/$files{$_}", "$dir/$_") or die "$files{$_}: $!\n" for keys %files;
mkdir "$dir/cache", 0700;

open(my $in, '<', $doc) or die "$doc: $!\n";
my @lines = <$in>;
close $in;

my (@out, $live, $bad);
for (my $i = 0; $i < @lines; $i++) {
	my $l = $lines[$i];
	push @out, $l;
	$live = $1 if $l =~ /^<!-- live: (\S+) -->$/;
	next unless $l =~ /^```console$/ && $i + 1 < @lines && $lines[$i + 1] =~ /^\$ (.*)$/;
	my $cmd = $1;
	push @out, $lines[++$i];
	my @old;
	while (++$i < @lines && $lines[$i] !~ /^```$/) {
		push @old, $lines[$i];
	}
	my $got = run($cmd, $live);
	undef $live;
	if (join('', @old) ne $got) {
		$bad = 1;
		unless ($update) {
			print "--- $doc: \$ $cmd\n";
			open(my $a, '>', "$dir/a") or die; print $a @old; close $a;
			open(my $b, '>', "$dir/b") or die; print $b $got; close $b;
			system('diff', '-u', "$dir/a", "$dir/b");
		}
	}
	push @out, $got, "```\n";
}
if ($update) {
	open(my $o, '>', $doc) or die "$doc: $!\n";
	print $o @out;
	close $o or die "$doc: $!\n";
	exit 0;
}
exit($bad ? 1 : 0);

# run(COMMAND, LIVE): what COMMAND prints (stdout and stderr) in the
# examples' folder, with a fake module serving LIVE when given.
sub run {
	my ($cmd, $live) = @_;
	my $proc = "$dir/proc";
	system('rm', '-rf', $proc, "$dir/sys");
	mkdir $proc;
	mkdir "$dir/sys";
	if ($live) {
		copy("$dir/$live", "$proc/$_") or die "$live: $!\n" for 'stacks', 'drain';
		open(my $c, '>', "$proc/control") or die; close $c;
	}
	local $ENV{PATH} = "$root/tools:$root/flamegraph:/usr/bin:/bin";
	local $ENV{OFFSAMPLE_PROC} = $live ? $proc : "$dir/no-module";
	local $ENV{OFFSAMPLE_SYS} = "$dir/sys";
	local $ENV{OFFSAMPLE_CACHE_DIR} = "$dir/cache";
	local $ENV{TMPDIR} = $dir;
	local $ENV{TZ} = 'UTC';
	local $ENV{LC_ALL} = 'C';
	delete local $ENV{DEBUGINFOD_URLS};
	open(my $fh, '-|', 'bash', '-c', "cd \"\$0\" && { $cmd; } 2>&1 < /dev/null", $dir) or die "bash: $!\n";
	my $out = do { local $/; <$fh> } // '';
	close $fh;
	$out =~ s/\Q$dir\E/./g;
	return $out;
}
