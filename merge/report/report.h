/*
 * report.h - `vmtrace report` / `vmtrace export` (merge/report/ only): the I/O
 * chain analyser fed by merge's sorted event stream, and its outputs.
 * See docs/report.md (chain model, matching rules) and
 * docs/format/sqlite.md (the export's tables).
 */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "merge/merge.h"

/* The links of one guest I/O request's chain, in causal order. */
enum report_link {
	RL_PY_BEGIN,	/* P: the Python call that made the syscall begins */
	RL_SYS_ENTER,	/* S: guest syscall entry */
	RL_INSERT,	/* Q: block_rq_insert */
	RL_ISSUE,	/* I: block_rq_issue */
	RL_KICK,	/* K: host kvm_pio / kvm_mmio / kvm_fast_mmio (the notify) */
	RL_HOST_BEGIN,	/* H: QEMU thread's I/O syscall entry */
	RL_HOST_END,	/* D: ... and its exit */
	RL_INJECT,	/* J: kvm_msi_set_irq / kvm_set_irq / kvm_inj_virq */
	RL_IRQ,		/* R: guest irq_handler_entry */
	RL_COMPLETE,	/* C: block_rq_complete */
	RL_SYS_EXIT,	/* X: guest syscall exit */
	RL_PY_END,	/* E: the Python call returns */
	RL_NR
};

/* One letter per link, in enum order ("PSQIKHDJRCXE"). */
extern const char report_link_chars[RL_NR + 1];
extern const char *const report_link_names[RL_NR];

/* A stage: the time from one link to another (both must be present). */
struct report_stage {
	const char *name;	/* short id (SQL column / HTML) */
	const char *label;	/* what it measures */
	int from, to;		/* enum report_link */
};
#define REPORT_NR_STAGES	14
extern const struct report_stage report_stages[REPORT_NR_STAGES];

/* How a link was matched (docs/report.md, "Matching rules"). */
enum report_how {
	RH_NONE,	/* link missing */
	RH_THREAD,	/* the guest thread's open syscall / Python call */
	RH_KEY,		/* block events of one (dev, sector) key, in order */
	RH_CPU,		/* last virtio irq on the completing vCPU */
	RH_NOTIFY,	/* a kick to the device's notify address */
	RH_EXACT,	/* host syscall at the request's file offset and length */
	RH_COVER,	/* one host syscall covering the request and maybe others
			 * (merged requests; QEMU's alignment widening it) */
	RH_SPLIT,	/* several host syscalls covering one request */
	RH_RMW,		/* read-modify-write: a read, then a covering write */
	RH_FLUSH,	/* a flush served by QEMU's fdatasync / fsync */
	RH_MSI,		/* an injection of the device's MSI (address, data) */
	RH_GUESS,	/* time order only: nothing identifies the work */
	RH_NR
};
extern const char *const report_how_names[RH_NR];

/* One QEMU disk operation: a syscall (pread64, ...) or an io_uring request
 * (submit -> complete); off/len where the event carries them. */
struct report_hostio {
	uint64_t enter, exit;	/* exit 0: the end is not known (a submit) */
	int32_t tid;
	uint32_t name;		/* interned: "pread64", "io_uring READV", ... */
	int64_t fd;		/* -1 unknown */
	uint64_t off, len;	/* valid when has_off */
	char dir;		/* 'R' 'W' 'F' (flush) 'D' (discard) '?' */
	uint8_t has_off;
};

struct report_req {
	uint64_t t[RL_NR];	/* host-timeline ns, valid where mask has the bit */
	uint32_t mask;		/* 1 << enum report_link */
	uint32_t machine;	/* guest number */
	int32_t cpu;		/* guest vCPU of the issue (-1 unknown) */
	int32_t cpu_done;	/* guest vCPU of the completion */
	int32_t tid;		/* guest thread that inserted/issued it */
	uint32_t dev;
	uint64_t sector;
	uint32_t nr_sector;
	uint32_t rwbs;		/* interned */
	int32_t sys;		/* index of the syscall record, -1 none */
	int32_t next_same;	/* next pending request with the same key, -1 */
	int32_t host_tid;	/* QEMU thread of the host I/O syscall, -1 */
	uint32_t host_sys;	/* interned name of that syscall */
	int32_t kick_vcpu;
	uint8_t how[RL_NR];	/* enum report_how per link */
	uint32_t host_first, host_n;	/* its QEMU operations (report_req_hostio) */
	int32_t kick_tid, inj_tid;	/* host threads of K and J, -1 */
	uint64_t kick_addr;	/* port or gpa of the kick */
	uint64_t inj_addr, inj_data;	/* MSI address/data (or gsi, vector) of J */
};

struct report_sys {
	uint64_t enter, exit;	/* exit 0 = never returned in the trace */
	uint64_t py_begin, py_end;	/* 0 = no Python call / not returned */
	uint32_t name;		/* interned syscall name ("write") */
	uint32_t stack;		/* interned Python stack, outer > ... > inner */
	uint32_t machine;
	int32_t tid;
	int32_t next_in_frame;	/* list of the frame's syscalls */
	uint32_t py_track;	/* UINT32_MAX none */
};

/* Percentiles (nearest rank) of one stage. */
struct report_pct {
	uint64_t n, p50, p90, p99, max, sum;
};

/* Per-function time (guest functions: Python, C). */
struct report_fn {
	uint32_t name;
	uint64_t calls, incl_ns, wait_ns;
	int wait_known;		/* 0: a call's machine has no syscall events */
};

/* VM exits (or PVM exit-causing events) per vCPU and reason. */
struct report_exit {
	int32_t vcpu;
	uint32_t name;
	uint64_t count, ns;
	int is_slice;		/* 1: kvm_exit slice (count + time); 0: instant */
};

struct report;

/* The analyser: create, feed every merged event in time order, finish.
 * NULL / -1 with the message set when out of memory.  @tb: the events'
 * string and track tables (the sink's open is given them); the results'
 * names are ids in it.  @all_calls: the slowest calls include interpreter
 * start-up frames and the syscalls of helper processes (--all-calls). */
struct report *report_new(struct merge_tables *tb, int all_calls);
int report_feed(struct report *r, const struct merge_event *ev);
int report_finish(struct report *r);
void report_free(struct report *r);

/* Results (valid after report_finish). */
size_t report_nr_reqs(const struct report *r);
const struct report_req *report_req_at(const struct report *r, size_t i);
const struct report_sys *report_sys_at(const struct report *r, int32_t i);
const struct report_pct *report_stage_pct(const struct report *r, int stage);
/* samples of a stage, sorted ascending (for histograms) */
const uint64_t *report_stage_samples(const struct report *r, int stage, size_t *n);
/* request indexes by end-to-end latency, slowest first */
const uint32_t *report_slowest(const struct report *r, size_t *n);
uint64_t report_req_latency(const struct report_req *q);
size_t report_nr_fns(const struct report *r);
const struct report_fn *report_fn_at(const struct report *r, size_t i);	/* by incl desc */
size_t report_nr_exits(const struct report *r);
const struct report_exit *report_exit_at(const struct report *r, size_t i); /* vcpu, count */
int report_have_exit_slices(const struct report *r);
uint64_t report_events(const struct report *r);
uint64_t report_nr_syscalls(const struct report *r);
uint64_t report_nr_kicks(const struct report *r);
uint64_t report_nr_injects(const struct report *r);
uint64_t report_nr_host_io(const struct report *r);
uint64_t report_nr_guest_irqs(const struct report *r);
/* The @k-th (< q->host_n) QEMU operation of request @q, in time order. */
const struct report_hostio *report_req_hostio(const struct report *r,
					      const struct report_req *q, uint32_t k);
/* Requests whose link @link was matched by @how. */
uint64_t report_how_count(const struct report *r, int link, int how);
/* A QEMU operation's fd that names a host block device, not a file
 * descriptor (a bio QEMU queued: aio=native, io_uring on a block device):
 * REPORT_BDEV_FD + the device's index in report_bdev; its offset is the
 * device's byte. */
#define REPORT_BDEV_FD		0x8000
#define REPORT_BDEV_MAX		0x4000
/* The host dev_t (major << 20 | minor) of such an fd; 0 for another fd. */
uint32_t report_bdev(const struct report *r, int64_t fd);
/* The image offset rule found per guest device (text output): 1 and the
 * QEMU fd and byte delta (offset = sector * 512 + delta) of device @i of
 * report_nr_devs(); 0 when no offset rule was found (a guess). */
size_t report_nr_devs(const struct report *r);
int report_dev_map(const struct report *r, size_t i, uint32_t *machine, uint32_t *dev,
		   int64_t *fd, int64_t *delta);
/* "PSQIKHDJRCXE" with '.' for each missing link, into @buf (RL_NR + 1) */
const char *report_mask_str(uint32_t mask, char *buf);
/* the number of requests of each distinct mask, most frequent first */
size_t report_masks(const struct report *r, uint32_t *masks, uint64_t *counts, size_t max);


/* ---- states and critical path (merge/report/vstate.c, critpath.c) ---- */

/* The disjoint parts a call's time is split into (docs/report.md:
 * critical path); they sum to its duration. */
enum report_part {
	RP_GUEST_CPU,	/* the thread ran, its vCPU in guest mode */
	RP_EXIT_KERNEL,	/* it ran, its vCPU in a VM exit handled in the host kernel */
	RP_EXIT_QEMU,	/* ... in a VM exit handled in QEMU user space */
	RP_PREEMPTED,	/* its vCPU runnable on the host but not running */
	RP_IRQ,		/* it ran an interrupt handler */
	RP_RUNNABLE,	/* runnable in the guest, not scheduled */
	RP_QUEUE,	/* blocked, a block request in the guest queue */
	RP_DRIVER,	/* blocked, a request issued, not yet kicked */
	RP_QEMU,	/* blocked, kicked, QEMU not yet in its disk syscall */
	RP_HOST_IO,	/* blocked, QEMU's disk syscall running */
	RP_TO_INJECT,	/* blocked, host I/O done, not yet injected */
	RP_TO_IRQ,	/* blocked, injected, guest handler not yet run */
	RP_IRQ_DONE,	/* blocked, guest irq handler run, request not completed */
	RP_DEVICE,	/* blocked, a request in flight, its stage not in the data */
	RP_BLOCKED,	/* blocked, no I/O in flight (a lock, a sleep, another thread) */
	RP_UNKNOWN,	/* no scheduling events for the thread (no guest kernel trace) */
	RP_NR
};
extern const char *const report_part_names[RP_NR];	/* "vCPU preempted" */
extern const char *const report_part_ids[RP_NR];	/* "vcpu_preempted" */

/* One slow call of the headline: a Python/C function call or a syscall. */
struct report_call {
	uint64_t begin, dur;		/* host-timeline ns */
	uint64_t part[RP_NR];		/* sums to dur */
	uint64_t preempt_overlap;	/* its vCPU preempted during the call, whatever
					 * the thread did (>= part[RP_PREEMPTED]) */
	uint32_t name;			/* function or syscall name (interned) */
	uint32_t host_sys;		/* the host disk syscall seen, 0 none */
	uint32_t waker;			/* the thread that last woke it during the
					 * call (its name, interned), 0 none */
	uint32_t machine;
	int32_t tid;
};

/* Host states of a vCPU thread (time in each, ns). */
enum report_vstate {
	RV_GUEST, RV_EXIT_KERNEL, RV_EXIT_QEMU, RV_PREEMPTED, RV_BLOCKED, RV_UNKNOWN, RV_NR
};
extern const char *const report_vstate_names[RV_NR];
struct report_vcpu {
	int32_t vcpu, tid;		/* vCPU number, host thread (-1 unknown) */
	uint64_t ns[RV_NR];
};

/* States of a (guest or host) thread from its scheduling events. */
enum report_tstate { RT_RUNNING, RT_IRQ, RT_RUNNABLE, RT_BLOCKED, RT_UNKNOWN, RT_NR };
extern const char *const report_tstate_names[RT_NR];
struct report_thread {
	uint32_t machine;
	int32_t tid;
	uint32_t name;			/* comm (interned), 0 unknown */
	uint64_t ns[RT_NR];
};

/* Slowest calls (@sys 0: Python/C function calls, 1: guest syscalls),
 * slowest first; valid after report_finish. */
size_t report_nr_calls(const struct report *r, int sys);
const struct report_call *report_call_at(const struct report *r, int sys, size_t i);
/* The label of part @p of @r's call @c into @buf ("host fdatasync"), and
 * @c's non-zero parts by size, largest first (how many) - text.c. */
const char *report_part_label(const struct report *r, const struct report_call *c, int p,
			      char *buf, size_t len);
/* The string of name id @id (the tables report_new was given). */
const char *report_str(const struct report *r, uint32_t id);
int report_call_order(const struct report_call *c, int *order);
size_t report_nr_vcpus(const struct report *r);
const struct report_vcpu *report_vcpu_at(const struct report *r, size_t i);
/* threads with a known state, by running time, most first */
size_t report_nr_threads(const struct report *r);
const struct report_thread *report_thread_at(const struct report *r, size_t i);

/* Outputs: 0, or -1 with the message set (I/O error on @path). */
struct report_opts {
	int top;		/* slowest requests listed */
	int fns;		/* functions listed */
	const char *html;	/* --html OUT.html, or NULL */
	const char *text_out;	/* -o FILE for the text, NULL: stdout */
	int all_calls;		/* --all-calls: start-up frames and helper
				 * processes' syscalls in the headline too */
	char *const *inputs;	/* the input directories: a host recording's
				 * extents.tsv maps QEMU's bios to file offsets */
	int ninputs;
};
int report_print_text(const struct report *r, FILE *fp, const struct report_opts *o);
/* Load the extents.tsv of @o's input directories (chain_extents.c): 0 or
 * -1 with the message set (a bad file). */
int report_load_extents(struct report *r, const struct report_opts *o);
/* QEMU's bios on an image file's disk: [0] mapped to file offsets by its
 * extents, [1] in extents that map nothing (unwritten, delayed
 * allocation, changed during the run), [2] outside the file's extents. */
const uint64_t *report_bio_extents(const struct report *r);
int report_write_html(const struct report *r, const char *path, const struct report_opts *o);

/* The sinks `vmtrace report` and `export` run merge's pipeline into:
 * "report" (the analyser, then its text and HTML; opened with a struct
 * report_opts, its OUT unused) and "sqlite" (OUT = the database file; a
 * struct report_opts of which only the inputs count, or NULL). */
extern const struct merge_sink_ops report_sink_report;
extern const struct merge_sink_ops report_sink_sqlite;

#endif
