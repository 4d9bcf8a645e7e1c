/*
 * t-merge-sink-uftrace.c - merge's uftrace sink (merge/sink_uftrace.c)
 * driven event by event, its output read back through lib/uftrace.h:
 *   - host and guest threads, an exit of no open call (skipped), an
 *     instant of no name ("(unnamed)"), threads that never had an event
 *     (no task), the default options (NULL);
 *   - a thread whose .dat cannot be created (named; the next event of
 *     that thread makes it);
 *   - its files failing: the records past a file size limit, in a call's
 *     entry and in an instant's; task.txt a directory (the session), a
 *     size limit in a thread's task line and in the info file.
 * The sink's source is included to reach its ops.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "merge/sink_uftrace.c"

#define NR_IDLE	300	/* tracks without events, past the sink's first allocation */

static struct merge_tables tb;
static uint32_t t_a, t_b, t_g, name_f, name_g;
static char tmp[256];

/* The last message holds @want (printed when not). */
static int msg_has(const char *want)
{
	if (strstr(vt_err_msg(), want))
		return 1;
	fprintf(stderr, "message '%s' lacks '%s'\n", vt_err_msg(), want);
	return 0;
}

/* The sink on @tmp/@name (written to @path) with the options @o. */
static void *sink_open(const char *name, const struct merge_uftrace_opts *o, char *path)
{
	snprintf(path, 512, "%s/%s", tmp, name);
	return merge_sink_uftrace.open(&tb, path, o);
}

static int put(void *s, uint32_t track, enum merge_ev_kind kind, uint32_t name, uint64_t ts)
{
	struct merge_event ev = { .ts_ns = ts, .track = track, .kind = kind, .name = name };

	return merge_sink_uftrace.event(s, &ev);
}

static void setup(void)
{
	uint32_t proc = merge_str_intern0(&tb, "proc"), thr = merge_str_intern0(&tb, "thr");

	name_f = merge_str_intern0(&tb, "f");
	name_g = merge_str_intern0(&tb, "g");
	t_a = merge_track_get(&tb, MERGE_MACHINE_HOST, 10, 10, proc, thr);
	t_b = merge_track_get(&tb, MERGE_MACHINE_HOST, 10, 11, proc, thr);
	t_g = merge_track_get(&tb, 1, 200, 201, proc, thr);
	for (int i = 0; i < NR_IDLE; i++)
		merge_track_get(&tb, MERGE_MACHINE_HOST, 30, 1000 + i, proc, thr);
}

/* Task @tid's records in @dir: their number, the names of the first two. */
static int records(const char *dir, int tid, const char **n0, const char **n1)
{
	struct vt_uft_reader *r = vt_uft_open(dir);
	struct vt_uft_record rec;
	struct vt_uft_stream *st = NULL;
	static char names[2][64];
	int n = 0;

	for (int i = 0; r && i < vt_uft_nr_tasks(r); i++)
		if (vt_uft_task_tid(r, i) == tid)
			st = vt_uft_stream_open(r, i);
	while (st && vt_uft_stream_next(st, &rec) == 1) {
		if (n < 2)
			snprintf(names[n], sizeof(names[n]), "%s",
				 vt_uft_sym_name(r, vt_uft_addr(rec.bits)));
		n++;
	}
	*n0 = names[0];
	*n1 = names[1];
	vt_uft_stream_close(st);
	vt_uft_close(r);
	return st ? n : -1;
}

static void test_events(void)
{
	char path[512], dat[600];
	struct vt_uft_reader *r;
	const char *n0, *n1;
	void *s;

	s = sink_open("ok", NULL, path);
	CHECK(s != NULL);
	if (!s)
		return;
	/* 10.dat a directory: the thread cannot be added, then it can */
	snprintf(dat, sizeof(dat), "%s/10.dat", path);
	CHECK(mkdir(dat, 0755) == 0);
	CHECK(put(s, t_a, MERGE_EV_BEGIN, name_f, 1000) < 0);
	CHECK(msg_has("/ok: cannot add a thread: ") &&
	      msg_has("/ok/10.dat: cannot create: Is a directory"));
	CHECK(rmdir(dat) == 0);
	CHECK(put(s, t_a, MERGE_EV_BEGIN, name_f, 1000) == 0);
	CHECK(put(s, t_a, MERGE_EV_END, 0, 2000) == 0);
	CHECK(put(s, t_a, MERGE_EV_END, 0, 2500) == 0);	/* nothing open */
	CHECK(put(s, t_a, MERGE_EV_INSTANT, 0, 3000) == 0);
	CHECK(put(s, t_b, MERGE_EV_BEGIN, name_g, 1500) == 0);
	CHECK(put(s, t_g, MERGE_EV_INSTANT, name_f, 1200) == 0);
	CHECK(merge_sink_uftrace.close(s) == 0);

	r = vt_uft_open(path);
	CHECK(r && vt_uft_nr_tasks(r) == 3);	/* no idle thread */
	vt_uft_close(r);
	CHECK(records(path, 10, &n0, &n1) == 4 && !strcmp(n0, "f") && !strcmp(n1, "f"));
	CHECK(records(path, 10, &n0, &n1) == 4);
	{
		struct vt_uft_reader *rr = vt_uft_open(path);
		struct vt_uft_stream *st = NULL;
		struct vt_uft_record rec;

		for (int i = 0; rr && i < vt_uft_nr_tasks(rr); i++)
			if (vt_uft_task_tid(rr, i) == 10)
				st = vt_uft_stream_open(rr, i);
		for (int i = 0; i < 3 && st; i++)
			CHECK(vt_uft_stream_next(st, &rec) == 1);
		CHECK(st && !strcmp(vt_uft_sym_name(rr, vt_uft_addr(rec.bits)), "(unnamed)"));
		CHECK(rec.time == 3000 && vt_uft_type(rec.bits) == VT_UFT_ENTRY);
		vt_uft_stream_close(st);
		vt_uft_close(rr);
	}
	CHECK(records(path, 11, &n0, &n1) == 1 && !strcmp(n0, "g"));
	CHECK(records(path, 10000201, &n0, &n1) == 2 && !strcmp(n0, "f"));
}

/* A file size limit of @bytes (0: as before). */
static void fsize_limit(rlim_t bytes)
{
	static struct rlimit old;
	static int saved;
	struct rlimit rl;

	if (!saved) {
		CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
		saved = 1;
	}
	rl = old;
	if (bytes)
		rl.rlim_cur = bytes;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
}

/* The records past a file size limit of one byte: the 4097th record of a
 * thread flushes its 64 KiB buffer, and fails - in a call's entry, in an
 * instant's; the sink then fails. */
static void test_records_fail(void)
{
	char path[512], msg_a[512];
	void *s = sink_open("full", NULL, path);
	int bad = 0, rc_a, rc_b, rc_close;

	CHECK(s != NULL);
	if (!s)
		return;
	/* (checked after the limit: the test's own log is a file too) */
	fsize_limit(1);
	for (int i = 0; i < UFT_FILE_BUF / 32; i++) {
		bad += put(s, t_a, MERGE_EV_BEGIN, name_f, 1000 + 2 * i) != 0;
		bad += put(s, t_a, MERGE_EV_END, 0, 1001 + 2 * i) != 0;
		bad += put(s, t_b, MERGE_EV_BEGIN, name_f, 1000 + 2 * i) != 0;
		bad += put(s, t_b, MERGE_EV_END, 0, 1001 + 2 * i) != 0;
	}
	rc_a = put(s, t_a, MERGE_EV_BEGIN, name_f, 9000);
	snprintf(msg_a, sizeof(msg_a), "%s", vt_err_msg());
	vt_err_set("none");
	rc_b = put(s, t_b, MERGE_EV_INSTANT, name_f, 9000);
	rc_close = merge_sink_uftrace.close(s);
	fsize_limit(0);
	CHECK(bad == 0);
	CHECK(rc_a < 0 && strstr(msg_a, "/full: write failed: File too large"));
	CHECK(rc_b < 0 && msg_has("/full: write failed: File too large"));
	CHECK(rc_close < 0);
}

/* One call on thread 10 into @tmp/@name, closed under a file size limit
 * of @limit bytes (0: none) with a directory @in_way (NULL: none) where
 * close writes a file; close's result. */
static int one_call(const char *name, rlim_t limit, const char *in_way)
{
	char path[512], p[600];
	void *s = sink_open(name, NULL, path);
	int rc;

	CHECK(s != NULL);
	if (!s)
		return 0;
	CHECK(put(s, t_a, MERGE_EV_BEGIN, name_f, 1000) == 0);
	CHECK(put(s, t_a, MERGE_EV_END, 0, 2000) == 0);
	if (in_way) {
		snprintf(p, sizeof(p), "%s/%s", path, in_way);
		CHECK(mkdir(p, 0755) == 0);
	}
	fsize_limit(limit);
	rc = merge_sink_uftrace.close(s);
	fsize_limit(0);
	return rc;
}

static off_t size_of(const char *name, const char *file)
{
	char p[600];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s/%s", tmp, name, file);
	return stat(p, &st) ? -1 : st.st_size;
}

/* Close with nothing to write; the files close writes, failing: task.txt,
 * the map or the symbols a directory; a size limit past the session's
 * line and the map but short of the thread's line; one past task.txt,
 * the map and the symbols but short of the info file.  Each fails naming
 * the file. */
static void test_close_fails(void)
{
	char sid[VT_UFT_SID_LEN + 1], map[64], path[512];
	off_t task, map_size, sym, info, line;
	void *s = sink_open("empty", NULL, path);

	CHECK(s && merge_sink_uftrace.close(s) < 0 && msg_has("/empty: no events to write"));
	CHECK(one_call("sizes", 0, NULL) == 0);
	vt_uft_sid_make(sid, 10, 1000);
	snprintf(map, sizeof(map), "sid-%s.map", sid);
	task = size_of("sizes", "task.txt");
	map_size = size_of("sizes", map);
	sym = size_of("sizes", "vmtrace-merged.sym");
	info = size_of("sizes", "info");
	line = (off_t)strlen("TASK timestamp=0.000001000 tid=10 pid=10\n");
	CHECK(task > line && map_size > 0 && sym > 0 && info > 0);

	CHECK(one_call("taskdir", 0, "task.txt") < 0 &&
	      msg_has("/taskdir/task.txt: cannot open: Is a directory"));
	CHECK(one_call("mapdir", 0, map) < 0 && msg_has("/mapdir/") && msg_has(map));
	CHECK(one_call("symdir", 0, "vmtrace-merged.sym") < 0 &&
	      msg_has("/symdir/vmtrace-merged.sym"));
	/* the session's line and the map fit, the thread's line does not */
	CHECK(map_size < task);
	CHECK(one_call("taskline", task - 1, NULL) < 0 &&
	      msg_has("/taskline/task.txt: write failed: File too large"));
	CHECK(size_of("taskline", "task.txt") == task - 1);	/* the line cut */
	/* all but the info file */
	CHECK(task < info && map_size < info && sym < info);
	CHECK(one_call("info", info - 1, NULL) < 0 && msg_has("/info/info"));
}

int main(void)
{
	const char *t = getenv("VT_TMP");

	signal(SIGXFSZ, SIG_IGN);
	snprintf(tmp, sizeof(tmp), "%s", t ? t : "/tmp");
	setup();
	test_events();
	test_records_fail();
	test_close_fails();
	merge_tables_free(&tb);
	return check_done();
}
