/*
 * tracedat_read.c - the reader half of lib/tracedat.h: trace.dat files
 * (vmtrace's recorder or trace-cmd) read through libtracecmd and
 * libtraceevent, per CPU in time order, with bounded field access.  For
 * host-side tools (merge, align); allocates at open and once per event
 * format, never per event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <trace-cmd/trace-cmd.h>
#include "err.h"
#include "filekind.h"
#include "tracedat.h"

/* Exported by libtracecmd 3.x but missing from its public header: the
 * clock named in the file's TRACECLOCK option (NULL if none). */
extern const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);

#define COPY_CHUNK	(1 << 20)

struct td_format {
	struct tep_event *event;
	int nr;
	struct tep_format_field **fields;	/* non-common fields */
};

struct vt_td_reader {
	struct tracecmd_input *in;
	struct tep_handle *tep;
	char *path;
	int nr_cpus;
	struct tep_record **cur;	/* per CPU: record handed out last */
	struct tep_record **peek;	/* per CPU: next record (next_any) */
	unsigned long long *next_off;	/* per CPU: file offset past the last record */
	struct td_format *fmts;		/* by event id (sparse, grown) */
	int nr_fmts;
	char clock[32];
	int truncated;		/* read from a padded copy, or a CPU stalled */
	char warning[4400];	/* vt_td_read_warning(), "" if none */
	uint64_t skipped;	/* records without a known format */
};

/* common_type, common_flags, common_preempt_count, common_pid */
#define TD_COMMON_SIZE	8

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
#define HDR_OPT_BUFFER	3
#define HDR_OPT_TRACECLOCK 4
#define HDR_OPT_PROCMAPS 10
#define HDR_OPT_TIME_SHIFT 12
#define HDR_OPT_GUEST	13
#define HDR_OPT_HEADER_INFO 16
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

struct hdr_cur {
	int fd;
	uint64_t off, size;	/* read position, file size */
	uint64_t end;		/* reads stop here (file size, or a section's end) */
	uint64_t field;		/* offset of the last number read */
	int swap;		/* big-endian file */
	int compressed;		/* v7 with a compression algorithm */
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
};

static int hdr_read(struct hdr_cur *c, void *buf, size_t len)
{
	if (c->off > c->end || len > c->end - c->off ||
	    pread(c->fd, buf, len, (off_t)c->off) != (ssize_t)len)
		return -1;
	c->off += len;
	return 0;
}

static int hdr_skip(struct hdr_cur *c, uint64_t len)
{
	if (c->off > c->end || len > c->end - c->off)
		return -1;
	c->off += len;
	return 0;
}

static int hdr_u16(struct hdr_cur *c, uint16_t *v)
{
	c->field = c->off;
	if (hdr_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap16(*v);
	return 0;
}

static int hdr_u32(struct hdr_cur *c, uint32_t *v)
{
	c->field = c->off;
	if (hdr_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap32(*v);
	return 0;
}

static int hdr_u64(struct hdr_cur *c, uint64_t *v)
{
	c->field = c->off;
	if (hdr_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap64(*v);
	return 0;
}

/* A NUL-terminated string of at most @max bytes into @buf (NULL: skip). */
static int hdr_strn(struct hdr_cur *c, char *buf, int max)
{
	char ch;

	c->field = c->off;
	for (int i = 0; i < max; i++) {
		if (hdr_read(c, &ch, 1))
			return -1;
		if (buf)
			buf[i] = ch;
		if (!ch)
			return 0;
	}
	return -1;
}

static int hdr_str(struct hdr_cur *c, char *buf)
{
	return hdr_strn(c, buf, HDR_STR_MAX);
}

/* A section "NAME\0" + u64 size + size bytes (header_page: its text
 * is remembered for pages_check). */
static int hdr_named(struct hdr_cur *c, const char *name)
{
	char buf[HDR_STR_MAX];
	uint64_t n;

	if (hdr_str(c, buf) || strcmp(buf, name) || hdr_u64(c, &n))
		return -1;
	if (!strcmp(name, "header_page")) {
		c->hp_off = c->off;
		c->hp_len = n;
	}
	return hdr_skip(c, n);
}

/* @nr entries of u64 size + text. */
static int hdr_texts(struct hdr_cur *c, uint32_t nr)
{
	uint64_t n;

	for (uint32_t i = 0; i < nr; i++)
		if (hdr_u64(c, &n) || hdr_skip(c, n))
			return -1;
	return 0;
}

static int hdr_page_ok(uint32_t page)
{
	return page >= HDR_PAGE_MIN && page <= HDR_PAGE_MAX && !(page & (page - 1));
}

/* An uncompressed size libtracecmd will allocate for @zsize compressed
 * bytes: bounded by the best ratio of the algorithms trace-cmd uses. */
static int hdr_zsize_ok(uint32_t zsize, uint32_t usize)
{
	return (uint64_t)usize <= (uint64_t)zsize * HDR_ZRATIO_MAX + HDR_PAGE_MAX;
}

/* One CPU's data at @off, @size bytes: must start in the file; if it runs
 * past the end its size is clipped (remembered at c->field's offset). */
static int hdr_cpu_data(struct hdr_cur *c, uint64_t size_field, uint64_t off, uint64_t size)
{
	uint64_t have, keep;

	if (c->compressed && size && off >= c->size)
		return -1;
	if (c->compressed && size) {
		/* u32 chunk count, then @size bytes of chunks: u32 zsize,
		 * u32 usize, data */
		uint64_t save = c->off, save_end = c->end;
		uint32_t count, zs, us;

		if (size > c->size - off || c->size - off - size < sizeof(count))
			return -1;	/* a cut compressed stream cannot be resumed */
		c->off = off;
		c->end = off + sizeof(count) + size;
		if (hdr_u32(c, &count) || count > size / HDR_ZHDR)
			return -1;
		for (uint32_t i = 0; i < count; i++)
			if (hdr_u32(c, &zs) || hdr_u32(c, &us) || !hdr_zsize_ok(zs, us) ||
			    hdr_skip(c, zs))
				return -1;
		c->off = save;
		c->end = save_end;
		return 0;
	}
	have = off < c->size ? c->size - off : 0;	/* a CPU past the cut: none */
	if (size && have && c->nr_spans < HDR_MAX_CPUS) {
		if (!c->spans && !(c->spans = calloc(HDR_MAX_CPUS, sizeof(*c->spans))))
			return -1;
		c->spans[c->nr_spans].off = off;
		c->spans[c->nr_spans++].size = size < have ? size : have;
	}
	if (size <= have)
		return 0;
	if (c->nr_clips >= HDR_MAX_CLIPS)
		return -1;
	if (!c->clips && !(c->clips = calloc(HDR_MAX_CLIPS, sizeof(*c->clips))))
		return -1;
	keep = (have + c->page - 1) / c->page * c->page;
	c->clips[c->nr_clips].field = size_field;
	c->clips[c->nr_clips++].size = keep;
	if (keep && off + keep > c->pad_to)
		c->pad_to = off + keep;
	return 0;
}

/* The counts inside options libtracecmd allocates by, in @d (@n bytes). */
static int hdr_option_data(struct hdr_cur *c, uint16_t id, const uint8_t *d, uint32_t n)
{
	uint32_t pos = 0, cnt, nr;

#define HDR_GET32(v) do {						\
		if (n - pos < sizeof(uint32_t))				\
			return -1;					\
		memcpy(&(v), d + pos, sizeof(uint32_t));		\
		if (c->swap)						\
			(v) = __builtin_bswap32(v);			\
		pos += sizeof(uint32_t);				\
	} while (0)

	switch (id) {
	case HDR_OPT_TIME_SHIFT:	/* u64 peer, u32 flags, u32 cpus, samples */
		if (n < 2 * sizeof(uint64_t))
			return -1;
		pos = sizeof(uint64_t) + sizeof(uint32_t);
		HDR_GET32(nr);
		if (nr > HDR_MAX_CPUS)
			return -1;
		for (uint32_t i = 0; i < nr; i++) {
			HDR_GET32(cnt);
			if (cnt > (n - pos) / HDR_TS_SAMPLE)
				return -1;
			pos += cnt * HDR_TS_SAMPLE;
		}
		return 0;
	case HDR_OPT_GUEST:	/* name, u64 trace id, u32 vcpus, vcpus * 8 */
		while (pos < n && d[pos])
			pos++;
		if (n - pos < 1 + sizeof(uint64_t))
			return -1;
		pos += 1 + sizeof(uint64_t);
		HDR_GET32(cnt);
		return cnt > (n - pos) / HDR_GUEST_VCPU ? -1 : 0;
	case HDR_OPT_PROCMAPS:	/* per process "%x %x name\n" + one line per map */
		while (pos < n && d[pos]) {
			unsigned pid, maps, lines = 0;
			const uint8_t *nl = memchr(d + pos, '\n', n - pos);

			if (!nl || sscanf((const char *)d + pos, "%x %x", &pid, &maps) != 2)
				return 0;	/* libtracecmd stops there too */
			pos = (uint32_t)(nl - d) + 1;
			for (uint32_t i = pos; i < n && d[i] && lines <= maps; i++)
				lines += d[i] == '\n';
			if (maps > lines)
				return -1;
			for (; maps && pos < n; pos++)
				maps -= d[pos] == '\n';
		}
		return 0;
	}
	return 0;
#undef HDR_GET32
}

/* One option's data (@n bytes at the cursor): its counts, and for v7 a
 * BUFFER option's CPU table. */
static int hdr_option(struct hdr_cur *c, uint16_t id, uint32_t n, int v7)
{
	uint64_t start = c->off, end = c->end, off, size, size_field;
	uint32_t page, cpus, cpu;
	uint8_t *d;
	int ret;

	if (id == HDR_OPT_PROCMAPS || id == HDR_OPT_TIME_SHIFT || id == HDR_OPT_GUEST) {
		if (n > c->end - c->off || !(d = malloc(n ? n : 1)))
			return -1;
		ret = hdr_read(c, d, n) || hdr_option_data(c, id, d, n) ? -1 : 0;
		free(d);
		return ret;
	}
	if (!v7 || id != HDR_OPT_BUFFER)
		return hdr_skip(c, n);
	/* u64 section offset, name, clock, u32 page size, u32 cpus, cpu table */
	if (n > c->end - c->off)
		return -1;
	c->end = c->off + n;
	ret = -1;
	if (hdr_u64(c, &off) || off > c->size || hdr_strn(c, NULL, n) || hdr_strn(c, NULL, n) ||
	    hdr_u32(c, &page) || !hdr_page_ok(page) || hdr_u32(c, &cpus) || cpus > HDR_MAX_CPUS)
		goto out;
	for (uint32_t i = 0; i < cpus; i++) {
		if (hdr_u32(c, &cpu) || cpu >= HDR_MAX_CPUS || hdr_u64(c, &off))
			goto out;
		size_field = c->off;
		if (hdr_u64(c, &size) || hdr_cpu_data(c, size_field, off, size))
			goto out;
	}
	c->field = start;
	ret = 0;
out:
	c->end = end;
	if (!ret)
		c->off = start + n;
	return ret;
}

/* v6 file, after the version string. */
static int hdr_v6(struct hdr_cur *c)
{
	char buf[HDR_STR_MAX];
	uint8_t endian, lsize;
	uint32_t nr, nsys, n32;
	uint64_t n64, off, size, size_field;
	uint16_t id;
	int clock = 0;

	if (hdr_read(c, &endian, 1) || hdr_read(c, &lsize, 1) || hdr_u32(c, &c->page))
		return -1;
	c->swap = endian != 0;
	c->long_size = lsize;
	if (c->swap)
		c->page = __builtin_bswap32(c->page);
	if (!hdr_page_ok(c->page))
		return -1;
	if (hdr_named(c, "header_page") || hdr_named(c, "header_event") ||
	    hdr_u32(c, &nr) || hdr_texts(c, nr) || hdr_u32(c, &nsys))
		return -1;
	for (uint32_t i = 0; i < nsys; i++)
		if (hdr_str(c, buf) || hdr_u32(c, &nr) || hdr_texts(c, nr))
			return -1;
	if (hdr_u32(c, &n32) || hdr_skip(c, n32) ||		/* kallsyms */
	    hdr_u32(c, &n32) || hdr_skip(c, n32) ||		/* printk formats */
	    hdr_u64(c, &n64) || hdr_skip(c, n64) ||		/* cmdlines */
	    hdr_u32(c, &nr) || nr > HDR_MAX_CPUS || hdr_read(c, buf, HDR_OPT_NAME))	/* cpus */
		return -1;
	if (!memcmp(buf, "options  ", HDR_OPT_NAME)) {
		for (;;) {
			if (hdr_u16(c, &id))
				return -1;
			if (!id)
				break;
			clock |= id == HDR_OPT_TRACECLOCK;
			if (hdr_u32(c, &n32) || hdr_option(c, id, n32, 0))
				return -1;
		}
		if (hdr_read(c, buf, HDR_OPT_NAME))
			return -1;
	}
	if (memcmp(buf, "flyrecord", HDR_OPT_NAME))
		return 0;
	/* the CPU count sizes libtracecmd's tables: its offsets must be here */
	c->field = c->off;
	if (nr > (c->size - c->off) / (2 * sizeof(uint64_t)))
		return -1;
	for (uint32_t i = 0; i < nr; i++) {
		if (hdr_u64(c, &off))
			return -1;
		size_field = c->off;
		if (hdr_u64(c, &size) || hdr_cpu_data(c, size_field, off, size))
			return -1;
	}
	/* with a TRACECLOCK option libtracecmd then reads u64 size + text */
	if (clock && (hdr_u64(c, &n64) || hdr_skip(c, n64)))
		return -1;
	return 0;
}

/* A v7 section header at @off with id @want: its data is then [c->off,
 * c->end).  1 if it is compressed (its compression header checked). */
static int hdr_section(struct hdr_cur *c, uint64_t off, uint16_t want)
{
	uint16_t id, flags;
	uint32_t strid, zs, us;
	uint64_t size;

	c->off = off;
	c->end = c->size;
	if (off > c->size || hdr_u16(c, &id) || id != want || hdr_u16(c, &flags) ||
	    hdr_u32(c, &strid) || hdr_u64(c, &size) || size > c->size - c->off)
		return -1;
	c->end = c->off + size;
	if (!(flags & HDR_SEC_COMPRESSED))
		return 0;
	if (hdr_u32(c, &zs) || hdr_u32(c, &us) || zs > c->end - c->off || !hdr_zsize_ok(zs, us))
		return -1;
	return 1;
}

/* The content of the v7 metadata section @id (uncompressed). */
static int hdr_v7_meta(struct hdr_cur *c, uint16_t id)
{
	char buf[HDR_STR_MAX];
	uint32_t nr, nsys, n32;
	uint64_t n64;

	switch (id) {
	case HDR_OPT_HEADER_INFO:
		return hdr_named(c, "header_page") || hdr_named(c, "header_event") ? -1 : 0;
	case HDR_OPT_HEADER_INFO + 1:	/* ftrace event formats */
		return hdr_u32(c, &nr) || hdr_texts(c, nr) ? -1 : 0;
	case HDR_OPT_HEADER_INFO + 2:	/* event formats */
		if (hdr_u32(c, &nsys))
			return -1;
		for (uint32_t i = 0; i < nsys; i++)
			if (hdr_str(c, buf) || hdr_u32(c, &nr) || hdr_texts(c, nr))
				return -1;
		return 0;
	case HDR_OPT_HEADER_INFO + 3:	/* kallsyms */
	case HDR_OPT_HEADER_INFO + 4:	/* printk formats */
		return hdr_u32(c, &n32) || hdr_skip(c, n32) ? -1 : 0;
	case HDR_OPT_CMDLINES:
		return hdr_u64(c, &n64) || hdr_skip(c, n64) ? -1 : 0;
	}
	return 0;
}

/* v7 file, after the version string: the options sections in their chain
 * and every section an option points to. */
static int hdr_v7(struct hdr_cur *c)
{
	char name[HDR_STR_MAX];
	uint8_t endian, lsize;
	uint64_t next, off, prev = 0;
	uint32_t n32, seen = 0;
	uint16_t id;
	int z;

	if (hdr_read(c, &endian, 1) || hdr_read(c, &lsize, 1))
		return -1;
	c->swap = endian != 0;
	c->long_size = lsize;
	if (hdr_u32(c, &c->page) || !hdr_page_ok(c->page) || hdr_str(c, name) ||
	    hdr_str(c, NULL) || hdr_u64(c, &next))
		return -1;
	c->compressed = strcmp(name, "none") != 0;
	/* each section is walked once: the options chain only goes forward
	 * (trace-cmd appends), a metadata section is named by one option */
	for (int s = 0; next && s < HDR_MAX_SECTIONS; s++) {
		uint64_t data_end;

		c->field = next;
		if (next <= prev)
			return -1;
		prev = next;
		z = hdr_section(c, next, 0);
		if (z < 0)
			return -1;
		if (z)
			return 0;	/* compressed options: sizes above checked */
		next = 0;
		data_end = c->end;
		for (;;) {
			if (hdr_u16(c, &id) || hdr_u32(c, &n32))
				return -1;
			if (!id) {
				if (n32 < sizeof(next) || hdr_u64(c, &next))
					return -1;
				break;
			}
			if (id >= HDR_OPT_HEADER_INFO && id <= HDR_OPT_CMDLINES) {
				uint64_t save = c->off + n32;

				if (n32 < sizeof(off) || (seen & (1U << (id - HDR_OPT_HEADER_INFO))) ||
				    hdr_u64(c, &off))
					return -1;
				seen |= 1U << (id - HDR_OPT_HEADER_INFO);
				c->field = off;
				z = hdr_section(c, off, id);
				if (z < 0 || (!z && hdr_v7_meta(c, id)))
					return -1;
				c->off = save;
				c->end = data_end;
				if (c->off > c->end)
					return -1;
				continue;
			}
			if (hdr_option(c, id, n32, 1))
				return -1;
		}
	}
	return 0;
}

/* 0 if the header of @path (fd @fd, @size bytes) is sound, filling
 * c->clips when CPU data is cut short; -1 with a message naming the file
 * and the offset of the bad field. */
static int hdr_check(const char *path, int fd, uint64_t size, struct hdr_cur *c)
{
	char buf[HDR_STR_MAX];
	long version;

	uint8_t head[VT_FILE_KIND_HEAD];
	ssize_t got = pread(fd, head, sizeof(head), 0);

	/* another kind of file: say what it is, not that its header is bad */
	if (got >= 0 && !vt_file_is_tracedat(head, (size_t)got))
		return vt_err_set("%s: not a trace.dat: this is %s; give recording directories "
				  "(vmtrace record -o DIR, a guest tracer's -o DIR) or trace.dat "
				  "files", path, vt_file_kind(head, (size_t)got));
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->size = c->end = size;
	if (hdr_skip(c, HDR_MAGIC_LEN))
		return 0;	/* not even a header: libtracecmd says so */
	if (hdr_str(c, buf))
		goto bad;
	/* libtracecmd takes the number the version string starts with */
	version = strtol(buf, NULL, 10);
	if (version > HDR_V7)
		return 0;	/* libtracecmd refuses it */
	if (version == HDR_V7 ? hdr_v7(c) : hdr_v6(c))
		goto bad;
	return 0;
bad:
	return vt_err_set("%s: corrupt trace.dat header: the size, count or offset at offset "
			  "%llu does not fit in the file (%llu bytes)", path,
			  (unsigned long long)c->field, (unsigned long long)size);
}

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

static uint32_t pg_u32(const uint8_t *p, int swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

/* 1 if the page is sound; else 0 with *good = the bytes of whole, sound
 * events it starts with (its commit in the copy). */
static int page_ok(const uint8_t *p, uint32_t page, int long8, int swap, uint32_t *good)
{
	uint32_t start = long8 ? 2 * PG_TS_SIZE : PG_TS_SIZE + PG_WORD;
	uint32_t room = page - start, lsz = long8 ? PG_TS_SIZE : PG_WORD;
	uint64_t commit;
	int64_t curr = 0, next, size, end;
	const uint8_t *d = p + start;
	int sound;

	if (long8) {
		memcpy(&commit, p + PG_TS_SIZE, sizeof(commit));
		if (swap)
			commit = __builtin_bswap64(commit);
	} else {
		commit = pg_u32(p + PG_TS_SIZE, swap);
	}
	size = commit & PG_COMMIT_MASK;
	/* the commit, and a stored lost-events count after it, in the page */
	sound = size <= room && (!(commit & PG_MISSING) || !(commit & PG_STORED) ||
				 size + lsz <= room);
	end = size < room ? size : room;
	while (curr < end) {
		uint32_t hdr, type;

		if (curr + PG_TS_SIZE > room)
			break;	/* header + length/extend word */
		hdr = pg_u32(d + curr, swap);
		type = swap ? (hdr >> PG_TYPE_SHIFT_BE) & PG_TYPE_BITS : hdr & PG_TYPE_BITS;
		if (type == PG_TYPE_PADDING)
			next = curr + PG_WORD + (int32_t)pg_u32(d + curr + PG_WORD, swap);
		else if (type > PG_TYPE_PADDING)
			next = curr + PG_TS_SIZE;
		else if (type == 0)
			next = curr + PG_TS_SIZE +
			       (((int64_t)(int32_t)pg_u32(d + curr + PG_WORD, swap) - PG_WORD +
				 PG_WORD - 1) & ~(int64_t)(PG_WORD - 1));
		else
			next = curr + PG_WORD + (int64_t)type * PG_WORD;
		if (next <= curr || (type <= PG_TYPE_DATA_MAX &&
				     (next > end || next < curr + (type ? PG_WORD : PG_TS_SIZE))))
			break;
		curr = next;
	}
	if (curr >= end)
		return sound ? 1 : (*good = (uint32_t)end, 0);
	*good = (uint32_t)curr;
	return 0;
}

/* Check every page of the uncompressed CPU data of @path (spans found by
 * hdr_check) the way libtracecmd will read it: the page header's long size
 * comes from the header_page text, parsed by libtraceevent as libtracecmd
 * does (after the probe child survived that parse).  Malformed pages go
 * to @c->bad.  -1 with a message when the file cannot be read. */
static int pages_check(const char *path, struct hdr_cur *c)
{
	struct tep_handle *tep = NULL;
	uint8_t *buf = NULL;
	char *hp = NULL;
	uint64_t cap = 0;
	int fd, long8, ret = -1;

	if (!c->nr_spans)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vt_err_errno("%s: cannot open", path);
	tep = tep_alloc();
	hp = malloc(c->hp_len ? c->hp_len : 1);
	buf = malloc(c->page);
	if (!tep || !hp || !buf) {
		vt_err_set("%s: out of memory", path);
		goto out;
	}
	if (pread(fd, hp, c->hp_len, (off_t)c->hp_off) != (ssize_t)c->hp_len) {
		vt_err_errno("%s: cannot read the header_page text", path);
		goto out;
	}
	tep_parse_header_page(tep, hp, (unsigned long)c->hp_len, c->long_size);
	if (tep_is_old_format(tep)) {
		vt_err_set("%s: no header_page text (pre-2.6.31 ring-buffer format): not supported",
			   path);
		goto out;
	}
	long8 = tep_get_header_page_size(tep) == sizeof(uint64_t);
	c->long8 = long8;
	for (int i = 0; i < c->nr_spans; i++) {
		for (uint64_t o = 0; o < c->spans[i].size; o += c->page) {
			uint64_t at = c->spans[i].off + o;
			ssize_t n = pread(fd, buf, c->page, (off_t)at);

			if (n < 0) {
				vt_err_errno("%s: read failed at offset %llu", path,
					     (unsigned long long)at);
				goto out;
			}
			uint32_t good;

			memset(buf + n, 0, c->page - n);
			if (page_ok(buf, c->page, long8, c->swap, &good))
				continue;
			if (c->nr_bad == cap) {
				struct hdr_bad *nb = realloc(c->bad, (cap ? 2 * cap : 64) * sizeof(*nb));

				if (!nb) {
					vt_err_set("%s: out of memory", path);
					goto out;
				}
				c->bad = nb;
				cap = cap ? 2 * cap : 64;
			}
			c->bad[c->nr_bad].off = at;
			c->bad[c->nr_bad++].good = good;
		}
	}
	ret = 0;
out:
	if (tep)
		tep_free(tep);
	free(hp);
	free(buf);
	close(fd);
	return ret;
}

/* Copy @path to a temporary file (unlinked at once) whose cut CPU sizes
 * (@h->clips) are clipped to whole pages of what the file holds, the cut
 * page padded with zeros, and open that with libtracecmd: the missing
 * part of the cut page reads as padding, the page ends at its last whole
 * record.  NULL with a message. */
static struct tracecmd_input *clipped_open(const char *path, const struct hdr_cur *h)
{
	const char *tmpdir = getenv("TMPDIR");
	char tmp[4096];
	struct tracecmd_input *in = NULL;
	int src = -1, dst = -1;
	char *buf = NULL;

	snprintf(tmp, sizeof(tmp), "%s/vmtrace-td.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	src = open(path, O_RDONLY | O_CLOEXEC);
	dst = mkstemp(tmp);
	buf = malloc(COPY_CHUNK);
	if (src < 0 || dst < 0 || !buf) {
		vt_err_errno("%s: CPU data truncated, and no clipped copy could be made", path);
		goto out;
	}
	for (;;) {
		ssize_t n = read(src, buf, COPY_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && write(dst, buf, n) != n)) {
			vt_err_errno("%s: CPU data truncated; copying it to %s failed", path, tmp);
			goto out;
		}
		if (!n)
			break;
	}
	for (int i = 0; i < h->nr_clips; i++) {
		uint64_t v = h->swap ? __builtin_bswap64(h->clips[i].size) : h->clips[i].size;

		if (pwrite(dst, &v, sizeof(v), (off_t)h->clips[i].field) != sizeof(v)) {
			vt_err_errno("%s: CPU data truncated; writing %s failed", path, tmp);
			goto out;
		}
	}
	for (uint64_t i = 0; i < h->nr_bad; i++) {
		uint64_t c64 = h->swap ? __builtin_bswap64(h->bad[i].good) : h->bad[i].good;
		uint32_t c32 = h->swap ? __builtin_bswap32(h->bad[i].good) : h->bad[i].good;
		size_t len = h->long8 ? sizeof(c64) : sizeof(c32);

		/* the commit: the page ends at its last sound event */
		if (pwrite(dst, h->long8 ? (void *)&c64 : (void *)&c32, len,
			   (off_t)(h->bad[i].off + PG_TS_SIZE)) != (ssize_t)len) {
			vt_err_errno("%s: malformed pages; writing %s failed", path, tmp);
			goto out;
		}
	}
	if (h->pad_to > h->size && ftruncate(dst, (off_t)h->pad_to) < 0) {
		vt_err_errno("%s: CPU data truncated; padding %s failed", path, tmp);
		goto out;
	}
	in = tracecmd_open_head(tmp, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (in && tracecmd_init_data(in) < 0)
		in = NULL;	/* leaked: see vt_td_read_open */
	if (!in)
		vt_err_set("%s: CPU data truncated or corrupt (libtracecmd cannot load it)",
			   path);
out:
	free(buf);
	if (src >= 0)
		close(src);
	if (dst >= 0) {
		unlink(tmp);	/* libtracecmd holds its own descriptor */
		close(dst);
	}
	return in;
}

/* Exit codes of the probe child (anything else: it crashed). */
#define PROBE_OK	0
#define PROBE_FAIL	2

/* libtraceevent 1.7 dereferences NULL on some malformed event format texts
 * (tep_parse_event), which tracecmd_open_head parses: parse them first in
 * a child process, silenced, and refuse the file if that child crashes. */
static int formats_ok(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return 0;	/* no probe: libtracecmd's own checks */
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		_exit(tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS) ? PROBE_OK
									    : PROBE_FAIL);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	if (WIFEXITED(st) && (WEXITSTATUS(st) == PROBE_OK || WEXITSTATUS(st) == PROBE_FAIL))
		return 0;
	return vt_err_set("%s: corrupt event formats (libtraceevent crashed parsing them)", path);
}

static void hdr_free(struct hdr_cur *h)
{
	free(h->clips);
	free(h->spans);
	free(h->bad);
}

/* Open @path and check its header into @h (hdr_check); -1 with a message. */
static int header_ok(const char *path, struct hdr_cur *h)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	memset(h, 0, sizeof(*h));
	if (fd < 0)
		return vt_err_errno("%s: cannot open", path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return vt_err_errno("%s: cannot stat", path);
	}
	ret = hdr_check(path, fd, (uint64_t)st.st_size, h);
	close(fd);
	return ret;
}

struct vt_td_reader *vt_td_read_open(const char *path)
{
	struct vt_td_reader *r = calloc(1, sizeof(*r));
	struct hdr_cur h;

	if (!r) {
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	r->path = strdup(path);
	if (header_ok(path, &h) < 0 || formats_ok(path) < 0 || pages_check(path, &h) < 0)
		goto fail;
	if (h.nr_bad)
		snprintf(r->warning, sizeof(r->warning), "%s: %llu malformed or cut ring-buffer "
			 "pages read up to their last sound event", path,
			 (unsigned long long)h.nr_bad);
	if (h.nr_clips || h.nr_bad) {
		/* CPU data cut short (killed or full-disk writer) or damaged */
		r->in = clipped_open(path, &h);
		if (!r->in)
			goto fail;
		r->truncated = 1;
	} else {
		r->in = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!r->in) {
			vt_err_set("%s: not a readable trace.dat (missing, truncated headers or "
				   "corrupt)", path);
			goto fail;
		}
		if (tracecmd_init_data(r->in) < 0) {
			/* libtracecmd 3.1 crashes closing a handle whose data
			 * failed to load: the handle is left open, once */
			r->in = NULL;
			vt_err_set("%s: corrupt CPU data (libtracecmd cannot load it)", path);
			goto fail;
		}
	}
	r->tep = tracecmd_get_tep(r->in);
	r->nr_cpus = tep_get_cpus(r->tep);
	if (r->nr_cpus < 0 || r->nr_cpus > HDR_MAX_CPUS) {
		vt_err_set("%s: bad CPU count %d", path, r->nr_cpus);
		goto fail;
	}
	r->next_off = calloc(r->nr_cpus + 1, sizeof(*r->next_off));
	r->cur = calloc(r->nr_cpus + 1, sizeof(*r->cur));
	r->peek = calloc(r->nr_cpus + 1, sizeof(*r->peek));
	if (!r->cur || !r->peek || !r->next_off || !r->path) {
		vt_err_set("%s: out of memory", path);
		goto fail;
	}
	const char *c = tracecmd_get_trace_clock(r->in);

	snprintf(r->clock, sizeof(r->clock), "%s", c ? c : "");
	hdr_free(&h);
	return r;
fail:
	hdr_free(&h);
	vt_td_read_close(r);
	return NULL;
}

void vt_td_read_close(struct vt_td_reader *r)
{
	if (!r)
		return;
	for (int i = 0; r->cur && i < r->nr_cpus; i++) {
		if (r->cur[i])
			tracecmd_free_record(r->cur[i]);
		if (r->peek[i])
			tracecmd_free_record(r->peek[i]);
	}
	for (int i = 0; i < r->nr_fmts; i++)
		free(r->fmts[i].fields);
	free(r->fmts);
	free(r->cur);
	free(r->peek);
	free(r->next_off);
	if (r->in)
		tracecmd_close(r->in);
	free(r->path);
	free(r);
}

const char *vt_td_read_warning(const struct vt_td_reader *r)
{
	return r->warning[0] ? r->warning : NULL;
}

int vt_td_read_truncated(const struct vt_td_reader *r)
{
	return r->truncated;
}

int vt_td_read_nr_cpus(const struct vt_td_reader *r)
{
	return r->nr_cpus;
}

const char *vt_td_read_clock(const struct vt_td_reader *r)
{
	return r->clock;
}

int vt_td_clock_is_ns(const char *clock)
{
	static const char *const ns_clocks[] = {
		"local", "global", "perf", "mono", "mono_raw", "boot", "tai",
	};

	for (size_t i = 0; i < VT_ARRAY_SIZE(ns_clocks); i++)
		if (!strcmp(clock, ns_clocks[i]))
			return 1;
	return 0;
}

static struct td_format *format_of(struct vt_td_reader *r, struct tep_record *rec)
{
	int id = tep_data_type(r->tep, rec);

	if (id < 0 || id > 65535)
		return NULL;
	if (id >= r->nr_fmts) {
		int n = id + 64;
		struct td_format *nf = realloc(r->fmts, n * sizeof(*nf));

		if (!nf)
			return NULL;
		memset(nf + r->nr_fmts, 0, (n - r->nr_fmts) * sizeof(*nf));
		r->fmts = nf;
		r->nr_fmts = n;
	}
	struct td_format *f = &r->fmts[id];

	if (!f->event) {
		struct tep_event *e = tep_find_event_by_record(r->tep, rec);
		int nr = 0;

		if (!e)
			return NULL;
		for (struct tep_format_field *fl = e->format.fields; fl; fl = fl->next)
			nr++;
		f->fields = calloc(nr + 1, sizeof(*f->fields));
		if (!f->fields)
			return NULL;
		nr = 0;
		for (struct tep_format_field *fl = e->format.fields; fl; fl = fl->next)
			f->fields[nr++] = fl;
		f->nr = nr;
		f->event = e;
	}
	return f;
}

/* The next record of @cpu that is an event we can describe.  In a padded
 * copy the first one that is not (the zeros after the cut) ends the CPU;
 * elsewhere such records (no format) are skipped and counted. */
/* The next record of @cpu from libtracecmd, which on some corrupt pages
 * hands out the same record again and again: a record that does not lie
 * past the last one ends that CPU (counted as cut short). */
static struct tep_record *next_data(struct vt_td_reader *r, int cpu)
{
	struct tep_record *rec = tracecmd_read_data(r->in, cpu);

	if (!rec)
		return NULL;
	if (unlikely(rec->offset < r->next_off[cpu])) {
		tracecmd_free_record(rec);
		r->truncated = 1;
		return NULL;
	}
	r->next_off[cpu] = rec->offset + (rec->size > 0 ? (unsigned)rec->size : 1);
	return rec;
}

static struct tep_record *read_rec(struct vt_td_reader *r, int cpu)
{
	struct tep_record *rec = next_data(r, cpu);

	while (rec && unlikely(rec->size < TD_COMMON_SIZE || !format_of(r, rec))) {
		tracecmd_free_record(rec);
		if (r->truncated)
			return NULL;
		r->skipped++;
		rec = next_data(r, cpu);
	}
	return rec;
}

static void fill(struct vt_td_reader *r, struct tep_record *rec, struct vt_td_event *ev)
{
	struct td_format *f = format_of(r, rec);

	ev->ts = rec->ts;
	ev->cpu = rec->cpu;
	ev->data = rec->data;
	ev->size = rec->size;
	ev->pid = tep_data_pid(r->tep, rec);
	ev->priv = f;
	ev->id = f ? f->event->id : -1;
	ev->system = f && f->event->system ? f->event->system : "";
	ev->name = f && f->event->name ? f->event->name : "";
}

int vt_td_read_next(struct vt_td_reader *r, int cpu, struct vt_td_event *ev)
{
	if (cpu < 0 || cpu >= r->nr_cpus)
		return 0;
	if (r->cur[cpu]) {
		tracecmd_free_record(r->cur[cpu]);
		r->cur[cpu] = NULL;
	}
	struct tep_record *rec = read_rec(r, cpu);

	if (!rec)
		return 0;
	r->cur[cpu] = rec;
	fill(r, rec, ev);
	return 1;
}

int vt_td_read_next_any(struct vt_td_reader *r, struct vt_td_event *ev)
{
	int best = -1;

	for (int cpu = 0; cpu < r->nr_cpus; cpu++) {
		if (r->cur[cpu]) {
			tracecmd_free_record(r->cur[cpu]);
			r->cur[cpu] = NULL;
		}
		if (!r->peek[cpu])
			r->peek[cpu] = read_rec(r, cpu);
		if (r->peek[cpu] && (best < 0 || r->peek[cpu]->ts < r->peek[best]->ts))
			best = cpu;
	}
	if (best < 0)
		return 0;
	r->cur[best] = r->peek[best];
	r->peek[best] = NULL;
	fill(r, r->cur[best], ev);
	return 1;
}

const char *vt_td_event_info(struct vt_td_reader *r, const struct vt_td_event *ev,
			     char *buf, size_t len)
{
	struct tep_record *rec = ev->cpu >= 0 && ev->cpu < r->nr_cpus ? r->cur[ev->cpu] : NULL;
	struct trace_seq sq;

	if (!len)
		return buf;
	buf[0] = 0;
	if (!rec)
		return buf;
	trace_seq_init(&sq);
	tep_print_event(r->tep, &sq, rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&sq);
	snprintf(buf, len, "%s", sq.buffer ? sq.buffer : "");
	trace_seq_destroy(&sq);
	return buf;
}

const char *vt_td_read_comm(struct vt_td_reader *r, int pid)
{
	const char *c = tep_data_comm_from_pid(r->tep, pid);

	return c && strcmp(c, "<...>") ? c : "";
}

static struct tep_format_field *find(const struct vt_td_event *ev, const char *name)
{
	const struct td_format *f = ev->priv;

	if (!f)
		return NULL;
	for (int i = 0; i < f->nr; i++)
		if (!strcmp(f->fields[i]->name, name))
			return f->fields[i];
	return NULL;
}

static int field_num(const struct tep_format_field *fl)
{
	return !(fl->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) &&
	       (fl->size == 1 || fl->size == 2 || fl->size == 4 || fl->size == 8);
}

static int read_num(const struct vt_td_event *ev, const struct tep_format_field *fl,
		    uint64_t *out)
{
	if (!field_num(fl) || fl->offset < 0 || fl->offset + fl->size > ev->size)
		return -1;
	unsigned long long v;

	if (tep_read_number_field((struct tep_format_field *)fl, ev->data, &v) < 0)
		return -1;
	if ((fl->flags & TEP_FIELD_IS_SIGNED) && fl->size < 8) {
		unsigned shift = 64 - 8 * fl->size;

		v = (unsigned long long)((long long)(v << shift) >> shift);
	}
	*out = v;
	return 0;
}

static const struct tep_format_field *field_at(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;

	return f && i >= 0 && i < f->nr ? f->fields[i] : NULL;
}

int vt_td_field_u64_idx(const struct vt_td_event *ev, int i, uint64_t *out)
{
	const struct tep_format_field *fl = field_at(ev, i);

	return fl ? read_num(ev, fl, out) : -1;
}

int vt_td_field_u64(const struct vt_td_event *ev, const char *field, uint64_t *out)
{
	const struct tep_format_field *fl = find(ev, field);

	return fl ? read_num(ev, fl, out) : -1;
}

static const char *read_str(const struct vt_td_event *ev, const struct tep_format_field *fl,
			    char *buf, size_t len)
{
	const unsigned char *d = ev->data;
	int off, sz;

	if (!fl || !len)
		return NULL;
	if (fl->flags & TEP_FIELD_IS_DYNAMIC) {
		uint32_t loc;

		if (fl->offset < 0 || fl->offset + 4 > ev->size)
			return NULL;
		memcpy(&loc, d + fl->offset, 4);
		off = loc & 0xffff;
		sz = loc >> 16;
		if (fl->flags & TEP_FIELD_IS_RELATIVE)
			off += fl->offset + fl->size;
	} else if (fl->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_ARRAY)) {
		off = fl->offset;
		sz = fl->size;
	} else {
		return NULL;
	}
	if (off < 0 || sz < 0 || off > ev->size || sz > ev->size - off)
		return NULL;
	size_t n = strnlen((const char *)d + off, sz);

	if (n >= len)
		n = len - 1;
	memcpy(buf, d + off, n);
	buf[n] = 0;
	return buf;
}

const char *vt_td_field_str(const struct vt_td_event *ev, const char *field,
			    char *buf, size_t len)
{
	return read_str(ev, find(ev, field), buf, len);
}

const char *vt_td_field_str_idx(const struct vt_td_event *ev, int i, char *buf, size_t len)
{
	return read_str(ev, field_at(ev, i), buf, len);
}

int vt_td_nr_fields(const struct vt_td_event *ev)
{
	const struct td_format *f = ev->priv;

	return f ? f->nr : 0;
}

const char *vt_td_field_name(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;

	return f && i >= 0 && i < f->nr ? f->fields[i]->name : "";
}

int vt_td_field_is_num(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;

	return f && i >= 0 && i < f->nr && field_num(f->fields[i]);
}
