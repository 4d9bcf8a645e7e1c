/*
 * t-uftrace-corrupt.c - unit test of the uftrace reader on damaged data
 * directories (lib/uftrace_read.c, uftrace_util.c): every file a
 * directory written by lib/uftrace_write.c holds (info, task.txt, the map,
 * the symbol file, each thread's .dat) cut at every offset and with each
 * byte inverted or made a newline or NUL: the directory is refused with a
 * message naming it or one of its files, or opened and every task read to
 * its end (a stream refused with a message naming its file) with no more
 * records than were written, symbols looked up at every address.  Then
 * the writer with the disk full at every byte of each file (RLIMIT_FSIZE)
 * fails naming the file.  Untrusted input: nothing may crash.
 */
#include <dirent.h>
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
#include "meta.h"
#include "uftrace.h"
#include "uft_fixture.h"

#define EXE	UFT_FIX_EXE
#define BASE	UFT_FIX_BASE
#define NR_REC	9
#define MAX_FILES 16

static char dir[] = "/dev/shm/t-uftrace-corrupt.XXXXXX";

/* A directory of 2 threads (6 and 3 records); 0 or -1 with the message. */
static int make_dir(void)
{
	struct vt_uft_sym syms[] = {
		{ BASE + 0x1000, 0x40, 'T', "alpha" },
		{ BASE + 0x1100, 0x40, 't', "beta" },
		{ BASE + 0x1200, 0, 'T', "gamma" },
		{ BASE + 0x1280, 0x10, 'T', "delta" },
	};

	if (vt_uft_dir_create(dir, 1))
		return -1;
	return uft_fixture_write(dir, 1000000000ULL, syms, VT_ARRAY_SIZE(syms));
}

struct file {
	char name[256];
	uint8_t *d;
	size_t n;
};

static struct file files[MAX_FILES];
static int nr_files;

/* The directory's files and their bytes. */
static void snapshot(void)
{
	DIR *dp = opendir(dir);
	struct dirent *de;

	nr_files = 0;
	while (dp && (de = readdir(dp)) && nr_files < MAX_FILES) {
		char path[1024];
		struct stat st;
		FILE *fp;
		struct file *f = &files[nr_files];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		snprintf(f->name, sizeof(f->name), "%s", de->d_name);
		f->n = st.st_size;
		f->d = malloc(f->n ? f->n : 1);
		fp = fopen(path, "rb");
		CHECK(fp && f->d && fread(f->d, 1, f->n, fp) == f->n);
		if (fp)
			fclose(fp);
		nr_files++;
	}
	if (dp)
		closedir(dp);
}

static void put(const struct file *f, const uint8_t *d, size_t n)
{
	char path[1024];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, f->name);
	fp = fopen(path, "wb");
	CHECK(fp != NULL);
	if (!fp)
		return;
	CHECK(fwrite(d, 1, n, fp) == n);
	fclose(fp);
}

struct tally {
	int opened, refused, unnamed, too_many, streams_refused;
};

static void unnamed(struct tally *t, const char *what)
{
	if (!strstr(vt_err_msg(), dir) && !t->unnamed++)
		fprintf(stderr, "%s: refused without the directory's name: %s\n", what,
			vt_err_msg());
}

/* Open the directory, read every task, look every symbol up. */
static void read_dir(struct tally *t, const char *what)
{
	struct vt_uft_reader *r = vt_uft_open(dir);
	uint64_t start;
	int total = 0;

	if (!r) {
		t->refused++;
		unnamed(t, what);
		return;
	}
	t->opened++;
	(void)vt_uft_reader_info(r);
	(void)vt_uft_feat_mask(r);
	(void)vt_uft_info_mask(r);
	for (uint64_t a = BASE; a < BASE + 0x1400; a += 0x40)
		(void)vt_uft_sym_find(r, a, &start);
	for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
		struct vt_uft_stream *s = vt_uft_stream_open(r, i);
		struct vt_uft_record rec;
		int ret, n = 0;

		(void)vt_uft_task_pid(r, i);
		if (!s) {
			t->streams_refused++;
			unnamed(t, what);
			continue;
		}
		while (n <= 1000 && (ret = vt_uft_stream_next(s, &rec)) == 1) {
			n++;
			(void)vt_uft_sym_name(r, vt_uft_addr(rec.bits));
		}
		if (ret < 0)
			unnamed(t, what);
		(void)vt_uft_stream_truncated(s);
		vt_uft_stream_close(s);
		total += n;
	}
	t->too_many += total > NR_REC;
	vt_uft_close(r);
}

static void check_tally(const char *what, const struct tally *t)
{
	if (t->too_many)
		fprintf(stderr, "%s: %d opened, %d refused, %d read too many records\n", what,
			t->opened, t->refused, t->too_many);
	CHECK(t->unnamed == 0);
	CHECK(t->too_many == 0);
}

static void test_damage(void)
{
	int refused = 0, opened = 0;

	for (int i = 0; i < nr_files; i++) {
		struct file *f = &files[i];
		uint8_t *c = malloc(f->n ? f->n : 1);
		struct tally t = { 0 };
		static const uint8_t to[] = { '\n', 0 };

		CHECK(c != NULL);
		if (!c)
			continue;
		for (size_t cut = 0; cut < f->n; cut++) {
			put(f, f->d, cut);
			read_dir(&t, f->name);
		}
		for (size_t o = 0; o < f->n; o++) {
			for (int k = 0; k < 3; k++) {
				memcpy(c, f->d, f->n);
				c[o] = k < 2 ? to[k] : (uint8_t)~f->d[o];
				if (c[o] == f->d[o])
					continue;
				put(f, c, f->n);
				read_dir(&t, f->name);
			}
		}
		put(f, f->d, f->n);
		check_tally(f->name, &t);
		refused += t.refused + t.streams_refused;
		opened += t.opened;
		free(c);
	}
	CHECK(refused > 0 && opened > 0);
}

/* The writer under a file size limit at every byte of its largest file:
 * each time a call fails naming a file of the directory, or all pass and
 * the directory reads back whole. */
static void test_full_disk(void)
{
	struct rlimit old, rl;
	size_t max = 0;
	int bad_msg = 0, passed = 0, failed = 0;

	for (int i = 0; i < nr_files; i++)
		if (files[i].n > max)
			max = files[i].n;
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	for (size_t lim = 0; lim <= max; lim++) {
		int rc;

		rl.rlim_cur = lim;
		rl.rlim_max = old.rlim_max;
		if (setrlimit(RLIMIT_FSIZE, &rl))
			break;
		rc = make_dir();
		setrlimit(RLIMIT_FSIZE, &old);
		if (rc) {
			failed++;
			if (!strstr(vt_err_msg(), dir) && !bad_msg++)
				fprintf(stderr, "limit %zu: %s\n", lim, vt_err_msg());
		} else {
			passed++;
		}
	}
	CHECK(bad_msg == 0);
	CHECK(failed > 0);
	CHECK(passed == 1);	/* the limit at the largest file's size */
	CHECK(make_dir() == 0);
}

int main(void)
{
	struct tally t = { 0 };

	signal(SIGXFSZ, SIG_IGN);
	CHECK(mkdtemp(dir) != NULL);
	CHECK(make_dir() == 0);
	snapshot();
	CHECK(nr_files >= 5);
	read_dir(&t, "sound");
	CHECK(t.opened == 1);
	test_damage();
	test_full_disk();
	for (int i = 0; i < nr_files; i++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%.255s", dir, files[i].name);
		unlink(path);
		free(files[i].d);
	}
	rmdir(dir);
	return check_done();
}
