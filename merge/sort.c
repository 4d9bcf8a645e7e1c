/*
 * sort.c - merge's sorter: a k-way merge (binary min-heap on time) over
 * streams that are each in time order.  Memory: a batch of pending events
 * per stream (SORT_BATCH), whatever the input size.  Every raw timestamp
 * is converted here, once, through the stream's clock map (align/clock.c).
 * Runs on the merge thread; allocates only when a stream is added.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "grow.h"
#include "merge.h"

#define SORT_BATCH	32	/* events taken from a stream at a time */
#define SORT_MIN_SLOTS	16	/* slots of the first allocation */

/* A stream and its pending events ev[pos..len), already converted to ns. */
struct merge_sort_slot {
	struct merge_stream *s;
	uint32_t pos, len;
	uint64_t last_ns;	/* to keep each stream monotonic */
	struct merge_event ev[SORT_BATCH];
};

/* A heap entry: the slot's pending time, kept next to the slot (its
 * address: the slots stay in place once the sorter started) so that
 * sifting reads one array.  The heap holds 2 * slots + 2 entries, so that
 * each entry's children are in it; those at heap_len and above hold
 * HEAP_EMPTY: a missing child compares as the latest, so no bounds test
 * is needed. */
struct merge_sort_hent {
	uint64_t ts_ns;
	struct merge_sort_slot *slot;
};

#define HEAP_EMPTY	UINT64_MAX

/* The slots and the heap grow together (vt_grow: doubled, new entries
 * zero); a heap that could not grow leaves the stream out, and the heap
 * still fits the slots in use. */
int merge_sort_add(struct merge_sorter *so, struct merge_stream *s)
{
	if (vt_grow(&so->slots, &so->cap_slots, (size_t)so->nr_slots + 1, sizeof(*so->slots),
		    SORT_MIN_SLOTS) < 0 ||
	    vt_grow(&so->heap, &so->cap_heap, 2 * so->cap_slots + 2, sizeof(*so->heap),
		    2 * SORT_MIN_SLOTS + 2) < 0)
		return vt_err_set("merge: out of memory for streams");
	so->slots[so->nr_slots].s = s;
	so->nr_slots++;
	return 0;
}

/* Move entry @i down to its place.  On equal times the parent stays above
 * and the left child wins: the order of ties is the same in every run. */
static void sift_down(struct merge_sort_hent *heap, uint32_t i)
{
	struct merge_sort_hent v = heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		c += heap[c + 1].ts_ns < heap[c].ts_ns;
		if (heap[c].ts_ns >= v.ts_ns)
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = v;
}

/* Take the next batch of slot @sl's stream, each stamp converted once
 * here (align_clock_ns_batch: a host or ns map inline); 0 if the stream
 * ended. */
static __attribute__((noinline)) int fill(struct merge_sort_slot *sl)
{
	struct merge_stream *s = sl->s;
	const uint16_t src = s->src;
	int n;

	if (s->ops->next_batch)
		n = s->ops->next_batch(s, sl->ev, SORT_BATCH);
	else
		n = s->ops->next(s, &sl->ev[0]) > 0;
	sl->pos = 0;
	sl->len = n > 0 ? (uint32_t)n : 0;
	if (likely(sl->len))
		align_clock_ns_batch(&s->cur, &sl->ev[0].ts_raw, &sl->ev[0].ts_ns, sl->len,
				     sizeof(sl->ev[0]));
	for (uint32_t k = 0; k < sl->len; k++) {
		struct merge_event *ev = &sl->ev[k];

		ev->flow_id = 0;
		ev->flow_start_id = 0;
		ev->src = src;
		/* a stream that steps back (clock glitch) is held at its last time */
		if (unlikely(ev->ts_ns < sl->last_ns))
			ev->ts_ns = sl->last_ns;
		sl->last_ns = ev->ts_ns;
	}
	return sl->len != 0;
}

static void start(struct merge_sorter *so)
{
	struct merge_sort_hent *heap = so->heap;

	so->started = 1;
	so->heap_len = 0;
	for (size_t i = 0; i < so->cap_heap; i++)
		heap[i].ts_ns = HEAP_EMPTY;
	for (uint32_t i = 0; i < so->nr_slots; i++)
		if (fill(&so->slots[i]))
			heap[so->heap_len++] = (struct merge_sort_hent){ so->slots[i].ev[0].ts_ns,
									 &so->slots[i] };
	for (uint32_t i = so->heap_len / 2; i-- > 0;)
		sift_down(heap, i);
}

/* The top slot's pending event (NULL when every stream has ended). */
static inline struct merge_event *top(const struct merge_sorter *so)
{
	struct merge_sort_slot *sl;

	if (!so->heap_len)
		return NULL;
	sl = so->heap[0].slot;
	return &sl->ev[sl->pos];
}

/* The slow ways of merge_sort_next(), each then giving the top: the first
 * call (every stream's first batch); the top slot's batch used up (its
 * next batch, or the slot dropped when its stream has ended); the top
 * slot's new pending event later than a child's (moved down). */
static __attribute__((noinline)) struct merge_event *first(struct merge_sorter *so)
{
	if (so->nr_slots)
		start(so);
	return top(so);
}

static __attribute__((noinline)) struct merge_event *refill_top(struct merge_sorter *so)
{
	struct merge_sort_hent *heap = so->heap;
	struct merge_sort_slot *sl = heap[0].slot;

	if (fill(sl)) {
		heap[0].ts_ns = sl->ev[0].ts_ns;
	} else {
		heap[0] = heap[--so->heap_len];
		heap[so->heap_len].ts_ns = HEAP_EMPTY;
	}
	sift_down(heap, 0);
	return top(so);
}

/* The fast way is a leaf: the top slot's next pending event, moved down
 * the heap here when a child's is earlier (sift_down's steps: the first
 * level's test also tells whether it stays on top, the common case of
 * long runs from one stream). */
struct merge_event *merge_sort_next(struct merge_sorter *so)
{
	struct merge_sort_hent *heap = so->heap;
	struct merge_sort_slot *sl;
	struct merge_event *ev;
	uint32_t i, c;
	uint64_t ts_ns;

	if (unlikely(!so->heap_len))	/* not started yet, or every stream ended */
		return so->started ? NULL : first(so);
	/* advance the stream whose event was handed out last time */
	sl = heap[0].slot;
	if (unlikely(++sl->pos >= sl->len))
		return refill_top(so);
	ev = &sl->ev[sl->pos];
	ts_ns = ev->ts_ns;
	c = 1 + (heap[2].ts_ns < heap[1].ts_ns);
	if (likely(heap[c].ts_ns >= ts_ns)) {
		heap[0].ts_ns = ts_ns;
		return ev;
	}
	i = 0;
	do {
		heap[i] = heap[c];
		i = c;
		c = 2 * i + 1;
		c += heap[c + 1].ts_ns < heap[c].ts_ns;
	} while (heap[c].ts_ns < ts_ns);
	heap[i] = (struct merge_sort_hent){ ts_ns, sl };
	return top(so);
}

void merge_sort_free(struct merge_sorter *so)
{
	for (uint32_t i = 0; i < so->nr_slots; i++)
		so->slots[i].s->ops->close(so->slots[i].s);
	free(so->slots);
	free(so->heap);
	memset(so, 0, sizeof(*so));
}
