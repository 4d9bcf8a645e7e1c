/*
 * session.c - info-file rewrite and option parsing shared by `vmtrace run`
 * (tool, main thread) and the Linux mcount runtime (traced program, only
 * on its slow paths: thread start, process exit).  Allocates; never on a
 * per-event path.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "uftrace.h"
#include "guest/mcount/session.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Collect the TIDs of every <digits>.dat file in @dir; caller frees. */
static int scan_tids(const char *dir, int **out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int *tids = NULL, nr = 0, cap = 0;

	if (!d)
		return vt_err_errno("%s: cannot list", dir);
	while ((de = readdir(d))) {
		char *endp;
		long tid;

		errno = 0;
		tid = strtol(de->d_name, &endp, 10);
		if (errno || endp == de->d_name || strcmp(endp, ".dat") || tid <= 0 ||
		    tid > INT32_MAX)
			continue;
		if (nr == cap) {
			int *n;

			cap = cap ? cap * 2 : 16;
			n = realloc(tids, cap * sizeof(*tids));
			if (!n) {
				free(tids);
				closedir(d);
				return vt_err_set("%s: out of memory listing threads", dir);
			}
			tids = n;
		}
		tids[nr++] = (int)tid;
	}
	closedir(d);
	if (nr)
		qsort(tids, nr, sizeof(*tids), cmp_int);
	*out = tids;
	return nr;
}

int mcount_session_write_info(const char *dir, const char *exename, const char *cmdline,
			      int exit_status, unsigned max_depth, uint64_t elapsed_ns)
{
	struct vt_uft_info info = {
		.exename = exename,
		.cmdline = cmdline,
		.exit_status = exit_status,
		.max_stack = (uint16_t)max_depth,
		.elapsed_ns = elapsed_ns,
	};
	int *tids = NULL;
	int nr, rc;

	nr = scan_tids(dir, &tids);
	if (nr < 0)
		return -1;
	info.nr_tids = nr;
	info.tids = tids;
	rc = vt_uft_write_info(dir, &info);
	free(tids);
	return rc;
}
