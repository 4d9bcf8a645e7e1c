/*
 * crit.h - what the state tracker (vstate.c) and the critical path
 * (critpath.c) of `vmtrace report` share (merge/report/ only; the contract
 * is report.h).
 *
 * Every thread's time is integrated as it streams by, never stored per
 * event: each vCPU keeps, per "view" (what a guest thread on it is doing:
 * running, in an irq, runnable, blocked, unknown), cumulative ns per part
 * (enum report_part) - which part a view's time goes to depends on the
 * vCPU's host state and the VM's I/O pipeline state.  A thread snapshots
 * its vCPU's counters of its view when its state changes and adds the
 * difference to its own cumulative parts; a call snapshots the thread's
 * parts at its begin and subtracts at its end.  So the parts of a call are
 * disjoint and sum to its duration by construction.
 */
#ifndef REPORT_CRIT_H
#define REPORT_CRIT_H

#include <stdint.h>
#include "chain_int.h"

enum gview { GV_RUN, GV_IRQ, GV_RUNNABLE, GV_BLOCKED, GV_UNKNOWN, GV_NR };

#define CRIT_MAX_VCPUS	256
#define CRIT_KEEP	64	/* slowest calls kept per kind */

/* A vCPU (index 0: "no vCPU", the view of threads whose vCPU is unknown
 * and of host threads). */
struct vcpu {
	int32_t tid;		/* host thread, -1 unknown */
	uint8_t run;		/* 0 unknown, 1 on a CPU, 2 runnable, 3 blocked */
	uint8_t mode;		/* 0 unknown, 1 guest, 2 exit in kernel, 3 exit in QEMU */
	uint8_t cat[GV_NR];	/* the part each view's time goes to now */
	uint32_t seg;		/* bumped whenever .cat or the state may change */
	uint64_t since;		/* counters settled up to */
	uint64_t st[RV_NR];
	uint64_t ctr[GV_NR][RP_NR];
};

struct cframe {
	uint64_t ts, child;
	uint64_t snap[RP_NR];
	uint64_t pre;
	uint32_t name;
	uint32_t nwake;		/* the thread's wakeups at the begin */
	uint8_t skip;		/* a start-up frame or inside one */
};

struct gthr {
	uint64_t key;		/* machine << 32 | tid */
	uint64_t since;
	uint64_t acc[RP_NR];	/* cumulative parts */
	uint64_t snap[RP_NR];	/* its vCPU's view counters at .since */
	uint64_t pre, pre_snap;	/* cumulative time its vCPU was preempted */
	uint64_t st[RT_NR];
	uint32_t vcpu;		/* index in crit.v */
	uint32_t seg;		/* its vCPU's .seg at .since: equal = nothing
				 * changed there, only .cat[view] grew */
	uint8_t state;		/* RT_RUNNING, RT_RUNNABLE, RT_BLOCKED, RT_UNKNOWN */
	uint8_t view;		/* enum gview */
	uint8_t irq;		/* irq handler depth */
	uint8_t has_frames;
	uint8_t cpu_known;
	uint8_t is_vcpu;	/* seen before its track said it is a vCPU */
	uint32_t name;
	uint32_t host_sys;	/* last host disk syscall while it waited */
	uint32_t waker;		/* name of the thread that last woke it */
	uint32_t nwake;		/* wakeups so far */
	struct cframe *fr;
	uint32_t nfr, capfr;
	struct cframe sys;	/* the open syscall (.ts 0: none) */
};

/* name classes (by interned name id) */
enum ccls {
	K_UNKNOWN = 0, K_NONE, K_SWITCH, K_WAKEUP, K_IRQ_ENTRY, K_IRQ_EXIT, K_USER_EXIT,
	K_SYS_ENTER, K_SYS_EXIT, K_RQ_INSERT, K_RQ_ISSUE, K_RQ_COMPLETE, K_KICK, K_INJECT,
	K_EXIT_SLICE, K_BIO_QUEUE,
	K_FN_STARTUP,		/* a start-up frame's name (critpath.c) */
	K_FN_IMPORT,		/* ... an import: everything under it too */
	K_FN_LOADER,		/* ... runpy's, the frozen loader's, the tracer's:
				 * a C call it makes is start-up too */
	K_FN_CCALL,		/* a C function's name (no source location) */
};

/* track roles */
enum crole { CR_UNKNOWN = 0, CR_VCPU, CR_QEMU, CR_THREAD };

struct crit {
	struct merge_tables *tables;	/* the report's: the events' names and tracks */
	uint8_t *cls;
	uint32_t ncls;
	uint8_t *role;		/* by track */
	uint32_t *thr;		/* by track: thread index + 1 */
	uint32_t nrole;
	int16_t *vname;		/* by name id: 0 unchecked, -1 not a vCPU's, N + 1 */
	uint32_t nvname;
	uint32_t tracks_seen;	/* tracks scanned for vCPU threads */
	struct vcpu v[CRIT_MAX_VCPUS + 1];
	uint32_t nv;		/* v[0..nv) in use */
	uint32_t nreal;		/* host vCPU threads known */
	int32_t vtid[CRIT_MAX_VCPUS];	/* vCPU n's host tid */
	struct chain_hmap tmap;	/* (machine, tid) -> thread index */
	struct chain_hmap other;	/* host tids named like a vCPU that are not
					 * the traced QEMU's (another VM's) */
	CHAIN_VEC(struct gthr) th;
	/* the VM's I/O pipeline (one VM: see docs/report.md) */
	uint32_t queued, unkicked, inflight, hostio_open, flushes;
	uint32_t kicked;	/* requests kicked, not completed: QEMU has them */
	uint8_t done, injected, irq_done, have_kick, have_inject;
	struct chain_hmap rq;		/* (machine, dev, sector) -> inserted << 16 | issued,
					 * in flight */
	struct chain_hmap bio;		/* host (dev, sector) -> QEMU's bios queued there,
					 * not completed */
	uint32_t s_io_submit, s_uring_enter, s_bio;
	uint32_t hostio_name;
	/* host threads' open disk syscall: by track, entry name (0 none) */
	uint32_t *host_open;
	uint32_t k_prev_pid, k_prev_state, k_next_pid, k_pid, k_target_cpu,
		 k_next_comm, k_prev_comm, k_comm, k_name, k_dev, k_sector, k_nr_sector;
	uint32_t s_irq;		/* "an irq": a waker in irq context */
	uint64_t last_ts;
	/* the slowest calls: min-heaps by duration, then sorted */
	struct report_call calls[2][CRIT_KEEP];
	size_t ncalls[2];
	CHAIN_VEC(struct report_vcpu) vout;
	CHAIN_VEC(struct report_thread) tout;
	int all;
	int oom;
};

/* vstate.c */
/* @tb, @all_calls: as report_new's */
struct crit *crit_new(struct merge_tables *tb, int all_calls);
void crit_free(struct crit *c);
/* Feed one merged event (after the chain analyser saw it); 0 or -1. */
int crit_feed(struct report *r, const struct merge_event *ev);
/* Bring thread @g's parts up to @ts. */
void crit_settle_thread(struct crit *c, struct gthr *g, uint64_t ts);
/* Bring every vCPU's counters up to @ts. */
void crit_settle_vcpus(struct crit *c, uint64_t ts);

/* critpath.c */
/* K_FN_STARTUP / K_FN_IMPORT / K_FN_LOADER for a start-up frame's name,
 * K_FN_CCALL for another C function's, else K_NONE. */
uint8_t crit_startup_class(const char *name);
int crit_frame_begin(struct crit *c, struct gthr *g, const struct merge_event *ev);
void crit_frame_end(struct crit *c, struct gthr *g, uint64_t ts);
void crit_sys_enter(struct crit *c, struct gthr *g, uint64_t ts, uint32_t name);
void crit_sys_exit(struct crit *c, struct gthr *g, uint64_t ts);
/* After the stream: settle everything, build the output tables. */
int crit_finish(struct report *r);

#endif
