/*
 * debugcon.h - the framed byte stream a freestanding guest (the test
 * unikernel, any kernel using libvmtrace-mcount-free.a) writes to QEMU's
 * isa-debugcon port to hand its trace to the host: the format, a
 * freestanding emitter (header-only, no libc), and the hosted parser
 * (lib/debugcon.c).  Format: docs/format/unikernel.md.
 *
 * The stream is frames, with any text before and between them (ignored):
 *   off size field
 *     0    4 magic    "VTDC" (0x43445456 little-endian)
 *     4    2 type     enum vt_dc_type
 *     6    2 version  1
 *     8    4 len      payload bytes (<= VT_DC_MAX_PAYLOAD)
 *    12    4 sum      FNV-1a 32 of the payload
 *    16  len payload
 * A VT_DC_END frame ends the stream.
 */
#ifndef VT_DEBUGCON_H
#define VT_DEBUGCON_H

#include <stddef.h>
#include <stdint.h>
#include "compiler.h"

#define VT_DC_MAGIC		0x43445456u	/* "VTDC" */
#define VT_DC_VERSION		1
#define VT_DC_HDR_SIZE		16
#define VT_DC_MAX_PAYLOAD	(64u << 20)
/* isa-debugcon's default port */
#define VT_DC_PORT		0xe9
#define VT_DC_FNV_BASIS		2166136261u
#define VT_DC_FNV_PRIME		16777619u

enum vt_dc_type {
	VT_DC_HELLO = 1,	/* text, "key=value\n" lines */
	VT_DC_RECORDS = 2,	/* uftrace records (lib/uftrace.h), 16 bytes each */
	VT_DC_MARKERS = 3,	/* marker records (lib/marker.h), 48 bytes each */
	VT_DC_END = 4,		/* empty: the stream is complete */
};

/* ---- freestanding emitter (guest, ring 0) ---- */

static inline VT_NOTRACE uint32_t vt_dc_sum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t h = VT_DC_FNV_BASIS;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * VT_DC_FNV_PRIME;
	return h;
}

static inline VT_NOTRACE void vt_dc_out(uint16_t port, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		__asm__ __volatile__("outb %0, %1" : : "a"(p[i]), "Nd"(port) : "memory");
}

/* Fill the header of a frame of @type carrying @len bytes of @data (for
 * guests that send frames some other way than through a port). */
static inline VT_NOTRACE void vt_dc_header(uint8_t hdr[VT_DC_HDR_SIZE], unsigned type,
					   const void *data, size_t len)
{
	uint32_t sum = vt_dc_sum(data, len);

	for (int i = 0; i < 4; i++) {
		hdr[i] = (uint8_t)(VT_DC_MAGIC >> (8 * i));
		hdr[8 + i] = (uint8_t)((uint32_t)len >> (8 * i));
		hdr[12 + i] = (uint8_t)(sum >> (8 * i));
	}
	hdr[4] = (uint8_t)type;
	hdr[5] = (uint8_t)(type >> 8);
	hdr[6] = VT_DC_VERSION;
	hdr[7] = 0;
}

/* Write one frame of @type with @len bytes of @data to @port. */
static inline VT_NOTRACE void vt_dc_frame(uint16_t port, unsigned type, const void *data,
					  size_t len)
{
	uint8_t hdr[VT_DC_HDR_SIZE];

	vt_dc_header(hdr, type, data, len);
	vt_dc_out(port, hdr, sizeof(hdr));
	vt_dc_out(port, data, len);
}

/* ---- hosted parser (tools) ---- */

/* Called for each valid frame; a non-zero return stops the walk. */
typedef int (*vt_dc_frame_fn)(void *arg, unsigned type, const uint8_t *payload, size_t len);

/*
 * Walk the frames of the captured stream @buf (untrusted; @name names it in
 * messages).  Bytes outside frames are skipped.  Returns 1 when a
 * VT_DC_END frame was seen, 0 when the stream ended without one (the guest
 * died: every complete frame was delivered), @fn's non-zero return, or -1
 * with a message (bad version, length or checksum: the offset is named).
 */
int vt_dc_parse(const char *name, const uint8_t *buf, size_t len, vt_dc_frame_fn fn,
		void *arg);

#endif
