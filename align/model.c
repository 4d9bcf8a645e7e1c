/*
 * model.c - builds vmtrace's clock model from samples and answers queries
 * (see align.h and docs/align.md for the estimator and its bound).  Pure:
 * no I/O, no printing (warnings are kept as strings).  Building allocates;
 * queries do not and may run from any number of threads at once.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "align/align.h"
#include "align/internal.h"
#include "err.h"
#include "grow.h"

#define SLOPE_BOX		0.25	/* free-slope fit: |slope - known| <= this */
#define POLY_MAX		512	/* vertices of the feasible polygon (convex,
					 * grows by at most one per clip) */
#define ROUND_TICKS		2.0	/* slack for integer rounding, in ticks */
#define HZ_MISMATCH		0.02	/* warn if guest hz / (host hz*slope) is off by more */
#define WARN_MAX		256
#define RATIO_MIN		(1.0 / 64)	/* plausible TSC scaling ratios */
#define RATIO_MAX		64.0
#define OUTLIER_NUM		9	/* a known-slope set of >= 9/10 of the */
#define OUTLIER_DEN		10	/* markers makes the rest outliers */
#define FMT_HALF_NS		0.5
#define FMT_NS_PER_US		1e3
#define FMT_NS_PER_MS		1e6
#define FMT_NS_PER_H		3600e9
#define FMT_PREC_MODEL		2	/* decimals of us/ms/h in summaries */


/* One line: guest = ref_g + b + slope * (host - ref_h), b in ticks. */
struct mest {
	int ok;
	int free_slope;
	struct line l;
	double bound_ticks;	/* guaranteed |guest error| over the data span */
	double lo, hi;		/* fixed slope: feasible b interval */
	size_t used, outliers;
};

static VT_PRINTF(2, 3) void warn(struct align_model *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	char *s;

	if (m->nwarn >= WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = strdup(buf);
	if (!s)
		return;
	m->warn[m->nwarn++] = s;
}

/* ---- ns conversions: lib/tsc.h's vt_tsc_ns through the model's host clock ---- */

uint64_t align_host_to_ns(const struct align_model *m, uint64_t tsc_host)
{
	return vt_tsc_ns(&m->host_ns, tsc_host);
}

static double ticks_to_ns(const struct align_model *m, double ticks)
{
	return ticks * (double)VT_NS_PER_SEC / (double)m->host_hz;
}

/* ---- lines ---- */

static double line_eval_rel(const struct line *l, uint64_t h)
{
	return l->b + l->slope * (double)(int64_t)(h - l->ref_h);
}

/* guest TSC the line gives at host time h, rounded */
static uint64_t line_guest(const struct line *l, uint64_t h)
{
	if (l->slope == 1.0)
		return l->ref_g + (uint64_t)llround(l->b) + (h - l->ref_h);
	return l->ref_g + (uint64_t)llround(line_eval_rel(l, h));
}

/* ---- the marker estimator ---- */

struct pt {
	double d, b;
};

/* Clip convex polygon @p (n vertices) by  b + d*x <= c  (sign s = +1) or
 * b + d*x >= c (s = -1).  Returns the new vertex count (0: empty). */
static size_t clip(struct pt *p, size_t n, struct pt *tmp, double x, double c, double s)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pt *a = &p[i], *b = &p[(i + 1) % n];
		double fa = s * (a->b + a->d * x - c), fb = s * (b->b + b->d * x - c);

		if (fa <= 0 && k < POLY_MAX)
			tmp[k++] = *a;
		if ((fa < 0 && fb > 0) || (fa > 0 && fb < 0)) {
			double t = fa / (fa - fb);

			if (k < POLY_MAX)
				tmp[k++] = (struct pt){ a->d + t * (b->d - a->d),
							a->b + t * (b->b - a->b) };
		}
	}
	memcpy(p, tmp, k * sizeof(*p));
	return k;
}

/* The markers of a segment, relative to the first one. */
struct mset {
	const struct align_marker_pair **p;
	size_t n;
	uint64_t ref_h, ref_g;
	double a0;		/* known slope */
};

static void mset_bounds(const struct mset *s, size_t i, double *x, double *lo, double *hi)
{
	const struct align_marker_pair *p = s->p[i];

	*x = (double)(int64_t)(p->tsc_host - s->ref_h);
	*lo = (double)(int64_t)(p->tsc_guest_before - s->ref_g) - s->a0 * *x;
	*hi = (double)(int64_t)(p->tsc_guest_after - s->ref_g) - s->a0 * *x;
}

/* slope fixed to a0: b in [max lo_i, min hi_i]; @keep (or NULL: all) */
static int est_fixed(const struct mset *s, const unsigned char *keep, struct mest *e)
{
	double lo = -INFINITY, hi = INFINITY, x, l, h;

	e->used = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (keep && !keep[i])
			continue;
		mset_bounds(s, i, &x, &l, &h);
		if (l > lo)
			lo = l;
		if (h < hi)
			hi = h;
		e->used++;
	}
	e->lo = lo;
	e->hi = hi;
	if (!e->used || lo > hi)
		return -1;
	e->ok = 1;
	e->free_slope = 0;
	e->l = (struct line){ s->ref_h, s->ref_g, (lo + hi) / 2, s->a0 };
	e->bound_ticks = (hi - lo) / 2;
	return 0;
}

/* slope free within a0 +- SLOPE_BOX: the feasible (d, b) polygon; the line
 * through the middles of the feasible guest intervals at the span's ends.
 * The box's low side stops at a0 / 4 (d >= -0.75 a0): a guest TSC never
 * stands still or runs backward against the host's, and the bound divides
 * by the slope; for a0 < 1/3 (a guest TSC far slower than the host's),
 * a0 - SLOPE_BOX would let crafted markers fit a slope <= 0.  For a0 >=
 * 1/3 the box is a0 +- SLOPE_BOX as before.  Clipping keeps every point
 * of the polygon inside the box, and the fitted d, the change of the
 * interval middles over [x1, x2], lies between its least and greatest d:
 * the slope is >= a0 / 4 > 0 (seg_debugfs keeps a0 >= RATIO_MIN). */
static int est_free(const struct mset *s, uint64_t span_lo, uint64_t span_hi, struct mest *e)
{
	struct pt poly[POLY_MAX], tmp[POLY_MAX];
	double x, l, h, x1, x2, u1 = -INFINITY, l1 = INFINITY, u2 = -INFINITY, l2 = INFINITY;
	double m1, m2, d, d_lo = fmax(-SLOPE_BOX, -0.75 * s->a0);
	size_t n;

	if (s->n < 2)
		return -1;
	mset_bounds(s, 0, &x, &l, &h);
	poly[0] = (struct pt){ d_lo, l };
	poly[1] = (struct pt){ SLOPE_BOX, l };
	poly[2] = (struct pt){ SLOPE_BOX, h };
	poly[3] = (struct pt){ d_lo, h };
	n = 4;
	for (size_t i = 1; i < s->n && n; i++) {
		mset_bounds(s, i, &x, &l, &h);
		n = clip(poly, n, tmp, x, h, 1.0);
		if (n)
			n = clip(poly, n, tmp, x, l, -1.0);
	}
	if (!n)
		return -1;
	x1 = (double)(int64_t)(span_lo - s->ref_h);
	x2 = (double)(int64_t)(span_hi - s->ref_h);
	for (size_t i = 0; i < n; i++) {
		double v1 = poly[i].b + poly[i].d * x1, v2 = poly[i].b + poly[i].d * x2;

		u1 = fmax(u1, v1);
		l1 = fmin(l1, v1);
		u2 = fmax(u2, v2);
		l2 = fmin(l2, v2);
	}
	m1 = (u1 + l1) / 2;
	m2 = (u2 + l2) / 2;
	d = x2 > x1 ? (m2 - m1) / (x2 - x1) : 0.0;
	e->ok = 1;
	e->free_slope = 1;
	e->used = s->n;
	e->l = (struct line){ s->ref_h, s->ref_g, m1 - d * x1, s->a0 + d };
	e->bound_ticks = fmax(u1 - l1, u2 - l2) / 2;
	return 0;
}

/* an interval end for the sweep: opens sort before closes at equal values */
struct endp {
	double v;
	int close;
};

static int cmp_endp(const void *a, const void *b)
{
	const struct endp *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->close - y->close;
}

/* The largest set of markers whose fixed-slope intervals share a point
 * (a sweep over the sorted ends, O(n log n)): sets keep[i]; returns its
 * size (0 on allocation failure). */
static size_t consistent_set(const struct mset *s, unsigned char *keep)
{
	struct endp *ev = calloc(2 * s->n + 1, sizeof(*ev));
	double x, l, h, best_pt = 0;
	size_t best = 0, cur = 0;

	if (!ev)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		mset_bounds(s, i, &x, &l, &h);
		ev[2 * i] = (struct endp){ l, 0 };
		ev[2 * i + 1] = (struct endp){ h, 1 };
	}
	vt_sort(ev, 2 * s->n, sizeof(*ev), cmp_endp);
	for (size_t k = 0; k < 2 * s->n; k++) {
		if (ev[k].close) {
			cur--;
		} else if (++cur > best) {
			best = cur;
			best_pt = ev[k].v;
		}
	}
	free(ev);
	for (size_t i = 0; i < s->n; i++) {
		mset_bounds(s, i, &x, &l, &h);
		keep[i] = l <= best_pt && best_pt <= h;
	}
	return best;
}

/* keep the consistent set @keep (size @k) with the known slope; flag and
 * report the rest */
static void mark_outliers(struct align_model *m, const struct mset *ms,
			  const unsigned char *keep, size_t k, const char *vname, struct mest *e)
{
	if (est_fixed(ms, keep, e) < 0) {
		e->ok = 0;
		return;
	}
	e->outliers = ms->n - k;
	for (size_t i = 0; i < ms->n; i++)
		if (!keep[i])
			((struct align_marker_pair *)ms->p[i])->outlier = 1;
	warn(m, "%s: %zu of %zu markers contradict the others (outliers: mismatched or "
	     "mis-timed) and were dropped", vname, e->outliers, ms->n);
}

/* ---- building ---- */

struct vcpu_list {
	int32_t *v;
	size_t n;
};

static void vcpu_add(struct vcpu_list *l, int32_t v)
{
	size_t i;

	if (v == ALIGN_VCPU_ANY)
		return;
	for (i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return;
	for (i = l->n; i > 0 && l->v[i - 1] > v; i--)
		l->v[i] = l->v[i - 1];
	l->v[i] = v;
	l->n++;
}

static int cmp_off_time(const void *a, const void *b)
{
	const struct align_offset_event *x = *(const struct align_offset_event *const *)a;
	const struct align_offset_event *y = *(const struct align_offset_event *const *)b;

	if (x->tsc_host != y->tsc_host)
		return x->tsc_host < y->tsc_host ? -1 : 1;
	return 0;
}

void align_fmt_ns(char *buf, size_t sz, double ns, int prec)
{
	double a = fabs(ns);

	if (ns < 0 && a < FMT_HALF_NS)
		ns = 0;		/* no "-0 ns" */
	if (a < FMT_NS_PER_US)
		snprintf(buf, sz, "%.0f ns", ns);
	else if (a < FMT_NS_PER_MS)
		snprintf(buf, sz, "%.*f us", prec, ns / FMT_NS_PER_US);
	else if (a < (double)VT_NS_PER_SEC)
		snprintf(buf, sz, "%.*f ms", prec, ns / FMT_NS_PER_MS);
	else if (a < FMT_NS_PER_H)
		snprintf(buf, sz, "%.3f s", ns / (double)VT_NS_PER_SEC);
	else
		snprintf(buf, sz, "%.*f h", prec, ns / FMT_NS_PER_H);
}

/* Durations in the model's summary and warnings: two decimals. */
static void fmt_dur(char *buf, size_t sz, double ns)
{
	align_fmt_ns(buf, sz, ns, FMT_PREC_MODEL);
}

static int view_add(struct align_model *m, const struct align_source_view *v)
{
	if (m->nview == m->cap_view) {
		size_t nc = m->cap_view ? 2 * m->cap_view : 16;
		struct align_source_view *nv = realloc(m->view, nc * sizeof(*nv));

		if (!nv)
			return -1;
		m->view = nv;
		m->cap_view = nc;
	}
	m->view[m->nview++] = *v;
	return 0;
}

/*
 * The sources a segment can be aligned by, one file each (align/src_*.c:
 * its estimator, name and rank), registered here.  The present source of
 * lowest rank is chosen; every other present one is cross-checked against
 * it; the rows stand in report order (views, JSON).  docs/align.md says
 * why the ranks are what they are.  A new source: an enum value, its
 * samples in struct align_input, its file (estimator here, loader hooks in
 * align_source_ios[] of align/sources.c) and a row in each list.
 */
static const struct align_source_def *const align_sources[] = {
	&align_src_markers,
	&align_src_debugfs,
	&align_src_tracepoint,
	&align_src_tsync,
	&align_src_user,
};
static const size_t align_nr_sources = VT_ARRAY_SIZE(align_sources);

enum align_source align_source_by_name(const char *name)
{
	for (size_t i = 0; i < align_nr_sources; i++)
		if (!strcmp(align_sources[i]->name, name))
			return align_sources[i]->id;
	return ALIGN_SRC_NONE;
}

const char *align_source_name(enum align_source s)
{
	for (size_t i = 0; i < align_nr_sources; i++)
		if (align_sources[i]->id == s)
			return align_sources[i]->name;
	return "none";
}

/* a candidate: a source's line for one segment */
struct cand {
	enum align_source src;
	struct line l;
	int present;
};

/* One segment being built: what its phases share. */
struct seg_build {
	struct align_model *m;
	const struct align_input *in;
	int32_t v;
	uint64_t start, end;
	const struct align_offset_event *ev;	/* the write that starts it */
	char vname[32];
	const struct align_debugfs_snap *snap;	/* its latest debugfs reading */
	double a0;				/* the known slope (debugfs ratio) */
	uint64_t ratio;
	uint32_t frac;
	struct mset ms;				/* its markers */
	struct mest e;				/* their estimate */
	uint64_t span_lo, span_hi;		/* what the model must cover */
	double bound_ns;			/* the markers' proven bound, < 0: none */
	uint64_t ref_h;
	struct cand c[ALIGN_SRC_COUNT];
	enum align_source chosen;
};

/* debugfs: the latest snapshot inside the segment (an undated one belongs
 * to the last segment), and the scaling ratio it reads. */
static void seg_debugfs(struct seg_build *b, int is_last)
{
	const struct align_input *in = b->in;

	for (size_t i = 0; i < in->n_snaps; i++) {
		const struct align_debugfs_snap *s = &in->snaps[i];

		if (s->vcpu != b->v)	/* b->v is ANY only when every snap's is */
			continue;
		if (s->tsc_host ? (s->tsc_host >= b->start && s->tsc_host < b->end) : is_last) {
			if (b->snap && (b->snap->offset_tsc != s->offset_tsc ||
					b->snap->ratio != s->ratio))
				warn(b->m, "%s: debugfs tsc-offset changed from %lld to %lld with no "
				     "kvm_write_tsc_offset event: using the later one", b->vname,
				     (long long)b->snap->offset_tsc, (long long)s->offset_tsc);
			if (!b->snap || s->tsc_host >= b->snap->tsc_host)
				b->snap = s;
		}
	}
	b->a0 = 1.0;
	if (b->snap && b->snap->ratio && b->snap->frac_bits && b->snap->frac_bits < 64) {
		b->a0 = (double)b->snap->ratio / (double)(1ull << b->snap->frac_bits);
		if (b->a0 < RATIO_MIN || b->a0 > RATIO_MAX) {
			warn(b->m, "%s: debugfs tsc-scaling-ratio %llu with %u fraction bits is %g: "
			     "implausible, ignored", b->vname, (unsigned long long)b->snap->ratio,
			     b->snap->frac_bits, b->a0);
			b->a0 = 1.0;
		} else {
			b->ratio = b->snap->ratio;
			b->frac = b->snap->frac_bits;
		}
	}
}

/* The markers of this vCPU (or of no known vCPU) inside the segment, and
 * the span the model must cover: the segment clipped to the trace (or,
 * when the trace span is unknown, to the markers).  -1: out of memory. */
static int seg_markers(struct seg_build *b)
{
	const struct align_input *in = b->in;
	struct mset *ms = &b->ms;

	ms->p = calloc(b->m->npair + 1, sizeof(*ms->p));
	if (!ms->p)
		return -1;
	for (size_t i = 0; i < b->m->npair; i++) {
		const struct align_marker_pair *p = &b->m->pair[i];

		/* b->v is ANY only when every pair's is */
		if ((p->vcpu == b->v || p->vcpu == ALIGN_VCPU_ANY) &&
		    p->tsc_host >= b->start && p->tsc_host < b->end)
			ms->p[ms->n++] = p;
	}
	ms->a0 = b->a0;
	if (ms->n) {
		ms->ref_h = ms->p[0]->tsc_host;
		ms->ref_g = ms->p[0]->tsc_guest_before;
	}
	b->span_lo = b->start;
	b->span_hi = b->end == ALIGN_TSC_END ? b->start : b->end - 1;
	if (in->span_tsc_host_end > in->span_tsc_host_start) {
		if (in->span_tsc_host_start > b->span_lo)
			b->span_lo = in->span_tsc_host_start;
		if (b->end == ALIGN_TSC_END || in->span_tsc_host_end < b->span_hi)
			b->span_hi = in->span_tsc_host_end;
	} else if (ms->n) {
		b->span_lo = ms->p[0]->tsc_host;
		b->span_hi = ms->p[ms->n - 1]->tsc_host;
	}
	if (b->span_hi < b->span_lo)
		b->span_hi = b->span_lo;
	if (ms->n) {
		if (ms->p[0]->tsc_host < b->span_lo)
			b->span_lo = ms->p[0]->tsc_host;
		if (ms->p[ms->n - 1]->tsc_host > b->span_hi)
			b->span_hi = ms->p[ms->n - 1]->tsc_host;
	}
	return 0;
}

/* The markers' estimate and its proven bound.  -1: out of memory. */
static int seg_estimate(struct seg_build *b)
{
	struct mset *ms = &b->ms;
	struct mest *e = &b->e;
	unsigned char *keep;
	size_t k = 0;

	b->bound_ns = -1.0;
	if (!ms->n)
		return 0;
	keep = calloc(ms->n, 1);
	if (!keep)
		return -1;
	if (b->in->fit_slope && ms->n >= 2 && est_free(ms, b->span_lo, b->span_hi, e) == 0) {
		/* asked for a fitted slope */
	} else if (est_fixed(ms, NULL, e) == 0) {
		/* all markers agree with the known slope */
	} else if ((k = consistent_set(ms, keep)) >= 2 && k * OUTLIER_DEN >= ms->n * OUTLIER_NUM) {
		/* nearly all agree with the known slope: the rest are outliers */
		mark_outliers(b->m, ms, keep, k, b->vname, e);
	} else if (est_free(ms, b->span_lo, b->span_hi, e) == 0) {
		warn(b->m, "%s: markers do not fit slope %.9f (the known TSC ratio) but fit "
		     "slope %.9f (%+.1f ppm): guest and host TSC rates differ; using "
		     "the fitted slope", b->vname, b->a0, e->l.slope, (e->l.slope / b->a0 - 1) * 1e6);
	} else if (k >= 2 && 2 * k > ms->n) {
		mark_outliers(b->m, ms, keep, k, b->vname, e);
	} else {
		e->ok = 0;
		warn(b->m, "%s: INFEASIBLE: the %zu markers admit no common clock map (largest "
		     "consistent set %zu): markers NOT used", b->vname, ms->n, k);
	}
	free(keep);
	if (e->ok)
		b->bound_ns = ticks_to_ns(b->m, (e->bound_ticks + ROUND_TICKS / 4) / e->l.slope);
	return 0;
}

/* Every source's line for the segment, and the one chosen: by rank, or the
 * one asked for (below a user offset). */
static void seg_choose(struct seg_build *b, int only)
{
	const struct seg_ctx x = { b->in, b->v, b->start, b->end, b->ref_h, b->ev, b->snap,
				   b->ratio, b->frac, b->e.ok ? &b->e.l : NULL, only };
	unsigned best = UINT_MAX;

	b->chosen = ALIGN_SRC_NONE;
	for (size_t i = 0; i < align_nr_sources; i++) {
		const struct align_source_def *ss = align_sources[i];
		struct cand *cd = &b->c[ss->id];
		unsigned rank = ss->id == b->in->prefer ? 1 : ss->rank + 1;

		if (ss->id == ALIGN_SRC_USER)
			rank = 0;
		cd->src = ss->id;
		cd->present = ss->estimate(&x, &cd->l);
		if (cd->present && rank < best) {
			best = rank;
			b->chosen = ss->id;
		}
	}
}

/* Each present source against the chosen one at ref_h: a view each, and a
 * warning beyond the markers' proven bound.  -1: out of memory. */
static int seg_crosscheck(struct seg_build *b)
{
	struct align_model *m = b->m;
	const struct cand *ch = &b->c[b->chosen];
	double seg_bound = b->chosen == ALIGN_SRC_MARKERS ? b->bound_ns : -1.0;
	/* within the proven bound: the chosen map's, or the markers' when
	 * another source was asked for */
	double tol_ns = (b->bound_ns > 0 ? b->bound_ns : 0) + ticks_to_ns(m, ROUND_TICKS);

	for (size_t i = 0; i < align_nr_sources; i++) {
		int s = (int)align_sources[i]->id;
		struct align_source_view vw = { 0 };
		char d1[32], d2[32];

		if (!b->c[s].present)
			continue;
		vw.source = (enum align_source)s;
		vw.vcpu = b->v;
		vw.tsc_host = b->ref_h;
		vw.offset_tsc = (int64_t)(line_guest(&b->c[s].l, b->ref_h) - b->ref_h);
		vw.slope = b->c[s].l.slope;
		vw.agrees = -1;
		if (s != (int)b->chosen) {
			double dt = (double)(int64_t)(line_guest(&b->c[s].l, b->ref_h) -
						      line_guest(&ch->l, b->ref_h));

			vw.diff_ns = ticks_to_ns(m, dt / ch->l.slope);
			vw.agrees = fabs(vw.diff_ns) <= tol_ns;
			if (!vw.agrees) {
				fmt_dur(d1, sizeof(d1), vw.diff_ns);
				if (seg_bound >= 0)
					fmt_dur(d2, sizeof(d2), seg_bound);
				else
					snprintf(d2, sizeof(d2), "unproven");
				warn(m, "SOURCES DISAGREE: %s, segment from host TSC %llu: %s "
				     "says offset %lld, %s says %lld: off by %s (bound %s); "
				     "using %s, %s ignored", b->vname, (unsigned long long)b->start,
				     align_source_name(vw.source), (long long)vw.offset_tsc,
				     align_source_name(b->chosen),
				     (long long)(line_guest(&ch->l, b->ref_h) - b->ref_h), d1, d2,
				     align_source_name(b->chosen), align_source_name(vw.source));
			}
		}
		if (view_add(m, &vw) < 0)
			return -1;
	}
	return 0;
}

static int build_segment(struct align_model *m, const struct align_input *in, int32_t v,
			 uint64_t start, uint64_t end, const struct align_offset_event *ev,
			 int n_segs_v, int is_last)
{
	struct align_segment *sg = &m->seg[m->nseg];
	struct seg_build *b = calloc(1, sizeof(*b));
	int ret = -1;

	if (!b)
		return -1;
	b->m = m;
	b->in = in;
	b->v = v;
	b->start = start;
	b->end = end;
	b->ev = ev;
	if (v == ALIGN_VCPU_ANY)
		snprintf(b->vname, sizeof(b->vname), "all vCPUs");
	else
		snprintf(b->vname, sizeof(b->vname), "vCPU %d", v);
	seg_debugfs(b, is_last);
	if (seg_markers(b) < 0 || seg_estimate(b) < 0)
		goto out;
	b->ref_h = b->ms.n ? b->ms.ref_h : (ev ? ev->tsc_host : b->span_lo);
	seg_choose(b, is_last && n_segs_v == 1);

	memset(sg, 0, sizeof(*sg));
	sg->vcpu = v;
	sg->tsc_host_start = start;
	sg->tsc_host_end = end;
	sg->source = b->chosen;
	sg->bound_ns = b->chosen == ALIGN_SRC_MARKERS ? b->bound_ns : -1.0;
	sg->n_markers = (uint32_t)(b->e.ok ? b->e.used : 0);
	sg->n_outliers = (uint32_t)b->e.outliers;
	if (b->chosen != ALIGN_SRC_NONE) {
		const struct line *l = &b->c[b->chosen].l;

		sg->ref_tsc_host = l->ref_h;
		sg->ref_tsc_guest = line_guest(l, l->ref_h);
		sg->slope = l->slope;
	}
	if (seg_crosscheck(b) < 0)
		goto out;
	if (b->chosen == ALIGN_SRC_NONE && (n_segs_v > 1 || b->ms.n))
		warn(m, "%s: no usable source for the segment from host TSC %llu",
		     b->vname, (unsigned long long)start);
	if (b->chosen != ALIGN_SRC_NONE && in->guest_hz) {
		double want = (double)in->host_hz * sg->slope;

		if (fabs((double)in->guest_hz / want - 1) > HZ_MISMATCH)
			warn(m, "%s: guest tsc.hz %llu differs from host tsc.hz x slope = %.0f "
			     "by more than %.0f%%: the guest's frequency is not used for the "
			     "map, check either measurement", b->vname,
			     (unsigned long long)in->guest_hz, want, HZ_MISMATCH * 100);
	}
	m->nseg++;
	ret = 0;
out:
	free(b->ms.p);
	free(b);
	return ret;
}

/* The per-event form of every segment (align/clock.c applies it). */
static void clock_segs_build(struct align_model *m)
{
	for (size_t i = 0; i < m->nseg; i++) {
		const struct align_segment *s = &m->seg[i];
		struct align_clock_seg *cs = &m->cseg[i];

		cs->g_lo = m->seg_g_lo[i];
		cs->g_hi = m->seg_g_hi[i];
		cs->ref_tsc_guest = s->ref_tsc_guest;
		cs->ref_tsc_host = s->ref_tsc_host;
		cs->delta_tsc = s->ref_tsc_host - s->ref_tsc_guest;
		cs->unit = s->slope == 1.0;
		cs->host_per_guest = s->slope > 0 ? 1.0 / s->slope : 1.0;
		cs->vcpu = s->vcpu;
		cs->none = s->source == ALIGN_SRC_NONE;
	}
}

/* The guest TSC segment @s gives at host time @h: exact for an unscaled
 * TSC, the line rounded to the nearest tick for a scaled one; clamped to
 * [0, UINT64_MAX].  The one "guest TSC at host time" of a segment (the
 * model's guest ranges and align_host_to_guest).  A reference guest value
 * past 2^63 is one before the guest's TSC 0, wrapped (a reference point
 * before the VM started: a user's negative offset at host TSC 0): signed
 * here, or every later host time would clamp to UINT64_MAX. */
static uint64_t seg_guest_at(const struct align_segment *s, uint64_t h)
{
	double rel = s->slope * (double)(int64_t)(h - s->ref_tsc_host);
	double g = (double)(int64_t)s->ref_tsc_guest + rel;

	if (g <= 0)
		return 0;
	if (g >= (double)UINT64_MAX)
		return UINT64_MAX;
	if (s->slope == 1.0)
		return s->ref_tsc_guest + (h - s->ref_tsc_host);
	/* llround past 2^63 is undefined (LLONG_MIN on x86): a scaled line
	 * that far from its reference is past double's tick precision anyway */
	if (fabs(rel) >= 0x1p63)
		return (uint64_t)g;
	return s->ref_tsc_guest + (uint64_t)llround(rel);
}

struct align_model *align_model_build(const struct align_input *in)
{
	struct align_model *m = calloc(1, sizeof(*m));
	const struct align_offset_event **ev = NULL;
	struct vcpu_list vl = { 0 };
	size_t um_g = 0, um_h = 0, cap_seg, nproven = 0, counts[ALIGN_SRC_COUNT] = { 0 };
	int any_marker_vcpu_unknown = 0;

	if (!m)
		goto oom;
	m->bound_ns = -1.0;
	if (!in->host_hz) {
		vt_err_set("host TSC frequency unknown: give --tsc-hz, a vmtrace.meta with tsc.hz, or "
			   "a trace-cmd trace.dat recorded with --tsc2nsec (its TSC2NSEC option)");
		goto fail;
	}
	m->host_hz = in->host_hz;
	vt_tsc_ns_init(&m->host_ns, m->host_hz);
	m->warn = calloc(WARN_MAX, sizeof(*m->warn));
	if (!m->warn)
		goto oom;
	if (align_markers_match(in->guest_markers, in->n_guest_markers, in->host_markers,
				in->n_host_markers, &m->pair, &m->npair, &um_g, &um_h) < 0)
		goto fail;
	if (um_g)
		warn(m, "%zu of %zu guest markers have no host twin (not recorded on the host, "
		     "or lost): ignored", um_g, in->n_guest_markers);
	if (um_h)
		warn(m, "%zu of %zu host marker observations have no guest record: ignored",
		     um_h, in->n_host_markers);

	vl.v = calloc(in->n_offsets + in->n_snaps + m->npair + in->n_tsync + 1, sizeof(*vl.v));
	ev = calloc(in->n_offsets + 1, sizeof(*ev));
	if (!vl.v || !ev)
		goto oom;
	for (size_t i = 0; i < in->n_offsets; i++)
		vcpu_add(&vl, in->offsets[i].vcpu);
	for (size_t i = 0; i < in->n_snaps; i++)
		vcpu_add(&vl, in->snaps[i].vcpu);
	for (size_t i = 0; i < in->n_tsync; i++)
		vcpu_add(&vl, in->tsync[i].vcpu);
	for (size_t i = 0; i < m->npair; i++) {
		vcpu_add(&vl, m->pair[i].vcpu);
		if (m->pair[i].vcpu == ALIGN_VCPU_ANY)
			any_marker_vcpu_unknown = 1;
	}
	if (!vl.n)
		vl.v[vl.n++] = ALIGN_VCPU_ANY;
	else if (any_marker_vcpu_unknown && vl.n > 1)
		warn(m, "markers carry no vCPU: each is applied to all %zu vCPUs (KVM keeps "
		     "vCPU TSCs matched; a vCPU whose offset differs will show as infeasible)",
		     vl.n);

	cap_seg = in->n_offsets + vl.n + 1;
	m->seg = calloc(cap_seg, sizeof(*m->seg));
	m->seg_g_lo = calloc(cap_seg, sizeof(*m->seg_g_lo));
	m->seg_g_hi = calloc(cap_seg, sizeof(*m->seg_g_hi));
	m->cseg = calloc(cap_seg, sizeof(*m->cseg));
	if (!m->seg || !m->seg_g_lo || !m->seg_g_hi || !m->cseg)
		goto oom;
	for (size_t k = 0; k < vl.n; k++) {
		int32_t v = vl.v[k];
		size_t ne = 0;

		for (size_t i = 0; i < in->n_offsets; i++)
			if (in->offsets[i].vcpu == v)
				ev[ne++] = &in->offsets[i];
		vt_sort(ev, ne, sizeof(*ev), cmp_off_time);
		/* a write of the offset already in force starts no new segment */
		if (ne > 1) {
			size_t j = 1;

			for (size_t i = 1; i < ne; i++)
				if (ev[i]->next_offset_tsc != ev[j - 1]->next_offset_tsc)
					ev[j++] = ev[i];
			ne = j;
		}
		if (!ne) {
			if (build_segment(m, in, v, 0, ALIGN_TSC_END, NULL, 1, 1) < 0)
				goto oom;
			continue;
		}
		/* segment i: from event i (the first from 0) to event i+1 */
		for (size_t i = 0; i < ne; i++) {
			uint64_t s = i ? ev[i]->tsc_host : 0;
			uint64_t e = i + 1 < ne ? ev[i + 1]->tsc_host : ALIGN_TSC_END;

			if (build_segment(m, in, v, s, e, ev[i], (int)ne, i + 1 == ne) < 0)
				goto oom;
		}
	}
	for (size_t i = 0; i < m->nseg; i++) {
		const struct align_segment *s = &m->seg[i];
		uint64_t g = 0;

		counts[s->source]++;
		if (s->bound_ns >= 0) {
			nproven++;
			if (s->bound_ns > m->bound_ns)
				m->bound_ns = s->bound_ns;
		}
		if (s->source != ALIGN_SRC_NONE && s->tsc_host_start)
			g = seg_guest_at(s, s->tsc_host_start);
		m->seg_g_lo[i] = g;
		m->seg_g_hi[i] = UINT64_MAX;
		if (s->source != ALIGN_SRC_NONE && s->tsc_host_end != ALIGN_TSC_END)
			m->seg_g_hi[i] = seg_guest_at(s, s->tsc_host_end);
		/* its VM stopped inside it for good (saved, restored elsewhere):
		 * guest stamps past the stop belong to a later segment */
		for (size_t k = 0; k < in->n_stops && s->source != ALIGN_SRC_NONE; k++) {
			const struct align_vcpu_stop *st = &in->stops[k];
			uint64_t g_stop;

			if ((st->vcpu != s->vcpu && s->vcpu != ALIGN_VCPU_ANY) ||
			    st->tsc_host < s->tsc_host_start || st->tsc_host >= s->tsc_host_end)
				continue;
			g_stop = seg_guest_at(s, st->tsc_host);
			if (g_stop < UINT64_MAX && g_stop + 1 < m->seg_g_hi[i] && g_stop + 1 > m->seg_g_lo[i])
				m->seg_g_hi[i] = g_stop + 1;
		}
	}
	clock_segs_build(m);
	/* the source of most segments that have one: segments without a
	 * source (warned of) do not outvote a vCPU that has one */
	for (int s = ALIGN_SRC_MARKERS; s < ALIGN_SRC_COUNT; s++)
		if (counts[s] && (m->method == ALIGN_SRC_NONE || counts[s] > counts[m->method]))
			m->method = (enum align_source)s;
	if (m->method == ALIGN_SRC_NONE) {
		vt_err_set("no usable clock source: no matched markers, no debugfs tsc-offset, "
			   "no kvm_write_tsc_offset event");
		goto fail;
	}
	if (m->bound_ns >= 0) {
		char b[32];

		fmt_dur(b, sizeof(b), m->bound_ns);
		snprintf(m->summary, sizeof(m->summary), "%s (%zu marker pairs), bound %s%s",
			 align_source_name(m->method), m->npair, b,
			 nproven < m->nseg ? " (some segments unproven)" : "");
	} else {
		snprintf(m->summary, sizeof(m->summary), "%s, bound unproven (no markers)",
			 align_source_name(m->method));
	}
	free(vl.v);
	free(ev);
	return m;
oom:
	vt_err_set("clock model: out of memory");
fail:
	free(vl.v);
	free(ev);
	align_model_free(m);
	return NULL;
}

void align_model_free(struct align_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nwarn; i++)
		free(m->warn[i]);
	free(m->warn);
	free(m->seg);
	free(m->seg_g_lo);
	free(m->seg_g_hi);
	free(m->cseg);
	free(m->view);
	free(m->pair);
	free(m);
}

size_t align_model_nr_segments(const struct align_model *m) { return m->nseg; }
const struct align_segment *align_model_segment(const struct align_model *m, size_t i)
{
	return i < m->nseg ? &m->seg[i] : NULL;
}
size_t align_model_nr_views(const struct align_model *m) { return m->nview; }
const struct align_source_view *align_model_view(const struct align_model *m, size_t i)
{
	return i < m->nview ? &m->view[i] : NULL;
}
size_t align_model_nr_pairs(const struct align_model *m) { return m->npair; }
const struct align_marker_pair *align_model_pair(const struct align_model *m, size_t i)
{
	return i < m->npair ? &m->pair[i] : NULL;
}
size_t align_model_nr_warnings(const struct align_model *m) { return m->nwarn; }
const char *align_model_warning(const struct align_model *m, size_t i)
{
	return i < m->nwarn ? m->warn[i] : NULL;
}
enum align_source align_model_method(const struct align_model *m) { return m->method; }
double align_model_bound_ns(const struct align_model *m) { return m->bound_ns; }
const char *align_model_summary(const struct align_model *m) { return m->summary; }
uint64_t align_model_host_hz(const struct align_model *m) { return m->host_hz; }

/* ---- queries ---- */

/* the segments of @vcpu: [*first, *last); ALIGN_VCPU_ANY or an unknown
 * vCPU: the first vCPU's */
int align_model_vcpu_range(const struct align_model *m, int vcpu, size_t *first, size_t *last)
{
	size_t i = 0, j;

	if (!m->nseg)
		return -1;
	if (vcpu != ALIGN_VCPU_ANY) {
		while (i < m->nseg && m->seg[i].vcpu != vcpu)
			i++;
		if (i == m->nseg)
			i = 0;
	}
	for (j = i; j < m->nseg && m->seg[j].vcpu == m->seg[i].vcpu; j++)
		;
	*first = i;
	*last = j;
	return 0;
}

int align_host_to_guest(const struct align_model *m, int vcpu, uint64_t tsc_host,
			uint64_t *tsc_guest)
{
	size_t first, last, k;
	const struct align_segment *s;

	if (align_model_vcpu_range(m, vcpu, &first, &last) < 0)
		return -1;
	for (k = first; k + 1 < last && tsc_host >= m->seg[k + 1].tsc_host_start; k++)
		;
	s = &m->seg[k];
	if (s->source == ALIGN_SRC_NONE)
		return -1;
	*tsc_guest = seg_guest_at(s, tsc_host);
	return 0;
}
