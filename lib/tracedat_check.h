/*
 * tracedat_check.h - internal to lib/tracedat_*.c: the header cursor and
 * checks (tracedat_check.c) the reader (tracedat_read.c) and the v7
 * decompressor (tracedat_unzip.c) share.  Not a public interface.
 */
#ifndef VT_TRACEDAT_CHECK_H
#define VT_TRACEDAT_CHECK_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

/*
 * The header of every file is walked before libtracecmd sees it:
 * libtracecmd allocates what the file's sizes and counts say before
 * reading, so a corrupt one would be a multi-gigabyte allocation.  Checked
 * against the file size: every section size (v6) or section (v7), the page
 * size, the CPU count and ids, the counts inside the options libtracecmd
 * allocates by (TIME_SHIFT, GUEST, PROCMAPS), the chunk tables and
 * uncompressed sizes of compressed v7 data.  CPU data cut short (a killed
 * or full-disk writer) is legal: its sizes are clipped in a copy.
 */
#define HDR_MAGIC_LEN	10	/* 0x17 0x08 0x44 "tracing" */
#define HDR_STR_MAX	64	/* version string, system names */
#define HDR_OPT_NAME	10	/* "options  \0", "flyrecord\0", "latency  \0" */
#define HDR_V7		7	/* the sectioned format (man 5 trace-cmd.dat.v7) */
#define HDR_PAGE_MIN	4096	/* ring-buffer page (sub-buffer) sizes */
#define HDR_PAGE_MAX	(1U << 20)
#define HDR_MAX_CPUS	8192
#define HDR_MAX_SECTIONS 4096	/* options sections followed (a loop ends here) */
#define HDR_ZRATIO_MAX	1100	/* zlib's ceiling is 1032:1 */
#define HDR_ZHDR	8	/* u32 compressed size, u32 uncompressed size */
#define HDR_SEC_HDR	16	/* u16 id, u16 flags, u32 string id, u64 size */
#define HDR_SEC_COMPRESSED 1
#define HDR_OPT_DONE	0
#define HDR_OPT_BUFFER	3
#define HDR_OPT_TRACECLOCK 4
#define HDR_OPT_UNAME	5	/* text libtracecmd strdup()s, as VERSION's */
#define HDR_OPT_HOOK	6	/* text parsed as a string */
#define HDR_OPT_VERSION	9
#define HDR_OPT_PROCMAPS 10
#define HDR_OPT_TRACEID	11
#define HDR_OPT_TIME_SHIFT 12
#define HDR_OPT_GUEST	13
#define HDR_OPT_TSC2NSEC 14
#define HDR_OPT_HEADER_INFO 16
#define HDR_MAX_OPTS	64	/* host-guest options kept (one per guest) */
#define HDR_OPT_CMDLINES 21
#define HDR_TS_SAMPLE	24	/* time, offset, scaling: 3 u64 per sample */
#define HDR_GUEST_VCPU	8	/* u32 cpu id, u32 pid */
#define HDR_MAX_CLIPS	HDR_MAX_CPUS

struct hdr_clip {
	uint64_t field;		/* file offset of a CPU's u64 data size */
	uint64_t size;		/* the size that fits in the file */
};

/* A malformed page: its commit becomes the bytes of its sound events. */
struct hdr_bad {
	uint64_t off;		/* file offset of the page */
	uint32_t good;
};

/* One CPU's uncompressed data: its pages are checked (pages_check). */
struct hdr_span {
	uint64_t off, size;	/* size clipped to the file */
};

/* An option's data kept for the reader (TIME_SHIFT, GUEST, TRACEID, TSC2NSEC). */
struct hdr_opt {
	uint16_t id;
	uint32_t n;
	uint8_t *d;
};

struct hdr_cur {
	int fd;
	uint64_t off, size;	/* read position, file size */
	uint64_t end;		/* reads stop here (file size, or a section's end) */
	uint64_t field;		/* offset of the last number read */
	int swap;		/* big-endian file */
	int compressed;		/* v7 with a compression algorithm */
	char zname[HDR_STR_MAX];	/* its name ("none" if not) */
	uint32_t page;		/* page size of the header */
	int nr_clips;		/* CPU data cut short: sizes to rewrite */
	struct hdr_clip *clips;
	uint64_t pad_to;	/* a clipped copy is padded up to here */
	uint8_t long_size;	/* of the file header */
	uint64_t hp_off, hp_len;	/* the header_page text */
	int nr_spans;
	struct hdr_span *spans;
	uint64_t nr_bad;	/* malformed pages: cut to their sound events in a copy */
	struct hdr_bad *bad;
	int long8;		/* page headers hold a u64 commit */
	int oom;		/* an allocation failed (not a bad header) */
	int nr_opts;
	struct hdr_opt opts[HDR_MAX_OPTS];
};

/*
 * Ring-buffer pages as libtraceevent's kbuffer walks them (it trusts the
 * page: a commit beyond the page or an event length pointing backwards
 * or past the commit makes it read out of bounds or loop).  A page is
 * sound when its commit fits, every event header and length word lies in
 * the page, every step moves forward, and every data record (type_len
 * 0..28) ends within the commit.  Any other page is read from the copy
 * up to its last sound event (its commit rewritten).
 */
#define PG_COMMIT_MASK	((1U << 27) - 1)
#define PG_MISSING	(1ULL << 31)
#define PG_STORED	(1ULL << 30)
#define PG_TYPE_DATA_MAX 28
#define PG_TYPE_PADDING	29
#define PG_TYPE_BITS	0x1f
#define PG_TYPE_SHIFT_BE 27
#define PG_WORD		4
#define PG_TS_SIZE	8


/* Numbers in a buffer of the file, in the file's byte order (@swap). */
static inline uint16_t tdh_get16(const uint8_t *p, int swap)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t tdh_get32(const uint8_t *p, int swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t tdh_get64(const uint8_t *p, int swap)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

/* ---- the cursor (tracedat_check.c): bounded reads of c->fd in [c->off,
 * c->end), numbers swapped to the host's order; -1 past the end or on a
 * read error, c->field = offset of the last number (for messages) ---- */
int tdh_read(struct hdr_cur *c, void *buf, size_t len);
int tdh_skip(struct hdr_cur *c, uint64_t len);
int tdh_u16(struct hdr_cur *c, uint16_t *v);
int tdh_u32(struct hdr_cur *c, uint32_t *v);
int tdh_u64(struct hdr_cur *c, uint64_t *v);
/* A NUL-terminated string of at most @max bytes into @buf (NULL: skip). */
int tdh_strn(struct hdr_cur *c, char *buf, int max);
/* The same with HDR_STR_MAX. */
int tdh_str(struct hdr_cur *c, char *buf);
/* 1 if @page is a ring-buffer page size trace-cmd writes. */
int tdh_page_ok(uint32_t page);
/* 1 if @usize bytes may come from @zsize compressed ones (zlib/zstd). */
int tdh_zsize_ok(uint32_t zsize, uint32_t usize);

/* ---- the checks ---- */
/* 0 if the header of @path (open as @fd, @size bytes) is sound, filling
 * @c (clips of CPU data cut short, spans to check, compression); -1 with a
 * message naming the file and the offset of the bad field. */
int tdh_check(const char *path, int fd, uint64_t size, struct hdr_cur *c);
/* Open @path and tdh_check() it into @h; -1 with a message. */
int tdh_header_ok(const char *path, struct hdr_cur *h);
/* Check every ring-buffer page of the spans tdh_check() found; malformed
 * ones go to @c->bad.  -1 with a message when @path cannot be read. */
int tdh_pages_check(const char *path, struct hdr_cur *c);
/* Rewrite compressed v7 @path (@h: its checked header, h->compressed)
 * uncompressed into a new temporary file whose name goes to @tmp (@tmplen
 * bytes; the caller unlinks it).  Chunks that do not inflate become empty
 * pages: counted in *@bad_chunks of *@nr_chunks.  -1 with a message naming
 * @path (unknown algorithm, corrupt structure, no room for the copy). */
int tdh_unzip(const char *path, const struct hdr_cur *h, char *tmp, size_t tmplen,
	      uint64_t *bad_chunks, uint64_t *nr_chunks);
/* Free what tdh_check()/tdh_pages_check() allocated in @h. */
void tdh_free(struct hdr_cur *h);

#endif
