/*
 * usdt_note.h - the SystemTap SDT notes (USDT markers, ELF .note.stapsdt)
 * of an ELF file, and the uprobe fetch args a marker's argument string
 * becomes (lib/usdt_note.c).  A format helper on libc only: the tracefs
 * side (creating the uprobe events for CPython's markers) is
 * host/usdt_probes.h.  Tools only: allocates, does I/O.
 */
#ifndef VT_USDT_NOTE_H
#define VT_USDT_NOTE_H

#include <stddef.h>
#include <stdint.h>

#define VT_USDT_NAME_MAX	64
#define VT_USDT_ARGS_MAX	256
#define VT_USDT_FETCH_MAX	512

/* One marker of an ELF file, with what a uprobe needs. */
struct vt_usdt_probe {
	char provider[VT_USDT_NAME_MAX];
	char name[VT_USDT_NAME_MAX];
	uint64_t pc_vaddr;		/* link-time address of the marker's nop */
	uint64_t sem_vaddr;		/* link-time address of the semaphore, 0 if none */
	uint64_t pc_off;		/* file offset of the marker (uprobe place) */
	uint64_t sem_off;		/* file offset of the semaphore (ref_ctr_offset) */
	char args[VT_USDT_ARGS_MAX];	/* the note's argument string, e.g. "8@%rbp -4@%eax" */
};

/* Read every marker of @provider (NULL = all) in the ELF file @path into
 * @out (room for @max).  Returns the number found (0..@max) or -1 with a
 * message naming the file. */
int vt_usdt_probes_read(const char *path, const char *provider, struct vt_usdt_probe *out,
			int max);

/* Convert the note's argument string @stap_args into uprobe fetch args
 * ("name=BODY:TYPE ...", into @out of @len bytes) named by @names
 * (NULL-terminated; "" skips an argument); an argument named in
 * @string_names is fetched as a user string.  0, or -1 when an operand
 * cannot be expressed as a fetch arg or the result does not fit (message
 * says which). */
int vt_usdt_fetchargs(const char *stap_args, const char *const *names,
		      const char *const *string_names, char *out, size_t len);

#endif
