/*
 * t-merge-markers.c - merge's reader of a VM's sync markers
 * (merge/reader_markers.c) on a clock model built from synthetic markers
 * of many vCPUs (the first eight twice): a guest track per vCPU for the
 * first 64 vCPUs in range (or unknown)
 * (a vCPU past 4095 or below 0 has none), the host side's instants in host
 * time order on the thread that saw each (in QEMU's process when its pid
 * is known, else the thread's own process; a track of their own when no
 * thread is known); no host side when there is no host input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "marker_fixture.h"
#include "align/align.h"
#include "marker.h"
#include "merge/merge.h"

#define HZ	2000000000ULL
#define NR	84		/* markers: vCPUs 0..69, -5, 5000, none (4), 0..7 again */
#define STEP	(HZ / 100)

static int32_t vcpu_of(int i)
{
	return i < 70 ? i : i == 70 ? -5 : i == 71 ? 5000 : i < 76 ? ALIGN_VCPU_ANY : i - 76;
}

/* The markers of NR vCPUs, guest TSC = host TSC + 1000; marker i's host
 * instant on thread 4000 + i (none for the last four); the odd ones'
 * seqs 1000 on (two emitters): the model's pairs, in seq order, are not
 * in host time order. */
static struct align_model *model(void)
{
	static struct vt_marker g[NR];
	static struct align_host_marker h[NR];
	struct align_input in;

	for (int i = 0; i < NR; i++) {
		uint64_t t = 1000000000ULL + (uint64_t)i * STEP;
		uint64_t seq = (uint64_t)i + 1 + (i % 2 ? 1000 : 0);	/* two emitters' */
		uint32_t cpu = vcpu_of(i) == ALIGN_VCPU_ANY ? VT_MARKER_CPU_NONE : (uint32_t)vcpu_of(i);

		marker_fix_pio(&g[i], cpu, seq, t + 1000 - 100, t + 1000 + 100);
		h[i] = (struct align_host_marker){ .tsc_host = t, .vcpu = vcpu_of(i),
			.value = g[i].value, .has_value = 1, .tid = i < NR - 4 ? 4000 + i : 0 };
	}
	memset(&in, 0, sizeof(in));
	in.host_hz = HZ;
	in.guest_markers = g;
	in.n_guest_markers = NR;
	in.host_markers = h;
	in.n_host_markers = NR;
	return align_model_build(&in);
}

static void source(struct merge_source *s, struct merge_sorter *so, struct merge_tables *tb,
		   uint32_t machine, const struct align_model *m)
{
	memset(s, 0, sizeof(*s));
	s->sorter = so;
	s->tables = tb;
	s->machine = machine;
	snprintf(s->label, sizeof(s->label), machine ? "guest" : "host");
	CHECK(align_clock_init(&s->clock, machine ? ALIGN_CLOCK_GUEST : ALIGN_CLOCK_HOST, HZ) == 0);
	if (machine)
		align_clock_set_model(&s->clock, m);
}

int main(void)
{
	struct align_model *m = model();
	struct merge_tables tb = { 0 };
	struct merge_sorter so = { 0 };
	struct merge_source g, h;
	struct merge_event *e;
	int guest = 0, host = 0, in_qemu = 0, own = 0, unknown = 0, vcpu_tracks = 0;
	uint64_t last = 0;

	CHECK(m != NULL);
	if (!m)
		return check_done();
	printf("model: %zu pairs\n", align_model_nr_pairs(m));
	CHECK(align_model_nr_pairs(m) == NR);
	source(&g, &so, &tb, 1, m);
	source(&h, &so, &tb, MERGE_MACHINE_HOST, m);
	h.host.qemu_pid = 4240;
	/* thread 4001 is known already, in a process of its own */
	merge_track_get(&tb, MERGE_MACHINE_HOST, 4001, 4001, 0, merge_str_intern0(&tb, "t"));
	CHECK(merge_reader_markers(&g, 0, &h, 1, m) == 0);
	while ((e = merge_sort_next(&so))) {
		const struct merge_track *t = merge_track(&tb, e->track);

		if (t->machine) {
			guest++;
			continue;
		}
		host++;
		CHECK(e->ts_ns >= last);
		last = e->ts_ns;
		if (t->pid == 4240)
			in_qemu++;
		else if (t->pid == 4001)
			own++;
		else if (!strcmp(merge_str(&tb, t->pname), "host: sync markers"))
			unknown++;
	}
	for (uint32_t i = 0; i < merge_track_count(&tb); i++)
		vcpu_tracks += !strncmp(merge_str(&tb, merge_track(&tb, i)->name), "sync markers", 12);
	printf("guest %d host %d (QEMU %d, own %d, unknown %d), guest tracks %d\n", guest, host,
	       in_qemu, own, unknown, vcpu_tracks);
	CHECK(host == NR && in_qemu == NR - 5 && own == 1 && unknown == 4);
	/* the first 64 vCPUs in the model's (seq) order: the even ones to 68,
	 * "unknown", the odd ones to 55; their 75 markers */
	CHECK(vcpu_tracks == 64 && guest == 75);
	merge_sort_free(&so);

	/* no host input: the guest side only */
	merge_tables_free(&tb);
	source(&g, &so, &tb, 1, m);
	CHECK(merge_reader_markers(&g, 0, NULL, 0, m) == 0);
	host = guest = 0;
	while ((e = merge_sort_next(&so)))
		*(merge_track(&tb, e->track)->machine ? &guest : &host) += 1;
	CHECK(guest == 75 && host == 0);
	merge_sort_free(&so);

	/* QEMU's pid unknown: each thread a process of its own */
	merge_tables_free(&tb);
	source(&g, &so, &tb, 1, m);
	source(&h, &so, &tb, MERGE_MACHINE_HOST, m);
	CHECK(merge_reader_markers(&g, 0, &h, 1, m) == 0);
	own = 0;
	while ((e = merge_sort_next(&so))) {
		const struct merge_track *t = merge_track(&tb, e->track);

		own += !t->machine && t->tid >= 4000 && t->pid == t->tid;
	}
	CHECK(own == NR - 4);
	merge_sort_free(&so);
	merge_tables_free(&tb);
	align_model_free(m);
	return check_done();
}
