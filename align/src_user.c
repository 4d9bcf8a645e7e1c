/*
 * src_user.c - the user-given alignment source: `--offset N` (guest TSC =
 * host TSC + N, slope 1) of vmtrace align / merge / report.  It overrides
 * every other source (the user knows better, e.g. of a lying tracepoint);
 * the others are still cross-checked against it.
 */
#include "align/internal.h"

static int est_user(const struct seg_ctx *x, struct line *l)
{
	if (!x->in->has_user_offset)
		return 0;
	*l = align_line_kvm(x->ref_h, x->in->user_offset_tsc, 0, 0);
	return 1;
}

const struct align_source_def align_src_user = {
	.id = ALIGN_SRC_USER,
	.name = "user",
	.rank = 0,
	.estimate = est_user,
};
