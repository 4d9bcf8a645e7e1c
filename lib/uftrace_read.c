/*
 * uftrace_read.c - opening uftrace data directories (lib/uftrace.h): the
 * info file, task.txt, the sid maps and the .sym files they name, for the
 * host tools (merge, convert, info, top) and the stream reader
 * (lib/uftrace_stream.c), which reads the records.
 *
 * The input is untrusted guest data: every file is size-bounded, every
 * line checked, and corruption is reported with the file and offset.
 * Allocates and blocks; any thread.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "tsc.h"
#include "uftrace_int.h"
#include "grow.h"

#define VT_UFT_FILE_VERSION_MIN	3

/* Size limits of untrusted input. */
#define INFO_MAX_BYTES		(64ULL << 20)
#define MAP_MAX_BYTES		(16ULL << 20)
#define SYM_MAX_BYTES		(256ULL << 20)	/* all .sym files together */
#define MAX_SESSIONS		4096
#define MAX_MAPS		65536

struct uft_task {
	int tid;
	int pid;
	int order;		/* position of appearance, for unique_tasks() */
};

struct uft_map {
	uint64_t start;
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
	size_t cap_maps;
	struct uft_symbol *syms;
	size_t nr_syms, cap_syms;
	char **sym_bufs;	/* .sym file contents the names point into */
	int nr_sym_bufs;
	uint64_t sym_bytes;	/* their total size, bounded by SYM_MAX_BYTES */
};

/* A section's line: "<prefix><value>" -> value, else NULL. */
static char *info_line(struct uft_lines *l, const char *prefix, const char *path)
{
	int bad;
	char *line = uft_next_line(l, &bad);

	if (!line || bad || strncmp(line, prefix, strlen(prefix))) {
		vt_err_set("%s: offset %zu: expected a '%s' line", path,
			   (size_t)(line ? line - l->start : l->end - l->start), prefix);
		return NULL;
	}
	return line + strlen(prefix);
}

/* A "<prefix>lines=N" line then N "<prefix>..." lines, passed to @fn. */
static int info_lines(struct uft_lines *l, const char *prefix, int max, const char *path,
		      int (*fn)(struct vt_uft_reader *, char *, const char *),
		      struct vt_uft_reader *r)
{
	char *v = info_line(l, prefix, path), *end;
	int n;

	if (!v)
		return -1;
	if (strncmp(v, "lines=", 6) || (n = uft_parse_int(v + 6, &end)) < 0 || n > max)
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
		int n = uft_parse_int(v + 7, &end);

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
			int tid = uft_parse_int(v, &end);

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
	struct uft_lines l;
	size_t len;
	int ret = -1;

	if (uft_path_join(path, sizeof(path), r->dir, "info"))
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
		if (!(v = info_line(&l, "exename:", path)))
			goto out;
		if (!(r->exename = strdup(v))) {
			vt_err_set("%s: out of memory", path);
			goto out;
		}
	}
	if ((r->hdr.info_mask & VT_UFT_INFO_EXE_BUILD_ID) && !info_line(&l, "build_id:", path))
		goto out;
	if (r->hdr.info_mask & VT_UFT_INFO_EXIT_STATUS) {
		if (!(v = info_line(&l, "exit_status:", path)))
			goto out;
		r->info.exit_status = atoi(v);
	}
	if (r->hdr.info_mask & VT_UFT_INFO_CMDLINE) {
		if (!(v = info_line(&l, "cmdline:", path)))
			goto out;
		if (!(r->cmdline = strdup(v))) {
			vt_err_set("%s: out of memory", path);
			goto out;
		}
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
			n = uft_parse_int(v + 6, &end);
			if (n < 0 || n > 6) {
				vt_err_set("%s: bad argspec:lines count", path);
				goto out;
			}
			for (int i = 0; i < n; i++) {
				int bad;

				if (!uft_next_line(&l, &bad) || bad) {
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
	vt_sort(r->tasks, r->nr_tasks, sizeof(*r->tasks), cmp_task);
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

/* Read task.txt (if any): its tasks into @r, its sessions into @sl. */
static int read_task_txt(struct vt_uft_reader *r, struct sess_list *sl, int *cap)
{
	char path[PATH_MAX], *buf, *line;
	struct uft_lines l;
	int bad;

	if (uft_raw_task_path(path, sizeof(path), r->dir))
		return -1;
	if (access(path, F_OK))
		return 0;
	buf = uft_lines_read(&l, path, TASK_MAX_BYTES);
	if (!buf)
		return -1;
	while ((line = uft_next_line(&l, &bad))) {
		uint64_t ts;
		char *p;
		int a, b;

		if (bad) {
			vt_err_set("%s:%d: NUL byte in line", path, l.lineno);
			goto bad;
		}
		if (!line[0])
			continue;
		if (strlen(line) < 5 || uft_parse_ts(line + 5, &ts, &p)) {
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

/* Add the mappings of one sid map: the first mapping of each file (its
 * start places the file's symbols; the file's following contiguous lines
 * add nothing). */
static int read_map(struct vt_uft_reader *r, const char *sid)
{
	char path[PATH_MAX], *buf, *line, *last = NULL;
	struct uft_lines l;
	int bad;

	if (uft_map_path(path, sizeof(path), r->dir, sid))
		return -1;
	if (access(path, F_OK))
		return 0;	/* uftrace needs it, we can do without */
	buf = uft_lines_read(&l, path, MAP_MAX_BYTES);
	if (!buf)
		return -1;
	while ((line = uft_next_line(&l, &bad))) {
		unsigned long long start, end;
		char file[PATH_MAX];
		struct uft_map *m;

		if (bad || sscanf(line, "%llx-%llx %*s %*x %*x:%*x %*u %4095s", &start, &end,
				  file) != 3)
			continue;
		if (file[0] == '[' || end <= start)
			continue;
		if (last && !strcmp(last, file))	/* last: this map's newest */
			continue;
		if (r->nr_maps >= MAX_MAPS) {
			vt_err_set("%s: more than %d mappings", path, MAX_MAPS);
			free(buf);
			return -1;
		}
		if (vt_grow(&r->maps, &r->cap_maps, (size_t)r->nr_maps + 1, sizeof(*r->maps), 16)) {
			free(buf);
			return vt_err_set("out of memory");
		}
		m = &r->maps[r->nr_maps];
		m->start = start;
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
 * absolute with the mapping's start.  Lines are "ADDR TYPE NAME" (uftrace
 * 0.13, Debian 12) or "ADDR SIZE TYPE NAME" (0.14 on, e.g. 0.17 on Debian
 * 13: the size in hex, "%08x"); TYPE is one character either way. */
static int read_sym_file(struct vt_uft_reader *r, const struct uft_map *m)
{
	char path[PATH_MAX], name[NAME_MAX + 1], *buf, *line;
	size_t first = r->nr_syms;
	struct uft_lines l;
	int bad;

	if (snprintf(name, sizeof(name), "%s.sym", uft_base_name(m->path)) >= (int)sizeof(name) ||
	    uft_path_join(path, sizeof(path), r->dir, name) || access(path, F_OK))
		return 0;
	buf = uft_lines_read(&l, path, SYM_MAX_BYTES - r->sym_bytes);
	if (!buf)
		return -1;
	r->sym_bytes += (size_t)(l.end - buf);
	while ((line = uft_next_line(&l, &bad))) {
		unsigned long long addr, size = 0;
		char *p, *q, type, *tab;

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
		if (errno || p == line || p[0] != ' ' || !p[1])
			continue;	/* uftrace skips such lines too */
		if (p[2] != ' ') {	/* a SIZE column (a TYPE is one character) */
			size = strtoull(p + 1, &q, 16);
			if (errno || q == p + 1 || q[0] != ' ' || !q[1])
				continue;
			p = q;
		}
		if (p[2] != ' ')
			continue;
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
		r->syms[r->nr_syms - 1].size = size;
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
		vt_sort(r->maps, r->nr_maps, sizeof(*r->maps), cmp_map);
	for (int i = 0; i < r->nr_maps; i++) {
		/* the same file at the same place in two sessions: load once */
		if (i && r->maps[i - 1].start == r->maps[i].start &&
		    !strcmp(r->maps[i - 1].path, r->maps[i].path))
			continue;
		if (read_sym_file(r, &r->maps[i]))
			return -1;
	}
	if (r->nr_syms)
		vt_sort(r->syms, r->nr_syms, sizeof(*r->syms), cmp_symbol);
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
		if (uft_sid_ok(sid) && read_map(r, sid)) {
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
	nr_dat = uft_list_dat_tids(dir, &dat);
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
