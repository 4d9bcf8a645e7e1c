/*
 * t-uftrace.c - unit test of the uftrace module (lib/uftrace_*.c): write a data directory, read
 * it back (tasks, records, symbols, info), convert TSC -> ns, and feed the
 * reader hostile inputs (truncated/corrupt info, .dat, task.txt, .sym).
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
#include "pystage.h"
#include "uftrace.h"
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
	test_errors();
	return check_done();
}
