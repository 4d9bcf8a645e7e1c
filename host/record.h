/*
 * record.h - the tracefs recorder as a library: its own tracefs instance
 * in the x86-tsc trace clock, chosen events, per-CPU raw pages spliced to
 * files by one thread per CPU, and at the end a trace.dat + vmtrace.meta
 * in the output directory.  Used by `vmtrace record` (host/cmd_record.c)
 * and by anything that wants kernel events next to its own (e.g. USDT
 * uprobes: create the dynamic events, pass "uprobes:NAME" in @events).
 *
 * Not thread-safe: start, poll, add_pid and stop from one thread.
 */
#ifndef HOST_RECORD_H
#define HOST_RECORD_H

#include <stdint.h>
#include <sys/types.h>

#define HOST_RECORD_DEFAULT_BUFFER_KB	4096
#define HOST_RECORD_POLL_MS		50
#define HOST_RECORD_MAX_PIDS		128
#define HOST_RECORD_REPORT_CPUS		64

struct host_record_opts {
	const char *out_dir;		/* created (mode 0755); must not exist unless @force */
	int force;			/* reuse an existing directory (its trace files go) */
	int guest;			/* domain=guest and the guest default events */
	const char *const *events;	/* "SYSTEM" or "SYSTEM:EVENT"; NULL = defaults */
	int nr_events;
	const pid_t *pids;		/* processes whose syscalls are traced, with */
	int nr_pids;			/* their threads and children (polled) */
	unsigned buffer_kb;		/* ring buffer per CPU, 0 = default */
	int kvm_facts;			/* collect KVM facts of traced QEMU processes */
	const char *command;		/* stored in the metadata only (may be NULL) */
	int command_pid;		/* the command's pid (metadata only), 0 none */
	int v6;				/* trace.dat version 6, uncompressed (default:
					 * version 7, zstd-compressed sections) */
	int kallsyms;			/* /proc/kallsyms in trace.dat always (default:
					 * when an event prints a kernel symbol) */
};

/* What a finished recording holds. */
struct host_record_result {
	unsigned nr_cpus;
	uint64_t events;	/* data events in trace.dat */
	uint64_t lost;		/* events lost (kernel counts), all CPUs */
	uint64_t lost_pages;	/* pages flagged lost without a count */
	uint64_t bytes;		/* bytes of ring-buffer pages */
	uint64_t lost_cpu[HOST_RECORD_REPORT_CPUS];	/* lost per CPU (first CPUs) */
};

struct host_record;

/* Create the instance, enable the events, start the per-CPU threads and
 * turn tracing on.  NULL on failure (message in vt_err_msg(); errno is
 * EACCES/EPERM when permission was missing, ENODEV when tracefs is not
 * available); nothing is left behind but the output directory. */
struct host_record *host_record_start(const struct host_record_opts *o);

/* Add a process (and its threads) to the traced pids. */
int host_record_add_pid(struct host_record *r, pid_t pid);

/* Periodic work of the main thread (every HOST_RECORD_POLL_MS): follows new
 * threads/children of traced pids, reads the KVM facts.  0 or -1. */
int host_record_poll(struct host_record *r);

/* Store extra "key=value" metadata (e.g. the command's exit status). */
int host_record_meta(struct host_record *r, const char *key, const char *val);

/* Stop tracing, drain the buffers, write trace.dat and vmtrace.meta,
 * remove the instance and free @r.  @res (may be NULL) gets the counts.
 * -1 on failure; the raw per-CPU files are then kept in the directory. */
int host_record_stop(struct host_record *r, struct host_record_result *res);

/*
 * Recover the recording in @dir that a killed or failed recorder left
 * (`vmtrace record --finish`): drain its tracing instance if it still
 * exists (the state file DIR/record.state names it), write trace.dat from
 * the raw per-CPU pages and vmtrace.meta (record.recovered=1, the reason,
 * lost counts), remove the instance, the raw files and the state.  With
 * @out (may be NULL) everything is first copied to the new directory @out
 * (created; an existing one only with @force) and finished there; @dir is
 * left as it was.  0: complete (instance drained), 1: finished but the
 * pages the kernel still held are lost (instance gone) or a torn page was
 * dropped, -1 with a message (errno ENOSPC when out of room: nothing was
 * drained or deleted, the message names the file).
 */
int host_record_finish(const char *dir, const char *out, int force,
		       struct host_record_result *res);

#endif
