/*
 * uftrace_write.c - writing uftrace data directories (file version 4, as
 * uftrace 0.13 reads them; lib/uftrace.h, docs/format/uftrace.md): the
 * directory, info, task.txt, the sid maps and the .sym files.
 *
 * Called by the guest runtimes (also from a preloaded .so: no
 * constructors, no exit, errors returned) at session start/end, never per
 * event.  May allocate and block; any thread.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "elfread.h"
#include "err.h"
#include "pystage.h"
#include "tsc.h"
#include "uftrace_int.h"
#include "grow.h"

#define DIR_MODE		0755
#define SID_MIX_SEED		0x9e3779b97f4a7c15ULL
#define SID_MIX_MULT		0xff51afd7ed558ccdULL
#define SID_MIX_SHIFT		33

/* A page, for rounding mappings. */
#define PAGE_BYTES		4096ULL

/* Where the synthetic [stack] mapping goes: below the x86-64 user-space
 * top, so uftrace guesses the usual 128T:128T kernel split. */
#define SYNTH_STACK_START	0x7ffffffde000ULL
#define SYNTH_STACK_END		0x7ffffffff000ULL
#define SYNTH_STACK_LOW		0x1000ULL	/* when the image covers the above */

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
		if (!uft_is_trace_file(de->d_name) && !is_stage_file(de->d_name))
			continue;
		/* a join's failure has its message (errno is an older one's) */
		if (uft_path_join(path, sizeof(path), dir, de->d_name)) {
			closedir(d);
			return -1;
		}
		if (unlink(path)) {
			vt_err_errno("%s: cannot remove old trace file", path);
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (nonempty && !force)	/* ENOTEMPTY: callers tell a usage error from an I/O one */
		return vt_err_set_code(ENOTEMPTY, "%s: directory exists and is not empty (remove "
				       "it, or give --force to replace its trace files)", dir);
	return 0;
}
/* Append @s to @sb with control characters made spaces and quotes and
 * backslashes escaped (what uftrace's cmdline line holds). */
static void sb_put_quoted(struct uft_sbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			uft_sb_printf(sb, "\\%c", c);
		else if (c < ' ')
			uft_sb_put(sb, " ", 1);
		else
			uft_sb_put(sb, s, 1);
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
	struct uft_sbuf sb = { 0 };
	char path[PATH_MAX], desc[256], distro[256];
	const int *tids = info->tids;
	int nr_tids = info->nr_tids, *found = NULL;
	struct utsname uts;
	time_t now = time(NULL);
	char date[64];

	if (uft_path_join(path, sizeof(path), dir, "info"))
		return -1;
	if (!info->exename || !info->exename[0] || strchr(info->exename, '\n'))
		return vt_err_set("%s: bad executable name", path);
	if (nr_tids <= 0 || !tids) {
		nr_tids = uft_list_dat_tids(dir, &found);
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
	uft_sb_put(&sb, &hdr, sizeof(hdr));

	/* sections in bit order: uftrace reads them in that order */
	uft_sb_printf(&sb, "exename:%s\n", info->exename);
	if (info->exit_status >= 0)
		uft_sb_printf(&sb, "exit_status:%d\n", info->exit_status);
	uft_sb_printf(&sb, "cmdline:");
	sb_put_quoted(&sb, info->cmdline ? info->cmdline : info->exename);
	uft_sb_printf(&sb, "\n");

	read_field("/proc/cpuinfo", "model name", desc, sizeof(desc), "unknown");
	uft_sb_printf(&sb, "cpuinfo:lines=2\n");
	uft_sb_printf(&sb, "cpuinfo:nr_cpus=%ld / %ld (online/possible)\n",
		  sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF));
	uft_sb_printf(&sb, "cpuinfo:desc=%s\n", desc);

	if (uname(&uts))
		memset(&uts, 0, sizeof(uts));
	read_field("/etc/os-release", "PRETTY_NAME=", distro, sizeof(distro), "\"Unknown\"");
	uft_sb_printf(&sb, "osinfo:lines=3\n");
	uft_sb_printf(&sb, "osinfo:kernel=%s %s\n", uts.sysname, uts.release);
	uft_sb_printf(&sb, "osinfo:hostname=%s\n", uts.nodename);
	uft_sb_printf(&sb, "osinfo:distro=%s\n", distro);

	uft_sb_printf(&sb, "taskinfo:lines=2\n");
	uft_sb_printf(&sb, "taskinfo:nr_tid=%d\n", nr_tids);
	uft_sb_printf(&sb, "taskinfo:tids=");
	for (int i = 0; i < nr_tids; i++)
		uft_sb_printf(&sb, "%s%d", i ? "," : "", tids[i]);
	uft_sb_printf(&sb, "\n");
	free(found);

	if (!ctime_r(&now, date))
		snprintf(date, sizeof(date), "unknown\n");
	uft_sb_printf(&sb, "record_date:%s", date);
	uft_sb_printf(&sb, "elapsed_time:%" PRIu64 ".%09" PRIu64 " sec\n",
		  info->elapsed_ns / VT_NS_PER_SEC, info->elapsed_ns % VT_NS_PER_SEC);
	uft_sb_printf(&sb, "uftrace_version:vmtrace (uftrace data v%d)\n", VT_UFT_FILE_VERSION);
	return uft_sb_write(&sb, path);
}

/* Append one line to DIR/task.txt with a single write (O_APPEND). */
static int task_append(const char *dir, const char *line, size_t len)
{
	char path[PATH_MAX];
	int fd, ret;

	if (uft_path_join(path, sizeof(path), dir, "task.txt"))
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, FILE_MODE);
	if (fd < 0)
		return vt_err_errno("%s: cannot open", path);
	ret = uft_write_all(fd, line, len, path);
	if (close(fd) && !ret)
		ret = vt_err_errno("%s: write failed", path);
	return ret;
}

int vt_uft_task_session(const char *dir, uint64_t ts, int pid, const char *sid,
			const char *exename)
{
	char line[PATH_MAX + 128];
	int n;

	if (!uft_sid_ok(sid))
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
int vt_uft_write_map(const char *dir, const char *sid, pid_t pid)
{
	char src[64], dst[PATH_MAX];
	struct uft_sbuf sb = { 0 };

	if (uft_map_path(dst, sizeof(dst), dir, sid))
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
			uft_sb_put(&sb, chunk, n);
		}
		close(fd);
	}
	return uft_sb_write(&sb, dst);
}

int vt_uft_write_map_fixed(const char *dir, const char *sid, uint64_t start, uint64_t end,
			   const char *path)
{
	char dst[PATH_MAX];
	struct uft_sbuf sb = { 0 };

	if (uft_map_path(dst, sizeof(dst), dir, sid))
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
	uft_sb_printf(&sb, "%012" PRIx64 "-%012" PRIx64 " r-xp 00000000 00:00 0 %s\n",
		  start, end, path);
	uft_sb_printf(&sb, "%012" PRIx64 "-%012" PRIx64 " rw-p 00000000 00:00 0 [stack]\n",
		  stack, stack_end);
	return uft_sb_write(&sb, dst);
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
	struct uft_sbuf sb = { 0 };
	char path[PATH_MAX], name[NAME_MAX + 1];
	size_t kept = 0;

	if (!exename || !exename[0] || strchr(exename, '\n'))
		return vt_err_set("%s: bad executable name for a .sym file", dir);
	if (snprintf(name, sizeof(name), "%s.sym", uft_base_name(exename)) >= (int)sizeof(name) ||
	    uft_path_join(path, sizeof(path), dir, name))
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
	vt_sort(syms, kept, sizeof(*syms), cmp_sym);
	uft_sb_printf(&sb, "# symbols: %zu\n", kept);
	uft_sb_printf(&sb, "# path name: %s\n", exename);
	if (build_id && build_id[0])
		uft_sb_printf(&sb, "# build-id: %s\n", build_id);
	for (size_t i = 0, j; i < kept; i = j) {
		const struct vt_uft_sym *s = &syms[i];
		uint64_t end = s->addr + (s->size ? s->size : 1);

		/* uftrace keeps the first of several symbols at one address;
		 * the end mark looks past them all (the last symbol's too) */
		for (j = i + 1; j < kept && syms[j].addr == s->addr; j++)
			;
		uft_sb_printf(&sb, "%016" PRIx64 " %c %s\n", s->addr, s->type, s->name);
		if (j == kept || (s->size && syms[j].addr > end))
			uft_sb_printf(&sb, "%016" PRIx64 " ? %s\n", end,
				  j == kept ? "__sym_end" : "__func_end");
	}
	free(syms);
	return uft_sb_write(&sb, path);
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
		if (uft_path_join(path, sizeof(path), dir, de->d_name) || !(fp = fopen(path, "re")))
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

int vt_uft_raw_path(char *buf, size_t len, const char *dir, int tid)
{
	if (snprintf(buf, len, "%s/%d%s", dir, tid, VT_UFT_RAW_SUFFIX) >= (int)len)
		return vt_err_set("%s: path too long", dir);
	if (access(buf, F_OK) == 0)
		return 0;
	return vt_uft_dat_path(buf, len, dir, tid);
}
