/*
 * event.h - merge's one event model: what every reader produces and every
 * sink consumes.  An event sits on a track (a thread of a process of a
 * machine: the host or guest N), has an interned name, a time in
 * nanoseconds on the host timeline (converted once, by the sorter through
 * align's clock map, align/clock.c) and a few arguments.  Slices are
 * begin/end pairs on one track and nest; flows link two events on
 * (usually) different tracks.
 */
#ifndef MERGE_EVENT_H
#define MERGE_EVENT_H

#include <stdint.h>
#include <stddef.h>

#define MERGE_MAX_ARGS		8	/* arguments kept per event (rest dropped) */
#define MERGE_ARR_MAX		16	/* numbers of array arguments per event
					 * (an array is cut beyond) */
#define MERGE_MACHINE_HOST	0	/* machine id of the host; guests are 1.. */
#define MERGE_NO_STR		0	/* interned id of "" / none */

enum merge_ev_kind {
	MERGE_EV_BEGIN,		/* slice begins on the track */
	MERGE_EV_END,		/* innermost open slice of the track ends */
	MERGE_EV_INSTANT,	/* a point event */
	MERGE_EV_COUNTER,	/* value of a counter track */
};

enum merge_arg_type {
	MERGE_ARG_U64,
	MERGE_ARG_I64,
	MERGE_ARG_STR,		/* interned string id in .v.str */
	MERGE_ARG_ARRAY_U64,	/* numbers in the event's arr[]: .v.u from */
	MERGE_ARG_ARRAY_I64,	/* merge_arr_ref(first, count) */
};

/* An array argument's place in merge_event.arr: (first, count). */
static inline uint64_t merge_arr_ref(uint32_t first, uint32_t count)
{
	return (uint64_t)first << 32 | count;
}
static inline uint32_t merge_arr_first(uint64_t ref)
{
	return (uint32_t)(ref >> 32);
}
static inline uint32_t merge_arr_count(uint64_t ref)
{
	return (uint32_t)ref;
}

struct merge_arg {
	uint32_t key;		/* interned name */
	uint32_t type;		/* enum merge_arg_type */
	union {
		uint64_t u;
		int64_t i;
		uint32_t str;
	} v;
};

struct merge_event {
	uint64_t ts_ns;		/* host timeline, ns (after clock conversion) */
	uint64_t ts_raw;	/* the reader's raw stamp (TSC of its domain) */
	uint32_t track;		/* index into the track table */
	uint32_t name;		/* interned */
	uint8_t kind;		/* enum merge_ev_kind */
	uint8_t nr_args;
	uint16_t src;		/* source index (for per-source counts) */
	int32_t cpu;		/* CPU the event was recorded on, -1 unknown
				 * (a guest CPU = its vCPU number) */
	/* Flows (arrows, merge/flow.c).  A possible start (a kick, an
	 * injection) gets its id when it is seen, so a sink writes the start
	 * with the event itself, in time order: flow_start_id (0 = none).  An
	 * end found later terminates that id: flow_id, with the start's
	 * (flow_ts_ns, flow_track) for sinks that store both ends.  flow_name
	 * names either.  A start whose end never comes dangles (harmless). */
	uint64_t flow_start_id;
	uint64_t flow_id;
	uint64_t flow_ts_ns;
	uint32_t flow_track;
	uint32_t flow_name;	/* interned: "kick" / "irq" */
	int64_t value;		/* MERGE_EV_COUNTER */
	struct merge_arg args[MERGE_MAX_ARGS];
	/* Arguments the kernel prints as text (__print_flags/__print_symbolic,
	 * e.g. sched_switch prev_state 0x100 -> "R+"): bit i of sym_mask set
	 * when args[i] (a number, kept for programs) has that text, interned,
	 * in sym_text[i]; the sinks people read (Chrome JSON, Perfetto) write
	 * the text.  Only the trace.dat reader sets them, on every event. */
	uint8_t sym_mask;
	uint32_t sym_text[MERGE_MAX_ARGS];
	uint8_t nr_arr;		/* numbers used in arr */
	uint64_t arr[MERGE_ARR_MAX];	/* the elements of array arguments */
};

/* The argument @key (an interned field name) of @ev, NULL when it has
 * none: the one lookup of an event's fields (merge/derive.c, the report). */
static inline const struct merge_arg *merge_event_arg(const struct merge_event *ev, uint32_t key)
{
	for (int i = 0; i < ev->nr_args; i++)
		if (ev->args[i].key == key)
			return &ev->args[i];
	return NULL;
}

/* A track: one thread (or a process-level track when tid < 0). */
struct merge_track {
	uint32_t machine;	/* MERGE_MACHINE_HOST or guest number */
	int32_t pid;
	int32_t tid;
	uint32_t name;		/* interned thread name */
	uint32_t pname;		/* interned process name */
	uint32_t depth;		/* open slices (kept by the sorter) */
	uint32_t vcpu;		/* vCPU number + 1 for a host vCPU thread, else 0 */
	uint32_t lane;		/* 0: the thread's own track; 1: a second track of
				 * the same thread (host uftrace calls next to
				 * the thread's kernel exit slices: they do not
				 * nest with each other) */
	uint32_t main;		/* index of the lane-0 track of this thread */
	uint8_t qemu;		/* a thread of the traced QEMU's process on the host
				 * (the host side of the I/O chain), as the readers
				 * found it (merge_track_mark_qemu) */
};

/* Sinks that key threads by number alone give lane L of tid T the number
 * T + L * MERGE_LANE_TID_STRIDE (above any pid_max and machine stride). */
#define MERGE_LANE_TID_STRIDE	1000000000

#endif
