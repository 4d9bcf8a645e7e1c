/*
 * align.h - the clock model of vmtrace: guest TSC <-> host TSC <-> ns, per
 * vCPU, piecewise in host time, with a proven error bound.  See docs/align.md.
 *
 * Two layers:
 *  - the model (align/model.c, align/match.c): pure.  Samples in (offset
 *    events, debugfs snapshots, guest markers + host marker observations),
 *    a model out; no I/O, no printing: warnings are data.
 *  - the gathering layer (align/sources.c): reads a HOST dir (trace.dat,
 *    vmtrace.meta) and a GUEST dir (markers.dat, vmtrace.meta) into samples.
 *
 * KVM's definition, per vCPU, between two offset writes:
 *     tsc_guest = ((tsc_host * ratio) >> frac_bits) + offset
 * A segment stores it as a line through a reference point:
 *     tsc_guest = ref_tsc_guest + slope * (tsc_host - ref_tsc_host)
 * which keeps full precision for 64-bit TSC values.
 *
 * Threads: a model is immutable once built; queries may run concurrently.
 */
#ifndef ALIGN_ALIGN_H
#define ALIGN_ALIGN_H

#include <stdint.h>
#include <stddef.h>
#include "marker.h"
#include "tsc.h"
#include "align/clock.h"

#define ALIGN_TSC_END		UINT64_MAX	/* open end of the last segment */

/* Where a segment's parameters came from (one file each, align/src_*.c,
 * ranked there: user, markers, debugfs, tracepoint, tsync; docs/align.md). */
enum align_source {
	ALIGN_SRC_NONE = 0,
	ALIGN_SRC_MARKERS,	/* sync markers: proven, with an error bound */
	ALIGN_SRC_DEBUGFS,	/* /sys/kernel/debug/kvm/<vm>/vcpuN/tsc-offset */
	ALIGN_SRC_TRACEPOINT,	/* kvm:kvm_write_tsc_offset */
	ALIGN_SRC_USER,		/* given on the command line */
	ALIGN_SRC_TSYNC,	/* trace-cmd's TIME_SHIFT (host-guest recording) */
	ALIGN_SRC_COUNT
};

/* ---- samples (the model's input) ---- */

/* One kvm:kvm_write_tsc_offset event. */
struct align_offset_event {
	uint64_t tsc_host;		/* event time */
	int32_t vcpu;
	int64_t prev_offset_tsc;
	int64_t next_offset_tsc;
};

/* A vCPU's VM stopped for good at @tsc_host (its thread's last kvm_exit)
 * while a later VM took over its vCPU index: a guest saved and restored
 * into a new QEMU.  The guest's TSC stands still while it is saved, so its
 * stamps after the restore repeat guest values the stopped VM's segment
 * would also cover: the segment ends, for guest stamps, here. */
struct align_vcpu_stop {
	int32_t vcpu;
	uint64_t tsc_host;
};

/* One debugfs reading of a vCPU's tsc-offset (+ tsc-scaling-ratio). */
struct align_debugfs_snap {
	uint64_t tsc_host;		/* when read; 0 = unknown (whole run) */
	int32_t vcpu;
	int64_t offset_tsc;
	uint64_t ratio;			/* 0 = file absent: no scaling */
	uint32_t frac_bits;		/* 48 Intel, 32 AMD; 0 = unknown */
};

/* The host's view of one marker action. */
struct align_host_marker {
	uint64_t tsc_host;		/* kvm_pio / write syscall time */
	int32_t vcpu;			/* ALIGN_VCPU_ANY if not known */
	uint32_t value;			/* value the host saw written */
	uint32_t has_value;		/* 0: order-based matching (chardev) */
	int32_t tid;			/* the host thread that made it, 0 unknown */
};

/* A matched marker: the guest bracket and the host instant. */
struct align_marker_pair {
	int32_t vcpu;
	uint64_t seq;
	uint64_t tsc_guest_before;
	uint64_t tsc_guest_after;
	uint64_t tsc_host;
	int32_t host_tid;		/* the host thread that saw it, 0 unknown */
	uint32_t outlier;		/* 1: rejected by the estimator */
};

/* One sample of trace-cmd's TIME_SHIFT (a host-guest recording's guest
 * file, ALIGN_SRC_TSYNC): from guest TSC @tsc_guest on, trace-cmd maps
 *     host = ((guest * scaling) >> frac) + offset
 * for guest CPU @vcpu (lib/tracedat.h). */
struct align_tsync_sample {
	int32_t vcpu;
	uint64_t tsc_guest;
	int64_t offset;
	uint64_t scaling;		/* 0 or 1: none */
	uint32_t frac;
	uint32_t interpolate;		/* trace-cmd interpolates the offset
					 * between samples (its ptp protocol) */
};

/* A vCPU ran guest code within [tsc_entry, tsc_exit] of host TSC: one
 * kvm_entry ... kvm_exit of its thread (the inside check). */
struct align_run {
	int32_t vcpu;
	uint64_t tsc_entry, tsc_exit;
};

struct align_input {
	uint64_t host_hz;		/* host TSC frequency (required) */
	uint64_t guest_hz;		/* guest's own measurement, 0 = unknown */
	uint32_t frac_bits;		/* scaling-ratio fraction bits, 0 = unknown */
	uint64_t span_tsc_host_start;	/* host trace span, 0/0 = unknown */
	uint64_t span_tsc_host_end;
	const struct align_offset_event *offsets;
	size_t n_offsets;
	const struct align_debugfs_snap *snaps;
	size_t n_snaps;
	const struct vt_marker *guest_markers;	/* guest's markers.dat */
	size_t n_guest_markers;
	const struct align_host_marker *host_markers;
	size_t n_host_markers;
	const struct align_vcpu_stop *stops;	/* VMs that stopped (restore) */
	size_t n_stops;
	const struct align_tsync_sample *tsync;	/* trace-cmd's TIME_SHIFT */
	size_t n_tsync;
	/* ALIGN_SRC_USER: a fixed offset (and slope 1) when has_user_offset. */
	int has_user_offset;
	int64_t user_offset_tsc;
	/* Allow a fitted slope != the known ratio (drift, unknown scaling). */
	int fit_slope;
	/* Chosen where it has a line, whatever its rank (ALIGN_SRC_NONE: by
	 * rank); a user offset still overrides. */
	enum align_source prefer;
};

/* ---- the model ---- */

/* One piece of one vCPU's map, valid for tsc_host in [start, end). */
struct align_segment {
	int32_t vcpu;			/* ALIGN_VCPU_ANY: all vCPUs */
	uint64_t tsc_host_start;
	uint64_t tsc_host_end;		/* ALIGN_TSC_END for the last */
	uint64_t ref_tsc_host;
	uint64_t ref_tsc_guest;
	double slope;			/* guest ticks per host tick */
	enum align_source source;
	double bound_ns;		/* guaranteed |error| of host time; < 0:
					 * not proven (no markers) */
	uint32_t n_markers;		/* markers used */
	uint32_t n_outliers;		/* markers rejected */
};

/* What each source said, for the report and the cross-check. */
struct align_source_view {
	enum align_source source;
	int32_t vcpu;
	uint64_t tsc_host;		/* where it applies (segment start) */
	int64_t offset_tsc;		/* tsc_guest - tsc_host*slope at tsc_host */
	double slope;
	int agrees;			/* 1 within the bound of the chosen model,
					 * 0 disagrees, -1 nothing to compare */
	double diff_ns;			/* its offset - chosen offset, in ns */
};

struct align_model;
struct align_clock_seg;

/* Build the model from @in: match markers, estimate, cross-check, choose.
 * NULL with vt_err_set() when no source is usable, or on allocation
 * failure; a model is returned (with warnings) whenever any source is. */
struct align_model *align_model_build(const struct align_input *in);
void align_model_free(struct align_model *m);

/* The segments, ordered by vcpu then time. */
size_t align_model_nr_segments(const struct align_model *m);
const struct align_segment *align_model_segment(const struct align_model *m, size_t i);
/* The source views (one per source, vCPU and segment). */
size_t align_model_nr_views(const struct align_model *m);
const struct align_source_view *align_model_view(const struct align_model *m, size_t i);
/* The matched marker pairs, in guest seq order. */
size_t align_model_nr_pairs(const struct align_model *m);
const struct align_marker_pair *align_model_pair(const struct align_model *m, size_t i);
/* Warnings ("LOUD": disagreements, outliers, unmatched markers), in order. */
size_t align_model_nr_warnings(const struct align_model *m);
const char *align_model_warning(const struct align_model *m, size_t i);

/* The source of most segments, the worst proven bound (< 0 if none is
 * proven), and a one-line summary such as "markers (212 pairs), bound
 * 3.1 us" (valid while @m lives). */
enum align_source align_model_method(const struct align_model *m);
double align_model_bound_ns(const struct align_model *m);
const char *align_model_summary(const struct align_model *m);
uint64_t align_model_host_hz(const struct align_model *m);
const char *align_source_name(enum align_source s);
/* The source named @name ("markers", "tsync", ...), ALIGN_SRC_NONE if none. */
enum align_source align_source_by_name(const char *name);

/* Format a duration of @ns nanoseconds for people into @buf (@sz bytes):
 * "812 ns", "3.14 us", "2.500 s", ..., @prec decimals for us, ms and h
 * (seconds always 3). */
void align_fmt_ns(char *buf, size_t sz, double ns, int prec);

/* ---- queries ---- */

/* Host TSC -> ns (the host TSC's own epoch: ns = floor(tsc * 1e9 / host_hz),
 * lib/tsc.h's vt_tsc_ns: exact, no division). */
uint64_t align_host_to_ns(const struct align_model *m, uint64_t tsc_host);

/* Guest TSC of @vcpu (ALIGN_VCPU_ANY: the first vCPU's map) -> host TSC,
 * for one stamp on its own: a new cursor's answer (align_cursor_guest_host;
 * where an offset stepped back, a guest value both segments hold is the
 * earlier segment's: only a stream's order can tell it is the later's).
 * 0 on success, -1 if no segment covers it (a value before the first or
 * after an offset change with no model; no message set). */
int align_guest_to_host(const struct align_model *m, int vcpu, uint64_t tsc_guest,
			uint64_t *tsc_host);
int align_guest_to_ns(const struct align_model *m, int vcpu, uint64_t tsc_guest,
		      uint64_t *ns);
/* Host TSC -> the guest TSC @vcpu would have read then. */
int align_host_to_guest(const struct align_model *m, int vcpu, uint64_t tsc_host,
			uint64_t *tsc_guest);

/* ---- clock maps: align/clock.h (what merge needs of align), included
 * above ---- */

/* ---- marker matching (pure; used by align_model_build, exported for tests) ---- */

/* Pair guest markers with host observations: by value (seq in the low 24
 * bits) where the host saw one, else by order with a time-consistency
 * search.  *out gets a malloc'ed array in guest seq order.  Counts of
 * markers seen on one side only go to *unmatched_guest / *unmatched_host.
 * -1 on allocation failure. */
int align_markers_match(const struct vt_marker *g, size_t ng,
			const struct align_host_marker *h, size_t nh,
			struct align_marker_pair **out, size_t *n,
			size_t *unmatched_guest, size_t *unmatched_host);

/* ---- gathering layer (align/sources.c: does the I/O) ---- */

struct align_load_opts {
	uint64_t host_hz;		/* override host tsc.hz (0: from meta) */
	uint64_t guest_hz;		/* override guest tsc.hz (0: from meta) */
	int marker_port;		/* -1: VT_MARKER_PORT and the guest's PIO ports;
					 * else this port alone */
	int marker_fd;			/* chardev fd of TCG markers, -1: from meta */
	int has_offset;			/* --offset given: the user source */
	int64_t offset_tsc;		/* guest TSC - host TSC, ticks */
};

struct vt_td_reader;

/* Samples read from disk; owns its arrays and the guest trace.dat reader. */
struct align_samples {
	struct align_input in;		/* points into the arrays below */
	struct align_offset_event *offsets;
	struct align_debugfs_snap *snaps;
	struct vt_marker *guest_markers;
	struct align_host_marker *host_markers;
	struct align_vcpu_stop *stops;
	struct align_tsync_sample *tsync;
	struct align_run *runs;		/* per vCPU thread, in host time order */
	size_t n_runs;
	char guest_td[4096];		/* the guest's trace.dat ("" none) */
	struct vt_td_reader *guest_r;	/* its reader, still at its first event:
					 * the inside check reads it, once
					 * (a compressed file is inflated once) */
	uint64_t guest_trace_id;	/* its trace-cmd trace id, 0 unknown */
	size_t n_bad_guest_markers;	/* rejected records of markers.dat */
	int host_truncated;		/* trace.dat's CPU data was cut short */
	int vms_in_sequence;		/* several VMs, one after the other: one
					 * guest (decided once, from the meta) */
	char host_hz_from[64];		/* "meta", "option", ... */
	char guest_hz_from[64];
	char *notes;			/* '\n'-separated: what was found/missing */
};

/* Fill @o with the defaults: nothing given by hand, sources found. */
void align_load_opts_init(struct align_load_opts *o);
/* Read HOSTDIR (may be NULL) and GUESTDIR (may be NULL) into @s.  Missing
 * optional parts are notes, not errors; -1 (message names the file) on a
 * file that exists but cannot be read or is corrupt beyond use. */
int align_samples_load(struct align_samples *s, const char *host_dir, const char *guest_dir,
		       const struct align_load_opts *o);
void align_samples_free(struct align_samples *s);

/* ---- the inside check (align/inside.c) ---- */

/* What the inside check found: guest events mapped to host time must fall
 * inside a [kvm_entry, kvm_exit] of their vCPU's thread. */
struct align_inside {
	int checked;			/* events were checked */
	size_t n_runs;			/* host runs known */
	uint64_t n_events;		/* guest readings checked */
	uint64_t n_inside;
	uint64_t n_trace_events;	/* of the guest's trace.dat */
	uint64_t n_marker_readings;	/* marker brackets' rdtsc readings */
	uint64_t n_outside_span;	/* before the first / after the last run */
	uint64_t n_unmapped;		/* no segment covers them */
	uint64_t n_no_runs;		/* of a vCPU with no run on the host */
	double worst_ns;		/* the farthest outside, 0 if none */
	double shift_lo_ns, shift_hi_ns;	/* the map moved by any shift in
					 * [lo, hi] keeps every inside event in
					 * its run (lo <= 0 <= hi) */
	int32_t worst_vcpu;
	uint64_t worst_tsc_guest;
};

/* Check the guest's trace.dat events (read through s->guest_r, which this
 * consumes: once per samples) and marker readings of @s against its host
 * runs (s->runs) through model @m into @out.  0, or -1 with a message (the
 * guest file cannot be read, out of memory). */
int align_inside_check(const struct align_model *m, const struct align_samples *s,
		       struct align_inside *out);

/* Convenience for merge: load + build.  NULL with a message on failure.
 * *@n_bad_markers (if not NULL) gets the count of rejected (corrupt or
 * truncated) records of GUESTDIR's markers.dat, as `vmtrace align` reports
 * them with exit 3. */
struct align_model *align_model_from_dirs(const char *host_dir, const char *guest_dir,
					  const struct align_load_opts *o,
					  size_t *n_bad_markers);

#endif
