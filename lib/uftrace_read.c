/*
 * uftrace.c - writer and reader of uftrace data directories (file version
 * 4, as uftrace 0.13 reads them; see uftrace.h and docs/format/uftrace.md).
 *
 * Writers are called by the guest runtimes (also from a preloaded .so: no
 * constructors, no exit, errors returned) at session start/end, never per
 * event.  The reader serves host tools over untrusted guest data: every
 * file is size-bounded, every line and record checked, and corruption is
 * reported with the file and offset.  Everything here may allocate and
 * block; any thread.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "elfread.h"
#include "err.h"
#include "fileio.h"
#include "meta.h"
#include "pystage.h"
#include "tsc.h"
#include "uftrace.h"

#define VT_UFT_ENDIAN_LITTLE	1
#define VT_UFT_ELFCLASS64	2
#define VT_UFT_FILE_VERSION_MIN	3

/* Bounds of what the reader accepts (untrusted input). */
#define INFO_MAX_BYTES		(64ULL << 20)
#define TASK_MAX_BYTES		(64ULL << 20)
#define MAP_MAX_BYTES		(16ULL << 20)
#define SYM_MAX_BYTES		(256ULL << 20)	/* all .sym files together */
#define MAX_TASKS		(1 << 20)
#define MAX_SESSIONS		4096
#define MAX_MAPS		65536
#define EVENT_MAX_PAYLOAD	4096	/* largest event data we accept */
#define STREAM_BUF_BYTES	(64 * 1024)
#define MIN_TSC_HZ		1000	/* below: surely not a TSC frequency */
#define FILE_MODE		0644
#define DIR_MODE		0755
#define SID_MIX_SEED		0x9e3779b97f4a7c15ULL
#define SID_MIX_MULT		0xff51afd7ed558ccdULL
#define SID_MIX_SHIFT		33
#define COPY_BUF_BYTES		(64 * 1024)

/* A page, for rounding mappings. */
#define PAGE_BYTES		4096ULL

/* Where the synthetic [stack] mapping goes: below the x86-64 user-space
 * top, so uftrace guesses the usual 128T:128T kernel split. */
#define SYNTH_STACK_START	0x7ffffffde000ULL
#define SYNTH_STACK_END		0x7ffffffff000ULL
#define SYNTH_STACK_LOW		0x1000ULL	/* when the image covers the above */

struct vt_uft_file_header {
	char magic[8];
	uint32_t version;
	uint16_t header_size;
	uint8_t endian;
	uint8_t elf_class;
	uint64_t feat_mask;
	uint64_t info_mask;
	uint16_t max_stack;
	uint16_t unused1;
	uint32_t unused2;
};
VT_STATIC_ASSERT(sizeof(struct vt_uft_file_header) == VT_UFT_HEADER_SIZE,
		 "uftrace info header is 40 bytes");

/* ---------------------------------------------------------------- */
/* small helpers                                                      */

static int path_join(char *buf, size_t len, const char *dir, const char *name)
{
	if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len)
		return vt_err_set("%s/%s: path too long", dir, name);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Write all of @buf to @fd; the message names @path. */
static int write_all(int fd, const void *buf, size_t len, const char *path)
{
	if (vt_file_write_all(fd, buf, len))
		return vt_err_errno("%s: write failed", path);
	return 0;
}

/* A growable text buffer for files written in one go. */
struct sbuf {
	char *buf;
	size_t len, cap;
	int oom;
};

static void sb_printf(struct sbuf *sb, const char *fmt, ...) VT_PRINTF(2, 3);
static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->oom)
		return;
	for (;;) {
		size_t room = sb->cap - sb->len;

		va_start(ap, fmt);
		n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->oom = 1;
			return;
		}
		if ((size_t)n < room) {
			sb->len += n;
			return;
		}
		size_t cap = sb->cap ? sb->cap * 2 : 4096;
		while (cap - sb->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(sb->buf, cap);
		if (!p) {
			sb->oom = 1;
			return;
		}
		sb->buf = p;
		sb->cap = cap;
	}
}

static void sb_put(struct sbuf *sb, const void *data, size_t len)
{
	if (sb->oom)
		return;
	if (sb->cap - sb->len < len + 1) {
		size_t cap = sb->cap ? sb->cap : 4096;
		char *p;

		while (cap - sb->len < len + 1)
			cap *= 2;
		p = realloc(sb->buf, cap);
		if (!p) {
			sb->oom = 1;
			return;
		}
		sb->buf = p;
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

static int sb_write(struct sbuf *sb, const char *path)
{
	int ret;

	if (sb->oom) {
		free(sb->buf);
		return vt_err_set("%s: out of memory", path);
	}
	ret = vt_file_write_atomic(path, sb->buf ? sb->buf : "", sb->len,
				   FILE_MODE, 0);
	free(sb->buf);
	return ret;
}

/*
 * Line iterator over a buffer from vt_file_read_all(): returns the next
 * line NUL-terminated in place (without '\n'), NULL at the end.  *bad is
 * set if the line holds a NUL byte.
 */
struct lines {
	char *p, *end;
	char *start;		/* buffer start, for offsets */
	int lineno;
};

static char *next_line(struct lines *l, int *bad)
{
	char *line = l->p, *nl;

	*bad = 0;
	if (l->p >= l->end)
		return NULL;
	nl = memchr(l->p, '\n', l->end - l->p);
	if (!nl)
		nl = l->end;
	*nl = 0;
	l->p = nl + 1;
	l->lineno++;
	if (strlen(line) != (size_t)(nl - line))
		*bad = 1;
	return line;
}

/* Read all of @path (at most @max bytes) and set @l over it: returns the
 * buffer (the caller frees it), or NULL with the error set. */
static char *lines_read(struct lines *l, const char *path, uint64_t max)
{
	size_t len;
	char *buf = vt_file_read_all(path, max, &len);

	if (!buf)
		return NULL;
	l->start = l->p = buf;
	l->end = buf + len;
	l->lineno = 0;
	return buf;
}

/* Parse a decimal int in [0, INT_MAX] at @s; -1 if malformed. */
static int parse_int(const char *s, char **end)
{
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, end, 10);
	if (errno || v < 0 || v > INT_MAX)
		return -1;
	return v;
}

/* ---------------------------------------------------------------- */
/* writing                                                            */

/* Names of files that make up a trace; removed by dir_create(force). */
static int is_trace_file(const char *n)
{
	size_t len = strlen(n);
	static const char *const names[] = {
		"info", "task", "task.txt", "default.opts", "kallsyms", "events.txt",
		"extern.dat", VT_META_FILE,
	};

	for (size_t i = 0; i < VT_ARRAY_SIZE(names); i++)
		if (!strcmp(n, names[i]))
			return 1;
	if (len > 4 && (!strcmp(n + len - 4, ".dat") || !strcmp(n + len - 4, ".sym")))
		return 1;
	if (len > 8 && !strncmp(n, "sid-", 4) && !strcmp(n + len - 4, ".map"))
		return 1;
	return 0;
}

/* A Python tracer stage file <TID>.stage (lib/pystage.h). */
static int is_stage_file(const char *n)
{
	size_t len = strlen(n), sl = strlen(VT_PYSTAGE_SUFFIX);

	return len > sl && !strcmp(n + len - sl, VT_PYSTAGE_SUFFIX);
}

int vt_uft_dir_create(const char *dir, int force)
{
	struct dirent *de;
	struct stat st;
	int nonempty = 0;
	DIR *d;

	if (mkdir(dir, DIR_MODE) == 0)
		return 0;
	if (errno != EEXIST)
		return vt_err_errno("%s: cannot create directory", dir);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return vt_err_set("%s: exists and is not a directory", dir);
	if (access(dir, W_OK | X_OK))
		return vt_err_errno("%s: directory not writable", dir);
	d = opendir(dir);
	if (!d)
		return vt_err_errno("%s: cannot read directory", dir);
	while ((de = readdir(d))) {
		char path[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nonempty = 1;
		if (!force)
			break;
		/* an old run's stages too: readers would take their records */
		if (!is_trace_file(de->d_name) && !is_stage_file(de->d_name))
			continue;
		if (path_join(path, sizeof(path), dir, de->d_name) || unlink(path)) {
			if (errno)
				vt_err_errno("%s: cannot remove old trace file", path);
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (nonempty && !force) {
		vt_err_set("%s: directory exists and is not empty (remove it or force)", dir);
		errno = ENOTEMPTY;	/* callers tell a usage error from an I/O one */
		return -1;
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The tids of the non-empty [0-9]+.dat files of @dir, sorted; -1 on error. */
static int list_dat_tids(const char *dir, int **out)
{
	struct dirent *de;
	int *tids = NULL, nr = 0, cap = 0;
	DIR *d = opendir(dir);

	*out = NULL;
	if (!d)
		return vt_err_errno("%s: cannot read directory", dir);
	while ((de = readdir(d))) {
		char path[PATH_MAX], *end;
		struct stat st;
		int tid = parse_int(de->d_name, &end);

		if (tid <= 0 || strcmp(end, ".dat"))
			continue;
		if (path_join(path, sizeof(path), dir, de->d_name) || stat(path, &st) ||
		    !S_ISREG(st.st_mode) || st.st_size == 0)
			continue;
		if (nr == MAX_TASKS)
			break;
		if (nr == cap) {
			int *p;

			cap = cap ? cap * 2 : 16;
			p = realloc(tids, cap * sizeof(*tids));
			if (!p) {
				free(tids);
				closedir(d);
				return vt_err_set("out of memory");
			}
			tids = p;
		}
		tids[nr++] = tid;
	}
	closedir(d);
	if (nr)
		qsort(tids, nr, sizeof(*tids), cmp_int);
	*out = tids;
	return nr;
}

/* Append @s to @sb with control characters made spaces and quotes and
 * backslashes escaped (what uftrace's cmdline line holds). */
static void sb_put_quoted(struct sbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			sb_printf(sb, "\\%c", c);
		else if (c < ' ')
			sb_put(sb, " ", 1);
		else
			sb_put(sb, s, 1);
	}
}

/* A one-line value from a file: the rest of the first line starting with
 * @prefix, trimmed; @def if none. */
static void read_field(const char *path, const char *prefix, char *out, size_t len,
		       const char *def)
{
	char line[512];
	FILE *fp = fopen(path, "re");

	snprintf(out, len, "%s", def);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *v, *nl;

		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		v = line + strlen(prefix);
		while (*v == ' ' || *v == '\t' || *v == ':')
			v++;
		nl = strchr(v, '\n');
		if (nl)
			*nl = 0;
		snprintf(out, len, "%s", v);
		break;
	}
	fclose(fp);
}

int vt_uft_write_info(const char *dir, const struct vt_uft_info *info)
{
	struct vt_uft_file_header hdr;
	struct sbuf sb = { 0 };
	char path[PATH_MAX], desc[256], distro[256];
	const int *tids = info->tids;
	int nr_tids = info->nr_tids, *found = NULL;
	struct utsname uts;
	time_t now = time(NULL);
	char date[64];

	if (path_join(path, sizeof(path), dir, "info"))
		return -1;
	if (!info->exename || !info->exename[0] || strchr(info->exename, '\n'))
		return vt_err_set("%s: bad executable name", path);
	if (nr_tids <= 0 || !tids) {
		nr_tids = list_dat_tids(dir, &found);
		if (nr_tids < 0)
			return -1;
		tids = found;
	}

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, VT_UFT_MAGIC_STR, sizeof(VT_UFT_MAGIC_STR));
	hdr.version = VT_UFT_FILE_VERSION;
	hdr.header_size = VT_UFT_HEADER_SIZE;
	hdr.endian = VT_UFT_ENDIAN_LITTLE;
	hdr.elf_class = VT_UFT_ELFCLASS64;
	hdr.feat_mask = VT_UFT_FEAT_TASK_SESSION | VT_UFT_FEAT_SYM_REL_ADDR;
	if (info->max_stack) {
		hdr.feat_mask |= VT_UFT_FEAT_MAX_STACK;
		hdr.max_stack = info->max_stack;
	}
	hdr.info_mask = VT_UFT_INFO_EXE_NAME | VT_UFT_INFO_CMDLINE | VT_UFT_INFO_CPUINFO |
			VT_UFT_INFO_OSINFO | VT_UFT_INFO_TASKINFO | VT_UFT_INFO_RECORD_DATE |
			VT_UFT_INFO_VERSION;
	if (info->exit_status >= 0)
		hdr.info_mask |= VT_UFT_INFO_EXIT_STATUS;
	sb_put(&sb, &hdr, sizeof(hdr));

	/* sections in bit order: uftrace reads them in that order */
	sb_printf(&sb, "exename:%s\n", info->exename);
	if (info->exit_status >= 0)
		sb_printf(&sb, "exit_status:%d\n", info->exit_status);
	sb_printf(&sb, "cmdline:");
	sb_put_quoted(&sb, info->cmdline ? info->cmdline : info->exename);
	sb_printf(&sb, "\n");

	read_field("/proc/cpuinfo", "model name", desc, sizeof(desc), "unknown");
	sb_printf(&sb, "cpuinfo:lines=2\n");
	sb_printf(&sb, "cpuinfo:nr_cpus=%ld / %ld (online/possible)\n",
		  sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF));
	sb_printf(&sb, "cpuinfo:desc=%s\n", desc);

	if (uname(&uts))
		memset(&uts, 0, sizeof(uts));
	read_field("/etc/os-release", "PRETTY_NAME=", distro, sizeof(distro), "\"Unknown\"");
	sb_printf(&sb, "osinfo:lines=3\n");
	sb_printf(&sb, "osinfo:kernel=%s %s\n", uts.sysname, uts.release);
	sb_printf(&sb, "osinfo:hostname=%s\n", uts.nodename);
	sb_printf(&sb, "osinfo:distro=%s\n", distro);

	sb_printf(&sb, "taskinfo:lines=2\n");
	sb_printf(&sb, "taskinfo:nr_tid=%d\n", nr_tids);
	sb_printf(&sb, "taskinfo:tids=");
	for (int i = 0; i < nr_tids; i++)
		sb_printf(&sb, "%s%d", i ? "," : "", tids[i]);
	sb_printf(&sb, "\n");
	free(found);

	if (!ctime_r(&now, date))
		snprintf(date, sizeof(date), "unknown\n");
	sb_printf(&sb, "record_date:%s", date);
	sb_printf(&sb, "elapsed_time:%" PRIu64 ".%09" PRIu64 " sec\n",
		  info->elapsed_ns / VT_NS_PER_SEC, info->elapsed_ns % VT_NS_PER_SEC);
	sb_printf(&sb, "uftrace_version:vmtrace (uftrace data v%d)\n", VT_UFT_FILE_VERSION);
	return sb_write(&sb, path);
}

/* Append one line to DIR/task.txt with a single write (O_APPEND). */
static int task_append(const char *dir, const char *line, size_t len)
{
	char path[PATH_MAX];
	int fd, ret;

	if (path_join(path, sizeof(path), dir, "task.txt"))
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, FILE_MODE);
	if (fd < 0)
		return vt_err_errno("%s: cannot open", path);
	ret = write_all(fd, line, len, path);
	if (close(fd) && !ret)
		ret = vt_err_errno("%s: write failed", path);
	return ret;
}

static int sid_ok(const char *sid)
{
	if (!sid || strlen(sid) != VT_UFT_SID_LEN)
		return 0;
	for (; *sid; sid++)
		if (!isalnum((unsigned char)*sid))
			return 0;
	return 1;
}

int vt_uft_task_session(const char *dir, uint64_t ts, int pid, const char *sid,
			const char *exename)
{
	char line[PATH_MAX + 128];
	int n;

	if (!sid_ok(sid))
		return vt_err_set("%s: session id '%.32s' is not %d letters/digits", dir,
				  sid ? sid : "", VT_UFT_SID_LEN);
	if (!exename || strchr(exename, '\n') || strchr(exename, '"'))
		return vt_err_set("%s: bad executable name for task.txt", dir);
	n = snprintf(line, sizeof(line),
		     "SESS timestamp=%" PRIu64 ".%09" PRIu64 " pid=%d sid=%s exename=\"%s\"\n",
		     ts / VT_NS_PER_SEC, ts % VT_NS_PER_SEC, pid, sid, exename);
	if (n >= (int)sizeof(line))
		return vt_err_set("%s: executable name too long", dir);
	return task_append(dir, line, n);
}

int vt_uft_task_thread(const char *dir, uint64_t ts, int tid, int pid)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "TASK timestamp=%" PRIu64 ".%09" PRIu64
			 " tid=%d pid=%d\n", ts / VT_NS_PER_SEC, ts % VT_NS_PER_SEC, tid, pid);

	return task_append(dir, line, n);
}

int vt_uft_task_fork(const char *dir, uint64_t ts, int pid, int ppid)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "FORK timestamp=%" PRIu64 ".%09" PRIu64
			 " pid=%d ppid=%d\n", ts / VT_NS_PER_SEC, ts % VT_NS_PER_SEC, pid, ppid);

	return task_append(dir, line, n);
}

void vt_uft_sid_make(char *buf, int pid, uint64_t ts)
{
	/* mix (splitmix/murmur finaliser constants) so that sessions of one
	 * pid at nearby times still differ */
	uint64_t h = ts ^ ((uint64_t)(uint32_t)pid << 32) ^ SID_MIX_SEED;

	h ^= h >> SID_MIX_SHIFT;
	h *= SID_MIX_MULT;
	h ^= h >> SID_MIX_SHIFT;
	snprintf(buf, VT_UFT_SID_LEN + 1, "%016" PRIx64, h);
}

static int map_path(char *buf, size_t len, const char *dir, const char *sid)
{
	char name[64];

	if (!sid_ok(sid))
		return vt_err_set("%s: session id '%.32s' is not %d letters/digits", dir,
				  sid ? sid : "", VT_UFT_SID_LEN);
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	return path_join(buf, len, dir, name);
}

int vt_uft_write_map(const char *dir, const char *sid, pid_t pid)
{
	char src[64], dst[PATH_MAX];
	struct sbuf sb = { 0 };

	if (map_path(dst, sizeof(dst), dir, sid))
		return -1;
	if (pid)
		snprintf(src, sizeof(src), "/proc/%d/maps", (int)pid);
	else
		snprintf(src, sizeof(src), "/proc/self/maps");
	/* /proc files report size 0: read in chunks */
	{
		int fd = open(src, O_RDONLY | O_CLOEXEC);
		char chunk[COPY_BUF_BYTES];
		ssize_t n;

		if (fd < 0)
			return vt_err_errno("%s: cannot open", src);
		while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				vt_err_errno("%s: read error", src);
				close(fd);
				free(sb.buf);
				return -1;
			}
			sb_put(&sb, chunk, n);
		}
		close(fd);
	}
	return sb_write(&sb, dst);
}

int vt_uft_write_map_fixed(const char *dir, const char *sid, uint64_t start, uint64_t end,
			   const char *path)
{
	char dst[PATH_MAX];
	struct sbuf sb = { 0 };

	if (map_path(dst, sizeof(dst), dir, sid))
		return -1;
	if (!path || !path[0] || strchr(path, '\n') || strchr(path, ' '))
		return vt_err_set("%s: bad image path for the map", dst);
	uint64_t stack = SYNTH_STACK_START, stack_end = SYNTH_STACK_END;

	start &= ~(PAGE_BYTES - 1);
	end = (end + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	if (end <= start || end > VT_UFT_ADDR_MASK + 1)
		return vt_err_set("%s: bad image range %#" PRIx64 "-%#" PRIx64
				  " (records hold 48-bit addresses)", dst, start, end);
	/* any [stack] below 2^47 makes uftrace put the kernel above every
	 * 48-bit address; keep it off the image */
	if (start < stack_end && end > stack) {
		stack = SYNTH_STACK_LOW;
		stack_end = SYNTH_STACK_LOW + PAGE_BYTES;
		if (start < stack_end && end > stack)
			return vt_err_set("%s: image range %#" PRIx64 "-%#" PRIx64 " leaves no "
					  "room for the [stack] line uftrace needs", dst, start, end);
	}
	sb_printf(&sb, "%012" PRIx64 "-%012" PRIx64 " r-xp 00000000 00:00 0 %s\n",
		  start, end, path);
	sb_printf(&sb, "%012" PRIx64 "-%012" PRIx64 " rw-p 00000000 00:00 0 [stack]\n",
		  stack, stack_end);
	return sb_write(&sb, dst);
}

int vt_uft_write_map_elf(const char *dir, const char *sid, const char *path,
			 uint64_t load_bias)
{
	struct vt_elf *e = vt_elf_open(path);
	uint64_t lo = UINT64_MAX, hi = 0;
	struct vt_elf_load l;
	char real[PATH_MAX];
	int ret;

	if (!e)
		return -1;
	/* the name vt_uft_write_syms_elf() gives the .sym's path line */
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (int i = 0; vt_elf_load(e, i, &l) == 0; i++) {
		if (l.vaddr < lo)
			lo = l.vaddr;
		if (l.vaddr + l.memsz > hi)
			hi = l.vaddr + l.memsz;
	}
	vt_elf_close(e);
	if (hi <= lo)
		return vt_err_set("%s: no PT_LOAD segment", path);
	ret = vt_uft_write_map_fixed(dir, sid, lo + load_bias, hi + load_bias, real);
	return ret;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct vt_uft_sym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Type letters uftrace 0.13 loads from .sym files. */
static int sym_type_ok(char t)
{
	return t && strchr("TtwPKDdvu", t) != NULL;
}

/* Write a .sym file: header, symbols sorted, a '?' end marker after a
 * symbol that does not reach the next one and after the last. */
static int write_sym_file(const char *dir, const char *exename, const char *build_id,
			  const struct vt_uft_sym *in, size_t nr, uint64_t base)
{
	struct vt_uft_sym *syms;
	struct sbuf sb = { 0 };
	char path[PATH_MAX], name[NAME_MAX + 1];
	size_t kept = 0;

	if (!exename || !exename[0] || strchr(exename, '\n'))
		return vt_err_set("%s: bad executable name for a .sym file", dir);
	if (snprintf(name, sizeof(name), "%s.sym", base_name(exename)) >= (int)sizeof(name) ||
	    path_join(path, sizeof(path), dir, name))
		return vt_err_set("%s: executable name too long", exename);
	syms = malloc((nr ? nr : 1) * sizeof(*syms));
	if (!syms)
		return vt_err_set("%s: out of memory", path);
	for (size_t i = 0; i < nr; i++) {
		if (!in[i].name || !in[i].name[0] || strpbrk(in[i].name, "\n\t") ||
		    in[i].addr < base)
			continue;
		syms[kept] = in[i];
		syms[kept].addr -= base;
		if (!sym_type_ok(syms[kept].type))
			syms[kept].type = 'T';
		kept++;
	}
	qsort(syms, kept, sizeof(*syms), cmp_sym);
	sb_printf(&sb, "# symbols: %zu\n", kept);
	sb_printf(&sb, "# path name: %s\n", exename);
	if (build_id && build_id[0])
		sb_printf(&sb, "# build-id: %s\n", build_id);
	for (size_t i = 0; i < kept; i++) {
		const struct vt_uft_sym *s = &syms[i];
		uint64_t end = s->addr + (s->size ? s->size : 1);

		/* uftrace keeps the first of several symbols at one address */
		if (i && s->addr == syms[i - 1].addr)
			continue;
		sb_printf(&sb, "%016" PRIx64 " %c %s\n", s->addr, s->type, s->name);
		if (i + 1 == kept || (s->size && syms[i + 1].addr > end))
			sb_printf(&sb, "%016" PRIx64 " ? %s\n", end,
				  i + 1 == kept ? "__sym_end" : "__func_end");
	}
	free(syms);
	return sb_write(&sb, path);
}

/* Start of the first mapping of @exename in any DIR/sid-*.map, or 0. */
static uint64_t map_base_of(const char *dir, const char *exename)
{
	struct dirent *de;
	uint64_t base = 0;
	int found = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char path[PATH_MAX], line[PATH_MAX + 128];
		size_t n = strlen(de->d_name);
		FILE *fp;

		if (strncmp(de->d_name, "sid-", 4) || n < 8 || strcmp(de->d_name + n - 4, ".map"))
			continue;
		if (path_join(path, sizeof(path), dir, de->d_name) || !(fp = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), fp)) {
			unsigned long long start, end;
			char file[PATH_MAX];

			if (sscanf(line, "%llx-%llx %*s %*x %*x:%*x %*u %4095s", &start, &end,
				   file) == 3 && !strcmp(file, exename)) {
				base = start;
				found = 1;
				break;
			}
		}
		fclose(fp);
	}
	closedir(d);
	return base;
}

int vt_uft_write_syms(const char *dir, const char *exename,
		      const struct vt_uft_sym *syms, size_t nr)
{
	return write_sym_file(dir, exename, NULL, syms, nr, map_base_of(dir, exename));
}

int vt_uft_write_syms_rel(const char *dir, const char *exename,
			  const struct vt_uft_sym *syms, size_t nr, uint64_t base)
{
	return write_sym_file(dir, exename, NULL, syms, nr, base);
}

struct elf_syms {
	struct vt_uft_sym *v;
	size_t nr, cap;
	uint64_t base;		/* link-time address of the first mapping */
};

static int collect_sym(void *arg, const struct vt_elf_sym *s)
{
	struct elf_syms *a = arg;

	if (s->value < a->base)
		return 0;
	if (a->nr == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		void *p = realloc(a->v, cap * sizeof(*a->v));

		if (!p)
			return vt_err_set("out of memory");
		a->v = p;
		a->cap = cap;
	}
	a->v[a->nr].addr = s->value;
	a->v[a->nr].size = s->size;
	a->v[a->nr].type = s->bind == 'l' ? 't' : s->bind == 'w' ? 'w' : 'T';
	a->v[a->nr].name = s->name;
	a->nr++;
	return 0;
}

int vt_uft_write_syms_elf(const char *dir, const char *path, uint64_t load_bias)
{
	struct elf_syms a = { 0 };
	char real[PATH_MAX], build_id[128];
	struct vt_elf *e;
	int ret;

	(void)load_bias;	/* .sym addresses are relative: see uftrace.h */
	e = vt_elf_open(path);
	if (!e)
		return -1;
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	a.base = vt_elf_base_vaddr(e);
	if (vt_elf_build_id(e, build_id, sizeof(build_id)))
		build_id[0] = 0;
	ret = vt_elf_syms(e, collect_sym, &a);
	if (ret == 0)
		ret = write_sym_file(dir, real, build_id, a.v, a.nr, a.base);
	free(a.v);
	vt_elf_close(e);
	return ret < 0 ? -1 : 0;
}

int vt_uft_dat_path(char *buf, size_t len, const char *dir, int tid)
{
	if (snprintf(buf, len, "%s/%d.dat", dir, tid) >= (int)len)
		return vt_err_set("%s: path too long", dir);
	return 0;
}

/* ---------------------------------------------------------------- */
/* reading                                                            */

struct uft_task {
	int tid;
	int pid;
	int order;		/* position of appearance, for unique_tasks() */
};

struct uft_map {
	uint64_t start, end;
	char *path;
};

struct uft_symbol {
	uint64_t addr;		/* absolute, as in the records */
	uint64_t size;
	const char *name;
};

struct vt_uft_reader {
	char *dir;
	struct vt_uft_file_header hdr;
	struct vt_uft_info info;
	char *exename, *cmdline;
	int *tids;
	struct uft_task *tasks;
	int nr_tasks;
	struct uft_map *maps;
	int nr_maps;
	struct uft_symbol *syms;
	size_t nr_syms, cap_syms;
	char **sym_bufs;	/* .sym file contents the names point into */
	int nr_sym_bufs;
	uint64_t sym_bytes;	/* their total size, bounded by SYM_MAX_BYTES */
};

struct vt_uft_stream {
	char *path;
	int fd;
	uint64_t off;		/* file offset of buf[pos] */
	uint8_t buf[STREAM_BUF_BYTES];
	size_t pos, len;
	int eof, truncated, failed;
	uint8_t payload[EVENT_MAX_PAYLOAD];
	size_t payload_len;
	/* after the .dat's records: the Python tracer's stage (pystage.h) */
	int stage_loaded;
	struct vt_uft_record *staged;
	size_t staged_nr, staged_pos;
};

/* A section's line: "<prefix><value>" -> value, else NULL. */
static char *info_line(struct lines *l, const char *prefix, const char *path)
{
	int bad;
	char *line = next_line(l, &bad);

	if (!line || bad || strncmp(line, prefix, strlen(prefix))) {
		vt_err_set("%s: offset %zu: expected a '%s' line", path,
			   (size_t)(line ? line - l->start : l->end - l->start), prefix);
		return NULL;
	}
	return line + strlen(prefix);
}

/* A "<prefix>lines=N" line then N "<prefix>..." lines, passed to @fn. */
static int info_lines(struct lines *l, const char *prefix, int max, const char *path,
		      int (*fn)(struct vt_uft_reader *, char *, const char *),
		      struct vt_uft_reader *r)
{
	char *v = info_line(l, prefix, path), *end;
	int n;

	if (!v)
		return -1;
	if (strncmp(v, "lines=", 6) || (n = parse_int(v + 6, &end)) < 0 || n > max)
		return vt_err_set("%s: line %d: bad '%slines=' count", path, l->lineno, prefix);
	for (int i = 0; i < n; i++) {
		v = info_line(l, prefix, path);
		if (!v)
			return -1;
		if (fn && fn(r, v, path))
			return -1;
	}
	return 0;
}

static int parse_taskinfo(struct vt_uft_reader *r, char *v, const char *path)
{
	char *end;

	if (!strncmp(v, "nr_tid=", 7)) {
		int n = parse_int(v + 7, &end);

		if (n < 0 || n > MAX_TASKS || *end)
			return vt_err_set("%s: bad taskinfo:nr_tid", path);
		r->info.nr_tids = n;
		return 0;
	}
	if (!strncmp(v, "tids=", 5)) {
		int nr = 0;

		free(r->tids);
		r->tids = calloc(r->info.nr_tids ? r->info.nr_tids : 1, sizeof(int));
		if (!r->tids)
			return vt_err_set("out of memory");
		v += 5;
		while (*v) {
			int tid = parse_int(v, &end);

			if (tid < 0 || nr >= r->info.nr_tids || (*end && *end != ','))
				return vt_err_set("%s: bad taskinfo:tids list", path);
			r->tids[nr++] = tid;
			v = *end ? end + 1 : end;
		}
		if (nr != r->info.nr_tids)
			return vt_err_set("%s: taskinfo:tids has %d entries, nr_tid says %d",
					  path, nr, r->info.nr_tids);
		return 0;
	}
	return vt_err_set("%s: unknown taskinfo line", path);
}

static int read_info(struct vt_uft_reader *r)
{
	char path[PATH_MAX], *buf, *v;
	struct lines l;
	size_t len;
	int ret = -1;

	if (path_join(path, sizeof(path), r->dir, "info"))
		return -1;
	buf = vt_file_read_all(path, INFO_MAX_BYTES, &len);
	if (!buf)
		return -1;
	if (len < sizeof(r->hdr)) {
		vt_err_set("%s: truncated header (%zu of %d bytes)", path, len, VT_UFT_HEADER_SIZE);
		goto out;
	}
	memcpy(&r->hdr, buf, sizeof(r->hdr));
	if (memcmp(r->hdr.magic, VT_UFT_MAGIC_STR, sizeof(VT_UFT_MAGIC_STR))) {
		vt_err_set("%s: not an uftrace info file (bad magic)", path);
		goto out;
	}
	if (r->hdr.version < VT_UFT_FILE_VERSION_MIN || r->hdr.version > VT_UFT_FILE_VERSION) {
		vt_err_set("%s: unsupported file version %u", path, r->hdr.version);
		goto out;
	}
	if (r->hdr.endian != VT_UFT_ENDIAN_LITTLE || r->hdr.elf_class != VT_UFT_ELFCLASS64) {
		vt_err_set("%s: only little-endian 64-bit data is supported", path);
		goto out;
	}
	if (r->hdr.header_size < VT_UFT_HEADER_SIZE || r->hdr.header_size > len) {
		vt_err_set("%s: bad header size %u", path, r->hdr.header_size);
		goto out;
	}
	r->info.max_stack = (r->hdr.feat_mask & VT_UFT_FEAT_MAX_STACK) ? r->hdr.max_stack : 0;
	r->info.exit_status = -1;
	l.start = buf;
	l.p = buf + r->hdr.header_size;
	l.end = buf + len;
	l.lineno = 0;

	if (r->hdr.info_mask & VT_UFT_INFO_EXE_NAME) {
		if (!(v = info_line(&l, "exename:", path)) || !(r->exename = strdup(v)))
			goto out;
	}
	if ((r->hdr.info_mask & VT_UFT_INFO_EXE_BUILD_ID) && !info_line(&l, "build_id:", path))
		goto out;
	if (r->hdr.info_mask & VT_UFT_INFO_EXIT_STATUS) {
		if (!(v = info_line(&l, "exit_status:", path)))
			goto out;
		r->info.exit_status = atoi(v);
	}
	if (r->hdr.info_mask & VT_UFT_INFO_CMDLINE) {
		if (!(v = info_line(&l, "cmdline:", path)) || !(r->cmdline = strdup(v)))
			goto out;
	}
	if ((r->hdr.info_mask & VT_UFT_INFO_CPUINFO) &&
	    info_lines(&l, "cpuinfo:", 2, path, NULL, r))
		goto out;
	if ((r->hdr.info_mask & VT_UFT_INFO_MEMINFO) && !info_line(&l, "meminfo:", path))
		goto out;
	if ((r->hdr.info_mask & VT_UFT_INFO_OSINFO) &&
	    info_lines(&l, "osinfo:", 3, path, NULL, r))
		goto out;
	if ((r->hdr.info_mask & VT_UFT_INFO_TASKINFO) &&
	    info_lines(&l, "taskinfo:", 2, path, parse_taskinfo, r))
		goto out;
	if ((r->hdr.info_mask & VT_UFT_INFO_USAGEINFO) &&
	    info_lines(&l, "usageinfo:", 6, path, NULL, r))
		goto out;
	if ((r->hdr.info_mask & VT_UFT_INFO_LOADINFO) && !info_line(&l, "loadinfo:", path))
		goto out;
	if (r->hdr.info_mask & VT_UFT_INFO_ARG_SPEC) {
		/* argspec:lines=N then N lines of any of six prefixes */
		char *end;
		int n;

		if (!(v = info_line(&l, "argspec:", path)))
			goto out;
		if (!strncmp(v, "lines=", 6)) {
			n = parse_int(v + 6, &end);
			if (n < 0 || n > 6) {
				vt_err_set("%s: bad argspec:lines count", path);
				goto out;
			}
			for (int i = 0; i < n; i++) {
				int bad;

				if (!next_line(&l, &bad) || bad) {
					vt_err_set("%s: truncated argspec section", path);
					goto out;
				}
			}
		}
	}
	if (r->hdr.info_mask & VT_UFT_INFO_RECORD_DATE) {
		unsigned long long s, ns = 0;

		if (!info_line(&l, "record_date:", path) ||
		    !(v = info_line(&l, "elapsed_time:", path)))
			goto out;
		if (sscanf(v, "%llu.%9llu", &s, &ns) >= 1 && s < UINT64_MAX / VT_NS_PER_SEC)
			r->info.elapsed_ns = s * VT_NS_PER_SEC + ns;
	}
	/* pattern_type and version are not needed: stop here */
	ret = 0;
out:
	free(buf);
	return ret;
}

/* Append a task (duplicates are removed by unique_tasks()). */
static int add_task(struct vt_uft_reader *r, int tid, int pid, int *cap)
{
	if (r->nr_tasks >= 2 * MAX_TASKS)
		return vt_err_set("%s: more than %d tasks", r->dir, MAX_TASKS);
	if (r->nr_tasks == *cap) {
		int c = *cap ? *cap * 2 : 16;
		void *p = realloc(r->tasks, c * sizeof(*r->tasks));

		if (!p)
			return vt_err_set("out of memory");
		r->tasks = p;
		*cap = c;
	}
	r->tasks[r->nr_tasks].tid = tid;
	r->tasks[r->nr_tasks].pid = pid;
	r->tasks[r->nr_tasks].order = r->nr_tasks;
	r->nr_tasks++;
	return 0;
}

static int cmp_task(const void *a, const void *b)
{
	const struct uft_task *x = a, *y = b;

	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->order > y->order) - (x->order < y->order);
}

/* Sort tasks by tid, keeping the first-seen entry of each tid (task.txt
 * comes first, so its pid wins over a bare .dat file's). */
static int unique_tasks(struct vt_uft_reader *r)
{
	int n = 0;

	if (!r->nr_tasks)
		return 0;
	qsort(r->tasks, r->nr_tasks, sizeof(*r->tasks), cmp_task);
	for (int i = 0; i < r->nr_tasks; i++)
		if (!n || r->tasks[n - 1].tid != r->tasks[i].tid)
			r->tasks[n++] = r->tasks[i];
	r->nr_tasks = n;
	if (n > MAX_TASKS)
		return vt_err_set("%s: more than %d tasks", r->dir, MAX_TASKS);
	return 0;
}

/* Sessions seen in task.txt: sid -> the map file to read. */
struct sess_list {
	char (*sid)[VT_UFT_SID_LEN + 1];
	int nr;
};

/* Parse "timestamp=S.N" at @s; -1 if malformed. */
static int parse_ts(const char *s, uint64_t *ts, char **end)
{
	unsigned long long sec, nsec;
	char *e;

	if (strncmp(s, "timestamp=", 10))
		return -1;
	s += 10;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	sec = strtoull(s, &e, 10);
	if (errno || *e != '.' || !isdigit((unsigned char)e[1]))
		return -1;
	nsec = strtoull(e + 1, &e, 10);
	if (errno || nsec >= VT_NS_PER_SEC || sec > (UINT64_MAX - nsec) / VT_NS_PER_SEC)
		return -1;
	*ts = sec * VT_NS_PER_SEC + nsec;
	*end = e;
	return 0;
}

static int read_task_txt(struct vt_uft_reader *r, struct sess_list *sl, int *cap)
{
	char path[PATH_MAX], *buf, *line;
	struct lines l;
	int bad;

	if (path_join(path, sizeof(path), r->dir, "task.txt"))
		return -1;
	if (access(path, F_OK))
		return 0;
	buf = lines_read(&l, path, TASK_MAX_BYTES);
	if (!buf)
		return -1;
	while ((line = next_line(&l, &bad))) {
		uint64_t ts;
		char *p;
		int a, b;

		if (bad) {
			vt_err_set("%s:%d: NUL byte in line", path, l.lineno);
			goto bad;
		}
		if (!line[0])
			continue;
		if (strlen(line) < 5 || parse_ts(line + 5, &ts, &p)) {
			vt_err_set("%s:%d: expected 'TASK|FORK|SESS|DLOP timestamp=S.N ...'",
				   path, l.lineno);
			goto bad;
		}
		if (!strncmp(line, "TASK ", 5)) {
			if (sscanf(p, " tid=%d pid=%d", &a, &b) != 2 || a <= 0 || b <= 0) {
				vt_err_set("%s:%d: bad TASK line", path, l.lineno);
				goto bad;
			}
			if (add_task(r, a, b, cap))
				goto bad;
		} else if (!strncmp(line, "FORK ", 5)) {
			if (sscanf(p, " pid=%d ppid=%d", &a, &b) != 2 || a <= 0 || b < 0) {
				vt_err_set("%s:%d: bad FORK line", path, l.lineno);
				goto bad;
			}
			if (add_task(r, a, a, cap))
				goto bad;
		} else if (!strncmp(line, "SESS ", 5)) {
			char sid[VT_UFT_SID_LEN + 1];
			int n = 0;

			if (sscanf(p, " pid=%d sid=%16[A-Za-z0-9]%n", &a, sid, &n) != 2 || a <= 0 ||
			    strlen(sid) != VT_UFT_SID_LEN) {
				vt_err_set("%s:%d: bad SESS line", path, l.lineno);
				goto bad;
			}
			if (sl->nr >= MAX_SESSIONS) {
				vt_err_set("%s: more than %d sessions", path, MAX_SESSIONS);
				goto bad;
			}
			void *q = realloc(sl->sid, (sl->nr + 1) * sizeof(*sl->sid));
			if (!q) {
				vt_err_set("out of memory");
				goto bad;
			}
			sl->sid = q;
			memcpy(sl->sid[sl->nr++], sid, sizeof(sid));
		} else if (strncmp(line, "DLOP ", 5)) {
			vt_err_set("%s:%d: unknown line type", path, l.lineno);
			goto bad;
		}
	}
	free(buf);
	return 0;
bad:
	free(buf);
	return -1;
}

static int cmp_map(const void *a, const void *b)
{
	const struct uft_map *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Add the mappings of one sid map: first mapping of each file, extended
 * over the file's following contiguous lines. */
static int read_map(struct vt_uft_reader *r, const char *sid)
{
	char path[PATH_MAX], *buf, *line, *last = NULL;
	struct lines l;
	int bad;

	if (map_path(path, sizeof(path), r->dir, sid))
		return -1;
	if (access(path, F_OK))
		return 0;	/* uftrace needs it, we can do without */
	buf = lines_read(&l, path, MAP_MAX_BYTES);
	if (!buf)
		return -1;
	while ((line = next_line(&l, &bad))) {
		unsigned long long start, end;
		char file[PATH_MAX];
		struct uft_map *m;

		if (bad || sscanf(line, "%llx-%llx %*s %*x %*x:%*x %*u %4095s", &start, &end,
				  file) != 3)
			continue;
		if (file[0] == '[' || end <= start)
			continue;
		if (last && !strcmp(last, file) && r->nr_maps) {
			m = &r->maps[r->nr_maps - 1];
			if (end > m->end)
				m->end = end;
			continue;
		}
		if (r->nr_maps >= MAX_MAPS) {
			vt_err_set("%s: more than %d mappings", path, MAX_MAPS);
			free(buf);
			return -1;
		}
		m = realloc(r->maps, (r->nr_maps + 1) * sizeof(*r->maps));
		if (!m) {
			free(buf);
			return vt_err_set("out of memory");
		}
		r->maps = m;
		m = &r->maps[r->nr_maps];
		m->start = start;
		m->end = end;
		m->path = strdup(file);
		if (!m->path) {
			free(buf);
			return vt_err_set("out of memory");
		}
		last = m->path;
		r->nr_maps++;
	}
	free(buf);
	return 0;
}

static int add_sym(struct vt_uft_reader *r, uint64_t addr, const char *name)
{
	if (r->nr_syms == r->cap_syms) {
		size_t cap = r->cap_syms ? r->cap_syms * 2 : 1024;
		void *p = realloc(r->syms, cap * sizeof(*r->syms));

		if (!p)
			return vt_err_set("out of memory");
		r->syms = p;
		r->cap_syms = cap;
	}
	r->syms[r->nr_syms].addr = addr;
	r->syms[r->nr_syms].size = 0;
	r->syms[r->nr_syms].name = name;
	r->nr_syms++;
	return 0;
}

/* Load DIR/basename(m->path).sym if it is that file's; symbols are made
 * absolute with the mapping's start. */
static int read_sym_file(struct vt_uft_reader *r, const struct uft_map *m)
{
	char path[PATH_MAX], name[NAME_MAX + 1], *buf, *line;
	size_t first = r->nr_syms;
	struct lines l;
	int bad;

	if (snprintf(name, sizeof(name), "%s.sym", base_name(m->path)) >= (int)sizeof(name) ||
	    path_join(path, sizeof(path), r->dir, name) || access(path, F_OK))
		return 0;
	buf = lines_read(&l, path, SYM_MAX_BYTES - r->sym_bytes);
	if (!buf)
		return -1;
	r->sym_bytes += (size_t)(l.end - buf);
	while ((line = next_line(&l, &bad))) {
		unsigned long long addr;
		char *p, type, *tab;

		if (bad)
			continue;	/* as uftrace: such a line is skipped */
		if (line[0] == '#') {
			if (!strncmp(line, "# path name: ", 13) && strcmp(line + 13, m->path)) {
				/* another file of the same name: not ours */
				r->nr_syms = first;
				free(buf);
				return 0;
			}
			continue;
		}
		errno = 0;
		addr = strtoull(line, &p, 16);
		if (errno || p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
			continue;	/* uftrace skips such lines too */
		type = p[1];
		p += 3;
		tab = strchr(p, '\t');
		if (tab)
			*tab = 0;
		if (addr > UINT64_MAX - m->start)
			continue;
		if (type == '?' || !strcmp(p, "__sym_end") || !strcmp(p, "__dynsym_end") ||
		    !strcmp(p, "__func_end")) {
			if (r->nr_syms > first) {
				struct uft_symbol *s = &r->syms[r->nr_syms - 1];

				if (addr + m->start > s->addr)
					s->size = addr + m->start - s->addr;
			}
			continue;
		}
		if (!strchr("TtwWPKDdvu", type))
			continue;
		if (add_sym(r, addr + m->start, p))
			goto bad;
	}
	{
		char **b = realloc(r->sym_bufs, (r->nr_sym_bufs + 1) * sizeof(*b));

		if (!b) {
			vt_err_set("out of memory");
			goto bad;
		}
		r->sym_bufs = b;
		b[r->nr_sym_bufs++] = buf;
	}
	return 0;
bad:
	r->nr_syms = first;
	free(buf);
	return -1;
}

static int cmp_symbol(const void *a, const void *b)
{
	const struct uft_symbol *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int load_symbols(struct vt_uft_reader *r)
{
	if (r->nr_maps)
		qsort(r->maps, r->nr_maps, sizeof(*r->maps), cmp_map);
	for (int i = 0; i < r->nr_maps; i++) {
		/* the same file at the same place in two sessions: load once */
		if (i && r->maps[i - 1].start == r->maps[i].start &&
		    !strcmp(r->maps[i - 1].path, r->maps[i].path))
			continue;
		if (read_sym_file(r, &r->maps[i]))
			return -1;
	}
	if (r->nr_syms)
		qsort(r->syms, r->nr_syms, sizeof(*r->syms), cmp_symbol);
	/* a symbol without an end marker runs to the next one */
	for (size_t i = 0; i < r->nr_syms; i++) {
		struct uft_symbol *s = &r->syms[i];

		if (i + 1 < r->nr_syms && (s->size == 0 || s->addr + s->size > s[1].addr))
			s->size = s[1].addr - s->addr;
	}
	return 0;
}

/* Every sid-*.map of the directory (when task.txt names no session). */
static int glob_maps(struct vt_uft_reader *r)
{
	struct dirent *de;
	DIR *d = opendir(r->dir);
	int n = 0;

	if (!d)
		return vt_err_errno("%s: cannot read directory", r->dir);
	while ((de = readdir(d)) && n < MAX_SESSIONS) {
		size_t len = strlen(de->d_name);
		char sid[VT_UFT_SID_LEN + 1];

		if (len != 4 + VT_UFT_SID_LEN + 4 || strncmp(de->d_name, "sid-", 4) ||
		    strcmp(de->d_name + len - 4, ".map"))
			continue;
		memcpy(sid, de->d_name + 4, VT_UFT_SID_LEN);
		sid[VT_UFT_SID_LEN] = 0;
		if (sid_ok(sid) && read_map(r, sid)) {
			closedir(d);
			return -1;
		}
		n++;
	}
	closedir(d);
	return 0;
}

struct vt_uft_reader *vt_uft_open(const char *dir)
{
	struct vt_uft_reader *r = calloc(1, sizeof(*r));
	struct sess_list sl = { 0 };
	struct stat st;
	int cap = 0, *dat = NULL, nr_dat;

	if (!r || !(r->dir = strdup(dir))) {
		free(r);
		vt_err_set("out of memory");
		return NULL;
	}
	if (stat(dir, &st)) {
		vt_err_errno("%s: cannot open trace directory", dir);
		goto bad;
	}
	if (!S_ISDIR(st.st_mode)) {
		vt_err_set("%s: not a directory", dir);
		goto bad;
	}
	if (read_info(r) || read_task_txt(r, &sl, &cap))
		goto bad;
	nr_dat = list_dat_tids(dir, &dat);
	if (nr_dat < 0)
		goto bad;
	for (int i = 0; i < nr_dat; i++)
		if (add_task(r, dat[i], dat[i], &cap)) {
			free(dat);
			goto bad;
		}
	free(dat);
	if (unique_tasks(r))
		goto bad;
	for (int i = 0; i < sl.nr; i++)
		if (read_map(r, sl.sid[i]))
			goto bad;
	if (!sl.nr && glob_maps(r))
		goto bad;
	if (load_symbols(r))
		goto bad;
	free(sl.sid);
	r->info.exename = r->exename ? r->exename : "";
	r->info.cmdline = r->cmdline ? r->cmdline : "";
	r->info.tids = r->tids;
	return r;
bad:
	free(sl.sid);
	vt_uft_close(r);
	return NULL;
}

void vt_uft_close(struct vt_uft_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nr_maps; i++)
		free(r->maps[i].path);
	for (int i = 0; i < r->nr_sym_bufs; i++)
		free(r->sym_bufs[i]);
	free(r->sym_bufs);
	free(r->maps);
	free(r->syms);
	free(r->tasks);
	free(r->tids);
	free(r->exename);
	free(r->cmdline);
	free(r->dir);
	free(r);
}

int vt_uft_nr_tasks(const struct vt_uft_reader *r)
{
	return r->nr_tasks;
}

int vt_uft_task_tid(const struct vt_uft_reader *r, int idx)
{
	return (idx >= 0 && idx < r->nr_tasks) ? r->tasks[idx].tid : -1;
}

int vt_uft_task_pid(const struct vt_uft_reader *r, int idx)
{
	return (idx >= 0 && idx < r->nr_tasks) ? r->tasks[idx].pid : -1;
}

const struct vt_uft_info *vt_uft_reader_info(const struct vt_uft_reader *r)
{
	return &r->info;
}

uint64_t vt_uft_feat_mask(const struct vt_uft_reader *r)
{
	return r->hdr.feat_mask;
}

uint64_t vt_uft_info_mask(const struct vt_uft_reader *r)
{
	return r->hdr.info_mask;
}

const char *vt_uft_reader_dir(const struct vt_uft_reader *r)
{
	return r->dir;
}

size_t vt_uft_nr_syms(const struct vt_uft_reader *r)
{
	return r->nr_syms;
}

const char *vt_uft_sym_find(const struct vt_uft_reader *r, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = r->nr_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	lo--;
	if (addr - r->syms[lo].addr >= (r->syms[lo].size ? r->syms[lo].size : 1))
		return NULL;
	if (start)
		*start = r->syms[lo].addr;
	return r->syms[lo].name;
}

const char *vt_uft_sym_name(const struct vt_uft_reader *r, uint64_t addr)
{
	const char *n = vt_uft_sym_find(r, addr, NULL);

	return n ? n : "";
}

struct vt_uft_stream *vt_uft_stream_open(struct vt_uft_reader *r, int idx)
{
	struct vt_uft_stream *s;
	char path[PATH_MAX];
	struct stat st;

	if (idx < 0 || idx >= r->nr_tasks) {
		vt_err_set("%s: no task #%d", r->dir, idx);
		return NULL;
	}
	if (vt_uft_dat_path(path, sizeof(path), r->dir, r->tasks[idx].tid))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		vt_err_set("out of memory");
		return NULL;
	}
	s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (s->fd < 0) {
		if (errno == ENOENT) {
			s->eof = 1;	/* a task that recorded nothing */
			return s;
		}
		vt_err_errno("%s: cannot open", path);
		free(s->path);
		free(s);
		return NULL;
	}
	if (fstat(s->fd, &st) || !S_ISREG(st.st_mode)) {
		vt_err_set("%s: not a regular file", path);
		vt_uft_stream_close(s);
		return NULL;
	}
	return s;
}

/* Make @want bytes available at buf[pos]; returns how many are. */
static size_t stream_fill(struct vt_uft_stream *s, size_t want)
{
	if (s->len - s->pos >= want || s->eof)
		return s->len - s->pos;
	memmove(s->buf, s->buf + s->pos, s->len - s->pos);
	s->len -= s->pos;
	s->pos = 0;
	while (s->len < want && !s->eof) {
		ssize_t n = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			vt_err_errno("%s: read error at offset %" PRIu64, s->path,
				     s->off + s->len);
			s->failed = 1;
			s->eof = 1;
			break;
		}
		if (n == 0)
			s->eof = 1;
		s->len += n;
	}
	return s->len - s->pos;
}

static void stream_skip(struct vt_uft_stream *s, size_t n)
{
	s->pos += n;
	s->off += n;
}

/* Bytes scanned per pread() while checking a zeroed tail. */
#define ZERO_SCAN_BYTES	4096

/* An all-zero record at s->off: 1 if the rest of the file is zero too
 * (space a writer preallocated: the records end here), 0 if a live writer
 * has filled the record since it was read (the buffer is refilled from
 * there), -1 if data follows (corrupt; message set). */
static int stream_zero_tail(struct vt_uft_stream *s)
{
	uint8_t buf[ZERO_SCAN_BYTES];
	struct vt_uft_record rec;
	uint64_t off = s->off;
	ssize_t n;

	for (;;) {
		n = pread(s->fd, buf, sizeof(buf), (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vt_err_errno("%s: read error at offset %" PRIu64, s->path, off);
		if (n == 0)
			return 1;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				goto data;
		off += (uint64_t)n;
	}
data:
	if (pread(s->fd, &rec, sizeof(rec), (off_t)s->off) == (ssize_t)sizeof(rec) &&
	    vt_uft_magic(rec.bits) == VT_UFT_RECORD_MAGIC) {
		/* written meanwhile: read on from the file */
		if (lseek(s->fd, (off_t)s->off, SEEK_SET) < 0)
			return vt_err_errno("%s: cannot seek", s->path);
		s->pos = s->len = 0;
		s->eof = 0;
		return 0;
	}
	return vt_err_set("%s: offset %" PRIu64 ": zeroed record followed by data (corrupt data)",
			  s->path, s->off);
}

/* The .dat's records ended cleanly at s->off: the records of its stage
 * file newer than that (a Python tracer writer killed or still running).
 * 1 with *@rec filled, 0 at the end, -1 on a corrupt stage. */
static int stream_staged(struct vt_uft_stream *s, struct vt_uft_record *rec)
{
	if (!s->stage_loaded) {
		char stage[PATH_MAX];

		s->stage_loaded = 1;
		if (!vt_pystage_path(stage, sizeof(stage), s->path) &&
		    vt_pystage_read(stage, s->off, &s->staged, &s->staged_nr) < 0) {
			s->failed = 1;
			return -1;
		}
	}
	if (s->staged_pos >= s->staged_nr)
		return 0;
	*rec = s->staged[s->staged_pos++];
	return 1;
}

size_t vt_uft_stream_staged(const struct vt_uft_stream *s)
{
	return s->staged_nr;
}

int vt_uft_stream_next(struct vt_uft_stream *s, struct vt_uft_record *rec)
{
	size_t have;

	s->payload_len = 0;
	if (unlikely(s->failed))
		return -1;
	if (unlikely(s->stage_loaded))
		return stream_staged(s, rec);
again:
	have = stream_fill(s, sizeof(*rec));
	if (unlikely(s->failed))
		return -1;
	if (have < sizeof(*rec)) {
		s->truncated = have != 0;
		return s->fd >= 0 ? stream_staged(s, rec) : 0;
	}
	memcpy(rec, s->buf + s->pos, sizeof(*rec));
	if (unlikely(vt_uft_magic(rec->bits) != VT_UFT_RECORD_MAGIC)) {
		if (rec->time == 0 && rec->bits == 0) {
			int z = stream_zero_tail(s);

			if (z > 0) {
				s->eof = 1;
				return stream_staged(s, rec);
			}
			if (z == 0)
				goto again;
			s->failed = 1;
			return -1;
		}
		s->failed = 1;
		return vt_err_set("%s: offset %" PRIu64 ": bad record magic %u (corrupt data)",
				  s->path, s->off, vt_uft_magic(rec->bits));
	}
	if (unlikely(vt_uft_more(rec->bits))) {
		uint16_t plen;
		size_t total;

		if (vt_uft_type(rec->bits) != VT_UFT_EVENT) {
			s->failed = 1;
			return vt_err_set("%s: offset %" PRIu64 ": record carries argument data "
					  "(uftrace record -a/-A), which is not supported",
					  s->path, s->off);
		}
		have = stream_fill(s, sizeof(*rec) + sizeof(plen));
		if (s->failed)
			return -1;
		if (have < sizeof(*rec) + sizeof(plen)) {
			s->truncated = 1;
			return 0;
		}
		memcpy(&plen, s->buf + s->pos + sizeof(*rec), sizeof(plen));
		if (plen > EVENT_MAX_PAYLOAD) {
			s->failed = 1;
			return vt_err_set("%s: offset %" PRIu64 ": event data of %u bytes "
					  "(limit %d): corrupt data", s->path, s->off, plen,
					  EVENT_MAX_PAYLOAD);
		}
		/* 2-byte length + data, padded to 8 bytes */
		total = (sizeof(plen) + plen + 7) & ~(size_t)7;
		have = stream_fill(s, sizeof(*rec) + total);
		if (s->failed)
			return -1;
		if (have < sizeof(*rec) + total) {
			s->truncated = 1;
			return 0;
		}
		memcpy(s->payload, s->buf + s->pos + sizeof(*rec) + sizeof(plen), plen);
		s->payload_len = plen;
		stream_skip(s, sizeof(*rec) + total);
		return 1;
	}
	stream_skip(s, sizeof(*rec));
	return 1;
}

void vt_uft_stream_close(struct vt_uft_stream *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->staged);
	free(s->path);
	free(s);
}

int vt_uft_stream_truncated(const struct vt_uft_stream *s)
{
	return s->truncated;
}

uint64_t vt_uft_stream_offset(const struct vt_uft_stream *s)
{
	return s->off;
}

const char *vt_uft_stream_path(const struct vt_uft_stream *s)
{
	return s->path;
}

const void *vt_uft_stream_payload(const struct vt_uft_stream *s, size_t *len)
{
	*len = s->payload_len;
	return s->payload_len ? s->payload : NULL;
}

/* ---------------------------------------------------------------- */
/* conversion TSC -> ns                                               */

static int copy_file(const char *src, const char *dst)
{
	char buf[COPY_BUF_BYTES];
	int in, out, ret = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return vt_err_errno("%s: cannot open", src);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, FILE_MODE);
	if (out < 0) {
		close(in);
		return vt_err_errno("%s: cannot create", dst);
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = vt_err_errno("%s: read error", src);
			break;
		}
		if (write_all(out, buf, n, dst)) {
			ret = -1;
			break;
		}
	}
	close(in);
	if (close(out) && !ret)
		ret = vt_err_errno("%s: write failed", dst);
	return ret;
}

/* Rewrite task.txt with every "timestamp=S.N" converted. */
static int convert_task_txt(const char *src, const char *dst, uint64_t hz)
{
	struct sbuf sb = { 0 };
	struct lines l;
	char *buf, *line;
	int bad;

	buf = lines_read(&l, src, TASK_MAX_BYTES);
	if (!buf)
		return -1;
	while ((line = next_line(&l, &bad))) {
		uint64_t ts;
		char *rest;

		if (bad || strlen(line) < 5 || parse_ts(line + 5, &ts, &rest)) {
			if (!line[0] && !bad)
				continue;
			free(buf);
			free(sb.buf);
			return vt_err_set("%s:%d: malformed line", src, l.lineno);
		}
		ts = vt_tsc_to_ns(ts, hz);	/* a few lines: no need for vt_tsc_ns */
		sb_printf(&sb, "%.5stimestamp=%" PRIu64 ".%09" PRIu64 "%s\n", line,
			  ts / VT_NS_PER_SEC, ts % VT_NS_PER_SEC, rest);
	}
	free(buf);
	return sb_write(&sb, dst);
}

/* Convert one .dat file; 1 if the input ended early (truncated/corrupt). */
static int convert_dat(struct vt_uft_reader *r, int idx, const char *dst, uint64_t hz,
		       char *warn, size_t warn_len)
{
	struct vt_uft_stream *s = vt_uft_stream_open(r, idx);
	struct vt_uft_record rec;
	uint8_t out[COPY_BUF_BYTES];
	size_t used = 0;
	int fd, ret, partial = 0;
	struct vt_tsc_ns conv = { 0 };

	if (!s)
		return -1;
	vt_tsc_ns_init(&conv, hz);	/* hz != 0: checked by the caller */
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, FILE_MODE);
	if (fd < 0) {
		vt_uft_stream_close(s);
		return vt_err_errno("%s: cannot create", dst);
	}
	while ((ret = vt_uft_stream_next(s, &rec)) == 1) {
		const void *pl;
		size_t plen, total = sizeof(rec);

		rec.time = vt_tsc_ns(&conv, rec.time);
		pl = vt_uft_stream_payload(s, &plen);
		if (pl)
			total += (2 + plen + 7) & ~(size_t)7;
		if (sizeof(out) - used < total) {
			if (write_all(fd, out, used, dst))
				goto fail;
			used = 0;
		}
		memcpy(out + used, &rec, sizeof(rec));
		if (pl) {
			uint16_t l16 = plen;

			memset(out + used + sizeof(rec), 0, total - sizeof(rec));
			memcpy(out + used + sizeof(rec), &l16, 2);
			memcpy(out + used + sizeof(rec) + 2, pl, plen);
		}
		used += total;
	}
	if (ret < 0) {
		snprintf(warn, warn_len, "%s", vt_err_msg());
		partial = 1;
	} else if (vt_uft_stream_truncated(s)) {
		snprintf(warn, warn_len, "%s: truncated last record at offset %" PRIu64 " dropped",
			 vt_uft_stream_path(s), vt_uft_stream_offset(s));
		partial = 1;
	}
	if (write_all(fd, out, used, dst))
		goto fail;
	vt_uft_stream_close(s);
	if (close(fd))
		return vt_err_errno("%s: write failed", dst);
	return partial;
fail:
	vt_uft_stream_close(s);
	close(fd);
	return -1;
}

int vt_uft_convert_ns(const char *in, const char *out, uint64_t tsc_hz, int force)
{
	char src[PATH_MAX], dst[PATH_MAX], rin[PATH_MAX], rout[PATH_MAX];
	char warn[1024] = "";
	struct vt_uft_reader *r = NULL;
	struct vt_meta *m;
	struct dirent *de;
	const char *clock;
	int ret = -1, partial = 0, given = tsc_hz != 0;
	DIR *d = NULL;

	rin[0] = 0;
	m = vt_meta_read_dir(in);
	if (!m) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", vt_err_msg());
		return vt_err_set("%s: no usable vmtrace.meta, cannot tell the clock (%s)", in, msg);
	}
	clock = vt_meta_get(m, "clock");
	if (!clock || strcmp(clock, "tsc")) {
		vt_err_set("%s: clock is '%s', not 'tsc': nothing to convert", in,
			   clock ? clock : "(unset)");
		goto out;
	}
	if (!tsc_hz && vt_meta_get_u64(m, "tsc.hz", &tsc_hz)) {
		double hz;

		if (vt_meta_get_double(m, "tsc.hz", &hz) || hz < 1) {
			vt_err_set("%s/%s: no valid tsc.hz (give the frequency explicitly)", in,
				   VT_META_FILE);
			goto out;
		}
		tsc_hz = (uint64_t)(hz + 0.5);
	}
	if (tsc_hz < MIN_TSC_HZ) {
		vt_err_set("TSC frequency %" PRIu64 " Hz is implausible", tsc_hz);
		goto out;
	}
	r = vt_uft_open(in);
	if (!r)
		goto out;
	/* before creating (and, with force, emptying) @out */
	if (realpath(in, rin) && realpath(out, rout) && !strcmp(rin, rout)) {
		vt_err_set("%s: input and output are the same directory", out);
		goto out;
	}
	if (vt_uft_dir_create(out, force))
		goto out;
	d = opendir(in);
	if (!d) {
		vt_err_errno("%s: cannot read directory", in);
		goto out;
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *end;
		struct stat st;

		if (path_join(src, sizeof(src), in, n) || path_join(dst, sizeof(dst), out, n))
			goto out;
		if (lstat(src, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!strcmp(n, VT_META_FILE))
			continue;
		if (!strcmp(n, "task.txt")) {
			if (convert_task_txt(src, dst, tsc_hz))
				goto out;
			continue;
		}
		if (parse_int(n, &end) > 0 && !strcmp(end, ".dat"))
			continue;	/* below, through the reader */
		if (!is_trace_file(n))
			continue;
		if (copy_file(src, dst))
			goto out;
	}
	for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
		char w[1024];
		int c;

		w[0] = 0;
		if (vt_uft_dat_path(src, sizeof(src), in, vt_uft_task_tid(r, i)) ||
		    vt_uft_dat_path(dst, sizeof(dst), out, vt_uft_task_tid(r, i)))
			goto out;
		if (access(src, F_OK))
			continue;
		c = convert_dat(r, i, dst, tsc_hz, w, sizeof(w));
		if (c < 0)
			goto out;
		if (c) {
			partial = 1;
			if (!warn[0])
				snprintf(warn, sizeof(warn), "%s", w);
		}
	}
	if (vt_meta_set(m, "clock", "ns") || vt_meta_set_u64(m, "tsc.hz", tsc_hz) ||
	    (given && vt_meta_set(m, "tsc.hz_source", "option")) ||
	    vt_meta_set(m, "convert.from", "%s", rin[0] ? rin : in) ||
	    vt_meta_write_dir(m, out))
		goto out;
	ret = 0;
	if (partial) {
		vt_err_set("%s", warn);
		ret = VT_UFT_PARTIAL;
	}
out:
	if (d)
		closedir(d);
	vt_uft_close(r);
	vt_meta_free(m);
	return ret;
}
