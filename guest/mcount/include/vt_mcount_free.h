/*
 * vt_mcount_free.h - the freestanding mcount runtime
 * (build/lib/libvmtrace-mcount-free.a): function tracing for a kernel or
 * unikernel built with -pg (or -pg -mfentry, or -finstrument-functions).
 * No libc, no allocation, no TLS, no SSE: the kernel hands it one buffer
 * and gets uftrace records back (16 bytes each, lib/uftrace.h,
 * docs/format/uftrace.md), timestamps in raw TSC ticks.
 *
 * One recording context: call it from one CPU (or with the other CPUs'
 * traced code not running).  When the buffer is full, recording stops:
 * every entry already recorded still gets its exit (room is reserved
 * for them), later calls are counted, and vt_mcount_free_data() ends the
 * records with one VT_UFT_LOST record whose address field is that count.
 */
#ifndef VT_MCOUNT_FREE_H
#define VT_MCOUNT_FREE_H

#include <stddef.h>
#include <stdint.h>

/* vt_mcount_free_init() flags */
#define VT_MCOUNT_FREE_ENTRIES_ONLY	1U	/* record entries, hook no return */

/* Bytes of @buf used per level of @max_depth for the shadow stack. */
#define VT_MCOUNT_FREE_FRAME_BYTES	24

/*
 * Give the runtime @buf of @len bytes (8-byte aligned).  The first
 * @max_depth * VT_MCOUNT_FREE_FRAME_BYTES bytes hold the shadow stack,
 * the rest the records.  @max_depth is the depth limit (1..1023; deeper
 * calls are counted, not recorded).  Recording is off until
 * vt_mcount_free_start().  Returns 0, or -1 if the buffer is too small
 * for the shadow stack and 4 records, or @max_depth is out of range.
 * Must not be called while traced frames recorded by an earlier init
 * are still running.
 */
int vt_mcount_free_init(void *buf, size_t len, unsigned max_depth, unsigned flags);

/* Start / stop recording.  After stop, the functions still running get
 * their exit records when they return; nothing new is recorded. */
void vt_mcount_free_start(void);
void vt_mcount_free_stop(void);

/*
 * The records so far: sets *@data to the first one and returns the number
 * of bytes (a multiple of 16).  When calls were lost, the last record is
 * a VT_UFT_LOST record (written by this call) counting them.
 */
size_t vt_mcount_free_data(const void **data);

/* Calls not recorded: buffer full (lost) and beyond the depth limit. */
uint64_t vt_mcount_free_lost(void);
uint64_t vt_mcount_free_skipped(void);

#endif
