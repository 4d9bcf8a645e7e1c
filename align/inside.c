/*
 * inside.c - the inside check of `vmtrace align`: a guest event can only
 * happen while its vCPU runs guest code, so once mapped to host time it
 * must fall inside one of the host's [kvm_entry, kvm_exit] of that vCPU's
 * thread.  The fraction of guest events inside, and how far the worst one
 * lies outside, is a measured error for any model on any recording with
 * kvm_entry/kvm_exit on the host - one without markers included (a
 * trace-cmd host-guest pair: trace-cmd's own offsets are checked so).
 *
 * Guest events: every event of the guest's trace.dat (its CPU is the
 * vCPU) and both rdtsc readings of every marker bracket that names its
 * vCPU.  Events outside the span the host recorded runs for are not
 * counted.  Streams the guest file; the runs are sorted per vCPU once.
 */
#include <stdlib.h>
#include <string.h>
#include "align/internal.h"
#include "err.h"
#include "tracedat.h"
#include "grow.h"

static int cmp_run(const void *a, const void *b)
{
	const struct align_run *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->tsc_entry < y->tsc_entry ? -1 : x->tsc_entry > y->tsc_entry;
}

struct inside_ctx {
	const struct align_model *m;
	struct align_vcursors vc;	/* the stream being checked */
	struct align_run *runs;
	size_t n;
	struct align_inside *out;
	double shift_lo, shift_hi;	/* host ticks, over the inside events */
};

/* The runs of @vcpu: [*lo, *hi) of c->runs (sorted). */
static void vcpu_runs(const struct inside_ctx *c, int32_t vcpu, size_t *lo, size_t *hi)
{
	size_t a = 0, b = c->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (c->runs[mid].vcpu < vcpu)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	for (b = a; b < c->n && c->runs[b].vcpu == vcpu; b++)
		;
	*hi = b;
}

/* One guest reading @tsc of @vcpu, the next of its stream: 0, or -1 out
 * of memory (message set). */
static int check_one(struct inside_ctx *c, int32_t vcpu, uint64_t tsc)
{
	struct align_inside *o = c->out;
	size_t lo, hi, a, b;
	uint64_t h;
	double d;

	vcpu_runs(c, vcpu, &lo, &hi);
	if (lo == hi) {
		o->n_no_runs++;
		return 0;
	}
	switch (align_vcursors_guest_host(&c->vc, vcpu, tsc, &h)) {
	case 0:
		break;
	case -1:
		o->n_unmapped++;
		return 0;
	default:
		return -1;
	}
	if (h < c->runs[lo].tsc_entry || h > c->runs[hi - 1].tsc_exit) {
		o->n_outside_span++;
		return 0;
	}
	/* the last run entered at or before h */
	a = lo;
	b = hi;
	while (b - a > 1) {
		size_t mid = a + (b - a) / 2;

		if (c->runs[mid].tsc_entry <= h)
			a = mid;
		else
			b = mid;
	}
	o->n_events++;
	if (h <= c->runs[a].tsc_exit) {
		/* how far the map could move with this event still inside */
		double s_lo = -(double)(h - c->runs[a].tsc_entry);
		double s_hi = (double)(c->runs[a].tsc_exit - h);

		if (!o->n_inside++ || s_lo > c->shift_lo)
			c->shift_lo = s_lo;
		if (o->n_inside == 1 || s_hi < c->shift_hi)
			c->shift_hi = s_hi;
		return 0;
	}
	/* between the exit of run a and the entry of run a + 1 */
	d = (double)(h - c->runs[a].tsc_exit);
	if (a + 1 < hi && (double)(c->runs[a + 1].tsc_entry - h) < d)
		d = (double)(c->runs[a + 1].tsc_entry - h);
	d = d * 1e9 / (double)align_model_host_hz(c->m);
	if (d > o->worst_ns) {
		o->worst_ns = d;
		o->worst_vcpu = vcpu;
		o->worst_tsc_guest = tsc;
	}
	return 0;
}

int align_inside_check(const struct align_model *m, const struct align_samples *s,
		       struct align_inside *out)
{
	struct inside_ctx c = { .m = m, .n = s->n_runs, .out = out };
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->worst_vcpu = ALIGN_VCPU_ANY;
	if (!s->n_runs)
		return 0;
	c.runs = malloc(s->n_runs * sizeof(*c.runs));
	if (!c.runs)
		return vt_err_set("out of memory");
	memcpy(c.runs, s->runs, s->n_runs * sizeof(*c.runs));
	vt_sort(c.runs, c.n, sizeof(*c.runs), cmp_run);
	out->n_runs = c.n;
	/* two streams, each in its own order: the markers (sequence order,
	 * time order per vCPU), then the guest trace's events (time order);
	 * each stamp is mapped as merge maps it (align_vcursors) */
	align_vcursors_init(&c.vc, m);
	for (size_t i = 0; i < s->in.n_guest_markers; i++) {
		const struct vt_marker *g = &s->in.guest_markers[i];

		if (g->cpu == VT_MARKER_CPU_NONE)
			continue;
		if (check_one(&c, (int32_t)g->cpu, g->tsc_guest_before) < 0 ||
		    check_one(&c, (int32_t)g->cpu, g->tsc_guest_after) < 0)
			goto out;
		out->n_marker_readings += 2;
	}
	align_vcursors_free(&c.vc);
	align_vcursors_init(&c.vc, m);
	if (s->guest_r) {
		struct vt_td_event ev;
		int rc;

		while ((rc = vt_td_read_next_any(s->guest_r, &ev)) == 1) {
			if (check_one(&c, ev.cpu, ev.ts) < 0)
				goto out;
			out->n_trace_events++;
		}
		if (rc < 0)
			goto out;
	}
	out->checked = out->n_events > 0;
	if (out->n_inside) {
		double ns_per_tick = 1e9 / (double)align_model_host_hz(m);

		out->shift_lo_ns = c.shift_lo * ns_per_tick;
		out->shift_hi_ns = c.shift_hi * ns_per_tick;
	}
	ret = 0;
out:
	align_vcursors_free(&c.vc);
	free(c.runs);
	return ret;
}
