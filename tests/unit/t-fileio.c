/*
 * t-fileio.c - unit test of lib/fileio.c, how vmtrace reads a whole file
 * and replaces one atomically: limits (a file over the limit, one that
 * grows past it while read, a limit no buffer holds), files that are no
 * regular files or cannot be read, and a replacement whose path is too
 * long, whose directory is missing, or whose write is refused.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "fileio.h"

int main(void)
{
	const char *tmp = getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp";
	char path[512], *buf, *longp;
	struct rlimit old_lim, lim;
	size_t len = 99;

	snprintf(path, sizeof(path), "%s/f.txt", tmp);
	CHECK(vt_file_write_atomic(path, "hello\n", 6, 0600, VT_FILE_FSYNC) == 0);
	buf = vt_file_read_all(path, 6, &len);
	CHECK(buf && len == 6 && !strcmp(buf, "hello\n"));
	free(buf);
	CHECK(vt_file_read_all(path, 5, &len) == NULL);
	CHECK(strstr(vt_err_msg(), "f.txt: too large (6 bytes, limit 5)") != NULL);
	/* a limit no buffer of max + 2 bytes can hold */
	CHECK(vt_file_read_all(path, UINT64_MAX, &len) == NULL);
	CHECK(strstr(vt_err_msg(), "f.txt: too large") != NULL);

	/* a /proc file says 0 bytes: read until the limit is passed */
	CHECK(vt_file_read_all("/proc/self/maps", 10, &len) == NULL);
	CHECK(strstr(vt_err_msg(), "/proc/self/maps: too large (over 10 bytes)") != NULL);
	buf = vt_file_read_all("/proc/self/maps", 1 << 24, &len);
	CHECK(buf && len > 10 && strlen(buf) == len);
	free(buf);
	/* a regular file that cannot be read (its address 0 is not mapped) */
	CHECK(vt_file_read_all("/proc/self/mem", 1 << 20, &len) == NULL);
	CHECK(strstr(vt_err_msg(), "/proc/self/mem: read error: ") != NULL);
	CHECK(vt_file_read_all(tmp, 1 << 20, &len) == NULL);
	CHECK(strstr(vt_err_msg(), ": not a regular file") != NULL);
	CHECK(vt_file_read_all("/no/such/file", 1 << 20, &len) == NULL);
	CHECK(strstr(vt_err_msg(), "/no/such/file: cannot open: ") != NULL);

	/* replacing: a path with no room for the temporary's suffix, a
	 * missing directory, a write refused past the file size limit (the
	 * file as it was, no temporary left) */
	longp = malloc(PATH_MAX);
	CHECK(longp != NULL);
	if (longp) {
		memset(longp, 'p', PATH_MAX - 8);
		longp[PATH_MAX - 8] = 0;
		CHECK(vt_file_write_atomic(longp, "x", 1, 0644, 0) == -1);
		CHECK(strstr(vt_err_msg(), "ppp: path too long") != NULL);
		free(longp);
	}
	CHECK(vt_file_write_atomic("/no/such/dir/f", "x", 1, 0644, 0) == -1);
	CHECK(strstr(vt_err_msg(), "/no/such/dir/f.tmp") && strstr(vt_err_msg(), "cannot create"));
	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &old_lim) == 0);
	lim = old_lim;
	lim.rlim_cur = 4;
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	CHECK(vt_file_write_atomic(path, "0123456789", 10, 0644, 0) == -1);
	CHECK(setrlimit(RLIMIT_FSIZE, &old_lim) == 0);
	CHECK(strstr(vt_err_msg(), "f.txt: write failed: File too large") != NULL);
	buf = vt_file_read_all(path, 100, &len);
	CHECK(buf && !strcmp(buf, "hello\n"));
	free(buf);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "ls %s | grep -c tmp >/dev/null", tmp);
		CHECK(system(cmd) != 0);	/* grep found no temporary */
	}
	return check_done();
}
