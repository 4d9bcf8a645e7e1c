/*
 * t-tracedat-read.c - unit test of the trace.dat reader (lib/tracedat_read.c):
 * clock classification, clean failures on missing / non-trace.dat / header-
 * truncated input (message names the file); on files written here (system
 * "vt", events of crafted formats): each field's kind (numbers, arrays of
 * 1, 2, 4 and 8 byte elements, signed or not, fixed, __data_loc and
 * __rel_loc, strings, elements of another size), array elements exact and
 * sign-extended, strings cut to the buffer, fields that lie past a short
 * record or at negative offsets read as absent, __print_symbolic and
 * __print_flags fields found through a typecast, records of an unknown
 * type skipped, the host-guest options a writer may get wrong (a short
 * TRACEID, two TIME_SHIFTs, one without fraction bits, a TSC2NSEC stating
 * no frequency), and the calls given a CPU, index or event out of range.
 * Reading real files is tested end to end by tests/merge/t-merge-tracedat.sh
 * and t-merge-record.sh.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "tracedat.h"
#include "td_common_fields.h"	/* COMMON_FIELDS */

#define PAGE	4096


/* Every kind of field (vt_td_field_kind), at the offsets of struct arr_ev. */
static const char fmt_arr[] =
	"name: vt_arr\nID: 1001\nformat:\n" COMMON_FIELDS
	"\tfield:int8_t a8[4];\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:u16 a16[2];\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 a32[2];\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:s64 a64[1];\toffset:24;\tsize:8;\tsigned:1;\n"
	"\tfield:__data_loc u32[] dyn;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc s16[] rel;\toffset:36;\tsize:4;\tsigned:1;\n"
	"\tfield:struct pair three[2];\toffset:40;\tsize:6;\tsigned:0;\n"
	"\tfield:char name[8];\toffset:46;\tsize:8;\tsigned:0;\n"
	"\tfield:int num;\toffset:54;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned long flagsf;\toffset:58;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"name=%s num=%s f=%s\", REC->name, "
	"__print_symbolic((int)REC->num, { 1, \"one\" }), "
	"__print_flags((unsigned long)REC->flagsf, \"|\", { 1, \"A\" })\n";

/* Fields at negative offsets or of a negative size. */
static const char fmt_neg[] =
	"name: vt_neg\nID: 1002\nformat:\n" COMMON_FIELDS
	"\tfield:int neg;\toffset:4294967292;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] dneg;\toffset:4294967288;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u32[] aneg;\toffset:4294967284;\tsize:4;\tsigned:0;\n"
	"\tfield:char sneg[4];\toffset:4294967292;\tsize:4;\tsigned:0;\n"
	"\tfield:u16 fneg[2];\toffset:4294967292;\tsize:4;\tsigned:0;\n"
	"\tfield:char sbig[4];\toffset:8;\tsize:4294967292;\tsigned:0;\n"
	"\tfield:u16 fbig[2];\toffset:8;\tsize:4294967292;\tsigned:0;\n"
	"\tfield:unsigned long lbig[];\toffset:8;\tsize:4294967292;\tsigned:0;\n\n"
	"print fmt: \"neg=%d\", REC->neg\n";

#define ARR_FIXED	66	/* the fixed part of vt_arr's record */

static uint8_t arr_rec[112];

/* vt_arr's record: the dyn (2 u32) and rel (3 s16) data after the fixed
 * part, in the byte order of this (little-endian) host. */
static uint32_t arr_build(int32_t pid)
{
	uint8_t *d = arr_rec;
	uint16_t type = 1001, a16[2] = { 7, 65535 };
	int8_t a8[4] = { -1, 2, -128, 127 };
	uint32_t a32[2] = { 0xdeadbeef, 5 }, dyn[2] = { 11, 0xffffffff }, loc;
	int64_t a64 = -9;
	int16_t rel[3] = { -2, 300, -32768 };
	int32_t num = 1;
	uint64_t flags = 1;

	memset(arr_rec, 0, sizeof(arr_rec));
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	memcpy(d + 8, a8, 4);
	memcpy(d + 12, a16, 4);
	memcpy(d + 16, a32, 8);
	memcpy(d + 24, &a64, 8);
	loc = (uint32_t)sizeof(dyn) << 16 | ARR_FIXED;
	memcpy(d + 32, &loc, 4);
	memcpy(d + ARR_FIXED, dyn, sizeof(dyn));
	/* __rel_loc: from the end of its own field (36 + 4) */
	loc = (uint32_t)sizeof(rel) << 16 | (ARR_FIXED + sizeof(dyn) - 40);
	memcpy(d + 36, &loc, 4);
	memcpy(d + ARR_FIXED + sizeof(dyn), rel, sizeof(rel));
	memcpy(d + 40, "\1\2\3\4\5\6", 6);
	memcpy(d + 46, "abcdefgh", 8);	/* the full array, no NUL */
	memcpy(d + 54, &num, 4);
	memcpy(d + 58, &flags, 8);
	return ARR_FIXED + sizeof(dyn) + sizeof(rel);
}

struct rec {
	uint64_t ts;
	const void *d;
	uint32_t len;
};

struct opt {
	int id;
	const void *d;
	uint32_t len;
};

/* Write @path (v6, one CPU): system "vt" of @nr_fmts formats, records
 * @recs in one page, options @opts. */
static void write_td(const char *path, const char *dir, const char *const *fmts, int nr_fmts,
		     const struct rec *recs, int nr_recs, const struct opt *opts, int nr_opts)
{
	static uint8_t page[PAGE];
	size_t lens[4];
	struct vt_td_page pg;
	struct vt_td_writer *w;
	char raw[300];
	int fd, ok;

	snprintf(raw, sizeof(raw), "%s/cpu0.raw", dir);
	vt_td_page_init(&pg, page, PAGE);
	for (int i = 0; i < nr_recs; i++)
		CHECK(vt_td_page_add(&pg, recs[i].ts, recs[i].d, recs[i].len) == 0);
	fd = open(raw, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, page, PAGE) == PAGE);
	if (fd >= 0)
		lseek(fd, 0, SEEK_SET);
	for (int i = 0; i < nr_fmts; i++)
		lens[i] = strlen(fmts[i]);
	unlink(path);
	w = vt_td_create(path, PAGE);
	CHECK(w != NULL);
	if (!w) {
		close(fd);
		return;
	}
	ok = !vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
				  vt_td_header_event, strlen(vt_td_header_event)) &&
	     !vt_td_write_ftrace_formats(w, 0, NULL, NULL) && !vt_td_systems_begin(w, 1) &&
	     !vt_td_write_system(w, "vt", nr_fmts, fmts, lens) &&
	     !vt_td_write_kallsyms(w, "", 0) && !vt_td_write_printk(w, "", 0) &&
	     !vt_td_write_cmdlines(w, "42 tester\n", 10);
	for (int i = 0; ok && i < nr_opts; i++)
		ok = !vt_td_add_option(w, (enum vt_td_option)opts[i].id, opts[i].d, opts[i].len);
	ok = ok && !vt_td_write_cpu_data(w, 1, &fd, NULL);
	close(fd);
	unlink(raw);
	CHECK(ok);
	if (!ok) {
		fprintf(stderr, "%s\n", vt_err_msg());
		vt_td_abort(w);
		return;
	}
	CHECK(vt_td_close(w) == 0);
}

/* The index of field @name of @ev, -1 if none. */
static int field_idx(const struct vt_td_event *ev, const char *name)
{
	for (int i = 0; i < vt_td_nr_fields(ev); i++)
		if (!strcmp(vt_td_field_name(ev, i), name))
			return i;
	return -1;
}

static void test_fields(const char *dir)
{
	const char *fmts[] = { fmt_arr, fmt_neg };
	uint8_t shortrec[12], badloc[ARR_FIXED + 8], negrec[16] = { 0xea, 0x03 };
	struct rec recs[4];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	char path[300], buf[64];
	uint64_t v[8];
	uint32_t len = arr_build(42), loc;
	int i;

	snprintf(path, sizeof(path), "%s/fields.dat", dir);
	/* a record of vt_arr cut after 4 bytes of fields; one whose dyn
	 * data lies past it and whose rel data runs past it */
	memcpy(shortrec, arr_rec, sizeof(shortrec));
	memcpy(badloc, arr_rec, sizeof(badloc));
	loc = 8U << 16 | 200;
	memcpy(badloc + 32, &loc, 4);
	loc = 64U << 16 | 10;
	memcpy(badloc + 36, &loc, 4);
	recs[0] = (struct rec){ 1000, arr_rec, len };
	recs[1] = (struct rec){ 2000, shortrec, sizeof(shortrec) };
	recs[2] = (struct rec){ 3000, badloc, sizeof(badloc) };
	recs[3] = (struct rec){ 4000, negrec, sizeof(negrec) };
	write_td(path, dir, fmts, 2, recs, 4, NULL, 0);
	r = vt_td_read_open(path);
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "%s\n", vt_err_msg());
		return;
	}

	CHECK(vt_td_read_next_any(r, &ev) == 1);
	CHECK_STR(ev.name, "vt_arr");
	CHECK_STR(ev.system, "vt");
	CHECK(ev.id == 1001 && ev.pid == 42 && ev.size == (int)len);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "a8")) == VT_TD_FIELD_ARRAY_SIGNED);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "a16")) == VT_TD_FIELD_ARRAY);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "a32")) == VT_TD_FIELD_ARRAY);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "a64")) == VT_TD_FIELD_ARRAY_SIGNED);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "dyn")) == VT_TD_FIELD_ARRAY);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "rel")) == VT_TD_FIELD_ARRAY_SIGNED);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "three")) == VT_TD_FIELD_OTHER);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "name")) == VT_TD_FIELD_STRING);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "num")) == VT_TD_FIELD_SIGNED);
	CHECK(vt_td_field_kind(&ev, field_idx(&ev, "flagsf")) == VT_TD_FIELD_UNSIGNED);
	CHECK(vt_td_field_kind(&ev, -1) == VT_TD_FIELD_OTHER);
	CHECK(vt_td_field_kind(&ev, vt_td_nr_fields(&ev)) == VT_TD_FIELD_OTHER);
	CHECK_STR(vt_td_field_name(&ev, -1), "");
	CHECK_STR(vt_td_field_name(&ev, vt_td_nr_fields(&ev)), "");
	CHECK(vt_td_field_is_num(&ev, -1) == 0);
	CHECK(vt_td_field_is_num(&ev, vt_td_nr_fields(&ev)) == 0);
	CHECK(vt_td_field_is_num(&ev, field_idx(&ev, "num")) == 1);

	/* elements exact, signed ones sign-extended, at most @max */
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a8"), v, 8) == 4);
	CHECK(v[0] == (uint64_t)-1 && v[1] == 2 && v[2] == (uint64_t)-128 && v[3] == 127);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a8"), v, 2) == 2);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a16"), v, 8) == 2);
	CHECK(v[0] == 7 && v[1] == 65535);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a32"), v, 8) == 2);
	CHECK(v[0] == 0xdeadbeef && v[1] == 5);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a64"), v, 8) == 1);
	CHECK(v[0] == (uint64_t)-9);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "dyn"), v, 8) == 2);
	CHECK(v[0] == 11 && v[1] == 0xffffffff);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "rel"), v, 8) == 3);
	CHECK(v[0] == (uint64_t)-2 && v[1] == 300 && v[2] == (uint64_t)-32768);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "three"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "num"), v, 8) == -1);

	/* strings: the whole array, cut to the buffer; not from a number */
	CHECK_STR(vt_td_field_str(&ev, "name", buf, sizeof(buf)), "abcdefgh");
	CHECK_STR(vt_td_field_str(&ev, "name", buf, 4), "abc");
	CHECK(vt_td_field_str(&ev, "name", buf, 0) == NULL);
	CHECK(vt_td_field_str(&ev, "num", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_str(&ev, "nosuch", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_u64(&ev, "name", v) == -1);
	CHECK(vt_td_field_u64(&ev, "num", v) == 0 && v[0] == 1);

	/* the fields __print_symbolic / __print_flags name, through a cast */
	CHECK(vt_td_field_is_symbolic(&ev, field_idx(&ev, "num")) == 1);
	CHECK(vt_td_field_is_symbolic(&ev, field_idx(&ev, "flagsf")) == 1);
	CHECK(vt_td_field_is_symbolic(&ev, field_idx(&ev, "name")) == 0);
	CHECK(vt_td_field_is_symbolic(&ev, -1) == 0);
	CHECK(strstr(vt_td_event_info(r, &ev, buf, sizeof(buf)), "num=one f=A") != NULL);

	/* the short record: every field past its end is absent */
	CHECK(vt_td_read_next_any(r, &ev) == 1);
	CHECK(ev.ts == 2000 && ev.size == (int)sizeof(shortrec));
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a8"), v, 8) == 4);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a16"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "dyn"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "rel"), v, 8) == -1);
	CHECK(vt_td_field_str(&ev, "name", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_str(&ev, "dyn", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_u64(&ev, "num", v) == -1);

	/* dyn's data past the record, rel's running past it */
	CHECK(vt_td_read_next_any(r, &ev) == 1);
	CHECK(ev.ts == 3000);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "dyn"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "rel"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "a32"), v, 8) == 2);

	/* negative offsets and sizes: absent */
	CHECK(vt_td_read_next_any(r, &ev) == 1);
	CHECK_STR(ev.name, "vt_neg");
	i = field_idx(&ev, "neg");
	CHECK(i >= 0 && vt_td_field_u64_idx(&ev, i, v) == -1);
	CHECK(vt_td_field_str(&ev, "dneg", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_str(&ev, "sneg", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_str(&ev, "sbig", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "aneg"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "fneg"), v, 8) == -1);
	CHECK(vt_td_field_array_idx(&ev, field_idx(&ev, "fbig"), v, 8) == -1);
	i = field_idx(&ev, "lbig");
	CHECK(vt_td_field_kind(&ev, i) == VT_TD_FIELD_ARRAY);
	CHECK(vt_td_field_array_idx(&ev, i, v, 8) == -1);

	/* the end; the last event's CPU has no record now: no text */
	CHECK(vt_td_read_next_any(r, &ev) == 0);
	strcpy(buf, "x");
	CHECK_STR(vt_td_event_info(r, &ev, buf, sizeof(buf)), "");
	vt_td_read_close(r);
	unlink(path);
}

/* Calls given what no read handed out: a CPU out of range, an event the
 * reader did not fill, indexes past the fields. */
static void test_out_of_range(const char *dir)
{
	const char *fmts[] = { fmt_arr };
	struct rec rec = { 1000, arr_rec, arr_build(42) };
	struct vt_td_event ev, none;
	struct vt_td_reader *r;
	char path[300], buf[16] = "x";
	uint64_t v;

	snprintf(path, sizeof(path), "%s/range.dat", dir);
	write_td(path, dir, fmts, 1, &rec, 1, NULL, 0);
	r = vt_td_read_open(path);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(vt_td_read_nr_cpus(r) == 1);
	CHECK(vt_td_read_next(r, -1, &ev) == 0);
	CHECK(vt_td_read_next(r, 1, &ev) == 0);
	CHECK(vt_td_read_next(r, 0, &ev) == 1);
	CHECK(vt_td_event_info(r, &ev, buf, 0) == buf && buf[0] == 'x');
	CHECK(vt_td_event_info(r, &ev, buf, sizeof(buf))[0] != 0);
	ev.cpu = -1;
	CHECK_STR(vt_td_event_info(r, &ev, buf, sizeof(buf)), "");
	ev.cpu = 1;
	CHECK_STR(vt_td_event_info(r, &ev, buf, sizeof(buf)), "");
	CHECK_STR(vt_td_read_comm(r, 42), "tester");
	CHECK_STR(vt_td_read_comm(r, 4242), "");
	vt_td_read_close(r);
	vt_td_read_close(NULL);
	unlink(path);

	memset(&none, 0, sizeof(none));
	CHECK(vt_td_nr_fields(&none) == 0);
	CHECK_STR(vt_td_field_name(&none, 0), "");
	CHECK(vt_td_field_is_num(&none, 0) == 0);
	CHECK(vt_td_field_u64(&none, "num", &v) == -1);
	CHECK(vt_td_field_u64_idx(&none, 0, &v) == -1);
	CHECK(vt_td_field_str(&none, "name", buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_str_idx(&none, 0, buf, sizeof(buf)) == NULL);
	CHECK(vt_td_field_kind(&none, 0) == VT_TD_FIELD_OTHER);
	CHECK(vt_td_field_is_symbolic(&none, 0) == 0);
	CHECK(vt_td_field_array_idx(&none, 0, &v, 1) == -1);
}

/* A file whose common_type is 4 bytes: a record of a type past 65535 is
 * skipped, the others read. */
static void test_wide_type(const char *dir)
{
	static const char fmt_wide[] =
		"name: vt_wide\nID: 1001\nformat:\n"
		"\tfield:int common_type;\toffset:0;\tsize:4;\tsigned:1;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:unsigned int seq;\toffset:8;\tsize:4;\tsigned:0;\n\n"
		"print fmt: \"seq=%u\", REC->seq\n";
	const char *fmts[] = { fmt_wide };
	uint32_t a[3] = { 1001, 7, 1 }, b[3] = { 70000, 7, 2 }, c[3] = { 1001, 7, 3 };
	struct rec recs[3] = { { 10, a, 12 }, { 20, b, 12 }, { 30, c, 12 } };
	struct vt_td_reader *r;
	struct vt_td_event ev;
	char path[300];
	uint64_t seq;

	snprintf(path, sizeof(path), "%s/wide.dat", dir);
	write_td(path, dir, fmts, 1, recs, 3, NULL, 0);
	r = vt_td_read_open(path);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(vt_td_read_next(r, 0, &ev) == 1);
	CHECK(vt_td_field_u64(&ev, "seq", &seq) == 0 && seq == 1);
	CHECK(vt_td_read_next(r, 0, &ev) == 1);
	CHECK(vt_td_field_u64(&ev, "seq", &seq) == 0 && seq == 3);
	CHECK(vt_td_read_next(r, 0, &ev) == 0);
	vt_td_read_close(r);
	unlink(path);
}

/* Options a writer may get wrong: a TRACEID shorter than its id, two
 * TIME_SHIFTs (the first counts; its one CPU without fraction bits), a
 * TSC2NSEC of multiplier 0. */
static void test_options(const char *dir)
{
	const char *fmts[] = { fmt_arr };
	struct rec rec = { 1000, arr_rec, arr_build(42) };
	uint8_t ts1[16 + 4 + 24], ts2[16 + 4];
	uint32_t u32, t2n[4] = { 0, 24, 0, 0 };
	uint64_t u64;
	struct opt opts[4] = {
		{ 11, "abcd", 4 },
		{ 12, ts1, sizeof(ts1) },
		{ 12, ts2, sizeof(ts2) },
		{ 14, t2n, sizeof(t2n) },
	};
	const struct vt_td_tsync *t;
	struct vt_td_reader *r;
	char path[300];

	memset(ts1, 0, sizeof(ts1));
	u64 = 0x77;
	memcpy(ts1, &u64, 8);
	u32 = 1;
	memcpy(ts1 + 12, &u32, 4);
	memcpy(ts1 + 16, &u32, 4);
	u64 = 500;
	memcpy(ts1 + 20, &u64, 8);	/* time */
	u64 = 9;
	memcpy(ts1 + 28, &u64, 8);	/* offset */
	u64 = 1;
	memcpy(ts1 + 36, &u64, 8);	/* scaling */
	memset(ts2, 0, sizeof(ts2));
	u64 = 0x88;
	memcpy(ts2, &u64, 8);

	snprintf(path, sizeof(path), "%s/opts.dat", dir);
	write_td(path, dir, fmts, 1, &rec, 1, opts, 4);
	r = vt_td_read_open(path);
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "%s\n", vt_err_msg());
		return;
	}
	CHECK(vt_td_read_trace_id(r, &u64) == -1);
	CHECK(vt_td_read_tsc_hz(r, &u64) == -1);
	CHECK(vt_td_read_nr_guests(r) == 0 && vt_td_read_guest(r, 0) == NULL);
	t = vt_td_read_tsync(r);
	CHECK(t != NULL);
	if (t) {
		CHECK(t->peer_id == 0x77 && t->nr_cpus == 1 && t->count[0] == 1);
		CHECK(t->samples[0][0].time == 500 && t->samples[0][0].offset == 9);
		CHECK(t->samples[0][0].scaling == 1 && t->samples[0][0].frac == 0);
	}
	vt_td_read_close(r);
	unlink(path);
}

int main(void)
{
	char dir[] = "/tmp/t-tracedat-read.XXXXXX", path[256];
	int fd;

	CHECK(vt_td_clock_is_ns("local") == 1);
	CHECK(vt_td_clock_is_ns("mono") == 1);
	CHECK(vt_td_clock_is_ns("x86-tsc") == 0);
	CHECK(vt_td_clock_is_ns("counter") == 0);
	CHECK(vt_td_clock_is_ns("") == 0);

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/missing.dat", dir);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), "missing.dat") != NULL);

	/* garbage: not a trace.dat */
	snprintf(path, sizeof(path), "%s/garbage.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, "this is not a trace file at all, not even close\n", 48) == 48);
	close(fd);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), "garbage.dat") != NULL);

	/* the magic and nothing else: truncated headers */
	snprintf(path, sizeof(path), "%s/short.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	static const char magic[] = "\x17\x08\x44" "tracing" "6";

	CHECK(write(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic));
	close(fd);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), "short.dat") != NULL);

	unlink(path);
	snprintf(path, sizeof(path), "%s/garbage.dat", dir);
	unlink(path);

	test_fields(dir);
	test_out_of_range(dir);
	test_wide_type(dir);
	test_options(dir);
	rmdir(dir);
	return check_done();
}
