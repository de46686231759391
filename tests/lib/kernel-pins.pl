#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
# List the places in FILEs that use one particular build of a kernel
# (6.1.0-56-amd64, 6.12.117+deb12-amd64, 5.10.0-30-rt-amd64, ...) to find
# something on the machine: its headers, modules, image, package, or a
# KVER=/KDIR= for a build or a guest.  Such a build is there only until
# Debian's next update: tests take releases from tests/vm/kernels.sh (the
# newest installed of each series) instead.  A release merely quoted as
# data (a fixture's "# kernel:" line, a string matched by a regex) is not
# listed.
#
#   tests/lib/kernel-pins.pl FILE...
#
# Prints FILE:LINE: TEXT for each, exits 1 if there is any, 0 if none,
# 2 on a file it cannot read.
use strict;
use warnings;

# A Debian kernel release: X.Y.0-ABI or X.Y.Z+debN, optionally -rt or
# -cloud, then the architecture.
my $rel = qr/\d+\.\d+(?:\.\d+)?(?:-\d+|\+deb\d+)(?:-rt|-cloud)?-amd64\b/;
# What precedes a release that is used to find an installed kernel.
my $use = qr{
	  linux-(?:image|headers|source|kbuild|modules)-	# a package of that build
	| /usr/src/linux-(?:headers|source)-			# its headers
	| /lib/modules/						# its modules
	| /boot/(?:vmlinu[xz]|config|System\.map|initrd\.img)-	# its image
	| \b(?:KVER|KDIR|BENCH_KERNEL|OFFS_KERNELS|CHECK_KERNELS|kernelver)=["']?
	| \bkdir\s+["']?					# tests' kdir helper
	| \brun-guest\.sh\s+(?:--\S+\s+\S+\s+)*["']?		# a guest of that build
}x;

my $bad = 0;
for my $f (@ARGV) {
	open my $fh, '<', $f or do { warn "kernel-pins: $f: $!\n"; exit 2 };
	while (my $l = <$fh>) {
		next unless $l =~ /$use$rel/;
		chomp $l;
		$l =~ s/^\s+//;
		print "$f:$.: $l\n";
		$bad = 1;
	}
	close $fh;
}
exit $bad;
