/*
 * utf8.h - the one UTF-8 sanitizer of vmtrace: every writer of text other
 * programs parse (Chrome JSON, Perfetto strings, vmtrace.meta, merge's
 * string table) makes its strings valid UTF-8 here.  Names come from
 * places that cut bytes, not characters (the kernel's 15-byte comm, a
 * tracer's fixed name buffer): a sequence cut by the end of the string is
 * dropped, any other invalid byte becomes U+FFFD.  Pure functions, no
 * allocation, no libc but memcpy.
 */
#ifndef VT_UTF8_H
#define VT_UTF8_H

#include <stddef.h>

/* Bytes U+FFFD takes in UTF-8: the most one invalid input byte grows. */
#define VT_UTF8_REPL_LEN	3

/* 1 if @s[0..@n) is valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), else 0. */
int vt_utf8_valid(const char *s, size_t n);

/* The longest length <= @max that ends @s[0..@n) on a character boundary
 * (@s valid UTF-8 up to there): where to cut a string to at most @max
 * bytes.  Also drops a sequence the end of @s cuts (@max >= @n). */
size_t vt_utf8_cut(const char *s, size_t n, size_t max);

/* Write @s[0..@n) into @dst (@cap bytes, cap >= 1) as valid UTF-8: each
 * invalid byte replaced by U+FFFD, a sequence cut by the end of @s
 * dropped, the result cut on a character boundary to fit cap - 1 bytes
 * and NUL-terminated (NULs of @s are kept: they are valid UTF-8).
 * Returns the length written. */
size_t vt_utf8_clean(char *dst, size_t cap, const char *s, size_t n);

#endif
