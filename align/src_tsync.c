/*
 * src_tsync.c - trace-cmd's time sync as an alignment source: the
 * TIME_SHIFT option of a host-guest recording's guest file (trace-cmd
 * record -A ... with its kvm or ptp protocol), the corrections trace-cmd
 * measured per guest CPU over time.  Loaded from the guest's trace.dat
 * (lib/tracedat.h decodes the option), estimated per segment as trace-cmd
 * applies it, and cross-checked like the others: by markers when the
 * recording has them, by the inside check (align/inside.c) when it has
 * not.  Ranked last: what trace-cmd computed from what KVM or its PTP-like
 * exchange said, unproven.
 */
#include <stdlib.h>
#include <string.h>
#include "align/gather.h"
#include "err.h"
#include "tracedat.h"
#include "grow.h"

#define TSYNC_MAX_SAMPLES	(1U << 20)	/* per recording */

/* A sample's scaling is 0 with fraction bits: host = offset whatever the
 * guest's TSC, a guest clock that stands still.  Nonsense: refused. */
static int tsync_zero_rate(uint64_t scaling, uint32_t frac)
{
	return !scaling && frac;
}

/* Host TSC of guest TSC @g through sample @s, as trace-cmd maps it. */
static long double tsync_host(const struct align_tsync_sample *s, uint64_t g)
{
	long double h = (long double)g;

	if (s->scaling > 1 || s->frac)
		h = h * (long double)s->scaling / (long double)(1ULL << (s->frac & 63));
	return h + (long double)s->offset;
}

static int cmp_ld(const void *a, const void *b)
{
	long double x = *(const long double *)a, y = *(const long double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The segment's line from the samples of its vCPU whose host time falls in
 * it (all of the vCPU's when it has one segment and none falls in it), as
 * trace-cmd applies them: an offset it interpolates between samples (its
 * ptp protocol, VT_TD_TSYNC_INTERPOLATE) is the least-squares line through
 * the samples' guest - host; a constant one (its kvm protocol) their
 * median; through the first sample's scaling (1 without TSC scaling).
 */
static int est_tsync(const struct seg_ctx *x, struct line *l)
{
	const struct align_input *in = x->in;
	const struct align_tsync_sample *first = NULL;
	long double *d, *h, a, sh = 0, sd = 0, shh = 0, shd = 0, k = 0, at;
	size_t n = 0;

	if (!in->n_tsync)
		return 0;
	d = malloc(2 * in->n_tsync * sizeof(*d));
	if (!d)
		return 0;
	h = d + in->n_tsync;
	for (int pass = 0; pass < 2 && !n; pass++) {
		if (pass && !x->only)
			break;
		for (size_t i = 0; i < in->n_tsync; i++) {
			const struct align_tsync_sample *s = &in->tsync[i];
			long double hs = tsync_host(s, s->tsc_guest);

			if (s->vcpu != x->vcpu)	/* each sample's vCPU has segments */
				continue;
			if (tsync_zero_rate(s->scaling, s->frac))
				continue;	/* tsync_samples refused it */
			if (!pass && (hs < (long double)x->start ||
				      (x->end != ALIGN_TSC_END && hs >= (long double)x->end)))
				continue;
			a = (tsync_host(s, 1ULL << 32) - tsync_host(s, 0)) / (long double)(1ULL << 32);
			/* guest - host at the sample, and at ref_h, through it */
			h[n] = hs - (long double)x->ref_h;
			d[n++] = ((long double)x->ref_h - (long double)s->offset) / a -
				 (long double)x->ref_h;
			if (!first)
				first = s;
		}
	}
	if (!n) {
		free(d);
		return 0;
	}
	a = (tsync_host(first, 1ULL << 32) - tsync_host(first, 0)) / (long double)(1ULL << 32);
	for (size_t i = 0; i < n; i++) {
		sh += h[i];
		sd += d[i];
		shh += h[i] * h[i];
		shd += h[i] * d[i];
	}
	if (first->interpolate && n >= 2 && n * shh - sh * sh > 0) {
		/* d(host) = at + k (host - ref_h): the offset trace-cmd moves */
		k = (n * shd - sh * sd) / (n * shh - sh * sh);
		at = (sd - k * sh) / n;
	} else {
		vt_sort(d, n, sizeof(*d), cmp_ld);
		at = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
	}
	free(d);
	l->ref_h = x->ref_h;
	l->ref_g = x->ref_h + (uint64_t)(int64_t)llroundl(at);
	l->b = 0.0;
	l->slope = (double)(1.0L / a + k);
	/* a guest clock never stands still or runs backward against the
	 * host's: ptp offsets that fall faster than time passes fit a slope
	 * <= 0, nonsense the model must not take (its bounds divide by it) */
	return l->slope > 0;
}

/* The samples of a TIME_SHIFT option as the model takes them: their count,
 * a malloc'ed array in *@out (0 and NULL if none or out of memory); those
 * whose scaling is 0 with fraction bits are refused, counted in *@bad. */
static size_t tsync_samples(const struct vt_td_tsync *t, struct align_tsync_sample **out,
			    size_t *bad)
{
	size_t n = 0, k = 0;

	*out = NULL;
	*bad = 0;
	for (uint32_t c = 0; c < t->nr_cpus; c++)
		n += t->count[c];
	if (!n || n > TSYNC_MAX_SAMPLES)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return 0;
	for (uint32_t c = 0; c < t->nr_cpus; c++)
		for (uint32_t i = 0; i < t->count[c]; i++) {
			const struct vt_td_tsync_sample *s = &t->samples[c][i];

			if (tsync_zero_rate(s->scaling, s->frac)) {
				(*bad)++;
				continue;
			}
			(*out)[k++] = (struct align_tsync_sample){
				(int32_t)c, s->time, s->offset, s->scaling, s->frac,
				!!(t->flags & VT_TD_TSYNC_INTERPOLATE) };
		}
	return k;
}

/* The guest's trace.dat: its TIME_SHIFT option's samples, if any. */
static int tsync_guest_trace(struct align_gather *g, struct vt_td_reader *r, const char *path)
{
	const struct vt_td_tsync *t = vt_td_read_tsync(r);
	struct align_samples *s = g->s;
	size_t bad;

	if (!t) {
		align_gather_note(s, "guest: %s: %d CPUs, clock %s, no time-sync data", path,
				  vt_td_read_nr_cpus(r),
				  *vt_td_read_clock(r) ? vt_td_read_clock(r) : "unknown");
		return 0;
	}
	s->in.n_tsync = tsync_samples(t, &s->tsync, &bad);
	align_gather_note(s, "guest: %s: trace-cmd time sync (TIME_SHIFT): %zu samples over %u "
			  "vCPUs, flags 0x%x%s", path, s->in.n_tsync, t->nr_cpus, t->flags,
			  t->flags & VT_TD_TSYNC_INTERPOLATE ? " (interpolated)" : "");
	if (bad)
		align_gather_note(s, "guest: %s: %zu TIME_SHIFT samples rejected: scaling 0 with "
				  "fraction bits (a guest TSC that stands still against the host's)",
				  path, bad);
	return 0;
}

const struct align_source_def align_src_tsync = {
	.id = ALIGN_SRC_TSYNC,
	.name = "tsync",
	.rank = 4,
	.estimate = est_tsync,
};

const struct align_source_io align_io_tsync = {
	.id = ALIGN_SRC_TSYNC,
	.guest_trace = tsync_guest_trace,
};
