/*
 * src_markers.c - the sync-marker alignment source: the line the marker
 * estimator (align/model.c, over pairs matched by align/match.c) fitted
 * to a segment's guest brackets and host instants.  The one source that
 * proves an error bound, so it is chosen before the others except a
 * user-given offset.  Its samples come from align/sources.c (host events)
 * and the guest's markers.dat.
 */
#include "align/internal.h"

static int est_markers(const struct seg_ctx *x, struct line *l)
{
	if (!x->markers)
		return 0;
	*l = *x->markers;
	return 1;
}

const struct align_source_def align_src_markers = {
	.id = ALIGN_SRC_MARKERS,
	.name = "markers",
	.rank = 1,
	.estimate = est_markers,
};
