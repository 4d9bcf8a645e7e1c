/*
 * stream.h - the vmtrace stream: framed chunks of a directory's files that
 * a guest sends over a byte channel (a virtio-serial port) while it traces,
 * so the host can rebuild the directory without access to the guest's
 * files.  One owner for the format: the writer (`vmtrace stream`, guest)
 * and the reader + unpacker (`vmtrace unpack`, host) both live in
 * lib/stream.c.  Format: docs/format/stream.md.
 *
 * A stream is frames back to back, the first a HELLO, the last an END.
 * Every integer is little-endian.  Frame:
 *   off size field
 *     0    4 magic     "VTSF" (0x46535456)
 *     4    2 version   1
 *     6    2 type      enum vt_stream_type
 *     8    2 name_len  bytes of the name (0 for HELLO and END)
 *    10    2 flags     VT_STREAM_F_* (others must be 0)
 *    12    4 len       payload bytes (<= VT_STREAM_MAX_PAYLOAD)
 *    16    8 offset    file offset of the payload (DATA), else 0
 *    24    8 tsc_guest the sender's TSC when it made the frame
 *    32    4 data_crc  CRC-32 (IEEE 802.3) of the payload
 *    36    4 hdr_crc   CRC-32 of bytes 0..35, continued over the name
 *    40  name_len name (relative path, '/'-separated, no NUL)
 *     .  len payload
 *
 * The stream is untrusted input on the host: every frame is checked (magic,
 * version, type, flags, both CRCs, name rules, offset + len bounded) and
 * the unpacker stops at the first bad or truncated frame, keeping what the
 * frames before it wrote.
 */
#ifndef VT_STREAM_H
#define VT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define VT_STREAM_MAGIC		0x46535456u	/* "VTSF" little-endian */
#define VT_STREAM_VERSION	1
#define VT_STREAM_HDR_SIZE	40
#define VT_STREAM_NAME_MAX	255
#define VT_STREAM_MAX_PAYLOAD	(1u << 20)
/* Largest file a stream may build (offset + len of a DATA frame). */
#define VT_STREAM_MAX_FILE	(1ull << 34)
/* Most distinct files one unpack creates. */
#define VT_STREAM_MAX_FILES	65536
/* Most name components (directory depth + 1). */
#define VT_STREAM_MAX_DEPTH	16
#define VT_STREAM_FRAME_MAX	(VT_STREAM_HDR_SIZE + VT_STREAM_NAME_MAX + VT_STREAM_MAX_PAYLOAD)

/* Byte offsets of the header fields (the table above). */
enum vt_stream_off {
	VT_STREAM_OFF_MAGIC = 0,
	VT_STREAM_OFF_VERSION = 4,
	VT_STREAM_OFF_TYPE = 6,
	VT_STREAM_OFF_NAME_LEN = 8,
	VT_STREAM_OFF_FLAGS = 10,
	VT_STREAM_OFF_LEN = 12,
	VT_STREAM_OFF_OFFSET = 16,
	VT_STREAM_OFF_TSC = 24,
	VT_STREAM_OFF_DATA_CRC = 32,
	VT_STREAM_OFF_HDR_CRC = 36,
};

enum vt_stream_type {
	VT_STREAM_HELLO = 1,	/* payload: "key=value\n" text about the sender */
	VT_STREAM_DATA = 2,	/* payload: bytes of file `name` at `offset` */
	VT_STREAM_UNLINK = 3,	/* the sender's file `name` is gone: remove it */
	VT_STREAM_END = 4,	/* the stream is complete; payload: text summary */
};

/* DATA: cut the file to zero bytes before writing (the sender found the
 * bytes it sent earlier changed: the file is sent again whole). */
#define VT_STREAM_F_RESET	1u
#define VT_STREAM_F_ALL		VT_STREAM_F_RESET

/* One frame, decoded or to encode.  @data points into the caller's
 * buffer. */
struct vt_stream_frame {
	unsigned type;
	unsigned flags;
	char name[VT_STREAM_NAME_MAX + 1];	/* NUL-terminated */
	uint64_t offset;
	uint64_t tsc_guest;
	uint32_t len;
	const uint8_t *data;
};

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of @len bytes at @buf,
 * continuing from @crc (0 to start). */
uint32_t vt_stream_crc32(uint32_t crc, const void *buf, size_t len);

/* 1 if @name is a valid stream file name: 1..VT_STREAM_NAME_MAX bytes,
 * relative, components separated by single '/', none empty, "." or "..",
 * at most VT_STREAM_MAX_DEPTH components, no NUL or control characters. */
int vt_stream_name_ok(const char *name, size_t len);

/* ---- writer (the sender) ---- */

/* Write frame @f (type, flags, name, offset, len, data; tsc_guest 0 = read
 * the TSC now) to @fd, retrying short writes.  0, or -1 with the error set
 * (naming @what, the output). */
int vt_stream_write(int fd, const char *what, const struct vt_stream_frame *f);

/* ---- reader (host tools, untrusted input) ---- */

/*
 * Decode the frame at the start of @buf (@len bytes available).  Returns
 * the frame's size (> 0) and fills @f (f->data points into @buf), 0 when
 * @buf ends inside the frame (read more, or the stream is truncated), -1
 * with a message (no stream offset: the caller adds it) when the frame is
 * corrupt.
 */
long vt_stream_decode(const uint8_t *buf, size_t len, struct vt_stream_frame *f);

/* Called for each valid frame with its offset in the stream; a non-zero
 * return stops the walk with that value. */
typedef int (*vt_stream_frame_fn)(void *arg, uint64_t pos, const struct vt_stream_frame *f);

/*
 * Read the stream file @path frame by frame (bounded memory) and call @fn
 * for each valid one.  Returns 1 after an END frame, 0 when the stream
 * ends cleanly between frames without an END (the sender was cut short),
 * @fn's non-zero return, or -1 with a message naming @path, the stream
 * offset and the frame's file (truncated frame, corrupt frame, a first
 * frame that is not HELLO, I/O error).  Frames after END are ignored.
 */
int vt_stream_walk(const char *path, vt_stream_frame_fn fn, void *arg);

/* Counts of an unpack. */
struct vt_stream_stats {
	uint64_t frames;
	uint64_t bytes;		/* payload bytes written */
	uint64_t files;		/* distinct files written */
	uint64_t unlinks;
	uint64_t end_pos;	/* stream offset after the last good frame */
	int ended;		/* an END frame was seen */
};

/*
 * Rebuild in directory @dir (created if missing; must not hold a symlink
 * on the way) the files the stream @path carries.  Every DATA frame is
 * written at its offset (directories made as needed, no symlink followed,
 * files mode 0644), UNLINK removes a file.  Returns 0 after an END frame,
 * 1 when the stream stopped early (cut short, truncated or corrupt frame:
 * everything before it is kept; message in vt_err_msg() names the stream,
 * offset and file), -1 on failure (cannot create @dir or write a file).
 * @st (may be NULL) receives the counts.
 */
int vt_stream_unpack(const char *path, const char *dir, struct vt_stream_stats *st);

#endif
