/*
 * t-tracedat-check.c - unit test of the trace.dat header and page guard
 * (lib/tracedat_check.c) on hand-made v6 and v7 files, little- and
 * big-endian: every count, size and offset the guard checks, too large or
 * cut short, fails with a message naming the file and the offset of the
 * bad field; sound headers pass with what the reader needs (CPU data cut
 * short clipped to whole pages, the host-guest options kept, v7 sections
 * followed and compressed chunk tables bounded); malformed ring-buffer
 * pages are found with the length of their sound events; a file of
 * another kind, or a directory, is named as such.  Headers cut at every
 * offset, every section and option size made smaller; more sections or
 * CPUs than the guard follows.  The reader on these files: big-endian
 * host-guest options decoded, the padded copy of cut CPU data made where
 * TMPDIR says (or refused naming the file when it cannot be).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "tracedat.h"
#include "tracedat_check.h"

#define PAGE	4096
#define BUF_MAX	(512 * 1024)

/* A file under construction, numbers in its byte order. */
struct buf {
	uint8_t d[BUF_MAX];
	size_t n;
	int swap;
};

static char path[256];

static void b_bytes(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > BUF_MAX) {
		fprintf(stderr, "buffer overflow\n");
		exit(2);
	}
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void b16(struct buf *b, uint16_t v)
{
	v = b->swap ? __builtin_bswap16(v) : v;
	b_bytes(b, &v, sizeof(v));
}

static void b32(struct buf *b, uint32_t v)
{
	v = b->swap ? __builtin_bswap32(v) : v;
	b_bytes(b, &v, sizeof(v));
}

static void b64(struct buf *b, uint64_t v)
{
	v = b->swap ? __builtin_bswap64(v) : v;
	b_bytes(b, &v, sizeof(v));
}

static void b_str(struct buf *b, const char *s)
{
	b_bytes(b, s, strlen(s) + 1);
}

static void put64_at(struct buf *b, size_t at, uint64_t v)
{
	v = b->swap ? __builtin_bswap64(v) : v;
	memcpy(b->d + at, &v, sizeof(v));
}

static void b_pad(struct buf *b, size_t to)
{
	while (b->n < to)
		b->d[b->n++] = 0;
}

static void b_named(struct buf *b, const char *name, const char *text)
{
	b_str(b, name);
	b64(b, strlen(text));
	b_bytes(b, text, strlen(text));
}

static int write_buf(const struct buf *b)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, b->d, b->n) != (ssize_t)b->n) {
		perror(path);
		exit(2);
	}
	close(fd);
	return 0;
}

/* tdh_header_ok on @b written to the test file; @c freed by the caller. */
static int check(const struct buf *b, struct hdr_cur *c)
{
	write_buf(b);
	return tdh_header_ok(path, c);
}

/* A refused header: -1, the file named, the bad field's offset named. */
static void check_bad(const struct buf *b, uint64_t field, int line)
{
	struct hdr_cur c;
	char want[64];
	int rc = check(b, &c);

	snprintf(want, sizeof(want), "at offset %llu ", (unsigned long long)field);
	if (rc != -1 || !strstr(vt_err_msg(), path) || !strstr(vt_err_msg(), want))
		fprintf(stderr, "line %d: rc %d, message \"%s\", want \"%s\"\n", line, rc,
			vt_err_msg(), want);
	CHECK(rc == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	CHECK(strstr(vt_err_msg(), "corrupt trace.dat header") != NULL);
	CHECK(strstr(vt_err_msg(), want) != NULL);
	tdh_free(&c);
}

#define CHECK_BAD(b, field) check_bad(b, field, __LINE__)

/* A refused header, wherever its bad field is. */
static void check_fails(const struct buf *b, int line)
{
	struct hdr_cur c;
	int rc = check(b, &c);

	if (rc != -1)
		fprintf(stderr, "line %d: passed\n", line);
	CHECK(rc == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	CHECK(strstr(vt_err_msg(), "corrupt trace.dat header") != NULL);
	tdh_free(&c);
}

/* The u32 (@w 4) or u64 (@w 8) at @at of @b, in its byte order. */
static void put_at(struct buf *b, size_t at, int w, uint64_t v)
{
	uint32_t v32 = b->swap ? __builtin_bswap32((uint32_t)v) : (uint32_t)v;

	if (w == 8)
		put64_at(b, at, v);
	else
		memcpy(b->d + at, &v32, sizeof(v32));
}

/* Every value below @hi of the number at @at (@w bytes; @hi is put back
 * after): refused. */
static void fails_below(struct buf *b, size_t at, int w, uint64_t hi, int line)
{
	struct hdr_cur c;
	int passed = 0;

	for (uint64_t v = 0; v < hi; v++) {
		put_at(b, at, w, v);
		if ((check(b, &c) != -1 || !strstr(vt_err_msg(), "corrupt trace.dat header")) &&
		    !passed++)
			fprintf(stderr, "line %d: %llu at offset %zu passed\n", line,
				(unsigned long long)v, at);
		tdh_free(&c);
	}
	put_at(b, at, w, hi);
	CHECK(passed == 0);
}

/* @b cut at every offset in [@from, @to): refused. */
static void cuts_fail(struct buf *b, size_t from, size_t to, int line)
{
	size_t n = b->n;
	struct hdr_cur c;
	int passed = 0;

	for (size_t cut = from; cut < to; cut++) {
		b->n = cut;
		if ((check(b, &c) != -1 || !strstr(vt_err_msg(), "corrupt trace.dat header")) &&
		    !passed++)
			fprintf(stderr, "line %d: cut at %zu passed\n", line, cut);
		tdh_free(&c);
	}
	b->n = n;
	CHECK(passed == 0);
}

/* What a v6 header holds, the positions of its fields after building. */
struct v6 {
	uint32_t page;
	uint32_t nr_ftrace, nr_sys, nr_cpus;
	const char *header_page;
	const char *sys_name;
	size_t at_page, at_ftrace, at_nsys, at_sys, at_cpus;
};

static void v6_magic(struct buf *b, const char *version)
{
	b_bytes(b, "\x17\x08\x44tracing", HDR_MAGIC_LEN);
	b_str(b, version);
}

/* The v6 header up to and including the CPU count. */
static void v6_head(struct buf *b, struct v6 *v)
{
	uint8_t endian = b->swap, lsize = 8;

	v6_magic(b, "6");
	b_bytes(b, &endian, 1);
	b_bytes(b, &lsize, 1);
	v->at_page = b->n;
	b32(b, v->page ? v->page : PAGE);
	b_named(b, "header_page", v->header_page ? v->header_page : vt_td_header_page);
	b_named(b, "header_event", vt_td_header_event);
	v->at_ftrace = b->n;
	b32(b, v->nr_ftrace);
	for (uint32_t i = 0; i < v->nr_ftrace; i++) {
		b64(b, 5);
		b_bytes(b, "abcde", 5);
	}
	v->at_nsys = b->n;
	b32(b, v->nr_sys);
	v->at_sys = b->n;
	for (uint32_t i = 0; i < v->nr_sys; i++) {
		b_str(b, v->sys_name ? v->sys_name : "kvm");
		b32(b, 1);
		b64(b, 3);
		b_bytes(b, "xyz", 3);
	}
	b32(b, 0);	/* kallsyms */
	b32(b, 0);	/* printk formats */
	b64(b, 0);	/* cmdlines */
	v->at_cpus = b->n;
	b32(b, v->nr_cpus);
}

static void opts_begin(struct buf *b)
{
	b_bytes(b, "options  ", HDR_OPT_NAME);
}

static void opt(struct buf *b, uint16_t id, const void *d, uint32_t n)
{
	b16(b, id);
	b32(b, n);
	b_bytes(b, d, n);
}

/* "flyrecord" and one CPU's offset and size; the position of the size. */
static size_t fly_one(struct buf *b, uint64_t off, uint64_t size)
{
	size_t at;

	b_bytes(b, "flyrecord", HDR_OPT_NAME);
	b64(b, off);
	at = b->n;
	b64(b, size);
	return at;
}

/* A sound v6 file: one CPU with @pages pages after the header. */
static void v6_sound(struct buf *b, struct v6 *v, int pages, size_t *size_at)
{
	size_t at;

	v->nr_cpus = 1;
	v6_head(b, v);
	b_bytes(b, "options  ", HDR_OPT_NAME);
	b16(b, 0);
	at = fly_one(b, 0, (uint64_t)pages * PAGE);
	b_pad(b, (b->n + PAGE - 1) / PAGE * PAGE);
	put64_at(b, at - 8, b->n);
	if (size_at)
		*size_at = at;
}

static void test_not_tracedat(void)
{
	static struct buf b;
	struct hdr_cur c;
	char missing[300];

	b_bytes(&b, "{\"traceEvents\": []}\n", 20);
	CHECK(check(&b, &c) == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	CHECK(strstr(vt_err_msg(), "not a trace.dat: this is") != NULL);
	tdh_free(&c);

	/* the magic alone: no version; a version past 7: libtracecmd's
	 * to refuse */
	b.n = 0;
	b_bytes(&b, "\x17\x08\x44tracing", HDR_MAGIC_LEN);
	CHECK_BAD(&b, HDR_MAGIC_LEN);
	b.n = 0;
	v6_magic(&b, "8");
	CHECK(check(&b, &c) == 0);
	tdh_free(&c);

	/* a version string without its NUL within 64 bytes */
	b.n = 0;
	b_bytes(&b, "\x17\x08\x44tracing", HDR_MAGIC_LEN);
	for (int i = 0; i < 80; i++)
		b_bytes(&b, "6", 1);
	CHECK_BAD(&b, HDR_MAGIC_LEN);
	/* cut inside the version string */
	b.n = HDR_MAGIC_LEN + 3;
	CHECK_BAD(&b, HDR_MAGIC_LEN);

	/* a directory: it cannot be read, said so (not a corrupt header) */
	snprintf(missing, sizeof(missing), "%s.d", path);
	CHECK(mkdir(missing, 0755) == 0);
	CHECK(tdh_header_ok(missing, &c) == -1);
	CHECK(strstr(vt_err_msg(), missing) != NULL);
	CHECK(strstr(vt_err_msg(), "cannot read: Is a directory") != NULL);
	tdh_free(&c);
	rmdir(missing);

	snprintf(missing, sizeof(missing), "%s.missing", path);
	CHECK(tdh_header_ok(missing, &c) == -1);
	CHECK(strstr(vt_err_msg(), "cannot open") != NULL);
	CHECK(strstr(vt_err_msg(), missing) != NULL);
	tdh_free(&c);
}

static void test_v6_counts(void)
{
	static struct buf b;
	struct v6 v = { .nr_ftrace = 1, .nr_sys = 1 };
	struct hdr_cur c;
	size_t at;

	/* sound, little- and big-endian */
	for (int swap = 0; swap < 2; swap++) {
		b.n = 0;
		b.swap = swap;
		v6_sound(&b, &v, 1, NULL);
		b_pad(&b, b.n + PAGE);
		CHECK(check(&b, &c) == 0);
		CHECK(c.swap == swap);
		CHECK(c.page == PAGE);
		CHECK(c.long_size == 8);
		CHECK(c.nr_spans == 1 && c.spans[0].size == PAGE);
		CHECK(c.nr_clips == 0);
		tdh_free(&c);
	}
	b.swap = 0;

	/* page sizes: not a power of two, too small, too large */
	static const uint32_t bad_pages[] = { 4097, 2048, 1U << 21 };

	for (unsigned i = 0; i < sizeof(bad_pages) / sizeof(bad_pages[0]); i++) {
		struct v6 w = { .page = bad_pages[i] };

		b.n = 0;
		v6_head(&b, &w);
		CHECK_BAD(&b, w.at_page);
	}
	CHECK(tdh_page_ok(PAGE) && tdh_page_ok(1U << 20) && !tdh_page_ok(3 * PAGE));

	/* a section's name wrong, its size past the end */
	b.n = 0;
	v6_head(&b, &v);
	memcpy(b.d + v.at_page + 4, "header_pagX", 11);
	CHECK_BAD(&b, v.at_page + 4);
	b.n = 0;
	v6_head(&b, &v);
	put64_at(&b, v.at_page + 4 + 12, 1ULL << 40);
	CHECK_BAD(&b, v.at_page + 4 + 12);

	/* ftrace formats, systems and CPUs more than the file holds */
	b.n = 0;
	v6_head(&b, &v);
	b.d[v.at_ftrace] = 200;
	check_fails(&b, __LINE__);
	b.n = 0;
	v6_head(&b, &v);
	b.d[v.at_nsys] = 9;
	check_fails(&b, __LINE__);
	b.n = 0;
	{
		struct v6 w = { .nr_sys = 1, .sys_name =
			"a-system-name-longer-than-the-sixty-four-bytes-a-name-may-have-here" };

		v6_head(&b, &w);
		CHECK_BAD(&b, w.at_sys);
	}
	b.n = 0;
	v.nr_cpus = HDR_MAX_CPUS + 1;
	v6_head(&b, &v);
	b_bytes(&b, "flyrecord", HDR_OPT_NAME);
	CHECK_BAD(&b, v.at_cpus);
	v.nr_cpus = 0;

	/* 1000 CPUs whose offsets are not in the file */
	b.n = 0;
	v.nr_cpus = 1000;
	v6_head(&b, &v);
	at = b.n;
	b_bytes(&b, "flyrecord", HDR_OPT_NAME);
	b64(&b, 0);
	CHECK_BAD(&b, at + HDR_OPT_NAME);
	v.nr_cpus = 0;

	/* neither options nor flyrecord (a latency file): nothing to check */
	b.n = 0;
	v6_head(&b, &v);
	b_bytes(&b, "latency  ", HDR_OPT_NAME);
	CHECK(check(&b, &c) == 0);
	CHECK(c.nr_spans == 0);
	tdh_free(&c);
	/* cut before the section's name */
	b.n -= 4;
	check_fails(&b, __LINE__);
}

/* The v6 header with options @d (@n bytes, each id + size + data, closed
 * here) and no CPU: check it. */
static int v6_opts(struct buf *b, const void *d, size_t n, struct hdr_cur *c)
{
	struct v6 v = { .nr_ftrace = 0 };

	b->n = 0;
	v6_head(b, &v);
	opts_begin(b);
	b_bytes(b, d, n);
	b16(b, 0);
	b_bytes(b, "flyrecord", HDR_OPT_NAME);
	return check(b, c);
}

/* One option (id, size, data) into @o at *@n. */
static void opt_into(uint8_t *o, size_t *n, uint16_t id, const void *d, uint32_t len)
{
	memcpy(o + *n, &id, 2);
	memcpy(o + *n + 2, &len, 4);
	memcpy(o + *n + 6, d, len);
	*n += 6 + len;
}

static void test_v6_options(void)
{
	static struct buf b;
	struct hdr_cur c;
	uint8_t o[1024], d[256];
	size_t n;
	uint32_t u32;
	uint64_t hz;

	/* TIME_SHIFT: peer, flags, 2 CPUs with 1 and 0 samples */
	memset(d, 0, sizeof(d));
	u32 = 2;
	memcpy(d + 12, &u32, 4);
	u32 = 1;
	memcpy(d + 16, &u32, 4);
	u32 = 0;
	memcpy(d + 20 + HDR_TS_SAMPLE, &u32, 4);
	n = 0;
	opt_into(o, &n, HDR_OPT_TIME_SHIFT, d, 24 + HDR_TS_SAMPLE);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	CHECK(c.nr_opts == 1 && c.opts[0].id == HDR_OPT_TIME_SHIFT);
	tdh_free(&c);
	/* its sample count past its data; its CPU count past 8192; a CPU's
	 * count cut; shorter than peer and flags */
	u32 = 2;
	memcpy(d + 16, &u32, 4);
	n = 0;
	opt_into(o, &n, HDR_OPT_TIME_SHIFT, d, 24 + HDR_TS_SAMPLE);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	tdh_free(&c);
	u32 = HDR_MAX_CPUS + 1;
	memcpy(d + 12, &u32, 4);
	n = 0;
	opt_into(o, &n, HDR_OPT_TIME_SHIFT, d, 24 + HDR_TS_SAMPLE);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);
	u32 = 1;
	memcpy(d + 12, &u32, 4);
	n = 0;
	opt_into(o, &n, HDR_OPT_TIME_SHIFT, d, 18);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_TIME_SHIFT, d, 15);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);

	/* GUEST: name, trace id, 1 vCPU; 2 vCPUs with room for one; a name
	 * running to the end */
	memset(d, 0, sizeof(d));
	memcpy(d, "vm1", 4);
	u32 = 1;
	memcpy(d + 4 + 8, &u32, 4);
	n = 0;
	opt_into(o, &n, HDR_OPT_GUEST, d, 4 + 8 + 4 + HDR_GUEST_VCPU);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	CHECK(c.nr_opts == 1 && c.opts[0].id == HDR_OPT_GUEST);
	tdh_free(&c);
	u32 = 2;
	memcpy(d + 4 + 8, &u32, 4);
	n = 0;
	opt_into(o, &n, HDR_OPT_GUEST, d, 4 + 8 + 4 + HDR_GUEST_VCPU);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_GUEST, "vm1", 3);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_GUEST, d, 4 + 8 + 2);
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);

	/* PROCMAPS: a process with 2 maps; one announcing 3; a line that is
	 * not one (libtracecmd stops there); one without a newline */
	static const char maps_ok[] = "1f 2 bash\n0 1 0 /bin/bash\n0 1 0 /lib/libc.so\n";
	static const char maps_short[] = "1f 3 bash\n0 1 0 /bin/bash\n0 1 0 /lib/libc.so\n";
	static const char maps_junk[] = "not a map line\n";
	static const char maps_nonl[] = "1f 2 bash";

	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_ok, sizeof(maps_ok));
	CHECK(v6_opts(&b, o, n, &c) == 0);
	CHECK(c.nr_opts == 0);	/* read, not kept */
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_short, sizeof(maps_short));
	CHECK(v6_opts(&b, o, n, &c) == -1);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_junk, sizeof(maps_junk));
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_nonl, sizeof(maps_nonl));
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	/* a process without maps ending the option (no NUL); two processes,
	 * the second with its maps and missing one */
	static const char maps_end[] = "1f 0 bash\n";
	static const char maps_two[] = "1f 1 a\n0 1 0 /x\n2f 1 sh\n0 1 0 /y\n";
	static const char maps_two_short[] = "1f 1 a\n0 1 0 /x\n2f 2 sh\n0 1 0 /y\n";

	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_end, sizeof(maps_end) - 1);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_two, sizeof(maps_two));
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	n = 0;
	opt_into(o, &n, HDR_OPT_PROCMAPS, maps_two_short, sizeof(maps_two_short));
	CHECK(v6_opts(&b, o, n, &c) == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	tdh_free(&c);

	/* TRACEID and TSC2NSEC kept (mult 2^24 / 3, shift 24: 3 GHz), an
	 * unknown option skipped, a TRACECLOCK option's trailing text after
	 * the CPU table */
	uint64_t id = 0x1234;
	uint32_t t2n[4] = { (1U << 24) / 3, 24, 0, 0 };

	n = 0;
	opt_into(o, &n, HDR_OPT_TRACEID, &id, 8);
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 16);
	opt_into(o, &n, 99, "xx", 2);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	CHECK(c.nr_opts == 2);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == 0);
	CHECK(hz >= 3000000000ULL - 200 && hz <= 3000000000ULL + 200);
	/* a TSC2NSEC that states no frequency: mult 0, shift 64, too short */
	t2n[0] = 0;
	n = 0;
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 16);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == -1);
	t2n[0] = 1;
	t2n[1] = 64;
	n = 0;
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 16);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == -1);
	n = 0;
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 4);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == -1);
	/* a multiplier past 1e9 << shift: under 1 Hz */
	t2n[0] = 2000000000;
	t2n[1] = 0;
	n = 0;
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 16);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == -1);
	/* the first that states one counts: 1 GHz, then 2 GHz */
	t2n[0] = 1;
	n = 0;
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 16);
	t2n[0] = 1U << 31;
	t2n[1] = 32;
	opt_into(o, &n, HDR_OPT_TSC2NSEC, t2n, 16);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == 0 && hz == 1000000000ULL);
	n = 0;
	opt_into(o, &n, 99, "xx", 2);
	CHECK(v6_opts(&b, o, n, &c) == 0);
	tdh_free(&c);
	CHECK(vt_td_file_tsc_hz(path, &hz) == -1);

	/* more host-guest options than are kept: the rest read, not kept */
	{
		static uint8_t many[(6 + 8) * (HDR_MAX_OPTS + 2)];
		size_t m = 0;

		for (int i = 0; i < HDR_MAX_OPTS + 2; i++)
			opt_into(many, &m, HDR_OPT_TRACEID, &id, 8);
		CHECK(v6_opts(&b, many, m, &c) == 0);
		CHECK(c.nr_opts == HDR_MAX_OPTS);
		tdh_free(&c);
	}

	/* texts libtracecmd strdup()s (UNAME, VERSION, HOOK, a v6 BUFFER's
	 * name after its offset) must end within their option: without their
	 * NUL they are refused, as an empty one */
	{
		static const uint16_t ids[] = { 5, 6, 9, HDR_OPT_BUFFER };

		for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			uint32_t at = ids[i] == HDR_OPT_BUFFER ? 8 : 0;

			memset(d, 0, sizeof(d));
			memcpy(d + at, "Linux", 6);
			n = 0;
			opt_into(o, &n, ids[i], d, at + 6);
			CHECK(v6_opts(&b, o, n, &c) == 0);
			tdh_free(&c);
			n = 0;
			opt_into(o, &n, ids[i], d, at + 5);
			CHECK(v6_opts(&b, o, n, &c) == -1);
			CHECK(strstr(vt_err_msg(), path) != NULL);
			tdh_free(&c);
			n = 0;
			opt_into(o, &n, ids[i], d, at);
			CHECK(v6_opts(&b, o, n, &c) == -1);
			tdh_free(&c);
		}
	}

	/* an option's size past the end of the file */
	{
		struct v6 v = { .nr_ftrace = 0 };
		size_t at;

		b.n = 0;
		v6_head(&b, &v);
		opts_begin(&b);
		b16(&b, HDR_OPT_TRACEID);
		at = b.n;
		b32(&b, 100000);
		b64(&b, 1);
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
		/* an unknown option past the end; the list cut before its end */
		b.n = at - 2;
		b16(&b, 99);
		b32(&b, 100000);
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
		b.n = at - 2;
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
		/* closed, then cut before "flyrecord" */
		b16(&b, 0);
		b_bytes(&b, "flyre", 5);
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
	}

	/* TRACECLOCK: the clock's text after the CPU table, and cut there */
	{
		struct v6 v = { .nr_ftrace = 0 };

		b.n = 0;
		v6_head(&b, &v);
		opts_begin(&b);
		opt(&b, HDR_OPT_TRACECLOCK, "local", 6);
		b16(&b, 0);
		b_bytes(&b, "flyrecord", HDR_OPT_NAME);
		b64(&b, 6);
		b_bytes(&b, "local\n", 6);
		CHECK(check(&b, &c) == 0);
		tdh_free(&c);
		b.n -= 2;
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
	}
}

/* The host-guest options of a big-endian v6 file (one CPU, one page),
 * checked and decoded by the reader: TIME_SHIFT (2 CPUs of 1 and 2
 * samples, with fraction bits), GUEST (2 vCPUs), TRACEID, TSC2NSEC. */
static void test_v6_options_be(void)
{
	static struct buf b, o;
	struct v6 v = { .nr_cpus = 1 };
	struct vt_td_reader *r;
	const struct vt_td_tsync *t;
	const struct vt_td_guest *g;
	struct hdr_cur c;
	uint64_t id = 0, hz = 0;
	size_t at;

	b.n = 0;
	b.swap = o.swap = 1;
	v6_head(&b, &v);
	opts_begin(&b);
	o.n = 0;
	b64(&o, 0x1122334455667788ULL);	/* peer */
	b32(&o, 3);			/* flags */
	b32(&o, 2);			/* CPUs */
	b32(&o, 1);
	b64(&o, 1000);			/* time, offset, scaling */
	b64(&o, (uint64_t)-5);
	b64(&o, 1);
	b32(&o, 2);
	b64(&o, 2000);
	b64(&o, 3000);
	b64(&o, 7);
	b64(&o, 8);
	b64(&o, 2);
	b64(&o, 2);
	b64(&o, 11);			/* fractions: CPU 0, CPU 1 */
	b64(&o, 12);
	b64(&o, 13);
	opt(&b, HDR_OPT_TIME_SHIFT, o.d, (uint32_t)o.n);
	o.n = 0;
	b_str(&o, "vm1");
	b64(&o, 0xabcdef);
	b32(&o, 2);
	b32(&o, 0);
	b32(&o, 4001);
	b32(&o, 1);
	b32(&o, 4002);
	opt(&b, HDR_OPT_GUEST, o.d, (uint32_t)o.n);
	o.n = 0;
	b64(&o, 0x42);
	opt(&b, HDR_OPT_TRACEID, o.d, (uint32_t)o.n);
	o.n = 0;
	b32(&o, (1U << 24) / 3);	/* 3 GHz */
	b32(&o, 24);
	b64(&o, 0);
	opt(&b, HDR_OPT_TSC2NSEC, o.d, (uint32_t)o.n);
	b16(&b, 0);
	at = fly_one(&b, 0, PAGE);
	b_pad(&b, (b.n + PAGE - 1) / PAGE * PAGE);
	put64_at(&b, at - 8, b.n);
	b_pad(&b, b.n + PAGE);
	CHECK(check(&b, &c) == 0);
	CHECK(c.swap == 1 && c.nr_opts == 4);
	tdh_free(&c);
	b.swap = 0;

	r = vt_td_read_open(path);
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "%s\n", vt_err_msg());
		return;
	}
	t = vt_td_read_tsync(r);
	CHECK(t != NULL);
	if (t) {
		CHECK(t->peer_id == 0x1122334455667788ULL && t->flags == 3 && t->nr_cpus == 2);
		CHECK(t->count[0] == 1 && t->count[1] == 2);
		CHECK(t->samples[0][0].time == 1000 && t->samples[0][0].offset == -5 &&
		      t->samples[0][0].scaling == 1 && t->samples[0][0].frac == 11);
		CHECK(t->samples[1][0].time == 2000 && t->samples[1][1].time == 3000);
		CHECK(t->samples[1][0].offset == 7 && t->samples[1][1].offset == 8);
		CHECK(t->samples[1][1].scaling == 2 && t->samples[1][1].frac == 13);
	}
	CHECK(vt_td_read_nr_guests(r) == 1);
	g = vt_td_read_guest(r, 0);
	CHECK(g != NULL);
	if (g) {
		CHECK_STR(g->name, "vm1");
		CHECK(g->trace_id == 0xabcdef && g->nr_vcpus == 2);
		CHECK(g->vcpu[1] == 1 && g->tid[0] == 4001 && g->tid[1] == 4002);
	}
	CHECK(vt_td_read_guest(r, 1) == NULL && vt_td_read_guest(r, -1) == NULL);
	CHECK(vt_td_read_trace_id(r, &id) == 0 && id == 0x42);
	CHECK(vt_td_read_tsc_hz(r, &hz) == 0);
	CHECK(hz >= 3000000000ULL - 200 && hz <= 3000000000ULL + 200);
	vt_td_read_close(r);
}

static void test_v6_cpu_data(void)
{
	static struct buf b;
	struct v6 v = { .nr_ftrace = 0 };
	struct hdr_cur c;
	size_t at, data;

	/* two pages announced, one and a half in the file: clipped to two
	 * whole pages (the copy is padded), the span to what is there */
	b.n = 0;
	v6_sound(&b, &v, 2, &at);
	data = b.n;
	b_pad(&b, b.n + PAGE + PAGE / 2);
	CHECK(check(&b, &c) == 0);
	CHECK(c.nr_clips == 1);
	CHECK(c.nr_clips == 1 && c.clips[0].field == at && c.clips[0].size == 2 * PAGE);
	CHECK(c.pad_to == data + 2 * PAGE);
	CHECK(c.nr_spans == 1 && c.spans[0].size == PAGE + PAGE / 2);
	tdh_free(&c);

	/* the data starting past the end: no span, clipped to nothing */
	b.n = 0;
	v6_sound(&b, &v, 1, &at);
	put64_at(&b, at - 8, b.n + 10 * PAGE);
	CHECK(check(&b, &c) == 0);
	CHECK(c.nr_spans == 0);
	CHECK(c.nr_clips == 1 && c.clips[0].size == 0);
	CHECK(c.pad_to == 0);
	tdh_free(&c);

	/* cut in the CPU table */
	b.n = 0;
	v6_sound(&b, &v, 1, &at);
	b.n = at + 4;
	CHECK(check(&b, &c) == -1);
	tdh_free(&c);
}

/* A v6 header with a TRACECLOCK option and one CPU cut at every offset
 * before its end (the clock's text after the CPU table): refused,
 * little- and big-endian. */
static void test_v6_cuts(void)
{
	static struct buf b;
	struct v6 v = { .nr_ftrace = 1, .nr_sys = 1, .nr_cpus = 1 };
	struct hdr_cur c;
	size_t at, end;

	for (int swap = 0; swap < 2; swap++) {
		b.n = 0;
		b.swap = swap;
		v6_head(&b, &v);
		opts_begin(&b);
		opt(&b, HDR_OPT_TRACECLOCK, "local", 6);
		b16(&b, 0);
		at = fly_one(&b, 0, PAGE);
		b64(&b, 6);
		b_bytes(&b, "local\n", 6);
		end = b.n;
		b_pad(&b, (b.n + PAGE - 1) / PAGE * PAGE);
		put64_at(&b, at - 8, b.n);
		b_pad(&b, b.n + PAGE);
		CHECK(check(&b, &c) == 0);
		CHECK(c.nr_spans == 1 && c.nr_clips == 0);
		tdh_free(&c);
		cuts_fail(&b, HDR_MAGIC_LEN, end, __LINE__);
	}
	b.swap = 0;
}

/* ---- v7 ---- */

/* The sections of the v7 file built last (v7_head starts the list): the
 * positions of their size fields, each once, in the order they end. */
static size_t sec_at[16];
static int nr_sec;

static void v7_head(struct buf *b, const char *zname, size_t *first)
{
	uint8_t endian = b->swap, lsize = 8;

	nr_sec = 0;

	v6_magic(b, "7");
	b_bytes(b, &endian, 1);
	b_bytes(b, &lsize, 1);
	b32(b, PAGE);
	b_str(b, zname);
	b_str(b, "");
	*first = b->n;
	b64(b, 0);
}

/* A section header; the position of its size (patched by sec_end). */
static size_t sec_begin(struct buf *b, uint16_t id, uint16_t flags)
{
	size_t at;

	b16(b, id);
	b16(b, flags);
	b32(b, 0);
	at = b->n;
	b64(b, 0);
	return at;
}

static void sec_end(struct buf *b, size_t at)
{
	int i = 0;

	put64_at(b, at, b->n - at - 8);
	while (i < nr_sec && sec_at[i] != at)
		i++;
	if (i == nr_sec && nr_sec < 16)
		sec_at[nr_sec++] = at;
}

/* The metadata sections 16..21 of a sound file at their offsets in @off. */
static void v7_meta(struct buf *b, uint64_t off[6])
{
	size_t at;

	off[0] = b->n;
	at = sec_begin(b, HDR_OPT_HEADER_INFO, 0);
	b_named(b, "header_page", vt_td_header_page);
	b_named(b, "header_event", vt_td_header_event);
	sec_end(b, at);
	off[1] = b->n;
	at = sec_begin(b, HDR_OPT_HEADER_INFO + 1, 0);
	b32(b, 1);
	b64(b, 2);
	b_bytes(b, "ab", 2);
	sec_end(b, at);
	off[2] = b->n;
	at = sec_begin(b, HDR_OPT_HEADER_INFO + 2, 0);
	b32(b, 1);
	b_str(b, "kvm");
	b32(b, 1);
	b64(b, 2);
	b_bytes(b, "cd", 2);
	sec_end(b, at);
	off[3] = b->n;
	at = sec_begin(b, HDR_OPT_HEADER_INFO + 3, 0);
	b32(b, 0);
	sec_end(b, at);
	off[4] = b->n;
	at = sec_begin(b, HDR_OPT_HEADER_INFO + 4, 0);
	b32(b, 0);
	sec_end(b, at);
	off[5] = b->n;
	at = sec_begin(b, HDR_OPT_CMDLINES, 0);
	b64(b, 0);
	sec_end(b, at);
}

/* The BUFFER option's data: one CPU's data at @off, @size bytes. */
static size_t buffer_opt(uint8_t *d, uint64_t off, uint32_t cpu, uint64_t size)
{
	size_t n = 0;
	uint32_t page = PAGE, cpus = 1;
	uint64_t zero = 0;

	memcpy(d + n, &zero, 8);
	n += 8;
	memcpy(d + n, "", 1);
	n += 1;
	memcpy(d + n, "local", 6);
	n += 6;
	memcpy(d + n, &page, 4);
	n += 4;
	memcpy(d + n, &cpus, 4);
	n += 4;
	memcpy(d + n, &cpu, 4);
	n += 4;
	memcpy(d + n, &off, 8);
	n += 8;
	memcpy(d + n, &size, 8);
	n += 8;
	return n;
}

/* How a v7 file is spoiled (v7_file). */
enum v7_spoil {
	V7_SOUND,
	V7_META_TWICE,		/* a metadata section named by two options */
	V7_META_WRONG_ID,	/* an option naming another section */
	V7_META_BAD,		/* header_info's text size past its section */
	V7_META_SHORT,		/* a metadata option shorter than its offset */
	V7_META_PAST,		/* a metadata option's size past its section */
	V7_NEXT_BACK,		/* the options chain going backwards */
	V7_NEXT_SHORT,		/* the chain's end shorter than its offset */
	V7_SEC_PAST,		/* the options section's size past the file */
	V7_CPU_BAD,		/* a CPU id past 8192 */
	V7_PAGE_BAD,		/* the BUFFER's page size */
	V7_CUT_DATA,		/* the CPU data cut short */
	V7_META_Z,		/* a compressed metadata section (not walked) */
	V7_META_ZBAD,		/* ... with an impossible ratio */
	V7_OPTS_Z,		/* a compressed options section: checked, not walked */
	V7_SECOND,		/* a second options section after the first */
};

/* Where v7_file put its BUFFER option's data, and its size; the options
 * section's next offset. */
static size_t v7_bopt, v7_bopt_n, v7_next_at;

/* A v7 file (little-endian unless b->swap): header, metadata, options
 * with a BUFFER of one CPU of one page, the page. */
static void v7_file(struct buf *b, enum v7_spoil spoil)
{
	uint64_t off[6], data;
	uint8_t d[128];
	size_t first, at, dn, next_at = 0;
	int swap = b->swap;

	b->n = 0;
	v7_head(b, "none", &first);
	v7_meta(b, off);
	if (spoil == V7_META_BAD)
		put64_at(b, off[0] + HDR_SEC_HDR + 12, 100000);
	if (spoil == V7_META_Z || spoil == V7_META_ZBAD) {
		/* the cmdlines section compressed: zsize, usize, data */
		size_t z = off[5];

		b->n = z;
		at = sec_begin(b, HDR_OPT_CMDLINES, HDR_SEC_COMPRESSED);
		b32(b, 4);
		b32(b, spoil == V7_META_ZBAD ? 0xfffffff0 : 8);
		b32(b, 0);
		sec_end(b, at);
	}
	put64_at(b, first, b->n);
	at = sec_begin(b, 0, spoil == V7_OPTS_Z ? HDR_SEC_COMPRESSED : 0);
	if (spoil == V7_OPTS_Z) {
		b32(b, 8);
		b32(b, 16);
		b64(b, 0);
		sec_end(b, at);
		return;
	}
	for (int i = 0; i < 6; i++) {
		uint16_t id = HDR_OPT_HEADER_INFO + i;

		if (spoil == V7_META_WRONG_ID && i == 1)
			id = HDR_OPT_HEADER_INFO + 2;
		b16(b, id);
		b32(b, spoil == V7_META_SHORT && i == 2 ? 4 : spoil == V7_META_PAST && i == 3 ?
		    100000 : 8);
		b64(b, off[i]);
	}
	if (spoil == V7_META_TWICE) {
		b16(b, HDR_OPT_HEADER_INFO);
		b32(b, 8);
		b64(b, off[0]);
	}
	/* the BUFFER option, its data patched below */
	b16(b, HDR_OPT_BUFFER);
	b->swap = 0;
	dn = buffer_opt(d, 0, spoil == V7_CPU_BAD ? HDR_MAX_CPUS : 0, PAGE);
	if (spoil == V7_PAGE_BAD)
		memcpy(d + 15, "\0\x30\0\0", 4);
	b->swap = swap;
	b32(b, (uint32_t)dn);
	size_t bopt = b->n;

	v7_bopt = bopt;
	v7_bopt_n = dn;
	b_bytes(b, d, dn);
	b16(b, 0);
	b32(b, spoil == V7_NEXT_SHORT ? 4 : 8);
	next_at = b->n;
	v7_next_at = next_at;
	b64(b, 0);
	sec_end(b, at);
	if (spoil == V7_SEC_PAST)
		put64_at(b, at, 1 << 30);
	if (spoil == V7_NEXT_BACK)
		put64_at(b, next_at, off[0]);
	if (spoil == V7_SECOND) {
		put64_at(b, next_at, b->n);
		at = sec_begin(b, 0, 0);
		b16(b, 99);
		b32(b, 2);
		b_bytes(b, "zz", 2);
		b16(b, 0);
		b32(b, 8);
		b64(b, 0);
		sec_end(b, at);
	}
	b_pad(b, (b->n + PAGE - 1) / PAGE * PAGE);
	data = b->n;
	put64_at(b, bopt + 27, data);
	if (spoil == V7_CPU_BAD || spoil == V7_PAGE_BAD || swap) {
		/* the BUFFER's numbers in the file's order */
		uint32_t page = PAGE, cpu = spoil == V7_CPU_BAD ? HDR_MAX_CPUS : 0, one = 1;

		if (swap) {
			page = __builtin_bswap32(page);
			cpu = __builtin_bswap32(cpu);
			one = __builtin_bswap32(one);
		}
		if (spoil != V7_PAGE_BAD)
			memcpy(b->d + bopt + 15, &page, 4);
		memcpy(b->d + bopt + 19, &one, 4);
		memcpy(b->d + bopt + 23, &cpu, 4);
		put64_at(b, bopt + 27, data);
		put64_at(b, bopt + 35, PAGE);
	}
	b_pad(b, data + (spoil == V7_CUT_DATA ? PAGE / 2 : PAGE));
}

static void test_v7(void)
{
	static struct buf b;
	struct hdr_cur c;
	static const enum v7_spoil bad[] = {
		V7_META_TWICE, V7_META_WRONG_ID, V7_META_BAD, V7_META_SHORT, V7_META_PAST,
		V7_NEXT_BACK, V7_NEXT_SHORT, V7_SEC_PAST, V7_CPU_BAD, V7_PAGE_BAD, V7_META_ZBAD,
	};

	for (int swap = 0; swap < 2; swap++) {
		b.swap = swap;
		v7_file(&b, V7_SOUND);
		CHECK(check(&b, &c) == 0);
		CHECK(c.swap == swap && !c.compressed);
		CHECK(strcmp(c.zname, "none") == 0);
		CHECK(c.nr_spans == 1 && c.spans[0].size == PAGE);
		CHECK(c.hp_len == strlen(vt_td_header_page));
		tdh_free(&c);
	}
	b.swap = 0;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v7_file(&b, bad[i]);
		if (check(&b, &c) != -1)
			fprintf(stderr, "v7 spoil %d: passed\n", bad[i]);
		CHECK(strstr(vt_err_msg(), path) != NULL);
		CHECK(strstr(vt_err_msg(), "corrupt trace.dat header") != NULL);
		tdh_free(&c);
	}
	v7_file(&b, V7_CUT_DATA);
	CHECK(check(&b, &c) == 0);
	CHECK(c.nr_clips == 1 && c.clips[0].size == PAGE);
	CHECK(c.nr_spans == 1 && c.spans[0].size == PAGE / 2);
	tdh_free(&c);
	v7_file(&b, V7_META_Z);
	CHECK(check(&b, &c) == 0);
	tdh_free(&c);
	v7_file(&b, V7_OPTS_Z);
	CHECK(check(&b, &c) == 0);
	tdh_free(&c);
	v7_file(&b, V7_SECOND);
	CHECK(check(&b, &c) == 0);
	tdh_free(&c);
	/* the ratio bound itself */
	CHECK(tdh_zsize_ok(1, HDR_ZRATIO_MAX + HDR_PAGE_MAX));
	CHECK(!tdh_zsize_ok(1, HDR_ZRATIO_MAX + HDR_PAGE_MAX + 1));
	CHECK(tdh_zsize_ok(0xffffffff, 0xffffffff));
}

/* A v7 header cut at every offset before its options end, each section's
 * size made smaller (a compressed one's too), the BUFFER option's size
 * made smaller (its CPU table cut at every field) or past its section:
 * refused, little- and big-endian. */
static void test_v7_cuts(void)
{
	static struct buf b;
	struct hdr_cur c;

	for (int swap = 0; swap < 2; swap++) {
		b.swap = swap;
		v7_file(&b, V7_SOUND);
		CHECK(nr_sec == 7);
		if (nr_sec != 7)
			break;
		for (int i = 0; i < nr_sec; i++)
			fails_below(&b, sec_at[i], 8, tdh_get64(b.d + sec_at[i], swap), __LINE__);
		fails_below(&b, v7_bopt - 4, 4, v7_bopt_n, __LINE__);
		put_at(&b, v7_bopt - 4, 4, 100000);
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
		put_at(&b, v7_bopt - 4, 4, v7_bopt_n);
		CHECK(check(&b, &c) == 0);
		tdh_free(&c);
		cuts_fail(&b, HDR_MAGIC_LEN, sec_at[6] + 8 + tdh_get64(b.d + sec_at[6], swap),
			  __LINE__);
	}
	b.swap = 0;
	/* the compressed cmdlines section: shorter than its zsize and usize,
	 * or than the zsize it states */
	v7_file(&b, V7_META_Z);
	CHECK(nr_sec == 7);
	if (nr_sec == 7)
		fails_below(&b, sec_at[5], 8, tdh_get64(b.d + sec_at[5], 0), __LINE__);
}

/* The options chain: HDR_MAX_SECTIONS sections are followed; a chain
 * longer than that is refused at the first section not followed (its
 * options never checked). */
static void test_v7_chain(void)
{
	static struct buf b;
	struct hdr_cur c;
	size_t next = 0, last = 0, at;

	for (int more = HDR_MAX_SECTIONS - 1; more <= HDR_MAX_SECTIONS; more++) {
		v7_file(&b, V7_SOUND);
		next = v7_next_at;
		for (int i = 0; i < more; i++) {
			put64_at(&b, next, b.n);
			last = b.n;
			at = sec_begin(&b, 0, 0);
			b16(&b, 0);
			b32(&b, 8);
			next = b.n;
			b64(&b, 0);
			sec_end(&b, at);
		}
		if (more < HDR_MAX_SECTIONS) {
			CHECK(check(&b, &c) == 0);
			tdh_free(&c);
		} else {
			CHECK_BAD(&b, last);
		}
	}
}

/* A v7 file whose options hold two BUFFERs of @n1 and @n2 CPUs, the data
 * of each the one page at the end, @size bytes announced; the offset of
 * the second's first CPU's size into *@size2. */
static void v7_two_buffers(struct buf *b, uint32_t n1, uint32_t n2, uint64_t size,
			   size_t *size2)
{
	uint64_t off[6];
	size_t first, at, tab[2];
	uint32_t nr[2] = { n1, n2 };

	b->n = 0;
	v7_head(b, "none", &first);
	v7_meta(b, off);
	put64_at(b, first, b->n);
	at = sec_begin(b, 0, 0);
	for (int i = 0; i < 6; i++) {
		b16(b, HDR_OPT_HEADER_INFO + i);
		b32(b, 8);
		b64(b, off[i]);
	}
	for (int k = 0; k < 2; k++) {
		b16(b, HDR_OPT_BUFFER);
		b32(b, 8 + (k ? 2 : 1) + 6 + 4 + 4 + nr[k] * 20);
		b64(b, 0);
		b_str(b, k ? "x" : "");
		b_str(b, "local");
		b32(b, PAGE);
		b32(b, nr[k]);
		tab[k] = b->n;
		for (uint32_t i = 0; i < nr[k]; i++) {
			b32(b, i);
			b64(b, 0);
			b64(b, size);
		}
	}
	b16(b, 0);
	b32(b, 8);
	b64(b, 0);
	sec_end(b, at);
	b_pad(b, (b->n + PAGE - 1) / PAGE * PAGE);
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < nr[k]; i++)
			put64_at(b, tab[k] + i * 20 + 4, b->n);
	*size2 = tab[1] + 12;
	b_pad(b, b->n + PAGE);
}

/* CPUs of all BUFFERs past HDR_MAX_CPUS: the pages of the first
 * HDR_MAX_CPUS are kept to check; more CPUs cut short than that are
 * refused at the first one past them. */
static void test_v7_many_cpus(void)
{
	static struct buf b;
	struct hdr_cur c;
	size_t size2;

	v7_two_buffers(&b, HDR_MAX_CPUS, 1, PAGE, &size2);
	CHECK(check(&b, &c) == 0);
	CHECK(c.nr_spans == HDR_MAX_CPUS && c.nr_clips == 0);
	tdh_free(&c);
	v7_two_buffers(&b, HDR_MAX_CPUS, 1, 2 * PAGE, &size2);
	CHECK_BAD(&b, size2);
	v7_two_buffers(&b, HDR_MAX_CPUS - 1, 1, 2 * PAGE, &size2);
	CHECK(check(&b, &c) == 0);
	CHECK(c.nr_clips == HDR_MAX_CLIPS);
	tdh_free(&c);
}

/* A compressed v7 file's CPU data: u32 chunk count, then chunks of u32
 * zsize, u32 usize, data; @count chunks of @zs/@us announced, @size the
 * data's size in the BUFFER option, @have the bytes after the count. */
static size_t v7_zdata(struct buf *b, uint32_t count, uint32_t zs, uint32_t us, uint64_t size,
		       uint64_t have)
{
	uint64_t off[6];
	uint8_t d[128];
	size_t first, at, dn, data;

	b->n = 0;
	v7_head(b, "zstd", &first);
	v7_meta(b, off);
	put64_at(b, first, b->n);
	at = sec_begin(b, 0, 0);
	b16(b, HDR_OPT_BUFFER);
	dn = buffer_opt(d, 0, 0, size);
	b32(b, (uint32_t)dn);
	data = b->n;
	b_bytes(b, d, dn);
	b16(b, 0);
	b32(b, 8);
	b64(b, 0);
	sec_end(b, at);
	put64_at(b, data + 27, b->n);
	b32(b, count);
	if (have >= 8) {
		b32(b, zs);
		b32(b, us);
		b_pad(b, b->n + have - 8);
	} else {
		b_pad(b, b->n + have);
	}
	return data;
}

static void test_v7_compressed(void)
{
	static struct buf b;
	struct hdr_cur c;

	/* one chunk of 16 bytes inflating to a page */
	v7_zdata(&b, 1, 16, PAGE, 24, 24);
	CHECK(check(&b, &c) == 0);
	CHECK(c.compressed && strcmp(c.zname, "zstd") == 0);
	CHECK(c.nr_spans == 0);	/* compressed data: checked by the unzip */
	tdh_free(&c);
	/* no data at all: nothing to check */
	v7_zdata(&b, 0, 0, 0, 0, 0);
	CHECK(check(&b, &c) == 0);
	tdh_free(&c);
	/* a cut stream, a count past what the data holds, a chunk's size
	 * past the data, an impossible ratio, data starting past the end */
	v7_zdata(&b, 1, 16, PAGE, 24, 20);
	CHECK(check(&b, &c) == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	tdh_free(&c);
	v7_zdata(&b, 4, 16, PAGE, 24, 24);
	CHECK(check(&b, &c) == -1);
	tdh_free(&c);
	v7_zdata(&b, 1, 17, PAGE, 24, 24);
	CHECK(check(&b, &c) == -1);
	tdh_free(&c);
	v7_zdata(&b, 1, 16, 0x7fffffff, 24, 24);
	CHECK(check(&b, &c) == -1);
	tdh_free(&c);
	/* two chunks announced, the first's data to the end: the second's
	 * zsize, or its usize, past the data */
	v7_zdata(&b, 2, 16, PAGE, 24, 24);
	CHECK(check(&b, &c) == -1);
	tdh_free(&c);
	v7_zdata(&b, 2, 12, PAGE, 24, 24);
	CHECK(check(&b, &c) == -1);
	tdh_free(&c);
	{
		/* the BUFFER's data offset past the file */
		size_t at = v7_zdata(&b, 1, 16, PAGE, 24, 24);

		put64_at(&b, at + 27, b.n + 100);
		CHECK(check(&b, &c) == -1);
		tdh_free(&c);
	}
}

/* ---- pages ---- */

static void put32le(uint8_t *p, uint32_t v, int swap)
{
	v = swap ? __builtin_bswap32(v) : v;
	memcpy(p, &v, 4);
}

static void put64le(uint8_t *p, uint64_t v, int swap)
{
	v = swap ? __builtin_bswap64(v) : v;
	memcpy(p, &v, 8);
}

/* An event header word: type_len and time delta in the file's order. */
static uint32_t ev_hdr(uint32_t type, uint32_t delta, int swap)
{
	return swap ? (type << 27) | delta : type | (delta << 5);
}

/* The file of @nr pages @pages (each PAGE bytes) on one CPU; check the
 * header and the pages; @c freed by the caller. */
static int pages_file(struct buf *b, const char *hp, const uint8_t *pages, int nr,
		      struct hdr_cur *c, size_t *data)
{
	struct v6 v = { .header_page = hp };

	b->n = 0;
	v6_sound(b, &v, nr, NULL);
	*data = b->n;
	b_bytes(b, pages, (size_t)nr * PAGE);
	if (check(b, c))
		return -1;
	return tdh_pages_check(path, c);
}

static void test_pages(void)
{
	static struct buf b;
	static uint8_t pg[8][PAGE];
	struct vt_td_page p;
	struct hdr_cur c;
	size_t data;
	uint8_t ev[16] = { 1 };
	const uint32_t room = PAGE - 16;

	for (int swap = 0; swap < 2; swap++) {
		uint8_t *d;

		b.swap = swap;
		memset(pg, 0, sizeof(pg));
		/* 0: sound, two small events (page builder, little-endian;
		 * big-endian by hand) */
		if (!swap) {
			vt_td_page_init(&p, pg[0], PAGE);
			CHECK(vt_td_page_add(&p, 100, ev, 16) == 0);
			CHECK(vt_td_page_add(&p, 200, ev, 16) == 0);
			/* refused, the page unchanged: no payload, one past
			 * the small-event limit, a stamp before the last */
			CHECK(vt_td_page_add(&p, 300, ev, 0) == -1);
			CHECK(vt_td_page_add(&p, 300, pg[1], VT_TD_PAGE_SMALL_MAX + 1) == -1);
			CHECK(vt_td_page_add(&p, 199, ev, 16) == -1);
			CHECK(p.nr_events == 2 && p.used == 40 && p.ts_last == 200);
		} else {
			put64le(pg[0] + 8, 40, 1);
			put32le(pg[0] + 16, ev_hdr(4, 0, 1), 1);	/* 20 bytes */
			put32le(pg[0] + 36, ev_hdr(4, 1, 1), 1);
		}
		/* 1: commit past the page, one event: its 20 bytes are sound */
		put64le(pg[1] + 8, room + 8, swap);
		put32le(pg[1] + 16, ev_hdr(4, 0, swap), swap);
		/* 2: lost events stored after a commit that leaves no room
		 * for their count; a padding to the commit */
		put64le(pg[2] + 8, (room - 4) | PG_MISSING | PG_STORED, swap);
		d = pg[2] + 16;
		put32le(d, ev_hdr(PG_TYPE_PADDING, 0, swap), swap);
		put32le(d + 4, room - 8, swap);
		/* 3: a time extend, a type-0 event of 20 bytes, then a type-0
		 * length shorter than its header: sound for 8 + 20 */
		put64le(pg[3] + 8, 64, swap);
		d = pg[3] + 16;
		put32le(d, ev_hdr(30, 5, swap), swap);
		put32le(d + 4, 1, swap);
		put32le(d + 8, ev_hdr(0, 0, swap), swap);
		put32le(d + 12, 16, swap);
		/* 4: a padding whose length points backwards */
		put64le(pg[4] + 8, 64, swap);
		put32le(pg[4] + 16, ev_hdr(4, 0, swap), swap);
		put32le(pg[4] + 36, ev_hdr(PG_TYPE_PADDING, 0, swap), swap);
		put32le(pg[4] + 40, (uint32_t)-24, swap);
		/* 5: a data event running past the commit */
		put64le(pg[5] + 8, 12, swap);
		put32le(pg[5] + 16, ev_hdr(5, 0, swap), swap);
		/* 6: lost events, their count stored in the page: sound */
		put64le(pg[6] + 8, 20 | PG_MISSING | PG_STORED, swap);
		put32le(pg[6] + 16, ev_hdr(4, 0, swap), swap);
		/* 7: a commit to the page's end, a time stamp record at the
		 * last word (header + extend word past the room) */
		put64le(pg[7] + 8, room, swap);
		put32le(pg[7] + 16, ev_hdr(PG_TYPE_PADDING, 0, swap), swap);
		put32le(pg[7] + 20, room - 8, swap);
		put32le(pg[7] + 16 + room - 4, ev_hdr(31, 0, swap), swap);

		CHECK(pages_file(&b, NULL, &pg[0][0], 8, &c, &data) == 0);
		CHECK(c.long8 == 1);
		if (c.nr_bad != 6) {
			fprintf(stderr, "swap %d: %llu bad pages:", swap,
				(unsigned long long)c.nr_bad);
			for (uint64_t i = 0; i < c.nr_bad; i++)
				fprintf(stderr, " %llu/%u", (unsigned long long)(c.bad[i].off - data) /
					PAGE, c.bad[i].good);
			fprintf(stderr, "\n");
		}
		CHECK(c.nr_bad == 6);
		if (c.nr_bad == 6) {
			CHECK(c.bad[0].off == data + 1 * PAGE && c.bad[0].good == 20);
			CHECK(c.bad[1].off == data + 2 * PAGE && c.bad[1].good == room - 4);
			CHECK(c.bad[2].off == data + 3 * PAGE && c.bad[2].good == 28);
			CHECK(c.bad[3].off == data + 4 * PAGE && c.bad[3].good == 20);
			CHECK(c.bad[4].off == data + 5 * PAGE && c.bad[4].good == 0);
			CHECK(c.bad[5].off == data + 7 * PAGE && c.bad[5].good == room - 4);
		}
		tdh_free(&c);
	}
	b.swap = 0;

	/* page headers with a 32-bit commit (a 32-bit kernel's) */
	static const char hp32[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";

	memset(pg, 0, sizeof(pg));
	put32le(pg[0] + 8, 20, 0);
	put32le(pg[0] + 12, ev_hdr(4, 0, 0), 0);
	put32le(pg[1] + 8, PAGE, 0);
	CHECK(pages_file(&b, hp32, &pg[0][0], 2, &c, &data) == 0);
	CHECK(c.long8 == 0);
	CHECK(c.nr_bad == 1 && c.bad[0].off == data + PAGE);
	tdh_free(&c);

	/* no header_page text: the pre-2.6.31 format, refused by name */
	CHECK(pages_file(&b, "", &pg[0][0], 1, &c, &data) == -1);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	CHECK(strstr(vt_err_msg(), "pre-2.6.31") != NULL);
	tdh_free(&c);

	/* more bad pages than the first table holds: it grows */
	{
		static uint8_t many[70][PAGE];

		memset(many, 0, sizeof(many));
		for (int i = 0; i < 70; i++)
			put64le(many[i] + 8, PAGE, 0);
		CHECK(pages_file(&b, NULL, &many[0][0], 70, &c, &data) == 0);
		CHECK(c.nr_bad == 70);
		CHECK(c.nr_bad == 70 && c.bad[69].off == data + 69 * PAGE);
		tdh_free(&c);
	}

	/* no spans: nothing read; the file gone: named */
	memset(&c, 0, sizeof(c));
	CHECK(tdh_pages_check(path, &c) == 0);
	{
		struct v6 v = { .nr_ftrace = 0 };

		b.n = 0;
		v6_sound(&b, &v, 1, NULL);
		b_pad(&b, b.n + PAGE);
		CHECK(check(&b, &c) == 0);
		unlink(path);
		CHECK(tdh_pages_check(path, &c) == -1);
		CHECK(strstr(vt_err_msg(), path) != NULL);
		tdh_free(&c);
	}
}

/* Copies the reader makes of a file whose CPU data is cut (and, here,
 * big-endian, its first page malformed): read from the copy, with a
 * warning; where TMPDIR says (unset or empty: /tmp); refused naming the
 * file when no copy can be made there. */
static void test_reader_copy(const char *dir)
{
	static struct buf b;
	struct v6 v = { .nr_ftrace = 0 };
	struct vt_td_reader *r;
	char tmpdir[300];
	const char *old = getenv("TMPDIR");
	size_t data;

	b.n = 0;
	b.swap = 1;
	v6_sound(&b, &v, 2, NULL);
	data = b.n;
	b_pad(&b, b.n + PAGE + PAGE / 2);
	put64le(b.d + data + 8, 2 * PAGE, 1);
	b.swap = 0;
	write_buf(&b);
	snprintf(tmpdir, sizeof(tmpdir), "%s/none", dir);
	for (int i = 0; i < 4; i++) {
		if (i == 0)
			unsetenv("TMPDIR");
		else
			setenv("TMPDIR", i == 1 ? "" : i == 2 ? dir : tmpdir, 1);
		r = vt_td_read_open(path);
		if (i == 3) {
			CHECK(r == NULL);
			CHECK(strstr(vt_err_msg(), path) != NULL);
			CHECK(strstr(vt_err_msg(), "no clipped copy could be made") != NULL);
			break;
		}
		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK(vt_td_read_truncated(r) == 1);
		CHECK(vt_td_read_warning(r) != NULL &&
		      strstr(vt_td_read_warning(r), "1 malformed or cut ring-buffer pages"));
		vt_td_read_close(r);
	}
	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");

	/* no room to pad the copy: a file size limit at the file's size */
	{
		struct rlimit rl, lim;

		CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
		lim = rl;
		lim.rlim_cur = b.n;
		signal(SIGXFSZ, SIG_IGN);
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		r = vt_td_read_open(path);
		CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		signal(SIGXFSZ, SIG_DFL);
		CHECK(r == NULL);
		CHECK(strstr(vt_err_msg(), path) != NULL);
		CHECK(strstr(vt_err_msg(), "CPU data truncated; padding") != NULL);
		vt_td_read_close(r);
	}

	/* a version string libtracecmd refuses ("0"), the data cut: the
	 * copy cannot be loaded either */
	b.d[HDR_MAGIC_LEN] = '0';
	write_buf(&b);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	CHECK(strstr(vt_err_msg(), "CPU data truncated or corrupt") != NULL);
}

/* A v7 file's CPUCOUNT option (which the guard does not read) past
 * HDR_MAX_CPUS or negative as an int: refused by the reader. */
static void test_reader_cpu_count(void)
{
	static struct buf b;
	static const uint32_t bad[] = { HDR_MAX_CPUS + 1, 0xffffffff };
	struct vt_td_reader *r;
	size_t at;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v7_file(&b, V7_SOUND);
		put64_at(&b, v7_next_at, b.n);
		at = sec_begin(&b, 0, 0);
		b16(&b, 8);	/* CPUCOUNT */
		b32(&b, 4);
		b32(&b, bad[i]);
		b16(&b, 0);
		b32(&b, 8);
		b64(&b, 0);
		sec_end(&b, at);
		write_buf(&b);
		r = vt_td_read_open(path);
		CHECK(r == NULL);
		CHECK(strstr(vt_err_msg(), path) != NULL);
		CHECK(strstr(vt_err_msg(), i ? "bad CPU count -1" : "bad CPU count 8193") != NULL);
		vt_td_read_close(r);
	}
}

int main(void)
{
	char dir[] = "/tmp/t-tracedat-check.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/hdr.dat", dir);
	test_not_tracedat();
	test_v6_counts();
	test_v6_options();
	test_v6_options_be();
	test_reader_copy(dir);
	test_reader_cpu_count();
	/* numbers of the file's byte order */
	CHECK(tdh_get16((const uint8_t *)"\x12\x34", 1) == 0x1234);
	CHECK(tdh_get16((const uint8_t *)"\x12\x34", 0) == 0x3412);
	test_v6_cpu_data();
	test_v6_cuts();
	test_v7();
	test_v7_cuts();
	test_v7_chain();
	test_v7_many_cpus();
	test_v7_compressed();
	test_pages();
	unlink(path);
	rmdir(dir);
	return check_done();
}
