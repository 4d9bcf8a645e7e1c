/*
 * fileio.c - small file helpers of the shared module (see fileio.h), for
 * the writers of whole-file outputs (vmtrace.meta, uftrace's side files).
 * Runs on any command's thread; blocks on I/O, allocates nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"

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
