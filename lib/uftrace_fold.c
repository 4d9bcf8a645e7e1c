/*
 * uftrace_fold.c - finishing trace directories whose writers are gone
 * (lib/uftrace.h vt_uft_finalize, vt_pystage_fold): the Python tracer's
 * stage files folded into their .dat files (docs/format/python.md: a
 * writer killed or os._exit()ed left its newest records in <TID>.stage
 * only), then each clock=tsc directory finished for uftrace (ns copies,
 * lib/uftrace_convert.c).  For `vmtrace finalize`, `vmtrace unpack` and
 * the extension's finalize; never on the traced program's per-event path.
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

/* What a walk does in each directory. */
struct fin_walk {
	int all;		/* every subdirectory, not only fork-<PID>/ */
	uint64_t tsc_hz;	/* 0: each directory's tsc.hz */
	struct vt_uft_fin_stats *st;
	char first[1024];	/* the first failure's message */
	char no_hz[512];	/* the first directory left raw, and why */
};

/* Finish @dir for uftrace (vt_uft_finish_ns), counted in @w. */
static int finish_dir(const char *dir, struct fin_walk *w)
{
	switch (vt_uft_finish_ns(dir, w->tsc_hz)) {
	case VT_UFT_FIN_NONE:
		return 0;
	case VT_UFT_FIN_DONE:
		w->st->finished++;
		return 0;
	case VT_UFT_FIN_PARTIAL:	/* read to its cut, as every reader does */
		w->st->finished++;
		return 0;
	case VT_UFT_FIN_NO_HZ:
		if (!w->no_hz[0])
			snprintf(w->no_hz, sizeof(w->no_hz), "%s", vt_err_msg());
		w->st->unfinished++;
		return 0;
	}
	return keep_first(w->first, sizeof(w->first));
}

/* Fold the stages of @dir's .dat files, recurse into fork-<PID>/ (every
 * subdirectory with w->all), then finish @dir for uftrace.  The first
 * failure's message goes to w->first. */
static int fold_dir(const char *dir, struct fin_walk *w)
{
	char path[PATH_MAX];
	struct dirent *de;
	int ret = 0, stage_bad = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		vt_err_errno("%s: cannot read directory", dir);
		return keep_first(w->first, sizeof(w->first));
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		size_t len = strlen(n);
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", dir, n) >= (int)sizeof(path)) {
			vt_err_set("%s/%s: path too long", dir, n);
			ret = keep_first(w->first, sizeof(w->first));
			continue;
		}
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if ((w->all || !strncmp(n, FORK_PREFIX, strlen(FORK_PREFIX))) && !lstat(path, &st) &&
		    S_ISDIR(st.st_mode)) {
			/* bounded by PATH_MAX: each level adds to the path */
			if (fold_dir(path, w) < 0)
				ret = -1;
			continue;
		}
		if (len <= strlen(VT_PYSTAGE_SUFFIX) ||
		    strcmp(n + len - strlen(VT_PYSTAGE_SUFFIX), VT_PYSTAGE_SUFFIX))
			continue;
		/* shorter than DIR/NAME, which fit: VT_UFT_RAW_SUFFIX for
		 * VT_PYSTAGE_SUFFIX */
		VT_STATIC_ASSERT(sizeof(VT_UFT_RAW_SUFFIX) <= sizeof(VT_PYSTAGE_SUFFIX),
				 "the raw file's name is no longer than the stage's");
		snprintf(path, sizeof(path), "%s/%.*s%s", dir,
			 (int)(len - strlen(VT_PYSTAGE_SUFFIX)), n, VT_UFT_RAW_SUFFIX);
		if (!access(path, F_OK)) {
			/* its .dat is an ns copy: the stage's raw records
			 * do not go there (no writer leaves one after it) */
			vt_err_set("%s/%s: a stage beside a finished %s: left as it is", dir, n,
				   path);
			ret = stage_bad = keep_first(w->first, sizeof(w->first));
			continue;
		}
		strcpy(path + strlen(path) - strlen(VT_UFT_RAW_SUFFIX), DAT_SUFFIX);
		if (vt_pystage_fold(path) < 0)
			ret = stage_bad = keep_first(w->first, sizeof(w->first));
		else
			w->st->folded++;
	}
	closedir(d);
	/* a stage left unfolded: the directory stays as it is, for a retry */
	if (!stage_bad && finish_dir(dir, w) < 0)
		ret = -1;
	return ret;
}

int vt_uft_finalize(const char *dir, int tree, uint64_t tsc_hz, struct vt_uft_fin_stats *st)
{
	struct fin_walk w = { .all = tree, .tsc_hz = tsc_hz, .st = st };
	int rc;

	memset(st, 0, sizeof(*st));
	rc = fold_dir(dir, &w);
	snprintf(st->no_hz, sizeof(st->no_hz), "%s", w.no_hz);
	if (rc < 0)
		vt_err_set("%s", w.first);
	return rc;
}
