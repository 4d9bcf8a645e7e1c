/*
 * utf8.c - UTF-8 validation, cutting on a character boundary and
 * replacement of invalid bytes (lib/utf8.h), for every writer of names and
 * strings (merge's sinks through its string table, vmtrace.meta, the
 * Python tracer's names).  Pure code: no allocation, no state.
 */
#include <string.h>
#include "utf8.h"

/* The sequence at @s (@n > 0 bytes left): its length 1..4 when it is a
 * whole valid character; 0 when its first byte(s) cannot start one; -1
 * when it is a valid beginning the end of the input cuts. */
static int seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int len;

	/* c >= 0x80: every caller takes ASCII bytes itself */
	if (c < 0xc2)
		return 0;		/* continuation byte or overlong lead */
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

int vt_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		int l = seq_len(p + i, n - i);

		if (l <= 0)
			return 0;
		i += (size_t)l;
	}
	return 1;
}

size_t vt_utf8_cut(const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	if (max > n)
		max = n;
	while (i < max) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		int l = seq_len(p + i, n - i);

		if (l <= 0 || i + (size_t)l > max)
			break;
		i += (size_t)l;
	}
	return i;
}

size_t vt_utf8_clean(char *dst, size_t cap, const char *s, size_t n)
{
	static const char repl[VT_UTF8_REPL_LEN] = { (char)0xef, (char)0xbf, (char)0xbd };
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	if (!cap)
		return 0;
	while (i < n) {
		int l = p[i] < 0x80 ? 1 : seq_len(p + i, n - i);
		const char *from = s + i;
		size_t take = (size_t)l;

		if (l < 0)
			break;		/* cut by the end of the input: dropped */
		if (l == 0) {
			from = repl;	/* one invalid byte */
			take = VT_UTF8_REPL_LEN;
			l = 1;
		}
		if (o + take > cap - 1)
			break;
		memcpy(dst + o, from, take);
		o += take;
		i += (size_t)l;
	}
	dst[o] = 0;
	return o;
}
