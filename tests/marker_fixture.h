/*
 * marker_fixture.h - for the unit tests that build guest markers by hand
 * (t-align-inside, t-align-model, t-merge-markers): one PIO marker as the
 * guest's `vmtrace marker` writes it (lib/marker.h).
 */
#ifndef VT_TESTS_MARKER_FIXTURE_H
#define VT_TESTS_MARKER_FIXTURE_H

#include <stdint.h>
#include <string.h>
#include "marker.h"

/* @g: the PIO marker of sequence number @seq (its value from it) from
 * guest CPU @cpu (VT_MARKER_CPU_NONE: unknown), bracketed by the guest
 * TSC reads @before and @after. */
static inline void marker_fix_pio(struct vt_marker *g, uint32_t cpu, uint64_t seq,
				  uint64_t before, uint64_t after)
{
	memset(g, 0, sizeof(*g));
	g->kind = VT_MARKER_PIO;
	g->size = 4;
	g->addr = VT_MARKER_PORT;
	g->value = VT_MARKER_VALUE(seq);
	g->cpu = cpu;
	g->seq = seq;
	g->tsc_guest_before = before;
	g->tsc_guest_after = after;
}

#endif
