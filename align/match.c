/*
 * match.c - pairs the guest's marker records with the host's observations
 * of the same actions (see align.h, docs/align.md).  Pure: no I/O; runs in
 * the aligner's thread, allocates its result.
 *
 * Value matching: a PIO/MMIO/hypercall marker carries seq in the low 24
 * bits of the value the host sees; host values are unwrapped in time order
 * into full sequence numbers and joined with the guest's seq.  Either side
 * may miss markers: only seqs present on both sides pair.
 *
 * Order matching (chardev markers: the host sees a write(), not the byte):
 * try pairing the guest marker with seq q with the host's (q - q0 + s)-th
 * observation for small shifts s (seq gaps absorb records the guest lost,
 * the shift absorbs writes the host missed or extra ones); the shift whose
 * offset intervals overlap most gives a rough offset; then each guest
 * marker takes the next host observation inside its predicted window.
 */
#include <stdlib.h>
#include <string.h>
#include "align/align.h"
#include "err.h"
#include "grow.h"

#define MATCH_SEQ_SPAN		(VT_MARKER_SEQ_MASK + 1ull)
#define MATCH_MAX_SHIFT		64	/* order matching: shifts tried each way */
#define MATCH_MIN_TOL_TSC	2000	/* ticks of slack in the predicted window */
#define MATCH_DRIFT_DIV		100000	/* + span/100000 (10 ppm) of slack */
#define MATCH_MAX_TOL_TSC	(1ull << 40)	/* cap: keeps the arithmetic in range */

struct hobs {
	uint64_t seq;		/* unwrapped (value matching) */
	uint64_t tsc_host;
	int32_t vcpu;
	int32_t tid;
};

static int cmp_hobs_seq(const void *a, const void *b)
{
	const struct hobs *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->tsc_host != y->tsc_host)
		return x->tsc_host < y->tsc_host ? -1 : 1;
	return 0;
}

static int cmp_hobs_time(const void *a, const void *b)
{
	const struct hobs *x = a, *y = b;

	if (x->tsc_host != y->tsc_host)
		return x->tsc_host < y->tsc_host ? -1 : 1;
	return 0;
}

static int cmp_pair_seq(const void *a, const void *b)
{
	const struct align_marker_pair *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

static int cmp_gptr_seq(const void *a, const void *b)
{
	const struct vt_marker *x = *(const struct vt_marker *const *)a;
	const struct vt_marker *y = *(const struct vt_marker *const *)b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

static int is_valued(const struct vt_marker *g)
{
	return g->kind != VT_MARKER_CHARDEV;
}

static void pair_set(struct align_marker_pair *p, const struct vt_marker *g,
		     const struct hobs *h)
{
	memset(p, 0, sizeof(*p));
	p->vcpu = h->vcpu != ALIGN_VCPU_ANY ? h->vcpu :
		  (g->cpu != VT_MARKER_CPU_NONE ? (int32_t)g->cpu : ALIGN_VCPU_ANY);
	p->seq = g->seq;
	p->tsc_guest_before = g->tsc_guest_before;
	p->tsc_guest_after = g->tsc_guest_after;
	p->tsc_host = h->tsc_host;
	p->host_tid = h->tid;
}

/* Join valued guest markers (seq order) with host observations by seq. */
static size_t match_by_value(const struct vt_marker *const *g, size_t ng,
			     struct hobs *h, size_t nh, struct align_marker_pair *out,
			     size_t *um_host)
{
	uint64_t epoch = 0, prev = 0;
	size_t i = 0, j = 0, n = 0;

	/* h is in time order: unwrap the 24-bit seqs into a monotonic count */
	for (size_t k = 0; k < nh; k++) {
		uint64_t s = h[k].seq;

		if (k > 0 && s < prev && prev - s > MATCH_SEQ_SPAN / 2)
			epoch++;
		prev = s;
		h[k].seq = s + epoch * MATCH_SEQ_SPAN;
	}
	/* a guest whose seqs start past 2^24: shift the host count to match */
	if (ng > 0 && g[0]->seq >= MATCH_SEQ_SPAN) {
		uint64_t base = g[0]->seq & ~(uint64_t)VT_MARKER_SEQ_MASK;

		for (size_t k = 0; k < nh; k++)
			h[k].seq += base;
	}
	vt_sort(h, nh, sizeof(*h), cmp_hobs_seq);
	while (i < ng && j < nh) {
		if (g[i]->seq < h[j].seq) {
			i++;
		} else if (g[i]->seq > h[j].seq) {
			(*um_host)++;
			j++;
		} else {
			pair_set(&out[n++], g[i], &h[j]);
			i++;
			j++;
			/* a second host sighting of the same seq: ignored */
			while (j < nh && h[j].seq == h[j - 1].seq) {
				(*um_host)++;
				j++;
			}
		}
	}
	*um_host += nh - j;
	return n;
}

/* an end of a pair's offset interval; opens sort first at equal values */
struct oend {
	int64_t v;
	int close;
};

static int cmp_oend(const void *a, const void *b)
{
	const struct oend *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->close - y->close;
}

/*
 * For pairing the guest marker with seq q with host observation
 * q - q0 + shift: the offset (guest - host) each pair allows is
 * [before - h, after - h] widened by tol; return the largest number of
 * pairs whose intervals share a point, and that point.  Differences wrap
 * modulo 2^64 (defined for unsigned values), then read as signed.
 */
static size_t shift_score(const struct vt_marker *const *g, size_t ng, const struct hobs *h,
			  size_t nh, long shift, uint64_t tol, struct oend *ev, int64_t *best_off)
{
	size_t ne = 0, best = 0, cur = 0;

	for (size_t i = 0; i < ng; i++) {
		uint64_t gap = g[i]->seq - g[0]->seq;	/* seq gaps: lost guest records */
		long j;

		if (gap >= nh + MATCH_MAX_SHIFT)
			break;
		j = (long)gap + shift;
		if (j < 0 || j >= (long)nh)
			continue;
		ev[ne++] = (struct oend){ (int64_t)(g[i]->tsc_guest_before - h[j].tsc_host - tol), 0 };
		ev[ne++] = (struct oend){ (int64_t)(g[i]->tsc_guest_after - h[j].tsc_host + tol), 1 };
	}
	vt_sort(ev, ne, sizeof(*ev), cmp_oend);
	for (size_t k = 0; k < ne; k++) {
		if (ev[k].close) {
			cur--;
		} else if (++cur > best) {
			best = cur;
			*best_off = ev[k].v;
		}
	}
	return best;
}

static size_t match_by_order(const struct vt_marker *const *g, size_t ng,
			     struct hobs *h, size_t nh, struct align_marker_pair *out,
			     size_t *um_host)
{
	long diff, lo_s, hi_s;
	size_t best = 0, n = 0, j = 0;
	uint64_t tol, span, at, width_max = 0;
	int64_t best_off = 0;
	struct oend *ev;

	if (!ng || !nh) {
		*um_host += nh;
		return 0;
	}
	vt_sort(h, nh, sizeof(*h), cmp_hobs_time);
	/*
	 * host observations beyond the guest's seq span: extra writes (below
	 * zero: seqs the host did not see).  Only +-MATCH_MAX_SHIFT of it is
	 * used, and seqs come from the file (any 64-bit value): clamped here,
	 * in unsigned arithmetic, not after a signed overflow.
	 */
	span = g[ng - 1]->seq - g[0]->seq;	/* sorted by seq */
	if (span >= nh)
		diff = span - nh + 1 > MATCH_MAX_SHIFT ? -MATCH_MAX_SHIFT : -(long)(span - nh + 1);
	else
		diff = nh - span - 1 > MATCH_MAX_SHIFT ? MATCH_MAX_SHIFT : (long)(nh - span - 1);
	for (size_t i = 0; i < ng; i++) {
		uint64_t w = g[i]->tsc_guest_after - g[i]->tsc_guest_before;

		if (w > width_max)
			width_max = w < MATCH_MAX_TOL_TSC ? w : MATCH_MAX_TOL_TSC;
	}
	tol = MATCH_MIN_TOL_TSC + width_max + (h[nh - 1].tsc_host - h[0].tsc_host) / MATCH_DRIFT_DIV;
	if (tol > MATCH_MAX_TOL_TSC)
		tol = MATCH_MAX_TOL_TSC;
	ev = malloc(2 * (ng < nh ? nh : ng) * sizeof(*ev));
	if (!ev)
		return (size_t)-1;
	lo_s = (diff < 0 ? diff : 0) - MATCH_MAX_SHIFT / 8;
	hi_s = (diff > 0 ? diff : 0) + MATCH_MAX_SHIFT / 8;
	if (lo_s < -MATCH_MAX_SHIFT)
		lo_s = -MATCH_MAX_SHIFT;
	if (hi_s > MATCH_MAX_SHIFT)
		hi_s = MATCH_MAX_SHIFT;
	for (long s = lo_s; s <= hi_s; s++) {
		int64_t off = 0;
		size_t sc = shift_score(g, ng, h, nh, s, tol, ev, &off);

		if (sc > best) {
			best = sc;
			best_off = off;
		}
	}
	free(ev);
	/* walk both in order: each guest marker takes the next host write in
	 * its window [before - at - tol, after - at + tol], at the common
	 * point of the unwidened intervals (best_off is a widened one's end);
	 * the writes before it are passed over only when one pairs: a guest
	 * record whose window lies past them (a bogus reading) takes none */
	at = (uint64_t)best_off + tol;
	for (size_t i = 0; i < ng; i++) {
		uint64_t lo = g[i]->tsc_guest_before - at - tol;
		uint64_t hi = g[i]->tsc_guest_after - at + tol;
		size_t k = j;

		while (k < nh && (int64_t)(h[k].tsc_host - lo) < 0)
			k++;
		if (k < nh && (int64_t)(h[k].tsc_host - hi) <= 0) {
			pair_set(&out[n++], g[i], &h[k]);
			*um_host += k - j;
			j = k + 1;
		}
	}
	*um_host += nh - j;
	return n;
}

int align_markers_match(const struct vt_marker *g, size_t ng,
			const struct align_host_marker *h, size_t nh,
			struct align_marker_pair **out, size_t *n,
			size_t *unmatched_guest, size_t *unmatched_host)
{
	const struct vt_marker **gv = NULL, **go = NULL;
	struct hobs *hv = NULL, *ho = NULL;
	size_t ngv = 0, ngo = 0, nhv = 0, nho = 0, nv, no;
	struct align_marker_pair *p = NULL;
	int ret = -1;

	*out = NULL;
	*n = 0;
	*unmatched_guest = 0;
	*unmatched_host = 0;
	gv = calloc(ng + 1, sizeof(*gv));
	go = calloc(ng + 1, sizeof(*go));
	hv = calloc(nh + 1, sizeof(*hv));
	ho = calloc(nh + 1, sizeof(*ho));
	p = calloc(ng + 1, sizeof(*p));
	if (!gv || !go || !hv || !ho || !p) {
		vt_err_set("marker matching: out of memory");
		goto out;
	}
	for (size_t i = 0; i < ng; i++) {
		if (is_valued(&g[i]))
			gv[ngv++] = &g[i];
		else
			go[ngo++] = &g[i];
	}
	for (size_t k = 0; k < nh; k++) {
		struct hobs o = { 0, h[k].tsc_host, h[k].vcpu, h[k].tid };

		if (h[k].has_value) {
			if (!VT_MARKER_VALUE_OK(h[k].value)) {
				(*unmatched_host)++;	/* another write to the port */
				continue;
			}
			o.seq = VT_MARKER_VALUE_SEQ(h[k].value);
			hv[nhv++] = o;
		} else {
			ho[nho++] = o;
		}
	}
	vt_sort(gv, ngv, sizeof(*gv), cmp_gptr_seq);
	vt_sort(go, ngo, sizeof(*go), cmp_gptr_seq);
	/* value matching needs the host observations in time order */
	vt_sort(hv, nhv, sizeof(*hv), cmp_hobs_time);
	nv = match_by_value(gv, ngv, hv, nhv, p, unmatched_host);
	no = match_by_order(go, ngo, ho, nho, p + nv, unmatched_host);
	if (no == (size_t)-1) {
		vt_err_set("marker matching: out of memory");
		goto out;
	}
	*n = nv + no;
	*unmatched_guest = ng - *n;
	vt_sort(p, *n, sizeof(*p), cmp_pair_seq);
	*out = p;
	p = NULL;
	ret = 0;
out:
	free(gv);
	free(go);
	free(hv);
	free(ho);
	free(p);
	return ret;
}
