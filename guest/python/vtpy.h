/*
 * vtpy.h - the guest Python tracer's per-thread event store (store.c) and
 * its hot path, shared by the CPython glue (ext.c).  Every event is one
 * uftrace record (lib/uftrace.h) written into the thread's memory-mapped
 * stage (lib/pystage.h), copied into <TID>.dat when full: no locks, no
 * allocation, no system call per event.
 */
#ifndef VTPY_H
#define VTPY_H

#include <stdint.h>
#include "compiler.h"
#include "tsc.h"
#include "uftrace.h"
#include "pystage.h"

/* Synthetic code addresses: symbol i covers [BASE + i*SLOT, +SLOT). */
#define VTPY_ADDR_BASE		0x100000000ULL
#define VTPY_ADDR_SPAN		0x100000000ULL
#define VTPY_SYM_SLOT		16
#define VTPY_SYM_MAX		(VTPY_ADDR_SPAN / VTPY_SYM_SLOT)
/* Low address bits of a record: how the function was left or entered
 * (the symbol lookup ignores them: they stay inside the slot). */
#define VTPY_ADDR_UNWIND	1	/* exit by exception */
#define VTPY_ADDR_GEN		2	/* generator/coroutine yield or resume */
/* The mapping named in sid-<SID>.map; symbols go to its .sym file. */
#define VTPY_MAP_PATH		"/vmtrace/vmtrace-python"
#define VTPY_SYM_FILE		"vmtrace-python.sym"
#define VTPY_GC_FILE		"python-gc.txt"

struct vtpy_store {
	struct vt_uft_record *pos;	/* next slot to write (in the stage) */
	/* vtpy_*_fast() write below this: end, or NULL when every record
	 * must take the general path (--lines, --max-depth, clock ns) */
	struct vt_uft_record *fast_end;
	unsigned depth;			/* current call depth of the thread */
	struct vt_uft_record *end;	/* stage full: vtpy_store_grow() */
	uint64_t *line_addr;		/* open line "call" per depth, or NULL */
	/* below: slow path only */
	struct vt_uft_record *base;	/* first record of the stage, NULL: none */
	struct vt_pystage_hdr *hdr;	/* the stage mapping (lib/pystage.h) */
	uint64_t dat_off;		/* .dat offset the stage is copied to */
	uint64_t alloc_end;		/* .dat bytes preallocated */
	uint64_t lost;			/* records not written since space ran out */
	uint64_t lost_total;
	unsigned sess;			/* session the file belongs to (0: none) */
	int fd;				/* the .dat */
	int tid;
	int full;			/* no space for the stage's next copy */
	int err;			/* errno of the last failure */
	struct vtpy_store *next;
};

/* The calling thread's store; until its first event, vtpy_store_none: a
 * store of no session whose fast_end (NULL) stops every fast path, so the
 * fast paths test no NULL pointer.  initial-exec: a plain %fs-relative
 * load, no __tls_get_addr call per event (the extension is dlopen'ed, but
 * one pointer fits glibc's static TLS reserve). */
#define VTPY_TLS_MODEL __attribute__((tls_model("initial-exec")))
extern __thread struct vtpy_store *vtpy_tls VTPY_TLS_MODEL;
extern struct vtpy_store vtpy_store_none;
/* Records deeper than this are not written (depth is still counted). */
extern unsigned vtpy_max_depth;
/* Timestamps in CLOCK_MONOTONIC ns instead of the TSC (test option). */
extern int vtpy_clock_ns;

/* Make the calling thread's store ready for the current session: NULL if
 * tracing is off or its file cannot be created. */
struct vtpy_store *vtpy_store_get(void);
/* A slot for one more record when pos == end (the stage is copied into
 * the .dat and reused), or NULL when the thread has no stage (then the
 * record is counted as lost). */
struct vt_uft_record *vtpy_store_grow(struct vtpy_store *s);

static inline uint64_t vtpy_now(void)
{
	if (unlikely(vtpy_clock_ns))
		return vt_mono_ns();
	return vt_rdtsc();
}

static inline void vtpy_put(struct vtpy_store *s, unsigned type, unsigned depth, uint64_t addr)
{
	struct vt_uft_record *r = s->pos;

	if (unlikely(r >= s->end)) {
		r = vtpy_store_grow(s);
		if (!r)
			return;
	}
	vt_pystage_put(r, vtpy_now(), vt_uft_pack(type, depth, addr));
	s->pos = r + 1;
}

static inline struct vtpy_store *vtpy_cur(void)
{
	struct vtpy_store *s = vtpy_tls;

	if (unlikely(s->sess == 0))
		s = vtpy_store_get();
	return s;
}

/* Function (or line, or gc, or import) entered. */
static inline void vtpy_entry(uint64_t addr)
{
	struct vtpy_store *s = vtpy_cur();
	unsigned d;

	if (unlikely(!s))
		return;
	d = s->depth++;
	if (likely(d < vtpy_max_depth))
		vtpy_put(s, VT_UFT_ENTRY, d, addr);
}

/*
 * The fast path of the callbacks: one record for a function whose record
 * word @w = vt_uft_pack(0, 0, addr) was computed once (cached in its code
 * object).  0 when written; -1 (nothing done) when the general path
 * (vtpy_entry/vtpy_exit) must handle it: no store yet, stage full, a slow
 * option on, or a depth at uftrace's limit.
 */
static inline int vtpy_entry_fast(uint64_t w)
{
	struct vtpy_store *s = vtpy_tls;
	struct vt_uft_record *r = s->pos;
	unsigned d;

	d = s->depth;
	if (unlikely(r >= s->fast_end || d >= VT_UFT_MAX_DEPTH))
		return -1;
	s->depth = d + 1;
	vt_pystage_put_tsc(r, vt_uft_pack_word(w, VT_UFT_ENTRY, d));
	s->pos = r + 1;
	return 0;
}

static inline int vtpy_exit_fast(uint64_t w)
{
	struct vtpy_store *s = vtpy_tls;
	struct vt_uft_record *r = s->pos;
	unsigned d;

	/* depth 0 wraps: an exit with no entry seen goes the general way */
	d = s->depth - 1;
	if (unlikely(r >= s->fast_end || d >= VT_UFT_MAX_DEPTH))
		return -1;
	s->depth = d;
	vt_pystage_put_tsc(r, vt_uft_pack_word(w, VT_UFT_EXIT, d));
	s->pos = r + 1;
	return 0;
}

/* Levels below this may hold an open line (line_addr has this many). */
#define VTPY_LINE_DEPTH		(VT_UFT_MAX_DEPTH + 1)

/* Left; exits with no entry seen (tracing began deeper) are skipped.  An
 * open line of the frame is closed first. */
static inline void vtpy_exit(uint64_t addr)
{
	struct vtpy_store *s = vtpy_cur();
	unsigned d;

	if (unlikely(!s || s->depth == 0))
		return;
	d = --s->depth;
	if (unlikely(s->line_addr != NULL) && d < VTPY_LINE_DEPTH && s->line_addr[d]) {
		if (d < vtpy_max_depth)
			vtpy_put(s, VT_UFT_EXIT, d, s->line_addr[d]);
		s->line_addr[d] = 0;
		if (d == 0)
			return;
		d = --s->depth;
	}
	if (likely(d < vtpy_max_depth))
		vtpy_put(s, VT_UFT_EXIT, d, addr);
}

/* A new line of the frame at the current depth: closes the previous one. */
void vtpy_line(uint64_t addr);

/* Session control (store.c; caller holds the GIL). */
struct vtpy_session {
	const char *dir;
	const char *exename;
	const char *cmdline;
	int lines;		/* line events wanted: allocate line_addr */
};
int vtpy_session_open(const struct vtpy_session *cfg);
/* Close every store (files cut to their last record).  Returns the number
 * of records lost in the session. */
uint64_t vtpy_session_close(int exit_status);
int vtpy_session_active(void);
const char *vtpy_session_dir(void);
/* Append a symbol to the session's .sym file (0 or -1 with vt_err). */
int vtpy_session_sym(uint64_t addr, const char *name);
/* Append a gc line to python-gc.txt. */
void vtpy_session_gc(int gen, long collected, long uncollectable);
/* Called in a fork child (before Python runs again): drop the parent's
 * files without touching them and start a session in DIR/fork-<pid>. */
int vtpy_session_fork_child(void);
/* The errno that stopped recording (0 if none). */
int vtpy_session_errno(void);
/* Finish the .dat file @path of a writer that is gone: lib's
 * vt_pystage_fold() (cut after its last record, the stage's newer records
 * appended, the stage removed).  Returns the number of records, or -1
 * with vt_err. */
long vtpy_dat_finish(const char *path);
/* vt_uft_finish_ns(@dir, its own tsc.hz): a VT_UFT_FIN_* value or -1. */
int vtpy_dir_finish_ns(const char *dir);

#endif
