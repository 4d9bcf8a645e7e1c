/*
 * sink.c - what merge's sinks share: the
 * buffered output file (one large
 * buffer, emptied with write(2) through lib/fileio.h), the allocation and
 * release of a file sink around it, zero-filled growable tables (flags by
 * string id or track index) and small id sets.  Runs on the merge thread;
 * allocates at open and when a table grows (per new name or track, never
 * per event).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "grow.h"
#include "merge.h"

#define OUT_BUF_SIZE	(1u << 20)	/* sink output buffer */
#define IDSET_INIT_CAP	64		/* ids of a new id set */

int merge_name_in(const char *s, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

int merge_out_open(struct merge_out *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0)
		return vt_err_errno("%s: cannot create", path);
	o->cap = OUT_BUF_SIZE;
	o->buf = vt_io_alloc(o->cap);
	if (!o->buf) {
		close(o->fd);
		o->fd = -1;
		return vt_err_set("%s: out of memory", path);
	}
	return 0;
}

int merge_out_flush(struct merge_out *o)
{
	if (unlikely(o->failed))
		return -1;
	if (unlikely(vt_file_write_all(o->fd, o->buf, o->len) < 0)) {
		o->failed = 1;
		return vt_err_errno("%s: write failed", o->path);
	}
	o->len = 0;
	return 0;
}

int merge_out_close(struct merge_out *o)
{
	int ret = merge_out_flush(o);

	if (o->fd >= 0 && close(o->fd) < 0 && ret == 0)
		ret = vt_err_errno("%s: close failed", o->path);
	free(o->buf);
	o->buf = NULL;
	o->fd = -1;
	return ret;
}

void *merge_file_sink_open(size_t size, const char *path)
{
	struct merge_out *o = calloc(1, size);

	if (!o) {
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	if (merge_out_open(o, path) < 0) {
		free(o);
		return NULL;
	}
	return o;
}

int merge_file_sink_close(void *sink)
{
	int ret = merge_out_close(sink);

	free(sink);
	return ret;
}

int merge_table_grow(void *table, uint32_t *cap, uint32_t need, size_t elem_size)
{
	size_t c = *cap;

	if (need <= *cap)
		return 0;
	/* below 2^31 entries, the doubled capacity fits the uint32_t */
	if (need > UINT32_MAX / 2 || vt_grow(table, &c, need, elem_size, MERGE_TABLE_MIN))
		return -1;
	*cap = (uint32_t)c;
	return 0;
}

int merge_idset_add(struct merge_idset *set, uint64_t id)
{
	uint32_t i;

	for (i = 0; i < set->nr && set->ids[i] != id; i++)
		;
	if (i < set->nr)
		return 0;
	if (set->nr == set->cap) {
		uint32_t nc = set->cap ? 2 * set->cap : IDSET_INIT_CAP;
		uint64_t *np = realloc(set->ids, nc * sizeof(*np));

		if (!np)
			return -1;
		set->ids = np;
		set->cap = nc;
	}
	set->ids[set->nr++] = id;
	return 1;
}

void merge_idset_free(struct merge_idset *set)
{
	free(set->ids);
	set->ids = NULL;
	set->nr = set->cap = 0;
}
