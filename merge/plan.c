/*
 * plan.c - the pure part of merge's plan (merge/plan.h): roles, VMs, labels
 * and clock maps from what the inputs declare.  The rules, in order:
 *
 *   - an input's domain is what its meta declares; samples.tsv belongs to a
 *     guest VM whatever its meta says (the meta's domain is its stamps'
 *     clock); DIR@host makes DIR a host input, DIR@NAME (or a meta vm=
 *     with no domain) a guest input of VM NAME;
 *   - undeclared inputs: the first is the host unless another is, the
 *     others guests; a single input is a plain conversion (host);
 *   - all guest inputs of one VM name are one VM, in the order first seen;
 *     a VM's clock input is the first of its directories, a later one that
 *     holds markers.dat where the first does not, else a trace.dat file;
 *   - the host frequency is the one given, else the first host input's own;
 *     a guest input with none takes its own; none at all: 1 tick = 1 ns.
 *
 * No I/O, no allocation; called once per merge on the command thread.
 */
#include <stdio.h>
#include <string.h>
#include "err.h"
#include "tsc.h"
#include "plan.h"

/* The VM called @name (created on first use): its index. */
static int vm_index(struct merge_plan *p, const char *name)
{
	int i;

	for (i = 0; i < p->nr_vms; i++)
		if (!strcmp(p->vm_name[i], name))
			return i;
	snprintf(p->vm_name[p->nr_vms], MERGE_VM_NAME_MAX, "%.*s", MERGE_VM_NAME_MAX - 1, name);
	p->vm_clock_in[p->nr_vms] = -1;
	return p->nr_vms++;
}

/* The declared domain of input @in, its VM name into @vm. */
static enum merge_dom declared(const struct merge_input *in, char *vm)
{
	enum merge_dom dom = in->dom;

	snprintf(vm, MERGE_VM_NAME_MAX, "%s", in->vm);
	if (in->is_dir && in->has_samples)
		dom = MERGE_DOM_GUEST;
	if (in->named && !strcmp(vm, "host"))
		dom = MERGE_DOM_HOST;
	else if (in->named || (*vm && dom == MERGE_DOM_UNKNOWN))
		dom = MERGE_DOM_GUEST;
	if (dom == MERGE_DOM_HOST)
		*vm = 0;
	return dom;
}

/* Gather @f's facts into @acc: each fact from the first host input that
 * has it. */
static void host_facts(struct merge_host_facts *acc, const struct merge_host_facts *f)
{
	if (acc->qemu_pid <= 0 && f->qemu_pid > 0)
		acc->qemu_pid = f->qemu_pid;
	if (acc->qemu_pid > 0 && acc->nr_qtasks <= 0 && f->nr_qtasks) {
		acc->nr_qtasks = f->nr_qtasks;
		memcpy(acc->qtask_tid, f->qtask_tid, sizeof(acc->qtask_tid));
	}
	if (!acc->nr_vthreads && f->nr_vthreads) {
		acc->nr_vthreads = f->nr_vthreads;
		memcpy(acc->vthread_tid, f->vthread_tid, sizeof(acc->vthread_tid));
		memcpy(acc->vthread_vcpu, f->vthread_vcpu, sizeof(acc->vthread_vcpu));
	}
}

/* Input @i (a guest's, of VM @v) as VM @v's clock input: markers.dat in
 * any of its directories, else its trace.dat (a trace-cmd guest file's
 * TIME_SHIFT). */
static void vm_clock(struct merge_plan *p, const struct merge_input *in, int i, int v)
{
	int c = p->vm_clock_in[v];

	if (in[i].is_dir && !in[i].has_samples &&
	    (c < 0 || !in[c].is_dir || (in[i].has_markers && !in[c].has_markers)))
		p->vm_clock_in[v] = i;
	else if (in[i].is_file && c < 0)
		p->vm_clock_in[v] = i;
}

int merge_plan_decide(const struct merge_input *in, int n, uint64_t hz, int64_t offset_tsc,
		      struct merge_plan *p, struct merge_source *src)
{
	char vm[MERGE_MAX_SOURCES][MERGE_VM_NAME_MAX];
	struct merge_host_facts facts = { 0 };
	int any_host = 0, host_td = 0;

	memset(p, 0, sizeof(*p));
	p->nin = n;
	p->hz = hz;
	p->host_in = p->unscaled = -1;
	for (int i = 0; i < n; i++) {
		p->dom[i] = declared(&in[i], vm[i]);
		any_host |= p->dom[i] == MERGE_DOM_HOST;
	}
	for (int i = 0; i < n; i++) {
		struct merge_source *s = &src[i];

		snprintf(s->path, sizeof(s->path), "%s", in[i].path);
		if (p->dom[i] == MERGE_DOM_UNKNOWN)
			p->dom[i] = !any_host && i == 0 ? MERGE_DOM_HOST : MERGE_DOM_GUEST;
		if (n == 1)
			p->dom[i] = MERGE_DOM_HOST;	/* a plain conversion */
		s->single = n == 1;
		s->samples = in[i].is_dir && in[i].has_samples;
		if (p->dom[i] == MERGE_DOM_HOST) {
			host_facts(&facts, &in[i].host);
			if (!p->hz && !in[i].is_ns)
				p->hz = in[i].hz;
			if (!in[i].is_dir || in[i].has_td) {
				host_td = 1;
				/* a trace.dat alone too: trace-cmd's host file */
				if (p->host_in < 0 && (in[i].is_dir || in[i].is_file))
					p->host_in = i;
			}
			s->machine = MERGE_MACHINE_HOST;
			snprintf(s->label, sizeof(s->label), n == 1 ? "trace" : "host");
			continue;
		}
		int v = vm_index(p, vm[i]);

		s->machine = (uint32_t)v + 1;
		if (*vm[i])
			snprintf(s->label, sizeof(s->label), "guest %.*s", MERGE_VM_NAME_MAX - 8,
				 vm[i]);
		else
			snprintf(s->label, sizeof(s->label), "guest");
		vm_clock(p, in, i, v);
	}
	for (int i = 0; p->host_in < 0 && i < n; i++)
		if (p->dom[i] == MERGE_DOM_HOST && in[i].is_dir)
			p->host_in = i;
	/* each input's clock map: host ticks, guest ticks or ns */
	for (int i = 0; i < n; i++) {
		struct merge_source *s = &src[i];
		uint64_t h = p->hz ? p->hz : in[i].hz;	/* no host frequency: its own */
		enum align_clock_kind kind = p->dom[i] == MERGE_DOM_HOST ? ALIGN_CLOCK_HOST
									  : ALIGN_CLOCK_GUEST;

		if (p->dom[i] == MERGE_DOM_HOST) {
			s->host = facts;
			s->lane = host_td && n > 1;
		}
		/* guest stack samples stamped on the host (vmtrace-sample writes
		 * domain=host): their meta's domain is their stamps' clock */
		if (s->samples)
			kind = in[i].dom == MERGE_DOM_GUEST ? ALIGN_CLOCK_GUEST : ALIGN_CLOCK_HOST;
		s->tsc_kind = kind;
		s->tsc_hz = h ? h : VT_NS_PER_SEC;	/* none at all: 1 tick = 1 ns */
		if (align_clock_init(&s->clock, in[i].is_ns ? ALIGN_CLOCK_NS : kind, s->tsc_hz) < 0)
			return -1;
		s->clock.offset_tsc = offset_tsc;
		if (!h && !in[i].is_ns && p->unscaled < 0)
			p->unscaled = i;
	}
	return 0;
}
