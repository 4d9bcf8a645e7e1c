/*
 * t-err.c - unit test of lib/err.c, the last-error message every library
 * call leaves: a message longer than its 1023 bytes keeps its start and
 * its end (a long path's message still says what went wrong), cut on
 * UTF-8 boundaries; vt_err_errno's reason and vt_err_wrap's own text kept
 * past a long message; the error kinds; vt_err_print's fallbacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "utf8.h"

static char path[3000];

/* The message is cut to 1023 bytes: its start, "...", and its end @tail. */
static int cut_to(const char *head, const char *tail)
{
	const char *m = vt_err_msg();
	size_t n = strlen(m), t = strlen(tail);

	return n <= 1023 && n > 1000 && !strncmp(m, head, 200) && strstr(m, "...") &&
	       n >= t && !strcmp(m + n - t, tail);
}

static char *read_file(const char *p)
{
	static char buf[4096];
	FILE *fp = fopen(p, "r");
	size_t n = 0;

	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = 0;
	return buf;
}

int main(void)
{
	const char *tmp = getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp";
	char out[512], utf[3001], want[64];
	int fd, saved;

	/* short messages as they are */
	CHECK(vt_err_set("%s: bad %d", "f", 3) == -1);
	CHECK_STR(vt_err_msg(), "f: bad 3");
	CHECK(vt_err_code() == 0);
	CHECK(vt_err_set("%s: out of memory", "f") == -1 && vt_err_code() == ENOMEM);

	/* a long path: its start and its reason */
	path[0] = '/';
	for (size_t i = 1; i < sizeof(path) - 1; i++)
		path[i] = i % 10 ? 'a' + i % 26 : '/';
	CHECK(vt_err_set("%s: path too long", path) == -1);
	CHECK(cut_to(path, "/qrstuvwxy/abcdefghi/klmnopq: path too long") ||
	      cut_to(path, ": path too long"));
	CHECK(strlen(vt_err_msg()) == 1023);
	CHECK(!strncmp(vt_err_msg() + 256, "...", 3));
	/* the end of the path right before the reason, none lost there */
	CHECK(strstr(vt_err_msg(), path + sizeof(path) - 1 - 700) != NULL);

	/* errno's reason after a long message */
	errno = ENOENT;
	CHECK(vt_err_errno("%s: cannot open", path) == -1);
	snprintf(want, sizeof(want), ": cannot open: %s", strerror(ENOENT));
	CHECK(cut_to(path, want));
	CHECK(vt_err_code() == ENOENT && errno == ENOENT);
	errno = EACCES;
	CHECK(vt_err_errno("%s", "short") == -1);
	snprintf(want, sizeof(want), "short: %s", strerror(EACCES));
	CHECK_STR(vt_err_msg(), want);

	/* wrap: its arguments may be the message itself */
	vt_err_set("%s: path too long", path);
	CHECK(vt_err_wrap("%s (while reading the trace)", vt_err_msg()) == -1);
	CHECK(cut_to(path, ": path too long (while reading the trace)"));
	CHECK(vt_err_code() == 0);
	vt_err_set("out of memory");
	vt_err_wrap("%s: %s", "x", vt_err_msg());
	CHECK_STR(vt_err_msg(), "x: out of memory");
	CHECK(vt_err_code() == ENOMEM);	/* kept through a wrap */
	CHECK(vt_err_set_code(EIO, "%s: device", path) == -1 && vt_err_code() == EIO);
	CHECK(cut_to(path, ": device"));

	/* cut on UTF-8 boundaries: "é" is 2 bytes; a message of them is cut
	 * into valid UTF-8 */
	for (size_t i = 0; i + 1 < sizeof(utf); i += 2)
		memcpy(utf + i, "\xc3\xa9", 2);
	utf[sizeof(utf) - 1] = 0;
	vt_err_set("x%s", utf);	/* head at an odd byte: the 'é' before it whole */
	CHECK(vt_utf8_valid(vt_err_msg(), strlen(vt_err_msg())));
	CHECK(strlen(vt_err_msg()) <= 1023 && strlen(vt_err_msg()) > 1015);
	vt_err_set("%s!", utf);
	CHECK(vt_utf8_valid(vt_err_msg(), strlen(vt_err_msg())));
	CHECK(vt_err_msg()[strlen(vt_err_msg()) - 1] == '!');
	/* not UTF-8 at all (continuation bytes only): the cut marker alone */
	memset(utf, 0x80, sizeof(utf) - 1);
	vt_err_set("%s", utf);
	CHECK_STR(vt_err_msg(), "...");

	/* vt_err_print: the command's name, else the program's; no message */
	snprintf(out, sizeof(out), "%s/err.txt", tmp);
	fflush(stderr);
	saved = dup(2);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	vt_err_set("%s", "");
	vt_err_print("prog");
	vt_err_set_command("cmd");
	vt_err_set("it broke");
	vt_err_print("prog");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	CHECK_STR(read_file(out), "vmtrace: prog: unknown error\nvmtrace: cmd: it broke\n");
	CHECK_STR(vt_err_command("fallback"), "cmd");
	return check_done();
}
