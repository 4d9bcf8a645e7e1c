/*
 * filekind.h - what a file is, from its first bytes: the one place that
 * tells a user who handed a command the wrong kind of file what it is
 * (a merged Perfetto trace given to `vmtrace report`, ...).  libc only.
 */
#ifndef VT_FILEKIND_H
#define VT_FILEKIND_H

#include <stddef.h>
#include <stdint.h>

/* Bytes vt_file_kind() looks at. */
#define VT_FILE_KIND_HEAD	16

/*
 * vt_file_kind - name the kind of a file from its first @n bytes @head
 * (n may be less than VT_FILE_KIND_HEAD for a short file).
 * Returns a static description ("a Perfetto trace (vmtrace merge output)",
 * "a trace.dat file", "an empty file", ... or "not a format vmtrace knows").
 */
const char *vt_file_kind(const uint8_t *head, size_t n);

/* 1 when @head starts with trace.dat's magic (0x17 0x08 'D' "tracing"). */
int vt_file_is_tracedat(const uint8_t *head, size_t n);

#endif
