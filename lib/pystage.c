/*
 * pystage.c - reading and folding the Python tracer's stage files
 * (lib/pystage.h, docs/format/python.md): a killed writer's newest records
 * are in <TID>.stage only.  Used by the uftrace reader (merge, convert,
 * info, top), `vmtrace finalize`, `vmtrace unpack` and the extension's
 * finalize.  Runs in commands or outside the traced program's per-event
 * path; the stage is untrusted input; allocates and blocks on I/O.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "pystage.h"

#define REC_BYTES	sizeof(struct vt_uft_record)
#define DAT_SUFFIX	".dat"
#define FORK_PREFIX	"fork-"
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

/* Read and check the stage @path: its header in *@hdr, its valid records
 * (a malloc'ed array) in *@recs, count *@nr.  1 when there is no such
 * file, 0 when read (also when the file ends early: the records up to the
 * cut are valid), -1 with a message. */
static int stage_load(const char *path, struct vt_pystage_hdr *hdr,
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

/* Keep the records of @recs (@nr, header @hdr) that are new after .dat
 * offset @dat_end: moved to the front, their count returned. */
static size_t stage_newer(const struct vt_pystage_hdr *hdr, struct vt_uft_record *recs,
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
	int rc = stage_load(path, &hdr, recs, nr);

	if (rc)
		return rc > 0 ? 0 : -1;
	*nr = stage_newer(&hdr, *recs, *nr, dat_end);
	if (!*nr) {
		free(*recs);
		*recs = NULL;
	}
	return 0;
}

/* pwrite all of @len bytes at @off; -1 with a message naming @path. */
static int write_at(int fd, const void *buf, size_t len, uint64_t off, const char *path)
{
	const char *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return vt_err_errno("%s: cannot write the stage's records at offset %" PRIu64,
					    path, off);
		}
		p += w;
		off += (uint64_t)w;
		len -= (size_t)w;
	}
	return 0;
}

long vt_pystage_fold(const char *dat_path)
{
	char stage[PATH_MAX];
	struct vt_pystage_hdr hdr;
	struct vt_uft_record *recs;
	size_t nr;
	long kept;
	int rc, fd;

	if (vt_pystage_path(stage, sizeof(stage), dat_path) < 0)
		return -1;
	/* checked before the .dat is touched: a bad stage changes nothing */
	rc = stage_load(stage, &hdr, &recs, &nr);
	if (rc < 0)
		return -1;
	kept = vt_uft_dat_trim(dat_path);
	if (kept < 0 || rc > 0) {
		free(recs);
		return kept;
	}
	nr = stage_newer(&hdr, recs, nr, (uint64_t)kept * REC_BYTES);
	if (nr) {
		fd = open(dat_path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			free(recs);
			return vt_err_errno("%s: cannot open", dat_path);
		}
		/* right after the .dat's records, even when the header places
		 * them further on (records missing from the .dat) */
		if (write_at(fd, recs, nr * REC_BYTES, (uint64_t)kept * REC_BYTES, dat_path) < 0) {
			/* the stage stays: nothing of it is lost */
			close(fd);
			free(recs);
			return -1;
		}
		/* on disk before the only other copy goes */
		if (fsync(fd) < 0 || close(fd) < 0) {
			free(recs);
			return vt_err_errno("%s: write failed", dat_path);
		}
		kept += (long)nr;
	}
	free(recs);
	if (unlink(stage) < 0 && errno != ENOENT)
		return vt_err_errno("%s: cannot remove", stage);
	return kept;
}

/* Remember the first failure's message in @first (later ones overwrite
 * the error buffer); returns -1. */
static int keep_first(char *first, size_t len)
{
	if (!first[0])
		snprintf(first, len, "%s", vt_err_msg());
	return -1;
}

/* Fold the stages of @dir's .dat files, then recurse into fork-<PID>/
 * (every subdirectory with @all).  The first failure's message goes to
 * @first. */
static int fold_dir(const char *dir, unsigned *folded, int all, char *first,
		    size_t flen)
{
	char path[PATH_MAX];
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		vt_err_errno("%s: cannot read directory", dir);
		return keep_first(first, flen);
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		size_t len = strlen(n);
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", dir, n) >= (int)sizeof(path)) {
			vt_err_set("%s/%s: path too long", dir, n);
			ret = keep_first(first, flen);
			continue;
		}
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if ((all || !strncmp(n, FORK_PREFIX, strlen(FORK_PREFIX))) && !lstat(path, &st) &&
		    S_ISDIR(st.st_mode)) {
			/* bounded by PATH_MAX: each level adds to the path */
			if (fold_dir(path, folded, all, first, flen) < 0)
				ret = -1;
			continue;
		}
		if (len <= strlen(VT_PYSTAGE_SUFFIX) ||
		    strcmp(n + len - strlen(VT_PYSTAGE_SUFFIX), VT_PYSTAGE_SUFFIX))
			continue;
		if (snprintf(path, sizeof(path), "%s/%.*s%s", dir,
			     (int)(len - strlen(VT_PYSTAGE_SUFFIX)), n, DAT_SUFFIX) >= (int)sizeof(path)) {
			vt_err_set("%s/%s: path too long", dir, n);
			ret = keep_first(first, flen);
			continue;
		}
		if (vt_pystage_fold(path) < 0)
			ret = keep_first(first, flen);
		else
			(*folded)++;
	}
	closedir(d);
	return ret;
}

/* vt_pystage_fold_dir() and vt_pystage_fold_tree(). */
static int fold_top(const char *dir, unsigned *folded, int all)
{
	char first[1024] = "";
	int rc;

	*folded = 0;
	rc = fold_dir(dir, folded, all, first, sizeof(first));
	if (rc < 0)
		vt_err_set("%s", first);
	return rc;
}

int vt_pystage_fold_dir(const char *dir, unsigned *folded)
{
	return fold_top(dir, folded, 0);
}

int vt_pystage_fold_tree(const char *dir, unsigned *folded)
{
	return fold_top(dir, folded, 1);
}
