/*
 * reader_markers.c - merge's reader of a VM's sync markers, as its clock
 * model matched them (align_model_pair(): the guest's TSC bracket and the
 * host instant of each marker, from markers.dat or the host's in-band
 * hypercalls).  Each marker becomes two instants named "sync marker": one
 * on the guest track "sync markers vCPU N" of the VM (at the guest's
 * reading before the action, through the VM's clock map), one on the host
 * thread that saw it (the vCPU thread: the same track as its kvm_pio /
 * kvm_hypercall event), joined by a flow "sync" (merge/flow.c pairs them
 * by the key in .value).  Outliers the estimator rejected are marked so.
 * Runs on the merge thread; allocates at open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "align/align.h"
#include "merge.h"
#include "grow.h"

/* The guest markers' process: above any Linux pid, below the sinks'
 * machine stride, apart from the samples' (reader_samples.c); vCPU N is
 * thread MARKERS_PID + 2 + N, "vCPU unknown" MARKERS_PID + 1. */
#define MARKERS_PID		5100000
#define MARKERS_MAX_VCPUS	4096

struct mk_stream {
	struct merge_stream base;
	struct merge_source *src;
	const struct align_marker_pair **p;	/* this stream's pairs, in its time order */
	uint64_t *key;				/* each one's flow key */
	size_t n, next;
	int host;				/* host side: instants on the vCPU threads */
	uint32_t name, guest_track, pname_host;
	uint32_t seq_key, bracket_key, outlier_key, vcpu_key;
};

/* "PREFIX N", or "PREFIX unknown" for ALIGN_VCPU_ANY (a chardev marker
 * written by a thread that is no vCPU's) */
static void vcpu_name(char *buf, size_t sz, const char *prefix, int32_t vcpu)
{
	if (vcpu == ALIGN_VCPU_ANY)
		snprintf(buf, sz, "%s unknown", prefix);
	else
		snprintf(buf, sz, "%s %d", prefix, (int)vcpu);
}

static int mk_next(struct merge_stream *ms, struct merge_event *ev)
{
	struct mk_stream *s = (struct mk_stream *)ms;
	const struct align_marker_pair *p;

	if (s->next >= s->n)
		return 0;
	p = s->p[s->next];
	ev->kind = MERGE_EV_INSTANT;
	ev->name = s->name;
	ev->cpu = p->vcpu;
	ev->value = (int64_t)s->key[s->next];
	ev->nr_args = 4;
	ev->args[0] = (struct merge_arg){ .key = s->seq_key, .type = MERGE_ARG_U64, .v.u = p->seq };
	ev->args[1] = (struct merge_arg){ .key = s->vcpu_key, .type = MERGE_ARG_I64,
		.v.i = p->vcpu };
	/* the guest's bracket: a duration, scaled by the clock's rate only */
	ev->args[2] = (struct merge_arg){ .key = s->bracket_key, .type = MERGE_ARG_U64,
		.v.u = align_clock_span_ns(s->base.clock, p->tsc_guest_after - p->tsc_guest_before) };
	ev->args[3] = (struct merge_arg){ .key = s->outlier_key, .type = MERGE_ARG_U64,
		.v.u = p->outlier };
	if (s->host) {
		char tname[32];
		struct merge_tables *tb = s->src->tables;
		uint32_t tr = UINT32_MAX;

		if (p->host_tid > 0)
			tr = merge_track_find_tid(tb, MERGE_MACHINE_HOST, p->host_tid);
		/* the thread's track, made here as the host trace's reader makes
		 * it (QEMU's pid, the thread's tid: that reader adopts it, the
		 * sorter pulls this stream ahead of it) or as it already did */
		vcpu_name(tname, sizeof(tname), "vCPU", p->vcpu);
		if (tr == UINT32_MAX && p->host_tid > 0) {
			tr = merge_track_get(tb, MERGE_MACHINE_HOST,
					     s->src->host.qemu_pid > 0 ? s->src->host.qemu_pid : p->host_tid,
					     p->host_tid, 0, merge_str_intern0(tb, tname));
		} else if (tr == UINT32_MAX) {	/* no thread known: a track of its own */
			tr = merge_track_get(tb, MERGE_MACHINE_HOST, MARKERS_PID,
					     MARKERS_PID + 2 + (p->vcpu < 0 ? -1 : p->vcpu),
					     s->pname_host, merge_str_intern0(tb, tname));
		}
		ev->track = tr;
		ev->ts_raw = p->tsc_host;
	} else {
		ev->track = s->guest_track;
		ev->ts_raw = p->tsc_guest_before;
	}
	if (unlikely(ev->track == UINT32_MAX))
		return -1;
	s->next++;
	return 1;
}

static void mk_close(struct merge_stream *ms)
{
	struct mk_stream *s = (struct mk_stream *)ms;

	free(s->p);
	free(s->key);
	free(s);
}

static const struct merge_stream_ops mk_ops = { .next = mk_next, .close = mk_close };

static int cmp_host_time(const void *a, const void *b)
{
	const struct align_marker_pair *x = *(const struct align_marker_pair *const *)a;
	const struct align_marker_pair *y = *(const struct align_marker_pair *const *)b;

	return x->tsc_host < y->tsc_host ? -1 : x->tsc_host > y->tsc_host;
}

/* A stream of @m's pairs of @vcpu (host side: all of them, by host time). */
static int mk_open(struct merge_source *src, uint16_t idx, const struct align_model *m,
		   int host, int32_t vcpu, uint32_t vm_machine)
{
	struct mk_stream *s = calloc(1, sizeof(*s));
	size_t n = align_model_nr_pairs(m);
	char buf[128];

	if (!s || !(s->p = calloc(n ? n : 1, sizeof(*s->p))) ||
	    !(s->key = calloc(n ? n : 1, sizeof(*s->key)))) {
		if (s)
			free(s->p);
		free(s);
		return vt_err_set("%s: out of memory", src->path);
	}
	for (size_t i = 0; i < n; i++) {
		const struct align_marker_pair *p = align_model_pair(m, i);

		if (host || p->vcpu == vcpu)
			s->p[s->n++] = p;
	}
	if (host)
		vt_sort(s->p, s->n, sizeof(*s->p), cmp_host_time);
	/* the flow key: the VM and the pair's place in the model */
	for (size_t i = 0; i < s->n; i++)
		s->key[i] = ((uint64_t)vm_machine << 32) | (uint64_t)(s->p[i] - align_model_pair(m, 0) + 1);
	s->src = src;
	s->host = host;
	s->name = merge_str_intern0(src->tables, "sync marker");
	s->seq_key = merge_str_intern0(src->tables, "seq");
	s->vcpu_key = merge_str_intern0(src->tables, "vcpu");
	s->bracket_key = merge_str_intern0(src->tables, "guest_bracket_ns");
	s->outlier_key = merge_str_intern0(src->tables, "outlier");
	if (host) {
		s->pname_host = merge_str_intern0(src->tables, "host: sync markers");
	} else {
		snprintf(buf, sizeof(buf), "%s: sync markers", src->label);
		uint32_t pn = merge_str_intern0(src->tables, buf);

		if (vcpu == ALIGN_VCPU_ANY)
			snprintf(buf, sizeof(buf), "sync markers");
		else
			snprintf(buf, sizeof(buf), "sync markers vCPU %d", (int)vcpu);
		s->guest_track = merge_track_get(src->tables, vm_machine, MARKERS_PID,
						 MARKERS_PID + 2 + (vcpu == ALIGN_VCPU_ANY ? -1 : vcpu),
						 pn, merge_str_intern0(src->tables, buf));
	}
	s->base.ops = &mk_ops;
	s->base.clock = &src->clock;
	s->base.src = idx;
	s->base.vcpu = vcpu;
	merge_stream_clock_init(&s->base);
	if (merge_sort_add(src->sorter, &s->base) < 0) {
		mk_close(&s->base);
		return vt_err_set("%s: out of memory", src->path);
	}
	return 0;
}

int merge_reader_markers(struct merge_source *guest, uint16_t gidx, struct merge_source *host,
			 uint16_t hidx, const struct align_model *m)
{
	size_t n = align_model_nr_pairs(m);
	int32_t vcpus[64];
	int nv = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int32_t v = align_model_pair(m, i)->vcpu;
		int known = 0;

		if (v != ALIGN_VCPU_ANY && (v < 0 || v >= MARKERS_MAX_VCPUS))
			continue;
		for (int k = 0; k < nv; k++)
			known |= vcpus[k] == v;
		if (!known && nv < (int)VT_ARRAY_SIZE(vcpus))
			vcpus[nv++] = v;
	}
	for (int k = 0; k < nv; k++)
		if (mk_open(guest, gidx, m, 0, vcpus[k], guest->machine) < 0)
			return -1;
	if (host && mk_open(host, hidx, m, 1, ALIGN_VCPU_ANY, guest->machine) < 0)
		return -1;
	return 0;
}
