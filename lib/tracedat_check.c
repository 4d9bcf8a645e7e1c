/*
 * tracedat_check.c - the guard in front of libtracecmd for lib/tracedat.h's
 * reader: walks a trace.dat header (v6 and v7) and its ring-buffer pages
 * before libtracecmd allocates by their sizes, and says which field of
 * which file is wrong.  For host-side tools reading untrusted files (guest
 * recordings, trace-cmd files from elsewhere); the cursor is shared with
 * the v7 decompressor (tracedat_unzip.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include "err.h"
#include "filekind.h"
#include "tracedat_check.h"


int tdh_read(struct hdr_cur *c, void *buf, size_t len)
{
	if (c->off > c->end || len > c->end - c->off ||
	    pread(c->fd, buf, len, (off_t)c->off) != (ssize_t)len)
		return -1;
	c->off += len;
	return 0;
}

int tdh_skip(struct hdr_cur *c, uint64_t len)
{
	if (c->off > c->end || len > c->end - c->off)
		return -1;
	c->off += len;
	return 0;
}

int tdh_u16(struct hdr_cur *c, uint16_t *v)
{
	c->field = c->off;
	if (tdh_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap16(*v);
	return 0;
}

int tdh_u32(struct hdr_cur *c, uint32_t *v)
{
	c->field = c->off;
	if (tdh_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap32(*v);
	return 0;
}

int tdh_u64(struct hdr_cur *c, uint64_t *v)
{
	c->field = c->off;
	if (tdh_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap64(*v);
	return 0;
}

/* A NUL-terminated string of at most @max bytes into @buf (NULL: skip). */
int tdh_strn(struct hdr_cur *c, char *buf, int max)
{
	char ch;

	c->field = c->off;
	for (int i = 0; i < max; i++) {
		if (tdh_read(c, &ch, 1))
			return -1;
		if (buf)
			buf[i] = ch;
		if (!ch)
			return 0;
	}
	return -1;
}

int tdh_str(struct hdr_cur *c, char *buf)
{
	return tdh_strn(c, buf, HDR_STR_MAX);
}

/* A section "NAME\0" + u64 size + size bytes (header_page: its text
 * is remembered for pages_check). */
static int hdr_named(struct hdr_cur *c, const char *name)
{
	char buf[HDR_STR_MAX];
	uint64_t n;

	if (tdh_str(c, buf) || strcmp(buf, name) || tdh_u64(c, &n))
		return -1;
	if (!strcmp(name, "header_page")) {
		c->hp_off = c->off;
		c->hp_len = n;
	}
	return tdh_skip(c, n);
}

/* @nr entries of u64 size + text. */
static int hdr_texts(struct hdr_cur *c, uint32_t nr)
{
	uint64_t n;

	for (uint32_t i = 0; i < nr; i++)
		if (tdh_u64(c, &n) || tdh_skip(c, n))
			return -1;
	return 0;
}

int tdh_page_ok(uint32_t page)
{
	return page >= HDR_PAGE_MIN && page <= HDR_PAGE_MAX && !(page & (page - 1));
}

/* An uncompressed size libtracecmd will allocate for @zsize compressed
 * bytes: bounded by the best ratio of the algorithms trace-cmd uses. */
int tdh_zsize_ok(uint32_t zsize, uint32_t usize)
{
	return (uint64_t)usize <= (uint64_t)zsize * HDR_ZRATIO_MAX + HDR_PAGE_MAX;
}

/* An allocation failed: the header is not blamed for it */
static int hdr_oom(struct hdr_cur *c)
{
	c->oom = 1;
	return -1;
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
		if (tdh_u32(c, &count) || count > size / HDR_ZHDR)
			return -1;
		for (uint32_t i = 0; i < count; i++)
			if (tdh_u32(c, &zs) || tdh_u32(c, &us) || !tdh_zsize_ok(zs, us) ||
			    tdh_skip(c, zs))
				return -1;
		c->off = save;
		c->end = save_end;
		return 0;
	}
	have = off < c->size ? c->size - off : 0;	/* a CPU past the cut: none */
	if (size && have && c->nr_spans < HDR_MAX_CPUS) {
		if (!c->spans && !(c->spans = calloc(HDR_MAX_CPUS, sizeof(*c->spans))))
			return hdr_oom(c);
		c->spans[c->nr_spans].off = off;
		c->spans[c->nr_spans++].size = size < have ? size : have;
	}
	if (size <= have)
		return 0;
	if (c->nr_clips >= HDR_MAX_CLIPS)
		return -1;
	if (!c->clips && !(c->clips = calloc(HDR_MAX_CLIPS, sizeof(*c->clips))))
		return hdr_oom(c);
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
			/* the loop above found the @maps newlines before n */
			for (; maps; pos++)
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

	if (id == HDR_OPT_PROCMAPS || id == HDR_OPT_TIME_SHIFT || id == HDR_OPT_GUEST ||
	    id == HDR_OPT_TRACEID || id == HDR_OPT_TSC2NSEC) {
		if (n > c->end - c->off)
			return -1;
		if (!(d = malloc(n ? n : 1)))
			return hdr_oom(c);
		ret = tdh_read(c, d, n) || hdr_option_data(c, id, d, n) ? -1 : 0;
		/* trace-cmd's host-guest options: kept for the reader */
		if (!ret && id != HDR_OPT_PROCMAPS && c->nr_opts < HDR_MAX_OPTS) {
			c->opts[c->nr_opts++] = (struct hdr_opt){ id, n, d };
			return 0;
		}
		free(d);
		return ret;
	}
	if (id == HDR_OPT_UNAME || id == HDR_OPT_HOOK || id == HDR_OPT_VERSION ||
	    (!v7 && id == HDR_OPT_BUFFER)) {
		/* libtracecmd strdup()s their text (a v6 BUFFER's name after
		 * its u64 offset): it must end within the option */
		uint32_t from = id == HDR_OPT_BUFFER ? sizeof(uint64_t) : 0;

		if (n > c->end - c->off || n <= from)
			return -1;
		if (!(d = malloc(n)))
			return hdr_oom(c);
		ret = tdh_read(c, d, n) || !memchr(d + from, 0, n - from) ? -1 : 0;
		free(d);
		return ret;
	}
	if (!v7 || id != HDR_OPT_BUFFER)
		return tdh_skip(c, n);
	/* u64 section offset, name, clock, u32 page size, u32 cpus, cpu table */
	if (n > c->end - c->off)
		return -1;
	c->end = c->off + n;
	ret = -1;
	if (tdh_u64(c, &off) || off > c->size || tdh_strn(c, NULL, n) || tdh_strn(c, NULL, n) ||
	    tdh_u32(c, &page) || !tdh_page_ok(page) || tdh_u32(c, &cpus) || cpus > HDR_MAX_CPUS)
		goto out;
	for (uint32_t i = 0; i < cpus; i++) {
		if (tdh_u32(c, &cpu) || cpu >= HDR_MAX_CPUS || tdh_u64(c, &off))
			goto out;
		size_field = c->off;
		if (tdh_u64(c, &size) || hdr_cpu_data(c, size_field, off, size))
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

	if (tdh_read(c, &endian, 1) || tdh_read(c, &lsize, 1) || tdh_u32(c, &c->page))
		return -1;
	c->swap = endian != 0;
	c->long_size = lsize;
	if (c->swap)
		c->page = __builtin_bswap32(c->page);
	if (!tdh_page_ok(c->page))
		return -1;
	if (hdr_named(c, "header_page") || hdr_named(c, "header_event") ||
	    tdh_u32(c, &nr) || hdr_texts(c, nr) || tdh_u32(c, &nsys))
		return -1;
	for (uint32_t i = 0; i < nsys; i++)
		if (tdh_str(c, buf) || tdh_u32(c, &nr) || hdr_texts(c, nr))
			return -1;
	if (tdh_u32(c, &n32) || tdh_skip(c, n32) ||		/* kallsyms */
	    tdh_u32(c, &n32) || tdh_skip(c, n32) ||		/* printk formats */
	    tdh_u64(c, &n64) || tdh_skip(c, n64) ||		/* cmdlines */
	    tdh_u32(c, &nr) || nr > HDR_MAX_CPUS || tdh_read(c, buf, HDR_OPT_NAME))	/* cpus */
		return -1;
	if (!memcmp(buf, "options  ", HDR_OPT_NAME)) {
		for (;;) {
			if (tdh_u16(c, &id))
				return -1;
			if (!id)
				break;
			clock |= id == HDR_OPT_TRACECLOCK;
			if (tdh_u32(c, &n32) || hdr_option(c, id, n32, 0))
				return -1;
		}
		if (tdh_read(c, buf, HDR_OPT_NAME))
			return -1;
	}
	if (memcmp(buf, "flyrecord", HDR_OPT_NAME))
		return 0;
	/* the CPU count sizes libtracecmd's tables: its offsets must be here */
	c->field = c->off;
	if (nr > (c->size - c->off) / (2 * sizeof(uint64_t)))
		return -1;
	for (uint32_t i = 0; i < nr; i++) {
		if (tdh_u64(c, &off))
			return -1;
		size_field = c->off;
		if (tdh_u64(c, &size) || hdr_cpu_data(c, size_field, off, size))
			return -1;
	}
	/* with a TRACECLOCK option libtracecmd then reads u64 size + text */
	if (clock && (tdh_u64(c, &n64) || tdh_skip(c, n64)))
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
	if (off > c->size || tdh_u16(c, &id) || id != want || tdh_u16(c, &flags) ||
	    tdh_u32(c, &strid) || tdh_u64(c, &size) || size > c->size - c->off)
		return -1;
	c->end = c->off + size;
	if (!(flags & HDR_SEC_COMPRESSED))
		return 0;
	if (tdh_u32(c, &zs) || tdh_u32(c, &us) || zs > c->end - c->off || !tdh_zsize_ok(zs, us))
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
		return tdh_u32(c, &nr) || hdr_texts(c, nr) ? -1 : 0;
	case HDR_OPT_HEADER_INFO + 2:	/* event formats */
		if (tdh_u32(c, &nsys))
			return -1;
		for (uint32_t i = 0; i < nsys; i++)
			if (tdh_str(c, buf) || tdh_u32(c, &nr) || hdr_texts(c, nr))
				return -1;
		return 0;
	case HDR_OPT_HEADER_INFO + 3:	/* kallsyms */
	case HDR_OPT_HEADER_INFO + 4:	/* printk formats */
		return tdh_u32(c, &n32) || tdh_skip(c, n32) ? -1 : 0;
	default:	/* HDR_OPT_CMDLINES: hdr_v7 passes 16..21 */
		return tdh_u64(c, &n64) || tdh_skip(c, n64) ? -1 : 0;
	}
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

	if (tdh_read(c, &endian, 1) || tdh_read(c, &lsize, 1))
		return -1;
	c->swap = endian != 0;
	c->long_size = lsize;
	if (tdh_u32(c, &c->page) || !tdh_page_ok(c->page) || tdh_str(c, name) ||
	    tdh_str(c, NULL) || tdh_u64(c, &next))
		return -1;
	c->compressed = strcmp(name, "none") != 0;
	snprintf(c->zname, sizeof(c->zname), "%s", name);
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
			if (tdh_u16(c, &id) || tdh_u32(c, &n32))
				return -1;
			if (!id) {
				if (n32 < sizeof(next) || tdh_u64(c, &next))
					return -1;
				break;
			}
			if (id >= HDR_OPT_HEADER_INFO && id <= HDR_OPT_CMDLINES) {
				uint64_t save = c->off + n32;

				if (n32 < sizeof(off) || (seen & (1U << (id - HDR_OPT_HEADER_INFO))) ||
				    tdh_u64(c, &off))
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
	/* a longer chain than that is not followed: its options unchecked */
	c->field = next;
	return next ? -1 : 0;
}

/* 0 if the header of @path (fd @fd, @size bytes) is sound, filling
 * c->clips when CPU data is cut short; -1 with a message naming the file
 * and the offset of the bad field. */
int tdh_check(const char *path, int fd, uint64_t size, struct hdr_cur *c)
{
	char buf[HDR_STR_MAX];
	long version;

	uint8_t head[VT_FILE_KIND_HEAD];
	ssize_t got = pread(fd, head, sizeof(head), 0);

	/* a directory: say so, not that its header is bad */
	if (got < 0)
		return vt_err_errno("%s: cannot read", path);
	/* another kind of file: say what it is, not that its header is bad */
	if (!vt_file_is_tracedat(head, (size_t)got))
		return vt_err_set("%s: not a trace.dat: this is %s; give recording directories "
				  "(vmtrace record -o DIR, a guest tracer's -o DIR) or trace.dat "
				  "files", path, vt_file_kind(head, (size_t)got));
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->size = c->end = size;
	c->off = HDR_MAGIC_LEN;	/* the magic, just read */
	if (tdh_str(c, buf))
		goto bad;
	/* libtracecmd takes the number the version string starts with */
	version = strtol(buf, NULL, 10);
	if (version > HDR_V7)
		return 0;	/* libtracecmd refuses it */
	if (version == HDR_V7 ? hdr_v7(c) : hdr_v6(c))
		goto bad;
	return 0;
bad:
	if (c->oom)
		return vt_err_set("%s: out of memory", path);
	return vt_err_set("%s: corrupt trace.dat header: the size, count or offset at offset "
			  "%llu does not fit in the file (%llu bytes)", path,
			  (unsigned long long)c->field, (unsigned long long)size);
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
		commit = tdh_get32(p + PG_TS_SIZE, swap);
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
		hdr = tdh_get32(d + curr, swap);
		type = swap ? (hdr >> PG_TYPE_SHIFT_BE) & PG_TYPE_BITS : hdr & PG_TYPE_BITS;
		if (type == PG_TYPE_PADDING)
			next = curr + PG_WORD + (int32_t)tdh_get32(d + curr + PG_WORD, swap);
		else if (type > PG_TYPE_PADDING)
			next = curr + PG_TS_SIZE;
		else if (type == 0)
			next = curr + PG_TS_SIZE +
			       (((int64_t)(int32_t)tdh_get32(d + curr + PG_WORD, swap) - PG_WORD +
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
int tdh_pages_check(const char *path, struct hdr_cur *c)
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
	tep_free(tep);
	free(hp);
	free(buf);
	close(fd);
	return ret;
}


void tdh_free(struct hdr_cur *h)
{
	for (int i = 0; i < h->nr_opts; i++)
		free(h->opts[i].d);
	h->nr_opts = 0;
	free(h->clips);
	free(h->spans);
	free(h->bad);
}

/* Open @path and check its header into @h (hdr_check); -1 with a message. */
int tdh_header_ok(const char *path, struct hdr_cur *h)
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
	ret = tdh_check(path, fd, (uint64_t)st.st_size, h);
	close(fd);
	return ret;
}
