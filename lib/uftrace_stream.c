/*
 * uftrace_stream.c - reading one task's records from a uftrace data
 * directory opened with vt_uft_open() (lib/uftrace.h): a forward reader
 * with a bounded buffer over <TID>.dat, followed by the records only the
 * Python tracer's <TID>.stage holds (lib/pystage.h: a writer killed or
 * still running).  For merge, convert, info and top.
 *
 * The records are untrusted guest data: each is checked and corruption is
 * reported with the file and offset.  Allocates and blocks; any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "pystage.h"
#include "uftrace.h"

#define EVENT_MAX_PAYLOAD	4096	/* largest event data we accept */
#define STREAM_BUF_BYTES	(64 * 1024)

struct vt_uft_stream {
	/* first: on a page (vt_io_alloc), as the kernel copies fastest */
	uint8_t buf[STREAM_BUF_BYTES];
	char *path;
	int fd;
	uint64_t off;		/* file offset of buf[pos] */
	size_t pos, len;
	int eof, truncated, failed;
	uint8_t payload[EVENT_MAX_PAYLOAD];
	size_t payload_len;
	/* after the .dat's records: the Python tracer's stage (pystage.h) */
	int stage_loaded;
	struct vt_uft_record *staged;
	size_t staged_nr, staged_pos;
};

struct vt_uft_stream *vt_uft_stream_open(struct vt_uft_reader *r, int idx)
{
	struct vt_uft_stream *s;
	char path[PATH_MAX];
	struct stat st;

	if (idx < 0 || idx >= vt_uft_nr_tasks(r)) {
		vt_err_set("%s: no task #%d", vt_uft_reader_dir(r), idx);
		return NULL;
	}
	if (vt_uft_raw_path(path, sizeof(path), vt_uft_reader_dir(r), vt_uft_task_tid(r, idx)))
		return NULL;
	s = vt_io_alloc(sizeof(*s));
	if (s)
		memset(s, 0, sizeof(*s));
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

/* A plain record's bits 2-5: "more" clear, the magic */
#define PLAIN_MASK	(1ULL << 2 | 7ULL << 3)
#define PLAIN_BITS	((uint64_t)VT_UFT_RECORD_MAGIC << 3)

const void *vt_uft_stream_run(struct vt_uft_stream *s, size_t max, size_t *n)
{
	const uint8_t *p;
	size_t have, k;

	*n = 0;
	if (unlikely(s->failed || s->stage_loaded))
		return NULL;
	/* refilled as vt_uft_stream_next() would: only when no whole record
	 * is left, so the reads (and a read error's place) are the same */
	have = stream_fill(s, sizeof(struct vt_uft_record));
	if (unlikely(s->failed))
		return NULL;
	have /= sizeof(struct vt_uft_record);
	if (max > have)
		max = have;
	p = s->buf + s->pos;
	for (k = 0; k < max; k++) {
		uint64_t bits;

		memcpy(&bits, p + k * sizeof(struct vt_uft_record) +
		       offsetof(struct vt_uft_record, bits), sizeof(bits));
		/* the magic right and no data following, in one test */
		if (unlikely((bits & PLAIN_MASK) != PLAIN_BITS))
			break;
	}
	if (k) {
		s->payload_len = 0;
		stream_skip(s, k * sizeof(struct vt_uft_record));
	}
	*n = k;
	return p;
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
