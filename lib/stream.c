/*
 * stream.c - the vmtrace stream format (lib/stream.h,
 * docs/format/stream.md): CRC-32, name rules, the frame writer used by the
 * guest's `vmtrace stream`, and the reader + directory unpacker used by the
 * host's `vmtrace unpack`.  Tools only (a command's main thread): the
 * writer blocks on its output, the reader allocates one frame-sized buffer
 * and blocks on file I/O.  The stream is untrusted: nothing in it is used
 * before it is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "stream.h"
#include "tsc.h"

/* reflected polynomial of CRC-32 (IEEE 802.3) */
#define CRC32_POLY	0xedb88320u
/* stream bytes read at a time beyond the frame being decoded */
#define READ_CHUNK	(256u << 10)
#define DIR_MODE	0755
#define FILE_MODE	0644

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32_POLY : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t vt_stream_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	for (size_t i = 0; i < len; i++)
		crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int vt_stream_name_ok(const char *name, size_t len)
{
	size_t comp = 0, depth = 1;

	if (len == 0 || len > VT_STREAM_NAME_MAX)
		return 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || name[i] == '/') {
			/* the component name[i - comp .. i) */
			if (comp == 0)
				return 0;
			if (name[i - comp] == '.' &&
			    (comp == 1 || (comp == 2 && name[i - 1] == '.')))
				return 0;
			if (i < len && ++depth > VT_STREAM_MAX_DEPTH)
				return 0;
			comp = 0;
			continue;
		}
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return 0;
		comp++;
	}
	return 1;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static const char *type_name(unsigned type)
{
	switch (type) {
	case VT_STREAM_HELLO: return "HELLO";
	case VT_STREAM_DATA: return "DATA";
	case VT_STREAM_UNLINK: return "UNLINK";
	case VT_STREAM_END: return "END";
	}
	return "?";
}

static int has_name(unsigned type)
{
	return type == VT_STREAM_DATA || type == VT_STREAM_UNLINK;
}

int vt_stream_write(int fd, const char *what, const struct vt_stream_frame *f)
{
	uint8_t hdr[VT_STREAM_HDR_SIZE + VT_STREAM_NAME_MAX];
	size_t name_len = has_name(f->type) ? strlen(f->name) : 0;
	uint32_t crc;

	if (f->type < VT_STREAM_HELLO || f->type > VT_STREAM_END || (f->flags & ~VT_STREAM_F_ALL))
		return vt_err_set("%s: bad frame type %u / flags %#x", what, f->type, f->flags);
	if (has_name(f->type) && !vt_stream_name_ok(f->name, name_len))
		return vt_err_set("%s: file name '%s' cannot be streamed", what, f->name);
	if (f->len > VT_STREAM_MAX_PAYLOAD || f->offset > VT_STREAM_MAX_FILE - f->len)
		return vt_err_set("%s: '%s': %u bytes at offset %llu are past the stream's limits",
				  what, f->name, f->len, (unsigned long long)f->offset);
	put32(hdr + VT_STREAM_OFF_MAGIC, VT_STREAM_MAGIC);
	put16(hdr + VT_STREAM_OFF_VERSION, VT_STREAM_VERSION);
	put16(hdr + VT_STREAM_OFF_TYPE, (uint16_t)f->type);
	put16(hdr + VT_STREAM_OFF_NAME_LEN, (uint16_t)name_len);
	put16(hdr + VT_STREAM_OFF_FLAGS, (uint16_t)f->flags);
	put32(hdr + VT_STREAM_OFF_LEN, f->len);
	put64(hdr + VT_STREAM_OFF_OFFSET, f->offset);
	put64(hdr + VT_STREAM_OFF_TSC, f->tsc_guest ? f->tsc_guest : vt_rdtsc());
	put32(hdr + VT_STREAM_OFF_DATA_CRC, vt_stream_crc32(0, f->data, f->len));
	memcpy(hdr + VT_STREAM_HDR_SIZE, f->name, name_len);
	crc = vt_stream_crc32(0, hdr, VT_STREAM_OFF_HDR_CRC);
	crc = vt_stream_crc32(crc, hdr + VT_STREAM_HDR_SIZE, name_len);
	put32(hdr + VT_STREAM_OFF_HDR_CRC, crc);
	if (vt_file_write_all(fd, hdr, VT_STREAM_HDR_SIZE + name_len) < 0 ||
	    (f->len && vt_file_write_all(fd, f->data, f->len) < 0))
		return vt_err_errno("%s: write", what);
	return 0;
}

long vt_stream_decode(const uint8_t *buf, size_t len, struct vt_stream_frame *f)
{
	unsigned name_len, version;
	uint32_t crc;
	size_t total;

	f->type = 0;
	f->name[0] = '\0';
	f->data = NULL;
	if (len >= 4 && get32(buf) != VT_STREAM_MAGIC)
		return vt_err_set("no frame magic (not a vmtrace stream, or corrupt)");
	if (len < VT_STREAM_HDR_SIZE)
		return 0;
	name_len = get16(buf + VT_STREAM_OFF_NAME_LEN);
	if (name_len > VT_STREAM_NAME_MAX)
		return vt_err_set("corrupt frame header (name of %u bytes)", name_len);
	if (len < VT_STREAM_HDR_SIZE + name_len)
		return 0;
	crc = vt_stream_crc32(0, buf, VT_STREAM_OFF_HDR_CRC);
	crc = vt_stream_crc32(crc, buf + VT_STREAM_HDR_SIZE, name_len);
	if (crc != get32(buf + VT_STREAM_OFF_HDR_CRC))
		return vt_err_set("corrupt frame header (header checksum mismatch)");
	version = get16(buf + VT_STREAM_OFF_VERSION);
	if (version != VT_STREAM_VERSION)
		return vt_err_set("frame version %u, this vmtrace reads %d", version,
				  VT_STREAM_VERSION);
	f->type = get16(buf + VT_STREAM_OFF_TYPE);
	f->flags = get16(buf + VT_STREAM_OFF_FLAGS);
	f->len = get32(buf + VT_STREAM_OFF_LEN);
	f->offset = get64(buf + VT_STREAM_OFF_OFFSET);
	f->tsc_guest = get64(buf + VT_STREAM_OFF_TSC);
	memcpy(f->name, buf + VT_STREAM_HDR_SIZE, name_len);
	f->name[name_len] = '\0';
	if (f->type < VT_STREAM_HELLO || f->type > VT_STREAM_END) {
		f->type = 0;
		return vt_err_set("unknown frame type %u", get16(buf + VT_STREAM_OFF_TYPE));
	}
	if (f->flags & ~(f->type == VT_STREAM_DATA ? VT_STREAM_F_ALL : 0))
		return vt_err_set("%s frame with unknown flags %#x", type_name(f->type), f->flags);
	if (has_name(f->type) ? !vt_stream_name_ok(f->name, name_len) : name_len != 0)
		return vt_err_set("%s frame with a forbidden file name (absolute, '..', empty, too deep or control characters)",
				  type_name(f->type));
	if (f->len > VT_STREAM_MAX_PAYLOAD)
		return vt_err_set("%s frame of %u bytes (limit %u)", type_name(f->type), f->len,
				  VT_STREAM_MAX_PAYLOAD);
	if (f->type == VT_STREAM_UNLINK && f->len)
		return vt_err_set("UNLINK frame with a payload");
	if (f->type != VT_STREAM_DATA && f->offset)
		return vt_err_set("%s frame with a file offset", type_name(f->type));
	if (f->offset > VT_STREAM_MAX_FILE - f->len)
		return vt_err_set("DATA frame at file offset %llu: past the %llu-byte file limit",
				  (unsigned long long)f->offset, VT_STREAM_MAX_FILE);
	total = VT_STREAM_HDR_SIZE + name_len + f->len;
	if (len < total)
		return 0;
	f->data = buf + VT_STREAM_HDR_SIZE + name_len;
	if (vt_stream_crc32(0, f->data, f->len) != get32(buf + VT_STREAM_OFF_DATA_CRC))
		return vt_err_set("payload checksum mismatch");
	return (long)total;
}

/* " ('NAME' at file offset N)" describing the frame @f, or "". */
static void frame_where(char *buf, size_t len, const struct vt_stream_frame *f)
{
	buf[0] = '\0';
	if (f->type == VT_STREAM_DATA)
		snprintf(buf, len, " (%s of '%s' at file offset %llu, %u bytes)",
			 type_name(f->type), f->name, (unsigned long long)f->offset, f->len);
	else if (f->type)
		snprintf(buf, len, " (%s frame%s%s)", type_name(f->type), f->name[0] ? " of " : "",
			 f->name);
}

struct walk {
	const char *path;
	int fd;
	uint8_t *buf;
	size_t cap, have, start;
	uint64_t pos;		/* stream offset of buf[start] */
	int eof;
};

/* Read more of the stream after compacting the buffer: 0, -1 on error. */
static int walk_fill(struct walk *w)
{
	ssize_t n;

	if (w->start) {
		memmove(w->buf, w->buf + w->start, w->have - w->start);
		w->have -= w->start;
		w->start = 0;
	}
	do
		n = read(w->fd, w->buf + w->have, w->cap - w->have);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return vt_err_errno("%s: read at offset %llu", w->path,
				    (unsigned long long)(w->pos + w->have));
	if (n == 0)
		w->eof = 1;
	w->have += (size_t)n;
	return 0;
}

int vt_stream_walk(const char *path, vt_stream_frame_fn fn, void *arg)
{
	struct walk w = { .path = path, .cap = VT_STREAM_FRAME_MAX + READ_CHUNK };
	struct vt_stream_frame f;
	char where[VT_STREAM_NAME_MAX + 96];
	uint64_t nframes = 0;
	struct stat st;
	int ret = 0;

	w.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (w.fd < 0)
		return vt_err_errno("%s: cannot open", path);
	/* a small stream needs no frame-sized buffer */
	if (fstat(w.fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < w.cap)
		w.cap = (size_t)st.st_size + 1;
	w.buf = malloc(w.cap);
	if (!w.buf) {
		close(w.fd);
		return vt_err_errno("%s: no memory for the read buffer", path);
	}
	for (;;) {
		long n = vt_stream_decode(w.buf + w.start, w.have - w.start, &f);

		if (n < 0) {
			frame_where(where, sizeof(where), &f);
			ret = vt_err_wrap("%s: offset %llu: %s%s; %llu good frames before it",
					  path, (unsigned long long)w.pos, vt_err_msg(), where,
					  (unsigned long long)nframes);
			break;
		}
		if (n == 0) {
			size_t left = w.have - w.start;

			if (!w.eof) {
				if (walk_fill(&w) < 0) {
					ret = -1;
					break;
				}
				continue;
			}
			if (left == 0)
				break;	/* clean end without END */
			frame_where(where, sizeof(where), &f);
			ret = vt_err_set("%s: offset %llu: truncated frame, the stream ends %zu bytes into it%s; %llu good frames before it",
					 path, (unsigned long long)w.pos, left, where,
					 (unsigned long long)nframes);
			break;
		}
		if (nframes == 0 && f.type != VT_STREAM_HELLO) {
			ret = vt_err_set("%s: offset 0: the first frame is %s, not HELLO",
					 path, type_name(f.type));
			break;
		}
		ret = fn(arg, w.pos, &f);
		if (ret)
			break;
		nframes++;
		w.start += (size_t)n;
		w.pos += (uint64_t)n;
		if (f.type == VT_STREAM_END) {
			ret = 1;
			break;
		}
	}
	free(w.buf);
	close(w.fd);
	return ret;
}

/* ---- unpacking into a directory ---- */

/* fn's return when writing a file failed (not the stream's fault) */
#define UNPACK_FAIL	(-2)

struct unpack {
	const char *path;
	const char *dir;
	int dirfd;
	int fd;			/* cached open file */
	char fd_name[VT_STREAM_NAME_MAX + 1];
	uint64_t live_files;
	struct vt_stream_stats st;
};

/* Errors a bad stream provokes (a name used as both file and directory,
 * a symbolic link where it names a file) rather than the host: the unpack
 * stops as at a corrupt frame. */
static int stream_fault(int err)
{
	return err == ENOTDIR || err == EISDIR || err == ELOOP;
}

static int unpack_error(struct unpack *u, uint64_t pos, const struct vt_stream_frame *f,
			const char *what)
{
	int err = errno;

	vt_err_errno("%s: offset %llu: cannot %s '%s' in %s", u->path,
		     (unsigned long long)pos, what, f->name, u->dir);
	return stream_fault(err) ? -1 : UNPACK_FAIL;
}

/*
 * Open the directory holding @name's last component below u->dirfd,
 * making the missing ones when @create.  Returns the directory fd (the
 * caller closes it unless it is u->dirfd) and sets *@last to the last
 * component, or -1 with errno.  No symlink is followed.
 */
static int open_parent(struct unpack *u, const char *name, int create, const char **last)
{
	char comp[VT_STREAM_NAME_MAX + 1];
	const char *p = name, *slash;
	int cur = u->dirfd;

	while ((slash = strchr(p, '/'))) {
		int next;

		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		if (create && mkdirat(cur, comp, DIR_MODE) < 0 && errno != EEXIST)
			goto fail;
		next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			goto fail;
		if (cur != u->dirfd)
			close(cur);
		cur = next;
		p = slash + 1;
	}
	*last = p;
	return cur;
fail:
	if (cur != u->dirfd) {
		int err = errno;

		close(cur);
		errno = err;
	}
	return -1;
}

static void unpack_close_cached(struct unpack *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	u->fd_name[0] = '\0';
}

static int unpack_data(struct unpack *u, uint64_t pos, const struct vt_stream_frame *f)
{
	size_t done = 0;

	if (u->fd < 0 || strcmp(u->fd_name, f->name)) {
		const char *last;
		int pfd, fd;

		unpack_close_cached(u);
		pfd = open_parent(u, f->name, 1, &last);
		if (pfd < 0)
			return unpack_error(u, pos, f, "create the directories of");
		fd = openat(pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    FILE_MODE);
		if (fd >= 0) {
			if (u->live_files >= VT_STREAM_MAX_FILES) {
				unlinkat(pfd, last, 0);
				close(fd);
				if (pfd != u->dirfd)
					close(pfd);
				return vt_err_set("%s: offset %llu: more than %d files: '%s' refused",
						  u->path, (unsigned long long)pos,
						  VT_STREAM_MAX_FILES, f->name);
			}
			u->live_files++;
			u->st.files++;
		} else if (errno == EEXIST) {
			fd = openat(pfd, last, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0) {
			int rc = unpack_error(u, pos, f, "create");

			if (pfd != u->dirfd)
				close(pfd);
			return rc;
		}
		if (pfd != u->dirfd)
			close(pfd);
		u->fd = fd;
		snprintf(u->fd_name, sizeof(u->fd_name), "%s", f->name);
	}
	if ((f->flags & VT_STREAM_F_RESET) && ftruncate(u->fd, 0) < 0)
		return unpack_error(u, pos, f, "truncate");
	while (done < f->len) {
		ssize_t n = pwrite(u->fd, f->data + done, f->len - done,
				   (off_t)(f->offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			return unpack_error(u, pos, f, "write");
		}
		done += (size_t)n;
	}
	u->st.bytes += f->len;
	return 0;
}

static int unpack_unlink(struct unpack *u, uint64_t pos, const struct vt_stream_frame *f)
{
	const char *last;
	int pfd;

	if (!strcmp(u->fd_name, f->name))
		unpack_close_cached(u);
	pfd = open_parent(u, f->name, 0, &last);
	if (pfd < 0)
		return errno == ENOENT ? 0 : unpack_error(u, pos, f, "remove");
	if (unlinkat(pfd, last, 0) == 0) {
		if (u->live_files)
			u->live_files--;
		u->st.unlinks++;
	} else if (errno != ENOENT) {
		int rc = unpack_error(u, pos, f, "remove");

		if (pfd != u->dirfd)
			close(pfd);
		return rc;
	}
	if (pfd != u->dirfd)
		close(pfd);
	return 0;
}

static int unpack_frame(void *arg, uint64_t pos, const struct vt_stream_frame *f)
{
	struct unpack *u = arg;
	int rc = 0;

	if (f->type == VT_STREAM_DATA)
		rc = unpack_data(u, pos, f);
	else if (f->type == VT_STREAM_UNLINK)
		rc = unpack_unlink(u, pos, f);
	else if (f->type == VT_STREAM_END)
		u->st.ended = 1;
	if (rc)
		return rc;
	u->st.frames++;
	u->st.end_pos = pos + VT_STREAM_HDR_SIZE + strlen(f->name) * has_name(f->type) + f->len;
	return 0;
}

int vt_stream_unpack(const char *path, const char *dir, struct vt_stream_stats *st)
{
	struct unpack u = { .path = path, .dir = dir, .fd = -1 };
	int rc;

	if (access(path, R_OK) < 0)
		return vt_err_errno("%s: cannot read", path);
	if (mkdir(dir, DIR_MODE) < 0 && errno != EEXIST)
		return vt_err_errno("%s: cannot create", dir);
	u.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u.dirfd < 0)
		return vt_err_errno("%s: cannot open", dir);
	rc = vt_stream_walk(path, unpack_frame, &u);
	unpack_close_cached(&u);
	close(u.dirfd);
	if (st)
		*st = u.st;
	if (rc == UNPACK_FAIL)
		return -1;
	if (rc == 1)
		return 0;
	if (rc == 0)
		vt_err_set("%s: ends at offset %llu without an END frame (the sender was cut short); kept %llu frames",
			   path, (unsigned long long)u.st.end_pos,
			   (unsigned long long)u.st.frames);
	/* rc < 0: a truncated or corrupt frame, message set by the walk */
	return 1;
}
