/*
 * fuzz-elf.c - libFuzzer target for lib/elfread.c (ELF files of guest
 * programs are untrusted): the input is written as a file, opened, and its
 * symbols, sections, segments, notes and build-id walked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz-util.h"
#include "elfread.h"

static int on_sym(void *arg, const struct vt_elf_sym *s)
{
	*(uint64_t *)arg += s->value + s->size + (unsigned char)s->name[0];
	return 0;
}

static int on_note(void *arg, const struct vt_elf_note *n)
{
	uint64_t *sum = arg;

	for (uint32_t i = 0; i < n->descsz; i++)
		*sum += n->desc[i];
	*sum += (unsigned char)n->name[0];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/vt-fuzz-elf.XXXXXX";
	struct vt_elf_section s;
	struct vt_elf_load l;
	struct vt_elf *e;
	uint64_t sum = 0;
	char id[64];

	if (fuzz_write_temp(data, size, path) < 0)
		return 0;
	e = vt_elf_open(path);
	unlink(path);
	if (!e)
		return 0;
	vt_elf_syms(e, on_sym, &sum);
	vt_elf_notes(e, ".note.stapsdt", on_note, &sum);
	vt_elf_notes(e, ".note.gnu.build-id", on_note, &sum);
	vt_elf_build_id(e, id, sizeof(id));
	for (int i = 0; vt_elf_load(e, i, &l) == 0; i++)
		sum += l.vaddr;
	if (vt_elf_section(e, ".text", &s) == 0)
		(void)vt_elf_data(e, s.offset, s.size);
	(void)vt_elf_base_vaddr(e);
	vt_elf_close(e);
	return 0;
}
