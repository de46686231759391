# SPDX-License-Identifier: GPL-2.0
#
# OffsampleText - what the text outputs of tools/offsample share
# (offsample-lib.pl, OffsampleReport.pm): option parsing, the reasons in
# their order with their one-letter tags, percentages, UTC times and the
# summary of the headers of one or more generations.  Not a user command.
# Perl 5, core modules only.
package OffsampleText;

use strict;
use warnings;
use Exporter qw(import);
use Getopt::Long qw(GetOptionsFromArray :config no_ignore_case bundling no_auto_abbrev);
use OffsampleStacks qw(fail);

our @EXPORT_OK = qw(getopts @REASONS letter rank tag pct utc uniq_join summary secs);

sub getopts {
	my ($argv, $h, @spec) = @_;
	my @errs;
	local $SIG{__WARN__} = sub { push @errs, $_[0] };
	if (!GetOptionsFromArray($argv, $h, @spec)) {
		my $e = $errs[0] // "invalid option\n";
		$e =~ s/\n.*//s;
		fail(2, lcfirst($e) . " (see --help)");
	}
}

# ---------------------------------------------------------------- data

# Reasons in the canonical order, and their one-letter annotations.
our @REASONS = qw(io lock sched sleep net ipc fault stopped idle other cpu);
our %LETTER = (io => 'I', lock => 'L', sched => 'S', sleep => 'Z', net => 'N',
	ipc => 'P', fault => 'F', stopped => 'T', idle => 'D', other => 'O',
	cpu => 'C');
our %RANK;
@RANK{@REASONS} = (0 .. $#REASONS);
sub letter { return $LETTER{$_[0]} // '?'; }
sub rank { return $RANK{$_[0]} // scalar @REASONS; }
sub tag { return '[' . letter($_[0]) . ']'; }

sub pct {
	my ($n, $total) = @_;
	return $total ? sprintf('%.2f%%', 100 * $n / $total) : '0.00%';
}

sub utc {
	my ($t) = @_;
	return '-' unless defined $t && $t =~ /^\d+(\.\d+)?\z/;
	# Not POSIX::strftime: loading POSIX is a fifth of a tool's start-up.
	my @g = gmtime(int $t);
	return sprintf('%04d-%02d-%02dT%02d:%02d:%02dZ', $g[5] + 1900, $g[4] + 1, @g[3, 2, 1, 0]);
}

sub uniq_join {
	my %seen;
	return join(', ', grep { !$seen{$_}++ } grep { defined && $_ ne '' } @_);
}

# Summary of the headers of one or more generations.
sub summary {
	my ($d) = @_;
	my @g = @{$d->{gens}};
	my %s;
	$s{host} = uniq_join(map { $_->{hostname} } @g) || '-';
	$s{kernel} = uniq_join(map { $_->{kernel} } @g) || '-';
	$s{version} = uniq_join(map { $_->{version} } @g) || '-';
	$s{format} = uniq_join(map { "v$_->{format}" } @g) || '-';
	$s{hz} = uniq_join(map { $_->{hz} } @g) || '-';
	$s{key} = uniq_join(map { $_->{key} } @g) || '-';
	my ($start, $end, $dur, $ticks, $dropped, $hsamples) = (undef, undef, 0, 0, 0, 0);
	for my $g (@g) {
		$start = $g->{start} if defined $g->{start} && $g->{start} =~ /^[\d.]+\z/
			&& (!defined $start || $g->{start} < $start);
		$end = $g->{end} if defined $g->{end} && $g->{end} =~ /^[\d.]+\z/
			&& (!defined $end || $g->{end} > $end);
		$dur += $g->{duration} if ($g->{duration} // '') =~ /^[\d.]+\z/;
		$ticks += $g->{ticks} if ($g->{ticks} // '') =~ /^\d+\z/;
		$dropped += $g->{dropped} if ($g->{dropped} // '') =~ /^\d+\z/;
	}
	@s{qw(start end duration ticks dropped)} = ($start, $end, $dur, $ticks, $dropped);
	$s{ngens} = scalar @g;
	my @gn = grep { defined && /^\d+\z/ } map { $_->{generation} } @g;
	$s{generations} = !@gn ? '-' : @gn == 1 ? $gn[0]
		: do { my @o = sort { $a <=> $b } @gn; "$o[0]..$o[-1]" };
	$s{source} = uniq_join(map { $_->{source} } @g) || '-';
	my $samples = 0;
	$samples += $_->{count} for @{$d->{recs}};
	$s{samples} = $samples;
	$s{records} = scalar @{$d->{recs}};
	return \%s;
}

# Estimated thread-seconds: sum of count / hz of each record's generation.
sub secs {
	my ($r) = @_;
	my $hz = $r->{gen}{hz} // '';
	return $hz =~ /^\d+\z/ && $hz > 0 ? $r->{count} / $hz : 0;
}

1;
