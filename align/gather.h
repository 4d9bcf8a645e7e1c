/*
 * gather.h - internal to align/'s gathering layer: what align/sources.c
 * (which opens the files and walks the host's trace.dat once) shares with
 * each alignment source's loader (align/src_*.c, its hooks in struct
 * align_source_io, registered in align_source_ios[]).  Tools only:
 * blocking I/O, allocates.  The model (align/model.c) never includes it.
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

struct vt_td_event;

/* A source's part of the gathering layer: the hooks align/sources.c calls
 * (NULL: none) to read its samples.  Every hook returns 0, or -1 with the
 * message set. */
struct align_source_io {
	enum align_source id;
	/* the guest's trace.dat (header read; a trace-cmd guest file) */
	int (*guest_trace)(struct align_gather *g, struct vt_td_reader *r, const char *path);
	/* a guest directory (markers.dat, ...) */
	int (*guest_dir)(struct align_gather *g, const char *dir);
	/* the host's vmtrace.meta (g->m, never NULL here) */
	int (*host_meta)(struct align_gather *g);
	/* the host's trace.dat: before its events, each event of a kind in
	 * @host_events (ALIGN_EV_BIT()s), after them (always, once begun:
	 * @ok 0 after a failure, to free its state) */
	int (*host_begin)(struct align_gather *g);
	unsigned host_events;
	int (*host_event)(struct align_gather *g, const struct vt_td_event *ev, int kind);
	int (*host_end)(struct align_gather *g, int ok);
	/* notes once everything of the host is read */
	void (*host_notes)(struct align_samples *s);
};

extern const struct align_source_io align_io_markers, align_io_debugfs,
	align_io_tracepoint, align_io_tsync;

/* The sources' gathering hooks (align/sources.c), in report order; their
 * count. */
extern const struct align_source_io *const align_source_ios[];
extern const size_t align_nr_source_ios;

#endif
