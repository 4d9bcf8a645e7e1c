/*
 * t-tracedat-read.c - unit test of the trace.dat reader (lib/tracedat_read.c):
 * clock classification, clean failures on missing / non-trace.dat / header-
 * truncated input (message names the file).  Reading real files is tested
 * end to end by tests/merge/t-merge-tracedat.sh and t-merge-record.sh.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "tracedat.h"

int main(void)
{
	char dir[] = "/tmp/t-tracedat-read.XXXXXX", path[256];
	int fd;

	CHECK(vt_td_clock_is_ns("local") == 1);
	CHECK(vt_td_clock_is_ns("mono") == 1);
	CHECK(vt_td_clock_is_ns("x86-tsc") == 0);
	CHECK(vt_td_clock_is_ns("counter") == 0);
	CHECK(vt_td_clock_is_ns("") == 0);

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/missing.dat", dir);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), "missing.dat") != NULL);

	/* garbage: not a trace.dat */
	snprintf(path, sizeof(path), "%s/garbage.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, "this is not a trace file at all, not even close\n", 48) == 48);
	close(fd);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), "garbage.dat") != NULL);

	/* the magic and nothing else: truncated headers */
	snprintf(path, sizeof(path), "%s/short.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	static const char magic[] = "\x17\x08\x44" "tracing" "6";

	CHECK(write(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic));
	close(fd);
	CHECK(vt_td_read_open(path) == NULL);
	CHECK(strstr(vt_err_msg(), "short.dat") != NULL);

	unlink(path);
	snprintf(path, sizeof(path), "%s/garbage.dat", dir);
	unlink(path);
	rmdir(dir);
	return check_done();
}
