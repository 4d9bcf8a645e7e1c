/*
 * uftrace-append.c - incremental writes into a uftrace data directory, for
 * runtimes that discover symbols while the traced program runs (the Python
 * extension names each code object once, the first time it runs) and for
 * fixing up .dat files a killed writer left grown past its last record
 * (zeroed preallocated space).
 * Called from the traced program's threads, outside the per-event path;
 * may block on I/O, does not allocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "uftrace.h"

/* One symbol line plus its end marker; names longer than this are cut. */
#define SYM_LINE_MAX	4096
/* Records read per pread() while looking back for the last valid one. */
#define TRIM_BATCH	4096

int vt_uft_sym_append(int fd, uint64_t addr, uint64_t size, char type, const char *name)
{
	char line[SYM_LINE_MAX];
	char end[64];
	int n, m;

	n = snprintf(line, sizeof(line) - sizeof(end), "%016" PRIx64 " %c %s", addr, type, name);
	if (n < 0)
		return vt_err_set("symbol %s: cannot format", name);
	if ((size_t)n >= sizeof(line) - sizeof(end))
		n = (int)(sizeof(line) - sizeof(end) - 1);
	/* A newline in a name would start a bogus line: cut it there. */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	m = snprintf(end, sizeof(end), "\n%016" PRIx64 " ? __sym_end\n", addr + size);
	memcpy(line + n, end, (size_t)m + 1);
	/* One write() per symbol: with O_APPEND a reader never sees half. */
	if (vt_file_write_all(fd, line, (size_t)(n + m)) < 0)
		return vt_err_errno("symbol file: cannot append %s", name);
	return 0;
}

long vt_uft_dat_trim(const char *path)
{
	struct vt_uft_record buf[TRIM_BATCH];
	struct stat st;
	uint64_t end, keep = 0;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return vt_err_errno("%s", path);
	if (fstat(fd, &st) < 0)
		goto fail;
	/* from the end backwards: a clean file costs one read */
	end = (uint64_t)st.st_size / sizeof(buf[0]);
	while (end > 0 && !keep) {
		uint64_t from = end > TRIM_BATCH ? end - TRIM_BATCH : 0;
		size_t want = (size_t)(end - from), n;
		ssize_t got = pread(fd, buf, want * sizeof(buf[0]), (off_t)(from * sizeof(buf[0])));

		if (got < 0)
			goto fail;
		n = (size_t)got / sizeof(buf[0]);
		while (n > 0 && vt_uft_magic(buf[n - 1].bits) != VT_UFT_RECORD_MAGIC)
			n--;
		if (n > 0)
			keep = from + n;
		end = from;
	}
	if ((uint64_t)st.st_size != keep * sizeof(buf[0]) &&
	    ftruncate(fd, (off_t)(keep * sizeof(buf[0]))) < 0)
		goto fail;
	close(fd);
	return (long)keep;
fail:
	vt_err_errno("%s", path);
	close(fd);
	return -1;
}
