/*
 * t-tracedat-corrupt.c - unit test of the trace.dat reader on damaged
 * files (lib/tracedat_read.c, tracedat_check.c, tracedat_unzip.c): a v6
 * and a zstd v7 file written by lib/tracedat_write.c, cut at every offset
 * of their headers (and at steps through their data) and with each header
 * byte changed, are either refused with a message naming the file or
 * opened and read to the end with no more events than were written;
 * compressed chunks that do not inflate are read as empty pages with a
 * warning naming the file.  Untrusted input: nothing may crash (the ASan
 * build checks the reads too).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "tracedat.h"

#define PAGE	4096
#define NR_PAGES 3
#define EV_LEN	16
#define MAX_READ 100000

#include "td_test_event.h"	/* fmt: the test event vt_test */
static const char clock_opt[] = "local global [x86-tsc] mono";

static char dir[] = "/dev/shm/t-tracedat-corrupt.XXXXXX";
static char raw[300], path[300];
static int nr_events;

/* The CPU file: NR_PAGES pages of events of type 1001, seq 0, 1, ... */
static void make_raw(void)
{
	static uint8_t buf[PAGE];
	struct vt_td_page pg;
	uint8_t ev[EV_LEN] = { 0xe9, 0x03 };
	uint64_t ts = 1000;
	uint32_t seq = 0;
	int fd;

	snprintf(raw, sizeof(raw), "%s/cpu.raw", dir);
	fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int p = 0; p < NR_PAGES; p++) {
		vt_td_page_init(&pg, buf, PAGE);
		for (;;) {
			memcpy(ev + 8, &seq, 4);
			if (vt_td_page_add(&pg, ts, ev, EV_LEN))
				break;
			seq++;
			ts += 7 + (seq * 13) % 5;
		}
		CHECK(write(fd, buf, PAGE) == PAGE);
	}
	nr_events = (int)seq;
	close(fd);
}

/* A sound file of version 6 or 7 (zstd) at @p; its bytes into *@n. */
static uint8_t *make_file(const char *p, int v7, size_t *n)
{
	const char *fmts[] = { fmt };
	size_t lens[] = { sizeof(fmt) - 1 };
	struct vt_td_writer *w;
	struct stat st;
	uint8_t *d = NULL;
	int fd = open(raw, O_RDONLY), ok;

	unlink(p);
	w = v7 ? vt_td_create_zstd(p, PAGE) : vt_td_create(p, PAGE);
	CHECK(w != NULL && fd >= 0);
	if (!w)
		return NULL;
	ok = !vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
				  vt_td_header_event, strlen(vt_td_header_event)) &&
	     !vt_td_write_ftrace_formats(w, 0, NULL, NULL) && !vt_td_systems_begin(w, 1) &&
	     !vt_td_write_system(w, "vt", 1, fmts, lens) && !vt_td_write_kallsyms(w, "", 0) &&
	     !vt_td_write_printk(w, "", 0) && !vt_td_write_cmdlines(w, "77 tester\n", 10) &&
	     !vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock_opt, sizeof(clock_opt)) &&
	     !vt_td_write_cpu_data(w, 1, &fd, NULL);
	close(fd);
	CHECK(ok);
	if (!ok) {
		vt_td_abort(w);
		return NULL;
	}
	CHECK(vt_td_close(w) == 0);
	fd = open(p, O_RDONLY);
	if (fd >= 0 && !fstat(fd, &st) && (d = malloc(st.st_size)) &&
	    read(fd, d, st.st_size) == st.st_size)
		*n = st.st_size;
	if (fd >= 0)
		close(fd);
	return d;
}

static void put_file(const uint8_t *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0 && write(fd, d, n) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
}

struct tally {
	int opened, refused, unnamed, too_many, warned;
};

/* Open the test file and read every event; -1 refused, else the count. */
static int read_all(struct tally *t)
{
	struct vt_td_reader *r = vt_td_read_open(path);
	struct vt_td_event ev;
	char buf[128];
	uint64_t v;
	int n = 0;

	if (!r) {
		t->refused++;
		if (!strstr(vt_err_msg(), path) && !t->unnamed++)
			fprintf(stderr, "refused without the file's name: %s\n", vt_err_msg());
		return -1;
	}
	t->opened++;
	t->warned += vt_td_read_warning(r) != NULL;
	(void)vt_td_read_truncated(r);
	(void)vt_td_read_clock(r);
	while (n < MAX_READ && vt_td_read_next_any(r, &ev) == 1) {
		n++;
		(void)vt_td_field_u64(&ev, "seq", &v);
		(void)vt_td_event_info(r, &ev, buf, sizeof(buf));
	}
	t->too_many += n > nr_events;
	vt_td_read_close(r);
	return n;
}

static void report(const char *what, const struct tally *t)
{
	if (t->unnamed || t->too_many)
		fprintf(stderr, "%s: %d opened, %d refused (%d without the file's name), "
			"%d read too many events\n", what, t->opened, t->refused, t->unnamed,
			t->too_many);
	CHECK(t->unnamed == 0);
	CHECK(t->too_many == 0);
}

/* Cut every @step bytes below @dense, every 509 past it. */
static void test_cuts(const uint8_t *d, size_t n, size_t dense, size_t step, const char *what)
{
	struct tally t = { 0 };

	for (size_t cut = 0; cut < n; cut += cut < dense ? step : 509) {
		put_file(d, cut);
		read_all(&t);
	}
	report(what, &t);
	CHECK(t.refused > 0);
}

/* Each byte in [@lo, @hi) inverted, and every @step-th elsewhere. */
static void test_bytes(const uint8_t *d, size_t n, size_t lo, size_t hi, size_t step,
		       const char *what)
{
	struct tally t = { 0 };
	uint8_t *c = malloc(n);

	CHECK(c != NULL);
	if (!c)
		return;
	for (size_t o = 0; o < n; o += o >= lo && o < hi ? 1 : step) {
		memcpy(c, d, n);
		c[o] = (uint8_t)~d[o];
		put_file(c, n);
		read_all(&t);
	}
	report(what, &t);
	CHECK(t.refused > 0 && t.opened > 0);
	free(c);
}

int main(void)
{
	uint8_t *v6, *v7, *fly, *z;
	size_t n6 = 0, n7 = 0, hdr6, zoff;
	struct tally t = { 0 };

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/bad.dat", dir);
	make_raw();
	v6 = make_file(path, 0, &n6);
	v7 = make_file(path, 1, &n7);
	CHECK(v6 && v7);
	if (!v6 || !v7)
		return check_done();

	/* sound: every event */
	put_file(v6, n6);
	CHECK(read_all(&t) == nr_events);
	put_file(v7, n7);
	CHECK(read_all(&t) == nr_events);
	CHECK(t.warned == 0);

	/* v6: the header up to its CPU table and clock */
	fly = memmem(v6, n6, "flyrecord", 10);
	CHECK(fly != NULL);
	hdr6 = fly ? (size_t)(fly - v6) + 10 + 16 + 8 + sizeof(clock_opt) : 0;
	test_cuts(v6, n6, hdr6, 7, "v6 cut");
	test_bytes(v6, hdr6, 0, 0, 11, "v6 bytes");
	/* v7: its compressed metadata every byte (where a damaged section
	 * inflated into a copy that libtracecmd could not load was refused
	 * by the copy's name, not the file's), the rest sampled */
	z = memmem(v7, n7, "\x28\xb5\x2f\xfd", 4);	/* zstd's frame magic */
	CHECK(z != NULL);
	zoff = z ? (size_t)(z - v7) : 0;
	test_cuts(v7, n7, n7, 7, "v7 cut");
	test_bytes(v7, n7, zoff, zoff + 400, 5, "v7 bytes");

	/* a chunk of the v7 pages that does not inflate: read as empty, with
	 * a warning naming the file (the chunk table comes right after the
	 * flyrecord section's header: its first chunk's data from 12 bytes
	 * after its count) */
	{
		uint8_t *c = malloc(n7);
		uint8_t *zf = z;
		struct vt_td_reader *r;
		int found = 0;

		CHECK(c != NULL && zf != NULL);
		/* the first frame is the metadata's; try each until the pages'
		 * chunk is the one spoiled */
		for (uint8_t *f = zf; c && f && f + 8 < v7 + n7; ) {
			memcpy(c, v7, n7);
			memset(c + (f - v7) + 4, 0xee, 4);
			put_file(c, n7);
			r = vt_td_read_open(path);
			if (r && vt_td_read_warning(r) &&
			    strstr(vt_td_read_warning(r), "compressed chunks do not inflate")) {
				CHECK(strstr(vt_td_read_warning(r), path) != NULL);
				CHECK(vt_td_read_truncated(r) == 1);
				found = 1;
			}
			if (r)
				vt_td_read_close(r);
			if (found)
				break;
			f = memmem(f + 4, (size_t)(v7 + n7 - (f + 4)), "\x28\xb5\x2f\xfd", 4);
		}
		CHECK(found);
		free(c);
	}

	unlink(path);
	unlink(raw);
	rmdir(dir);
	free(v6);
	free(v7);
	return check_done();
}
