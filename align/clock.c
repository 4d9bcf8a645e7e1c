/*
 * clock.c - the clock maps of align.h: every raw stamp of every input
 * domain (host TSC, a guest vCPU's TSC, ns) becomes host nanoseconds here,
 * for vmtrace merge (one map per input, one cursor per stream) and for the
 * model's own queries.  The per-event path adds or multiplies and shifts
 * (lib/tsc.h's vt_tsc_ns): no division, no allocation; any thread.
 */
#include "align/align.h"
#include "align/internal.h"
#include "err.h"

int align_clock_init(struct align_clock *c, enum align_clock_kind kind, uint64_t host_hz)
{
	c->kind = kind;
	if (kind == ALIGN_CLOCK_NS)
		host_hz = VT_NS_PER_SEC;	/* 1 "tick" = 1 ns: the identity */
	c->host_hz = host_hz;
	if (vt_tsc_ns_init(&c->host_ns, host_hz) < 0)
		return vt_err_set("TSC frequency unknown");
	return 0;
}

void align_clock_set_model(struct align_clock *c, const struct align_model *m)
{
	c->kind = ALIGN_CLOCK_GUEST;
	c->model = m;
	c->host_hz = m->host_hz;
	c->host_ns = m->host_ns;
}

void align_clock_segs_build(struct align_model *m)
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

void align_cursor_init(struct align_cursor *cur, struct align_clock *c, int vcpu)
{
	const struct align_model *m = c->model;
	size_t first, last;

	cur->clock = c;
	cur->seg = cur->end = NULL;
	cur->last_tsc_guest = 0;
	if (c->kind != ALIGN_CLOCK_GUEST || !m || align_model_vcpu_range(m, vcpu, &first, &last))
		return;
	cur->seg = &m->cseg[first];
	cur->end = &m->cseg[last];
}

uint64_t align_clock_guest_ns(struct align_cursor *cur, uint64_t tsc)
{
	struct align_clock *c = cur->clock;
	const struct align_clock_seg *k = cur->seg;

	if (unlikely(!k))
		return vt_tsc_ns(&c->host_ns, tsc - (uint64_t)c->offset_tsc);
	/* move forward only: into the next segment of this vCPU once its guest
	 * start is reached (offset stepped forward: the ranges do not
	 * overlap), or, where they overlap (offset stepped back), once guest
	 * time jumps back into it or passes the end of the current one */
	while (k + 1 < cur->end && !k[1].none && tsc >= k[1].g_lo &&
	       (k[1].g_lo >= k->g_hi || tsc < cur->last_tsc_guest || tsc >= k->g_hi))
		k++;
	cur->seg = k;
	cur->last_tsc_guest = tsc;
	if (unlikely(k->none)) {
		c->unmapped++;
		return vt_tsc_ns(&c->host_ns, tsc - (uint64_t)c->offset_tsc);
	}
	return vt_tsc_ns(&c->host_ns, align_clock_seg_host(k, tsc));
}

void align_clock_ns_batch(struct align_cursor *cur, const uint64_t *raw, uint64_t *ns,
			  size_t n, size_t stride)
{
	const char *r = (const char *)raw;
	char *o = (char *)ns;

	if (likely(cur->clock->kind != ALIGN_CLOCK_GUEST)) {
		const struct vt_tsc_ns conv = cur->clock->host_ns;	/* kept in registers */

		for (size_t i = 0; i < n; i++, r += stride, o += stride)
			*(uint64_t *)o = vt_tsc_ns(&conv, *(const uint64_t *)r);
		return;
	}
	for (size_t i = 0; i < n; i++, r += stride, o += stride)
		*(uint64_t *)o = align_clock_guest_ns(cur, *(const uint64_t *)r);
}
