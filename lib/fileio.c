/*
 * fileio.c - small file helpers of the shared module (see fileio.h): the
 * one whole-file reader (uftrace's text files, /proc and tracefs files of
 * the recorder, debugcon captures) and the writers of whole-file outputs
 * (vmtrace.meta, uftrace's side files).  Runs on any command's thread;
 * blocks on I/O; only the reader allocates (its buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"

#define READ_ALL_FIRST	(64 * 1024)	/* first buffer when the size is unknown */

void *vt_io_alloc(size_t len)
{
	/* aligned_alloc wants a multiple of the alignment */
	size_t whole = (len + VT_IO_ALIGN - 1) & ~(size_t)(VT_IO_ALIGN - 1);

	if (unlikely(whole < len))
		return NULL;
	return aligned_alloc(VT_IO_ALIGN, whole ? whole : VT_IO_ALIGN);
}

char *vt_file_read_all(const char *path, uint64_t max, size_t *len)
{
	struct stat st;
	size_t cap, got = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		vt_err_errno("%s: cannot open", path);
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		vt_err_set("%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > max || max >= SIZE_MAX - 2) {
		vt_err_set("%s: too large (%lld bytes, limit %llu)", path, (long long)st.st_size,
			   (unsigned long long)max);
		close(fd);
		return NULL;
	}
	cap = st.st_size ? (size_t)st.st_size + 1 : READ_ALL_FIRST;
	buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (unlikely(!buf)) {
			vt_err_set("%s: out of memory", path);
			break;
		}
		if (got > max) {
			vt_err_set("%s: too large (over %llu bytes)", path,
				   (unsigned long long)max);
			break;
		}
		if (got + 1 == cap) {	/* full: grow, up to max + 2 (one byte past max tells) */
			size_t ncap = cap * 2 > max + 2 ? (size_t)max + 2 : cap * 2;
			char *nb = realloc(buf, ncap);

			if (!nb) {
				vt_err_set("%s: out of memory", path);
				break;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			vt_err_errno("%s: read error", path);
			break;
		}
		if (n == 0) {
			close(fd);
			buf[got] = 0;
			*len = got;
			return buf;
		}
		got += (size_t)n;
	}
	free(buf);
	close(fd);
	return NULL;
}

int vt_file_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int vt_file_write_atomic(const char *path, const void *data, size_t len,
			 mode_t mode, int flags)
{
	char tmp[PATH_MAX];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return vt_err_set("%s: path too long", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return vt_err_errno("%s: cannot create", tmp);
	if (fchmod(fd, mode) || vt_file_write_all(fd, data, len) ||
	    ((flags & VT_FILE_FSYNC) && fsync(fd))) {
		vt_err_errno("%s: write failed", path);
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd)) {
		vt_err_errno("%s: write failed", path);
		unlink(tmp);
		return -1;
	}
	/* rename() replaces a symlink at @path rather than following it */
	if (rename(tmp, path)) {
		vt_err_errno("%s: cannot rename into place", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}
