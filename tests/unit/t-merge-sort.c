/*
 * t-merge-sort.c - merge's sorter (merge/sort.c): a k-way merge of streams
 * that are each in time order.  Checked: the output is in time order and
 * holds every event once, each stream's events in their own order; ties
 * come out in the same order in every run; stamps are converted once
 * through the stream's clock map (ns identity, host TSC at 2 GHz); a
 * stream that steps back is held at its last time; batch streams
 * (next_batch) and single-event streams (next) mix; the sorter sets src
 * and clears the flow fields; merge_sort_free closes every stream.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "merge/merge.h"

#define MAX_EVS		1000

struct tstream {
	struct merge_stream s;	/* first */
	const uint64_t *raw;	/* stamps in the clock's unit */
	int nr, pos;
	int id;
	int *closed;
};

static struct align_clock clock_ns, clock_tsc;
static struct merge_sorter sorter;	/* zero-filled: empty */

static int ts_next(struct merge_stream *s, struct merge_event *ev)
{
	struct tstream *t = (struct tstream *)s;

	if (t->pos >= t->nr)
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->ts_raw = t->raw[t->pos];
	ev->name = (uint32_t)t->pos;	/* its index in the stream */
	ev->track = (uint32_t)t->id;
	ev->flow_id = 99;		/* stale: the sorter clears it */
	ev->flow_start_id = 98;
	t->pos++;
	return 1;
}

static int ts_next_batch(struct merge_stream *s, struct merge_event *ev, int max)
{
	int n = 0;

	while (n < max && ts_next(s, &ev[n]) > 0)
		n++;
	return n;
}

static void ts_close(struct merge_stream *s)
{
	struct tstream *t = (struct tstream *)s;

	(*t->closed)++;
	free(t);
}

static const struct merge_stream_ops ops_one = { .next = ts_next, .close = ts_close };
static const struct merge_stream_ops ops_batch = { .next_batch = ts_next_batch, .close = ts_close };

static void add(int id, const uint64_t *raw, int nr, int batch, struct align_clock *c,
		int *closed)
{
	struct tstream *t = calloc(1, sizeof(*t));

	CHECK(t != NULL);
	if (!t)
		return;
	t->s.ops = batch ? &ops_batch : &ops_one;
	t->s.clock = c;
	t->s.vcpu = ALIGN_VCPU_ANY;
	t->s.src = (uint16_t)(100 + id);
	merge_stream_clock_init(&t->s);
	t->raw = raw;
	t->nr = nr;
	t->id = id;
	t->closed = closed;
	CHECK(merge_sort_add(&sorter, &t->s) == 0);
}

struct got {
	uint64_t ts;
	int id, idx;
};

/* Drain the sorter into @out; how many events came. */
static int drain(struct got *out, int max, int *bad_fields)
{
	struct merge_event *ev;
	int n = 0;

	*bad_fields = 0;
	while ((ev = merge_sort_next(&sorter)) && n < max) {
		if (ev->flow_id || ev->flow_start_id || ev->src != 100 + ev->track)
			(*bad_fields)++;
		out[n++] = (struct got){ ev->ts_ns, (int)ev->track, (int)ev->name };
	}
	return n;
}

/* Several interleaved streams, with ties, some empty. */
static void test_merge(int run, struct got *got, int *n_out)
{
	static uint64_t a[40], b[25], c[3], tie[20];
	static const uint64_t none[1];
	int closed = 0, bad, n, last[8];

	for (int i = 0; i < 40; i++)
		a[i] = 1000 + (uint64_t)i * 10;		/* 1000..1390 */
	for (int i = 0; i < 25; i++)
		b[i] = 1005 + (uint64_t)i * 17;
	c[0] = 5;
	c[1] = 1200;
	c[2] = 5000;
	for (int i = 0; i < 20; i++)
		tie[i] = 1000 + (uint64_t)(i / 4) * 10;	/* equal to a's times */
	add(0, a, 40, 1, &clock_ns, &closed);
	add(1, b, 25, 0, &clock_ns, &closed);
	add(2, c, 3, 1, &clock_ns, &closed);
	add(3, none, 0, 0, &clock_ns, &closed);
	add(4, tie, 20, 1, &clock_ns, &closed);
	n = drain(got, MAX_EVS, &bad);
	*n_out = n;
	CHECK(n == 40 + 25 + 3 + 20);
	CHECK(bad == 0);
	for (int i = 0; i < 8; i++)
		last[i] = -1;
	int order_ok = 1;

	for (int i = 0; i < n; i++) {
		if (i && got[i].ts < got[i - 1].ts)
			order_ok = 0;
		if (got[i].idx != last[got[i].id] + 1)	/* each stream in its order */
			order_ok = 0;
		last[got[i].id] = got[i].idx;
	}
	CHECK(order_ok);
	CHECK(got[0].ts == 5 && got[0].id == 2);
	CHECK(got[n - 1].ts == 5000);
	CHECK(merge_sort_next(&sorter) == NULL);
	merge_sort_free(&sorter);
	CHECK(closed == 5);
	(void)run;
}

static void test_clock_and_backstep(void)
{
	/* 2 GHz host TSC: 2000 ticks = 1000 ns; the third stamp steps back */
	static const uint64_t tsc[] = { 2000, 4000, 3000, 8000 };
	static const uint64_t ns[] = { 1500, 2500 };
	struct got got[8];
	int closed = 0, bad, n;

	add(0, tsc, 4, 0, &clock_tsc, &closed);
	add(1, ns, 2, 1, &clock_ns, &closed);
	n = drain(got, 8, &bad);
	CHECK(n == 6 && bad == 0);
	CHECK(got[0].ts == 1000 && got[0].id == 0);
	CHECK(got[1].ts == 1500 && got[1].id == 1);
	CHECK(got[2].ts == 2000 && got[2].id == 0 && got[2].idx == 1);
	/* 3000 ticks = 1500 ns is before 2000: held at 2000 */
	CHECK(got[3].ts == 2000 && got[3].id == 0 && got[3].idx == 2);
	CHECK(got[4].ts == 2500 && got[4].id == 1);
	CHECK(got[5].ts == 4000 && got[5].id == 0);
	merge_sort_free(&sorter);
	CHECK(closed == 2);
}

static void test_empty(void)
{
	CHECK(merge_sort_next(&sorter) == NULL);
	merge_sort_free(&sorter);
}

int main(void)
{
	static struct got g1[MAX_EVS], g2[MAX_EVS];
	int n1, n2;

	CHECK(align_clock_init(&clock_ns, ALIGN_CLOCK_NS, 0) == 0);
	CHECK(align_clock_init(&clock_tsc, ALIGN_CLOCK_HOST, 2000000000ull) == 0);
	test_empty();
	test_merge(1, g1, &n1);
	test_merge(2, g2, &n2);
	/* ties: the same order in every run */
	CHECK(n1 == n2 && !memcmp(g1, g2, (size_t)n1 * sizeof(g1[0])));
	test_clock_and_backstep();
	return check_done();
}
