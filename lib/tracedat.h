/*
 * tracedat.h - trace.dat, the file format of trace-cmd (version 6, man 5
 * trace-cmd.dat.v6), owned here for every vmtrace module: the host/guest
 * recorder writes it (writer section), merge/align read it (reader
 * section, a wrapper over libtracecmd).  See docs/format/tracedat.md.
 *
 * Layout written by vmtrace (all numbers little-endian):
 *   off  size  field
 *     0     3  magic 0x17 0x08 0x44
 *     3     7  "tracing"
 *    10     2  version "6\0"
 *    12     1  endian (0 = little)
 *    13     1  sizeof(long) of the recording userspace (8)
 *    14     4  page size (ring-buffer sub-buffer size, 4096)
 *    18    12  "header_page\0", u64 size, events/header_page text
 *     .    13  "header_event\0", u64 size, events/header_event text
 *     .     4  u32 count of ftrace formats, then per format u64 size + text
 *     .     4  u32 count of systems, then per system: NUL-terminated name,
 *              u32 count of events, per event u64 size + format text
 *     .     4  u32 size + /proc/kallsyms text (0 = none)
 *     .     4  u32 size + printk_formats text
 *     .     8  u64 size + cmdlines text ("PID COMM\n" lines)
 *     .     4  u32 number of CPUs
 *     .    10  "options  \0", then options: u16 id, u32 size, data;
 *              closed by a u16 0
 *     .    10  "flyrecord\0", then per CPU u64 offset + u64 size of its data
 *   (pad to a page boundary)
 *     .     .  per CPU: raw ring-buffer pages as trace_pipe_raw gives them
 *
 * Ring-buffer page (one per page size, as in events/header_page):
 *     0     8  timestamp of the first event (trace clock)
 *     8     8  commit: bytes of event data (low 27 bits); bit 31 = events
 *              were lost before this page, bit 30 = their count is stored
 *              as a u64 right after the data
 *    16     .  events: u32 header (type_len:5, time_delta:27) + payload
 */
#ifndef VT_TRACEDAT_H
#define VT_TRACEDAT_H

#include <stddef.h>
#include <stdint.h>
#include "compiler.h"

#define VT_TD_FILE		"trace.dat"
#define VT_TD_VERSION		6
#define VT_TD_PAGE_HDR_SIZE	16

/* Option ids of trace-cmd files (the subset vmtrace writes). */
enum vt_td_option {
	VT_TD_OPT_DONE = 0,
	VT_TD_OPT_CPUSTAT = 2,		/* per CPU: text of per_cpu/cpuN/stats */
	VT_TD_OPT_TRACECLOCK = 4,	/* text of trace_clock, "[x86-tsc]" marked */
	VT_TD_OPT_UNAME = 5,		/* "sysname nodename release version machine" */
};

/* ------------------------------------------------------------------ */
/* Writer (lib/tracedat_write.c).  Tools only: allocates and blocks.  */
/* ------------------------------------------------------------------ */

/*
 * The sections must be written in file order: create, headers, ftrace
 * formats, systems_begin + one write_system per system, kallsyms, printk,
 * cmdlines, (options any time before cpu data), cpu_data, close.  A call
 * out of order fails.  Every function returns 0 on success and -1 with a
 * message naming the file (lib/err.h) on failure; the file is left as is.
 */
struct vt_td_writer;

/* What the copy of one CPU's pages found. */
struct vt_td_cpu_stats {
	uint64_t bytes;		/* bytes of pages copied */
	uint64_t pages;
	uint64_t events;	/* data events (padding and time extends excluded) */
	uint64_t lost;		/* events the kernel reported lost between pages */
	uint64_t lost_unknown;	/* pages flagged lost without a stored count */
	uint64_t first_ts;	/* timestamp of the first page (0 if none) */
	uint64_t bad_pages;	/* malformed pages (copied as they are) */
	uint64_t first_bad;	/* file offset of the first, in the CPU's data */
};

/* Create @path (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644) and write the
 * initial format for a little-endian 64-bit host with ring-buffer pages of
 * @page_size bytes.  NULL on failure. */
struct vt_td_writer *vt_td_create(const char *path, uint32_t page_size);
/* The same, writing trace-cmd's version 7 with zstd-compressed sections
 * (metadata sections whole, pages in chunks) instead of version 6; the
 * calls that follow are the same. */
struct vt_td_writer *vt_td_create_zstd(const char *path, uint32_t page_size);

/* The header_page and header_event texts of events/ (@page_len and
 * @event_len bytes). */
int vt_td_write_headers(struct vt_td_writer *w, const char *header_page, size_t page_len,
			const char *header_event, size_t event_len);
/* The ftrace/<event>/format texts. */
int vt_td_write_ftrace_formats(struct vt_td_writer *w, unsigned nr,
			       const char *const *fmts, const size_t *lens);
/* Announce @nr systems; then call vt_td_write_system @nr times. */
int vt_td_systems_begin(struct vt_td_writer *w, unsigned nr);
int vt_td_write_system(struct vt_td_writer *w, const char *system, unsigned nr,
		       const char *const *fmts, const size_t *lens);
int vt_td_write_kallsyms(struct vt_td_writer *w, const char *buf, size_t len);
int vt_td_write_printk(struct vt_td_writer *w, const char *buf, size_t len);
int vt_td_write_cmdlines(struct vt_td_writer *w, const char *buf, size_t len);
/* Queue an option (copied) for the options section. */
int vt_td_add_option(struct vt_td_writer *w, enum vt_td_option id, const void *data,
		     uint32_t len);
/* Write the CPU count, options, flyrecord section and the pages read from
 * @fds[0..nr_cpus) (each a file of whole pages, read from its start).
 * Each page is checked (commit within the page) and counted into
 * @stats[cpu] (may be NULL). */
int vt_td_write_cpu_data(struct vt_td_writer *w, unsigned nr_cpus, const int *fds,
			 struct vt_td_cpu_stats *stats);
/* Flush and close; 0 if everything reached the file.  Frees @w. */
int vt_td_close(struct vt_td_writer *w);
/* Close and remove the unfinished file (after a failure).  Frees @w. */
void vt_td_abort(struct vt_td_writer *w);

/* Count one ring-buffer page (@len = page size bytes at @page) into @st.
 * -1 if the page is malformed (commit beyond the page, event overruns). */
int vt_td_page_count(const void *page, size_t len, struct vt_td_cpu_stats *st);
/* Discard the data events of one ring-buffer page (@len = page size bytes
 * at @page, changed in place) that @keep(@arg, payload, payload length)
 * returns 0 for: each becomes padding with its time delta, as the kernel
 * discards events, so readers skip it and later stamps are unchanged (a
 * zero-delta event takes a tick from the next entry; it is kept when that
 * cannot be done).
 * *@nr_discarded counts them.  -1 if the page is malformed (the events
 * before the fault may have been discarded). */
int vt_td_page_discard(void *page, size_t len, int (*keep)(void *arg, const void *data,
							   uint32_t len),
		       void *arg, uint64_t *nr_discarded);

/* Building ring-buffer pages (lib/tracedat_page.c): for tools that
 * synthesise trace.dat files (test fixtures, converters).  Small events
 * only (payload 1..112 bytes), in time order; a gap of 2^27 ticks or more
 * gets a time-extend record. */
/* The header_page text of 4096-byte pages with a u64 commit and the
 * header_event text, for synthesised files (NUL-terminated). */
extern const char vt_td_header_page[];
extern const char vt_td_header_event[];

struct vt_td_page {
	uint8_t *buf;		/* the page, @size bytes */
	size_t size;
	size_t used;		/* bytes of event data after the header */
	uint64_t ts_last;
	int nr_events;
};
#define VT_TD_PAGE_SMALL_MAX	112

/* Start an empty page in @buf (zeroed). */
void vt_td_page_init(struct vt_td_page *p, void *buf, size_t size);
/* Append an event at @ts with payload @data (@len bytes, the event's
 * format layout from common_type on): 0 added, 1 page full (write it out
 * and init a new one), -1 bad length or @ts before the last event. */
int vt_td_page_add(struct vt_td_page *p, uint64_t ts, const void *data, uint32_t len);

/* ------------------------------------------------------------------ */
/* Reader (lib/tracedat_read.c): a wrapper over libtracecmd +         */
/* libtraceevent for merge/ and align/.  Tools only: allocates.       */
/* Untrusted input: libtracecmd checks the file; every field access   */
/* here is bounded by the record size.                                */
/* ------------------------------------------------------------------ */

struct vt_td_reader;

/* One event record.  Pointers stay valid until the next read on the same
 * CPU (vt_td_read_next) or any read (vt_td_read_next_any). */
struct vt_td_event {
	uint64_t ts;		/* raw timestamp in the file's trace clock */
	int cpu;
	int pid;		/* common_pid: the thread id */
	int id;			/* event type id in this file */
	const char *system;	/* "kvm", "sched", ... ("" if unknown) */
	const char *name;	/* "kvm_exit", ... ("" if unknown) */
	const void *data;	/* the raw record */
	int size;
	void *priv;		/* the reader's event format (internal) */
};

/* Open a trace.dat (vmtrace's or trace-cmd's, any version libtracecmd
 * reads).  NULL with a message naming the file on failure. */
struct vt_td_reader *vt_td_read_open(const char *path);
void vt_td_read_close(struct vt_td_reader *r);
int vt_td_read_nr_cpus(const struct vt_td_reader *r);
/* 1 if the file's CPU data was cut short: it is read from a copy padded
 * with zeros, each CPU up to its last whole record (the rest is lost). */
int vt_td_read_truncated(const struct vt_td_reader *r);
/* What the caller should warn about the file (malformed or cut pages read
 * up to their last sound event), NULL if nothing: library code does not
 * print. */
const char *vt_td_read_warning(const struct vt_td_reader *r);
/* The trace clock the file was recorded with ("x86-tsc", "local",
 * "mono", ...; "" when the file does not say). */
const char *vt_td_read_clock(const struct vt_td_reader *r);
/* 1 if @clock counts nanoseconds (local, global, mono, boot, ...), 0 for
 * x86-tsc / counter / unknown. */
int vt_td_clock_is_ns(const char *clock);

/*
 * trace-cmd's host-guest recordings (trace-cmd record -A, trace-cmd 3.x;
 * man 5 trace-cmd.dat.v7): the guest's file carries TIME_SHIFT, the
 * corrections its protocol measured per guest CPU over time, with which
 * trace-cmd maps a guest stamp ts of CPU c to the host's clock:
 *     host = ((ts * scaling) >> frac) + offset
 * the sample at or before ts (the first one before it), or, with
 * VT_TD_TSYNC_INTERPOLATE, the offset interpolated between the two samples
 * around ts; the host's file carries one GUEST option per guest: its
 * name, trace id and vCPU -> host thread map.
 */
#define VT_TD_TSYNC_INTERPOLATE	0x1	/* flags: interpolate the offset */

struct vt_td_tsync_sample {
	uint64_t time;		/* guest stamp where it was measured */
	int64_t offset;
	uint64_t scaling;
	uint32_t frac;		/* fraction bits of scaling (0: none stored) */
};

struct vt_td_tsync {
	uint64_t peer_id;	/* trace id of the host's file */
	uint32_t flags;		/* VT_TD_TSYNC_* */
	uint32_t nr_cpus;
	uint32_t *count;	/* per guest CPU: samples */
	struct vt_td_tsync_sample **samples;	/* per guest CPU, as stored */
};

struct vt_td_guest {
	char name[64];
	uint64_t trace_id;
	uint32_t nr_vcpus;
	uint32_t *vcpu;		/* guest CPU id */
	uint32_t *tid;		/* the host thread running it */
};

/* The file's TIME_SHIFT (a guest's file of a host-guest recording), NULL
 * if it has none.  Valid while @r is open. */
const struct vt_td_tsync *vt_td_read_tsync(const struct vt_td_reader *r);
/* The guests the file's GUEST options name (a host's file): count, each. */
int vt_td_read_nr_guests(const struct vt_td_reader *r);
const struct vt_td_guest *vt_td_read_guest(const struct vt_td_reader *r, int i);
/* The file's trace id (TRACEID option): 0 with *@id set, -1 if none. */
int vt_td_read_trace_id(const struct vt_td_reader *r, uint64_t *id);
/* The TSC frequency implied by the file's TSC2NSEC option (ns = tsc *
 * mult >> shift): 0 with *@hz set, -1 if none. */
int vt_td_read_tsc_hz(const struct vt_td_reader *r, uint64_t *hz);
/* The same from the header of the file @path alone (no reader opened,
 * nothing inflated: options sections are stored plain); -1 if it states
 * none or the header is unreadable (the message set). */
int vt_td_file_tsc_hz(const char *path, uint64_t *hz);

/* The next event of @cpu in time order: 1 with *ev filled, 0 at the end
 * of that CPU's data, -1 when out of memory (message set; the reads end). */
int vt_td_read_next(struct vt_td_reader *r, int cpu, struct vt_td_event *ev);
/* The next event of all CPUs in time order (a merge over the CPUs); the
 * same returns. */
int vt_td_read_next_any(struct vt_td_reader *r, struct vt_td_event *ev);

/* The event's text as trace-cmd report prints its info part, into @buf
 * (truncated to @len); @ev must be the last event read on its CPU. */
const char *vt_td_event_info(struct vt_td_reader *r, const struct vt_td_event *ev,
			     char *buf, size_t len);

/* The command name the file recorded for @pid ("" if none). */
const char *vt_td_read_comm(struct vt_td_reader *r, int pid);

/* Field access on @ev.  vt_td_field_u64: 0 with *out set for a numeric
 * field (sign-extended for signed ones), -1 if absent or not a number.
 * vt_td_field_str: the string of a char[] / __data_loc char[] field copied
 * into @buf (NUL-terminated, truncated to @len), NULL if absent. */
int vt_td_field_u64(const struct vt_td_event *ev, const char *field, uint64_t *out);
const char *vt_td_field_str(const struct vt_td_event *ev, const char *field,
			    char *buf, size_t len);
/* The event's own (non-common) fields in format order: their count, the
 * i-th name, and 1 if the i-th is numeric (vt_td_field_u64 works). */
int vt_td_nr_fields(const struct vt_td_event *ev);
const char *vt_td_field_name(const struct vt_td_event *ev, int i);
int vt_td_field_is_num(const struct vt_td_event *ev, int i);
/* The same accesses by field index (no name lookup: per-event paths). */
int vt_td_field_u64_idx(const struct vt_td_event *ev, int i, uint64_t *out);
const char *vt_td_field_str_idx(const struct vt_td_event *ev, int i, char *buf, size_t len);

/* What field @i of @ev's event is, as libtraceevent types it: a number
 * (signed or not), text (char[] or __data_loc char[]: vt_td_field_str), an
 * array of numbers (e.g. raw_syscalls sys_enter's unsigned long args[6],
 * __data_loc u8[]: vt_td_field_array_idx), or none of these. */
enum vt_td_field_kind {
	VT_TD_FIELD_OTHER,
	VT_TD_FIELD_UNSIGNED,
	VT_TD_FIELD_SIGNED,
	VT_TD_FIELD_STRING,
	VT_TD_FIELD_ARRAY,
	VT_TD_FIELD_ARRAY_SIGNED,
};
enum vt_td_field_kind vt_td_field_kind(const struct vt_td_event *ev, int i);
/* The elements of array field @i (1, 2, 4 or 8 bytes each, sign-extended
 * when signed) into @out, at most @max: how many there are in @out, -1 if
 * the field is no array of numbers or lies outside the record. */
int vt_td_field_array_idx(const struct vt_td_event *ev, int i, uint64_t *out, int max);
/* 1 if the event's print format shows field @i through a table of names
 * (__print_flags / __print_symbolic, e.g. sched_switch's prev_state): its
 * value as text is then vt_td_event_info()'s "NAME=TEXT" word. */
int vt_td_field_is_symbolic(const struct vt_td_event *ev, int i);

#endif
