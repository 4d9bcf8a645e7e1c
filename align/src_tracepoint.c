/*
 * src_tracepoint.c - the kvm:kvm_write_tsc_offset alignment source: the
 * offset KVM was asked to write at the start of a segment (the event that
 * starts it; gathered by align/sources.c), with debugfs's scaling ratio.
 * What was asked is not always what applies (PVM, docs/align.md): ranked
 * after markers and debugfs.
 */
#include "align/internal.h"

static int est_tracepoint(const struct seg_ctx *x, struct line *l)
{
	if (!x->ev)
		return 0;
	*l = align_line_kvm(x->ref_h, x->ev->next_offset_tsc, x->ratio, x->frac);
	return 1;
}

const struct align_source_def align_src_tracepoint = {
	.id = ALIGN_SRC_TRACEPOINT,
	.name = "tracepoint",
	.rank = 3,
	.estimate = est_tracepoint,
};
