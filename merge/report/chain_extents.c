/*
 * chain_extents.c - QEMU's bios on an image file mapped back to the
 * file's offsets with the extents the host recording read (extents.tsv,
 * lib/extents.h; docs/report.md, "QEMU's bios").
 *
 * The start and end readings are merged: an extent in either counts (a
 * block allocated during the run is in the end reading, one freed in the
 * start one); where the two put different file bytes on the same disk
 * bytes (the file moved: a defragmenter, a copy-on-write file system, a
 * block freed and given to another file) neither holds there and a bio in
 * it stays a guess.  Extents whose disk bytes are not the data
 * (unwritten, delayed allocation, encoded, inline, not aligned) map
 * nothing either.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "extents.h"
#include "chain_int.h"
#include "report.h"
#include "grow.h"

static int ext_cmp(const void *a, const void *b)
{
	const struct extmap *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->pstart != y->pstart)
		return x->pstart < y->pstart ? -1 : 1;
	return x->bad - y->bad;
}

/* the same file bytes on the same disk bytes */
static int ext_same(const struct extmap *a, const struct extmap *b)
{
	return a->ino == b->ino && a->fd == b->fd &&
	       a->logical - a->pstart == b->logical - b->pstart;
}

/* an extent line for load_aliases: its file (process, inode, device),
 * its place in extents.tsv and its fd */
struct filerow { int32_t pid, fd; uint32_t st_dev, idx; uint64_t ino; };

static int file_cmp(const struct filerow *x, const struct filerow *y)
{
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->st_dev != y->st_dev)
		return x->st_dev < y->st_dev ? -1 : 1;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct filerow *x = a, *y = b;
	int c = file_cmp(x, y);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int alias_cmp(const void *a, const void *b)
{
	const struct fdalias *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* r->fdalias from the fd lines of @e[0..n): each names the fd of the
 * first extent line of its file (none: no alias); the whole table sorted
 * by (pid, fd, order of loading) for chain_extents_canon.  Sorted, not
 * scanned: extents.tsv is input, many lines must not make this quadratic.
 * 0, or -1 (out of memory). */
static int load_aliases(struct report *r, const struct vt_extent *e, size_t n)
{
	struct filerow *rows;
	size_t nr = 0, i;

	for (i = 0; i < n && !e[i].alias; i++)
		;
	if (i == n)
		return 0;
	rows = malloc(n * sizeof(*rows));
	if (!rows)
		return vt_err_set("report: out of memory");
	for (i = 0; i < n; i++)
		if (!e[i].alias)
			rows[nr++] = (struct filerow){ .pid = e[i].pid, .fd = e[i].fd,
						       .st_dev = e[i].st_dev, .idx = (uint32_t)i,
						       .ino = e[i].ino };
	vt_sort(rows, nr, sizeof(*rows), row_cmp);
	for (i = 0; i < n; i++) {
		struct filerow me = { .pid = e[i].pid, .st_dev = e[i].st_dev, .ino = e[i].ino };
		size_t lo = 0, hi = nr;

		if (!e[i].alias)
			continue;
		while (lo < hi) {	/* the first extent line of its file */
			size_t mid = (lo + hi) / 2;

			if (file_cmp(&rows[mid], &me) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nr || file_cmp(&rows[lo], &me) || rows[lo].fd == e[i].fd)
			continue;
		struct fdalias *a = CHAIN_VEC_PUSH(r, r->fdalias);

		if (!a) {
			free(rows);
			return vt_err_set("report: out of memory");
		}
		a->pid = e[i].pid;
		a->fd = e[i].fd;
		a->canon = rows[lo].fd;
		a->seq = (uint32_t)(r->fdalias.n - 1);
	}
	free(rows);
	/* with the input directories loaded before: seq keeps their order */
	vt_sort(r->fdalias.a, r->fdalias.n, sizeof(*r->fdalias.a), alias_cmp);
	return 0;
}

int chain_extents_load(struct report *r, const char *dir)
{
	char path[4096];
	struct vt_extent *e;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, VT_EXTENTS_FILE);
	if (vt_extents_read(path, &e, &n))
		return -1;
	/* each extent on the whole disk (the block events' dev since 5.12,
	 * the sector the disk's) and, for a partition, on it too with the
	 * partition's own sectors (older kernels' events) */
	for (size_t k = 0; k < 2 * n; k++) {
		size_t i = k / 2;
		struct extmap *m;

		if (!e[i].length || (k % 2 && e[i].st_dev == e[i].dev))
			continue;
		m = CHAIN_VEC_PUSH(r, r->ext);
		if (!m) {
			free(e);
			return vt_err_set("report: out of memory");
		}
		m->dev = k % 2 ? e[i].st_dev : e[i].dev;
		m->pstart = (k % 2 ? 0 : e[i].start) + e[i].physical;
		m->pend = m->pstart + e[i].length;
		m->logical = e[i].logical;
		m->ino = e[i].ino;
		m->fd = e[i].fd;
		/* not where the data is, or not a 512-byte multiple */
		m->bad = (e[i].flags & VT_EXTENT_UNMAPPABLE) || (m->pstart | e[i].length) % 512 ||
			 e[i].logical % 512;
	}
	/* fd lines: the file's other fds, named as its extents' fd */
	if (load_aliases(r, e, n)) {
		free(e);
		return -1;
	}
	free(e);
	if (!r->ext.n)
		return 0;
	/* sort; of overlapping extents, the same mapping merges (written
	 * wins over unwritten), a different one marks both bad */
	vt_sort(r->ext.a, r->ext.n, sizeof(*r->ext.a), ext_cmp);
	size_t w = 0;

	for (size_t i = 0; i < r->ext.n; i++) {
		struct extmap *c = &r->ext.a[i], *p = w ? &r->ext.a[w - 1] : NULL;

		if (p && p->dev == c->dev && c->pstart < p->pend) {
			if (ext_same(p, c)) {
				if (p->bad != c->bad) {
					/* written in one reading: the data is there */
					p->bad = 0;
				}
				if (c->pend > p->pend)
					p->pend = c->pend;
			} else {
				p->bad = c->bad = 2;	/* changed during the run */
				if (c->pend > p->pend)
					p->pend = c->pend;
			}
			continue;
		}
		/* adjacent, contiguous in the file too: one extent */
		if (p && p->dev == c->dev && c->pstart == p->pend && ext_same(p, c) &&
		    p->bad == c->bad) {
			p->pend = c->pend;
			continue;
		}
		r->ext.a[w++] = *c;
	}
	r->ext.n = w;
	return 0;
}

int chain_extents_map(struct report *r, uint32_t dev, uint64_t byte, uint64_t len,
		      int64_t *fd, uint64_t *off)
{
	size_t lo = 0, hi = r->ext.n;

	/* the last extent starting at or before @byte on @dev */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct extmap *m = &r->ext.a[mid];

		if (m->dev < dev || (m->dev == dev && m->pstart <= byte))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* not an image file's disk: no extent of @dev on either side */
	if (!(lo && r->ext.a[lo - 1].dev == dev) && !(lo < r->ext.n && r->ext.a[lo].dev == dev))
		return 0;
	if (lo) {
		const struct extmap *m = &r->ext.a[lo - 1];

		if (m->dev == dev && byte < m->pend) {
			if (m->bad || byte + len > m->pend) {
				r->bio_ext[1]++;
				return 0;
			}
			*fd = m->fd;
			*off = m->logical + (byte - m->pstart);
			r->bio_ext[0]++;
			return 1;
		}
	}
	r->bio_ext[2]++;
	return 0;
}

int chain_extents_fd(const struct report *r, int64_t fd)
{
	for (size_t i = 0; i < r->ext.n; i++)
		if (r->ext.a[i].fd == fd)
			return 1;
	return 0;
}

int64_t chain_extents_canon(const struct report *r, int32_t pid, int64_t fd)
{
	size_t lo = 0, hi = r->fdalias.n;

	while (lo < hi) {	/* sorted by (pid, fd), the first loaded first */
		size_t mid = (lo + hi) / 2;
		const struct fdalias *a = &r->fdalias.a[mid];

		if (a->pid < pid || (a->pid == pid && a->fd < fd))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->fdalias.n && r->fdalias.a[lo].pid == pid && r->fdalias.a[lo].fd == fd)
		return r->fdalias.a[lo].canon;
	return fd;
}

int report_load_extents(struct report *r, const struct report_opts *o)
{
	for (int i = 0; i < o->ninputs; i++)
		if (chain_extents_load(r, o->inputs[i]))
			return -1;
	return 0;
}

const uint64_t *report_bio_extents(const struct report *r)
{
	return r->bio_ext;
}
