/*
 * filekind.c - recognises the kinds of file a vmtrace user holds by their
 * first bytes, so that a command given the wrong one says what it is
 * instead of reporting a corrupt header (see filekind.h).
 */
#include <string.h>
#include "filekind.h"

static const uint8_t td_magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

int vt_file_is_tracedat(const uint8_t *head, size_t n)
{
	return n >= sizeof(td_magic) && !memcmp(head, td_magic, sizeof(td_magic));
}

static int starts(const uint8_t *head, size_t n, const char *s)
{
	size_t l = strlen(s);

	return n >= l && !memcmp(head, s, l);
}

/* every byte text: printable, white space or UTF-8's (a Perfetto trace's
 * first bytes hold field tags and varints under 0x20) */
static int is_text(const uint8_t *head, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (head[i] < 0x20 && head[i] != '\t' && head[i] != '\n' && head[i] != '\r')
			return 0;
	return 1;
}

const char *vt_file_kind(const uint8_t *head, size_t n)
{
	size_t i = 0;

	if (!n)
		return "an empty file";
	if (vt_file_is_tracedat(head, n))
		return "a trace.dat file";
	if (starts(head, n, "SQLite format 3"))
		return "an SQLite database (vmtrace export output?)";
	if (starts(head, n, "VTMK"))
		return "a markers.dat file (guest sync markers)";
	if (starts(head, n, "VTSF"))
		return "a vmtrace stream capture (vmtrace unpack rebuilds its directory)";
	if (starts(head, n, "VTDC"))
		return "a debugcon dump (vmtrace debugcon decodes it)";
	if (starts(head, n, "Ftrace!"))
		return "a uftrace info file (give its directory)";
	if (starts(head, n, "\x7f" "ELF"))
		return "an ELF executable or object";
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return "a gzip-compressed file";
	if (n >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd)
		return "a zstd-compressed file";
	/* text first: a JSON or HTML file may start with a newline, the byte
	 * of Perfetto's first tag */
	while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i < n && (head[i] == '{' || head[i] == '[') && is_text(head, n))
		return "a JSON file (a Chrome trace from vmtrace merge?)";
	if (i < n && head[i] == '<' && is_text(head, n))
		return "an HTML or XML file (a vmtrace report --html page?)";
	/* vmtrace merge's Perfetto output: TracePacket fields (tag 0x0a) */
	if (head[0] == 0x0a)
		return "a Perfetto trace (vmtrace merge output?)";
	return "not a format vmtrace knows";
}
