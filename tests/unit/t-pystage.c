/*
 * t-pystage.c - lib/pystage.c: reading and folding the Python tracer's
 * stage file in every state a killed writer can leave (docs/format/
 * python.md: copy, then clear, then advance), a .dat missing records, a
 * corrupt stage, no stage; stage paths and files vmtrace refuses; lib/
 * uftrace-append.c's symbol lines (a name cut, newlines in it, a failed
 * write).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "fileio.h"
#include "pystage.h"

#define RECS	10
#define TAIL	4	/* zeroed records after a .dat's records */

static char dat[512], stage[512];

static struct vt_uft_record rec(unsigned i)
{
	struct vt_uft_record r = { .time = 1000 + i, .bits = vt_uft_pack(VT_UFT_ENTRY, 0, 0x100 + i) };

	return r;
}

/* .dat: records [0, @n) then TAIL zeroed records. */
static void make_dat(unsigned n)
{
	struct vt_uft_record z = { 0 }, r;
	FILE *fp = fopen(dat, "wb");

	for (unsigned i = 0; i < n; i++) {
		r = rec(i);
		fwrite(&r, sizeof(r), 1, fp);
	}
	for (unsigned i = 0; i < TAIL; i++)
		fwrite(&z, sizeof(z), 1, fp);
	fclose(fp);
}

/* stage: header at .dat record @first, records [first, first + n), the
 * first @cleared of them with their magic word cleared; zero-filled to
 * the full size. */
static void make_stage(uint64_t magic, unsigned first, unsigned n, unsigned cleared)
{
	struct vt_pystage_hdr h = { .magic = magic, .dat_off = first * 16ULL };
	FILE *fp = fopen(stage, "wb");

	fwrite(&h, sizeof(h), 1, fp);
	for (unsigned i = 0; i < n; i++) {
		struct vt_uft_record r = rec(first + i);

		if (i < cleared)
			r.bits = 0;
		fwrite(&r, sizeof(r), 1, fp);
	}
	fclose(fp);
	truncate(stage, VT_PYSTAGE_BYTES);
}

/* The .dat holds exactly records [0, @n) of rec(), skipping @gap_from up
 * to @gap_to. */
static int dat_is(unsigned n, unsigned gap_from, unsigned gap_to)
{
	struct vt_uft_record r, want;
	struct stat st;
	unsigned i, k = 0;
	FILE *fp = fopen(dat, "rb");

	if (!fp || stat(dat, &st))
		return 0;
	for (i = 0; i < n; i++) {
		if (i >= gap_from && i < gap_to)
			continue;
		want = rec(i);
		if (fread(&r, sizeof(r), 1, fp) != 1 || memcmp(&r, &want, sizeof(r)))
			break;
		k++;
	}
	fclose(fp);
	return i == n && (uint64_t)st.st_size == k * 16ULL;
}

static size_t read_new(uint64_t dat_end)
{
	struct vt_uft_record *r = NULL;
	size_t nr = 99;

	if (vt_pystage_read(stage, dat_end, &r, &nr) < 0)
		return (size_t)-1;
	free(r);
	return nr;
}

int main(void)
{
	const char *tmp = getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp";
	char p[512];

	snprintf(dat, sizeof(dat), "%s/pystage-%d/42.dat", tmp, (int)getpid());
	snprintf(p, sizeof(p), "%s/pystage-%d", tmp, (int)getpid());
	mkdir(p, 0755);
	CHECK(vt_pystage_path(stage, sizeof(stage), dat) == 0);
	CHECK(strstr(stage, "/42.stage") != NULL);
	CHECK(vt_pystage_path(p, sizeof(p), "x.txt") < 0);

	/* the newest records only in the stage */
	make_dat(5);
	make_stage(VT_PYSTAGE_MAGIC, 5, 3, 0);
	CHECK(read_new(5 * 16) == 3);
	CHECK(vt_pystage_fold(dat) == 8);
	CHECK(dat_is(8, 0, 0));
	CHECK(access(stage, F_OK) < 0);

	/* killed after the copy, before the clearing: nothing new */
	make_dat(8);
	make_stage(VT_PYSTAGE_MAGIC, 5, 3, 0);
	CHECK(read_new(8 * 16) == 0);
	CHECK(vt_pystage_fold(dat) == 8);
	CHECK(dat_is(8, 0, 0));

	/* killed during the clearing (record 0 cleared first) */
	make_dat(8);
	make_stage(VT_PYSTAGE_MAGIC, 5, 3, 1);
	CHECK(read_new(8 * 16) == 0);
	CHECK(vt_pystage_fold(dat) == 8);
	CHECK(dat_is(8, 0, 0));

	/* header advanced, new records after it */
	make_dat(8);
	make_stage(VT_PYSTAGE_MAGIC, 8, 2, 0);
	CHECK(read_new(8 * 16) == 2);
	CHECK(vt_pystage_fold(dat) == 10);
	CHECK(dat_is(10, 0, 0));

	/* records missing from the .dat: the stage's follow right after */
	make_dat(3);
	make_stage(VT_PYSTAGE_MAGIC, 5, 3, 0);
	CHECK(read_new(3 * 16) == 3);
	CHECK(vt_pystage_fold(dat) == 6);
	CHECK(dat_is(8, 3, 5));

	/* corrupt: an error naming the stage, both files unchanged */
	make_dat(5);
	make_stage(0x1234, 5, 3, 0);
	CHECK(read_new(5 * 16) == (size_t)-1);
	CHECK(strstr(vt_err_msg(), "42.stage") && strstr(vt_err_msg(), "magic"));
	CHECK(vt_pystage_fold(dat) == -1);
	CHECK(strstr(vt_err_msg(), "42.stage") != NULL);
	CHECK(access(stage, F_OK) == 0);
	{
		struct stat st;

		CHECK(stat(dat, &st) == 0 && st.st_size == (5 + TAIL) * 16);
	}
	make_stage(VT_PYSTAGE_MAGIC, 5, 3, 0);
	truncate(stage, 7);
	CHECK(read_new(0) == (size_t)-1 && strstr(vt_err_msg(), "truncated"));

	/* no stage: a plain trim */
	unlink(stage);
	make_dat(4);
	CHECK(read_new(0) == 0);
	CHECK(vt_pystage_fold(dat) == 4);
	CHECK(dat_is(4, 0, 0));

	/* not a .dat: nothing to fold */
	CHECK(vt_pystage_fold("42.txt") == -1);
	CHECK(strstr(vt_err_msg(), "42.txt: not a .dat file name") != NULL);

	/* a stage without its .dat: an error naming the .dat, the stage kept */
	unlink(dat);
	make_stage(VT_PYSTAGE_MAGIC, 0, 3, 0);
	CHECK(vt_pystage_fold(dat) == -1);
	CHECK(strstr(vt_err_msg(), "42.dat") != NULL);
	CHECK(access(stage, F_OK) == 0);

	/* the .dat cannot take the stage's records (past the file size limit,
	 * the write cut short then refused): an error, the stage kept for a
	 * retry, which folds it once the limit is gone */
	{
		struct rlimit old_lim, lim;

		make_dat(5);
		make_stage(VT_PYSTAGE_MAGIC, 5, 3, 0);
		signal(SIGXFSZ, SIG_IGN);
		CHECK(getrlimit(RLIMIT_FSIZE, &old_lim) == 0);
		lim = old_lim;
		lim.rlim_cur = 5 * 16 + 20;	/* room for 1.25 records */
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		CHECK(vt_pystage_fold(dat) == -1);
		CHECK(setrlimit(RLIMIT_FSIZE, &old_lim) == 0);
		CHECK(strstr(vt_err_msg(), "42.dat: cannot write the stage's records at offset") !=
		      NULL);
		CHECK(strstr(vt_err_msg(), "File too large") != NULL);
		CHECK(access(stage, F_OK) == 0);
		CHECK(vt_pystage_fold(dat) == 8);
		CHECK(dat_is(8, 0, 0));
		CHECK(access(stage, F_OK) < 0);
	}

	/* stage paths: a name shorter than ".dat", no room */
	CHECK(vt_pystage_path(p, sizeof(p), "at") == -1);
	CHECK(strstr(vt_err_msg(), "at: not a .dat file name") != NULL);
	CHECK(vt_pystage_path(p, 10, "/d/a/42.dat") == -1);
	CHECK(strstr(vt_err_msg(), "/d/a/42.dat: path too long") != NULL);
	/* stage files refused: under a file, a directory, unreadable, a
	 * .dat offset past any file's size */
	{
		struct vt_uft_record *r = NULL;
		size_t nr = 0;
		char bad[600];

		snprintf(bad, sizeof(bad), "%s/42.stage", dat);	/* under a file */
		CHECK(vt_pystage_read(bad, 0, &r, &nr) == -1);
		CHECK(strstr(vt_err_msg(), "42.dat/42.stage: cannot open: ") != NULL);
		CHECK(vt_pystage_read(tmp, 0, &r, &nr) == -1);
		CHECK(strstr(vt_err_msg(), ": not a regular file") != NULL);
		CHECK(vt_pystage_read("/proc/self/mem", 0, &r, &nr) == -1);
		CHECK(strstr(vt_err_msg(), "/proc/self/mem: read error") != NULL);
		make_stage(VT_PYSTAGE_MAGIC, 0, 1, 0);
		{
			struct vt_pystage_hdr h = { .magic = VT_PYSTAGE_MAGIC,
						    .dat_off = 0xfffffffffffffff0ULL };
			int fd = open(stage, O_WRONLY);

			CHECK(fd >= 0 && pwrite(fd, &h, sizeof(h), 0) == sizeof(h));
			close(fd);
		}
		CHECK(vt_pystage_read(stage, 0, &r, &nr) == -1);
		CHECK(strstr(vt_err_msg(), "offset 18446744073709551600 is not a record boundary"));
		CHECK(r == NULL);
		unlink(stage);
	}

	/* symbol lines: a name past the line's room is cut, its newlines
	 * become spaces, each symbol's end line follows; a write refused */
	{
		static char name[5000];
		char sym[600], *back;
		size_t len;
		int fd;

		memset(name, 'n', sizeof(name) - 1);
		memcpy(name, "a\nb\rc", 5);
		snprintf(sym, sizeof(sym), "%s.sym", dat);
		fd = open(sym, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		CHECK(fd >= 0);
		CHECK(vt_uft_sym_append(fd, 0x1000, 0x10, 'T', name) == 0);
		CHECK(vt_uft_sym_append(fd, 0x2000, 0x20, 't', "f") == 0);
		close(fd);
		back = vt_file_read_all(sym, 1 << 20, &len);
		CHECK(back && !strncmp(back, "0000000000001000 T a b c", 24));
		CHECK(back && strlen(back) == len && len < 4096 + 40 + 74);
		CHECK(back && strstr(back, "nnn\n0000000000001010 ? __sym_end\n"
				    "0000000000002000 t f\n0000000000002020 ? __sym_end\n"));
		free(back);
		fd = open(sym, O_RDONLY);
		CHECK(vt_uft_sym_append(fd, 0x1000, 0x10, 'T', "g") == -1);
		CHECK(strstr(vt_err_msg(), "symbol file: cannot append g: ") != NULL);
		close(fd);
		unlink(sym);
	}

	unlink(dat);
	snprintf(p, sizeof(p), "%s/pystage-%d", tmp, (int)getpid());
	rmdir(p);
	return check_done();
}
