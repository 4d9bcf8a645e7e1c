/*
 * t-align.c - unit tests of the clock model (align/model.c, align/match.c)
 * and the marker record format (lib/marker.c) on synthetic samples with a
 * known truth: the estimate must contain the truth within its bound, and
 * no bound half as large may hold where the truth sits at an interval's
 * edge (asymmetric exit latency); marker seqs across and past 2^24; the
 * inside check's shift window (tightest of the events near run edges),
 * gaps between runs measured to the nearer run, events past the last run;
 * order matching of wide intervals on a drifting clock; an outlier among
 * intervals that only touch at the common point; duplicate host sightings,
 * guest records and chardev observations at one instant; markers.dat's
 * writer and reader failing on I/O, each by its message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "align/align.h"
#include "err.h"
#include "marker.h"

#define HZ		2096001000ull
#define H0		1000000000000ull	/* host TSC at the first marker */
#define STEP		(HZ / 10)		/* 100 ms between markers */
#define NMARK		50

struct truth {
	int64_t off;
	uint64_t ratio;		/* 0: slope 1 */
	uint32_t frac;
	double drift;		/* extra slope, for the drift case */
};

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
	check_xorshift(&rnd_state);
	return n ? rnd_state % n : 0;
}

static uint64_t truth_g(const struct truth *t, uint64_t h)
{
	uint64_t g;

	if (t->ratio)
		g = (uint64_t)(((unsigned __int128)h * t->ratio) >> t->frac);
	else
		g = h;
	if (t->drift != 0)
		g += (uint64_t)(int64_t)(t->drift * (double)(int64_t)(h - H0));
	return g + (uint64_t)t->off;
}

/* marker i at host time h: the guest read its TSC lat_before ticks before
 * the host saw the action and lat_after ticks after */
static uint64_t base_latency = 100;	/* ticks: the fastest possible exit */

static void mk(const struct truth *t, uint64_t seq, uint64_t h, uint64_t jitter,
	       struct vt_marker *g, struct align_host_marker *o, int chardev)
{
	uint64_t before = base_latency + rnd(jitter), after = base_latency + rnd(jitter);

	memset(g, 0, sizeof(*g));
	g->kind = chardev ? VT_MARKER_CHARDEV : VT_MARKER_PIO;
	g->size = chardev ? 1 : 4;
	g->addr = chardev ? VT_MARKER_DEBUGCON_PORT : VT_MARKER_PORT;
	g->value = chardev ? VT_MARKER_BYTE(seq) : VT_MARKER_VALUE(seq);
	g->cpu = VT_MARKER_CPU_NONE;
	g->seq = seq;
	g->tsc_guest_before = truth_g(t, h - before);
	g->tsc_guest_after = truth_g(t, h + after);
	o->tsc_host = h;
	o->vcpu = ALIGN_VCPU_ANY;
	o->value = g->value;
	o->has_value = !chardev;
}

static void gen(const struct truth *t, uint64_t h0, size_t n, uint64_t jitter,
		struct vt_marker *g, struct align_host_marker *o, int chardev, uint64_t seq0)
{
	for (size_t i = 0; i < n; i++)
		mk(t, seq0 + i, h0 + i * STEP + rnd(STEP / 10), jitter, &g[i], &o[i], chardev);
}

/* max |model host - true host| over guest times across [h_lo, h_hi], in ns */
static double max_err_ns(const struct align_model *m, const struct truth *t, uint64_t h_lo,
			 uint64_t h_hi, int vcpu)
{
	double worst = 0;

	for (int k = 0; k <= 100; k++) {
		uint64_t h = h_lo + (uint64_t)((double)(h_hi - h_lo) * k / 100.0), hm;
		uint64_t g = truth_g(t, h);
		double e;

		if (align_guest_to_host(m, vcpu, g, &hm) < 0)
			return 1e30;
		e = (double)(int64_t)(hm - h) * 1e9 / HZ;
		if (e < 0)
			e = -e;
		if (e > worst)
			worst = e;
	}
	return worst;
}

static int has_warning(const struct align_model *m, const char *needle)
{
	for (size_t i = 0; i < align_model_nr_warnings(m); i++)
		if (strstr(align_model_warning(m, i), needle))
			return 1;
	return 0;
}

static struct align_input input(struct vt_marker *g, size_t ng, struct align_host_marker *o,
				size_t no)
{
	struct align_input in;

	memset(&in, 0, sizeof(in));
	in.host_hz = HZ;
	in.guest_markers = g;
	in.n_guest_markers = ng;
	in.host_markers = o;
	in.n_host_markers = no;
	return in;
}

static double bound_for(uint64_t jitter)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { -123456789, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;
	double b;

	/* markers whose exits take at least @jitter ticks each way */
	base_latency = jitter;
	gen(&t, H0, NMARK, jitter, g, o, 0, 0);
	base_latency = 100;
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	if (!m)
		return -1;
	b = align_model_bound_ns(m);
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) <= b);
	align_model_free(m);
	return b;
}

static void test_offset(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { -987654321012, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;
	double b;

	gen(&t, H0, NMARK, 4000, g, o, 0, 0);
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_method(m) == ALIGN_SRC_MARKERS);
	CHECK(align_model_nr_pairs(m) == NMARK);
	b = align_model_bound_ns(m);
	CHECK(b > 0 && b < 4100.0 * 1e9 / HZ);
	CHECK(max_err_ns(m, &t, H0 - STEP, H0 + 2 * NMARK * STEP, ALIGN_VCPU_ANY) <= b);
	CHECK(align_model_nr_warnings(m) == 0);
	printf("offset: bound %.1f ns, error %.1f ns\n", b,
	       max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0));
	align_model_free(m);
}

static void test_bound_shrinks(void)
{
	double loose = bound_for(20000), tight = bound_for(300);

	printf("bound: jitter 20000 ticks -> %.1f ns, 300 ticks -> %.1f ns\n", loose, tight);
	CHECK(loose > 0 && tight > 0);
	CHECK(tight < loose / 4);
}

static void test_ratio(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	/* guest runs at 0.8 of the host rate (scaling ratio, 48 fraction bits) */
	struct truth t = { 5000000, (uint64_t)(0.8 * (double)(1ull << 48)), 48, 0 };
	struct align_debugfs_snap d = { 0, 0, 5000000, t.ratio, 48 };
	struct align_input in;
	struct align_model *m;
	const struct align_segment *s;

	gen(&t, H0, NMARK, 3000, g, o, 0, 0);
	in = input(g, NMARK, o, NMARK);
	in.snaps = &d;
	in.n_snaps = 1;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	s = align_model_segment(m, 0);
	CHECK(s->source == ALIGN_SRC_MARKERS);
	CHECK(s->slope > 0.7999999 && s->slope < 0.8000001);
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) <= align_model_bound_ns(m));
	CHECK(!has_warning(m, "DISAGREE"));	/* debugfs is right here */
	align_model_free(m);
}

static void test_offset_change(void)
{
	static struct vt_marker g[2 * NMARK];
	static struct align_host_marker o[2 * NMARK];
	struct truth t1 = { -1000000000, 0, 0, 0 }, t2 = { -1000000000 + 777777777, 0, 0, 0 };
	uint64_t h_change = H0 + NMARK * STEP + STEP / 2, hm, ns;
	struct align_offset_event ev[2] = {
		{ H0 - STEP, 0, 0, t1.off },
		{ h_change, 0, t1.off, t2.off },
	};
	struct align_input in;
	struct align_model *m;
	struct align_clock ck = { 0 };
	struct align_cursor c;

	gen(&t1, H0, NMARK, 2000, g, o, 0, 0);
	gen(&t2, h_change + STEP / 2, NMARK, 2000, g + NMARK, o + NMARK, 0, NMARK);
	in = input(g, 2 * NMARK, o, 2 * NMARK);
	in.offsets = ev;
	in.n_offsets = 2;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_segments(m) == 2);
	CHECK(align_model_segment(m, 0)->source == ALIGN_SRC_MARKERS);
	CHECK(align_model_segment(m, 1)->source == ALIGN_SRC_MARKERS);
	CHECK(align_model_segment(m, 1)->tsc_host_start == h_change);
	CHECK(max_err_ns(m, &t1, H0, h_change - 1, 0) <= align_model_bound_ns(m));
	/* (guest times within the bound of the change are ambiguous) */
	CHECK(max_err_ns(m, &t2, h_change + STEP / 100, h_change + NMARK * STEP, 0) <=
	      align_model_bound_ns(m));
	CHECK(!has_warning(m, "DISAGREE"));	/* tracepoint offsets are the truth */
	/* a cursor walks across the change in stream order */
	align_clock_set_model(&ck, m);
	align_cursor_init(&c, &ck, 0);
	ns = align_clock_ns(&c, truth_g(&t1, H0 + STEP));
	CHECK(ck.unmapped == 0);
	CHECK(llabs((long long)(ns - align_host_to_ns(m, H0 + STEP))) < 5000);
	ns = align_clock_ns(&c, truth_g(&t2, h_change + STEP));
	CHECK(ck.unmapped == 0);
	CHECK(llabs((long long)(ns - align_host_to_ns(m, h_change + STEP))) < 5000);
	CHECK(align_host_to_guest(m, 0, h_change + STEP, &hm) == 0);
	CHECK(llabs((long long)(hm - truth_g(&t2, h_change + STEP))) < 5000);
	align_model_free(m);
}

/* The model of the two kvm_write_tsc_offset events @ev alone (no markers). */
static struct align_model *offsets_model(struct align_input *in, struct align_offset_event *ev)
{
	memset(in, 0, sizeof(*in));
	in->host_hz = HZ;
	in->offsets = ev;
	in->n_offsets = 2;
	return align_model_build(in);
}

static void test_step_back_cursor(void)
{
	/* offset steps back by 2 s of ticks: guest values repeat after the
	 * change; only stream order tells them apart */
	struct truth t1 = { 0, 0, 0, 0 }, t2 = { -(int64_t)(2 * HZ), 0, 0, 0 };
	uint64_t h_change = H0 + 10 * STEP, ns;
	struct align_offset_event ev[2] = { { H0 - STEP, 0, 0, 0 }, { h_change, 0, 0, t2.off } };
	struct align_input in;
	struct align_model *m;
	struct align_clock ck = { 0 };
	struct align_cursor c;

	m = offsets_model(&in, ev);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_method(m) == ALIGN_SRC_TRACEPOINT);
	CHECK(align_model_bound_ns(m) < 0);	/* unproven */
	align_clock_set_model(&ck, m);
	align_cursor_init(&c, &ck, 0);
	ns = align_clock_ns(&c, truth_g(&t1, h_change - STEP));
	CHECK(ck.unmapped == 0);
	CHECK(ns == align_host_to_ns(m, h_change - STEP));
	ns = align_clock_ns(&c, truth_g(&t2, h_change + STEP));
	CHECK(ck.unmapped == 0);
	CHECK(ns == align_host_to_ns(m, h_change + STEP));
	align_model_free(m);
}

/*
 * Where an offset steps back, guest values repeat: one rule (the stream
 * cursor, align_cursor_seek) places a stamp in its segment for merge's
 * maps and for align's own checks alike.  A stream of guest readings
 * across the change, all inside the guest's runs: merge's map and the
 * inside check's cursors give the same host time, the truth, for every one,
 * and the inside check finds them all inside (a stateless query would map
 * the readings before the change in the shared range 2 s away).
 */
static void test_step_back_one_rule(void)
{
	struct truth t1 = { 0, 0, 0, 0 }, t2 = { -(int64_t)(2 * HZ), 0, 0, 0 };
	uint64_t h_change = H0 + 10 * STEP;
	struct align_offset_event ev[2] = { { H0 - STEP, 0, 0, 0 }, { h_change, 0, 0, t2.off } };
	enum { NR = 40 };
	static struct vt_marker gm[NR];
	static struct align_run runs[NR];
	struct align_samples smp;
	struct align_inside ins;
	struct align_input in;
	struct align_model *m;
	struct align_clock ck = { 0 };
	struct align_cursor c;
	struct align_vcursors vc;
	size_t same = 0, exact = 0;
	uint64_t g, h;

	m = offsets_model(&in, ev);
	CHECK(m != NULL);
	if (!m)
		return;
	align_clock_set_model(&ck, m);
	align_cursor_init(&c, &ck, 0);
	align_vcursors_init(&vc, m);
	/* readings every STEP/4 from 5 steps before the change to 5 after:
	 * the guest values after it repeat those 2 s before */
	for (int i = 0; i < NR; i++) {
		uint64_t hi = h_change - 5 * STEP + (uint64_t)i * (STEP / 4) + 1000;
		const struct truth *t = hi < h_change ? &t1 : &t2;
		uint64_t ns;

		g = truth_g(t, hi);
		ns = align_clock_ns(&c, g);
		CHECK(align_vcursors_guest_host(&vc, 0, g, &h) == 0);
		same += ns == align_host_to_ns(m, h);
		exact += h == hi;
		memset(&gm[i], 0, sizeof(gm[i]));
		gm[i].cpu = 0;
		gm[i].seq = (uint64_t)i;
		gm[i].tsc_guest_before = g;
		gm[i].tsc_guest_after = g + 10;
		runs[i].vcpu = 0;
		runs[i].tsc_entry = hi - 100;
		runs[i].tsc_exit = hi + 100;
	}
	CHECK(same == NR);
	CHECK(exact == NR);
	CHECK(ck.unmapped == 0);
	align_vcursors_free(&vc);
	/* one stamp on its own: a value only the later segment holds is
	 * its; one both hold is the earlier's (documented: only a stream's
	 * order tells) */
	g = truth_g(&t2, h_change + 2 * HZ + STEP);
	CHECK(align_guest_to_host(m, 0, g, &h) == 0);
	CHECK(h == h_change + 2 * HZ + STEP);
	g = truth_g(&t2, h_change + STEP);
	CHECK(align_guest_to_host(m, 0, g, &h) == 0);
	CHECK(h == h_change + STEP - 2 * HZ);
	/* the inside check walks the markers as a stream: all inside */
	memset(&smp, 0, sizeof(smp));
	smp.in = in;
	smp.in.guest_markers = gm;
	smp.in.n_guest_markers = NR;
	smp.runs = runs;
	smp.n_runs = NR;
	CHECK(align_inside_check(m, &smp, &ins) == 0);
	CHECK(ins.n_marker_readings == 2 * NR);
	CHECK(ins.n_events == 2 * NR);
	CHECK(ins.n_inside == 2 * NR);
	CHECK(ins.n_unmapped == 0);
	align_model_free(m);
}

static void test_missing(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 4242424242, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	gen(&t, H0, NMARK, 3000, g, o, 0, 0);
	/* host lost marker 10, the guest lost marker 20 */
	memmove(&o[10], &o[11], (NMARK - 11) * sizeof(*o));
	memmove(&g[20], &g[21], (NMARK - 21) * sizeof(*g));
	in = input(g, NMARK - 1, o, NMARK - 1);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_pairs(m) == NMARK - 2);
	CHECK(has_warning(m, "no host twin"));
	CHECK(has_warning(m, "no guest record"));
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) <= align_model_bound_ns(m));
	for (size_t i = 0; i < align_model_nr_pairs(m); i++) {
		const struct align_marker_pair *p = align_model_pair(m, i);

		CHECK(p->seq != 10 && p->seq != 20);
		CHECK(!p->outlier);
	}
	align_model_free(m);
}

static void test_chardev_order(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK + 2];
	struct truth t = { -77777777, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	gen(&t, H0, NMARK, 3000, g, o, 1, 0);
	/* host lost write 5; an unrelated one-byte write lands between 30/31 */
	memmove(&o[5], &o[6], (NMARK - 6) * sizeof(*o));
	memmove(&o[31], &o[30], (NMARK - 1 - 30) * sizeof(*o));
	o[30].tsc_host = (o[29].tsc_host + o[31].tsc_host) / 2;
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_pairs(m) == NMARK - 1);
	CHECK(align_model_method(m) == ALIGN_SRC_MARKERS);
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) <= align_model_bound_ns(m));
	for (size_t i = 0; i < align_model_nr_pairs(m); i++)
		CHECK(align_model_pair(m, i)->seq != 5 && !align_model_pair(m, i)->outlier);
	align_model_free(m);
}

/* the project's machines: the tracepoint says -(host TSC at vCPU creation),
 * debugfs says 0, markers prove 0 */
static void test_lying_tracepoint(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 0, 0, 0, 0 };
	struct align_offset_event ev = { H0 - STEP, 0, 0, -(int64_t)(H0 - STEP) };
	struct align_debugfs_snap d = { H0, 0, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;
	int seen_tp = 0;

	gen(&t, H0, NMARK, 6000, g, o, 0, 0);
	in = input(g, NMARK, o, NMARK);
	in.offsets = &ev;
	in.n_offsets = 1;
	in.snaps = &d;
	in.n_snaps = 1;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_method(m) == ALIGN_SRC_MARKERS);
	CHECK(has_warning(m, "SOURCES DISAGREE"));
	CHECK(has_warning(m, "tracepoint ignored"));
	for (size_t i = 0; i < align_model_nr_views(m); i++) {
		const struct align_source_view *v = align_model_view(m, i);

		if (v->source == ALIGN_SRC_TRACEPOINT) {
			seen_tp = 1;
			CHECK(v->agrees == 0);
		}
		if (v->source == ALIGN_SRC_DEBUGFS)
			CHECK(v->agrees == 1);
	}
	CHECK(seen_tp);
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) <= align_model_bound_ns(m));
	align_model_free(m);

	/* without markers: debugfs outranks the tracepoint, loudly */
	memset(&in, 0, sizeof(in));
	in.host_hz = HZ;
	in.offsets = &ev;
	in.n_offsets = 1;
	in.snaps = &d;
	in.n_snaps = 1;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_method(m) == ALIGN_SRC_DEBUGFS);
	CHECK(has_warning(m, "SOURCES DISAGREE"));
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) < 1.0);
	align_model_free(m);
}

static void test_outlier(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 31337, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	gen(&t, H0, NMARK, 3000, g, o, 0, 0);
	o[17].tsc_host += HZ / 1000;	/* 1 ms late: impossible */
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(has_warning(m, "outliers"));
	CHECK(align_model_pair(m, 17)->outlier == 1);
	CHECK(align_model_segment(m, 0)->n_outliers == 1);
	CHECK(max_err_ns(m, &t, H0, H0 + NMARK * STEP, 0) <= align_model_bound_ns(m));
	align_model_free(m);
}

static void test_infeasible(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 0, 0, 0, 0 };
	struct align_debugfs_snap d = { 0, 0, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	gen(&t, H0, NMARK, 3000, g, o, 0, 0);
	/* every other host time 1 ms off: no line fits, no majority */
	for (size_t i = 0; i < NMARK; i += 2)
		o[i].tsc_host += HZ / 1000 * (i % 4 ? 1 : 3);
	for (size_t i = 1; i < NMARK; i += 4)
		o[i].tsc_host -= HZ / 500;
	in = input(g, NMARK, o, NMARK);
	in.snaps = &d;
	in.n_snaps = 1;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(has_warning(m, "INFEASIBLE"));
	CHECK(align_model_method(m) == ALIGN_SRC_DEBUGFS);
	align_model_free(m);
}

static void test_drift(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 1000, 0, 0, 50e-6 };	/* 50 ppm fast, ratio unknown */
	struct align_input in;
	struct align_model *m;

	gen(&t, H0, NMARK, 2000, g, o, 0, 0);
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(has_warning(m, "fitted slope"));
	CHECK(align_model_segment(m, 0)->slope > 1.00004 &&
	      align_model_segment(m, 0)->slope < 1.00006);
	CHECK(max_err_ns(m, &t, H0, H0 + (NMARK - 1) * STEP, 0) <= align_model_bound_ns(m));
	printf("drift: bound %.1f ns\n", align_model_bound_ns(m));
	align_model_free(m);
}

/* many markers (an hour at 10/s) with outliers: still fast, still right */
static void test_many(void)
{
	const size_t n = 36000;
	struct vt_marker *g = calloc(n, sizeof(*g));
	struct align_host_marker *o = calloc(n, sizeof(*o));
	struct truth t = { -5, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	if (!g || !o)
		return;
	gen(&t, H0, n, 5000, g, o, 0, 0);
	for (size_t i = 100; i < n; i += 1000)
		o[i].tsc_host += HZ / 100;	/* 10 ms late */
	in = input(g, n, o, n);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (m) {
		CHECK(align_model_segment(m, 0)->n_outliers == 36);
		CHECK(max_err_ns(m, &t, H0, H0 + n * STEP, 0) <= align_model_bound_ns(m));
		align_model_free(m);
	}
	free(g);
	free(o);
}

static void test_no_source(void)
{
	struct align_input in;

	memset(&in, 0, sizeof(in));
	in.host_hz = HZ;
	CHECK(align_model_build(&in) == NULL);
	in.host_hz = 0;
	CHECK(align_model_build(&in) == NULL);
	CHECK(vt_tsc_to_ns(HZ, HZ) == 1000000000ull);
	CHECK(vt_tsc_to_ns(3 * HZ / 2, HZ) == 1500000000ull);
}

static void test_marker_file(void)
{
	char dir[] = "/tmp/t-align.XXXXXX", path[256];
	struct vt_marker r = { VT_MARKER_PIO, 4, VT_MARKER_PORT, VT_MARKER_VALUE(7), 3, 7,
			       111, 222 }, *out = NULL;
	uint8_t buf[VT_MARKER_REC_SIZE];
	struct vt_marker_writer *w;
	size_t n, bad;
	FILE *fp;

	vt_marker_encode(&r, buf);
	CHECK(buf[0] == 'V' && buf[1] == 'T' && buf[2] == 'M' && buf[3] == 'K');
	CHECK(vt_marker_decode(buf, &r) == 0 && r.seq == 7 && r.tsc_guest_after == 222);
	CHECK(VT_MARKER_VALUE_OK(r.value) && VT_MARKER_VALUE_SEQ(r.value) == 7);
	buf[40] = 0;	/* after < before */
	CHECK(vt_marker_decode(buf, &r) < 0);
	if (!mkdtemp(dir))
		return;
	w = vt_marker_writer_open(dir);
	CHECK(w != NULL);
	if (!w)
		return;
	for (int i = 0; i < 3; i++) {
		r.seq = (uint64_t)i;
		r.tsc_guest_after = 222;
		CHECK(vt_marker_writer_add(w, &r) == 0);
	}
	CHECK(vt_marker_writer_close(w) == 0);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_MARKER_FILE);
	fp = fopen(path, "ab");
	if (fp) {
		fwrite("VTMKgarbage", 1, 11, fp);	/* truncated tail */
		fclose(fp);
	}
	CHECK(vt_marker_read(path, &out, &n, &bad) == 0);
	CHECK(n == 3 && bad == 1);
	CHECK(out && out[2].seq == 2);
	free(out);
	unlink(path);
	rmdir(dir);
}

/* A child's file that holds more than its size says (/proc's say 0): its
 * own environment area, two records written over it.  The reader keeps the
 * first and counts the one past the room its size gave as bad.  0 when
 * that held (the child's exit status). */
static int grown_file_child(void)
{
	extern char **environ;
	struct vt_marker r = { VT_MARKER_PIO, 4, VT_MARKER_PORT, VT_MARKER_VALUE(1), 0, 1, 10, 20 };
	struct vt_marker *out = NULL;
	size_t n = 0, bad = 0, room = 0;
	uint8_t recs[2 * VT_MARKER_REC_SIZE];

	for (char **e = environ; *e; e++)
		room = (size_t)(*e + strlen(*e) + 1 - environ[0]);
	if (room < sizeof(recs))
		return 2;
	vt_marker_encode(&r, recs);
	r.seq = 2;
	vt_marker_encode(&r, recs + VT_MARKER_REC_SIZE);
	memcpy(environ[0], recs, sizeof(recs));
	if (vt_marker_read("/proc/self/environ", &out, &n, &bad) < 0)
		return 3;
	return n == 1 && out[0].seq == 1 && bad >= 1 ? 0 : 4;
}

/* lib/marker.c's I/O failures, each by its message: a directory path too
 * long or missing, a write past the file size limit, a file too large, one
 * that cannot be read, one holding more than its size said. */
static void test_marker_io(void)
{
	struct vt_marker r = { VT_MARKER_PIO, 4, VT_MARKER_PORT, VT_MARKER_VALUE(7), 3, 7, 111, 222 };
	char dir[] = "/tmp/t-align.XXXXXX", path[256], want[512], *big;
	struct vt_marker_writer *w;
	struct vt_marker *out = NULL;
	struct rlimit lim, old;
	size_t n, bad;
	int status = -1;
	pid_t pid;
	FILE *fp;

	big = malloc(5000);
	if (!big || !mkdtemp(dir)) {
		free(big);
		CHECK(0);
		return;
	}
	memset(big, 'd', 4999);
	big[4999] = 0;
	CHECK(vt_marker_writer_open(big) == NULL);
	/* (the message keeps the path's start and end) */
	CHECK(!strncmp(vt_err_msg(), "ddd", 3) &&
	      !strcmp(vt_err_msg() + strlen(vt_err_msg()) - 18, "ddd: path too long"));
	free(big);
	CHECK(vt_marker_writer_open("/nonexistent") == NULL);
	CHECK_STR(vt_err_msg(), "/nonexistent/markers.dat: cannot open: No such file or directory");
	CHECK(vt_marker_writer_close(NULL) == 0);

	/* a write the file size limit refuses (EFBIG: SIGXFSZ ignored) */
	snprintf(path, sizeof(path), "%s/%s", dir, VT_MARKER_FILE);
	w = vt_marker_writer_open(dir);
	CHECK(w != NULL);
	if (w) {
		CHECK(vt_marker_writer_add(w, &r) == 0);
		signal(SIGXFSZ, SIG_IGN);
		CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
		lim = old;
		lim.rlim_cur = VT_MARKER_REC_SIZE;
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		r.seq++;
		CHECK(vt_marker_writer_add(w, &r) < 0);
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		signal(SIGXFSZ, SIG_DFL);
		snprintf(want, sizeof(want), "%s: write: File too large", path);
		CHECK_STR(vt_err_msg(), want);
		CHECK(vt_marker_writer_close(w) == 0);
	}
	CHECK(vt_marker_read(path, &out, &n, &bad) == 0 && n == 1 && bad == 0);
	free(out);

	/* one record more than the reader takes (sparse) */
	fp = fopen(path, "wb");
	CHECK(fp && ftruncate(fileno(fp), (off_t)(VT_MARKER_MAX_RECS + 1) * VT_MARKER_REC_SIZE) == 0);
	if (fp)
		fclose(fp);
	snprintf(want, sizeof(want), "%s: too large (%llu bytes, at most %u records)", path,
		 (unsigned long long)(VT_MARKER_MAX_RECS + 1) * VT_MARKER_REC_SIZE,
		 VT_MARKER_MAX_RECS);
	CHECK(vt_marker_read(path, &out, &n, &bad) < 0);
	CHECK_STR(vt_err_msg(), want);
	unlink(path);
	rmdir(dir);
	CHECK(vt_marker_read("/nonexistent/markers.dat", &out, &n, &bad) < 0);
	CHECK_STR(vt_err_msg(), "/nonexistent/markers.dat: cannot open: No such file or directory");
	/* a regular file whose read fails: this process's memory at address 0 */
	CHECK(vt_marker_read("/proc/self/mem", &out, &n, &bad) < 0);
	CHECK_STR(vt_err_msg(), "/proc/self/mem: read: Input/output error");

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		exit(grown_file_child());
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Every exit takes @before ticks before the host sees it and @after after
 * (no jitter): the truth sits at one edge of every marker's interval, the
 * midpoint is (before - after) / 2 away from it.  The bound must cover it
 * and be no more than twice that error (a bound halved fails here). */
static void asym_case(const struct truth *t, uint64_t before, uint64_t after)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct align_input in;
	struct align_model *m;
	double b, e;

	for (size_t i = 0; i < NMARK; i++) {
		uint64_t h = H0 + i * STEP + rnd(STEP / 10);

		mk(t, i, h, 0, &g[i], &o[i], 0);
		g[i].tsc_guest_before = truth_g(t, h - before);
		g[i].tsc_guest_after = truth_g(t, h + after);
	}
	in = input(g, NMARK, o, NMARK);
	if (t->ratio)
		in.frac_bits = t->frac;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	b = align_model_bound_ns(m);
	e = max_err_ns(m, t, H0, H0 + NMARK * STEP, ALIGN_VCPU_ANY);
	printf("asymmetric %llu/%llu ticks%s: bound %.1f ns, error %.1f ns\n",
	       (unsigned long long)before, (unsigned long long)after, t->ratio ? " (scaled)" : "",
	       b, e);
	CHECK(e <= b);
	CHECK(e > 0.4 * b);
	align_model_free(m);
}

static void test_asymmetric(void)
{
	struct truth one = { -55555555, 0, 0, 0 };
	struct truth scaled = { 1000, (uint64_t)(0.75 * (1ull << 48)), 48, 0 };

	asym_case(&one, 40000, 100);
	asym_case(&one, 100, 40000);
	asym_case(&scaled, 40000, 100);
}

/* Value matching across 2^24: host values carry 24 bits of the seq. */
static void seq_case(uint64_t seq0, size_t n)
{
	struct vt_marker *g = calloc(n, sizeof(*g));
	struct align_host_marker *o = calloc(n, sizeof(*o));
	struct truth t = { 777777, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	if (!g || !o)
		return;
	gen(&t, H0, n, 2000, g, o, 0, seq0);
	in = input(g, n, o, n);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (m) {
		CHECK(align_model_nr_pairs(m) == n);
		CHECK(align_model_pair(m, 0)->seq == seq0);
		CHECK(align_model_pair(m, n - 1)->seq == seq0 + n - 1);
		CHECK(max_err_ns(m, &t, H0, H0 + n * STEP, 0) <= align_model_bound_ns(m));
		align_model_free(m);
	}
	free(g);
	free(o);
}

static void test_seq_wrap(void)
{
	seq_case(VT_MARKER_SEQ_MASK - 9, 30);		/* crosses 2^24 */
	seq_case(3ull * (VT_MARKER_SEQ_MASK + 1) + 5, 20);	/* starts past it */
	seq_case(2ull * (VT_MARKER_SEQ_MASK + 1) - 5, 20);	/* past it, crossing 3 * 2^24 */
}

/* The inside check on runs of vCPU 0 (host ticks from H0): [1000, 2000]
 * and [5000, 9000].  Readings at 1100 (100 after an entry) and 8800 (200
 * before an exit): the map may move by [-100, +200] ticks (the tightest;
 * the loosest would be [-3800, +900]).  A reading at 4900 is 100 ticks
 * outside (the next entry is nearer than the last exit); one at 9500 is
 * past the last run. */
static void test_inside_window(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct vt_marker r[4];
	struct align_run runs[] = { { 0, H0 + 5000, H0 + 9000 }, { 0, H0 + 1000, H0 + 2000 } };
	const uint64_t at[] = { 1100, 8800, 4900, 9500 };
	struct truth t = { -31415926, 0, 0, 0 };
	struct align_samples s;
	struct align_inside out;
	struct align_input in;
	struct align_model *m;
	double tick_ns = 1e9 / HZ, tol;

	base_latency = 1;
	gen(&t, H0, NMARK, 2, g, o, 0, 0);
	base_latency = 100;
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	tol = align_model_bound_ns(m) + 2 * tick_ns;
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 4; i++) {
		r[i].cpu = 0;
		r[i].tsc_guest_before = r[i].tsc_guest_after = truth_g(&t, H0 + at[i]);
	}
	memset(&s, 0, sizeof(s));
	s.in.guest_markers = r;
	s.in.n_guest_markers = 2;
	s.runs = runs;
	s.n_runs = 2;
	CHECK(align_inside_check(m, &s, &out) == 0);
	printf("inside: %llu of %llu inside, shift [%.1f, %.1f] ns\n",
	       (unsigned long long)out.n_inside, (unsigned long long)out.n_events,
	       out.shift_lo_ns, out.shift_hi_ns);
	CHECK(out.checked && out.n_inside == 4 && out.n_events == 4);
	CHECK(out.shift_lo_ns > -100 * tick_ns - tol && out.shift_lo_ns < -100 * tick_ns + tol);
	CHECK(out.shift_hi_ns > 200 * tick_ns - tol && out.shift_hi_ns < 200 * tick_ns + tol);
	CHECK(out.worst_ns == 0);

	s.in.n_guest_markers = 4;
	CHECK(align_inside_check(m, &s, &out) == 0);
	printf("inside: %llu outside the runs' span, worst %.1f ns\n",
	       (unsigned long long)out.n_outside_span, out.worst_ns);
	CHECK(out.n_events == 6 && out.n_inside == 4 && out.n_outside_span == 2);
	CHECK(out.worst_ns > 100 * tick_ns - tol && out.worst_ns < 100 * tick_ns + tol);
	CHECK(out.worst_vcpu == 0);
	align_model_free(m);
}

/* Order matching (debugcon bytes carry no seq) of markers whose guest
 * intervals are wide (200000 ticks of jitter) on a clock drifting 40 ppm:
 * the predicted windows must widen by the intervals' width, else the
 * drift pushes markers out of them (7 of 50 unpaired without it). */
static void test_order_wide(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 5000, 0, 0, 40e-6 };
	struct align_input in;
	struct align_model *m;

	rnd_state = 88172645463325252ull;
	gen(&t, H0, NMARK, 200000, g, o, 1, 0);
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	printf("order, wide intervals, 40 ppm: %zu of %d pairs\n", align_model_nr_pairs(m), NMARK);
	CHECK(align_model_nr_pairs(m) == NMARK);
	align_model_free(m);
}

/* One outlier among markers whose offset intervals share exactly one
 * point: two of them only touch it (one ends, the other starts there).
 * The consistent set is all but the outlier: touching intervals count as
 * sharing their end point. */
static void test_touching(void)
{
	static struct vt_marker g[NMARK];
	static struct align_host_marker o[NMARK];
	struct truth t = { 4242, 0, 0, 0 };
	struct align_input in;
	struct align_model *m;

	gen(&t, H0, NMARK, 0, g, o, 0, 0);
	for (size_t i = 0; i < NMARK; i++) {
		uint64_t h = o[i].tsc_host;
		int64_t lo = -10, hi = 10;

		if (i == 5)
			lo = -30, hi = 0;	/* ends at the common point */
		else if (i == 9)
			lo = 0, hi = 30;	/* starts there */
		else if (i == 20)
			lo = 1000, hi = 1010;	/* the outlier */
		g[i].tsc_guest_before = truth_g(&t, h) + (uint64_t)lo;
		g[i].tsc_guest_after = truth_g(&t, h) + (uint64_t)hi;
	}
	in = input(g, NMARK, o, NMARK);
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_pairs(m) == NMARK);
	CHECK(align_model_segment(m, 0)->n_outliers == 1);
	CHECK(align_model_pair(m, 20)->outlier && !align_model_pair(m, 5)->outlier &&
	      !align_model_pair(m, 9)->outlier);
	align_model_free(m);
}

/* duplicates: a host sighting of a seq twice at the same instant (the
 * second ignored, one unmatched host observation), a guest record of a
 * seq twice (the second unmatched), chardev observations at one instant
 * (by order: each guest marker once) */
static void test_duplicates(void)
{
	static struct vt_marker g[11];
	static struct align_host_marker o[11];
	struct truth t = { 5000, 0, 0, 0 };
	struct align_marker_pair *p = NULL;
	size_t n = 0, ug = 0, uh = 0;

	gen(&t, H0, 10, 1000, g, o, 0, 0);
	o[10] = o[4];
	CHECK(align_markers_match(g, 10, o, 11, &p, &n, &ug, &uh) == 0);
	CHECK(n == 10 && ug == 0 && uh == 1);
	for (size_t i = 0; p && i < n; i++)
		CHECK(p[i].seq == i && p[i].tsc_host == o[i].tsc_host);
	free(p);
	p = NULL;
	g[10] = g[4];
	CHECK(align_markers_match(g, 11, o, 10, &p, &n, &ug, &uh) == 0);
	CHECK(n == 10 && ug == 1);
	for (size_t i = 0; p && i < n; i++)
		CHECK(p[i].seq == i && p[i].tsc_host == o[i].tsc_host);
	free(p);
	p = NULL;
	/* chardev: the host saw the 10 bytes at two instants only */
	gen(&t, H0, 10, 1000, g, o, 1, 0);
	for (int i = 0; i < 10; i++)
		o[i].tsc_host = o[i < 5 ? 0 : 5].tsc_host;
	ug = uh = 0;
	CHECK(align_markers_match(g, 10, o, 10, &p, &n, &ug, &uh) == 0);
	CHECK(n + ug == 10 && n + uh == 10);
	for (size_t i = 1; p && i < n; i++)
		CHECK(p[i].seq > p[i - 1].seq && p[i].tsc_host >= p[i - 1].tsc_host);
	free(p);
}

/* the matcher's edges: a host write to the port that is no marker value
 * (unmatched), a guest record's vCPU where the host's is unknown, valued
 * and order pairs of the same seqs (the result in seq order), order
 * matching with a guest seq far past the host's count (the shift clamped
 * to -64), with the host missing the last half (shift -5), with a guest
 * reading far past every write, and with a bracket wider than the
 * window's cap (2^40 ticks) */
static void test_match_edges(void)
{
	static struct vt_marker g[10];
	static struct align_host_marker o[10];
	struct truth t = { 5000, 0, 0, 0 };
	struct align_marker_pair *p = NULL;
	size_t n = 0, ug = 0, uh = 0;

	/* valued: seqs 10..12 on vCPU 2 (the guest's cpu field) and a stray
	 * value 0x12345678; order (chardev): seqs 0..1, then 10..12 */
	gen(&t, H0, 3, 1000, g, o, 0, 10);
	for (int i = 0; i < 3; i++)
		g[i].cpu = 2;
	o[3] = o[2];
	o[3].tsc_host += STEP / 2;
	o[3].value = 0x12345678;
	gen(&t, H0 + 10 * STEP, 2, 1000, g + 4, o + 4, 1, 0);
	gen(&t, H0 + 20 * STEP, 3, 1000, g + 6, o + 6, 1, 10);
	CHECK(align_markers_match(g, 3, o, 4, &p, &n, &ug, &uh) == 0);
	CHECK(n == 3 && ug == 0 && uh == 1);
	for (size_t i = 0; p && i < n; i++)
		CHECK(p[i].seq == 10 + i && p[i].vcpu == 2);
	free(p);
	p = NULL;
	{
		struct vt_marker gg[8] = { g[0], g[1], g[2], g[4], g[5], g[6], g[7], g[8] };
		struct align_host_marker oo[8] = { o[0], o[1], o[2], o[4], o[5], o[6], o[7], o[8] };
		static const uint64_t want[8] = { 0, 1, 10, 10, 11, 11, 12, 12 };

		CHECK(align_markers_match(gg, 8, oo, 8, &p, &n, &ug, &uh) == 0);
		CHECK(n == 8 && ug == 0 && uh == 0);
		for (size_t i = 0; p && i < n; i++)
			CHECK(p[i].seq == want[i]);
		free(p);
		p = NULL;
	}

	/* order: guest seqs 0 and 100 (99 records lost), two host writes:
	 * only the first scores a shift; the second is paired in its window
	 * all the same, although its exit came sooner (100 ticks) than the
	 * first's (900: the window started 800 ticks past its host write) */
	gen(&t, H0, 2, 1000, g, o, 1, 0);
	g[0].tsc_guest_before = truth_g(&t, o[0].tsc_host - 900);
	g[1].tsc_guest_before = truth_g(&t, o[1].tsc_host - 100);
	g[1].seq = 100;
	CHECK(align_markers_match(g, 2, o, 2, &p, &n, &ug, &uh) == 0);
	CHECK(n == 2 && ug == 0 && uh == 0);
	CHECK(p && p[0].tsc_host == o[0].tsc_host && p[1].seq == 100 && p[1].tsc_host == o[1].tsc_host);
	free(p);
	p = NULL;

	/* order: ten guest markers, the host saw the first five */
	gen(&t, H0, 10, 1000, g, o, 1, 0);
	CHECK(align_markers_match(g, 10, o, 5, &p, &n, &ug, &uh) == 0);
	CHECK(n == 5 && ug == 5 && uh == 0);
	for (size_t i = 0; p && i < n; i++)
		CHECK(p[i].seq == i && p[i].tsc_host == o[i].tsc_host);
	free(p);
	p = NULL;

	/* order: marker 0's readings 10^12 ticks late (its window past every
	 * write): it pairs with none and takes none from the others */
	gen(&t, H0, 10, 1000, g, o, 1, 0);
	g[0].tsc_guest_before += 1000000000000ull;
	g[0].tsc_guest_after += 1000000000000ull;
	CHECK(align_markers_match(g, 10, o, 10, &p, &n, &ug, &uh) == 0);
	CHECK(n == 9 && ug == 1 && uh == 1);
	for (size_t i = 0; p && i < n; i++)
		CHECK(p[i].seq == i + 1 && p[i].tsc_host == o[i + 1].tsc_host);
	free(p);
	p = NULL;

	/* order: one bracket 2^41 ticks wide: the window's slack is capped,
	 * the others still pair by time */
	gen(&t, H0, 10, 1000, g, o, 1, 0);
	g[3].tsc_guest_before -= 1ull << 41;
	CHECK(align_markers_match(g, 10, o, 10, &p, &n, &ug, &uh) == 0);
	CHECK(n == 10 && ug == 0 && uh == 0);
	for (size_t i = 0; p && i < n; i++)
		CHECK(p[i].seq == i && p[i].tsc_host == o[i].tsc_host);
	free(p);
}

/* align.h's loading entry points as documented: no HOSTDIR, no GUESTDIR,
 * no options (the defaults), the host's frequency by option alone, a
 * GUESTDIR alone; merge's align_model_from_dirs with no count wanted, on
 * a HOSTDIR that is not there and on one with nothing to give a
 * frequency */
static void test_load_api(void)
{
	char dir[] = "/tmp/t-align.XXXXXX", path[256];
	struct vt_marker r = { VT_MARKER_PIO, 4, VT_MARKER_PORT, 0, 0, 0, 111, 222 };
	struct vt_marker_writer *w;
	struct align_load_opts o;
	struct align_samples s;
	struct align_model *m;
	size_t bad = 7;

	CHECK(align_samples_load(&s, NULL, NULL, NULL) == 0);
	CHECK(s.in.host_hz == 0 && s.in.n_guest_markers == 0 && s.notes && !*s.notes);
	align_samples_free(&s);
	align_load_opts_init(&o);
	o.host_hz = HZ;
	CHECK(align_samples_load(&s, NULL, NULL, &o) == 0 && s.in.host_hz == HZ);
	align_samples_free(&s);
	if (!mkdtemp(dir))
		return;
	w = vt_marker_writer_open(dir);
	CHECK(w != NULL);
	for (int i = 0; w && i < 3; i++) {
		r.seq = (uint64_t)i;
		r.value = VT_MARKER_VALUE(i);
		CHECK(vt_marker_writer_add(w, &r) == 0);
	}
	CHECK(w && vt_marker_writer_close(w) == 0);
	CHECK(align_samples_load(&s, NULL, dir, NULL) == 0 && s.in.n_guest_markers == 3);
	CHECK(s.guest_markers && s.guest_markers[2].seq == 2);
	align_samples_free(&s);
	m = align_model_from_dirs("/nonexistent/t-align", dir, NULL, &bad);
	CHECK(m == NULL && bad == 0);
	CHECK(strstr(vt_err_msg(), "host directory /nonexistent/t-align: ") != NULL);
	m = align_model_from_dirs(dir, dir, NULL, NULL);
	CHECK(m == NULL && strstr(vt_err_msg(), "host TSC frequency unknown") != NULL);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_MARKER_FILE);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_offset();
	test_bound_shrinks();
	test_ratio();
	test_offset_change();
	test_step_back_cursor();
	test_step_back_one_rule();
	test_missing();
	test_chardev_order();
	test_lying_tracepoint();
	test_outlier();
	test_infeasible();
	test_drift();
	test_many();
	test_no_source();
	test_marker_file();
	test_marker_io();
	test_asymmetric();
	test_seq_wrap();
	test_inside_window();
	test_order_wide();
	test_touching();
	test_duplicates();
	test_match_edges();
	test_load_api();
	return check_done();
}
