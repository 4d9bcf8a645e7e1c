/*
 * flow.c - merge's flow matcher: arrows from a guest I/O kick to the host
 * exit it caused, and from a host interrupt injection to the guest's
 * handling of it, where both ends are in the inputs, and between the two
 * instants of each sync marker (merge/reader_markers.c: guest and host,
 * paired by their key, whichever comes first on the timeline starting).
 * Fed every event in time order on the merge thread; keeps one pending
 * start per vCPU (plus one for "vCPU unknown") and a fixed ring of pending
 * markers, so its memory is fixed; all of it in the caller's struct
 * merge_flows (one per pipeline).  Rules: docs/merge.md.
 */
#include <stdlib.h>
#include <string.h>
#include "merge.h"

#define FLOW_WINDOW_NS	1000000ULL	/* ends further apart are not linked */
#define FLOW_ANY	MERGE_FLOW_MAX_VCPUS	/* the slot of "vCPU unknown" */
#define FLOW_MARKERS	MERGE_FLOW_MARKERS

enum name_class {
	CL_UNKNOWN = 0,	/* not classified yet */
	CL_NONE,
	CL_KICK,	/* guest: an I/O notification to the device */
	CL_HOST_IO,	/* host: the exit/event a kick causes */
	CL_INJECT,	/* host: an interrupt injected into the guest */
	CL_GUEST_IRQ,	/* guest: interrupt handling */
	CL_MARKER,	/* either side: a sync marker's instant (key in .value) */
};


static const char *const kick_names[] = {
	"virtqueue_notify", "virtqueue_kick", "virtqueue_kick_prepare", "vp_notify",
	"vm_notify", "vmtrace_marker", "virtio_notify", NULL,
};
static const char *const host_io_names[] = {
	"kvm_pio", "kvm_mmio", "kvm_hypercall", "kvm_fast_mmio", "exit: IO_INSTRUCTION",
	"exit: EPT_MISCONFIG", "exit: EPT_VIOLATION", "exit: io", "exit: npf",
	"exit: vmmcall", "exit: VMCALL", "exit: EXIT_IOIO", "exit: EXIT_NPF",
	"exit: EXIT_VMMCALL", NULL,
};
static const char *const inject_names[] = {
	"kvm_inj_virq", "kvm_apic_accept_irq", "kvm_msi_set_irq", "kvm_set_irq", NULL,
};
static const char *const guest_irq_names[] = {
	"irq_handler_entry", "vring_interrupt", "vp_interrupt", "do_IRQ",
	"common_interrupt", "handle_irq_event", "local_timer_entry",
	"call_function_entry", "call_function_single_entry", "reschedule_entry", NULL,
};

static int classify(const struct merge_tables *tb, uint32_t id, int guest)
{
	const char *s = merge_str(tb, id);

	if (!strcmp(s, "sync marker"))
		return CL_MARKER;
	if (guest) {
		if (merge_name_in(s, kick_names))
			return CL_KICK;
		if (merge_name_in(s, guest_irq_names))
			return CL_GUEST_IRQ;
		return CL_NONE;
	}
	if (merge_name_in(s, host_io_names))
		return CL_HOST_IO;
	if (merge_name_in(s, inject_names))
		return CL_INJECT;
	return CL_NONE;
}

/* Host and guest share name ids, so the class is cached per (id, side). */
static int class_of(struct merge_flows *f, uint32_t id, int guest)
{
	uint32_t i = 2 * id + (guest ? 1 : 0);

	if (unlikely(i >= f->classes_cap) &&
	    merge_table_grow(&f->classes, &f->classes_cap, i + 1, 1)) {
		f->failed = 1;
		return CL_NONE;
	}
	if (unlikely(f->classes[i] == CL_UNKNOWN))
		f->classes[i] = (uint8_t)classify(f->tables, id, guest);
	return f->classes[i];
}

static int slot_of(int vcpu)
{
	return vcpu >= 0 && vcpu < MERGE_FLOW_MAX_VCPUS ? vcpu : FLOW_ANY;
}

/* The pending start that matches an end on @vcpu: its own slot, else the
 * "unknown" one (an end of unknown vCPU takes the latest of all); NULL if
 * none is within the window. */
static struct merge_flow_pending *find(struct merge_flow_pending *tab, int vcpu, uint64_t now)
{
	struct merge_flow_pending *p = NULL;

	if (vcpu < 0 || vcpu >= MERGE_FLOW_MAX_VCPUS) {
		for (int i = 0; i <= FLOW_ANY; i++)
			if (tab[i].valid && (!p || tab[i].ts_ns > p->ts_ns))
				p = &tab[i];
	} else {
		p = &tab[vcpu];
		if (!p->valid)
			p = &tab[FLOW_ANY];
	}
	if (!p || !p->valid || now - p->ts_ns > FLOW_WINDOW_NS)
		return NULL;
	return p;
}

/* @ev may start a flow: give it an id now (the sink writes the start with
 * the event, in time order) and remember it in @slot. */
static void start(struct merge_flows *f, struct merge_event *ev, struct merge_flow_pending *slot,
		  uint32_t name)
{
	*slot = (struct merge_flow_pending){ ev->ts_ns, f->next_id++, ev->track, 1 };
	ev->flow_start_id = slot->id;
	ev->flow_name = name;
}

static void link(struct merge_flows *f, struct merge_event *ev, struct merge_flow_pending *p, uint32_t name)
{
	ev->flow_id = p->id;
	ev->flow_ts_ns = p->ts_ns;
	ev->flow_track = p->track;
	ev->flow_name = name;
	p->valid = 0;
	f->nr_flows++;
}

/* Remember that @id is no flow end on either side (fast inline skip). */
static void mark_skip(struct merge_flows *f, uint32_t id)
{
	if (id >= f->skip_cap && merge_table_grow(&f->skip, &f->skip_cap, id + 1, 1))
		return;
	f->skip[id] = 1;
}

void merge_flows_init(struct merge_flows *f, struct merge_tables *tb)
{
	memset(f, 0, sizeof(*f));
	f->next_id = 1;
	f->tables = tb;
}

void merge_flows_free(struct merge_flows *f)
{
	free(f->skip);
	free(f->classes);
	merge_flows_init(f, f->tables);
}

void merge_flow_check(struct merge_flows *f, struct merge_event *ev)
{
	if (!ev->name)
		return;

	const struct merge_track *t = merge_track(f->tables, ev->track);
	int guest = t->machine != MERGE_MACHINE_HOST;
	int cls = class_of(f, ev->name, guest);

	if (likely(cls == CL_NONE)) {
		if (class_of(f, ev->name, !guest) == CL_NONE)
			mark_skip(f, ev->name);
		return;
	}
	if (unlikely(!f->kick_name)) {
		f->kick_name = merge_str_intern0(f->tables, "kick");
		f->irq_name = merge_str_intern0(f->tables, "irq");
	}
	if (cls == CL_MARKER) {
		/* the second instant of a key ends the flow the first started */
		uint64_t key = (uint64_t)ev->value;
		struct merge_flow_pending *m = &f->markers[key % FLOW_MARKERS];

		if (unlikely(!f->sync_name))	/* only where there are markers: other
						 * outputs keep their string tables */
			f->sync_name = merge_str_intern0(f->tables, "sync");
		if (m->valid && f->marker_key[key % FLOW_MARKERS] == key) {
			link(f, ev, m, f->sync_name);
		} else {
			start(f, ev, m, f->sync_name);
			f->marker_key[key % FLOW_MARKERS] = key;
		}
		return;
	}
	/* guest: the vCPU is the CPU it ran on; host: the vCPU thread's */
	int vcpu = guest ? ev->cpu : (int)t->vcpu - 1;
	struct merge_flow_pending *p;

	switch (cls) {
	case CL_KICK:
		start(f, ev, &f->kicks[slot_of(vcpu)], f->kick_name);
		break;
	case CL_HOST_IO:
		p = find(f->kicks, vcpu, ev->ts_ns);
		if (p)
			link(f, ev, p, f->kick_name);
		break;
	case CL_INJECT:
		start(f, ev, &f->injects[slot_of(vcpu)], f->irq_name);
		break;
	case CL_GUEST_IRQ:
		p = find(f->injects, vcpu, ev->ts_ns);
		if (p)
			link(f, ev, p, f->irq_name);
		break;
	}
}
