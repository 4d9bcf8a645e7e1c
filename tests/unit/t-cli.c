/*
 * t-cli.c - lib/cli.c: the number rules every command's options share
 * (decimal or 0x hex, no sign, no junk, range checked, nothing written on
 * failure), and the short usage a wrong command line prints.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "cli.h"
#include "err.h"

static void usage_two(FILE *fp)
{
	fputs("usage: vmtrace two [-x]\n\nMore help.\n", fp);
}

static void usage_one(FILE *fp)
{
	fputs("usage: vmtrace one", fp);	/* no newline */
}

static void usage_none(FILE *fp)
{
}

/* What vt_cli_usage(@usage, 0) prints on stderr (returns VT_EXIT_USAGE). */
static const char *usage_err(void (*usage)(FILE *fp))
{
	static char buf[512];
	const char *tmp = getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp";
	char path[256];
	int fd, saved;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/usage.txt", tmp);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	CHECK(vt_cli_usage(usage, 0) == VT_EXIT_USAGE);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

int main(void)
{
	uint64_t u = 7;
	int64_t i = 7;

	CHECK(vt_parse_u64("42", 0, 100, &u) == 0 && u == 42);
	CHECK(vt_parse_u64("0x5f0", 0, 0xffff, &u) == 0 && u == 0x5f0);
	CHECK(vt_parse_u64("010", 0, 100, &u) == 0 && u == 10);	/* not octal */
	CHECK(vt_parse_u64("18446744073709551615", 0, UINT64_MAX, &u) == 0 && u == UINT64_MAX);
	u = 7;
	CHECK(vt_parse_u64("18446744073709551616", 0, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_u64("-1", 0, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_u64("+1", 0, 100, &u) == -1);
	CHECK(vt_parse_u64(" 1", 0, 100, &u) == -1);
	CHECK(vt_parse_u64("1 ", 0, 100, &u) == -1);
	CHECK(vt_parse_u64("12k", 0, 100, &u) == -1);
	CHECK(vt_parse_u64("", 0, 100, &u) == -1);
	CHECK(vt_parse_u64(NULL, 0, 100, &u) == -1);
	CHECK(vt_parse_u64("0x", 0, 100, &u) == -1);
	CHECK(vt_parse_u64("101", 0, 100, &u) == -1);
	CHECK(vt_parse_u64("0", 1, 100, &u) == -1);
	CHECK(u == 7);

	/* sizes: a unit, or the command's own for a bare number */
	CHECK(vt_parse_size("4096", 1024, 1, UINT64_MAX, &u) == 0 && u == 4096ull * 1024);
	CHECK(vt_parse_size("64K", 1, 1, UINT64_MAX, &u) == 0 && u == 65536);
	CHECK(vt_parse_size("4m", 1024, 1, UINT64_MAX, &u) == 0 && u == 4ull << 20);
	CHECK(vt_parse_size("2GiB", 1, 1, UINT64_MAX, &u) == 0 && u == 2ull << 30);
	CHECK(vt_parse_size("512B", 1024, 1, UINT64_MAX, &u) == 0 && u == 512);
	CHECK(vt_parse_size("0x10", 1, 1, UINT64_MAX, &u) == 0 && u == 16);
	u = 7;
	CHECK(vt_parse_size("12x", 1024, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_size("K", 1024, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_size("1K", 1, 2048, UINT64_MAX, &u) == -1);	/* below min */
	CHECK(vt_parse_size("17179869184G", 1, 1, UINT64_MAX, &u) == -1);	/* overflows */
	CHECK(vt_parse_size("-1K", 1, 0, UINT64_MAX, &u) == -1);
	CHECK(u == 7);
	/* every spelling of each unit, in either case */
	CHECK(vt_parse_size("3kb", 1, 1, UINT64_MAX, &u) == 0 && u == 3 << 10);
	CHECK(vt_parse_size("3KiB", 1, 1, UINT64_MAX, &u) == 0 && u == 3 << 10);
	CHECK(vt_parse_size("3M", 1, 1, UINT64_MAX, &u) == 0 && u == 3 << 20);
	CHECK(vt_parse_size("3MB", 1, 1, UINT64_MAX, &u) == 0 && u == 3 << 20);
	CHECK(vt_parse_size("3mib", 1, 1, UINT64_MAX, &u) == 0 && u == 3 << 20);
	CHECK(vt_parse_size("3g", 1, 1, UINT64_MAX, &u) == 0 && u == 3ull << 30);
	CHECK(vt_parse_size("3Gb", 1, 1, UINT64_MAX, &u) == 0 && u == 3ull << 30);
	CHECK(vt_parse_size("0X10", 1, 1, UINT64_MAX, &u) == 0 && u == 16);
	u = 7;
	CHECK(vt_parse_size("3KiBs", 1, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_size("4M", 1, 1, 4ull << 20, &u) == 0 && u == 4 << 20);
	CHECK(vt_parse_size("5M", 1, 1, 4ull << 20, &u) == -1);	/* above max */
	CHECK(vt_parse_size(NULL, 1, 0, UINT64_MAX, &u) == -1);
	/* a number longer than any size's (31 characters and more) */
	CHECK(vt_parse_size("0000000000000000000000000000000001K", 1, 0, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_size("000000000000000000000000000001K", 1, 0, UINT64_MAX, &u) == 0 && u == 1024);
	u = 7;
	CHECK(vt_parse_ms("2min", 1, 1, UINT64_MAX, &u) == 0 && u == 120000);
	u = 7;
	CHECK(vt_parse_ms("3s", 1, 1, 2000, &u) == -1);		/* above max */
	CHECK(vt_parse_ms("x1", 1, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms("1e3", 1, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms("99999999999999999999s", 1, 1, UINT64_MAX, &u) == -1);	/* past 2^64 */
	CHECK(vt_parse_ms(NULL, 1, 1, UINT64_MAX, &u) == -1);
	CHECK(u == 7);
	/* durations */
	CHECK(vt_parse_ms("250", 1, 1, UINT64_MAX, &u) == 0 && u == 250);
	CHECK(vt_parse_ms("2", 1000, 1, UINT64_MAX, &u) == 0 && u == 2000);
	CHECK(vt_parse_ms("2s", 1, 1, UINT64_MAX, &u) == 0 && u == 2000);
	CHECK(vt_parse_ms("500ms", 1000, 1, UINT64_MAX, &u) == 0 && u == 500);
	CHECK(vt_parse_ms("1m", 1, 1, UINT64_MAX, &u) == 0 && u == 60000);
	CHECK(vt_parse_ms("0.5", 1000, 1, UINT64_MAX, &u) == 0 && u == 500);
	CHECK(vt_parse_ms("1.5s", 1, 1, UINT64_MAX, &u) == 0 && u == 1500);
	u = 7;
	CHECK(vt_parse_ms("1h", 1, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms("0s", 1, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms("1.2.3", 1, 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms("-1", 1, 0, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms(".5", 1000, 1, UINT64_MAX, &u) == -1);
	CHECK(u == 7);

	CHECK(vt_parse_i64("-123", &i) == 0 && i == -123);
	CHECK(vt_parse_i64("-0x10", &i) == 0 && i == -16);
	CHECK(vt_parse_i64("9223372036854775807", &i) == 0 && i == INT64_MAX);
	i = 7;
	CHECK(vt_parse_i64("9223372036854775808", &i) == -1);
	CHECK(vt_parse_i64("-", &i) == -1);
	CHECK(vt_parse_i64("--1", &i) == -1);
	CHECK(vt_parse_i64("1x", &i) == -1);
	CHECK(i == 7);

	CHECK(vt_parse_hz("2096001000", &u) == 0 && u == 2096001000ULL);
	CHECK(vt_parse_hz("1000", &u) == 0 && u == VT_CLI_MIN_HZ);
	CHECK(vt_parse_hz("999", &u) == -1);
	CHECK(vt_parse_hz("2.1e9", &u) == -1);
	CHECK(vt_parse_hz("abc", &u) == -1);

	/* a unit is letters: other trailing characters are junk */
	CHECK(vt_parse_size("12~", 1, 0, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_size("12_", 1, 0, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_size("12@", 1, 0, UINT64_MAX, &u) == -1);
	/* "0x"/"0X" then hex letters: a number; "0" then letters: a unit */
	CHECK(vt_parse_size("0Xff", 1, 0, UINT64_MAX, &u) == 0 && u == 255);
	CHECK(vt_parse_size("0xff", 1, 0, UINT64_MAX, &u) == 0 && u == 255);
	u = 7;
	CHECK(vt_parse_size("0kb", 1, 0, UINT64_MAX, &u) == 0 && u == 0);
	/* ms past what a double holds exactly: the rounded value is checked
	 * against the range too (2^60 - 1 and 2^60 + 1 both read as 2^60) */
	CHECK(vt_parse_ms("1152921504606846975", 1, 1, (1ULL << 60) - 1, &u) == -1);
	CHECK(vt_parse_ms("1152921504606846977", 1, (1ULL << 60) + 1, UINT64_MAX, &u) == -1);
	CHECK(vt_parse_ms("1152921504606846976", 1, 1, UINT64_MAX, &u) == 0 && u == 1ULL << 60);
	CHECK(vt_parse_ms("20000000000000000000", 1, 1, UINT64_MAX, &u) == -1);	/* > 2^64 */
	CHECK(vt_parse_ms("18400000000000000000", 1, 1, UINT64_MAX, &u) == -1);	/* > 1.8e19 */
	CHECK(vt_parse_ms("17900000000000000000", 1, 1, UINT64_MAX, &u) == 0 &&
	      u == 17900000000000000000ULL);

	/* a wrong command line: the usage's first line and where the rest is */
	vt_err_set_command("two");
	CHECK_STR(usage_err(usage_two),
		  "usage: vmtrace two [-x]\nTry 'vmtrace two --help' for more information.\n");
	CHECK_STR(usage_err(usage_one),
		  "usage: vmtrace one\nTry 'vmtrace two --help' for more information.\n");
	CHECK_STR(usage_err(usage_none), "Try 'vmtrace two --help' for more information.\n");
	return check_done();
}
