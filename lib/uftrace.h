/*
 * uftrace.h - the uftrace data directory format (file version 4, as written
 * and read by uftrace 0.13), owned here for every vmtrace module: the guest
 * runtimes write it, merge and convert read it.  See docs/format/uftrace.md.
 *
 * A data directory holds:
 *   info             binary header (below) + text "key:value" sections
 *   task.txt         SESS/TASK/FORK lines, one per session/thread
 *   sid-<SID>.map    the session's memory map (/proc/PID/maps text)
 *   <exename>.sym    symbols: "<hex addr> <type> <name>" lines, sorted
 *   <TID>.dat        the thread's records (struct vt_uft_record), in order
 *   vmtrace.meta     vmtrace's metadata (lib/meta.h): clock, TSC frequency
 *
 * info header, little-endian, 40 bytes:
 *   off size field
 *     0    8 magic "Ftrace!\0"
 *     8    4 version (4)
 *    12    2 header_size (40)
 *    14    1 endian (1 = little)
 *    15    1 elf_class (2 = 64-bit)
 *    16    8 feat_mask (VT_UFT_FEAT_*)
 *    24    8 info_mask (VT_UFT_INFO_*)
 *    32    2 max_stack
 *    34    2 unused
 *    36    4 unused
 *
 * <TID>.dat record, 16 bytes:
 *   off size field
 *     0    8 time   timestamp (raw TSC ticks when vmtrace.meta says
 *                   clock=tsc, nanoseconds when clock=ns)
 *     8    8 bits   0-1 type (VT_UFT_ENTRY/EXIT/LOST/EVENT)
 *                   2   more (argument data follows; vmtrace never sets it)
 *                   3-5 magic (5)
 *                   6-15 depth (0..1023)
 *                   16-63 addr (48 bits: function address, or the number of
 *                         lost records for VT_UFT_LOST)
 */
#ifndef VT_UFTRACE_H
#define VT_UFTRACE_H

#include <stdint.h>
#include "compiler.h"

#define VT_UFT_MAGIC_STR	"Ftrace!"
#define VT_UFT_FILE_VERSION	4
#define VT_UFT_HEADER_SIZE	40
#define VT_UFT_RECORD_MAGIC	5
#define VT_UFT_MAX_DEPTH	1023
#define VT_UFT_ADDR_MASK	((1ULL << 48) - 1)

enum vt_uft_type {
	VT_UFT_ENTRY = 0,
	VT_UFT_EXIT = 1,
	VT_UFT_LOST = 2,
	VT_UFT_EVENT = 3,
};

/* feat_mask bits of the info header */
enum {
	VT_UFT_FEAT_PLTHOOK = 1U << 0,
	VT_UFT_FEAT_TASK_SESSION = 1U << 1,
	VT_UFT_FEAT_KERNEL = 1U << 2,
	VT_UFT_FEAT_ARGUMENT = 1U << 3,
	VT_UFT_FEAT_RETVAL = 1U << 4,
	VT_UFT_FEAT_SYM_REL_ADDR = 1U << 5,
	VT_UFT_FEAT_MAX_STACK = 1U << 6,
	VT_UFT_FEAT_EVENT = 1U << 7,
};

/* info_mask bits of the info header: which text sections follow it */
enum {
	VT_UFT_INFO_EXE_NAME = 1U << 0,
	VT_UFT_INFO_EXE_BUILD_ID = 1U << 1,
	VT_UFT_INFO_EXIT_STATUS = 1U << 2,
	VT_UFT_INFO_CMDLINE = 1U << 3,
	VT_UFT_INFO_CPUINFO = 1U << 4,
	VT_UFT_INFO_MEMINFO = 1U << 5,
	VT_UFT_INFO_OSINFO = 1U << 6,
	VT_UFT_INFO_TASKINFO = 1U << 7,
	VT_UFT_INFO_USAGEINFO = 1U << 8,
	VT_UFT_INFO_LOADINFO = 1U << 9,
	VT_UFT_INFO_ARG_SPEC = 1U << 10,
	VT_UFT_INFO_RECORD_DATE = 1U << 11,
	VT_UFT_INFO_PATTERN_TYPE = 1U << 12,
	VT_UFT_INFO_VERSION = 1U << 13,
};

struct vt_uft_record {
	uint64_t time;
	uint64_t bits;
};
VT_STATIC_ASSERT(sizeof(struct vt_uft_record) == 16, "uftrace record is 16 bytes");

/* Pack the second word of a record (hot path: no branches). */
static inline VT_NOTRACE uint64_t vt_uft_pack(unsigned type, unsigned depth, uint64_t addr)
{
	return (uint64_t)(type & 3) | ((uint64_t)VT_UFT_RECORD_MAGIC << 3) |
	       ((uint64_t)(depth & VT_UFT_MAX_DEPTH) << 6) | ((addr & VT_UFT_ADDR_MASK) << 16);
}

/* The same from @w = vt_uft_pack(0, 0, addr) computed once (its magic and
 * address): @type and @depth (<= VT_UFT_MAX_DEPTH, unchecked) added. */
static inline VT_NOTRACE uint64_t vt_uft_pack_word(uint64_t w, unsigned type, unsigned depth)
{
	return w | type | ((uint64_t)depth << 6);
}

static inline unsigned vt_uft_type(uint64_t bits) { return bits & 3; }
static inline unsigned vt_uft_more(uint64_t bits) { return (bits >> 2) & 1; }
static inline unsigned vt_uft_magic(uint64_t bits) { return (bits >> 3) & 7; }
static inline unsigned vt_uft_depth(uint64_t bits) { return (bits >> 6) & VT_UFT_MAX_DEPTH; }
static inline uint64_t vt_uft_addr(uint64_t bits) { return bits >> 16; }

/*
 * Directory-level API (Linux only, allocates: never on a per-event hot
 * path).  One file a job: uftrace_write.c, uftrace_read.c,
 * uftrace_stream.c, uftrace_convert.c, uftrace_fold.c, uftrace-append.c
 * (their shared helpers: uftrace_int.h, uftrace_util.c).  All functions
 * return 0 / a pointer on success and -1 / NULL on failure with a message
 * naming the file (lib/err.h), unless said otherwise.
 */
#include <stddef.h>
#include <sys/types.h>

/* What the info file says about a recorded session. */
struct vt_uft_info {
	const char *exename;	/* absolute path of the traced executable */
	const char *cmdline;	/* the command line, space separated */
	int exit_status;	/* wait() status, or -1 if unknown */
	int nr_tids;
	const int *tids;	/* every thread that has a <TID>.dat */
	uint16_t max_stack;	/* depth limit used while recording */
	uint64_t elapsed_ns;	/* wall time of the run, 0 if unknown */
};

/* ---- Writing (lib/uftrace_write.c), by the guest runtimes ---- */

/* Create @dir (mode 0755) for a new trace.  An existing non-empty
 * directory is refused unless @force (then its old trace files go); that
 * refusal leaves errno = ENOTEMPTY. */
int vt_uft_dir_create(const char *dir, int force);

/* Write DIR/info from @info (the header + text sections uftrace 0.13
 * needs for replay/graph/report/dump).  @info->tids empty: the tids of
 * DIR's non-empty <TID>.dat files. */
int vt_uft_write_info(const char *dir, const struct vt_uft_info *info);

/* Append a line to DIR/task.txt (created on first use; O_APPEND, so safe
 * from several threads/processes).  @ts is a timestamp in the trace clock.
 * SESS: a session @sid of process @pid running @exename. */
int vt_uft_task_session(const char *dir, uint64_t ts, int pid, const char *sid,
			const char *exename);
/* TASK: thread @tid of process @pid started. */
int vt_uft_task_thread(const char *dir, uint64_t ts, int tid, int pid);
/* FORK: process @pid was forked by @ppid. */
int vt_uft_task_fork(const char *dir, uint64_t ts, int pid, int ppid);

/* Length of a session id: exactly 16 characters (uftrace reads 16). */
#define VT_UFT_SID_LEN	16
/* Make a session id (16 lowercase hex digits from @pid and @ts) into @buf
 * of at least VT_UFT_SID_LEN + 1 bytes. */
void vt_uft_sid_make(char *buf, int pid, uint64_t ts);

/* Write DIR/sid-<SID>.map from /proc/<pid>/maps (pid 0 = self). */
int vt_uft_write_map(const char *dir, const char *sid, pid_t pid);
/* Write DIR/sid-<SID>.map for a program whose image @path occupies
 * [@start, @end) (freestanding or synthetic traces: no /proc/PID/maps).
 * A "[stack]" line is added: uftrace needs one to place the kernel. */
int vt_uft_write_map_fixed(const char *dir, const char *sid, uint64_t start, uint64_t end,
			   const char *path);
/* Same from the PT_LOAD segments of the ELF file @path loaded at
 * @load_bias (0 for ET_EXEC), named by its realpath() as
 * vt_uft_write_syms_elf() names it (use that name in the SESS line too). */
int vt_uft_write_map_elf(const char *dir, const char *sid, const char *path,
			 uint64_t load_bias);

/* One symbol of a .sym file. */
struct vt_uft_sym {
	uint64_t addr;		/* as recorded in the .dat files */
	uint64_t size;
	char type;		/* 'T' function, 'P' PLT ... */
	const char *name;
};

/* Write DIR/<basename(exename)>.sym from @syms (any order; sorted here).
 * Addresses are as recorded in the .dat files; uftrace wants them relative
 * to the start of @exename's first mapping, which is taken from DIR's
 * sid-*.map: write the map first (0 is used if there is none). */
int vt_uft_write_syms(const char *dir, const char *exename,
		      const struct vt_uft_sym *syms, size_t nr);
/* Like vt_uft_write_syms(), with addresses made relative to @base (the
 * start of the executable's first mapping in the sid map). */
int vt_uft_write_syms_rel(const char *dir, const char *exename,
			  const struct vt_uft_sym *syms, size_t nr, uint64_t base);
/* Write DIR/<basename(realpath(path))>.sym from the ELF symbol table of
 * @path (.symtab, else .dynsym; function symbols).  The .sym holds
 * addresses relative to the first PT_LOAD (uftrace's SYM_REL_ADDR), which
 * is right wherever the file was loaded: @load_bias is not needed for it
 * (kept for the API; pass 0). */
int vt_uft_write_syms_elf(const char *dir, const char *path, uint64_t load_bias);

/* The path DIR/<tid>.dat (buffer of @len bytes); -1 if it does not fit. */
int vt_uft_dat_path(char *buf, size_t len, const char *dir, int tid);

/* ---- Reading (lib/uftrace_read.c; untrusted input: every size and
 * record is checked) ---- */
struct vt_uft_reader;
struct vt_uft_stream;

/* Open a data directory written by vmtrace or by uftrace record: its info,
 * task.txt, sid maps and the .sym files they name.  NULL on failure. */
struct vt_uft_reader *vt_uft_open(const char *dir);
/* Free everything of @r (NULL is fine); close its streams first. */
void vt_uft_close(struct vt_uft_reader *r);
/* Number of tasks found in task.txt and as <TID>.dat files, sorted by tid
 * (indexes 0 .. n-1 of the functions below). */
int vt_uft_nr_tasks(const struct vt_uft_reader *r);
/* Thread id / process id of task @idx; -1 if there is no such task. */
int vt_uft_task_tid(const struct vt_uft_reader *r, int idx);
int vt_uft_task_pid(const struct vt_uft_reader *r, int idx);
/* Name of the function at @addr ("" if unknown); valid until close. */
const char *vt_uft_sym_name(const struct vt_uft_reader *r, uint64_t addr);
/* Look up the symbol containing @addr: its start address in *@start (if
 * @start is not NULL) and its name, or NULL; valid until close. */
const char *vt_uft_sym_find(const struct vt_uft_reader *r, uint64_t addr, uint64_t *start);
/* Number of symbols loaded from the .sym files the sid maps name. */
size_t vt_uft_nr_syms(const struct vt_uft_reader *r);
/* What the info file said (exename, cmdline, exit status, tids,
 * max_stack); valid until close.  elapsed_ns is 0 if unknown. */
const struct vt_uft_info *vt_uft_reader_info(const struct vt_uft_reader *r);
/* feat_mask / info_mask of the info header (VT_UFT_FEAT_*, VT_UFT_INFO_*). */
uint64_t vt_uft_feat_mask(const struct vt_uft_reader *r);
uint64_t vt_uft_info_mask(const struct vt_uft_reader *r);
/* The directory it was opened on. */
const char *vt_uft_reader_dir(const struct vt_uft_reader *r);

/* ---- Streaming one task's records (lib/uftrace_stream.c) ---- */

/* A forward reader of task @idx's records, with a bounded buffer; NULL on
 * failure.  A task without a .dat file gives an empty stream. */
struct vt_uft_stream *vt_uft_stream_open(struct vt_uft_reader *r, int idx);
/* 1 with *rec filled, 0 at the end, -1 on a corrupt record (the stream
 * ends there; the message says which file and which offset). */
int vt_uft_stream_next(struct vt_uft_stream *s, struct vt_uft_record *rec);
/* The records vt_uft_stream_next() would give next, as far as they are
 * plain (a valid record carrying no data) and already read: at most @max
 * of them, in place (16 bytes each, 8-byte aligned: copy them out with
 * memcpy), valid until the next call on @s; their number in *@n, the
 * stream moved past them.  *@n == 0 does not mean the end: take the next
 * record with vt_uft_stream_next(), which reports ends and corruption.
 * For batched readers (merge): no per-record call. */
const void *vt_uft_stream_run(struct vt_uft_stream *s, size_t max, size_t *n);
/* Free the stream (NULL is fine). */
void vt_uft_stream_close(struct vt_uft_stream *s);
/* After the end: 1 if the file ended inside a record (a truncated last
 * record, e.g. a killed writer: a clean end, but worth a warning). */
int vt_uft_stream_truncated(const struct vt_uft_stream *s);
/* The .dat of a Python tracer writer that was killed (or still runs)
 * ends in zeroed preallocated space or early; its newest records are in
 * <TID>.stage (lib/pystage.h): the stream reads them after the .dat's,
 * without changing either file, and a corrupt stage ends it with -1.
 * How many records came (or will come) from the stage (0 if none). */
size_t vt_uft_stream_staged(const struct vt_uft_stream *s);
/* File offset of the next record. */
uint64_t vt_uft_stream_offset(const struct vt_uft_stream *s);
/* The stream's file path (DIR/<TID>.dat). */
const char *vt_uft_stream_path(const struct vt_uft_stream *s);
/* The payload of the last record when it had the 'more' bit (an event's
 * data): its bytes and length, else NULL and 0. */
const void *vt_uft_stream_payload(const struct vt_uft_stream *s, size_t *len);

/* ---- Converting TSC to ns (lib/uftrace_convert.c) ---- */

/* Copy the clock=tsc data directory @in to @out (created as with
 * vt_uft_dir_create(@out, @force)) with every timestamp converted to
 * nanoseconds at @tsc_hz (0: take tsc.hz from @in's vmtrace.meta), as
 * `vmtrace merge` converts them: floor(ticks * 1e9 / hz), lib/tsc.h's
 * vt_tsc_ns.  0 on success, VT_UFT_PARTIAL if an input was truncated or corrupt (the
 * copy holds every complete record; message in vt_err_msg()), -1 on
 * failure. */
#define VT_UFT_PARTIAL	1
int vt_uft_convert_ns(const char *in, const char *out, uint64_t tsc_hz, int force);

/*
 * Finishing a directory for uftrace in place (docs/format/uftrace.md,
 * "Clock and conversion"): uftrace reads every time as ns, vmtrace's
 * tracers stamp raw TSC ticks.  A finished clock=tsc directory keeps its
 * raw stamps in <TID>.tsc and task.tsc, which vmtrace's readers prefer
 * (vt_uft_raw_path), and holds ns copies in <TID>.dat and task.txt for
 * uftrace; vmtrace.meta keeps clock=tsc and says uftrace.ns_hz, the
 * frequency of the copies.
 */
#define VT_UFT_RAW_SUFFIX	".tsc"
#define VT_UFT_RAW_TASK		"task.tsc"
enum {
	VT_UFT_FIN_NONE,	/* not a clock=tsc uftrace directory: left as it is */
	VT_UFT_FIN_DONE,	/* finished */
	VT_UFT_FIN_PARTIAL,	/* finished, an input ended early (vt_err_msg()) */
	VT_UFT_FIN_NO_HZ,	/* no TSC frequency given or in vmtrace.meta: left raw */
};
/* Finish the clock=tsc uftrace directory @dir at @tsc_hz (0: its
 * vmtrace.meta's tsc.hz).  Again on a finished directory: its ns copies
 * are made anew from the raw stamps.  Returns a VT_UFT_FIN_* value, or
 * -1 with a message (what was renamed stays readable by vmtrace). */
int vt_uft_finish_ns(const char *dir, uint64_t tsc_hz);
/* The file that holds task @tid's raw stamps in @dir: <TID>.tsc of a
 * finished directory, else <TID>.dat.  0, or -1 if the path is too long. */
int vt_uft_raw_path(char *buf, size_t len, const char *dir, int tid);

/* ---- Incremental writing (lib/uftrace-append.c), for runtimes that
 * learn symbols and mappings while the program runs (may allocate, never
 * per event) ---- */

/* Append one symbol to the open .sym file @fd as two lines: "<addr> <type>
 * <name>" and an end marker at @addr + @size, so the symbol's size is known
 * even if nothing follows (uftrace sorts the file when it reads it). */
int vt_uft_sym_append(int fd, uint64_t addr, uint64_t size, char type, const char *name);
/* Cut the .dat file @path after its last record with a valid magic (a
 * writer that grows its file in chunks leaves zeroed space after a crash;
 * the records before are not checked).  Returns the number of records
 * kept, or -1. */
long vt_uft_dat_trim(const char *path);

/* ---- Folding the Python tracer's stages (lib/uftrace_fold.c; the stage
 * file itself: lib/pystage.h) ---- */

/* Fold the stage of the .dat file @dat_path into it (a writer that is
 * gone): cut the .dat after its last valid record, write the stage's newer
 * records right after it, remove the stage.  Returns the number of records
 * the .dat then holds, or -1 with a message (the .dat keeps its records
 * and the stage stays when it is corrupt).  No stage: a plain trim. */
long vt_pystage_fold(const char *dat_path);
/* What vt_uft_finalize() did. */
struct vt_uft_fin_stats {
	unsigned folded;	/* stages folded */
	unsigned finished;	/* directories finished for uftrace */
	unsigned unfinished;	/* clock=tsc directories left raw: no frequency */
	char no_hz[512];	/* why, for the first of them */
};
/* Finalize what gone writers left in @dir and its fork-<PID>
 * subdirectories (with @tree: every directory under @dir, symbolic links
 * not followed: a tree `vmtrace unpack` rebuilt): every stage folded into
 * its .dat, then each clock=tsc uftrace directory finished at @tsc_hz
 * (0: its own tsc.hz; vt_uft_finish_ns).  The traced processes must be
 * gone.  0, or -1 with the first failure's message (the rest is still
 * done); @st says what was done. */
int vt_uft_finalize(const char *dir, int tree, uint64_t tsc_hz, struct vt_uft_fin_stats *st);

#endif
