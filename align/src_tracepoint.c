/*
 * src_tracepoint.c - the kvm:kvm_write_tsc_offset alignment source: each
 * write of a vCPU's offset in the host's trace (it also starts a new
 * segment of the model), the offset KVM was asked to write, with debugfs's
 * scaling ratio.  What was asked is not always what applies (PVM,
 * docs/align.md): ranked after markers and debugfs.
 */
#include "align/gather.h"
#include "err.h"

#define SRC_LATE_MAX		64	/* vCPUs note_late_start() speaks of */

static int est_tracepoint(const struct seg_ctx *x, struct line *l)
{
	if (!x->ev)
		return 0;
	*l = align_line_kvm(x->ref_h, x->ev->next_offset_tsc, x->ratio, x->frac);
	return 1;
}

/* One kvm_write_tsc_offset of a vCPU thread into s->offsets. */
static int tracepoint_event(struct align_gather *g, const struct vt_td_event *ev, int kind)
{
	struct align_offset_event oe;
	uint64_t a, b, c;

	(void)kind;
	if (vt_td_field_u64(ev, "vcpu_id", &a) || vt_td_field_u64(ev, "previous_tsc_offset", &b) ||
	    vt_td_field_u64(ev, "next_tsc_offset", &c))
		return 0;
	oe = (struct align_offset_event){ ev->ts, (int32_t)a, (int64_t)b, (int64_t)c };
	return align_gather_push((void **)&g->s->offsets, &g->s->in.n_offsets, &g->cap_off,
				 sizeof(oe), &oe);
}

/*
 * A recording started after the VM: KVM writes a vCPU's first offset when
 * the vCPU is created (previous offset 0); a vCPU that debugfs or the
 * markers know but whose creation write is not in the trace was created
 * before the recording began.  Its offset up to the first write the trace
 * holds then comes from debugfs or the markers only; said once per vCPU.
 */
static void note_late_start(struct align_samples *s)
{
	int32_t seen[SRC_LATE_MAX];
	size_t nseen = 0;

	for (size_t i = 0; i < s->in.n_snaps && nseen < SRC_LATE_MAX; i++) {
		int32_t v = s->snaps[i].vcpu;
		int created = 0, known = 0;

		for (size_t k = 0; k < nseen; k++)
			known |= seen[k] == v;
		if (known)
			continue;
		seen[nseen++] = v;
		for (size_t k = 0; k < s->in.n_offsets && !created; k++)
			created = s->offsets[k].vcpu == v && s->offsets[k].prev_offset_tsc == 0;
		if (!created)
			align_gather_note(s, "host: vCPU %d: its creation-time kvm_write_tsc_offset is not in the "
			     "trace (the recording started after the VM): its offset comes from "
			     "debugfs and markers%s", (int)v,
			     s->in.n_offsets ? " until the trace's first offset write" : "");
	}
}

const struct align_source_def align_src_tracepoint = {
	.id = ALIGN_SRC_TRACEPOINT,
	.name = "tracepoint",
	.rank = 3,
	.estimate = est_tracepoint,
};

const struct align_source_io align_io_tracepoint = {
	.id = ALIGN_SRC_TRACEPOINT,
	.host_events = ALIGN_EV_BIT(ALIGN_EV_TSC_OFFSET),
	.host_event = tracepoint_event,
	.host_notes = note_late_start,
};
