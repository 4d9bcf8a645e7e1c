/*
 * cli.c - number parsing for options and environment variables (see
 * cli.h).  Any thread; no allocation, no error message; also linked into
 * the Linux mcount runtime, so libc only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "err.h"

#define CLI_DEC		10
#define CLI_HEX		16

/* The base of @s (after any sign): 16 for a 0x/0X prefix, else 10. */
static int cli_base(const char *s)
{
	return (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? CLI_HEX : CLI_DEC;
}

int vt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull would skip spaces and accept a sign (negating!) */
	if (!s || !*s || !strchr("0123456789", *s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, cli_base(s));
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int vt_parse_i64(const char *s, int64_t *out)
{
	const char *digits = s && *s == '-' ? s + 1 : s;
	long long v;
	char *end;

	if (!digits || !*digits || !strchr("0123456789", *digits))
		return -1;
	errno = 0;
	v = strtoll(s, &end, cli_base(digits));
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

int vt_parse_hz(const char *s, uint64_t *hz)
{
	return vt_parse_u64(s, VT_CLI_MIN_HZ, UINT64_MAX, hz);
}

int vt_cli_usage(void (*usage)(FILE *fp), int help)
{
	usage(help ? stdout : stderr);
	return help ? VT_EXIT_OK : VT_EXIT_USAGE;
}
