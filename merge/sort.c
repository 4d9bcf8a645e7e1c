/*
 * sort.c - merge's sorter: a k-way merge (binary min-heap on time) over
 * streams that are each in time order.  Memory: one pending event per
 * stream, whatever the input size.  Every raw timestamp is converted here,
 * once, through the stream's clock (merge/clock.c).  Runs on the merge
 * thread; allocates only when a stream is added.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "merge.h"

struct slot {
	struct merge_stream *s;
	struct merge_event ev;
	uint64_t last_ns;	/* to keep each stream monotonic */
};

static struct slot *slots;
static uint32_t *heap;		/* slot indices, min ts_ns first */
static uint32_t nr_slots, cap_slots, heap_len;
static int started;

int merge_sort_add(struct merge_stream *s)
{
	if (nr_slots == cap_slots) {
		uint32_t nc = cap_slots ? 2 * cap_slots : 16;
		struct slot *ns = realloc(slots, nc * sizeof(*ns));
		uint32_t *nh;

		if (!ns)
			return vt_err_set("merge: out of memory for streams");
		slots = ns;
		nh = realloc(heap, nc * sizeof(*nh));
		if (!nh)
			return vt_err_set("merge: out of memory for streams");
		heap = nh;
		cap_slots = nc;
	}
	memset(&slots[nr_slots], 0, sizeof(slots[nr_slots]));
	slots[nr_slots].s = s;
	nr_slots++;
	return 0;
}

static inline uint64_t key(uint32_t i)
{
	return slots[heap[i]].ev.ts_ns;
}

static void sift_down(uint32_t i)
{
	uint32_t v = heap[i];
	uint64_t k = slots[v].ev.ts_ns;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= heap_len)
			break;
		if (c + 1 < heap_len && key(c + 1) < key(c))
			c++;
		if (key(c) >= k)
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = v;
}

/* Fetch the next event of slot @i; 0 if the stream ended. */
static int refill(uint32_t i)
{
	struct slot *sl = &slots[i];
	int r = sl->s->ops->next(sl->s, &sl->ev);

	if (r <= 0)
		return 0;
	sl->ev.ts_ns = merge_clock_ns(sl->s, sl->ev.ts_raw);
	sl->ev.flow_id = 0;
	sl->ev.src = sl->s->src;
	/* a stream that steps back (clock glitch) is held at its last time */
	if (unlikely(sl->ev.ts_ns < sl->last_ns))
		sl->ev.ts_ns = sl->last_ns;
	sl->last_ns = sl->ev.ts_ns;
	return 1;
}

static void start(void)
{
	started = 1;
	heap_len = 0;
	for (uint32_t i = 0; i < nr_slots; i++)
		if (refill(i))
			heap[heap_len++] = i;
	for (uint32_t i = heap_len / 2; i-- > 0;)
		sift_down(i);
}

struct merge_event *merge_sort_next(void)
{
	if (unlikely(!started))
		start();
	else if (likely(heap_len)) {
		/* advance the stream whose event was handed out last time */
		if (refill(heap[0])) {
			sift_down(0);
		} else {
			heap[0] = heap[--heap_len];
			if (heap_len)
				sift_down(0);
		}
	}
	if (!heap_len)
		return NULL;
	return &slots[heap[0]].ev;
}

void merge_sort_free(void)
{
	for (uint32_t i = 0; i < nr_slots; i++)
		if (slots[i].s->ops->close)
			slots[i].s->ops->close(slots[i].s);
	free(slots);
	free(heap);
	slots = NULL;
	heap = NULL;
	nr_slots = cap_slots = heap_len = 0;
	started = 0;
}
