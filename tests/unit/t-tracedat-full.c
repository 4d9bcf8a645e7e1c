/*
 * t-tracedat-full.c - unit test of the trace.dat writer's failures and
 * rare paths (lib/tracedat_write.c): a file size limit (RLIMIT_FSIZE, the
 * disk full at any byte) met at every offset of a v6 and a v7 file makes
 * the call that hit it fail with a message naming the file, and the abort
 * removes it; past the file's size the bytes are those written without a
 * limit.  Every call out of order, refused options and sizes, CPU files
 * with a torn last page, malformed pages and lost events counted, and
 * vt_td_page_discard taking a tick from every kind of entry that may
 * follow a discarded zero-delta event.
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
#include "check.h"
#include "err.h"
#include "tracedat.h"

#define PAGE	4096
#define NR_PAGES 3
#define EV_LEN	16

#include "td_test_event.h"	/* fmt: the test event vt_test */
static const char clock_opt[] = "local global [x86-tsc] mono";

static char dir[] = "/dev/shm/t-tracedat-full.XXXXXX";
static char raw[2][300];

/* The CPU files: CPU 0 empty, CPU 1 NR_PAGES pages of events. */
static void make_raw(void)
{
	static uint8_t buf[PAGE];
	struct vt_td_page pg;
	uint8_t ev[EV_LEN] = { 0xe9, 0x03 };
	uint64_t ts = 1000;
	int fd;

	for (int c = 0; c < 2; c++)
		snprintf(raw[c], sizeof(raw[c]), "%s/cpu%d.raw", dir, c);
	fd = open(raw[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	close(fd);
	fd = open(raw[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int p = 0; p < NR_PAGES; p++) {
		vt_td_page_init(&pg, buf, PAGE);
		/* different pages, so that v7's chunks are not trivial */
		for (uint32_t i = 0; vt_td_page_add(&pg, ts, ev, EV_LEN) == 0; i++) {
			memcpy(ev + 8, &i, 4);
			ts += 7 + (i * 13) % 5;
		}
		CHECK(write(fd, buf, PAGE) == PAGE);
	}
	close(fd);
}

/* The whole writer sequence into @path; 0, or -1 with the message. */
static int write_all(const char *path, int v7)
{
	const char *fmts[] = { fmt };
	size_t lens[] = { sizeof(fmt) - 1 };
	static const char ks[] = "ffffffff81000000 T _stext\n";
	struct vt_td_writer *w;
	int fds[2], ret;

	w = v7 ? vt_td_create_zstd(path, PAGE) : vt_td_create(path, PAGE);
	if (!w)
		return -1;
	fds[0] = open(raw[0], O_RDONLY);
	fds[1] = open(raw[1], O_RDONLY);
	ret = vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
				  vt_td_header_event, strlen(vt_td_header_event)) ||
	      vt_td_write_ftrace_formats(w, 1, fmts, lens) ||
	      vt_td_systems_begin(w, 1) ||
	      vt_td_write_system(w, "vt", 1, fmts, lens) ||
	      vt_td_write_kallsyms(w, ks, sizeof(ks) - 1) ||
	      vt_td_write_printk(w, "0x1 : \"x\"\n", 10) ||
	      vt_td_write_cmdlines(w, "77 tester\n", 10) ||
	      vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock_opt, sizeof(clock_opt)) ||
	      vt_td_add_option(w, VT_TD_OPT_UNAME, "Linux t 6 #1 x86_64", 20) ||
	      vt_td_write_cpu_data(w, 2, fds, NULL);
	close(fds[0]);
	close(fds[1]);
	if (ret) {
		vt_td_abort(w);
		return -1;
	}
	return vt_td_close(w);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	struct stat st;
	uint8_t *d;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		*n = 0;
		return NULL;
	}
	d = malloc(st.st_size ? st.st_size : 1);
	*n = d && read(fd, d, st.st_size) == st.st_size ? (size_t)st.st_size : 0;
	close(fd);
	return d;
}

/*
 * The file of version @v7 written under a size limit at each offset in
 * [0, size + 16) - every byte of the header (up to the CPU table, its
 * clock text and a few bytes of padding), @step bytes apart past it:
 * below the size, some call fails naming the file and leaves none; from
 * it on, the same bytes.  (The padding to the first page is written a
 * byte at a time: a limit in it costs thousands of writes.)
 */
static void test_full_disk(int v7, size_t step)
{
	char path[400];
	struct rlimit old, rl;
	uint8_t *want, *got;
	size_t size, n;
	int bad_msg = 0, left = 0, differ = 0, passed_short = 0, failed_whole = 0;
	size_t dense;
	uint8_t *fly;

	snprintf(path, sizeof(path), "%s/full%d.dat", dir, v7 ? 7 : 6);
	unlink(path);
	CHECK(write_all(path, v7) == 0);
	want = slurp(path, &size);
	CHECK(want != NULL && size > (size_t)NR_PAGES * (v7 ? 0 : PAGE));
	unlink(path);
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	fly = v7 ? NULL : memmem(want, size, "flyrecord", 10);
	dense = fly ? (size_t)(fly - want) + 10 + 2 * 16 + 8 + sizeof(clock_opt) + 8 : size;
	CHECK(v7 || fly != NULL);
	for (size_t lim = 0; lim < size + 16; lim += lim < dense ? 1 : step) {
		int rc;

		rl.rlim_cur = lim;
		rl.rlim_max = old.rlim_max;
		/* nothing is printed while the limit holds: stderr may be a
		 * file past it */
		if (setrlimit(RLIMIT_FSIZE, &rl))
			break;
		rc = write_all(path, v7);
		setrlimit(RLIMIT_FSIZE, &old);
		if (lim < size) {
			passed_short += rc == 0;
			if (rc == 0)
				fprintf(stderr, "v%d limit %zu: passed\n", v7 ? 7 : 6, lim);
			if (!strstr(vt_err_msg(), path) ||
			    (!strstr(vt_err_msg(), "write failed") &&
			     !strstr(vt_err_msg(), "short write"))) {
				if (!bad_msg++)
					fprintf(stderr, "v%d limit %zu: \"%s\"\n", v7 ? 7 : 6, lim,
						vt_err_msg());
			}
			if (access(path, F_OK) == 0) {
				left++;
				unlink(path);
			}
		} else {
			failed_whole += rc != 0;
			got = slurp(path, &n);
			differ += !got || n != size || memcmp(got, want, size);
			free(got);
			unlink(path);
		}
	}
	CHECK(passed_short == 0);
	CHECK(bad_msg == 0);
	CHECK(left == 0);
	CHECK(failed_whole == 0);
	CHECK(differ == 0);
	free(want);
}

static void test_order(void)
{
	char path[400];
	const char *fmts[] = { fmt };
	size_t lens[] = { sizeof(fmt) - 1 };
	struct vt_td_writer *w;
	int fds[2];

	snprintf(path, sizeof(path), "%s/order.dat", dir);
	unlink(path);
	CHECK(vt_td_create(path, 16) == NULL);
	CHECK(strstr(vt_err_msg(), "bad ring-buffer page size 16") != NULL);
	CHECK(vt_td_create_zstd(path, 3 * PAGE) == NULL);

	for (int v7 = 0; v7 < 2; v7++) {
		w = v7 ? vt_td_create_zstd(path, PAGE) : vt_td_create(path, PAGE);
		CHECK(w != NULL);
		if (!w)
			return;
		/* a second writer of the same file: refused by name */
		CHECK(vt_td_create(path, PAGE) == NULL);
		CHECK(strstr(vt_err_msg(), "cannot create") && strstr(vt_err_msg(), path));

		CHECK(vt_td_write_ftrace_formats(w, 0, NULL, NULL) == -1);
		CHECK(strstr(vt_err_msg(), "ftrace formats written out of order") != NULL);
		CHECK(vt_td_systems_begin(w, 1) == -1);
		CHECK(strstr(vt_err_msg(), "systems out of order") != NULL);
		CHECK(vt_td_write_system(w, "vt", 1, fmts, lens) == -1);
		CHECK(strstr(vt_err_msg(), "system vt out of order") != NULL);
		CHECK(vt_td_write_printk(w, "", 0) == -1);
		CHECK(vt_td_write_cmdlines(w, "", 0) == -1);
		CHECK(vt_td_write_cpu_data(w, 0, NULL, NULL) == -1);
		CHECK(strstr(vt_err_msg(), "cpu data written out of order") != NULL);
		CHECK(vt_td_write_kallsyms(w, "", (size_t)UINT32_MAX + 1) == -1);
		CHECK(strstr(vt_err_msg(), "kallsyms too large") != NULL);
		CHECK(vt_td_write_printk(w, "", (size_t)UINT32_MAX + 1) == -1);
		CHECK(strstr(vt_err_msg(), "printk formats too large") != NULL);
		CHECK(vt_td_add_option(w, VT_TD_OPT_DONE, "", 0) == -1);
		CHECK(strstr(vt_err_msg(), "option 0 refused") != NULL);

		CHECK(vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
					  vt_td_header_event, strlen(vt_td_header_event)) == 0);
		CHECK(vt_td_write_headers(w, "", 0, "", 0) == -1);
		CHECK(vt_td_write_ftrace_formats(w, 0, NULL, NULL) == 0);
		/* no systems at all; then one more is out of order */
		CHECK(vt_td_systems_begin(w, 0) == 0);
		CHECK(vt_td_write_system(w, "vt", 1, fmts, lens) == -1);
		CHECK(vt_td_write_kallsyms(w, "", 0) == 0);
		CHECK(vt_td_write_printk(w, "", 0) == 0);
		CHECK(vt_td_close(w) == -1);
		CHECK(strstr(vt_err_msg(), "closed before its cpu data") != NULL);
		unlink(path);

		/* options: an empty one, then up to the table's end (their
		 * texts NUL-terminated, as libtracecmd strdup()s them) */
		w = v7 ? vt_td_create_zstd(path, PAGE) : vt_td_create(path, PAGE);
		CHECK(w != NULL);
		if (!w)
			return;
		CHECK(vt_td_add_option(w, VT_TD_OPT_UNAME, "", 1) == 0);
		/* a clock option without brackets, one with "[" only */
		CHECK(vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, "local", 6) == 0);
		CHECK(vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, "[local", 7) == 0);
		for (int i = 3; i < 256; i++)
			CHECK(vt_td_add_option(w, VT_TD_OPT_CPUSTAT, "x", 2) == 0);
		CHECK(vt_td_add_option(w, VT_TD_OPT_CPUSTAT, "x", 2) == -1);
		CHECK(strstr(vt_err_msg(), "option 2 refused") != NULL);
		fds[0] = open(raw[1], O_RDONLY);
		fds[1] = open(raw[0], O_RDONLY);
		CHECK(vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
					  vt_td_header_event, strlen(vt_td_header_event)) == 0 &&
		      vt_td_write_ftrace_formats(w, 0, NULL, NULL) == 0 &&
		      vt_td_systems_begin(w, 0) == 0 && vt_td_write_kallsyms(w, "", 0) == 0 &&
		      vt_td_write_printk(w, "", 0) == 0 && vt_td_write_cmdlines(w, "", 0) == 0 &&
		      vt_td_write_cpu_data(w, 2, fds, NULL) == 0);
		close(fds[0]);
		close(fds[1]);
		CHECK(vt_td_close(w) == 0);
		if (!v7) {
			struct vt_td_reader *r = vt_td_read_open(path);

			CHECK(r != NULL);
			if (r)
				vt_td_read_close(r);
			else
				fprintf(stderr, "%s\n", vt_err_msg());
		}
		unlink(path);
	}
}

/* A CPU file of a page, a torn half page after it, a malformed page and
 * pages with lost events: what the copy counts. */
static void test_cpu_stats(void)
{
	static uint8_t pg[4][PAGE];
	char path[400], cpu[400];
	struct vt_td_cpu_stats st[1];
	struct vt_td_writer *w;
	uint64_t commit, lost = 5;
	int fd;

	snprintf(path, sizeof(path), "%s/stats.dat", dir);
	snprintf(cpu, sizeof(cpu), "%s/stats.raw", dir);
	memset(pg, 0, sizeof(pg));
	/* 0: one event, no loss; 1: commit past the page; 2: lost events with
	 * their count stored; 3: lost events, count not stored */
	for (int i = 0; i < 4; i++) {
		uint64_t ts = 100 + i;

		memcpy(pg[i], &ts, 8);
		pg[i][16] = 4 | 1 << 5;	/* type_len 4: 16 bytes, delta 1 */
	}
	commit = 20;
	memcpy(pg[0] + 8, &commit, 8);
	commit = PAGE;
	memcpy(pg[1] + 8, &commit, 8);
	commit = 20 | 1ULL << 31 | 1ULL << 30;
	memcpy(pg[2] + 8, &commit, 8);
	memcpy(pg[2] + 16 + 20, &lost, 8);
	commit = 20 | 1ULL << 31;
	memcpy(pg[3] + 8, &commit, 8);
	fd = open(cpu, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, pg, sizeof(pg)) == sizeof(pg));
	CHECK(write(fd, pg, PAGE / 2) == PAGE / 2);	/* torn */
	for (int v7 = 0; v7 < 2; v7++) {
		unlink(path);
		w = v7 ? vt_td_create_zstd(path, PAGE) : vt_td_create(path, PAGE);
		CHECK(w != NULL);
		if (!w)
			break;
		CHECK(vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page),
					  vt_td_header_event, strlen(vt_td_header_event)) == 0 &&
		      vt_td_write_ftrace_formats(w, 0, NULL, NULL) == 0 &&
		      vt_td_systems_begin(w, 0) == 0 && vt_td_write_kallsyms(w, "", 0) == 0 &&
		      vt_td_write_printk(w, "", 0) == 0 && vt_td_write_cmdlines(w, "", 0) == 0 &&
		      vt_td_write_cpu_data(w, 1, &fd, st) == 0);
		CHECK(st[0].pages == 3);	/* the malformed one not counted */
		CHECK(st[0].bytes == 4 * PAGE);
		CHECK(st[0].bad_pages == 1 && st[0].first_bad == PAGE);
		CHECK(st[0].lost == 5 && st[0].lost_unknown == 1);
		CHECK(st[0].events == 3);
		CHECK(st[0].first_ts == 100);
		CHECK(vt_td_close(w) == 0);
	}
	/* a CPU file that is not a file: named */
	unlink(path);
	w = vt_td_create(path, PAGE);
	CHECK(w != NULL);
	if (w) {
		int bad = -1;

		CHECK(vt_td_write_headers(w, "", 0, "", 0) == 0 &&
		      vt_td_write_ftrace_formats(w, 0, NULL, NULL) == 0 &&
		      vt_td_systems_begin(w, 0) == 0 && vt_td_write_kallsyms(w, "", 0) == 0 &&
		      vt_td_write_printk(w, "", 0) == 0 && vt_td_write_cmdlines(w, "", 0) == 0);
		CHECK(vt_td_write_cpu_data(w, 1, &bad, NULL) == -1);
		CHECK(strstr(vt_err_msg(), "cpu0 data: cannot stat") && strstr(vt_err_msg(), path));
		vt_td_abort(w);
	}
	/* a pipe: cannot seek */
	w = vt_td_create(path, PAGE);
	CHECK(w != NULL);
	if (w) {
		int p[2];

		CHECK(pipe(p) == 0);
		CHECK(vt_td_write_headers(w, "", 0, "", 0) == 0 &&
		      vt_td_write_ftrace_formats(w, 0, NULL, NULL) == 0 &&
		      vt_td_systems_begin(w, 0) == 0 && vt_td_write_kallsyms(w, "", 0) == 0 &&
		      vt_td_write_printk(w, "", 0) == 0 && vt_td_write_cmdlines(w, "", 0) == 0);
		CHECK(vt_td_write_cpu_data(w, 1, &p[0], NULL) == -1);
		CHECK(strstr(vt_err_msg(), "cpu0 data: cannot seek") != NULL);
		vt_td_abort(w);
		close(p[0]);
		close(p[1]);
	}
	/* a write-only CPU file: cannot read */
	w = vt_td_create(path, PAGE);
	CHECK(w != NULL);
	if (w) {
		int wo = open(cpu, O_WRONLY);

		CHECK(vt_td_write_headers(w, "", 0, "", 0) == 0 &&
		      vt_td_write_ftrace_formats(w, 0, NULL, NULL) == 0 &&
		      vt_td_systems_begin(w, 0) == 0 && vt_td_write_kallsyms(w, "", 0) == 0 &&
		      vt_td_write_printk(w, "", 0) == 0 && vt_td_write_cmdlines(w, "", 0) == 0);
		CHECK(vt_td_write_cpu_data(w, 1, &wo, NULL) == -1);
		CHECK(strstr(vt_err_msg(), "cpu0 data: read failed") != NULL);
		vt_td_abort(w);
		close(wo);
	}
	close(fd);
	unlink(cpu);
	unlink(path);
}

/* ---- vt_td_page_count / vt_td_page_discard on hand-made pages ---- */

static uint8_t page[PAGE];
static size_t used;

static void pg_reset(void)
{
	memset(page, 0, sizeof(page));
	used = 0;
}

static void pg_commit(void)
{
	uint64_t c = used;

	memcpy(page + 8, &c, 8);
}

static void pg_word(uint32_t v)
{
	memcpy(page + 16 + used, &v, 4);
	used += 4;
}

/* A data event of @words payload words, the first byte @tag. */
static void pg_data(uint32_t delta, uint32_t words, uint8_t tag)
{
	pg_word(words | delta << 5);
	page[16 + used] = tag;
	used += 4 * words;
}

static void pg_pad(uint32_t delta, uint32_t len)
{
	pg_word(29 | delta << 5);
	pg_word(len);
	used += len - 4;
}

static void pg_time(uint32_t type, uint32_t lo, uint32_t hi)
{
	pg_word(type | lo << 5);
	pg_word(hi);
}

static uint32_t word_at(size_t off)
{
	uint32_t v;

	memcpy(&v, page + 16 + off, 4);
	return v;
}

static int keep_not_dd(void *arg, const void *data, uint32_t len)
{
	(void)arg;
	return !len || *(const uint8_t *)data != 0xdd;
}

static uint64_t discard(void)
{
	uint64_t n = 0;

	pg_commit();
	CHECK(vt_td_page_discard(page, PAGE, keep_not_dd, NULL, &n) == 0);
	return n;
}

static void test_discard_ticks(void)
{
	struct vt_td_cpu_stats st = { 0 };

	/* a zero-delta event at the page's end: discarded, given a tick */
	pg_reset();
	pg_data(3, 2, 1);
	pg_data(0, 2, 0xdd);
	CHECK(discard() == 1);
	CHECK(word_at(12) == (29 | 1 << 5));

	/* followed by a padding that is the page's rest: no tick needed */
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_word(29);
	pg_word(0);
	CHECK(discard() == 1);

	/* followed by an absolute time stamp */
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_time(31, 5, 0);
	CHECK(discard() == 1);

	/* followed by a time extend: one tick taken from it (2^27 + 5 ->
	 * 2^27 + 4, the borrow crossing no word; 1 -> none to take) */
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_time(30, 5, 1);
	CHECK(discard() == 1);
	CHECK(word_at(12) == (30 | 4 << 5) && word_at(16) == 1);
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_time(30, 0, 1);
	CHECK(discard() == 1);
	CHECK(word_at(12) == (30 | ((1U << 27) - 1) << 5) && word_at(16) == 0);
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_time(30, 1, 0);
	CHECK(discard() == 0);
	CHECK((word_at(0) & 0x1f) == 2);

	/* followed by a padding of delta 1 (a padding keeps at least 1) or
	 * 2; by an event of delta 0 or 1 */
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_pad(1, 8);
	CHECK(discard() == 0);
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_pad(2, 8);
	CHECK(discard() == 1);
	CHECK(word_at(12) == (29 | 1 << 5));
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_data(0, 2, 1);
	CHECK(discard() == 0);
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_data(1, 2, 1);
	CHECK(discard() == 1);
	CHECK(word_at(12) == 2);

	/* a time extend cut by the commit after the discarded event */
	pg_reset();
	pg_data(0, 2, 0xdd);
	pg_word(30 | 5 << 5);
	{
		uint64_t n = 0;

		pg_commit();
		CHECK(vt_td_page_discard(page, PAGE, keep_not_dd, NULL, &n) == -1);
		CHECK(n == 0);
	}

	/* two discarded in a row, the second of delta 0: one padding */
	pg_reset();
	pg_data(2, 2, 0xdd);
	pg_data(0, 3, 0xdd);
	pg_data(1, 2, 1);
	CHECK(discard() == 2);
	CHECK(word_at(0) == (29 | 2 << 5) && word_at(4) == 8 + 16);

	/* a type-0 (long) event discarded; an empty one kept */
	pg_reset();
	pg_word(0 | 4 << 5);
	pg_word(12);
	page[16 + used] = 0xdd;
	used += 8;
	pg_word(0 | 4 << 5);
	pg_word(4);
	CHECK(discard() == 1);
	CHECK((word_at(0) & 0x1f) == 29);

	/* malformed: shorter than a page header, a header cut, a long
	 * event's length word cut, an event past the commit */
	CHECK(vt_td_page_count(page, 8, &st) == -1);
	pg_reset();
	pg_data(1, 2, 1);
	pg_commit();
	used = 14;
	pg_commit();
	memset(&st, 0, sizeof(st));
	CHECK(vt_td_page_count(page, PAGE, &st) == -1);
	pg_reset();
	pg_data(1, 2, 1);
	pg_word(0 | 1 << 5);
	pg_commit();
	CHECK(vt_td_page_count(page, PAGE, &st) == -1);
	pg_reset();
	pg_data(1, 2, 1);
	pg_word(0 | 1 << 5);
	pg_word(100);
	pg_commit();
	CHECK(vt_td_page_count(page, PAGE, &st) == -1);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	signal(SIGXFSZ, SIG_IGN);
	make_raw();
	test_order();
	test_cpu_stats();
	test_discard_ticks();
	test_full_disk(0, 97);
	test_full_disk(1, 1);
	for (int c = 0; c < 2; c++)
		unlink(raw[c]);
	rmdir(dir);
	return check_done();
}
