/*
 * vstate.c - vCPU and thread states for `vmtrace report` (merge/report/):
 * fed every merged event in time order after the chain analyser, it
 * follows per host vCPU thread its host state (guest mode, VM exit in the
 * kernel, VM exit in QEMU, preempted = runnable not running, blocked), per
 * thread (guest or host) its scheduling state (running, in an irq,
 * runnable, blocked) and the VM's I/O pipeline (queued, issued, kicked,
 * QEMU disk syscall, done, injected, guest irq), and integrates each
 * thread's time into the parts of report.h (crit.h says how).  Memory:
 * per vCPU, per thread and per open call, never per event.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "crit.h"

const char *const report_vstate_names[RV_NR] = {
	"guest mode", "exit in kernel", "exit in QEMU", "preempted", "blocked/halted", "unknown",
};
const char *const report_tstate_names[RT_NR] = {
	"running", "in irq", "runnable", "blocked", "unknown",
};

static void vcpu_cats(const struct crit *c, struct vcpu *v);

struct crit *crit_new(struct merge_tables *tb, int all_calls)
{
	struct crit *c = calloc(1, sizeof(*c));

	if (!c) {
		vt_err_set("report: out of memory");
		return NULL;
	}
	c->tables = tb;
	c->k_prev_pid = merge_str_intern0(c->tables, "prev_pid");
	c->k_prev_state = merge_str_intern0(c->tables, "prev_state");
	c->k_next_pid = merge_str_intern0(c->tables, "next_pid");
	c->k_pid = merge_str_intern0(c->tables, "pid");
	c->k_target_cpu = merge_str_intern0(c->tables, "target_cpu");
	c->k_next_comm = merge_str_intern0(c->tables, "next_comm");
	c->k_prev_comm = merge_str_intern0(c->tables, "prev_comm");
	c->k_comm = merge_str_intern0(c->tables, "comm");
	c->k_name = merge_str_intern0(c->tables, "name");
	c->k_dev = merge_str_intern0(c->tables, "dev");
	c->s_irq = merge_str_intern0(c->tables, "an irq");
	c->s_io_submit = merge_str_intern0(c->tables, "io_submit");
	c->s_uring_enter = merge_str_intern0(c->tables, "io_uring_enter");
	c->s_bio = merge_str_intern0(c->tables, "bio");
	c->k_sector = merge_str_intern0(c->tables, "sector");
	c->k_nr_sector = merge_str_intern0(c->tables, "nr_sector");
	c->v[0].tid = -1;
	c->nv = 1;
	vcpu_cats(c, &c->v[0]);
	c->all = all_calls;
	return c;
}

void crit_free(struct crit *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->th.n; i++)
		free(c->th.a[i].fr);
	free(c->th.a);
	free(c->cls);
	free(c->role);
	free(c->thr);
	free(c->host_open);
	free(c->vname);
	free(c->vout.a);
	free(c->tout.a);
	chain_hmap_free(&c->tmap);
	chain_hmap_free(&c->other);
	chain_hmap_free(&c->rq);
	chain_hmap_free(&c->bio);
	free(c);
}

static uint8_t classify(const char *s)
{
	static const struct { const char *name; uint8_t k; } t[] = {
		{ "sched_switch", K_SWITCH }, { "sched_wakeup", K_WAKEUP },
		{ "sched_waking", K_WAKEUP }, { "sched_wakeup_new", K_WAKEUP },
		{ "irq_handler_entry", K_IRQ_ENTRY }, { "softirq_entry", K_IRQ_ENTRY },
		{ "irq_handler_exit", K_IRQ_EXIT }, { "softirq_exit", K_IRQ_EXIT },
		{ "kvm_userspace_exit", K_USER_EXIT }, { "block_rq_insert", K_RQ_INSERT },
		{ "block_rq_issue", K_RQ_ISSUE }, { "block_rq_complete", K_RQ_COMPLETE },
		{ "kvm_pio", K_KICK }, { "kvm_mmio", K_KICK }, { "kvm_fast_mmio", K_KICK },
		{ "kvm_msi_set_irq", K_INJECT }, { "kvm_set_irq", K_INJECT },
		{ "kvm_inj_virq", K_INJECT }, { "block_bio_queue", K_BIO_QUEUE },
	};

	if (!strncmp(s, "sys_enter_", 10) || !strcmp(s, "sys_enter"))
		return K_SYS_ENTER;
	if (!strncmp(s, "sys_exit_", 9) || !strcmp(s, "sys_exit"))
		return K_SYS_EXIT;
	if (!strncmp(s, "exit: ", 6))
		return K_EXIT_SLICE;
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (!strcmp(s, t[i].name))
			return t[i].k;
	return crit_startup_class(s);
}

static int grow(void *arr, uint32_t *cap, uint32_t need, size_t elem)
{
	return merge_table_grow(arr, cap, need, elem) < 0 ? vt_err_set("report: out of memory") : 0;
}

/* ---- the VM's I/O pipeline and the parts of each view ------------------ */

/* The stage a thread blocked on the VM's I/O waits in now: the latest
 * stage any request in flight has reached (one request in flight: its).
 * A request kicked stays with QEMU until its completion: once the host
 * side of another one (its syscall, injection, guest irq) is over, the
 * wait is QEMU's again (throttling serves kicked requests one by one). */
static uint8_t dev_stage(const struct crit *c)
{
	if (!c->inflight && !c->queued)
		return RP_BLOCKED;
	if (c->hostio_open)
		return RP_HOST_IO;
	if (c->done)
		return c->have_inject ? RP_TO_INJECT : RP_DEVICE;
	if (c->injected)
		return RP_TO_IRQ;
	if (c->irq_done)
		return RP_IRQ_DONE;
	if (c->kicked)
		return RP_QEMU;
	if (c->unkicked && c->have_kick)
		return RP_DRIVER;
	if (c->inflight)
		return RP_DEVICE;
	return RP_QUEUE;
}

static uint8_t vstate_of(const struct vcpu *v)
{
	if (v->run == 2)
		return RV_PREEMPTED;
	if (v->run == 3)
		return RV_BLOCKED;
	if (v->mode == 2)
		return RV_EXIT_KERNEL;
	if (v->mode == 3)
		return RV_EXIT_QEMU;
	return v->run || v->mode ? RV_GUEST : RV_UNKNOWN;
}

/* Which part each view's time goes to, from the vCPU's host state and the
 * pipeline.  The host side of the device (QEMU, its disk syscall, the
 * completion before injection) comes first for a blocked thread: the
 * vCPU's preemption is then hidden behind it; everywhere else a preempted
 * vCPU stops the guest, so it comes first. */
static void vcpu_cats(const struct crit *c, struct vcpu *v)
{
	int pre = v->run == 2;
	uint8_t dev = dev_stage(c);

	v->seg++;
	v->cat[GV_RUN] = pre ? RP_PREEMPTED : v->mode == 2 ? RP_EXIT_KERNEL :
			 v->mode == 3 ? RP_EXIT_QEMU : RP_GUEST_CPU;
	v->cat[GV_IRQ] = pre ? RP_PREEMPTED : RP_IRQ;
	v->cat[GV_RUNNABLE] = pre ? RP_PREEMPTED : RP_RUNNABLE;
	v->cat[GV_BLOCKED] = dev == RP_QEMU || dev == RP_HOST_IO || dev == RP_TO_INJECT ? dev :
			     pre ? RP_PREEMPTED : dev;
	v->cat[GV_UNKNOWN] = pre ? RP_PREEMPTED : RP_UNKNOWN;
}

static void vcpu_settle(struct vcpu *v, uint64_t ts)
{
	if (ts <= v->since)
		return;
	uint64_t dt = ts - v->since;

	for (int g = 0; g < GV_NR; g++)
		v->ctr[g][v->cat[g]] += dt;
	v->st[vstate_of(v)] += dt;
	v->since = ts;
}

static struct vcpu *vcpu_get(struct crit *c, uint32_t idx, uint64_t ts)
{
	if (idx > CRIT_MAX_VCPUS)
		idx = 0;
	while (c->nv <= idx) {
		struct vcpu *v = &c->v[c->nv++];

		v->tid = -1;
		v->since = ts;
		vcpu_cats(c, v);
	}
	return &c->v[idx];
}

void crit_settle_vcpus(struct crit *c, uint64_t ts)
{
	for (uint32_t i = 0; i < c->nv; i++)
		vcpu_settle(&c->v[i], ts);
}

static void pipe_update(struct crit *c)
{
	for (uint32_t i = 0; i < c->nv; i++)
		vcpu_cats(c, &c->v[i]);
}

/* vCPU @v's run state is @run from @ts, its mode @mode (-1 unchanged). */
static void vcpu_set(struct crit *c, struct vcpu *v, uint64_t ts, int run, int mode)
{
	vcpu_settle(v, ts);
	v->run = (uint8_t)run;
	if (mode >= 0)
		v->mode = (uint8_t)mode;
	vcpu_cats(c, v);
}

static struct vcpu *vcpu_by_tid(struct crit *c, int32_t tid)
{
	for (uint32_t i = 1; i < c->nv; i++)
		if (c->v[i].tid == tid)
			return &c->v[i];
	return NULL;
}

/* Host thread @tid is vCPU @num (-1: the first number not taken) from @ts:
 * registered, its thread state so far taken over, its tracks' role set. */
static struct vcpu *vcpu_register(struct crit *c, int32_t tid, int num, uint64_t ts)
{
	if (num < 0 || num >= CRIT_MAX_VCPUS || (num + 1 < (int)c->nv && c->v[num + 1].tid >= 0 &&
						   c->v[num + 1].tid != tid)) {
		for (num = 0; num + 1 < (int)c->nv && c->v[num + 1].tid >= 0; num++)
			;
		if (num >= CRIT_MAX_VCPUS)
			return NULL;
	}
	struct vcpu *v = vcpu_get(c, (uint32_t)num + 1, ts);
	uint32_t *slot = chain_hmap_slot(&c->tmap, (uint32_t)tid, 0);

	if (v->tid < 0)
		c->nreal++;
	v->tid = tid;
	if (slot && *slot != UINT32_MAX) {
		/* scheduled before it was known as a vCPU: what the thread's
		 * events said is the vCPU's state */
		struct gthr *g = &c->th.a[*slot];
		static const uint8_t run_of[RT_NR] = { 1, 1, 2, 3, 0 };

		vcpu_set(c, v, ts, run_of[g->state], -1);
		g->is_vcpu = 1;
	}
	for (uint32_t t = 0; t < c->nrole; t++) {
		const struct merge_track *mt = merge_track(c->tables, t);

		if (c->role[t] && mt->machine == MERGE_MACHINE_HOST && mt->tid == tid && !mt->lane)
			c->role[t] = CR_VCPU;
	}
	return v;
}

/* New tracks since the last look: register host vCPU threads. */
static void scan_tracks(struct crit *c, uint64_t ts)
{
	uint32_t n = merge_track_count(c->tables);

	for (; c->tracks_seen < n; c->tracks_seen++) {
		const struct merge_track *mt = merge_track(c->tables, c->tracks_seen);

		if (mt->machine == MERGE_MACHINE_HOST && mt->vcpu && !mt->lane &&
		    mt->vcpu <= CRIT_MAX_VCPUS && !vcpu_by_tid(c, mt->tid))
			vcpu_register(c, mt->tid, (int)mt->vcpu - 1, ts);
	}
}

/* Whether host thread @tid, named like a vCPU, belongs to another process
 * than the traced QEMU: known only when the recording listed QEMU's threads
 * (another VM's "CPU 0/KVM" has the very name); a thread with no track yet
 * is not taken now (its own events give it one). */
static int other_process(struct crit *c, int32_t tid)
{
	uint32_t tr, *slot;

	if (!c->tables->qemu_tasks_known)
		return 0;
	if (chain_hmap_slot(&c->other, (uint32_t)tid, 0))
		return 1;
	tr = merge_track_find_tid(c->tables, MERGE_MACHINE_HOST, tid);
	if (tr == UINT32_MAX)
		return 1;
	if (merge_track(c->tables, tr)->qemu)
		return 0;
	slot = chain_hmap_slot(&c->other, (uint32_t)tid, 1);
	if (slot)
		*slot = 1;
	return 1;
}

/* A host thread merge does not know as a vCPU (its name when the recording
 * saw it first was QEMU's): the name a sched event gives it now ("CPU
 * 2/KVM", "CPU 0/TCG") says it is one, if it is the traced QEMU's thread
 * (other_process); NULL if not. */
static struct vcpu *vcpu_by_comm(struct crit *c, int32_t tid, uint32_t comm, uint64_t ts)
{
	if (comm == MERGE_NO_STR)
		return NULL;
	if (unlikely(comm >= c->nvname)) {
		uint32_t cap = c->nvname;

		if (grow(&c->vname, &cap, comm + 1, sizeof(*c->vname)) < 0)
			return NULL;
		c->nvname = cap;
	}
	if (!c->vname[comm]) {
		int n, end = 0;
		const char *s = merge_str(c->tables, comm);

		c->vname[comm] = -1;
		if (sscanf(s, "CPU %d/%*[A-Z]%n", &n, &end) == 1 && end && !s[end] &&
		    n >= 0 && n < CRIT_MAX_VCPUS)
			c->vname[comm] = (int16_t)(n + 1);
	}
	if (c->vname[comm] <= 0 || other_process(c, tid))
		return NULL;
	return vcpu_register(c, tid, c->vname[comm] - 1, ts);
}

/* ---- threads ----------------------------------------------------------- */

static uint8_t view_of(const struct gthr *g)
{
	switch (g->state) {
	case RT_RUNNING:
		return g->irq ? GV_IRQ : GV_RUN;
	case RT_RUNNABLE:
		return GV_RUNNABLE;
	case RT_BLOCKED:
		return GV_BLOCKED;
	default:
		return GV_UNKNOWN;
	}
}

/* Thread @g's view or vCPU changed at @ts: its snapshot of the vCPU's
 * counters of that view, as of @ts. */
static void thread_snap(struct crit *c, struct gthr *g, uint64_t ts)
{
	struct vcpu *v = &c->v[g->vcpu];

	vcpu_settle(v, ts);
	memcpy(g->snap, v->ctr[g->view], sizeof(g->snap));
	g->pre_snap = v->st[RV_PREEMPTED];
	g->seg = v->seg;
}

void crit_settle_thread(struct crit *c, struct gthr *g, uint64_t ts)
{
	struct vcpu *v = &c->v[g->vcpu];
	const uint64_t *ctr = v->ctr[g->view];

	if (likely(g->seg == v->seg)) {
		/* the fast path (most function events): nothing changed on
		 * the vCPU since the last settle, so all of the time went to
		 * the view's one part; the snapshot moves with it, as the
		 * vCPU's own counters will when settled */
		if (ts <= g->since)
			return;
		uint64_t dt = ts - g->since;
		uint8_t p = v->cat[g->view];

		g->acc[p] += dt;
		g->snap[p] += dt;
		if (p == RP_HOST_IO && c->hostio_name)
			g->host_sys = c->hostio_name;
		if (vstate_of(v) == RV_PREEMPTED) {
			g->pre += dt;
			g->pre_snap += dt;
		}
		g->st[g->state == RT_RUNNING && g->irq ? RT_IRQ : g->state] += dt;
		g->since = ts;
		return;
	}
	vcpu_settle(v, ts);
	g->seg = v->seg;
	if (ctr[RP_HOST_IO] != g->snap[RP_HOST_IO] && c->hostio_name)
		g->host_sys = c->hostio_name;
	for (int p = 0; p < RP_NR; p++)
		g->acc[p] += ctr[p] - g->snap[p];
	memcpy(g->snap, ctr, sizeof(g->snap));
	g->pre += v->st[RV_PREEMPTED] - g->pre_snap;
	g->pre_snap = v->st[RV_PREEMPTED];
	if (ts > g->since) {
		g->st[g->state == RT_RUNNING && g->irq ? RT_IRQ : g->state] += ts - g->since;
		g->since = ts;
	}
}

/* The vCPU index of a thread of @machine on guest CPU @cpu (-1 unknown). */
static uint32_t vcpu_idx(const struct crit *c, uint32_t machine, int64_t cpu)
{
	if (machine == MERGE_MACHINE_HOST && c->nreal)
		return 0;	/* a host thread: no vCPU */
	if (cpu >= 0 && cpu < CRIT_MAX_VCPUS)
		return (uint32_t)cpu + 1;
	if (c->nreal == 1)
		for (uint32_t i = 1; i < c->nv; i++)	/* (one of them is real) */
			if (c->v[i].tid >= 0)
				return i;
	return 0;
}

static struct gthr *thread_get(struct crit *c, uint32_t machine, int32_t tid, uint64_t ts)
{
	uint64_t key = (uint64_t)machine << 32 | (uint32_t)tid;
	uint32_t *slot = chain_hmap_slot(&c->tmap, key, 1);

	if (!slot) {
		c->oom = 1;
		return NULL;
	}
	if (*slot != UINT32_MAX)
		return &c->th.a[*slot];
	struct gthr *g = CHAIN_VEC_PUSH(c, c->th);

	if (!g)
		return NULL;
	*slot = (uint32_t)(c->th.n - 1);
	memset(g, 0, sizeof(*g));
	g->key = key;
	g->since = ts;
	g->state = RT_UNKNOWN;
	g->view = GV_UNKNOWN;
	g->vcpu = (uint32_t)(vcpu_get(c, vcpu_idx(c, machine, -1), ts) - c->v);
	vcpu_settle(&c->v[g->vcpu], ts);
	thread_snap(c, g, ts);
	return g;
}

/* Thread @g enters @state at @ts (on guest CPU @cpu, -1 unchanged). */
static void thread_set(struct crit *c, struct gthr *g, uint64_t ts, int state, int64_t cpu)
{
	crit_settle_thread(c, g, ts);
	g->state = (uint8_t)state;
	if (cpu >= 0) {
		uint32_t idx = vcpu_idx(c, (uint32_t)(g->key >> 32), cpu);
		struct vcpu *v = vcpu_get(c, idx, ts);

		vcpu_settle(v, ts);
		g->vcpu = (uint32_t)(v - c->v);
		g->cpu_known = 1;
	}
	g->view = view_of(g);
	thread_snap(c, g, ts);
}

static struct gthr *thread_of_track(struct crit *c, uint32_t track, uint64_t ts)
{
	if (c->thr[track])
		return &c->th.a[c->thr[track] - 1];
	const struct merge_track *mt = merge_track(c->tables, track);
	struct gthr *g = thread_get(c, mt->machine, mt->tid, ts);

	if (g)
		c->thr[track] = (uint32_t)(g - c->th.a) + 1;
	return g;
}

static uint8_t role_of(struct crit *c, uint32_t track)
{
	if (unlikely(track >= c->nrole)) {
		uint32_t cap = c->nrole;

		if (grow(&c->role, &cap, track + 1, 1) < 0)
			return CR_UNKNOWN;
		cap = c->nrole;
		if (grow(&c->thr, &cap, track + 1, sizeof(*c->thr)) < 0)
			return CR_UNKNOWN;
		cap = c->nrole;
		if (grow(&c->host_open, &cap, track + 1, sizeof(*c->host_open)) < 0)
			return CR_UNKNOWN;
		c->nrole = cap;
	}
	if (likely(c->role[track]))
		return c->role[track];
	const struct merge_track *mt = merge_track(c->tables, track);

	/* a vCPU by merge's tracks, or by the name a sched event gave its
	 * thread before this track was seen (vcpu_by_comm) */
	if (mt->machine == MERGE_MACHINE_HOST && !mt->lane && (mt->vcpu || vcpu_by_tid(c, mt->tid)))
		c->role[track] = CR_VCPU;
	else if (mt->machine == MERGE_MACHINE_HOST && mt->qemu)
		c->role[track] = CR_QEMU;
	else
		c->role[track] = CR_THREAD;
	return c->role[track];
}

/* ---- events ------------------------------------------------------------ */

static int on_switch(struct crit *c, const struct merge_event *ev, uint32_t machine)
{
	uint64_t prev = 0, state = 0, next = 0, ts = ev->ts_ns;
	struct vcpu *vp = NULL, *vn = NULL;

	if (arg_u64(ev, c->k_prev_pid, &prev) < 0 || arg_u64(ev, c->k_next_pid, &next) < 0)
		return 0;
	arg_u64(ev, c->k_prev_state, &state);
	/* prev_state: 0 = TASK_RUNNING (preempted, "R"); 0x100 and up,
	 * low byte 0, is "R+" (TASK_REPORT_MAX: preempted) */
	int runnable = (state & 0xff) == 0;

	if (machine == MERGE_MACHINE_HOST) {
		vp = prev ? vcpu_by_tid(c, (int32_t)prev) : NULL;
		vn = next ? vcpu_by_tid(c, (int32_t)next) : NULL;
		if (prev && !vp)
			vp = vcpu_by_comm(c, (int32_t)prev, arg_str(ev, c->k_prev_comm), ts);
		if (next && !vn)
			vn = vcpu_by_comm(c, (int32_t)next, arg_str(ev, c->k_next_comm), ts);
		if (vp)
			vcpu_set(c, vp, ts, runnable ? 2 : 3, -1);
		if (vn)
			vcpu_set(c, vn, ts, 1, -1);
	}
	if (prev && !vp) {
		struct gthr *g = thread_get(c, machine, (int32_t)prev, ts);

		if (!g)
			return vt_err_set("report: out of memory");
		thread_set(c, g, ts, runnable ? RT_RUNNABLE : RT_BLOCKED, -1);
	}
	if (next && !vn) {
		struct gthr *g = thread_get(c, machine, (int32_t)next, ts);

		if (!g)
			return vt_err_set("report: out of memory");
		g->irq = 0;
		if (!g->name)
			g->name = arg_str(ev, c->k_next_comm);
		thread_set(c, g, ts, RT_RUNNING, ev->cpu);
	}
	return 0;
}

static int on_wakeup(struct crit *c, const struct merge_event *ev, uint32_t machine)
{
	uint64_t pid = 0, cpu = (uint64_t)-1;

	if (arg_u64(ev, c->k_pid, &pid) < 0 || !pid)
		return 0;
	arg_u64(ev, c->k_target_cpu, &cpu);
	if (machine == MERGE_MACHINE_HOST) {
		struct vcpu *v = vcpu_by_tid(c, (int32_t)pid);

		if (!v)
			v = vcpu_by_comm(c, (int32_t)pid, arg_str(ev, c->k_comm), ev->ts_ns);
		if (v) {
			if (v->run != 1)
				vcpu_set(c, v, ev->ts_ns, 2, -1);
			return 0;
		}
	}
	/* who woke it: the link from a wait to the thread that ended it (an
	 * fsync to jbd2, a read to the irq that completed it); an event in
	 * an irq handler sits on the thread it interrupted */
	const struct merge_track *wt = merge_track(c->tables, ev->track);
	uint32_t waker = c->s_irq;

	if (wt->tid) {
		struct gthr *w = thread_get(c, machine, wt->tid, ev->ts_ns);

		if (!w)
			return vt_err_set("report: out of memory");
		if (!w->irq)
			waker = wt->name;
	}
	struct gthr *g = thread_get(c, machine, (int32_t)pid, ev->ts_ns);

	if (!g)
		return vt_err_set("report: out of memory");
	if (g->state == RT_BLOCKED || g->state == RT_UNKNOWN) {
		g->waker = waker;
		g->nwake++;
		thread_set(c, g, ev->ts_ns, RT_RUNNABLE, (int64_t)(int32_t)cpu);
	}
	return 0;
}

/* A block event: the requests in flight, keyed by (dev, sector) so that a
 * completion counts only for a request issued (the kernel completes some
 * twice: a flush sequence's parts); a flush (issued at sector 0 with no
 * length) completes at sector 2^64-1. */
static void on_rq(struct crit *c, const struct merge_event *ev, uint8_t k)
{
	uint64_t dev = 0, sector = 0, nr = 1, ts = ev->ts_ns;

	arg_u64(ev, c->k_dev, &dev);
	arg_u64(ev, c->k_sector, &sector);
	arg_u64(ev, c->k_nr_sector, &nr);
	if (!nr && k == K_RQ_INSERT)
		return;		/* a flush is not queued */
	crit_settle_vcpus(c, ts);
	if (!nr && (k == K_RQ_ISSUE || sector == UINT64_MAX)) {
		/* per machine: the host's own flushes (its block events are
		 * recorded for QEMU's bios) complete none of a guest's */
		uint32_t *f = chain_hmap_slot(&c->rq, chain_mix(UINT64_MAX) ^
					      ((uint64_t)merge_track(c->tables, ev->track)->machine << 1),
					      k == K_RQ_ISSUE);

		if (!f) {
			c->oom = k == K_RQ_ISSUE;
		} else if (k == K_RQ_ISSUE) {
			*f = *f == UINT32_MAX ? 1 : *f + 1;
			c->flushes++;
			c->inflight++;
			c->unkicked++;
		} else if (c->flushes && *f && *f != UINT32_MAX) {
			(*f)--;
			c->flushes--;
			c->inflight--;
			if (c->kicked)
				c->kicked--;
		}
	} else if (k != K_RQ_COMPLETE || nr) {
		uint64_t m = merge_track(c->tables, ev->track)->machine;
		uint32_t *v = chain_hmap_slot(&c->rq, chain_mix(sector) ^ (dev << 1 | 1) ^ m << 48,
					      k != K_RQ_COMPLETE);

		if (!v) {
			c->oom = k != K_RQ_COMPLETE;
		} else {
			if (*v == UINT32_MAX)
				*v = 0;
			if (k == K_RQ_INSERT && (*v >> 16) < 0xffff) {
				*v += 1u << 16;
				c->queued++;
			} else if (k == K_RQ_ISSUE) {
				if (*v >> 16) {
					*v -= 1u << 16;
					if (c->queued)
						c->queued--;
				}
				if ((*v & 0xffff) < 0xffff) {
					(*v)++;
					c->inflight++;
					c->unkicked++;
				}
			} else if (k == K_RQ_COMPLETE && (*v & 0xffff)) {
				(*v)--;
				c->inflight--;
				if (c->kicked)
					c->kicked--;
			}
		}
	}
	if (k == K_RQ_COMPLETE && !c->inflight) {
		c->unkicked = 0;
		c->kicked = c->done = c->injected = 0;
	}
	pipe_update(c);
}

/* A pipeline event: settle, apply @fn's change, re-derive the parts. */
#define PIPE(c, ts, stmt) do { crit_settle_vcpus(c, ts); stmt; pipe_update(c); } while (0)

static void on_pipe(struct crit *c, const struct merge_event *ev, uint8_t k)
{
	uint64_t ts = ev->ts_ns;

	switch (k) {	/* the kinds on_instant passes */
	case K_RQ_INSERT:
	case K_RQ_ISSUE:
	case K_RQ_COMPLETE:
		on_rq(c, ev, k);
		break;
	case K_KICK:	/* one that can be a notify (on_instant) */
		c->have_kick = 1;
		if (c->unkicked)
			PIPE(c, ts, { c->kicked += c->unkicked; c->unkicked = 0; });
		break;
	case K_INJECT:
		c->have_inject = 1;
		if (c->done)
			PIPE(c, ts, { c->done = 0; c->injected = 1; });
		break;
	case K_IRQ_ENTRY:
		/* (a guest thread's: on_instant) with injections recorded, the
		 * disk's handler is the one after its completion's injection
		 * (another virtio device's irq, the console's or a serial
		 * port's, is not the disk's stage) */
		if (c->inflight &&
		    (c->injected || c->done || !c->have_inject)) {
			uint32_t nm = arg_str(ev, c->k_name);

			if (nm == MERGE_NO_STR || strstr(merge_str(c->tables, nm), "virtio"))
				PIPE(c, ts, { c->done = c->injected = 0; c->irq_done = 1; });
		}
		break;
	case K_IRQ_EXIT:
		if (c->irq_done)
			PIPE(c, ts, c->irq_done = 0);
		break;
	}
}

/* A QEMU disk syscall or bio ended: with none left open and requests in
 * flight, the host is done (until the injection). */
static void hostio_close(struct crit *c)
{
	if (c->hostio_open && !--c->hostio_open && c->inflight)
		c->done = 1;
}

/* A bio QEMU queued on the host where no syscall carries its I/O (in
 * io_submit or io_uring_enter, or an io_uring worker: aio=native and
 * io_uring on a block device), @done 0, and the host's block_rq_complete
 * at its start sector, @done 1: the host disk works from one to the other
 * (a completion of part of a bio ends it). */
static void on_bio(struct crit *c, const struct merge_event *ev, int done)
{
	uint64_t dev = 0, sector = 0, nr = 0;
	uint32_t open = c->host_open[ev->track];
	uint32_t *v;

	arg_u64(ev, c->k_dev, &dev);
	arg_u64(ev, c->k_sector, &sector);
	arg_u64(ev, c->k_nr_sector, &nr);
	if (!nr || (!done && open && open != c->s_io_submit && open != c->s_uring_enter))
		return;
	v = chain_hmap_slot(&c->bio, chain_mix(sector) ^ dev, !done);
	if (!v) {
		c->oom = !done;
		return;
	}
	if (!done) {
		*v = *v == UINT32_MAX ? 1 : *v + 1;
		PIPE(c, ev->ts_ns, { c->hostio_open++; c->hostio_name = open ? open : c->s_bio; });
	} else if (*v && *v != UINT32_MAX) {
		(*v)--;
		PIPE(c, ev->ts_ns, hostio_close(c));
	}
}

static int on_instant(struct report *r, struct crit *c, const struct merge_event *ev,
		      uint8_t k, uint8_t role)
{
	const struct merge_track *mt = merge_track(c->tables, ev->track);
	struct gthr *g;
	struct vcpu *v;
	uint64_t addr;

	switch (k) {
	case K_SWITCH:
		return on_switch(c, ev, mt->machine);
	case K_WAKEUP:
		return on_wakeup(c, ev, mt->machine);
	case K_USER_EXIT:
		if (role == CR_VCPU && (v = vcpu_by_tid(c, mt->tid)))
			vcpu_set(c, v, ev->ts_ns, 1, 3);
		return 0;
	case K_SYS_ENTER:
		if (role == CR_QEMU && r->sysio[ev->name]) {
			c->host_open[ev->track] = r->sysname[ev->name];
			PIPE(c, ev->ts_ns, { c->hostio_open++;
					     c->hostio_name = r->sysname[ev->name]; });
		} else if (role == CR_THREAD && (g = thread_of_track(c, ev->track, ev->ts_ns))) {
			crit_sys_enter(c, g, ev->ts_ns, r->sysname[ev->name]);
		}
		return c->oom ? vt_err_set("report: out of memory") : 0;
	case K_SYS_EXIT:
		if (role == CR_QEMU && c->host_open[ev->track]) {
			c->host_open[ev->track] = 0;
			PIPE(c, ev->ts_ns, hostio_close(c));
		} else if (role == CR_THREAD && (g = thread_of_track(c, ev->track, ev->ts_ns))) {
			crit_sys_exit(c, g, ev->ts_ns);
		}
		return c->oom ? vt_err_set("report: out of memory") : 0;
	case K_IRQ_ENTRY:
	case K_IRQ_EXIT:
		if (role != CR_THREAD)
			return 0;
		on_pipe(c, ev, k);
		if (!mt->tid || !(g = thread_of_track(c, ev->track, ev->ts_ns)))
			return c->oom ? vt_err_set("report: out of memory") : 0;
		crit_settle_thread(c, g, ev->ts_ns);
		if (k == K_IRQ_ENTRY)
			g->irq++;
		else if (g->irq)
			g->irq--;
		g->view = view_of(g);
		thread_snap(c, g, ev->ts_ns);
		return 0;
	case K_BIO_QUEUE:
		if (role == CR_QEMU)
			on_bio(c, ev, 0);
		return c->oom ? vt_err_set("report: out of memory") : 0;
	case K_RQ_COMPLETE:
		if (c->bio.n && mt->machine == MERGE_MACHINE_HOST)
			on_bio(c, ev, 1);
		/* fall through */
	case K_RQ_INSERT:
	case K_RQ_ISSUE:
		if (role == CR_THREAD)
			on_pipe(c, ev, k);
		return 0;
	case K_KICK:
		if (role != CR_THREAD && chain_kick_addr(r, ev, &addr))
			on_pipe(c, ev, k);
		return 0;
	case K_INJECT:
		if (role != CR_THREAD)
			on_pipe(c, ev, k);
		return 0;
	default:
		return 0;
	}
}

int crit_feed(struct report *r, const struct merge_event *ev)
{
	struct crit *c = r->crit;
	uint8_t k = K_NONE;

	if (unlikely(!c) && !(c = r->crit = crit_new(r->tables, r->all_calls)))
		return -1;
	if (ev->kind == MERGE_EV_COUNTER)
		return 0;
	if (ev->kind != MERGE_EV_END) {
		if (unlikely(ev->name >= c->ncls) &&
		    grow(&c->cls, &c->ncls, ev->name + 1, 1) < 0)
			return -1;
		k = c->cls[ev->name];
		if (unlikely(k == K_UNKNOWN))
			k = c->cls[ev->name] = classify(merge_str(c->tables, ev->name));
		if (ev->kind == MERGE_EV_INSTANT && (k == K_NONE || k >= K_FN_STARTUP))
			return 0;
	}
	c->last_ts = ev->ts_ns;
	if (unlikely(merge_track_count(c->tables) != c->tracks_seen))
		scan_tracks(c, ev->ts_ns);
	uint8_t role = role_of(c, ev->track);

	if (unlikely(role == CR_UNKNOWN))
		return -1;
	if (unlikely(k == K_EXIT_SLICE) && role != CR_VCPU && ev->kind == MERGE_EV_BEGIN &&
	    merge_track(c->tables, ev->track)->machine == MERGE_MACHINE_HOST) {
		/* a thread in kvm_exit is a vCPU thread, whatever its name */
		if (vcpu_register(c, merge_track(c->tables, ev->track)->tid, -1, ev->ts_ns))
			role = c->role[ev->track];
	}
	if (role == CR_VCPU && (ev->kind != MERGE_EV_INSTANT || k == K_KICK || k == K_INJECT ||
				k == K_USER_EXIT))
		c->have_kick = c->have_inject = 1;	/* a KVM recording */
	if (role == CR_VCPU && k != K_SWITCH) {
		struct vcpu *v = vcpu_by_tid(c, merge_track(c->tables, ev->track)->tid);

		/* an event of the vCPU thread: it runs; kvm_exit opens an
		 * exit slice, kvm_entry (its end) enters guest mode */
		if (v && (v->run != 1 || ev->kind != MERGE_EV_INSTANT))
			vcpu_set(c, v, ev->ts_ns, 1, ev->kind == MERGE_EV_BEGIN &&
				 k == K_EXIT_SLICE ? 2 : ev->kind == MERGE_EV_END ? 1 : -1);
	}
	if (ev->kind == MERGE_EV_INSTANT)
		return on_instant(r, c, ev, k, role);
	if (role != CR_THREAD)
		return 0;
	struct gthr *g = thread_of_track(c, ev->track, ev->ts_ns);

	if (!g)
		return vt_err_set("report: out of memory");
	if (ev->kind == MERGE_EV_BEGIN)
		return crit_frame_begin(c, g, ev);
	crit_frame_end(c, g, ev->ts_ns);
	return 0;
}
