/*
 * elfread.h - a small, bounded reader of 64-bit little-endian ELF files for
 * vmtrace's tools: function symbols (.symtab, else .dynsym), sections by
 * name, PT_LOAD segments and the notes of a named section (.note.stapsdt,
 * .note.gnu.build-id).  The files may come from a guest: every offset and
 * size is checked against the file before use.  Tools only (allocates,
 * maps the file); never called from a traced program's hot path.
 *
 * (Not named elf.h: lib/ is on the include path and would hide <elf.h>,
 * which <link.h> includes.)
 */
#ifndef VT_ELFREAD_H
#define VT_ELFREAD_H

#include <stddef.h>
#include <stdint.h>
#include "compiler.h"

/* Largest file vt_elf_open() accepts. */
#define VT_ELF_MAX_SIZE		(4ULL << 30)

enum vt_elf_kind {
	VT_ELF_EXEC = 2,	/* ET_EXEC: loaded at its link addresses */
	VT_ELF_DYN = 3,		/* ET_DYN: PIE or shared object, relocatable */
};

struct vt_elf;

/* One section header, as in the file. */
struct vt_elf_section {
	const char *name;
	uint32_t type;		/* SHT_* */
	uint64_t flags;		/* SHF_* */
	uint64_t addr;		/* link-time address */
	uint64_t offset;	/* file offset (checked: offset+size is in the file
				 * unless type is SHT_NOBITS) */
	uint64_t size;
	uint32_t link;
	uint64_t entsize;
};

/* One PT_LOAD program header. */
struct vt_elf_load {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags;		/* PF_R | PF_W | PF_X */
};

/* A function symbol (STT_FUNC / STT_GNU_IFUNC, defined, size > 0). */
struct vt_elf_sym {
	const char *name;	/* NUL-terminated inside the file's string table */
	uint64_t value;		/* link-time address (st_value) */
	uint64_t size;
	char bind;		/* 'l' local, 'g' global, 'w' weak */
};

/* One note; @desc points into the mapped file. */
struct vt_elf_note {
	uint32_t type;
	const char *name;	/* owner, NUL-terminated ("stapsdt", "GNU") */
	uint32_t namesz;	/* including the NUL */
	const uint8_t *desc;
	uint32_t descsz;
	uint64_t offset;	/* file offset of the note header */
};

/* Map @path read-only and check its headers.  NULL with a message naming
 * the file on failure (not ELF64 x86-64 LE, truncated, bad tables). */
struct vt_elf *vt_elf_open(const char *path);
void vt_elf_close(struct vt_elf *e);

/* The path it was opened with. */
const char *vt_elf_path(const struct vt_elf *e);
/* VT_ELF_EXEC or VT_ELF_DYN (other e_type values are refused by open). */
int vt_elf_kind(const struct vt_elf *e);
/* e_entry. */
uint64_t vt_elf_entry(const struct vt_elf *e);

/* Number of PT_LOAD segments and the i-th one (0 or -1 if out of range). */
int vt_elf_nr_loads(const struct vt_elf *e);
int vt_elf_load(const struct vt_elf *e, int i, struct vt_elf_load *out);
/* vaddr of the first PT_LOAD rounded down to its page: what uftrace's
 * SYM_REL_ADDR makes .sym addresses relative to.  0 if there is none. */
uint64_t vt_elf_base_vaddr(const struct vt_elf *e);

/* Section lookup by name: 0 and *out filled, -1 if absent. */
int vt_elf_section(const struct vt_elf *e, const char *name, struct vt_elf_section *out);
/* Bounded access to the file: a pointer to [@offset, @offset+@size) or
 * NULL if that range is not inside the file. */
const void *vt_elf_data(const struct vt_elf *e, uint64_t offset, uint64_t size);

/* Call @fn for every function symbol of .symtab (of .dynsym when there is
 * no .symtab).  A non-zero return of @fn stops the walk and is returned.
 * -1 with a message on a malformed table; 0 when done. */
typedef int (*vt_elf_sym_fn)(void *arg, const struct vt_elf_sym *sym);
int vt_elf_syms(const struct vt_elf *e, vt_elf_sym_fn fn, void *arg);
/* 1 if .symtab or .dynsym holds a symbol (of any kind, defined or not: an
 * import counts) named one of the NULL-terminated @names, 0 if none, -1
 * with the message set when a table is malformed. */
int vt_elf_has_sym(const struct vt_elf *e, const char *const *names);

/* Call @fn for each note in section @section (e.g. ".note.stapsdt").
 * Returns 0 when done (also when the section is absent: @fn is not
 * called), -1 with a message naming file and offset on a malformed note,
 * or @fn's non-zero return. */
typedef int (*vt_elf_note_fn)(void *arg, const struct vt_elf_note *note);
int vt_elf_notes(const struct vt_elf *e, const char *section, vt_elf_note_fn fn, void *arg);

/* The GNU build-id as lowercase hex into @buf: 0, or -1 if there is none
 * or it does not fit. */
int vt_elf_build_id(const struct vt_elf *e, char *buf, size_t len);

#endif
