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

/*
 * In-band hypercall markers (docs/format/markers.md, "Hypercall markers"):
 * the host's kvm:kvm_hypercall event carries the guest's TSC readings in
 * the hypercall's registers, so the host trace alone proves the alignment.
 * KVM traces a hypercall before it checks the caller's privilege: from
 * guest user space the call returns -KVM_EPERM (-1000) and does nothing.
 * Marker i carries its own "before" reading and marker i-1's "after"
 * reading; a closing call (vt_marker_hc_close) carries the last "after".
 *
 * 64-bit ABI (long mode):  rax = VT_MARKER_HC_NR, rbx = TSC before,
 *   rcx = the previous marker's TSC after (0: none), rdx = seq,
 *   rsi = chain << 32 | guest CPU (VT_MARKER_CPU_NONE when unknown).  The
 *   chain tells apart emitters that interleave (a Linux guest's processes:
 *   their pid); the host pairs a call with the next one of its chain.
 * 32-bit ABI (KVM truncates every register to 32 bits):
 *   eax = VT_MARKER_HC_NR32 | (seq & 0x7fff), ebx/ecx = TSC before low/high,
 *   edx/esi = the previous marker's TSC after low/high; the closing call
 *   has eax = VT_MARKER_HC_CLOSE32.
 * The numbers are vmtrace's: KVM's own hypercalls are small (1..12 today).
 */
#define VT_MARKER_HC_NR		0x56540001u	/* "VT", 64-bit ABI */
#define VT_MARKER_HC_NR32	0x56548000u	/* "VT", 32-bit ABI; low 15 bits: seq */
#define VT_MARKER_HC_SEQ32_MASK	0x7fffu
#define VT_MARKER_HC_CLOSE32	0x56540002u	/* "VT", 32-bit closing call */
#define VT_MARKER_HC_CLOSE_SEQ	(~0ull)		/* seq of the closing call (64-bit) */

/* The emitter's state: the instruction to use and the chain of readings. */
struct vt_marker_hc {
	int amd;		/* vmmcall (AMD, Hygon) rather than vmcall (Intel) */
	uint32_t chain;		/* this emitter's chain id (64-bit ABI), 0 default */
	uint64_t seq;		/* the next marker's sequence number */
	uint64_t prev_after;	/* the last marker's "after" reading, 0: none */
};

static inline VT_NOTRACE void vt_marker_cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ __volatile__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			     : "a"(leaf), "c"(0));
}

/*
 * vt_marker_hc_init - prepare @st for hypercall markers starting at seq 0.
 * Returns 1 when the guest runs under KVM (CPUID leaf 0x40000000 says
 * "KVMKVMKVM"), 0 otherwise: then a hypercall would fault (#UD), so the
 * caller must not emit.  Chooses vmmcall or vmcall from the CPU vendor.
 */
static inline VT_NOTRACE int vt_marker_hc_init(struct vt_marker_hc *st)
{
	uint32_t r[4];

	st->seq = 0;
	st->prev_after = 0;
	st->chain = 0;
	vt_marker_cpuid(0, r);
	/* "AuthenticAMD" / "HygonGenuine": ebx starts "Auth" / "Hygo" */
	st->amd = r[1] == 0x68747541u || r[1] == 0x6f677948u;
	vt_marker_cpuid(1, r);
	if (!(r[2] & (1u << 31)))	/* no hypervisor bit */
		return 0;
	vt_marker_cpuid(0x40000000u, r);
	return r[1] == 0x4b4d564bu && r[2] == 0x564b4d56u && r[3] == 0x0000004du;
}

/* the seq bits the host sees: all of them (64-bit), 15 (32-bit) */
#if defined(__x86_64__)
#define VT_MARKER_HC_SEQ_MASK	(~0ull)
#else
#define VT_MARKER_HC_SEQ_MASK	((uint64_t)VT_MARKER_HC_SEQ32_MASK)
#endif

/* A register's width: 64 bits in long mode, 32 in protected mode
 * (unsigned long on both x86 ABIs). */
typedef unsigned long vt_marker_hc_reg;

static inline VT_NOTRACE void vt_marker_hc_call(int amd, vt_marker_hc_reg nr, vt_marker_hc_reg a0,
						vt_marker_hc_reg a1, vt_marker_hc_reg a2,
						vt_marker_hc_reg a3)
{
	vt_marker_hc_reg ret;

	if (amd)
		__asm__ __volatile__("vmmcall" : "=a"(ret)
				     : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3) : "memory");
	else
		__asm__ __volatile__("vmcall" : "=a"(ret)
				     : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3) : "memory");
	(void)ret;
}

#if defined(__x86_64__)
#define VT_MARKER_HC_ARGS(st, before, cpu) \
	VT_MARKER_HC_NR, (before), (st)->prev_after, (st)->seq, \
	((uint64_t)(st)->chain << 32 | (uint32_t)(cpu))
#else
#define VT_MARKER_HC_ARGS(st, before, cpu) \
	(st)->seq == VT_MARKER_HC_CLOSE_SEQ ? VT_MARKER_HC_CLOSE32 : \
	VT_MARKER_HC_NR32 | ((uint32_t)(st)->seq & VT_MARKER_HC_SEQ32_MASK), \
	(uint32_t)(before), (uint32_t)((before) >> 32), \
	(uint32_t)(st)->prev_after, (uint32_t)((st)->prev_after >> 32)
#endif

/*
 * vt_marker_emit_hypercall - emit the next hypercall marker of @st from
 * guest CPU @cpu (VT_MARKER_CPU_NONE if unknown) and fill @rec (seq from
 * @st, both readings), for a markers.dat too.  Only after
 * vt_marker_hc_init() returned 1.
 */
static inline VT_NOTRACE void vt_marker_emit_hypercall(struct vt_marker *rec,
						       struct vt_marker_hc *st, uint32_t cpu)
{
	uint64_t before;

	vt_marker_fill(rec, VT_MARKER_HYPERCALL, sizeof(uint32_t), VT_MARKER_HC_NR,
		       VT_MARKER_VALUE(st->seq & VT_MARKER_HC_SEQ_MASK), st->seq);
	rec->cpu = cpu;
	before = vt_rdtsc_ordered();
	vt_marker_hc_call(st->amd, VT_MARKER_HC_ARGS(st, before, cpu));
	st->prev_after = vt_rdtsc_ordered();
	rec->tsc_guest_before = before;
	rec->tsc_guest_after = st->prev_after;
	st->seq++;
}

/* Close the chain: one more call carrying the last marker's "after"
 * reading (64-bit: seq VT_MARKER_HC_CLOSE_SEQ; 32-bit: VT_MARKER_HC_CLOSE32). */
static inline VT_NOTRACE void vt_marker_hc_close(struct vt_marker_hc *st, uint32_t cpu)
{
	uint64_t before = vt_rdtsc_ordered();
	uint64_t seq = st->seq;

	st->seq = VT_MARKER_HC_CLOSE_SEQ;
	vt_marker_hc_call(st->amd, VT_MARKER_HC_ARGS(st, before, cpu));
	(void)cpu;	/* not carried by the 32-bit ABI */
	st->seq = seq;
	st->prev_after = 0;
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
