/*
 * t-filekind.c - what a file is by its first bytes (lib/filekind.c), as a
 * command given the wrong file says it: each kind vmtrace knows by its
 * magic, a magic cut short is not that kind, the compressed formats by
 * their exact signature bytes, JSON and HTML after leading white space (a
 * newline first too: the byte of Perfetto's first tag; a Perfetto packet
 * whose length byte is '{' or '<' is still one), white space alone or
 * anything else "not a format vmtrace knows".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "filekind.h"

#define UNKNOWN "not a format vmtrace knows"

/* the kind of the @n bytes of @s */
static const char *kind(const char *s, size_t n)
{
	return vt_file_kind((const uint8_t *)s, n);
}

#define KIND(lit) kind(lit, sizeof(lit) - 1)

int main(void)
{
	static const char td[] = "\x17\x08\x44tracing6";

	CHECK_STR(kind("", 0), "an empty file");
	CHECK_STR(KIND(td), "a trace.dat file");
	CHECK(vt_file_is_tracedat((const uint8_t *)td, sizeof(td) - 1));
	CHECK(!vt_file_is_tracedat((const uint8_t *)td, 9));	/* "\x17\x08Dtracin" */
	CHECK_STR(kind(td, 9), UNKNOWN);
	CHECK_STR(KIND("SQLite format 3\0"), "an SQLite database (vmtrace export output?)");
	CHECK_STR(KIND("SQLite format"), UNKNOWN);
	CHECK_STR(KIND("VTMK\1\0\0\0"), "a markers.dat file (guest sync markers)");
	CHECK_STR(KIND("VTM"), UNKNOWN);
	CHECK_STR(KIND("VTSF\1"), "a vmtrace stream capture (vmtrace unpack rebuilds its directory)");
	CHECK_STR(KIND("VTDC\1"), "a debugcon dump (vmtrace debugcon decodes it)");
	CHECK_STR(KIND("Ftrace!\0\0\0"), "a uftrace info file (give its directory)");
	CHECK_STR(KIND("\x7f" "ELF\2\1\1"), "an ELF executable or object");
	CHECK_STR(KIND("\x7f" "EL"), UNKNOWN);
	CHECK_STR(KIND("\x1f\x8b\x08\0"), "a gzip-compressed file");
	CHECK_STR(KIND("\x1f"), UNKNOWN);
	CHECK_STR(KIND("\x1f\x8c"), UNKNOWN);
	CHECK_STR(KIND("\x28\xb5\x2f\xfd\x04"), "a zstd-compressed file");
	CHECK_STR(KIND("\x28\xb5\x2f"), UNKNOWN);
	CHECK_STR(KIND("\x28\xb5\x2f\xfe"), UNKNOWN);
	CHECK_STR(KIND("\x28\xb5\x30\xfd"), UNKNOWN);
	CHECK_STR(KIND("\x28\xb6\x2f\xfd"), UNKNOWN);
	CHECK_STR(KIND("\x0a\x10\x08\x01"), "a Perfetto trace (vmtrace merge output?)");
	/* a packet 123 bytes long ('{') or 60 ('<'): still Perfetto, not text */
	CHECK_STR(KIND("\x0a\x7b\x08\x01\x10"), "a Perfetto trace (vmtrace merge output?)");
	CHECK_STR(KIND("\x0a\x3c\x08\x01"), "a Perfetto trace (vmtrace merge output?)");
	CHECK_STR(KIND("\x0a\x20\x20\x20"), "a Perfetto trace (vmtrace merge output?)");
	CHECK_STR(KIND("{\"traceEvents\""), "a JSON file (a Chrome trace from vmtrace merge?)");
	CHECK_STR(KIND(" \r\n\t[{"), "a JSON file (a Chrome trace from vmtrace merge?)");
	CHECK_STR(KIND("<!DOCTYPE html>"), "an HTML or XML file (a vmtrace report --html page?)");
	CHECK_STR(KIND("\n  <html>"), "an HTML or XML file (a vmtrace report --html page?)");
	CHECK_STR(KIND(" \t\r\n"), UNKNOWN);
	CHECK_STR(KIND("# vmtrace-meta 1"), UNKNOWN);
	CHECK_STR(KIND("hello"), UNKNOWN);
	return check_done();
}
