/*
 * pystage.h - the Python tracer's per-thread stage file <TID>.stage, owned
 * here for every vmtrace module (docs/format/python.md): the newest records
 * of a thread, not yet copied into its <TID>.dat.
 *
 * The writer (guest/python/store.c) puts records into a small MAP_SHARED
 * mapping of this file that it reuses, and copies it into the .dat with
 * pwrite() when it is full: fresh pages of a file mapping cost a page fault
 * each (several microseconds under a shadow-paging hypervisor), a reused
 * mapping costs nothing.  Being a shared file mapping, its records survive
 * a SIGKILL and are visible to other processes at once.
 *
 * Layout, little-endian:
 *   off size field
 *     0    8 magic    "vtstage1"
 *     8    8 dat_off  .dat offset stage record 0 belongs at (multiple of 16)
 *    16   16 record 0 (struct vt_uft_record), then record 1 ...
 * The valid records end at the first one without the uftrace magic.  Stage
 * record i belongs at .dat offset dat_off + 16*i; one below the .dat's own
 * valid end is already there (a copy finished before the writer died).
 * A flush is: copy records into the .dat, clear their magic words, then
 * advance dat_off (vt_pystage_clear()), so a torn state reads right.
 *
 * The writer's helpers are inline (hot path, no calls); the reader
 * (lib/pystage.c) treats the file as untrusted input and allocates.  The
 * uftrace module uses the reader (its stream reader, its fold), never the
 * other way round: of uftrace.h this header takes the record layout only.
 */
#ifndef VT_PYSTAGE_H
#define VT_PYSTAGE_H

#include <stddef.h>
#include <stdint.h>
#include "tsc.h"
#include "uftrace.h"

#define VT_PYSTAGE_SUFFIX	".stage"
/* "vtstage1", little-endian */
#define VT_PYSTAGE_MAGIC	0x3165676174737476ULL
/* Bytes of the stage file (and mapping): fits L2 with the interpreter's data. */
#define VT_PYSTAGE_BYTES	(256UL << 10)

struct vt_pystage_hdr {
	uint64_t magic;
	uint64_t dat_off;
};
VT_STATIC_ASSERT(sizeof(struct vt_pystage_hdr) == 16, "stage header is 16 bytes");

#define VT_PYSTAGE_RECS \
	((VT_PYSTAGE_BYTES - sizeof(struct vt_pystage_hdr)) / sizeof(struct vt_uft_record))

/* Writer: a freshly created (zeroed) stage mapping whose records belong at
 * .dat offset @dat_off on. */
static inline VT_NOTRACE void vt_pystage_init(struct vt_pystage_hdr *h, uint64_t dat_off)
{
	h->dat_off = dat_off;
	__asm__ __volatile__("" ::: "memory");
	h->magic = VT_PYSTAGE_MAGIC;
}

/* Writer, per event: one record into stage slot @r.  The magic lives in
 * the second word, stored last: a concurrent reader that sees it also sees
 * the time (x86 keeps stores in order). */
static inline VT_NOTRACE void vt_pystage_put(struct vt_uft_record *r, uint64_t time,
					     uint64_t bits)
{
	r->time = time;
	__asm__ __volatile__("" ::: "memory");
	r->bits = bits;
}

/* The same, stamped with the TSC read now. */
static inline VT_NOTRACE void vt_pystage_put_tsc(struct vt_uft_record *r, uint64_t bits)
{
	vt_rdtsc_store(&r->time);
	__asm__ __volatile__("" ::: "memory");
	r->bits = bits;
}

/* Writer, after the @n records at @recs were copied into the .dat (or
 * counted as lost): clear their magic words, then move the header on to
 * @dat_off, the .dat offset the next record 0 belongs at. */
static inline VT_NOTRACE void vt_pystage_clear(struct vt_pystage_hdr *h,
					       struct vt_uft_record *recs, size_t n,
					       uint64_t dat_off)
{
#pragma GCC unroll 8
	for (size_t i = 0; i < n; i++)
		recs[i].bits = 0;
	__asm__ __volatile__("" ::: "memory");
	h->dat_off = dat_off;
}

/* The stage path of a .dat path (buffer of @len bytes); -1 if too long or
 * @dat does not end in ".dat". */
int vt_pystage_path(char *buf, size_t len, const char *dat);

/* Read and check the stage file @path: its header in *@hdr, its valid
 * records (a malloc'ed array, free it) in *@recs, count *@nr (0: none,
 * *@recs NULL).  Returns 1 when there is no such file, 0 when read (also
 * when the file ends early: the records up to the cut are valid), -1 with
 * a message naming the file (bad magic, short header, misaligned offset,
 * too large). */
int vt_pystage_load(const char *path, struct vt_pystage_hdr *hdr,
		    struct vt_uft_record **recs, size_t *nr);

/* Of the @nr records at @recs (a stage with header @hdr), keep those that
 * are new after .dat offset @dat_end: moved to the front of @recs; returns
 * their count. */
size_t vt_pystage_newer(const struct vt_pystage_hdr *hdr, struct vt_uft_record *recs,
			size_t nr, uint64_t dat_end);

/* The records of the stage file @path that are new after .dat offset
 * @dat_end (the end of the .dat's valid records): a malloc'ed array in
 * *@recs (free it), count *@nr (0: none, *@recs NULL).  Records the header
 * places below @dat_end are skipped; when it places them after @dat_end
 * (records missing from the .dat), they follow the .dat's records anyway.
 * 0 on success, also when the file does not exist; -1 with a message
 * naming the file when it cannot be read or is not a valid stage (bad
 * magic, short header, misaligned offset, too large). */
int vt_pystage_read(const char *path, uint64_t dat_end, struct vt_uft_record **recs,
		    size_t *nr);

/* Folding a stage into its .dat (vt_pystage_fold(), vt_uft_finalize())
 * is the uftrace module's (lib/uftrace_fold.c),
 * declared in lib/uftrace.h, which this header includes. */

#endif
