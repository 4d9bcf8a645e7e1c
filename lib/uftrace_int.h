/*
 * uftrace_int.h - what the files of the uftrace module share and no other
 * module includes: size limits, the info header's layout and the small
 * path, text-buffer and line helpers (lib/uftrace_util.c).  The contract
 * for everyone else is lib/uftrace.h.
 *
 * The module's files, each for one job:
 *   uftrace_util.c     these helpers
 *   uftrace_write.c    writing a data directory (guest runtimes)
 *   uftrace_read.c     opening one: info, task.txt, maps, symbols
 *   uftrace_stream.c   reading a task's records, then its Python stage
 *   uftrace_convert.c  copying a clock=tsc directory to clock=ns
 *   uftrace_fold.c     folding a Python tracer's stage into its .dat
 *   uftrace-append.c   incremental .sym appends, .dat trim
 * The module uses lib/pystage.c (the stage file's reader), never the other
 * way round.
 */
#ifndef VT_UFTRACE_INT_H
#define VT_UFTRACE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "compiler.h"
#include "uftrace.h"

#define VT_UFT_ENDIAN_LITTLE	1
#define VT_UFT_ELFCLASS64	2

/* Size limits of untrusted input (the reader's and the converter's). */
#define TASK_MAX_BYTES		(64ULL << 20)
#define MAX_TASKS		(1 << 20)
#define FILE_MODE		0644
#define COPY_BUF_BYTES		(64 * 1024)

struct vt_uft_file_header {
	char magic[8];
	uint32_t version;
	uint16_t header_size;
	uint8_t endian;
	uint8_t elf_class;
	uint64_t feat_mask;
	uint64_t info_mask;
	uint16_t max_stack;
	uint16_t unused1;
	uint32_t unused2;
};
VT_STATIC_ASSERT(sizeof(struct vt_uft_file_header) == VT_UFT_HEADER_SIZE,
		 "uftrace info header is 40 bytes");

/* DIR/NAME into @buf of @len bytes: 0, or -1 with a message if too long. */
int uft_path_join(char *buf, size_t len, const char *dir, const char *name);
/* The part of @path after its last '/' (a pointer into @path). */
const char *uft_base_name(const char *path);
/* Write all of @buf to @fd: 0, or -1 with a message naming @path. */
int uft_write_all(int fd, const void *buf, size_t len, const char *path);

/* A growable text buffer for files written in one go; start it zeroed. */
struct uft_sbuf {
	char *buf;
	size_t len, cap;
	int oom;
};

/* Append formatted text / @len bytes; running out of memory is kept for
 * uft_sb_write() to report. */
void uft_sb_printf(struct uft_sbuf *sb, const char *fmt, ...) VT_PRINTF(2, 3);
void uft_sb_put(struct uft_sbuf *sb, const void *data, size_t len);
/* Replace @path atomically with the buffer's text and free the buffer:
 * 0, or -1 with a message. */
int uft_sb_write(struct uft_sbuf *sb, const char *path);

/*
 * Line iterator over a buffer from vt_file_read_all(): returns the next
 * line NUL-terminated in place (without '\n'), NULL at the end.  *bad is
 * set if the line holds a NUL byte.
 */
struct uft_lines {
	char *p, *end;
	char *start;		/* buffer start, for offsets */
	int lineno;
};

char *uft_next_line(struct uft_lines *l, int *bad);
/* Read all of @path (at most @max bytes) and set @l over it: returns the
 * buffer (the caller frees it), or NULL with the error set. */
char *uft_lines_read(struct uft_lines *l, const char *path, uint64_t max);

/* Parse a decimal int in [0, INT_MAX] at @s; -1 if malformed. */
int uft_parse_int(const char *s, char **end);
/* Parse "timestamp=S.N" at @s into *@ts (ns), *@end after it; 0, or -1 if
 * malformed. */
int uft_parse_ts(const char *s, uint64_t *ts, char **end);

/* 1 if @n names a file that makes up a trace (removed by
 * vt_uft_dir_create(force), copied by vt_uft_convert_ns()), else 0. */
int uft_is_trace_file(const char *n);
/* 1 if @sid is a session id of VT_UFT_SID_LEN letters/digits, else 0. */
int uft_sid_ok(const char *sid);
/* The path DIR/sid-<SID>.map into @buf: 0, or -1 with a message (bad sid,
 * too long). */
int uft_map_path(char *buf, size_t len, const char *dir, const char *sid);
/* The tids of the non-empty [0-9]+.dat files of @dir, sorted, in a
 * malloc'ed *@out: their number, or -1 with a message. */
int uft_list_dat_tids(const char *dir, int **out);
/* The task file holding @dir's raw stamps: task.tsc of a finished
 * directory (lib/uftrace.h vt_uft_finish_ns), else task.txt.  0, or -1 if
 * the path is too long. */
int uft_raw_task_path(char *buf, size_t len, const char *dir);

#endif
