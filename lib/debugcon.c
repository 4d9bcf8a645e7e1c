/*
 * debugcon.c - parser of the framed debugcon stream (lib/debugcon.h) a
 * freestanding guest writes; for host tools (`vmtrace debugcon`).  Reads
 * an in-memory capture; no allocation, no I/O.
 */
#include <string.h>
#include "debugcon.h"
#include "err.h"

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Offset of the next frame magic at or after @off, or @len. */
static size_t find_magic(const uint8_t *buf, size_t len, size_t off)
{
	for (; off + 4 <= len; off++)
		if (get_le32(buf + off) == VT_DC_MAGIC)
			return off;
	return len;
}

int vt_dc_parse(const char *name, const uint8_t *buf, size_t len, vt_dc_frame_fn fn,
		void *arg)
{
	size_t off = find_magic(buf, len, 0);

	while (off + VT_DC_HDR_SIZE <= len) {
		const uint8_t *h = buf + off;
		unsigned type = (unsigned)h[4] | (unsigned)h[5] << 8;
		unsigned version = (unsigned)h[6] | (unsigned)h[7] << 8;
		uint32_t plen = get_le32(h + 8), sum = get_le32(h + 12);
		int rc;

		if (get_le32(h) != VT_DC_MAGIC) {
			/* text the guest printed between frames */
			off = find_magic(buf, len, off + 1);
			continue;
		}
		if (version != VT_DC_VERSION)
			return vt_err_set("%s: offset %zu: frame version %u, want %d", name, off,
					  version, VT_DC_VERSION);
		if (plen > VT_DC_MAX_PAYLOAD)
			return vt_err_set("%s: offset %zu: frame length %u too large", name, off,
					  plen);
		if (plen > len - off - VT_DC_HDR_SIZE)
			return 0;	/* truncated last frame: the guest died */
		if (vt_dc_sum(h + VT_DC_HDR_SIZE, plen) != sum)
			return vt_err_set("%s: offset %zu: frame checksum mismatch", name, off);
		rc = fn(arg, type, h + VT_DC_HDR_SIZE, plen);
		if (rc)
			return rc;
		if (type == VT_DC_END)
			return 1;
		off += VT_DC_HDR_SIZE + plen;
	}
	return 0;
}
