/*
 * t-align-model.c - unit tests of the clock model's edges (align/model.c)
 * on hand-made samples whose answer is known exactly: durations as people
 * read them, source names, accessors past the end, the user's offset and
 * what a segment with no source does, markers with no vCPU beside vCPUs
 * that have offsets, a VM stopped for good (saved and restored), the
 * guest TSC clamped at 0, and host -> guest queries; trace-cmd's time
 * sync (TIME_SHIFT) alone: kvm's median offset, ptp's fitted line, a
 * scaled TSC per vCPU, samples outside their segment; more warnings and
 * views than the model first holds, debugfs readings that change within a
 * segment or carry no usable ratio, a guest TSC past UINT64_MAX,
 * --fit-slope with nothing to fit, an inverted marker bracket, the span a
 * fitted slope covers, stops that end no segment or a user offset's; a
 * slope <= 0 never fitted: markers of a guest TSC far slower than the
 * host's, TIME_SHIFT of scaling 0 or ptp offsets falling too fast.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "marker_fixture.h"
#include "align/align.h"

#define HZ	2000000000ull

static int has_warning(const struct align_model *m, const char *needle)
{
	for (size_t i = 0; i < align_model_nr_warnings(m); i++)
		if (strstr(align_model_warning(m, i), needle))
			return 1;
	return 0;
}

/* Marker pair @i: a PIO marker from guest CPU @cpu bracketed by guest TSC
 * [@before, @after], seen by the host at @h on vCPU @vcpu. */
static void set_marker(struct vt_marker *g, struct align_host_marker *o, int i, uint64_t h,
		       uint64_t before, uint64_t after, uint32_t cpu, int32_t vcpu)
{
	marker_fix_pio(g, cpu, (uint64_t)i, before, after);
	*o = (struct align_host_marker){ h, vcpu, g->value, 1, 0 };
}

static void test_fmt(void)
{
	static const struct {
		double ns;
		int prec;
		const char *want;
	} c[] = {
		{ 812, 2, "812 ns" },
		{ -0.3, 2, "0 ns" },		/* no "-0 ns" */
		{ -812, 2, "-812 ns" },
		{ 3140, 2, "3.14 us" },
		{ -1500, 3, "-1.500 us" },
		{ 2.5e6, 2, "2.50 ms" },
		{ 2.5e9, 2, "2.500 s" },	/* seconds: always 3 */
		{ 7200e9, 1, "2.0 h" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		align_fmt_ns(buf, sizeof(buf), c[i].ns, c[i].prec);
		CHECK_STR(buf, c[i].want);
	}
}

static void test_names(void)
{
	static const char *const names[] = { "markers", "debugfs", "tracepoint", "user", "tsync" };
	static const enum align_source ids[] = { ALIGN_SRC_MARKERS, ALIGN_SRC_DEBUGFS,
						 ALIGN_SRC_TRACEPOINT, ALIGN_SRC_USER,
						 ALIGN_SRC_TSYNC };

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		CHECK_STR(align_source_name(ids[i]), names[i]);
		CHECK(align_source_by_name(names[i]) == ids[i]);
	}
	CHECK_STR(align_source_name(ALIGN_SRC_NONE), "none");
	CHECK_STR(align_source_name(ALIGN_SRC_COUNT), "none");
	CHECK(align_source_by_name("Markers") == ALIGN_SRC_NONE);
	CHECK(align_source_by_name("") == ALIGN_SRC_NONE);
}

/* --offset alone: one segment for all vCPUs, unproven, every accessor
 * past its end NULL; host <-> guest exact both ways */
static void test_user_only(void)
{
	struct align_input in = { .host_hz = HZ, .has_user_offset = 1,
				  .user_offset_tsc = -1000000 };
	struct align_model *m = align_model_build(&in);
	uint64_t g = 0, h = 0, ns = 0;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_method(m) == ALIGN_SRC_USER);
	CHECK(align_model_bound_ns(m) < 0);
	CHECK_STR(align_model_summary(m), "user, bound unproven (no markers)");
	CHECK(align_model_host_hz(m) == HZ);
	CHECK(align_model_nr_segments(m) == 1);
	CHECK(align_model_segment(m, 0)->vcpu == ALIGN_VCPU_ANY);
	CHECK(align_model_segment(m, 1) == NULL);
	CHECK(align_model_nr_views(m) == 1);
	CHECK(align_model_view(m, 0)->source == ALIGN_SRC_USER);
	CHECK(align_model_view(m, 0)->agrees == -1);
	CHECK(align_model_view(m, 1) == NULL);
	CHECK(align_model_nr_pairs(m) == 0 && align_model_pair(m, 0) == NULL);
	CHECK(align_model_nr_warnings(m) == 0 && align_model_warning(m, 0) == NULL);
	CHECK(align_host_to_guest(m, ALIGN_VCPU_ANY, 5000000000ull, &g) == 0);
	CHECK(g == 4999000000ull);
	CHECK(align_host_to_guest(m, 7, 5000000000ull, &g) == 0 && g == 4999000000ull);
	/* before the guest's TSC 0: clamped, not wrapped */
	CHECK(align_host_to_guest(m, 0, 999999, &g) == 0);
	CHECK(g == 0);
	CHECK(align_guest_to_host(m, 0, 4999000000ull, &h) == 0 && h == 5000000000ull);
	CHECK(align_guest_to_ns(m, 0, 4999000000ull, &ns) == 0 && ns == 2500000000ull);
	CHECK(align_host_to_ns(m, 3 * HZ) == 3000000000ull);
	align_model_free(m);
	align_model_free(NULL);
}

/* the tracepoint alone: vCPU 0 changes its offset at H1 (two segments),
 * vCPU 1 writes the offset in force again (one segment) */
static void test_segments_per_vcpu(void)
{
	const uint64_t h1 = 10 * HZ;
	struct align_offset_event off[] = {
		{ 1 * HZ, 0, 0, -100 },
		{ h1, 0, -100, -200 },
		{ 1 * HZ, 1, 0, -300 },
		{ 3 * HZ, 1, -300, -300 },	/* the offset already in force: no segment */
	};
	struct align_input in = { .host_hz = HZ, .offsets = off, .n_offsets = 4 };
	struct align_model *m = align_model_build(&in);
	uint64_t g;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_segments(m) == 3);
	CHECK(align_model_segment(m, 0)->vcpu == 0 && align_model_segment(m, 0)->tsc_host_start == 0 &&
	      align_model_segment(m, 0)->tsc_host_end == h1);
	CHECK(align_model_segment(m, 1)->vcpu == 0 && align_model_segment(m, 1)->tsc_host_start == h1 &&
	      align_model_segment(m, 1)->tsc_host_end == ALIGN_TSC_END);
	CHECK(align_model_segment(m, 2)->vcpu == 1 && align_model_segment(m, 2)->tsc_host_start == 0);
	CHECK(align_model_method(m) == ALIGN_SRC_TRACEPOINT);
	CHECK_STR(align_model_summary(m), "tracepoint, bound unproven (no markers)");
	CHECK(align_host_to_guest(m, 0, h1 - 1, &g) == 0 && g == h1 - 101);
	CHECK(align_host_to_guest(m, 0, h1, &g) == 0 && g == h1 - 200);
	CHECK(align_host_to_guest(m, 1, h1, &g) == 0 && g == h1 - 300);
	align_model_free(m);
}

/* markers with no known vCPU while two vCPUs have offsets: applied to
 * both, said so */
static void test_markers_any_vcpu(void)
{
	struct align_offset_event off[] = { { 1 * HZ, 0, 0, 500 }, { 1 * HZ, 1, 0, 500 } };
	struct vt_marker g[4];
	struct align_host_marker o[4];
	struct align_input in = { .host_hz = HZ, .offsets = off, .n_offsets = 2 };
	struct align_model *m;

	for (int i = 0; i < 4; i++) {
		uint64_t h = 2 * HZ + (uint64_t)i * HZ / 10;

		set_marker(&g[i], &o[i], i, h, h + 500 - 1000, h + 500 + 1000, VT_MARKER_CPU_NONE,
			   ALIGN_VCPU_ANY);
	}
	in.guest_markers = g;
	in.n_guest_markers = 4;
	in.host_markers = o;
	in.n_host_markers = 4;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(has_warning(m, "markers carry no vCPU: each is applied to all 2 vCPUs"));
	CHECK(align_model_nr_segments(m) == 2);
	for (size_t i = 0; i < align_model_nr_segments(m); i++) {
		const struct align_segment *s = align_model_segment(m, i);

		CHECK(s->source == ALIGN_SRC_MARKERS && s->n_markers == 4);
		CHECK(s->ref_tsc_guest - s->ref_tsc_host == 500);
		/* brackets +-1000 ticks: the bound is their half width, 500 ns,
		 * and a quarter of the two ticks of
		 * rounding slack (0.25 ns) */
		CHECK(s->bound_ns > 500.2 && s->bound_ns < 500.3);
	}
	CHECK(strstr(align_model_summary(m), "markers (4 marker pairs), bound 500 ns") != NULL);
	align_model_free(m);
}

/* debugfs outranks the tracepoint where it has a reading (an undated one:
 * the last segment), the tracepoint has every segment; --source picks
 * the tracepoint wherever it has a line */
static void test_rank_and_prefer(void)
{
	struct align_offset_event off[] = { { 1 * HZ, 0, 0, 40 }, { 5 * HZ, 0, 40, 80 } };
	struct align_debugfs_snap d = { 2 * HZ, 0, 40, 0, 0 };
	struct align_input in = { .host_hz = HZ, .snaps = &d, .n_snaps = 1,
				  .offsets = off, .n_offsets = 2 };
	struct align_model *m;
	uint64_t g, h;

	m = align_model_build(&in);
	CHECK(m && align_model_nr_segments(m) == 2);
	CHECK(m && align_model_segment(m, 0)->source == ALIGN_SRC_DEBUGFS);
	CHECK(m && align_model_segment(m, 1)->source == ALIGN_SRC_TRACEPOINT);
	CHECK(m && align_host_to_guest(m, 0, 3 * HZ, &g) == 0 && g == 3 * HZ + 40);
	CHECK(m && align_host_to_guest(m, 0, 6 * HZ, &g) == 0 && g == 6 * HZ + 80);
	align_model_free(m);
	in.prefer = ALIGN_SRC_TRACEPOINT;
	m = align_model_build(&in);
	CHECK(m && align_model_segment(m, 0)->source == ALIGN_SRC_TRACEPOINT);
	CHECK(m && align_model_method(m) == ALIGN_SRC_TRACEPOINT);
	align_model_free(m);
	/* a reading alone: one segment from host TSC 0, exact both ways */
	in.prefer = ALIGN_SRC_NONE;
	in.offsets = NULL;
	in.n_offsets = 0;
	m = align_model_build(&in);
	CHECK(m && align_model_nr_segments(m) == 1 &&
	      align_model_segment(m, 0)->source == ALIGN_SRC_DEBUGFS);
	CHECK(m && align_host_to_guest(m, 0, 7 * HZ, &g) == 0 && g == 7 * HZ + 40);
	CHECK(m && align_guest_to_host(m, 0, 7 * HZ + 40, &h) == 0 && h == 7 * HZ);
	align_model_free(m);
}

/* vCPU 0 has a debugfs reading; vCPU 1 only two markers that no line of
 * slope 1 +- 0.25 joins (1.4): its segment has no source, said so, and its
 * queries fail rather than guess, a stop of it or not; the model stands on
 * vCPU 0's */
static void test_vcpu_without_source(void)
{
	struct align_debugfs_snap d = { 0, 0, 40, 0, 0 };
	struct vt_marker g[2];
	struct align_host_marker o[2];
	struct align_input in = { .host_hz = HZ, .snaps = &d, .n_snaps = 1 };
	struct align_vcpu_stop st = { 1, 3 * HZ / 2 };
	struct align_model *m;
	uint64_t v;

	for (int i = 0; i < 2; i++) {
		uint64_t h = (uint64_t)(i + 1) * HZ, gm = h + 40 + (uint64_t)i * (HZ * 4 / 10);

		set_marker(&g[i], &o[i], i, h, gm - 100, gm + 100, VT_MARKER_CPU_NONE, 1);
	}
	in.guest_markers = g;
	in.n_guest_markers = 2;
	in.host_markers = o;
	in.n_host_markers = 2;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_method(m) == ALIGN_SRC_DEBUGFS);
	CHECK(align_model_nr_segments(m) == 2);
	CHECK(align_model_segment(m, 1)->vcpu == 1 &&
	      align_model_segment(m, 1)->source == ALIGN_SRC_NONE);
	CHECK(has_warning(m, "vCPU 1: INFEASIBLE: the 2 markers admit no common clock map "
			  "(largest consistent set 1): markers NOT used"));
	CHECK(has_warning(m, "vCPU 1: no usable source for the segment from host TSC 0"));
	CHECK(align_host_to_guest(m, 1, 2 * HZ, &v) == -1);
	CHECK(align_guest_to_host(m, 1, 2 * HZ, &v) == -1);
	CHECK(align_guest_to_ns(m, 1, 2 * HZ, &v) == -1);
	CHECK(align_host_to_guest(m, 0, 2 * HZ, &v) == 0 && v == 2 * HZ + 40);
	align_model_free(m);
	/* a stop of vCPU 1 (a later VM's thread took over) changes nothing */
	in.stops = &st;
	in.n_stops = 1;
	m = align_model_build(&in);
	CHECK(m && align_model_segment(m, 1)->source == ALIGN_SRC_NONE);
	CHECK(m && align_guest_to_host(m, 1, 2 * HZ, &v) == -1);
	CHECK(m && align_guest_to_host(m, 0, 3 * HZ + 40, &v) == 0 && v == 3 * HZ);
	align_model_free(m);
}

/* a VM saved at host TSC S and restored into a new QEMU: the stopped VM's
 * segment ends for guest stamps at the guest TSC it had at S */
static void test_stop(void)
{
	const uint64_t s_at = 4 * HZ;
	struct align_offset_event off[] = { { 1 * HZ, 0, 0, 1000 }, { 6 * HZ, 0, 1000, -2 * (int64_t)HZ } };
	struct align_vcpu_stop st = { 0, s_at };
	struct align_input in = { .host_hz = HZ, .offsets = off, .n_offsets = 2, .stops = &st,
				  .n_stops = 1 };
	struct align_model *m = align_model_build(&in);
	uint64_t h;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_segments(m) == 2);
	/* guest TSC s_at + 1000 was the stopped VM's last: its own map */
	CHECK(align_guest_to_host(m, 0, s_at + 1000, &h) == 0 && h == s_at);
	/* past it, a guest stamp is the restored VM's (guest = host - 2 s) */
	CHECK(align_guest_to_host(m, 0, s_at + 1001, &h) == 0 && h == s_at + 1001 + 2 * HZ);
	align_model_free(m);
	/* without the stop, the same stamp is the first VM's */
	in.n_stops = 0;
	m = align_model_build(&in);
	CHECK(m && align_guest_to_host(m, 0, s_at + 1001, &h) == 0 && h == s_at + 1);
	align_model_free(m);
}

/* a segment from host TSC 2 whose markers sit past 2^63 ticks later: its
 * guest start, taken from the line at the markers, wraps to 2^63 + 2; a
 * stop between (guest 500) is below that start and cuts nothing: every
 * guest stamp maps as without the stop (2^63 + 12 through the segment's
 * line, wrapped to host 12) */
static void test_stop_below_start(void)
{
	const uint64_t H = (1ULL << 63) + 1000;
	struct align_offset_event off[] = { { 1, 0, 0, 0 }, { 2, 0, 0, INT64_MIN } };
	struct align_vcpu_stop st = { 0, H - 500 };
	struct vt_marker g[2];
	struct align_host_marker o[2];
	struct align_input in = { .host_hz = HZ, .offsets = off, .n_offsets = 2,
				  .guest_markers = g, .n_guest_markers = 2, .host_markers = o,
				  .n_host_markers = 2, .stops = &st, .n_stops = 1 };
	const uint64_t gq[] = { 500, 1000, 1000 + HZ, (1ULL << 63) + 12 };
	struct align_model *m, *m0;
	uint64_t h = 0;

	for (int i = 0; i < 2; i++) {
		uint64_t hm = H + (uint64_t)i * HZ, gm = hm - (1ULL << 63);

		set_marker(&g[i], &o[i], i, hm, gm - 100, gm + 100, VT_MARKER_CPU_NONE, 0);
	}
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_segments(m) == 2);
	/* every guest stamp maps as without the stop */
	in.n_stops = 0;
	m0 = align_model_build(&in);
	CHECK(m0 != NULL);
	for (int i = 0; m0 && i < 4; i++) {
		uint64_t gs = gq[i], h0 = 1;
		int r = align_guest_to_host(m, 0, gs, &h), r0 = align_guest_to_host(m0, 0, gs, &h0);

		CHECK(r == r0 && (r < 0 || h == h0));
		if (i == 3)
			CHECK(r == 0 && h == 12);
	}
	align_model_free(m0);
	align_model_free(m);
}

/* guest TSC of host TSC @h on vCPU @v through @m; UINT64_MAX if none */
static uint64_t h2g(const struct align_model *m, int32_t v, uint64_t h)
{
	uint64_t g;

	return align_host_to_guest(m, v, h, &g) ? UINT64_MAX : g;
}

/* trace-cmd's time sync alone (TIME_SHIFT: host = guest * scaling /
 * 2^frac + offset per sample): its kvm protocol's constant offset is the
 * samples' median (odd and even counts); its ptp protocol's interpolated
 * offset their least-squares line; a scaled TSC (1.5) through the first
 * sample's ratio, per vCPU; samples all outside the vCPU's one segment
 * still give it; a vCPU's second segment without samples gets none, a
 * sample past a segment's end is the next one's; ptp samples at one
 * instant; a scaling of 1 with fraction bits */
static void test_tsync(void)
{
	struct align_tsync_sample s[6];
	struct align_input in = { .host_hz = HZ, .tsync = s };
	struct align_offset_event off[] = { { 1 * HZ, 0, 0, 0 }, { 10 * HZ, 0, 0, 7000 } };
	static const int64_t kvm[] = { -1000, -1000, -1002, -999, -1000, -1003 };
	struct align_model *m;

	for (int i = 0; i < 6; i++)
		s[i] = (struct align_tsync_sample){ 0, (uint64_t)(i + 1) * HZ, kvm[i], 0, 0, 0 };
	in.n_tsync = 5;		/* -1002 -1000 -1000 -1000 -999: -1000 */
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_TSYNC && align_model_nr_segments(m) == 1);
	CHECK(m && align_model_bound_ns(m) < 0);
	CHECK(h2g(m, 0, 3 * HZ) == 3 * HZ + 1000 && h2g(m, 0, 5) == 1005);
	align_model_free(m);
	in.n_tsync = 6;		/* ... and -1003: (-1001 + -1000) / 2 rounds to 1001 */
	m = align_model_build(&in);
	CHECK(m && h2g(m, 0, 3 * HZ) - 3 * HZ >= 1000 && h2g(m, 0, 3 * HZ) - 3 * HZ <= 1001);
	align_model_free(m);

	/* ptp: the offset grows one tick per 1000 guest ticks: host =
	 * 1.001 guest - 1000, exactly through every sample (1 s is 2e9) */
	for (int i = 0; i < 5; i++) {
		uint64_t g = (uint64_t)(i + 1) * HZ;

		s[i] = (struct align_tsync_sample){ 0, g, -1000 + (int64_t)(g / 1000), 0, 0, 1 };
	}
	in.n_tsync = 5;
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_TSYNC);
	CHECK(h2g(m, 0, 2 * HZ) == 3996004995ull);		/* 4000001000 / 1.001 */
	CHECK(h2g(m, 0, 2001999000) == HZ);			/* the first sample */
	CHECK(h2g(m, 0, 10009999000ull) == 5 * HZ);		/* the last */
	align_model_free(m);
	/* one ptp sample: no line through it, its offset */
	in.n_tsync = 1;
	m = align_model_build(&in);
	CHECK(m && h2g(m, 0, 3 * HZ) == 3 * HZ - 1999000);
	align_model_free(m);

	/* a TSC scaled 1.5 (48 fraction bits), vCPU 0 offset -1000, vCPU 1
	 * +5000: guest = (host - offset) / 1.5 on each (to a tick: the
	 * reference guest value is whole) */
	for (int i = 0; i < 4; i++)
		s[i] = (struct align_tsync_sample){ i % 2, (uint64_t)(i + 1) * HZ, i % 2 ? 5000 : -1000,
						    3ull << 47, 48, 0 };
	in.n_tsync = 4;
	m = align_model_build(&in);
	CHECK(m && align_model_nr_segments(m) == 2);
	CHECK(h2g(m, 0, 2 * HZ) == 2666667334ull && h2g(m, 1, 2 * HZ) == 2666663334ull);
	CHECK(h2g(m, 0, 5 * HZ) == 6666667334ull && h2g(m, 1, 5 * HZ) == 6666663334ull);
	align_model_free(m);

	/* a guest that started long before the host's TSC 0: every sample's
	 * host time is negative, outside the vCPU's one segment [0, end):
	 * still its offset */
	s[0] = (struct align_tsync_sample){ 0, 1000, -5000, 0, 0, 0 };
	s[1] = (struct align_tsync_sample){ 0, 2000, -5000, 0, 0, 0 };
	in.n_tsync = 2;
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_TSYNC && h2g(m, 0, HZ) == HZ + 5000);
	align_model_free(m);

	/* the offset written again at 10 s (two segments of vCPU 0): the
	 * samples, all before, give the first its tsync view, the second
	 * none; the tracepoint (ranked above) maps both */
	for (int i = 0; i < 3; i++)
		s[i] = (struct align_tsync_sample){ 0, (uint64_t)(i + 1) * HZ, 0, 0, 0, 0 };
	in.n_tsync = 3;
	in.offsets = off;
	in.n_offsets = 2;
	m = align_model_build(&in);
	CHECK(m && align_model_nr_segments(m) == 2 && align_model_method(m) == ALIGN_SRC_TRACEPOINT);
	if (m) {
		int tsync_views[2] = { 0, 0 };

		for (size_t i = 0; i < align_model_nr_views(m); i++) {
			const struct align_source_view *v = align_model_view(m, i);

			if (v->source == ALIGN_SRC_TSYNC)
				tsync_views[v->tsc_host >= 10 * HZ]++;
		}
		CHECK(tsync_views[0] == 1 && tsync_views[1] == 0);
		CHECK(h2g(m, 0, 11 * HZ) == 11 * HZ + 7000 && h2g(m, 0, 2 * HZ) == 2 * HZ);
	}
	align_model_free(m);
	/* tsync asked for, a sample in each segment: the first takes only its
	 * own (the one past its end would halve its offset), the second its */
	s[0] = (struct align_tsync_sample){ 0, 1 * HZ, 0, 0, 0, 0 };
	s[1] = (struct align_tsync_sample){ 0, 12 * HZ, -7000, 0, 0, 0 };
	in.n_tsync = 2;
	in.prefer = ALIGN_SRC_TSYNC;
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_TSYNC);
	CHECK(h2g(m, 0, 2 * HZ) == 2 * HZ && h2g(m, 0, 11 * HZ) == 11 * HZ + 7000);
	align_model_free(m);
	in.prefer = ALIGN_SRC_NONE;
	in.offsets = NULL;
	in.n_offsets = 0;

	/* ptp samples all at one host instant: no line through them, their
	 * median offset */
	s[0] = s[1] = (struct align_tsync_sample){ 0, 2 * HZ, -1000, 0, 0, 1 };
	m = align_model_build(&in);
	CHECK(m && h2g(m, 0, 3 * HZ) == 3 * HZ + 1000);
	align_model_free(m);
	/* scaling 1 with a fraction bit: host = guest / 2 */
	s[0] = s[1] = (struct align_tsync_sample){ 0, 2 * HZ, 0, 1, 1, 0 };
	m = align_model_build(&in);
	CHECK(m && align_model_segment(m, 0)->slope == 2.0 && h2g(m, 0, 3 * HZ) == 6 * HZ);
	align_model_free(m);
	/* scaling 0 with a fraction bit (host = offset: a guest clock that
	 * stands still; the loader refuses it too) is skipped, the next
	 * sample used; alone, no source */
	s[0] = (struct align_tsync_sample){ 0, 2 * HZ, 2 * (int64_t)HZ, 0, 1, 0 };
	s[1] = (struct align_tsync_sample){ 0, 3 * HZ, -1000, 0, 0, 0 };
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_TSYNC);
	CHECK(m && align_model_segment(m, 0)->slope == 1.0 && h2g(m, 0, 3 * HZ) == 3 * HZ + 1000);
	align_model_free(m);
	in.n_tsync = 1;
	m = align_model_build(&in);
	CHECK(m == NULL);
	align_model_free(m);
	/* ptp offsets falling twice as fast as the guest's time passes (host
	 * 9, 8, 7 s at guest 1, 2, 3 s): the fitted slope would be -1, a
	 * clock running backward - no tsync line, no source */
	for (int i = 0; i < 3; i++)
		s[i] = (struct align_tsync_sample){ 0, (uint64_t)(i + 1) * HZ,
						    (int64_t)(10 * HZ) - 2 * (i + 1) * (int64_t)HZ,
						    0, 0, 1 };
	in.n_tsync = 3;
	m = align_model_build(&in);
	CHECK(m == NULL);
	align_model_free(m);
}

/* more warnings than the model keeps (256): 300 undated debugfs readings
 * of vCPU 0, each another offset, warn 299 times; the later one is used */
static void test_many_warnings(void)
{
	static struct align_debugfs_snap d[300];
	struct align_input in = { .host_hz = HZ, .snaps = d, .n_snaps = 300 };
	struct align_model *m;
	uint64_t g;

	for (int i = 0; i < 300; i++)
		d[i] = (struct align_debugfs_snap){ 0, 0, 1000 + i, 0, 0 };
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_warnings(m) == 256);
	CHECK(has_warning(m, "vCPU 0: debugfs tsc-offset changed from 1255 to 1256"));
	CHECK(!has_warning(m, "from 1256 to 1257"));
	CHECK(align_host_to_guest(m, 0, HZ, &g) == 0 && g == HZ + 1299);
	align_model_free(m);
}

/* debugfs readings of one segment: the later wins whatever their order; a
 * changed ratio alone is warned of; a ratio without fraction bits, with
 * 64 or implausible (1/128, 100) is no scaling */
static void test_debugfs_readings(void)
{
	struct align_debugfs_snap d[2] = { { 3 * HZ, 0, 70, 0, 0 }, { 2 * HZ, 0, 50, 0, 0 } };
	struct align_input in = { .host_hz = HZ, .snaps = d, .n_snaps = 2 };
	struct align_model *m;
	uint64_t g;

	m = align_model_build(&in);
	CHECK(m && has_warning(m, "vCPU 0: debugfs tsc-offset changed from 70 to 50"));
	CHECK(m && align_host_to_guest(m, 0, 5 * HZ, &g) == 0 && g == 5 * HZ + 70);
	align_model_free(m);
	/* the same offset, another ratio (2.0, 48 bits) */
	d[1] = (struct align_debugfs_snap){ 4 * HZ, 0, 70, 2ull << 48, 48 };
	m = align_model_build(&in);
	CHECK(m && has_warning(m, "debugfs tsc-offset changed from 70 to 70"));
	CHECK(m && align_model_segment(m, 0)->slope == 2.0);
	align_model_free(m);
	in.n_snaps = 1;
	static const struct { uint64_t ratio; uint32_t frac; } noscale[] = {
		{ 2ull << 48, 0 }, { 2ull << 48, 64 }, { 1ull << 41, 48 },
	};
	for (size_t i = 0; i < 3; i++) {
		d[0] = (struct align_debugfs_snap){ 0, 0, 70, noscale[i].ratio, noscale[i].frac };
		m = align_model_build(&in);
		CHECK(m && align_model_segment(m, 0)->slope == 1.0);
		CHECK(m && (i == 2) == has_warning(m, "vCPU 0: debugfs tsc-scaling-ratio 2199023255552 "
						    "with 48 fraction bits is 0.0078125: implausible, ignored"));
		align_model_free(m);
	}
	/* above the plausible: 100 */
	d[0] = (struct align_debugfs_snap){ 0, 0, 70, 100ull << 48, 48 };
	m = align_model_build(&in);
	CHECK(m && align_model_segment(m, 0)->slope == 1.0);
	CHECK(m && has_warning(m, "vCPU 0: debugfs tsc-scaling-ratio 28147497671065600 with 48 "
			       "fraction bits is 100: implausible, ignored"));
	align_model_free(m);
}

/* more source views than the first allocation (16): 20 vCPUs read from
 * debugfs, a view each, each its own offset */
static void test_many_views(void)
{
	struct align_debugfs_snap d[20];
	struct align_input in = { .host_hz = HZ, .snaps = d, .n_snaps = 20 };
	struct align_model *m;
	uint64_t g;

	for (int i = 0; i < 20; i++)
		d[i] = (struct align_debugfs_snap){ 0, i, 100 * i, 0, 0 };
	m = align_model_build(&in);
	CHECK(m && align_model_nr_views(m) == 20 && align_model_nr_segments(m) == 20);
	for (int i = 0; m && i < 20; i++) {
		CHECK(align_model_view(m, (size_t)i)->vcpu == i &&
		      align_model_view(m, (size_t)i)->offset_tsc == 100 * i);
		CHECK(align_host_to_guest(m, i, HZ, &g) == 0 && g == HZ + 100 * (uint64_t)i);
	}
	align_model_free(m);
}

/* a scaled guest TSC (2.0) at host TSCs near 2^63: a guest value past
 * 2^63 is itself (llround of it gave LLONG_MIN: 2^63 for every one), one
 * past UINT64_MAX is clamped, not wrapped */
static void test_guest_max(void)
{
	struct align_debugfs_snap d = { 0, 0, 0, 2ull << 48, 48 };
	struct align_input in = { .host_hz = HZ, .snaps = &d, .n_snaps = 1 };
	struct align_model *m = align_model_build(&in);
	uint64_t g = 0;

	CHECK(m && align_host_to_guest(m, 0, 0x7fffffffffffffffull, &g) == 0 && g == UINT64_MAX);
	CHECK(m && align_host_to_guest(m, 0, 0x7ffffffffffff000ull, &g) == 0 &&
	      g == 0xffffffffffffe000ull);
	CHECK(m && align_host_to_guest(m, 0, 0x6000000000000000ull, &g) == 0 &&
	      g == 0xc000000000000000ull);
	CHECK(m && align_host_to_guest(m, 0, 0x4000000000000000ull, &g) == 0 &&
	      g == 0x8000000000000000ull);
	align_model_free(m);
}

/* marker pairs for the tests below: guest bracket [h + off - w, h + off
 * + w] at host h, vCPU 0 */
static void mk_markers(struct vt_marker *g, struct align_host_marker *o, int n,
		       const uint64_t *h, const int64_t *off, uint64_t w)
{
	for (int i = 0; i < n; i++)
		set_marker(&g[i], &o[i], i, h[i], h[i] + (uint64_t)off[i] - w,
			   h[i] + (uint64_t)off[i] + w, 0, 0);
}

/* --fit-slope: one marker has no slope to fit (the known one, its
 * bracket); two at the same host instant none either (slope 1); two
 * that no line joins are not used */
static void test_fit_slope_edges(void)
{
	struct vt_marker g[2];
	struct align_host_marker o[2];
	uint64_t h[2] = { 2 * HZ, 2 * HZ }, v;
	int64_t off[2] = { 500, 500 };
	struct align_input in = { .host_hz = HZ, .fit_slope = 1, .guest_markers = g,
				  .host_markers = o };
	struct align_model *m;

	mk_markers(g, o, 1, h, off, 1000);
	in.n_guest_markers = in.n_host_markers = 1;
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_MARKERS);
	CHECK(m && align_model_segment(m, 0)->slope == 1.0 && align_model_segment(m, 0)->n_markers == 1);
	CHECK(m && align_host_to_guest(m, 0, 3 * HZ, &v) == 0 && v == 3 * HZ + 500);
	align_model_free(m);

	mk_markers(g, o, 2, h, off, 1000);
	in.n_guest_markers = in.n_host_markers = 2;
	m = align_model_build(&in);
	CHECK(m && align_model_segment(m, 0)->slope == 1.0 && align_model_segment(m, 0)->n_markers == 2);
	CHECK(m && align_host_to_guest(m, 0, 3 * HZ, &v) == 0 && v == 3 * HZ + 500);
	align_model_free(m);

	/* 1 s apart, the guest 2 s apart: slope 2 is past 1 +- 0.25 */
	h[1] = 3 * HZ;
	off[1] = 500 + (int64_t)HZ;
	mk_markers(g, o, 2, h, off, 1000);
	m = align_model_build(&in);
	CHECK(m == NULL);
	in.fit_slope = 0;
	m = align_model_build(&in);
	CHECK(m == NULL);
}

/* a guest TSC far slower than the host's (debugfs ratio 0.2: a0 - 0.25
 * of the free slope's box is below 0): markers 1 s apart whose guest TSC
 * stands still or runs back 0.04 s fit no slope >= a0 / 4, with
 * --fit-slope or without - not used (INFEASIBLE), debugfs chosen, the
 * bound unproven (before: a slope of ~0 or -0.04 and an infinite or
 * negative bound); a forward drift to 0.1 is still fitted, its bound
 * finite */
static void test_slow_guest_slope(void)
{
	struct vt_marker g[2];
	struct align_host_marker o[2];
	uint64_t h[2] = { 2 * HZ, 3 * HZ };
	const int64_t g0 = 1000000000, back[] = { 0, (int64_t)HZ / 25 };
	int64_t off[2];
	/* ratio 0.2 with 48 fraction bits */
	struct align_debugfs_snap d = { 0, 0, 0, (uint64_t)(0.2 * (double)(1ull << 48)), 48 };
	struct align_input in = { .host_hz = HZ, .guest_markers = g, .host_markers = o,
				  .n_guest_markers = 2, .n_host_markers = 2, .snaps = &d,
				  .n_snaps = 1 };
	struct align_model *m;
	const struct align_segment *sg;

	for (int fit = 0; fit < 2; fit++) {
		for (int k = 0; k < 2; k++) {
			in.fit_slope = fit;
			off[0] = g0 - (int64_t)h[0];
			off[1] = g0 - back[k] - (int64_t)h[1];
			mk_markers(g, o, 2, h, off, 1000);
			m = align_model_build(&in);
			CHECK(m != NULL);
			if (!m)
				continue;
			sg = align_model_segment(m, 0);
			CHECK(align_model_method(m) == ALIGN_SRC_DEBUGFS);
			CHECK(sg->slope > 0.1999 && sg->slope < 0.2001 && sg->n_markers == 0);
			CHECK(sg->bound_ns < 0 && align_model_bound_ns(m) < 0);
			CHECK(has_warning(m, "vCPU 0: INFEASIBLE: the 2 markers admit no common "
					  "clock map (largest consistent set 1): markers NOT used"));
			align_model_free(m);
		}
	}
	/* the guest 0.1 s on over 1 s: slope 0.1 (>= 0.2 / 4), not 0.2 */
	in.fit_slope = 0;
	off[1] = g0 + (int64_t)HZ / 10 - (int64_t)h[1];
	mk_markers(g, o, 2, h, off, 1000);
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_MARKERS);
	if (!m)
		return;
	sg = align_model_segment(m, 0);
	CHECK(sg->slope > 0.0999 && sg->slope < 0.1001 && sg->n_markers == 2);
	CHECK(isfinite(sg->bound_ns) && sg->bound_ns > 0 && sg->bound_ns < 10000);
	CHECK(has_warning(m, "vCPU 0: markers do not fit slope 0.200000000"));
	align_model_free(m);
}

/* a marker whose guest bracket is inverted (after before before): no
 * offset lies in it, with the known slope or any other; not used */
static void test_inverted_bracket(void)
{
	struct vt_marker g[1];
	struct align_host_marker o[1];
	uint64_t h[1] = { 2 * HZ };
	int64_t off[1] = { 500 };
	struct align_debugfs_snap d = { 0, 0, 500, 0, 0 };
	struct align_input in = { .host_hz = HZ, .guest_markers = g, .host_markers = o,
				  .n_guest_markers = 1, .n_host_markers = 1, .snaps = &d,
				  .n_snaps = 1 };
	struct align_model *m;

	mk_markers(g, o, 1, h, off, 1000);
	g[0].tsc_guest_before = g[0].tsc_guest_after + 10;
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_DEBUGFS);
	CHECK(m && has_warning(m, "vCPU 0: INFEASIBLE: the 1 markers admit no common clock map "
			       "(largest consistent set 0): markers NOT used"));
	align_model_free(m);
}

/* the span a fitted slope must cover: the trace's, widened to markers
 * outside it; a wider span, a wider bound (the slope's freedom grows with
 * the distance); the trace's span ending before a later segment starts
 * is that segment's start */
static void test_span(void)
{
	struct vt_marker g[2];
	struct align_host_marker o[2];
	uint64_t h[2] = { 2 * HZ, 5 * HZ }, v;
	int64_t off[2] = { 500, 500 };
	struct align_offset_event ev[] = { { 1, 0, 0, 500 }, { 10 * HZ, 0, 500, 900 } };
	struct align_input in = { .host_hz = HZ, .fit_slope = 1, .guest_markers = g,
				  .host_markers = o, .n_guest_markers = 2, .n_host_markers = 2 };
	struct align_model *m;
	double b_markers, b_inside, b_wide;

	mk_markers(g, o, 2, h, off, 1000);
	m = align_model_build(&in);		/* no span: the markers' */
	b_markers = m ? align_model_bound_ns(m) : -1;
	align_model_free(m);
	in.span_tsc_host_start = 3 * HZ;	/* inside the markers: widened to them */
	in.span_tsc_host_end = 4 * HZ;
	m = align_model_build(&in);
	b_inside = m ? align_model_bound_ns(m) : -2;
	align_model_free(m);
	in.span_tsc_host_start = 1;
	in.span_tsc_host_end = 100 * HZ;
	m = align_model_build(&in);
	b_wide = m ? align_model_bound_ns(m) : -3;
	CHECK(m && align_host_to_guest(m, 0, 3 * HZ, &v) == 0 && v == 3 * HZ + 500);
	align_model_free(m);
	CHECK(b_markers > 500 && b_markers < 501);
	CHECK(b_inside == b_markers);
	CHECK(b_wide > b_markers + 1000);

	/* two segments (the offset written again at 10 s), the trace ends at
	 * 5 s: the first is cut there, the second has only its start */
	in.offsets = ev;
	in.n_offsets = 2;
	in.span_tsc_host_end = 5 * HZ;
	m = align_model_build(&in);
	CHECK(m && align_model_nr_segments(m) == 2);
	CHECK(m && align_model_segment(m, 0)->source == ALIGN_SRC_MARKERS);
	CHECK(m && align_host_to_guest(m, 0, 3 * HZ, &v) == 0 && v == 3 * HZ + 500);
	CHECK(m && align_host_to_guest(m, 0, 11 * HZ, &v) == 0 && v == 11 * HZ + 900);
	align_model_free(m);
}

/* stops that do not end a segment: another vCPU's, one after the
 * segment, one at its last host tick (the guest range ends there
 * anyway); a stop under a user offset (one segment for all vCPUs), one
 * where the guest TSC is past UINT64_MAX */
static void test_stop_edges(void)
{
	struct align_offset_event off[] = { { 1 * HZ, 0, 0, 1000 }, { 6 * HZ, 0, 1000, 5000 } };
	struct align_vcpu_stop st[] = { { 1, 3 * HZ }, { 0, 6 * HZ - 1 }, { 0, 9 * HZ } };
	struct align_debugfs_snap d = { 0, 0, 0, 2ull << 48, 48 };
	struct align_input in = { .host_hz = HZ, .offsets = off, .n_offsets = 2, .stops = st,
				  .n_stops = 3 };
	struct align_model *m = align_model_build(&in);
	uint64_t h;

	CHECK(m && align_model_nr_segments(m) == 2);
	/* the first segment's guest range is still [0, 6 s + 1000) */
	CHECK(m && align_guest_to_host(m, 0, 5 * HZ + 1000, &h) == 0 && h == 5 * HZ);
	CHECK(m && align_guest_to_host(m, 0, 6 * HZ + 999, &h) == 0 && h == 6 * HZ - 1);
	CHECK(m && align_guest_to_host(m, 0, 8 * HZ + 5000, &h) == 0 && h == 8 * HZ);
	/* the stop at 9 s, past the first segment, ends the last one: no
	 * later segment, it still serves past it */
	CHECK(m && align_guest_to_host(m, 0, 10 * HZ + 5000, &h) == 0 && h == 10 * HZ);
	align_model_free(m);

	in.offsets = NULL;
	in.n_offsets = 0;
	in.has_user_offset = 1;
	in.user_offset_tsc = 1000;
	in.stops = &st[2];
	in.n_stops = 1;
	m = align_model_build(&in);
	CHECK(m && align_model_nr_segments(m) == 1 && align_model_segment(m, 0)->vcpu == ALIGN_VCPU_ANY);
	CHECK(m && align_guest_to_host(m, 0, 9 * HZ + 1000, &h) == 0 && h == 9 * HZ);
	/* no later segment: the one there is still serves past it */
	CHECK(m && align_guest_to_host(m, 0, 9 * HZ + 1001, &h) == 0 && h == 9 * HZ + 1);
	align_model_free(m);

	/* a scaled guest (2.0) stopped at host 2^63 - 1: its guest TSC there
	 * is clamped to UINT64_MAX, no end */
	in.has_user_offset = 0;
	in.snaps = &d;
	in.n_snaps = 1;
	st[2] = (struct align_vcpu_stop){ 0, 0x7fffffffffffffffull };
	m = align_model_build(&in);
	CHECK(m && align_model_segment(m, 0)->slope == 2.0);
	CHECK(m && align_guest_to_host(m, 0, 0x4000000000000000ull, &h) == 0 &&
	      h == 0x2000000000000000ull);
	align_model_free(m);
}

/* offset writes out of time order, two at one instant (the same write
 * twice): sorted, the repeat starts no segment */
static void test_offsets_unsorted(void)
{
	struct align_offset_event off[] = {
		{ 6 * HZ, 0, 200, 300 }, { 1 * HZ, 0, 0, 100 }, { 3 * HZ, 0, 100, 200 },
		{ 3 * HZ, 0, 100, 200 },
	};
	struct align_input in = { .host_hz = HZ, .offsets = off, .n_offsets = 4 };
	struct align_model *m = align_model_build(&in);

	CHECK(m && align_model_nr_segments(m) == 3);
	CHECK(m && align_model_segment(m, 1)->tsc_host_start == 3 * HZ &&
	      align_model_segment(m, 1)->tsc_host_end == 6 * HZ);
	CHECK(h2g(m, 0, 2 * HZ) == 2 * HZ + 100);
	CHECK(h2g(m, 0, 4 * HZ) == 4 * HZ + 200);
	CHECK(h2g(m, 0, 7 * HZ) == 7 * HZ + 300);
	align_model_free(m);
}

/* five markers, two of which contradict the other three and each other's
 * line with them: no slope fits all, 3 of 5 is short of 9/10 but a
 * majority: the two are outliers, the three give the map */
static void test_majority_outliers(void)
{
	struct vt_marker g[5];
	struct align_host_marker o[5];
	uint64_t h[5] = { 1 * HZ, 2 * HZ, 3 * HZ, 4 * HZ, 5 * HZ }, v;
	int64_t off[5] = { 500, 1000000, 500, 1000000, 500 };
	struct align_input in = { .host_hz = HZ, .guest_markers = g, .host_markers = o,
				  .n_guest_markers = 5, .n_host_markers = 5 };
	struct align_model *m;

	mk_markers(g, o, 5, h, off, 1000);
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_MARKERS);
	CHECK(m && has_warning(m, "vCPU 0: 2 of 5 markers contradict the others (outliers: "
			       "mismatched or mis-timed) and were dropped"));
	CHECK(m && align_model_segment(m, 0)->n_outliers == 2 &&
	      align_model_segment(m, 0)->n_markers == 3);
	CHECK(m && align_model_pair(m, 1)->outlier && align_model_pair(m, 3)->outlier &&
	      !align_model_pair(m, 0)->outlier);
	CHECK(m && align_host_to_guest(m, 0, 3 * HZ, &v) == 0 && v == 3 * HZ + 500);
	align_model_free(m);
}

/* --fit-slope over 600 markers whose upper bracket ends lie on a parabola
 * (guest after = host + 10 i^2 + off): each clips a corner off the
 * feasible polygon, more than its 512 vertices hold.  The line kept still
 * puts every marker inside its bracket widened by the bound. */
static void test_many_vertices(void)
{
	enum { N = 600 };
	static struct vt_marker g[N];
	static struct align_host_marker o[N];
	static uint64_t h[N];
	static int64_t off[N];
	struct align_input in = { .host_hz = HZ, .fit_slope = 1, .guest_markers = g,
				  .host_markers = o, .n_guest_markers = N, .n_host_markers = N };
	const uint64_t w = 5000000;
	struct align_model *m;
	double bound_ticks;
	int bad = 0;

	for (int i = 0; i < N; i++) {
		h[i] = HZ + (uint64_t)i * 100000;
		off[i] = 700 + 10 * (int64_t)i * i - (int64_t)w;
	}
	mk_markers(g, o, N, h, off, w);
	m = align_model_build(&in);
	CHECK(m && align_model_method(m) == ALIGN_SRC_MARKERS);
	CHECK(m && align_model_segment(m, 0)->n_markers == N);
	if (!m)
		return;
	bound_ticks = align_model_bound_ns(m) * (double)HZ / 1e9;
	printf("600 markers on a parabola: slope %.9f, bound %.1f ticks\n",
	       align_model_segment(m, 0)->slope, bound_ticks);
	for (int i = 0; i < N; i++) {
		uint64_t v = h2g(m, 0, h[i]);

		bad += (double)(int64_t)(v - g[i].tsc_guest_before) < -bound_ticks - 1 ||
		       (double)(int64_t)(g[i].tsc_guest_after - v) < -bound_ticks - 1;
	}
	CHECK(bad == 0);
	align_model_free(m);
}

int main(void)
{
	test_fmt();
	test_names();
	test_user_only();
	test_segments_per_vcpu();
	test_markers_any_vcpu();
	test_rank_and_prefer();
	test_vcpu_without_source();
	test_stop();
	test_stop_below_start();
	test_tsync();
	test_many_warnings();
	test_debugfs_readings();
	test_many_views();
	test_guest_max();
	test_fit_slope_edges();
	test_inverted_bracket();
	test_slow_guest_slope();
	test_span();
	test_stop_edges();
	test_offsets_unsorted();
	test_majority_outliers();
	test_many_vertices();
	return check_done();
}
