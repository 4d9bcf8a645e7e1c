/*
 * t-tracedat-write.c - unit test of the trace.dat writer (lib/tracedat_write.c):
 * page counting (data, long, time-extend, padding events; lost flags;
 * malformed pages), section order, O_EXCL, a write failure (file size
 * limit) naming the file, and a round trip: synthetic pages written with
 * vt_td_* and read back through libtracecmd (lib/tracedat_read.c), clock
 * option included; events discarded from pages (vt_td_page_discard, as the
 * recorder drops other processes' syscalls) vanish and every later stamp
 * stays exact, zero time deltas included; a __data_loc string pointing
 * past its record, and a number past a short record's end, read as absent;
 * a signed field is sign-extended, a __rel_loc string found from its end;
 * a write failing at every point of a v7 file; raw CPU files
 * with a torn or malformed page.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "tracedat.h"

#define PAGE		4096
#define EV_ID		1001
#define NR_EVENTS	700	/* more than one page */

#include "td_test_event.h"	/* fmt: the test event vt_test */
/* the same event id with a __data_loc string instead of seq (dl_mode) */
static const char fmt_dl[] =
	"name: vt_test\nID: 1001\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:int delta;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:__rel_loc char[] rel;\toffset:16;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"name=%s\", __get_str(name)\n";
static const char clock_opt[] = "local global counter [x86-tsc] mono";

struct test_ev {
	uint16_t type;
	uint8_t flags, preempt;
	int32_t pid;
	uint32_t seq;
};

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void test_page_count(void)
{
	uint8_t pg[PAGE];
	struct vt_td_cpu_stats st;
	uint8_t *d = pg + VT_TD_PAGE_HDR_SIZE;
	size_t off = 0;

	memset(pg, 0, sizeof(pg));
	memset(&st, 0, sizeof(st));
	put64(pg, 1000);
	put32(d + off, 2 | 5 << 5);		/* small event, 8 bytes payload */
	off += 4 + 8;
	put32(d + off, 30 | 1 << 5);		/* time extend */
	off += 8;
	put32(d + off, 0);			/* long event: length word */
	put32(d + off + 4, 200);
	off += 4 + 200;
	put32(d + off, 29 | 7 << 5);		/* discarded event (padding) */
	put32(d + off + 4, 12);
	off += 4 + 12;
	put64(pg + 8, off | 1ULL << 31 | 1ULL << 30);
	put64(d + off, 42);			/* stored lost count */
	CHECK(vt_td_page_count(pg, PAGE, &st) == 0);
	CHECK(st.events == 2);
	CHECK(st.lost == 42);
	CHECK(st.lost_unknown == 0);
	CHECK(st.first_ts == 1000);

	put64(pg + 8, off | 1ULL << 31);	/* lost, count not stored */
	CHECK(vt_td_page_count(pg, PAGE, &st) == 0);
	CHECK(st.lost_unknown == 1 && st.pages == 2);
	/* stored, but the commit leaves no room for the count: unknown */
	put32(d + off, 29 | 1 << 5);
	put32(d + off + 4, PAGE - VT_TD_PAGE_HDR_SIZE - off - 8);
	put64(pg + 8, (PAGE - VT_TD_PAGE_HDR_SIZE - 4) | 1ULL << 31 | 1ULL << 30);
	CHECK(vt_td_page_count(pg, PAGE, &st) == 0);
	CHECK(st.lost == 42 && st.lost_unknown == 2 && st.events == 6 && st.pages == 3);

	/* commit beyond the page, over a page that is all padding: only the
	 * commit check refuses it */
	put32(d, 29);
	put64(pg + 8, PAGE);
	CHECK(vt_td_page_count(pg, PAGE, &st) == -1);
	put64(pg + 8, 16);
	put32(d, 0);
	put32(d + 4, 4000);			/* event longer than the commit */
	CHECK(vt_td_page_count(pg, PAGE, &st) == -1);
}

/* Discard mode of write_file_ks: events of pid DISCARD_PID (every third,
 * pairs of events share a stamp: zero deltas, a page's first event too)
 * are discarded from each page before it is written. */
#define DISCARD_PID	66
static int discard_mode;
static uint64_t nr_discarded;

static uint64_t ev_ts(int i)
{
	/* discard mode: the first event (discarded, delta 0) is followed by a
	 * time extend (a gap of 2^28 ticks) it must take its tick from */
	if (discard_mode)
		return 5000000000ULL + (uint64_t)(i / 2) * 1000 + (i ? 1ULL << 28 : 0);
	return 5000000000ULL + (uint64_t)i * 1000;
}

static int32_t ev_pid(int i)
{
	return discard_mode && i % 3 == 0 ? DISCARD_PID : 77;
}

static int keep_not_66(void *arg, const void *data, uint32_t len)
{
	const struct test_ev *e = data;

	(void)arg;
	return len < sizeof(*e) || e->pid != DISCARD_PID;
}

/* short_mode: every fifth event (i % 5 == 4) ends before its seq field */
static int short_mode;

/* dl_mode: event i's name is "s<i%10>" (i % 3 == 0), or its __data_loc
 * points past the record (i % 3 == 1) or runs past its end (i % 3 == 2). */
static int dl_mode;
/* version 7, zstd (vt_td_create_zstd); CPU 0 gets @zero_pages pages of zeros */
static int zstd_mode, zero_pages;

struct dl_ev {
	uint16_t type;
	uint8_t flags, preempt;
	int32_t pid;
	uint32_t loc;		/* offset | length << 16 */
	int32_t delta;		/* -i: read back sign-extended */
	uint32_t rel;		/* __rel_loc: offset from its own end (20) */
	char s[4];
};

static struct dl_ev dl_event(int i)
{
	struct dl_ev e = { EV_ID, 0, 0, 77, 0, -i, 0 | 3 << 16,
			   { 's', (char)('0' + i % 10), 0, 0 } };

	e.loc = i % 3 == 0 ? 20 | 3 << 16 : i % 3 == 1 ? 60000 | 3 << 16 : 20 | 200u << 16;
	return e;
}

static void put_page(int fd, uint8_t *buf)
{
	if (discard_mode)
		CHECK(vt_td_page_discard(buf, PAGE, keep_not_66, NULL, &nr_discarded) == 0);
	CHECK(write(fd, buf, PAGE) == PAGE);
}

/* Write a complete file of @nr events (seq 0..nr-1) on CPU 1 of 2. */
static int write_file_ks(const char *path, const char *raw0, const char *raw1, int nr,
			 const char *ks, size_t kslen)
{
	const char *fmts[] = { dl_mode ? fmt_dl : fmt };
	size_t lens[] = { dl_mode ? sizeof(fmt_dl) - 1 : sizeof(fmt) - 1 };
	struct vt_td_cpu_stats st[2];
	struct vt_td_writer *w;
	struct vt_td_page pg;
	uint8_t buf[PAGE];
	int fds[2], ret, pages = 1;

	fds[0] = open(raw0, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fds[1] = open(raw1, O_RDWR | O_CREAT | O_TRUNC, 0644);
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < zero_pages; i++)
		CHECK(write(fds[0], buf, PAGE) == PAGE);
	vt_td_page_init(&pg, buf, PAGE);
	for (int i = 0; i < nr; i++) {
		struct test_ev ev = { EV_ID, 0, 0, ev_pid(i), (uint32_t)i };
		struct dl_ev dl = dl_event(i);
		const void *p = dl_mode ? (const void *)&dl : (const void *)&ev;
		uint32_t len = dl_mode ? sizeof(dl) : short_mode && i % 5 == 4 ? 8 : sizeof(ev);
		uint64_t ts = ev_ts(i);

		if (vt_td_page_add(&pg, ts, p, len) == 1) {
			put_page(fds[1], buf);
			pages++;
			vt_td_page_init(&pg, buf, PAGE);
			CHECK(vt_td_page_add(&pg, ts, p, len) == 0);
		}
	}
	put_page(fds[1], buf);

	w = zstd_mode ? vt_td_create_zstd(path, PAGE) : vt_td_create(path, PAGE);
	if (!w)
		return -1;
	ret = vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page), vt_td_header_event,
				  strlen(vt_td_header_event)) ||
	      vt_td_write_ftrace_formats(w, 0, NULL, NULL) ||
	      vt_td_systems_begin(w, 1) ||
	      vt_td_write_system(w, "vt", 1, fmts, lens) ||
	      vt_td_write_kallsyms(w, ks, kslen) ||
	      vt_td_write_printk(w, "", 0) ||
	      vt_td_write_cmdlines(w, "77 tester\n", 10) ||
	      vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock_opt, sizeof(clock_opt)) ||
	      vt_td_write_cpu_data(w, 2, fds, st);
	close(fds[0]);
	close(fds[1]);
	if (ret) {
		vt_td_abort(w);
		return -1;
	}
	CHECK(st[0].events == 0 && st[1].events == (uint64_t)nr - nr_discarded);
	CHECK(st[0].pages == (uint64_t)zero_pages);
	CHECK(st[1].pages == (uint64_t)pages && pages > 1);
	CHECK(st[0].bytes == (uint64_t)zero_pages * PAGE && st[1].bytes == (uint64_t)pages * PAGE);
	return vt_td_close(w);
}

static int write_file(const char *path, const char *raw0, const char *raw1, int nr)
{
	return write_file_ks(path, raw0, raw1, nr, "", 0);
}

/*
 * Wherever the header ends in its page (kallsyms lengths over one page),
 * libtracecmd reads the TRACECLOCK text after the CPU offsets (v6) and the
 * file opens with its x86-tsc clock.  Before the fix the text was missing:
 * with the offsets ending in a page's last 8 bytes the "size" was the first
 * data page's timestamp (a recording of the KVM lab hit it, 1 in ~500).
 */
static void test_header_end_anywhere(const char *dir)
{
	char path[512], raw0[512], raw1[512], shm[] = "/dev/shm/vt-tdw.XXXXXX";
	static char ks[PAGE];
	int bad = 0;

	/* 4096 files, each fsync'ed by the writer: in memory where there is
	 * a tmpfs */
	if (mkdtemp(shm))
		dir = shm;
	snprintf(path, sizeof(path), "%s/ks.dat", dir);
	snprintf(raw0, sizeof(raw0), "%s/ksraw0", dir);
	snprintf(raw1, sizeof(raw1), "%s/ksraw1", dir);
	memset(ks, 'k', sizeof(ks));
	/* step 5: the failing ends (a u64 crossing the page end: 7 positions)
	 * are all hit; each open forks libtracecmd's probe, so not every one */
	for (size_t len = 0; len < PAGE; len += 5) {
		struct vt_td_reader *r;

		unlink(path);
		if (write_file_ks(path, raw0, raw1, NR_EVENTS, ks, len)) {
			bad++;
			continue;
		}
		r = vt_td_read_open(path);
		if (!r || strcmp(vt_td_read_clock(r), "x86-tsc")) {
			if (bad++ < 3)
				fprintf(stderr, "kallsyms %zu bytes: %s\n", len,
					r ? vt_td_read_clock(r) : vt_err_msg());
		}
		if (r)
			vt_td_read_close(r);
	}
	CHECK(bad == 0);
	unlink(path);
	unlink(raw0);
	unlink(raw1);
	if (dir == shm)
		rmdir(shm);
}

static void test_round_trip(const char *dir)
{
	char path[512], raw0[512], raw1[512];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	int n = 0, ok = 1;

	snprintf(path, sizeof(path), "%s/trace.dat", dir);
	snprintf(raw0, sizeof(raw0), "%s/raw0", dir);
	snprintf(raw1, sizeof(raw1), "%s/raw1", dir);
	CHECK(write_file(path, raw0, raw1, NR_EVENTS) == 0);
	/* O_EXCL: an existing file is not overwritten */
	CHECK(write_file(path, raw0, raw1, 1) == -1);
	CHECK(strstr(vt_err_msg(), "trace.dat: cannot create") != NULL);

	r = vt_td_read_open(path);
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "%s\n", vt_err_msg());
		return;
	}
	CHECK(vt_td_read_nr_cpus(r) == 2);
	CHECK_STR(vt_td_read_clock(r), "x86-tsc");
	CHECK_STR(vt_td_read_comm(r, 77), "tester");
	while (vt_td_read_next_any(r, &ev) == 1) {
		uint64_t seq = 0;

		ok &= ev.cpu == 1 && ev.pid == 77 && !strcmp(ev.name, "vt_test");
		ok &= vt_td_field_u64(&ev, "seq", &seq) == 0 && seq == (uint64_t)n;
		ok &= ev.ts == 5000000000ULL + (uint64_t)n * 1000;
		n++;
	}
	CHECK(ok);
	CHECK(n == NR_EVENTS);
	vt_td_read_close(r);
	unlink(path);
	unlink(raw0);
	unlink(raw1);
}

/* Write @dir/@name (write_file, the current mode) and open it for reading;
 * the paths go to @path, @raw0, @raw1 (512 bytes each).  NULL on failure. */
static struct vt_td_reader *write_and_open(const char *dir, const char *name, char *path,
					   char *raw0, char *raw1)
{
	struct vt_td_reader *r;

	snprintf(path, 512, "%s/%s", dir, name);
	snprintf(raw0, 512, "%s/raw0", dir);
	snprintf(raw1, 512, "%s/raw1", dir);
	CHECK(write_file(path, raw0, raw1, NR_EVENTS) == 0);
	r = vt_td_read_open(path);
	CHECK(r != NULL);
	return r;
}

static void close_and_remove(struct vt_td_reader *r, const char *path, const char *raw0,
			     const char *raw1)
{
	if (r)
		vt_td_read_close(r);
	unlink(path);
	unlink(raw0);
	unlink(raw1);
}

/* Discarded events are skipped by libtracecmd, the others keep their
 * exact stamps, the first event's tick borrowed from a time extend.  A
 * zero-delta event followed by another zero-delta one is kept (no tick to
 * borrow): here only a page's first, when it shares its stamp. */
static void test_discard(const char *dir)
{
	char path[512], raw0[512], raw1[512];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	int i = 0, ok = 1, n = 0, kept66 = 0, all66 = (NR_EVENTS + 2) / 3;

	discard_mode = 1;
	nr_discarded = 0;
	r = write_and_open(dir, "discard.dat", path, raw0, raw1);
	while (r && vt_td_read_next_any(r, &ev) == 1) {
		uint64_t seq = 0;

		CHECK(vt_td_field_u64(&ev, "seq", &seq) == 0);
		ok &= n > 0 || seq == 1;	/* event 0 discarded before the extend */
		while (i < (int)seq && ev_pid(i) == DISCARD_PID)
			i++;	/* discarded */
		ok &= seq == (uint64_t)i && ev.ts == ev_ts(i) && ev.pid == ev_pid(i);
		kept66 += ev.pid == DISCARD_PID;
		i++;
		n++;
	}
	while (i < NR_EVENTS && ev_pid(i) == DISCARD_PID)
		i++;	/* discarded at the end */
	CHECK(ok);
	CHECK(i == NR_EVENTS);
	CHECK(nr_discarded + kept66 == (uint64_t)all66);
	CHECK(kept66 <= 3);	/* one per page at most (3 pages) */
	CHECK(nr_discarded > 0 && ev_pid(0) == DISCARD_PID);
	CHECK(n == NR_EVENTS - (int)nr_discarded);
	close_and_remove(r, path, raw0, raw1);
	discard_mode = 0;
	nr_discarded = 0;
}

/* A __data_loc string is read only within its record: one pointing past
 * it or running past its end reads as absent (NULL), never as bytes
 * beyond (the issue #26 survivor; ASan watches under SAN=1). */
static void test_data_loc_bounds(const char *dir)
{
	char path[512], raw0[512], raw1[512], name[64];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	int i = 0, ok = 1;

	dl_mode = 1;
	r = write_and_open(dir, "dl.dat", path, raw0, raw1);
	dl_mode = 0;
	while (r && vt_td_read_next_any(r, &ev) == 1) {
		const char *v = vt_td_field_str(&ev, "name", name, sizeof(name));
		char want[3] = { 's', (char)('0' + i % 10), 0 };

		uint64_t delta = 0;

		if (i % 3 == 0)
			ok &= v && !strcmp(v, want);
		else
			ok &= v == NULL;
		/* a signed int field, sign-extended; a __rel_loc string */
		ok &= vt_td_field_u64(&ev, "delta", &delta) == 0 && delta == (uint64_t)(int64_t)-i;
		v = vt_td_field_str(&ev, "rel", name, sizeof(name));
		ok &= v && !strcmp(v, want);
		i++;
	}
	CHECK(ok);
	CHECK(i == NR_EVENTS);
	close_and_remove(r, path, raw0, raw1);
}

/* A numeric field past the end of a short record reads as absent. */
static void test_short_record(const char *dir)
{
	char path[512], raw0[512], raw1[512];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	uint64_t seq = 0;
	int i = 0, ok = 1;

	short_mode = 1;
	r = write_and_open(dir, "short.dat", path, raw0, raw1);
	short_mode = 0;
	while (r && vt_td_read_next_any(r, &ev) == 1) {
		int rc = vt_td_field_u64(&ev, "seq", &seq);

		ok &= i % 5 == 4 ? rc == -1 : rc == 0 && seq == (uint64_t)i;
		i++;
	}
	CHECK(ok);
	CHECK(i == NR_EVENTS);
	close_and_remove(r, path, raw0, raw1);
}

static void test_order_and_errors(const char *dir)
{
	char path[512];
	struct vt_td_writer *w;
	struct rlimit rl = { 64, 64 };
	struct rlimit old;
	uint8_t big[PAGE];

	snprintf(path, sizeof(path), "%s/order.dat", dir);
	w = vt_td_create(path, PAGE);
	CHECK(w != NULL);
	CHECK(vt_td_write_kallsyms(w, "", 0) == -1);	/* before headers */
	CHECK(strstr(vt_err_msg(), "out of order") != NULL);
	vt_td_abort(w);
	CHECK(access(path, F_OK) == -1);		/* abort removes it */
	w = vt_td_create(path, PAGE);			/* a system before their count */
	CHECK(w && !vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
					vt_td_header_event, strlen(vt_td_header_event)) &&
	      !vt_td_write_ftrace_formats(w, 0, NULL, NULL));
	CHECK(w && vt_td_write_system(w, "vt", 0, NULL, NULL) == -1);
	CHECK(strstr(vt_err_msg(), "order.dat: trace.dat writer: system vt out of order") != NULL);
	if (w)
		vt_td_abort(w);
	CHECK(vt_td_create(path, 1000) == NULL);	/* page size not a power of 2 */

	/* a failing write (file size limit, like a full disk) names the file */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	rl.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
	w = vt_td_create(path, PAGE);
	CHECK(w != NULL);
	memset(big, 'x', sizeof(big));
	CHECK(vt_td_write_headers(w, (char *)big, sizeof(big), vt_td_header_event, 10) == -1);
	CHECK(strstr(vt_err_msg(), "order.dat: write failed at offset") != NULL);
	setrlimit(RLIMIT_FSIZE, &old);
	vt_td_abort(w);
}

/*
 * Version 7 with zstd: the same events read back as from v6 (round trip,
 * discarded events), and pages that compress past the ratio readers accept
 * (128 pages of zeros on CPU 0: one chunk would be ~9000:1) are written
 * in smaller chunks, so the file opens.
 */
static void test_zstd(const char *dir)
{
	char path[512], raw0[512], raw1[512], head[12];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	int fd, n = 0;

	zstd_mode = 1;
	test_round_trip(dir);
	test_discard(dir);
	zero_pages = 128;
	r = write_and_open(dir, "zero.dat", path, raw0, raw1);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, head, sizeof(head)) == sizeof(head));
	if (fd >= 0)
		close(fd);
	CHECK(!memcmp(head + 10, "7", 2));
	while (r && vt_td_read_next_any(r, &ev) == 1)
		n += ev.cpu == 1;
	CHECK(n == NR_EVENTS);
	if (!r)
		fprintf(stderr, "%s\n", vt_err_msg());
	close_and_remove(r, path, raw0, raw1);
	zero_pages = 0;
	zstd_mode = 0;
}

/*
 * v7: the BUFFER option names the clock the TRACECLOCK option selects
 * ("[name]") when its name fits the writer's 63 bytes; a longer one is
 * left out (the BUFFER's clock empty).
 */
static void test_clock_name(const char *dir)
{
	char path[512], opt[128], key[80];
	static uint8_t file[65536];

	snprintf(path, sizeof(path), "%s/clock.dat", dir);
	for (int len = 63; len <= 64; len++) {
		struct vt_td_writer *w;
		ssize_t n = 0;
		int fd, found = 0;

		key[0] = 0;
		for (int i = 0; i < len; i++)
			key[1 + i] = (char)('a' + i % 26);
		key[1 + len] = 0;
		snprintf(opt, sizeof(opt), "local [%s] mono", key + 1);
		unlink(path);
		w = vt_td_create_zstd(path, PAGE);
		CHECK(w && !vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
						vt_td_header_event, strlen(vt_td_header_event)) &&
		      !vt_td_write_ftrace_formats(w, 0, NULL, NULL) && !vt_td_systems_begin(w, 0) &&
		      !vt_td_write_kallsyms(w, "", 0) && !vt_td_write_printk(w, "", 0) &&
		      !vt_td_write_cmdlines(w, "", 0) &&
		      !vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, opt, strlen(opt) + 1) &&
		      !vt_td_write_cpu_data(w, 0, NULL, NULL));
		CHECK(w && vt_td_close(w) == 0);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0 && (n = read(fd, file, sizeof(file))) > 0);
		if (fd >= 0)
			close(fd);
		/* "\0name\0": the BUFFER's clock after its empty instance name */
		for (uint8_t *p = file; n > 0 && (p = memmem(p, n - (p - file), key, len + 2));
		     p++)
			found++;
		CHECK(found == (len == 63));
	}
	unlink(path);
}

/*
 * Every section of a v7 file written by the writer under the file size
 * limit @lim (RLIM_INFINITY: none), from the CPU files @raw0, @raw1: 0
 * written and closed, -1 failed (the writer aborted: the file removed).
 */
static int write_v7_all(const char *path, const char *raw0, const char *raw1, rlim_t lim)
{
	const char *fmts[] = { fmt };
	size_t lens[] = { sizeof(fmt) - 1 };
	struct vt_td_cpu_stats st[2];
	struct vt_td_writer *w;
	struct rlimit old, rl;
	int fds[2], ret;

	fds[0] = open(raw0, O_RDONLY);
	fds[1] = open(raw1, O_RDONLY);
	getrlimit(RLIMIT_FSIZE, &old);
	rl = old;
	rl.rlim_cur = lim;
	setrlimit(RLIMIT_FSIZE, &rl);
	w = vt_td_create_zstd(path, PAGE);
	ret = !w || vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
					vt_td_header_event, strlen(vt_td_header_event)) ||
	      vt_td_write_ftrace_formats(w, 1, fmts, lens) ||
	      vt_td_systems_begin(w, 1) ||
	      vt_td_write_system(w, "vt", 1, fmts, lens) ||
	      vt_td_write_kallsyms(w, "ffffffff81000000 T _text\n", 26) ||
	      vt_td_write_printk(w, "0x1 : \"x\"\n", 11) ||
	      vt_td_write_cmdlines(w, "77 tester\n", 10) ||
	      vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock_opt, sizeof(clock_opt)) ||
	      vt_td_write_cpu_data(w, 2, fds, st);
	if (ret && w)
		vt_td_abort(w);
	else if (w)
		ret = vt_td_close(w);
	setrlimit(RLIMIT_FSIZE, &old);
	close(fds[0]);
	close(fds[1]);
	return ret ? -1 : 0;
}

/*
 * A write failing all over a v7 file (the file size limit moved 3 bytes at
 * a time over its last KiB - the CPU chunks, options and strings - and 11
 * before, 41 under ASan, up to the size of the very file the sequence
 * writes; CPU 0's pages of zeros written a chunk a page; v6's are the ones
 * test_order_and_errors and the recorder's fault tests reach): every
 * writer call fails with a message naming the file and "File too large",
 * none succeeds, nothing is left.  Raw CPU files with a torn last page and
 * two malformed pages after a sound one: whole pages copied, the bad ones
 * counted from the first.
 */
static void test_write_everywhere(const char *dir)
{
	char path[512], raw0[512], raw1[512], shm[] = "/dev/shm/vt-tdw.XXXXXX";
	struct stat sb;
	off_t size;
	int fails, tried;
	/* under ASan each try costs ~5x: coarser steps before the last KiB */
	const char *san = getenv("VT_SAN");
	off_t step = san && !strcmp(san, "1") ? 41 : 11;

	/* thousands of files, each fsync'ed: in memory where there is a
	 * tmpfs */
	if (mkdtemp(shm))
		dir = shm;

	snprintf(raw0, sizeof(raw0), "%s/ev-raw0", dir);
	snprintf(raw1, sizeof(raw1), "%s/ev-raw1", dir);
	snprintf(path, sizeof(path), "%s/ev.dat", dir);
	signal(SIGXFSZ, SIG_IGN);
	zstd_mode = 1;
	zero_pages = 8;		/* a chunk too compressible: written page by page */
	unlink(path);
	CHECK(write_file(path, raw0, raw1, NR_EVENTS) == 0);
	zero_pages = 0;
	zstd_mode = 0;
	/* the size of the file the sequence below writes (more than
	 * write_file's: formats, kallsyms, printk) */
	unlink(path);
	CHECK(write_v7_all(path, raw0, raw1, RLIM_INFINITY) == 0);
	CHECK(stat(path, &sb) == 0);
	size = sb.st_size;
	fails = tried = 0;
	for (off_t lim = 0; lim < size; lim += lim < size - 1024 ? step : 3) {
		unlink(path);
		tried++;
		if (!write_v7_all(path, raw0, raw1, (rlim_t)lim)) {
			CHECK(0);
			continue;
		}
		fails++;
		if (!strstr(vt_err_msg(), "ev.dat") || !strstr(vt_err_msg(), "File too large")) {
			if (fails < 3)
				fprintf(stderr, "limit %lld: %s\n", (long long)lim, vt_err_msg());
			CHECK(0);
		}
		CHECK(access(path, F_OK) == -1);
	}
	CHECK(fails == tried && tried > (step == 11 ? 400 : 300));

	/* a torn page at the end of CPU 1's file, a malformed page in CPU
	 * 0's: whole pages copied, the bad one counted */
	{
		struct vt_td_cpu_stats st[2];
		struct vt_td_writer *w;
		const char *fmts[] = { fmt };
		size_t lens[] = { sizeof(fmt) - 1 };
		uint8_t page[PAGE];
		int fds[2];

		memset(page, 0, sizeof(page));
		fds[0] = open(raw0, O_RDWR | O_TRUNC);
		CHECK(write(fds[0], page, PAGE) == PAGE);
		memset(page, 0xff, sizeof(page));
		CHECK(write(fds[0], page, PAGE) == PAGE);
		CHECK(write(fds[0], page, PAGE) == PAGE);
		fds[1] = open(raw1, O_RDWR | O_APPEND);
		CHECK(write(fds[1], page, 100) == 100);
		unlink(path);
		w = vt_td_create_zstd(path, PAGE);
		CHECK(w && !vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
						 vt_td_header_event, strlen(vt_td_header_event)) &&
		      !vt_td_write_ftrace_formats(w, 0, NULL, NULL) && !vt_td_systems_begin(w, 1) &&
		      !vt_td_write_system(w, "vt", 1, fmts, lens) &&
		      !vt_td_write_kallsyms(w, "", 0) && !vt_td_write_printk(w, "", 0) &&
		      !vt_td_write_cmdlines(w, "", 0) && !vt_td_write_cpu_data(w, 2, fds, st));
		CHECK(st[0].bad_pages == 2 && st[0].first_bad == PAGE && st[0].bytes == 3 * PAGE);
		CHECK(st[1].bytes % PAGE == 0 && st[1].bad_pages == 0);
		CHECK(w && vt_td_close(w) == 0);
		close(fds[0]);
		close(fds[1]);
	}
	unlink(path);
	unlink(raw0);
	unlink(raw1);
	if (dir == shm)
		rmdir(shm);
}

int main(void)
{
	char dir[] = "/tmp/vt-tdw.XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_page_count();
	test_round_trip(dir);
	test_discard(dir);
	test_data_loc_bounds(dir);
	test_short_record(dir);
	test_order_and_errors(dir);
	test_header_end_anywhere(dir);
	test_zstd(dir);
	test_clock_name(dir);
	test_write_everywhere(dir);
	rmdir(dir);
	return check_done();
}
