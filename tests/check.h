/*
 * check.h - the assertion macros of vmtrace's C unit tests: a failed CHECK
 * prints file:line and the expression, and the test exits non-zero at
 * check_done().
 */
#ifndef VT_CHECK_H
#define VT_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(c) do { \
	check_count++; \
	if (!(c)) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	check_count++; \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: CHECK_STR failed: %s = \"%s\", want \"%s\"\n", \
			__FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} \
} while (0)

/* A reproducible pseudo-random sequence for the tests (xorshift64): the
 * next value of *@state, which must start non-zero. */
static inline uint64_t check_xorshift(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static inline int check_done(void)
{
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
