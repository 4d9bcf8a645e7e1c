/*
 * clock.c - the clock maps of align.h: every raw stamp of every input
 * domain (host TSC, a guest vCPU's TSC, ns) becomes host nanoseconds here,
 * for vmtrace merge (one map per input, one cursor per stream) and for the
 * model's own queries.  The per-event path adds or multiplies and shifts
 * (lib/tsc.h's vt_tsc_ns): no division, no allocation; any thread.
 */
#include "align/align.h"
#include "align/internal.h"
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "grow.h"

#define CLOCK_VCURSORS0	8	/* vCPU cursors of a model's first allocation */

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

/* The next segment after @k that has a source (@end if none): a segment
 * without one has no guest range, no stamp is ever placed in it. */
static inline const struct align_clock_seg *seg_next(const struct align_clock_seg *k,
						      const struct align_clock_seg *end)
{
	for (k++; unlikely(k < end && k->none); k++)
		;
	return k;
}

/*
 * The one rule for a guest stamp's segment, for merge's streams and align's
 * own checks alike: the cursor moves forward only, into the next segment
 * (with a source) of its vCPU once guest time reaches that segment's start
 * and either the two guest ranges do not overlap (offset stepped forward),
 * or, where they overlap (offset stepped back: guest values repeat), guest
 * time jumps back into it, passes the end of the current one or lies
 * before the current one's start.
 */
const struct align_clock_seg *align_cursor_seek(struct align_cursor *cur, uint64_t tsc)
{
	const struct align_clock_seg *k = cur->seg, *n;

	while ((n = seg_next(k, cur->end)) < cur->end && tsc >= n->g_lo &&
	       (k->none || n->g_lo >= k->g_hi || tsc < cur->last_tsc_guest ||
		tsc >= k->g_hi || tsc < k->g_lo))
		k = n;
	cur->seg = k;
	cur->last_tsc_guest = tsc;
	return k;
}

int align_cursor_guest_host(struct align_cursor *cur, uint64_t tsc, uint64_t *tsc_host)
{
	const struct align_clock_seg *k;

	if (unlikely(!cur->seg))
		return -1;
	k = align_cursor_seek(cur, tsc);
	if (unlikely(k->none))
		return -1;
	*tsc_host = align_clock_seg_host(k, tsc);
	return 0;
}

/* One stamp on its own: a new cursor's answer (align.h). */
int align_guest_to_host(const struct align_model *m, int vcpu, uint64_t tsc_guest,
			uint64_t *tsc_host)
{
	struct align_clock c = { .kind = ALIGN_CLOCK_GUEST, .model = m };
	struct align_cursor cur;

	align_cursor_init(&cur, &c, vcpu);
	return align_cursor_guest_host(&cur, tsc_guest, tsc_host);
}

int align_guest_to_ns(const struct align_model *m, int vcpu, uint64_t tsc_guest, uint64_t *ns)
{
	uint64_t h;

	if (align_guest_to_host(m, vcpu, tsc_guest, &h) < 0)
		return -1;
	*ns = align_host_to_ns(m, h);
	return 0;
}

uint64_t align_clock_guest_ns(struct align_cursor *cur, uint64_t tsc)
{
	struct align_clock *c = cur->clock;
	uint64_t h;

	if (likely(align_cursor_guest_host(cur, tsc, &h) == 0))
		return vt_tsc_ns(&c->host_ns, h);
	if (cur->seg)		/* a model, but no segment of it maps @tsc */
		c->unmapped++;
	return vt_tsc_ns(&c->host_ns, tsc - (uint64_t)c->offset_tsc);
}

void align_clock_guest_ns_batch(struct align_cursor *cur, const uint64_t *raw, uint64_t *ns,
				size_t n, size_t stride)
{
	const char *r = (const char *)raw;
	char *o = (char *)ns;

	for (size_t i = 0; i < n; i++, r += stride, o += stride)
		*(uint64_t *)o = align_clock_guest_ns(cur, *(const uint64_t *)r);
}

void align_vcursors_init(struct align_vcursors *vc, const struct align_model *m)
{
	memset(vc, 0, sizeof(*vc));
	vc->clock.kind = ALIGN_CLOCK_GUEST;
	vc->clock.model = m;
}

int align_vcursors_guest_host(struct align_vcursors *vc, int32_t vcpu, uint64_t tsc,
			      uint64_t *tsc_host)
{
	size_t i;

	for (i = 0; i < vc->n && vc->v[i].vcpu != vcpu; i++)
		;
	if (i == vc->n) {
		if (vc->n == vc->cap && vt_grow(&vc->v, &vc->cap, vc->n + 1, sizeof(*vc->v),
						 CLOCK_VCURSORS0)) {
			vt_err_set("out of memory");
			return -2;
		}
		vc->v[i].vcpu = vcpu;
		align_cursor_init(&vc->v[i].cur, &vc->clock, vcpu);
		vc->n++;
	}
	return align_cursor_guest_host(&vc->v[i].cur, tsc, tsc_host);
}

void align_vcursors_free(struct align_vcursors *vc)
{
	free(vc->v);
	vc->v = NULL;
	vc->n = vc->cap = 0;
}
