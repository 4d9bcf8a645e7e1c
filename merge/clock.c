/*
 * clock.c - the single place where merge turns a raw timestamp into host
 * nanoseconds: guest TSC -> host TSC through the align/ clock model (a
 * per-stream cursor), then host TSC -> ns with the host TSC frequency.
 * Without a model (align/ not built, or nothing to align) a guest stamp
 * maps through a fixed offset (identity by default).  Runs per event on
 * the merge thread: a few multiplies, no division, no allocation.
 */
#include "err.h"
#include "merge.h"

#define NS_PER_SEC	1000000000ULL

/* align/ may not be linked into this build: then these are NULL */
extern int align_cursor_guest_to_ns(struct align_cursor *c, uint64_t tsc_guest,
				    uint64_t *ns) __attribute__((weak));
extern void align_cursor_init(struct align_cursor *c, const struct align_model *m,
			      int vcpu) __attribute__((weak));

int merge_clock_init(struct merge_clock *c, int domain, int is_ns, uint64_t host_hz)
{
	c->domain = domain;
	c->is_ns = is_ns;
	c->host_hz = host_hz;
	if (is_ns) {
		c->mult_hi = 1;
		c->mult_lo = 0;
		return 0;
	}
	if (!host_hz)
		return vt_err_set("TSC frequency unknown");
	/* mult = 1e9 * 2^64 / hz as a 128-bit fixed-point number */
	unsigned __int128 m = ((unsigned __int128)NS_PER_SEC << 64) / host_hz;

	c->mult_hi = (uint64_t)(m >> 64);
	c->mult_lo = (uint64_t)m;
	return 0;
}

void merge_stream_clock_init(struct merge_stream *s)
{
	if (s->clock->model && align_cursor_init)
		align_cursor_init(&s->cur, s->clock->model, s->vcpu);
}

uint64_t merge_clock_guest_ns(struct merge_stream *s, uint64_t ts)
{
	struct merge_clock *c = s->clock;

	if (c->model && align_cursor_guest_to_ns) {
		uint64_t ns;

		if (likely(align_cursor_guest_to_ns(&s->cur, ts, &ns) == 0))
			return ns;
		c->unmapped++;
	}
	return merge_clock_host_ns(c, ts - (uint64_t)c->offset_tsc);
}
