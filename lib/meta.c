/*
 * meta.c - reader and writer of vmtrace.meta (see meta.h for the format).
 * Used by tools on both sides; allocates, so never on a tracing hot path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "cli.h"
#include "fileio.h"
#include "meta.h"
#include "utf8.h"

#define VT_META_HEADER	"# vmtrace-meta 1"
#define META_FILE_MODE	0644
#define VT_META_MAX_ENTRIES 65536

struct vt_meta_ent {
	char *key;
	char *val;
};

struct vt_meta {
	struct vt_meta_ent *ent;
	int nr;
	int cap;
};

struct vt_meta *vt_meta_new(void)
{
	return calloc(1, sizeof(struct vt_meta));
}

void vt_meta_free(struct vt_meta *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nr; i++) {
		free(m->ent[i].key);
		free(m->ent[i].val);
	}
	free(m->ent);
	free(m);
}

static int key_ok(const char *k)
{
	size_t n = strlen(k);

	if (n == 0 || n >= VT_META_KEY_MAX)
		return 0;
	for (; *k; k++) {
		char c = *k;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* The escaped form of @v into @out (room for 2 * strlen(v) + 1): a
 * backslash, newline and carriage return become \\, \n, \r, so any value
 * fits on its line.  Returns the end of what was written. */
static char *escape(char *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '\n' || *v == '\r') {
			*out++ = '\\';
			*out++ = *v == '\n' ? 'n' : *v == '\r' ? 'r' : '\\';
		} else {
			*out++ = *v;
		}
	}
	*out = 0;
	return out;
}

void vt_meta_print_line(FILE *fp, const char *key, const char *val)
{
	fprintf(fp, "%s=", key);
	for (; *val; val++) {
		if (*val == '\\' || *val == '\n' || *val == '\r') {
			fputc('\\', fp);
			fputc(*val == '\n' ? 'n' : *val == '\r' ? 'r' : '\\', fp);
		} else {
			fputc(*val, fp);
		}
	}
	fputc('\n', fp);
}

/* Undo escape() in place; a backslash before anything else stays as it
 * is (files written before values were escaped). */
static void unescape(char *v)
{
	char *o = v;

	for (; *v; v++) {
		if (*v == '\\' && (v[1] == 'n' || v[1] == 'r' || v[1] == '\\')) {
			v++;
			*o++ = *v == 'n' ? '\n' : *v == 'r' ? '\r' : '\\';
		} else {
			*o++ = *v;
		}
	}
	*o = 0;
}

static int find(const struct vt_meta *m, const char *key)
{
	for (int i = 0; i < m->nr; i++)
		if (!strcmp(m->ent[i].key, key))
			return i;
	return -1;
}

static int put(struct vt_meta *m, const char *key, const char *val)
{
	int i = find(m, key);
	char *v;

	if (!key_ok(key))
		return vt_err_set("bad metadata key '%.40s'", key);
	size_t n = strlen(val);

	if (n >= VT_META_VAL_MAX) {
		/* any value is carried, a huge one (a whole script given with
		 * -c) cut on a character boundary with a mark */
		vt_warn("metadata value for '%s' is %zu bytes: kept its first %d", key, n,
			VT_META_VAL_MAX - 4);
		n = vt_utf8_cut(val, n, VT_META_VAL_MAX - 4);
	}
	v = malloc(n + 4);
	if (!v)
		return vt_err_set("out of memory");
	memcpy(v, val, n);
	strcpy(v + n, n < strlen(val) ? "..." : "");
	if (i >= 0) {
		free(m->ent[i].val);
		m->ent[i].val = v;
		return 0;
	}
	if (m->nr >= VT_META_MAX_ENTRIES) {
		free(v);
		return vt_err_set("too many metadata entries (max %d)", VT_META_MAX_ENTRIES);
	}
	if (m->nr == m->cap) {
		int cap = m->cap ? m->cap * 2 : 32;
		void *p = realloc(m->ent, cap * sizeof(*m->ent));
		if (!p) {
			free(v);
			return vt_err_set("out of memory");
		}
		m->ent = p;
		m->cap = cap;
	}
	m->ent[m->nr].key = strdup(key);
	if (!m->ent[m->nr].key) {
		free(v);
		return vt_err_set("out of memory");
	}
	m->ent[m->nr].val = v;
	m->nr++;
	return 0;
}

int vt_meta_set(struct vt_meta *m, const char *key, const char *fmt, ...)
{
	char *buf;
	va_list ap;
	int n, ret;

	va_start(ap, fmt);
	n = vasprintf(&buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return vt_err_set("metadata value for '%s': out of memory", key);
	ret = put(m, key, buf);
	free(buf);
	return ret;
}

int vt_meta_set_u64(struct vt_meta *m, const char *key, uint64_t v)
{
	return vt_meta_set(m, key, "%" PRIu64, v);
}

void vt_meta_del(struct vt_meta *m, const char *key)
{
	int i = find(m, key);

	if (i < 0)
		return;
	free(m->ent[i].key);
	free(m->ent[i].val);
	memmove(&m->ent[i], &m->ent[i + 1], (m->nr - i - 1) * sizeof(*m->ent));
	m->nr--;
}

const char *vt_meta_get(const struct vt_meta *m, const char *key)
{
	int i = find(m, key);

	return i < 0 ? NULL : m->ent[i].val;
}

int vt_meta_get_u64(const struct vt_meta *m, const char *key, uint64_t *out)
{
	return vt_parse_u64(vt_meta_get(m, key), 0, UINT64_MAX, out);
}

int vt_meta_get_i64(const struct vt_meta *m, const char *key, int64_t *out)
{
	return vt_parse_i64(vt_meta_get(m, key), out);
}

int vt_meta_get_double(const struct vt_meta *m, const char *key, double *out)
{
	const char *v = vt_meta_get(m, key);
	char *end;

	if (!v || !*v)
		return -1;
	errno = 0;
	*out = strtod(v, &end);
	return (errno || *end) ? -1 : 0;
}

int vt_meta_count(const struct vt_meta *m)
{
	return m->nr;
}

const char *vt_meta_key(const struct vt_meta *m, int i)
{
	return (i >= 0 && i < m->nr) ? m->ent[i].key : NULL;
}

const char *vt_meta_val(const struct vt_meta *m, int i)
{
	return (i >= 0 && i < m->nr) ? m->ent[i].val : NULL;
}

int vt_meta_write(const struct vt_meta *m, const char *path)
{
	size_t len = sizeof(VT_META_HEADER);	/* header + its newline */
	char *buf, *p;
	int ret;

	for (int i = 0; i < m->nr; i++)
		len += strlen(m->ent[i].key) + 2 * strlen(m->ent[i].val) + 2;
	buf = malloc(len + 1);
	if (!buf)
		return vt_err_set("%s: out of memory", path);
	p = buf + sprintf(buf, "%s\n", VT_META_HEADER);
	for (int i = 0; i < m->nr; i++) {
		p += sprintf(p, "%s=", m->ent[i].key);
		p = escape(p, m->ent[i].val);
		*p++ = '\n';
	}
	ret = vt_file_write_atomic(path, buf, (size_t)(p - buf), META_FILE_MODE,
				   VT_FILE_FSYNC);
	free(buf);
	return ret;
}

int vt_meta_write_dir(const struct vt_meta *m, const char *dir)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, VT_META_FILE) >= (int)sizeof(path))
		return vt_err_set("%s: path too long", dir);
	return vt_meta_write(m, path);
}

struct vt_meta *vt_meta_read(const char *path)
{
	/* a line holds a key and an escaped value (twice its bytes at most) */
	const size_t line_size = VT_META_KEY_MAX + 2 * VT_META_VAL_MAX + 8;
	char *line;
	struct vt_meta *m;
	int lineno = 0;
	long at = 0;	/* the file offset of the line, -1 unknown */
	FILE *fp;

	fp = fopen(path, "re");
	if (!fp) {
		vt_err_errno("%s: cannot open", path);
		return NULL;
	}
	m = vt_meta_new();
	line = malloc(line_size);
	if (!m || !line) {
		fclose(fp);
		free(line);
		vt_meta_free(m);
		vt_err_set("out of memory");
		return NULL;
	}
	while (fgets(line, (int)line_size, fp)) {
		size_t n = strlen(line);
		long end = ftell(fp);
		char *eq;

		lineno++;
		/* fgets read end - at bytes: a line shorter holds a NUL byte;
		 * without offsets (a pipe) a line that stops short of the
		 * buffer's end with no newline before the file's end does */
		if (at >= 0 && end >= 0 && (size_t)(end - at) != n) {
			vt_err_set("%s:%d: NUL byte in line", path, lineno);
			goto bad;
		}
		at = end;
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		else if (!feof(fp) && n + 1 < line_size) {	/* a pipe's (no offsets) */
			vt_err_set("%s:%d: NUL byte in line", path, lineno);
			goto bad;
		} else if (!feof(fp)) {
			vt_err_set("%s:%d: line too long", path, lineno);
			goto bad;
		}
		if (lineno == 1 && strcmp(line, VT_META_HEADER)) {
			vt_err_set("%s: not a vmtrace metadata file (first line is not '%s')",
				   path, VT_META_HEADER);
			goto bad;
		}
		if (!line[0] || line[0] == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			vt_err_set("%s:%d: expected key=value", path, lineno);
			goto bad;
		}
		*eq = 0;
		unescape(eq + 1);
		if (strlen(eq + 1) >= VT_META_VAL_MAX) {
			vt_err_set("%s:%d: value of '%s' longer than %d bytes", path, lineno,
				   line, VT_META_VAL_MAX - 1);
			goto bad;
		}
		if (find(m, line) >= 0) {
			vt_err_set("%s:%d: duplicate key '%s'", path, lineno, line);
			goto bad;
		}
		if (put(m, line, eq + 1)) {
			vt_err_wrap("%s:%d: %s", path, lineno, vt_err_msg());
			goto bad;
		}
	}
	if (ferror(fp)) {
		vt_err_errno("%s: read error", path);
		goto bad;
	}
	if (lineno == 0) {
		vt_err_set("%s: empty metadata file", path);
		goto bad;
	}
	fclose(fp);
	free(line);
	return m;
bad:
	fclose(fp);
	free(line);
	vt_meta_free(m);
	return NULL;
}

struct vt_meta *vt_meta_read_dir(const char *dir)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, VT_META_FILE) >= (int)sizeof(path)) {
		vt_err_set("%s: path too long", dir);
		return NULL;
	}
	return vt_meta_read(path);
}
