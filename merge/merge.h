/*
 * merge.h - the parts of `vmtrace merge` (merge/ only): the string and
 * track tables, the per-source clock, the stream interface readers
 * implement, the sorter and the sink ops table.  See docs/merge.md.
 *
 * Everything runs on the command's one thread.  Memory is bounded by the
 * number of distinct names, threads and sources, never by the number of
 * events: each stream holds a batch of pending events (the sorter's), sinks
 * write as they go.  All the state is the pipeline's context's
 * (merge/pipeline.h: sources, sorter, flows, derived slices and the string
 * and track tables, struct merge_tables), handed to each part explicitly:
 * merge keeps no state of its own.
 */
#ifndef MERGE_MERGE_H
#define MERGE_MERGE_H

#include <stdint.h>
#include <stdio.h>
#include "align/clock.h"
#include "event.h"

/* ---- the string and track tables ----------------------------------- */

/* The interned strings (ids in every event: names, argument keys and
 * string values) and the track table (struct merge_track, event.h) of one
 * merge: a member of its pipeline's context (merge/pipeline.h), handed to
 * the readers (struct merge_source .tables), the flow matcher, the deriver
 * and the sinks (their open).  Zero-filled = empty; merge_tables_free()
 * empties it again.  Fields are tables.c's but for merge_track(). */
/* An interned string (tables.c interns; the sinks read it inline). */
struct merge_str_ent {
	const char *s;
	uint32_t len;
	uint32_t hash;
};
struct merge_tables {
	struct merge_str_ent *str_ents;	/* by id; id 0 = "" */
	uint32_t str_nr, str_cap;
	uint32_t *str_slots;		/* hash -> id + 1 (0 empty) */
	uint32_t str_mask;
	int str_failed;
	char **chunks;			/* the strings' storage */
	size_t nr_chunks;
	char *chunk_pos;
	size_t chunk_left;
	struct merge_track *tracks;	/* by index */
	uint32_t nr_tracks, cap_tracks;
	uint32_t track_last;		/* merge_track_get's last hit */
	uint8_t qemu_tasks_known;	/* a host recording listed QEMU's threads
					 * (record.pids/tgids): a thread not marked
					 * .qemu is another process's, whatever its
					 * name ("CPU 0/KVM" of another VM) */
};

/* Free @tb's storage (@tb is empty again). */
void merge_tables_free(struct merge_tables *tb);

/* ---- interned strings ---------------------------------------------- */

/* Intern @s (length @len) in @tb: returns its id (0 is ""), or 0 if out of
 * memory (then the message is set and merge_strtab_failed() says so, as it
 * does once a track could not be added). */
uint32_t merge_str_intern(struct merge_tables *tb, const char *s, size_t len);
uint32_t merge_str_intern0(struct merge_tables *tb, const char *s);
/* String @id ("" for an unknown id) and its length: inline, the sinks
 * read one per event. */
static inline const char *merge_str(const struct merge_tables *tb, uint32_t id)
{
	return id < tb->str_nr ? tb->str_ents[id].s : "";
}
static inline uint32_t merge_str_len(const struct merge_tables *tb, uint32_t id)
{
	return id < tb->str_nr ? tb->str_ents[id].len : 0;
}
uint32_t merge_str_count(const struct merge_tables *tb);
int merge_strtab_failed(const struct merge_tables *tb);

/* ---- tracks -------------------------------------------------------- */

/* The track of (machine, pid, tid) in @tb, created on first use with the
 * given names (0 = a default name); UINT32_MAX when out of memory. */
uint32_t merge_track_get(struct merge_tables *tb, uint32_t machine, int32_t pid, int32_t tid,
			 uint32_t pname, uint32_t tname);
/* The same for track @lane of the thread (lane 0 is merge_track_get());
 * a lane > 0 creates the thread's lane-0 track first (its .main). */
uint32_t merge_track_get_lane(struct merge_tables *tb, uint32_t machine, int32_t pid,
			      int32_t tid, uint32_t lane, uint32_t pname, uint32_t tname);
/* The lane-0 track of thread @tid of @machine, whatever its pid (a guest
 * kernel trace does not know a thread's process, its Python trace does);
 * UINT32_MAX if there is none yet. */
uint32_t merge_track_find_tid(const struct merge_tables *tb, uint32_t machine, int32_t tid);
static inline struct merge_track *merge_track(const struct merge_tables *tb, uint32_t idx)
{
	return &tb->tracks[idx];
}
static inline uint32_t merge_track_count(const struct merge_tables *tb)
{
	return tb->nr_tracks;
}
/* Rename a process's tracks / a thread (later names win, before output). */
void merge_track_set_name(struct merge_tables *tb, uint32_t idx, uint32_t tname);
/* Rename process (@machine, @pid) on all its tracks. */
void merge_track_set_pname(struct merge_tables *tb, uint32_t machine, int32_t pid,
			   uint32_t pname);
/* Mark process (@machine, @pid) as the traced QEMU (struct merge_track
 * .qemu): its tracks, and the ones its threads get later. */
void merge_track_mark_qemu(struct merge_tables *tb, uint32_t machine, int32_t pid);

/* ---- clocks -------------------------------------------------------- */

/* merge converts no time itself: each source holds align's clock map of
 * its domain (struct align_clock, align/align.h) and each stream a cursor
 * in it; the sorter calls align_clock_ns() once per event. */

/* ---- streams ------------------------------------------------------- */

struct merge_stream;
struct merge_stream_ops {
	/* 1 with *ev filled (ts_raw, track, name, kind, args), 0 at the end,
	 * -1 at a corrupt/truncated record (the stream ends; warned) or out
	 * of memory (the stream ends, its source's .oom set: merge fails).
	 * Unused (may be NULL) when next_batch is set. */
	int (*next)(struct merge_stream *s, struct merge_event *ev);
	void (*close)(struct merge_stream *s);	/* required: frees the stream */
	/* optional, in place of next: up to @max events into ev[0..), as
	 * many next calls would give them; how many (0 at the end) */
	int (*next_batch)(struct merge_stream *s, struct merge_event *ev, int max);
};

struct merge_stream {
	const struct merge_stream_ops *ops;
	struct align_clock *clock;	/* its source's map */
	struct align_cursor cur;	/* per-stream position in the map */
	int vcpu;			/* ALIGN_VCPU_ANY unless the stream is one vCPU's */
	uint16_t src;
};

/* Set up @s's cursor (call once the stream's clock and vcpu are set). */
static inline void merge_stream_clock_init(struct merge_stream *s)
{
	align_cursor_init(&s->cur, s->clock, s->vcpu);
}

#define MERGE_MAX_VTHREADS	256	/* vCPU threads known from the meta */
#define MERGE_MAX_QTASKS	1024	/* QEMU threads known from the meta */

/* What a host recording's vmtrace.meta says of the VM's processes. */
struct merge_host_facts {
	int qemu_pid;		/* the QEMU process (kvm.vm0.pid), 0 unknown */
	int nr_vthreads;	/* vCPU threads the recorder listed */
	int vthread_tid[MERGE_MAX_VTHREADS];
	int vthread_vcpu[MERGE_MAX_VTHREADS];
	int nr_qtasks;		/* threads of QEMU's process (record.pids and
				 * record.tgids); -1: not known, by name */
	int qtask_tid[MERGE_MAX_QTASKS];
};

/* A source = one input directory / file, holding streams. */
struct merge_source {
	struct merge_sorter *sorter;	/* where its readers add their streams */
	struct merge_tables *tables;	/* where they intern names and tracks */
	char path[4096];
	char label[64];		/* "host", "guest", "guest NAME" (a VM), "trace" */
	uint32_t machine;	/* 0 host, N: VM N (all its inputs share it) */
	struct align_clock clock;	/* its domain's map (align/) */
	enum align_clock_kind tsc_kind;	/* the map's kind were its stamps TSC */
	uint64_t tsc_hz;		/* the host TSC frequency merge uses for it */
	uint64_t events;
	int partial;		/* a stream ended at a corrupt record */
	int oom;		/* a stream ended out of memory: merge fails */
	uint64_t first_ns, last_ns;
	struct merge_host_facts host;	/* a host input: its meta's facts */
	int single;		/* the only input (a plain conversion) */
	int ns_model;		/* host input: a VM's model maps onto its ns
				 * clock (a trace-cmd pair on a ns clock) */
	int lane;		/* track lane of its uftrace tasks: 1 for host
				 * uftrace data merged with a host trace.dat */
	int clock_only;		/* holds markers.dat only (the VM's clock) */
	int samples;		/* a sampling session (samples.tsv): its leaf
				 * names are not events, so no flows */
};

#define MERGE_MAX_SOURCES	64

/* Readers: add the streams of @src to the sorter; -1 on failure. */
int merge_reader_uftrace(struct merge_source *src, uint16_t idx);
int merge_reader_tracedat(struct merge_source *src, uint16_t idx, const char *file);
/* samples.tsv of directory @src->path: one instant per sample (its clock
 * re-initialised from the file's header when it disagrees). */
int merge_reader_samples(struct merge_source *src, uint16_t idx);
/* The sync markers of model @m as instants: on @guest's VM (a stream per
 * vCPU, through @guest's clock map) and, when @host is given, on the host
 * threads that saw them (through @host's map), a "sync" flow between the
 * two of each marker. */
int merge_reader_markers(struct merge_source *guest, uint16_t gidx, struct merge_source *host,
			 uint16_t hidx, const struct align_model *m);

/* ---- sorter -------------------------------------------------------- */

struct merge_sort_slot;		/* sort.c */
struct merge_sort_hent;
/* A k-way merge of the streams (one per pipeline; zero-filled = empty). */
struct merge_sorter {
	struct merge_sort_slot *slots;	/* by stream */
	struct merge_sort_hent *heap;	/* 2 * cap_slots + 2 entries at least */
	size_t cap_slots, cap_heap;	/* grown together (lib/grow.h) */
	uint32_t nr_slots, heap_len;
	int started;
};

/* Register a stream with @so (takes ownership), before the first
 * merge_sort_next(); -1 when out of memory. */
int merge_sort_add(struct merge_sorter *so, struct merge_stream *s);
/* The next event in time order (NULL at the end of all streams); it stays
 * valid, and may be changed by the caller, until the next call. */
struct merge_event *merge_sort_next(struct merge_sorter *so);
/* Close every stream and free @so's storage (@so is empty again). */
void merge_sort_free(struct merge_sorter *so);

/* ---- flows --------------------------------------------------------- */

#define MERGE_FLOW_MAX_VCPUS	64	/* vCPUs whose flows are tracked apart */
#define MERGE_FLOW_MARKERS	256	/* sync markers awaiting their other side */

struct merge_flow_pending {
	uint64_t ts_ns;
	uint64_t id;		/* the flow id the start event was given */
	uint32_t track;
	int valid;
};

/* The flow matcher's state (merge/flow.c; one per pipeline): a pending
 * start per vCPU and a ring of markers, so its size is fixed. */
struct merge_flows {
	uint8_t *skip;		/* by name id: 1 = no flow end on either side */
	uint32_t skip_cap;
	uint8_t *classes;	/* by (name id, side): the name's class */
	uint32_t classes_cap;
	struct merge_flow_pending kicks[MERGE_FLOW_MAX_VCPUS + 1];
	struct merge_flow_pending injects[MERGE_FLOW_MAX_VCPUS + 1];
	struct merge_flow_pending markers[MERGE_FLOW_MARKERS];
	uint64_t marker_key[MERGE_FLOW_MARKERS];
	uint64_t next_id, nr_flows;
	uint32_t kick_name, irq_name, sync_name;
	struct merge_tables *tables;	/* the events' names and tracks */
	int failed;		/* out of memory: flows were lost */
};

/* Empty @f (no flow yet) on the names and tracks of @tb;
 * merge_flows_free() releases what it grew. */
void merge_flows_init(struct merge_flows *f, struct merge_tables *tb);
void merge_flows_free(struct merge_flows *f);
/* Look at @ev (events in time order): when it is the second end of a flow
 * (docs/merge.md: matching rules), set its flow_* fields.  The inline part
 * drops, at the cost of one load, the events whose name cannot be a flow
 * end (f->skip: per interned name, set once classified). */
void merge_flow_check(struct merge_flows *f, struct merge_event *ev);
static inline void merge_flow_feed(struct merge_flows *f, struct merge_event *ev)
{
	if (ev->kind == MERGE_EV_END || (likely(ev->name < f->skip_cap) && f->skip[ev->name]))
		return;
	merge_flow_check(f, ev);
}

/* ---- syscall slices and thread states (merge/derive.c) ------------- */

#define MERGE_DERIVE_MAX	4	/* events one event derives, at most */

struct merge_derive_thread;	/* derive.c */
/* What derive.c keeps (one per pipeline). */
struct merge_deriver {
	struct merge_tables *tables;
	uint8_t *kinds;		/* by name id: the name's kind + 1 (1 = derives nothing) */
	uint32_t kinds_cap;
	struct merge_derive_thread *threads;	/* by lane-0 track index */
	uint32_t threads_cap;
	uint32_t k_id, k_nr, k_prev_pid, k_prev_state, k_next_pid, k_pid;
	uint32_t n_syscalls, n_state, n_running, n_runnable;
	int failed;		/* out of memory: derived slices were lost */
};

/* Look at @ev (events in time order): the events a sink that shows
 * syscalls as slices and threads' states writes for it into @out (at
 * most MERGE_DERIVE_MAX, on the threads' "syscalls" and "thread state"
 * tracks), their number; *@keep = 0 when @ev itself is replaced by them
 * (a syscall's enter and exit).  The inline part skips, at the cost of one
 * load, the names that derive nothing. */
int merge_derive(struct merge_deriver *dv, const struct merge_event *ev, struct merge_event *out,
		 int *keep);
static inline int merge_derive_feed(struct merge_deriver *dv, const struct merge_event *ev,
				    struct merge_event *out, int *keep)
{
	int k = 1, n;

	*keep = 1;
	if (ev->kind != MERGE_EV_INSTANT ||
	    (likely(ev->name < dv->kinds_cap) && dv->kinds[ev->name] == 1))
		return 0;
	n = merge_derive(dv, ev, out, &k);	/* @keep's address stays here */
	*keep = k;
	return n;
}
/* Empty @dv (nothing derived yet) on the names and tracks of @tb. */
void merge_derive_init(struct merge_deriver *dv, struct merge_tables *tb);
/* Free @dv's storage (@dv is empty, and on no tables, again). */
void merge_derive_free(struct merge_deriver *dv);

/* ---- sinks --------------------------------------------------------- */

struct merge_sink_ops {
	const char *name;		/* --format NAME */
	const char *const *also;	/* more --format names, NULL-terminated; or NULL */
	const char *const *ext;		/* output name endings that choose it
					 * (".json"), NULL-terminated; or NULL */
	int dir;			/* chosen for a directory or a name with no ending */
	int derive;			/* shows syscalls as slices and thread
					 * states (merge/derive.c) */
	/* open output @out with the sink's own options @opts (its struct,
	 * or NULL for its defaults), for events whose names and tracks are
	 * @tb's; NULL with the message set */
	void *(*open)(struct merge_tables *tb, const char *out, const void *opts);
	/* write one event; -1 on an I/O error (message set) */
	int (*event)(void *sink, const struct merge_event *ev);
	/* finish the output; -1 on an I/O error */
	int (*close)(void *sink);
	/* optional: free the sink after a failure, its output not kept (an
	 * output promised whole or absent); NULL: close is called */
	void (*abort)(void *sink);
};

/* The file formats `vmtrace merge` writes (each sink's own file). */
extern const struct merge_sink_ops merge_sink_perfetto, merge_sink_chrome, merge_sink_uftrace;

/* 1 if @s is one of the NULL-terminated @list (NULL: an empty list). */
int merge_name_in(const char *s, const char *const *list);

/* The uftrace directory's options (merge_sink_uftrace's open; NULL: the
 * defaults): @force replaces the trace files of an existing non-empty
 * directory (else it is refused, the kind ENOTEMPTY: a usage error). */
struct merge_uftrace_opts {
	int force;
};

/* Perfetto's options (merge_sink_perfetto's open; NULL: the defaults). */
struct merge_perfetto_opts {
	/* 1 = mark a VM's packets with TracePacket.machine_id (its own pids);
	 * 0 (default) = one machine, guests are processes named "guest: ..."
	 * with pid/tid moved to N * 10000000 + pid (docs/merge.md says why) */
	int machine_ids;
};

/* ---- what the sinks share (merge/sink.c) ---------------------------- */

/* Buffered output file of the file sinks: events are encoded straight
 * into buf, which is emptied with write(2) when full and at close. */
struct merge_out {
	int fd;
	char *buf;
	size_t len, cap;
	const char *path;
	int failed;
};
/* Create @path (truncated) with an empty buffer; -1 with the error set. */
int merge_out_open(struct merge_out *o, const char *path);
/* Write out the buffer; -1 (error set, naming the file) on failure, and
 * every later call fails too. */
int merge_out_flush(struct merge_out *o);
/* Flush, close and free the buffer; -1 if anything failed. */
int merge_out_close(struct merge_out *o);
/* Room for @n bytes at the end of the buffer (flushed first if needed);
 * NULL when the flush failed. */
static inline char *merge_out_reserve(struct merge_out *o, size_t n)
{
	if (o->len + n > o->cap && merge_out_flush(o) < 0)
		return NULL;
	return o->buf + o->len;
}

/* A file sink is a struct of @size bytes whose first member is its struct
 * merge_out: allocated zeroed with @path opened, or NULL (error set). */
void *merge_file_sink_open(size_t size, const char *path);
/* Close the output of a sink from merge_file_sink_open() and free it
 * (free its other members first); -1 if the output failed. */
int merge_file_sink_close(void *sink);

#define MERGE_TABLE_MIN	256	/* entries of a table's first allocation */
/* Grow the zero-filled table *@table (a pointer to the array pointer) of
 * *@cap entries of @elem_size bytes to hold at least @need entries (new
 * entries zero); 0, or -1 when out of memory (no error set: the caller
 * names its output). */
int merge_table_grow(void *table, uint32_t *cap, uint32_t need, size_t elem_size);

/* A growable set of 64-bit ids (the processes a sink has described). */
struct merge_idset {
	uint64_t *ids;
	uint32_t nr, cap;
};
/* Add @id to @set: 1 if it was new, 0 if already there, -1 when out of
 * memory (no error set: the caller names its output). */
int merge_idset_add(struct merge_idset *set, uint64_t id);
/* Free @set's storage and empty it. */
void merge_idset_free(struct merge_idset *set);

#endif
