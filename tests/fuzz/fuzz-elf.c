/*
 * fuzz-elf.c - libFuzzer target for lib/elfread.c and lib/usdt_note.c (ELF
 * files of guest programs are untrusted): the input is written as a file,
 * opened, and its symbols, sections, segments, notes and build-id walked;
 * then its SDT markers are read as `vmtrace record --python` does and each
 * one's argument string turned into uprobe fetch args.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz-util.h"
#include "elfread.h"
#include "usdt_note.h"

#define FUZZ_MAX_PROBES	16

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

/* the markers' SDT notes, their arguments named as host/usdt_probes.c does */
static void usdt_walk(const char *path)
{
	static const char *const names[] = { "a", "", "s", "d", NULL };
	static const char *const strings[] = { "s", NULL };
	struct vt_usdt_probe p[FUZZ_MAX_PROBES];
	char fetch[VT_USDT_FETCH_MAX];
	int n = vt_usdt_probes_read(path, NULL, p, FUZZ_MAX_PROBES);

	for (int i = 0; i < n; i++)
		(void)vt_usdt_fetchargs(p[i].args, names, strings, fetch, sizeof(fetch));
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
	usdt_walk(path);
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
