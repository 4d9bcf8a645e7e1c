/*
 * t-clockmap.c - align's clock maps (align/clock.c), the one conversion of
 * every stamp merge writes: host TSC, ns and guest TSC (through a model of
 * several segments and vCPUs) must give exactly floor(host_tsc * 1e9 / hz),
 * the 128-bit reference (lib/tsc.h's vt_tsc_to_ns), over the whole 64-bit
 * range, and a guest stamp no model covers maps through the fixed offset.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "align/align.h"
#include "align/internal.h"

#define NRAND		200000

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd64(void)
{
	return check_xorshift(&rnd_state);
}

/* a random value in [lo, hi), spread over its bit lengths */
static uint64_t rnd_in(uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo, r = rnd64();
	unsigned bits = (unsigned)(rnd64() % 64) + 1;

	if (bits < 64)
		r &= (1ull << bits) - 1;
	return lo + (span ? r % span : 0);
}

static const uint64_t hzs[] = {
	1, 1000, 999999999ull, 1000000000ull, 1000000001ull, 2096001000ull,
	2445430000ull, 3000000000ull, 4294967296ull, 0x7fffffffffffffffull, UINT64_MAX,
};

/* host and ns maps: every edge and random stamp against the reference */
static void test_host(void)
{
	for (size_t h = 0; h < sizeof(hzs) / sizeof(hzs[0]); h++) {
		struct align_clock c = { 0 };
		struct align_cursor cur;
		uint64_t bad = 0;

		CHECK(align_clock_init(&c, ALIGN_CLOCK_HOST, hzs[h]) == 0);
		align_cursor_init(&cur, &c, ALIGN_VCPU_ANY);
		for (unsigned b = 0; b < 64; b++)
			for (int d = -1; d <= 1; d++) {
				uint64_t t = (1ull << b) + (uint64_t)(int64_t)d;

				bad += align_clock_ns(&cur, t) != vt_tsc_to_ns(t, hzs[h]);
			}
		bad += align_clock_ns(&cur, UINT64_MAX) != vt_tsc_to_ns(UINT64_MAX, hzs[h]);
		for (int i = 0; i < NRAND / 10; i++) {
			uint64_t t = rnd_in(0, UINT64_MAX);

			bad += align_clock_ns(&cur, t) != vt_tsc_to_ns(t, hzs[h]);
			bad += align_clock_span_ns(&c, t) != vt_tsc_to_ns(t, hzs[h]);
		}
		{	/* merge's batch path, strided as the sorter calls it */
			uint64_t raw[2 * 64], ns[2 * 64];

			for (int i = 0; i < 64; i++)
				raw[2 * i] = i < 32 ? (1ull << i) * 3 + (uint64_t)i : rnd_in(0, UINT64_MAX);
			align_clock_ns_batch(&cur, raw, ns, 64, 2 * sizeof(uint64_t));
			for (int i = 0; i < 64; i++)
				bad += ns[2 * i] != vt_tsc_to_ns(raw[2 * i], hzs[h]);
		}
		if (bad)
			fprintf(stderr, "hz %llu: %llu stamps off\n", (unsigned long long)hzs[h],
				(unsigned long long)bad);
		CHECK(bad == 0);
	}
	{
		struct align_clock c = { 0 };
		struct align_cursor cur;

		CHECK(align_clock_init(&c, ALIGN_CLOCK_NS, 0) == 0);
		align_cursor_init(&cur, &c, 0);
		CHECK(align_clock_ns(&cur, 0) == 0);
		CHECK(align_clock_ns(&cur, 123456789) == 123456789);
		CHECK(align_clock_ns(&cur, UINT64_MAX) == UINT64_MAX);
	}
	{
		struct align_clock c = { 0 };

		CHECK(align_clock_init(&c, ALIGN_CLOCK_HOST, 0) < 0);	/* no frequency */
	}
}

/*
 * A guest of two vCPUs whose offsets change twice, the segments together
 * covering host TSC 1 .. 2^64 - 2^42: every guest stamp of each segment,
 * in stream order, maps to exactly floor((g - offset) * 1e9 / hz).
 */
#define NSEG	3
static const uint64_t seg_start[NSEG] = { 1, 1ull << 62, 1ull << 63 };
static const int64_t seg_off[2][NSEG] = {
	{ 1000, 1ll << 40, 1ll << 41 },
	{ 77777, (1ll << 40) + 5, (1ll << 41) + 123456789 },
};

static uint64_t seg_end(int k)
{
	return k + 1 < NSEG ? seg_start[k + 1] : UINT64_MAX - (1ull << 42);
}

static void test_guest(uint64_t hz)
{
	struct align_offset_event ev[2 * NSEG];
	struct align_input in;
	struct align_model *m;
	struct align_clock c = { 0 };
	uint64_t bad = 0, n = 0;

	for (int v = 0; v < 2; v++)
		for (int k = 0; k < NSEG; k++)
			ev[v * NSEG + k] = (struct align_offset_event){
				.tsc_host = seg_start[k], .vcpu = v,
				.prev_offset_tsc = k ? seg_off[v][k - 1] : 0,
				.next_offset_tsc = seg_off[v][k] };
	memset(&in, 0, sizeof(in));
	in.host_hz = hz;
	in.offsets = ev;
	in.n_offsets = 2 * NSEG;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_segments(m) == 2 * NSEG);
	CHECK(align_clock_init(&c, ALIGN_CLOCK_GUEST, hz) == 0);
	align_clock_set_model(&c, m);
	for (int v = 0; v < 2; v++) {
		struct align_cursor cur;

		align_cursor_init(&cur, &c, v);
		for (int k = 0; k < NSEG; k++) {
			uint64_t lo = seg_start[k], hi = seg_end(k), h = lo;
			uint64_t step = (hi - lo) / (NRAND / NSEG);

			/* stream order: increasing host (and so guest) time,
			 * the segment's two edges included */
			while (h < hi) {
				uint64_t g = h + (uint64_t)seg_off[v][k];

				bad += align_clock_ns(&cur, g) != vt_tsc_to_ns(h, hz);
				n++;
				if (h == hi - 1)
					break;
				h += 1 + rnd_in(0, step);
				if (h >= hi || h < lo)
					h = hi - 1;
			}
		}
	}
	if (bad)
		fprintf(stderr, "guest map at hz %llu: %llu of %llu stamps off\n",
			(unsigned long long)hz, (unsigned long long)bad, (unsigned long long)n);
	CHECK(bad == 0);
	CHECK(c.unmapped == 0);
	CHECK(n > NRAND);
	align_model_free(m);
}

/* no model: host = guest - offset; with a model, what no segment covers is
 * counted and mapped the same way */
static void test_fallback(void)
{
	struct align_clock c = { 0 };
	struct align_cursor cur;
	const uint64_t hz = 2096001000ull;

	CHECK(align_clock_init(&c, ALIGN_CLOCK_GUEST, hz) == 0);
	c.offset_tsc = -5000;
	align_cursor_init(&cur, &c, 0);
	CHECK(align_clock_ns(&cur, 1000000) == vt_tsc_to_ns(1005000, hz));
	CHECK(c.unmapped == 0);	/* no model: nothing to miss */
}

/* A segment no source could place (a vCPU's first, as when its markers
 * admit no map and nothing else covers it): its stamps are counted in
 * .unmapped and placed with the clock's fixed offset; the next segment
 * maps exactly again. */
static void test_none_segment(void)
{
	struct align_offset_event ev[NSEG];
	const uint64_t hz = 2096001000ull;
	struct align_clock c = { 0 };
	struct align_cursor cur;
	struct align_input in;
	struct align_model *m;
	size_t first, last;
	uint64_t g;

	for (int k = 0; k < NSEG; k++)
		ev[k] = (struct align_offset_event){ .tsc_host = seg_start[k], .vcpu = 0,
			.prev_offset_tsc = k ? seg_off[0][k - 1] : 0, .next_offset_tsc = seg_off[0][k] };
	memset(&in, 0, sizeof(in));
	in.host_hz = hz;
	in.offsets = ev;
	in.n_offsets = NSEG;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_vcpu_range(m, 0, &first, &last) == 0);
	m->cseg[first].none = 1;
	CHECK(align_clock_init(&c, ALIGN_CLOCK_GUEST, hz) == 0);
	align_clock_set_model(&c, m);
	c.offset_tsc = 7;
	align_cursor_init(&cur, &c, 0);
	g = seg_start[0] + 1000 + (uint64_t)seg_off[0][0];
	CHECK(align_clock_ns(&cur, g) == vt_tsc_to_ns(g - 7, hz));
	CHECK(c.unmapped == 1);
	g = seg_start[1] + 1000 + (uint64_t)seg_off[0][1];
	CHECK(align_clock_ns(&cur, g) == vt_tsc_to_ns(seg_start[1] + 1000, hz));
	CHECK(c.unmapped == 1);
	align_model_free(m);
}

int main(void)
{
	test_host();
	test_guest(2096001000ull);
	test_guest(2445430000ull);
	test_guest(1000000000ull);
	test_guest(3ull);
	test_fallback();
	test_none_segment();
	return check_done();
}
