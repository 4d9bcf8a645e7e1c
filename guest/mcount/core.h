/*
 * core.h - the hot path of the mcount runtime, shared by its two builds:
 * the Linux preload library (linux.c) and the freestanding library
 * (free.c).  Everything here runs inside the traced program, on the
 * traced thread, for every function entry and exit: no locks, no
 * allocation, no libc, no floating point (built -mgeneral-regs-only).
 * See docs/mcount.md.
 */
#ifndef MCOUNT_CORE_H
#define MCOUNT_CORE_H

#include <stdint.h>
#include "compiler.h"
#include "tsc.h"
#include "uftrace.h"

/* mcount_enter() result: the entry was handled, or the asm must save the
 * vector argument registers and call mcount_slow() (Linux build only). */
enum {
	MCOUNT_DONE = 0,
	MCOUNT_SLOW = 1,
};

/* One hooked call: where its return address lives and what it was. */
struct mcount_frame {
	uint64_t *parent_loc;	/* the stack slot we overwrote */
	uint64_t ret_addr;	/* the original return address */
	/* the entry record's second word, vt_uft_pack(VT_UFT_ENTRY, depth,
	 * address of the function): its exit's is this | VT_UFT_EXIT */
	uint64_t word;
};

/* Per-thread (Linux) or per-buffer (freestanding) recording state.  The
 * first fields are the ones the hot path touches. */
struct mcount_ctx {
	struct vt_uft_record *pos;	/* next free record */
	struct vt_uft_record *end;	/* pos == end: slow path (full/unset) */
	struct mcount_frame *top;	/* next free shadow frame */
	struct mcount_frame *limit;	/* top == limit: depth limit reached */
	struct mcount_frame *base;	/* shadow stack, depth 0 */
	uint32_t cyg_depth;		/* -finstrument-functions call depth */
	uint32_t record_below;		/* record cyg exits below this depth */
	uint32_t max_depth;		/* depth limit (<= VT_UFT_MAX_DEPTH) */
	uint32_t entries_only;		/* record entries, never hook returns */
	uint64_t skipped;		/* calls not recorded: beyond the limit */
	uint64_t lost;			/* records lost: buffer full, write error */
};

/* The return trampoline (mcount.S): hooked functions return into it. */
void mcount_return_trampoline(void) __attribute__((visibility("hidden")));

/* Store one record whose second word is @bits (the caller checked that
 * pos < end). */
static inline VT_NOTRACE void mcount_put_bits(struct mcount_ctx *c, uint64_t bits)
{
	struct vt_uft_record *r = c->pos++;

	vt_rdtsc_store(&r->time);
	r->bits = bits;
}

static inline VT_NOTRACE void mcount_put(struct mcount_ctx *c, unsigned type,
					 unsigned depth, uint64_t addr)
{
	mcount_put_bits(c, vt_uft_pack(type, depth, addr));
}

/* Depth of the next shadow frame. */
static inline VT_NOTRACE unsigned mcount_depth(const struct mcount_ctx *c)
{
	return (unsigned)(c->top - c->base);
}

/*
 * -pg / -mfentry entry: record the entry and hook the return of the
 * function at @child_ip whose return address is stored at @parent_loc.
 * Beyond the depth limit the call is counted and neither recorded nor
 * hooked, so everything recorded stays balanced.  The caller checked
 * that there is room for one record.
 */
static inline VT_NOTRACE void mcount_core_enter(struct mcount_ctx *c, uint64_t *parent_loc,
						uint64_t child_ip)
{
	struct mcount_frame *f = c->top;
	uint64_t w;

	if (unlikely(f >= c->limit)) {
		if (c->entries_only)
			mcount_put(c, VT_UFT_ENTRY, 0, child_ip);
		else
			c->skipped++;
		return;
	}
	f->parent_loc = parent_loc;
	f->ret_addr = *parent_loc;
	w = vt_uft_pack(VT_UFT_ENTRY, (unsigned)(f - c->base), child_ip);
	f->word = w;
	c->top = f + 1;
	*parent_loc = (uint64_t)(uintptr_t)mcount_return_trampoline;
	mcount_put_bits(c, w);
}

/* Is there room for one more record?  Each build defines it: the Linux
 * one flushes a full buffer, the freestanding one has reserved room. */
static int mcount_room(struct mcount_ctx *c);

/* Room for one more record; one that finds none is counted in c->lost
 * (the runtime's mcount.lost), never dropped silently. */
static inline VT_NOTRACE int mcount_room_or_lost(struct mcount_ctx *c)
{
	if (likely(mcount_room(c)))
		return 1;
	c->lost++;
	return 0;
}

/*
 * Return side: pop the shadow frame whose return slot was just below
 * @sp (the stack pointer after the hooked function's `ret`), record its
 * exit and return its original return address.  Frames left deeper on
 * the shadow stack (their function was left by longjmp) get their exit
 * recorded and are popped on the way.  mcount_core_exit() is the common
 * case as a leaf (no frame to skip, room in the buffer); the rest is
 * mcount_core_exit_slow(), which may flush.
 */
static __attribute__((noinline)) VT_NOTRACE uint64_t
mcount_core_exit_slow(struct mcount_ctx *c, uint64_t *sp)
{
	struct mcount_frame *f = c->top - 1;

	while (unlikely(f > c->base && f->parent_loc < sp - 1)) {
		if (mcount_room_or_lost(c))
			mcount_put_bits(c, f->word | VT_UFT_EXIT);
		f--;
	}
	if (likely(mcount_room_or_lost(c)))
		mcount_put_bits(c, f->word | VT_UFT_EXIT);
	c->top = f;
	return f->ret_addr;
}

static inline VT_NOTRACE uint64_t mcount_core_exit(struct mcount_ctx *c, uint64_t *sp)
{
	struct mcount_frame *f = c->top - 1;

	if (unlikely((f > c->base && f->parent_loc < sp - 1) || c->pos >= c->end))
		return mcount_core_exit_slow(c, sp);
	mcount_put_bits(c, f->word | VT_UFT_EXIT);
	c->top = f;
	return f->ret_addr;
}

/* Record exits for every frame still on the shadow stack (the thread or
 * the recording ends inside them); their hooks stay in place. */
static inline VT_NOTRACE void mcount_core_unwind_all(struct mcount_ctx *c)
{
	struct mcount_frame *f;

	for (f = c->top; f > c->base; f--)
		if (mcount_room_or_lost(c))
			mcount_put_bits(c, f[-1].word | VT_UFT_EXIT);
	while (c->cyg_depth > 0) {
		unsigned d = --c->cyg_depth;

		if (d < c->record_below && mcount_room_or_lost(c))
			mcount_put_bits(c, c->base[d].word | VT_UFT_EXIT);
	}
}

/* -finstrument-functions entry at depth cyg_depth (its record word is kept
 * in the shadow frame of that depth, for mcount_core_unwind_all()). */
static inline VT_NOTRACE void mcount_core_cyg_enter(struct mcount_ctx *c, void *fn)
{
	unsigned d = c->cyg_depth++;

	if (unlikely(d >= c->record_below)) {
		c->skipped++;
		return;
	}
	c->base[d].word = vt_uft_pack(VT_UFT_ENTRY, d, (uint64_t)(uintptr_t)fn);
	if (likely(mcount_room_or_lost(c)))
		mcount_put_bits(c, c->base[d].word);
}

/* -finstrument-functions exit: the depth of its entry. */
static inline VT_NOTRACE void mcount_core_cyg_exit(struct mcount_ctx *c, void *fn)
{
	unsigned d = --c->cyg_depth;

	if (unlikely(d >= c->record_below) || unlikely(!mcount_room_or_lost(c)))
		return;
	mcount_put(c, VT_UFT_EXIT, d, (uint64_t)(uintptr_t)fn);
}

#endif
