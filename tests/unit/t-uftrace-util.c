/*
 * t-uftrace-util.c - unit test of lib/uftrace_util.c, the helpers the
 * uftrace reader, writer and converter share (lib/uftrace_int.h): path
 * joining past the buffer, the growing text buffer, number and timestamp
 * parsing at their limits, the names of trace files, and the listing of a
 * directory's <TID>.dat files with the entries it must skip and its cap
 * (lib/uftrace_util.c is included with MAX_TASKS made small).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "fileio.h"
#include "uftrace.h"
#include "uftrace_int.h"
#undef MAX_TASKS
#define MAX_TASKS	24	/* the listing's cap, reached with 25 files */
#include "uftrace_util.c"

static char tmp[256];

static void put(const char *name, const char *text)
{
	char p[512];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", tmp, name);
	fp = fopen(p, "w");
	CHECK(fp != NULL);
	if (fp) {
		fputs(text, fp);
		fclose(fp);
	}
}

static void test_sbuf(void)
{
	struct uft_sbuf sb = { 0 };
	char big[5000], path[512];
	size_t len;
	char *back;

	/* the first printf's text is longer than the first 4096 bytes */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	uft_sb_printf(&sb, "%s|", big);
	CHECK(sb.len == 5000 && sb.cap == 8192 && !sb.oom);
	/* a put past the capacity doubles it until the bytes fit */
	uft_sb_put(&sb, big, 4999);
	uft_sb_put(&sb, big, 4999);
	CHECK(sb.len == 14998 && sb.cap == 16384);
	snprintf(path, sizeof(path), "%s/sb.txt", tmp);
	CHECK(uft_sb_write(&sb, path) == 0);
	back = vt_file_read_all(path, 1 << 20, &len);
	CHECK(back && len == 14998 && back[4999] == '|' && back[14997] == 'a');
	free(back);

	/* a put into an empty buffer starts at 4096 bytes */
	memset(&sb, 0, sizeof(sb));
	uft_sb_put(&sb, "xy", 2);
	CHECK(sb.cap == 4096 && sb.len == 2 && !strcmp(sb.buf, "xy"));
	free(sb.buf);

	/* nothing written: an empty file */
	memset(&sb, 0, sizeof(sb));
	CHECK(uft_sb_write(&sb, path) == 0);
	back = vt_file_read_all(path, 1 << 20, &len);
	CHECK(back && len == 0);
	free(back);

	/* a buffer that ran out of memory takes nothing more and says so */
	memset(&sb, 0, sizeof(sb));
	sb.oom = 1;
	uft_sb_printf(&sb, "x");
	uft_sb_put(&sb, "x", 1);
	CHECK(sb.buf == NULL && sb.len == 0);
	CHECK(uft_sb_write(&sb, path) == -1);
	CHECK(strstr(vt_err_msg(), "sb.txt: out of memory") != NULL);
}

static void test_parse(void)
{
	char *end = NULL;
	uint64_t ts = 0;

	CHECK(uft_parse_int("2147483647.dat", &end) == INT_MAX && !strcmp(end, ".dat"));
	CHECK(uft_parse_int("2147483648", &end) == -1);
	CHECK(uft_parse_int("99999999999999999999999", &end) == -1);
	CHECK(uft_parse_int("-1", &end) == -1);

	CHECK(uft_parse_ts("timestamp=12.000000005 x", &ts, &end) == 0);
	CHECK(ts == 12000000005ULL && !strcmp(end, " x"));
	CHECK(uft_parse_ts("timestamp=1.999999999", &ts, &end) == 0 && ts == 1999999999ULL);
	CHECK(uft_parse_ts("timestamp=1.1000000000", &ts, &end) == -1);	/* nsec >= 1 s */
	CHECK(uft_parse_ts("timestamp=1.99999999999999999999", &ts, &end) == -1);
	CHECK(uft_parse_ts("timestamp=99999999999999999999.0", &ts, &end) == -1);
	CHECK(uft_parse_ts("timestamp=18446744074.0", &ts, &end) == -1);	/* > 2^64 ns */
	CHECK(uft_parse_ts("timestamp=18446744073.709551615", &ts, &end) == 0);
	CHECK(ts == UINT64_MAX);
	CHECK(uft_parse_ts("timestamp=18446744073.709551616", &ts, &end) == -1);
	CHECK(uft_parse_ts("timestamp=1", &ts, &end) == -1);
	CHECK(uft_parse_ts("timestamp=1.", &ts, &end) == -1);
	CHECK(uft_parse_ts("timestamp=.5", &ts, &end) == -1);
	CHECK(uft_parse_ts("time=1.5", &ts, &end) == -1);
}

static void test_names(void)
{
	char buf[64];

	CHECK(uft_is_trace_file("info") && uft_is_trace_file("task.tsc"));
	CHECK(uft_is_trace_file("123.dat") && uft_is_trace_file("prog.sym"));
	CHECK(uft_is_trace_file("123.tsc"));
	CHECK(uft_is_trace_file("sid-0123456789abcdef.map"));
	CHECK(!uft_is_trace_file(".dat") && !uft_is_trace_file("x.txt"));
	CHECK(!uft_is_trace_file("sid-abcd.txt") && !uft_is_trace_file("xid-abcd.map"));
	CHECK(!uft_is_trace_file("sid-.map"));	/* 8 bytes: no id */

	CHECK(uft_sid_ok("0123456789abcdef") && !uft_sid_ok(NULL));
	CHECK(!uft_sid_ok("0123456789abcde") && !uft_sid_ok("0123456789abcd-f"));
	CHECK(uft_map_path(buf, sizeof(buf), "d", "0123456789abcdef") == 0);
	CHECK_STR(buf, "d/sid-0123456789abcdef.map");
	CHECK(uft_map_path(buf, sizeof(buf), "d", NULL) == -1);
	CHECK(strstr(vt_err_msg(), "d: session id '' is not 16 letters/digits") != NULL);
	CHECK(uft_map_path(buf, 20, "d", "0123456789abcdef") == -1);
	CHECK(strstr(vt_err_msg(), "d/sid-0123456789abcdef.map: path too long") != NULL);

	CHECK(uft_raw_task_path(buf, 8, "dir") == -1);	/* "dir/task.tsc" */
	CHECK(strstr(vt_err_msg(), "dir/task.tsc: path too long") != NULL);
	CHECK(uft_raw_task_path(buf, sizeof(buf), tmp) == 0);	/* no task.tsc */
	CHECK(strstr(buf, "/task.txt") != NULL);
	put("task.tsc", "x");
	CHECK(uft_raw_task_path(buf, sizeof(buf), tmp) == 0);
	CHECK(strstr(buf, "/task.tsc") != NULL);
	CHECK_STR(uft_base_name("a/b/c.dat"), "c.dat");
	CHECK_STR(uft_base_name("c.dat"), "c.dat");
}

static void test_list(void)
{
	char p[512], name[32], *longdir;
	int *tids = NULL, n;
	size_t len;

	/* 20 tids (past the first 16 slots), each a .dat and some a .tsc too,
	 * and entries to skip: empty, a directory, a dangling link, tid 0,
	 * other names */
	for (int i = 1; i <= 20; i++) {
		snprintf(name, sizeof(name), "%d.dat", 100 - i);
		put(name, "x");
	}
	put("95.tsc", "x");
	put("7.tsc", "x");
	put("8.dat", "");
	put("0.dat", "x");
	put("9.txt", "x");
	put("9x.dat", "x");
	snprintf(p, sizeof(p), "%s/6.dat", tmp);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/5.dat", tmp);
	CHECK(symlink("no-such-file", p) == 0);
	n = uft_list_dat_tids(tmp, &tids);
	CHECK(n == 21);
	if (n == 21) {
		CHECK(tids[0] == 7 && tids[1] == 80 && tids[20] == 99);
		for (int i = 1; i < n; i++)
			CHECK(tids[i - 1] < tids[i]);
	}
	free(tids);

	/* past the cap (24 here): the first 24 files read are listed, the
	 * 25th ends the listing */
	snprintf(p, sizeof(p), "%s/cap", tmp);
	CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
	for (int i = 1; i <= 25; i++) {
		snprintf(name, sizeof(name), "cap/%d.dat", i);
		put(name, "x");
	}
	n = uft_list_dat_tids(p, &tids);
	CHECK(n == 24);
	if (n == 24) {
		CHECK(tids[0] >= 1 && tids[0] <= 2 && tids[23] >= 24 && tids[23] <= 25);
		for (int i = 1; i < n; i++)
			CHECK(tids[i - 1] < tids[i]);
	}
	free(tids);

	/* a directory that is not one */
	CHECK(uft_list_dat_tids("/no/such/dir", &tids) == -1 && tids == NULL);
	CHECK(strstr(vt_err_msg(), "/no/such/dir: cannot read directory") != NULL);

	/* a directory's path so long that DIR/NAME is past PATH_MAX: its
	 * entries are skipped, none listed */
	len = strlen(tmp);
	longdir = malloc(PATH_MAX);
	CHECK(longdir != NULL);
	if (!longdir)
		return;
	memcpy(longdir, tmp, len);
	while (len + 2 < PATH_MAX - 4) {
		memcpy(longdir + len, "/.", 2);
		len += 2;
	}
	longdir[len] = 0;
	n = uft_list_dat_tids(longdir, &tids);
	CHECK(n == 0);
	free(tids);
	free(longdir);
}

int main(void)
{
	const char *t = getenv("VT_TMP");

	snprintf(tmp, sizeof(tmp), "%s/util", t ? t : "/tmp");
	CHECK(mkdir(tmp, 0755) == 0 || errno == EEXIST);
	test_sbuf();
	test_parse();
	test_names();
	test_list();
	return check_done();
}
