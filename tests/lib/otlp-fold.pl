#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# otlp-fold.pl [--seconds] FILE...: OTLP profiles in OTLP/JSON (what the
# OpenTelemetry Collector's file exporter writes, one request a line, or
# offsample otlp --json) as folded stacks in the form of
# `offsample collapse`: "reason;comm;frame;...;leaf COUNT", root first,
# COUNT the samples (value / period) or with --seconds the seconds.
# A test oracle: it reads what the collector decoded and understood, not
# what offsample meant to write.  Identical stacks are summed; sorted.
use strict;
use warnings;
no warnings 'portable';
use JSON::PP;

my $seconds = @ARGV && $ARGV[0] eq '--seconds' ? shift : 0;
my %w;
local $/;
for my $f (@ARGV) {
	open(my $fh, '<', $f) or die "$f: $!\n";
	my $text = <$fh>;
	$text =~ tr/\0//d;	# (a file truncated under the exporter: holes)
	for my $line (grep { /\S/ } split /\n/, $text) {
		my $j = decode_json($line);
		my $d = $j->{dictionary} // {};
		my @str = @{$d->{stringTable} // []};
		my $s = sub { my ($o, $k) = @_; return $o->{$k} // (defined $o->{"${k}Strindex"} ? $str[$o->{"${k}Strindex"}] : undef) };
		my $val = sub { my $v = $_[0] // {}; return $v->{stringValue} // (defined $v->{stringValueStrindex} ? $str[$v->{stringValueStrindex}] : $v->{intValue}) };
		my $attrs = sub {
			my %a;
			for (@{$_[0] // []}) {
				my $x = ref $_ ? $_ : $d->{attributeTable}[$_];
				$a{$s->($x, 'key')} = $val->($x->{value});
			}
			return \%a;
		};
		for my $rp (@{$j->{resourceProfiles} // []}) {
			my $ra = $attrs->($rp->{resource}{attributes});
			for my $sp (@{$rp->{scopeProfiles} // []}) {
				for my $p (@{$sp->{profiles} // []}) {
					my $period = $p->{period} // 1;
					for my $smp (@{$p->{samples} // []}) {
						my $sa = $attrs->($smp->{attributeIndices});
						my @fr;
						for my $li (@{$d->{stackTable}[$smp->{stackIndex} // 0]{locationIndices} // []}) {
							my $l = $d->{locationTable}[$li];
							my $m = $d->{mappingTable}[$l->{mappingIndex} // 0] // {};
							my $file = $s->($m, 'filename') // '';
							my $fn = @{$l->{lines} // []} ? $d->{functionTable}[$l->{lines}[0]{functionIndex} // 0] : undef;
							my $name = $fn ? $s->($fn, 'name') : undef;
							my $ft = $attrs->($l->{attributeIndices})->{'profile.frame.type'} // '';
							if ($ft eq 'cpython' && defined $name) {
								# A Python function, as collapse shows it.
								(my $src = $s->($fn, 'filename') // '') =~ s{.*/}{};
								$name .= sprintf(' (%s:%s)', $src, $l->{lines}[0]{line} // 0);
							} elsif (!defined $name || $name eq '') {
								(my $base = $file) =~ s{.*/}{};
								$name = sprintf('%s+0x%x', $base, $l->{address} // 0);
							} elsif ($file =~ /^\[(?!kernel\.kallsyms\]|jit\])/) {
								$name .= " $file";	# a kernel module's frame
							}
							unshift @fr, $name;
						}
						# Text escaped as the stacks format and the
						# folded form have it.
						my $k = join(';', map { s/([\x00-\x1f\x7f\\;])/sprintf('\\x%02x', ord $1)/ger }
							$sa->{'offsample.reason'} // '?', $ra->{'process.executable.name'} // '?', @fr);
						my $v = 0;
						$v += $_ for @{$smp->{values} // []};
						$w{$k} += $seconds ? $v / 1e9 : $v / $period;
					}
				}
			}
		}
	}
}
for my $k (sort keys %w) {
	my $v = $seconds ? sprintf('%.6f', $w{$k}) : sprintf('%.0f', $w{$k});
	$v =~ s/\.?0+\z// if $seconds;
	print "$k $v\n";
}
