/*
 * t-tscns.c - lib/tsc.h's division-free ticks -> ns conversion (vt_tsc_ns)
 * against the 128-bit division (vt_tsc_to_ns) over the whole 64-bit range:
 * edge values (0, 1, powers of two and their neighbours, multiples of hz
 * and their neighbours, UINT64_MAX) and random ones, for common TSC
 * frequencies, odd ones, 1 GHz (identity), below 1 GHz (saturation) and
 * extremes.  For tests/run (exit 0 pass).
 */
#include <stdint.h>
#include <stdio.h>
#include "check.h"
#include "tsc.h"

#define RANDOM_PER_HZ	200000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, enough for test values */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static unsigned long nbad;

static void one(const struct vt_tsc_ns *c, uint64_t hz, uint64_t tsc)
{
	uint64_t got = vt_tsc_ns(c, tsc), want = vt_tsc_to_ns(tsc, hz);

	if (got != want && nbad++ < 10)
		fprintf(stderr, "hz %llu tsc %llu: got %llu want %llu\n", (unsigned long long)hz,
			(unsigned long long)tsc, (unsigned long long)got, (unsigned long long)want);
}

static void check_hz(uint64_t hz)
{
	struct vt_tsc_ns c;

	CHECK(vt_tsc_ns_init(&c, hz) == 0);
	for (int b = 0; b < 64; b++)
		for (int d = -2; d <= 2; d++)
			one(&c, hz, (1ull << b) + (uint64_t)(int64_t)d);
	for (uint64_t k = 0; k < 64; k++) {
		uint64_t m = hz * k;

		one(&c, hz, m);
		one(&c, hz, m - 1);
		one(&c, hz, m + 1);
		one(&c, hz, UINT64_MAX - k);
		one(&c, hz, UINT64_MAX / (k + 1));
	}
	for (int i = 0; i < RANDOM_PER_HZ; i++) {
		uint64_t r = rnd();

		one(&c, hz, r);
		one(&c, hz, r >> (r & 63));	/* small values too */
	}
}

int main(void)
{
	static const uint64_t hzs[] = {
		2000000000ull, 2400000000ull, 2399999999ull, 2096001000ull, 3000000001ull,
		1000000000ull, 999999999ull, 1000000001ull, 2992968000ull, 4294967296ull,
		4294967295ull, 8589934591ull, 100000000ull, 1, 2, 3, 7, 1000003,
		UINT64_MAX, 1ull << 63, (1ull << 63) - 1,
	};
	struct vt_tsc_ns c;

	CHECK(vt_tsc_ns_init(&c, 0) == -1);
	CHECK(vt_tsc_to_ns(123, 0) == 0);
	for (size_t i = 0; i < sizeof(hzs) / sizeof(hzs[0]); i++)
		check_hz(hzs[i]);
	for (int i = 0; i < 200; i++) {
		uint64_t hz = rnd() >> (rnd() & 63);

		check_hz(hz ? hz : 1);
	}
	CHECK(nbad == 0);
	/* 1 GHz is the identity (ns-clock inputs use it) */
	CHECK(vt_tsc_ns_init(&c, VT_NS_PER_SEC) == 0);
	CHECK(vt_tsc_ns(&c, UINT64_MAX) == UINT64_MAX && vt_tsc_ns(&c, 12345) == 12345);
	return check_done();
}
