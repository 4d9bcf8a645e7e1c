/*
 * record_int.h - what the files of the tracefs recorder share (host/
 * only; the recorder's contract is record.h): its limits and file names,
 * the recording's state (struct host_record) and the functions one file
 * calls in another.
 *
 * The recorder's files, one concern each:
 *   record.c           the lifecycle: start, poll, add_pid, meta, stop
 *   record_splice.c    the per-CPU reader threads (splice, no allocation)
 *   record_tracefs.c   tracefs setup: events, pid filters, followed tasks,
 *                      per-CPU files
 *   record_registry.c  interrupted recordings: DIR/record.state, the
 *                      /run/vmtrace registry, draining an instance, the
 *                      stale-instance reaper
 *   record_tracedat.c  writing trace.dat and the end's vmtrace.meta
 *   record_finish.c    `vmtrace record --finish DIR`: salvage
 */
#ifndef HOST_RECORD_INT_H
#define HOST_RECORD_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "compiler.h"
#include "meta.h"
#include "record.h"
#include "tracedat.h"

#define REC_RAW_FMT		"%s/trace.cpu%u.raw"
#define REC_FILE_MODE		0644
#define REC_PIPE_BYTES		(1024 * 1024)
#define REC_COMM_MAX		16
#define REC_PROC_PATH_MAX	64
#define REC_READ_ALL_MAX	UINT32_MAX	/* a whole-file read (kallsyms: a u32 size in trace.dat) */
#define REC_PATH_MAX		PATH_MAX
/* QEMU processes whose image files' extents are read (host/extents.c) */
#define REC_EXT_PIDS		16
#define REC_NAME_MAX		64
#define REC_MAX_SEEN		1024	/* tasks remembered (cmdlines, meta) */
/* Recovery of an interrupted recording (`vmtrace record --finish DIR`):
 * DIR/record.state (the metadata known at start + how to find the tracefs
 * instance) and DIR/record.events (the instance's set_event) exist while a
 * recording runs and stay when it is killed or fails; REC_REGISTRY_DIR
 * (record_registry.c) maps a recorder pid to its DIR for the stale-instance
 * reaper. */
#define REC_STATE_FILE		"record.state"
/* the values of VT_MK_RECORD_TRACEDAT (meta and state): the format written */
#define REC_FORMAT_V7		"v7-zstd"
#define REC_FORMAT_V6		"v6"
#define REC_KALLSYMS_ALWAYS	"always"
#define REC_KALLSYMS_AUTO	"auto"
#define REC_EVENTS_FILE		"record.events"
#define REC_BOOT_ID_PATH	"/proc/sys/kernel/random/boot_id"
#define REC_BOOT_ID_MAX		64
/* The fork event that follows new tasks (record_tracefs.c, record_tracedat.c) */
#define REC_FORK_EVENT		"sched/sched_process_fork"
/* Systems whose events are limited to the traced pids (record_tracefs.c). */
#define REC_NR_PID_SYSTEMS	2

struct tracefs_instance;
struct tracefs_dynevent;
struct host_kvm;

struct rec_cpu {
	struct host_record *rec;
	unsigned cpu;
	int in_fd;		/* per_cpu/cpuN/trace_pipe_raw */
	int out_fd;		/* DIR/trace.cpuN.raw */
	int pipe[2];
	size_t pipe_bytes;
	pthread_t thread;
	int started;
	int err;		/* errno of a failure, 0 if none */
	char *page;		/* one page for the final partial reads */
};

struct rec_task {
	pid_t tid;
	pid_t tgid;		/* its process (/proc/TID/status Tgid), 0 unknown */
	int live;		/* in the pid filter (the task still exists) */
	unsigned round;		/* the follow round that added it */
	char comm[REC_COMM_MAX];
};

struct host_record {
	char *dir;
	int guest, kvm_facts;
	struct tracefs_instance *inst;
	unsigned nr_cpus;
	uint32_t page_size;
	struct rec_cpu *cpu;
	int stop_pipe[2];
	struct rec_task task[REC_MAX_SEEN];
	pid_t tids[HOST_RECORD_MAX_PIDS];	/* the live tasks */
	int nr_task, nr_live;
	int tasks_dropped;
	int pid_filtered;	/* pids were given: pid systems get a filter */
	int filter_dirty;
	int pid_system_on[REC_NR_PID_SYSTEMS];
	/* Tasks born since the last follow: the filter also takes every tid
	 * in (new_after, new_after + REC_NEW_PID_WINDOW] (cyclic below
	 * pid_max), new_after = the kernel's last pid read before that
	 * follow, so a new thread or child is traced from its first
	 * instruction, before a poll has seen it (-1: no window) */
	int new_after, pid_max;
	int last_pid_fd;	/* ns_last_pid, kept open (pread), -1 none */
	/* the last two polls' rec_mark_new_pids: did a task start? */
	int fresh, fresh_before;
	/* every tid ever traced, a bit each (grown as needed): at the end the
	 * pid-limited events of the others (born in a new-pid window, never
	 * traced) are discarded from the pages (rec_discard_foreign) */
	uint8_t *traced;
	size_t traced_bytes;
	/* sched:sched_process_fork was enabled by us, filtered on parent_pid
	 * like the syscalls: at the end it tells which never-seen tasks a
	 * traced one started (kept), and its own events are discarded */
	int fork_ours;
	unsigned polls;
	unsigned follow_round;	/* rec_follow_all's round, stamps rec_task.round */
	struct host_kvm *kvm;
	pid_t ext_pids[REC_EXT_PIDS];	/* QEMU processes whose files' extents
					 * were read at their start (extents.tsv) */
	int nr_ext_pids;
	struct host_ext_files *ext_files;	/* ... those files, NULL: none yet */
	struct vt_meta *meta;
	char *events;		/* enabled events, as given/defaulted */
	pid_t registry_pid;	/* registry entry to remove with the instance */
	struct tracefs_dynevent *kick_probe;	/* made by us: removed at the end */
};

/* ---- record.c ---- */

/* Create the output directory @dir (*@created = 1), or empty an existing
 * one with @force.  0, or -1 with a message. */
int rec_make_dir(const char *dir, int force, int *created);
/* Free @r and everything it holds (the instance is removed if it has
 * one). */
void rec_free(struct host_record *r);
/* Remove the raw per-CPU files DIR/trace.cpuN.raw of @r. */
void rec_unlink_raw(struct host_record *r);

/* ---- record_splice.c: the reader threads ---- */

/* A reader thread (@arg: its struct rec_cpu): splices whole pages from
 * the CPU's trace_pipe_raw to its raw file until the stop pipe is
 * readable, then drains; c->err gets the errno of a failure.  NULL. */
void *rec_cpu_main(void *arg);
/* After tracing stopped: the whole pages, then the partial last page(s)
 * of @c's CPU, into its raw file. */
void rec_drain(struct rec_cpu *c);

/* ---- record_tracefs.c: tracefs setup ---- */

/* The tracefs directory, mounted if we may, with instances writable; NULL
 * with a message (errno set) otherwise. */
const char *rec_tracefs(void);
/* Enable @o's events (or the host/guest defaults) in r->inst, and the
 * guest's virtio kick probe.  0, or -1 with a message. */
int rec_enable_events(struct host_record *r, const struct host_record_opts *o);
/* Rewrite the common_pid filter of the pid-limited systems from r->tids.
 * 0, or -1 with a message. */
int rec_write_filter(struct host_record *r);
/* The thread name of @tid into @comm (REC_COMM_MAX bytes); @comm is kept
 * as it was when the thread is gone. */
void rec_read_comm(pid_t tid, char *comm);
/* Remember the task @tid (live, in the filter): 1 if added, 0 if already
 * known or there is no room (r->tasks_dropped counts those). */
int rec_task_add(struct host_record *r, pid_t tid);
/* Remember @tid as traced (its pid-limited events are kept at the end).
 * 0, or -1 when out of memory. */
int rec_task_mark(struct host_record *r, pid_t tid);
/* Tasks that ended leave the filter (their tids may be reused). */
void rec_prune(struct host_record *r);
/* Add the threads and child processes of @pid (one level). */
void rec_follow(struct host_record *r, pid_t pid);
/* Note the kernel's last allocated pid (r->new_after): call it before
 * following, so tasks born after it are in the filter's new-pid window.
 * 1 when it moved since the last call or is unknown (a task may have
 * started: follow), 0 when no task started anywhere since. */
int rec_mark_new_pids(struct host_record *r);
/* Add the threads and descendants of every live task, down to the
 * youngest (rec_follow until nothing new is found). */
void rec_follow_all(struct host_record *r);
/* r->page_size: the instance's sub-buffer size where the kernel has one,
 * else getpagesize().  0. */
int rec_page_size(struct host_record *r);
/* Open every CPU's trace_pipe_raw, raw output file and pipe into r->cpu.
 * 0, or -1 with a message. */
int rec_open_cpus(struct host_record *r);

/* ---- record_registry.c: interrupted recordings ---- */

/* The registry entry path of the recorder @pid into @path. */
void rec_registry_path(char *path, size_t len, pid_t pid);
/* Forget the registry entry of the recorder @pid (best effort). */
void rec_registry_del(pid_t pid);
/* The state file of @dir if it belongs to the recorder @pid with instance
 * @inst (NULL: any); NULL otherwise (or when @dir holds a trace.dat).
 * Free it with vt_meta_free(). */
struct vt_meta *rec_state_of(const char *dir, pid_t pid, const char *inst);
/* Write DIR/record.state and DIR/record.events (and the registry entry)
 * once the instance @name under the tracefs @tdir is set up: what
 * `--finish` needs if we are killed.  0, or -1 with a message. */
int rec_state_write(struct host_record *r, const char *tdir, const char *name);
/* Move what the ring buffers of @inst still hold to @dir/trace.cpuN.raw
 * (after the whole pages already there), tracing off; @stats[i] (may be
 * NULL) get the per-CPU stats read before.  Nothing is drained when @dir
 * has no room for it all (the message names @dir).  0, or -1 with a
 * message. */
int rec_drain_instance(struct tracefs_instance *inst, const char *dir, unsigned nr_cpus,
		       uint32_t page_size, char **stats);
/* Finish or remove the instances of recorders that are gone (under the
 * tracefs @tdir); warnings only. */
void rec_reap_stale(const char *tdir);

/* ---- record_tracedat.c: trace.dat and the end's metadata ---- */

/* A numeric field of a per_cpu/cpuN/stats text (0 if absent). */
uint64_t rec_stat_field(const char *stats, const char *name);
/* Write DIR/trace.dat from the raw per-CPU files: the formats of the
 * events in @set_event, kallsyms, cmdlines, options (@stats: per-CPU
 * stats texts) and the pages; @cs gets the per-CPU counts.  0, or -1 with
 * a message. */
int rec_write_tracedat(struct host_record *r, char *set_event, char **stats,
		       struct vt_td_cpu_stats *cs);
/* The end's metadata (counts, lost events) into r->meta and @res from
 * @stats and @cs.  0, or -1 with a message. */
int rec_meta_end(struct host_record *r, char **stats, const struct vt_td_cpu_stats *cs,
		 struct host_record_result *res);
/* Discard from the raw pages the events of the pid-limited systems (those
 * of @set_event) whose task was never traced: other processes' tasks born
 * in the filter's new-pid window.  r->meta gets record.discarded.  0, or
 * -1 with a message. */
int rec_discard_foreign(struct host_record *r, const char *set_event);
/* tsc.hz / tsc.hz_source into r->meta, decided by lib/tsc.c.  0, or -1. */
int rec_meta_tsc(struct host_record *r);

#endif
