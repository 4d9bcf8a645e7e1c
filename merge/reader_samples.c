/*
 * reader_samples.c - merge's reader of a sampling session's directory
 * (tools/vmtrace-sample: samples.tsv, docs/format/samples.md), read through
 * lib/samples.h (the only parser of that file).  One stream for the file
 * (its lines are in time order); each sample becomes an instant named by
 * its leaf frame on the track "samples vCPU N" of the process "LABEL:
 * samples" of the source's machine (a guest VM), with the whole stack, the
 * pc and the stamp's error bound as arguments.  Runs on the merge thread;
 * allocates at open and when a vCPU is first seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "samples.h"
#include "merge.h"

/* The samples' process: a pid above any Linux pid (PID_MAX_LIMIT is
 * 4194304) and below the sinks' machine stride, so it never meets a pid of
 * the guest's own traces; vCPU N is thread SAMPLES_PID + 1 + N. */
#define SAMPLES_PID		5000000
#define SAMPLES_MAX_VCPUS	4096	/* vCPU numbers accepted (KVM allows 4096) */

struct smp_stream {
	struct merge_stream base;
	struct vt_samples *r;
	struct merge_source *src;
	char *path;
	uint32_t pname;
	uint32_t stack_key, pc_key, error_key;
	uint32_t track[SAMPLES_MAX_VCPUS];	/* by vCPU: track index + 1, 0 = none yet */
};

/* Track of vCPU @vcpu (created on first use); UINT32_MAX on failure. */
static uint32_t smp_track(struct smp_stream *s, uint32_t vcpu)
{
	char buf[64];
	uint32_t t;

	if (likely(s->track[vcpu]))
		return s->track[vcpu] - 1;
	snprintf(buf, sizeof(buf), "samples vCPU %u", vcpu);
	t = merge_track_get(s->src->tables, s->src->machine, SAMPLES_PID,
			    SAMPLES_PID + 1 + (int32_t)vcpu, s->pname,
			    merge_str_intern0(s->src->tables, buf));
	if (t != UINT32_MAX)
		s->track[vcpu] = t + 1;
	return t;
}

static int smp_next(struct merge_stream *ms, struct merge_event *ev)
{
	struct smp_stream *s = (struct smp_stream *)ms;
	struct vt_sample smp;
	int r = vt_samples_next(s->r, &smp);

	if (unlikely(r <= 0)) {
		if (r < 0) {
			vt_warn("%s", vt_err_msg());
			s->src->partial = 1;
		}
		return r;
	}
	if (unlikely(smp.vcpu >= SAMPLES_MAX_VCPUS)) {
		vt_warn("%s: vCPU %u out of range (at most %d vCPUs)", s->path, smp.vcpu,
			SAMPLES_MAX_VCPUS);
		s->src->partial = 1;
		return -1;
	}
	ev->track = smp_track(s, smp.vcpu);
	if (unlikely(ev->track == UINT32_MAX))
		return -1;
	ev->ts_raw = smp.time;
	ev->cpu = (int32_t)smp.vcpu;
	ev->kind = MERGE_EV_INSTANT;
	ev->name = merge_str_intern0(s->src->tables, smp.leaf);
	ev->nr_args = 3;
	ev->args[0] = (struct merge_arg){ .key = s->stack_key, .type = MERGE_ARG_STR,
		.v.str = merge_str_intern0(s->src->tables, smp.stack) };
	ev->args[1] = (struct merge_arg){ .key = s->pc_key, .type = MERGE_ARG_U64,
		.v.u = smp.pc };
	/* a duration, not a stamp: scaled by the clock's rate, no offset */
	ev->args[2] = (struct merge_arg){ .key = s->error_key, .type = MERGE_ARG_U64,
		.v.u = align_clock_span_ns(s->base.clock, smp.error) };
	return 1;
}

static void smp_close(struct merge_stream *ms)
{
	struct smp_stream *s = (struct smp_stream *)ms;

	vt_samples_close(s->r);
	free(s->path);
	free(s);
}

static const struct merge_stream_ops smp_ops = { .next = smp_next, .close = smp_close };

int merge_reader_samples(struct merge_source *src, uint16_t idx)
{
	struct smp_stream *s = calloc(1, sizeof(*s));
	char buf[128];
	int is_ns;

	if (!s)
		return vt_err_set("%s: out of memory", src->path);
	if (asprintf(&s->path, "%s/%s", src->path, VT_SAMPLES_FILE) < 0) {
		free(s);
		return vt_err_set("%s: out of memory", src->path);
	}
	s->r = vt_samples_open(s->path);
	if (!s->r) {
		free(s->path);
		free(s);
		return -1;
	}
	/* the file's own header says its clock (vmtrace.meta may be absent) */
	is_ns = vt_samples_clock(s->r) == VT_SAMPLES_MONO_NS;
	if (is_ns && !src->single)
		vt_warn("%s: clock mono-ns (host CLOCK_MONOTONIC): placed by its own ns "
			"stamps, not aligned with TSC inputs", s->path);
	if (is_ns != (src->clock.kind == ALIGN_CLOCK_NS)) {
		if (align_clock_init(&src->clock, is_ns ? ALIGN_CLOCK_NS : src->tsc_kind,
				     src->tsc_hz) < 0) {
			smp_close(&s->base);
			return vt_err_set("%s: clock tsc but no TSC frequency", s->path);
		}
	}
	snprintf(buf, sizeof(buf), "%s: samples", src->label);
	s->pname = merge_str_intern0(src->tables, buf);
	s->stack_key = merge_str_intern0(src->tables, "stack");
	s->pc_key = merge_str_intern0(src->tables, "pc");
	s->error_key = merge_str_intern0(src->tables, "error_ns");
	s->src = src;
	s->base.ops = &smp_ops;
	s->base.clock = &src->clock;
	s->base.src = idx;
	s->base.vcpu = ALIGN_VCPU_ANY;
	merge_stream_clock_init(&s->base);
	if (merge_sort_add(src->sorter, &s->base) < 0) {
		smp_close(&s->base);
		return -1;
	}
	return 0;
}
