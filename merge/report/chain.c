/*
 * chain.c - the I/O chain analyser of `vmtrace report` / `vmtrace export`:
 * fed merge's events in time order (one thread, the merge loop), it builds
 * per guest block request the chain Python call -> syscall -> block issue
 * -> kick -> QEMU I/O -> injection -> guest irq -> completion -> syscall
 * return -> Python return from the links present, and the per-stage,
 * per-function and per-vCPU exit statistics.  Allocates: memory grows with
 * the I/O events (requests, syscalls, kicks, injections, irqs), threads and
 * names, not with the other events.  Matching rules: docs/report.md.
 * This file: the chain model and the stream (report_feed); the rest of the
 * analyser is listed in chain_int.h.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "crit.h"

#define STACK_MAX	2048	/* bytes of a Python stack string */
#define STACK_SEP	" > "
#define NAME_CAP0	4096

const char report_link_chars[RL_NR + 1] = "PSQIKHDJRCXE";
const char *const report_link_names[RL_NR] = {
	"py_begin", "sys_enter", "rq_insert", "rq_issue", "kick", "host_io_begin",
	"host_io_end", "inject", "guest_irq", "rq_complete", "sys_exit", "py_end",
};

const char *const report_how_names[RH_NR] = {
	"", "thread", "key", "cpu", "notify-addr", "exact-offset", "covering", "split", "rmw",
	"flush", "msi", "time-guess",
};

const struct report_stage report_stages[REPORT_NR_STAGES] = {
	{ "py_to_sys", "Python call -> syscall entry", RL_PY_BEGIN, RL_SYS_ENTER },
	{ "sys_to_issue", "syscall entry -> block issue", RL_SYS_ENTER, RL_ISSUE },
	{ "queue", "block insert -> issue", RL_INSERT, RL_ISSUE },
	{ "issue_to_kick", "block issue -> kick (host exit)", RL_ISSUE, RL_KICK },
	{ "kick_to_host_io", "kick -> QEMU I/O syscall", RL_KICK, RL_HOST_BEGIN },
	{ "host_io", "QEMU I/O syscall (host disk)", RL_HOST_BEGIN, RL_HOST_END },
	{ "host_io_to_inject", "QEMU I/O done -> irq injection", RL_HOST_END, RL_INJECT },
	{ "inject_to_irq", "irq injection -> guest irq handler", RL_INJECT, RL_IRQ },
	{ "irq_to_complete", "guest irq -> block completion", RL_IRQ, RL_COMPLETE },
	{ "complete_to_sys_exit", "block completion -> syscall return", RL_COMPLETE, RL_SYS_EXIT },
	{ "sys_exit_to_py_end", "syscall return -> Python return", RL_SYS_EXIT, RL_PY_END },
	{ "device", "TOTAL block request (issue -> complete)", RL_ISSUE, RL_COMPLETE },
	{ "host", "TOTAL host side (kick -> injection)", RL_KICK, RL_INJECT },
	{ "syscall", "TOTAL syscall (entry -> return)", RL_SYS_ENTER, RL_SYS_EXIT },
};

enum ncls {
	N_UNKNOWN = 0, N_NONE, N_SYS_ENTER, N_SYS_EXIT, N_RQ_INSERT, N_RQ_ISSUE,
	N_RQ_COMPLETE, N_KICK, N_INJECT, N_IRQ, N_EXIT_EVENT, N_EXIT_SLICE,
	N_URING_SUBMIT, N_URING_DONE, N_BIO_QUEUE,
};

/* guest-physical ranges of the in-kernel interrupt controllers and timer
 * (IOAPIC, HPET, LAPIC): their MMIO writes are not device notifies */
#define MMIO_PLATFORM_LO	0xfec00000ULL
#define MMIO_PLATFORM_HI	0xfeefffffULL
#define KVM_TRACE_MMIO_WRITE	2	/* kvm_mmio's type of a write */
/* The first port of x86's PCI I/O space (Linux's PCIBIOS_MIN_IO; firmware
 * places I/O BARs from 0xc000 or 0x6000): a legacy virtio-pci device's
 * queue-notify port (its I/O BAR + 16) is at or above it; below are the
 * platform's fixed ports (PIC, PIT, CMOS/RTC 0x70, POST 0x80, serial, PCI
 * config 0xcf8, fw_cfg, ACPI) and the sync markers' 0x5f0 and 0xe9. */
#define PIO_PCI_MIN		0x1000

struct report *report_new(struct merge_tables *tb, int all_calls)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r) {
		vt_err_set("report: out of memory");
		return NULL;
	}
	r->tables = tb;
	r->all_calls = all_calls;
	r->k_dev = merge_str_intern0(r->tables, "dev");
	r->k_sector = merge_str_intern0(r->tables, "sector");
	r->k_nr_sector = merge_str_intern0(r->tables, "nr_sector");
	r->k_rwbs = merge_str_intern0(r->tables, "rwbs");
	r->k_name = merge_str_intern0(r->tables, "name");
	r->k_id = merge_str_intern0(r->tables, "id");
	r->k_port = merge_str_intern0(r->tables, "port");
	r->k_fd = merge_str_intern0(r->tables, "fd");
	r->k_pos = merge_str_intern0(r->tables, "pos");
	r->k_count = merge_str_intern0(r->tables, "count");
	r->k_pos_l = merge_str_intern0(r->tables, "pos_l");
	r->k_ret = merge_str_intern0(r->tables, "ret");
	r->k_rw = merge_str_intern0(r->tables, "rw");
	r->k_type = merge_str_intern0(r->tables, "type");
	r->k_gpa = merge_str_intern0(r->tables, "gpa");
	r->k_address = merge_str_intern0(r->tables, "address");
	r->k_data = merge_str_intern0(r->tables, "data");
	r->k_vector = merge_str_intern0(r->tables, "vector");
	r->k_gsi = merge_str_intern0(r->tables, "gsi");
	r->k_user_data = merge_str_intern0(r->tables, "user_data");
	r->k_opcode = merge_str_intern0(r->tables, "opcode");
	r->k_res = merge_str_intern0(r->tables, "res");
	r->k_offset = merge_str_intern0(r->tables, "offset");
	r->k_len = merge_str_intern0(r->tables, "len");
	r->inj_kind = 3;
	return r;
}

const char *report_str(const struct report *r, uint32_t id)
{
	return merge_str(r->tables, id);
}

/* QEMU's disk I/O syscalls (block/file-posix.c: thread pool, linux-aio,
 * io_uring) and their direction: R read, W write, F flush, D discard, S a
 * submission whose completion no syscall marks.  Plain read/write/readv/
 * writev are left out: in QEMU they are mostly eventfd, socket and chardev
 * traffic, not the disk.  io_getevents is a completion wait, not an I/O. */
static const struct { const char *name; char dir; } io_syscalls[] = {
	{ "pread64", 'R' }, { "preadv", 'R' }, { "preadv2", 'R' },
	{ "pwrite64", 'W' }, { "pwritev", 'W' }, { "pwritev2", 'W' },
	{ "fsync", 'F' }, { "fdatasync", 'F' }, { "sync_file_range", 'F' },
	{ "fallocate", 'D' }, { "io_uring_enter", 'S' }, { "io_submit", 'S' },
};

static uint8_t io_syscall_dir(const char *s)
{
	for (size_t i = 0; i < sizeof(io_syscalls) / sizeof(*io_syscalls); i++)
		if (!strcmp(s, io_syscalls[i].name))
			return (uint8_t)io_syscalls[i].dir;
	return 0;
}

/* The operation of a block layer rwbs string ("FWS" = preflush + write +
 * sync, "FF" = flush): 'R', 'W', 'F' (flush), 'D' (discard), 'N', 0. */
char report_rwbs_op(const char *s)
{
	if (s[0] == 'F' && s[1] && strchr("RWDFN", s[1]))
		return s[1];
	return s[0];
}

static uint8_t classify(struct report *r, uint32_t id)
{
	const char *s = merge_str(r->tables, id);

	if (!strncmp(s, "sys_enter_", 10) || !strcmp(s, "sys_enter")) {
		r->sysname[id] = merge_str_intern0(r->tables, s[9] ? s + 10 : "syscall");
		r->sysio[id] = io_syscall_dir(s[9] ? s + 10 : "");
		return N_SYS_ENTER;
	}
	if (!strncmp(s, "sys_exit_", 9) || !strcmp(s, "sys_exit"))
		return N_SYS_EXIT;
	if (!strcmp(s, "block_rq_insert"))
		return N_RQ_INSERT;
	if (!strcmp(s, "block_rq_issue"))
		return N_RQ_ISSUE;
	if (!strcmp(s, "block_rq_complete"))
		return N_RQ_COMPLETE;
	if (!strcmp(s, "kvm_pio") || !strcmp(s, "kvm_mmio") || !strcmp(s, "kvm_fast_mmio"))
		return N_KICK;
	if (!strcmp(s, "kvm_msi_set_irq") || !strcmp(s, "kvm_set_irq") ||
	    !strcmp(s, "kvm_inj_virq"))
		return N_INJECT;
	if (!strcmp(s, "irq_handler_entry"))
		return N_IRQ;
	if (!strcmp(s, "kvm_userspace_exit") || !strcmp(s, "kvm_hypercall"))
		return N_EXIT_EVENT;
	if (!strncmp(s, "exit: ", 6))
		return N_EXIT_SLICE;
	/* io_uring_submit_sqe before Linux 6.4 */
	if (!strcmp(s, "io_uring_submit_req") || !strcmp(s, "io_uring_submit_sqe"))
		return N_URING_SUBMIT;
	if (!strcmp(s, "io_uring_complete"))
		return N_URING_DONE;
	if (!strcmp(s, "block_bio_queue"))
		return N_BIO_QUEUE;
	return N_NONE;
}

static int grow_names(struct report *r, uint32_t id)
{
	uint32_t nc = r->ncap ? r->ncap : NAME_CAP0;

	while (nc <= id)
		nc *= 2;
	uint8_t *c = realloc(r->cls, nc);

	if (!c)
		return -1;
	r->cls = c;
	uint32_t *sn = realloc(r->sysname, nc * sizeof(*sn));

	if (!sn)
		return -1;
	r->sysname = sn;
	uint8_t *io = realloc(r->sysio, nc);

	if (!io)
		return -1;
	r->sysio = io;
	memset(r->cls + r->ncap, 0, nc - r->ncap);
	memset(r->sysname + r->ncap, 0, (nc - r->ncap) * sizeof(*sn));
	memset(r->sysio + r->ncap, 0, nc - r->ncap);
	r->ncap = nc;
	return 0;
}

static struct tstate *tstate(struct report *r, uint32_t track)
{
	if (unlikely(track >= r->nts)) {
		uint32_t nc = r->nts ? r->nts : 64;

		while (nc <= track)
			nc *= 2;
		struct tstate *n = realloc(r->ts, nc * sizeof(*n));

		if (!n)
			return NULL;
		memset(n + r->nts, 0, (nc - r->nts) * sizeof(*n));
		for (uint32_t i = r->nts; i < nc; i++) {
			n[i].open_sys = CHAIN_NONE;
			n[i].uring_last = CHAIN_NONE;
		}
		r->ts = n;
		r->nts = nc;
	}
	struct tstate *t = &r->ts[track];

	if (unlikely(!t->kind)) {
		const struct merge_track *mt = merge_track(r->tables, track);

		/* QEMU's threads are the host side of the chain; every other
		 * thread (guests, or a single guest input read as machine 0)
		 * is a side that issues requests */
		t->kind = mt->machine == MERGE_MACHINE_HOST && mt->qemu ? TS_QEMU : TS_OTHER;
	}
	return t;
}

/* The vCPU of an exit or kick on a QEMU thread (a host track: its vCPU
 * thread's number, CHAIN_NONE for another thread of QEMU's). */
static int32_t vcpu_of(const struct report *r, const struct merge_event *ev)
{
	const struct merge_track *mt = merge_track(r->tables, ev->track);

	return mt->vcpu ? (int32_t)mt->vcpu - 1 : CHAIN_NONE;
}

static int exit_count(struct report *r, int32_t vcpu, uint32_t name, uint64_t ns, int slice)
{
	uint64_t key = ((uint64_t)(uint32_t)(vcpu + 1) << 32 | name) ^ (slice ? 0 : 1ULL << 63);
	uint32_t *v = chain_hmap_slot(&r->exitmap, key, 1);

	if (!v)
		return vt_err_set("report: out of memory");
	if (*v == UINT32_MAX) {
		struct report_exit *e = CHAIN_VEC_PUSH(r, r->exits);

		if (!e)
			return -1;
		*v = (uint32_t)(r->exits.n - 1);
		e->vcpu = vcpu;
		e->name = name;
		e->count = 0;
		e->ns = 0;
		e->is_slice = slice;
	}
	r->exits.a[*v].count++;
	r->exits.a[*v].ns += ns;
	return 0;
}

/* The bit of machine @m in a machine set (63: 63 and up). */
static uint64_t machine_bit(uint32_t m)
{
	return 1ULL << (m < 63 ? m : 63);
}

static int fn_add(struct report *r, uint32_t name, uint32_t machine, uint64_t incl,
		  uint64_t wait)
{
	if (name >= r->fncap) {
		uint32_t nc = r->fncap ? r->fncap : NAME_CAP0;

		while (nc <= name)
			nc *= 2;
		struct fnacc *n = realloc(r->fns, nc * sizeof(*n));

		if (!n)
			return vt_err_set("report: out of memory");
		memset(n + r->fncap, 0, (nc - r->fncap) * sizeof(*n));
		r->fns = n;
		r->fncap = nc;
	}
	r->fns[name].calls++;
	r->fns[name].incl += incl;
	r->fns[name].wait += wait;
	r->fns[name].machines |= machine_bit(machine);
	return 0;
}

static int on_begin(struct report *r, const struct merge_event *ev, struct tstate *t)
{
	const struct merge_track *mt = merge_track(r->tables, ev->track);

	if (t->nfr == t->capfr) {
		uint32_t nc = t->capfr ? t->capfr * 2 : 16;
		struct frame *n = realloc(t->fr, nc * sizeof(*n));

		if (!n)
			return vt_err_set("report: out of memory");
		t->fr = n;
		t->capfr = nc;
	}
	struct frame *f = &t->fr[t->nfr++];

	f->ts = ev->ts_ns;
	f->name = ev->name;
	f->sys_head = CHAIN_NONE;
	f->sys_at_begin = t->sys_total_ns;
	/* (report_feed classified the name) */
	f->is_exit = mt->machine == MERGE_MACHINE_HOST && r->cls[ev->name] == N_EXIT_SLICE;
	if (f->is_exit)
		r->have_exit_slices = 1;
	if (mt->machine != MERGE_MACHINE_HOST && t->nfr == 1) {
		uint32_t *v = chain_hmap_slot(&r->pytid, (uint32_t)mt->tid, 1);

		if (!v)
			return vt_err_set("report: out of memory");
		*v = ev->track;
	}
	return 0;
}

static int on_end(struct report *r, const struct merge_event *ev, struct tstate *t)
{
	if (!t->nfr)
		return 0;
	struct frame *f = &t->fr[--t->nfr];
	uint64_t dur = ev->ts_ns - f->ts;

	if (f->is_exit)
		return exit_count(r, vcpu_of(r, ev), f->name, dur, 1);
	for (int32_t s = f->sys_head; s != CHAIN_NONE; s = r->sys.a[s].next_in_frame)
		r->sys.a[s].py_end = ev->ts_ns;
	return fn_add(r, f->name, merge_track(r->tables, ev->track)->machine, dur,
		      t->sys_total_ns - f->sys_at_begin);
}

/* The track holding the function slices of guest thread @tid (@self first). */
static uint32_t py_track_of(struct report *r, uint32_t self, struct tstate *t, int32_t tid)
{
	if (t->nfr)
		return self;
	uint32_t *v = chain_hmap_slot(&r->pytid, (uint32_t)tid, 0);

	return v ? *v : UINT32_MAX;
}

static uint32_t stack_of(struct report *r, const struct tstate *pt)
{
	char buf[STACK_MAX];
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < pt->nfr; i++) {
		const char *nm = merge_str(r->tables, pt->fr[i].name);
		int w = snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? STACK_SEP : "", nm);

		if (w < 0 || (size_t)w >= sizeof(buf) - n)
			break;
		n += (size_t)w;
	}
	return merge_str_intern(r->tables, buf, n);
}

static int on_sys_enter(struct report *r, const struct merge_event *ev, struct tstate *t)
{
	const struct merge_track *mt = merge_track(r->tables, ev->track);

	r->sys_machines |= machine_bit(mt->machine);
	/* (tstate made every thread TS_QEMU or TS_OTHER) */
	if (t->kind == TS_QEMU) {
		uint64_t v;

		t->host_enter = ev->ts_ns;
		t->host_bios = 0;
		t->host_name = r->sysname[ev->name];
		t->host_io = r->sysio[ev->name];
		t->host_fd = arg_u64(ev, r->k_fd, &v) == 0 ? (int64_t)(uint32_t)v : CHAIN_NONE;
		/* another fd of an image file: the one its extents name */
		if (unlikely(r->fdalias.n) && t->host_fd != CHAIN_NONE)
			t->host_fd = chain_extents_canon(r, mt->pid, t->host_fd);
		t->host_len = 0;
		arg_u64(ev, r->k_count, &t->host_len);
		arg_u64(ev, r->k_len, &t->host_len);
		/* pos (pread64/pwrite64); pos_l (preadv & co: the whole
		 * offset on a 64-bit host); offset (fallocate) */
		t->host_has_off = arg_u64(ev, r->k_pos, &t->host_off) == 0 ||
				  arg_u64(ev, r->k_pos_l, &t->host_off) == 0 ||
				  arg_u64(ev, r->k_offset, &t->host_off) == 0;
		return 0;
	}
	struct report_sys *s = CHAIN_VEC_PUSH(r, r->sys);

	if (!s)
		return -1;
	int32_t idx = (int32_t)(r->sys.n - 1);

	memset(s, 0, sizeof(*s));
	s->enter = ev->ts_ns;
	s->name = r->sysname[ev->name];
	s->machine = mt->machine;
	s->tid = mt->tid;
	s->next_in_frame = CHAIN_NONE;
	if (!strcmp(merge_str(r->tables, s->name), "syscall")) {
		uint64_t nr;
		char b[32];

		if (arg_u64(ev, r->k_id, &nr) == 0) {
			snprintf(b, sizeof(b), "syscall %llu", (unsigned long long)nr);
			s->name = merge_str_intern0(r->tables, b);
		}
	}
	s->py_track = py_track_of(r, ev->track, t, mt->tid);
	if (s->py_track != UINT32_MAX) {
		struct tstate *pt = tstate(r, s->py_track);

		if (!pt)
			return vt_err_set("report: out of memory");
		t = &r->ts[ev->track];
		if (pt->nfr) {
			struct frame *top = &pt->fr[pt->nfr - 1];

			s->py_begin = top->ts;
			s->stack = stack_of(r, pt);
			s->next_in_frame = top->sys_head;
			top->sys_head = idx;
		}
	}
	t->open_sys = idx;
	return 0;
}

static int on_sys_exit(struct report *r, const struct merge_event *ev, struct tstate *t)
{
	if (t->kind == TS_QEMU) {
		/* a submission whose bios were queued (on_bio_queue): its
		 * operations are those, with their disk bytes */
		if (t->host_enter && t->host_io &&
		    !(t->host_io == 'S' && t->host_bios)) {
			struct hostio *h = CHAIN_VEC_PUSH(r, r->hostio);
			uint64_t ret;

			if (!h)
				return -1;
			memset(h, 0, sizeof(*h));
			h->p.enter = t->host_enter;
			/* a submission returns before its I/O is done */
			h->p.exit = t->host_io == 'S' ? 0 : ev->ts_ns;
			h->p.tid = merge_track(r->tables, ev->track)->tid;
			h->p.name = t->host_name;
			h->p.fd = t->host_fd;
			h->p.dir = t->host_io == 'S' ? '?' : (char)t->host_io;
			h->p.off = t->host_off;
			h->p.len = t->host_len;
			/* the bytes done: the return of a read or write */
			if ((h->p.dir == 'R' || h->p.dir == 'W') &&
			    arg_u64(ev, r->k_ret, &ret) == 0 && (int64_t)ret > 0)
				h->p.len = ret;
			h->p.has_off = t->host_has_off && h->p.len;
		}
		t->host_enter = 0;
		return 0;
	}
	if (t->open_sys == CHAIN_NONE)
		return 0;
	struct report_sys *s = &r->sys.a[t->open_sys];
	uint64_t dur = ev->ts_ns - s->enter;

	s->exit = ev->ts_ns;
	t->open_sys = CHAIN_NONE;
	if (s->py_track != UINT32_MAX)
		r->ts[s->py_track].sys_total_ns += dur;
	else
		t->sys_total_ns += dur;
	return 0;
}

/* A flush request is keyed at sector all-ones: the kernel reports its
 * issue at sector 0 (blk_rq_trace_sector) and its completion at the
 * request's unset position, 2^64-1. */
#define FLUSH_SECTOR	UINT64_MAX

static uint64_t ev_sector(struct report *r, const struct merge_event *ev)
{
	uint64_t sector = 0;
	uint32_t rwbs = arg_str(ev, r->k_rwbs);

	arg_u64(ev, r->k_sector, &sector);
	if (rwbs != MERGE_NO_STR && report_rwbs_op(merge_str(r->tables, rwbs)) == 'F')
		return FLUSH_SECTOR;
	return sector;
}

static uint64_t rq_key(uint32_t machine, uint64_t dev, uint64_t sector)
{
	return chain_mix(sector) ^ (dev << 8 | machine);
}

static int same_rq(const struct report_req *q, uint32_t machine, uint64_t dev, uint64_t sector)
{
	return q->machine == machine && q->dev == dev && q->sector == sector;
}

/* block_rq_insert / issue: the pending request of this key not yet issued,
 * or a new one appended to the key's list. */
static int on_rq_start(struct report *r, const struct merge_event *ev, struct tstate *t,
		       int link)
{
	const struct merge_track *mt = merge_track(r->tables, ev->track);
	uint64_t dev = 0, sector = ev_sector(r, ev), nr = 0;

	arg_u64(ev, r->k_dev, &dev);
	arg_u64(ev, r->k_nr_sector, &nr);
	uint32_t *head = chain_hmap_slot(&r->pending, rq_key(mt->machine, dev, sector), 1);
	int32_t last = CHAIN_NONE;

	if (!head)
		return vt_err_set("report: out of memory");
	for (int32_t i = *head == UINT32_MAX ? CHAIN_NONE : (int32_t)*head; i != CHAIN_NONE;
	     i = r->reqs.a[i].next_same) {
		struct report_req *q = &r->reqs.a[i];

		last = i;
		if (link == RL_ISSUE && same_rq(q, mt->machine, dev, sector) &&
		    !(q->mask & (1u << RL_ISSUE))) {
			q->t[RL_ISSUE] = ev->ts_ns;
			q->mask |= 1u << RL_ISSUE;
			q->how[RL_ISSUE] = RH_KEY;
			q->cpu = ev->cpu;
			if (q->sys == CHAIN_NONE && t->open_sys != CHAIN_NONE)
				q->sys = t->open_sys;
			return 0;
		}
	}
	struct report_req *q = CHAIN_VEC_PUSH(r, r->reqs);

	if (!q)
		return -1;
	int32_t idx = (int32_t)(r->reqs.n - 1);

	memset(q, 0, sizeof(*q));
	q->t[link] = ev->ts_ns;
	q->mask = 1u << link;
	q->how[link] = RH_KEY;
	q->machine = mt->machine;
	q->cpu = ev->cpu;
	q->cpu_done = CHAIN_NONE;
	q->tid = mt->tid;
	q->dev = (uint32_t)dev;
	q->sector = sector;
	q->nr_sector = (uint32_t)nr;
	q->rwbs = arg_str(ev, r->k_rwbs);
	q->sys = t->open_sys;
	q->next_same = CHAIN_NONE;
	q->host_tid = CHAIN_NONE;
	q->kick_vcpu = CHAIN_NONE;
	q->kick_tid = CHAIN_NONE;
	q->inj_tid = CHAIN_NONE;
	/* append to the key's list (the map did not move since the lookup) */
	if (last == CHAIN_NONE)
		*head = (uint32_t)idx;
	else
		r->reqs.a[last].next_same = idx;
	return 0;
}

static int on_rq_complete(struct report *r, const struct merge_event *ev)
{
	const struct merge_track *mt = merge_track(r->tables, ev->track);
	uint64_t dev = 0, sector = ev_sector(r, ev);

	arg_u64(ev, r->k_dev, &dev);
	uint32_t *head = chain_hmap_slot(&r->pending, rq_key(mt->machine, dev, sector), 0);
	int32_t prev = CHAIN_NONE;

	if (!head || *head == UINT32_MAX)
		return 0;
	for (int32_t i = (int32_t)*head; i != CHAIN_NONE; prev = i, i = r->reqs.a[i].next_same) {
		struct report_req *q = &r->reqs.a[i];

		if (!same_rq(q, mt->machine, dev, sector) || !(q->mask & (1u << RL_ISSUE)))
			continue;
		q->t[RL_COMPLETE] = ev->ts_ns;
		q->mask |= 1u << RL_COMPLETE;
		q->how[RL_COMPLETE] = RH_KEY;
		q->cpu_done = ev->cpu;
		if (prev == CHAIN_NONE)
			*head = q->next_same == CHAIN_NONE ? UINT32_MAX : (uint32_t)q->next_same;
		else
			r->reqs.a[prev].next_same = q->next_same;
		q->next_same = CHAIN_NONE;
		return 0;
	}
	return 0;
}

static int is_host(const struct report *r, const struct merge_event *ev)
{
	return merge_track(r->tables, ev->track)->machine == MERGE_MACHINE_HOST;
}

int chain_kick_addr(const struct report *r, const struct merge_event *ev, uint64_t *addr)
{
	uint64_t port = 0, v = 0;

	*addr = 0;
	if (arg_u64(ev, r->k_port, &port) == 0) {
		if (port < PIO_PCI_MIN)
			return 0;	/* a platform port or a sync marker */
		if (arg_u64(ev, r->k_rw, &v) == 0 && v != 1)
			return 0;	/* a port read */
		*addr = port;
	} else if (arg_u64(ev, r->k_gpa, addr) == 0) {
		if (arg_u64(ev, r->k_type, &v) == 0 && v != KVM_TRACE_MMIO_WRITE)
			return 0;	/* an MMIO read */
		if (*addr >= MMIO_PLATFORM_LO && *addr <= MMIO_PLATFORM_HI)
			return 0;	/* LAPIC / IOAPIC / HPET */
	}
	return 1;
}

/* kvm_pio / kvm_mmio / kvm_fast_mmio: counted as an exit; a kick candidate
 * when it can be a device notify (chain_kick_addr) */
static int on_kick(struct report *r, const struct merge_event *ev)
{
	const struct merge_track *mt = merge_track(r->tables, ev->track);
	uint64_t addr;

	if (exit_count(r, vcpu_of(r, ev), ev->name, 0, 0) < 0)
		return -1;
	if (!chain_kick_addr(r, ev, &addr))
		return 0;
	struct kick *k = CHAIN_VEC_PUSH(r, r->kicks);

	if (!k)
		return -1;
	k->ts = ev->ts_ns;
	k->vcpu = vcpu_of(r, ev);
	k->tid = mt->tid;
	k->addr = addr;
	return 0;
}

/* kvm_msi_set_irq / kvm_set_irq / kvm_inj_virq, with what names the
 * interrupt (MSI address and data, gsi, vector) */
static int on_inject(struct report *r, const struct merge_event *ev)
{
	const char *nm = merge_str(r->tables, ev->name);
	struct inj *j = CHAIN_VEC_PUSH(r, r->injects);

	if (!j)
		return -1;
	memset(j, 0, sizeof(*j));
	j->ts = ev->ts_ns;
	j->tid = merge_track(r->tables, ev->track)->tid;
	if (!strcmp(nm, "kvm_msi_set_irq")) {
		j->kind = 0;
		arg_u64(ev, r->k_address, &j->addr);
		arg_u64(ev, r->k_data, &j->data);
	} else if (!strcmp(nm, "kvm_set_irq")) {
		j->kind = 1;
		arg_u64(ev, r->k_gsi, &j->data);
	} else {
		j->kind = 2;
		arg_u64(ev, r->k_vector, &j->data);
	}
	if (j->kind < r->inj_kind)
		r->inj_kind = j->kind;
	return 0;
}

/* io_uring_submit_req (on a QEMU thread) starts an operation keyed by its
 * user_data; io_uring_complete (any host context) ends it.  The
 * tracepoints carry no file offset: the link to a request is by time. */
static int on_uring(struct report *r, const struct merge_event *ev, struct tstate *t, int done)
{
	static const struct { uint64_t op; const char *name; char dir; } ops[] = {
		{ 1, "io_uring READV", 'R' }, { 2, "io_uring WRITEV", 'W' },
		{ 3, "io_uring FSYNC", 'F' }, { 4, "io_uring READ_FIXED", 'R' },
		{ 5, "io_uring WRITE_FIXED", 'W' }, { 22, "io_uring READ", 'R' },
		{ 23, "io_uring WRITE", 'W' },
	};
	uint64_t ud = 0, op = UINT64_MAX;

	arg_u64(ev, r->k_user_data, &ud);
	r->have_uring = 1;
	if (done) {
		uint32_t *v = chain_hmap_slot(&r->uring, ud, 0);

		if (v && *v != UINT32_MAX) {
			r->hostio.a[*v].p.exit = ev->ts_ns;
			*v = UINT32_MAX;
		}
		return 0;
	}
	if (t->kind != TS_QEMU)
		return 0;
	arg_u64(ev, r->k_opcode, &op);
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
		if (ops[i].op != op)
			continue;
		uint32_t *v = chain_hmap_slot(&r->uring, ud, 1);
		struct hostio *h = v ? CHAIN_VEC_PUSH(r, r->hostio) : NULL;

		if (!h)
			return vt_err_set("report: out of memory");
		memset(h, 0, sizeof(*h));
		h->p.enter = ev->ts_ns;
		h->p.tid = merge_track(r->tables, ev->track)->tid;
		h->p.name = merge_str_intern0(r->tables, ops[i].name);
		h->p.fd = CHAIN_NONE;
		h->p.dir = ops[i].dir;
		*v = (uint32_t)(r->hostio.n - 1);
		t->uring_last = ops[i].dir == 'R' || ops[i].dir == 'W' ? (int32_t)*v : CHAIN_NONE;
		return 0;
	}
	return 0;
}

static uint64_t bio_key(uint64_t dev, uint64_t sector)
{
	return chain_mix(sector ^ dev << 44) ^ dev;
}

/* block_bio_queue on a QEMU thread: the disk bytes of what QEMU submitted
 * where no syscall carries them (io_submit's iocbs and io_uring's SQEs are
 * in its memory): the bio of the io_uring operation the thread submitted
 * just before (the kernel issues an SQE right after its submit event),
 * else an operation of its own, from its queueing to the completion of its
 * bytes (block_rq_complete, on_bio_done).  Inside a syscall that names its
 * offset (pread64 & co) the syscall is the operation: ignored. */
static int on_bio_queue(struct report *r, const struct merge_event *ev, struct tstate *t)
{
	uint64_t dev = 0, sector = 0, nr = 0;
	uint32_t rwbs = arg_str(ev, r->k_rwbs);
	char dir = rwbs == MERGE_NO_STR ? 0 : report_rwbs_op(merge_str(r->tables, rwbs));
	struct hostio *h;

	arg_u64(ev, r->k_dev, &dev);
	arg_u64(ev, r->k_sector, &sector);
	arg_u64(ev, r->k_nr_sector, &nr);
	if (!nr || (dir != 'R' && dir != 'W') || (t->host_enter && t->host_io && t->host_io != 'S'))
		return 0;
	size_t b;

	for (b = 0; b < r->bdevs.n && r->bdevs.a[b] != (uint32_t)dev; b++)
		;
	if (b == r->bdevs.n) {
		uint32_t *p = b < REPORT_BDEV_MAX ? CHAIN_VEC_PUSH(r, r->bdevs) : NULL;

		if (!p)
			return r->oom ? vt_err_set("report: out of memory") : 0;
		*p = (uint32_t)dev;
	}
	int64_t fd = REPORT_BDEV_FD + (int64_t)b;
	uint64_t off = sector * 512, len = nr * 512, phys = off;

	/* on an image file's disk: the file's offset (chain_extents.c) */
	if (r->ext.n)
		chain_extents_map(r, (uint32_t)dev, phys, len, &fd, &off);

	if (t->host_enter)
		t->host_bios = 1;
	if (t->uring_last != CHAIN_NONE) {
		h = &r->hostio.a[t->uring_last];
		if (!h->p.has_off && h->p.dir == dir) {
			h->p.fd = fd;
			h->p.off = off;
			h->p.len = len;
			h->p.has_off = 1;
			h->phys = phys;
			return 0;
		}
		/* the next bio of a large operation */
		if (h->p.has_off && h->p.fd == fd && h->p.dir == dir && h->p.off + h->p.len == off) {
			h->p.len += len;
			return 0;
		}
		t->uring_last = CHAIN_NONE;
	}
	uint32_t *v = chain_hmap_slot(&r->bios, bio_key(dev, sector), 1);

	if (!v || !(h = CHAIN_VEC_PUSH(r, r->hostio)))
		return vt_err_set("report: out of memory");
	memset(h, 0, sizeof(*h));
	h->p.enter = ev->ts_ns;
	h->p.tid = merge_track(r->tables, ev->track)->tid;
	/* a bio of io_uring's worker (a submission the kernel punted:
	 * ext4's direct writes) is io_uring's work, by its own name */
	const char *tn = merge_str(r->tables, merge_track(r->tables, ev->track)->name);

	h->p.name = t->host_enter ? t->host_name :
		    merge_str_intern0(r->tables, !strncmp(tn, "iou-wrk-", 8) ?
				      "io_uring worker bio" : "bio");
	h->p.fd = fd;
	h->p.off = off;
	h->p.len = len;
	h->p.dir = dir;
	h->p.has_off = 1;
	h->phys = phys;
	*v = (uint32_t)(r->hostio.n - 1);
	return 0;
}

/* block_rq_complete on the host: the queued bios (on_bio_queue) that start
 * in its range are done as far as it reaches (a partial completion leaves
 * the rest pending at its new start) */
static int on_bio_done(struct report *r, const struct merge_event *ev)
{
	uint64_t dev = 0, sector = 0, nr = 0;

	arg_u64(ev, r->k_dev, &dev);
	arg_u64(ev, r->k_sector, &sector);
	arg_u64(ev, r->k_nr_sector, &nr);
	for (uint64_t s = sector; s < sector + nr; s++) {
		uint32_t *v = chain_hmap_slot(&r->bios, bio_key(dev, s), 0);

		if (!v || *v == UINT32_MAX)
			continue;
		struct hostio *h = &r->hostio.a[*v];
		uint64_t end = h->phys + h->p.len, upto = (sector + nr) * 512;
		uint32_t idx = *v;

		*v = UINT32_MAX;
		if (upto >= end) {
			h->p.exit = ev->ts_ns;
			continue;
		}
		/* the rest of the bio, from where this completion ends */
		v = chain_hmap_slot(&r->bios, bio_key(dev, sector + nr), 1);
		if (!v)
			return vt_err_set("report: out of memory");
		*v = idx;
	}
	return 0;
}

int report_feed(struct report *r, const struct merge_event *ev)
{
	uint8_t c = N_NONE;

	r->events++;
	if (ev->kind != MERGE_EV_END) {
		if (unlikely(ev->name >= r->ncap) && grow_names(r, ev->name) < 0)
			return vt_err_set("report: out of memory");
		c = r->cls[ev->name];
		if (unlikely(c == N_UNKNOWN))
			c = r->cls[ev->name] = classify(r, ev->name);
		if (ev->kind == MERGE_EV_INSTANT && c == N_NONE)
			return 0;
	}
	struct tstate *t = tstate(r, ev->track);

	if (unlikely(!t))
		return vt_err_set("report: out of memory");
	if (ev->kind == MERGE_EV_BEGIN)
		return on_begin(r, ev, t);
	if (ev->kind == MERGE_EV_END)
		return on_end(r, ev, t);
	if (ev->kind != MERGE_EV_INSTANT)
		return 0;
	switch (c) {
	case N_SYS_ENTER:
		return on_sys_enter(r, ev, t);
	case N_SYS_EXIT:
		return on_sys_exit(r, ev, t);
	case N_RQ_INSERT:
		return t->kind == TS_OTHER ? on_rq_start(r, ev, t, RL_INSERT) : 0;
	case N_RQ_ISSUE:
		return t->kind == TS_OTHER ? on_rq_start(r, ev, t, RL_ISSUE) : 0;
	case N_RQ_COMPLETE:
		/* the host's: of QEMU's bios (a guest's requests are keyed
		 * by their machine: the host's completions find none) */
		if (r->bios.n && is_host(r, ev) && on_bio_done(r, ev) < 0)
			return -1;
		return t->kind == TS_OTHER ? on_rq_complete(r, ev) : 0;
	case N_BIO_QUEUE:
		return t->kind == TS_QEMU ? on_bio_queue(r, ev, t) : 0;
	case N_KICK:
		return t->kind == TS_OTHER ? 0 : on_kick(r, ev);
	case N_EXIT_EVENT:
		return t->kind == TS_OTHER ? 0 : exit_count(r, vcpu_of(r, ev), ev->name, 0, 0);
	/* injections and io_uring completions: from any host context (an
	 * irqfd's kworker, an interrupt): what they carry identifies them */
	case N_INJECT:
		return is_host(r, ev) ? on_inject(r, ev) : 0;
	case N_URING_SUBMIT:
	case N_URING_DONE:
		return is_host(r, ev) ? on_uring(r, ev, t, c == N_URING_DONE) : 0;
	case N_IRQ: {
		uint32_t nm = arg_str(ev, r->k_name);

		if (t->kind != TS_OTHER ||
		    (nm != MERGE_NO_STR && !strstr(merge_str(r->tables, nm), "virtio")))
			return 0;
		struct girq *g = CHAIN_VEC_PUSH(r, r->irqs);

		if (!g)
			return -1;
		g->ts = ev->ts_ns;
		g->machine = merge_track(r->tables, ev->track)->machine;
		g->cpu = ev->cpu;
		return 0;
	}
	default:
		return 0;
	}
}


void report_free(struct report *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nts; i++)
		free(r->ts[i].fr);
	free(r->ts);
	free(r->cls);
	free(r->sysname);
	free(r->sysio);
	free(r->reqs.a);
	free(r->sys.a);
	free(r->kicks.a);
	free(r->injects.a);
	free(r->hostio.a);
	free(r->irqs.a);
	free(r->exits.a);
	free(r->fnlist.a);
	free(r->fns);
	free(r->slow);
	for (int s = 0; s < REPORT_NR_STAGES; s++)
		free(r->samples[s]);
	chain_hmap_free(&r->pending);
	chain_hmap_free(&r->pytid);
	chain_hmap_free(&r->exitmap);
	chain_hmap_free(&r->uring);
	chain_hmap_free(&r->bios);
	free(r->bdevs.a);
	free(r->ext.a);
	free(r->fdalias.a);
	free(r->hlinks.a);
	free(r->devs.a);
	crit_free(r->crit);
	free(r);
}
