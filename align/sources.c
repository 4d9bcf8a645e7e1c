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
#include "align/gather.h"
#include "err.h"
#include "grow.h"
#include "meta.h"
#include "tracedat.h"

/* Each source's gathering hooks (align/src_*.c), in the report order of
 * align_sources[] (align/model.c; a source that reads nothing, the user's
 * offset, has none). */
const struct align_source_io *const align_source_ios[] = {
	&align_io_markers,
	&align_io_debugfs,
	&align_io_tracepoint,
	&align_io_tsync,
};
const size_t align_nr_source_ios = VT_ARRAY_SIZE(align_source_ios);

#define SRC_NOTES_MAX		8192
#define SRC_LIST_CAP0		64	/* entries of a gathered list's first allocation */
#define SRC_MAX_EVENT_ID	65536

int align_gather_push(void **p, size_t *n, size_t *cap, size_t size, const void *item)
{
	if (*n == *cap && vt_grow(p, cap, *n + 1, size, SRC_LIST_CAP0))
		return vt_err_set("out of memory");
	memcpy((char *)*p + *n * size, item, size);
	(*n)++;
	return 0;
}

void align_gather_note(struct align_samples *s, const char *fmt, ...)
{
	size_t len = strlen(s->notes);	/* allocated by align_samples_load */
	va_list ap;

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

/* The vCPU threads the recorder listed (lib/meta.h) into @t, *@nt of them. */
static int load_threads(const struct vt_meta *m, struct tidmap *t, size_t *nt)
{
	struct vt_meta_vthread *vt = calloc(SRC_MAX_THREADS, sizeof(*vt));
	int n;

	*nt = 0;
	if (!vt)
		return vt_err_set("out of memory");
	n = vt_meta_get_vthreads(m, vt, SRC_MAX_THREADS);
	for (int i = 0; i < n; i++) {
		t[*nt].tid = vt[i].tid;
		t[*nt].vcpu = vt[i].vcpu;
		(*nt)++;
	}
	free(vt);
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
	comm = vt_td_read_comm(r, pid);	/* never NULL: "" when unknown */
	if (sscanf(comm, "CPU %d/", &v) != 1 || v < 0)
		v = ALIGN_VCPU_ANY;
	if (*nt < SRC_MAX_THREADS) {
		t[*nt].tid = pid;
		t[*nt].vcpu = v;
		(*nt)++;
	}
	return v;
}

int32_t align_gather_tid_vcpu(struct align_gather *g, int pid)
{
	return tid_vcpu(g->r, g->tm, &g->ntm, pid);
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

static int is_write_syscall(const char *name)
{
	return !strcmp(name, "sys_enter_write") || !strcmp(name, "sys_enter_writev") ||
	       !strcmp(name, "sys_enter_pwrite64");
}

/* what an event type is to the aligner, decided once per type id */

static enum align_ev_kind event_kind(uint8_t *kinds, const struct vt_td_event *ev)
{
	enum align_ev_kind k = ALIGN_EV_OTHER;

	if (ev->id < 0 || ev->id >= SRC_MAX_EVENT_ID)
		return ALIGN_EV_OTHER;
	if (likely(kinds[ev->id]))
		return (enum align_ev_kind)kinds[ev->id];
	if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_write_tsc_offset"))
		k = ALIGN_EV_TSC_OFFSET;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_pio"))
		k = ALIGN_EV_PIO;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_mmio"))
		k = ALIGN_EV_MMIO;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_hypercall"))
		k = ALIGN_EV_HYPERCALL;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_exit"))
		k = ALIGN_EV_KVM_EXIT;
	else if (!strcmp(ev->system, "kvm") && !strcmp(ev->name, "kvm_entry"))
		k = ALIGN_EV_KVM_ENTRY;
	else if (!strcmp(ev->system, "syscalls") && is_write_syscall(ev->name))
		k = ALIGN_EV_WRITE;
	kinds[ev->id] = (uint8_t)k;
	return k;
}

/*
 * In-band hypercall markers (lib/marker.h, docs/format/markers.md): the
 * guest's readings travel in the registers of its kvm_hypercall events, so
 * the host trace alone holds both sides of each bracket.  Marker k's
 * "before" is in its own call, its "after" in the next call of the same
 * chain (the next marker, or the closing call).  The registers are
 * the guest's: untrusted, checked (after >= before, seq in order).
 */

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

			if (align_gather_push((void **)&s->stops, &s->in.n_stops, &cap, sizeof(st), &st))
				return -1;
		}
	}
	if (s->in.n_stops)
		align_gather_note(s, "host: %zu vCPU thread(s) stopped for good before a later VM's took over "
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
	return align_gather_push((void **)&s->runs, &s->n_runs, cap, sizeof(run), &run);
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
			align_gather_note(s, "host: %s: %d guests in its GUEST options, none with the guest "
			     "file's trace id: vCPU threads from their names", path, n);
		return;
	}
	for (uint32_t i = 0; i < g->nr_vcpus && *ntm < SRC_MAX_THREADS; i++) {
		tm[*ntm].tid = (int)g->tid[i];
		tm[*ntm].vcpu = (int)g->vcpu[i];
		(*ntm)++;
	}
	align_gather_note(s, "host: %s: guest \"%s\" (trace-cmd GUEST option): %u vCPU threads", path,
	     g->name, g->nr_vcpus);
}

/* Each source's host_end, after its host_begin (@ok: the pass went well). */
static int sources_end(struct align_gather *g, size_t begun, int ok)
{
	int ret = 0;

	for (size_t i = 0; i < begun; i++)
		if (align_source_ios[i]->host_end && align_source_ios[i]->host_end(g, ok && !ret) < 0)
			ret = -1;
	return ret;
}

/* The host's trace.dat: the frequency and vCPU threads its options state,
 * then every event once - vCPU runs and exits here, each kind a source
 * asked for to that source. */
static int load_tracedat(struct align_gather *g)
{
	struct align_samples *s = g->s;
	uint8_t *kinds = calloc(SRC_MAX_EVENT_ID, 1);
	size_t cap_run = 0, begun = 0;
	enum align_ev_kind kind;
	struct vt_td_event ev;
	int ret = -1, rc;

	if (!kinds)
		return vt_err_set("out of memory");
	g->r = vt_td_read_open(g->path);
	if (!g->r)
		goto out;
	if (vt_td_read_warning(g->r))
		vt_warn("%s", vt_td_read_warning(g->r));
	if (vt_td_read_truncated(g->r)) {
		vt_warn("%s: CPU data cut short: each CPU is read up to its last whole record",
			g->path);
		s->host_truncated = 1;
	}
	if (!s->in.host_hz && !vt_td_read_tsc_hz(g->r, &s->in.host_hz))
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "trace.dat TSC2NSEC option");
	if (!g->nvcpu_thr) {
		guest_threads(s, g->r, g->path, g->tm, &g->ntm);
		g->nvcpu_thr = g->ntm;
	}
	g->clock = vt_td_read_clock(g->r);
	if (vt_td_clock_is_ns(g->clock)) {
		/* a trace-cmd pair in a ns clock (its ptp protocol): host ticks
		 * are ns, trace-cmd's TIME_SHIFT maps the guest's ns to them;
		 * a TSC marker cannot be related to either */
		if (!s->in.n_tsync) {
			vt_err_set("%s: recorded with trace clock '%s' (ns): guest TSC values cannot "
				   "be related to it; record with the x86-tsc clock (vmtrace record, "
				   "or trace-cmd record -C x86-tsc)", g->path, g->clock);
			goto out;
		}
		g->host_ns = 1;
		s->in.host_hz = VT_NS_PER_SEC;
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "trace clock '%.16s': ns",
			 g->clock);
		if (s->in.n_guest_markers)
			align_gather_note(s, "guest: %zu markers not used: their TSC readings cannot be "
					  "related to the '%s' (ns) clocks of this pair",
					  s->in.n_guest_markers, g->clock);
		s->in.n_guest_markers = 0;
	}
	for (; begun < align_nr_source_ios; begun++)
		if (align_source_ios[begun]->host_begin && align_source_ios[begun]->host_begin(g) < 0)
			goto out;
	while ((rc = vt_td_read_next_any(g->r, &ev)) == 1) {
		g->nev++;
		if (!s->in.span_tsc_host_start || ev.ts < s->in.span_tsc_host_start)
			s->in.span_tsc_host_start = ev.ts;
		if (ev.ts > s->in.span_tsc_host_end)
			s->in.span_tsc_host_end = ev.ts;
		kind = event_kind(kinds, &ev);
		if (kind == ALIGN_EV_KVM_ENTRY || kind == ALIGN_EV_KVM_EXIT) {
			/* what a vCPU thread ran in guest mode (the inside check) */
			if (tid_is_vcpu(g->tm, g->nvcpu_thr, ev.pid) &&
			    track_run(s, g->r, g->tm, &g->ntm, &ev, kind == ALIGN_EV_KVM_ENTRY, &cap_run))
				goto out;
			if (kind == ALIGN_EV_KVM_ENTRY)
				continue;
			/* only load_stops() wants them: VMs one after the other */
			for (size_t i = 0; s->vms_in_sequence && i < g->nvcpu_thr; i++)
				if (g->tm[i].tid == ev.pid)
					g->tm[i].last_exit = ev.ts;
			continue;
		}
		if (kind == ALIGN_EV_OTHER)
			continue;
		/* kvm:* is recorded system-wide: another VM's events are not this
		 * guest's (a write syscall is QEMU's I/O thread's) */
		if (kind != ALIGN_EV_WRITE && unlikely(!tid_is_vcpu(g->tm, g->nvcpu_thr, ev.pid))) {
			g->nforeign++;
			continue;
		}
		for (size_t i = 0; i < align_nr_source_ios; i++) {
			const struct align_source_io *d = align_source_ios[i];

			if ((d->host_events & ALIGN_EV_BIT(kind)) && d->host_event(g, &ev, kind) < 0)
				goto out;
		}
	}
	if (rc < 0)
		goto out;
	ret = 0;
out:
	if (sources_end(g, begun, !ret) < 0)
		ret = -1;
	if (!ret && load_stops(s, g->tm, g->nvcpu_thr))
		ret = -1;
	if (g->r)
		vt_td_read_close(g->r);
	g->r = NULL;
	free(kinds);
	return ret;
}

static int load_host(struct align_samples *s, const char *dir, int is_dir,
		     const struct align_load_opts *o)
{
	char path[SRC_PATH_MAX], mpath[SRC_PATH_MAX];
	struct align_gather g = { .s = s, .o = o, .mpath = mpath, .path = path };
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
	g.tm = calloc(SRC_MAX_THREADS, sizeof(*g.tm));
	if (!g.tm)
		return vt_err_set("out of memory");
	if (file_exists(mpath)) {
		m = vt_meta_read(mpath);
		if (!m)
			goto out;
	} else {
		align_gather_note(s, "host: %s: missing (no tsc.hz, no debugfs readings)", mpath);
	}
	g.m = m;
	if (o->host_hz) {
		s->in.host_hz = o->host_hz;
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "option --tsc-hz");
	} else if (m && !vt_meta_get_u64(m, VT_MK_TSC_HZ, &v) && v) {
		s->in.host_hz = v;
		snprintf(s->host_hz_from, sizeof(s->host_hz_from), "%s",
			 vt_meta_get(m, VT_MK_TSC_HZ_SOURCE) ?
			 vt_meta_get(m, VT_MK_TSC_HZ_SOURCE) : "meta");
	}
	if (m) {
		if (!vt_meta_get_u64(m, VT_MK_RECORD_START_TSC_HOST, &v))
			s->in.span_tsc_host_start = v;
		if (!vt_meta_get_u64(m, VT_MK_RECORD_STOP_TSC_HOST, &v))
			s->in.span_tsc_host_end = v;
		for (size_t i = 0; i < align_nr_source_ios; i++)
			if (align_source_ios[i]->host_meta && align_source_ios[i]->host_meta(&g) < 0)
				goto out;
		if (load_threads(m, g.tm, &g.ntm) < 0)
			goto out;
		g.nvcpu_thr = g.ntm;
	}
	if (file_exists(path)) {
		if (load_tracedat(&g))
			goto out;
	} else {
		align_gather_note(s, "host: %s: missing (no tracepoint offsets, no host marker "
				  "events)", path);
	}
	for (size_t i = 0; i < align_nr_source_ios; i++)
		if (align_source_ios[i]->host_notes)
			align_source_ios[i]->host_notes(s);
	ret = 0;
out:
	vt_meta_free(m);
	free(g.tm);
	return ret;
}

/*
 * The guest's trace.dat (a trace-cmd guest file, or the guest kernel
 * recording of a vmtrace guest directory): its trace id and TSC frequency,
 * what the sources take of it (trace-cmd's TIME_SHIFT).  Only the header
 * is read here: the reader is kept, at its first event, for the inside
 * check.
 */
static int load_guest_tracedat(struct align_gather *g, const char *path)
{
	struct vt_td_reader *r = vt_td_read_open(path);
	struct align_samples *s = g->s;
	uint64_t hz;
	int ret = 0;

	if (!r)
		return -1;
	if (vt_td_read_warning(r))
		vt_warn("%s", vt_td_read_warning(r));
	snprintf(s->guest_td, sizeof(s->guest_td), "%s", path);
	(void)vt_td_read_trace_id(r, &s->guest_trace_id);
	/* the option here too: a GUESTDIR that is a trace.dat has no meta */
	if (g->o->guest_hz) {
		s->in.guest_hz = g->o->guest_hz;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "option --guest-tsc-hz");
	} else if (!vt_td_read_tsc_hz(r, &hz)) {
		s->in.guest_hz = hz;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "trace.dat TSC2NSEC option");
	}
	for (size_t i = 0; i < align_nr_source_ios && !ret; i++)
		if (align_source_ios[i]->guest_trace)
			ret = align_source_ios[i]->guest_trace(g, r, path);
	if (ret) {
		vt_td_read_close(r);
		return ret;
	}
	s->guest_r = r;		/* one guest trace.dat per load */
	return 0;
}

static int load_guest(struct align_samples *s, const char *dir, int is_dir,
		      const struct align_load_opts *o)
{
	char path[SRC_PATH_MAX], mpath[SRC_PATH_MAX];
	struct align_gather g = { .s = s, .o = o };
	struct vt_meta *m = NULL;
	uint64_t v;

	if (!is_dir)
		return load_guest_tracedat(&g, dir);
	snprintf(mpath, sizeof(mpath), "%s/%s", dir, VT_META_FILE);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	if (file_exists(path) && load_guest_tracedat(&g, path))
		return -1;
	if (file_exists(mpath)) {
		m = vt_meta_read(mpath);
		if (!m)
			return -1;
	}
	if (o->guest_hz) {
		s->in.guest_hz = o->guest_hz;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "option --guest-tsc-hz");
	} else if (m && !vt_meta_get_u64(m, VT_MK_TSC_HZ, &v) && v) {
		s->in.guest_hz = v;
		snprintf(s->guest_hz_from, sizeof(s->guest_hz_from), "meta");
	}
	vt_meta_free(m);
	for (size_t i = 0; i < align_nr_source_ios; i++)
		if (align_source_ios[i]->guest_dir && align_source_ios[i]->guest_dir(&g, dir) < 0)
			return -1;
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
	/* the notes' room first: a note cannot fail, nor be lost */
	s->notes = calloc(1, SRC_NOTES_MAX);
	if (!s->notes)
		return vt_err_set("out of memory");
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
		align_gather_note(s, "guest: %zu marker records rejected (corrupt/truncated)",
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
	if (s->guest_r)
		vt_td_read_close(s->guest_r);
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
