/*
 * sources.c - the gathering layer of the aligner: reads a HOST directory
 * (trace.dat through lib/tracedat.h, vmtrace.meta) and a GUEST directory
 * (markers.dat, vmtrace.meta, trace.dat) into the samples
 * align_model_build() takes.  Either may also be a trace.dat file alone: a
 * trace-cmd host-guest recording is trace.dat + trace-GUEST.dat, whose
 * TIME_SHIFT (align/src_tsync.c), GUEST and TSC2NSEC options stand in for
 * the meta.
 * Tools only (align, merge): blocking I/O, allocates.  Guest files are
 * untrusted: lib/marker.c bounds them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "align/align.h"
#include "align/internal.h"
#include "err.h"
#include "meta.h"
#include "tracedat.h"

#define SRC_PATH_MAX		4096
#define SRC_KEY_MAX		VT_META_KEY_MAX
#define SRC_MAX_VMS		64
#define SRC_MAX_VCPUS		1024
#define SRC_MAX_SERIES		100000	/* debugfs readings per vCPU */
#define SRC_MAX_THREADS		4096
#define SRC_LATE_MAX		64	/* vCPUs note_late_start() speaks of */
#define SRC_FRAC_INTEL		48
#define SRC_FRAC_AMD		32
#define SRC_FRAC_GUESS_MIN	40	/* ratio >= 2^40: 48 fraction bits */
#define SRC_NOTES_MAX		8192
#define SRC_PIO_OUT		1	/* kvm_pio rw of a write */
#define SRC_MMIO_WRITE		2	/* kvm_mmio type of a write */

struct tidmap {
	int tid;
	int vcpu;
	uint64_t last_exit;	/* host TSC of its last kvm_exit, 0: none */
	uint64_t entry;		/* its kvm_entry not yet closed by an exit, 0: none */
};

static int grow_push(void **p, size_t *n, size_t *cap, size_t size, const void *item)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		void *np = realloc(*p, nc * size);

		if (!np)
			return vt_err_set("out of memory");
		*p = np;
		*cap = nc;
	}
	memcpy((char *)*p + *n * size, item, size);
	(*n)++;
	return 0;
}

static VT_PRINTF(2, 3) void note(struct align_samples *s, const char *fmt, ...)
{
	size_t len = s->notes ? strlen(s->notes) : 0;
	va_list ap;

	if (!s->notes) {
		s->notes = calloc(1, SRC_NOTES_MAX);
		if (!s->notes)
			return;
	}
	if (len + 2 >= SRC_NOTES_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(s->notes + len, SRC_NOTES_MAX - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(s->notes);
	s->notes[len] = '\n';
	s->notes[len + 1] = 0;
}

void align_load_opts_init(struct align_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->marker_port = -1;
	o->marker_fd = -1;
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* A HOST or GUEST input: 1 a directory, 0 a file (a trace.dat alone), -1
 * with a message if neither. */
static int input_is_dir(const char *dir, const char *what)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return vt_err_errno("%s directory %s", what, dir);
	if (S_ISREG(st.st_mode))
		return 0;
	if (!S_ISDIR(st.st_mode))
		return vt_err_set("%s directory %s: not a directory nor a trace.dat file", what,
				  dir);
	return 1;
}

/* frac bits of the scaling ratio: meta's kvm.tsc_scaling_frac_bits, else
 * the CPU vendor, else the ratio's size (ratios are close to 1.0) */
static uint32_t frac_bits_of(const struct vt_meta *m, uint64_t ratio)
{
	const char *vendor = vt_meta_get(m, "cpu.vendor");
	uint64_t fb;

	if (!vt_meta_get_u64(m, "kvm.tsc_scaling_frac_bits", &fb) && fb > 0 && fb < 64)
		return (uint32_t)fb;
	if (vendor && strstr(vendor, "AMD"))
		return SRC_FRAC_AMD;
	if (vendor && strstr(vendor, "Intel"))
		return SRC_FRAC_INTEL;
	return ratio >= (1ull << SRC_FRAC_GUESS_MIN) ? SRC_FRAC_INTEL : SRC_FRAC_AMD;
}

/* "VALUE TSC_HOST WHEN" of the recorder's debugfs series */
static int parse_reading(const char *v, long long *val, unsigned long long *tsc)
{
	char *end;

	errno = 0;
	*val = strtoll(v, &end, 0);
	if (errno || end == v || *end != ' ')
		return -1;
	*tsc = strtoull(end + 1, &end, 0);
	if (errno || (*end && *end != ' '))
		return -1;
	return 0;
}

/* Reading @i of VM @vm's vCPU @v tsc-offset series: 0 with *@val and
 * *@tsc, -1 when absent or malformed (@key then names it). */
static int vm_offset_reading(const struct vt_meta *m, uint64_t vm, uint64_t v, uint64_t i,
			     char *key, size_t keylen, long long *val, unsigned long long *tsc)
{
	const char *rv;

	snprintf(key, keylen, "kvm.vm%llu.vcpu%llu.tsc_offset.%llu", (unsigned long long)vm,
		 (unsigned long long)v, (unsigned long long)i);
	rv = vt_meta_get(m, key);
	return !rv || parse_reading(rv, val, tsc) ? -1 : 0;
}

/* The host TSC span of VM @vm's debugfs readings (its first and last). */
static void vm_reading_span(const struct vt_meta *m, uint64_t vm, uint64_t *lo, uint64_t *hi)
{
	char key[SRC_KEY_MAX];
	uint64_t nvcpu = 0, nr;

	*lo = UINT64_MAX;
	*hi = 0;
	snprintf(key, sizeof(key), "kvm.vm%llu.vcpus", (unsigned long long)vm);
	if (vt_meta_get_u64(m, key, &nvcpu) || nvcpu > SRC_MAX_VCPUS)
		return;
	for (uint64_t v = 0; v < nvcpu; v++) {
		snprintf(key, sizeof(key), "kvm.vm%llu.vcpu%llu.tsc_offset.nr",
			 (unsigned long long)vm, (unsigned long long)v);
		if (vt_meta_get_u64(m, key, &nr) || nr == 0 || nr > SRC_MAX_SERIES)
			continue;
		for (uint64_t i = 0; i < nr; i++) {
			unsigned long long tsc;
			long long val;

			if (vm_offset_reading(m, vm, v, i, key, sizeof(key), &val, &tsc))
				continue;
			if (tsc < *lo)
				*lo = tsc;
			if (tsc > *hi)
				*hi = tsc;
		}
	}
}

/* Did the recording's VMs run one after the other (a VM saved and restored
 * into a new QEMU, a guest restarted): no two spans of readings overlap?
 * Then they are one guest's timeline; VMs that ran at once are not. */
static int vms_in_sequence(const struct vt_meta *m, uint64_t nvm)
{
	uint64_t lo[SRC_MAX_VMS], hi[SRC_MAX_VMS];

	if (nvm > SRC_MAX_VMS)
		return 0;
	for (uint64_t i = 0; i < nvm; i++) {
		vm_reading_span(m, i, &lo[i], &hi[i]);
		if (lo[i] > hi[i])
			return 0;	/* no reading: nothing says when it ran */
		for (uint64_t k = 0; k < i; k++)
			if (lo[i] <= hi[k] && lo[k] <= hi[i])
				return 0;
	}
	return 1;
}

/* The debugfs readings of VM @vm's vCPUs into s->snaps. */
static int load_vm_debugfs(struct align_samples *s, const struct vt_meta *m, const char *path,
			   uint64_t vm, size_t *cap)
{
	uint64_t nvcpu, nr;
	char key[SRC_KEY_MAX];

	snprintf(key, sizeof(key), "kvm.vm%llu.vcpus", (unsigned long long)vm);
	if (vt_meta_get_u64(m, key, &nvcpu))
		return 0;
	if (nvcpu > SRC_MAX_VCPUS)
		return vt_err_set("%s: %s = %llu: too many", path, key,
				  (unsigned long long)nvcpu);
	for (uint64_t v = 0; v < nvcpu; v++) {
		uint64_t ratio = 0, rnr = 0;

		/* the latest ratio reading applies to every offset reading */
		snprintf(key, sizeof(key), "kvm.vm%llu.vcpu%llu.tsc_scaling_ratio.nr",
			 (unsigned long long)vm, (unsigned long long)v);
		if (!vt_meta_get_u64(m, key, &rnr) && rnr > 0 && rnr <= SRC_MAX_SERIES) {
			long long val;
			unsigned long long tsc;
			const char *rv;

			snprintf(key, sizeof(key), "kvm.vm%llu.vcpu%llu.tsc_scaling_ratio.%llu",
				 (unsigned long long)vm, (unsigned long long)v,
				 (unsigned long long)(rnr - 1));
			rv = vt_meta_get(m, key);
			if (rv && !parse_reading(rv, &val, &tsc))
				ratio = (uint64_t)val;
		}
		snprintf(key, sizeof(key), "kvm.vm%llu.vcpu%llu.tsc_offset.nr",
			 (unsigned long long)vm, (unsigned long long)v);
		if (vt_meta_get_u64(m, key, &nr) || nr == 0)
			continue;
		if (nr > SRC_MAX_SERIES)
			return vt_err_set("%s: %s = %llu: too many", path, key,
					  (unsigned long long)nr);
		for (uint64_t i = 0; i < nr; i++) {
			struct align_debugfs_snap d = { 0 };
			unsigned long long tsc;
			long long val;

			if (vm_offset_reading(m, vm, v, i, key, sizeof(key), &val, &tsc)) {
				const char *rv = vt_meta_get(m, key);

				return vt_err_set("%s: %s: expected \"OFFSET TSC WHEN\", got \"%s\"",
						  path, key, rv ? rv : "(missing)");
			}
			d.tsc_host = tsc;
			d.vcpu = (int32_t)v;
			d.offset_tsc = val;
			d.ratio = ratio;
			d.frac_bits = ratio ? frac_bits_of(m, ratio) : 0;
			if (grow_push((void **)&s->snaps, &s->in.n_snaps, cap, sizeof(d), &d))
				return -1;
		}
	}
	return 0;
}

/*
 * debugfs readings of the recording's VMs.  One VM: its own.  Several that
 * ran one after the other (saved and restored into a new QEMU, restarted):
 * one guest's timeline, every VM's readings (each applies where it was
 * read; the offset writes between them start new segments).  Several at
 * once: vm0's, and a note (their vCPU numbers cannot be told apart).
 */
static int load_debugfs(struct align_samples *s, const struct vt_meta *m, const char *path,
			size_t *cap)
{
	uint64_t nvm = 0, use = 1;

	if (vt_meta_get_u64(m, "kvm.vms", &nvm) || nvm == 0)
		return 0;
	s->vms_in_sequence = nvm > 1 && vms_in_sequence(m, nvm);
	if (s->vms_in_sequence) {
		use = nvm;
		note(s, "host: %llu VMs in the recording, one after the other (a saved and "
		     "restored or restarted guest): one guest's timeline", (unsigned long long)nvm);
	} else if (nvm > 1) {
		note(s, "host: %llu VMs in the recording at once: using vm0's debugfs readings",
		     (unsigned long long)nvm);
	}
	for (uint64_t vm = 0; vm < use; vm++)
		if (load_vm_debugfs(s, m, path, vm, cap))
			return -1;
	if (s->in.n_snaps)
		note(s, "host: %zu debugfs tsc-offset readings (%s)", s->in.n_snaps,
		     use > 1 ? "every VM" : "vm0");
	return 0;
}

static int load_threads(const struct vt_meta *m, struct tidmap *t, size_t *nt)
{
	uint64_t n = 0;

	*nt = 0;
	if (vt_meta_get_u64(m, "kvm.vcpu_threads", &n))
		return 0;
	if (n > SRC_MAX_THREADS)
		n = SRC_MAX_THREADS;
	for (uint64_t i = 0; i < n; i++) {
		char key[SRC_KEY_MAX];
		int64_t tid, vcpu;

		snprintf(key, sizeof(key), "kvm.thread%llu.tid", (unsigned long long)i);
		if (vt_meta_get_i64(m, key, &tid))
			continue;
		snprintf(key, sizeof(key), "kvm.thread%llu.vcpu", (unsigned long long)i);
		if (vt_meta_get_i64(m, key, &vcpu))
			continue;
		t[*nt].tid = (int)tid;
		t[*nt].vcpu = (int)vcpu;
		(*nt)++;
	}
	return 0;
}

/* The vCPU a thread runs: from the meta's thread list, else from the name
 * the trace recorded for it (QEMU names them "CPU n/KVM", "CPU n/TCG");
 * remembered, -1 for other threads. */
static int32_t tid_vcpu(struct vt_td_reader *r, struct tidmap *t, size_t *nt, int pid)
{
	const char *comm;
	int v;

	for (size_t i = 0; i < *nt; i++)
		if (t[i].tid == pid)
			return t[i].vcpu;
	comm = vt_td_read_comm(r, pid);
	if (!comm || sscanf(comm, "CPU %d/", &v) != 1 || v < 0)
		v = ALIGN_VCPU_ANY;
	if (*nt < SRC_MAX_THREADS) {
		t[*nt].tid = pid;
		t[*nt].vcpu = v;
		(*nt)++;
	}
	return v;
}

/* Is @tid one of the recording's vCPU threads, the first @n of @t (from its
 * meta)?  With none listed, every thread is.  kvm:* events are recorded
 * system-wide: this keeps other VMs' offsets and PIO out of the model. */
static int tid_is_vcpu(const struct tidmap *t, size_t n, int tid)
{
	if (!n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (t[i].tid == tid)
			return 1;
	return 0;
}

/* candidate chardev writes (TCG markers): one-byte writes per fd */
struct cwrite {
	uint64_t tsc_host;
	int fd;
	int32_t vcpu;		/* the writer's vCPU, -1: not a vCPU thread */
};

static int is_write_syscall(const char *name)
{
	return !strcmp(name, "sys_enter_write") || !strcmp(name, "sys_enter_writev") ||
	       !strcmp(name, "sys_enter_pwrite64");
}

/* The addresses the guest's markers used, per kind: a host action counts as
 * a marker observation only at one of them (plus the default/option port). */
#define SRC_MAX_ADDRS		16
struct addr_set {
	uint64_t a[SRC_MAX_ADDRS];
	int n;
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

/* what an event type is to the aligner, decided once per type id */
enum ev_kind { EV_UNKNOWN = 0, EV_OTHER, EV_KVM_EXIT, EV_TSC_OFFSET, EV_PIO, EV_MMIO, EV_HYPERCALL,
	       EV_WRITE, EV_KVM_ENTRY };
#define SRC_MAX_EVENT_ID	65536

static enum ev_kind event_kind(uint8_t *kinds, const struct vt_td_event *ev)
{
	enum ev_kind k = EV_OTHER;

	if (ev->id < 0 || ev->id >= SRC_MAX_EVENT_ID)
		return EV_OTHER;
	if (likely(kinds[ev->id]))
		return (enum ev_kind)kinds[ev->id];
	if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_write_tsc_offset"))
		k = EV_TSC_OFFSET;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_pio"))
		k = EV_PIO;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_mmio"))
		k = EV_MMIO;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_hypercall"))
		k = EV_HYPERCALL;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_exit"))
		k = EV_KVM_EXIT;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_entry"))
		k = EV_KVM_ENTRY;
	else if (!strcmp(ev->system, "syscalls") && is_write_syscall(ev->name))
		k = EV_WRITE;
	kinds[ev->id] = (uint8_t)k;
	return k;
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
		} else if (np == best && np) {
			tie_fd = fds[k];
		}
	}
	if (best_fd < 0) {
		note(s, "host: no write() fd matches the guest's %zu chardev markers", nchar);
		free(obs);
		return 0;
	}
	note(s, "host: chardev markers: one-byte writes to fd %d%s (%zu of %zu guest markers "
	     "match by order and time)", best_fd, vcpu_only ? " by vCPU threads" : "", best,
	     nchar);
	if (tie_fd >= 0)
		note(s, "host: AMBIGUOUS: fd %d matches as well as fd %d: give --marker-fd",
		     tie_fd, best_fd);
	for (size_t i = 0; i < nw; i++) {
		struct align_host_marker h = { w[i].tsc_host, w[i].vcpu, 0, 0, 0 };

		if (w[i].fd != best_fd || (vcpu_only && w[i].vcpu == ALIGN_VCPU_ANY))
			continue;
		if (grow_push((void **)&s->host_markers, &s->in.n_host_markers, cap,
			      sizeof(h), &h)) {
			free(obs);
			return -1;
		}
	}
	free(obs);
	return 0;
}

/*
 * In-band hypercall markers (lib/marker.h, docs/format/markers.md): the
 * guest's readings travel in the registers of its kvm_hypercall events, so
 * the host trace alone holds both sides of each bracket.  Marker k's
 * "before" is in its own call, its "after" in the next call of the same
 * chain (the next marker, or the closing call).  The registers are
 * the guest's: untrusted, checked (after >= before, seq in order).
 */
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
	return grow_push((void **)&ib->a, &ib->n, &ib->cap, sizeof(h), &h);
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
			note(s, "host: %s: %zu in-band hypercall readings; the guest's markers.dat "
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
		if (grow_push((void **)&s->guest_markers, &s->in.n_guest_markers, &cap,
			      sizeof(m), &m))
			return -1;
		made++;
	}
	note(s, "host: %s: %zu in-band hypercall markers (the guest's readings carried in "
	     "kvm_hypercall)", path, made);
	if (dropped)
		vt_warn("%s: %zu in-band hypercall markers without a valid closing reading dropped",
			path, dropped);
	return 0;
}
/*
 * VMs that ran one after the other with the same vCPU numbers (a guest
 * saved and restored into a new QEMU): every vCPU thread but the last of
 * its number stopped at its last kvm_exit for good; the model ends that
 * VM's segment there for guest stamps (struct align_vcpu_stop).
 */
static int load_stops(struct align_samples *s, const struct tidmap *tm, size_t n)
{
	size_t cap = 0;

	if (!s->vms_in_sequence)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int later = 0;

		if (!tm[i].last_exit)
			continue;
		for (size_t k = 0; k < n; k++)
			later |= k != i && tm[k].vcpu == tm[i].vcpu && tm[k].last_exit > tm[i].last_exit;
		if (later) {
			struct align_vcpu_stop st = { tm[i].vcpu, tm[i].last_exit };

			if (grow_push((void **)&s->stops, &s->in.n_stops, &cap, sizeof(st), &st))
				return -1;
		}
	}
	if (s->in.n_stops)
		note(s, "host: %zu vCPU thread(s) stopped for good before a later VM's took over "
		     "(saved and restored): their segments end there for guest stamps",
		     s->in.n_stops);
	return 0;
}


/* A vCPU thread's kvm_entry (@entry) or kvm_exit: an exit closes the run
 * its thread entered, appended to s->runs.  -1 on allocation failure. */
static int track_run(struct align_samples *s, struct vt_td_reader *r, struct tidmap *tm,
		     size_t *ntm, const struct vt_td_event *ev, int entry, size_t *cap)
{
	int32_t v = tid_vcpu(r, tm, ntm, ev->pid);
	struct tidmap *t = NULL;
	struct align_run run;

	if (v < 0)
		return 0;
	for (size_t i = 0; i < *ntm && !t; i++)
		if (tm[i].tid == ev->pid)
			t = &tm[i];
	if (!t)
		return 0;
	if (entry) {
		t->entry = ev->ts;
		return 0;
	}
	if (!t->entry || ev->ts < t->entry)
		return 0;
	run = (struct align_run){ v, t->entry, ev->ts };
	t->entry = 0;
	return grow_push((void **)&s->runs, &s->n_runs, cap, sizeof(run), &run);
}

/* No vmtrace.meta: the vCPU threads from the file's GUEST option (a
 * trace-cmd host-guest recording), the one of the guest loaded (its trace
 * id), else the only one. */
static void guest_threads(struct align_samples *s, struct vt_td_reader *r, const char *path,
			  struct tidmap *tm, size_t *ntm)
{
	const struct vt_td_guest *g = NULL;
	int n = vt_td_read_nr_guests(r);

	for (int i = 0; i < n && !g; i++)
		if (s->guest_trace_id && vt_td_read_guest(r, i)->trace_id == s->guest_trace_id)
			g = vt_td_read_guest(r, i);
	if (!g && n == 1)
		g = vt_td_read_guest(r, 0);
	if (!g) {
		if (n)
			note(s, "host: %s: %d guests in its GUEST options, none with the guest "
			     "file's trace id: vCPU threads from their names", path, n);
		return;
	}
	for (uint32_t i = 0; i < g->nr_vcpus && *ntm < SRC_MAX_THREADS; i++) {
		tm[*ntm].tid = (int)g->tid[i];
		tm[*ntm].vcpu = (int)g->vcpu[i];
		(*ntm)++;
	}
	note(s, "host: %s: guest \"%s\" (trace-cmd GUEST option): %u vCPU threads", path,
	     g->name, g->nr_vcpus);
}

static int load_tracedat(struct align_samples *s, const char *path, const struct vt_meta *m,
			 const struct align_load_opts *o, size_t *cap_off, size_t *cap_hm)
{
	struct tidmap *tm = calloc(SRC_MAX_THREADS, sizeof(*tm));
	uint8_t *kinds = calloc(SRC_MAX_EVENT_ID, 1);
	struct cwrite *cw = NULL;
	enum ev_kind kind;
	size_t ntm = 0, ncw = 0, cap_cw = 0, nev = 0, npio = 0, nmmio = 0, nhc = 0, cap_run = 0;
	size_t nvcpu_thr = 0, nforeign = 0;
	struct addr_set ports = { { 0 }, 0 }, gpas = { { 0 }, 0 }, hcs = { { 0 }, 0 };
	struct vt_td_reader *r;
	struct vt_td_event ev;
	const char *clock;
	int want_fd = o->marker_fd;
	struct hc_inband ib = { 0 };
	int64_t mfd;
	int ret = -1, rc;

	if (!tm || !kinds) {
		free(tm);
		free(kinds);
		return vt_err_set("out of memory");
	}
	addr_add(&ports, o->marker_port >= 0 ? (uint64_t)o->marker_port : VT_MARKER_PORT);
	for (size_t i = 0; i < s->in.n_guest_markers; i++) {
		const struct vt_marker *g = &s->guest_markers[i];

		if (g->kind == VT_MARKER_PIO)
			addr_add(&ports, g->addr);
		else if (g->kind == VT_MARKER_MMIO)
			addr_add(&gpas, g->addr);
		else if (g->kind == VT_MARKER_HYPERCALL)
			addr_add(&hcs, g->addr);
	}
	if (m) {
		load_threads(m, tm, &ntm);
		nvcpu_thr = ntm;
		if (want_fd < 0 && !vt_meta_get_i64(m, "markers.chardev_fd", &mfd))
			want_fd = (int)mfd;
	}
	r = vt_td_read_open(path);
	if (!r)
		goto out;
	if (vt_td_read_warning(r))
		vt_warn("%s", vt_td_read_warning(r));
	if (vt_td_read_truncated(r)) {
		vt_warn("%s: CPU data cut short: each CPU is read up to its last whole record",
			path);
		s->host_truncated = 1;
	}
	if (!s->in.host_hz && !vt_td_read_tsc_hz(r, &s->in.host_hz))
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "trace.dat TSC2NSEC option");
	if (!nvcpu_thr) {
		guest_threads(s, r, path, tm, &ntm);
		nvcpu_thr = ntm;
	}
	clock = vt_td_read_clock(r);
	if (vt_td_clock_is_ns(clock)) {
		vt_err_set("%s: recorded with trace clock '%s' (ns): guest TSC values cannot be "
			   "related to it; record with the x86-tsc clock (vmtrace record, or "
			   "trace-cmd record -C x86-tsc)", path, clock);
		goto out;
	}
	while ((rc = vt_td_read_next_any(r, &ev)) == 1) {
		uint64_t a, b, c, d;

		nev++;
		if (!s->in.span_tsc_host_start || ev.ts < s->in.span_tsc_host_start)
			s->in.span_tsc_host_start = ev.ts;
		if (ev.ts > s->in.span_tsc_host_end)
			s->in.span_tsc_host_end = ev.ts;
		kind = event_kind(kinds, &ev);
		if (kind == EV_KVM_ENTRY || kind == EV_KVM_EXIT) {
			/* what a vCPU thread ran in guest mode (the inside check) */
			if (tid_is_vcpu(tm, nvcpu_thr, ev.pid) &&
			    track_run(s, r, tm, &ntm, &ev, kind == EV_KVM_ENTRY, &cap_run))
				goto out;
			if (kind == EV_KVM_ENTRY)
				continue;
		} else if (kind != EV_OTHER && kind != EV_WRITE &&
			   unlikely(!tid_is_vcpu(tm, nvcpu_thr, ev.pid))) {
			nforeign++;
			continue;
		}
		if (kind == EV_KVM_EXIT) {
			/* only load_stops() wants them: VMs one after the other */
			for (size_t i = 0; s->vms_in_sequence && i < nvcpu_thr; i++)
				if (tm[i].tid == ev.pid)
					tm[i].last_exit = ev.ts;
		} else if (kind == EV_TSC_OFFSET) {
			struct align_offset_event oe;

			if (vt_td_field_u64(&ev, "vcpu_id", &a) ||
			    vt_td_field_u64(&ev, "previous_tsc_offset", &b) ||
			    vt_td_field_u64(&ev, "next_tsc_offset", &c))
				continue;
			oe = (struct align_offset_event){ ev.ts, (int32_t)a, (int64_t)b, (int64_t)c };
			if (grow_push((void **)&s->offsets, &s->in.n_offsets, cap_off,
				      sizeof(oe), &oe))
				goto out;
		} else if (kind == EV_PIO) {
			struct align_host_marker h;

			if (vt_td_field_u64(&ev, "rw", &a) || vt_td_field_u64(&ev, "port", &b) ||
			    vt_td_field_u64(&ev, "val", &c))
				continue;
			if (a != SRC_PIO_OUT || !addr_has(&ports, b))
				continue;
			if (!vt_td_field_u64(&ev, "count", &d) && d != 1)
				continue;	/* rep outs: no single value */
			h = (struct align_host_marker){ ev.ts, tid_vcpu(r, tm, &ntm, ev.pid),
							(uint32_t)c, 1, ev.pid };
			if (grow_push((void **)&s->host_markers, &s->in.n_host_markers, cap_hm,
				      sizeof(h), &h))
				goto out;
			npio++;
		} else if (kind == EV_MMIO || kind == EV_HYPERCALL) {
			struct align_host_marker h;

			if (kind == EV_MMIO) {
				if (vt_td_field_u64(&ev, "type", &a) || a != SRC_MMIO_WRITE ||
				    vt_td_field_u64(&ev, "gpa", &b) || !addr_has(&gpas, b) ||
				    vt_td_field_u64(&ev, "val", &c))
					continue;
				nmmio++;
			} else {
				if (vt_td_field_u64(&ev, "nr", &b) || vt_td_field_u64(&ev, "a0", &c))
					continue;
				if (hc_is_marker(b)) {
					if (hc_inband_add(&ib, &ev, b, tid_vcpu(r, tm, &ntm, ev.pid)))
						goto out;
					if (hc_is_close(&ev, b))
						continue;	/* carries a reading, no marker */
					c = VT_MARKER_VALUE(hc_seq(&ev, b));
				} else if (!addr_has(&hcs, b)) {
					continue;
				}
				nhc++;
			}
			h = (struct align_host_marker){ ev.ts, tid_vcpu(r, tm, &ntm, ev.pid),
							(uint32_t)c, 1, ev.pid };
			if (grow_push((void **)&s->host_markers, &s->in.n_host_markers, cap_hm,
				      sizeof(h), &h))
				goto out;
		} else if (kind == EV_WRITE) {
			struct cwrite w;

			if (vt_td_field_u64(&ev, "fd", &a))
				continue;
			if (!vt_td_field_u64(&ev, "count", &b) && b != 1)
				continue;
			w = (struct cwrite){ ev.ts, (int)a, tid_vcpu(r, tm, &ntm, ev.pid) };
			if (grow_push((void **)&cw, &ncw, &cap_cw, sizeof(w), &w))
				goto out;
		}
	}
	if (rc < 0)
		goto out;
	note(s, "host: %s: %zu events (clock %s), %zu kvm_write_tsc_offset, %zu kvm_pio "
	     "writes to marker port 0x%llx%s, %zu one-byte write syscalls", path, nev,
	     *clock ? clock : "unknown", s->in.n_offsets, npio, (unsigned long long)ports.a[0],
	     ports.n > 1 ? " (and the guest's ports)" : "", ncw);
	if (gpas.n || hcs.n)
		note(s, "host: %zu kvm_mmio writes and %zu kvm_hypercall at the guest's marker "
		     "addresses", nmmio, nhc);
	if (nforeign)
		note(s, "host: %zu kvm_write_tsc_offset/pio/mmio/hypercall events of threads that "
		     "are not this recording's %zu vCPU threads (another VM's) ignored", nforeign,
		     nvcpu_thr);
	if (pick_chardev(s, cw, ncw, want_fd, cap_hm))
		goto out;
	if (hc_inband_markers(s, &ib, path))
		goto out;
	if (load_stops(s, tm, nvcpu_thr))
		goto out;
	ret = 0;
out:
	if (r)
		vt_td_read_close(r);
	free(tm);
	free(kinds);
	free(cw);
	free(ib.a);
	return ret;
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
			note(s, "host: vCPU %d: its creation-time kvm_write_tsc_offset is not in the "
			     "trace (the recording started after the VM): its offset comes from "
			     "debugfs and markers%s", (int)v,
			     s->in.n_offsets ? " until the trace's first offset write" : "");
	}
}

/*
 * The PVM signature (../shared/ENVIRONMENT.md): a kvm_write_tsc_offset that
 * starts the guest's TSC near 0 (next offset within a second of -(its own
 * host TSC)) while debugfs, read back from the vCPU, says 0 (no scaling).  The model's
 * SOURCES DISAGREE warning then follows; this note says why, once per vCPU.
 */
static void note_unapplied_offsets(struct align_samples *s)
{
	for (size_t i = 0; i < s->in.n_snaps; i++) {
		const struct align_debugfs_snap *d = &s->snaps[i];
		int seen = 0;

		for (size_t k = 0; k < i; k++)
			seen |= s->snaps[k].vcpu == d->vcpu && s->snaps[k].offset_tsc == 0;
		if (d->offset_tsc != 0 || d->ratio || seen || !s->in.host_hz)
			continue;
		for (size_t k = 0; k < s->in.n_offsets; k++) {
			const struct align_offset_event *e = &s->offsets[k];
			/* the guest TSC right after the write, modulo 2^64 */
			uint64_t from_zero = (uint64_t)e->next_offset_tsc + e->tsc_host;

			if (e->vcpu != d->vcpu || e->next_offset_tsc >= 0 ||
			    (from_zero > s->in.host_hz && -from_zero > s->in.host_hz))
				continue;
			note(s, "host: vCPU %d: kvm_write_tsc_offset asked for offset %lld (guest TSC "
			     "from 0) but debugfs tsc-offset reads 0: this KVM does not apply the "
			     "tracepoint's offset (PVM, docs/align.md); debugfs and markers hold",
			     (int)d->vcpu, (long long)e->next_offset_tsc);
			break;
		}
	}
}

static int load_host(struct align_samples *s, const char *dir, int is_dir,
		     const struct align_load_opts *o)
{
	char path[SRC_PATH_MAX], mpath[SRC_PATH_MAX];
	size_t cap_snap = 0, cap_off = 0, cap_hm = 0;
	struct vt_meta *m = NULL;
	uint64_t v;
	int ret = -1;

	snprintf(mpath, sizeof(mpath), "%s/%s", dir, VT_META_FILE);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	if (!is_dir) {
		/* a trace.dat given by name: the vmtrace.meta beside it, if any
		 * (trace-cmd's file has none: its options stand in) */
		const char *slash = strrchr(dir, '/');

		snprintf(path, sizeof(path), "%s", dir);
		snprintf(mpath, sizeof(mpath), "%.*s%s", slash ? (int)(slash - dir + 1) : 0, dir,
			 VT_META_FILE);
	}
	if (file_exists(mpath)) {
		m = vt_meta_read(mpath);
		if (!m)
			return -1;
	} else {
		note(s, "host: %s: missing (no tsc.hz, no debugfs readings)", mpath);
	}
	if (o->host_hz) {
		s->in.host_hz = o->host_hz;
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "option --tsc-hz");
	} else if (m && !vt_meta_get_u64(m, "tsc.hz", &v) && v) {
		s->in.host_hz = v;
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "%s",
			 vt_meta_get(m, "tsc.source") ? vt_meta_get(m, "tsc.source") : "meta");
	}
	if (m) {
		if (!vt_meta_get_u64(m, "record.start_tsc_host", &v))
			s->in.span_tsc_host_start = v;
		if (!vt_meta_get_u64(m, "record.stop_tsc_host", &v))
			s->in.span_tsc_host_end = v;
		if (load_debugfs(s, m, mpath, &cap_snap))
			goto out;
	}
	if (file_exists(path)) {
		if (load_tracedat(s, path, m, o, &cap_off, &cap_hm))
			goto out;
	} else {
		note(s, "host: %s: missing (no tracepoint offsets, no host marker events)", path);
	}
	note_unapplied_offsets(s);
	note_late_start(s);
	ret = 0;
out:
	vt_meta_free(m);
	return ret;
}

/*
 * The guest's trace.dat (a trace-cmd guest file, or the guest kernel
 * recording of a vmtrace guest directory): its TIME_SHIFT samples, trace
 * id and TSC frequency; its path kept for the inside check.  Only the
 * header is read here.
 */
static int load_guest_tracedat(struct align_samples *s, const char *path,
			       const struct align_load_opts *o)
{
	struct vt_td_reader *r = vt_td_read_open(path);
	const struct vt_td_tsync *t;
	uint64_t hz;

	if (!r)
		return -1;
	if (vt_td_read_warning(r))
		vt_warn("%s", vt_td_read_warning(r));
	snprintf(s->guest_td, sizeof(s->guest_td), "%s", path);
	(void)vt_td_read_trace_id(r, &s->guest_trace_id);
	if (!s->in.guest_hz && !o->guest_hz && !vt_td_read_tsc_hz(r, &hz)) {
		s->in.guest_hz = hz;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "trace.dat TSC2NSEC option");
	}
	t = vt_td_read_tsync(r);
	if (t) {
		s->in.n_tsync = align_tsync_from_file(t, &s->tsync);
		note(s, "guest: %s: trace-cmd time sync (TIME_SHIFT): %zu samples over %u "
		     "vCPUs, flags 0x%x%s", path, s->in.n_tsync, t->nr_cpus, t->flags,
		     t->flags & VT_TD_TSYNC_INTERPOLATE ? " (interpolated)" : "");
	} else {
		note(s, "guest: %s: %d CPUs, clock %s, no time-sync data", path,
		     vt_td_read_nr_cpus(r), *vt_td_read_clock(r) ? vt_td_read_clock(r) : "unknown");
	}
	vt_td_read_close(r);
	return 0;
}

static int load_guest(struct align_samples *s, const char *dir, int is_dir,
		      const struct align_load_opts *o)
{
	char path[SRC_PATH_MAX], mpath[SRC_PATH_MAX];
	struct vt_meta *m = NULL;
	uint64_t v;

	if (!is_dir)
		return load_guest_tracedat(s, dir, o);
	snprintf(mpath, sizeof(mpath), "%s/%s", dir, VT_META_FILE);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	if (file_exists(path) && load_guest_tracedat(s, path, o))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, VT_MARKER_FILE);
	if (file_exists(mpath)) {
		m = vt_meta_read(mpath);
		if (!m)
			return -1;
	}
	if (o->guest_hz) {
		s->in.guest_hz = o->guest_hz;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "option --guest-tsc-hz");
	} else if (m && !vt_meta_get_u64(m, "tsc.hz", &v) && v) {
		s->in.guest_hz = v;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "meta");
	}
	vt_meta_free(m);
	if (!file_exists(path)) {
		note(s, "guest: %s: missing (no markers)", path);
		return 0;
	}
	if (vt_marker_read(path, &s->guest_markers, &s->in.n_guest_markers,
			   &s->n_bad_guest_markers) < 0)
		return -1;
	note(s, "guest: %s: %zu markers%s", path, s->in.n_guest_markers,
	     s->n_bad_guest_markers ? " (some records rejected: corrupt or truncated)" : "");
	return 0;
}

int align_samples_load(struct align_samples *s, const char *host_dir, const char *guest_dir,
		       const struct align_load_opts *o)
{
	struct align_load_opts def;

	memset(s, 0, sizeof(*s));
	if (!o) {
		align_load_opts_init(&def);
		o = &def;
	}
	int host_is_dir = host_dir ? input_is_dir(host_dir, "host") : 1, guest_is_dir;

	if (host_is_dir < 0)
		return -1;
	guest_is_dir = guest_dir ? input_is_dir(guest_dir, "guest") : 1;
	if (guest_is_dir < 0)
		return -1;
	/* the guest first: chardev matching on the host side needs its
	 * markers, the GUEST option its trace id */
	if (guest_dir && load_guest(s, guest_dir, guest_is_dir, o))
		return -1;
	if (host_dir && load_host(s, host_dir, host_is_dir, o))
		return -1;
	if (!s->in.host_hz && o->host_hz)
		s->in.host_hz = o->host_hz;
	s->in.has_user_offset = o->has_offset;
	s->in.user_offset_tsc = o->offset_tsc;
	s->in.offsets = s->offsets;
	s->in.snaps = s->snaps;
	s->in.guest_markers = s->guest_markers;
	s->in.host_markers = s->host_markers;
	s->in.stops = s->stops;
	s->in.tsync = s->tsync;
	if (s->n_bad_guest_markers)
		note(s, "guest: %zu marker records rejected (corrupt/truncated)",
		     s->n_bad_guest_markers);
	return 0;
}

void align_samples_free(struct align_samples *s)
{
	free(s->offsets);
	free(s->snaps);
	free(s->guest_markers);
	free(s->host_markers);
	free(s->stops);
	free(s->tsync);
	free(s->runs);
	free(s->notes);
	memset(s, 0, sizeof(*s));
}

struct align_model *align_model_from_dirs(const char *host_dir, const char *guest_dir,
					  const struct align_load_opts *o,
					  size_t *n_bad_markers)
{
	struct align_samples s;
	struct align_model *m;

	if (n_bad_markers)
		*n_bad_markers = 0;
	if (align_samples_load(&s, host_dir, guest_dir, o) < 0) {
		align_samples_free(&s);
		return NULL;
	}
	if (n_bad_markers)
		*n_bad_markers = s.n_bad_guest_markers;
	m = align_model_build(&s.in);
	align_samples_free(&s);
	return m;
}
