/*
 * t-tracedat-unzip.c - unit test of lib/tracedat_unzip.c, the copy that
 * makes compressed trace.dat v7 files (zlib, zstd) readable: files made
 * here byte by byte, little- and big-endian, their options sections
 * compressed or not, chained, with options the copy leaves out (BTF,
 * modules) read back event by event or checked in the copy; every size,
 * count and offset the copy reads from the file's own options (which the
 * header guard does not walk when they are compressed) too large or cut
 * short refused with a message naming the file; a metadata section or a
 * chunk whose zlib stream inflates to less than it says, a copy with no
 * place to go or that cannot be written whole (RLIMIT_FSIZE), each named.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "check.h"
#include "err.h"
#include "tracedat.h"
#include "tracedat_check.h"

#define PAGE		4096
#define NR_PAGES	3
#define CHUNK_PAGES	2	/* pages per compressed chunk */
#define STUB_ROOM	64	/* room left for a compressed stub options section */
#define OPT_BTF		23
#define OPT_MODULES	25
#define OPT_CPUCOUNT	8
#define OPT_BUFFER_TEXT	22	/* a section the copy takes as it is */
#define SEC_MAX		(256U << 20)	/* the copy's bound on a metadata section */

#include "td_test_event.h"	/* fmt: the test event vt_test */
static const char clock_opt[] = "local global [x86-tsc] mono";
static const char cmdlines[] = "77 tester\n";

enum algo { ZLIB, ZSTD };

static char dir[] = "/dev/shm/t-tracedat-unzip.XXXXXX";
static char path[300];
static uint8_t pages[NR_PAGES * PAGE];
static int nr_events;
static uint32_t page_seq[NR_PAGES];	/* the first event's seq of each page */

/* A file (or an options section's content) under construction, its
 * numbers in its byte order. */
struct zb {
	uint8_t *d;
	size_t n, cap;
	int swap;
};

static void zb_raw(struct zb *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 4096;
		b->d = realloc(b->d, b->cap);
		if (!b->d) {
			perror("realloc");
			exit(2);
		}
	}
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

/* @v as a @size-byte number (2, 4, 8) at @at of @b, in its byte order */
static void zb_set(struct zb *b, size_t at, uint64_t v, int size)
{
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	if (b->swap) {
		v = __builtin_bswap64(v);
		v16 = __builtin_bswap16(v16);
		v32 = __builtin_bswap32(v32);
	}
	memcpy(b->d + at, size == 2 ? (void *)&v16 : size == 4 ? (void *)&v32 : (void *)&v, size);
}

static void zb_num(struct zb *b, uint64_t v, int size)
{
	static const uint8_t zero[8];

	zb_raw(b, zero, size);
	zb_set(b, b->n - size, v, size);
}

static void zb_pad(struct zb *b, size_t to)
{
	static const uint8_t zero[64];

	while (b->n < to)
		zb_raw(b, zero, to - b->n < sizeof(zero) ? to - b->n : sizeof(zero));
}

/* @n bytes at @p compressed with @a: u32 compressed size, u32 size, data */
static void zb_zip(struct zb *b, enum algo a, const void *p, size_t n)
{
	size_t cap = a == ZLIB ? compressBound(n) : ZSTD_compressBound(n);
	uint8_t *z = malloc(cap);
	uLongf zl = cap;
	size_t zs;

	if (a == ZLIB) {
		CHECK(z && compress2(z, &zl, p, n, 9) == Z_OK);
		zs = zl;
	} else {
		zs = z ? ZSTD_compress(z, cap, p, n, 3) : 0;
		CHECK(z && !ZSTD_isError(zs));
	}
	zb_num(b, zs, 4);
	zb_num(b, n, 4);
	zb_raw(b, z, zs);
	free(z);
}

/* A section: u16 id, u16 flags, u32 string id, u64 size, then @n bytes
 * at @p, compressed with @a where @z.  Its offset. */
static uint64_t zb_sec(struct zb *b, uint16_t id, int z, enum algo a, const void *p, size_t n)
{
	uint64_t at = b->n;

	zb_num(b, id, 2);
	zb_num(b, z ? HDR_SEC_COMPRESSED : 0, 2);
	zb_num(b, 0, 4);
	zb_num(b, 0, 8);
	if (z)
		zb_zip(b, a, p, n);
	else
		zb_raw(b, p, n);
	zb_set(b, at + 8, b->n - at - HDR_SEC_HDR, 8);
	return at;
}

static void zb_opt(struct zb *o, uint16_t id, const void *p, uint32_t n)
{
	zb_num(o, id, 2);
	zb_num(o, n, 4);
	zb_raw(o, p, n);
}

/* An option holding one number of @size bytes */
static void zb_opt_num(struct zb *o, uint16_t id, uint64_t v, int size)
{
	zb_num(o, id, 2);
	zb_num(o, size, 4);
	zb_num(o, v, size);
}

static void put_file(const struct zb *b)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0 && write(fd, b->d, b->n) == (ssize_t)b->n);
	if (fd >= 0)
		close(fd);
}

/* Where the sound file's parts are. */
struct layout {
	enum algo algo;
	uint64_t first;		/* the header's offset of the first options section */
	uint64_t meta[6];	/* sections 16..21 */
	uint64_t fly;		/* the flyrecord section */
	uint64_t cpu_off;	/* CPU 0's chunk count */
	uint64_t cpu_size;	/* its chunks' bytes */
};

/* NR_PAGES pages of vt_test events, seq 0, 1, ... */
static void make_pages(void)
{
	struct vt_td_page pg;
	uint8_t ev[12] = { 0xe9, 0x03, 0, 0, 77 };
	uint64_t ts = 5000;
	uint32_t seq = 0;

	for (int p = 0; p < NR_PAGES; p++) {
		vt_td_page_init(&pg, pages + p * PAGE, PAGE);
		page_seq[p] = seq;
		for (;;) {
			memcpy(ev + 8, &seq, 4);
			if (vt_td_page_add(&pg, ts, ev, sizeof(ev)))
				break;
			seq++;
			ts += 3 + seq % 7;
		}
	}
	nr_events = (int)seq;
}

/* The metadata sections, each compressed, into @b (offsets into @l). */
static void zb_meta(struct zb *b, struct layout *l)
{
	struct zb s = { .swap = b->swap };
	uint16_t id = HDR_OPT_HEADER_INFO;

	zb_raw(&s, "header_page", 12);
	zb_num(&s, strlen(vt_td_header_page), 8);
	zb_raw(&s, vt_td_header_page, strlen(vt_td_header_page));
	zb_raw(&s, "header_event", 13);
	zb_num(&s, strlen(vt_td_header_event), 8);
	zb_raw(&s, vt_td_header_event, strlen(vt_td_header_event));
	l->meta[0] = zb_sec(b, id++, 1, l->algo, s.d, s.n);
	s.n = 0;
	zb_num(&s, 0, 4);			/* no ftrace formats */
	l->meta[1] = zb_sec(b, id++, 1, l->algo, s.d, s.n);
	s.n = 0;
	zb_num(&s, 1, 4);			/* one system, one format */
	zb_raw(&s, "vt", 3);
	zb_num(&s, 1, 4);
	zb_num(&s, sizeof(fmt) - 1, 8);
	zb_raw(&s, fmt, sizeof(fmt) - 1);
	l->meta[2] = zb_sec(b, id++, 1, l->algo, s.d, s.n);
	s.n = 0;
	zb_num(&s, 0, 4);			/* kallsyms, printk: none */
	l->meta[3] = zb_sec(b, id++, 1, l->algo, s.d, s.n);
	l->meta[4] = zb_sec(b, id++, 1, l->algo, s.d, s.n);
	s.n = 0;
	zb_num(&s, sizeof(cmdlines) - 1, 8);
	zb_raw(&s, cmdlines, sizeof(cmdlines) - 1);
	l->meta[5] = zb_sec(b, id, 1, l->algo, s.d, s.n);
	free(s.d);
}

/* The BUFFER option's data: the flyrecord section at @fly, @cpus CPUs
 * (CPU 0's data at @off, @size bytes, the others empty). */
static void zb_buffer(struct zb *o, uint64_t fly, uint32_t cpus, uint64_t off, uint64_t size)
{
	struct zb d = { .swap = o->swap };

	zb_num(&d, fly, 8);
	zb_raw(&d, "", 1);
	zb_raw(&d, "x86-tsc", 8);
	zb_num(&d, PAGE, 4);
	zb_num(&d, cpus, 4);
	for (uint32_t i = 0; i < cpus; i++) {
		zb_num(&d, i, 4);
		zb_num(&d, i ? 0 : off, 8);
		zb_num(&d, i ? 0 : size, 8);
	}
	zb_opt(o, HDR_OPT_BUFFER, d.d, (uint32_t)d.n);
	free(d.d);
}

/* The sound file's options but DONE: clock, metadata, CPU count, BUFFER
 * (two CPUs, the second without data). */
static void zb_opts(struct zb *o, const struct layout *l)
{
	zb_opt(o, HDR_OPT_TRACECLOCK, clock_opt, sizeof(clock_opt));
	for (int i = 0; i < 6; i++)
		zb_opt_num(o, HDR_OPT_HEADER_INFO + i, l->meta[i], 8);
	zb_opt_num(o, OPT_CPUCOUNT, 2, 4);
	zb_buffer(o, l->fly, 2, l->cpu_off, l->cpu_size);
}

/*
 * A sound file compressed with @a into @b, up to its options: header,
 * metadata, the flyrecord section (the pages in chunks of CHUNK_PAGES,
 * the first chunk's stream in @spoil_us's size where non-zero).
 */
static void zb_head(struct zb *b, struct layout *l, enum algo a, uint32_t spoil_us)
{
	uint8_t endian = b->swap, lsize = 8;
	struct zb f = { .swap = b->swap };
	uint32_t nr = (NR_PAGES + CHUNK_PAGES - 1) / CHUNK_PAGES;

	b->n = 0;
	l->algo = a;
	zb_raw(b, "\x17\x08\x44tracing7", 12);
	zb_raw(b, &endian, 1);
	zb_raw(b, &lsize, 1);
	zb_num(b, PAGE, 4);
	zb_raw(b, a == ZLIB ? "zlib" : "zstd", 5);
	zb_raw(b, "1.0", 4);
	l->first = b->n;
	zb_num(b, 0, 8);
	zb_meta(b, l);
	zb_num(&f, nr, 4);
	for (uint32_t c = 0; c < nr; c++) {
		uint32_t n = NR_PAGES - c * CHUNK_PAGES < CHUNK_PAGES ? NR_PAGES - c * CHUNK_PAGES :
								       CHUNK_PAGES;
		size_t at = f.n;

		zb_zip(&f, a, pages + c * CHUNK_PAGES * PAGE, n * PAGE);
		if (!c && spoil_us)
			zb_set(&f, at + 4, spoil_us, 4);
	}
	l->fly = b->n;
	zb_sec(b, HDR_OPT_BUFFER, 1, a, NULL, 0);	/* header, then the data as it is */
	b->n -= HDR_ZHDR;
	l->cpu_off = b->n;
	l->cpu_size = f.n - 4;
	zb_raw(b, f.d, f.n);
	zb_set(b, l->fly + 8, b->n - l->fly - HDR_SEC_HDR, 8);
	free(f.d);
}

/* The options section @o (its DONE included) at the end of @b: compressed
 * where @z; the header points at it. */
static uint64_t zb_first(struct zb *b, const struct layout *l, const struct zb *o, int z)
{
	uint64_t at = zb_sec(b, 0, z, l->algo, o->d, o->n);

	zb_set(b, l->first, at, 8);
	return at;
}

/* A sound file: @optz: its options section compressed */
static void zb_sound(struct zb *b, struct layout *l, enum algo a, int optz)
{
	struct zb o = { .swap = b->swap };

	zb_head(b, l, a, 0);
	zb_opts(&o, l);
	zb_opt_num(&o, HDR_OPT_DONE, 0, 8);
	zb_first(b, l, &o, optz);
	free(o.d);
}

/*
 * A compressed first options section that only chains to a second,
 * plain one holding @o (which the header guard does not walk), then
 * @tail bytes: the offset of the tail.  The stub gets STUB_ROOM bytes,
 * so the offsets after it are known before it is compressed.
 */
static uint64_t zb_spoil(struct zb *b, const struct layout *l, const struct zb *o,
			 const void *tail, size_t tail_n)
{
	struct zb s = { .swap = b->swap };
	uint64_t stub = b->n, x = stub + STUB_ROOM, t;

	zb_opt_num(&s, HDR_OPT_DONE, x, 8);
	zb_first(b, l, &s, 1);
	CHECK(b->n <= x);
	zb_pad(b, x);
	zb_sec(b, 0, 0, l->algo, o->d, o->n);
	t = b->n;
	zb_raw(b, tail, tail_n);
	free(s.d);
	return t;
}

/* Where zb_spoil will put the tail of options of @n bytes */
static uint64_t tail_at(const struct zb *b, size_t n)
{
	return b->n + STUB_ROOM + HDR_SEC_HDR + n;
}

/* Open the test file and read every event, their seqs from @seq on;
 * -1 refused, else the count.  *@warning: the reader's warning (kept
 * until the next call) or NULL. */
static int read_from(const char **warning, uint32_t seq)
{
	static char warn[512];
	struct vt_td_reader *r = vt_td_read_open(path);
	struct vt_td_event ev;
	uint64_t v;
	int n = 0;

	if (!r)
		return -1;
	*warning = NULL;
	if (vt_td_read_warning(r)) {
		snprintf(warn, sizeof(warn), "%s", vt_td_read_warning(r));
		*warning = warn;
	}
	while (vt_td_read_next_any(r, &ev) == 1) {
		CHECK(vt_td_field_u64(&ev, "seq", &v) == 0 && v == seq + (uint64_t)n);
		n++;
	}
	vt_td_read_close(r);
	return n;
}

static int read_all(const char **warning)
{
	return read_from(warning, 0);
}

/* The copy of the test file made directly (tdh_unzip): 0 and its name in
 * @tmp, or -1 */
static int unzip_file(char *tmp, size_t len, uint64_t *bad)
{
	struct hdr_cur h;
	uint64_t nr;
	int ret;

	tmp[0] = 0;
	if (tdh_header_ok(path, &h) < 0) {
		fprintf(stderr, "header refused: %s\n", vt_err_msg());
		CHECK(0);
		return -1;
	}
	ret = tdh_unzip(path, &h, tmp, len, bad, &nr);
	tdh_free(&h);
	return ret;
}

/* The same for @b */
static int unzip(const struct zb *b, char *tmp, size_t len, uint64_t *bad)
{
	put_file(b);
	return unzip_file(tmp, len, bad);
}

/* The file at @p into @b */
static void get_file(const char *p, struct zb *b)
{
	uint8_t buf[8192];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	b->n = 0;
	CHECK(fd >= 0);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		zb_raw(b, buf, n);
	if (fd >= 0)
		close(fd);
}

static uint64_t get(const struct zb *b, size_t at, int size)
{
	uint64_t v = 0;

	if (at + size > b->n)
		return 0;
	if (size == 2)
		v = tdh_get16(b->d + at, b->swap);
	else if (size == 4)
		v = tdh_get32(b->d + at, b->swap);
	else
		v = tdh_get64(b->d + at, b->swap);
	return v;
}

/* The ids of the options of the copy @c, in chain order, into @ids (up
 * to @max); how many, -1 if its chain is not sound. */
static int copy_opts(const struct zb *c, uint16_t *ids, int max)
{
	size_t p = 14 + 4;	/* magic, "7", endian, long size, page size */
	uint64_t next;
	int n = 0;

	if (c->n < p || memcmp(c->d + p, "none", 5))
		return -1;
	p += 5;
	while (p < c->n && c->d[p])
		p++;
	next = get(c, p + 1, 8);
	while (next) {
		uint64_t end = next + HDR_SEC_HDR + get(c, next + 8, 8);
		size_t q = next + HDR_SEC_HDR;

		if (get(c, next, 2) != 0 || get(c, next + 2, 2) != 0 || end > c->n)
			return -1;
		next = 0;
		while (q + 6 <= end) {
			uint16_t id = (uint16_t)get(c, q, 2);
			uint32_t len = (uint32_t)get(c, q + 2, 4);

			if (n < max)
				ids[n++] = id;
			if (!id) {
				next = get(c, q + 6, 8);
				break;
			}
			q += 6 + len;
		}
	}
	return n;
}

static int has(const uint16_t *ids, int n, uint16_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* Sound files: every event read back, from zlib and zstd, options
 * compressed or not; options chained, BTF and modules left out. */
static void test_sound(void)
{
	struct zb b = { 0 }, o = { 0 }, c = { 0 }, o2 = { 0 };
	struct layout l;
	const char *w;
	char tmp[300];
	uint16_t ids[32];
	uint64_t bad, at;
	int n;

	for (int a = ZLIB; a <= ZSTD; a++)
		for (int z = 0; z < 2; z++) {
			zb_sound(&b, &l, a, z);
			put_file(&b);
			n = read_all(&w);
			if (n != nr_events)
				fprintf(stderr, "%s, options %s: %d events (%s)\n", a ? "zstd" : "zlib",
					z ? "compressed" : "plain", n, vt_err_msg());
			CHECK(n == nr_events);
			CHECK(w == NULL);
		}

	/* compressed options with BTF and modules (pointing at sections
	 * the copy does not take) and a second, plain options section */
	zb_head(&b, &l, ZSTD, 0);
	zb_opts(&o, &l);
	zb_opt_num(&o, OPT_BTF, 12345, 8);
	zb_opt_num(&o, OPT_MODULES, 23456, 8);
	zb_opt(&o2, 99, "zz", 2);
	zb_opt_num(&o2, HDR_OPT_DONE, 0, 8);
	/* the first (compressed) chains to the second (plain), 1024 bytes on */
	at = b.n + 1024;
	zb_opt_num(&o, HDR_OPT_DONE, at, 8);
	zb_first(&b, &l, &o, 1);
	CHECK(b.n <= at);
	zb_pad(&b, at);
	zb_sec(&b, 0, 0, ZSTD, o2.d, o2.n);
	put_file(&b);
	CHECK(read_all(&w) == nr_events);
	CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0 && bad == 0);
	get_file(tmp, &c);
	unlink(tmp);
	n = copy_opts(&c, ids, 32);
	if (n != 12)
		for (int i = 0; i < n; i++)
			fprintf(stderr, "copy option %d: %u\n", i, ids[i]);
	CHECK(n == 12);		/* clock, 6 metadata, CPU count, BUFFER, DONE; 99, DONE */
	CHECK(!has(ids, n, OPT_BTF) && !has(ids, n, OPT_MODULES));
	CHECK(has(ids, n, 99) && has(ids, n, HDR_OPT_BUFFER));

	/* options without DONE: the chain ends there, the copy's too */
	zb_head(&b, &l, ZLIB, 0);
	o.n = 0;
	zb_opts(&o, &l);
	zb_first(&b, &l, &o, 1);
	CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0);
	get_file(tmp, &c);
	unlink(tmp);
	CHECK(copy_opts(&c, ids, 32) == 9 && ids[8] == HDR_OPT_BUFFER);

	/* no options at all: the copy is the header, its options offset 0 */
	zb_head(&b, &l, ZSTD, 0);
	{
		uint64_t head_len = l.first + 8;

		b.n = head_len;
		CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0);
		get_file(tmp, &c);
		unlink(tmp);
		/* up to the algorithm, "none", no version, offset 0 */
		CHECK(c.n == HDR_MAGIC_LEN + 2 + 1 + 1 + 4 + 5 + 1 + 8);
		CHECK(get(&c, c.n - 8, 8) == 0);
		CHECK(copy_opts(&c, ids, 32) == 0);
	}

	/* TMPDIR empty or not set: the copy goes to /tmp */
	zb_sound(&b, &l, ZSTD, 1);
	for (int k = 0; k < 2; k++) {
		if (k)
			unsetenv("TMPDIR");
		else
			setenv("TMPDIR", "", 1);
		CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0);
		CHECK(strncmp(tmp, "/tmp/vmtrace-unzip.", 19) == 0);
		unlink(tmp);
	}
	setenv("TMPDIR", dir, 1);
	free(b.d);
	free(o.d);
	free(o2.d);
	free(c.d);
}

/* Big-endian: the copy's options and pages in the file's order, the
 * pages where the copy's BUFFER says */
static void test_big_endian(void)
{
	struct zb b = { .swap = 1 }, c = { .swap = 1 };
	struct layout l;
	struct hdr_cur h;
	char tmp[300];
	uint16_t ids[32];
	uint64_t bad;

	for (int z = 0; z < 2; z++) {
		zb_sound(&b, &l, ZSTD, z);
		CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0 && bad == 0);
		CHECK(tdh_header_ok(tmp, &h) == 0);
		CHECK(h.swap == 1 && !h.compressed && h.nr_spans == 1);
		CHECK(h.nr_spans == 1 && h.spans[0].size == sizeof(pages));
		get_file(tmp, &c);
		CHECK(h.nr_spans == 1 && h.spans[0].off + sizeof(pages) <= c.n &&
		      !memcmp(c.d + h.spans[0].off, pages, sizeof(pages)));
		CHECK(h.nr_spans == 1 && h.spans[0].off % PAGE == 0);
		CHECK(copy_opts(&c, ids, 32) == 10 && ids[8] == HDR_OPT_BUFFER);
		tdh_free(&h);
		unlink(tmp);
	}
	free(b.d);
	free(c.d);
}

/* @b refused by the reader: the file named, @what in the message */
static void refused(const struct zb *b, uint64_t size, const char *what, int line)
{
	struct vt_td_reader *r;
	char want[64];

	if (size > b->n) {
		/* a sparse file: what @b holds, then up to @size */
		put_file(b);
		CHECK(truncate(path, (off_t)size) == 0);
	} else {
		put_file(b);
	}
	r = vt_td_read_open(path);
	snprintf(want, sizeof(want), "(%llu bytes)", (unsigned long long)size);
	if (r || !strstr(vt_err_msg(), path) || !strstr(vt_err_msg(), what) ||
	    (!strncmp(what, "corrupt", 7) && !strstr(vt_err_msg(), want)))
		fprintf(stderr, "line %d: %s, message \"%s\", want \"%s\"\n", line,
			r ? "opened" : "refused", vt_err_msg(), what);
	CHECK(r == NULL);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	CHECK(strstr(vt_err_msg(), what) != NULL);
	if (!strncmp(what, "corrupt", 7))
		CHECK(strstr(vt_err_msg(), want) != NULL);
	if (r)
		vt_td_read_close(r);
}

#define CORRUPT	"corrupt compressed trace.dat: the size, count or offset at offset"
#define REFUSED(b, what) refused(b, (b)->n, what, __LINE__)

/* The sound options of @l, then @extra (@n bytes of options), then DONE
 * pointing at @next, in a plain section after a compressed stub, then
 * @tail: refused with @what. */
static void spoil(enum algo a, const void *extra, size_t n, uint64_t next, const void *tail,
		  size_t tail_n, const char *what, int line)
{
	struct zb b = { 0 }, o = { 0 };
	struct layout l;

	zb_head(&b, &l, a, 0);
	zb_opts(&o, &l);
	zb_raw(&o, extra, n);
	zb_opt_num(&o, HDR_OPT_DONE, next, 8);
	zb_spoil(&b, &l, &o, tail, tail_n);
	refused(&b, b.n, what, line);
	free(b.d);
	free(o.d);
}

/* Where spoil() puts its tail (@n bytes of extra options) */
static uint64_t spoil_tail(enum algo a, size_t n)
{
	struct zb b = { 0 }, o = { 0 };
	struct layout l;
	uint64_t t;

	zb_head(&b, &l, a, 0);
	zb_opts(&o, &l);
	t = tail_at(&b, o.n + n + 14);
	free(b.d);
	free(o.d);
	return t;
}

/* The number @v of @size bytes at @p (little-endian: the spoiled files
 * are) */
static size_t le(uint8_t *p, uint64_t v, int size)
{
	memcpy(p, &v, size);
	return size;
}

/* A section header at @p: @id, @flags, size @size */
static size_t sec_hdr(uint8_t *p, uint16_t id, uint16_t flags, uint64_t size)
{
	return le(p, id, 2) + le(p + 2, flags, 2) + le(p + 4, 0, 4) + le(p + 8, size, 8);
}

/* One option into @p: @id, @n bytes of data at @d; its size */
static size_t opt(uint8_t *p, uint16_t id, const void *d, uint32_t n)
{
	le(p, id, 2);
	le(p + 2, n, 4);
	memcpy(p + 6, d, n);
	return 6 + n;
}

/* A metadata (or other) option naming offset @off */
static size_t opt_off(uint8_t *p, uint16_t id, uint64_t off)
{
	uint8_t d[8];

	le(d, off, 8);
	return opt(p, id, d, 8);
}

/* A BUFFER option at @p: section @fly, @cpus announced, @have entries of
 * CPU data at @off, @size bytes */
static size_t opt_buffer(uint8_t *p, uint64_t fly, uint32_t cpus, uint32_t have, uint64_t off,
			 uint64_t size)
{
	uint8_t d[128];
	size_t n = le(d, fly, 8);

	memcpy(d + n, "\0x86-tsc", 9);
	n += 9;
	n += le(d + n, PAGE, 4);
	n += le(d + n, cpus, 4);
	for (uint32_t i = 0; i < have; i++) {
		n += le(d + n, i, 4);
		n += le(d + n, off, 8);
		n += le(d + n, size, 8);
	}
	return opt(p, HDR_OPT_BUFFER, d, (uint32_t)n);
}

/* The file's own sections (metadata, options) and the ones they point
 * at: each size, count and offset past what holds it. */
static void test_sections(void)
{
	static uint8_t t[1100];
	uint8_t x[256];
	uint64_t ta, stub;
	size_t n;
	struct zb b = { 0 }, o = { 0 };
	struct layout l;

	/* a metadata option naming the options section itself, the end of
	 * the file and past it */
	zb_head(&b, &l, ZLIB, 0);
	stub = b.n;
	n = opt_off(x, HDR_OPT_HEADER_INFO + 2, stub + STUB_ROOM);
	spoil(ZLIB, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt_off(x, HDR_OPT_HEADER_INFO + 2, 1ULL << 40);
	spoil(ZLIB, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt_off(x, OPT_BTF - 1, spoil_tail(ZLIB, 14) + 15);	/* BUFFER_TEXT, = size */
	spoil(ZLIB, x, n, 0, t, 15, CORRUPT, __LINE__);

	/* a section header cut by the end of the file: in its id, flags,
	 * string id, size; its size past the end */
	memset(t, 0, sizeof(t));
	ta = spoil_tail(ZSTD, 14);
	for (int k = 0; k < 4; k++) {
		static const int at[] = { 14, 12, 8, 0 };

		n = opt_off(x, HDR_OPT_HEADER_INFO + 3, ta + at[k]);
		spoil(ZSTD, x, n, 0, t, 15, CORRUPT, __LINE__);
	}
	sec_hdr(t, HDR_OPT_HEADER_INFO + 3, 0, 1000);
	spoil(ZSTD, x, n, 0, t, 16 + 999, CORRUPT, __LINE__);
	/* ... and the same for the flyrecord section a BUFFER names */
	ta = spoil_tail(ZSTD, 45);
	memset(t, 0, sizeof(t));
	for (int k = 0; k < 4; k++) {
		static const int at[] = { 14, 12, 8, 0 };

		n = opt_buffer(x, ta + at[k], 0, 0, 0, 0);
		CHECK(n == 6 + 25);
		n += opt_off(x + n, 99, 0);	/* 45 bytes in all */
		spoil(ZSTD, x, n, 0, t, 15, CORRUPT, __LINE__);
	}

	/* an uncompressed metadata section larger than the copy takes (a
	 * sparse file 256 MB long) */
	zb_head(&b, &l, ZSTD, 0);
	o.n = 0;
	zb_opts(&o, &l);
	ta = tail_at(&b, o.n + 14 + 14);
	zb_opt_num(&o, HDR_OPT_HEADER_INFO + 4, ta, 8);
	zb_opt_num(&o, HDR_OPT_DONE, 0, 8);
	sec_hdr(t, HDR_OPT_HEADER_INFO + 4, 0, SEC_MAX + 1ULL);
	CHECK(zb_spoil(&b, &l, &o, t, 16) == ta);
	refused(&b, ta + 16 + SEC_MAX + 1, CORRUPT, __LINE__);

	/* compressed: no compressed size, no size, a size past the copy's
	 * bound, past the best ratio, compressed data past the section */
	ta = spoil_tail(ZSTD, 14);
	n = opt_off(x, HDR_OPT_HEADER_INFO + 1, ta);
	sec_hdr(t, HDR_OPT_HEADER_INFO + 1, HDR_SEC_COMPRESSED, 0);
	spoil(ZSTD, x, n, 0, t, 16, CORRUPT, __LINE__);
	sec_hdr(t, HDR_OPT_HEADER_INFO + 1, HDR_SEC_COMPRESSED, 4);
	le(t + 16, 1, 4);
	spoil(ZSTD, x, n, 0, t, 20, CORRUPT, __LINE__);
	sec_hdr(t, HDR_OPT_HEADER_INFO + 1, HDR_SEC_COMPRESSED, 8);
	le(t + 20, SEC_MAX + 1, 4);
	spoil(ZSTD, x, n, 0, t, 24, CORRUPT, __LINE__);
	le(t + 16, 0, 4);
	le(t + 20, HDR_PAGE_MAX + 1, 4);
	spoil(ZSTD, x, n, 0, t, 24, CORRUPT, __LINE__);
	sec_hdr(t, HDR_OPT_HEADER_INFO + 1, HDR_SEC_COMPRESSED, 18);
	le(t + 16, 100, 4);
	le(t + 20, 100, 4);
	spoil(ZSTD, x, n, 0, t, 34, CORRUPT, __LINE__);
	/* a zlib stream that inflates to less than its section says */
	{
		uint8_t z[64];
		uLongf zl = sizeof(z);
		char want[128];

		CHECK(compress2(z, &zl, (const uint8_t *)"abc", 3, 9) == Z_OK);
		ta = spoil_tail(ZLIB, 14);
		n = opt_off(x, HDR_OPT_HEADER_INFO + 1, ta);
		sec_hdr(t, HDR_OPT_HEADER_INFO + 1, HDR_SEC_COMPRESSED, 8 + zl);
		le(t + 16, zl, 4);
		le(t + 20, 10, 4);
		memcpy(t + 24, z, zl);
		snprintf(want, sizeof(want), "compressed section 17 at offset %llu does not inflate "
			 "(zlib)", (unsigned long long)ta);
		spoil(ZLIB, x, n, 0, t, 24 + zl, want, __LINE__);
	}

	/* options: a metadata offset and the chain's end shorter than a
	 * u64, three stray bytes at the end, no DONE */
	n = opt(x, HDR_OPT_HEADER_INFO, "abcd", 4);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	zb_head(&b, &l, ZSTD, 0);
	o.n = 0;
	zb_opts(&o, &l);
	zb_opt(&o, 99, "abcd", 4);
	zb_set(&o, o.n - 8, 5, 4);	/* 5 bytes, 4 left */
	zb_spoil(&b, &l, &o, NULL, 0);
	REFUSED(&b, CORRUPT);
	zb_head(&b, &l, ZSTD, 0);
	o.n = 0;
	zb_opts(&o, &l);
	zb_opt(&o, HDR_OPT_DONE, "abcd", 4);
	zb_spoil(&b, &l, &o, NULL, 0);
	REFUSED(&b, CORRUPT);
	o.n = 0;
	zb_opts(&o, &l);
	zb_raw(&o, "abc", 3);
	zb_head(&b, &l, ZSTD, 0);
	zb_spoil(&b, &l, &o, NULL, 0);
	REFUSED(&b, CORRUPT);

	/* the chain: back to itself, past the end, to a section cut short */
	zb_head(&b, &l, ZSTD, 0);
	spoil(ZSTD, NULL, 0, b.n + STUB_ROOM, NULL, 0, CORRUPT, __LINE__);
	spoil(ZSTD, NULL, 0, 1ULL << 40, NULL, 0, CORRUPT, __LINE__);
	ta = spoil_tail(ZSTD, 0);
	sec_hdr(t, 0, 0, 100);
	spoil(ZSTD, NULL, 0, ta, t, 16, CORRUPT, __LINE__);

	/* more sections than the copy takes: 4097 metadata offsets, and a
	 * chain of 4097 options sections */
	{
		size_t big = 4097 * 14, tn = 4097 * 30;
		uint8_t *m = malloc(big), *tl = malloc(tn);

		CHECK(m && tl);
		ta = spoil_tail(ZSTD, big);
		n = 0;
		for (int i = 0; m && i < 4097; i++)
			n += opt_off(m + n, HDR_OPT_HEADER_INFO + 4, ta + i);
		memset(tl, 0, tn);
		if (m && tl)
			spoil(ZSTD, m, n, 0, tl, tn, CORRUPT, __LINE__);
		ta = spoil_tail(ZSTD, 0);
		for (int i = 0; tl && i < 4097; i++) {
			sec_hdr(tl + i * 30, 0, 0, 14);
			opt_off(tl + i * 30 + 16, HDR_OPT_DONE, ta + (i + 1) * 30);
		}
		if (tl)
			spoil(ZSTD, NULL, 0, ta, tl, tn, CORRUPT, __LINE__);
		free(m);
		free(tl);
	}
	free(b.d);
	free(o.d);
}

/* BUFFER options and the chunk tables of their CPUs */
static void test_buffers(void)
{
	uint8_t x[256], t[64];
	uint64_t ta;
	size_t n, total;
	struct zb b = { 0 }, o = { 0 };
	struct layout l;

	/* shorter than its offset; no end to its name, to its clock; no
	 * page size and CPU count after them; more CPUs than 8192, than it
	 * holds; a second BUFFER of the same flyrecord section */
	n = opt(x, HDR_OPT_BUFFER, "abcd", 4);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt(x, HDR_OPT_BUFFER, "\1\0\0\0\0\0\0\0abc", 11);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt(x, HDR_OPT_BUFFER, "\1\0\0\0\0\0\0\0\0abc", 12);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt(x, HDR_OPT_BUFFER, "\1\0\0\0\0\0\0\0\0c\0\0\x10\0\0", 15);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, HDR_MAX_CPUS + 1, 1, 0, 0);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 3, 2, 0, 0);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	n = opt_buffer(x, 1ULL << 40, 1, 1, 0, 0);	/* its section past the end */
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);
	zb_head(&b, &l, ZSTD, 0);
	n = opt_buffer(x, l.fly, 1, 1, l.cpu_off, l.cpu_size);
	spoil(ZSTD, x, n, 0, NULL, 0, CORRUPT, __LINE__);

	/* a CPU's data: starting past the end, running past it, no room for
	 * its chunk count */
	zb_head(&b, &l, ZSTD, 0);
	o.n = 0;
	zb_opts(&o, &l);
	total = tail_at(&b, o.n + 6 + 45 + 14) + 16;	/* the file with a 16-byte tail */
	memset(t, 0, sizeof(t));
	n = opt_buffer(x, 1, 1, 1, total + 1, 8);
	spoil(ZSTD, x, n, 0, t, 16, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 1, 1, 100, total);
	spoil(ZSTD, x, n, 0, t, 16, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 1, 1, total - 10, 8);
	spoil(ZSTD, x, n, 0, t, 16, CORRUPT, __LINE__);

	/* its chunk table (at the tail): more chunks than its size holds;
	 * cut in a chunk's compressed size, in its size; a size past the
	 * best ratio, past the ratio the copy allows a chunk; compressed data
	 * past the CPU's data */
	ta = total - 16;
	n = opt_buffer(x, 1, 1, 1, ta, 16);
	le(t, 3, 4);
	spoil(ZSTD, x, n, 0, t, 20, CORRUPT, __LINE__);
	le(t, 2, 4);
	le(t + 4, 8, 4);
	le(t + 8, 8, 4);
	spoil(ZSTD, x, n, 0, t, 20, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 1, 1, ta, 20);
	spoil(ZSTD, x, n, 0, t, 24, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 1, 1, ta, 8);
	le(t, 1, 4);
	le(t + 4, 0, 4);
	le(t + 8, HDR_PAGE_MAX + 1, 4);
	spoil(ZSTD, x, n, 0, t, 12, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 1, 1, ta, 9);
	le(t + 4, 1, 4);
	le(t + 8, HDR_ZRATIO_MAX + PAGE + 1, 4);
	spoil(ZSTD, x, n, 0, t, 13, CORRUPT, __LINE__);
	n = opt_buffer(x, 1, 1, 1, ta, 12);
	le(t + 4, 100, 4);
	le(t + 8, 100, 4);
	spoil(ZSTD, x, n, 0, t, 16, CORRUPT, __LINE__);
	free(b.d);
	free(o.d);
}

/* A sound zlib file with a plain section of @big bytes before its
 * options, its header's page size 8192 */
static void rlimit_file(struct zb *b, size_t big)
{
	struct zb o = { 0 };
	struct layout l;
	uint8_t *d = calloc(1, big);
	uint64_t at;

	zb_head(b, &l, ZLIB, 0);
	at = b->n;
	zb_sec(b, OPT_BUFFER_TEXT, 0, ZLIB, d, big);
	zb_opts(&o, &l);
	zb_opt_num(&o, OPT_BUFFER_TEXT, at, 8);
	zb_opt_num(&o, HDR_OPT_DONE, 0, 8);
	zb_first(b, &l, &o, 1);
	zb_set(b, 14, 2 * PAGE, 4);
	free(o.d);
	free(d);
}

/* Where the copy cannot go: an algorithm vmtrace does not know, a
 * TMPDIR that does not exist, a file gone before its copy is made, a copy
 * cut short by the file size limit (removed, the file named) */
static void test_no_copy(void)
{
	struct zb b = { 0 }, c = { 0 };
	struct layout l;
	struct hdr_cur h;
	struct rlimit rl, old;
	struct stat st;
	char tmp[300], want[400];
	uint64_t bad, nr, total;
	int rc, failed = 0, kept = 0;

	zb_sound(&b, &l, ZLIB, 1);
	memcpy(b.d + 18, "lzma", 4);
	put_file(&b);
	CHECK(vt_td_read_open(path) == NULL);
	snprintf(want, sizeof(want), "%s: compressed with 'lzma', which vmtrace cannot read", path);
	CHECK(strncmp(vt_err_msg(), want, strlen(want)) == 0);

	/* (mkstemp leaves a name it tried in its template: not the one to
	 * give, nor to remove) */
	zb_sound(&b, &l, ZLIB, 1);
	put_file(&b);
	snprintf(tmp, sizeof(tmp), "%s/none", dir);
	setenv("TMPDIR", tmp, 1);
	CHECK(vt_td_read_open(path) == NULL);
	snprintf(want, sizeof(want), "%s: compressed; no room for its uncompressed copy in "
		 "%s/none: No such file or directory", path, dir);
	CHECK_STR(vt_err_msg(), want);
	setenv("TMPDIR", dir, 1);

	CHECK(tdh_header_ok(path, &h) == 0);
	unlink(path);
	CHECK(tdh_unzip(path, &h, tmp, sizeof(tmp), &bad, &nr) == -1);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	CHECK_STR(vt_err_msg(), want);
	tdh_free(&h);

	/* the copy's size, then each limit below it: its pages padded to
	 * 8192 bytes (the header's page size), past stdio's buffer (4096
	 * bytes), a section larger than the buffer, sized so that the next
	 * section's header straddles the buffer's end */
	rlimit_file(&b, 6000);
	CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0);
	get_file(tmp, &c);
	unlink(tmp);
	rlimit_file(&b, 6000 + (2 * PAGE - 8 - get(&c, 18 + 5 + 1, 8) % PAGE) % PAGE);
	CHECK(unzip(&b, tmp, sizeof(tmp), &bad) == 0 && stat(tmp, &st) == 0);
	unlink(tmp);
	total = (uint64_t)st.st_size;
	CHECK(total > sizeof(pages));
	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	for (uint64_t lim = 0; lim < total; lim += 61) {
		rl = old;
		rl.rlim_cur = lim;
		CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		rc = unzip_file(tmp, sizeof(tmp), &bad);
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		snprintf(want, sizeof(want), "%s: writing its uncompressed copy %s failed: File too "
			 "large", path, tmp);
		failed += rc == -1 && !strcmp(vt_err_msg(), want);
		kept += !access(tmp, F_OK);
		if (rc == -1 && strcmp(vt_err_msg(), want))
			fprintf(stderr, "limit %llu: %s\n", (unsigned long long)lim, vt_err_msg());
		if (!rc)
			unlink(tmp);
	}
	CHECK(failed == (int)((total + 60) / 61));
	CHECK(kept == 0);
	signal(SIGXFSZ, SIG_DFL);
	free(b.d);
	free(c.d);
}

/* A chunk that inflates to less than it says, one that does not inflate
 * (its stream's first bytes spoiled): its pages read as empty, the rest
 * kept, the file named */
static void test_bad_chunk(void)
{
	struct zb b = { 0 }, o = { 0 };
	struct layout l;
	const char *w = NULL;
	char want[256];

	for (int a = ZLIB; a <= ZSTD; a++)
		for (int k = 0; k < 2; k++) {
			zb_head(&b, &l, a, k ? 0 : (CHUNK_PAGES + 1) * PAGE);
			if (k) {
				b.d[l.cpu_off + 4 + HDR_ZHDR] ^= 0xff;
				b.d[l.cpu_off + 4 + HDR_ZHDR + 1] ^= 0xff;
			}
			o.n = 0;
			zb_opts(&o, &l);
			zb_opt_num(&o, HDR_OPT_DONE, 0, 8);
			zb_first(&b, &l, &o, 0);
			put_file(&b);
			CHECK(read_from(&w, page_seq[CHUNK_PAGES]) ==
			      nr_events - (int)page_seq[CHUNK_PAGES]);
			snprintf(want, sizeof(want), "%s: 1 of 2 compressed chunks do not inflate "
				 "(%s): their pages read as empty", path, a ? "zstd" : "zlib");
			CHECK_STR(w, want);
		}
	free(b.d);
	free(o.d);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/z.dat", dir);
	setenv("TMPDIR", dir, 1);
	make_pages();
	test_sound();
	test_big_endian();
	test_sections();
	test_buffers();
	test_bad_chunk();
	test_no_copy();
	unlink(path);
	rmdir(dir);
	return check_done();
}
