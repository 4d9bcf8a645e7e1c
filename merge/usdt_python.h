/*
 * usdt_python.h - merge's translation of CPython's USDT uprobe events
 * (tracefs systems "vmtrace_py_<pid>", made by `vmtrace record --python`)
 * into the event model: function entry/return -> slices named like the
 * extension's ("module.func (file:line)"), gc and imports -> slices.
 * Called by reader_tracedat.c only; merge thread.
 */
#ifndef MERGE_USDT_PYTHON_H
#define MERGE_USDT_PYTHON_H

#include <stdint.h>
#include "tracedat.h"
#include "event.h"

struct merge_tables;

/* Per trace.dat state: which python slices are open on each track. */
struct merge_usdt {
	struct merge_usdt_track *trk;	/* by track index */
	uint32_t nr;
	struct merge_tables *tables;	/* where its names are interned */
};

/* Non-zero (a MERGE_USDT_* kind) if (@system, @name) is one of our
 * uprobe events, 0 otherwise.  Called once per event type. */
int merge_usdt_kind(const char *system, const char *name);

/* Fill @ev (track, times and cpu already set) from the uprobe event @e of
 * @kind on @track.  0, or -1 when out of memory. */
int merge_usdt_event(struct merge_usdt *u, int kind, uint32_t track,
		     const struct vt_td_event *e, struct merge_event *ev);

void merge_usdt_free(struct merge_usdt *u);

#endif
