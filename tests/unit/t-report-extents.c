/*
 * t-report-extents.c - extents.tsv (lib/extents.c, docs/format/extents.md)
 * and the report's mapping of a host bio through an image file's extents
 * to QEMU's fd and file offset (merge/report/chain_extents.c):
 *
 * - the reader: what the writer wrote reads back field for field (MAJ:MIN
 *   as the kernel's dev_t, hex flags, past the first allocation); comment
 *   and blank lines skipped; a missing file is no extents; a file without
 *   the magic line, and each kind of bad line (fields too few or too many,
 *   an unknown reading, a negative, non-numeric or trailing-junk number, a
 *   bad MAJ:MIN, pid/fd/flags out of range, an extent whose end passes
 *   2^64), refused with its line number;
 * - the map: an extent on a partition maps the whole disk's bytes (the
 *   partition's start added) and the partition's own; a bio at an extent's
 *   first and last bytes maps, one running past its end or into a gap does
 *   not; unwritten extents map nothing unless written in the other
 *   reading; a file moved between the readings maps nothing there;
 *   adjacent extents contiguous in the file merge, others do not; extents
 *   off 512-byte boundaries map nothing; a disk without extents is not
 *   counted; each refusal counted as the report says it (mapped,
 *   unmappable, outside).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "extents.h"
#include "merge/report/chain_int.h"

#define MIB		(1ull << 20)
#define SDA		vt_kdev(8, 0)
#define SDA1		vt_kdev(8, 1)
#define PART		MIB		/* sda1's first byte on sda */

static char dir[] = "extents.XXXXXX";	/* in the test's own directory */
static char path[4200];

static void put(const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp) {
		perror(path);
		exit(2);
	}
	fputs(text, fp);
	fclose(fp);
}

/* @text (after the magic line) read: its return, *@n extents in *@e */
static int read_text(const char *text, struct vt_extent **e, size_t *n)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "%s\n%s", VT_EXTENTS_MAGIC, text);
	put(buf);
	return vt_extents_read(path, e, n);
}

/* the line @line refused, the message naming line 2 */
static int refused(const char *line)
{
	struct vt_extent *e = (void *)1;
	size_t n = 99;
	char want[4300];
	int ok;

	snprintf(want, sizeof(want), "%s:2: bad extent line", path);
	ok = read_text(line, &e, &n) == -1 && !e && n == 0 && !strcmp(vt_err_msg(), want);
	if (!ok)
		fprintf(stderr, "not refused as line 2: %s (%s)\n", line, vt_err_msg());
	return ok;
}

static int taken(const char *line)
{
	struct vt_extent *e;
	size_t n;
	int ok = read_text(line, &e, &n) == 0 && n == 1;

	if (!ok)
		fprintf(stderr, "not taken: %s (%s)\n", line, vt_err_msg());
	free(e);
	return ok;
}

static void test_roundtrip(void)
{
	struct vt_extent w[100], *e;
	size_t n;
	FILE *fp = fopen(path, "w");
	int same = 1;

	for (int i = 0; i < 100; i++) {
		w[i] = (struct vt_extent){
			.end = i % 2, .pid = 4242 + i, .fd = 12, .ino = 1ull << 40 | (uint64_t)i,
			.st_dev = i % 3 ? SDA1 : vt_kdev(0xfff, 0xfffff), .dev = SDA,
			.start = PART, .logical = (uint64_t)i * MIB,
			.physical = (uint64_t)(200 + i) * MIB, .length = MIB,
			.flags = i == 7 ? 0xffffffffu : i % 2 ? VT_FIEMAP_UNWRITTEN : 0,
		};
	}
	CHECK(fp);
	CHECK(vt_extents_write_header(fp) == 0);
	fputs("# a comment\n\n", fp);
	for (int i = 0; i < 100; i++)
		CHECK(vt_extents_write(fp, &w[i]) == 0);
	fclose(fp);
	CHECK(vt_extents_read(path, &e, &n) == 0);
	CHECK(n == 100);
	for (size_t i = 0; i < n && n == 100; i++)
		same &= e[i].end == w[i].end && e[i].pid == w[i].pid && e[i].fd == w[i].fd &&
			e[i].ino == w[i].ino && e[i].st_dev == w[i].st_dev &&
			e[i].dev == w[i].dev && e[i].start == w[i].start &&
			e[i].logical == w[i].logical && e[i].physical == w[i].physical &&
			e[i].length == w[i].length && e[i].flags == w[i].flags;
	CHECK(same);
	/* MAJ:MIN is the kernel's dev_t, as the block events carry it */
	CHECK(n > 1 && e[1].st_dev == (8u << 20 | 1) && e[1].dev == 8u << 20);
	free(e);

	/* a missing file, or one under a file: no extents, no error */
	e = (void *)1;
	n = 5;
	snprintf(path, sizeof(path), "%s/none.tsv", dir);
	CHECK(vt_extents_read(path, &e, &n) == 0 && !e && n == 0);
	snprintf(path, sizeof(path), "%s/extents.tsv/x", dir);
	CHECK(vt_extents_read(path, &e, &n) == 0 && !e && n == 0);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_EXTENTS_FILE);
}

static void test_refused(void)
{
	struct vt_extent *e = (void *)1;
	size_t n = 3;
	char want[4300];

	/* no magic line: another file, or another version */
	put("# vmtrace-extents 2\nstart\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0\n");
	CHECK(vt_extents_read(path, &e, &n) == -1 && !e && n == 0);
	snprintf(want, sizeof(want), "%s: not a vmtrace extents file (no '%s' line)", path,
		 VT_EXTENTS_MAGIC);
	CHECK_STR(vt_err_msg(), want);
	put("");
	CHECK(vt_extents_read(path, &e, &n) == 0 && n == 0);

	CHECK(taken("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(taken("end\t2147483647\t2147483647\t3\t4095:1048575\t8:0\t0\t0\t0\t4096\t0xffffffff"));
	/* the end of an extent just inside the 64-bit range */
	CHECK(taken("end\t1\t2\t3\t8:1\t8:0\t0\t18446744073709543424\t0\t4096\t0x1"));
	CHECK(taken("end\t1\t2\t3\t8:1\t8:0\t0\t0\t18446744073709543424\t4096\t0x1"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0\t7"));
	CHECK(refused("middle\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t-1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t-4096\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t-4096\t0x0"));
	CHECK(refused("start\t1\tx\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096k\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t99999999999999999999\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0x\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t4096:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:1048576\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t2147483648\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2147483648\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x100000000"));
	/* an extent whose end wraps past 2^64 */
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t18446744073709547520\t0\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t3\t8:1\t8:0\t0\t0\t18446744073709547521\t4096\t0x0"));
	CHECK(refused("start\t1\t2\t-3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	/* an fd line (another fd of the file) names no extent */
	CHECK(taken("fd\t1\t17\t3\t8:1\t8:0\t0\t0\t0\t0\t0x0"));
	CHECK(refused("fd\t1\t17\t3\t8:1\t8:0\t0\t0\t0\t4096\t0x0"));
	CHECK(refused("fd\t1\t17\t3\t8:1\t8:0\t0\t4096\t0\t0\t0x0"));
	CHECK(refused("fd\t1\t17\t3\t8:1\t8:0\t0\t0\t4096\t0\t0x0"));
	CHECK(refused("fd\t1\t17\t3\t8:1\t8:0\t0\t0\t0\t0\t0x1"));
}

/* a report with @text as its extents.tsv */
static struct report *load(const char *text)
{
	struct report *r = calloc(1, sizeof(*r));
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s\n%s", VT_EXTENTS_MAGIC, text);
	put(buf);
	CHECK(r && chain_extents_load(r, dir) == 0);
	return r;
}

static void unload(struct report *r)
{
	free(r->ext.a);
	free(r);
}

/* @len bytes at disk byte @byte of @dev: QEMU's fd, *@off its offset; -1
 * not mapped (nothing written), -2 a mapping without its outputs */
static int64_t map(struct report *r, uint32_t dev, uint64_t byte, uint64_t len, uint64_t *off)
{
	int64_t fd = -1;

	*off = UINT64_MAX;
	if (!chain_extents_map(r, dev, byte, len, &fd, off))
		return fd == -1 && *off == UINT64_MAX ? -1 : -2;
	return fd >= 0 && *off != UINT64_MAX ? fd : -2;
}

/* an extent line of QEMU's fd 12 of its image (inode 777) on sda1 */
#define E(when, logical, physical, length, flags) \
	when "\t4242\t12\t777\t8:1\t8:0\t1048576\t" logical "\t" physical "\t" length "\t" flags "\n"

#define COUNTS(r, a, b, c) ((r)->bio_ext[0] == (a) && (r)->bio_ext[1] == (b) && (r)->bio_ext[2] == (c))

static void test_map(void)
{
	struct report *r;
	uint64_t off;

	/* file bytes [0, 8M) at sda1's 200M, [8M, 24M) at 64M; sda1's 500M
	 * given to the file's 40M at the start and its 48M at the end (the
	 * file moved); a file system on a whole disk (sdb, st_dev == dev) */
	r = load(E("start", "0", "209715200", "8388608", "0x0")
		 E("start", "8388608", "67108864", "16777216", "0x1")
		 E("start", "41943040", "524288000", "1048576", "0x0")
		 E("end", "50331648", "524288000", "1048576", "0x0")
		 "start\t4242\t13\t888\t8:16\t8:16\t0\t0\t4096\t4096\t0x0\n"
		 "end\t4242\t13\t888\t8:16\t8:16\t0\t8192\t0\t0\t0x0\n");
	/* sda: three extents (the moved ones one), sda1 three, sdb one */
	CHECK(r->ext.n == 7);
	CHECK(chain_extents_fd(r, 12) && chain_extents_fd(r, 13) && !chain_extents_fd(r, 3));
	/* the whole disk's bytes: the partition's start added; an extent's
	 * first byte and its last */
	CHECK(map(r, SDA, PART + 200 * MIB, 4096, &off) == 12 && off == 0);
	CHECK(map(r, SDA, PART + 208 * MIB - 4096, 4096, &off) == 12 && off == 8 * MIB - 4096);
	CHECK(map(r, SDA, PART + 64 * MIB + 512, 1024, &off) == 12 && off == 8 * MIB + 512);
	CHECK(map(r, SDA, PART + 64 * MIB, 512, &off) == 12 && off == 8 * MIB);
	CHECK(map(r, SDA, 200 * MIB, 4096, &off) == -1);	/* the partition's byte */
	/* the partition's own sectors (the block events of kernels before 5.12) */
	CHECK(map(r, SDA1, 200 * MIB + 8192, 4096, &off) == 12 && off == 8192);
	CHECK(map(r, SDA1, 80 * MIB - 512, 512, &off) == 12 && off == 24 * MIB - 512);
	CHECK(COUNTS(r, 6, 0, 1));
	/* past an extent's end; in a gap, before the first, after the last */
	CHECK(map(r, SDA, PART + 208 * MIB - 4096, 8192, &off) == -1);
	CHECK(COUNTS(r, 6, 1, 1));
	CHECK(map(r, SDA, PART + 100 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA, 0, 4096, &off) == -1);
	CHECK(map(r, SDA, PART + 900 * MIB, 4096, &off) == -1);
	CHECK(COUNTS(r, 6, 1, 4));
	/* disk bytes the two readings give to different file bytes: neither */
	CHECK(map(r, SDA, PART + 500 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA1, 500 * MIB + MIB - 512, 512, &off) == -1);
	CHECK(COUNTS(r, 6, 3, 4));
	/* a disk without extents (the guest's disk number, a loop device,
	 * one past the last): not an image file's, not counted */
	CHECK(map(r, vt_kdev(253, 0), PART + 200 * MIB, 4096, &off) == -1);
	CHECK(map(r, vt_kdev(7, 0), 0, 4096, &off) == -1);
	CHECK(map(r, vt_kdev(9, 0), 0, 4096, &off) == -1);
	CHECK(COUNTS(r, 6, 3, 4));
	/* the whole disk's file system: its fd */
	CHECK(map(r, vt_kdev(8, 16), 4096, 4096, &off) == 13 && off == 0);
	CHECK(map(r, vt_kdev(8, 16), 0, 4096, &off) == -1);
	CHECK(COUNTS(r, 7, 3, 5));
	unload(r);

	/* preallocated: unwritten at the start, its tail written at the end
	 * (QEMU wrote there in the run): the tail maps; unwritten in both,
	 * delayed, inline, or off 512-byte boundaries (length, disk byte,
	 * file offset): nothing maps */
	r = load(E("start", "0", "314572800", "8388608", "0x800")
		 E("end", "0", "314572800", "2097152", "0x800")
		 E("end", "2097152", "316669952", "6291456", "0x1")
		 E("start", "8388608", "419430400", "1048576", "0x800")
		 E("end", "8388608", "419430400", "1048576", "0x800")
		 E("end", "16777216", "429916160", "1048576", "0x4")
		 E("end", "20971520", "440401920", "4096", "0x200")
		 E("end", "25165824", "450887680", "4000", "0x0")
		 E("end", "29360128", "461373696", "4096", "0x0")
		 E("end", "33554688", "471859200", "4096", "0x0"));
	CHECK(map(r, SDA, PART + 303 * MIB, 4096, &off) == 12 && off == 3 * MIB);
	CHECK(map(r, SDA, PART + 400 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA, PART + 410 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA, PART + 420 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA, PART + 430 * MIB, 512, &off) == -1);
	CHECK(map(r, SDA, PART + 440 * MIB + 512, 512, &off) == -1);
	CHECK(map(r, SDA, PART + 450 * MIB, 512, &off) == -1);
	CHECK(COUNTS(r, 1, 6, 0));
	unload(r);

	/* adjacent on the disk and contiguous in the file: one extent (a
	 * bio across the seam maps); not contiguous in the file, or one of
	 * them unwritten: two (a bio across the seam does not) */
	r = load(E("start", "0", "104857600", "1048576", "0x0")
		 E("start", "1048576", "105906176", "1048576", "0x0")
		 E("start", "8388608", "106954752", "1048576", "0x0")
		 E("start", "9437184", "108003328", "1048576", "0x800")
		 E("end", "9437184", "108003328", "1048576", "0x800"));
	CHECK(map(r, SDA, PART + 101 * MIB - 4096, 8192, &off) == 12 && off == MIB - 4096);
	CHECK(map(r, SDA, PART + 102 * MIB - 4096, 8192, &off) == -1);
	CHECK(map(r, SDA, PART + 102 * MIB, 4096, &off) == 12 && off == 8 * MIB);
	CHECK(map(r, SDA, PART + 103 * MIB - 4096, 8192, &off) == -1);
	CHECK(map(r, SDA, PART + 103 * MIB - 4096, 4096, &off) == 12 && off == 9 * MIB - 4096);
	CHECK(map(r, SDA, PART + 103 * MIB, 4096, &off) == -1);
	CHECK(COUNTS(r, 3, 3, 0));
	unload(r);

	/* no extents.tsv: nothing; a bad one: refused with its line */
	unlink(path);
	r = calloc(1, sizeof(*r));
	CHECK(r && chain_extents_load(r, dir) == 0 && r->ext.n == 0);
	CHECK(map(r, SDA, PART, 4096, &off) == -1 && COUNTS(r, 0, 0, 0));
	put(VT_EXTENTS_MAGIC "\nstart\t1\t2\n");
	CHECK(chain_extents_load(r, dir) == -1 && strstr(vt_err_msg(), "extents.tsv:2: bad extent line"));
	unload(r);
}

/* fd lines: QEMU's other fds of a file are its extents' fd, per process */
static void test_alias(void)
{
	struct report *r = calloc(1, sizeof(*r));
	struct vt_extent w = { .alias = 1, .pid = 4242, .fd = 17, .ino = 777, .st_dev = SDA1,
			       .dev = SDA, .start = PART }, *e;
	size_t n;
	FILE *fp = fopen(path, "w");

	/* written and read back as an fd line */
	CHECK(fp && vt_extents_write_header(fp) == 0 && vt_extents_write(fp, &w) == 0);
	fclose(fp);
	CHECK(vt_extents_read(path, &e, &n) == 0 && n == 1 && e[0].alias && !e[0].end &&
	      e[0].fd == 17 && e[0].pid == 4242 && e[0].ino == 777 && !e[0].length);
	free(e);
	put(VT_EXTENTS_MAGIC "\n"
	    "start\t4242\t12\t777\t8:1\t8:0\t1048576\t0\t0\t4096\t0x0\n"
	    "fd\t4242\t17\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
	    /* another process's file: its own fd 17 is not this one */
	    "start\t5000\t9\t888\t8:1\t8:0\t1048576\t0\t8192\t4096\t0x0\n"
	    /* an fd of a file with no extent line, and one of another inode */
	    "fd\t4242\t20\t999\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
	    "fd\t5000\t18\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n");
	CHECK(r && chain_extents_load(r, dir) == 0);
	/* each extent on the disk and on the partition itself */
	CHECK(r->fdalias.n == 1 && r->ext.n == 4);
	CHECK(chain_extents_canon(r, 4242, 17) == 12);
	CHECK(chain_extents_canon(r, 4242, 12) == 12);
	CHECK(chain_extents_canon(r, 5000, 17) == 17);
	CHECK(chain_extents_canon(r, 4242, 20) == 20);
	CHECK(chain_extents_canon(r, 5000, 18) == 18);
	free(r->fdalias.a);
	unload(r);

	/* fd lines none of which resolves (the CI's SAN run of the default
	 * example: an empty alias table was sorted from a NULL base) */
	r = load("start\t4242\t12\t777\t8:1\t8:0\t1048576\t0\t0\t4096\t0x0\n"
		 "fd\t4242\t12\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
		 "fd\t4242\t20\t999\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n");
	CHECK(r->fdalias.n == 0 && !r->fdalias.a && r->ext.n == 2);
	CHECK(chain_extents_canon(r, 4242, 20) == 20);
	unload(r);
}

/* Files told apart by inode, fd and device: another file's extent, or
 * the same file's under another fd, on the same disk bytes is a change
 * (nothing maps there, to the end of the longer one); the same inode
 * number on two file systems (sda1, sdb) is two files, each with its own
 * fd lines; fd lines sorted by process and fd (looked up between them:
 * the fd itself) */
static void test_files(void)
{
	struct report *r;
	uint64_t off;

	r = load(E("start", "0", "104857600", "1048576", "0x0")
		 "start\t4242\t12\t778\t8:1\t8:0\t1048576\t0\t104857600\t1048576\t0x0\n"
		 E("start", "4194304", "209715200", "1048576", "0x0")
		 "start\t4242\t14\t777\t8:1\t8:0\t1048576\t4194304\t209715200\t2097152\t0x0\n"
		 E("start", "8388608", "314572800", "1048576", "0x0")
		 E("end", "8388608", "314572800", "2097152", "0x0"));
	/* the file grew in place: its end reading's extent, longer, merges */
	CHECK(map(r, SDA, PART + 301 * MIB, 4096, &off) == 12 && off == 9 * MIB);
	CHECK(COUNTS(r, 1, 0, 0));
	CHECK(map(r, SDA, PART + 100 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA, PART + 200 * MIB, 4096, &off) == -1);
	CHECK(map(r, SDA, PART + 202 * MIB - 4096, 4096, &off) == -1);
	CHECK(COUNTS(r, 1, 3, 0));
	unload(r);

	r = load("start\t4242\t12\t777\t8:1\t8:0\t1048576\t0\t0\t4096\t0x0\n"
		 "start\t4242\t13\t777\t8:16\t8:16\t0\t0\t8192\t4096\t0x0\n"
		 "start\t4242\t11\t777\t7:0\t7:0\t0\t0\t8192\t4096\t0x0\n"
		 "fd\t4242\t20\t777\t8:16\t8:16\t0\t0\t0\t0\t0x0\n"
		 "fd\t4242\t17\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
		 "fd\t4242\t19\t777\t7:0\t7:0\t0\t0\t0\t0\t0x0\n"
		 "fd\t4000\t30\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
		 "start\t4000\t3\t777\t8:1\t8:0\t1048576\t0\t0\t4096\t0x0\n"
		 "fd\t4242\t17\t777\t8:16\t8:16\t0\t0\t0\t0\t0x0\n"
		 "fd\t4242\t21\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
		 "fd\t4242\t22\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n"
		 "fd\t4242\t23\t777\t8:1\t8:0\t1048576\t0\t0\t0\t0x0\n");
	CHECK(r->fdalias.n == 8);
	CHECK(chain_extents_canon(r, 4242, 17) == 12);	/* the first line loaded */
	CHECK(chain_extents_canon(r, 4242, 20) == 13);
	CHECK(chain_extents_canon(r, 4242, 19) == 11);
	CHECK(chain_extents_canon(r, 4000, 30) == 3);
	CHECK(chain_extents_canon(r, 4242, 18) == 18);
	CHECK(chain_extents_canon(r, 4242, 21) == 12);
	CHECK(chain_extents_canon(r, 4242, 24) == 24);
	CHECK(chain_extents_canon(r, 4100, 17) == 17);
	for (size_t i = 1; i < r->fdalias.n; i++)
		CHECK(r->fdalias.a[i - 1].pid < r->fdalias.a[i].pid ||
		      (r->fdalias.a[i - 1].pid == r->fdalias.a[i].pid &&
		       (r->fdalias.a[i - 1].fd < r->fdalias.a[i].fd ||
			(r->fdalias.a[i - 1].fd == r->fdalias.a[i].fd &&
			 r->fdalias.a[i - 1].seq < r->fdalias.a[i].seq))));
	free(r->fdalias.a);
	unload(r);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror(dir);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, VT_EXTENTS_FILE);
	test_roundtrip();
	test_refused();
	test_map();
	test_alias();
	test_files();
	unlink(path);
	rmdir(dir);
	/* lib/extents.c: a stream that refuses writes fails both writers;
	 * a last line without its newline is read; a path that cannot be
	 * opened for another reason than its absence is an error */
	{
		const char *t = getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp";
		struct vt_extent e = { .pid = 1, .fd = 3, .length = 4096 }, *got = NULL;
		char p[4200];
		size_t nr = 0;
		FILE *fp;

		snprintf(p, sizeof(p), "%s/ro.tsv", t);
		fp = fopen(p, "w");
		CHECK(fp && vt_extents_write_header(fp) == 0 && vt_extents_write(fp, &e) == 0);
		fclose(fp);
		fp = fopen(p, "r");
		CHECK(fp && vt_extents_write_header(fp) == -1 && vt_extents_write(fp, &e) == -1);
		fclose(fp);
		CHECK(truncate(p, 0) == 0);
		fp = fopen(p, "w");
		vt_extents_write_header(fp);
		e.end = 1;
		vt_extents_write(fp, &e);
		fclose(fp);
		fp = fopen(p, "r+");
		CHECK(fp && fseek(fp, -1, SEEK_END) == 0);
		fclose(fp);
		{
			struct stat st;

			CHECK(stat(p, &st) == 0 && truncate(p, st.st_size - 1) == 0);
		}
		CHECK(vt_extents_read(p, &got, &nr) == 0 && nr == 1 && got && got[0].length == 4096);
		free(got);
		memset(p, 'q', sizeof(p) - 1);
		p[sizeof(p) - 1] = 0;
		CHECK(vt_extents_read(p, &got, &nr) == -1);
		CHECK(strstr(vt_err_msg(), ": cannot open: ") != NULL);
	}
	return check_done();
}
