/*
 * pystage.c - reading the Python tracer's stage files (lib/pystage.h,
 * docs/format/python.md): a killed writer's newest records are in
 * <TID>.stage only.  Used by the uftrace module: its stream reader
 * (lib/uftrace_stream.c: merge, convert, info, top) and its fold
 * (lib/uftrace_fold.c: `vmtrace finalize`, `vmtrace unpack`, the
 * extension's finalize).  Runs in commands or outside the traced
 * program's per-event path; the stage is untrusted input; allocates and
 * blocks on I/O.
 *
 * Dependency: the uftrace module calls in here, never the other way: of
 * lib/uftrace.h this file uses only the record layout (inline helpers).
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
#include "pystage.h"

#define REC_BYTES	sizeof(struct vt_uft_record)
#define DAT_SUFFIX	".dat"
/* Largest .dat offset believed (a .dat offset is a file size: off_t). */
#define DAT_OFF_MAX	((uint64_t)INT64_MAX)

int vt_pystage_path(char *buf, size_t len, const char *dat)
{
	size_t n = strlen(dat), base;

	if (n < strlen(DAT_SUFFIX) || strcmp(dat + n - strlen(DAT_SUFFIX), DAT_SUFFIX))
		return vt_err_set("%s: not a .dat file name", dat);
	base = n - strlen(DAT_SUFFIX);
	if (base + sizeof(VT_PYSTAGE_SUFFIX) > len)
		return vt_err_set("%s: path too long", dat);
	memcpy(buf, dat, base);
	memcpy(buf + base, VT_PYSTAGE_SUFFIX, sizeof(VT_PYSTAGE_SUFFIX));
	return 0;
}

int vt_pystage_load(const char *path, struct vt_pystage_hdr *hdr,
		     struct vt_uft_record **recs, size_t *nr)
{
	struct vt_uft_record *buf;
	struct stat st;
	size_t n = 0, have;
	ssize_t got;
	int fd;

	*recs = NULL;
	*nr = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 1 : vt_err_errno("%s: cannot open", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return vt_err_set("%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > VT_PYSTAGE_BYTES) {
		close(fd);
		return vt_err_set("%s: %" PRIu64 " bytes, a stage has at most %lu (corrupt data)",
				  path, (uint64_t)st.st_size, VT_PYSTAGE_BYTES);
	}
	got = pread(fd, hdr, sizeof(*hdr), 0);
	if (got != (ssize_t)sizeof(*hdr)) {
		close(fd);
		if (got < 0)
			return vt_err_errno("%s: read error", path);
		return vt_err_set("%s: truncated: %zd bytes, shorter than the %zu-byte header",
				  path, got, sizeof(*hdr));
	}
	if (hdr->magic != VT_PYSTAGE_MAGIC) {
		close(fd);
		return vt_err_set("%s: bad magic (not a vmtrace stage file, or corrupt)", path);
	}
	if (hdr->dat_off % REC_BYTES || hdr->dat_off > DAT_OFF_MAX) {
		close(fd);
		return vt_err_set("%s: .dat offset %" PRIu64 " is not a record boundary (corrupt data)",
				  path, hdr->dat_off);
	}
	buf = malloc(VT_PYSTAGE_RECS * REC_BYTES);
	if (!buf) {
		close(fd);
		return vt_err_set("%s: out of memory", path);
	}
	got = pread(fd, buf, VT_PYSTAGE_RECS * REC_BYTES, sizeof(*hdr));
	close(fd);
	if (got < 0) {
		free(buf);
		return vt_err_errno("%s: read error", path);
	}
	have = (size_t)got / REC_BYTES;
	while (n < have && vt_uft_magic(buf[n].bits) == VT_UFT_RECORD_MAGIC)
		n++;
	if (!n) {
		free(buf);
		return 0;
	}
	*recs = buf;
	*nr = n;
	return 0;
}

size_t vt_pystage_newer(const struct vt_pystage_hdr *hdr, struct vt_uft_record *recs,
			size_t nr, uint64_t dat_end)
{
	uint64_t skip = 0;

	if (dat_end > hdr->dat_off)
		skip = (dat_end - hdr->dat_off) / REC_BYTES;
	if (skip >= nr)
		return 0;
	memmove(recs, recs + skip, (nr - (size_t)skip) * REC_BYTES);
	return nr - (size_t)skip;
}

int vt_pystage_read(const char *path, uint64_t dat_end, struct vt_uft_record **recs,
		    size_t *nr)
{
	struct vt_pystage_hdr hdr;
	int rc = vt_pystage_load(path, &hdr, recs, nr);

	if (rc)
		return rc > 0 ? 0 : -1;
	*nr = vt_pystage_newer(&hdr, *recs, *nr, dat_end);
	if (!*nr) {
		free(*recs);
		*recs = NULL;
	}
	return 0;
}
