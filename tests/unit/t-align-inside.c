/*
 * t-align-inside.c - unit tests of the inside check (align/inside.c) on
 * hand-made runs and guest readings whose answer is known exactly: runs of
 * several vCPUs, readings inside, between two runs, past the last one, of
 * a vCPU with no run, of a vCPU the model cannot map, and with no vCPU.
 * For the project's developers (tests/run).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "marker_fixture.h"
#include "align/align.h"
#include "marker.h"

#define HZ	2000000000ull

/*
 * The model: vCPU 0 by debugfs (guest = host + 40), vCPU 1 only by two
 * markers no map can hold (no source: unmapped).  The checked readings
 * (guest TSC = host + 40 on vCPU 0):
 *   vCPU 0: host 1.2e9 (run [1e9, 1.5e9]), 2.1e9 (run [2e9, 2.5e9]):
 *           inside, the map may move by [-0.1e9, +0.3e9] ticks;
 *           1.7e9: between the runs, 0.2e9 ticks from the nearer;
 *           3e9: past the last run (not counted);
 *   vCPU 1: two readings, unmapped; vCPU 2: no run; no vCPU: skipped.
 */
static void test_inside(void)
{
	struct align_debugfs_snap d = { 0, 0, 40, 0, 0 };
	struct vt_marker mg[2], g[5];
	struct align_host_marker mo[2];
	struct align_input in = { .host_hz = HZ, .snaps = &d, .n_snaps = 1 };
	struct align_run runs[] = {
		{ 3, 1000000000, 2000000000 },	/* another vCPU's, listed first */
		{ 0, 2000000000, 2500000000 },
		{ 1, 1000000000, 2000000000 },
		{ 0, 1000000000, 1500000000 },
	};
	struct align_samples s;
	struct align_inside out;
	struct align_model *m;

	for (int i = 0; i < 2; i++) {
		uint64_t h = (uint64_t)(i + 1) * HZ, gm = h + 40 + (uint64_t)i * (HZ * 4 / 10);

		marker_fix_pio(&mg[i], VT_MARKER_CPU_NONE, (uint64_t)i, gm - 100, gm + 100);
		mo[i] = (struct align_host_marker){ h, 1, mg[i].value, 1, 0 };
	}
	in.guest_markers = mg;
	in.n_guest_markers = 2;
	in.host_markers = mo;
	in.n_host_markers = 2;
	m = align_model_build(&in);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(align_model_nr_segments(m) == 2 && align_model_segment(m, 1)->vcpu == 1 &&
	      align_model_segment(m, 1)->source == ALIGN_SRC_NONE);

	marker_fix_pio(&g[0], 0, 0, 1200000040, 2100000040);
	marker_fix_pio(&g[1], 0, 1, 1700000040, 3000000040);
	marker_fix_pio(&g[2], 1, 2, 1500000040, 1600000040);
	marker_fix_pio(&g[3], 2, 3, 1500000040, 1600000040);
	marker_fix_pio(&g[4], VT_MARKER_CPU_NONE, 4, 1500000040, 1600000040);
	memset(&s, 0, sizeof(s));
	s.runs = runs;
	s.n_runs = 4;
	s.in.guest_markers = g;
	s.in.n_guest_markers = 5;
	CHECK(align_inside_check(m, &s, &out) == 0);
	CHECK(out.checked && out.n_runs == 4);
	CHECK(out.n_marker_readings == 8 && out.n_trace_events == 0);
	CHECK(out.n_events == 3 && out.n_inside == 2);
	CHECK(out.n_outside_span == 1 && out.n_unmapped == 2 && out.n_no_runs == 2);
	CHECK(out.worst_vcpu == 0 && out.worst_tsc_guest == 1700000040);
	CHECK(out.worst_ns == 100e6);			/* 0.2e9 ticks at 2 GHz */
	CHECK(out.shift_lo_ns == -50e6 && out.shift_hi_ns == 150e6);

	/* no runs: nothing checked */
	s.n_runs = 0;
	CHECK(align_inside_check(m, &s, &out) == 0);
	CHECK(!out.checked && out.n_events == 0 && out.worst_vcpu == ALIGN_VCPU_ANY);
	align_model_free(m);
}

int main(void)
{
	test_inside();
	return check_done();
}
