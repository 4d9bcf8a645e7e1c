/*
 * free.c - the freestanding build of the mcount runtime
 * (build/lib/libvmtrace-mcount-free.a, include/vt_mcount_free.h): for a
 * kernel or unikernel, built -ffreestanding -nostdlib, no libc, no TLS,
 * no SSE, no allocation.  One global recording context in a buffer the
 * kernel gives; the entry points run on every traced call of the
 * kernel's code (one CPU at a time), the API from the kernel's own code.
 *
 * Room for the exit of every recorded entry is reserved before the entry
 * is recorded, plus one record for the final VT_UFT_LOST marker, so a
 * full buffer stops recording and the trace stays balanced.
 */
#include <stddef.h>
#include <stdint.h>
#include "guest/mcount/core.h"
#include "guest/mcount/include/vt_mcount_free.h"

/* the smallest record area accepted */
#define FREE_MIN_RECORDS	4
/* records an entry needs now: itself and its exit */
#define ENTRY_COST		2

VT_STATIC_ASSERT(sizeof(struct mcount_frame) == VT_MCOUNT_FREE_FRAME_BYTES,
		 "shadow frame size is part of the API");

static struct mcount_ctx free_ctx;
static struct vt_uft_record *free_records;	/* first record */
static int free_on;				/* recording */
static int free_full;				/* stopped for good: full */
static uint32_t free_cyg_floor;			/* cyg depth at start */

static int mcount_room(struct mcount_ctx *c)
{
	return c->pos < c->end;
}

/* The buffer cannot take @need more records: stop recording for good. */
static VT_NOTRACE int free_no_room(struct mcount_ctx *c, unsigned long need)
{
	if (likely((unsigned long)(c->end - c->pos) >= need))
		return 0;
	free_on = 0;
	free_full = 1;
	c->lost += ENTRY_COST;
	return 1;
}

int mcount_enter(uint64_t *parent_loc, uint64_t child_ip) __attribute__((visibility("hidden")));
void mcount_slow(void) __attribute__((visibility("hidden")));
uint64_t mcount_exit(uint64_t *sp) __attribute__((visibility("hidden")));

VT_NOTRACE int mcount_enter(uint64_t *parent_loc, uint64_t child_ip)
{
	struct mcount_ctx *c = &free_ctx;

	if (unlikely(!free_on)) {
		if (free_full)
			c->lost += ENTRY_COST;
		return MCOUNT_DONE;
	}
	if (unlikely(free_no_room(c, mcount_depth(c) + ENTRY_COST)))
		return MCOUNT_DONE;
	mcount_core_enter(c, parent_loc, child_ip);
	return MCOUNT_DONE;
}

/* Never asked for by this build's mcount_enter; kept for mcount.S. */
VT_NOTRACE void mcount_slow(void)
{
}

VT_NOTRACE uint64_t mcount_exit(uint64_t *sp)
{
	return mcount_core_exit(&free_ctx, sp);
}

VT_NOTRACE void __cyg_profile_func_enter(void *fn, void *call_site)
{
	struct mcount_ctx *c = &free_ctx;
	uint32_t d = c->cyg_depth;

	if (unlikely(!free_on) || unlikely(d < free_cyg_floor)) {
		if (free_full)
			c->lost += ENTRY_COST;
		if (d < c->record_below)
			c->record_below = d;
		c->cyg_depth++;
		return;
	}
	if (unlikely(d >= c->record_below)) {
		c->cyg_depth++;
		c->skipped++;
		return;
	}
	if (unlikely(free_no_room(c, d - free_cyg_floor + ENTRY_COST))) {
		c->record_below = d;
		c->cyg_depth++;
		return;
	}
	c->cyg_depth++;
	c->base[d].word = vt_uft_pack(VT_UFT_ENTRY, d - free_cyg_floor, (uint64_t)(uintptr_t)fn);
	mcount_put_bits(c, c->base[d].word);
}

VT_NOTRACE void __cyg_profile_func_exit(void *fn, void *call_site)
{
	struct mcount_ctx *c = &free_ctx;
	uint32_t d;

	if (unlikely(c->cyg_depth == 0))
		return;
	d = --c->cyg_depth;
	if (d >= c->record_below || d < free_cyg_floor || !mcount_room(c))
		return;
	mcount_put(c, VT_UFT_EXIT, d - free_cyg_floor, (uint64_t)(uintptr_t)fn);
	/* after a stop, a new call at this depth was not recorded */
	if (!free_on)
		c->record_below = d;
}

int vt_mcount_free_init(void *buf, size_t len, unsigned max_depth, unsigned flags)
{
	struct mcount_ctx *c = &free_ctx;
	size_t shadow = (size_t)max_depth * sizeof(struct mcount_frame);
	size_t nr;

	if (!buf || ((uintptr_t)buf & (sizeof(uint64_t) - 1)) || max_depth < 1 ||
	    max_depth > VT_UFT_MAX_DEPTH || len < shadow)
		return -1;
	nr = (len - shadow) / sizeof(struct vt_uft_record);
	if (nr < FREE_MIN_RECORDS)
		return -1;
	free_on = 0;
	free_full = 0;
	free_cyg_floor = 0;
	free_records = (struct vt_uft_record *)((char *)buf + shadow);
	c->base = buf;
	c->top = buf;
	c->limit = c->base + ((flags & VT_MCOUNT_FREE_ENTRIES_ONLY) ? 0 : max_depth);
	c->pos = free_records;
	c->end = free_records + nr - 1;		/* the last one: LOST marker */
	c->cyg_depth = 0;
	c->record_below = max_depth;
	c->max_depth = max_depth;
	c->entries_only = !!(flags & VT_MCOUNT_FREE_ENTRIES_ONLY);
	c->skipped = 0;
	c->lost = 0;
	return 0;
}

void vt_mcount_free_start(void)
{
	struct mcount_ctx *c = &free_ctx;

	if (!c->base || free_full)
		return;
	free_cyg_floor = c->cyg_depth;
	c->record_below = c->max_depth;
	free_on = 1;
}

void vt_mcount_free_stop(void)
{
	struct mcount_ctx *c = &free_ctx;

	free_on = 0;
	if (c->cyg_depth < c->record_below)
		c->record_below = c->cyg_depth;
}

size_t vt_mcount_free_data(const void **data)
{
	struct mcount_ctx *c = &free_ctx;
	size_t nr;

	*data = free_records;
	if (!c->base)
		return 0;
	nr = (size_t)(c->pos - free_records);
	if (c->lost) {
		/* the reserved slot lies at or after pos: nothing is overwritten */
		c->pos->time = vt_rdtsc();
		c->pos->bits = vt_uft_pack(VT_UFT_LOST, 0, c->lost);
		nr++;
	}
	return nr * sizeof(struct vt_uft_record);
}

uint64_t vt_mcount_free_lost(void)
{
	return free_ctx.lost;
}

uint64_t vt_mcount_free_skipped(void)
{
	return free_ctx.skipped;
}
