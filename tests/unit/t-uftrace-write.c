/*
 * t-uftrace-write.c - unit test of lib/uftrace_write.c's edges, for
 * vmtrace's developers (t-uftrace tests the round trip): replacing an old
 * trace directory (what goes, what stays, what cannot go), the info file's
 * optional sections and quoting, task.txt and map lines refused, the
 * [stack] line's placement, .sym files from odd symbol lists and from ELF
 * files (a program's own, an object without PT_LOAD or build-id), and paths
 * too long for every file.  Each check reads the written bytes back or
 * asserts the message naming the file and the problem.
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
#include "uftrace.h"

#define EXE	"/opt/t-uftrace-write/prog"
#define SID	"0123456789abcdef"

static char tmp[512];

/* The whole of @dir/@name (NUL-terminated, static), "" if unreadable. */
static const char *slurp(const char *dir, const char *name)
{
	static char buf[1 << 16];
	char path[PATH_MAX];
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = 0;
	fp = fopen(path, "r");
	if (!fp)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = 0;
	fclose(fp);
	return buf;
}

/* The last message names @p, too long for err.c's buffer: its start,
 * then "..." and the message's end (the path's end and the reason) */
static int named(const char *p)
{
	const char *m = vt_err_msg();

	return strlen(m) > 1000 && !strncmp(m, p, 200) && !strncmp(m + 256, "...", 3) &&
	       strstr(p, m + 259 + 100) == NULL && strstr(m + 259, p + strlen(p) - 100) != NULL;
}

static void touch(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
}

static int exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A directory under @base whose path is @len bytes long (nested names of
 * up to 200 bytes), created; its path in @out. */
static void long_dir(char *out, size_t out_len, const char *base, size_t len)
{
	char name[201];

	memset(name, 'd', 200);
	name[200] = 0;
	snprintf(out, out_len, "%s", base);
	while (strlen(out) < len) {
		size_t n = strlen(out), k = len - n - 1;

		snprintf(out + n, out_len - n, "/%s", name + (k < 200 && k ? 200 - k : 0));
		CHECK(mkdir(out, 0755) == 0 || errno == EEXIST);
	}
	CHECK(strlen(out) == len);
}

static void test_dir_create(const char *dir)
{
	char p[PATH_MAX + 64], sub[PATH_MAX];

	/* a parent that does not exist; a file in the way */
	snprintf(p, sizeof(p), "%s/none/trace", dir);
	CHECK(vt_uft_dir_create(p, 0) == -1);
	CHECK(strstr(vt_err_msg(), "/none/trace: cannot create directory") != NULL);
	snprintf(sub, sizeof(sub), "%s/file", dir);
	touch(dir, "file");
	CHECK(vt_uft_dir_create(sub, 1) == -1);
	CHECK(strstr(vt_err_msg(), "/file: exists and is not a directory") != NULL);
	/* a symbolic link to nowhere: there, and no directory */
	snprintf(sub, sizeof(sub), "%s/dangling", dir);
	CHECK(symlink("/nonexistent/dir", sub) == 0);
	CHECK(vt_uft_dir_create(sub, 1) == -1);
	CHECK(strstr(vt_err_msg(), "/dangling: exists and is not a directory") != NULL);
	CHECK(unlink(sub) == 0);

	/* an old trace: kept without --force (ENOTEMPTY), with it its trace
	 * files and the Python stages go, anything else stays */
	snprintf(sub, sizeof(sub), "%s/old", dir);
	CHECK(vt_uft_dir_create(sub, 0) == 0);
	CHECK(vt_uft_dir_create(sub, 0) == 0);	/* empty: taken as it is */
	touch(sub, "101.dat");
	touch(sub, "info");
	touch(sub, "prog.sym");
	touch(sub, "4242.stage");
	touch(sub, ".stage");		/* a name that only ends like one */
	touch(sub, "notes.txt");
	CHECK(vt_uft_dir_create(sub, 0) == -1);
	CHECK(vt_err_code() == ENOTEMPTY);
	CHECK(strstr(vt_err_msg(), "give --force") != NULL);
	CHECK(exists(sub, "101.dat"));
	CHECK(vt_uft_dir_create(sub, 1) == 0);
	CHECK(!exists(sub, "101.dat") && !exists(sub, "info") && !exists(sub, "prog.sym"));
	CHECK(!exists(sub, "4242.stage"));
	CHECK(exists(sub, ".stage") && exists(sub, "notes.txt"));

	/* a trace file that cannot be removed (a directory of that name) */
	snprintf(p, sizeof(p), "%s/102.dat", sub);
	CHECK(mkdir(p, 0755) == 0);
	CHECK(vt_uft_dir_create(sub, 1) == -1);
	CHECK(strstr(vt_err_msg(), "/102.dat: cannot remove old trace file") != NULL);
	CHECK(rmdir(p) == 0);

	/* one whose path would be too long to name */
	long_dir(p, sizeof(p), dir, PATH_MAX - 220);
	memset(sub, 'f', 240);
	strcpy(sub + 240 - 4, ".dat");
	{
		/* created relative to its directory: too long a path */
		int dfd = open(p, O_RDONLY | O_DIRECTORY), fd;

		fd = openat(dfd, sub, O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0);
		close(fd);
		errno = 0;
		CHECK(vt_uft_dir_create(p, 1) == -1);
		CHECK(named(p));
		CHECK(unlinkat(dfd, sub, 0) == 0);
		close(dfd);
	}
}

static void test_info(const char *dir)
{
	struct vt_uft_info info = { .exename = EXE, .exit_status = -1 };
	static const int tids[] = { 7, 9 };
	const char *s;
	char p[PATH_MAX];

	/* bad names */
	info.exename = NULL;
	CHECK(vt_uft_write_info(dir, &info) == -1);
	CHECK(strstr(vt_err_msg(), "/info: bad executable name") != NULL);
	info.exename = "";
	CHECK(vt_uft_write_info(dir, &info) == -1);
	info.exename = "/bin/two\nlines";
	CHECK(vt_uft_write_info(dir, &info) == -1);
	info.exename = EXE;

	/* no tids given (a count without a list is none), none found: the
	 * directory cannot be listed */
	snprintf(p, sizeof(p), "%s/nodir", dir);
	CHECK(vt_uft_write_info(p, &info) == -1);
	CHECK(strstr(vt_err_msg(), "nodir") != NULL);
	info.nr_tids = 3;
	CHECK(vt_uft_write_info(p, &info) == -1);
	CHECK(strstr(vt_err_msg(), "nodir") != NULL);

	/* no exit status, no max_stack, no command line: the name stands
	 * for it; control characters are spaces, quotes escaped */
	info.nr_tids = 2;
	info.tids = tids;
	CHECK(vt_uft_write_info(dir, &info) == 0);
	{
		char buf[1 << 16];
		char path[PATH_MAX];
		FILE *fp;
		size_t n;
		uint64_t feat, mask;
		uint16_t max_stack;

		snprintf(path, sizeof(path), "%s/info", dir);
		fp = fopen(path, "r");
		CHECK(fp != NULL);
		n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
		if (fp)
			fclose(fp);
		buf[n] = 0;
		/* the header (uftrace.h): magic, feat_mask at 16, info_mask
		 * at 24, max_stack at 32; the text after its 40 bytes */
		CHECK(n > 40 && !memcmp(buf, VT_UFT_MAGIC_STR, sizeof(VT_UFT_MAGIC_STR)));
		memcpy(&feat, buf + 16, 8);
		memcpy(&mask, buf + 24, 8);
		memcpy(&max_stack, buf + 32, 2);
		CHECK(!(feat & VT_UFT_FEAT_MAX_STACK) && max_stack == 0);
		CHECK(!(mask & VT_UFT_INFO_EXIT_STATUS));
		s = buf + 40;
		CHECK(!strncmp(s, "exename:" EXE "\ncmdline:" EXE "\n",
			       strlen("exename:" EXE "\ncmdline:" EXE "\n")));
		CHECK(strstr(s, "exit_status:") == NULL);
		CHECK(strstr(s, "taskinfo:nr_tid=2\ntaskinfo:tids=7,9\n") != NULL);
		CHECK(strstr(s, "elapsed_time:0.000000000 sec\n") != NULL);

		info.cmdline = "prog\t\"a b\"\\c\x01";
		info.exit_status = 0;
		info.max_stack = 64;
		CHECK(vt_uft_write_info(dir, &info) == 0);
		fp = fopen(path, "r");
		n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
		if (fp)
			fclose(fp);
		buf[n] = 0;
		memcpy(&feat, buf + 16, 8);
		memcpy(&mask, buf + 24, 8);
		memcpy(&max_stack, buf + 32, 2);
		CHECK((feat & VT_UFT_FEAT_MAX_STACK) && max_stack == 64);
		CHECK(mask & VT_UFT_INFO_EXIT_STATUS);
		CHECK(strstr(s, "exit_status:0\ncmdline:prog \\\"a b\\\"\\\\c \n") != NULL);
	}
	snprintf(p, sizeof(p), "%s/info", dir);
	unlink(p);
}

static void test_task(const char *dir)
{
	static char huge[PATH_MAX + 200];
	char p[PATH_MAX];

	CHECK(vt_uft_task_session(dir, 1, 1, NULL, EXE) == -1);
	CHECK(strstr(vt_err_msg(), "session id '' is not 16") != NULL);
	CHECK(vt_uft_task_session(dir, 1, 1, SID, NULL) == -1);
	CHECK(strstr(vt_err_msg(), "bad executable name for task.txt") != NULL);
	CHECK(vt_uft_task_session(dir, 1, 1, SID, "/a\nb") == -1);
	CHECK(vt_uft_task_session(dir, 1, 1, SID, "/a\"b") == -1);
	memset(huge, 'x', sizeof(huge) - 1);
	huge[0] = '/';
	CHECK(vt_uft_task_session(dir, 1, 1, SID, huge) == -1);
	CHECK(strstr(vt_err_msg(), "executable name too long") != NULL);
	CHECK(!exists(dir, "task.txt"));
	/* the lines that are written */
	CHECK(vt_uft_task_session(dir, 1500000000ULL, 10, SID, EXE) == 0);
	CHECK(vt_uft_task_fork(dir, 2000000001ULL, 11, 10) == 0);
	CHECK_STR(slurp(dir, "task.txt"),
		  "SESS timestamp=1.500000000 pid=10 sid=" SID " exename=\"" EXE "\"\n"
		  "FORK timestamp=2.000000001 pid=11 ppid=10\n");
	snprintf(p, sizeof(p), "%s/task.txt", dir);
	unlink(p);

	/* a directory whose task.txt has no room in a path */
	long_dir(p, sizeof(p), dir, PATH_MAX - 4);
	CHECK(vt_uft_task_thread(p, 1, 1, 1) == -1);
	CHECK(named(p));
	{
		struct vt_uft_info info = { .exename = EXE, .exit_status = -1 };

		CHECK(vt_uft_write_info(p, &info) == -1);
		CHECK(named(p));
	}
	CHECK(vt_uft_dat_path(huge, sizeof(huge) - 200, p, 123456) == -1);
	CHECK(named(p));
	CHECK(vt_uft_raw_path(huge, sizeof(huge) - 200, p, 123456) == -1);
	CHECK(named(p));
	/* the raw path when there is one, else the .dat's */
	CHECK(vt_uft_raw_path(huge, sizeof(huge), dir, 5) == 0);
	CHECK(strstr(huge, "/5.dat") != NULL);
	snprintf(p, sizeof(p), "5%s", VT_UFT_RAW_SUFFIX);
	touch(dir, p);
	CHECK(vt_uft_raw_path(huge, sizeof(huge), dir, 5) == 0);
	CHECK(strstr(huge, p) != NULL);
	unlink(huge);
}

static void test_maps(const char *dir)
{
	const char *s;

	/* this process's own map, by pid and as itself; a process that is
	 * not there */
	CHECK(vt_uft_write_map(dir, SID, getpid()) == 0);
	s = slurp(dir, "sid-" SID ".map");
	CHECK(strstr(s, "[stack]") != NULL);
	CHECK(vt_uft_write_map(dir, SID, 0) == 0);
	s = slurp(dir, "sid-" SID ".map");
	CHECK(strstr(s, "[stack]") != NULL && strstr(s, "t-uftrace-write") != NULL);
	CHECK(vt_uft_write_map(dir, SID, INT_MAX) == -1);
	CHECK(strstr(vt_err_msg(), "/proc/2147483647/maps: cannot open") != NULL);
	CHECK(vt_uft_write_map(dir, "bad", 0) == -1);
	CHECK(strstr(vt_err_msg(), "session id 'bad'") != NULL);

	/* image paths a map line cannot hold */
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x1000, 0x2000, NULL) == -1);
	CHECK(strstr(vt_err_msg(), "bad image path for the map") != NULL);
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x1000, 0x2000, "") == -1);
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x1000, 0x2000, "/a\nb") == -1);
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x1000, 0x2000, "/a b") == -1);
	/* above the usual [stack]: it stays; over both places: refused */
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x800000000000ULL, 0x800000001000ULL, EXE) == 0);
	CHECK_STR(slurp(dir, "sid-" SID ".map"),
		  "800000000000-800000001000 r-xp 00000000 00:00 0 " EXE "\n"
		  "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
	CHECK(vt_uft_write_map_fixed(dir, SID, 0, 0x7ffffffff000ULL, EXE) == -1);
	CHECK(strstr(vt_err_msg(), "leaves no room for the [stack] line") != NULL);

	/* from an ELF: no such file; an object file, which has no PT_LOAD */
	CHECK(vt_uft_write_map_elf(dir, SID, "/nonexistent/prog", 0) == -1);
}

/* a local function kept in any build: a 't' line of this program's .sym */
static __attribute__((noinline, used)) int local_fn(void)
{
	return 1;
}

static int sym_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_syms(const char *dir)
{
	const struct vt_uft_sym syms[] = {
		{ 0x401000, 0x10, 0, "untyped" },	/* type 0: T */
		{ 0x401010, 0x10, 'x', "oddtype" },	/* not a uftrace type: T */
		{ 0x401020, 0x10, 'w', "weak" },
		{ 0x401020, 0x10, 'w', "weak" },	/* same address: once */
		{ 0x401030, 0x10, 'T', NULL },
		{ 0x401030, 0x10, 'T', "" },
		{ 0x401030, 0x10, 'T', "tab\there" },
		{ 0x3ff000, 0x10, 'T', "below" },	/* under the base */
	};
	char name[NAME_MAX + 8], p[PATH_MAX];
	const char *s;

	/* base from the map of this executable */
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x400000, 0x403000, EXE) == 0);
	CHECK(vt_uft_write_syms(dir, EXE, syms, VT_ARRAY_SIZE(syms)) == 0);
	s = slurp(dir, "prog.sym");
	CHECK_STR(s, "# symbols: 4\n"
		  "# path name: " EXE "\n"
		  "0000000000001000 T untyped\n"
		  "0000000000001010 T oddtype\n"
		  "0000000000001020 w weak\n"
		  "0000000000001030 ? __sym_end\n");

	/* no map of it: base 0; a map line of another file, one that is not a
	 * map line */
	CHECK(vt_uft_write_map_fixed(dir, SID, 0x400000, 0x403000, "/other") == 0);
	snprintf(p, sizeof(p), "%s/sid-" SID ".map", dir);
	{
		FILE *fp = fopen(p, "a");

		CHECK(fp != NULL);
		if (fp) {
			fputs("garbage\n", fp);
			fclose(fp);
		}
	}
	touch(dir, "sid-abc");			/* too short a name */
	touch(dir, "sid-0123456789abcdef.txt");	/* not a map */
	snprintf(p, sizeof(p), "%s/sid-fedcba9876543210.map", dir);
	CHECK(mkdir(p, 0755) == 0);		/* not a file */
	snprintf(p, sizeof(p), "%s/sid-dead000000000000.map", dir);
	CHECK(symlink("/nonexistent/map", p) == 0);	/* cannot be opened */
	CHECK(vt_uft_write_syms(dir, EXE, syms, 1) == 0);
	CHECK(strstr(slurp(dir, "prog.sym"), "0000000000401000 T untyped\n") != NULL);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sid-fedcba9876543210.map", dir);
	CHECK(rmdir(p) == 0);
	/* no directory to look in, nor to write to */
	snprintf(p, sizeof(p), "%s/nodir", dir);
	CHECK(vt_uft_write_syms(p, EXE, syms, 1) == -1);
	CHECK(strstr(vt_err_msg(), "nodir/prog.sym") != NULL);

	/* names a .sym file cannot have */
	CHECK(vt_uft_write_syms_rel(dir, NULL, syms, 1, 0) == -1);
	CHECK(strstr(vt_err_msg(), "bad executable name for a .sym file") != NULL);
	CHECK(vt_uft_write_syms_rel(dir, "", syms, 1, 0) == -1);
	CHECK(vt_uft_write_syms_rel(dir, "/a\nb", syms, 1, 0) == -1);
	memset(name, 'n', sizeof(name) - 1);
	name[0] = '/';
	name[sizeof(name) - 1] = 0;
	CHECK(vt_uft_write_syms_rel(dir, name, syms, 1, 0) == -1);
	CHECK(strstr(vt_err_msg(), "executable name too long") != NULL);
	long_dir(p, sizeof(p), dir, PATH_MAX - 8);
	CHECK(vt_uft_write_syms_rel(p, EXE, syms, 1, 0) == -1);
	CHECK(strstr(vt_err_msg(), "executable name too long") != NULL);
	{
		/* a map there whose own path is too long is passed over */
		int dfd = open(p, O_RDONLY | O_DIRECTORY), fd;

		fd = openat(dfd, "sid-" SID ".map", O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0);
		close(fd);
		CHECK(vt_uft_write_syms(p, EXE, syms, 1) == -1);
		CHECK(strstr(vt_err_msg(), "executable name too long") != NULL);
		CHECK(unlinkat(dfd, "sid-" SID ".map", 0) == 0);
		close(dfd);
	}

	/* an empty list: the header alone */
	CHECK(vt_uft_write_syms_rel(dir, EXE, NULL, 0, 0) == 0);
	CHECK_STR(slurp(dir, "prog.sym"), "# symbols: 0\n# path name: " EXE "\n");
}

/* A small ET_DYN at @path: two PT_LOADs out of order (0x2000-0x3000, then
 * 0x1000-0x1100), and a symbol table (entry size @entsize; 24 is right)
 * of three functions: lowfn at 0x500 (below every PT_LOAD), wfn weak at
 * 0x2000, gfn global at 0x2100. */
static void write_small_elf(const char *path, uint64_t entsize)
{
	unsigned char b[480] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	static const char strtab[] = "\0lowfn\0wfn\0gfn";
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	FILE *fp;

#define PUT(off, v) (memcpy(b + (off), &(v), sizeof(v)))
#define P16(off, v) (u16 = (v), PUT(off, u16))
#define P32(off, v) (u32 = (v), PUT(off, u32))
#define P64(off, v) (u64 = (v), PUT(off, u64))
	P16(16, 3);		/* ET_DYN */
	P16(18, 62);		/* x86-64 */
	P32(20, 1);
	P64(32, 64);		/* e_phoff */
	P64(40, 288);		/* e_shoff */
	P16(52, 64);
	P16(54, 56);		/* e_phentsize, e_phnum */
	P16(56, 2);
	P16(58, 64);		/* e_shentsize, e_shnum */
	P16(60, 3);
	for (int i = 0; i < 2; i++) {
		unsigned ph = 64 + 56 * i;

		P32(ph, 1);	/* PT_LOAD */
		P32(ph + 4, 5);
		P64(ph + 16, i ? 0x1000 : 0x2000);
		P64(ph + 40, i ? 0x100 : 0x1000);
		P64(ph + 48, 0x1000);
	}
	/* symbols at 176: null, lowfn, wfn, gfn (st_name, st_info, st_other,
	 * st_shndx, st_value, st_size) */
	for (int i = 1; i < 4; i++) {
		unsigned sy = 176 + 24 * i;
		static const uint32_t name[] = { 0, 1, 7, 11 };
		static const uint8_t info[] = { 0, 0x12, 0x22, 0x12 };	/* FUNC, GLOBAL/WEAK */
		static const uint64_t value[] = { 0, 0x500, 0x2000, 0x2100 };

		P32(sy, name[i]);
		b[sy + 4] = info[i];
		P16(sy + 6, 1);
		P64(sy + 8, value[i]);
		P64(sy + 16, 0x10);
	}
	memcpy(b + 272, strtab, sizeof(strtab));
	/* sections at 288: null, .symtab (link 2), .strtab */
	P32(288 + 64 + 4, 2);			/* SHT_SYMTAB */
	P64(288 + 64 + 24, 176);
	P64(288 + 64 + 32, 96);
	P32(288 + 64 + 40, 2);
	P64(288 + 64 + 56, entsize);
	P32(288 + 128 + 4, 3);			/* SHT_STRTAB */
	P64(288 + 128 + 24, 272);
	P64(288 + 128 + 32, sizeof(strtab));
#undef PUT
#undef P16
#undef P32
#undef P64
	fp = fopen(path, "wb");
	CHECK(fp && fwrite(b, sizeof(b), 1, fp) == 1);
	if (fp)
		fclose(fp);
}

/* .sym and map files from ELF files: this test program (local and global
 * functions, a build-id), vmtrace (hundreds of functions), a bare ELF
 * header (no PT_LOAD, no build-id) */
static void test_elf(const char *dir)
{
	char self[PATH_MAX + 200], obj[PATH_MAX], base[NAME_MAX + 8];
	const char *s, *bin = getenv("VT_BIN");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	snprintf(base, sizeof(base), "%s.sym", strrchr(self, '/') + 1);
	CHECK(vt_uft_write_syms_elf(dir, self, 0) == 0);
	s = slurp(dir, base);
	CHECK(strstr(s, "# build-id: ") != NULL);
	CHECK(strstr(s, " T main\n") != NULL);
	CHECK(strstr(s, " t local_fn\n") != NULL);
	if (bin && !access(bin, R_OK)) {	/* vmtrace: more than 256 functions */
		CHECK(vt_uft_write_syms_elf(dir, bin, 0) == 0);
		s = slurp(dir, "vmtrace.sym");
		CHECK(sym_lines(s) > 256);
		CHECK(strstr(s, " T cmd_tsc\n") != NULL);
	}
	CHECK(vt_uft_write_map_elf(dir, SID, self, 0x10000) == 0);
	s = slurp(dir, "sid-" SID ".map");
	CHECK(strstr(s, self) != NULL && strstr(s, "[stack]") != NULL);

	/* an ELF header alone: no PT_LOAD, no symbols, no build-id */
	{
		unsigned char eh[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
		FILE *fp;

		eh[16] = 3;		/* e_type ET_DYN */
		eh[18] = 62;		/* e_machine x86-64 */
		eh[20] = 1;		/* e_version */
		eh[52] = 64;		/* e_ehsize */
		snprintf(obj, sizeof(obj), "%s/bare.so", dir);
		fp = fopen(obj, "wb");
		CHECK(fp && fwrite(eh, sizeof(eh), 1, fp) == 1);
		if (fp)
			fclose(fp);
	}
	CHECK(vt_uft_write_map_elf(dir, SID, obj, 0) == -1);
	CHECK(strstr(vt_err_msg(), "bare.so: no PT_LOAD segment") != NULL);
	CHECK(vt_uft_write_syms_elf(dir, obj, 0) == 0);
	snprintf(self, sizeof(self), "# symbols: 0\n# path name: %s\n", obj);
	CHECK_STR(slurp(dir, "bare.so.sym"), self);

	/* PT_LOADs out of order: the map spans both; a symbol below the
	 * first is not kept, a weak one is 'w' */
	snprintf(obj, sizeof(obj), "%s/small.so", dir);
	write_small_elf(obj, 24);
	CHECK(vt_uft_write_map_elf(dir, SID, obj, 0x7f0000000000ULL) == 0);
	snprintf(self, sizeof(self), "7f0000001000-7f0000003000 r-xp 00000000 00:00 0 %s\n", obj);
	CHECK(strncmp(slurp(dir, "sid-" SID ".map"), self, strlen(self)) == 0);
	CHECK(vt_uft_write_syms_elf(dir, obj, 0) == 0);
	s = slurp(dir, "small.so.sym");
	CHECK(strstr(s, "# symbols: 2\n") != NULL);
	CHECK(strstr(s, "\n0000000000000000 w wfn\n0000000000000010 ? __func_end\n"
		     "0000000000000100 T gfn\n0000000000000110 ? __sym_end\n") != NULL);
	CHECK(strstr(s, "lowfn") == NULL);
	/* its symbol table's entries the wrong size: refused, nothing written */
	unlink(obj);
	snprintf(obj, sizeof(obj), "%s/smallbad.so", dir);
	write_small_elf(obj, 16);
	CHECK(vt_uft_write_syms_elf(dir, obj, 0) == -1);
	CHECK(strstr(vt_err_msg(), "smallbad.so: symbol table at offset 0xb0 has a bad entry size")
	      != NULL);
	CHECK(!exists(dir, "smallbad.so.sym"));
}

int main(void)
{
	char dir[600];
	const char *t = getenv("VT_TMP");

	snprintf(tmp, sizeof(tmp), "%s", t ? t : "/tmp");
	snprintf(dir, sizeof(dir), "%s/t-uftrace-write.%d", tmp, (int)getpid());
	CHECK(mkdir(dir, 0755) == 0);
	test_dir_create(dir);
	test_info(dir);
	test_task(dir);
	test_maps(dir);
	test_syms(dir);
	test_elf(dir);
	if (!t) {
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
	return check_done();
}
