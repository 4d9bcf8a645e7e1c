/*
 * t-uftrace-convert.c - unit test of lib/uftrace_convert.c's edges, for
 * vmtrace's developers (t-uftrace tests the plain copy and finish): the
 * directories vt_uft_convert_ns and vt_uft_finish_ns refuse or leave alone
 * (no meta, no clock, an unusable tsc.hz, no info, the same directory,
 * an output that cannot be made), what the copy takes and skips (other
 * trace files, subdirectories, tasks without records), event records
 * with data, a large .dat, corrupt and truncated tasks (the first warning
 * kept) and an empty task.txt line.  Each check
 * reads the output back through lib/uftrace_read.c or asserts the message.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "meta.h"
#include "tsc.h"
#include "uftrace.h"
#include "uft_fixture.h"

#define HZ	2000000000ULL
#define BASE	UFT_FIX_BASE

static char tmp[600];

static int exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* A clock=tsc directory (t-uftrace's fixture: tasks 101 and 102) with
 * vmtrace.meta's tsc.hz @hz ("": none; NULL: no meta at all) and clock
 * @clock (NULL: unset). */
static void make_dir(const char *dir, const char *clock, const char *hz)
{
	static const struct vt_uft_sym syms[] = { { BASE + 0x1000, 0x40, 'T', "alpha" } };
	struct vt_meta *m;

	rm_rf(dir);
	CHECK(vt_uft_dir_create(dir, 1) == 0);
	CHECK(uft_fixture_write(dir, HZ, syms, 1) == 0);
	if (!hz)
		return;
	m = vt_meta_new();
	CHECK(m != NULL);
	if (clock)
		CHECK(vt_meta_set(m, VT_MK_CLOCK, "%s", clock) == 0);
	if (*hz)
		CHECK(vt_meta_set(m, VT_MK_TSC_HZ, "%s", hz) == 0);
	CHECK(vt_meta_write_dir(m, dir) == 0);
	vt_meta_free(m);
}

/* Records of task @tid in @dir: count, first time, the first event
 * payload's length (-1: none). */
static int read_task(const char *dir, int tid, uint64_t *first, int *plen)
{
	struct vt_uft_reader *r = vt_uft_open(dir);
	struct vt_uft_stream *s = NULL;
	struct vt_uft_record rec;
	int n = 0;

	*first = 0;
	if (plen)
		*plen = -1;
	for (int i = 0; r && i < vt_uft_nr_tasks(r); i++)
		if (vt_uft_task_tid(r, i) == tid)
			s = vt_uft_stream_open(r, i);
	while (s && vt_uft_stream_next(s, &rec) == 1) {
		const void *pl;
		size_t len;

		if (!n)
			*first = rec.time;
		pl = vt_uft_stream_payload(s, &len);
		if (pl && plen && *plen < 0)
			*plen = len;
		n++;
	}
	if (s)
		vt_uft_stream_close(s);
	vt_uft_close(r);
	return n;
}

static void test_refused(const char *in, const char *out)
{
	char p[PATH_MAX];

	/* no meta: the clock is unknown */
	make_dir(in, "tsc", NULL);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), "no usable vmtrace.meta, cannot tell the clock") != NULL);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_NONE);
	/* no clock in it */
	make_dir(in, NULL, "2000000000");
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), "clock is '(unset)', not 'tsc'") != NULL);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_NONE);
	CHECK(!exists(in, "101.tsc"));
	/* a tsc.hz that is no number, below 1 Hz, or implausible */
	make_dir(in, "tsc", "fast");
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), "vmtrace.meta: no valid tsc.hz") != NULL);
	make_dir(in, "tsc", "0.25");
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), "no valid tsc.hz") != NULL);
	CHECK(vt_uft_convert_ns(in, out, 999, 1) == -1);
	CHECK_STR(vt_err_msg(), "TSC frequency 999 Hz is implausible");
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_NO_HZ);
	/* a frequency written as a real number is rounded */
	make_dir(in, "tsc", "2.0000000004e9");
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == 0);
	{
		uint64_t first;

		CHECK(read_task(out, 101, &first, NULL) == 6 && first == 1000000000ULL);
	}

	/* no info: not a uftrace directory */
	make_dir(in, "tsc", "2000000000");
	snprintf(p, sizeof(p), "%s/info", in);
	CHECK(unlink(p) == 0);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), in) != NULL);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_NONE);
	/* an info the reader refuses */
	uft_fixture_put(in, "info", "not uftrace", 11, 0);
	CHECK(vt_uft_finish_ns(in, 0) == -1);
	CHECK(strstr(vt_err_msg(), "info") != NULL);
	/* a meta that cannot be read */
	make_dir(in, "tsc", "2000000000");
	uft_fixture_put(in, VT_META_FILE, "garbage\n", 8, 0);
	CHECK(vt_uft_finish_ns(in, 0) == -1);
	CHECK(strstr(vt_err_msg(), VT_META_FILE) != NULL);

	/* into itself; into a file */
	make_dir(in, "tsc", "2000000000");
	CHECK(vt_uft_convert_ns(in, in, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), "input and output are the same directory") != NULL);
	CHECK(exists(in, "101.dat"));
	snprintf(p, sizeof(p), "%s/info", in);
	CHECK(vt_uft_convert_ns(in, p, 0, 1) == -1);
	CHECK(strstr(vt_err_msg(), "exists and is not a directory") != NULL);
}

/* EVENT records with data (2-byte length, data, padding to 8), and
 * enough of them to fill the copy's buffer several times. */
static void test_records(const char *in, const char *out)
{
	enum { N = 20000 };
	static uint8_t buf[N * 32];
	struct vt_meta *m;
	uint64_t first, t = HZ;
	size_t used = 0;
	int plen;

	make_dir(in, "tsc", "2000000000");
	for (int i = 0; i < N; i++, t += 2) {
		struct vt_uft_record r = { t, vt_uft_pack(VT_UFT_ENTRY, 0, BASE + 0x1000) };

		if (i % 2) {
			uint16_t len = 5;

			r.bits = vt_uft_pack(VT_UFT_EVENT, 0, 7) | 1ULL << 2;	/* more */
			memcpy(buf + used, &r, sizeof(r));
			memcpy(buf + used + 16, &len, 2);
			memcpy(buf + used + 18, "abcde", 5);
			memset(buf + used + 23, 0, 1);
			used += 24;
		} else {
			memcpy(buf + used, &r, sizeof(r));
			used += 16;
		}
	}
	uft_fixture_put(in, "101.dat", buf, used, 0);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == 0);
	CHECK(read_task(out, 101, &first, &plen) == N);
	CHECK(first == 1000000000ULL && plen == 5);
	/* given: the meta says where the figure came from */
	CHECK(vt_uft_convert_ns(in, out, 4000000000ULL, 1) == 0);
	CHECK(read_task(out, 101, &first, NULL) == N && first == 500000000ULL);
	m = vt_meta_read_dir(out);
	CHECK(m && !strcmp(vt_meta_get(m, VT_MK_TSC_HZ_SOURCE), "option"));
	CHECK(m && !strcmp(vt_meta_get(m, VT_MK_CLOCK), "ns"));
	vt_meta_free(m);
}

/* Runs of plain records of every length from 1 to a whole copy buffer
 * and more (converted in bulk), each ended by a record with data: every
 * record read back in order, each time converted, each word and payload
 * kept. */
static void test_runs(const char *in, const char *out)
{
	enum { N = 30000 };
	static uint8_t buf[N * 24];
	struct vt_uft_reader *r;
	struct vt_uft_stream *s;
	struct vt_uft_record rec;
	size_t used = 0, run = 0, want_run = 1;
	uint64_t want_bits[N];
	int n = 0, bad = 0;

	make_dir(in, "tsc", "2000000000");
	for (int i = 0; i < N; i++) {
		struct vt_uft_record w = { HZ + 2 * (uint64_t)i,
					   vt_uft_pack(i % 2, i % 7, BASE + 0x10 * (uint64_t)i) };

		if (run == want_run) {
			uint16_t len = 3;

			/* the run's end: an event with data; the next run is longer */
			w.bits = vt_uft_pack(VT_UFT_EVENT, 0, (uint64_t)i) | 1ULL << 2;
			memcpy(buf + used, &w, sizeof(w));
			memcpy(buf + used + 16, &len, 2);
			memcpy(buf + used + 18, "xyz", 3);
			memset(buf + used + 21, 0, 3);
			used += 24;
			run = 0;
			want_run = want_run < 5000 ? want_run * 3 + 1 : 1;
		} else {
			memcpy(buf + used, &w, sizeof(w));
			used += 16;
			run++;
		}
		want_bits[i] = w.bits;
	}
	uft_fixture_put(in, "101.dat", buf, used, 0);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == 0);
	r = vt_uft_open(out);
	CHECK(r != NULL);
	s = NULL;
	for (int i = 0; r && i < vt_uft_nr_tasks(r); i++)
		if (vt_uft_task_tid(r, i) == 101)
			s = vt_uft_stream_open(r, i);
	CHECK(s != NULL);
	while (s && vt_uft_stream_next(s, &rec) == 1) {
		size_t len;
		const char *pl = vt_uft_stream_payload(s, &len);

		if (n >= N || rec.time != 1000000000ULL + (uint64_t)n || rec.bits != want_bits[n] ||
		    (vt_uft_type(rec.bits) == VT_UFT_EVENT) != (pl != NULL) ||
		    (pl && (len != 3 || memcmp(pl, "xyz", 3))))
			bad++;
		n++;
	}
	CHECK(n == N);
	CHECK(bad == 0);
	vt_uft_stream_close(s);
	vt_uft_close(r);
}

/* What the copy takes: trace files (not others), no subdirectory, no task
 * that has no records file */
static void test_copy(const char *in, const char *out)
{
	char p[PATH_MAX];
	uint64_t first;

	make_dir(in, "tsc", "2000000000");
	uft_fixture_put(in, "default.opts", "--no-libcall\n", 13, 0);
	uft_fixture_put(in, "notes.txt", "mine\n", 5, 0);
	uft_fixture_put(in, "42.sym", "# symbols: 0\n", 13, 0);	/* a number, not a task's */
	snprintf(p, sizeof(p), "%s/103.dat.d", in);
	CHECK(mkdir(p, 0755) == 0);
	/* task 104 named in task.txt, never wrote a record */
	uft_fixture_put(in, "task.txt", "TASK timestamp=1.000000000 tid=104 pid=101\n", 43, 1);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == 0);
	CHECK(exists(out, "default.opts") && !exists(out, "notes.txt") && exists(out, "42.sym"));
	CHECK(!exists(out, "103.dat.d") && !exists(out, "104.dat"));
	CHECK(read_task(out, 102, &first, NULL) == 3 && first == 1000000025ULL);
}

/* Two tasks cut short: partial, the first one's warning; a corrupt
 * record: partial with the reader's message */
static void test_partial(const char *in, const char *out)
{
	static const uint8_t junk[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff };
	char p[PATH_MAX];
	uint64_t first;

	make_dir(in, "tsc", "2000000000");
	snprintf(p, sizeof(p), "%s/101.dat", in);
	CHECK(truncate(p, 5 * 16 + 3) == 0);
	snprintf(p, sizeof(p), "%s/102.dat", in);
	CHECK(truncate(p, 2 * 16 + 9) == 0);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == VT_UFT_PARTIAL);
	CHECK(strstr(vt_err_msg(), "/101.dat: truncated last record at offset 80 dropped") ||
	      strstr(vt_err_msg(), "/102.dat: truncated last record at offset 32 dropped"));
	CHECK(read_task(out, 101, &first, NULL) == 5 && read_task(out, 102, &first, NULL) == 2);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_PARTIAL);
	CHECK(strstr(vt_err_msg(), "truncated last record") != NULL);

	make_dir(in, "tsc", "2000000000");
	uft_fixture_put(in, "101.dat", junk, sizeof(junk), 1);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == VT_UFT_PARTIAL);
	CHECK(strstr(vt_err_msg(), "/101.dat: offset 96: bad record magic") != NULL);
	CHECK(read_task(out, 101, &first, NULL) == 6);
}

/* an empty line in task.txt is nothing (the reader has refused any other
 * line convert_task_txt could not read) */
static void test_task_txt(const char *in, const char *out)
{
	uint64_t first;
	char p[PATH_MAX];

	make_dir(in, "tsc", "2000000000");
	uft_fixture_put(in, "task.txt", "\n", 1, 1);
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == 0);
	CHECK(read_task(out, 101, &first, NULL) == 6);
	snprintf(p, sizeof(p), "%s/task.txt", out);
	{
		FILE *fp = fopen(p, "r");
		char line[256];
		int n = 0;

		CHECK(fp != NULL);
		while (fp && fgets(line, sizeof(line), fp))
			n++;
		if (fp)
			fclose(fp);
		CHECK(n == 3);
	}
}

/* A finished directory (raw stamps in .tsc files and task.tsc) converts
 * from its raw stamps; finished again at its frequency, a task without
 * records and a directory without task.txt are nothing to do */
static void test_finished(const char *in, const char *out)
{
	char p[PATH_MAX];
	uint64_t first;

	make_dir(in, "tsc", "2000000000");
	uft_fixture_put(in, "task.txt", "TASK timestamp=1.000000000 tid=104 pid=101\n", 43, 1);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_DONE);
	CHECK(exists(in, "101.tsc") && exists(in, "task.tsc") && !exists(in, "104.tsc"));
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_DONE);
	CHECK(!exists(in, "104.dat") && !exists(in, "104.tsc"));
	/* a copy cut short (a stream cut while it was sent) is made again */
	snprintf(p, sizeof(p), "%s/101.dat", in);
	CHECK(truncate(p, 16) == 0);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_DONE);
	{
		struct stat st;

		CHECK(stat(p, &st) == 0 && st.st_size == 6 * 16);
	}
	CHECK(vt_uft_convert_ns(in, out, 0, 1) == 0);
	CHECK(!exists(out, "101.tsc") && !exists(out, "task.tsc") && exists(out, "task.txt"));
	CHECK(read_task(out, 101, &first, NULL) == 6 && first == 1000000000ULL);

	make_dir(in, "tsc", "2000000000");
	snprintf(p, sizeof(p), "%s/task.txt", in);
	CHECK(unlink(p) == 0);
	CHECK(vt_uft_finish_ns(in, 0) == VT_UFT_FIN_DONE);
	CHECK(exists(in, "101.tsc") && !exists(in, "task.tsc") && !exists(in, "task.txt"));
}

/* A path of @len bytes in @p under VT_TMP/long, its parents made (of
 * 200-byte names), itself not */
static void long_path(char *p, size_t len)
{
	snprintf(p, len + 1, "%s/long", tmp);
	CHECK(mkdir(p, 0755) == 0);
	while (strlen(p) + 1 + 200 + 1 + 10 < len) {
		size_t n = strlen(p);

		p[n] = '/';
		memset(p + n + 1, 'd', 200);
		p[n + 201] = 0;
		CHECK(mkdir(p, 0755) == 0);
	}
	strcat(p, "/");
	memset(p + strlen(p), 'x', len - strlen(p));
	p[len] = 0;
	CHECK(strlen(p) == len);
}

/* The directory @in moved to a path of @len bytes, in @p */
static void move_long(const char *in, char *p, size_t plen, size_t len)
{
	CHECK(plen > len);
	long_path(p, len);
	CHECK(rename(in, p) == 0);
}

/* A finished-to-be directory @in with one task and no session (no map,
 * no .sym), moved to a path of @len bytes, in @p */
static void sessionless_long(const char *in, char *p, size_t plen, size_t len)
{
	make_dir(in, "tsc", "2000000000");
	uft_fixture_put(in, "task.txt", "TASK timestamp=1.000000000 tid=101 pid=101\n", 43, 0);
	snprintf(p, plen, "rm -f '%s'/sid-*.map '%s'/*.sym", in, in);
	CHECK(system(p) == 0);
	move_long(in, p, plen, len);
}

/* The last message names @p, too long for err.c's buffer: its start,
 * then "..." and the message's end (the path's end and the reason) */
static int named(const char *p)
{
	const char *m = vt_err_msg();

	return strlen(m) > 1000 && !strncmp(m, p, 200) && !strncmp(m + 256, "...", 3) &&
	       strstr(p, m + 259 + 100) == NULL && strstr(m + 259, p + strlen(p) - 100) != NULL;
}

/* Paths too long: a directory that leaves no room for a task's temporary
 * file (DIR/101.dat.tmpXXXXXX), for vmtrace.meta's (finishing fails
 * after the copies), for vmtrace.meta or info; an output
 * directory without room for the input's names */
static void test_long(const char *in, const char *out)
{
	char p[PATH_MAX + 16];
	static char huge[PATH_MAX + 16];
	const char *m;

	/* no info's path: not a directory of ours; info but no
	 * vmtrace.meta's path: the same */
	memset(huge, 'x', PATH_MAX + 8);
	huge[0] = '/';
	CHECK(vt_uft_finish_ns(huge, 0) == VT_UFT_FIN_NONE);
	make_dir(in, "tsc", "2000000000");
	move_long(in, p, sizeof(p), PATH_MAX - 10);
	CHECK(vt_uft_finish_ns(p, 0) == VT_UFT_FIN_NONE);
	CHECK(rename(p, in) == 0);
	snprintf(p, sizeof(p), "%s/long", tmp);
	rm_rf(p);

	/* an output with room for the input's shorter names only */
	make_dir(in, "tsc", "2000000000");
	long_path(p, PATH_MAX - 6);
	CHECK(vt_uft_convert_ns(in, p, 0, 1) == -1);
	CHECK(named(p));
	snprintf(p, sizeof(p), "%s/long", tmp);
	rm_rf(p);
	(void)out;

	/* no session (its map's name is longer than the temporary one) */
	sessionless_long(in, p, sizeof(p), PATH_MAX - 16);
	CHECK(vt_uft_finish_ns(p, 0) == -1);
	m = vt_err_msg();
	CHECK(m == vt_err_msg() && named(p));
	{
		int dfd = open(p, O_RDONLY | O_DIRECTORY);

		CHECK(dfd >= 0 && faccessat(dfd, "101.dat", F_OK, 0) == 0);
		close(dfd);
	}
	snprintf(p, sizeof(p), "%s/long", tmp);
	rm_rf(p);

	/* room for the tasks' and task.txt's temporary files, not for
	 * vmtrace.meta's (DIR/vmtrace.meta.tmpXXXXXX): the copies are made,
	 * the meta's new clock is not written */
	sessionless_long(in, p, sizeof(p), PATH_MAX - 21);
	CHECK(vt_uft_finish_ns(p, 0) == -1);
	CHECK(named(p) && strstr(vt_err_msg(), "/vmtrace.meta: path too long") != NULL);
	{
		int dfd = open(p, O_RDONLY | O_DIRECTORY);

		CHECK(dfd >= 0 && faccessat(dfd, "101.tsc", F_OK, 0) == 0 &&
		      faccessat(dfd, "101.dat", F_OK, 0) == 0);
		close(dfd);
	}
	snprintf(p, sizeof(p), "%s/long", tmp);
	rm_rf(p);
}

int main(void)
{
	char in[700], out[710];
	const char *t = getenv("VT_TMP");

	snprintf(tmp, sizeof(tmp), "%s", t ? t : "/tmp");
	snprintf(in, sizeof(in), "%s/t-uftrace-convert.%d", tmp, (int)getpid());
	snprintf(out, sizeof(out), "%s.ns", in);
	test_refused(in, out);
	test_records(in, out);
	test_runs(in, out);
	test_copy(in, out);
	test_partial(in, out);
	test_task_txt(in, out);
	test_finished(in, out);
	test_long(in, out);
	rm_rf(in);
	rm_rf(out);
	return check_done();
}
