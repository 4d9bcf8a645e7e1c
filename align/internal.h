/*
 * internal.h - what align/'s own files share and no other module sees: the
 * model's layout (align/model.c builds it, align/clock.c applies it per
 * event).  Everything public is in align/align.h.
 */
#ifndef ALIGN_INTERNAL_H
#define ALIGN_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <math.h>
#include "align/align.h"
#include "tsc.h"

struct align_model {
	uint64_t host_hz;
	struct vt_tsc_ns host_ns;	/* host TSC -> ns (lib/tsc.h) */
	struct align_segment *seg;
	uint64_t *seg_g_lo;		/* guest TSC at each segment's start */
	uint64_t *seg_g_hi;		/* ... and at its end (last: UINT64_MAX) */
	struct align_clock_seg *cseg;	/* the per-event form of each segment */
	size_t nseg;
	struct align_source_view *view;
	size_t nview, cap_view;
	struct align_marker_pair *pair;
	size_t npair;
	char **warn;
	size_t nwarn;
	enum align_source method;
	double bound_ns;
	char summary[192];
};

/* ---- the alignment sources (align/src_*.c), registered in model.c ---- */

/* A line guest = ref_g + b + slope * (host - ref_h): a source's view of
 * one segment. */
struct line {
	uint64_t ref_h, ref_g;
	double b, slope;
};

/* What a source's estimator is given of one segment. */
struct seg_ctx {
	const struct align_input *in;
	int32_t vcpu;				/* ALIGN_VCPU_ANY: all */
	uint64_t start, end;			/* host TSC [start, end) */
	uint64_t ref_h;				/* where the lines are compared */
	const struct align_offset_event *ev;	/* the write that starts the segment */
	const struct align_debugfs_snap *snap;	/* its latest debugfs reading */
	uint64_t ratio;				/* debugfs scaling (0: none) */
	uint32_t frac;
	const struct line *markers;		/* the markers' estimate, NULL: none */
	int only;				/* the vCPU's one segment */
};

/* An alignment source as the model sees it (pure: no I/O): its name, rank
 * and estimator.  Its part of the gathering layer - the hooks that read
 * its samples - is a struct align_source_io of the same file, registered
 * in the gathering layer (align/gather.h, align/sources.c). */
struct align_source_def {
	enum align_source id;
	const char *name;		/* in reports and JSON */
	unsigned rank;			/* lower: chosen first */
	/* 1 with @l when the source has something to say of the segment */
	int (*estimate)(const struct seg_ctx *x, struct line *l);
};

extern const struct align_source_def align_src_markers, align_src_debugfs,
	align_src_tracepoint, align_src_tsync, align_src_user;

/* A line from KVM's definition: guest = ((h * ratio) >> frac) + offset
 * (ratio 0: no scaling; else 0 < frac < 64, the only ratios seg_debugfs
 * keeps), through host TSC @ref_h. */
static inline struct line align_line_kvm(uint64_t ref_h, int64_t offset, uint64_t ratio,
					 uint32_t frac)
{
	struct line l = { ref_h, 0, 0.0, 1.0 };

	if (ratio) {
		unsigned __int128 g = ((unsigned __int128)ref_h * ratio) >> frac;

		l.ref_g = (uint64_t)g + (uint64_t)offset;
		l.slope = (double)ratio / (double)(1ull << frac);
	} else {
		l.ref_g = ref_h + (uint64_t)offset;
	}
	return l;
}

/* A segment in the form the per-event path applies (align/clock.c). */
struct align_clock_seg {
	uint64_t g_lo, g_hi;		/* guest TSC range (as seg_g_lo/hi) */
	uint64_t ref_tsc_guest, ref_tsc_host;
	uint64_t delta_tsc;		/* unit slope: host = guest + delta (mod 2^64) */
	double host_per_guest;		/* 1 / slope, precomputed: no division */
	int32_t vcpu;
	uint8_t unit;			/* slope exactly 1 */
	uint8_t none;			/* no source: nothing maps here */
};

/* Guest TSC @g -> host TSC through segment @cs: an add for an unscaled
 * TSC, else the line, rounded to the nearest host tick. */
static inline uint64_t align_clock_seg_host(const struct align_clock_seg *cs, uint64_t g)
{
	if (likely(cs->unit))
		return g + cs->delta_tsc;
	return cs->ref_tsc_host + (uint64_t)llround((double)(int64_t)(g - cs->ref_tsc_guest) *
						    cs->host_per_guest);
}

/* The segments of @vcpu's map, [*@first, *@last) (ALIGN_VCPU_ANY or a vCPU
 * the model does not know: the first vCPU's); -1 when the model has none.
 * align/model.c; the queries and the clock cursors use it. */
int align_model_vcpu_range(const struct align_model *m, int vcpu, size_t *first, size_t *last);


#endif
