/*
 * cli.c - number parsing for options and environment variables (see
 * cli.h).  Any thread; no allocation, no error message; also linked into
 * the Linux mcount runtime, so libc only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
	if (errno || *end || v < min || v > max)	/* a digit first: end > s */
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
	if (errno || *end)	/* a digit (after '-') first: end > s */
		return -1;
	*out = v;
	return 0;
}

/* Split @s into its number (into @num, @sz bytes) and its unit suffix
 * (returned, "" when none): the suffix is the trailing letters. */
static const char *cli_split_unit(const char *s, char *num, size_t sz)
{
	size_t n = s ? strlen(s) : 0, k = n;

	while (k && ((s[k - 1] >= 'a' && s[k - 1] <= 'z') || (s[k - 1] >= 'A' && s[k - 1] <= 'Z')))
		k--;
	/* "0x1f": hex digits are not a unit */
	if (k == 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		k = n;
	if (!s || k >= sz)
		return NULL;
	memcpy(num, s, k);
	num[k] = '\0';
	return s + k;
}

int vt_parse_size(const char *s, uint64_t unit, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[32];
	const char *u = cli_split_unit(s, num, sizeof(num));
	uint64_t v, mul;

	if (!u)
		return -1;
	if (!*u)
		mul = unit;
	else if (!strcasecmp(u, "b"))
		mul = 1;
	else if (!strcasecmp(u, "k") || !strcasecmp(u, "kb") || !strcasecmp(u, "kib"))
		mul = 1ULL << 10;
	else if (!strcasecmp(u, "m") || !strcasecmp(u, "mb") || !strcasecmp(u, "mib"))
		mul = 1ULL << 20;
	else if (!strcasecmp(u, "g") || !strcasecmp(u, "gb") || !strcasecmp(u, "gib"))
		mul = 1ULL << 30;
	else
		return -1;
	if (vt_parse_u64(num, 0, UINT64_MAX / mul, &v) < 0 || v * mul < min || v * mul > max)
		return -1;
	*out = v * mul;
	return 0;
}

int vt_parse_ms(const char *s, uint64_t unit_ms, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[32];
	const char *u = cli_split_unit(s, num, sizeof(num));
	uint64_t v, mul;
	double d;

	if (!u)
		return -1;
	if (!*u)
		mul = unit_ms;
	else if (!strcmp(u, "ms"))
		mul = 1;
	else if (!strcmp(u, "s"))
		mul = 1000;
	else if (!strcmp(u, "m") || !strcmp(u, "min"))
		mul = 60000;
	else
		return -1;
	/* a decimal fraction is fine ("0.5" seconds): digits, one '.', digits */
	if (!strchr("0123456789", num[0]) || strspn(num, "0123456789.") != strlen(num) ||
	    strchr(num, '.') != strrchr(num, '.'))
		return -1;
	d = strtod(num, NULL) * (double)mul;
	if (!(d >= (double)min && d <= (double)max && d < 1.8e19))
		return -1;
	v = (uint64_t)(d + 0.5);
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int vt_parse_hz(const char *s, uint64_t *hz)
{
	return vt_parse_u64(s, VT_CLI_MIN_HZ, UINT64_MAX, hz);
}

int vt_cli_tsc_hz(const char *s, uint64_t *hz)
{
	if (vt_parse_hz(s, hz) == 0)
		return 0;
	vt_error("bad --tsc-hz '%s' (Hz, at least %llu)", s, VT_CLI_MIN_HZ);
	return -1;
}

int vt_cli_usage(void (*usage)(FILE *fp), int help)
{
	char *text = NULL, *nl;
	size_t len = 0;
	FILE *mem;

	if (help) {
		usage(stdout);
		return VT_EXIT_OK;
	}
	/* a wrong command line: the synopsis (the usage's first line) and
	 * where the rest is, not the whole help */
	mem = open_memstream(&text, &len);
	if (!mem) {
		usage(stderr);
		return VT_EXIT_USAGE;
	}
	usage(mem);
	fclose(mem);	/* text is set now, "" if nothing was written */
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	if (*text)
		fprintf(stderr, "%s\n", text);
	fprintf(stderr, "Try 'vmtrace %s --help' for more information.\n",
		vt_err_command("<command>"));
	free(text);
	return VT_EXIT_USAGE;
}
