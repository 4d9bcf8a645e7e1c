/*
 * uftrace_util.c - the helpers the files of the uftrace module share
 * (lib/uftrace_int.h): paths, a text buffer for files written in one go,
 * a line iterator and number parsers for the untrusted text files, and
 * the names of a data directory's files.  Used only by lib/uftrace_*.c;
 * allocates, any thread.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "meta.h"
#include "tsc.h"
#include "uftrace_int.h"
#include "grow.h"

int uft_path_join(char *buf, size_t len, const char *dir, const char *name)
{
	if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len)
		return vt_err_set("%s/%s: path too long", dir, name);
	return 0;
}

const char *uft_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Write all of @buf to @fd; the message names @path. */
int uft_write_all(int fd, const void *buf, size_t len, const char *path)
{
	if (vt_file_write_all(fd, buf, len))
		return vt_err_errno("%s: write failed", path);
	return 0;
}

void uft_sb_printf(struct uft_sbuf *sb, const char *fmt, ...)
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

void uft_sb_put(struct uft_sbuf *sb, const void *data, size_t len)
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

int uft_sb_write(struct uft_sbuf *sb, const char *path)
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

char *uft_next_line(struct uft_lines *l, int *bad)
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
char *uft_lines_read(struct uft_lines *l, const char *path, uint64_t max)
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
int uft_parse_int(const char *s, char **end)
{
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, end, 10);	/* it starts with a digit: not negative */
	if (errno || v > INT_MAX)
		return -1;
	return v;
}

/* Names of files that make up a trace: see uftrace_int.h. */
int uft_is_trace_file(const char *n)
{
	size_t len = strlen(n);
	static const char *const names[] = {
		"info", "task", "task.txt", "default.opts", "kallsyms", "events.txt",
		"extern.dat", VT_META_FILE, VT_UFT_RAW_TASK,
	};

	for (size_t i = 0; i < VT_ARRAY_SIZE(names); i++)
		if (!strcmp(n, names[i]))
			return 1;
	if (len > 4 && (!strcmp(n + len - 4, ".dat") || !strcmp(n + len - 4, ".sym") ||
			!strcmp(n + len - 4, VT_UFT_RAW_SUFFIX)))
		return 1;
	if (len > 8 && !strncmp(n, "sid-", 4) && !strcmp(n + len - 4, ".map"))
		return 1;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The tids of the non-empty [0-9]+.dat (and a finished directory's
 * [0-9]+.tsc) files of @dir, sorted, each once; -1 on error. */
int uft_list_dat_tids(const char *dir, int **out)
{
	struct dirent *de;
	int *tids = NULL, nr = 0, cap = 0, j = 0;
	DIR *d = opendir(dir);

	*out = NULL;
	if (!d)
		return vt_err_errno("%s: cannot read directory", dir);
	while ((de = readdir(d))) {
		char path[PATH_MAX], *end;
		struct stat st;
		int tid = uft_parse_int(de->d_name, &end);

		if (tid <= 0 || (strcmp(end, ".dat") && strcmp(end, VT_UFT_RAW_SUFFIX)))
			continue;
		if (uft_path_join(path, sizeof(path), dir, de->d_name) || stat(path, &st) ||
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
		vt_sort(tids, nr, sizeof(*tids), cmp_int);
	for (int i = 0; i < nr; i++)	/* <TID>.dat beside <TID>.tsc: once */
		if (!j || tids[j - 1] != tids[i])
			tids[j++] = tids[i];
	*out = tids;
	nr = j;
	return nr;
}

int uft_raw_task_path(char *buf, size_t len, const char *dir)
{
	if (uft_path_join(buf, len, dir, VT_UFT_RAW_TASK))
		return -1;
	if (access(buf, F_OK) == 0)
		return 0;
	return uft_path_join(buf, len, dir, "task.txt");
}

int uft_sid_ok(const char *sid)
{
	if (!sid || strlen(sid) != VT_UFT_SID_LEN)
		return 0;
	for (; *sid; sid++)
		if (!isalnum((unsigned char)*sid))
			return 0;
	return 1;
}

int uft_map_path(char *buf, size_t len, const char *dir, const char *sid)
{
	char name[64];

	if (!uft_sid_ok(sid))
		return vt_err_set("%s: session id '%.32s' is not %d letters/digits", dir,
				  sid ? sid : "", VT_UFT_SID_LEN);
	snprintf(name, sizeof(name), "sid-%s.map", sid);
	return uft_path_join(buf, len, dir, name);
}

/* Parse "timestamp=S.N" at @s; -1 if malformed. */
int uft_parse_ts(const char *s, uint64_t *ts, char **end)
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
