/*
 * marker.c - markers.dat writer and reader (format in marker.h and
 * docs/format/markers.md).  Tools only: the writer runs in `vmtrace marker`
 * inside a guest (blocking writes, allowed to allocate), the reader in the
 * host-side aligner, where markers.dat is untrusted input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "marker.h"

#define MARKER_PATH_MAX	4096

struct vt_marker_writer {
	int fd;
	char path[MARKER_PATH_MAX];
};

int vt_marker_decode(const uint8_t buf[VT_MARKER_REC_SIZE], struct vt_marker *rec)
{
	uint32_t magic = (uint32_t)vt_marker_get_le(buf + VT_MARKER_OFF_MAGIC, sizeof(uint32_t));
	uint32_t version = (uint32_t)vt_marker_get_le(buf + VT_MARKER_OFF_VERSION,
						      sizeof(uint16_t));

	if (magic != VT_MARKER_MAGIC)
		return vt_err_set("bad magic 0x%08x", magic);
	if (version != VT_MARKER_VERSION)
		return vt_err_set("unsupported version %u", version);
	rec->kind = buf[VT_MARKER_OFF_KIND];
	rec->size = buf[VT_MARKER_OFF_SIZE];
	rec->addr = vt_marker_get_le(buf + VT_MARKER_OFF_ADDR, sizeof(uint64_t));
	rec->value = (uint32_t)vt_marker_get_le(buf + VT_MARKER_OFF_VALUE, sizeof(uint32_t));
	rec->cpu = (uint32_t)vt_marker_get_le(buf + VT_MARKER_OFF_CPU, sizeof(uint32_t));
	rec->seq = vt_marker_get_le(buf + VT_MARKER_OFF_SEQ, sizeof(uint64_t));
	rec->tsc_guest_before = vt_marker_get_le(buf + VT_MARKER_OFF_TSC_BEFORE, sizeof(uint64_t));
	rec->tsc_guest_after = vt_marker_get_le(buf + VT_MARKER_OFF_TSC_AFTER, sizeof(uint64_t));
	if (rec->kind < VT_MARKER_PIO || rec->kind > VT_MARKER_CHARDEV)
		return vt_err_set("bad kind %u", rec->kind);
	if (rec->size != 1 && rec->size != 2 && rec->size != 4)
		return vt_err_set("bad size %u", rec->size);
	if (rec->tsc_guest_after < rec->tsc_guest_before)
		return vt_err_set("TSC after (%llu) < before (%llu)",
				  (unsigned long long)rec->tsc_guest_after,
				  (unsigned long long)rec->tsc_guest_before);
	return 0;
}

struct vt_marker_writer *vt_marker_writer_open(const char *dir)
{
	struct vt_marker_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		vt_err_errno("markers: allocation");
		return NULL;
	}
	if (snprintf(w->path, sizeof(w->path), "%s/%s", dir, VT_MARKER_FILE) >=
	    (int)sizeof(w->path)) {
		vt_err_set("%s: path too long", dir);
		free(w);
		return NULL;
	}
	w->fd = open(w->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (w->fd < 0) {
		vt_err_errno("%s: cannot open", w->path);
		free(w);
		return NULL;
	}
	return w;
}

int vt_marker_writer_add(struct vt_marker_writer *w, const struct vt_marker *rec)
{
	uint8_t buf[VT_MARKER_REC_SIZE];
	size_t done = 0;

	vt_marker_encode(rec, buf);
	while (done < sizeof(buf)) {
		ssize_t r = write(w->fd, buf + done, sizeof(buf) - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return vt_err_errno("%s: write", w->path);
		done += (size_t)r;
	}
	return 0;
}

int vt_marker_writer_close(struct vt_marker_writer *w)
{
	int ret = 0;

	if (!w)
		return 0;
	if (fsync(w->fd) < 0 && errno != EINVAL)
		ret = vt_err_errno("%s: fsync", w->path);
	if (close(w->fd) < 0 && !ret)
		ret = vt_err_errno("%s: close", w->path);
	free(w);
	return ret;
}

int vt_marker_read(const char *path, struct vt_marker **out, size_t *n, size_t *n_bad)
{
	uint8_t buf[VT_MARKER_REC_SIZE];
	struct vt_marker *recs = NULL;
	size_t nr = 0, bad = 0, cap;
	uint64_t last_seq = 0;
	struct stat st;
	int fd;

	*out = NULL;
	*n = 0;
	*n_bad = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vt_err_errno("%s: cannot open", path);
	if (fstat(fd, &st) < 0) {
		vt_err_errno("%s: stat", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		vt_err_set("%s: not a regular file", path);
		goto fail;
	}
	if ((uint64_t)st.st_size / VT_MARKER_REC_SIZE > VT_MARKER_MAX_RECS) {
		vt_err_set("%s: too large (%lld bytes, at most %u records)", path,
			   (long long)st.st_size, VT_MARKER_MAX_RECS);
		goto fail;
	}
	cap = (size_t)st.st_size / VT_MARKER_REC_SIZE + 1;
	recs = calloc(cap, sizeof(*recs));
	if (!recs) {
		vt_err_errno("%s: allocation", path);
		goto fail;
	}
	for (;;) {
		size_t got = 0;

		while (got < sizeof(buf)) {
			ssize_t r = read(fd, buf + got, sizeof(buf) - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				vt_err_errno("%s: read", path);
				goto fail;
			}
			if (r == 0)
				break;
			got += (size_t)r;
		}
		if (got == 0)
			break;
		if (got < sizeof(buf)) {	/* truncated tail */
			bad++;
			break;
		}
		if (nr == cap) {	/* the file grew while read: stop at the bound */
			bad++;
			break;
		}
		if (vt_marker_decode(buf, &recs[nr]) < 0 ||
		    (nr > 0 && recs[nr].seq <= last_seq)) {
			bad++;
			continue;
		}
		last_seq = recs[nr].seq;
		nr++;
	}
	close(fd);
	*out = recs;
	*n = nr;
	*n_bad = bad;
	return 0;
fail:
	free(recs);
	close(fd);
	return -1;
}
