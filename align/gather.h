/*
 * gather.h - internal to align/'s gathering layer: what align/sources.c
 * (which opens the files and walks the host's trace.dat once) shares with
 * each alignment source's loader (align/src_*.c, its hooks in struct
 * align_source_def).  Tools only: blocking I/O, allocates.
 */
#ifndef ALIGN_GATHER_H
#define ALIGN_GATHER_H

#include <stddef.h>
#include <stdint.h>
#include "align/internal.h"
#include "compiler.h"
#include "meta.h"
#include "tracedat.h"

#define SRC_PATH_MAX		4096
#define SRC_KEY_MAX		VT_META_KEY_MAX
#define SRC_MAX_THREADS		4096

/* A host thread: the vCPU it runs (meta, GUEST option or its name). */
struct tidmap {
	int tid;
	int vcpu;
	uint64_t last_exit;	/* host TSC of its last kvm_exit, 0: none */
	uint64_t entry;		/* its kvm_entry not yet closed by an exit, 0: none */
};

/* What an event type of the host's trace is to the aligner (decided once
 * per type id by align/sources.c). */
enum align_ev_kind {
	ALIGN_EV_UNKNOWN = 0, ALIGN_EV_OTHER, ALIGN_EV_KVM_EXIT, ALIGN_EV_TSC_OFFSET,
	ALIGN_EV_PIO, ALIGN_EV_MMIO, ALIGN_EV_HYPERCALL, ALIGN_EV_WRITE, ALIGN_EV_KVM_ENTRY,
};
#define ALIGN_EV_BIT(k)		(1U << (k))

/* One gathering pass: the samples being filled and what the sources'
 * hooks may read of the inputs. */
struct align_gather {
	struct align_samples *s;
	const struct align_load_opts *o;
	const struct vt_meta *m;	/* the host's vmtrace.meta, NULL if none */
	const char *mpath;		/* its path (messages) */
	struct vt_td_reader *r;		/* the trace.dat being read */
	const char *path;		/* its path */
	const char *clock;		/* its trace clock */
	int host_ns;			/* ... counts ns (a trace-cmd pair's ptp
					 * clock): no TSC marker relates to it */
	struct tidmap *tm;		/* host threads known */
	size_t ntm;
	size_t nvcpu_thr;		/* the first ones: the recording's vCPU threads */
	size_t nev, nforeign;		/* events read; kvm events of other threads */
	size_t cap_off, cap_hm, cap_snap;	/* of s->offsets, host_markers, snaps */
	void *state[ALIGN_SRC_COUNT];	/* each source's own, between its hooks */
};

/* Append @item (@size bytes) to the array *@p of *@n (capacity *@cap). */
int align_gather_push(void **p, size_t *n, size_t *cap, size_t size, const void *item);
/* A line for the "inputs" list of `vmtrace align` (s->notes). */
void align_gather_note(struct align_samples *s, const char *fmt, ...) VT_PRINTF(2, 3);
/* The vCPU of host thread @pid (ALIGN_VCPU_ANY if not a vCPU thread). */
int32_t align_gather_tid_vcpu(struct align_gather *g, int pid);

/* The sources, in report order (align/model.c); their count. */
extern const struct align_source_def *const align_sources[];
extern const size_t align_nr_sources;

#endif
