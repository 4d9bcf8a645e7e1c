/*
 * t-report-chain.c - the I/O chain analyser (merge/report/chain*.c) and the
 * state tracker / critical path (vstate.c, critpath.c) of `vmtrace report`,
 * fed events directly as the report's sink feeds them (report_feed, then
 * crit_feed), with answers known from the events: the cases the trace.dat
 * fixtures of tests/report do not make, each checked for what the report
 * says there (links, their times and methods, QEMU's operations, parts):
 *
 * - event classes: raw_syscalls' sys_enter/sys_exit ("syscall N"),
 *   kvm_set_irq and kvm_inj_virq (the lowest kind used), kvm_hypercall,
 *   io_uring_submit_sqe, an argument of the wrong type (absent);
 * - request keys: issued without an insert, two of a sector in flight,
 *   completed twice or before the issue, keys that collide (guest 257's
 *   machine bits over the device's; two sectors whose hashes differ by a
 *   device's bits);
 * - kicks (port and MMIO reads, platform ports, LAPIC, unknown vCPU),
 *   the notify address learned, guest irqs by vCPU and machine;
 * - QEMU's operations: the offset rule, a flush's fdatasync of the rule's
 *   fd, io_submit guessed by time, failed and empty syscalls, io_uring
 *   operations and the bios that give their bytes, io_submit's bio, an
 *   io_uring worker's bio, partial completions, more host disks than
 *   REPORT_BDEV_MAX;
 * - limits: a Python stack past its 2 KiB buffer, frames past 16, names
 *   past 4096 ids, tracks past 64, SCAN_MAX candidates per link search;
 * - states: a vCPU thread blocked, woken, run; a guest thread woken by an
 *   irq and by a thread, its call's parts and waker; malformed sched events;
 *   no state tracking fed; threads of equal running time;
 * - matching QEMU's operations (pass 1): exact, covering, split,
 *   read-modify-write, discard and write-zeroes, flushes, and what each
 *   search passes over; pass 2's guesses.
 * - vCPU threads found late: by an exit slice, by a sched_switch name
 *   (its number taken: the next free one), past CRIT_MAX_VCPUS none.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "check.h"
#include "err.h"
#include "merge/merge.h"
#include "merge/report/crit.h"

#define US		1000ULL
#define MS		1000000ULL
#define T0		(1000 * MS)

static struct merge_tables tb;		/* names and tracks (a pipeline's) */
static struct report *r;		/* the analyser under test */
static uint32_t gpy, gk, hv, hio, hother;	/* tracks: see setup() */

/* A fresh analyser and tracks: guest 1's Python thread 300 (gpy) and its
 * idle task (gk, tid 0); the host's QEMU (pid 4242) vCPU 0 thread 4243
 * (hv), its I/O thread 4250 (hio), a host thread 9000 of no VM (hother). */
static void setup(void)
{
	uint32_t q;

	report_free(r);
	merge_tables_free(&tb);
	memset(&tb, 0, sizeof(tb));
	q = merge_str_intern0(&tb, "qemu-system-x86");
	gpy = merge_track_get(&tb, 1, 300, 300, merge_str_intern0(&tb, "python3"), 0);
	gk = merge_track_get(&tb, 1, 0, 0, 0, 0);
	hv = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4243, q,
			     merge_str_intern0(&tb, "CPU 0/KVM"));
	merge_track(&tb, hv)->vcpu = 1;
	hio = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4250, q, 0);
	merge_track_mark_qemu(&tb, MERGE_MACHINE_HOST, 4242);
	hother = merge_track_get(&tb, MERGE_MACHINE_HOST, 9000, 9000,
				 merge_str_intern0(&tb, "other"), 0);
	r = report_new(&tb, 0);
	if (!r) {
		fprintf(stderr, "report_new: %s\n", vt_err_msg());
		exit(2);
	}
}

/* An event of @kind named @name on @track at @ts (CPU @cpu) with the
 * arguments of @args, space-separated: key=NUMBER (strtoull's, any base)
 * or key='TEXT' (a string, interned). */
static struct merge_event mk(uint32_t track, int kind, const char *name, uint64_t ts, int cpu,
			     const char *args)
{
	struct merge_event ev = {
		.ts_ns = ts, .track = track, .kind = (uint8_t)kind, .cpu = cpu,
		.name = name ? merge_str_intern0(&tb, name) : 0,
	};
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", args ? args : "");
	for (char *a = strtok_r(buf, " ", &save); a && ev.nr_args < MERGE_MAX_ARGS;
	     a = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(a, '=');
		struct merge_arg *g = &ev.args[ev.nr_args++];

		*eq = 0;
		g->key = merge_str_intern0(&tb, a);
		if (eq[1] == '\'') {	/* a string: key='text' (no spaces) */
			eq[strlen(eq + 1)] = 0;
			g->type = MERGE_ARG_STR;
			g->v.str = merge_str_intern0(&tb, eq + 2);
		} else {
			g->type = MERGE_ARG_U64;
			g->v.u = strtoull(eq + 1, NULL, 0);
		}
	}
	return ev;
}

/* Feed an event as the report's sink does: the chain, then the states. */
static void feed(uint32_t track, int kind, const char *name, uint64_t ts, int cpu,
		 const char *args)
{
	struct merge_event ev = mk(track, kind, name, ts, cpu, args);

	if (report_feed(r, &ev) < 0 || crit_feed(r, &ev) < 0) {
		fprintf(stderr, "feed %s: %s\n", name, vt_err_msg());
		check_failures++;
	}
}

static void ins(uint32_t track, const char *name, uint64_t ts, int cpu, const char *args)
{
	feed(track, MERGE_EV_INSTANT, name, ts, cpu, args);
}

static void begin(uint32_t track, const char *name, uint64_t ts)
{
	feed(track, MERGE_EV_BEGIN, name, ts, -1, NULL);
}

static void end(uint32_t track, uint64_t ts)
{
	feed(track, MERGE_EV_END, NULL, ts, -1, NULL);
}

static void finish(void)
{
	if (report_finish(r) < 0 || crit_finish(r) < 0) {
		fprintf(stderr, "finish: %s\n", vt_err_msg());
		check_failures++;
	}
}

static const char *str(uint32_t id)
{
	return merge_str(&tb, id);
}

/* The request of (sector, rwbs) (NULL: none). */
static const struct report_req *req(uint64_t sector, const char *rwbs)
{
	for (size_t i = 0; i < report_nr_reqs(r); i++) {
		const struct report_req *q = report_req_at(r, i);

		if (q->sector == sector && !strcmp(str(q->rwbs), rwbs))
			return q;
	}
	return NULL;
}

/* The links of @q as report_mask_str has them ("PSQIKHDJRCXE", '.'). */
static const char *links(const struct report_req *q)
{
	static char buf[RL_NR + 1];

	return q ? report_mask_str(q->mask, buf) : "(none)";
}

/* The report's name for a syscall record @i. */
static const char *sys_name(int32_t i)
{
	return str(report_sys_at(r, i)->name);
}

/* The function of name @name in the function table (NULL: none). */
static const struct report_fn *fn(const char *name)
{
	for (size_t i = 0; i < report_nr_fns(r); i++)
		if (!strcmp(str(report_fn_at(r, i)->name), name))
			return report_fn_at(r, i);
	return NULL;
}

/* The exit count of (vCPU @vcpu, @name), instants (-1: none). */
static int64_t exits(int32_t vcpu, const char *name)
{
	for (size_t i = 0; i < report_nr_exits(r); i++) {
		const struct report_exit *e = report_exit_at(r, i);

		if (e->vcpu == vcpu && !e->is_slice && !strcmp(str(e->name), name))
			return (int64_t)e->count;
	}
	return -1;
}

/* The QEMU operation entered at @enter (NULL: none). */
static const struct hostio *hostio_at(uint64_t enter)
{
	for (size_t i = 0; i < r->hostio.n; i++)
		if (r->hostio.a[i].p.enter == enter)
			return &r->hostio.a[i];
	return NULL;
}

/* raw_syscalls' sys_enter/sys_exit ("syscall N", "syscall"), a sys_exit
 * with no entry, an END with no BEGIN, an "exit: " instant and a counter
 * (neither slices nor chain events), the rwbs operation letters */
static void test_classes(void)
{
	setup();
	begin(gpy, "app.f (a.py:1)", T0);
	ins(gpy, "sys_enter", T0 + 10 * US, 0, "id=1");
	ins(gpy, "sys_exit", T0 + 20 * US, 0, "ret=0");
	ins(gpy, "sys_enter", T0 + 30 * US, 0, "id='x'");	/* id not a number */
	ins(gpy, "sys_exit", T0 + 35 * US, 0, NULL);
	ins(gpy, "sys_exit_write", T0 + 40 * US, 0, "ret=0");	/* never entered */
	end(gk, T0 + 50 * US);					/* no frame open */
	ins(hv, "exit: HLT", T0 + 60 * US, 0, NULL);
	feed(gpy, MERGE_EV_COUNTER, "mem", T0 + 70 * US, 0, NULL);
	end(gpy, T0 + 100 * US);
	finish();
	CHECK(report_nr_syscalls(r) == 2);
	CHECK_STR(sys_name(0), "syscall 1");
	CHECK_STR(sys_name(1), "syscall");
	CHECK(report_sys_at(r, 0)->py_begin == T0 && report_sys_at(r, 0)->py_end == T0 + 100 * US);
	CHECK(report_nr_fns(r) == 1 && fn("app.f (a.py:1)"));
	CHECK(fn("app.f (a.py:1)")->incl_ns == 100 * US && fn("app.f (a.py:1)")->wait_ns == 15 * US);
	CHECK(report_nr_exits(r) == 0 && report_events(r) == 10);
	CHECK(report_rwbs_op("F") == 'F' && report_rwbs_op("FS") == 'F');
	CHECK(report_rwbs_op("FWS") == 'W' && report_rwbs_op("FF") == 'F');
	CHECK(report_rwbs_op("RA") == 'R');
}

/* Requests of one key: issued without an insert, two of one sector in
 * flight (completed first-issued first), completed twice; an insert
 * completed before its issue (not a completion of it); keys that collide:
 * guest 1 and guest 257 (machine bits over the device's), and sectors
 * s0/s1 of devices 0 and 0x4b9cfcd9 (chain_mix(s0) ^ chain_mix(s1) is
 * 0x4b9cfcd9 << 8): each completion finds its own request */
static void test_keys(void)
{
	const uint64_t s0 = 978401612465ULL, s1 = 973945357832ULL;
	uint32_t g257;

	setup();
	g257 = merge_track_get(&tb, 257, 400, 400, 0, 0);
	ins(gpy, "sys_enter_write", T0, 0, "fd=3");
	ins(gpy, "block_rq_insert", T0 + 1 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='W'");
	ins(gpy, "block_rq_issue", T0 + 2 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", T0 + 3 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", T0 + 10 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", T0 + 11 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", T0 + 12 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='W'");
	ins(gpy, "sys_exit_write", T0 + 13 * US, 0, "ret=4096");
	/* inserted, completed before its issue: not its completion */
	ins(gk, "block_rq_insert", T0 + 20 * US, 0, "dev=1 sector=300 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_complete", T0 + 21 * US, 0, "dev=1 sector=300 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T0 + 22 * US, 0, "dev=1 sector=300 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_complete", T0 + 23 * US, 0, "dev=1 sector=300 nr_sector=8 rwbs='R'");
	/* guest 257's dev 0 and guest 1's dev 1: one key; then s0/s1 */
	ins(g257, "block_rq_issue", T0 + 30 * US, 0, "dev=0 sector=500 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T0 + 31 * US, 0, "dev=1 sector=500 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_complete", T0 + 32 * US, 0, "dev=1 sector=500 nr_sector=8 rwbs='R'");
	ins(g257, "block_rq_complete", T0 + 33 * US, 0, "dev=0 sector=500 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T0 + 40 * US, 0, "dev=0 sector=978401612465 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T0 + 41 * US, 0,
	    "dev=0x4b9cfcd9 sector=973945357832 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_complete", T0 + 42 * US, 0,
	    "dev=0x4b9cfcd9 sector=973945357832 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_complete", T0 + 43 * US, 0, "dev=0 sector=978401612465 nr_sector=8 rwbs='R'");
	finish();
	CHECK(report_nr_reqs(r) == 7);
	const struct report_req *a = report_req_at(r, 0), *b = report_req_at(r, 1);

	CHECK_STR(links(a), ".SQI.....CX.");
	CHECK(a->t[RL_ISSUE] == T0 + 2 * US && a->t[RL_COMPLETE] == T0 + 10 * US);
	CHECK(a->t[RL_SYS_ENTER] == T0 && a->t[RL_SYS_EXIT] == T0 + 13 * US);
	CHECK_STR(links(b), "...I.....C..");
	CHECK(b->t[RL_ISSUE] == T0 + 3 * US && b->t[RL_COMPLETE] == T0 + 11 * US);
	const struct report_req *c = req(300, "R");

	CHECK_STR(links(c), "..QI.....C..");
	CHECK(c && c->t[RL_COMPLETE] == T0 + 23 * US);
	for (size_t i = 3; i < 7; i++) {
		const struct report_req *q = report_req_at(r, i);
		uint64_t issue = T0 + (i < 5 ? 30 + i - 3 : 40 + i - 5) * US;
		/* completed in the other order */
		uint64_t done = T0 + (i < 5 ? 33 - (i - 3) : 43 - (i - 5)) * US;

		CHECK_STR(links(q), "...I.....C..");
		CHECK(q->t[RL_ISSUE] == issue && q->t[RL_COMPLETE] == done);
	}
	CHECK(report_req_at(r, 3)->machine == 257 && report_req_at(r, 4)->machine == 1);
	CHECK(report_req_at(r, 5)->sector == s0 && report_req_at(r, 6)->sector == s1);
}

/* What a kvm_pio / kvm_mmio / kvm_fast_mmio is: every one on a QEMU
 * thread an exit of its vCPU (none: -1); a kick unless it reads, or
 * writes a platform port or the interrupt controllers' MMIO; guests'
 * and other host threads' ignored; kvm_hypercall an exit */
static void test_kicks(void)
{
	setup();
	ins(hv, "kvm_pio", T0, 0, "port=0x60 rw=1");		/* keyboard: platform */
	ins(hv, "kvm_pio", T0 + 1 * US, 0, "port=0xc050 rw=0");	/* a read */
	ins(hv, "kvm_pio", T0 + 2 * US, 0, "port=0xc050");		/* kick */
	ins(hv, "kvm_mmio", T0 + 3 * US, 0, "gpa=0xfee000b0 type=2");	/* LAPIC EOI */
	ins(hv, "kvm_mmio", T0 + 4 * US, 0, "gpa=0xfe003000 type=0");	/* a read */
	ins(hv, "kvm_mmio", T0 + 5 * US, 0, "gpa=0xfef00000 type=2");	/* kick */
	ins(hv, "kvm_fast_mmio", T0 + 6 * US, 0, "gpa=0xfe003000");	/* kick */
	ins(hv, "kvm_fast_mmio", T0 + 7 * US, 0, "gpa='x'");		/* kick at 0 */
	ins(hv, "kvm_hypercall", T0 + 8 * US, 0, "nr=1");
	ins(hio, "kvm_pio", T0 + 9 * US, 0, "port=0xc060 rw=1");	/* kick, no vCPU */
	ins(gpy, "kvm_pio", T0 + 10 * US, 0, "port=0xc050 rw=1");
	ins(gpy, "kvm_hypercall", T0 + 11 * US, 0, "nr=1");
	ins(hother, "kvm_pio", T0 + 12 * US, 0, "port=0xc050 rw=1");
	finish();
	CHECK(report_nr_kicks(r) == 5);
	uint64_t want[5] = { 0xc050, 0xfef00000, 0xfe003000, 0, 0xc060 };

	for (int i = 0; i < 5 && i < (int)r->kicks.n; i++) {
		CHECK(r->kicks.a[i].addr == want[i]);
		CHECK(r->kicks.a[i].vcpu == (i < 4 ? 0 : -1));
	}
	CHECK(exits(0, "kvm_pio") == 3 && exits(0, "kvm_mmio") == 3);
	CHECK(exits(0, "kvm_fast_mmio") == 2 && exits(0, "kvm_hypercall") == 1);
	CHECK(exits(-1, "kvm_pio") == 1 && report_nr_exits(r) == 5);
}

/* kvm_set_irq (gsi) and kvm_inj_virq (vector): the request's injection
 * is of the lowest kind seen (kvm_set_irq here), the first after its
 * issue; a guest's injection event is not one */
static void test_inject(void)
{
	setup();
	ins(gk, "block_rq_issue", T0, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(hv, "kvm_inj_virq", T0 + 5 * US, 0, "vector=0x23");
	ins(hio, "kvm_set_irq", T0 + 6 * US, 0, "gsi=11 level=1");
	ins(gk, "kvm_set_irq", T0 + 7 * US, 0, "gsi=12 level=1");
	ins(gk, "irq_handler_entry", T0 + 8 * US, 0, "irq=11 name='virtio0'");
	ins(gk, "block_rq_complete", T0 + 9 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	finish();
	const struct report_req *q = req(8, "W");

	CHECK(report_nr_injects(r) == 2 && report_nr_guest_irqs(r) == 1);
	CHECK_STR(links(q), "...I...JRC..");
	CHECK(q && q->t[RL_INJECT] == T0 + 6 * US && q->inj_data == 11 && q->inj_tid == 4250);
	CHECK(q && q->how[RL_INJECT] == RH_MSI && q->t[RL_IRQ] == T0 + 8 * US);
}

/* io_uring: a QEMU thread's submissions (io_uring_submit_sqe, Linux
 * before 6.4) of a known opcode are operations, completed by their
 * user_data once; another host thread's, an unknown opcode, a guest's
 * completion are not; the request between gets the READ by time */
static void test_uring(void)
{
	setup();
	ins(gk, "block_rq_issue", T0, 0, "dev=1 sector=16 nr_sector=8 rwbs='R'");
	ins(hother, "io_uring_submit_req", T0 + 1 * US, 0, "user_data=2 opcode=22");
	ins(hio, "io_uring_submit_req", T0 + 2 * US, 0, "user_data=3 opcode=99");
	ins(hio, "io_uring_submit_sqe", T0 + 3 * US, 0, "user_data=1 opcode=22");
	ins(gk, "io_uring_complete", T0 + 4 * US, 0, "user_data=1 res=4096");
	ins(hio, "io_uring_complete", T0 + 5 * US, 0, "user_data=77 res=0");
	ins(hio, "io_uring_complete", T0 + 6 * US, 0, "user_data=1 res=4096");
	ins(hio, "io_uring_complete", T0 + 7 * US, 0, "user_data=1 res=4096");
	ins(gk, "block_rq_complete", T0 + 10 * US, 0, "dev=1 sector=16 nr_sector=8 rwbs='R'");
	finish();
	const struct report_req *q = req(16, "R");

	CHECK(report_nr_host_io(r) == 1);
	CHECK_STR(links(q), "...I.HD..C..");
	CHECK(q && q->host_n == 1 && q->how[RL_HOST_BEGIN] == RH_GUESS);
	if (q && q->host_n == 1) {
		const struct report_hostio *h = report_req_hostio(r, q, 0);

		CHECK_STR(str(h->name), "io_uring READ");
		CHECK(h->enter == T0 + 3 * US && h->exit == T0 + 6 * US && h->dir == 'R');
	}
}

/* QEMU's bios (block_bio_queue on its threads): inside pread64 the
 * syscall is the operation; no length, no operation (rwbs absent), a
 * flush: none; an io_uring READ then a write bio: the bio its own
 * operation; an io_uring WRITE's bios, the second contiguous: one
 * operation, a third elsewhere its own; an io_uring worker's bio; a bio
 * of a second host disk (its own fd); a completion of part of a bio
 * leaves it open to the next, a completion again none */
static void test_bios(void)
{
	uint32_t wrk;
	const struct hostio *h;

	setup();
	wrk = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4260, 0,
			      merge_str_intern0(&tb, "iou-wrk-4250"));
	merge_track_mark_qemu(&tb, MERGE_MACHINE_HOST, 4242);
	ins(hio, "sys_enter_pread64", T0, 0, "fd=12 count=4096 pos=0");
	ins(hio, "block_bio_queue", T0 + 1 * US, 0, "dev=0x700000 sector=0 nr_sector=8 rwbs='R'");
	ins(hio, "sys_exit_pread64", T0 + 2 * US, 0, "ret=4096");
	ins(hio, "block_bio_queue", T0 + 3 * US, 0, "dev=0x700000 sector=64 nr_sector=8");
	ins(hio, "block_bio_queue", T0 + 4 * US, 0, "dev=0x700000 sector=64 nr_sector=0 rwbs='R'");
	ins(hio, "block_bio_queue", T0 + 5 * US, 0, "dev=0x700000 sector=64 nr_sector=8 rwbs='FF'");
	ins(hio, "io_uring_submit_req", T0 + 6 * US, 0, "user_data=5 opcode=22");
	ins(hio, "block_bio_queue", T0 + 7 * US, 0, "dev=0x700000 sector=100 nr_sector=8 rwbs='W'");
	ins(hio, "io_uring_submit_req", T0 + 8 * US, 0, "user_data=6 opcode=23");
	ins(hio, "block_bio_queue", T0 + 9 * US, 0, "dev=0x700000 sector=1000 nr_sector=8 rwbs='W'");
	ins(hio, "block_bio_queue", T0 + 10 * US, 0, "dev=0x700000 sector=1008 nr_sector=8 rwbs='W'");
	ins(hio, "block_bio_queue", T0 + 11 * US, 0, "dev=0x700000 sector=2000 nr_sector=8 rwbs='W'");
	ins(wrk, "block_bio_queue", T0 + 12 * US, 0, "dev=0x800000 sector=8 nr_sector=8 rwbs='W'");
	ins(hother, "block_rq_complete", T0 + 20 * US, 0, "dev=0x700000 sector=2000 nr_sector=4");
	ins(hother, "block_rq_complete", T0 + 21 * US, 0, "dev=0x700000 sector=2004 nr_sector=4");
	ins(hother, "block_rq_complete", T0 + 22 * US, 0, "dev=0x700000 sector=2000 nr_sector=8");
	finish();
	CHECK(report_nr_host_io(r) == 6);
	h = hostio_at(T0);
	CHECK(h && h->p.off == 0 && h->p.len == 4096 && h->p.fd == 12 && h->p.exit == T0 + 2 * US);
	h = hostio_at(T0 + 6 * US);		/* the READ: no bio of its own */
	CHECK(h && !h->p.has_off && h->p.fd == -1);
	h = hostio_at(T0 + 7 * US);
	CHECK(h && h->p.dir == 'W' && h->p.off == 100 * 512 && h->p.len == 4096);
	CHECK(h && h->p.fd == REPORT_BDEV_FD && report_bdev(r, h->p.fd) == 0x700000);
	h = hostio_at(T0 + 8 * US);		/* the WRITE: its two bios */
	CHECK(h && h->p.has_off && h->p.off == 1000 * 512 && h->p.len == 8192);
	h = hostio_at(T0 + 11 * US);
	CHECK(h && h->p.off == 2000 * 512 && h->p.exit == T0 + 21 * US);
	CHECK_STR(h ? str(h->p.name) : "", "bio");
	h = hostio_at(T0 + 12 * US);
	CHECK_STR(h ? str(h->p.name) : "", "io_uring worker bio");
	CHECK(h && h->p.fd == REPORT_BDEV_FD + 1 && report_bdev(r, h->p.fd) == 0x800000);
}

/* more host disks than REPORT_BDEV_MAX: the bios of the ones past it are
 * no operation (no fd names them) */
static void test_bdev_max(void)
{
	char a[96];

	setup();
	for (uint32_t d = 0; d <= REPORT_BDEV_MAX; d++) {
		snprintf(a, sizeof(a), "dev=%u sector=8 nr_sector=8 rwbs='W'", d + 1);
		ins(hio, "block_bio_queue", T0 + d, 0, a);
	}
	finish();
	CHECK(report_nr_host_io(r) == REPORT_BDEV_MAX);
	CHECK(report_bdev(r, REPORT_BDEV_FD + REPORT_BDEV_MAX - 1) == REPORT_BDEV_MAX);
}

/* A Python stack deeper than 16 frames whose names pass the 2 KiB stack
 * buffer: the syscall's stack keeps the outer frames that fit whole
 * (19 names of 100 bytes: 19 * 100 + 18 * 3); a syscall on the thread's
 * other track (its kernel events, pid unknown) is the Python track's,
 * with no frame open there then no Python call */
static void test_stack(void)
{
	char nm[101];
	uint32_t gkt;

	setup();
	gkt = merge_track_get(&tb, 1, 0, 300, 0, 0);
	for (int i = 0; i < 40; i++) {
		memset(nm, 'a' + i % 26, 97);
		snprintf(nm + 97, 4, "%03d", i);
		begin(gpy, nm, T0 + (uint64_t)i * US);
	}
	ins(gpy, "sys_enter_read", T0 + 50 * US, 0, "fd=3");
	ins(gpy, "sys_exit_read", T0 + 51 * US, 0, "ret=1");
	ins(gkt, "sys_enter_read", T0 + 52 * US, 0, "fd=3");
	ins(gkt, "sys_exit_read", T0 + 54 * US, 0, "ret=1");
	for (int i = 39; i >= 0; i--)
		end(gpy, T0 + 100 * US + (uint64_t)(39 - i) * US);
	ins(gkt, "sys_enter_write", T0 + 200 * US, 0, "fd=3");
	ins(gkt, "sys_exit_write", T0 + 210 * US, 0, "ret=1");
	finish();
	CHECK(report_nr_syscalls(r) == 3 && report_nr_fns(r) == 40);
	const char *st = str(report_sys_at(r, 0)->stack);
	size_t n = 0;

	for (const char *p = st; (p = strstr(p, " > ")); p += 3)
		n++;
	CHECK(strlen(st) == 19 * 100 + 18 * 3 && n == 18);
	CHECK(report_sys_at(r, 1)->py_track == gpy && report_sys_at(r, 1)->py_begin == T0 + 39 * US);
	CHECK(report_sys_at(r, 1)->stack == report_sys_at(r, 0)->stack);
	CHECK(report_sys_at(r, 2)->py_track == gpy && report_sys_at(r, 2)->py_begin == 0);
	/* the innermost frame waited in both syscalls: 1 + 2 us */
	memset(nm, 'a' + 39 % 26, 97);
	snprintf(nm + 97, 4, "%03d", 39);
	CHECK(fn(nm) && fn(nm)->wait_ns == 3 * US && fn(nm)->incl_ns == 61 * US);
}

/* Names past the analyser's first 4096 ids and tracks past its first
 * 64: a function and a request there count as any other */
static void test_growth(void)
{
	char nm[32];
	uint32_t far;

	setup();
	begin(gpy, "first", T0);
	end(gpy, T0 + 1 * US);
	for (int i = 0; i < 9000; i++) {
		snprintf(nm, sizeof(nm), "n%d", i);
		merge_str_intern0(&tb, nm);
	}
	for (int i = 0; i < 150; i++)
		far = merge_track_get(&tb, 2, 500, 500 + i, 0, 0);
	begin(far, "far.g (f.py:1)", T0 + 2 * US);
	ins(far, "block_rq_issue", T0 + 3 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(far, "block_rq_complete", T0 + 4 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	end(far, T0 + 7 * US);
	finish();
	CHECK(far > 128 && merge_str_intern0(&tb, "far.g (f.py:1)") > 8192);
	CHECK(fn("far.g (f.py:1)") && fn("far.g (f.py:1)")->incl_ns == 5 * US);
	CHECK(fn("first") && report_nr_reqs(r) == 1 && report_req_at(r, 0)->machine == 2);
}

/* The call named @name of the headline (NULL: none). */
static const struct report_call *call(const char *name)
{
	for (size_t i = 0; i < report_nr_calls(r, 0); i++)
		if (!strcmp(str(report_call_at(r, 0, i)->name), name))
			return report_call_at(r, 0, i);
	return NULL;
}

/* The vCPU and thread states from sched_switch and sched_wakeup: the
 * vCPU thread blocked (switched out sleeping) 10 us, then woken (twice:
 * runnable, preempted) and run 30 us later; woken while it runs, nothing;
 * a wakeup of pid 0 and a switch without next_pid ignored.  The guest
 * thread blocks twice, woken by an irq (the idle task's context) and by
 * thread 301: its call app.wait's parts follow its vCPU (preempted while
 * the thread runs, is runnable or blocked), its waker is the last one */
static void test_vstate(void)
{
	const char *sw = "prev_pid=%d prev_state=%d next_pid=%d";
	char a[128];
	uint32_t g301;

	setup();
	g301 = merge_track_get(&tb, 1, 300, 301, 0, merge_str_intern0(&tb, "worker"));
#define SW(track, ts, prev, st, next) \
	(snprintf(a, sizeof(a), sw, prev, st, next), ins(track, "sched_switch", ts, 0, a))
	SW(hother, T0, 0, 0, 4243);
	SW(gk, T0 + 1 * US, 0, 0, 300);
	begin(gpy, "app.wait (w.py:1)", T0 + 2 * US);
	SW(hother, T0 + 10 * US, 4243, 1, 0);
	ins(hother, "sched_wakeup", T0 + 20 * US, 1, "pid=4243 target_cpu=1");
	ins(hother, "sched_wakeup", T0 + 25 * US, 1, "pid=4243 target_cpu=1");
	SW(gk, T0 + 30 * US, 300, 1, 0);
	ins(gk, "sched_wakeup", T0 + 40 * US, 0, "pid=300 target_cpu=0");
	SW(gk, T0 + 45 * US, 0, 0, 300);
	SW(hother, T0 + 50 * US, 0, 0, 4243);
	ins(hother, "sched_wakeup", T0 + 55 * US, 1, "pid=4243 target_cpu=1");
	ins(hother, "sched_wakeup", T0 + 60 * US, 1, "pid=0 target_cpu=1");
	ins(hother, "sched_switch", T0 + 61 * US, 1, "prev_pid=4243 prev_state=1");
	SW(gk, T0 + 70 * US, 300, 1, 0);
	ins(g301, "sched_wakeup", T0 + 80 * US, 0, "pid=300 target_cpu=0");
	SW(gk, T0 + 90 * US, 0, 0, 300);
	end(gpy, T0 + 95 * US);
	ins(gk, "irq_handler_entry", T0 + 100 * US, 0, "irq=1 name='i8042'");
#undef SW
	finish();
	CHECK(report_nr_vcpus(r) == 1);
	if (report_nr_vcpus(r) == 1) {
		const struct report_vcpu *v = report_vcpu_at(r, 0);

		CHECK(v->vcpu == 0 && v->tid == 4243);
		CHECK(v->ns[RV_BLOCKED] == 10 * US && v->ns[RV_PREEMPTED] == 30 * US);
		/* no kvm_entry/kvm_exit: running is unknown, not guest mode */
		CHECK(v->ns[RV_GUEST] == 0 && v->ns[RV_UNKNOWN] == 60 * US);
	}
	const struct report_thread *t = NULL;

	for (size_t i = 0; i < report_nr_threads(r); i++)
		if (report_thread_at(r, i)->machine == 1 && report_thread_at(r, i)->tid == 300)
			t = report_thread_at(r, i);
	CHECK(t && t->ns[RT_RUNNING] == 64 * US && t->ns[RT_BLOCKED] == 20 * US);
	CHECK(t && t->ns[RT_RUNNABLE] == 15 * US && t->ns[RT_IRQ] == 0);
	const struct report_call *c = call("app.wait (w.py:1)");

	CHECK(c && c->dur == 93 * US && c->part[RP_GUEST_CPU] == 43 * US);
	CHECK(c && c->part[RP_PREEMPTED] == 30 * US && c->part[RP_BLOCKED] == 10 * US);
	CHECK(c && c->part[RP_RUNNABLE] == 10 * US && c->preempt_overlap == 30 * US);
	CHECK_STR(c ? str(c->waker) : "", "worker");
}

/* The request of (dev, sector) (NULL: none). */
static const struct report_req *req_of(uint32_t dev, uint64_t sector)
{
	for (size_t i = 0; i < report_nr_reqs(r); i++) {
		const struct report_req *q = report_req_at(r, i);

		if (q->dev == dev && q->sector == sector)
			return q;
	}
	return NULL;
}

/* Kicks and guest irqs by vCPU: the device's notify address is the one
 * most of its requests see first (a tie: the lower), another device's
 * kick and another vCPU's are passed over; a request issued on an
 * unknown vCPU takes a kick of any (QEMU's thread of no vCPU here); the
 * irq is the last virtio one on the completing vCPU since the kick, not
 * another guest's, not one before the kick; an irq or a completion of
 * unknown CPU matches any */
static void test_kick_irq(void)
{
	uint32_t hv1, g2;
	const struct report_req *q;

	setup();
	hv1 = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4244, 0, 0);
	merge_track(&tb, hv1)->vcpu = 2;
	g2 = merge_track_get(&tb, 2, 0, 0, 0, 0);
	const char *w8 = "dev=1 sector=8 nr_sector=8 rwbs='W'", *w16 = "dev=1 sector=16 nr_sector=8 rwbs='W'";
	const char *w24 = "dev=1 sector=24 nr_sector=8 rwbs='W'", *w32 = "dev=1 sector=32 nr_sector=8 rwbs='W'";

	ins(gk, "block_rq_issue", T0, 0, w8);
	ins(hv, "kvm_mmio", T0 + 1 * US, 1, "gpa=0xfe003000 type=2");
	ins(gk, "irq_handler_entry", T0 + 9 * US, 0, "irq=11 name='virtio0-requests'");
	ins(gk, "block_rq_complete", T0 + 10 * US, 0, w8);
	ins(gk, "block_rq_issue", T0 + 20 * US, 0, w16);
	ins(hv, "kvm_mmio", T0 + 21 * US, 1, "gpa=0xfe004000 type=2");
	ins(hv1, "kvm_mmio", T0 + 22 * US, 1, "gpa=0xfe003000 type=2");
	ins(hv, "kvm_mmio", T0 + 23 * US, 1, "gpa=0xfe003000 type=2");
	ins(gk, "irq_handler_entry", T0 + 27 * US, 1, "irq=11 name='virtio0-requests'");
	ins(g2, "irq_handler_entry", T0 + 28 * US, 0, "irq=11 name='virtio0-requests'");
	ins(gk, "block_rq_complete", T0 + 30 * US, 0, w16);
	ins(gk, "block_rq_issue", T0 + 40 * US, -1, w24);
	ins(hio, "kvm_pio", T0 + 41 * US, 2, "port=0xc050 rw=1");
	ins(gk, "irq_handler_entry", T0 + 45 * US, 1, "irq=11 name='virtio0-requests'");
	ins(gk, "block_rq_complete", T0 + 50 * US, -1, w24);
	ins(gk, "block_rq_issue", T0 + 60 * US, 0, w32);
	ins(gk, "irq_handler_entry", T0 + 65 * US, -1, "irq=11");
	ins(gk, "block_rq_complete", T0 + 70 * US, 0, w32);
	finish();
	q = req_of(1, 8);
	CHECK_STR(links(q), "...IK...RC..");
	CHECK(q && q->t[RL_KICK] == T0 + 1 * US && q->how[RL_KICK] == RH_NOTIFY);
	CHECK(q && q->t[RL_IRQ] == T0 + 9 * US && q->how[RL_IRQ] == RH_CPU);
	q = req_of(1, 16);
	CHECK_STR(links(q), "...IK....C..");
	CHECK(q && q->t[RL_KICK] == T0 + 23 * US && q->kick_addr == 0xfe003000 &&
	      q->how[RL_KICK] == RH_NOTIFY && q->kick_vcpu == 0);
	q = req_of(1, 24);
	CHECK_STR(links(q), "...IK...RC..");
	CHECK(q && q->t[RL_KICK] == T0 + 41 * US && q->kick_vcpu == -1 && q->kick_tid == 4250);
	CHECK(q && q->t[RL_IRQ] == T0 + 45 * US);
	q = req_of(1, 32);
	CHECK_STR(links(q), "...I....RC..");
	CHECK(q && q->t[RL_IRQ] == T0 + 65 * US);
}

/* QEMU's operations: device 2's offset rule (fd 12, 1 MiB on) from its
 * write's pwrite64; its flush served by the fdatasync of that fd (the
 * one of another fd passed over), a flush never completed has none; a
 * read of device 3 (no rule) gets io_submit by time (no end: a
 * submission), not the write between */
static void test_host(void)
{
	const struct report_req *q;
	uint32_t m, dev;
	int64_t fd, delta;

	setup();
	ins(gk, "block_rq_issue", T0, 0, "dev=2 sector=100 nr_sector=8 rwbs='W'");
	ins(hio, "sys_enter_pwrite64", T0 + 2 * US, 3, "fd=12 count=4096 pos=1099776");
	ins(hio, "sys_exit_pwrite64", T0 + 5 * US, 3, "ret=4096");
	ins(gk, "block_rq_complete", T0 + 10 * US, 0, "dev=2 sector=100 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", T0 + 20 * US, 0, "dev=2 sector=0 nr_sector=0 rwbs='FF'");
	ins(hio, "sys_enter_fdatasync", T0 + 21 * US, 3, "fd=13");
	ins(hio, "sys_exit_fdatasync", T0 + 22 * US, 3, "ret=0");
	ins(hio, "sys_enter_fdatasync", T0 + 23 * US, 3, "fd=12");
	ins(hio, "sys_exit_fdatasync", T0 + 24 * US, 3, "ret=0");
	ins(gk, "block_rq_complete", T0 + 30 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	ins(gk, "block_rq_issue", T0 + 40 * US, 0, "dev=2 sector=0 nr_sector=0 rwbs='FF'");
	ins(gk, "block_rq_issue", T0 + 50 * US, 0, "dev=3 sector=8 nr_sector=8 rwbs='R'");
	ins(hio, "sys_enter_pwrite64", T0 + 51 * US, 3, "fd=12 count=4096 pos=0");
	ins(hio, "sys_exit_pwrite64", T0 + 52 * US, 3, "ret=4096");
	ins(hio, "sys_enter_io_submit", T0 + 53 * US, 3, "ctx_id=1 nr=1");
	ins(hio, "sys_exit_io_submit", T0 + 54 * US, 3, "ret=1");
	ins(gk, "block_rq_complete", T0 + 60 * US, 0, "dev=3 sector=8 nr_sector=8 rwbs='R'");
	finish();
	q = req_of(2, 100);
	CHECK_STR(links(q), "...I.HD..C..");
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT && q->t[RL_HOST_BEGIN] == T0 + 2 * US);
	q = req(UINT64_MAX, "FF");
	CHECK_STR(links(q), "...I.HD..C..");
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_FLUSH && q->t[RL_HOST_BEGIN] == T0 + 23 * US);
	/* (a flush is keyed at sector 2^64-1 from its issue on) */
	q = NULL;
	for (size_t i = 0; i < report_nr_reqs(r); i++)
		if (report_req_at(r, i)->t[RL_ISSUE] == T0 + 40 * US)
			q = report_req_at(r, i);
	CHECK_STR(links(q), "...I........");
	q = req_of(3, 8);
	CHECK_STR(links(q), "...I.H...C..");
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_GUESS && q->t[RL_HOST_BEGIN] == T0 + 53 * US);
	CHECK_STR(q ? str(q->host_sys) : "", "io_submit");
	CHECK(report_nr_devs(r) == 2);
	for (size_t i = 0; i < report_nr_devs(r); i++) {
		int ok = report_dev_map(r, i, &m, &dev, &fd, &delta);

		CHECK(m == 1 && (dev == 2 ? ok && fd == 12 && delta == 1 << 20 : dev == 3 && !ok));
	}
}

/* QEMU's syscalls and bios, the rest: an exit never entered and a
 * syscall not of the disk are no operation; a pwrite64 that failed keeps
 * its count, a pread64 of 0 bytes has no offset; io_submit's bio is the
 * operation (named io_submit), the submission none; an io_uring WRITE's
 * read bio is its own; block events on QEMU's threads are no guest
 * request; a guest's completion with QEMU's bios pending completes none
 * of them; an irq on QEMU's thread is no guest irq; a numeric rwbs is
 * none; an insert outside a syscall, issued inside one: that syscall's */
static void test_qemu_misc(void)
{
	const struct hostio *h;

	setup();
	ins(hio, "sys_exit_pread64", T0, 3, "ret=4096");
	ins(hio, "sys_enter_write", T0 + 1 * US, 3, "fd=5 count=8");
	ins(hio, "sys_exit_write", T0 + 2 * US, 3, "ret=8");
	ins(hio, "sys_enter_pwrite64", T0 + 3 * US, 3, "fd=12 count=4096 pos=8192");
	ins(hio, "sys_exit_pwrite64", T0 + 4 * US, 3, "ret=-5");
	ins(hio, "sys_enter_pread64", T0 + 5 * US, 3, "fd=12 count=0 pos=8192");
	ins(hio, "sys_exit_pread64", T0 + 6 * US, 3, "ret=0");
	ins(hio, "sys_enter_io_submit", T0 + 7 * US, 3, "ctx_id=1 nr=1");
	ins(hio, "block_bio_queue", T0 + 8 * US, 3, "dev=0x700000 sector=64 nr_sector=8 rwbs='W'");
	ins(hio, "sys_exit_io_submit", T0 + 9 * US, 3, "ret=1");
	ins(hio, "io_uring_submit_req", T0 + 10 * US, 3, "user_data=6 opcode=23");
	ins(hio, "block_bio_queue", T0 + 11 * US, 3, "dev=0x700000 sector=800 nr_sector=8 rwbs='W'");
	ins(hio, "block_bio_queue", T0 + 12 * US, 3, "dev=0x700000 sector=808 nr_sector=8 rwbs='R'");
	ins(hio, "block_rq_issue", T0 + 13 * US, 3, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(hio, "block_rq_insert", T0 + 13 * US, 3, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_bio_queue", T0 + 13 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", T0 + 14 * US, 0, "dev=0x700000 sector=64 nr_sector=8");
	ins(hio, "block_rq_complete", T0 + 15 * US, 3, "dev=0x700000 sector=64 nr_sector=8");
	ins(hio, "irq_handler_entry", T0 + 16 * US, 3, "irq=11 name='virtio0'");
	ins(gk, "block_rq_insert", T0 + 20 * US, 0, "dev=1 sector=40 nr_sector=8 rwbs=7");
	ins(gpy, "sys_enter_fsync", T0 + 21 * US, 0, "fd=3");
	ins(gpy, "block_rq_issue", T0 + 22 * US, 0, "dev=1 sector=40 nr_sector=8 rwbs=7");
	ins(gk, "block_rq_complete", T0 + 23 * US, 0, "dev=1 sector=40 nr_sector=8 rwbs=7");
	ins(gpy, "sys_exit_fsync", T0 + 24 * US, 0, "ret=0");
	finish();
	CHECK(report_nr_host_io(r) == 5 && report_nr_guest_irqs(r) == 0);
	h = hostio_at(T0 + 3 * US);
	CHECK(h && h->p.len == 4096 && h->p.has_off && h->p.off == 8192 && h->p.dir == 'W');
	h = hostio_at(T0 + 5 * US);
	CHECK(h && h->p.len == 0 && !h->p.has_off && h->p.dir == 'R');
	h = hostio_at(T0 + 8 * US);
	CHECK(h && h->p.exit == T0 + 15 * US && h->p.off == 64 * 512 && h->p.len == 4096);
	CHECK_STR(h ? str(h->p.name) : "", "io_submit");
	h = hostio_at(T0 + 10 * US);
	CHECK(h && h->p.off == 800 * 512 && h->p.len == 4096 && h->p.dir == 'W');
	h = hostio_at(T0 + 12 * US);
	CHECK(h && h->p.off == 808 * 512 && h->p.dir == 'R');
	CHECK(report_nr_reqs(r) == 1);
	const struct report_req *q = report_req_at(r, 0);

	CHECK(q->rwbs == MERGE_NO_STR && q->sector == 40);
	CHECK_STR(links(q), ".SQI.....CX.");
	CHECK(q->t[RL_SYS_ENTER] == T0 + 21 * US && q->t[RL_SYS_EXIT] == T0 + 24 * US);
}

/* more guest threads than the report names from their tracks (CRIT_KEEP):
 * each is listed with its states, one after the other on CPU 0 */
static void test_many_threads(void)
{
	char a[128];

	setup();
	for (int i = 0; i < 70; i++) {
		snprintf(a, sizeof(a), "prev_pid=%d prev_state=1 next_pid=%d", 400 + i, 401 + i);
		ins(gk, "sched_switch", T0 + (uint64_t)i * US, 0, a);
	}
	finish();
	CHECK(report_nr_threads(r) > CRIT_KEEP);
	for (size_t i = 0; i < report_nr_threads(r); i++) {
		const struct report_thread *t = report_thread_at(r, i);

		CHECK(t->machine == 1 && t->tid >= 400 && t->tid <= 470);
	}
}

/* The states, the rest: a sched_switch without prev_pid and a
 * sched_wakeup without pid are no change; an irq exit with no entry
 * leaves the thread out of irqs; an irq on a host thread of QEMU none:
 * the guest thread's 10 us run on vCPU 0 all guest CPU time */
static void test_vstate_misc(void)
{
	setup();
	ins(gk, "sched_switch", T0, 0, "prev_pid=0 prev_state=0 next_pid=300");
	begin(gpy, "app.run (r.py:1)", T0 + 1 * US);
	ins(gk, "sched_switch", T0 + 2 * US, 0, "next_pid=301");
	ins(gk, "sched_wakeup", T0 + 3 * US, 0, "target_cpu=0");
	ins(gpy, "irq_handler_exit", T0 + 4 * US, 0, "irq=1 ret=1");
	ins(hio, "irq_handler_entry", T0 + 5 * US, 3, "irq=30 name='nvme0q1'");
	ins(hio, "irq_handler_exit", T0 + 6 * US, 3, "irq=30 ret=1");
	end(gpy, T0 + 11 * US);
	finish();
	const struct report_call *c = call("app.run (r.py:1)");

	CHECK(c && c->dur == 10 * US && c->part[RP_GUEST_CPU] == 10 * US);
	CHECK(report_nr_threads(r) == 1 && report_thread_at(r, 0)->tid == 300);
	CHECK(report_thread_at(r, 0)->ns[RT_RUNNING] == 11 * US);
}

/* Each link search looks at SCAN_MAX (256) candidates at most: a
 * request's kick, QEMU read and MSI after 300 of another vCPU's kicks,
 * gsi injections and QEMU writes, and its irq before 300 of another
 * guest's, are not found; a second request issued after them all finds
 * each of its own */
static void test_scan_max(void)
{
	uint32_t hv1, g2;
	const struct report_req *q;
	const uint64_t T1 = T0 + 5 * MS;

	setup();
	hv1 = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4244, 0, 0);
	merge_track(&tb, hv1)->vcpu = 2;
	g2 = merge_track_get(&tb, 2, 0, 0, 0, 0);
	ins(gk, "block_rq_issue", T0, 0, "dev=3 sector=8 nr_sector=8 rwbs='R'");
	ins(gk, "irq_handler_entry", T0 + 5, 0, "irq=11 name='virtio0'");
	for (uint64_t k = 0; k < 300; k++) {
		uint64_t t = T0 + 10 + 10 * k;

		ins(hv1, "kvm_mmio", t, 1, "gpa=0xfe003000 type=2");
		ins(hio, "kvm_set_irq", t + 1, 3, "gsi=11 level=1");
		ins(g2, "irq_handler_entry", t + 2, 0, "irq=11 name='virtio0'");
		ins(hio, "sys_enter_pwrite64", t + 3, 3, "fd=12 count=4096 pos=0");
		ins(hio, "sys_exit_pwrite64", t + 4, 3, "ret=4096");
	}
	ins(hv, "kvm_mmio", T0 + 3 * MS, 1, "gpa=0xfe003000 type=2");
	ins(hio, "sys_enter_preadv", T0 + 3 * MS + 1 * US, 3, "fd=12 vlen=1 pos_l=0");
	ins(hio, "sys_exit_preadv", T0 + 3 * MS + 2 * US, 3, "ret=4096");
	ins(hio, "kvm_msi_set_irq", T0 + 3 * MS + 3 * US, 3, "address=0xfee00000 data=0x4022");
	ins(gk, "block_rq_complete", T0 + 4 * MS, 0, "dev=3 sector=8 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T1, 0, "dev=3 sector=16 nr_sector=8 rwbs='R'");
	ins(hv, "kvm_mmio", T1 + 1 * US, 1, "gpa=0xfe003000 type=2");
	ins(hio, "sys_enter_preadv", T1 + 2 * US, 3, "fd=12 vlen=1 pos_l=0");
	ins(hio, "sys_exit_preadv", T1 + 3 * US, 3, "ret=4096");
	ins(hio, "kvm_msi_set_irq", T1 + 4 * US, 3, "address=0xfee00000 data=0x4022");
	ins(gk, "irq_handler_entry", T1 + 5 * US, 0, "irq=11 name='virtio0'");
	ins(gk, "block_rq_complete", T1 + 6 * US, 0, "dev=3 sector=16 nr_sector=8 rwbs='R'");
	finish();
	q = req_of(3, 8);
	CHECK_STR(links(q), "...I.....C..");
	q = req_of(3, 16);
	CHECK_STR(links(q), "...IKHDJRC..");
	CHECK(q && q->t[RL_KICK] == T1 + 1 * US && q->how[RL_KICK] == RH_NOTIFY);
	CHECK(q && q->t[RL_HOST_BEGIN] == T1 + 2 * US && q->how[RL_HOST_BEGIN] == RH_GUESS);
	CHECK(q && q->t[RL_INJECT] == T1 + 4 * US && q->t[RL_IRQ] == T1 + 5 * US);
}

/* One request of device 2 on vCPU 0: issued at @t, completed at @t + 50 us. */
static void rq(uint64_t t, uint64_t sector, unsigned nr, const char *rwbs, int done)
{
	char a[128];

	snprintf(a, sizeof(a), "dev=2 sector=%llu nr_sector=%u rwbs='%s'",
		 (unsigned long long)sector, nr, rwbs);
	ins(gk, "block_rq_issue", t, 0, a);
	if (done)
		ins(gk, "block_rq_complete", t + 50 * US, 0, a);
}

/* A QEMU syscall @name (sys_enter_NAME with @args, sys_exit ret=@ret) on
 * its I/O thread from @t to @t + 1 us. */
static void qsys(uint64_t t, const char *name, const char *args, long ret)
{
	char e[64], x[32];

	snprintf(e, sizeof(e), "sys_enter_%s", name);
	ins(hio, e, t, 3, args);
	snprintf(e, sizeof(e), "sys_exit_%s", name);
	snprintf(x, sizeof(x), "ret=%ld", ret);
	ins(hio, e, t + 1 * US, 3, x);
}

/* The request of device 2 issued at @t (NULL: none). */
static const struct report_req *req_issued(uint64_t t)
{
	for (size_t i = 0; i < report_nr_reqs(r); i++)
		if (report_req_at(r, i)->t[RL_ISSUE] == t)
			return report_req_at(r, i);
	return NULL;
}

/* The QEMU operations of @q, their enter times joined: "T1,T2" in us
 * from T0 (a buffer of its own per call, two at once). */
static const char *ops(const struct report_req *q)
{
	static char buf[2][128];
	static int k;
	char *b = buf[k++ & 1];
	size_t n = 0;

	b[0] = 0;
	for (uint32_t i = 0; q && i < q->host_n && n < 100; i++)
		n += (size_t)snprintf(b + n, 128 - n, "%s%llu", i ? "," : "",
				      (unsigned long long)((report_req_hostio(r, q, i)->enter - T0) / US));
	return b;
}

/* Pass 1's ways of matching a request to QEMU's syscalls on device 2
 * (offset rule fd 12, +1 MiB, from the exact ones): exact; two reads one
 * preadv covers (covering, the second by the room left); a write split
 * in two pwrite64 (split); a 512-byte write QEMU widens to 4 KiB, read
 * first (read-modify-write: the read and the write), one with six reads
 * of its block (four taken); a discard's fallocate (exact); a
 * write-zeroes served by the writes QEMU falls back to (split); a write
 * whose piece leaves part of it bare, and a pwrite64 of another fd: no
 * operation (pass 2 guesses none: the rule holds); a request of no
 * sectors: none; a flush served by fd 12's fdatasync, not fd 13's, one
 * with only fd 13's: none */
static void test_match(void)
{
	const uint64_t MiB = 1ULL << 20, P = 1000 * US;	/* a request a ms */
	const struct report_req *q;
	char a[128];

#define AT(k) (T0 + (k) * P)
#define POS(sector) (MiB + (sector) * 512ULL)
	setup();
	for (int k = 0; k < 6; k++) {	/* exact: the rule's votes */
		rq(AT(k), 8 * (uint64_t)k, 8, k & 1 ? "R" : "W", 1);
		snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(8 * (unsigned long long)k));
		qsys(AT(k) + 2 * US, k & 1 ? "pread64" : "pwrite64", a, 4096);
	}
	rq(AT(6), 200, 8, "R", 1);
	rq(AT(6) + 1 * US, 208, 8, "R", 1);
	snprintf(a, sizeof(a), "fd=12 vlen=2 pos_l=%llu", POS(200));
	qsys(AT(6) + 2 * US, "preadv", a, 8192);
	rq(AT(7), 300, 16, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(308));
	qsys(AT(7) + 2 * US, "pwrite64", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(300));
	qsys(AT(7) + 4 * US, "pwrite64", a, 4096);
	rq(AT(8), 401, 1, "WS", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(400));
	qsys(AT(8) + 2 * US, "pread64", a, 4096);
	qsys(AT(8) + 4 * US, "pwrite64", a, 4096);
	rq(AT(9), 409, 1, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(408));
	for (int i = 0; i < 6; i++)
		qsys(AT(9) + (2 + 2 * (uint64_t)i) * US, "pread64", a, 4096);
	qsys(AT(9) + 20 * US, "pwrite64", a, 4096);
	rq(AT(10), 500, 8, "D", 1);
	snprintf(a, sizeof(a), "fd=12 mode=3 offset=%llu len=4096", POS(500));
	qsys(AT(10) + 2 * US, "fallocate", a, 0);
	rq(AT(11), 600, 16, "N", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(600));
	qsys(AT(11) + 2 * US, "pwrite64", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(608));
	qsys(AT(11) + 4 * US, "pwrite64", a, 4096);
	rq(AT(12), 700, 16, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(700));
	qsys(AT(12) + 2 * US, "pwrite64", a, 4096);
	snprintf(a, sizeof(a), "fd=13 count=4096 pos=%llu", POS(708));
	qsys(AT(12) + 4 * US, "pwrite64", a, 4096);
	rq(AT(13), 800, 0, "W", 1);
	qsys(AT(13) + 2 * US, "pwrite64", "fd=12 count=4096 pos=0", 4096);
	rq(AT(14), 0, 0, "FF", 0);
	qsys(AT(14) + 2 * US, "fdatasync", "fd=13", 0);
	qsys(AT(14) + 4 * US, "fdatasync", "fd=12", 0);
	ins(gk, "block_rq_complete", AT(14) + 50 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	rq(AT(15), 0, 0, "F", 0);
	qsys(AT(15) + 2 * US, "fdatasync", "fd=13", 0);
	ins(gk, "block_rq_complete", AT(15) + 50 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='F'");
	finish();
	for (int k = 0; k < 6; k++) {
		q = req_issued(AT(k));
		CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT && q->host_n == 1);
		CHECK(q && q->t[RL_HOST_BEGIN] == AT(k) + 2 * US && q->t[RL_HOST_END] == AT(k) + 3 * US);
	}
	q = req_issued(AT(6));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_COVER && q->t[RL_HOST_BEGIN] == AT(6) + 2 * US);
	q = req_issued(AT(6) + 1 * US);
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_COVER && q->t[RL_HOST_BEGIN] == AT(6) + 2 * US);
	q = req_issued(AT(7));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_SPLIT && q->host_n == 2);
	CHECK_STR(ops(q), "7002,7004");
	CHECK(q && q->t[RL_HOST_BEGIN] == AT(7) + 2 * US && q->t[RL_HOST_END] == AT(7) + 5 * US);
	q = req_issued(AT(8));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_RMW);
	CHECK_STR(ops(q), "8002,8004");
	q = req_issued(AT(9));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_RMW);
	CHECK_STR(ops(q), "9002,9004,9006,9008,9020");
	q = req_issued(AT(10));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT);
	CHECK_STR(q ? str(q->host_sys) : "", "fallocate");
	q = req_issued(AT(11));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_SPLIT);
	CHECK_STR(ops(q), "11002,11004");
	q = req_issued(AT(12));
	CHECK_STR(links(q), "...I.....C..");
	q = req_issued(AT(13));
	CHECK_STR(links(q), "...I.....C..");
	q = req_issued(AT(14));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_FLUSH);
	CHECK_STR(ops(q), "14004");
	q = req_issued(AT(15));
	CHECK_STR(links(q), "...I.....C..");
	uint32_t m, dev;
	int64_t fd, delta;

	CHECK(report_nr_devs(r) == 1 && report_dev_map(r, 0, &m, &dev, &fd, &delta));
	CHECK(fd == 12 && delta == (int64_t)MiB);
#undef AT
#undef POS
}

/* Pass 2's guesses on devices of no offset rule: with io_uring in the
 * trace, QEMU's io_uring_enter is passed over for the READ it submitted;
 * a request of no direction (a numeric rwbs) takes the first operation
 * of any; an io_submit (a submission: '?') serves two requests in flight;
 * a flush is never guessed */
static void test_guess(void)
{
	const struct report_req *q;

	setup();
	ins(gk, "block_rq_issue", T0, 0, "dev=5 sector=8 nr_sector=8 rwbs='R'");
	ins(hio, "sys_enter_io_uring_enter", T0 + 1 * US, 3, "fd=20 to_submit=1");
	ins(hio, "io_uring_submit_req", T0 + 2 * US, 3, "user_data=9 opcode=22");
	ins(hio, "sys_exit_io_uring_enter", T0 + 3 * US, 3, "ret=1");
	ins(hio, "io_uring_complete", T0 + 10 * US, 3, "user_data=9 res=4096");
	ins(gk, "block_rq_complete", T0 + 20 * US, 0, "dev=5 sector=8 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T0 + 100 * US, 0, "dev=6 sector=8 nr_sector=8 rwbs=7");
	ins(hio, "sys_enter_pwrite64", T0 + 101 * US, 3, "fd=30 count=4096 pos=4096");
	ins(hio, "sys_exit_pwrite64", T0 + 102 * US, 3, "ret=4096");
	ins(gk, "block_rq_complete", T0 + 120 * US, 0, "dev=6 sector=8 nr_sector=8 rwbs=7");
	ins(gk, "block_rq_issue", T0 + 200 * US, 0, "dev=7 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", T0 + 201 * US, 0, "dev=7 sector=64 nr_sector=8 rwbs='W'");
	ins(hio, "sys_enter_io_submit", T0 + 202 * US, 3, "ctx_id=1 nr=2");
	ins(hio, "sys_exit_io_submit", T0 + 203 * US, 3, "ret=2");
	ins(gk, "block_rq_complete", T0 + 220 * US, 0, "dev=7 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", T0 + 221 * US, 0, "dev=7 sector=64 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", T0 + 300 * US, 0, "dev=7 sector=0 nr_sector=0 rwbs='FF'");
	ins(hio, "sys_enter_io_submit", T0 + 302 * US, 3, "ctx_id=1 nr=1");
	ins(hio, "sys_exit_io_submit", T0 + 303 * US, 3, "ret=1");
	ins(gk, "block_rq_complete", T0 + 320 * US, 0,
	    "dev=7 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	finish();
	q = req_of(5, 8);
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_GUESS && q->t[RL_HOST_BEGIN] == T0 + 2 * US);
	CHECK(q && q->t[RL_HOST_END] == T0 + 10 * US);
	CHECK_STR(q ? str(q->host_sys) : "", "io_uring READ");
	q = req_of(6, 8);
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_GUESS && q->t[RL_HOST_BEGIN] == T0 + 101 * US);
	CHECK_STR(q ? str(q->host_sys) : "", "pwrite64");
	for (uint64_t s = 8; s <= 64; s += 56) {
		q = req_of(7, s);
		CHECK(q && q->how[RL_HOST_BEGIN] == RH_GUESS && q->t[RL_HOST_BEGIN] == T0 + 202 * US);
		CHECK_STR(links(q), "...I.H...C..");	/* a submission: no end */
	}
	q = req(UINT64_MAX, "FF");
	CHECK_STR(links(q), "...I.....C..");
}

/* Pass 1's windows, the operations each search passes over: on device 2
 * (rule fd 12, +1 MiB) a 512-byte write whose aligned block holds pieces
 * of no offset, of fd 13, a read, one claimed by the exact write before
 * it, one before and one after its bytes, one past the block (no
 * operation of pass 1: nothing covers it; pass 2 guesses the one of no
 * offset); a write with no operation in its window;
 * a request of no direction; a read whose window holds 300 operations of
 * fd 13 (each search stops after 256) then its own (not found); a flush
 * with an io_uring FSYNC never completed, an fdatasync ending after its
 * completion and one after it (none); a flush served by an operation of
 * no fd (io_uring FSYNC); a write whose syscall returned before it
 * completed (its completion -> return stage counts no sample); two
 * functions of equal time (the name seen first first) */
static void test_edges(void)
{
	const uint64_t MiB = 1ULL << 20, P = 1000 * US;
	const struct report_req *q;
	char a[128];

#define AT(k) (T0 + (k) * P)
#define POS(sector) (MiB + (sector) * 512ULL)
	setup();
	for (int k = 0; k < 6; k++) {	/* the rule's votes */
		rq(AT(k), 8 * (uint64_t)k, 8, k & 1 ? "R" : "W", 1);
		snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(8 * (unsigned long long)k));
		qsys(AT(k) + 2 * US, k & 1 ? "pread64" : "pwrite64", a, 4096);
	}
	rq(AT(6), 100, 8, "W", 1);		/* exact, claims its pwrite64 */
	rq(AT(6) + 1 * US, 102, 1, "W", 1);	/* the 512-byte write */
	const struct { const char *sys, *fmt; unsigned long long sector; long ret; } pc[] = {
		{ "pwrite64", "fd=12 count=4096 pos=%llu", 100, 4096 },
		{ "pwrite64", "fd=12 count=0 pos=%llu", 102, 0 },
		{ "pwrite64", "fd=13 count=512 pos=%llu", 102, 512 },
		{ "pread64", "fd=12 count=512 pos=%llu", 102, 512 },
		{ "pwrite64", "fd=12 count=512 pos=%llu", 96, 512 },
		{ "pwrite64", "fd=12 count=512 pos=%llu", 101, 512 },
		{ "pwrite64", "fd=12 count=512 pos=%llu", 104, 512 },
		{ "pwrite64", "fd=12 count=1024 pos=%llu", 107, 1024 },
	};
	for (size_t i = 0; i < sizeof(pc) / sizeof(pc[0]); i++) {
		snprintf(a, sizeof(a), pc[i].fmt, POS(pc[i].sector));
		qsys(AT(6) + (2 + 2 * (uint64_t)i) * US, pc[i].sys, a, pc[i].ret);
	}
	rq(AT(7), 200, 8, "W", 1);
	rq(AT(8), 300, 8, "X", 1);
	rq(AT(9), 400, 8, "R", 1);
	for (uint64_t i = 0; i < 300; i++)
		qsys(AT(9) + 2 * US + 100 * i, "pread64", "fd=13 count=4096 pos=0", 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(400));
	qsys(AT(9) + 40 * US, "pread64", a, 4096);
	rq(AT(10), 0, 0, "FF", 0);
	ins(hio, "io_uring_submit_req", AT(10) + 2 * US, 3, "user_data=1 opcode=3");
	ins(hio, "sys_enter_fdatasync", AT(10) + 3 * US, 3, "fd=12");
	ins(gk, "block_rq_complete", AT(10) + 50 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	ins(hio, "sys_exit_fdatasync", AT(10) + 51 * US, 3, "ret=0");
	qsys(AT(10) + 60 * US, "fdatasync", "fd=12", 0);
	rq(AT(11), 0, 0, "FF", 0);
	ins(hio, "io_uring_submit_req", AT(11) + 2 * US, 3, "user_data=2 opcode=3");
	ins(hio, "io_uring_complete", AT(11) + 4 * US, 3, "user_data=2 res=0");
	ins(gk, "block_rq_complete", AT(11) + 50 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	ins(gpy, "sys_enter_write", AT(12), 0, "fd=3");
	ins(gpy, "block_rq_issue", AT(12) + 1 * US, 0, "dev=2 sector=500 nr_sector=8 rwbs='W'");
	ins(gpy, "sys_exit_write", AT(12) + 2 * US, 0, "ret=4096");
	ins(gk, "block_rq_complete", AT(12) + 50 * US, 0, "dev=2 sector=500 nr_sector=8 rwbs='W'");
	begin(gpy, "b.g (b.py:1)", AT(13));
	end(gpy, AT(13) + 5 * US);
	begin(gpy, "a.f (a.py:1)", AT(13) + 10 * US);
	end(gpy, AT(13) + 15 * US);
	finish();
	q = req_issued(AT(6));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT);
	q = req_issued(AT(6) + 1 * US);	/* pass 2: the piece of no offset */
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_GUESS && q->t[RL_HOST_BEGIN] == AT(6) + 4 * US);
	CHECK_STR(links(req_issued(AT(7))), "...I.....C..");
	CHECK_STR(links(req_issued(AT(8))), "...I.....C..");
	CHECK_STR(links(req_issued(AT(9))), "...I.....C..");
	CHECK_STR(links(req_issued(AT(10))), "...I.....C..");
	q = req_issued(AT(11));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_FLUSH && q->t[RL_HOST_END] == AT(11) + 4 * US);
	CHECK_STR(q ? str(q->host_sys) : "", "io_uring FSYNC");
	q = req_issued(AT(12) + 1 * US);
	CHECK_STR(links(q), ".S.I.....CX.");
	CHECK(r->pct[9].n == 0 && r->pct[11].n == 14);	/* complete_to_sys_exit, device */
	CHECK(report_nr_fns(r) == 2);
	/* (ties: the name interned first) */
	CHECK_STR(report_nr_fns(r) == 2 ? str(report_fn_at(r, 0)->name) : "", "b.g (b.py:1)");
#undef AT
#undef POS
}

/* The report with no state tracking fed (report_feed alone): no calls,
 * vCPUs or threads, and crit_finish makes its empty tracker then; threads
 * of equal running time listed by machine, then tid */
static void test_crit_edges(void)
{
	struct merge_event ev;
	uint32_t g2;

	setup();
	ev = mk(gk, MERGE_EV_INSTANT, "sched_switch", T0, 0, "prev_pid=0 prev_state=0 next_pid=300");
	CHECK(report_feed(r, &ev) == 0 && report_finish(r) == 0);
	CHECK(report_nr_calls(r, 0) == 0 && report_nr_calls(r, 1) == 0);
	CHECK(report_nr_vcpus(r) == 0 && report_nr_threads(r) == 0);
	CHECK(crit_finish(r) == 0 && report_nr_calls(r, 0) == 0 && report_nr_threads(r) == 0);
	setup();
	g2 = merge_track_get(&tb, 2, 0, 0, 0, 0);
	const char *sw = "prev_pid=%d prev_state=1 next_pid=%d";
	char a[96];

#define SW(track, ts, cpu, prev, next) \
	(snprintf(a, sizeof(a), sw, prev, next), ins(track, "sched_switch", ts, cpu, a))
	SW(g2, T0, 0, 0, 300);
	SW(gk, T0, 0, 0, 301);
	SW(gk, T0, 1, 0, 300);
	SW(g2, T0 + 10 * US, 0, 300, 0);
	SW(gk, T0 + 10 * US, 0, 301, 0);
	SW(gk, T0 + 10 * US, 1, 300, 0);
#undef SW
	finish();
	CHECK(report_nr_threads(r) == 3);
	if (report_nr_threads(r) == 3) {
		CHECK(report_thread_at(r, 0)->machine == 1 && report_thread_at(r, 0)->tid == 300);
		CHECK(report_thread_at(r, 1)->machine == 1 && report_thread_at(r, 1)->tid == 301);
		CHECK(report_thread_at(r, 2)->machine == 2 && report_thread_at(r, 2)->tid == 300);
		CHECK(report_thread_at(r, 2)->ns[RT_RUNNING] == 10 * US);
	}
}

/* A sched_switch from @prev to @next, whose next_comm is @comm (spaces
 * allowed, unlike mk's) */
static void switch_comm(uint32_t track, uint64_t ts, int prev, int next, const char *comm)
{
	char a[96];

	snprintf(a, sizeof(a), "prev_pid=%d prev_state=1 next_pid=%d next_comm='x'", prev, next);
	struct merge_event ev = mk(track, MERGE_EV_INSTANT, "sched_switch", ts, 1, a);

	ev.args[ev.nr_args - 1].v.str = merge_str_intern0(&tb, comm);
	if (report_feed(r, &ev) < 0 || crit_feed(r, &ev) < 0) {
		fprintf(stderr, "feed sched_switch: %s\n", vt_err_msg());
		check_failures++;
	}
}

/* vCPU threads merge did not mark: a host thread in an "exit: " slice is
 * one (the first number not taken: hv is vCPU 0, so 1); a thread a
 * sched_switch names "CPU 0/KVM" while vCPU 0 is hv's takes the next free
 * number (2), a name not a vCPU's ("CPU x/KVM") none; past CRIT_MAX_VCPUS
 * threads in exits no more are vCPUs (their events stay a thread's) */
static void test_vcpu_register(void)
{
	uint32_t q = merge_str_intern0(&tb, "qemu-system-x86"), h5000, h5001;

	setup();
	h5000 = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 5000, q, 0);
	h5001 = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 5001, q, 0);
	feed(h5000, MERGE_EV_BEGIN, "exit: HLT", T0, 0, NULL);
	end(h5000, T0 + 10 * US);
	switch_comm(h5001, T0 + 20 * US, 0, 5001, "CPU 0/KVM");
	switch_comm(h5001, T0 + 30 * US, 5001, 5002, "CPU x/KVM");
	switch_comm(h5001, T0 + 40 * US, 5002, 5001, "CPU 0/KVM");
	finish();
	CHECK(report_nr_vcpus(r) == 3);
	for (size_t i = 0; i < report_nr_vcpus(r) && i < 3; i++) {
		static const int32_t tid[3] = { 4243, 5000, 5001 };

		CHECK(report_vcpu_at(r, i)->vcpu == (int32_t)i && report_vcpu_at(r, i)->tid == tid[i]);
	}
	if (report_nr_vcpus(r) >= 2) {
		const struct report_vcpu *v = report_vcpu_at(r, 1);

		CHECK(v->ns[RV_EXIT_KERNEL] == 10 * US && v->ns[RV_GUEST] == 30 * US);
	}
	if (report_nr_vcpus(r) >= 3) {
		const struct report_vcpu *v = report_vcpu_at(r, 2);

		CHECK(v->ns[RV_BLOCKED] == 10 * US && v->ns[RV_PREEMPTED] == 0);
	}

	setup();
	for (int i = 0; i < CRIT_MAX_VCPUS + 1; i++) {
		uint32_t t = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 6000 + i, q, 0);

		feed(t, MERGE_EV_BEGIN, "exit: HLT", T0 + (uint64_t)i * US, 0, NULL);
		end(t, T0 + (uint64_t)i * US + 500);
	}
	finish();
	CHECK(report_nr_vcpus(r) == CRIT_MAX_VCPUS);
	CHECK(report_nr_vcpus(r) == CRIT_MAX_VCPUS &&
	      report_vcpu_at(r, CRIT_MAX_VCPUS - 1)->tid == 6000 + CRIT_MAX_VCPUS - 2);
}

/* The thread (machine @m, tid @tid) of the state table (NULL: none). */
static const struct report_thread *thread(uint32_t m, int32_t tid)
{
	for (size_t i = 0; i < report_nr_threads(r); i++)
		if (report_thread_at(r, i)->machine == m && report_thread_at(r, i)->tid == tid)
			return report_thread_at(r, i);
	return NULL;
}

/* Which tracks are vCPUs: a lane of a thread (host uftrace calls beside
 * its exit slices) is never one, nor does the thread's registration by
 * an exit slice take its lane (its call stays a thread's call); a lane
 * merge marked with a vCPU number, a vCPU number past CRIT_MAX_VCPUS
 * (its kvm_userspace_exit and kvm_pio change nothing) and a second track
 * of a vCPU's thread (another pid) give no vCPU; a kvm_userspace_exit on
 * QEMU's I/O thread none either, nor an instant named as an exit slice
 * on another host thread.  On vCPU 0 a slice that is no exit
 * (an ioctl) leaves it in its exit until the slice ends; a guest's
 * "exit: " slice is a guest call, not a vCPU.  With QEMU's threads known,
 * a QEMU thread named "CPU 1/KVM" is vCPU 1, another process's "CPU
 * 2/KVM" none. */
static void test_vcpu_tracks(void)
{
	uint32_t q = merge_str_intern0(&tb, "qemu-system-x86"), o, hl, hm, hlv, hbig, hdup;

	setup();
	o = merge_str_intern0(&tb, "other");
	hl = merge_track_get_lane(&tb, MERGE_MACHINE_HOST, 7000, 5000, 1, o, 0);
	hm = merge_track_get(&tb, MERGE_MACHINE_HOST, 7000, 5000, o, 0);
	hlv = merge_track_get_lane(&tb, MERGE_MACHINE_HOST, 7000, 5100, 1, o, 0);
	merge_track(&tb, hlv)->vcpu = 3;
	hbig = merge_track_get(&tb, MERGE_MACHINE_HOST, 7000, 5200, o, 0);
	merge_track(&tb, hbig)->vcpu = CRIT_MAX_VCPUS + 1;
	hdup = merge_track_get(&tb, MERGE_MACHINE_HOST, 4300, 4243, q, 0);
	merge_track(&tb, hdup)->vcpu = 2;
	begin(hl, "worker.fn (w.py:1)", T0);
	feed(hm, MERGE_EV_BEGIN, "exit: HLT", T0 + 10 * US, 0, NULL);
	end(hm, T0 + 20 * US);
	end(hl, T0 + 30 * US);
	feed(hv, MERGE_EV_BEGIN, "exit: IO_INSTRUCTION", T0 + 40 * US, 0, NULL);
	begin(hv, "kvm_vcpu_ioctl", T0 + 50 * US);
	end(hv, T0 + 60 * US);
	end(hv, T0 + 70 * US);
	ins(hbig, "kvm_userspace_exit", T0 + 71 * US, 2, "reason=2");
	ins(hbig, "kvm_pio", T0 + 72 * US, 2, "port=0xc050 rw=1");
	ins(hlv, "sched_wakeup", T0 + 73 * US, 2, "pid=1 target_cpu=0");
	ins(hio, "kvm_userspace_exit", T0 + 74 * US, 3, "reason=2");
	ins(hother, "exit: HLT", T0 + 74 * US, 1, NULL);	/* an instant: no exit slice */
	begin(gpy, "exit: HLT", T0 + 75 * US);
	end(gpy, T0 + 80 * US);
	finish();
	CHECK(report_nr_vcpus(r) == 2);
	for (size_t i = 0; i < report_nr_vcpus(r) && i < 2; i++) {
		static const int32_t tid[2] = { 4243, 5000 };

		CHECK(report_vcpu_at(r, i)->vcpu == (int32_t)i && report_vcpu_at(r, i)->tid == tid[i]);
	}
	if (report_nr_vcpus(r) >= 1) {
		const struct report_vcpu *v = report_vcpu_at(r, 0);

		/* exit 40-60 us (the ioctl inside it), guest mode 60-80 us */
		CHECK(v->ns[RV_EXIT_KERNEL] == 20 * US && v->ns[RV_GUEST] == 20 * US);
		CHECK(v->ns[RV_EXIT_QEMU] == 0);
	}
	const struct report_call *c = call("worker.fn (w.py:1)");

	CHECK(c && c->dur == 30 * US && c->machine == MERGE_MACHINE_HOST && c->tid == 5000);
	c = call("exit: HLT");
	CHECK(c && c->dur == 5 * US && c->machine == 1 && c->tid == 300);

	setup();
	tb.qemu_tasks_known = 1;
	{
		uint32_t h5001 = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 5001, q, 0);

		merge_track_mark_qemu(&tb, MERGE_MACHINE_HOST, 4242);
		switch_comm(h5001, T0, 0, 5001, "CPU 1/KVM");
		switch_comm(hother, T0 + 10 * US, 0, 9000, "CPU 2/KVM");
		switch_comm(hother, T0 + 20 * US, 9000, 0, "swapper/1");
	}
	finish();
	CHECK(report_nr_vcpus(r) == 2);
	CHECK(report_nr_vcpus(r) == 2 && report_vcpu_at(r, 1)->vcpu == 1 &&
	      report_vcpu_at(r, 1)->tid == 5001);
	CHECK(thread(MERGE_MACHINE_HOST, 9000) &&
	      thread(MERGE_MACHINE_HOST, 9000)->ns[RT_RUNNING] == 10 * US);
}

/* One guest call blocked on the VM's I/O, each stage of the pipeline at
 * its known time.  Flushes: guest 1's flush completed twice (the second
 * completes nothing) and again while guest 2's is in flight (guest 2's
 * stays in flight: the device's stage, not blocked).  An irq: after
 * QEMU's syscall (no injection recorded) the keyboard's irq is not the
 * disk's, the virtio one is.  A bio QEMU queues inside io_uring_enter is
 * the host disk's until the host completes it (past the syscall). */
static void test_vstate_pipe(void)
{
	const char *sw = "prev_pid=%d prev_state=%d next_pid=%d";
	const char *fl = "dev=1 sector=0 nr_sector=0 rwbs='FF'";
	const char *fl_done = "dev=1 sector=18446744073709551615 nr_sector=0 rwbs='FF'";
	const struct report_call *c;
	uint32_t g2, g2py;
	char a[128];

#define SW(track, ts, prev, st, next) \
	(snprintf(a, sizeof(a), sw, prev, st, next), ins(track, "sched_switch", ts, 0, a))
	setup();
	g2 = merge_track_get(&tb, 2, 0, 0, 0, 0);
	g2py = merge_track_get(&tb, 2, 400, 400, 0, merge_str_intern0(&tb, "python3"));
	ins(gk, "block_rq_issue", T0 - 20 * US, 0, fl);
	ins(gk, "block_rq_complete", T0 - 19 * US, 0, fl_done);
	ins(gk, "block_rq_complete", T0 - 18 * US, 0, fl_done);
	SW(g2, T0, 0, 0, 400);
	begin(g2py, "app.sync (s.py:1)", T0 + 1 * US);
	ins(g2, "block_rq_issue", T0 + 2 * US, 0, fl);
	SW(g2, T0 + 3 * US, 400, 1, 0);
	ins(gk, "block_rq_complete", T0 + 5 * US, 0, fl_done);
	ins(g2, "block_rq_complete", T0 + 9 * US, 0, fl_done);
	ins(g2, "sched_wakeup", T0 + 10 * US, 0, "pid=400 target_cpu=0");
	SW(g2, T0 + 11 * US, 0, 0, 400);
	end(g2py, T0 + 12 * US);
	finish();
	c = call("app.sync (s.py:1)");
	CHECK(c && c->dur == 11 * US && c->part[RP_GUEST_CPU] == 3 * US);
	CHECK(c && c->part[RP_DEVICE] == 6 * US && c->part[RP_BLOCKED] == 1 * US);
	CHECK(c && c->part[RP_RUNNABLE] == 1 * US);

	setup();
	SW(gk, T0, 0, 0, 300);
	begin(gpy, "app.read (r.py:1)", T0 + 1 * US);
	ins(gk, "block_rq_issue", T0 + 2 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='R'");
	SW(gk, T0 + 3 * US, 300, 1, 0);
	ins(hio, "sys_enter_pread64", T0 + 4 * US, 3, "fd=12 count=4096 pos=4096");
	ins(hio, "sys_exit_pread64", T0 + 6 * US, 3, "ret=4096");
	ins(gk, "irq_handler_entry", T0 + 7 * US, 0, "irq=1 name='i8042'");
	ins(gk, "irq_handler_exit", T0 + 7 * US + 500, 0, "irq=1 ret=1");
	ins(gk, "irq_handler_entry", T0 + 8 * US, 0, "irq=11 name='virtio0-requests'");
	ins(gk, "block_rq_complete", T0 + 9 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='R'");
	ins(gk, "irq_handler_exit", T0 + 9 * US, 0, "irq=11 ret=1");
	ins(gk, "sched_wakeup", T0 + 10 * US, 0, "pid=300 target_cpu=0");
	SW(gk, T0 + 11 * US, 0, 0, 300);
	end(gpy, T0 + 12 * US);
	finish();
	c = call("app.read (r.py:1)");
	CHECK(c && c->dur == 11 * US && c->part[RP_GUEST_CPU] == 3 * US);
	CHECK(c && c->part[RP_DEVICE] == 3 * US && c->part[RP_HOST_IO] == 2 * US);
	CHECK(c && c->part[RP_IRQ_DONE] == 1 * US && c->part[RP_BLOCKED] == 1 * US);
	CHECK(c && c->part[RP_RUNNABLE] == 1 * US);
	CHECK_STR(c ? str(c->host_sys) : "", "pread64");

	setup();
	SW(gk, T0, 0, 0, 300);
	begin(gpy, "app.read (r.py:1)", T0 + 1 * US);
	ins(gk, "block_rq_issue", T0 + 2 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='R'");
	SW(gk, T0 + 3 * US, 300, 1, 0);
	ins(hio, "sys_enter_io_uring_enter", T0 + 4 * US, 3, "fd=9 to_submit=1");
	ins(hio, "block_bio_queue", T0 + 5 * US, 3, "dev=0x800000 sector=640 nr_sector=8 rwbs='R'");
	ins(hio, "sys_exit_io_uring_enter", T0 + 6 * US, 3, "ret=1");
	ins(hio, "block_rq_complete", T0 + 8 * US, 3, "dev=0x800000 sector=640 nr_sector=8");
	ins(gk, "block_rq_complete", T0 + 9 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='R'");
	ins(gk, "sched_wakeup", T0 + 10 * US, 0, "pid=300 target_cpu=0");
	SW(gk, T0 + 11 * US, 0, 0, 300);
	end(gpy, T0 + 12 * US);
	finish();
	c = call("app.read (r.py:1)");
	CHECK(c && c->dur == 11 * US && c->part[RP_HOST_IO] == 4 * US);
	CHECK(c && c->part[RP_DEVICE] == 2 * US && c->part[RP_BLOCKED] == 1 * US);
	CHECK_STR(c ? str(c->host_sys) : "", "io_uring_enter");
#undef SW
}

/* A guest thread on a CPU past CRIT_MAX_VCPUS: the one vCPU thread known
 * (vCPU 1 here: vCPU 0's slot, made by a thread on CPU 0, has none); its
 * call preempted with it, from a switch at the very ns the call begins.
 * An instant named like a Python call is no state event. */
static void test_vstate_cpu(void)
{
	const struct report_call *c;

	setup();
	merge_track(&tb, hv)->vcpu = 2;
	ins(gk, "sched_switch", T0 - 10 * US, 0, "prev_pid=0 prev_state=0 next_pid=301");
	ins(gk, "sched_switch", T0, 300, "prev_pid=0 prev_state=0 next_pid=300");
	ins(hother, "sched_switch", T0, 1, "prev_pid=4243 prev_state=0 next_pid=0");
	begin(gpy, "app.spin (p.py:1)", T0);
	ins(gpy, "note (n.py:1)", T0 + 1 * US, 300, NULL);
	ins(hother, "sched_switch", T0 + 4 * US, 1, "prev_pid=0 prev_state=0 next_pid=4243");
	end(gpy, T0 + 10 * US);
	finish();
	c = call("app.spin (p.py:1)");
	CHECK(c && c->dur == 10 * US && c->part[RP_PREEMPTED] == 4 * US);
	CHECK(c && c->part[RP_GUEST_CPU] == 6 * US && c->preempt_overlap == 4 * US);
	CHECK(report_nr_vcpus(r) == 1 && report_vcpu_at(r, 0)->vcpu == 1);
}

/* The pipeline's counters saturate: 65536 inserts of one sector count
 * 65535 queued, 65536 issues 65535 in flight; 65535 completions then
 * leave nothing in flight (blocked, no I/O) */
static void test_vstate_saturate(void)
{
	const char *rq = "dev=1 sector=8 nr_sector=8 rwbs='R'";
	const struct report_call *c;
	struct merge_event ev;
	int bad = 0;

	setup();
	ins(gk, "sched_switch", T0, 0, "prev_pid=0 prev_state=0 next_pid=300");
	begin(gpy, "app.read (r.py:1)", T0 + 1 * US);
	ins(gk, "sched_switch", T0 + 2 * US, 0, "prev_pid=300 prev_state=1 next_pid=0");
	/* the state tracker alone (the analyser's requests of one sector
	 * are a list: 2^16 of them take minutes) */
	ev = mk(gk, MERGE_EV_INSTANT, "block_rq_insert", T0 + 3 * US, 0, rq);
	for (int i = 0; i < 65536; i++)
		bad += crit_feed(r, &ev) < 0;
	ev = mk(gk, MERGE_EV_INSTANT, "block_rq_issue", T0 + 4 * US, 0, rq);
	for (int i = 0; i < 65536; i++)
		bad += crit_feed(r, &ev) < 0;
	ev = mk(gk, MERGE_EV_INSTANT, "block_rq_complete", T0 + 5 * US, 0, rq);
	for (int i = 0; i < 65535; i++)
		bad += crit_feed(r, &ev) < 0;
	CHECK(!bad);
	ins(gk, "sched_wakeup", T0 + 6 * US, 0, "pid=300 target_cpu=0");
	ins(gk, "sched_switch", T0 + 7 * US, 0, "prev_pid=0 prev_state=0 next_pid=300");
	end(gpy, T0 + 8 * US);
	finish();
	c = call("app.read (r.py:1)");
	CHECK(c && c->dur == 7 * US && c->part[RP_GUEST_CPU] == 2 * US);
	CHECK(c && c->part[RP_BLOCKED] == 2 * US && c->part[RP_QUEUE] == 1 * US);
	CHECK(c && c->part[RP_DEVICE] == 1 * US && c->part[RP_RUNNABLE] == 1 * US);
}

/* The first column of the first row of @sql on @db, as text ("" none,
 * "NULL" a null). */
static const char *sq1(sqlite3 *db, const char *sql)
{
	static char buf[2048];
	sqlite3_stmt *st;

	buf[0] = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(buf, sizeof(buf), "error: %s", sqlite3_errmsg(db));
		return buf;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(buf, sizeof(buf), "%s", sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" :
			 (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

/* export --sqlite's sink fed directly: an instant without arguments (args
 * NULL); a string argument past the 1 KiB args buffer and eight long ones
 * (cut: still JSON); a signed array and one whose numbers run past the
 * event's 16 (cut there); a counter; an end with no slice open (no row);
 * a request of a syscall outside any Python call (no stack); past 2^20
 * rows (a commit between: every row kept); a slice on a track past the
 * first 64 (the sink's stacks grow twice) */
static void test_sqlite_sink(void)
{
	const struct report_opts o = { 0 };
	const char *db = "sink.db";
	char big[1500];
	struct merge_event ev;
	sqlite3 *q = NULL;
	uint32_t far = 0;
	void *s;
	int bad = 0;

	setup();
	unlink(db);
	s = report_sink_sqlite.open(&tb, db, &o);
	CHECK(s != NULL);
	if (!s)
		return;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
#define EV(e) (bad += report_sink_sqlite.event(s, &(e)) < 0)
	ev = mk(gpy, MERGE_EV_INSTANT, "note", T0, 0, NULL);
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "long", T0 + 1, 0, "s='x'");
	ev.args[0].v.str = merge_str_intern0(&tb, big);
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "many", T0 + 2, 0,
		"a='x' b='x' c='x' d='x' e='x' f='x' g='x' h='x'");
	for (int i = 0; i < ev.nr_args; i++)
		ev.args[i].v.str = merge_str_intern0(&tb, big + sizeof(big) - 200);
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "arrays", T0 + 3, 0, "v=0 w=0");
	ev.args[0].type = MERGE_ARG_ARRAY_I64;
	ev.args[0].v.u = merge_arr_ref(0, 2);
	ev.args[1].type = MERGE_ARG_ARRAY_U64;
	ev.args[1].v.u = merge_arr_ref(14, 4);
	ev.arr[0] = (uint64_t)-5;
	ev.arr[1] = 7;
	ev.arr[14] = 1;
	ev.arr[15] = 2;
	ev.nr_arr = 16;
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "cut", T0 + 3, 0, "s='x' v=0");
	ev.args[0].v.str = merge_str_intern0(&tb, big + 600);
	ev.args[1].type = MERGE_ARG_ARRAY_U64;
	ev.args[1].v.u = merge_arr_ref(0, 16);
	for (int i = 0; i < 16; i++)
		ev.arr[i] = UINT64_MAX - (uint64_t)i;
	ev.nr_arr = 16;
	EV(ev);
	ev = mk(gpy, MERGE_EV_COUNTER, "queue depth", T0 + 4, 0, NULL);
	ev.value = 42;
	EV(ev);
	ev = mk(gk, MERGE_EV_END, NULL, T0 + 5, 0, NULL);
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "sys_enter_fsync", T0 + 6, 0, "fd=3");
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "block_rq_issue", T0 + 7, 0,
		"dev=1 sector=8 nr_sector=8 rwbs='WS'");
	EV(ev);
	ev = mk(gk, MERGE_EV_INSTANT, "block_rq_complete", T0 + 8, 0,
		"dev=1 sector=8 nr_sector=8 rwbs='WS'");
	EV(ev);
	ev = mk(gpy, MERGE_EV_INSTANT, "sys_exit_fsync", T0 + 9, 0, "ret=0");
	EV(ev);
	/* a slice on a track past the first 64 the sink's stacks were
	 * given (by the end above): they grow a second time */
	for (int i = 0; i < 70; i++)
		far = merge_track_get(&tb, MERGE_MACHINE_HOST, 9100 + i, 9100 + i, 0, 0);
	ev = mk(far, MERGE_EV_BEGIN, "far", T0 + 9, 0, NULL);
	EV(ev);
	ev = mk(far, MERGE_EV_END, NULL, T0 + 10, 0, NULL);
	EV(ev);
	ev = mk(hother, MERGE_EV_INSTANT, "tick", T0 + 10, 1, NULL);
	for (int i = 0; i < (1 << 20); i++)
		EV(ev);
#undef EV
	CHECK(!bad);
	CHECK(report_sink_sqlite.close(s) == 0);
	CHECK(sqlite3_open(db, &q) == SQLITE_OK);
	CHECK_STR(sq1(q, "SELECT args FROM instants WHERE name = 'note'"), "NULL");
	CHECK_STR(sq1(q, "SELECT json_valid(args) AND length(args) < 1024 AND "
		      "json_extract(args, '$.s') LIKE 'xxxx%' FROM instants WHERE name = 'long'"), "1");
	CHECK_STR(sq1(q, "SELECT json_valid(args) AND length(args) < 1024 AND "
		      "(SELECT count(*) FROM json_each(args)) BETWEEN 4 AND 7 "
		      "FROM instants WHERE name = 'many'"), "1");
	CHECK_STR(sq1(q, "SELECT args FROM instants WHERE name = 'arrays'"),
		  "{\"v\":[-5,7],\"w\":[1,2]}");
	/* the string whole, the array cut where the buffer ends */
	CHECK_STR(sq1(q, "SELECT json_valid(args) AND length(json_extract(args, '$.s')) = 899 AND "
		      "json_array_length(json_extract(args, '$.v')) BETWEEN 1 AND 15 "
		      "FROM instants WHERE name = 'cut'"), "1");
	CHECK_STR(sq1(q, "SELECT value || ' ' || utid FROM counters WHERE name = 'queue depth'"),
		  "42 0");
	CHECK_STR(sq1(q, "SELECT count(*) FROM slices"), "1");
	CHECK_STR(sq1(q, "SELECT name || ' ' || dur FROM slices"), "far 1");
	CHECK_STR(sq1(q, "SELECT syscall || ' ' || links || ' ' || coalesce(python_stack, 'none') "
		      "FROM requests"), "fsync .S.I.....CX. none");
	CHECK_STR(sq1(q, "SELECT count(*) FROM instants WHERE name = 'tick'"), "1048576");
	sqlite3_close(q);
	unlink(db);
}

/* The whole of file @path (static buffer; "" if unreadable). */
static const char *slurp(const char *path)
{
	static char buf[1 << 18];
	FILE *fp = fopen(path, "r");
	size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;

	if (fp)
		fclose(fp);
	buf[n] = 0;
	return buf;
}

/* How many times @needle is in @hay. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The text of the report (static buffer). */
static const char *text_of(const struct report_opts *o)
{
	static char buf[1 << 16];
	FILE *fp = fmemopen(buf, sizeof(buf) - 1, "w");

	memset(buf, 0, sizeof(buf));
	CHECK(fp && report_print_text(r, fp, o) == 0);
	if (fp)
		fclose(fp);
	return buf;
}

/* The text and HTML outputs of one report: requests of a Python call five
 * frames deep (the table shows the innermost three), of a syscall with no
 * Python call (an async write: its syscall returns before the completion,
 * a stage left out), of the kernel (no syscall) and of a host thread; a
 * request issued at its syscall's entry (that stage 0 ns, its histogram
 * from 0) and one of 0 ns; a 1 ns queue stage in a 10 ms timeline; an
 * exit of a thread merge knows as no vCPU; a thread without a name; top
 * 1 and one function cut the lists.  A second report with --all-calls:
 * a syscall of 0 ns (no call) and of 3 us (a call, though its thread has
 * no frames), the one function 0 ns long.  Outputs that cannot be made
 * are named. */
static void test_outputs(void)
{
	struct report_opts o = { .top = 10, .fns = 10 };
	const char *py[5] = { "m.a (x.py:1)", "m.b (x.py:2)", "m.c (x.py:3)", "m.d (x.py:4)",
			      "m.e (x.py:5)" };
	const char *h, *t;
	uint32_t g301;

	setup();
	g301 = merge_track_get(&tb, 1, 300, 301, 0, merge_str_intern0(&tb, "writer"));
	ins(gk, "sched_switch", T0, 0, "prev_pid=0 prev_state=0 next_pid=302");
	for (int i = 0; i < 5; i++)
		begin(gpy, py[i], T0 + (uint64_t)i * US);
	ins(gpy, "sys_enter_fsync", T0 + 5 * US, 0, "fd=3");
	ins(gpy, "block_rq_issue", T0 + 5 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='WS'");
	ins(gk, "block_rq_complete", T0 + 5 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='WS'");
	ins(gpy, "sys_exit_fsync", T0 + 7 * US, 0, "ret=0");
	for (int i = 4; i >= 0; i--)
		end(gpy, T0 + (uint64_t)(12 - i) * US);
	ins(g301, "sys_enter_write", T0 + 20 * US, 0, "fd=4 count=4096");
	ins(g301, "block_rq_issue", T0 + 20 * US, 0, "dev=1 sector=16 nr_sector=8 rwbs='W'");
	ins(g301, "sys_exit_write", T0 + 21 * US, 0, "ret=4096");
	ins(gk, "block_rq_complete", T0 + 30 * US, 0, "dev=1 sector=16 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_insert", T0 + 40 * US - 1, 0, "dev=1 sector=100 nr_sector=8 rwbs='R'");
	ins(gk, "block_rq_issue", T0 + 40 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='R'");
	ins(hother, "block_rq_issue", T0 + 50 * US, 1, "dev=0x800001 sector=8 nr_sector=8 rwbs='R'");
	ins(hother, "block_rq_complete", T0 + 60 * US, 1, "dev=0x800001 sector=8 nr_sector=8 rwbs='R'");
	feed(hio, MERGE_EV_BEGIN, "exit: HLT", T0 + 70 * US, 3, NULL);
	end(hio, T0 + 75 * US);
	ins(gk, "block_rq_complete", T0 + 10040 * US, 0, "dev=1 sector=100 nr_sector=8 rwbs='R'");
	ins(gk, "sched_switch", T0 + 10050 * US, 0, "prev_pid=302 prev_state=1 next_pid=0");
	{
		uint32_t g303 = merge_track_get(&tb, 1, 300, 303, 0, merge_str_intern0(&tb, "w"));

		ins(gk, "sched_switch", T0 + 100 * US, 1, "prev_pid=0 prev_state=0 next_pid=303");
		begin(g303, "w.run (w.py:1)", T0 + 101 * US);
		end(g303, T0 + 120 * US);
		ins(gk, "sched_switch", T0 + 130 * US, 1, "prev_pid=303 prev_state=1 next_pid=0");
	}
	finish();
	CHECK(report_nr_calls(r, 0) == 2 && report_nr_threads(r) == 2);
	CHECK(report_write_html(r, "out.html", &o) == 0);
	h = slurp("out.html");
	/* the innermost three frames of the fsync's stack, the rest on hover */
	CHECK(strstr(h, ">&hellip; &gt; m.c (x.py:3) &gt; m.d (x.py:4) &gt; m.e (x.py:5)</span>"));
	/* the slowest first: the kernel's, the host's, the fsync, the write */
	CHECK(strstr(h, "<tr><td>1</td><td>10000.001</td><td class='l mono'>..QI.....C..</td>"
		     "<td class=l>guest1 0:1 sector 100 +8 ") != NULL);
	CHECK(strstr(h, "<tr><td>2</td><td>10.000</td><td class='l mono'>...I.....C..</td>"
		     "<td class=l>host 8:1 sector 8 +8 ") != NULL);
	CHECK(strstr(h, "<tr><td>4</td><td>1.000</td><td class='l mono'>.S.I.....CX.</td>"
		     "<td class=l>guest1 0:1 sector 16 +8 write") != NULL);
	CHECK(strstr(h, "<td class=l>?</td>") != NULL);
	t = text_of(&o);
	CHECK(strstr(t, "(no Python call in the data)") != NULL);
	unlink("out.html");
	CHECK(report_write_html(r, "nodir/out.html", &o) == -1);
	CHECK(strstr(vt_err_msg(), "nodir/out.html: cannot create: No such file or directory") != NULL);
	CHECK(report_write_html(r, "/dev/full", &o) == -1);
	CHECK(strstr(vt_err_msg(), "/dev/full: write error: No space left on device") != NULL);
	{
		FILE *ro = fopen("/dev/null", "r");

		o.text_out = "ro.txt";
		CHECK(ro && report_print_text(r, ro, &o) == -1);
		CHECK(strstr(vt_err_msg(), "ro.txt: write error") != NULL);
		if (ro)
			fclose(ro);
		o.text_out = NULL;
	}
	o.top = 1;
	o.fns = 1;
	CHECK(report_write_html(r, "out1.html", &o) == 0);
	h = slurp("out1.html");
	CHECK(count_of(h, "<tr><td class=l>guest</td>") + count_of(h, "<tr><td class=l>host</td>") == 1);
	unlink("out1.html");

	setup();
	report_free(r);
	r = report_new(&tb, 1);
	ins(gpy, "sys_enter_getpid", T0, 0, NULL);
	ins(gpy, "sys_exit_getpid", T0, 0, "ret=300");
	begin(gpy, "m.z (z.py:1)", T0 + 1 * US);
	end(gpy, T0 + 1 * US);
	ins(gpy, "sys_enter_read", T0 + 2 * US, 0, "fd=3");
	ins(gpy, "sys_exit_read", T0 + 5 * US, 0, "ret=1");
	/* threads of equal running time on three machines: by machine */
	{
		uint32_t g2 = merge_track_get(&tb, 2, 0, 0, 0, 0);

		ins(g2, "sched_switch", T0 + 10 * US, 0, "prev_pid=0 prev_state=0 next_pid=400");
		ins(hother, "sched_switch", T0 + 10 * US, 5, "prev_pid=0 prev_state=0 next_pid=9000");
		ins(gk, "sched_switch", T0 + 10 * US, 0, "prev_pid=0 prev_state=0 next_pid=310");
		ins(g2, "sched_switch", T0 + 20 * US, 0, "prev_pid=400 prev_state=1 next_pid=0");
		ins(hother, "sched_switch", T0 + 20 * US, 5, "prev_pid=9000 prev_state=1 next_pid=0");
		ins(gk, "sched_switch", T0 + 20 * US, 0, "prev_pid=310 prev_state=1 next_pid=0");
	}
	finish();
	CHECK(report_nr_threads(r) == 3);
	for (size_t i = 0; i < report_nr_threads(r) && i < 3; i++)
		CHECK(report_thread_at(r, i)->machine == i && report_thread_at(r, i)->ns[RT_RUNNING] == 10 * US);
	CHECK(report_nr_calls(r, 1) == 1 && report_call_at(r, 1, 0)->dur == 3 * US);
	CHECK(report_nr_calls(r, 0) == 0);
	CHECK(report_write_html(r, "out2.html", &o) == 0);
	h = slurp("out2.html");
	CHECK(count_of(h, "m.z (z.py:1)") == 1);
	unlink("out2.html");
	t = text_of(&o);
	CHECK(strstr(t, "0.0%  m.z (z.py:1)") != NULL);
}

/* Pass 1 and 2 beside the rule (device 2, fd 12 +1 MiB, from six exact
 * votes): a pwrite64 that returns after its request completed is not its
 * operation (nor a guess: it has an offset); a read of no fd at its
 * offset, and one 2^48 bytes past it, vote for no rule (a device with
 * only reads of no fd has none); a write never
 * completed counts in no rule's share; a write whose pieces start before
 * QEMU's 4 KiB window, and a 512-byte one with a piece past its end in
 * the window: none; a discard with a read on its range: none; a read the
 * read-modify-write of another request took is no guess of a request
 * without one; a pwrite64 whose exit has no ret keeps its count; a flush
 * with 300 other operations before its fdatasync in its window: none
 * (SCAN_MAX).  Kicks and injections: a request of unknown CPU takes vCPU
 * 0's kick (learned: it has one); one with neither before its completion
 * takes none of the next request's.  Requests of equal latency and
 * functions of equal time are in a stable order. */
static void test_match_edges(void)
{
	const uint64_t MiB = 1ULL << 20, P = 1000 * US;
	const struct report_req *q;
	char a[128];

#define AT(k) (T0 + (k) * P)
#define POS(sector) (MiB + (sector) * 512ULL)
	setup();
	for (int k = 0; k < 6; k++) {
		rq(AT(k), 8 * (uint64_t)k, 8, "W", 1);
		snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(8 * (unsigned long long)k));
		qsys(AT(k) + 2 * US, "pwrite64", a, 4096);
	}
	rq(AT(6), 100, 8, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(100));
	ins(hio, "sys_enter_pwrite64", AT(6) + 2 * US, 3, a);
	ins(hio, "sys_exit_pwrite64", AT(6) + 60 * US, 3, "ret=4096");
	rq(AT(7), 200, 8, "R", 1);
	snprintf(a, sizeof(a), "count=4096 pos=%llu", POS(200));
	qsys(AT(7) + 2 * US, "pread64", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(200) + (1ULL << 49));
	qsys(AT(7) + 4 * US, "pread64", a, 4096);
	rq(AT(8), 300, 8, "W", 0);
	rq(AT(9), 1000, 16, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=8192 pos=%llu", POS(1000) - 4096);
	qsys(AT(9) + 2 * US, "pwrite64", a, 8192);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(1008));
	qsys(AT(9) + 4 * US, "pwrite64", a, 4096);
	rq(AT(10), 1200, 1, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=512 pos=%llu", POS(1202));
	qsys(AT(10) + 2 * US, "pwrite64", a, 512);
	rq(AT(11), 1400, 8, "D", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(1400));
	qsys(AT(11) + 2 * US, "pread64", a, 4096);
	rq(AT(12), 2000, 8, "R", 1);
	rq(AT(12) + 1 * US, 1601, 1, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(1600));
	qsys(AT(12) + 2 * US, "pread64", a, 4096);
	qsys(AT(12) + 4 * US, "pwrite64", a, 4096);
	rq(AT(13), 1800, 8, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(1800));
	ins(hio, "sys_enter_pwrite64", AT(13) + 2 * US, 3, a);
	ins(hio, "sys_exit_pwrite64", AT(13) + 3 * US, 3, NULL);
	rq(AT(14), 0, 0, "FF", 0);
	for (int i = 0; i < 300; i++)
		qsys(AT(14) + 2 * US + (uint64_t)i * 100, "pwrite64", "fd=12 count=512 pos=0", 512);
	qsys(AT(14) + 40 * US, "fdatasync", "fd=12", 0);
	ins(gk, "block_rq_complete", AT(14) + 50 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	/* read-modify-writes: the reads before the write that are not its
	 * own (a submission, another fd, past its end, before its start,
	 * another request's exact read) */
	rq(AT(15), 5000, 8, "R", 1);
	rq(AT(15) + 500, 5001, 1, "W", 1);
	qsys(AT(15) + 1 * US, "io_submit", "ctx_id=1 nr=1", 1);
	snprintf(a, sizeof(a), "fd=13 count=4096 pos=%llu", POS(5000));
	qsys(AT(15) + 2 * US, "pread64", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(5016));
	qsys(AT(15) + 3 * US, "pread64", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(4984));
	qsys(AT(15) + 4 * US, "pread64", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(5000));
	qsys(AT(15) + 5 * US, "pread64", a, 4096);
	/* ... and a write of the next block before it, no read */
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(5008));
	qsys(AT(15) + 6 * US, "pwritev", a, 4096);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(5000));
	qsys(AT(15) + 7 * US, "pwrite64", a, 4096);
	/* two 512-byte writes of one block: the first takes the read; a
	 * read request after them finds it taken */
	rq(AT(16), 6001, 1, "W", 1);
	rq(AT(16) + 500, 6002, 1, "W", 1);
	rq(AT(16) + 1 * US, 6000, 8, "R", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(6000));
	qsys(AT(16) + 2 * US, "pread64", a, 4096);
	qsys(AT(16) + 4 * US, "pwrite64", a, 4096);
	/* two writes of one sector in flight, one pwrite64: the first's */
	rq(AT(17), 7000, 8, "W", 1);
	rq(AT(17) + 500, 7000, 8, "W", 1);
	snprintf(a, sizeof(a), "fd=12 count=4096 pos=%llu", POS(7000));
	qsys(AT(17) + 2 * US, "pwrite64", a, 4096);
	/* kicks and injections on device 1 */
	ins(gk, "block_rq_issue", AT(20), -1, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(hv, "kvm_mmio", AT(20) + 1 * US, 1, "gpa=0xfe003000 type=2");
	ins(gk, "block_rq_complete", AT(20) + 10 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", AT(21), 0, "dev=1 sector=16 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", AT(21) + 10 * US, 0, "dev=1 sector=16 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", AT(21) + 20 * US, 0, "dev=1 sector=24 nr_sector=8 rwbs='W'");
	ins(hv, "kvm_mmio", AT(21) + 21 * US, 1, "gpa=0xfe003000 type=2");
	ins(hio, "kvm_msi_set_irq", AT(21) + 22 * US, 3, "address=0xfee00000 data=0x4022");
	ins(gk, "block_rq_complete", AT(21) + 30 * US, 0, "dev=1 sector=24 nr_sector=8 rwbs='W'");
	/* device 5: reads of no fd only, no rule */
	for (int i = 0; i < 2; i++) {
		snprintf(a, sizeof(a), "dev=5 sector=%d nr_sector=8 rwbs='R'", 8 * i);
		ins(gk, "block_rq_issue", AT(25) + (uint64_t)i * 100 * US, 0, a);
		snprintf(a, sizeof(a), "count=4096 pos=%d", 4096 * i);
		qsys(AT(25) + (uint64_t)i * 100 * US + 2 * US, "pread64", a, 4096);
		snprintf(a, sizeof(a), "dev=5 sector=%d nr_sector=8 rwbs='R'", 8 * i);
		ins(gk, "block_rq_complete", AT(25) + (uint64_t)i * 100 * US + 50 * US, 0, a);
	}
	/* equal latencies, equal functions */
	for (int i = 0; i < 3; i++) {
		snprintf(a, sizeof(a), "dev=3 sector=%d nr_sector=8 rwbs='R'", 8 * i);
		ins(gk, "block_rq_issue", AT(22) + (uint64_t)i * US, 0, a);
		ins(gk, "block_rq_complete", AT(22) + (uint64_t)(i + 5) * US, 0, a);
	}
	begin(gpy, "m.f2 (f.py:2)", AT(23));
	end(gpy, AT(23) + 5 * US);
	begin(gpy, "m.f1 (f.py:1)", AT(23) + 10 * US);
	end(gpy, AT(23) + 15 * US);
	begin(gpy, "m.f3 (f.py:3)", AT(23) + 20 * US);
	end(gpy, AT(23) + 25 * US);
	finish();
	for (int k = 6; k <= 12; k++)
		if (k != 8)
			CHECK_STR(links(req_issued(AT(k))), "...I.....C..");
	q = req_issued(AT(8));
	CHECK(q && !(q->mask & (1u << RL_COMPLETE)) && !(q->mask & (1u << RL_HOST_BEGIN)));
	q = req_issued(AT(12) + 1 * US);
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_RMW);
	CHECK_STR(ops(q), "12002,12004");
	q = req_issued(AT(13));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT && q->host_n == 1 &&
	      report_req_hostio(r, q, 0)->len == 4096);
	CHECK_STR(links(req_issued(AT(14))), "...I.....C..");
	q = req_issued(AT(15));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT);
	CHECK_STR(ops(q), "15005");
	q = req_issued(AT(15) + 500);
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_COVER);
	CHECK_STR(ops(q), "15007");
	q = req_issued(AT(16));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_RMW);
	CHECK_STR(ops(q), "16002,16004");
	q = req_issued(AT(16) + 500);
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_COVER);
	CHECK_STR(ops(q), "16004");
	CHECK_STR(links(req_issued(AT(16) + 1 * US)), "...I.....C..");
	q = req_issued(AT(17));
	CHECK(q && q->how[RL_HOST_BEGIN] == RH_EXACT);
	CHECK_STR(links(req_issued(AT(17) + 500)), "...I.....C..");
	q = req_issued(AT(20));
	CHECK(q && q->t[RL_KICK] == AT(20) + 1 * US && q->kick_vcpu == 0);
	q = req_issued(AT(21));
	CHECK_STR(links(q), "...I.....C..");
	q = req_issued(AT(21) + 20 * US);
	CHECK(q && q->t[RL_KICK] == AT(21) + 21 * US && q->t[RL_INJECT] == AT(21) + 22 * US);
	{
		size_t n;
		const uint32_t *slow = report_slowest(r, &n);
		size_t at = n;

		for (size_t i = 0; i < n; i++)
			if (report_req_at(r, slow[i])->dev == 3) {
				at = i;
				break;
			}
		CHECK(at + 2 < n && report_req_at(r, slow[at])->sector == 0 &&
		      report_req_at(r, slow[at + 1])->sector == 8 &&
		      report_req_at(r, slow[at + 2])->sector == 16);
	}
	{
		/* two of the link patterns: the most frequent, the rest not counted */
		uint32_t m[2];
		uint64_t c[2];
		size_t n = report_masks(r, m, c, 2);

		CHECK(n == 2 && c[0] >= c[1] && c[0] + c[1] < report_nr_reqs(r));
	}
	for (size_t i = 0; i < report_nr_devs(r); i++) {
		uint32_t m, dev;
		int64_t fd, delta;
		int ok = report_dev_map(r, i, &m, &dev, &fd, &delta);

		CHECK(dev == 2 ? ok && fd == 12 : !ok);
	}
	CHECK(report_nr_fns(r) == 3);
	for (size_t i = 0; i < report_nr_fns(r) && i < 3; i++)
		CHECK(report_fn_at(r, i)->incl_ns == 5 * US &&
		      (i == 0 || report_fn_at(r, i - 1)->name < report_fn_at(r, i)->name));
#undef AT
#undef POS
}

/* A request issued at 0 ns, the timeline's start: its latency is still
 * its issue to its completion (a time of 0 was taken for none); one
 * completed at the ns of its issue: 0 */
static void test_latency_zero(void)
{
	setup();
	ins(gk, "block_rq_issue", 0, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", 5 * US, 0, "dev=1 sector=8 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_issue", 10 * US, 0, "dev=1 sector=16 nr_sector=8 rwbs='W'");
	ins(gk, "block_rq_complete", 10 * US, 0, "dev=1 sector=16 nr_sector=8 rwbs='W'");
	finish();
	CHECK(report_nr_reqs(r) == 2 && report_req_latency(report_req_at(r, 0)) == 5 * US);
	CHECK(report_nr_reqs(r) == 2 && report_req_latency(report_req_at(r, 1)) == 0);
}

/* A QEMU whose image fd is past REPORT_BDEV_FD (a high ulimit -n): the
 * offset rule is that fd's, not a host block device's */
static void test_high_fd(void)
{
	const struct report_opts o = { .top = 10, .fns = 10 };
	char a[128];

	setup();
	for (int k = 0; k < 2; k++) {
		rq(T0 + (uint64_t)k * MS, 8 * (uint64_t)k, 8, "W", 1);
		snprintf(a, sizeof(a), "fd=40000 count=4096 pos=%llu", 4096ULL * (unsigned)k);
		qsys(T0 + (uint64_t)k * MS + 2 * US, "pwrite64", a, 4096);
	}
	finish();
	CHECK(report_bdev(r, 40000) == 0);
	CHECK(strstr(text_of(&o),
		     "  device 0:2 (guest 1): QEMU fd 40000, file offset = sector * 512 + 0\n"));
}

/* io_uring operations never completed (no exit) on a device whose rule
 * is QEMU's bios' block device: not a write's (exact, covering or a
 * piece), not a flush's (an FSYNC), not a read-modify-write's read */
static void test_uring_open(void)
{
	const uint64_t P = 1000 * US;
	char a[128];

#define AT(k) (T0 + (k) * P)
#define SUBMIT(t, ud, op) (snprintf(a, sizeof(a), "user_data=%d opcode=%d", ud, op), \
			   ins(hio, "io_uring_submit_req", t, 3, a))
#define BIO(t, sector, nr, rw) (snprintf(a, sizeof(a), "dev=0x700000 sector=%d nr_sector=%d rwbs='%s'", \
					 sector, nr, rw), ins(hio, "block_bio_queue", t, 3, a))
#define DONE(t, ud) (snprintf(a, sizeof(a), "user_data=%d res=4096", ud), \
		     ins(hio, "io_uring_complete", t, 3, a))
	setup();
	for (int k = 0; k < 4; k++) {
		rq(AT(k), 8 * (uint64_t)k, 8, "W", 1);
		SUBMIT(AT(k) + 2 * US, k + 1, 23);
		BIO(AT(k) + 2 * US, 2048 + 8 * k, 8, "W");
		DONE(AT(k) + 5 * US, k + 1);
	}
	rq(AT(4), 100, 8, "W", 1);
	SUBMIT(AT(4) + 2 * US, 100, 23);
	BIO(AT(4) + 2 * US, 2148, 8, "W");
	rq(AT(5), 0, 0, "FF", 0);
	SUBMIT(AT(5) + 2 * US, 200, 3);
	ins(gk, "block_rq_complete", AT(5) + 50 * US, 0,
	    "dev=2 sector=18446744073709551615 nr_sector=0 rwbs='FF'");
	rq(AT(6), 301, 1, "W", 1);
	SUBMIT(AT(6) + 2 * US, 300, 22);
	BIO(AT(6) + 2 * US, 2344, 8, "R");
	SUBMIT(AT(6) + 4 * US, 301, 23);
	BIO(AT(6) + 4 * US, 2344, 8, "W");
	DONE(AT(6) + 6 * US, 301);
	finish();
	{
		uint32_t m, dev;
		int64_t fd, delta;

		CHECK(report_nr_devs(r) == 1 && report_dev_map(r, 0, &m, &dev, &fd, &delta));
		CHECK(fd == REPORT_BDEV_FD && delta == 1 << 20 && report_bdev(r, fd) == 0x700000);
	}
	CHECK_STR(links(req_issued(AT(4))), "...I.....C..");
	CHECK_STR(links(req_issued(AT(5))), "...I.....C..");
	const struct report_req *q = req_issued(AT(6));

	CHECK(q && q->how[RL_HOST_BEGIN] == RH_COVER);
	CHECK_STR(ops(q), "6004");
#undef AT
#undef SUBMIT
#undef BIO
#undef DONE
}

int main(void)
{
	test_classes();
	test_keys();
	test_kicks();
	test_inject();
	test_uring();
	test_bios();
	test_bdev_max();
	test_stack();
	test_growth();
	test_vstate();
	test_kick_irq();
	test_host();
	test_qemu_misc();
	test_vstate_misc();
	test_scan_max();
	test_match();
	test_guess();
	test_edges();
	test_crit_edges();
	test_vcpu_register();
	test_vcpu_tracks();
	test_vstate_pipe();
	test_vstate_cpu();
	test_vstate_saturate();
	test_sqlite_sink();
	test_many_threads();
	test_outputs();
	test_match_edges();
	test_latency_zero();
	test_high_fd();
	test_uring_open();
	report_free(r);
	merge_tables_free(&tb);
	return check_done();
}
