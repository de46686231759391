# SPDX-License-Identifier: GPL-2.0
#
# OffsampleJit - names for code a runtime compiled at run time (JIT): the
# user frames "[anon]+0xADDRESS" (and "[busy]+0xADDRESS") of offsample
# stacks, named from the symbol maps the runtimes write for perf:
#
#   perf map files   /tmp/perf-PID.map, lines "START SIZE NAME" (hex, with
#                    or without 0x; NAME the rest of the line): OpenJDK
#                    (jcmd PID Compiler.perfmap), Node.js
#                    (--perf-basic-prof), CPython 3.12+ (-X perf)
#   jitdump files    jit-PID.dump, found as a mapping of the process:
#                    code load and code move records (Node.js --perf-prof,
#                    CPython 3.13+ -X perf_jit)
#
# read from the running processes (through /proc/PID/root, with the pid
# the process's own pid namespace gives it), or from the "# jit:" header
# lines that `offsample record` and `offsample snapshot` keep with a
# recording (docs/FORMAT.md, "JIT maps").  Required by offsample-symbolize
# only when a frame needs it, and by offsample-lib.pl (jit: the capture
# at the end of a recording).  Not a user command.
#
# A frame is named "NAME+0xOFF ([jit])", OFF the distance from the start
# of the entry; the leaf is looked up at its address, a return address at
# address - 1 (as for files).  Perl 5, core modules only.
package OffsampleJit;

use strict;
use warnings;
no warnings 'portable';		# 64-bit hex addresses
use Fcntl qw(O_RDONLY O_NONBLOCK O_NOFOLLOW SEEK_SET);

our $PROC = '/proc';
our $MODULE = '[jit]';		# the pseudo file of a named frame
our $ME = 'offsample-symbolize';	# the name in messages
# Bounds on what one process's maps may cost (a perf map entry costs
# about 250 bytes of memory here): the last MAX_MAP_BYTES of a perf map
# are read (what it holds when opened: a map that grows meanwhile is not
# followed), lines of at most MAX_LINE bytes; the last MAX_ENTRIES
# entries of a process are kept (a later entry wins anyway); at most
# MAX_RECORDS jitdump records are read per process, however many it
# maps.  A run keeps at most MAX_TOTAL entries of all processes.
our $MAX_MAP_BYTES = 64 << 20;
our $MAX_LINE = 64 << 10;
our $MAX_ENTRIES = 1 << 18;
our $MAX_RECORDS = 1 << 22;
our $MAX_TOTAL = 1 << 20;
my $VERSION = 'v1';		# of the "# jit:" lines (the "# jit-maps:" line)
my $BIG = 1 << 20;		# entries larger than this are looked up apart

my %noted;
sub note {	# note(KEY, MESSAGE): MESSAGE on stderr, once per KEY and run
	my ($key, $msg) = @_;
	print STDERR "$ME: $msg\n" unless $noted{$key}++;
}

# ---------------------------------------------------------------- text

# The format's escape (docs/FORMAT.md): bytes below 0x20, 0x7f, "\" and
# ";" as \xNN; with SPACE true also the space (a field of a "# jit:" line
# before the last).
sub esc {
	my ($s, $space) = @_;
	if ($space) {
		$s =~ s/([\x00-\x20\x7f\\;])/sprintf('\\x%02x', ord $1)/ge;
	} else {
		$s =~ s/([\x00-\x1f\x7f\\;])/sprintf('\\x%02x', ord $1)/ge;
	}
	return $s;
}
sub unesc {
	my ($s) = @_;
	$s =~ s/\\x([0-9a-fA-F]{2})/chr(hex $1)/ge;
	return $s;
}

sub slurp {	# slurp(FILE, MAX): up to MAX bytes (64 KiB) of FILE, or undef
	my ($f, $max) = @_;
	open(my $fh, '<:raw', $f) or return;
	my $s = '';
	defined read($fh, $s, $max // 65536) or return;
	close $fh;
	return $s;
}

# ---------------------------------------------------------------- the maps

# An entry: [START, SIZE, NAME (escaped; undef: the code left that
# range), SOURCE ('perf-map' or 'jitdump')], in the order the file gave
# them: a later entry covering an address wins over an earlier one (a
# runtime appends the new code it puts where old code was).

# open_map(PATH, OWNERS, MAGIC) -> a handle on PATH; undef when there is
# none, 0 when there is one that is not used.  Used: a regular
# file (a FIFO would block: opened non-blocking), not reached through a
# link at its last name (unless MAGIC: a /proc/PID/map_files link, which
# is the mapped file itself), owned by root, by the user reading, or by
# one of OWNERS (the process's user ids): as perf, which ignores a map
# "not owned by current user or root", so that another user cannot name
# a process's frames by leaving a file at its name in /tmp.  What is
# not a regular file is not even opened (a device's open can act), and
# the file opened must be the one looked at.
sub open_map {
	my ($path, $owners, $magic) = @_;
	my @ls = $magic ? stat $path : lstat $path;
	return unless @ls;
	return 0 unless -f _;
	my $fh;
	sysopen($fh, $path, O_RDONLY | O_NONBLOCK | ($magic ? 0 : O_NOFOLLOW)) or return;
	my @st = stat $fh;
	return 0 unless @st && -f _ && $st[0] == $ls[0] && $st[1] == $ls[1];
	if ($st[4] != 0 && $st[4] != $> && !grep { $_ == $st[4] } @{$owners // []}) {
		note("owner $path", "$path: owned by user $st[4], not by the process's user or root; not used");
		return 0;
	}
	binmode $fh;
	return $fh;
}

# keep(ENTRIES, PATH): at most MAX_ENTRIES entries left, the last ones.
sub keep {
	my ($e, $path) = @_;
	return if @$e <= $MAX_ENTRIES;
	note("entries $path", sprintf('%s: more than %d entries; the earliest left out', $path, $MAX_ENTRIES));
	splice(@$e, 0, @$e - $MAX_ENTRIES);
}

# perf_map(PATH, OWNERS) -> [entries], undef when PATH cannot be read,
# none when it is not used (open_map).  Lines that are not "START SIZE
# NAME" are skipped, and so are a last line without its newline (the
# runtime is writing it: its name may be cut) and lines longer than
# MAX_LINE.  Of a map larger than MAX_MAP_BYTES, its end; what is
# appended while it is read, not.
sub perf_map {
	my ($path, $owners) = @_;
	my $fh = open_map($path, $owners) // return;
	return [] unless $fh;
	my $left = -s $fh;
	# $skip: the next line is the rest of one cut (by the seek, or too
	# long), not read.
	my ($skip, $buf, @e) = (0, '');
	if ($left > $MAX_MAP_BYTES) {
		note("size $path", sprintf('%s: larger than %d MiB; only its last %d MiB read', $path, $MAX_MAP_BYTES >> 20, $MAX_MAP_BYTES >> 20));
		sysseek($fh, $left - $MAX_MAP_BYTES, SEEK_SET) or return [];
		($left, $skip) = ($MAX_MAP_BYTES, 1);
	}
	while ($left > 0) {
		my $n = sysread($fh, $buf, $left < 1 << 20 ? $left : 1 << 20, length $buf);
		last unless $n;		# an error, or the file was cut
		$left -= $n;
		my $end = rindex($buf, "\n");
		if ($end < 0) {
			($buf, $skip) = ('', 1) if length $buf > $MAX_LINE;
			next;
		}
		for my $l (split /\n/, substr($buf, 0, $end + 1, '')) {
			if ($skip) {
				$skip = 0;
				next;
			}
			$l =~ s/\r\z//;
			next unless length $l <= $MAX_LINE && $l =~ /^(?:0[xX])?([0-9a-fA-F]{1,16})[ \t]+(?:0[xX])?([0-9a-fA-F]{1,16})[ \t](.+)\z/s;
			my ($s, $z) = (hex $1, hex $2);
			push @e, [$s, $z, esc($3), 'perf-map'] if $s && $z;
		}
		# (One more than kept: keep() says that some were left out.)
		splice(@e, 0, @e - $MAX_ENTRIES - 1) if @e >= 2 * $MAX_ENTRIES;
		($buf, $skip) = ('', 1) if length $buf > $MAX_LINE;
	}
	close $fh;
	keep(\@e, $path);
	return \@e;
}

# jitdump(PATH, OWNERS, MAGIC, BUDGET) -> [entries], none when PATH is not used
# (open_map), undef when it cannot be read or is not a jitdump (magic "JiTD" in either byte order; the writer's byte order
# is used for every field; elf_mach and the reserved word are not looked
# at: writers leave them unset).  CODE_LOAD adds an entry (code_addr,
# code_size, the name), CODE_MOVE moves the code of an earlier load (by
# code_index) and ends its old range; other records are skipped by their
# size.  A record that does not end inside the file (the runtime is
# appending it) or makes no sense ends the reading: the entries before
# it are kept.  BUDGET (a reference): how many records the process's
# jitdumps may still have read (MAX_RECORDS), lowered by those read.
sub jitdump {
	my ($path, $owners, $magic, $budget) = @_;
	$budget //= \(my $all = $MAX_RECORDS);
	my $fh = open_map($path, $owners, $magic) // return;
	return [] unless $fh;
	my $fsize = -s $fh;
	my $h = '';
	return unless (read($fh, $h, 40) // 0) == 40;
	my $m = unpack('V', $h);
	my $e = $m == 0x4A695444 ? '<' : $m == 0x4454694A ? '>' : return;
	my $hsize = unpack("x8 L$e", $h);
	$hsize = 40 if $hsize < 40 || $hsize > 4096;
	# %name: the names of the last loads by code_index (for moves),
	# @idx their order, both bounded as the entries are.
	my (@e, %name, @idx, $p, $b);
	my $at = $hsize;
	while ($at + 16 <= $fsize) {
		if ($$budget-- <= 0) {
			note("records $path", sprintf('%s: more than %d records in the jitdumps of its process; the rest not read', $path, $MAX_RECORDS));
			last;
		}
		if (@e >= 2 * $MAX_ENTRIES) {
			splice(@e, 0, @e - $MAX_ENTRIES - 1);
			delete @name{splice(@idx, 0, @idx - $MAX_ENTRIES)} if @idx > $MAX_ENTRIES;
		}
		seek($fh, $at, 0) or last;
		last unless (read($fh, $p, 16) // 0) == 16;
		my ($id, $size) = unpack("L$e L$e", $p);
		last if $size < 16 || $at + $size > $fsize;
		if ($id == 0) {		# CODE_LOAD
			last if $size < 16 + 40 + 2;
			last unless (read($fh, $b, 40) // 0) == 40;
			my ($addr, $csize, $index) = unpack("x16 Q$e Q$e Q$e", $b);
			my $nlen = $size - 16 - 40 - $csize;
			last if $csize > $size || $nlen < 1;
			$nlen = 4096 if $nlen > 4096;
			last unless (read($fh, $b, $nlen) // 0) == $nlen;
			my $n = unpack('Z*', $b);
			if ($addr && $csize && $n ne '') {
				push @e, [$addr, $csize, esc($n), 'jitdump'];
				push @idx, $index unless exists $name{$index};
				$name{$index} = $e[-1][2];
			}
		} elsif ($id == 1) {	# CODE_MOVE
			last if $size < 16 + 48;
			last unless (read($fh, $b, 48) // 0) == 48;
			my ($old, $new, $csize, $index) = unpack("x16 Q$e Q$e Q$e Q$e", $b);
			if ($csize) {
				push @e, [$old, $csize, undef, 'jitdump'] if $old;
				push @e, [$new, $csize, $name{$index}, 'jitdump'] if $new && defined $name{$index};
			}
		}
		$at += $size;
	}
	close $fh;
	keep(\@e, $path);
	return \@e;
}

# table(ENTRIES) -> a lookup table; find(TABLE, ADDRESS) -> the entry
# that covers ADDRESS (the last one in file order), undef if none does or
# the code left that range.
sub table {
	my ($entries) = @_;
	my (@s, @big);
	for my $i (0 .. $#$entries) {
		my $x = $entries->[$i];
		push @{$x->[1] > $BIG ? \@big : \@s}, [$x, $i];
	}
	@s = sort { $a->[0][0] <=> $b->[0][0] || $a->[1] <=> $b->[1] } @s;
	return { s => \@s, st => [map { $_->[0][0] } @s], big => \@big };
}

sub find {
	my ($t, $addr) = @_;
	my ($best, $bi) = (undef, -1);
	my $st = $t->{st};
	my ($lo, $hi) = (0, scalar @$st);
	while ($lo < $hi) {	# first start > addr
		my $mid = ($lo + $hi) >> 1;
		if ($st->[$mid] <= $addr) { $lo = $mid + 1 } else { $hi = $mid }
	}
	for (my $i = $lo - 1; $i >= 0 && $st->[$i] + $BIG > $addr; $i--) {
		my ($x, $seq) = @{$t->{s}[$i]};
		($best, $bi) = ($x, $seq) if $seq > $bi && $addr < $x->[0] + $x->[1];
	}
	for (@{$t->{big}}) {
		my ($x, $seq) = @$_;
		($best, $bi) = ($x, $seq) if $seq > $bi && $addr >= $x->[0] && $addr < $x->[0] + $x->[1];
	}
	return $best && defined $best->[2] ? $best : undef;
}

# ---------------------------------------------------------------- processes

my (%TAB, %BYCOMM, $scanned, $BTIME, $HZ);
my $total = 0;		# entries in %TAB (MAX_TOTAL)

# The process's pid as its own pid namespace numbers it: the last field
# of NStgid (Tgid on kernels before 4.1).
sub nspid {
	my ($pid) = @_;
	my $s = slurp("$PROC/$pid/status") // return $pid;
	return $1 if $s =~ /^NStgid:[ \t]*(?:\d+[ \t]+)*(\d+)[ \t]*$/m;
	return $1 if $s =~ /^Tgid:[ \t]*(\d+)/m;
	return $pid;
}

# uids(PID) -> [its real, effective, saved and filesystem user ids].
sub uids {
	my ($pid) = @_;
	my $s = slurp("$PROC/$pid/status") // return [];
	return $s =~ /^Uid:[ \t]*([\d \t]+)$/m ? [split ' ', $1] : [];
}

# proc_table(PID) -> the lookup table of what PID's maps hold (undef:
# none).  A live process: the jitdump files it maps (jit-NSPID.dump or
# jit-PID.dump; opened through /proc/PID/map_files, else through its
# root), then its perf map, /proc/PID/root/tmp/perf-NSPID.map, else
# /tmp/perf-PID.map; the perf map wins where both cover an address.  A
# process that is gone: /tmp/jit-PID.dump and /tmp/perf-PID.map, which
# runtimes leave behind (as perf report reads them).
sub proc_table {
	my ($pid) = @_;
	return $TAB{$pid} if exists $TAB{$pid};
	if ($total >= $MAX_TOTAL) {
		note('total', sprintf('the JIT maps read hold %d entries, the most a run keeps; those of later processes not read', $MAX_TOTAL));
		return $TAB{$pid} = undef;
	}
	my @all;
	my $budget = $MAX_RECORDS;
	if (-d "$PROC/$pid") {
		my ($ns, $uids) = (nspid($pid), uids($pid));
		if (open(my $fh, '<', "$PROC/$pid/maps")) {
			my %seen;
			while (my $l = <$fh>) {
				next unless $l =~ m{^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+ +(/(?:.*/)?jit-(\d+)\.dump)\n?\z};
				my ($lo, $hi, $path, $n) = ($1, $2, $3, $4);
				next if $n ne $ns && $n ne $pid || $seen{$path}++;
				my $d = jitdump(sprintf('%s/%s/map_files/%x-%x', $PROC, $pid, hex $lo, hex $hi), $uids, 1, \$budget)
					// jitdump("$PROC/$pid/root$path", $uids, 0, \$budget);
				push @all, @$d if $d;
				keep(\@all, "process $pid");
			}
			close $fh;
		}
		# The process's /tmp, unless it is a link (an absolute one
		# would be followed from this process's root, not its own).
		my $m;
		$m = perf_map("$PROC/$pid/root/tmp/perf-$ns.map", $uids) if -d "$PROC/$pid/root/tmp" && !-l "$PROC/$pid/root/tmp";
		$m //= perf_map("/tmp/perf-$pid.map", $uids);
		push @all, @$m if $m;
		keep(\@all, "process $pid");
	} else {
		for my $d (jitdump("/tmp/jit-$pid.dump", undef, 0, \$budget), perf_map("/tmp/perf-$pid.map")) {
			push @all, @$d if $d;
		}
		keep(\@all, "process $pid");
	}
	$total += @all;
	return $TAB{$pid} = @all ? table(\@all) : undef;
}

sub proc_comm {	# PID's name (its thread group leader's), undef if gone
	my ($pid) = @_;
	my $c = slurp("$PROC/$pid/comm") // return;
	$c =~ s/\n\z//;
	return $c;
}

# comm_pids(COMM) -> the live processes of that name.
sub comm_pids {
	my ($comm) = @_;
	if (!$scanned++ && opendir(my $dh, $PROC)) {
		for my $pid (grep { /^\d+\z/ } readdir $dh) {
			my $c = proc_comm($pid);
			push @{$BYCOMM{$c}}, $pid if defined $c;
		}
		closedir $dh;
	}
	return @{$BYCOMM{$comm} // []};
}

# proc_start(PID) -> when the process started (Unix seconds, to a second
# or so: boot time is given in whole seconds), undef if unknown.
sub proc_start {
	my ($pid) = @_;
	my $s = slurp("$PROC/$pid/stat") // return;
	$s =~ s/\A.*\) //s or return;
	my $ticks = (split ' ', $s)[19];
	return unless defined $ticks && $ticks =~ /^\d+\z/;
	$BTIME //= ((slurp("$PROC/stat", 1 << 22) // '') =~ /^btime (\d+)$/m)[0] // 0;
	return unless $BTIME;
	$HZ //= do { require POSIX; POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100 };
	return $BTIME + $ticks / $HZ;
}

# ---------------------------------------------------------------- naming

# The frame an entry gives an address ADDR (as sampled): its name and the
# distance from its start.
sub frame_of {
	my ($x, $addr) = @_;
	return sprintf('%s+0x%x (%s)', $x->[2], $addr - $x->[0], $MODULE);
}

# agree(ADDR, LOOK, TABLES): the frame every table that covers LOOK gives
# (LOOK: the address looked up, ADDR - 1 for a return address); undef
# when none covers it, '' when they disagree.
sub agree {
	my ($addr, $look, @t) = @_;
	my %f;
	for my $t (@t) {
		my $x = find($t, $look) or next;
		$f{frame_of($x, $addr)} = 1;
	}
	my @f = keys %f;
	return @f == 1 ? $f[0] : @f ? '' : undef;
}

# gen(HEADERS, HOST, LIVE): the naming state of one generation of a
# stacks file, made from its header lines (HEADERS: [name, value] pairs
# of the names jit, jit-maps, hostname, end; others are ignored).  HOST:
# this host's name; LIVE false: never read the maps of running processes.
sub gen {
	my ($hdr, $host, $live) = @_;
	my $g = { live => $live, memo => {}, cap => {}, capcomm => {} };
	my (@lines, $ok);
	$ok = 1;
	for (@$hdr) {
		my ($n, $v) = @$_;
		if ($n eq 'jit') {
			push @lines, $v;
		} elsif ($n eq 'jit-maps') {
			$ok = 0 unless $v =~ /^\Q$VERSION\E(?:\s|\z)/;
		} elsif ($n eq 'hostname') {
			$g->{live} = 0 if defined $host && $v ne $host;
		} elsif ($n eq 'end') {
			$g->{end} = $v if $v =~ /^\d+(?:\.\d+)?\z/;
		}
	}
	my %e;
	for my $l ($ok ? @lines : ()) {
		my $x = parse_line($l) or next;
		push @{$e{$x->{pid}}}, [$x->{start}, $x->{size}, $x->{name}, $x->{src}];
		$g->{pcomm}{$x->{pid}} //= $x->{comm};
	}
	for my $pid (sort { $a <=> $b } keys %e) {
		$g->{cap}{$pid} = table($e{$pid});
		push @{$g->{capcomm}{$g->{pcomm}{$pid}}}, $pid;
	}
	return $g;
}

# parse_line(VALUE) -> { pid, comm (unescaped), start, size, name
# (escaped), src } of a "# jit:" line, undef if it is not one: name=value
# fields separated by one space, in any order, unknown ones ignored, name=
# last (it is the rest of the line).
sub parse_line {
	my ($v) = @_;
	my ($pre, $name) = " $v" =~ /^(.*?) name=(.+)\z/s or return;
	my %f = map { /^([a-z][a-z0-9_-]*)=(\S*)\z/ ? ($1, $2) : () } split / /, $pre;
	return unless defined $f{pid} && $f{pid} =~ /^\d+\z/ && defined $f{comm}
		&& ($f{start} // '') =~ /^0x([0-9a-fA-F]{1,16})\z/;
	my $start = hex $1;
	return unless ($f{size} // '') =~ /^0x([0-9a-fA-F]{1,16})\z/;
	my $size = hex $1;
	return unless $start && $size;
	return { pid => $f{pid}, comm => unesc($f{comm}), start => $start, size => $size,
		 name => esc(unesc($name)), src => $f{src} // '-' };
}

# format_line(PID, COMM, ENTRY): the value of its "# jit:" line.
sub format_line {
	my ($pid, $comm, $x) = @_;
	return sprintf('pid=%d comm=%s start=0x%x size=0x%x src=%s name=%s', $pid, esc($comm, 1),
		$x->[0], $x->[1], $x->[3], $x->[2]);
}

# live(G, PID, COMM): the running processes a record may be: process PID
# (when the record has one) if its name is still COMM, else those named
# COMM; never one that started after the generation ended.  A PID that is
# gone stays (its maps may be left in /tmp).
sub live {
	my ($g, $pid, $comm) = @_;
	my @p;
	if ($pid ne '-') {
		my $c = proc_comm($pid);
		return $pid unless defined $c || -d "$PROC/$pid";
		@p = ($pid) if defined $c && $c eq $comm;
	} else {
		@p = comm_pids($comm);
	}
	return @p unless defined $g->{end};
	return grep { my $s = proc_start($_); !defined $s || $s <= $g->{end} + 2 } @p;
}

# name(G, FRAME, LEAF, PID, COMM): FRAME named, or FRAME as it is.  PID
# is the record's pid column ("-" without one), COMM its comm column (as
# escaped in the file).  The recording's "# jit:" entries of that process
# (of the processes of that name, without a pid) come first; then, when
# none covers the address, the running processes' maps.  With several
# processes, a name is given only when all of those that cover the
# address give the same.
sub name {
	my ($g, $frame, $leaf, $pid, $comm) = @_;
	my ($hex) = $frame =~ /^\[(?:anon|busy)\]\+0x([0-9a-fA-F]{1,16})\z/ or return $frame;
	my $addr = hex $hex;
	my $look = $leaf || !$addr ? $addr : $addr - 1;
	$pid = '-' unless defined $pid && $pid =~ /^\d+\z/;
	my $c = unesc($comm // '-');
	my $key = "$pid\0$c\0$addr\0$look";
	return $g->{memo}{$key} //= do {
		my @cap = $pid ne '-' ? grep { $g->{cap}{$_} } $pid : @{$g->{capcomm}{$c} // []};
		my $f = agree($addr, $look, map { $g->{cap}{$_} } @cap);
		if (!defined $f && $g->{live}) {
			$f = agree($addr, $look, grep { defined } map { proc_table($_) } live($g, $pid, $c));
		}
		defined $f && $f ne '' ? $f : $frame;
	};
}

# This host's name, as uname(2) gives it.
my $HOST;
sub hostname {
	return $HOST if defined $HOST;
	$HOST = slurp('/proc/sys/kernel/hostname') // '';
	$HOST =~ s/\n\z//;
	$HOST = (do { require POSIX; POSIX::uname() })[1] // '' if $HOST eq '';
	return $HOST;
}

# frame(STATE, LIVE, FRAME, LEAF, PID, COMM): offsample-symbolize's call
# for an [anon] or [busy] frame (the rest as for name()).  STATE: a hash
# the symbolizer makes anew for each generation, its "hdr" the
# generation's header lines jit, jit-maps, hostname and end as [name,
# value]; the generation's naming state is kept in it.  LIVE false: no
# running process is looked at.
sub frame {
	my ($st, $live, @a) = @_;
	my $g = $st->{gen} //= gen($st->{hdr} // [], hostname(), $live);
	return name($g, @a);
}

# ---------------------------------------------------------------- capture

# capture(IN, OUT): copy a stacks file (handles) adding, to each
# generation whose records have [anon]/[busy] frames and no "# jit-maps:"
# line yet, a "# jit-maps:" line and a "# jit:" line per map entry of the
# running processes (as name() picks them, by pid or by name) that one of
# those addresses falls in, before its "# columns:" line.  Returns the
# number of generations that got lines; nothing is written when none did
# (the caller keeps its file).
sub capture {
	my ($in, $out) = @_;
	my @l = <$in>;
	my (@g, $g, %col);
	for my $i (0 .. $#l) {
		my ($kind, @v) = OffsampleStacks::line_kind($l[$i]);
		if ($kind eq 'gen') {
			$g = { at => $i + 1, need => {} };
			push @g, $g;
			%col = ();
			next;
		}
		next unless $g;
		if ($kind eq 'columns') {
			%col = %{OffsampleStacks::column_index(@{$v[0]})};
			$g->{at} = $i;
		} elsif ($kind eq 'header' && $v[0] eq 'jit-maps') {
			$g->{done} = 1;
		} elsif ($kind eq 'record' && defined $col{ustack} && !$g->{done}) {
			(my $r = $l[$i]) =~ s/\r?\n\z//;
			my @f = split /\t/, $r, -1;
			my $u = $f[$col{ustack}] // '';
			next unless $u =~ /\[(?:anon|busy)\]\+0x/;
			my $pid = defined $col{pid} ? $f[$col{pid}] // '-' : '-';
			$pid = '-' unless $pid =~ /^\d+\z/;
			my $c = unesc(defined $col{comm} ? $f[$col{comm}] // '-' : '-');
			my @fr = split /;/, $u;
			for my $j (0 .. $#fr) {
				next unless $fr[$j] =~ /^\[(?:anon|busy)\]\+0x([0-9a-fA-F]{1,16})\z/;
				my $a = hex $1;
				$g->{need}{"$pid\0$c"}{$j && $a ? $a - 1 : $a} = 1;
			}
		}
	}
	my $n = 0;
	for my $g (@g) {
		next if $g->{done} || !%{$g->{need}};
		my %lines;
		my $st = { end => undef };
		for my $k (sort keys %{$g->{need}}) {
			my ($pid, $c) = split /\0/, $k, 2;
			for my $p (live($st, $pid, $c)) {
				my $t = proc_table($p) or next;
				for my $a (keys %{$g->{need}{$k}}) {
					my $x = find($t, $a) or next;
					$lines{"$p\0$x->[0]\0$x"} = [$p, $c, $x];
				}
			}
		}
		my @x = sort { $a->[0] <=> $b->[0] || $a->[2][0] <=> $b->[2][0] } values %lines;
		my %procs = map { $_->[0] => 1 } @x;
		$g->{add} = join('', sprintf("# jit-maps: %s entries=%d processes=%d\n", $VERSION, scalar @x, scalar keys %procs),
			map { '# jit: ' . format_line(@$_) . "\n" } @x);
		$n++;
	}
	return 0 unless $n;
	for my $g (reverse @g) {
		splice @l, $g->{at}, 0, $g->{add} if defined $g->{add};
	}
	print $out @l or die 'write error: ' . lc("$!") . "\n";
	return $n;
}

1;
