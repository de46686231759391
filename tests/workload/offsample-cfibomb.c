// SPDX-License-Identifier: GPL-2.0
/*
 * offsample-cfibomb - ELF files whose .eh_frame makes a CFI compiler do as
 * much work as its bounds allow (issue 53), and a process that maps one.
 *
 *   offsample-cfibomb SHAPE OUT [FDES [CIE_BYTES [CIES]]]
 *       write the file OUT
 *   offsample-cfibomb junk DIR N
 *       write N small files DIR/1 .. DIR/N that are no ELF at all (a
 *       build fails on them at once)
 *   offsample-cfibomb map [-w MS] FILE...
 *       map each FILE PROT_EXEC (what makes the module compile its
 *       .eh_frame: any file will do), print "mapped N", and sleep until
 *       killed; with -w, wake every MS milliseconds (a thread that ran is
 *       captured again, and its process's mapped files looked up again)
 *
 * Shapes:
 *   badcie   one CIE of CIE_BYTES bytes (default 1 MiB) of DW_CFA_nop that
 *            ends in an opcode no x86-64 .eh_frame has, and FDES FDEs
 *            (default 1000) that all point at it: a compiler that does not
 *            remember the failure parses it once per FDE
 *   thrash   CIES valid CIEs (default 64) of CIE_BYTES bytes each, and FDES
 *            FDEs pointing at them in turn: defeats a cache of fewer CIEs
 *   rows     FDES valid FDEs (default 800,000) of one CIE, each covering
 *            16 bytes in four rows (and an end marker): near the row bound,
 *            written in descending address order: the sort has work
 *   rules    one FDE whose program makes FDES distinct rules (default
 *            65,000: CFA offsets 8 + (k % 8192) << 18 and rbp saved at
 *            CFA - 8 (1 + k / 8192), which a hash of the low bits puts in
 *            one slot), one row each, then CIE_BYTES (default 1,000,000)
 *            DW_CFA_advance_loc 0: a lookup each, no row
 *   fine     a small valid file: one CIE, FDES FDEs (default 16)
 *
 * The file is an x86-64 ELF with one PT_LOAD (read, execute) holding it
 * all and a PT_GNU_EH_FRAME header, and section headers for readelf
 * (readelf -wF reads its .eh_frame).  Exit status 0, 1 on a write or mmap
 * error, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HDR_OFF		0x1000	/* .eh_frame_hdr */
#define EH_OFF		0x2000	/* .eh_frame */
#define TEXT_VADDR	0x100000	/* where the FDEs' code would be */

static uint8_t *buf;
static size_t len, cap;

static void need(size_t n)
{
	if (len + n <= cap)
		return;
	while (len + n > cap)
		cap = cap ? cap * 2 : 1 << 20;
	buf = realloc(buf, cap);
	if (!buf) {
		perror("offsample-cfibomb");
		exit(1);
	}
}

static void put(const void *p, size_t n)
{
	need(n);
	memcpy(buf + len, p, n);
	len += n;
}

static void put8(uint8_t v)
{
	put(&v, 1);
}

static void put32(uint32_t v)
{
	put(&v, 4);
}

static void fill(uint8_t v, size_t n)
{
	need(n);
	memset(buf + len, v, n);
	len += n;
}

static void put32_at(size_t off, uint32_t v)
{
	memcpy(buf + off, &v, 4);
}

/*
 * A CIE of about `bytes` bytes ("zR", code 1, data -8, ra 16, FDE pointers
 * pcrel sdata4; CFA rsp+8, ra at CFA-8), padded with DW_CFA_nop, the last
 * byte an invalid opcode if bad.  Returns its offset in .eh_frame.
 */
static size_t cie(size_t bytes, int bad)
{
	static const uint8_t body[] = {
		0, 0, 0, 0,		/* CIE id */
		1, 'z', 'R', 0,		/* version, augmentation */
		1, 0x78, 16,		/* code 1, data -8, ra 16 */
		1, 0x1b,		/* aug length, R: pcrel sdata4 */
		0x0c, 7, 8,		/* def_cfa rsp+8 */
		0x90, 1,		/* offset ra, cfa-8 */
	};
	size_t start = len, pad;

	put32(0);
	put(body, sizeof(body));
	pad = bytes > sizeof(body) + 4 ? bytes - sizeof(body) - 4 : 0;
	pad = (pad + 3) & ~(size_t)3;
	if (pad < 4)
		pad = 4;
	fill(0, pad);
	if (bad)
		buf[len - 1] = 0x20;	/* not a DW_CFA opcode */
	put32_at(start, len - start - 4);
	return start - EH_OFF;
}

/* An FDE of the CIE at .eh_frame offset cie_off for [pc, pc + range). */
static void fde(size_t cie_off, uint32_t pc, uint32_t range)
{
	static const uint8_t insns[] = {
		0x41, 0x0e, 16,		/* advance 1, def_cfa_offset 16 */
		0x86, 2,		/* offset rbp, cfa-16 */
		0x43, 0x0d, 6,		/* advance 3, def_cfa_register rbp */
		0x48, 0x0c, 7, 8,	/* advance 8, def_cfa rsp+8 */
	};
	size_t start = len;
	uint32_t vaddr;

	put32(0);
	put32(len - EH_OFF - cie_off);	/* CIE pointer: back to the CIE */
	vaddr = TEXT_VADDR + (len - HDR_OFF);	/* the pc field's address */
	put32(pc - vaddr);		/* pcrel sdata4 */
	put32(range);
	put8(0);			/* augmentation data length */
	put(insns, sizeof(insns));
	while ((len - start) % 4)
		put8(0);
	put32_at(start, len - start - 4);
}

static void uleb(uint64_t v)
{
	do {
		put8((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/* One FDE of many rules, then many lookups that add no row. */
static void rules_fde(size_t cie_off, unsigned long nrules, unsigned long zeros)
{
	size_t start = len;
	unsigned long k;
	uint32_t vaddr;

	put32(0);
	put32(len - EH_OFF - cie_off);
	vaddr = TEXT_VADDR + (len - HDR_OFF);
	put32(TEXT_VADDR - vaddr);
	put32(0x10000000);		/* a range that holds every row */
	put8(0);
	for (k = 0; k < nrules; k++) {
		put8(0x0e);		/* def_cfa_offset */
		uleb(8 + ((uint64_t)(k % 8192) << 18));
		put8(0x86);		/* offset rbp, cfa - 8 n */
		uleb(1 + k / 8192);
		put8(0x41);		/* advance 1: a row */
	}
	fill(0x40, zeros);		/* advance 0: the same address */
	while ((len - start) % 4)
		put8(0);
	put32_at(start, len - start - 4);
}

static unsigned long arg(char **argv, int argc, int i, unsigned long def)
{
	char *end;
	unsigned long v;

	if (i >= argc)
		return def;
	errno = 0;
	v = strtoul(argv[i], &end, 0);
	if (errno || *end || !*argv[i]) {
		fprintf(stderr, "offsample-cfibomb: bad number '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: offsample-cfibomb badcie|thrash|rows|rules|fine OUT [FDES [CIE_BYTES [CIES]]]\n"
		"       offsample-cfibomb junk DIR N\n"
		"       offsample-cfibomb map [-w MS] FILE...\n");
	exit(2);
}

/* N files that are not ELF, DIR/1 .. DIR/N. */
static int junk(const char *dir, unsigned long n)
{
	char path[4096];
	unsigned long i;
	FILE *f;

	for (i = 1; i <= n; i++) {
		snprintf(path, sizeof(path), "%s/%lu", dir, i);
		f = fopen(path, "w");
		if (!f || fprintf(f, "junk %lu\n", i) < 0 || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

/* Map every file executable, then wait to be sampled. */
static int map_all(int n, char **files, long wake_ms)
{
	struct timespec ts = { wake_ms / 1000, wake_ms % 1000 * 1000000 };
	int i, fd;
	off_t size;

	for (i = 0; i < n; i++) {
		fd = open(files[i], O_RDONLY);
		size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
		if (size <= 0 || mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror(files[i]);
			return 1;
		}
		close(fd);
	}
	printf("mapped %d\n", n);
	fflush(stdout);
	for (;;) {
		if (wake_ms)
			nanosleep(&ts, NULL);
		else
			pause();
	}
}

int main(int argc, char **argv)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph[2] = { 0 };
	Elf64_Shdr sh[4] = { 0 };
	static const char names[] = "\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
	unsigned long fdes, bytes, ncie, i;
	size_t *cies, eh_end, strs;
	const char *shape, *out;
	FILE *f;

	if (argc == 4 && !strcmp(argv[1], "junk"))
		return junk(argv[2], arg(argv, argc, 3, 0));
	if (argc > 4 && !strcmp(argv[1], "map") && !strcmp(argv[2], "-w"))
		return map_all(argc - 4, argv + 4, arg(argv, argc, 3, 0));
	if (argc > 2 && !strcmp(argv[1], "map"))
		return map_all(argc - 2, argv + 2, 0);
	if (argc < 3 || argc > 6)
		usage();
	shape = argv[1];
	out = argv[2];
	if (!strcmp(shape, "badcie")) {
		fdes = arg(argv, argc, 3, 1000);
		bytes = arg(argv, argc, 4, 1 << 20);
		ncie = 1;
	} else if (!strcmp(shape, "thrash")) {
		fdes = arg(argv, argc, 3, 100000);
		bytes = arg(argv, argc, 4, 4096);
		ncie = arg(argv, argc, 5, 64);
	} else if (!strcmp(shape, "rows")) {
		fdes = arg(argv, argc, 3, 800000);
		bytes = 0;
		ncie = 1;
	} else if (!strcmp(shape, "rules")) {
		fdes = arg(argv, argc, 3, 65000);
		bytes = arg(argv, argc, 4, 1000000);
		ncie = 1;
	} else if (!strcmp(shape, "fine")) {
		fdes = arg(argv, argc, 3, 16);
		bytes = 0;
		ncie = 1;
	} else {
		usage();
	}
	if (!ncie || fdes > 16000000 || bytes > (64UL << 20) || ncie > 100000)
		usage();

	/* Headers and .eh_frame_hdr (version 1, eh_frame_ptr pcrel sdata4). */
	need(EH_OFF);
	memset(buf, 0, EH_OFF);
	len = HDR_OFF;
	put8(1);
	put8(0x1b);
	put8(0xff);		/* no FDE count */
	put8(0xff);		/* no table */
	put32(EH_OFF - (HDR_OFF + 4));
	fill(0, 8);
	len = EH_OFF;

	cies = calloc(ncie, sizeof(*cies));
	if (!cies)
		return 1;
	if (!strcmp(shape, "rules")) {
		rules_fde(cie(0, 0), fdes, bytes);
		fdes = 0;
	} else {
		for (i = 0; i < ncie; i++)
			cies[i] = cie(bytes, !strcmp(shape, "badcie"));
	}
	for (i = 0; i < fdes; i++) {
		uint32_t pc = TEXT_VADDR + 16 * (uint32_t)i;

		if (!strcmp(shape, "rows"))
			pc = TEXT_VADDR + 16 * (uint32_t)(fdes - 1 - i);
		fde(cies[i % ncie], pc, 16);
	}
	put32(0);		/* terminator */
	eh_end = len;
	/* Section headers, for readelf (the module reads program headers). */
	strs = len;
	put(names, sizeof(names));
	while (len % 8)
		put8(0);
	sh[1].sh_name = 1;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = SHF_ALLOC;
	sh[1].sh_addr = TEXT_VADDR;
	sh[1].sh_offset = HDR_OFF;
	sh[1].sh_size = 16;
	sh[1].sh_addralign = 4;
	sh[2].sh_name = 15;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_flags = SHF_ALLOC;
	sh[2].sh_addr = TEXT_VADDR + EH_OFF - HDR_OFF;
	sh[2].sh_offset = EH_OFF;
	sh[2].sh_size = eh_end - EH_OFF;
	sh[2].sh_addralign = 8;
	sh[3].sh_name = 25;
	sh[3].sh_type = SHT_STRTAB;
	sh[3].sh_offset = strs;
	sh[3].sh_size = sizeof(names);
	sh[3].sh_addralign = 1;
	eh.e_shoff = len;
	eh.e_shentsize = sizeof(sh[0]);
	eh.e_shnum = 4;
	eh.e_shstrndx = 3;
	put(sh, sizeof(sh));
	while (len % 4096)
		put8(0);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph[0]);
	eh.e_phnum = 2;
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_offset = 0;
	ph[0].p_vaddr = ph[0].p_paddr = TEXT_VADDR - HDR_OFF;
	ph[0].p_filesz = ph[0].p_memsz = len;
	ph[0].p_align = 4096;
	ph[1].p_type = PT_GNU_EH_FRAME;
	ph[1].p_flags = PF_R;
	ph[1].p_offset = HDR_OFF;
	ph[1].p_vaddr = ph[1].p_paddr = TEXT_VADDR;
	ph[1].p_filesz = ph[1].p_memsz = 16;
	ph[1].p_align = 4;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), ph, sizeof(ph));

	f = fopen(out, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(out);
		return 1;
	}
	free(cies);
	return 0;
}
