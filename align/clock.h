/*
 * clock.h - align's clock maps: every raw stamp of every input domain (host
 * TSC, a guest vCPU's TSC, ns) becomes host nanoseconds through one of
 * these (align/clock.c).  What merge needs of align to place events:
 * a map per input, a cursor per time-ordered stream, one call per event.
 * The model the guest maps go through is built by align/align.h's
 * loaders; here it is only an opaque pointer.
 */
#ifndef ALIGN_CLOCK_H
#define ALIGN_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "compiler.h"
#include "tsc.h"

struct align_model;
struct align_clock_seg;

#define ALIGN_VCPU_ANY		(-1)	/* unknown vCPU / "the guest's clock" */

/*
 * One map per input domain: the host's TSC, a guest's (through its VM's
 * model, per vCPU), or a clock already in ns.  align builds it; a consumer
 * (merge) holds one per input and a cursor per time-ordered stream, and
 * calls align_clock_ns() per event: no division, no allocation, exact
 * (floor(host_tsc * 1e9 / hz); tests/unit/t-clockmap.c checks it against the
 * 128-bit division over the whole 64-bit range in every segment).  A guest
 * stamp no segment covers (or a guest without a model) maps through the
 * map's fixed offset: host TSC = guest TSC - offset (counted in .unmapped
 * when a model was there). */
enum align_clock_kind {
	ALIGN_CLOCK_HOST,	/* host TSC ticks */
	ALIGN_CLOCK_GUEST,	/* guest TSC ticks: the model, else the offset */
	ALIGN_CLOCK_NS,		/* already ns on the host timeline: identity */
};

struct align_clock {
	enum align_clock_kind kind;
	struct vt_tsc_ns host_ns;	/* host TSC -> ns (identity for NS) */
	uint64_t host_hz;		/* its frequency (VT_NS_PER_SEC for NS) */
	const struct align_model *model;	/* GUEST: the VM's model, or NULL */
	int64_t offset_tsc;		/* GUEST fallback: host = guest - offset */
	uint64_t unmapped;		/* guest stamps the model did not cover */
};

/* Make @c (zeroed first for a new map) a map of @kind converting host ticks
 * at @host_hz (ignored for NS); its model and offset are kept.  -1 with the
 * message set when a TSC domain has no frequency. */
int align_clock_init(struct align_clock *c, enum align_clock_kind kind, uint64_t host_hz);
/* Make @c a guest map through model @m (its host frequency replaces @c's:
 * the model's is the one decided for the host). */
void align_clock_set_model(struct align_clock *c, const struct align_model *m);
/* A span of @ticks host ticks in ns (durations: no offset, no model). */
static inline uint64_t align_clock_span_ns(const struct align_clock *c, uint64_t ticks)
{
	return vt_tsc_ns(&c->host_ns, ticks);
}

/* A stream's position in its map: a time-ordered stream of one vCPU (or
 * ALIGN_VCPU_ANY) costs O(1) per event, and guest TSC values that two
 * segments share (offset stepped back) resolve in stream order. */
struct align_cursor {
	struct align_clock *clock;
	const struct align_clock_seg *seg;	/* current segment (NULL: none) */
	const struct align_clock_seg *end;	/* past this vCPU's last one */
	uint64_t last_tsc_guest;		/* previous query */
};
/* Start @cur at the beginning of @c for @vcpu (ALIGN_VCPU_ANY or a vCPU the
 * model does not know: the first vCPU's map). */
void align_cursor_init(struct align_cursor *cur, struct align_clock *c, int vcpu);
/* Guest stamps (out of line; align_clock_ns() calls it). */
uint64_t align_clock_guest_ns(struct align_cursor *cur, uint64_t tsc);
/* Guest stamp @tsc of @cur's stream (stamps given in stream order) -> host
 * TSC in *@tsc_host, by the one rule that picks a stamp's segment (the
 * rule merge's maps apply; align's own checks walk their streams with it
 * too); -1 when no segment with a source maps it (no model, or before the
 * first such segment). */
int align_cursor_guest_host(struct align_cursor *cur, uint64_t tsc, uint64_t *tsc_host);
/* That rule: the segment of @tsc, @cur moved forward to it. */
const struct align_clock_seg *align_cursor_seek(struct align_cursor *cur, uint64_t tsc);

/* The cursors of one time-ordered stream that interleaves several vCPUs'
 * guest stamps (a guest's trace.dat, its marker readings): one cursor per
 * vCPU, made as the vCPUs appear, so align's checks map each stamp as a
 * merge stream of that vCPU would. */
struct align_vcursor {
	int32_t vcpu;
	struct align_cursor cur;
};
struct align_vcursors {
	struct align_clock clock;	/* the model's guest map (the cursors' clock) */
	struct align_vcursor *v;
	size_t n, cap;
};
/* Start @vc (not to be moved afterwards) over model @m. */
void align_vcursors_init(struct align_vcursors *vc, const struct align_model *m);
/* Guest stamp @tsc of @vcpu, the next of the stream -> host TSC: 0, -1
 * when no segment maps it, -2 out of memory (message set). */
int align_vcursors_guest_host(struct align_vcursors *vc, int32_t vcpu, uint64_t tsc,
			      uint64_t *tsc_host);
void align_vcursors_free(struct align_vcursors *vc);

/* The same conversion for @n stamps in place of a batch: raw stamps at
 * @raw, results at @ns, each @stride bytes after the one before (fields of
 * an array of records).  Inline, the map's kind tested once per batch: a
 * host or ns map's constants stay in registers; a guest map's stamps go
 * through align_clock_guest_ns_batch (out of line, a cursor step each).
 * Records stepping back in time are not clamped here (the caller's
 * policy). */
void align_clock_guest_ns_batch(struct align_cursor *cur, const uint64_t *raw, uint64_t *ns,
				size_t n, size_t stride);
static inline void align_clock_ns_batch(struct align_cursor *cur, const uint64_t *raw,
					uint64_t *ns, size_t n, size_t stride)
{
	const char *r = (const char *)raw;
	char *o = (char *)ns;

	if (likely(cur->clock->kind != ALIGN_CLOCK_GUEST)) {
		/* inline: the host's or ns map's constants kept in registers */
		const struct vt_tsc_ns conv = cur->clock->host_ns;

		for (size_t i = 0; i < n; i++, r += stride, o += stride)
			*(uint64_t *)o = vt_tsc_ns(&conv, *(const uint64_t *)r);
		return;
	}
	align_clock_guest_ns_batch(cur, raw, ns, n, stride);	/* out of line */
}

/* The one conversion: a raw stamp of @cur's map -> host ns. */
static inline uint64_t align_clock_ns(struct align_cursor *cur, uint64_t tsc)
{
	const struct align_clock *c = cur->clock;

	if (likely(c->kind != ALIGN_CLOCK_GUEST))
		return vt_tsc_ns(&c->host_ns, tsc);
	return align_clock_guest_ns(cur, tsc);
}

#endif
