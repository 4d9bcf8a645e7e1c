/*
 * critpath.c - the critical path of `vmtrace report` (merge/report/): per
 * Python/C function call and per guest syscall, its time split into the
 * disjoint parts of report.h from the thread's integrated states
 * (vstate.c); the slowest calls of each kind are kept (a bounded heap: no
 * memory per call), for the headline of the text and HTML outputs.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "crit.h"
#include "grow.h"

const char *const report_part_names[RP_NR] = {
	"guest CPU", "VM exits (host kernel)", "VM exits (QEMU)", "vCPU preempted",
	"guest irq", "guest runnable", "guest block queue", "guest driver to kick",
	"QEMU before host syscall", "host disk", "host done to injection",
	"injection to guest irq", "guest irq to completion", "device (stage not recorded)",
	"blocked, no I/O in flight", "unknown (no scheduling events of the thread)",
};
const char *const report_part_ids[RP_NR] = {
	"guest_cpu", "exit_kernel", "exit_qemu", "vcpu_preempted", "guest_irq",
	"guest_runnable", "guest_queue", "guest_driver", "qemu_before_host_io", "host_io",
	"host_done_to_inject", "inject_to_guest_irq", "guest_irq_to_complete", "device_other",
	"blocked_other", "unknown",
};

/* Interpreter start-up and the tracer's own frames: not in the headline
 * unless --all-calls.  Frames under an import are start-up too. */
static const char *const startup_prefix[] = {
	"builtins.exec", "import ", "runpy.", "importlib.", "<frozen", "vmtrace.",
	"__main__.<module>", NULL,
};
/* ... of them, those whose own C calls are start-up (runpy compiling the
 * main script: builtins.compile); not the main module's body, whose C
 * calls are the program's */
static const char *const loader_prefix[] = { "runpy.", "<frozen", "vmtrace.", NULL };

static int starts(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strncmp(s, list[i], strlen(list[i])))
			return 1;
	return 0;
}

#define SKIP_SELF	1	/* this frame is start-up */
#define SKIP_BELOW	2	/* and so is everything it calls (imports) */
#define SKIP_CALLS	4	/* and so are the C functions it calls */

uint8_t crit_startup_class(const char *nm)
{
	if (!strncmp(nm, "importlib.", 10) || !strncmp(nm, "import ", 7))
		return K_FN_IMPORT;
	if (starts(nm, loader_prefix))
		return K_FN_LOADER;
	if (starts(nm, startup_prefix))
		return K_FN_STARTUP;
	/* a Python function's label carries its location: "m.f (file:line)" */
	return strstr(nm, " (") ? K_NONE : K_FN_CCALL;
}

int crit_frame_begin(struct crit *c, struct gthr *g, const struct merge_event *ev)
{
	if (g->nfr == g->capfr) {
		uint32_t nc = g->capfr ? g->capfr * 2 : 16;
		struct cframe *n = realloc(g->fr, nc * sizeof(*n));

		if (!n)
			return vt_err_set("report: out of memory");
		g->fr = n;
		g->capfr = nc;
	}
	crit_settle_thread(c, g, ev->ts_ns);
	uint8_t up = g->nfr ? g->fr[g->nfr - 1].skip : 0;
	struct cframe *f = &g->fr[g->nfr++];
	uint8_t k = c->cls[ev->name];	/* classified by crit_feed */

	f->ts = ev->ts_ns;
	f->child = 0;
	memcpy(f->snap, g->acc, sizeof(f->snap));
	f->pre = g->pre;
	f->nwake = g->nwake;
	f->name = ev->name;
	f->skip = up & SKIP_BELOW ? SKIP_SELF | SKIP_BELOW : 0;
	if (k == K_FN_STARTUP || (k == K_FN_CCALL && (up & SKIP_CALLS)))
		f->skip |= SKIP_SELF;
	else if (k == K_FN_LOADER)
		f->skip |= SKIP_SELF | SKIP_CALLS;
	else if (k == K_FN_IMPORT)
		f->skip |= SKIP_SELF | SKIP_BELOW;
	g->has_frames = 1;
	return 0;
}

static void heap_push(struct crit *c, int kind, const struct report_call *x)
{
	struct report_call *h = c->calls[kind];
	size_t n = c->ncalls[kind], i;

	if (n == CRIT_KEEP) {
		if (x->dur <= h[0].dur)
			return;
		/* replace the root (the shortest kept), sift down */
		i = 0;
		for (;;) {
			size_t l = 2 * i + 1, m = i;

			if (l < n && h[l].dur < x->dur)
				m = l;
			if (l + 1 < n && h[l + 1].dur < (m == i ? x->dur : h[m].dur))
				m = l + 1;
			if (m == i)
				break;
			h[i] = h[m];
			i = m;
		}
		h[i] = *x;
		return;
	}
	for (i = n++; i && h[(i - 1) / 2].dur > x->dur; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = *x;
	c->ncalls[kind] = n;
}

/* The parts of a call open since snapshot @f, ending at @ts (settled). */
static void close_call(struct crit *c, struct gthr *g, const struct cframe *f, uint64_t ts,
		       int kind)
{
	struct report_call x;
	uint64_t sum = 0;

	memset(&x, 0, sizeof(x));
	x.begin = f->ts;
	x.dur = ts - f->ts;
	for (int p = 0; p < RP_NR; p++) {
		x.part[p] = g->acc[p] - f->snap[p];
		sum += x.part[p];
	}
	if (sum != x.dur) {
		/* the parts are integrated from the same clock as the call:
		 * a difference is a bug of the state tracker */
		vt_warn("report: internal: the parts of %s at %llu ns sum to %llu, not %llu",
			merge_str(c->tables, f->name), (unsigned long long)f->ts,
			(unsigned long long)sum, (unsigned long long)x.dur);
	}
	x.preempt_overlap = g->pre - f->pre;
	x.name = f->name;
	x.host_sys = x.part[RP_HOST_IO] ? g->host_sys : 0;
	x.waker = g->nwake != f->nwake ? g->waker : 0;
	x.machine = (uint32_t)(g->key >> 32);
	x.tid = (int32_t)(uint32_t)g->key;
	heap_push(c, kind, &x);
}

void crit_frame_end(struct crit *c, struct gthr *g, uint64_t ts)
{
	if (!g->nfr)
		return;
	crit_settle_thread(c, g, ts);
	struct cframe *f = &g->fr[--g->nfr];
	uint64_t dur = ts - f->ts;

	if (g->nfr)
		g->fr[g->nfr - 1].child += dur;
	/* the headline lists calls whose own time (outside traced callees)
	 * is at least half of theirs: posix.fsync, not main() around it */
	if ((c->all || !(f->skip & SKIP_SELF)) && dur && (dur - f->child) * 2 >= dur)
		close_call(c, g, f, ts, 0);
}

void crit_sys_enter(struct crit *c, struct gthr *g, uint64_t ts, uint32_t name)
{
	crit_settle_thread(c, g, ts);
	g->sys.ts = ts;
	g->sys.name = name;
	memcpy(g->sys.snap, g->acc, sizeof(g->sys.snap));
	g->sys.pre = g->pre;
	g->sys.nwake = g->nwake;
}

void crit_sys_exit(struct crit *c, struct gthr *g, uint64_t ts)
{
	if (!g->sys.ts)
		return;
	crit_settle_thread(c, g, ts);
	/* syscalls of the traced program's threads (helpers have no calls) */
	if ((c->all || g->has_frames) && ts > g->sys.ts)
		close_call(c, g, &g->sys, ts, 1);
	g->sys.ts = 0;
}

static int cmp_call(const void *a, const void *b)
{
	const struct report_call *x = a, *y = b;

	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct report_thread *x = a, *y = b;

	if (x->ns[RT_RUNNING] != y->ns[RT_RUNNING])
		return x->ns[RT_RUNNING] > y->ns[RT_RUNNING] ? -1 : 1;
	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int crit_finish(struct report *r)
{
	struct crit *c = r->crit;

	if (!c && !(c = r->crit = crit_new(r->tables, r->all_calls)))
		return -1;
	if (c->oom)
		return vt_err_set("report: out of memory");
	for (size_t i = 0; i < c->th.n; i++) {
		struct gthr *g = &c->th.a[i];

		crit_settle_thread(c, g, c->last_ts);
		if (g->is_vcpu || g->st[RT_RUNNING] + g->st[RT_IRQ] + g->st[RT_RUNNABLE] + g->st[RT_BLOCKED] == 0)
			continue;
		struct report_thread *o = CHAIN_VEC_PUSH(c, c->tout);

		if (!o)
			return vt_err_set("report: out of memory");
		o->machine = (uint32_t)(g->key >> 32);
		o->tid = (int32_t)(uint32_t)g->key;
		o->name = g->name;
		memcpy(o->ns, g->st, sizeof(o->ns));
	}
	crit_settle_vcpus(c, c->last_ts);
	for (uint32_t i = 1; i < c->nv; i++) {
		const struct vcpu *v = &c->v[i];

		if (v->tid < 0)
			continue;
		struct report_vcpu *o = CHAIN_VEC_PUSH(c, c->vout);

		if (!o)
			return vt_err_set("report: out of memory");
		o->vcpu = (int32_t)i - 1;
		o->tid = v->tid;
		memcpy(o->ns, v->st, sizeof(o->ns));
		if (!r->have_exit_slices) {
			/* no kvm_entry/kvm_exit: on a CPU, guest mode or an
			 * exit, nothing tells which */
			o->ns[RV_UNKNOWN] += o->ns[RV_GUEST];
			o->ns[RV_GUEST] = 0;
		}
	}
	if (c->tout.n)
		vt_sort(c->tout.a, c->tout.n, sizeof(*c->tout.a), cmp_thread);
	/* names of the first threads listed, from their tracks if the
	 * scheduling events did not give one (once each: a linear search) */
	for (size_t i = 0; i < c->tout.n && i < CRIT_KEEP; i++) {
		struct report_thread *o = &c->tout.a[i];
		uint32_t tr = o->name ? UINT32_MAX :
			      merge_track_find_tid(c->tables, o->machine, o->tid);

		if (tr != UINT32_MAX)
			o->name = merge_track(c->tables, tr)->name;
	}
	for (int k = 0; k < 2; k++)
		vt_sort(c->calls[k], c->ncalls[k], sizeof(*c->calls[k]), cmp_call);
	return 0;
}

size_t report_nr_calls(const struct report *r, int sys)
{
	return r->crit ? r->crit->ncalls[!!sys] : 0;
}

const struct report_call *report_call_at(const struct report *r, int sys, size_t i)
{
	return &r->crit->calls[!!sys][i];
}

size_t report_nr_vcpus(const struct report *r)
{
	return r->crit ? r->crit->vout.n : 0;
}

const struct report_vcpu *report_vcpu_at(const struct report *r, size_t i)
{
	return &r->crit->vout.a[i];
}

size_t report_nr_threads(const struct report *r)
{
	return r->crit ? r->crit->tout.n : 0;
}

const struct report_thread *report_thread_at(const struct report *r, size_t i)
{
	return &r->crit->tout.a[i];
}
