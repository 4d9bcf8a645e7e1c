/*
 * t-elf.c - unit test of lib/elfread.c on this test's own executable:
 * function symbols, sections, PT_LOAD, build-id, the .note.stapsdt note a
 * USDT probe here creates; then every truncation of the file and some
 * corrupted headers, which must fail cleanly (or succeed), never crash.
 */
#include <elf.h>
#include <link.h>	/* includes <elf.h>: lib/elfread.h must not hide it */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>
#include "check.h"
#include "elfread.h"
#include "err.h"

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
	(void)argv;
	return check_done();
}
