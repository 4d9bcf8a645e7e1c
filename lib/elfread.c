/*
 * elfread.c - bounded reader of ELF64 files (see elfread.h), for tools
 * that resolve symbols or parse notes of possibly hostile binaries.  Maps
 * the whole file read-only; allocates only its handle.  Any thread.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elfread.h"
#include "err.h"

#define VT_ELF_PAGE_SIZE	4096ULL
#define VT_ELF_NOTE_ALIGN	4U

struct vt_elf {
	char *path;
	const uint8_t *map;
	uint64_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;	/* NULL when the file has no section table */
	unsigned nr_sh;
	const char *shstr;	/* section name table */
	uint64_t shstr_size;
	const Elf64_Phdr *ph;
	unsigned nr_ph;
};

/* [off, off+len) inside [0, total)? */
static int range_ok(uint64_t off, uint64_t len, uint64_t total)
{
	return off <= total && len <= total - off;
}

const void *vt_elf_data(const struct vt_elf *e, uint64_t offset, uint64_t size)
{
	if (!range_ok(offset, size, e->size))
		return NULL;
	return e->map + offset;
}

/* A NUL-terminated string at @off of a table of @size bytes, or NULL. */
static const char *table_str(const char *tab, uint64_t size, uint64_t off)
{
	if (!tab || off >= size || !memchr(tab + off, 0, size - off))
		return NULL;
	return tab + off;
}

static int check_headers(struct vt_elf *e)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->map;

	if (e->size < sizeof(Elf64_Ehdr) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return vt_err_set("%s: not an ELF file", e->path);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return vt_err_set("%s: not a 64-bit little-endian ELF file", e->path);
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return vt_err_set("%s: ELF type %u is neither an executable nor a shared object",
				  e->path, eh->e_type);
	e->eh = eh;
	if (eh->e_phnum) {
		if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
		    !range_ok(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), e->size) ||
		    eh->e_phoff % 8)
			return vt_err_set("%s: program header table out of bounds", e->path);
		e->ph = (const Elf64_Phdr *)(e->map + eh->e_phoff);
		e->nr_ph = eh->e_phnum;
	}
	if (eh->e_shnum) {
		const Elf64_Shdr *str;

		if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
		    !range_ok(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), e->size) ||
		    eh->e_shoff % 8)
			return vt_err_set("%s: section header table out of bounds", e->path);
		e->sh = (const Elf64_Shdr *)(e->map + eh->e_shoff);
		e->nr_sh = eh->e_shnum;
		if (eh->e_shstrndx < e->nr_sh) {
			str = &e->sh[eh->e_shstrndx];
			if (str->sh_type != SHT_NOBITS && range_ok(str->sh_offset, str->sh_size, e->size)) {
				e->shstr = (const char *)e->map + str->sh_offset;
				e->shstr_size = str->sh_size;
			}
		}
	}
	return 0;
}

struct vt_elf *vt_elf_open(const char *path)
{
	struct vt_elf *e;
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);	/* a FIFO must not hang us */
	if (fd < 0) {
		vt_err_errno("%s: cannot open", path);
		return NULL;
	}
	if (fstat(fd, &st)) {
		vt_err_errno("%s: cannot stat", path);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > VT_ELF_MAX_SIZE) {
		vt_err_set("%s: not a regular file of 1 byte to %llu GiB", path,
			   VT_ELF_MAX_SIZE >> 30);
		close(fd);
		return NULL;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		vt_err_errno("%s: cannot map", path);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		munmap(map, st.st_size);
		vt_err_set("out of memory");
		return NULL;
	}
	e->map = map;
	e->size = st.st_size;
	if (check_headers(e)) {
		vt_elf_close(e);
		return NULL;
	}
	return e;
}

void vt_elf_close(struct vt_elf *e)
{
	if (!e)
		return;
	munmap((void *)e->map, e->size);	/* set before any close */
	free(e->path);
	free(e);
}

const char *vt_elf_path(const struct vt_elf *e)
{
	return e->path;
}

int vt_elf_kind(const struct vt_elf *e)
{
	return e->eh->e_type;
}

uint64_t vt_elf_entry(const struct vt_elf *e)
{
	return e->eh->e_entry;
}

int vt_elf_nr_loads(const struct vt_elf *e)
{
	int n = 0;

	for (unsigned i = 0; i < e->nr_ph; i++)
		n += e->ph[i].p_type == PT_LOAD;
	return n;
}

int vt_elf_load(const struct vt_elf *e, int idx, struct vt_elf_load *out)
{
	int n = 0;

	for (unsigned i = 0; i < e->nr_ph; i++) {
		const Elf64_Phdr *p = &e->ph[i];

		if (p->p_type != PT_LOAD)
			continue;
		if (n++ != idx)
			continue;
		out->vaddr = p->p_vaddr;
		out->memsz = p->p_memsz;
		out->offset = p->p_offset;
		out->filesz = p->p_filesz;
		out->flags = p->p_flags;
		return 0;
	}
	return -1;
}

uint64_t vt_elf_base_vaddr(const struct vt_elf *e)
{
	struct vt_elf_load l;

	if (vt_elf_load(e, 0, &l))
		return 0;
	return l.vaddr & ~(VT_ELF_PAGE_SIZE - 1);
}

static void fill_section(const Elf64_Shdr *s, const char *name, struct vt_elf_section *out)
{
	out->name = name;
	out->type = s->sh_type;
	out->flags = s->sh_flags;
	out->addr = s->sh_addr;
	out->offset = s->sh_offset;
	out->size = s->sh_size;
	out->link = s->sh_link;
	out->entsize = s->sh_entsize;
}

int vt_elf_section(const struct vt_elf *e, const char *name, struct vt_elf_section *out)
{
	for (unsigned i = 0; i < e->nr_sh; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		const char *n = table_str(e->shstr, e->shstr_size, s->sh_name);

		if (!n || strcmp(n, name))
			continue;
		if (s->sh_type != SHT_NOBITS && !range_ok(s->sh_offset, s->sh_size, e->size))
			continue;
		fill_section(s, n, out);
		return 0;
	}
	return -1;
}

/* The first section of @type with its contents inside the file, or NULL. */
static const Elf64_Shdr *find_type(const struct vt_elf *e, uint32_t type)
{
	for (unsigned i = 0; i < e->nr_sh; i++)
		if (e->sh[i].sh_type == type &&
		    range_ok(e->sh[i].sh_offset, e->sh[i].sh_size, e->size))
			return &e->sh[i];
	return NULL;
}

/* Symbol table section @tab checked: its entries (*@sym, *@n) and string
 * table (*@str of *@strsz bytes); -1 with the message set if malformed. */
static int sym_table(const struct vt_elf *e, const Elf64_Shdr *tab, const Elf64_Sym **sym,
		     uint64_t *n, const char **str, uint64_t *strsz)
{
	const Elf64_Shdr *strs;

	if (tab->sh_entsize != sizeof(Elf64_Sym) || tab->sh_size % sizeof(Elf64_Sym) ||
	    tab->sh_offset % 8)
		return vt_err_set("%s: symbol table at offset %#" PRIx64 " has a bad entry size",
				  e->path, (uint64_t)tab->sh_offset);
	if (tab->sh_link >= e->nr_sh)
		return vt_err_set("%s: symbol table links to missing section %u",
				  e->path, tab->sh_link);
	strs = &e->sh[tab->sh_link];
	if (strs->sh_type != SHT_STRTAB || !range_ok(strs->sh_offset, strs->sh_size, e->size))
		return vt_err_set("%s: symbol string table out of bounds", e->path);
	*str = (const char *)e->map + strs->sh_offset;
	*strsz = strs->sh_size;
	*sym = (const Elf64_Sym *)(e->map + tab->sh_offset);
	*n = tab->sh_size / sizeof(Elf64_Sym);
	return 0;
}

int vt_elf_has_sym(const struct vt_elf *e, const char *const *names)
{
	static const uint32_t types[] = { SHT_SYMTAB, SHT_DYNSYM };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		const Elf64_Shdr *tab = find_type(e, types[t]);
		const Elf64_Sym *sym;
		const char *str;
		uint64_t n, strsz;

		if (!tab)
			continue;
		if (sym_table(e, tab, &sym, &n, &str, &strsz) < 0)
			return -1;
		for (uint64_t i = 0; i < n; i++) {
			const char *name = table_str(str, strsz, sym[i].st_name);

			for (int k = 0; name && *name && names[k]; k++)
				if (!strcmp(name, names[k]))
					return 1;
		}
	}
	return 0;
}

int vt_elf_syms(const struct vt_elf *e, vt_elf_sym_fn fn, void *arg)
{
	const Elf64_Shdr *tab = find_type(e, SHT_SYMTAB);
	const Elf64_Sym *sym;
	const char *str;
	uint64_t n, strsz;

	if (!tab)
		tab = find_type(e, SHT_DYNSYM);
	if (!tab)
		return 0;
	if (sym_table(e, tab, &sym, &n, &str, &strsz) < 0)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const Elf64_Sym *s = &sym[i];
		unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
		struct vt_elf_sym out;
		int ret;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    s->st_size == 0)
			continue;
		out.name = table_str(str, strsz, s->st_name);
		if (!out.name || !out.name[0])
			continue;
		out.value = s->st_value;
		out.size = s->st_size;
		out.bind = bind == STB_LOCAL ? 'l' : bind == STB_WEAK ? 'w' : 'g';
		ret = fn(arg, &out);
		if (ret)
			return ret;
	}
	return 0;
}

static uint32_t align_up4(uint32_t v)
{
	return (v + VT_ELF_NOTE_ALIGN - 1) & ~(VT_ELF_NOTE_ALIGN - 1);
}

int vt_elf_notes(const struct vt_elf *e, const char *section, vt_elf_note_fn fn, void *arg)
{
	struct vt_elf_section s;
	uint64_t off, end;

	if (vt_elf_section(e, section, &s) || s.type == SHT_NOBITS)
		return 0;
	off = s.offset;
	end = s.offset + s.size;
	while (off < end) {
		Elf64_Nhdr nhdr, *nh = &nhdr;
		struct vt_elf_note note;
		uint64_t name_off, desc_off;
		int ret;

		if (end - off < sizeof(*nh))
			return vt_err_set("%s: %s: truncated note header at offset %#" PRIx64,
					  e->path, section, off);
		memcpy(&nhdr, e->map + off, sizeof(nhdr));	/* may be unaligned */
		name_off = off + sizeof(*nh);
		if (nh->n_namesz > end - name_off ||
		    align_up4(nh->n_namesz) > end - name_off)
			return vt_err_set("%s: %s: note name out of bounds at offset %#" PRIx64,
					  e->path, section, off);
		desc_off = name_off + align_up4(nh->n_namesz);
		if (nh->n_descsz > end - desc_off)
			return vt_err_set("%s: %s: note data out of bounds at offset %#" PRIx64,
					  e->path, section, off);
		if (nh->n_namesz && memchr(e->map + name_off, 0, nh->n_namesz) == NULL)
			return vt_err_set("%s: %s: note name not terminated at offset %#" PRIx64,
					  e->path, section, off);
		note.type = nh->n_type;
		note.name = nh->n_namesz ? (const char *)e->map + name_off : "";
		note.namesz = nh->n_namesz;
		note.desc = e->map + desc_off;
		note.descsz = nh->n_descsz;
		note.offset = off;
		ret = fn(arg, &note);
		if (ret)
			return ret;
		/* the last note's padding may be cut by the section's end (no
		 * wrap: desc_off is inside a file of at most 4 GiB) */
		off = desc_off + align_up4(nh->n_descsz);
	}
	return 0;
}

struct build_id_arg {
	char *buf;
	size_t len;
	int found;
};

static int build_id_note(void *arg, const struct vt_elf_note *n)
{
	struct build_id_arg *a = arg;

	if (n->type != NT_GNU_BUILD_ID || strcmp(n->name, "GNU") || n->descsz == 0)
		return 0;
	if (a->len < (size_t)n->descsz * 2 + 1)
		return 0;
	for (uint32_t i = 0; i < n->descsz; i++)
		snprintf(a->buf + 2 * i, 3, "%02x", n->desc[i]);
	a->found = 1;
	return 1;
}

int vt_elf_build_id(const struct vt_elf *e, char *buf, size_t len)
{
	struct build_id_arg a = { buf, len, 0 };

	if (vt_elf_notes(e, ".note.gnu.build-id", build_id_note, &a) < 0)
		return -1;
	return a.found ? 0 : -1;
}
