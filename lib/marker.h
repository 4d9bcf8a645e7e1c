/*
 * marker.h - guest<->host sync markers: the record format (markers.dat),
 * its writer and reader (tools, hosted), and an emitter that is safe in a
 * freestanding guest (no libc, no allocation: header-only inline code).
 * Format and matching rules: docs/format/markers.md.
 *
 * A marker is an action the host records (a PIO write to VT_MARKER_PORT,
 * an MMIO write, a hypercall, a byte written to a chardev such as
 * isa-debugcon) bracketed by two ordered guest TSC reads.  The host records
 * the action in its own TSC; the pair bounds the guest<->host clock map:
 *   tsc_guest_before <= map(tsc_host of the action) <= tsc_guest_after.
 *
 * markers.dat: a sequence of 48-byte little-endian records, no header:
 *   off size field
 *     0    4 magic            "VTMK" (0x4b4d5456)
 *     4    2 version          1
 *     6    1 kind             enum vt_marker_kind
 *     7    1 size             bytes written by the action (1, 2 or 4)
 *     8    8 addr             PIO port, MMIO physical address, hypercall nr
 *    16    4 value            the value written (VT_MARKER_VALUE(seq) for PIO)
 *    20    4 cpu              guest CPU the action ran on, VT_MARKER_CPU_NONE
 *                             if unknown or if it moved between the reads
 *    24    8 seq              sequence number, from 0, +1 per marker
 *    32    8 tsc_guest_before TSC read (lfence; rdtsc) just before the action
 *    40    8 tsc_guest_after  TSC read (lfence; rdtsc) just after the action
 */
#ifndef VT_MARKER_H
#define VT_MARKER_H

#include <stdint.h>
#include <stddef.h>
#include "compiler.h"
#include "tsc.h"

#define VT_MARKER_FILE		"markers.dat"
#define VT_MARKER_MAGIC		0x4b4d5456u	/* "VTMK" little-endian */
#define VT_MARKER_VERSION	1
#define VT_MARKER_REC_SIZE	48
#define VT_MARKER_CPU_NONE	0xffffffffu

/* Byte offsets of the record's fields (the table above). */
enum vt_marker_off {
	VT_MARKER_OFF_MAGIC = 0,
	VT_MARKER_OFF_VERSION = 4,
	VT_MARKER_OFF_KIND = 6,
	VT_MARKER_OFF_SIZE = 7,
	VT_MARKER_OFF_ADDR = 8,
	VT_MARKER_OFF_VALUE = 16,
	VT_MARKER_OFF_CPU = 20,
	VT_MARKER_OFF_SEQ = 24,
	VT_MARKER_OFF_TSC_BEFORE = 32,
	VT_MARKER_OFF_TSC_AFTER = 40,
};

/* The marker I/O port: no device decodes it on QEMU's pc and q35 machines,
 * so a write to it exits to KVM (kvm:kvm_pio) and is ignored by QEMU. */
#define VT_MARKER_PORT		0x5f0
/* isa-debugcon's default port: the TCG marker (a chardev write on the host). */
#define VT_MARKER_DEBUGCON_PORT	0xe9

/* Value written by a 32-bit PIO/MMIO marker: a tag in the top byte, the low
 * 24 bits of seq below, so the host can match by value and ignore writes of
 * anything else to the same port. */
#define VT_MARKER_TAG		0x56u		/* 'V' */
#define VT_MARKER_TAG_SHIFT	24
#define VT_MARKER_SEQ_MASK	0x00ffffffu
#define VT_MARKER_VALUE(seq)	((VT_MARKER_TAG << VT_MARKER_TAG_SHIFT) | \
				 ((uint32_t)(seq) & VT_MARKER_SEQ_MASK))
#define VT_MARKER_VALUE_OK(v)	(((uint32_t)(v) >> VT_MARKER_TAG_SHIFT) == VT_MARKER_TAG)
#define VT_MARKER_VALUE_SEQ(v)	((uint32_t)(v) & VT_MARKER_SEQ_MASK)
/* Byte written by a chardev (debugcon) marker: the low 8 bits of seq. */
#define VT_MARKER_BYTE(seq)	((uint8_t)(seq))

enum vt_marker_kind {
	VT_MARKER_PIO = 1,	/* outl VT_MARKER_VALUE(seq) to addr (a port) */
	VT_MARKER_MMIO = 2,	/* 32-bit store of VT_MARKER_VALUE(seq) to addr */
	VT_MARKER_HYPERCALL = 3,/* vmcall nr=addr, payload VT_MARKER_VALUE(seq) */
	VT_MARKER_CHARDEV = 4,	/* outb VT_MARKER_BYTE(seq) to a debugcon port */
};

struct vt_marker {
	uint32_t kind;			/* enum vt_marker_kind */
	uint32_t size;			/* bytes written: 1, 2, 4 */
	uint64_t addr;			/* port / MMIO address / hypercall nr */
	uint32_t value;			/* value written */
	uint32_t cpu;			/* guest CPU or VT_MARKER_CPU_NONE */
	uint64_t seq;
	uint64_t tsc_guest_before;
	uint64_t tsc_guest_after;
};

/* ---- freestanding emitter (x86 guest code, kernel or ring 3 with iopl) ---- */

static inline VT_NOTRACE void vt_marker_outl(uint16_t port, uint32_t v)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline VT_NOTRACE void vt_marker_outb(uint16_t port, uint8_t v)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

/* Everything of @rec but the two TSC reads (cpu left unknown). */
static inline VT_NOTRACE void vt_marker_fill(struct vt_marker *rec, uint32_t kind, uint32_t size,
					     uint64_t addr, uint32_t value, uint64_t seq)
{
	rec->kind = kind;
	rec->size = size;
	rec->addr = addr;
	rec->value = value;
	rec->cpu = VT_MARKER_CPU_NONE;
	rec->seq = seq;
}

/* Emit PIO marker @seq on @port and fill @rec (cpu left unknown).  Needs I/O
 * privilege (ring 0, or ioperm/iopl in Linux user space). */
static inline VT_NOTRACE void vt_marker_emit_pio(struct vt_marker *rec, uint16_t port,
						 uint64_t seq)
{
	uint32_t v = VT_MARKER_VALUE(seq);

	vt_marker_fill(rec, VT_MARKER_PIO, sizeof(v), port, v, seq);
	rec->tsc_guest_before = vt_rdtsc_ordered();
	vt_marker_outl(port, v);
	rec->tsc_guest_after = vt_rdtsc_ordered();
}

/* Emit chardev marker @seq: one byte to a debugcon @port (TCG: the host sees
 * QEMU's vCPU thread write it to the chardev). */
static inline VT_NOTRACE void vt_marker_emit_chardev(struct vt_marker *rec, uint16_t port,
						     uint64_t seq)
{
	uint8_t b = VT_MARKER_BYTE(seq);

	vt_marker_fill(rec, VT_MARKER_CHARDEV, sizeof(b), port, b, seq);
	rec->tsc_guest_before = vt_rdtsc_ordered();
	vt_marker_outb(port, b);
	rec->tsc_guest_after = vt_rdtsc_ordered();
}

static inline VT_NOTRACE void vt_marker_put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline VT_NOTRACE uint64_t vt_marker_get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* Encode @rec into the 48-byte on-disk record @buf (freestanding-safe). */
static inline VT_NOTRACE void vt_marker_encode(const struct vt_marker *rec,
					       uint8_t buf[VT_MARKER_REC_SIZE])
{
	vt_marker_put_le(buf + VT_MARKER_OFF_MAGIC, VT_MARKER_MAGIC, sizeof(uint32_t));
	vt_marker_put_le(buf + VT_MARKER_OFF_VERSION, VT_MARKER_VERSION, sizeof(uint16_t));
	buf[VT_MARKER_OFF_KIND] = (uint8_t)rec->kind;
	buf[VT_MARKER_OFF_SIZE] = (uint8_t)rec->size;
	vt_marker_put_le(buf + VT_MARKER_OFF_ADDR, rec->addr, sizeof(uint64_t));
	vt_marker_put_le(buf + VT_MARKER_OFF_VALUE, rec->value, sizeof(uint32_t));
	vt_marker_put_le(buf + VT_MARKER_OFF_CPU, rec->cpu, sizeof(uint32_t));
	vt_marker_put_le(buf + VT_MARKER_OFF_SEQ, rec->seq, sizeof(uint64_t));
	vt_marker_put_le(buf + VT_MARKER_OFF_TSC_BEFORE, rec->tsc_guest_before, sizeof(uint64_t));
	vt_marker_put_le(buf + VT_MARKER_OFF_TSC_AFTER, rec->tsc_guest_after, sizeof(uint64_t));
}

/* ---- hosted (tools): files ---- */

/* Decode one record (untrusted): 0 if valid, -1 with a message (bad magic,
 * version, kind, size, or after < before). */
int vt_marker_decode(const uint8_t buf[VT_MARKER_REC_SIZE], struct vt_marker *rec);

struct vt_marker_writer;
/* Open DIR/markers.dat for appending (created 0644).  NULL on failure. */
struct vt_marker_writer *vt_marker_writer_open(const char *dir);
/* Append one record (written through at once: a crash loses nothing
 * already added).  -1 on failure (message names the file). */
int vt_marker_writer_add(struct vt_marker_writer *w, const struct vt_marker *rec);
/* fsync and close; -1 on failure.  Frees @w either way. */
int vt_marker_writer_close(struct vt_marker_writer *w);

/* Upper bound on the records a reader accepts from one file. */
#define VT_MARKER_MAX_RECS	(1u << 22)

/* Read @path (untrusted): *out gets a malloc'ed array of the valid records
 * in file order, *n their count, *n_bad the records rejected (bad magic,
 * version, kind, order; a truncated tail counts as one).  -1 on I/O failure
 * or when the file holds more than VT_MARKER_MAX_RECS records. */
int vt_marker_read(const char *path, struct vt_marker **out, size_t *n, size_t *n_bad);

#endif
