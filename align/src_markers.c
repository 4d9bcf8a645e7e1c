/*
 * src_markers.c - the sync-marker alignment source, the one that proves an
 * error bound: the guest's marker records (markers.dat: an rdtsc bracket
 * around an action the host timestamps, docs/format/markers.md) and the
 * host's view of each action in its trace.dat - a kvm_pio / kvm_mmio write
 * or kvm_hypercall at an address the guest's records name, a one-byte
 * write syscall of QEMU's chardev (TCG), or an in-band hypercall that
 * carries the guest's readings itself.  Pairs are matched by
 * align/match.c and fitted by the estimator of align/model.c; this file
 * gathers both sides and hands the fit to the model.  Chosen before every
 * other source except a user-given offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "align/gather.h"
#include "err.h"
#include "marker.h"

#define SRC_PIO_OUT		1	/* kvm_pio rw of a write */
#define SRC_MMIO_WRITE		2	/* kvm_mmio type of a write */
#define SRC_MAX_ADDRS		16

static int est_markers(const struct seg_ctx *x, struct line *l)
{
	if (!x->markers)
		return 0;
	*l = *x->markers;
	return 1;
}

/* candidate chardev writes (TCG markers): one-byte writes per fd */
struct cwrite {
	uint64_t tsc_host;
	int fd;
	int32_t vcpu;		/* the writer's vCPU, -1: not a vCPU thread */
};

/* The addresses the guest's markers used, per kind: a host action counts as
 * a marker observation only at one of them (ports: plus the default port; a
 * --port replaces them all). */
struct addr_set {
	uint64_t a[SRC_MAX_ADDRS];
	int n;
};

/* One in-band hypercall's readings (the guest's TSC carried in its args). */
struct hc_reading {
	uint64_t ts;		/* host TSC of the kvm_hypercall event */
	uint64_t before;	/* the guest's TSC before this call */
	uint64_t prev_after;	/* the guest's TSC after the previous marker (0: none) */
	uint64_t seq;		/* marker seq; HC_SEQ_CLOSE for a closing call */
	uint32_t chain;		/* the emitter's chain (64-bit ABI), else 0 */
	uint32_t cpu;
	int32_t vcpu;
};
#define HC_SEQ_CLOSE	(~0ull)
struct hc_inband {
	struct hc_reading *a;
	size_t n, cap;
};

/* What the host pass keeps between the hooks. */
struct markers_state {
	struct addr_set ports, gpas, hcs;
	struct cwrite *cw;
	size_t ncw, cap_cw;
	struct hc_inband ib;
	size_t npio, nmmio, nhc;
	int want_fd;
};

static void addr_add(struct addr_set *set, uint64_t a)
{
	for (int i = 0; i < set->n; i++)
		if (set->a[i] == a)
			return;
	if (set->n < SRC_MAX_ADDRS)
		set->a[set->n++] = a;
}

static int addr_has(const struct addr_set *set, uint64_t a)
{
	for (int i = 0; i < set->n; i++)
		if (set->a[i] == a)
			return 1;
	return 0;
}

/* Pick the fd whose one-byte writes match the guest's chardev markers best
 * (or @want_fd) and append those writes as order-matched observations.
 * Writes of vCPU threads are preferred: QEMU writes a debugcon byte from
 * the vCPU thread that executed the out instruction. */
static int pick_chardev(struct align_samples *s, struct cwrite *w, size_t nw, int want_fd,
			size_t *cap)
{
	int fds[64], nfd = 0, best_fd = -1, tie_fd = -1, vcpu_only = 0;
	size_t best = 0, nchar = 0;
	struct align_host_marker *obs;

	for (size_t i = 0; i < s->in.n_guest_markers; i++)
		if (s->guest_markers[i].kind == VT_MARKER_CHARDEV)
			nchar++;
	if (!nchar || !nw)
		return 0;
	for (size_t i = 0; i < nw; i++)
		vcpu_only |= w[i].vcpu != ALIGN_VCPU_ANY;
	for (size_t i = 0; i < nw && nfd < (int)VT_ARRAY_SIZE(fds); i++) {
		int k;

		if (vcpu_only && w[i].vcpu == ALIGN_VCPU_ANY)
			continue;
		for (k = 0; k < nfd && fds[k] != w[i].fd; k++)
			;
		if (k == nfd)
			fds[nfd++] = w[i].fd;
	}
	obs = calloc(nw, sizeof(*obs));
	if (!obs)
		return vt_err_set("out of memory");
	for (int k = 0; k < nfd; k++) {
		struct align_marker_pair *p = NULL;
		size_t no = 0, np = 0, ug, uh;

		if (want_fd >= 0 && fds[k] != want_fd)
			continue;
		for (size_t i = 0; i < nw; i++)
			if (w[i].fd == fds[k] && (!vcpu_only || w[i].vcpu != ALIGN_VCPU_ANY))
				obs[no++] = (struct align_host_marker){ w[i].tsc_host, w[i].vcpu, 0, 0, 0 };
		if (align_markers_match(s->guest_markers, s->in.n_guest_markers, obs, no,
					&p, &np, &ug, &uh) < 0) {
			free(obs);
			return -1;
		}
		free(p);
		if (np > best) {
			best = np;
			best_fd = fds[k];
			tie_fd = -1;
		} else if (np == best) {
			/* a tie of at least 1: align/match.c's walk pairs the
			 * markers that scored its shift */
			tie_fd = fds[k];
		}
	}
	if (best_fd < 0) {
		align_gather_note(s, "host: no write() fd matches the guest's %zu chardev markers", nchar);
		free(obs);
		return 0;
	}
	align_gather_note(s, "host: chardev markers: one-byte writes to fd %d%s (%zu of %zu guest markers "
	     "match by order and time)", best_fd, vcpu_only ? " by vCPU threads" : "", best,
	     nchar);
	if (tie_fd >= 0)
		align_gather_note(s, "host: AMBIGUOUS: fd %d matches as well as fd %d: give --marker-fd",
		     tie_fd, best_fd);
	for (size_t i = 0; i < nw; i++) {
		struct align_host_marker h = { w[i].tsc_host, w[i].vcpu, 0, 0, 0 };

		if (w[i].fd != best_fd || (vcpu_only && w[i].vcpu == ALIGN_VCPU_ANY))
			continue;
		if (align_gather_push((void **)&s->host_markers, &s->in.n_host_markers, cap,
			      sizeof(h), &h)) {
			free(obs);
			return -1;
		}
	}
	free(obs);
	return 0;
}

static int hc_is_marker(uint64_t nr)
{
	return nr == VT_MARKER_HC_NR || nr == VT_MARKER_HC_CLOSE32 ||
	       (nr & ~(uint64_t)VT_MARKER_HC_SEQ32_MASK) == VT_MARKER_HC_NR32;
}

/* 64-bit ABI: a2 = seq (HC_SEQ_CLOSE closes); 32-bit: seq in nr's low bits */
static uint64_t hc_seq(const struct vt_td_event *ev, uint64_t nr)
{
	uint64_t a2 = 0;

	if (nr == VT_MARKER_HC_CLOSE32)
		return HC_SEQ_CLOSE;
	if (nr != VT_MARKER_HC_NR)
		return nr & VT_MARKER_HC_SEQ32_MASK;
	vt_td_field_u64(ev, "a2", &a2);
	return a2;
}

static int hc_is_close(const struct vt_td_event *ev, uint64_t nr)
{
	return hc_seq(ev, nr) == HC_SEQ_CLOSE;
}

static int hc_inband_add(struct hc_inband *ib, const struct vt_td_event *ev, uint64_t nr,
			 int32_t vcpu)
{
	struct hc_reading h = { .ts = ev->ts, .vcpu = vcpu, .cpu = VT_MARKER_CPU_NONE };
	uint64_t a1 = 0, a2 = 0, a3 = 0;

	vt_td_field_u64(ev, "a0", &h.before);
	vt_td_field_u64(ev, "a1", &a1);
	vt_td_field_u64(ev, "a2", &a2);
	vt_td_field_u64(ev, "a3", &a3);
	if (nr == VT_MARKER_HC_NR) {
		h.prev_after = a1;
		h.seq = a2;
		h.cpu = (uint32_t)a3;
		h.chain = (uint32_t)(a3 >> 32);
	} else {	/* 32-bit: values split over a0..a3, seq in nr */
		h.before = (h.before & 0xffffffffu) | (a1 << 32);
		h.prev_after = (a2 & 0xffffffffu) | (a3 << 32);
		h.seq = hc_seq(ev, nr);
	}
	return align_gather_push((void **)&ib->a, &ib->n, &ib->cap, sizeof(h), &h);
}

/*
 * Turn the in-band readings into guest marker records, unless the guest's
 * own markers.dat already holds hypercall markers (the same readings).
 * Per chain (an emitter: a guest process) in trace order: call i's
 * "before" and the chain's next call's "prev_after" bracket marker i,
 * whichever vCPUs they ran on.  A marker with no next call, a reading
 * out of order or a seq that does not follow is dropped (counted).
 */
static int hc_inband_markers(struct align_samples *s, struct hc_inband *ib, const char *path)
{
	size_t made = 0, dropped = 0, cap = s->in.n_guest_markers;

	if (!ib->n)
		return 0;
	for (size_t i = 0; i < s->in.n_guest_markers; i++)
		if (s->guest_markers[i].kind == VT_MARKER_HYPERCALL) {
			align_gather_note(s, "host: %s: %zu in-band hypercall readings; the guest's markers.dat "
			     "has the same markers", path, ib->n);
			return 0;
		}
	for (size_t i = 0; i < ib->n; i++) {
		const struct hc_reading *h = &ib->a[i], *nx = NULL;
		struct vt_marker m;

		if (h->seq == HC_SEQ_CLOSE)
			continue;
		for (size_t j = i + 1; j < ib->n; j++)
			if (ib->a[j].chain == h->chain) {
				nx = &ib->a[j];
				break;
			}
		if (!nx || !nx->prev_after || nx->prev_after < h->before ||
		    (nx->seq != HC_SEQ_CLOSE && (nx->seq & VT_MARKER_HC_SEQ32_MASK) !=
		     ((h->seq + 1) & VT_MARKER_HC_SEQ32_MASK))) {
			dropped++;
			continue;
		}
		vt_marker_fill(&m, VT_MARKER_HYPERCALL, sizeof(uint64_t), VT_MARKER_HC_NR,
			       VT_MARKER_VALUE(h->seq), h->seq);
		m.cpu = h->cpu;
		m.tsc_guest_before = h->before;
		m.tsc_guest_after = nx->prev_after;
		if (align_gather_push((void **)&s->guest_markers, &s->in.n_guest_markers, &cap,
			      sizeof(m), &m))
			return -1;
		made++;
	}
	align_gather_note(s, "host: %s: %zu in-band hypercall markers (the guest's readings carried in "
	     "kvm_hypercall)", path, made);
	if (dropped)
		vt_warn("%s: %zu in-band hypercall markers without a valid closing reading dropped",
			path, dropped);
	return 0;
}

/* Before the host's events: the addresses the guest's markers name; a
 * --port given by the user replaces the PIO ports (theirs and the default). */
static int markers_begin(struct align_gather *g)
{
	int user_port = g->o->marker_port >= 0;
	struct addr_set other = { .n = 0 };
	struct markers_state *st;
	int64_t mfd;

	if (g->host_ns)
		return 0;	/* a ns clock: no marker relates to it */
	st = calloc(1, sizeof(*st));
	if (!st)
		return vt_err_set("out of memory");
	g->state[ALIGN_SRC_MARKERS] = st;
	addr_add(&st->ports, user_port ? (uint64_t)g->o->marker_port : VT_MARKER_PORT);
	for (size_t i = 0; i < g->s->in.n_guest_markers; i++) {
		const struct vt_marker *m = &g->s->guest_markers[i];

		if (m->kind == VT_MARKER_PIO && !user_port)
			addr_add(&st->ports, m->addr);
		else if (m->kind == VT_MARKER_PIO && m->addr != st->ports.a[0])
			addr_add(&other, m->addr);
		else if (m->kind == VT_MARKER_MMIO)
			addr_add(&st->gpas, m->addr);
		else if (m->kind == VT_MARKER_HYPERCALL)
			addr_add(&st->hcs, m->addr);
	}
	if (other.n)
		align_gather_note(g->s, "host: --port 0x%x replaces the port%s the guest's PIO markers "
				  "name (0x%llx%s): only 0x%x is searched", g->o->marker_port,
				  other.n > 1 ? "s" : "", (unsigned long long)other.a[0],
				  other.n > 1 ? ", ..." : "", g->o->marker_port);
	st->want_fd = g->o->marker_fd;
	if (st->want_fd < 0 && g->m && !vt_meta_get_i64(g->m, VT_MK_MARKERS_CHARDEV_FD, &mfd))
		st->want_fd = (int)mfd;
	return 0;
}

static int push_obs(struct align_gather *g, const struct vt_td_event *ev, uint64_t value)
{
	struct align_host_marker h = { ev->ts, align_gather_tid_vcpu(g, ev->pid), (uint32_t)value,
				       1, ev->pid };

	return align_gather_push((void **)&g->s->host_markers, &g->s->in.n_host_markers,
				 &g->cap_hm, sizeof(h), &h);
}

/* A kvm_pio / kvm_mmio / kvm_hypercall of a vCPU thread, or a write syscall. */
static int markers_event(struct align_gather *g, const struct vt_td_event *ev, int kind)
{
	struct markers_state *st = g->state[ALIGN_SRC_MARKERS];
	uint64_t a, b, c, d;

	if (!st)
		return 0;
	switch (kind) {
	case ALIGN_EV_PIO:
		if (vt_td_field_u64(ev, "rw", &a) || vt_td_field_u64(ev, "port", &b) ||
		    vt_td_field_u64(ev, "val", &c))
			return 0;
		if (a != SRC_PIO_OUT || !addr_has(&st->ports, b))
			return 0;
		if (!vt_td_field_u64(ev, "count", &d) && d != 1)
			return 0;	/* rep outs: no single value */
		st->npio++;
		return push_obs(g, ev, c);
	case ALIGN_EV_MMIO:
		if (vt_td_field_u64(ev, "type", &a) || a != SRC_MMIO_WRITE ||
		    vt_td_field_u64(ev, "gpa", &b) || !addr_has(&st->gpas, b) ||
		    vt_td_field_u64(ev, "val", &c))
			return 0;
		st->nmmio++;
		return push_obs(g, ev, c);
	case ALIGN_EV_HYPERCALL:
		if (vt_td_field_u64(ev, "nr", &b) || vt_td_field_u64(ev, "a0", &c))
			return 0;
		if (hc_is_marker(b)) {
			if (hc_inband_add(&st->ib, ev, b, align_gather_tid_vcpu(g, ev->pid)))
				return -1;
			if (hc_is_close(ev, b))
				return 0;	/* carries a reading, no marker */
			c = VT_MARKER_VALUE(hc_seq(ev, b));
		} else if (!addr_has(&st->hcs, b)) {
			return 0;
		}
		st->nhc++;
		return push_obs(g, ev, c);
	case ALIGN_EV_WRITE: {
		struct cwrite w;

		if (vt_td_field_u64(ev, "fd", &a))
			return 0;
		if (!vt_td_field_u64(ev, "count", &b) && b != 1)
			return 0;
		w = (struct cwrite){ ev->ts, (int)a, align_gather_tid_vcpu(g, ev->pid) };
		return align_gather_push((void **)&st->cw, &st->ncw, &st->cap_cw, sizeof(w), &w);
	}
	}
	return 0;
}

/* After the host's events: what was seen; the chardev's writes and the
 * in-band readings become observations and markers. */
static int markers_end(struct align_gather *g, int ok)
{
	struct markers_state *st = g->state[ALIGN_SRC_MARKERS];
	struct align_samples *s = g->s;
	int ret = 0;

	if (!st)
		return 0;
	if (ok) {
		align_gather_note(s, "host: %s: %zu events (clock %s), %zu kvm_write_tsc_offset, "
				  "%zu kvm_pio writes to marker port 0x%llx%s, %zu one-byte write "
				  "syscalls", g->path, g->nev, *g->clock ? g->clock : "unknown",
				  s->in.n_offsets, st->npio, (unsigned long long)st->ports.a[0],
				  st->ports.n > 1 ? " (and the guest's ports)" : "", st->ncw);
		if (st->gpas.n || st->hcs.n)
			align_gather_note(s, "host: %zu kvm_mmio writes and %zu kvm_hypercall at the "
					  "guest's marker addresses", st->nmmio, st->nhc);
		if (g->nforeign)
			align_gather_note(s, "host: %zu kvm_write_tsc_offset/pio/mmio/hypercall events "
					  "of threads that are not this recording's %zu vCPU threads "
					  "(another VM's) ignored", g->nforeign, g->nvcpu_thr);
		ret = pick_chardev(s, st->cw, st->ncw, st->want_fd, &g->cap_hm) ||
		      hc_inband_markers(s, &st->ib, g->path) ? -1 : 0;
	}
	free(st->cw);
	free(st->ib.a);
	free(st);
	g->state[ALIGN_SRC_MARKERS] = NULL;
	return ret;
}

/* The guest's markers.dat in directory @dir. */
static int markers_guest_dir(struct align_gather *g, const char *dir)
{
	struct align_samples *s = g->s;
	char path[SRC_PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, VT_MARKER_FILE);
	if (access(path, F_OK)) {
		align_gather_note(s, "guest: %s: missing (no markers)", path);
		return 0;
	}
	if (vt_marker_read(path, &s->guest_markers, &s->in.n_guest_markers,
			   &s->n_bad_guest_markers) < 0)
		return -1;
	align_gather_note(s, "guest: %s: %zu markers%s", path, s->in.n_guest_markers,
			  s->n_bad_guest_markers ? " (some records rejected: corrupt or truncated)"
						 : "");
	return 0;
}

const struct align_source_def align_src_markers = {
	.id = ALIGN_SRC_MARKERS,
	.name = "markers",
	.rank = 1,
	.estimate = est_markers,
};

const struct align_source_io align_io_markers = {
	.id = ALIGN_SRC_MARKERS,
	.guest_dir = markers_guest_dir,
	.host_begin = markers_begin,
	.host_events = ALIGN_EV_BIT(ALIGN_EV_PIO) | ALIGN_EV_BIT(ALIGN_EV_MMIO) |
		       ALIGN_EV_BIT(ALIGN_EV_HYPERCALL) | ALIGN_EV_BIT(ALIGN_EV_WRITE),
	.host_event = markers_event,
	.host_end = markers_end,
};
