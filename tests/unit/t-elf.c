/*
 * t-elf.c - unit test of lib/elfread.c on this test's own executable:
 * function symbols, sections, PT_LOAD, build-id, the .note.stapsdt note a
 * USDT probe here creates; then every truncation of the file and some
 * corrupted headers, which must fail cleanly (or succeed), never crash.
 * Then crafted images (img_build): each header, symbol table and note
 * refused by its message, the symbols and notes a walk reports; and
 * lib/usdt_note.c: SDT markers by provider (prelink's moved base), each bad
 * note refused, every operand form as uprobe fetch args or refused by why.
 */
#include <elf.h>
#include <stddef.h>
#include <link.h>	/* includes <elf.h>: lib/elfread.h must not hide it */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>
#include "check.h"
#include "elfread.h"
#include "err.h"
#include "usdt_note.h"

__attribute__((noinline)) int t_elf_marker_function(int x)
{
	DTRACE_PROBE1(vmtrace_test, t_elf_probe, x);
	return x + 1;
}

struct found {
	int marker, main_fn;
	uint64_t marker_value;
	int notes, stapsdt;
	char provider[64], probe[64];
};

static int on_sym(void *arg, const struct vt_elf_sym *s)
{
	struct found *f = arg;

	if (!strcmp(s->name, "t_elf_marker_function")) {
		f->marker = 1;
		f->marker_value = s->value;
	}
	if (!strcmp(s->name, "main"))
		f->main_fn = 1;
	return 0;
}

static int on_note(void *arg, const struct vt_elf_note *n)
{
	struct found *f = arg;

	f->notes++;
	/* stapsdt v3 desc: pc, base, semaphore (3 x 8 bytes), provider\0 name\0 args\0 */
	if (n->type == 3 && !strcmp(n->name, "stapsdt") && n->descsz > 24) {
		const char *p = (const char *)n->desc + 24, *end = (const char *)n->desc + n->descsz;
		size_t l = strnlen(p, end - p);

		if (l < (size_t)(end - p) && l < sizeof(f->provider)) {
			memcpy(f->provider, p, l + 1);
			p += l + 1;
			l = strnlen(p, end - p);
			if (l < (size_t)(end - p) && l < sizeof(f->probe))
				memcpy(f->probe, p, l + 1);
		}
		f->stapsdt++;
	}
	return 0;
}

static int stop_at_first(void *arg, const struct vt_elf_sym *s)
{
	(void)s;
	++*(int *)arg;
	return 7;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc(n);
	*len = fread(buf, 1, n, fp);
	fclose(fp);
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");

	fwrite(buf, 1, len, fp);
	fclose(fp);
}

/* ---- crafted images: a small ELF64 file of the sections and PT_LOAD
 * segments a test lists, each section's contents after the headers in
 * order (8-aligned), the section table last ---- */

#define IMG_MAX		8192
#define IMG_SECS	8

struct img_sec {
	const char *name;
	uint32_t type;
	uint64_t addr;
	const void *data;
	uint64_t size;
	uint32_t link;
	uint64_t entsize;
};

struct img {
	struct img_sec sec[IMG_SECS];	/* [0] is the null section */
	int nsec;
	Elf64_Phdr load[2];
	int nload;
	uint16_t type;			/* ET_DYN unless set */
	uint8_t buf[IMG_MAX] __attribute__((aligned(8)));	/* the headers are cast on it */
	size_t len;
	uint64_t off[IMG_SECS];		/* each section's contents in buf */
	uint64_t shoff;
};

/* Section @name of @im: its index. */
static int img_add(struct img *im, const char *name, uint32_t type, uint64_t addr,
		   const void *data, uint64_t size)
{
	im->sec[++im->nsec] = (struct img_sec){ name, type, addr, data, size, 0, 0 };
	return im->nsec;
}

static void img_load(struct img *im, uint64_t vaddr, uint64_t offset, uint64_t memsz)
{
	im->load[im->nload++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_offset = offset, .p_vaddr = vaddr, .p_paddr = vaddr, .p_filesz = memsz,
		.p_memsz = memsz, .p_align = 0x1000 };
}

/* Lay @im out in im->buf: headers, .shstrtab (added last), contents. */
static void img_build(struct img *im)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->buf;
	char names[256];
	size_t nlen = 1, pos;
	uint32_t name_off[IMG_SECS] = { 0 };

	memset(im->buf, 0, sizeof(im->buf));
	names[0] = 0;
	for (int i = 1; i <= im->nsec; i++) {
		name_off[i] = (uint32_t)nlen;
		nlen += (size_t)sprintf(names + nlen, "%s", im->sec[i].name) + 1;
	}
	name_off[im->nsec + 1] = (uint32_t)nlen;
	nlen += (size_t)sprintf(names + nlen, ".shstrtab") + 1;
	im->sec[im->nsec + 1] = (struct img_sec){ ".shstrtab", SHT_STRTAB, 0, names, nlen, 0, 0 };
	pos = sizeof(*eh) + (size_t)im->nload * sizeof(Elf64_Phdr);
	for (int i = 1; i <= im->nsec + 1; i++) {
		pos = (pos + 7) & ~(size_t)7;
		im->off[i] = pos;
		if (im->sec[i].type != SHT_NOBITS) {
			memcpy(im->buf + pos, im->sec[i].data, im->sec[i].size);
			pos += im->sec[i].size;
		}
	}
	im->shoff = (pos + 7) & ~(size_t)7;
	for (int i = 1; i <= im->nsec + 1; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(im->buf + im->shoff) + i;

		*sh = (Elf64_Shdr){ .sh_name = name_off[i], .sh_type = im->sec[i].type,
			.sh_addr = im->sec[i].addr, .sh_offset = im->off[i],
			.sh_size = im->sec[i].size, .sh_link = im->sec[i].link,
			.sh_entsize = im->sec[i].entsize, .sh_addralign = 8 };
	}
	im->len = im->shoff + (size_t)(im->nsec + 2) * sizeof(Elf64_Shdr);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = im->type ? im->type : ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = im->nload ? sizeof(*eh) : 0;
	eh->e_shoff = im->shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = (uint16_t)im->nload;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (uint16_t)(im->nsec + 2);
	eh->e_shstrndx = (uint16_t)(im->nsec + 1);
	memcpy(im->buf + sizeof(*eh), im->load, (size_t)im->nload * sizeof(Elf64_Phdr));
}

/* A note (4-byte aligned name and desc) appended at @p; its end. */
static uint8_t *put_note(uint8_t *p, uint32_t type, const char *name, const void *desc,
			 uint32_t descsz)
{
	Elf64_Nhdr nh = { (uint32_t)strlen(name) + 1, descsz, type };

	memcpy(p, &nh, sizeof(nh));
	p += sizeof(nh);
	memset(p, 0, (nh.n_namesz + 3) & ~3u);
	memcpy(p, name, nh.n_namesz);
	p += (nh.n_namesz + 3) & ~3u;
	memset(p, 0, (descsz + 3) & ~3u);
	memcpy(p, desc, descsz);
	return p + ((descsz + 3) & ~3u);
}

/* An SDT note's desc: pc, base, semaphore, then @strs (@slen bytes: the
 * provider, name and args, each NUL-terminated when well formed: SDT()
 * takes a literal's bytes without the NUL the compiler adds). */
static uint8_t *put_sdt(uint8_t *p, uint64_t pc, uint64_t base, uint64_t sem, const char *strs,
			size_t slen)
{
	uint8_t desc[256];

	memcpy(desc, &pc, 8);
	memcpy(desc + 8, &base, 8);
	memcpy(desc + 16, &sem, 8);
	memcpy(desc + 24, strs, slen);
	return put_note(p, 3, "stapsdt", desc, (uint32_t)(24 + slen));
}

#define SDT(p, pc, base, sem, lit)	put_sdt(p, pc, base, sem, lit, sizeof(lit) - 1)

/* The common layout of the SDT images: code at 0x1000 (file offset 0), the
 * semaphores' data at 0x5000 (file offset 0x800); .stapsdt.base at @base
 * (0: no such section); the notes section of @n bytes. */
static void usdt_img(struct img *im, uint64_t base, const uint8_t *notes, size_t n)
{
	memset(im, 0, sizeof(*im));
	img_load(im, 0x1000, 0, 0x1000);
	img_load(im, 0x5000, 0x800, 0x200);
	img_add(im, ".note.stapsdt", SHT_NOTE, 0, notes, n);
	if (base)
		img_add(im, ".stapsdt.base", SHT_PROGBITS, base, "", 1);
	img_build(im);
}

/* lib/usdt_note.c's reader on crafted notes: markers by provider, their
 * file offsets (moved as prelink moved .stapsdt.base), the room given;
 * each malformed note refused by name and offset. */
static void test_usdt_read(const char *tmp)
{
	struct vt_usdt_probe p[4];
	uint8_t notes[1024], *q;
	char path[4200], want[4400];
	struct img im;

	snprintf(path, sizeof(path), "%s/t-elf-usdt", tmp);
	q = put_note(notes, NT_GNU_BUILD_ID, "GNU", "\x01\x02", 2);	/* not SDT */
	q = put_note(q, 1, "stapsdt", "", 0);				/* not type 3 */
	q = SDT(q, 0x1010, 0x1f00, 0, "python\0" "function__entry\0" "8@%rdi -4@%esi\0");
	q = SDT(q, 0x1020, 0x1f00, 0x5004, "python\0" "gc__start\0" "-4@%edi\0");
	q = SDT(q, 0x1030, 0x1f00, 0, "libc\0" "setjmp\0" "\0");
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	CHECK(vt_usdt_probes_read(path, "python", p, 4) == 2);
	CHECK_STR(p[0].provider, "python");
	CHECK_STR(p[0].name, "function__entry");
	CHECK_STR(p[0].args, "8@%rdi -4@%esi\0");
	CHECK(p[0].pc_vaddr == 0x1010 && p[0].pc_off == 0x10);
	CHECK(p[0].sem_vaddr == 0 && p[0].sem_off == 0);
	CHECK_STR(p[1].name, "gc__start");
	CHECK(p[1].pc_off == 0x20 && p[1].sem_vaddr == 0x5004 && p[1].sem_off == 0x804);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) == 3);
	CHECK_STR(p[2].provider, "libc");
	CHECK_STR(p[2].args, "");
	CHECK(vt_usdt_probes_read(path, NULL, p, 1) == 1 && !strcmp(p[0].name, "function__entry"));
	CHECK(vt_usdt_probes_read(path, "perl", p, 4) == 0);

	/* prelinked: .stapsdt.base now at 0x2000, the notes say 0x1f00 */
	usdt_img(&im, 0x2000, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	CHECK(vt_usdt_probes_read(path, "python", p, 4) == 2);
	CHECK(p[0].pc_vaddr == 0x1110 && p[0].pc_off == 0x110);
	CHECK(p[1].pc_vaddr == 0x1120 && p[1].sem_vaddr == 0x5104 && p[1].sem_off == 0x904);
	/* no .stapsdt.base: the notes' addresses as they are */
	usdt_img(&im, 0, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	CHECK(vt_usdt_probes_read(path, "python", p, 4) == 2 && p[1].sem_off == 0x804);

	/* malformed notes, each the only one of its image */
	q = SDT(notes, 0x1010, 0x1f00, 0, "p\0");
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	snprintf(want, sizeof(want), "%s: note at offset %llu: SDT note too short", path,
		 (unsigned long long)im.off[1]);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0);
	CHECK_STR(vt_err_msg(), want);
	q = SDT(notes, 0x1010, 0x1f00, 0, "python\0" "entry");	/* the name runs to the end */
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	snprintf(want, sizeof(want), "%s: note at offset %llu: bad SDT strings", path,
		 (unsigned long long)im.off[1]);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0);
	CHECK_STR(vt_err_msg(), want);
	q = SDT(notes, 0x1010, 0x1f00, 0, "a_provider_name_of_seventy_bytes_which_is_more_than_"
		"the_64_allowed\0" "n\0" "\0");
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0);
	CHECK_STR(vt_err_msg(), want);
	q = SDT(notes, 0x1010, 0x1f00, 0, "python\0" "entry\0" "8@%rdi");	/* args unended */
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0);
	CHECK_STR(vt_err_msg(), want);
	q = SDT(notes, 0x800, 0x1f00, 0, "python\0" "entry\0" "\0");
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	snprintf(want, sizeof(want), "%s: marker python:entry at 0x800 is in no loaded segment",
		 path);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0);
	CHECK_STR(vt_err_msg(), want);
	q = SDT(notes, 0x1010, 0x1f00, 0x5200, "python\0" "entry\0" "\0");
	usdt_img(&im, 0x1f00, notes, (size_t)(q - notes));
	spit(path, im.buf, im.len);
	snprintf(want, sizeof(want),
		 "%s: semaphore of python:entry at 0x5200 is in no loaded segment", path);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0);
	CHECK_STR(vt_err_msg(), want);
	/* not an ELF file */
	spit(path, "#!/bin/sh\n", 10);
	CHECK(vt_usdt_probes_read(path, NULL, p, 4) < 0 && strstr(vt_err_msg(), "not an ELF"));
}

/* fetchargs of @args named "a" "b" "c" ... (as many as @n; "s" fetched as
 * a string); its return, the result or message in @out */
static int fetch(const char *args, int n, const char *s, char *out, size_t len)
{
	static const char *const all[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	const char *names[9] = { NULL };
	const char *const strings[] = { s, NULL };
	int ret;

	for (int i = 0; i < n; i++)
		names[i] = all[i];
	ret = vt_usdt_fetchargs(args, names, s ? strings : NULL, out, len);
	if (ret)
		snprintf(out, len, "%s", vt_err_msg());
	return ret;
}

/* lib/usdt_note.c's operands to uprobe fetch args: every operand form and
 * register spelling, strings, skipped arguments; each one refused says why. */
static void test_usdt_fetchargs(void)
{
	static const char *const skip_first[] = { "", "b", NULL };
	char out[VT_USDT_FETCH_MAX], big[VT_USDT_ARGS_MAX + 8];

	CHECK(fetch("8@%rdi -4@%esi 2@%ax 1@%sil -8@%r12 4@%r9d 8@$42 8@-16(%rbp)", 8, NULL, out,
		    sizeof(out)) == 0);
	CHECK_STR(out, "a=%di:u64 b=%si:s32 c=%ax:u16 d=%si:u8 e=%r12:s64 f=%r9:u32 g=\\42:u64 "
		  "h=-16(%bp):u64");
	CHECK(fetch("8@%rax 8@24(%rbx)", 2, "a", out, sizeof(out)) == 0);
	CHECK_STR(out, "a=+0(%ax):string b=+24(%bx):u64");
	CHECK(fetch("8@%rax 8@24(%rbx)", 2, "b", out, sizeof(out)) == 0);
	CHECK_STR(out, "a=%ax:u64 b=+0(+24(%bx)):string");
	CHECK(vt_usdt_fetchargs("8@%rdi 4@%esi", skip_first, NULL, out, sizeof(out)) == 0);
	CHECK_STR(out, "b=%si:u32");
	/* more operands than names: the rest are not fetched */
	CHECK(fetch("8@%rdi 8@%rsi", 1, NULL, out, sizeof(out)) == 0);
	CHECK_STR(out, "a=%di:u64");

	CHECK(fetch("8@%rdi", 2, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT marker has fewer arguments than expected (1)");
	CHECK(fetch("%rdi", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '%rdi' has no size");
	CHECK(fetch("0@%rdi", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '0@%rdi' has a bad size");
	CHECK(fetch("16@%rdi", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '16@%rdi' has a bad size");
	CHECK(fetch("-16@%rdi", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '-16@%rdi' has a bad size");
	CHECK(fetch("8x@%rdi", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '8x@%rdi' has a bad size");
	CHECK(fetch("8@$1", 1, "a", out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '$1': immediate cannot be a string");
	CHECK(fetch("8@foo", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand 'foo' is not supported");
	CHECK(fetch("8@8(rax)", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand '8(rax)' is not supported");
	CHECK(fetch("8@8(%rip)", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand register 'rip' is not supported");
	CHECK(fetch("8@8(%xmm0)", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand register 'xmm0' is not supported");
	CHECK(fetch("8@%xmm0", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand register 'xmm0' is not supported");
	CHECK(fetch("8@%r7", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand register 'r7' is not supported");
	CHECK(fetch("8@%r16", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand register 'r16' is not supported");
	CHECK(fetch("8@%rq", 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT operand register 'rq' is not supported");
	/* a string longer than the notes carry; a result that does not fit */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK(fetch(big, 1, NULL, out, sizeof(out)) < 0);
	CHECK_STR(out, "SDT argument string too long");
	CHECK(fetch("8@%rdi 8@%rsi", 2, NULL, out, 12) < 0);
	CHECK(!strcmp(vt_err_msg(), "uprobe fetch args too long"));
}

/* Rewrite section @idx's header of built image @im. */
static Elf64_Shdr *img_shdr(struct img *im, int idx)
{
	return (Elf64_Shdr *)(im->buf + im->shoff) + idx;
}

/* Open built image @im as @path: the handle, or NULL with the message. */
static struct vt_elf *img_open(const struct img *im, const char *path)
{
	spit(path, im->buf, im->len);
	return vt_elf_open(path);
}

struct syms_seen {
	char got[256];		/* "name:bind " of each symbol reported */
};

static int seen_sym(void *arg, const struct vt_elf_sym *s)
{
	struct syms_seen *w = arg;
	size_t n = strlen(w->got);

	snprintf(w->got + n, sizeof(w->got) - n, "%s:%c ", s->name, s->bind);
	return 0;
}

/* A symbol table of every kind the walk reports or passes over. */
static void put_syms(Elf64_Sym *sym, char *str, size_t *nsym, size_t *nstr)
{
	static const struct {
		const char *name;
		unsigned bind, type, shndx, size;
	} t[] = {
		{ "glob", STB_GLOBAL, STT_FUNC, 1, 16 },
		{ "weak_fn", STB_WEAK, STT_FUNC, 1, 16 },
		{ "local_fn", STB_LOCAL, STT_FUNC, 1, 16 },
		{ "resolver", STB_GLOBAL, STT_GNU_IFUNC, 1, 16 },
		{ "undef", STB_GLOBAL, STT_FUNC, SHN_UNDEF, 16 },	/* an import */
		{ "no_size", STB_GLOBAL, STT_FUNC, 1, 0 },
		{ "object", STB_GLOBAL, STT_OBJECT, 1, 8 },
		{ "", STB_GLOBAL, STT_FUNC, 1, 16 },
	};
	size_t ns = 1, nc = 1;

	memset(sym, 0, sizeof(*sym));
	str[0] = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++, ns++) {
		sym[ns] = (Elf64_Sym){ .st_name = (uint32_t)nc,
			.st_info = ELF64_ST_INFO(t[i].bind, t[i].type), .st_shndx = t[i].shndx,
			.st_value = 0x1000 + 16 * i, .st_size = t[i].size };
		nc += (size_t)sprintf(str + nc, "%s", t[i].name) + 1;
	}
	/* a name past the string table: no name */
	sym[ns++] = (Elf64_Sym){ .st_name = 4000, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		.st_shndx = 1, .st_size = 16 };
	*nsym = ns;
	*nstr = nc;
}

/* lib/elfread.c's symbol walks on crafted tables: which symbols count, the
 * bind letters, .dynsym when there is no .symtab, has_sym's imports; each
 * malformed table refused by name. */
static void test_elf_syms(const char *path)
{
	static const char *const imports[] = { "nope", "undef", NULL };
	static const char *const none[] = { "nope", "", NULL };
	Elf64_Sym sym[16];
	char str[256], want[4400];
	size_t nsym, nstr;
	struct syms_seen w;
	struct vt_elf *e;
	struct img im;
	int tab, strs;

	put_syms(sym, str, &nsym, &nstr);
	for (int dyn = 0; dyn < 2; dyn++) {
		memset(&im, 0, sizeof(im));
		img_load(&im, 0x1000, 0, 0x1000);
		tab = img_add(&im, dyn ? ".dynsym" : ".symtab", dyn ? SHT_DYNSYM : SHT_SYMTAB, 0,
			      sym, nsym * sizeof(*sym));
		strs = img_add(&im, dyn ? ".dynstr" : ".strtab", SHT_STRTAB, 0, str, nstr);
		im.sec[tab].link = (uint32_t)strs;
		im.sec[tab].entsize = sizeof(Elf64_Sym);
		img_build(&im);
		e = img_open(&im, path);
		CHECK(e != NULL);
		if (!e)
			continue;
		memset(&w, 0, sizeof(w));
		CHECK(vt_elf_syms(e, seen_sym, &w) == 0);
		CHECK_STR(w.got, "glob:g weak_fn:w local_fn:l resolver:g ");
		CHECK(vt_elf_has_sym(e, imports) == 1);
		CHECK(vt_elf_has_sym(e, none) == 0);
		vt_elf_close(e);
	}
	/* no symbol table at all */
	memset(&im, 0, sizeof(im));
	img_add(&im, ".text", SHT_PROGBITS, 0x1000, "\xc3", 1);
	img_build(&im);
	e = img_open(&im, path);
	CHECK(e && vt_elf_syms(e, seen_sym, &w) == 0 && vt_elf_has_sym(e, imports) == 0);
	vt_elf_close(e);

	/* malformed: entry size, a link past the sections, a link to no string table */
	for (int bad = 0; bad < 3; bad++) {
		memset(&im, 0, sizeof(im));
		tab = img_add(&im, ".symtab", SHT_SYMTAB, 0, sym, nsym * sizeof(*sym));
		strs = img_add(&im, ".strtab", bad == 2 ? SHT_PROGBITS : SHT_STRTAB, 0, str, nstr);
		im.sec[tab].link = bad == 1 ? 40 : (uint32_t)strs;
		im.sec[tab].entsize = bad == 0 ? 16 : sizeof(Elf64_Sym);
		img_build(&im);
		if (bad == 0)
			snprintf(want, sizeof(want), "%s: symbol table at offset %#llx has a bad "
				 "entry size", path, (unsigned long long)im.off[tab]);
		else if (bad == 1)
			snprintf(want, sizeof(want), "%s: symbol table links to missing section 40",
				 path);
		else
			snprintf(want, sizeof(want), "%s: symbol string table out of bounds", path);
		e = img_open(&im, path);
		CHECK(e != NULL);
		if (!e)
			continue;
		CHECK(vt_elf_syms(e, seen_sym, &w) < 0);
		CHECK_STR(vt_err_msg(), want);
		CHECK(vt_elf_has_sym(e, imports) < 0);
		CHECK_STR(vt_err_msg(), want);
		vt_elf_close(e);
	}
}

static int count_note(void *arg, const struct vt_elf_note *n)
{
	char *got = arg;
	size_t len = strlen(got);

	snprintf(got + len, 256 - len, "%s/%u/%u ", n->name, n->type, n->descsz);
	return 0;
}

/* Image @im with one notes section @name of @n bytes (@type) at @path. */
static struct vt_elf *notes_img(struct img *im, const char *path, const char *name, uint32_t type,
				const void *notes, size_t n)
{
	memset(im, 0, sizeof(*im));
	img_add(im, name, type, 0, notes, n);
	img_build(im);
	return img_open(im, path);
}

/* lib/elfread.c's note walk and build-id on crafted sections: an unnamed
 * note, the last one's padding cut, a NOBITS section; each malformed note
 * refused by section and offset. */
static void test_elf_notes(const char *path)
{
	static const struct {
		uint32_t namesz, descsz;
		size_t len;		/* bytes of the section */
		const char *what;
	} bad[] = {
		{ 4, 0, 8, "truncated note header" },
		{ 100, 0, 16, "note name out of bounds" },
		{ 5, 0, 17, "note name out of bounds" },	/* its padding cut */
		{ 4, 100, 20, "note data out of bounds" },
		{ 4, 0, 16, "note name not terminated" },
	};
	uint8_t notes[512], *q;
	char got[256], want[4400], id[64];
	struct vt_elf *e;
	struct img im;

	/* GNU build-id among other notes: an ABI tag, another owner's type 3,
	 * an empty build-id, no name at all; the last desc's padding cut */
	q = put_note(notes, NT_GNU_ABI_TAG, "GNU", "\0\0\0\0\3\0\0\0", 8);
	q = put_note(q, NT_GNU_BUILD_ID, "Xen", "\1", 1);
	q = put_note(q, NT_GNU_BUILD_ID, "GNU", "", 0);
	memcpy(q, &(Elf64_Nhdr){ 0, 0, 7 }, sizeof(Elf64_Nhdr));
	q += sizeof(Elf64_Nhdr);
	q = put_note(q, NT_GNU_BUILD_ID, "GNU", "\xab\xcd\xef", 3);
	e = notes_img(&im, path, ".note.gnu.build-id", SHT_NOTE, notes, (size_t)(q - notes) - 1);
	CHECK(e != NULL);
	if (e) {
		memset(got, 0, sizeof(got));
		CHECK(vt_elf_notes(e, ".note.gnu.build-id", count_note, got) == 0);
		CHECK_STR(got, "GNU/1/8 Xen/3/1 GNU/3/0 /7/0 GNU/3/3 ");
		CHECK(vt_elf_build_id(e, id, sizeof(id)) == 0);
		CHECK_STR(id, "abcdef");
		CHECK(vt_elf_build_id(e, id, 6) < 0);	/* no room for 6 digits and a NUL */
		vt_elf_close(e);
	}
	/* a NOBITS section holds no notes */
	e = notes_img(&im, path, ".note.stapsdt", SHT_NOBITS, notes, 64);
	memset(got, 0, sizeof(got));
	CHECK(e && vt_elf_notes(e, ".note.stapsdt", count_note, got) == 0 && !got[0]);
	vt_elf_close(e);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(notes, 0, sizeof(notes));
		memcpy(notes, &(Elf64_Nhdr){ bad[i].namesz, bad[i].descsz, 3 }, sizeof(Elf64_Nhdr));
		memcpy(notes + sizeof(Elf64_Nhdr), "GNUX", 4);
		if (bad[i].namesz != 4 || bad[i].descsz)
			notes[sizeof(Elf64_Nhdr) + 3] = 0;
		/* a good note first: the bad one's offset is 16 into the section */
		memmove(notes + 16, notes, bad[i].len);
		put_note(notes, NT_GNU_BUILD_ID, "GNU", "", 0);
		e = notes_img(&im, path, ".note.gnu.build-id", SHT_NOTE, notes, 16 + bad[i].len);
		CHECK(e != NULL);
		if (!e)
			continue;
		snprintf(want, sizeof(want), "%s: .note.gnu.build-id: %s at offset %#llx", path,
			 bad[i].what, (unsigned long long)im.off[1] + 16);
		CHECK(vt_elf_notes(e, ".note.gnu.build-id", count_note, got) < 0);
		CHECK_STR(vt_err_msg(), want);
		CHECK(vt_elf_build_id(e, id, sizeof(id)) < 0);
		vt_elf_close(e);
	}
}

/* lib/elfread.c's headers and sections on crafted images: what is
 * refused, by name; sections it cannot name or whose contents are not in
 * the file; no segments; files it cannot map. */
static void test_elf_headers(const char *path)
{
	static const struct {
		size_t off, size;	/* a header field, rewritten */
		uint64_t v;
		const char *msg;
	} bad[] = {
		{ EI_MAG1, 1, 'e', "not an ELF file" },	/* as long as a header */
		{ EI_CLASS, 1, ELFCLASS32, "not a 64-bit little-endian ELF file" },
		{ EI_DATA, 1, ELFDATA2MSB, "not a 64-bit little-endian ELF file" },
		{ offsetof(Elf64_Ehdr, e_type), 2, ET_REL,
		  "ELF type 1 is neither an executable nor a shared object" },
		{ offsetof(Elf64_Ehdr, e_phentsize), 2, 32, "program header table out of bounds" },
		{ offsetof(Elf64_Ehdr, e_phoff), 8, 68, "program header table out of bounds" },
		{ offsetof(Elf64_Ehdr, e_shentsize), 2, 40, "section header table out of bounds" },
		{ offsetof(Elf64_Ehdr, e_shoff), 8, 4, "section header table out of bounds" },
	};
	struct vt_elf_section s;
	struct vt_elf_load l;
	char want[4400];
	struct vt_elf *e;
	struct img im;
	FILE *fp;
	int far;

	memset(&im, 0, sizeof(im));
	img_load(&im, 0x401000, 0, 0x1000);
	im.type = ET_EXEC;
	img_add(&im, ".text", SHT_PROGBITS, 0x401000, "\xc3", 1);
	far = img_add(&im, ".far", SHT_PROGBITS, 0, "xx", 2);
	img_add(&im, ".bss", SHT_NOBITS, 0x402000, NULL, 1ULL << 40);
	img_build(&im);
	img_shdr(&im, far)->sh_offset = 1 << 20;	/* contents past the file */
	e = img_open(&im, path);
	CHECK(e != NULL);
	if (e) {
		CHECK(vt_elf_kind(e) == VT_ELF_EXEC && vt_elf_base_vaddr(e) == 0x401000);
		CHECK(vt_elf_section(e, ".text", &s) == 0 && s.addr == 0x401000 && s.size == 1);
		CHECK_STR(s.name, ".text");
		CHECK(vt_elf_section(e, ".far", &s) < 0);
		CHECK(vt_elf_section(e, ".bss", &s) == 0 && s.type == SHT_NOBITS);
		CHECK(s.size == 1ULL << 40);
		vt_elf_close(e);
	}
	/* the section name table NOBITS, or its index past the table: no names */
	img_shdr(&im, im.nsec + 1)->sh_type = SHT_NOBITS;
	e = img_open(&im, path);
	CHECK(e && vt_elf_section(e, ".text", &s) < 0);
	vt_elf_close(e);
	img_build(&im);
	((Elf64_Ehdr *)im.buf)->e_shstrndx = 99;
	e = img_open(&im, path);
	CHECK(e && vt_elf_section(e, ".text", &s) < 0);
	vt_elf_close(e);
	/* no segments, no sections: opens, holds nothing */
	memset(&im, 0, sizeof(im));
	img_build(&im);
	((Elf64_Ehdr *)im.buf)->e_shnum = 0;
	e = img_open(&im, path);
	CHECK(e != NULL);
	if (e) {
		CHECK(vt_elf_nr_loads(e) == 0 && vt_elf_load(e, 0, &l) < 0);
		CHECK(vt_elf_base_vaddr(e) == 0);
		CHECK(vt_elf_section(e, ".shstrtab", &s) < 0);
		vt_elf_close(e);
	}
	vt_elf_close(NULL);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&im, 0, sizeof(im));
		img_load(&im, 0x1000, 0, 0x1000);
		img_build(&im);
		memcpy(im.buf + bad[i].off, &bad[i].v, bad[i].size);
		snprintf(want, sizeof(want), "%s: %s", path, bad[i].msg);
		CHECK(img_open(&im, path) == NULL);
		CHECK_STR(vt_err_msg(), want);
	}
	/* an empty file and one past 4 GiB (sparse) */
	snprintf(want, sizeof(want), "%s: not a regular file of 1 byte to 4 GiB", path);
	spit(path, "", 0);
	CHECK(vt_elf_open(path) == NULL);
	CHECK_STR(vt_err_msg(), want);
	fp = fopen(path, "wb");
	CHECK(fp && ftruncate(fileno(fp), (off_t)VT_ELF_MAX_SIZE + 1) == 0);
	if (fp)
		fclose(fp);
	CHECK(vt_elf_open(path) == NULL);
	CHECK_STR(vt_err_msg(), want);
	unlink(path);
	/* a regular file that cannot be mapped (sysfs: a size, no mmap) */
	if (access("/sys/kernel/uevent_seqnum", R_OK) == 0) {
		CHECK(vt_elf_open("/sys/kernel/uevent_seqnum") == NULL);
		CHECK_STR(vt_err_msg(), "/sys/kernel/uevent_seqnum: cannot map: No such device");
	} else {
		printf("no /sys/kernel/uevent_seqnum: the mmap failure not checked\n");
	}
}

/* Open, walk symbols and notes; any result is fine but a crash. */
static void exercise(const char *path)
{
	struct vt_elf *e = vt_elf_open(path);
	struct found f = { 0 };
	struct vt_elf_section s;
	char id[128];

	if (!e) {
		CHECK(strstr(vt_err_msg(), path) != NULL);
		return;
	}
	vt_elf_syms(e, on_sym, &f);
	vt_elf_notes(e, ".note.stapsdt", on_note, &f);
	vt_elf_build_id(e, id, sizeof(id));
	vt_elf_section(e, ".text", &s);
	vt_elf_base_vaddr(e);
	vt_elf_close(e);
}

int main(int argc, char **argv)
{
	char self[4096], path[4200];
	const char *tmp = getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp";
	struct vt_elf *e;
	struct vt_elf_section s;
	struct vt_elf_load l;
	struct found f = { 0 };
	char id[128];
	ssize_t n;
	size_t len;
	char *img;
	int calls = 0;

	(void)argc;
	CHECK(t_elf_marker_function(1) == 2);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;

	e = vt_elf_open(self);
	CHECK(e != NULL);
	if (!e) {
		fprintf(stderr, "%s\n", vt_err_msg());
		return check_done();
	}
	CHECK_STR(vt_elf_path(e), self);
	CHECK(vt_elf_kind(e) == VT_ELF_DYN || vt_elf_kind(e) == VT_ELF_EXEC);
	CHECK(vt_elf_nr_loads(e) >= 2);
	CHECK(vt_elf_load(e, 0, &l) == 0);
	CHECK(vt_elf_load(e, 99, &l) < 0);
	CHECK(vt_elf_base_vaddr(e) == (vt_elf_kind(e) == VT_ELF_DYN ? 0 : 0x400000));
	CHECK(vt_elf_section(e, ".text", &s) == 0 && s.size > 0 && s.type == SHT_PROGBITS);
	CHECK(vt_elf_section(e, ".no-such-section", &s) < 0);
	CHECK(vt_elf_data(e, s.offset, s.size) != NULL);
	CHECK(vt_elf_data(e, s.offset, UINT64_MAX) == NULL);
	CHECK(vt_elf_syms(e, on_sym, &f) == 0);
	CHECK(f.marker && f.main_fn);
	/* the symbol's link-time value + load bias = its runtime address */
	{
		extern char __executable_start[];
		uint64_t bias = (uintptr_t)__executable_start - vt_elf_base_vaddr(e);

		CHECK(f.marker_value + bias == (uintptr_t)t_elf_marker_function);
	}
	CHECK(vt_elf_syms(e, stop_at_first, &calls) == 7 && calls == 1);
	CHECK(vt_elf_notes(e, ".note.stapsdt", on_note, &f) == 0);
	CHECK(f.stapsdt == 1);
	CHECK_STR(f.provider, "vmtrace_test");
	CHECK_STR(f.probe, "t_elf_probe");
	CHECK(vt_elf_notes(e, ".no-notes", on_note, &f) == 0);
	CHECK(vt_elf_build_id(e, id, sizeof(id)) == 0 && strlen(id) == 40);
	CHECK(vt_elf_build_id(e, id, 8) < 0);
	vt_elf_close(e);

	/* not ELF, missing, a directory */
	snprintf(path, sizeof(path), "%s/t-elf.bad", tmp);
	spit(path, "#!/bin/sh\n", 10);
	CHECK(vt_elf_open(path) == NULL && strstr(vt_err_msg(), "not an ELF"));
	CHECK(vt_elf_open("/nonexistent/elf") == NULL);
	CHECK(vt_elf_open("/") == NULL);

	/* every truncation (in steps) and corrupted table offsets */
	img = slurp(self, &len);
	CHECK(img != NULL);
	if (img) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
		size_t step = len / 97 + 1;

		for (size_t cut = 0; cut < len; cut += (cut < 256 ? 1 : step)) {
			spit(path, img, cut);
			exercise(path);
		}
		eh->e_shoff = len - 8;
		spit(path, img, len);
		CHECK(vt_elf_open(path) == NULL && strstr(vt_err_msg(), "section header"));
		free(img);
		img = slurp(self, &len);
		eh = (Elf64_Ehdr *)img;
		eh->e_phoff = (uint64_t)-64;
		spit(path, img, len);
		CHECK(vt_elf_open(path) == NULL && strstr(vt_err_msg(), "program header"));
		/* random bytes over the section headers: must not crash */
		free(img);
		img = slurp(self, &len);
		eh = (Elf64_Ehdr *)img;
		srand(1);
		for (int round = 0; round < 200; round++) {
			char *copy = malloc(len);
			uint64_t shoff = eh->e_shoff;

			memcpy(copy, img, len);
			for (int k = 0; k < 64; k++) {
				size_t at = shoff + (size_t)rand() % (eh->e_shnum * sizeof(Elf64_Shdr));

				if (at < len)
					copy[at] = rand();
			}
			spit(path, copy, len);
			exercise(path);
			free(copy);
		}
		free(img);
	}
	snprintf(path, sizeof(path), "%s/t-elf.img", tmp);
	test_elf_headers(path);
	test_elf_syms(path);
	test_elf_notes(path);
	test_usdt_read(tmp);
	test_usdt_fetchargs();
	(void)argv;
	return check_done();
}
