/*
 * extents.c - extents.tsv reader and writer (lib/extents.h,
 * docs/format/extents.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "extents.h"

int vt_extents_write_header(FILE *fp)
{
	return fprintf(fp, "%s\n# when\tpid\tfd\tino\tst_dev\tdev\tstart\tlogical\tphysical\t"
		       "length\tflags\n", VT_EXTENTS_MAGIC) < 0 ? -1 : 0;
}

int vt_extents_write(FILE *fp, const struct vt_extent *e)
{
	return fprintf(fp, "%s\t%d\t%d\t%" PRIu64 "\t%u:%u\t%u:%u\t%" PRIu64 "\t%" PRIu64
		       "\t%" PRIu64 "\t%" PRIu64 "\t0x%x\n",
		       e->alias ? "fd" : e->end ? "end" : "start",
		       (int)e->pid, (int)e->fd, e->ino, e->st_dev >> 20, e->st_dev & 0xfffff,
		       e->dev >> 20, e->dev & 0xfffff, e->start, e->logical, e->physical,
		       e->length, e->flags) < 0 ? -1 : 0;
}

static int parse_dev(const char *s, uint32_t *out)
{
	unsigned ma, mi;
	int n = 0;

	if (sscanf(s, "%u:%u%n", &ma, &mi, &n) != 2 || s[n] || ma > 0xfff || mi > 0xfffff)
		return -1;
	*out = vt_kdev(ma, mi);
	return 0;
}

static int parse_line(char *line, struct vt_extent *e)
{
	char *f[11], *save = NULL, *end;
	int nf = 0;

	for (char *t = strtok_r(line, "\t", &save); t; t = strtok_r(NULL, "\t", &save)) {
		if (nf == 11)
			return -1;
		f[nf++] = t;
	}
	if (nf != 11)
		return -1;
	memset(e, 0, sizeof(*e));
	if (!strcmp(f[0], "end"))
		e->end = 1;
	else if (!strcmp(f[0], "fd"))
		e->alias = 1;
	else if (strcmp(f[0], "start"))
		return -1;
	uint64_t v[8];
	int idx[8] = { 1, 2, 3, 6, 7, 8, 9, 10 };

	for (int i = 0; i < 8; i++) {
		errno = 0;
		v[i] = strtoull(f[idx[i]], &end, 0);
		if (errno || end == f[idx[i]] || *end || f[idx[i]][0] == '-')
			return -1;
	}
	if (v[0] > INT32_MAX || v[1] > INT32_MAX || v[7] > UINT32_MAX ||
	    parse_dev(f[4], &e->st_dev) || parse_dev(f[5], &e->dev) ||
	    v[4] + v[6] < v[4] || v[5] + v[6] < v[5])
		return -1;
	e->pid = (int32_t)v[0];
	e->fd = (int32_t)v[1];
	e->ino = v[2];
	e->start = v[3];
	e->logical = v[4];
	e->physical = v[5];
	e->length = v[6];
	e->flags = (uint32_t)v[7];
	/* an fd line names a descriptor, no extent */
	return e->alias && (e->logical || e->physical || e->length || e->flags) ? -1 : 0;
}

int vt_extents_read(const char *path, struct vt_extent **out, size_t *n)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, nc = 0, lineno = 0;
	ssize_t len;
	struct vt_extent *a = NULL;
	int ret = 0;

	*out = NULL;
	*n = 0;
	if (!fp)
		return errno == ENOENT || errno == ENOTDIR ? 0 : vt_err_errno("%s: cannot open", path);
	while ((len = getline(&line, &cap, fp)) >= 0) {
		lineno++;
		if (line[len - 1] == '\n')	/* getline read at least 1 byte */
			line[--len] = 0;
		if (lineno == 1 && strcmp(line, VT_EXTENTS_MAGIC)) {
			ret = vt_err_set("%s: not a vmtrace extents file (no '%s' line)", path,
					 VT_EXTENTS_MAGIC);
			break;
		}
		if (line[0] == '#' || !line[0])
			continue;
		if (nc == *n) {
			size_t c2 = nc ? nc * 2 : 64;
			struct vt_extent *b = realloc(a, c2 * sizeof(*a));

			if (!b) {
				ret = vt_err_set("%s: out of memory", path);
				break;
			}
			a = b;
			nc = c2;
		}
		if (parse_line(line, &a[*n])) {
			ret = vt_err_set("%s:%zu: bad extent line", path, lineno);
			break;
		}
		(*n)++;
	}
	free(line);
	fclose(fp);
	if (ret) {
		free(a);
		*n = 0;
		return -1;
	}
	*out = a;
	return 0;
}
