/*
 * meta.h - vmtrace.meta, the metadata file every vmtrace output directory
 * carries: which clock its timestamps are in, the TSC frequency and how it
 * was found, the domain (host/guest), KVM facts.  Keys are documented in
 * docs/format/meta.md.
 *
 * Format: UTF-8 text, one "key=value" per line, first line the header
 * "# vmtrace-meta 1".  Keys are [A-Za-z0-9_.-]+, at most 127 bytes; values
 * are any text up to 65535 bytes (longer ones are cut, with a warning),
 * written on one line with backslash, newline and carriage return escaped
 * (\\, \n, \r).  Lines starting with '#' are comments.
 * A key may appear once; the order of writing is kept.  Files are written
 * atomically (temporary file + rename).
 * The key names are lib/meta_keys.h's (VT_MK_*), the one place they are spelt.
 */
#ifndef VT_META_H
#define VT_META_H

#include <stdint.h>
#include <stdio.h>
#include "compiler.h"
#include "meta_keys.h"

#define VT_META_FILE	"vmtrace.meta"
#define VT_META_KEY_MAX	128
#define VT_META_VAL_MAX	65536

struct vt_meta;

/* One vCPU thread of the KVM facts (lib/meta_kvm.c). */
#define VT_META_COMM_MAX	32
struct vt_meta_vthread {
	int32_t tid, pid;	/* the host thread and its process (0: unknown) */
	int32_t vcpu;		/* the vCPU it runs */
	char comm[VT_META_COMM_MAX];
};
/* Write the list of @n vCPU threads @t (kvm.vcpu_threads, kvm.threadN.*);
 * 0, or -1 with the message set. */
int vt_meta_set_vthreads(struct vt_meta *m, const struct vt_meta_vthread *t, int n);
/* Read the vCPU-thread list into @t (at most @max; an entry whose tid or
 * vcpu is missing or out of range is skipped): how many (0: no list). */
int vt_meta_get_vthreads(const struct vt_meta *m, struct vt_meta_vthread *t, int max);

/* A new, empty metadata set; NULL on allocation failure. */
struct vt_meta *vt_meta_new(void);
void vt_meta_free(struct vt_meta *m);

/* Set @key to a formatted value, replacing an earlier one.  -1 on a bad
 * key/value (message in vt_err_msg()). */
int vt_meta_set(struct vt_meta *m, const char *key, const char *fmt, ...) VT_PRINTF(3, 4);
int vt_meta_set_u64(struct vt_meta *m, const char *key, uint64_t v);
/* Remove @key if present. */
void vt_meta_del(struct vt_meta *m, const char *key);

/* The value of @key, or NULL. */
const char *vt_meta_get(const struct vt_meta *m, const char *key);
/* Parse @key as an unsigned/signed integer (decimal or 0x hex): 0 on
 * success, -1 if missing or malformed. */
int vt_meta_get_u64(const struct vt_meta *m, const char *key, uint64_t *out);
int vt_meta_get_i64(const struct vt_meta *m, const char *key, int64_t *out);
int vt_meta_get_double(const struct vt_meta *m, const char *key, double *out);

/* Number of entries, and the i-th key/value in file order. */
int vt_meta_count(const struct vt_meta *m);
const char *vt_meta_key(const struct vt_meta *m, int i);
const char *vt_meta_val(const struct vt_meta *m, int i);
/* Print "@key=@val" and a newline to @fp with @val escaped as the file
 * holds it (a newline as \n): one line a key, whatever the value. */
void vt_meta_print_line(FILE *fp, const char *key, const char *val);

/* Write @m to @path atomically (mode 0644, no symlink followed for the
 * final name).  -1 on failure with the message naming the file. */
int vt_meta_write(const struct vt_meta *m, const char *path);
/* Write to DIR/vmtrace.meta. */
int vt_meta_write_dir(const struct vt_meta *m, const char *dir);

/* Read a metadata file (untrusted input: every line is checked).  NULL on
 * failure with a message naming the file and line. */
struct vt_meta *vt_meta_read(const char *path);
/* Read DIR/vmtrace.meta. */
struct vt_meta *vt_meta_read_dir(const char *dir);

#endif
