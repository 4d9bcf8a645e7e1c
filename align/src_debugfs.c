/*
 * src_debugfs.c - the debugfs alignment source: a vCPU's tsc-offset (and
 * tsc-scaling-ratio) as KVM reports it in /sys/kernel/debug/kvm/<vm>/vcpuN,
 * read by the recorder into vmtrace.meta (gathered by align/sources.c).
 * Read back from the vCPU itself: ranked after markers, before the
 * tracepoint (which is what KVM was asked to write).
 */
#include "align/internal.h"

static int est_debugfs(const struct seg_ctx *x, struct line *l)
{
	if (!x->snap)
		return 0;
	*l = align_line_kvm(x->ref_h, x->snap->offset_tsc, x->ratio, x->frac);
	return 1;
}

const struct align_source_def align_src_debugfs = {
	.id = ALIGN_SRC_DEBUGFS,
	.name = "debugfs",
	.rank = 2,
	.estimate = est_debugfs,
};
