/*
 * t-uftrace.c - unit test of the uftrace module (lib/uftrace_*.c): write a data directory, read
 * it back (tasks, records, symbols, info), convert TSC -> ns, and feed the
 * reader hostile inputs (truncated/corrupt info, .dat, task.txt, .sym).
 */
#include <errno.h>
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
#include "pystage.h"
#include "uftrace.h"
#include "uftrace_int.h"
#include "uft_fixture.h"

#define EXE	UFT_FIX_EXE
#define BASE	UFT_FIX_BASE
#define HZ	2000000000ULL

static char tmp[512];

static void truncate_to(const char *dir, const char *name, off_t len)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(truncate(path, len) == 0);
}

/* A directory with 2 threads: 101 (3 calls nested) and 102 (1 call). */
static void make_dir(const char *dir, int tsc)
{
	struct vt_uft_sym syms[] = {
		{ BASE + 0x1000, 0x40, 'T', "alpha" },
		{ BASE + 0x1100, 0x40, 't', "beta" },
		{ BASE + 0x1200, 0, 'T', "gamma" },	/* runs to delta */
		{ BASE + 0x1280, 0x10, 'T', "delta" },
		{ BASE + 0x1300, 0x10, 'T', "bad\nname" },	/* dropped */
	};
	char sid[VT_UFT_SID_LEN + 1];
	uint64_t t = tsc ? HZ : 1000000000ULL;	/* 1 s either way */
	struct vt_meta *m;

	CHECK(vt_uft_dir_create(dir, 1) == 0);
	vt_uft_sid_make(sid, 101, t);
	CHECK(strlen(sid) == VT_UFT_SID_LEN);
	/* a session id of another length is refused (and writes nothing) */
	CHECK(vt_uft_task_session(dir, t, 101, "short", EXE) < 0);
	CHECK(uft_fixture_write(dir, t, syms, VT_ARRAY_SIZE(syms)) == 0);
	m = vt_meta_new();
	vt_meta_set(m, VT_MK_CLOCK, tsc ? "tsc" : "ns");
	if (tsc)
		vt_meta_set_u64(m, VT_MK_TSC_HZ, HZ);
	CHECK(vt_meta_write_dir(m, dir) == 0);
	vt_meta_free(m);
}

/* Count a task's records; returns stream_next's last result. */
static int count(struct vt_uft_reader *r, int idx, int *n, int *trunc, uint64_t *first)
{
	struct vt_uft_stream *s = vt_uft_stream_open(r, idx);
	struct vt_uft_record rec;
	int ret;

	*n = 0;
	if (!s)
		return -2;
	while ((ret = vt_uft_stream_next(s, &rec)) == 1) {
		if (!*n && first)
			*first = rec.time;
		(*n)++;
	}
	*trunc = vt_uft_stream_truncated(s);
	vt_uft_stream_close(s);
	return ret;
}

static int task_idx(struct vt_uft_reader *r, int tid)
{
	for (int i = 0; i < vt_uft_nr_tasks(r); i++)
		if (vt_uft_task_tid(r, i) == tid)
			return i;
	return -1;
}

static void test_roundtrip(const char *dir)
{
	struct vt_uft_reader *r;
	const struct vt_uft_info *in;
	uint64_t start = 0;
	int n, trunc;

	make_dir(dir, 0);
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "%s\n", vt_err_msg());
		return;
	}
	in = vt_uft_reader_info(r);
	CHECK_STR(in->exename, EXE);
	CHECK_STR(in->cmdline, "prog \\\"quoted\\\" arg");
	CHECK(in->exit_status == 3 << 8);
	CHECK(in->max_stack == 128);
	CHECK(in->elapsed_ns == 1234567890);
	CHECK(in->nr_tids == 2 && in->tids[0] == 101 && in->tids[1] == 102);
	CHECK(vt_uft_nr_tasks(r) == 2);
	CHECK(task_idx(r, 101) >= 0 && task_idx(r, 102) >= 0);
	CHECK(vt_uft_task_pid(r, task_idx(r, 102)) == 101);
	CHECK(vt_uft_task_tid(r, 99) == -1);
	CHECK(vt_uft_nr_syms(r) == 4);
	CHECK_STR(vt_uft_sym_name(r, BASE + 0x1285), "delta");
	CHECK_STR(vt_uft_sym_name(r, BASE + 0x1000), "alpha");
	CHECK_STR(vt_uft_sym_name(r, BASE + 0x103f), "alpha");
	CHECK_STR(vt_uft_sym_name(r, BASE + 0x1040), "");	/* past its end */
	CHECK_STR(vt_uft_sym_name(r, BASE + 0x1120), "beta");
	CHECK_STR(vt_uft_sym_name(r, BASE + 0x1250), "gamma");
	CHECK_STR(vt_uft_sym_name(r, BASE), "");
	CHECK(vt_uft_sym_find(r, BASE + 0x1108, &start) && start == BASE + 0x1100);
	CHECK(count(r, task_idx(r, 101), &n, &trunc, NULL) == 0 && n == 6 && !trunc);
	CHECK(count(r, task_idx(r, 102), &n, &trunc, NULL) == 0 && n == 3 && !trunc);
	CHECK(vt_uft_stream_open(r, 5) == NULL);
	vt_uft_close(r);

	/* a non-empty directory is refused without force */
	CHECK(vt_uft_dir_create(dir, 0) < 0 && strstr(vt_err_msg(), "not empty"));
}

static void test_convert(const char *dir)
{
	char out[700];
	struct vt_uft_reader *r;
	struct vt_meta *m;
	uint64_t first = 0;
	int n, trunc;

	make_dir(dir, 1);
	snprintf(out, sizeof(out), "%s.ns", dir);
	CHECK(vt_uft_convert_ns(dir, out, 0, 1) == 0);
	r = vt_uft_open(out);
	CHECK(r != NULL);
	if (r) {
		CHECK(count(r, task_idx(r, 101), &n, &trunc, &first) == 0 && n == 6);
		CHECK(first == 1000000000ULL);	/* HZ ticks = 1 s */
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1000), "alpha");
		vt_uft_close(r);
	}
	m = vt_meta_read_dir(out);
	CHECK(m && !strcmp(vt_meta_get(m, VT_MK_CLOCK), "ns"));
	vt_meta_free(m);
	/* already ns: refused */
	CHECK(vt_uft_convert_ns(out, dir, 0, 1) < 0 && strstr(vt_err_msg(), "not 'tsc'"));
	/* truncated input: partial, complete records kept */
	truncate_to(dir, "101.dat", 5 * 16 + 7);
	CHECK(vt_uft_convert_ns(dir, out, HZ, 1) == VT_UFT_PARTIAL);
	CHECK(strstr(vt_err_msg(), "101.dat") != NULL);
	r = vt_uft_open(out);
	CHECK(r && count(r, task_idx(r, 101), &n, &trunc, NULL) == 0 && n == 5);
	vt_uft_close(r);
	CHECK(vt_tsc_to_ns(UINT64_MAX, 1000000000ULL) == UINT64_MAX);
	CHECK(vt_tsc_to_ns(3 * HZ, HZ) == 3000000000ULL);
}

/* The raw stamp of task @tid's first record as read from @dir (0 if none). */
static uint64_t first_of(const char *dir, int tid)
{
	struct vt_uft_reader *r = vt_uft_open(dir);
	uint64_t first = 0;
	int n, trunc;

	if (r)
		count(r, task_idx(r, tid), &n, &trunc, &first);
	vt_uft_close(r);
	return first;
}

/* The first record's time in @dir/@name, as uftrace reads the file. */
static uint64_t file_first(const char *dir, const char *name)
{
	char path[1024];
	uint64_t t = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "rb");
	if (fp) {
		CHECK(fread(&t, sizeof(t), 1, fp) == 1);
		fclose(fp);
	}
	return t;
}

static int exists(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static int unlink_in(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return unlink(path);
}

/* Finishing in place: ns copies for uftrace, the raw stamps kept and
 * preferred by the reader, again from the raw after a crash between the
 * rename and the copy, nothing done to a directory that is not one. */
static void test_finish(const char *dir)
{
	struct vt_meta *m;
	uint64_t raw;

	make_dir(dir, 1);
	raw = first_of(dir, 101);
	CHECK(raw == HZ);
	CHECK(vt_uft_finish_ns(dir, 0) == VT_UFT_FIN_DONE);
	CHECK(exists(dir, "101.tsc") && exists(dir, "102.tsc") && exists(dir, VT_UFT_RAW_TASK));
	CHECK(file_first(dir, "101.dat") == 1000000000ULL);	/* HZ ticks = 1 s */
	CHECK(file_first(dir, "101.tsc") == raw);
	CHECK(first_of(dir, 101) == raw);	/* vmtrace reads the ticks */
	m = vt_meta_read_dir(dir);
	CHECK(m && !strcmp(vt_meta_get(m, VT_MK_CLOCK), "tsc"));
	CHECK(m && vt_meta_get(m, VT_MK_UFTRACE_NS_HZ));
	vt_meta_free(m);
	/* cut between the rename and the copy: the next finish redoes it */
	CHECK(unlink_in(dir, "101.dat") == 0);
	CHECK(first_of(dir, 101) == raw);
	CHECK(vt_uft_finish_ns(dir, 0) == VT_UFT_FIN_DONE);
	CHECK(file_first(dir, "101.dat") == 1000000000ULL && file_first(dir, "101.tsc") == raw);
	/* another frequency on request: the copies from the same ticks */
	CHECK(vt_uft_finish_ns(dir, 2 * HZ) == VT_UFT_FIN_DONE);
	CHECK(file_first(dir, "101.dat") == 500000000ULL);
	/* the tids once each, though .dat and .tsc both exist */
	{
		struct vt_uft_reader *r = vt_uft_open(dir);

		CHECK(r && vt_uft_nr_tasks(r) == 2);
		vt_uft_close(r);
	}
	/* a forced re-create removes the raw files too */
	CHECK(vt_uft_dir_create(dir, 1) == 0);
	CHECK(!exists(dir, "101.tsc") && !exists(dir, VT_UFT_RAW_TASK));
	/* ns already, or no frequency: left as they are */
	make_dir(dir, 0);
	CHECK(vt_uft_finish_ns(dir, 0) == VT_UFT_FIN_NONE && !exists(dir, "101.tsc"));
	make_dir(dir, 1);
	m = vt_meta_read_dir(dir);
	vt_meta_del(m, VT_MK_TSC_HZ);
	CHECK(m && vt_meta_write_dir(m, dir) == 0);
	vt_meta_free(m);
	CHECK(vt_uft_finish_ns(dir, 0) == VT_UFT_FIN_NO_HZ && !exists(dir, "101.tsc"));
	CHECK(strstr(vt_err_msg(), "tsc.hz") != NULL);
}

/* A stage file @name in @dir: header at .dat offset @dat_off, @n records
 * (magic @magic). */
static void put_stage(const char *dir, const char *name, uint64_t magic, uint64_t dat_off,
		      unsigned n)
{
	struct vt_pystage_hdr h = { .magic = magic, .dat_off = dat_off };

	uft_fixture_put(dir, name, &h, sizeof(h), 0);
	for (unsigned i = 0; i < n; i++) {
		struct vt_uft_record r = { HZ * 3 + i, vt_uft_pack(VT_UFT_ENTRY, 0, BASE + 0x1000) };

		uft_fixture_put(dir, name, &r, sizeof(r), 1);
	}
}

/* vt_uft_finalize (lib/uftrace_fold.c): a tree of a finished directory
 * with a stage folded, fork-<PID>/ subdirectories without a frequency,
 * entries named fork- that are no directories; each failure a walk meets,
 * the first one's message kept; a stage beside a finished .tsc left
 * alone; a path past PATH_MAX; a cut .dat finished to its cut. */
static void test_finalize(const char *dir)
{
	struct vt_uft_fin_stats st;
	char sub[700], p[1024];
	struct vt_meta *m;
	struct stat sb;
	int fd;

	make_dir(dir, 1);
	CHECK(stat(strcat(strcpy(p, dir), "/101.dat"), &sb) == 0);
	put_stage(dir, "101.stage", VT_PYSTAGE_MAGIC, (uint64_t)sb.st_size, 2);
	for (int i = 1; i <= 2; i++) {	/* no tsc.hz: left raw, the first named */
		snprintf(sub, sizeof(sub), "%s/fork-%d", dir, i);
		make_dir(sub, 1);
		m = vt_meta_read_dir(sub);
		vt_meta_del(m, VT_MK_TSC_HZ);
		CHECK(m && vt_meta_write_dir(m, sub) == 0);
		vt_meta_free(m);
	}
	uft_fixture_put(dir, "fork-file", "x", 1, 0);
	snprintf(p, sizeof(p), "%s/fork-link", dir);
	CHECK(symlink("fork-none", p) == 0);
	CHECK(vt_uft_finalize(dir, 0, 0, &st) == 0);
	CHECK(st.folded == 1 && st.finished == 1 && st.unfinished == 2);
	CHECK(strstr(st.no_hz, "tsc.hz") != NULL);
	CHECK(!exists(dir, "101.stage") && exists(dir, "101.tsc"));
	CHECK(file_first(dir, "101.dat") == 1000000000ULL);
	CHECK(stat(strcat(strcpy(p, dir), "/101.tsc"), &sb) == 0 && sb.st_size == 8 * 16);

	/* a stage beside the finished 101.tsc: an error, the stage stays and
	 * the directory is not finished again; fork-1's bad stage is the
	 * second failure, its message not the one kept */
	put_stage(dir, "101.stage", VT_PYSTAGE_MAGIC, 0, 1);
	snprintf(sub, sizeof(sub), "%s/fork-1", dir);
	put_stage(sub, "101.stage", 0x1234, 0, 1);
	CHECK(vt_uft_finalize(dir, 0, HZ, &st) == -1);
	CHECK(st.folded == 0 && st.finished == 1);	/* fork-2 */
	CHECK(exists(dir, "101.stage") && exists(sub, "101.stage"));
	CHECK(strstr(vt_err_msg(), "101.stage: a stage beside a finished") ||
	      strstr(vt_err_msg(), "fork-1/101.stage: bad magic"));
	CHECK(!strstr(vt_err_msg(), "beside") != !strstr(vt_err_msg(), "magic"));	/* one */
	CHECK(unlink_in(dir, "101.stage") == 0 && unlink_in(sub, "101.stage") == 0);

	/* a directory that cannot be finished: its meta is corrupt */
	uft_fixture_put(sub, VT_META_FILE, "\x01\x02 not a meta\n", 13, 0);
	CHECK(vt_uft_finalize(dir, 0, HZ, &st) == -1);
	CHECK(strstr(vt_err_msg(), "fork-1") != NULL);
	CHECK(st.finished == 2);	/* the top and fork-2 */

	/* a .dat cut mid-record: finished to the cut, counted */
	snprintf(sub, sizeof(sub), "%s-cut", dir);
	make_dir(sub, 1);
	truncate_to(sub, "101.dat", 16 * 2 + 5);
	CHECK(vt_uft_finalize(sub, 1, 0, &st) == 0 && st.finished == 1);
	CHECK(exists(sub, "101.tsc"));
	CHECK(stat(strcat(strcpy(p, sub), "/101.dat"), &sb) == 0 && sb.st_size == 2 * 16);

	/* not a directory */
	CHECK(vt_uft_finalize("/no/such/vt-dir", 1, 0, &st) == -1);
	CHECK(strstr(vt_err_msg(), "/no/such/vt-dir: cannot read directory") != NULL);

	/* a tree so deep that an entry's path is past PATH_MAX: named, the
	 * rest walked */
	snprintf(sub, sizeof(sub), "%s-deep", dir);
	make_dir(sub, 1);
	fd = open(".", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && chdir(sub) == 0);
	{
		char name[256];
		size_t len = strlen(sub);

		memset(name, 'd', 200);
		name[200] = 0;
		while (len + 201 < PATH_MAX - 40) {
			CHECK(mkdir(name, 0755) == 0 && chdir(name) == 0);
			len += 201;
		}
		/* dir/d.../<name>: past PATH_MAX by its name's length */
		CHECK(PATH_MAX - len < sizeof(name));
		memset(name, 'x', PATH_MAX - len);
		name[PATH_MAX - len] = 0;
		uft_fixture_put(".", name, "x", 1, 0);
	}
	CHECK(fchdir(fd) == 0);
	close(fd);
	CHECK(vt_uft_finalize(sub, 1, 0, &st) == -1);
	CHECK(strstr(vt_err_msg(), "xxxx: path too long") != NULL);
	CHECK(st.finished == 1 && exists(sub, "101.tsc"));
}

static void test_hostile(const char *dir)
{
	struct vt_uft_reader *r;
	struct vt_uft_record rec;
	int n, trunc, idx;
	char path[1024];

	/* truncated last record: clean end, flagged */
	make_dir(dir, 0);
	truncate_to(dir, "101.dat", 3 * 16 + 5);
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (r) {
		CHECK(count(r, task_idx(r, 101), &n, &trunc, NULL) == 0 && n == 3 && trunc);
		vt_uft_close(r);
	}

	/* bad record magic: -1 naming file and offset */
	make_dir(dir, 0);
	rec.time = 5;
	rec.bits = 0xffffffffffffffffULL;
	uft_fixture_put(dir, "102.dat", &rec, sizeof(rec), 1);
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (r) {
		CHECK(count(r, task_idx(r, 102), &n, &trunc, NULL) == -1 && n == 3);
		CHECK(strstr(vt_err_msg(), "102.dat") && strstr(vt_err_msg(), "offset 48"));
		vt_uft_close(r);
	}

	/* an event with a huge payload length */
	make_dir(dir, 0);
	{
		uint8_t ev[24] = { 0 };
		uint64_t bits = vt_uft_pack(VT_UFT_EVENT, 0, 1) | (1ULL << 2);

		memcpy(ev + 8, &bits, 8);
		ev[16] = 0xff;
		ev[17] = 0xff;
		uft_fixture_put(dir, "102.dat", ev, sizeof(ev), 1);
		r = vt_uft_open(dir);
		CHECK(r && count(r, task_idx(r, 102), &n, &trunc, NULL) == -1);
		vt_uft_close(r);
		/* a well-formed event: 2-byte length, 6 bytes data, padded to 8 */
		make_dir(dir, 0);
		ev[16] = 6;
		ev[17] = 0;
		memcpy(ev + 18, "abcdef", 6);
		uft_fixture_put(dir, "102.dat", ev, sizeof(ev), 1);
		r = vt_uft_open(dir);
		CHECK(r && count(r, task_idx(r, 102), &n, &trunc, NULL) == 0 && n == 4 && !trunc);
		vt_uft_close(r);
	}

	/* argument data is refused, not misparsed */
	make_dir(dir, 0);
	rec.time = 9;
	rec.bits = vt_uft_pack(VT_UFT_ENTRY, 0, BASE + 0x1000) | (1ULL << 2);
	uft_fixture_put(dir, "102.dat", &rec, sizeof(rec), 1);
	r = vt_uft_open(dir);
	CHECK(r && count(r, task_idx(r, 102), &n, &trunc, NULL) == -1);
	CHECK(strstr(vt_err_msg(), "argument") != NULL);
	vt_uft_close(r);

	/* info: bad magic, truncated header, lying counts */
	make_dir(dir, 0);
	uft_fixture_put(dir, "info", "Xtrace!", 8, 0);
	CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "info"));
	/* a version past the one we read (the header's u32 at offset 8) */
	for (uint32_t v = VT_UFT_FILE_VERSION + 1; v <= VT_UFT_FILE_VERSION + 2; v++) {
		int fd;

		make_dir(dir, 0);
		snprintf(path, sizeof(path), "%s/info", dir);
		fd = open(path, O_WRONLY);
		CHECK(fd >= 0 && pwrite(fd, &v, sizeof(v), 8) == (ssize_t)sizeof(v));
		if (fd >= 0)
			close(fd);
		CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "unsupported file version"));
	}
	make_dir(dir, 0);
	truncate_to(dir, "info", 20);
	CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "truncated"));
	for (off_t cut = 41; cut < 400; cut += 17) {
		make_dir(dir, 0);
		truncate_to(dir, "info", cut);
		r = vt_uft_open(dir);	/* may fail; must not crash */
		vt_uft_close(r);
	}
	make_dir(dir, 0);
	snprintf(path, sizeof(path), "%s/info", dir);
	{
		size_t len;
		FILE *fp = fopen(path, "rb");
		char buf[8192], *p;

		len = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
		if (fp)
			fclose(fp);
		buf[len] = 0;
		p = memmem(buf, len, "nr_tid=2", 8);
		CHECK(p != NULL);
		if (p) {
			p[7] = '9';
			uft_fixture_put(dir, "info", buf, len, 0);
			CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "tids"));
		}
	}

	/* task.txt garbage */
	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", "TASK timestamp=1.5 tid=x\n", 25, 1);
	CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "task.txt:4"));
	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", "TASK timestamp=99999999999999999999.1 tid=1 pid=1\n", 51, 1);
	CHECK(vt_uft_open(dir) == NULL);
	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", "SESS timestamp=1.0 pid=1 sid=\0\n", 31, 1);
	CHECK(vt_uft_open(dir) == NULL);

	/* .sym garbage lines are skipped like uftrace does; no crash */
	make_dir(dir, 0);
	{
		static const char junk[] = "zzzz\n12345\nffffffffffffffff T huge\n0 T\n"
					   "00000000000013f0 T \0nul\n0000000000001400 T late";

		uft_fixture_put(dir, "prog.sym", junk, sizeof(junk) - 1, 1);
	}
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (r) {
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1400), "late");
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1000), "alpha");
		vt_uft_close(r);
	}

	/* a task listed in task.txt without a .dat: empty stream */
	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", "TASK timestamp=1.000000000 tid=777 pid=101\n", 43, 1);
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	idx = r ? task_idx(r, 777) : -1;
	CHECK(idx >= 0);
	if (r && idx >= 0)
		CHECK(count(r, idx, &n, &trunc, NULL) == 0 && n == 0 && !trunc);
	vt_uft_close(r);

	/* a FIFO where a .dat or the info file should be: refused, no hang */
	make_dir(dir, 0);
	snprintf(path, sizeof(path), "%s/4444.dat", dir);
	CHECK(mkfifo(path, 0644) == 0);
	uft_fixture_put(dir, "task.txt", "TASK timestamp=1.000000000 tid=4444 pid=101\n", 44, 1);
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	idx = r ? task_idx(r, 4444) : -1;
	CHECK(idx >= 0);
	if (r && idx >= 0) {
		CHECK(vt_uft_stream_open(r, idx) == NULL);
		CHECK(strstr(vt_err_msg(), "not a regular file") != NULL);
	}
	vt_uft_close(r);
	unlink(path);
	snprintf(path, sizeof(path), "%s/info", dir);
	unlink(path);
	CHECK(mkfifo(path, 0644) == 0);
	CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "not a regular file"));

	/* no info file at all */
	snprintf(path, sizeof(path), "%s/info", dir);
	unlink(path);
	CHECK(vt_uft_open(dir) == NULL && strstr(vt_err_msg(), "info"));
	CHECK(vt_uft_open("/nonexistent/dir") == NULL);
}

/* @dir's info file replaced by a header of @info_mask and the sections
 * @text (sections lib/uftrace_write.c does not write). */
static void put_info(const char *dir, uint64_t info_mask, const char *text)
{
	struct vt_uft_file_header h = {
		.version = VT_UFT_FILE_VERSION, .header_size = VT_UFT_HEADER_SIZE,
		.endian = VT_UFT_ENDIAN_LITTLE, .elf_class = VT_UFT_ELFCLASS64,
		.info_mask = info_mask,
	};

	memcpy(h.magic, VT_UFT_MAGIC_STR, sizeof(VT_UFT_MAGIC_STR));
	uft_fixture_put(dir, "info", &h, sizeof(h), 0);
	uft_fixture_put(dir, "info", text, strlen(text), 1);
}

/* The last message holds @want (printed when not). */
static int msg_has(const char *want)
{
	if (strstr(vt_err_msg(), want))
		return 1;
	fprintf(stderr, "message '%s' lacks '%s'\n", vt_err_msg(), want);
	return 0;
}

/* @dir opened: NULL with a message holding @want, or (@want NULL) not. */
static int open_fails(const char *dir, const char *want)
{
	struct vt_uft_reader *r = vt_uft_open(dir);

	vt_uft_close(r);
	return r == NULL && msg_has(want);
}

/* The info sections lib/uftrace_write.c does not write: argspec (skipped,
 * its count and lines checked), an elapsed time past 2^64 ns (left 0), a
 * taskinfo count past MAX_TASKS. */
static void test_info_sections(const char *dir)
{
	const uint64_t mask = VT_UFT_INFO_EXE_NAME | VT_UFT_INFO_ARG_SPEC |
			      VT_UFT_INFO_RECORD_DATE;
	struct vt_uft_reader *r;

	make_dir(dir, 0);
	put_info(dir, mask, "exename:/bin/x\nargspec:lines=2\nargspec:a\nretspec:b\n"
		 "record_date:Sun\nelapsed_time:18446744073.000000000 sec\n");
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (r) {
		CHECK_STR(vt_uft_reader_info(r)->exename, "/bin/x");
		CHECK(vt_uft_reader_info(r)->elapsed_ns == 0);
		CHECK(vt_uft_reader_info(r)->nr_tids == 0 && vt_uft_nr_tasks(r) == 2);
		/* the tasks by index, past either end */
		CHECK(vt_uft_task_tid(r, -1) == -1 && vt_uft_task_pid(r, -1) == -1);
		CHECK(vt_uft_task_pid(r, 2) == -1 && vt_uft_task_pid(r, 1) == 101);
		vt_uft_close(r);
	}
	put_info(dir, mask, "exename:/bin/x\nargspec:lines=7\n");
	CHECK(open_fails(dir, "/info: bad argspec:lines count"));
	put_info(dir, mask, "exename:/bin/x\nargspec:lines=x\n");
	CHECK(open_fails(dir, "/info: bad argspec:lines count"));
	put_info(dir, mask, "exename:/bin/x\nargspec:lines=2\nargspec:a\n");
	CHECK(open_fails(dir, "/info: truncated argspec section"));
	put_info(dir, mask, "exename:/bin/x\nargspec:lines=1\nargspec:\001\n");
	{
		char path[1024];
		int fd;

		/* the argspec line's \001 made a NUL */
		snprintf(path, sizeof(path), "%s/info", dir);
		fd = open(path, O_WRONLY);
		CHECK(fd >= 0 && pwrite(fd, "", 1, VT_UFT_HEADER_SIZE + 39) == 1);
		if (fd >= 0)
			close(fd);
	}
	CHECK(open_fails(dir, "/info: truncated argspec section"));
	put_info(dir, VT_UFT_INFO_TASKINFO,
		 "taskinfo:lines=2\ntaskinfo:nr_tid=1048577\ntaskinfo:tids=1\n");
	CHECK(open_fails(dir, "/info: bad taskinfo:nr_tid"));
}

/* task.txt's lines: FORK (a task of its own pid), DLOP (skipped), and the
 * numbers each line type refuses; more sessions than the reader keeps. */
static void test_task_lines(const char *dir)
{
	static const char *const bad[][2] = {
		{ "TASK timestamp=1.0 tid=0 pid=1\n", "task.txt:4: bad TASK line" },
		{ "TASK timestamp=1.0 tid=1 pid=0\n", "task.txt:4: bad TASK line" },
		{ "FORK timestamp=1.0 pid=5\n", "task.txt:4: bad FORK line" },
		{ "FORK timestamp=1.0 pid=0 ppid=1\n", "task.txt:4: bad FORK line" },
		{ "FORK timestamp=1.0 pid=5 ppid=-1\n", "task.txt:4: bad FORK line" },
		{ "SESS timestamp=1.0 pid=0 sid=0123456789abcdef\n", "task.txt:4: bad SESS line" },
		{ "SESS timestamp=1.0 pid=1 sid=0123456789\n", "task.txt:4: bad SESS line" },
		{ "EXIT timestamp=1.0 pid=1\n", "task.txt:4: unknown line type" },
	};
	static const char good[] = "FORK timestamp=1.5 pid=555 ppid=101\n"
				   "DLOP timestamp=1.6 tid=555 base=7f0000000000 libname=libx.so\n";
	struct vt_uft_reader *r;
	char *many;
	int idx;

	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", good, sizeof(good) - 1, 1);
	r = vt_uft_open(dir);
	CHECK(r != NULL && vt_uft_nr_tasks(r) == 3);
	idx = r ? task_idx(r, 555) : -1;
	CHECK(idx >= 0 && vt_uft_task_pid(r, idx) == 555);
	vt_uft_close(r);
	for (size_t i = 0; i < VT_ARRAY_SIZE(bad); i++) {
		make_dir(dir, 0);
		uft_fixture_put(dir, "task.txt", bad[i][0], strlen(bad[i][0]), 1);
		CHECK(open_fails(dir, bad[i][1]));
	}
	/* the fixture's session, then 4096 more */
	many = malloc(4096 * 64);
	CHECK(many != NULL);
	if (!many)
		return;
	make_dir(dir, 0);
	for (int i = 0; i < 4096; i++)
		snprintf(many + i * 63, 64, "SESS timestamp=1.0 pid=101 sid=%016x%15s\n", i, "");
	uft_fixture_put(dir, "task.txt", many, 4096 * 63, 1);
	free(many);
	CHECK(open_fails(dir, "/task.txt: more than 4096 sessions"));
}

/* The fixture's session id (make_dir(dir, 0)) into @sid. */
static void fixture_sid(char *sid)
{
	vt_uft_sid_make(sid, 101, 1000000000ULL);
}

/* @dir opened with @name a directory in place of a file: NULL with a
 * message holding @want; the directory removed again. */
static int open_fails_subdir(const char *dir, const char *name, const char *want)
{
	char path[1024];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(unlink(path) == 0 || errno == ENOENT);
	CHECK(mkdir(path, 0755) == 0);
	ret = open_fails(dir, want);
	CHECK(rmdir(path) == 0);
	return ret;
}

#define TASKS_NO_SESS	"TASK timestamp=1.0 tid=101 pid=101\nTASK timestamp=1.0 tid=102 pid=101\n"

/* The sid maps and .sym files: a mapping that ends before it starts
 * skipped, the same file at the same place in two sessions loaded once,
 * another file there loaded too, a file whose .sym name is too long
 * skipped, a .sym line of every malformed kind skipped (a size column, a
 * name cut at a tab, the end markers sizing the symbol before them), a
 * map or .sym that is no file refusing the directory. */
static void test_maps(const char *dir)
{
	static const char two[] =
		"SESS timestamp=1.0 pid=101 sid=aaaaaaaaaaaaaaaa exename=\"" EXE "\"\n"
		"SESS timestamp=1.0 pid=101 sid=bbbbbbbbbbbbbbbb exename=\"" EXE "\"\n" TASKS_NO_SESS;
	static const char map_a[] = "000000400000-000000403000 r-xp 00000000 00:00 0 " EXE "\n"
				    "000000403000-000000400000 r-xp 00000000 00:00 0 /opt/skip\n";
	static const char sym_junk[] =
		"11111111111111111 T over\n"
		"0000000000001300 fffffffffffffffff T sizeover\n"
		"0000000000001300 12x T bad\n"
		"0000000000001300 zz T bad\n"
		"0000000000001300 40 \n"
		"0000000000001300 40 TT bad\n"
		"0000000000001300 00000010 T tabbed\tmodule\n"
		"0000000000001310 T after\n"
		"0000000000001320 T __func_end\n"
		"0000000000001330 T mid\n"
		"0000000000001338 d __dynsym_end\n";
	char map_b[600], name[300];
	struct vt_uft_reader *r;

	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", two, sizeof(two) - 1, 0);
	uft_fixture_put(dir, "sid-aaaaaaaaaaaaaaaa.map", map_a, sizeof(map_a) - 1, 0);
	memset(name, 'n', 252);
	name[252] = 0;
	snprintf(map_b, sizeof(map_b), "000000400000-000000403000 r-xp 00000000 00:00 0 %s\n"
		 "000000400000-000000401000 r-xp 00000000 00:00 0 /opt/other/lib2\n"
		 "000000500000-000000501000 r-xp 00000000 00:00 0 /opt/%s\n", EXE, name);
	uft_fixture_put(dir, "sid-bbbbbbbbbbbbbbbb.map", map_b, strlen(map_b), 0);
	uft_fixture_put(dir, "lib2.sym", "0000000000000800 T libfn\n", 25, 0);
	uft_fixture_put(dir, "prog.sym", sym_junk, sizeof(sym_junk) - 1, 1);
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (r) {
		/* alpha, beta, gamma, delta, tabbed, after, mid; libfn */
		CHECK(vt_uft_nr_syms(r) == 8);
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x800), "libfn");
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1305), "tabbed");
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x131f), "after");
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1320), "");
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1337), "mid");
		CHECK_STR(vt_uft_sym_name(r, BASE + 0x1338), "");
		vt_uft_close(r);
	}
	CHECK(open_fails_subdir(dir, "prog.sym", "/prog.sym: not a regular file"));
	CHECK(open_fails_subdir(dir, "task.txt", "/task.txt: not a regular file"));
	{
		char info[1024];

		snprintf(info, sizeof(info), "%s/info", dir);
		CHECK(open_fails(info, "/info: not a directory"));
	}
	CHECK(open_fails_subdir(dir, "sid-bbbbbbbbbbbbbbbb.map",
				"/sid-bbbbbbbbbbbbbbbb.map: not a regular file"));
}

/* With no session in task.txt, the directory's sid-*.map files: only
 * names of a session id, at most 4096 of them; one that is no file
 * refuses the directory.  More mappings than the reader keeps.  On tmpfs
 * (some 8000 files). */
static void test_glob_maps(void)
{
	char dir[] = "/dev/shm/t-uftrace.XXXXXX";
	char sid[VT_UFT_SID_LEN + 1], name[64], text[128], *big;
	struct vt_uft_reader *r;
	size_t n = 0;

	CHECK(mkdtemp(dir) != NULL);
	make_dir(dir, 0);
	fixture_sid(sid);
	uft_fixture_put(dir, "task.txt", TASKS_NO_SESS, strlen(TASKS_NO_SESS), 0);
	snprintf(text, sizeof(text), "000000700000-000000701000 r-xp 00000000 00:00 0 /x/bang\n");
	uft_fixture_put(dir, "sid-0123456789abcde!.map", text, strlen(text), 0);
	uft_fixture_put(dir, "sid-0123456789abcdef.txt", text, strlen(text), 0);
	uft_fixture_put(dir, "xid-0123456789abcdef.map", text, strlen(text), 0);
	uft_fixture_put(dir, "bang.sym", "0000000000000000 T bang\n", 24, 0);
	r = vt_uft_open(dir);
	CHECK(r && vt_uft_nr_syms(r) == 4);
	CHECK(r && !strcmp(vt_uft_sym_name(r, BASE + 0x1000), "alpha"));
	CHECK(r && !strcmp(vt_uft_sym_name(r, 0x700000), ""));
	vt_uft_close(r);
	CHECK(open_fails_subdir(dir, "sid-bbbbbbbbbbbbbbbb.map",
				"/sid-bbbbbbbbbbbbbbbb.map: not a regular file"));

	/* 4097 maps of a file each, each file one symbol: 4096 read */
	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", TASKS_NO_SESS, strlen(TASKS_NO_SESS), 0);
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	CHECK(unlink_in(dir, name) == 0);
	for (int i = 0; i <= 4096; i++) {
		snprintf(name, sizeof(name), "sid-%016x.map", i);
		snprintf(text, sizeof(text), "%012x-%012x r-xp 00000000 00:00 0 /m/f%d\n",
			 (i + 1) << 12, (i + 2) << 12, i);
		uft_fixture_put(dir, name, text, strlen(text), 0);
		snprintf(name, sizeof(name), "f%d.sym", i);
		uft_fixture_put(dir, name, "0000000000000000 T f\n", 21, 0);
	}
	r = vt_uft_open(dir);
	CHECK(r && vt_uft_nr_syms(r) == 4096);
	vt_uft_close(r);

	/* a map of 65537 files */
	make_dir(dir, 0);
	big = malloc(65537 * 64);
	CHECK(big != NULL);
	if (!big)
		return;
	for (int i = 0; i < 65537; i++)
		n += (size_t)snprintf(big + n, 64, "%012x-%012x r-xp 00000000 00:00 0 /m/f%d\n",
				      (i + 1) << 12, (i + 2) << 12, i);
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	uft_fixture_put(dir, name, big, n, 0);
	free(big);
	CHECK(open_fails(dir, "more than 65536 mappings"));
	snprintf(text, sizeof(text), "%s/%s", dir, name);
	CHECK(msg_has(text));
	CHECK(vt_uft_dir_create(dir, 1) == 0 && unlink_in(dir, "sid-0123456789abcdef.txt") == 0);
	CHECK(unlink_in(dir, "xid-0123456789abcdef.map") == 0);
	CHECK(rmdir(dir) == 0);
}

/* More tasks than the reader keeps: 2^21 task.txt lines and one more
 * (TASK or FORK) or a .dat file beside them; 2^20 + 1 different tids.
 * In up to 62 MB of task.txt, on tmpfs. */
static void test_many_tasks(void)
{
	static const char task[] = "TASK timestamp=0.0 tid=1 pid=1\n";
	const size_t nr = 2 * MAX_TASKS, len = sizeof(task) - 1;
	char dir[] = "/dev/shm/t-uftrace.XXXXXX";
	char *buf = malloc(nr * len + 64);
	size_t n = 0;

	CHECK(buf != NULL && mkdtemp(dir) != NULL);
	if (!buf)
		return;
	make_dir(dir, 0);
	for (size_t i = 0; i < nr; i++)
		memcpy(buf + i * len, task, len);
	/* the .dat files' tasks past the limit */
	uft_fixture_put(dir, "task.txt", buf, nr * len, 0);
	CHECK(open_fails(dir, ": more than 1048576 tasks"));
	/* a last line past the limit */
	CHECK(unlink_in(dir, "101.dat") == 0 && unlink_in(dir, "102.dat") == 0);
	uft_fixture_put(dir, "task.txt", task, len, 1);
	CHECK(open_fails(dir, ": more than 1048576 tasks"));
	uft_fixture_put(dir, "task.txt", buf, nr * len, 0);
	uft_fixture_put(dir, "task.txt", "FORK timestamp=0.0 pid=1 ppid=1\n", 32, 1);
	CHECK(open_fails(dir, ": more than 1048576 tasks"));
	/* as many lines, each a tid of its own */
	for (int tid = 1; tid <= MAX_TASKS + 1; tid++)
		n += (size_t)sprintf(buf + n, "TASK timestamp=0.0 tid=%d pid=1\n", tid);
	uft_fixture_put(dir, "task.txt", buf, n, 0);
	CHECK(open_fails(dir, ": more than 1048576 tasks"));
	free(buf);
	CHECK(vt_uft_dir_create(dir, 1) == 0 && rmdir(dir) == 0);
}

/* @src renamed to a directory of @deep (a path of 4000 bytes) whose path
 * is @len bytes long, which is written to @out. */
static void move_deep(const char *src, const char *deep, size_t len, char *out)
{
	size_t n = strlen(deep);

	memcpy(out, deep, n);
	out[n] = '/';
	memset(out + n + 1, 'x', len - n - 1);
	out[len] = 0;
	CHECK(rename(src, out) == 0);
}

/* A trace directory whose path leaves no room for one of its files'
 * names: each refused naming the file ("path too long"): info, task.tsc,
 * the session's map, a task's .dat (the stream); a .sym and a .stage name
 * that would be too long are read as absent. */
static void test_deep(const char *dir)
{
	static const char tasks[] = TASKS_NO_SESS "TASK timestamp=1.0 tid=2000000000 pid=101\n";
	static const char map[] = "000000600000-000000601000 r-xp 00000000 00:00 0 "
				  "/opt/a-library-of-a-name-long-enough-to-be-cut\n";
	char src[1024], deep[4200], long_dir[4200], sid[VT_UFT_SID_LEN + 1], name[1100];
	struct vt_uft_reader *r;
	int n, trunc;

	snprintf(src, sizeof(src), "%s-long-src", dir);
	make_dir(src, 0);
	/* DIR-long/ddd.../eee...: 4000 bytes, each name of 200 at most */
	n = snprintf(deep, sizeof(deep), "%s-long", dir);
	CHECK(mkdir(deep, 0755) == 0);
	while (n < 4000) {
		int k = 4000 - n - 1 > 200 ? 200 : 4000 - n - 1;

		deep[n++] = '/';
		memset(deep + n, 4000 - n > 200 ? 'd' : 'e', k);
		n += k;
		deep[n] = 0;
		CHECK(mkdir(deep, 0755) == 0);
	}
	CHECK(strlen(deep) == 4000);

	move_deep(src, deep, 4092, long_dir);
	CHECK(open_fails(long_dir, "/info: path too long"));
	CHECK(rename(long_dir, src) == 0);
	move_deep(src, deep, 4088, long_dir);
	CHECK(open_fails(long_dir, "/task.tsc: path too long"));
	CHECK(rename(long_dir, src) == 0);
	move_deep(src, deep, 4080, long_dir);
	fixture_sid(sid);
	snprintf(name, sizeof(name), "/sid-%s.map: path too long", sid);
	CHECK(open_fails(long_dir, name));
	CHECK(rename(long_dir, src) == 0);

	/* no session: tids from task.txt, one too long for its .dat's name */
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	CHECK(unlink_in(src, name) == 0);
	uft_fixture_put(src, "task.txt", tasks, sizeof(tasks) - 1, 0);
	move_deep(src, deep, 4085, long_dir);
	r = vt_uft_open(long_dir);
	CHECK(r != NULL && vt_uft_nr_tasks(r) == 3);
	if (r) {
		CHECK(vt_uft_stream_open(r, task_idx(r, 2000000000)) == NULL &&
		      msg_has(": path too long"));
		CHECK(count(r, task_idx(r, 101), &n, &trunc, NULL) == 0 && n == 6);
		vt_uft_close(r);
	}
	CHECK(rename(long_dir, src) == 0);
	/* 101.stage's name one byte past PATH_MAX: not looked for */
	put_stage(src, "101.stage", VT_PYSTAGE_MAGIC, 6 * 16, 2);
	move_deep(src, deep, 4086, long_dir);
	r = vt_uft_open(long_dir);
	CHECK(r != NULL);
	if (r) {
		CHECK(count(r, task_idx(r, 101), &n, &trunc, NULL) == 0 && n == 6);
		vt_uft_close(r);
	}
	CHECK(rename(long_dir, src) == 0);
	/* the library's .sym name past PATH_MAX: its symbols are not read */
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	uft_fixture_put(src, name, map, sizeof(map) - 1, 0);
	uft_fixture_put(src, "a-library-of-a-name-long-enough-to-be-cut.sym",
			"0000000000000000 T libfn\n", 25, 0);
	move_deep(src, deep, 4050, long_dir);
	r = vt_uft_open(long_dir);
	CHECK(r != NULL && vt_uft_nr_syms(r) == 0);
	vt_uft_close(r);
	CHECK(rename(long_dir, src) == 0);
	r = vt_uft_open(src);
	CHECK(r && vt_uft_nr_syms(r) == 1 && !strcmp(vt_uft_sym_name(r, 0x600000), "libfn"));
	vt_uft_close(r);

	/* clock=tsc, only task 2000000000 (no .dat) in a directory of 4082
	 * bytes: converting from it or into one, finishing it, its raw or
	 * .dat name is too long (the other names fit) */
	make_dir(src, 1);
	vt_uft_sid_make(sid, 101, HZ);
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	CHECK(unlink_in(src, name) == 0);
	uft_fixture_put(src, "task.txt", tasks + strlen(TASKS_NO_SESS),
			sizeof(tasks) - 1 - strlen(TASKS_NO_SESS), 0);
	CHECK(unlink_in(src, "101.dat") == 0 && unlink_in(src, "102.dat") == 0);
	move_deep(src, deep, 4082, long_dir);
	snprintf(name, sizeof(name), "%s.ns", dir);
	CHECK(vt_uft_convert_ns(long_dir, name, 0, 1) < 0 && msg_has("xxx: path too long"));
	CHECK(vt_uft_finish_ns(long_dir, 0) < 0 && msg_has("xxx: path too long"));
	CHECK(rename(long_dir, src) == 0);
	/* into it: only the raw task.tsc (no task.txt to convert there) */
	snprintf(name, sizeof(name), "%s/task.txt", src);
	snprintf(name + 600, sizeof(name) - 600, "%s/" VT_UFT_RAW_TASK, src);
	CHECK(rename(name, name + 600) == 0);
	CHECK(vt_uft_convert_ns(src, long_dir, 0, 1) < 0 && msg_has("xxx: path too long"));
	CHECK(vt_uft_dir_create(long_dir, 1) == 0 && rmdir(long_dir) == 0);
}

/* The record reader's edges: no such task, a .dat that cannot be opened,
 * an event record cut before its length or its data (truncated), a record
 * of time 0 with a bad magic, the reader failed or at its end staying so;
 * a zeroed record a live writer fills meanwhile (read on); the run of
 * plain records stopping at an event. */
static void test_stream_edges(const char *dir)
{
	struct vt_uft_record rec, ev = { 7, vt_uft_pack(VT_UFT_EVENT, 0, 1) | (1ULL << 2) };
	struct vt_uft_reader *r;
	struct vt_uft_stream *s;
	char path[1024];
	size_t got;
	int n, trunc;

	vt_uft_stream_close(NULL);
	make_dir(dir, 0);
	uft_fixture_put(dir, "task.txt", "TASK timestamp=1.0 tid=777 pid=101\n", 35, 1);
	snprintf(path, sizeof(path), "%s/777.dat", dir);
	CHECK(symlink("777.dat", path) == 0);	/* a loop */
	r = vt_uft_open(dir);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(vt_uft_stream_open(r, -1) == NULL && msg_has(": no task #-1"));
	CHECK(vt_uft_stream_open(r, task_idx(r, 777)) == NULL &&
	      msg_has("/777.dat: cannot open: Too many levels of symbolic links"));
	vt_uft_close(r);
	CHECK(unlink(path) == 0);

	/* an event's record alone, then with its length and 3 of 6 bytes */
	make_dir(dir, 0);
	uft_fixture_put(dir, "102.dat", &ev, sizeof(ev), 1);
	r = vt_uft_open(dir);
	CHECK(r && count(r, task_idx(r, 102), &n, &trunc, NULL) == 0 && n == 3 && trunc);
	vt_uft_close(r);
	uft_fixture_put(dir, "102.dat", "\006\000abc", 5, 1);
	r = vt_uft_open(dir);
	CHECK(r && count(r, task_idx(r, 102), &n, &trunc, NULL) == 0 && n == 3 && trunc);
	vt_uft_close(r);

	/* time 0, a bad magic: refused, and again when asked again */
	make_dir(dir, 0);
	rec = (struct vt_uft_record){ 0, 0xffff };
	uft_fixture_put(dir, "102.dat", &rec, sizeof(rec), 1);
	r = vt_uft_open(dir);
	s = r ? vt_uft_stream_open(r, task_idx(r, 102)) : NULL;
	CHECK(s != NULL);
	if (s) {
		for (n = 0; n < 3; n++)
			CHECK(vt_uft_stream_next(s, &rec) == 1);
		CHECK(vt_uft_stream_next(s, &rec) == -1 &&
		      msg_has("/102.dat: offset 48: bad record magic 7 (corrupt data)"));
		CHECK(vt_uft_stream_next(s, &rec) == -1);
		CHECK(vt_uft_stream_run(s, 8, &got) == NULL && got == 0);
		vt_uft_stream_close(s);
	}
	vt_uft_close(r);

	/* 101: 6 records, 2 zeroed; the first zeroed one written after the
	 * reader buffered it; at the end, no run */
	make_dir(dir, 0);
	memset(&rec, 0, sizeof(rec));
	uft_fixture_put(dir, "101.dat", &rec, sizeof(rec), 1);
	uft_fixture_put(dir, "101.dat", &rec, sizeof(rec), 1);
	r = vt_uft_open(dir);
	s = r ? vt_uft_stream_open(r, task_idx(r, 101)) : NULL;
	CHECK(s != NULL);
	if (s) {
		uint64_t last = 0;
		int fd;

		CHECK(vt_uft_stream_next(s, &rec) == 1 && rec.time == 1000000000ULL);
		snprintf(path, sizeof(path), "%s/101.dat", dir);
		fd = open(path, O_WRONLY);
		rec = (struct vt_uft_record){ 1000002000ULL,
					      vt_uft_pack(VT_UFT_ENTRY, 0, BASE + 0x1000) };
		CHECK(fd >= 0 && pwrite(fd, &rec, sizeof(rec), 6 * 16) == (ssize_t)sizeof(rec));
		if (fd >= 0)
			close(fd);
		for (n = 1; vt_uft_stream_next(s, &rec) == 1; n++)
			last = rec.time;
		CHECK(n == 7 && last == 1000002000ULL && !vt_uft_stream_truncated(s));
		CHECK(vt_uft_stream_offset(s) == 7 * 16);
		CHECK(vt_uft_stream_run(s, 8, &got) == NULL && got == 0);
		vt_uft_stream_close(s);
	}
	vt_uft_close(r);

	/* a zeroed record, then the file cut inside it with data there: no
	 * whole record after the zeros, corrupt */
	make_dir(dir, 0);
	memset(&rec, 0, sizeof(rec));
	uft_fixture_put(dir, "101.dat", &rec, sizeof(rec), 1);
	r = vt_uft_open(dir);
	s = r ? vt_uft_stream_open(r, task_idx(r, 101)) : NULL;
	CHECK(s != NULL);
	if (s) {
		CHECK(vt_uft_stream_next(s, &rec) == 1);
		truncate_to(dir, "101.dat", 6 * 16 + 8);
		snprintf(path, sizeof(path), "%s/101.dat", dir);
		{
			int fd = open(path, O_WRONLY);

			CHECK(fd >= 0 && pwrite(fd, "\xff", 1, 6 * 16 + 4) == 1);
			if (fd >= 0)
				close(fd);
		}
		for (n = 1; vt_uft_stream_next(s, &rec) == 1; n++)
			;
		CHECK(n == 6 && msg_has("/101.dat: offset 96: zeroed record followed by data"));
		vt_uft_stream_close(s);
	}
	vt_uft_close(r);

	/* a run of the 3 plain records before an event */
	make_dir(dir, 0);
	ev.time = 1000000080ULL;
	uft_fixture_put(dir, "102.dat", &ev, sizeof(ev), 1);
	uft_fixture_put(dir, "102.dat", "\002\000ab\000\000\000\000", 8, 1);
	r = vt_uft_open(dir);
	s = r ? vt_uft_stream_open(r, task_idx(r, 102)) : NULL;
	CHECK(s != NULL);
	if (s) {
		const void *pl;
		size_t len;

		CHECK(vt_uft_stream_run(s, 8, &got) != NULL && got == 3);
		CHECK(vt_uft_stream_run(s, 8, &got) != NULL && got == 0);
		CHECK(vt_uft_stream_next(s, &rec) == 1 && rec.time == 1000000080ULL);
		pl = vt_uft_stream_payload(s, &len);
		CHECK(pl && len == 2 && !memcmp(pl, "ab", 2));
		CHECK(vt_uft_stream_next(s, &rec) == 0);
		vt_uft_stream_close(s);
	}
	vt_uft_close(r);
}

static void test_errors(void)
{
	struct vt_uft_info info = { .exename = EXE };

	CHECK(vt_uft_dir_create("/proc/vmtrace-cannot", 0) < 0);
	CHECK(strstr(vt_err_msg(), "/proc/vmtrace-cannot") != NULL);
	CHECK(vt_uft_write_info("/nonexistent/x", &info) < 0);
	CHECK(vt_uft_task_thread("/nonexistent/x", 1, 1, 1) < 0);
	CHECK(strstr(vt_err_msg(), "/nonexistent/x/task.txt") != NULL);
	CHECK(vt_uft_write_map_fixed(tmp, "0123456789abcdef", 0x2000, 0x1000, EXE) < 0);
	CHECK(vt_uft_write_map_fixed(tmp, "0123456789abcdef", 0, 1ULL << 49, EXE) < 0);
	CHECK(strstr(vt_err_msg(), "48-bit") != NULL);
	CHECK(vt_uft_write_map_fixed(tmp, "0123456789abcde", 0, 0x1000, EXE) < 0);
	/* an image over the usual stack place: the [stack] line moves low */
	CHECK(vt_uft_write_map_fixed(tmp, "0123456789abcdef", 0x7fff00000000ULL,
				     0x800000000000ULL, EXE) == 0);
	{
		char path[1024], buf[512] = "";
		FILE *fp;

		snprintf(path, sizeof(path), "%s/sid-0123456789abcdef.map", tmp);
		fp = fopen(path, "r");
		CHECK(fp && fread(buf, 1, sizeof(buf) - 1, fp) > 0);
		if (fp)
			fclose(fp);
		CHECK(strstr(buf, "000000001000-000000002000 rw-p 00000000 00:00 0 [stack]") != NULL);
		unlink(path);
	}
	CHECK(vt_uft_write_syms_elf(tmp, "/nonexistent/elf", 0) < 0);
}

int main(void)
{
	char dir[600];
	const char *t = getenv("VT_TMP");

	snprintf(tmp, sizeof(tmp), "%s", t ? t : "/tmp");
	snprintf(dir, sizeof(dir), "%s/t-uftrace.%d", tmp, (int)getpid());
	test_roundtrip(dir);
	test_convert(dir);
	test_finish(dir);
	test_finalize(dir);
	test_hostile(dir);
	test_info_sections(dir);
	test_task_lines(dir);
	test_maps(dir);
	test_glob_maps();
	test_many_tasks();
	test_deep(dir);
	test_stream_edges(dir);
	test_errors();
	return check_done();
}
