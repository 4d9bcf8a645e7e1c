/*
 * fileio.h - small file helpers of the shared module: read a whole file,
 * write a whole buffer, replace a file atomically (temporary file in the
 * same directory + rename).
 */
#ifndef VT_FILEIO_H
#define VT_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define VT_FILE_FSYNC	1	/* flag: fsync the data before the rename */

/* Alignment of the buffers bulk read() and write() copy from and to: the
 * kernel's copy between a user buffer and the page cache runs several
 * times slower when the two sit a few bytes apart modulo 4096 (measured
 * here: 5x for a read into a buffer at page offset 16, 2.3x for a write
 * from page offset 4072; docs/benchmarks.md), so these buffers start on
 * a page. */
#define VT_IO_ALIGN	4096

/* A buffer of @len bytes for bulk file I/O, aligned to VT_IO_ALIGN (free()
 * it); NULL when out of memory (no message: the caller names the file). */
void *vt_io_alloc(size_t len);

/* Read all of @path, a regular file of at most @max bytes (a /proc or
 * tracefs file counts: its size reads 0, the buffer grows as it is read),
 * into a NUL-terminated buffer: the buffer (free() it) with its length in
 * *@len, or NULL with the error set naming @path.  Opened non-blocking: a
 * FIFO or device planted where a file should be is refused, never waited
 * on (guest directories are untrusted input). */
char *vt_file_read_all(const char *path, uint64_t max, size_t *len);

/* Write all @len bytes at @buf to @fd, retrying after EINTR and short
 * writes.  0, or -1 with errno set (no message: the caller names the file). */
int vt_file_write_all(int fd, const void *buf, size_t len);

/* Replace @path with the @len bytes at @data, created with permissions
 * @mode; with VT_FILE_FSYNC in @flags the data reach the disk first.
 * A symlink at @path is replaced, not followed; on failure @path is left
 * as it was and no temporary file remains.  0, or -1 with the error set
 * (naming @path). */
int vt_file_write_atomic(const char *path, const void *data, size_t len,
			 mode_t mode, int flags);

#endif
