/*
 * tracedat_write.c - the trace.dat writer, see tracedat.h and
 * docs/format/tracedat.md for the byte tables: trace-cmd's version 6
 * (plain) or version 7 with zstd-compressed sections (what `trace-cmd
 * record --compression zstd` writes).  Both have the same section
 * contents; v7 collects each metadata section in memory and writes it
 * compressed, and the pages in chunks of TD_COPY_PAGES pages.  Used by the
 * recorder's main thread after recording (allocates, blocks on file I/O);
 * never on a tracing hot path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "err.h"
#include "fileio.h"
#include "tracedat.h"
#include "tracedat_check.h"

#define TD_MAGIC		"\x17\x08\x44tracing"
#define TD_MAGIC_LEN		10
#define TD_LONG_SIZE		8
#define TD_FILE_MODE		0644
#define TD_COMMIT_MASK		((1U << 27) - 1)
#define TD_MISSED_EVENTS	(1ULL << 31)
#define TD_MISSED_STORED	(1ULL << 30)
#define TD_EVT_HDR_SIZE		4
#define TD_TYPE_DATA_MAX	28
#define TD_TYPE_PADDING		29
#define TD_TYPE_TIME_EXTEND	30
#define TD_TYPE_TIME_STAMP	31
#define TD_TYPE_LEN_MASK	0x1f
#define TD_ALIGNMENT		4
#define TD_TIME_EVENT_SIZE	8
#define TD_COPY_PAGES		64
#define TD_MAX_OPTIONS		256
#define TD_HEADER_PAGE		"header_page"	/* section names, written with their NUL */
#define TD_HEADER_EVENT		"header_event"
#define TD_ZSTD_LEVEL		3	/* pages: zstd's default, trace-cmd's too */
#define TD_ZSTD_META_LEVEL	1	/* metadata: kallsyms 2.7x faster than at 3, as small */
#define TD_OPT_BUFFER		3
#define TD_OPT_CPUCOUNT		8
#define TD_SEC_STRINGS		15
#define TD_SEC_HEADER_INFO	16	/* ... to TD_SEC_CMDLINES: one per metadata section */
#define TD_SEC_CMDLINES		21
#define TD_NR_META		(TD_SEC_CMDLINES - TD_SEC_HEADER_INFO + 1)

/* Writer states: each section moves the file one step on. */
enum td_state {
	TD_S_INIT,
	TD_S_HEADERS,
	TD_S_FTRACE,
	TD_S_SYSTEMS,
	TD_S_KALLSYMS,
	TD_S_PRINTK,
	TD_S_CMDLINES,
	TD_S_DATA,
};

struct td_option {
	uint16_t id;
	uint32_t len;
	void *data;
};

/* A growing memory buffer (v7: a section collected before compression). */
struct td_buf {
	uint8_t *p;
	size_t len, cap;
};

struct vt_td_writer {
	int fd;
	char *path;
	uint32_t page_size;
	uint64_t off;		/* bytes written so far */
	int v7;			/* version 7, zstd-compressed sections */
	int collecting;		/* v7: td_write goes to @sec, not the file */
	struct td_buf sec;	/* v7: the section being collected */
	struct td_buf strings;	/* v7: the strings section (descriptions) */
	void *z;		/* v7: compressed output buffer */
	size_t zcap;
	ZSTD_CCtx *zc;
	uint64_t first_opt_at;	/* v7: where the header's options offset is */
	uint64_t meta_off[TD_NR_META];	/* v7: offsets of sections 16..21 */
	enum td_state state;
	unsigned systems_left;
	unsigned nr_opts;
	struct td_option opts[TD_MAX_OPTIONS];
};

static int td_buf_add(struct vt_td_writer *w, struct td_buf *b, const void *p, size_t len)
{
	if (len > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *n;

		while (cap - b->len < len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n)
			return vt_err_set("%s: out of memory (%zu bytes)", w->path, cap);
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	return 0;
}

static int td_write(struct vt_td_writer *w, const void *buf, size_t len)
{
	const char *p = buf;

	if (w->collecting)
		return td_buf_add(w, &w->sec, buf, len);
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return vt_err_errno("%s: write failed at offset %llu", w->path,
					    (unsigned long long)w->off);
		}
		p += n;
		len -= n;
		w->off += n;
	}
	return 0;
}

static int td_u16(struct vt_td_writer *w, uint16_t v)
{
	return td_write(w, &v, sizeof(v));
}

static int td_u32(struct vt_td_writer *w, uint32_t v)
{
	return td_write(w, &v, sizeof(v));
}

static int td_u64(struct vt_td_writer *w, uint64_t v)
{
	return td_write(w, &v, sizeof(v));
}

static int td_step(struct vt_td_writer *w, enum td_state from, const char *what)
{
	if (w->state != from)
		return vt_err_set("%s: trace.dat writer: %s written out of order", w->path, what);
	w->state = from + 1;
	return 0;
}

/* Overwrite @len bytes at file offset @at (a size or offset known late). */
static int td_patch(struct vt_td_writer *w, uint64_t at, const void *p, size_t len)
{
	ssize_t n = pwrite(w->fd, p, len, (off_t)at);

	if (n != (ssize_t)len)
		return n < 0 ? vt_err_errno("%s: write failed at offset %llu", w->path,
					    (unsigned long long)at)
			     : vt_err_set("%s: short write at offset %llu", w->path,
					  (unsigned long long)at);
	return 0;
}

/* Compress @len bytes at @p into w->z at @level; its compressed size, 0 on
 * failure. */
static size_t td_zstd(struct vt_td_writer *w, const void *p, size_t len, int level)
{
	size_t bound = ZSTD_compressBound(len), n;

	if (bound > w->zcap) {
		free(w->z);
		w->zcap = 0;
		if (!(w->z = malloc(bound))) {
			vt_err_set("%s: out of memory (%zu bytes)", w->path, bound);
			return 0;
		}
		w->zcap = bound;
	}
	n = ZSTD_compressCCtx(w->zc, w->z, w->zcap, p, len, level);
	if (ZSTD_isError(n)) {
		vt_err_set("%s: zstd: %s", w->path, ZSTD_getErrorName(n));
		return 0;
	}
	return n;
}

/* v7: the string id of @s in the strings section (added). */
static int td_string(struct vt_td_writer *w, const char *s, uint32_t *id)
{
	*id = (uint32_t)w->strings.len;
	return td_buf_add(w, &w->strings, s, strlen(s) + 1);
}

static int td_sec_hdr_id(struct vt_td_writer *w, uint16_t id, uint16_t flags, uint32_t strid,
			 uint64_t size)
{
	return td_u16(w, id) || td_u16(w, flags) || td_u32(w, strid) || td_u64(w, size) ? -1 : 0;
}

static int td_sec_hdr(struct vt_td_writer *w, uint16_t id, uint16_t flags, const char *desc,
		      uint64_t size)
{
	uint32_t strid;

	return td_string(w, desc, &strid) || td_sec_hdr_id(w, id, flags, strid, size);
}

/* v7: @len bytes at @p written compressed as section @id. */
static int td_sec_z(struct vt_td_writer *w, uint16_t id, uint32_t strid, const void *p,
		    size_t len)
{
	size_t zs;

	if (len > UINT32_MAX)
		return vt_err_set("%s: section %u too large (%zu bytes)", w->path, id, len);
	if (!(zs = td_zstd(w, p, len, TD_ZSTD_META_LEVEL)))
		return -1;
	return td_sec_hdr_id(w, id, HDR_SEC_COMPRESSED, strid, HDR_ZHDR + zs) ||
	       td_u32(w, (uint32_t)zs) || td_u32(w, (uint32_t)len) || td_write(w, w->z, zs);
}

/* v7: the section whose content td_write collects from now on. */
static void td_sec_begin(struct vt_td_writer *w)
{
	if (w->v7) {
		w->collecting = 1;
		w->sec.len = 0;
	}
}

/* v7: the collected section written compressed as metadata section @id
 * (TD_SEC_HEADER_INFO..TD_SEC_CMDLINES), its offset kept for the options. */
static int td_sec_end(struct vt_td_writer *w, uint16_t id, const char *desc)
{
	uint32_t strid;

	if (!w->v7)
		return 0;
	w->collecting = 0;
	w->meta_off[id - TD_SEC_HEADER_INFO] = w->off;
	return td_string(w, desc, &strid) || td_sec_z(w, id, strid, w->sec.p, w->sec.len);
}

static struct vt_td_writer *td_create(const char *path, uint32_t page_size, int v7)
{
	struct vt_td_writer *w;
	uint8_t endian = 0, long_size = TD_LONG_SIZE;

	if (page_size < VT_TD_PAGE_HDR_SIZE * 2 || (page_size & (page_size - 1))) {
		vt_err_set("%s: bad ring-buffer page size %u", path, page_size);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	w->page_size = page_size;
	w->v7 = v7;
	if (v7 && !(w->zc = ZSTD_createCCtx())) {
		vt_err_set("%s: out of memory (zstd context)", path);
		free(w->path);
		free(w);
		return NULL;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, TD_FILE_MODE);
	if (w->fd < 0) {
		vt_err_errno("%s: cannot create", path);
		ZSTD_freeCCtx(w->zc);
		free(w->path);
		free(w);
		return NULL;
	}
	if (td_write(w, TD_MAGIC, TD_MAGIC_LEN) || td_write(w, v7 ? "7" : "6", 2) ||
	    td_write(w, &endian, 1) || td_write(w, &long_size, 1) || td_u32(w, page_size))
		goto fail;
	if (v7) {
		const char *ver = ZSTD_versionString();

		/* the first options section's offset: patched at the end */
		if (td_write(w, "zstd", 5) || td_write(w, ver, strlen(ver) + 1))
			goto fail;
		w->first_opt_at = w->off;
		if (td_u64(w, 0))
			goto fail;
	}
	return w;
fail:
	vt_td_abort(w);
	return NULL;
}

struct vt_td_writer *vt_td_create(const char *path, uint32_t page_size)
{
	return td_create(path, page_size, 0);
}

struct vt_td_writer *vt_td_create_zstd(const char *path, uint32_t page_size)
{
	return td_create(path, page_size, 1);
}

int vt_td_write_headers(struct vt_td_writer *w, const char *header_page, size_t page_len,
			const char *header_event, size_t event_len)
{
	if (td_step(w, TD_S_INIT, "headers"))
		return -1;
	td_sec_begin(w);
	if (td_write(w, TD_HEADER_PAGE, sizeof(TD_HEADER_PAGE)) || td_u64(w, page_len) ||
	    td_write(w, header_page, page_len) ||
	    td_write(w, TD_HEADER_EVENT, sizeof(TD_HEADER_EVENT)) || td_u64(w, event_len) ||
	    td_write(w, header_event, event_len))
		return -1;
	return td_sec_end(w, TD_SEC_HEADER_INFO, "headers");
}

static int td_formats(struct vt_td_writer *w, unsigned nr, const char *const *fmts,
		      const size_t *lens)
{
	if (td_u32(w, nr))
		return -1;
	for (unsigned i = 0; i < nr; i++)
		if (td_u64(w, lens[i]) || td_write(w, fmts[i], lens[i]))
			return -1;
	return 0;
}

int vt_td_write_ftrace_formats(struct vt_td_writer *w, unsigned nr,
			       const char *const *fmts, const size_t *lens)
{
	if (td_step(w, TD_S_HEADERS, "ftrace formats"))
		return -1;
	td_sec_begin(w);
	if (td_formats(w, nr, fmts, lens))
		return -1;
	return td_sec_end(w, TD_SEC_HEADER_INFO + 1, "ftrace events");
}

int vt_td_systems_begin(struct vt_td_writer *w, unsigned nr)
{
	if (w->state != TD_S_FTRACE)
		return vt_err_set("%s: trace.dat writer: systems out of order", w->path);
	w->systems_left = nr;
	td_sec_begin(w);
	if (td_u32(w, nr))
		return -1;
	if (!nr) {
		w->state = TD_S_SYSTEMS;
		return td_sec_end(w, TD_SEC_HEADER_INFO + 2, "events format");
	}
	return 0;
}

int vt_td_write_system(struct vt_td_writer *w, const char *system, unsigned nr,
		       const char *const *fmts, const size_t *lens)
{
	if (w->state != TD_S_FTRACE || !w->systems_left)
		return vt_err_set("%s: trace.dat writer: system %s out of order", w->path,
				  system);
	if (td_write(w, system, strlen(system) + 1) || td_formats(w, nr, fmts, lens))
		return -1;
	if (!--w->systems_left) {
		w->state = TD_S_SYSTEMS;
		return td_sec_end(w, TD_SEC_HEADER_INFO + 2, "events format");
	}
	return 0;
}

int vt_td_write_kallsyms(struct vt_td_writer *w, const char *buf, size_t len)
{
	if (len > UINT32_MAX)
		return vt_err_set("%s: kallsyms too large (%zu bytes)", w->path, len);
	if (td_step(w, TD_S_SYSTEMS, "kallsyms"))
		return -1;
	td_sec_begin(w);
	if (td_u32(w, len) || td_write(w, buf, len))
		return -1;
	return td_sec_end(w, TD_SEC_HEADER_INFO + 3, "kallsyms");
}

int vt_td_write_printk(struct vt_td_writer *w, const char *buf, size_t len)
{
	if (len > UINT32_MAX)
		return vt_err_set("%s: printk formats too large (%zu bytes)", w->path, len);
	if (td_step(w, TD_S_KALLSYMS, "printk formats"))
		return -1;
	td_sec_begin(w);
	if (td_u32(w, len) || td_write(w, buf, len))
		return -1;
	return td_sec_end(w, TD_SEC_HEADER_INFO + 4, "printk");
}

int vt_td_write_cmdlines(struct vt_td_writer *w, const char *buf, size_t len)
{
	if (td_step(w, TD_S_PRINTK, "cmdlines"))
		return -1;
	td_sec_begin(w);
	if (td_u64(w, len) || td_write(w, buf, len))
		return -1;
	return td_sec_end(w, TD_SEC_CMDLINES, "command lines");
}

int vt_td_add_option(struct vt_td_writer *w, enum vt_td_option id, const void *data,
		     uint32_t len)
{
	struct td_option *o;

	if (w->nr_opts >= TD_MAX_OPTIONS || id == VT_TD_OPT_DONE)
		return vt_err_set("%s: trace.dat writer: option %d refused", w->path, id);
	o = &w->opts[w->nr_opts];
	o->data = malloc(len ? len : 1);
	if (!o->data)
		return vt_err_set("%s: out of memory", w->path);
	memcpy(o->data, data, len);
	o->id = id;
	o->len = len;
	w->nr_opts++;
	return 0;
}

/* A discarded event needs a non-zero time delta (a zero one ends the
 * page): one tick may be taken from the entry at @next (page data offset)
 * when it is an event, padding or time extend whose own delta stays
 * non-zero; none is needed when nothing follows (the page's end) or an
 * absolute stamp does.  1 if the delta may be one tick. */
static int td_borrow_tick(uint8_t *data, size_t next, size_t size)
{
	uint32_t hdr, type_len, min;

	if (next + TD_EVT_HDR_SIZE > size)
		return 1;
	memcpy(&hdr, data + next, sizeof(hdr));
	type_len = hdr & TD_TYPE_LEN_MASK;
	if (type_len == TD_TYPE_PADDING && !(hdr >> 5))
		return 1;	/* the rest of the page is padding */
	if (type_len == TD_TYPE_TIME_STAMP)
		return 1;	/* absolute: what follows does not add our delta */
	if (type_len == TD_TYPE_TIME_EXTEND) {
		uint32_t hi;
		uint64_t ext;

		if (next + TD_TIME_EVENT_SIZE > size)
			return 0;
		memcpy(&hi, data + next + TD_EVT_HDR_SIZE, sizeof(hi));
		ext = ((uint64_t)hi << 27) | (hdr >> 5);
		if (ext < 2)
			return 0;
		ext--;
		hdr = (uint32_t)((ext & ((1u << 27) - 1)) << 5) | TD_TYPE_TIME_EXTEND;
		hi = (uint32_t)(ext >> 27);
		memcpy(data + next, &hdr, sizeof(hdr));
		memcpy(data + next + TD_EVT_HDR_SIZE, &hi, sizeof(hi));
		return 1;
	}
	min = type_len == TD_TYPE_PADDING ? 2 : 1;
	if ((hdr >> 5) < min)
		return 0;
	hdr -= 1u << 5;
	memcpy(data + next, &hdr, sizeof(hdr));
	return 1;
}

/*
 * Walk one ring-buffer page: count it into @st, and where @keep is given,
 * turn each data event it refuses into a discarded event - padding of the
 * same length carrying the same time delta, as the kernel's
 * rb_event_discard() leaves it, so readers skip it and every later stamp
 * stays exact.  An event with a zero delta joins the padding of a discarded
 * one just before it, else takes a tick from the entry after it
 * (td_borrow_tick), else is kept: a zero-delta padding would end the page.
 * *@nr_discarded counts the discarded.  -1 if the page is
 * malformed.
 */
static int td_page_walk(uint8_t *page, size_t len, struct vt_td_cpu_stats *st,
			int (*keep)(void *arg, const void *data, uint32_t len), void *arg,
			uint64_t *nr_discarded)
{
	uint8_t *p = page, *prev_pad = NULL;
	uint64_t ts, commit;
	size_t size, off;

	if (unlikely(len < VT_TD_PAGE_HDR_SIZE))
		return -1;
	memcpy(&ts, p, sizeof(ts));
	memcpy(&commit, p + 8, sizeof(commit));
	size = commit & TD_COMMIT_MASK;
	if (unlikely(size > len - VT_TD_PAGE_HDR_SIZE))
		return -1;
	if (!st->pages)
		st->first_ts = ts;
	st->pages++;
	if (unlikely(commit & TD_MISSED_EVENTS)) {
		uint64_t missed;

		if ((commit & TD_MISSED_STORED) &&
		    size + sizeof(missed) <= len - VT_TD_PAGE_HDR_SIZE) {
			memcpy(&missed, p + VT_TD_PAGE_HDR_SIZE + size, sizeof(missed));
			st->lost += missed;
		} else {
			st->lost_unknown++;
		}
	}
	p += VT_TD_PAGE_HDR_SIZE;
	for (off = 0; off < size;) {
		uint32_t hdr, type_len, len32;
		size_t evlen, data_off = 0;
		uint8_t *pad = NULL;

		if (unlikely(size - off < TD_EVT_HDR_SIZE))
			return -1;
		memcpy(&hdr, p + off, sizeof(hdr));
		type_len = hdr & TD_TYPE_LEN_MASK;
		if (type_len == TD_TYPE_TIME_EXTEND || type_len == TD_TYPE_TIME_STAMP) {
			evlen = TD_TIME_EVENT_SIZE;
		} else if (type_len == 0 || type_len == TD_TYPE_PADDING) {
			if (type_len == TD_TYPE_PADDING && !(hdr >> 5))
				break;	/* rest of the page is padding */
			if (unlikely(size - off < 2 * TD_EVT_HDR_SIZE))
				return -1;
			memcpy(&len32, p + off + TD_EVT_HDR_SIZE, sizeof(len32));
			evlen = (size_t)len32 + TD_EVT_HDR_SIZE;
			data_off = 2 * TD_EVT_HDR_SIZE;
			if (type_len == 0)
				st->events++;
			else
				pad = p + off;
		} else {
			evlen = (size_t)type_len * TD_ALIGNMENT + TD_EVT_HDR_SIZE;
			data_off = TD_EVT_HDR_SIZE;
			st->events++;
		}
		if (unlikely(evlen > size - off || evlen < TD_EVT_HDR_SIZE))
			return -1;
		if (keep && type_len <= TD_TYPE_DATA_MAX && evlen > data_off &&
		    !keep(arg, p + off + data_off, (uint32_t)(evlen - data_off))) {
			if (prev_pad && !(hdr >> 5)) {
				memcpy(&len32, prev_pad + TD_EVT_HDR_SIZE, sizeof(len32));
				len32 += (uint32_t)evlen;
				memcpy(prev_pad + TD_EVT_HDR_SIZE, &len32, sizeof(len32));
				pad = prev_pad;
				st->events--;
				++*nr_discarded;
			} else if ((hdr >> 5) || td_borrow_tick(p, off + evlen, size)) {
				/* the padding's length: what follows its header */
				len32 = (uint32_t)evlen - TD_EVT_HDR_SIZE;
				hdr = (hdr & ~(uint32_t)TD_TYPE_LEN_MASK) | TD_TYPE_PADDING;
				if (!(hdr >> 5))
					hdr += 1u << 5;	/* the tick borrowed */
				memcpy(p + off, &hdr, sizeof(hdr));
				memcpy(p + off + TD_EVT_HDR_SIZE, &len32, sizeof(len32));
				pad = p + off;
				st->events--;
				++*nr_discarded;
			}
		}
		prev_pad = pad;
		off += evlen;
	}
	return 0;
}

int vt_td_page_count(const void *page, size_t len, struct vt_td_cpu_stats *st)
{
	return td_page_walk((uint8_t *)page, len, st, NULL, NULL, NULL);
}

int vt_td_page_discard(void *page, size_t len, int (*keep)(void *arg, const void *data,
							   uint32_t len),
		       void *arg, uint64_t *nr_discarded)
{
	struct vt_td_cpu_stats st = { 0 };

	return td_page_walk(page, len, &st, keep, arg, nr_discarded);
}

/*
 * v7: @n bytes of pages at @buf written as one compressed chunk (u32
 * compressed size, u32 size, data), counted in *@nr.  A chunk that
 * compresses better than lib/tracedat_unzip.c accepts (a bound against
 * decompression bombs: HDR_ZRATIO_MAX:1 plus a page, e.g. pages of zeros)
 * is written page by page instead, so every file written here reads back.
 */
static int td_chunk(struct vt_td_writer *w, const char *buf, size_t n, uint32_t *nr)
{
	size_t zs = td_zstd(w, buf, n, TD_ZSTD_LEVEL);

	if (!zs)
		return -1;
	/* (past the ratio a chunk is more than a page: zs >= 1) */
	if ((uint64_t)n > (uint64_t)zs * HDR_ZRATIO_MAX + w->page_size) {
		for (size_t o = 0; o < n; o += w->page_size)
			if (td_chunk(w, buf + o, w->page_size, nr))
				return -1;
		return 0;
	}
	if (*nr == UINT32_MAX)
		return vt_err_set("%s: too many compressed chunks", w->path);
	++*nr;
	return td_u32(w, (uint32_t)zs) || td_u32(w, (uint32_t)n) || td_write(w, w->z, zs);
}

/* Copy one CPU's file of pages to the output, counting them; v7: in
 * compressed chunks of TD_COPY_PAGES pages, counted in *@nr_chunks. */
static int td_copy_cpu(struct vt_td_writer *w, unsigned cpu, int fd, uint64_t size,
		       struct vt_td_cpu_stats *st, char *buf, uint32_t *nr_chunks)
{
	size_t chunk = (size_t)w->page_size * TD_COPY_PAGES;
	uint64_t done = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return vt_err_errno("%s: cpu%u data: cannot seek", w->path, cpu);
	while (done < size) {
		size_t want = size - done < chunk ? size - done : chunk;
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vt_err_errno("%s: cpu%u data: read failed", w->path, cpu);
		if (n == 0)
			return vt_err_set("%s: cpu%u data: file shrank while copying", w->path,
					  cpu);
		if (n % w->page_size)
			return vt_err_set("%s: cpu%u data: short read of %zd bytes", w->path,
					  cpu, n);
		for (ssize_t o = 0; o < n; o += w->page_size)
			if (vt_td_page_count(buf + o, w->page_size, st) && !st->bad_pages++)
				st->first_bad = done + (uint64_t)o;	/* the caller warns */
		if (w->v7 ? td_chunk(w, buf, (size_t)n, nr_chunks) : td_write(w, buf, n))
			return -1;
		done += n;
	}
	st->bytes = done;
	return 0;
}

/* The clock name selected in a TRACECLOCK option's text ("... [x86-tsc] ..."),
 * into @name (@len bytes); "" without one. */
static void td_clock_name(const struct vt_td_writer *w, char *name, size_t len)
{
	name[0] = 0;
	for (unsigned i = 0; i < w->nr_opts; i++) {
		const char *t = w->opts[i].data, *a, *b;

		if (w->opts[i].id != VT_TD_OPT_TRACECLOCK ||
		    !(a = memchr(t, '[', w->opts[i].len)) ||
		    !(b = memchr(a, ']', w->opts[i].len - (size_t)(a - t))) ||
		    (size_t)(b - a) > len)
			continue;
		memcpy(name, a + 1, (size_t)(b - a - 1));
		name[b - a - 1] = 0;
	}
}

static int td_opt(struct vt_td_writer *w, uint16_t id, const void *data, uint32_t len)
{
	return td_u16(w, id) || td_u32(w, len) || td_write(w, data, len) ? -1 : 0;
}

/*
 * v7: the flyrecord section (each CPU's pages in compressed chunks), then
 * the one options section - the queued options, the metadata sections'
 * offsets, CPUCOUNT, BUFFER (the flyrecord section and each CPU's chunks)
 * - and the strings section; the header's first-options offset and the
 * sizes known only afterwards are patched in place.
 */
static int td_cpu_data_v7(struct vt_td_writer *w, unsigned nr_cpus, const int *fds,
			  const uint64_t *sizes, struct vt_td_cpu_stats *stats, char *buf)
{
	uint64_t fly, *off, *len, opt_at;
	uint32_t nr_chunks, strid;
	char clock[64];
	int ret = -1;

	off = calloc(2 * (size_t)(nr_cpus ? nr_cpus : 1), sizeof(*off));
	if (!off)
		return vt_err_set("%s: out of memory", w->path);
	len = off + nr_cpus;
	fly = w->off;
	if (td_sec_hdr(w, TD_OPT_BUFFER, HDR_SEC_COMPRESSED, "buffer flyrecord ", 0))
		goto out;
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct vt_td_cpu_stats dummy;
		struct vt_td_cpu_stats *st = stats ? &stats[i] : &dummy;

		memset(st, 0, sizeof(*st));
		off[i] = w->off;
		nr_chunks = 0;
		if (td_u32(w, 0) || td_copy_cpu(w, i, fds[i], sizes[i], st, buf, &nr_chunks) ||
		    td_patch(w, off[i], &nr_chunks, sizeof(nr_chunks)))
			goto out;
		/* a CPU's size counts what follows its chunk count */
		len[i] = w->off - off[i] - sizeof(nr_chunks);
	}
	{
		uint64_t fly_size = w->off - fly - HDR_SEC_HDR;

		if (td_patch(w, fly + HDR_SEC_HDR - sizeof(fly_size), &fly_size, sizeof(fly_size)))
			goto out;
	}
	opt_at = w->off;
	td_sec_begin(w);
	for (unsigned i = 0; i < w->nr_opts; i++)
		if (td_opt(w, w->opts[i].id, w->opts[i].data, w->opts[i].len))
			goto out;
	for (unsigned i = 0; i < TD_NR_META; i++)
		if (td_opt(w, TD_SEC_HEADER_INFO + i, &w->meta_off[i], sizeof(w->meta_off[i])))
			goto out;
	if (td_opt(w, TD_OPT_CPUCOUNT, &nr_cpus, sizeof(uint32_t)))
		goto out;
	td_clock_name(w, clock, sizeof(clock));
	{
		uint32_t blen = sizeof(fly) + 1 + strlen(clock) + 1 + 2 * sizeof(uint32_t) +
				nr_cpus * (sizeof(uint32_t) + 2 * sizeof(uint64_t));

		if (td_u16(w, TD_OPT_BUFFER) || td_u32(w, blen) || td_u64(w, fly) ||
		    td_write(w, "", 1) || td_write(w, clock, strlen(clock) + 1) ||
		    td_u32(w, w->page_size) || td_u32(w, nr_cpus))
			goto out;
	}
	for (unsigned i = 0; i < nr_cpus; i++)
		if (td_u32(w, i) || td_u64(w, off[i]) || td_u64(w, len[i]))
			goto out;
	if (td_u16(w, VT_TD_OPT_DONE) || td_u32(w, sizeof(uint64_t)) || td_u64(w, 0))
		goto out;
	/* the options section is not compressed (as trace-cmd writes it) */
	w->collecting = 0;
	if (td_sec_hdr(w, VT_TD_OPT_DONE, 0, "options", w->sec.len) ||
	    td_write(w, w->sec.p, w->sec.len) ||
	    td_patch(w, w->first_opt_at, &opt_at, sizeof(opt_at)))
		goto out;
	/* the strings section holds its own description too */
	if (td_string(w, "strings", &strid) ||
	    td_sec_z(w, TD_SEC_STRINGS, strid, w->strings.p, w->strings.len))
		goto out;
	ret = 0;
out:
	w->collecting = 0;
	free(off);
	return ret;
}

int vt_td_write_cpu_data(struct vt_td_writer *w, unsigned nr_cpus, const int *fds,
			 struct vt_td_cpu_stats *stats)
{
	uint64_t *sizes, off;
	char *buf, zero = 0;
	const char *clock = NULL;
	size_t clock_len = 0;
	int ret = -1;

	if (td_step(w, TD_S_CMDLINES, "cpu data"))
		return -1;
	sizes = calloc(nr_cpus ? nr_cpus : 1, sizeof(*sizes));
	buf = vt_io_alloc((size_t)w->page_size * TD_COPY_PAGES);
	if (!sizes || !buf) {
		vt_err_set("%s: out of memory", w->path);
		goto out;
	}
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct stat sb;

		if (fstat(fds[i], &sb)) {
			vt_err_errno("%s: cpu%u data: cannot stat", w->path, i);
			goto out;
		}
		/* only whole pages: a torn last page (crash) is left out */
		sizes[i] = (uint64_t)sb.st_size - (uint64_t)sb.st_size % w->page_size;
	}
	if (w->v7) {
		ret = td_cpu_data_v7(w, nr_cpus, fds, sizes, stats, buf);
		goto out;
	}
	if (td_u32(w, nr_cpus) || td_write(w, "options  ", 10))
		goto out;
	for (unsigned i = 0; i < w->nr_opts; i++)
		if (td_u16(w, w->opts[i].id) || td_u32(w, w->opts[i].len) ||
		    td_write(w, w->opts[i].data, w->opts[i].len))
			goto out;
	if (td_u16(w, VT_TD_OPT_DONE) || td_write(w, "flyrecord", 10))
		goto out;
	/* with a TRACECLOCK option libtracecmd reads u64 size + the clock text
	 * right after the offsets (v6): written here, never left to the
	 * padding (whose bytes, near a page end, would be the first page's) */
	for (unsigned i = 0; i < w->nr_opts; i++)
		if (w->opts[i].id == VT_TD_OPT_TRACECLOCK) {
			clock = w->opts[i].data;
			clock_len = strnlen(clock, w->opts[i].len);
		}
	off = w->off + (uint64_t)nr_cpus * 2 * sizeof(uint64_t);
	if (clock)
		off += sizeof(uint64_t) + clock_len;
	off = (off + w->page_size - 1) / w->page_size * w->page_size;
	for (unsigned i = 0; i < nr_cpus; i++) {
		if (td_u64(w, off) || td_u64(w, sizes[i]))
			goto out;
		off += sizes[i];
	}
	if (clock && (td_u64(w, clock_len) || td_write(w, clock, clock_len)))
		goto out;
	while (w->off % w->page_size)
		if (td_write(w, &zero, 1))
			goto out;
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct vt_td_cpu_stats dummy;
		struct vt_td_cpu_stats *st = stats ? &stats[i] : &dummy;

		memset(st, 0, sizeof(*st));
		if (td_copy_cpu(w, i, fds[i], sizes[i], st, buf, NULL))
			goto out;
	}
	ret = 0;
out:
	free(sizes);
	free(buf);
	return ret;
}

static void td_free(struct vt_td_writer *w)
{
	ZSTD_freeCCtx(w->zc);
	free(w->sec.p);
	free(w->strings.p);
	free(w->z);
	for (unsigned i = 0; i < w->nr_opts; i++)
		free(w->opts[i].data);
	free(w->path);
	free(w);
}

int vt_td_close(struct vt_td_writer *w)
{
	int ret = 0;

	if (w->state != TD_S_DATA)
		ret = vt_err_set("%s: trace.dat closed before its cpu data", w->path);
	if (!ret && fsync(w->fd))
		ret = vt_err_errno("%s: fsync failed", w->path);
	if (close(w->fd) && !ret)
		ret = vt_err_errno("%s: close failed", w->path);
	td_free(w);
	return ret;
}

void vt_td_abort(struct vt_td_writer *w)
{
	close(w->fd);
	unlink(w->path);
	td_free(w);
}
