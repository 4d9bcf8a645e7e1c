/*
 * uftrace_fold.c - folding the Python tracer's stage files into their
 * .dat files (lib/uftrace.h vt_pystage_fold*, docs/format/python.md): a
 * writer that is gone (killed, os._exit()ed) left its newest records in
 * <TID>.stage only.  For `vmtrace finalize`, `vmtrace unpack` and the
 * extension's finalize; never on the traced program's per-event path.
 *
 * Part of the uftrace module: it reads the stage through lib/pystage.c
 * and trims the .dat with lib/uftrace-append.c (pystage.c calls nothing
 * here).  Allocates and blocks on I/O; the stage is untrusted input.
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
#include "uftrace.h"

#define REC_BYTES	sizeof(struct vt_uft_record)
#define DAT_SUFFIX	".dat"
#define FORK_PREFIX	"fork-"

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
	rc = vt_pystage_load(stage, &hdr, &recs, &nr);
	if (rc < 0)
		return -1;
	kept = vt_uft_dat_trim(dat_path);
	if (kept < 0 || rc > 0) {
		free(recs);
		return kept;
	}
	nr = vt_pystage_newer(&hdr, recs, nr, (uint64_t)kept * REC_BYTES);
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
