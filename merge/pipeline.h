/*
 * pipeline.h - merge as a library: what `vmtrace merge`, `report` and
 * `export` are thin commands over.  A context holds the plan (which input
 * is the host's, which a guest's and of which VM; each input's clock map;
 * each VM's clock model), the pipeline (readers -> sorter -> flows ->
 * derived slices) and runs it into one sink opened with the sink's own
 * options:
 *
 *	struct merge_ctx *m = merge_new(&opts);
 *	st = merge_plan(m, inputs, n);	   inputs: dirs, trace.dat files, DIR@VM
 *	if (!st) st = merge_open(m);	   clock models, readers
 *	if (!st) st = merge_run(m, &merge_sink_chrome, "out.json", NULL);
 *	merge_free(m);
 *
 * Each step returns an exit status (err.h's enum vt_exit): VT_EXIT_OK, or
 * the failure's status with its message set (vt_err_msg; the command
 * prints it).  merge_run also returns VT_EXIT_PARTIAL after warning of a
 * truncated or corrupt input.  The context holds all the state, the
 * string and track tables too (struct merge_tables, merge.h: handed to
 * the readers, flows, deriver and sink), so contexts are independent of
 * each other; each is used on one thread.
 */
#ifndef MERGE_PIPELINE_H
#define MERGE_PIPELINE_H

#include <stdint.h>
#include "merge.h"

/* What the caller asks of the pipeline (zero-filled: the defaults). */
struct merge_opts {
	uint64_t tsc_hz;	/* host TSC frequency; 0: the host's vmtrace.meta */
	int64_t offset_tsc;	/* guest TSC - host TSC: the model's user source,
				 * and the map where no model can be built */
	int has_offset;		/* offset_tsc was given */
	int no_align;		/* build no clock model: offset_tsc alone */
	int quiet;		/* no progress line, no summary */
};

struct merge_ctx;

/* A new context with a copy of @o; NULL when out of memory (message set). */
struct merge_ctx *merge_new(const struct merge_opts *o);
/* Plan the @n inputs @inputs: expand directories holding only input
 * directories, read each one's vmtrace.meta, decide the host and the VMs,
 * set up every input's clock map.  Reads metadata and trace headers, no
 * events. */
int merge_plan(struct merge_ctx *m, char *const *inputs, int n);
/* Build each VM's clock model (unless no_align) and open every input's
 * readers and each VM's sync markers. */
int merge_open(struct merge_ctx *m);
/* Every event in time order into @sink (opened on @out with @sink_opts:
 * its own options struct, or NULL), with flows and, for a sink that shows
 * them, syscall and thread-state slices; the summary (unless quiet). */
int merge_run(struct merge_ctx *m, const struct merge_sink_ops *sink, const char *out,
	      const void *sink_opts);
/* Free @m: its readers, models and string and track tables. */
void merge_free(struct merge_ctx *m);

#endif
