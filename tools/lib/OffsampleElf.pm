# SPDX-License-Identifier: GPL-2.0
#
# OffsampleElf - what offsample-symbolize reads of an ELF file itself,
# without nm: the program headers (PT_LOAD, to turn file offsets into
# addresses), the GNU build-id, and which of .symtab, .gnu_debuglink and
# .gnu_debugdata it has.  Every offset and size comes from a file that may
# be damaged and is checked against the file's size before it is read.
# An installed offsample-symbolize carries it inline as text
# (packaging/inline-reader.pl).  Not a user command.
#
# Perl 5, core modules only.
package OffsampleElf;

use strict;
use warnings;

# elf_info(PATH) -> { loads => [[offset, vaddr, filesz]...], build_id => hex,
# symtab => has one, debuglink => [name, crc], debugdata => [offset, size] }
# or undef when PATH is not a readable ELF file.
sub elf_info {
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or return;
	my $eh = '';
	read($fh, $eh, 64);
	return unless length($eh) >= 52 && substr($eh, 0, 4) eq "\x7fELF";
	my ($class, $data) = unpack('x4 C C', $eh);
	my $e = $data == 1 ? '<' : $data == 2 ? '>' : return;
	my ($phoff, $phentsize, $phnum);
	if ($class == 2) {
		return if length($eh) < 64;
		($phoff, $phentsize, $phnum) = unpack("x32 Q$e x12 x2 S$e S$e", $eh);
	} elsif ($class == 1) {
		($phoff, $phentsize, $phnum) = unpack("x28 L$e x8 x2 S$e S$e", $eh);
	} else {
		return;
	}
	# Headers come from a file that may be damaged: the table must lie
	# inside the file, and an entry is at most 1 KiB (56 or 32 bytes in
	# any file a linker wrote), so a read never asks for more than the
	# file holds (a 4 GiB read ran a guest out of memory).
	my $fsize = -s $fh // 0;
	return unless $phoff && $phnum && $phnum < 0xffff
		&& $phentsize >= ($class == 2 ? 56 : 32) && $phentsize <= 1024
		&& $phoff < $fsize && $phentsize * $phnum <= $fsize - $phoff;
	my $ph = '';
	seek($fh, $phoff, 0) or return;
	read($fh, $ph, $phentsize * $phnum);
	return unless length($ph) == $phentsize * $phnum;
	my (@loads, @notes);
	for my $i (0 .. $phnum - 1) {
		my $p = substr($ph, $i * $phentsize, $phentsize);
		my ($type, $off, $va, $fsz, $align);
		if ($class == 2) {
			($type, $off, $va, $fsz, $align) = unpack("L$e x4 Q$e Q$e x8 Q$e x8 Q$e", $p);
		} else {
			($type, $off, $va, $fsz, $align) = unpack("L$e L$e L$e x4 L$e x8 L$e", $p);
		}
		push @loads, [$off, $va, $fsz] if $type == 1;		# PT_LOAD
		push @notes, [$off, $fsz, $align] if $type == 4;	# PT_NOTE
	}
	my $id;
	for my $n (@notes) {
		my ($off, $sz, $align) = @$n;
		next if $sz > 65536 || $off >= $fsize;
		my $buf = '';
		seek($fh, $off, 0) or next;
		read($fh, $buf, $sz);
		my $al = $align && $align == 8 ? 8 : 4;
		my $pos = 0;
		while ($pos + 12 <= length $buf) {
			my ($nsz, $dsz, $nt) = unpack("x$pos L$e L$e L$e", $buf);
			my $name_at = $pos + 12;
			my $desc_at = $name_at + (($nsz + $al - 1) & ~($al - 1));
			last if $desc_at + $dsz > length $buf;
			# At most 64 bytes (elfutils' limit; it names files, URLs).
			if ($nt == 3 && $nsz == 4 && substr($buf, $name_at, 4) eq "GNU\0" && $dsz && $dsz <= 64) {
				$id = unpack('H*', substr($buf, $desc_at, $dsz));
				last;
			}
			$pos = $desc_at + (($dsz + $al - 1) & ~($al - 1));
		}
		last if defined $id;
	}
	# Section headers, within the same bounds: is there a .symtab, a
	# .gnu_debuglink (file name, CRC), a .gnu_debugdata (MiniDebugInfo)?
	my ($shoff, $shentsize, $shnum, $shstrndx) = unpack($class == 2 ? "x40 Q$e x10 S$e S$e S$e" : "x32 L$e x10 S$e S$e S$e", $eh);
	my ($sh, $str, %sec) = ('', '');
	if ($shoff && $shnum && $shnum < 0xff00 && $shstrndx < $shnum && $shentsize >= ($class == 2 ? 64 : 40)
	    && $shentsize <= 1024 && $shoff < $fsize && $shentsize * $shnum <= $fsize - $shoff
	    && seek($fh, $shoff, 0) && read($fh, $sh, $shentsize * $shnum) == $shentsize * $shnum) {
		my @s = map { [unpack($class == 2 ? "L$e L$e x16 Q$e Q$e" : "L$e L$e x8 L$e L$e", substr($sh, $_ * $shentsize, $shentsize))] } 0 .. $shnum - 1;
		my ($so, $ss) = @{$s[$shstrndx]}[2, 3];
		read($fh, $str, $ss) if $ss <= 1 << 20 && $so < $fsize && seek($fh, $so, 0);
		for (@s) {	# [name, type, offset, size]; NOBITS (8) holds nothing
			$sec{unpack('Z*', substr($str, $_->[0]))} //= $_ if $_->[0] < length($str) && $_->[1] != 8 && $_->[2] + $_->[3] <= $fsize;
		}
	}
	my ($link, $buf) = (undef, '');
	if (my $l = $sec{'.gnu_debuglink'}) {	# NAME NUL, padded to 4, CRC
		read($fh, $buf, $l->[3]) if $l->[3] <= 4096 && seek($fh, $l->[2], 0);
		my $name = unpack('Z*', $buf);
		my $at = (length($name) + 4) & ~3;
		$link = [$name, unpack("x$at L$e", $buf)] if $name =~ m{\A[^/]+\z} && $at + 4 <= length $buf;
	}
	my $dd = $sec{'.gnu_debugdata'};
	close $fh;
	return { loads => \@loads, build_id => $id, symtab => $sec{'.symtab'} && $sec{'.symtab'}[1] == 2,
		debuglink => $link, debugdata => $dd && $dd->[3] ? [@$dd[2, 3]] : undef };
}

1;
