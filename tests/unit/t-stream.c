/*
 * t-stream.c - unit and fault tests of lib/stream.c (the guest->host trace
 * stream): CRC-32 check value, name rules, write -> unpack round trip with
 * RESET and UNLINK, and untrusted input: a stream cut at every byte of its
 * last frame, a flipped payload or header byte, names escaping the output
 * directory, a wrong first frame, a file used as a directory.  Each time
 * the unpack must keep what came before and name the stream, the offset
 * and the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "stream.h"

static char tmp[] = "/tmp/vt-t-stream.XXXXXX";

static void put_frame(int fd, unsigned type, unsigned flags, const char *name, uint64_t off,
		      const char *data)
{
	struct vt_stream_frame f = {
		.type = type, .flags = flags, .offset = off, .tsc_guest = 1,
		.data = (const uint8_t *)data, .len = data ? (uint32_t)strlen(data) : 0,
	};

	snprintf(f.name, sizeof(f.name), "%s", name ? name : "");
	CHECK(vt_stream_write(fd, "test", &f) == 0);
}

/* The file offset raw_frame() writes (0 unless a case sets it). */
static uint64_t raw_offset;

/* A DATA frame built by hand, so names and offsets the writer refuses can
 * be tried. */
static size_t raw_frame(uint8_t *buf, unsigned type, const char *name, const char *data)
{
	size_t nl = strlen(name), dl = strlen(data);
	uint32_t crc;

	memset(buf, 0, VT_STREAM_HDR_SIZE);
	memcpy(buf + VT_STREAM_OFF_OFFSET, &raw_offset, sizeof(raw_offset));
	memcpy(buf, "VTSF", 4);
	buf[VT_STREAM_OFF_VERSION] = VT_STREAM_VERSION;
	buf[VT_STREAM_OFF_TYPE] = (uint8_t)type;
	buf[VT_STREAM_OFF_NAME_LEN] = (uint8_t)nl;
	buf[VT_STREAM_OFF_LEN] = (uint8_t)dl;
	crc = vt_stream_crc32(0, data, dl);
	memcpy(buf + VT_STREAM_OFF_DATA_CRC, &crc, 4);
	memcpy(buf + VT_STREAM_HDR_SIZE, name, nl);
	crc = vt_stream_crc32(0, buf, VT_STREAM_OFF_HDR_CRC);
	crc = vt_stream_crc32(crc, buf + VT_STREAM_HDR_SIZE, nl);
	memcpy(buf + VT_STREAM_OFF_HDR_CRC, &crc, 4);
	memcpy(buf + VT_STREAM_HDR_SIZE + nl, data, dl);
	return VT_STREAM_HDR_SIZE + nl + dl;
}

/* Seal the header of the frame at @buf again after a field was changed. */
static void reseal(uint8_t *buf)
{
	size_t nl = buf[VT_STREAM_OFF_NAME_LEN] | buf[VT_STREAM_OFF_NAME_LEN + 1] << 8;
	uint32_t crc = vt_stream_crc32(0, buf, VT_STREAM_OFF_HDR_CRC);

	crc = vt_stream_crc32(crc, buf + VT_STREAM_HDR_SIZE, nl);
	memcpy(buf + VT_STREAM_OFF_HDR_CRC, &crc, 4);
}

/* The last message holds @want (printed when not). */
static int msg_has(const char *want)
{
	if (strstr(vt_err_msg(), want))
		return 1;
	fprintf(stderr, "message '%s' lacks '%s'\n", vt_err_msg(), want);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

static void spit(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	close(fd);
}

static int unpack(const char *stream, const char *sub, struct vt_stream_stats *st)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/%s", tmp, sub);
	return vt_stream_unpack(stream, dir, st);
}

static int exists(const char *sub)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", tmp, sub);
	return access(p, F_OK) == 0;
}

static void test_basics(void)
{
	CHECK(vt_stream_crc32(0, "123456789", 9) == 0xcbf43926u);
	CHECK(vt_stream_crc32(vt_stream_crc32(0, "1234", 4), "56789", 5) == 0xcbf43926u);
	CHECK(vt_stream_name_ok("a", 1));
	CHECK(vt_stream_name_ok("python/114.dat", 14));
	CHECK(vt_stream_name_ok("..a/b..", 7));
	CHECK(vt_stream_name_ok("...", 3));
	CHECK(!vt_stream_name_ok("", 0));
	CHECK(!vt_stream_name_ok("/etc/passwd", 11));
	CHECK(!vt_stream_name_ok("..", 2));
	CHECK(!vt_stream_name_ok(".", 1));
	CHECK(!vt_stream_name_ok("a/../../b", 9));
	CHECK(!vt_stream_name_ok("a/..", 4));
	CHECK(!vt_stream_name_ok("a//b", 4));
	CHECK(!vt_stream_name_ok("a/", 2));
	CHECK(!vt_stream_name_ok("a\nb", 3));
	CHECK(!vt_stream_name_ok("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", 33));
	CHECK(vt_stream_name_ok("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p", 31));
	CHECK(vt_stream_name_ok(".a", 2) && vt_stream_name_ok("a/.b", 4));
	CHECK(!vt_stream_name_ok("a\x7f", 2));
	{
		char longest[VT_STREAM_NAME_MAX + 1];

		memset(longest, 'a', sizeof(longest));
		CHECK(vt_stream_name_ok(longest, VT_STREAM_NAME_MAX));
		CHECK(!vt_stream_name_ok(longest, VT_STREAM_NAME_MAX + 1));
	}
}

/* What the writer refuses to send (nothing written), and an output that
 * fails in the header or in the payload: the message names the caller's
 * @what and the problem. */
static void test_writer(void)
{
	struct vt_stream_frame f = {
		.type = VT_STREAM_DATA, .tsc_guest = 1, .data = (const uint8_t *)"xyz", .len = 3,
	};
	struct rlimit old, rl;
	char path[256];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/w.bin", tmp);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	strcpy(f.name, "a");
	f.type = 0;
	CHECK(vt_stream_write(fd, "w", &f) < 0 && msg_has("w: bad frame type 0 / flags 0"));
	f.type = VT_STREAM_END + 1;
	CHECK(vt_stream_write(fd, "w", &f) < 0 && msg_has("w: bad frame type 5 / flags 0"));
	f.type = VT_STREAM_DATA;
	f.flags = 2;
	CHECK(vt_stream_write(fd, "w", &f) < 0 && msg_has("w: bad frame type 2 / flags 0x2"));
	f.flags = 0;
	strcpy(f.name, "../a");
	CHECK(vt_stream_write(fd, "w", &f) < 0 &&
	      msg_has("w: file name '../a' cannot be streamed"));
	strcpy(f.name, "a");
	f.len = VT_STREAM_MAX_PAYLOAD + 1;
	CHECK(vt_stream_write(fd, "w", &f) < 0 &&
	      msg_has("w: 'a': 1048577 bytes at offset 0 are past the stream's limits"));
	f.len = 3;
	f.offset = VT_STREAM_MAX_FILE - 2;
	CHECK(vt_stream_write(fd, "w", &f) < 0 &&
	      msg_has("w: 'a': 3 bytes at offset 17179869182 are past the stream's limits"));
	CHECK(lseek(fd, 0, SEEK_END) == 0);
	f.offset = VT_STREAM_MAX_FILE - 3;	/* ends at the limit: sent */
	CHECK(vt_stream_write(fd, "w", &f) == 0);
	CHECK(lseek(fd, 0, SEEK_END) == VT_STREAM_HDR_SIZE + 1 + 3);
	close(fd);
	f.offset = 0;
	/* no guest stamp given: the writer's own TSC */
	{
		uint8_t buf[64];
		struct vt_stream_frame g;

		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		f.tsc_guest = 0;
		CHECK(fd >= 0 && vt_stream_write(fd, "w", &f) == 0);
		CHECK(pread(fd, buf, sizeof(buf), 0) == VT_STREAM_HDR_SIZE + 1 + 3);
		CHECK(vt_stream_decode(buf, VT_STREAM_HDR_SIZE + 1 + 3, &g) > 0 && g.tsc_guest != 0);
		close(fd);
		f.tsc_guest = 1;
	}

	/* a full disk: the header cannot be written */
	fd = open("/dev/full", O_WRONLY);
	CHECK(fd >= 0 && vt_stream_write(fd, "full", &f) < 0 &&
	      msg_has("full: write: No space left on device"));
	if (fd >= 0)
		close(fd);
	/* a file size limit past the header: the payload cannot */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && getrlimit(RLIMIT_FSIZE, &old) == 0);
	rl = old;
	rl.rlim_cur = VT_STREAM_HDR_SIZE + 1;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	rc = vt_stream_write(fd, "limit", &f);	/* checked after: the log is a file */
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(rc < 0 && msg_has("limit: write: File too large"));
	CHECK(lseek(fd, 0, SEEK_END) == VT_STREAM_HDR_SIZE + 1);
	close(fd);
}

/* Frames the reader refuses, each with its message; through an unpack
 * the message also names the frame and the good frames before it. */
static void test_frames_refused(void)
{
	struct vt_stream_frame f;
	struct vt_stream_stats st;
	uint8_t buf[512];
	char path[256];
	size_t n;

	n = raw_frame(buf, VT_STREAM_HELLO, "", "x");
	buf[VT_STREAM_OFF_VERSION] = 2;
	reseal(buf);
	CHECK(vt_stream_decode(buf, n, &f) < 0 && msg_has("frame version 2, this vmtrace reads 1"));
	n = raw_frame(buf, 0, "", "x");
	CHECK(vt_stream_decode(buf, n, &f) < 0 && f.type == 0 && msg_has("unknown frame type 0"));
	n = raw_frame(buf, VT_STREAM_END + 1, "", "x");
	CHECK(vt_stream_decode(buf, n, &f) < 0 && f.type == 0 && msg_has("unknown frame type 5"));
	n = raw_frame(buf, VT_STREAM_HELLO, "", "x");
	buf[VT_STREAM_OFF_FLAGS] = VT_STREAM_F_RESET;
	reseal(buf);
	CHECK(vt_stream_decode(buf, n, &f) < 0 && msg_has("HELLO frame with unknown flags 0x1"));
	/* a payload of 2^20 + 1 bytes (only the header is there) */
	n = raw_frame(buf, VT_STREAM_DATA, "a", "x");
	buf[VT_STREAM_OFF_LEN + 2] = 0x10;
	reseal(buf);
	CHECK(vt_stream_decode(buf, VT_STREAM_HDR_SIZE + 1, &f) < 0 &&
	      msg_has("DATA frame of 1048577 bytes (limit 1048576)"));
	/* an UNLINK with a payload, unpacked after a HELLO of 41 bytes */
	n = raw_frame(buf, VT_STREAM_HELLO, "", "x");
	n += raw_frame(buf + n, VT_STREAM_UNLINK, "gone", "x");
	snprintf(path, sizeof(path), "%s/unlink.bin", tmp);
	spit(path, buf, n);
	CHECK(unpack(path, "unlinkpl", &st) == 1 && st.frames == 1);
	CHECK(msg_has("unlink.bin: offset 41: UNLINK frame with a payload (UNLINK frame of gone); 1 good frames before it"));
}

/* A stream of a few files; returns its size. */
static size_t make_stream(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct stat st;

	CHECK(fd >= 0);
	put_frame(fd, VT_STREAM_HELLO, 0, NULL, 0, "producer=t-stream\n");
	put_frame(fd, VT_STREAM_DATA, 0, "a.txt", 0, "hello ");
	put_frame(fd, VT_STREAM_DATA, 0, "dir/b.txt", 0, "old contents");
	put_frame(fd, VT_STREAM_DATA, 0, "a.txt", 6, "world\n");
	put_frame(fd, VT_STREAM_DATA, 0, "gone.txt", 0, "x");
	put_frame(fd, VT_STREAM_UNLINK, 0, "gone.txt", 0, NULL);
	put_frame(fd, VT_STREAM_DATA, VT_STREAM_F_RESET, "dir/b.txt", 0, "new");
	put_frame(fd, VT_STREAM_DATA, 0, "empty", 0, NULL);
	put_frame(fd, VT_STREAM_DATA, 0, "last.txt", 0, "the last frame before END");
	put_frame(fd, VT_STREAM_END, 0, NULL, 0, NULL);
	close(fd);
	CHECK(stat(path, &st) == 0);
	return (size_t)st.st_size;
}

static void test_roundtrip(const char *stream)
{
	struct vt_stream_stats st;
	struct vt_stream_frame f;
	uint8_t buf[64];

	CHECK(unpack(stream, "ok", &st) == 0);
	CHECK(st.ended && st.frames == 10 && st.unlinks == 1);
	snprintf((char *)buf, sizeof(buf), "%s/ok/a.txt", tmp);
	CHECK_STR(slurp((char *)buf, NULL), "hello world\n");
	snprintf((char *)buf, sizeof(buf), "%s/ok/dir/b.txt", tmp);
	CHECK_STR(slurp((char *)buf, NULL), "new");
	CHECK(!exists("ok/gone.txt"));
	CHECK(exists("ok/empty"));
	/* decode: an incomplete header or name asks for more */
	CHECK(vt_stream_decode((const uint8_t *)"VTSF", 4, &f) == 0);
	CHECK(vt_stream_decode((const uint8_t *)"VTSX", 4, &f) < 0);
}

static void test_truncated(const char *stream, size_t size)
{
	char cut[256], sub[64], *msg;
	size_t len, last_start;
	static char data[1 << 16];
	struct vt_stream_stats st;
	const char *src;
	int bad = 0;

	src = slurp(stream, &len);
	CHECK(src != NULL);
	memcpy(data, src, len);
	CHECK(len == size);
	/* the last DATA frame: "last.txt" */
	last_start = size - VT_STREAM_HDR_SIZE - VT_STREAM_HDR_SIZE - 8 - 25;
	snprintf(cut, sizeof(cut), "%s/cut.bin", tmp);
	for (size_t at = last_start + 1; at < size - VT_STREAM_HDR_SIZE; at++) {
		spit(cut, data, at);
		snprintf(sub, sizeof(sub), "cut%zu", at);
		if (unpack(cut, sub, &st) != 1) {
			bad++;
			continue;
		}
		msg = (char *)vt_err_msg();
		if (!strstr(msg, "cut.bin") || !strstr(msg, "truncated frame") ||
		    (at >= last_start + VT_STREAM_HDR_SIZE + 8 && !strstr(msg, "last.txt")))
			bad++;
		/* everything before the cut frame is there */
		snprintf(sub, sizeof(sub), "cut%zu/dir/b.txt", at);
		if (!exists(sub) || st.ended)
			bad++;
		snprintf(sub, sizeof(sub), "cut%zu/last.txt", at);
		if (exists(sub))
			bad++;
	}
	CHECK(bad == 0);
	CHECK(strstr(vt_err_msg(), "offset ") != NULL);
	/* cut exactly between frames: no END, a clean message */
	spit(cut, data, last_start);
	CHECK(unpack(cut, "cutclean", &st) == 1);
	CHECK(strstr(vt_err_msg(), "without an END frame") != NULL);
	CHECK(exists("cutclean/a.txt") && !exists("cutclean/last.txt"));
}

static void test_corrupt(const char *stream, size_t size)
{
	static char data[1 << 16];
	char bad_path[256], want[64];
	struct vt_stream_stats st;
	size_t len, last_start = size - VT_STREAM_HDR_SIZE - VT_STREAM_HDR_SIZE - 8 - 25;
	const char *src;

	src = slurp(stream, &len);
	CHECK(src != NULL);
	memcpy(data, src, len);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.bin", tmp);
	/* a flipped payload byte of last.txt */
	data[last_start + VT_STREAM_HDR_SIZE + 8 + 3] ^= 0x20;
	spit(bad_path, data, len);
	CHECK(unpack(bad_path, "bad1", &st) == 1);
	snprintf(want, sizeof(want), "offset %zu: payload checksum", last_start);
	CHECK(strstr(vt_err_msg(), want) != NULL);
	CHECK(strstr(vt_err_msg(), "last.txt") != NULL);
	CHECK(exists("bad1/a.txt") && !exists("bad1/last.txt"));
	data[last_start + VT_STREAM_HDR_SIZE + 8 + 3] ^= 0x20;
	/* a flipped length byte: the header checksum catches it */
	data[last_start + VT_STREAM_OFF_LEN + 2] ^= 1;
	spit(bad_path, data, len);
	CHECK(unpack(bad_path, "bad2", &st) == 1);
	CHECK(strstr(vt_err_msg(), "header checksum") != NULL);
	CHECK(exists("bad2/dir/b.txt"));
}

static void test_hostile(void)
{
	static const char *const names[] = { "../evil", "/tmp/evil", "a/../../evil", "a//b", ".." };
	uint8_t buf[4096];
	char path[256];
	struct vt_stream_stats st;
	struct vt_stream_frame f;
	size_t n;

	snprintf(path, sizeof(path), "%s/hostile.bin", tmp);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = raw_frame(buf, VT_STREAM_HELLO, "", "x");
		n += raw_frame(buf + n, VT_STREAM_DATA, names[i], "pwned");
		spit(path, buf, n);
		CHECK(unpack(path, "hostile", &st) == 1);
		CHECK(strstr(vt_err_msg(), "forbidden file name") != NULL);
		CHECK(st.files == 0);
	}
	CHECK(!exists("evil") && access("/tmp/evil", F_OK) != 0);
	/* a DATA frame that would write past the file limit */
	raw_offset = VT_STREAM_MAX_FILE - 2;
	CHECK(vt_stream_decode(buf, raw_frame(buf, VT_STREAM_DATA, "big", "abcd"), &f) < 0);
	CHECK(strstr(vt_err_msg(), "file limit") != NULL);
	raw_offset = VT_STREAM_MAX_FILE - 4;
	CHECK(vt_stream_decode(buf, raw_frame(buf, VT_STREAM_DATA, "big", "abcd"), &f) > 0);
	raw_offset = 0;
	/* the first frame must be HELLO */
	n = raw_frame(buf, VT_STREAM_DATA, "a", "b");
	spit(path, buf, n);
	CHECK(unpack(path, "nohello", &st) == 1);
	CHECK(strstr(vt_err_msg(), "not HELLO") != NULL);
	CHECK(!exists("nohello/a"));
	/* a name used as a file, then as a directory */
	n = raw_frame(buf, VT_STREAM_HELLO, "", "x");
	n += raw_frame(buf + n, VT_STREAM_DATA, "f", "file");
	n += raw_frame(buf + n, VT_STREAM_DATA, "f/g", "under a file");
	spit(path, buf, n);
	CHECK(unpack(path, "conflict", &st) == 1);
	CHECK(strstr(vt_err_msg(), "'f/g'") != NULL);
	CHECK(exists("conflict/f"));
	/* not a stream at all */
	spit(path, "hello world, not a stream", 25);
	CHECK(unpack(path, "text", &st) == 1);
	CHECK(strstr(vt_err_msg(), "not a vmtrace stream") != NULL);
	/* a missing stream is a failure, not a partial result */
	snprintf(path, sizeof(path), "%s/missing.bin", tmp);
	CHECK(unpack(path, "missing", &st) == -1);
}

/* Build the stream @path: a HELLO, then each of @names as a DATA frame of
 * @data - or, for a name that starts with '-', an UNLINK of the rest. */
static void stream_of(const char *path, const char *const *names, size_t nr, const char *data)
{
	static uint8_t buf[8192];
	size_t n = raw_frame(buf, VT_STREAM_HELLO, "", "x");

	for (size_t i = 0; i < nr; i++) {
		CHECK(n + VT_STREAM_HDR_SIZE + strlen(names[i]) + strlen(data) <= sizeof(buf));
		if (names[i][0] == '-')
			n += raw_frame(buf + n, VT_STREAM_UNLINK, names[i] + 1, "");
		else
			n += raw_frame(buf + n, VT_STREAM_DATA, names[i], data);
	}
	spit(path, buf, n);
}

#define STREAM_OF(path, data, ...) do { \
	static const char *const names_[] = { __VA_ARGS__ }; \
	stream_of(path, names_, sizeof(names_) / sizeof(names_[0]), data); \
} while (0)

/* Names the output directory cannot hold as the stream says - a directory
 * then a file of its name, a symbolic link already there, an UNLINK of a
 * directory or below a file, a file below a file: a stream fault (1),
 * what came before kept, the message naming the name and the reason.  An
 * UNLINK removes a file that was there before the unpack. */
static void test_conflicts(void)
{
	struct vt_stream_stats st;
	char path[256], p[512];

	snprintf(path, sizeof(path), "%s/conflict.bin", tmp);
	STREAM_OF(path, "1", "d/e/x", "d");
	CHECK(unpack(path, "isdir", &st) == 1 && st.files == 1 && exists("isdir/d/e/x"));
	CHECK(msg_has("conflict.bin: offset 87: cannot create 'd' in ") &&
	      msg_has("/isdir: Is a directory"));

	snprintf(p, sizeof(p), "%s/link", tmp);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/link/s", tmp);
	CHECK(symlink("elsewhere", p) == 0);
	STREAM_OF(path, "through a link", "s");
	CHECK(unpack(path, "link", &st) == 1 && st.files == 0 && !exists("link/elsewhere"));
	CHECK(msg_has("cannot create 's' in ") &&
	      msg_has("/link: Too many levels of symbolic links"));

	STREAM_OF(path, "1", "d/e/x", "-d/e");
	CHECK(unpack(path, "rmdir2", &st) == 1 && exists("rmdir2/d/e/x"));
	CHECK(msg_has("cannot remove 'd/e' in ") && msg_has("Is a directory"));
	STREAM_OF(path, "1", "d/x", "-d");
	CHECK(unpack(path, "rmdir1", &st) == 1 && exists("rmdir1/d/x"));
	CHECK(msg_has("cannot remove 'd' in ") && msg_has("Is a directory"));

	STREAM_OF(path, "1", "f", "-f/g");
	CHECK(unpack(path, "rmbelow", &st) == 1 && exists("rmbelow/f"));
	CHECK(msg_has("cannot remove 'f/g' in ") && msg_has("Not a directory"));
	STREAM_OF(path, "1", "x/f", "x/f/g");
	CHECK(unpack(path, "below", &st) == 1 && st.files == 1);
	CHECK(msg_has("cannot create the directories of 'x/f/g' in ") &&
	      msg_has("Not a directory"));

	/* a file there before: removed; one that is nowhere: nothing to do */
	snprintf(p, sizeof(p), "%s/pre", tmp);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/pre/old", tmp);
	spit(p, "old", 3);
	STREAM_OF(path, "", "-old", "-never", "-no/dir");
	CHECK(unpack(path, "pre", &st) == 1 && msg_has("without an END frame"));
	CHECK(st.unlinks == 1 && st.frames == 4 && !exists("pre/old"));
}

/* Failures of the host, not of the stream: -1, the message naming the
 * file and the reason - the output's parent missing, the output a file,
 * the stream missing or a directory, a file size limit, no file
 * descriptor left, a device node where a file is reset. */
static void test_host_faults(const char *stream)
{
	struct vt_stream_stats st;
	struct rlimit old, rl;
	char out[256], p[512];
	int k, rc;

	snprintf(out, sizeof(out), "%s/none/out", tmp);
	CHECK(vt_stream_unpack(stream, out, &st) == -1 &&
	      msg_has("/none/out: cannot create: No such file or directory"));
	CHECK(vt_stream_unpack(stream, stream, &st) == -1 &&
	      msg_has("/s.bin: cannot open: Not a directory"));
	snprintf(out, sizeof(out), "%s/nostats", tmp);
	CHECK(vt_stream_unpack(stream, out, NULL) == 0 && exists("nostats/a.txt"));
	snprintf(p, sizeof(p), "%s/missing.bin", tmp);
	CHECK(vt_stream_walk(p, NULL, NULL) == -1 &&
	      msg_has("missing.bin: cannot open: No such file or directory"));
	CHECK(vt_stream_walk(tmp, NULL, NULL) == -1 && msg_has(": read at offset 0: Is a directory"));

	/* a.txt's 6 bytes past a 4-byte file size limit */
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	rl = old;
	rl.rlim_cur = 4;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	rc = unpack(stream, "fsize", &st);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(rc == -1 && msg_has("s.bin: offset 58: cannot write 'a.txt' in ") &&
	      msg_has("/fsize: File too large"));

	/* room for the output directory's and the stream's descriptors only,
	 * then one more: no descriptor for a file, at the top or below */
	k = open("/dev/null", O_RDONLY);
	CHECK(k >= 0 && close(k) == 0 && getrlimit(RLIMIT_NOFILE, &old) == 0);
	rl = old;
	rl.rlim_cur = k + 2;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	rc = unpack(stream, "nofile", &st);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	CHECK(rc == -1 && msg_has("cannot create 'a.txt' in ") && msg_has("Too many open files"));
	snprintf(p, sizeof(p), "%s/nested.bin", tmp);
	STREAM_OF(p, "1", "d/x");
	rl.rlim_cur = k + 3;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	rc = unpack(p, "nofile2", &st);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	CHECK(rc == -1 && msg_has("cannot create 'd/x' in ") && msg_has("Too many open files"));

	/* /dev/null's device node where the stream resets a file */
	snprintf(p, sizeof(p), "%s/dev", tmp);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/dev/null", tmp);
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		int fd;

		snprintf(p, sizeof(p), "%s/reset.bin", tmp);
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0);
		put_frame(fd, VT_STREAM_HELLO, 0, NULL, 0, "x");
		put_frame(fd, VT_STREAM_DATA, VT_STREAM_F_RESET, "null", 0, "x");
		close(fd);
		CHECK(unpack(p, "dev", &st) == -1 && msg_has("cannot truncate 'null' in ") &&
		      msg_has("Invalid argument"));
	} else {
		printf("skipped: a device node in the output: mknod: %s\n", strerror(errno));
	}
}

/* More files than an unpack keeps (VT_STREAM_MAX_FILES): the one past the
 * limit is refused as a stream fault, in the output directory itself or
 * below it, and not left behind.  On tmpfs: 2 * 65537 files. */
static void test_max_files(void)
{
	size_t cap = (VT_STREAM_MAX_FILES + 2) * (VT_STREAM_HDR_SIZE + 8), n;
	char shm[] = "/dev/shm/vt-t-stream.XXXXXX", path[256], out[256], name[16];
	uint8_t *buf = malloc(cap);
	struct vt_stream_stats st;

	CHECK(buf != NULL && mkdtemp(shm) != NULL);
	if (!buf)
		return;
	snprintf(path, sizeof(path), "%s/many.bin", shm);
	for (int round = 0; round < 2; round++) {
		const char *last = round ? "d/last" : "last";

		n = raw_frame(buf, VT_STREAM_HELLO, "", "x");
		for (int i = 0; i < VT_STREAM_MAX_FILES; i++) {
			snprintf(name, sizeof(name), "%c%05x", round ? 'd' : 'f', i);
			n += raw_frame(buf + n, VT_STREAM_DATA, name, "");
		}
		n += raw_frame(buf + n, VT_STREAM_DATA, last, "");
		spit(path, buf, n);
		snprintf(out, sizeof(out), "%s/many%d", shm, round);
		CHECK(vt_stream_unpack(path, out, &st) == 1 && st.files == VT_STREAM_MAX_FILES);
		CHECK(msg_has("more than 65536 files: '") && msg_has(last));
		snprintf(out, sizeof(out), "%s/many%d/%s", shm, round, last);
		CHECK(access(out, F_OK) != 0);
	}
	free(buf);
	snprintf(out, sizeof(out), "rm -rf '%s'", shm);
	CHECK(system(out) == 0);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

struct feeder {
	int fd;
	const char *data;
	size_t len;
};

/* Write the stream into the FIFO after the reader's read was interrupted. */
static void *feed(void *arg)
{
	struct feeder *fe = arg;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	usleep(300000);
	CHECK(write(fe->fd, fe->data, fe->len) == (ssize_t)fe->len);
	return NULL;
}

/* A stream from a FIFO whose first read a signal interrupts: read again,
 * the stream unpacked whole. */
static void test_interrupted(const char *stream)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;	/* no SA_RESTART */
	struct itimerval it = { .it_value = { 0, 100000 } };
	struct vt_stream_stats st;
	struct feeder fe;
	char fifo[256], p[512];
	pthread_t th;
	int rc;

	fe.data = slurp(stream, &fe.len);
	CHECK(fe.data != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	CHECK(mkfifo(fifo, 0644) == 0);
	fe.fd = open(fifo, O_RDWR);	/* a writer: the reader's open does not wait */
	CHECK(fe.fd >= 0 && sigaction(SIGALRM, &sa, &old) == 0);
	CHECK(pthread_create(&th, NULL, feed, &fe) == 0);
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	rc = unpack(fifo, "fromfifo", &st);
	pthread_join(th, NULL);
	sigaction(SIGALRM, &old, NULL);
	close(fe.fd);
	CHECK(rc == 0 && st.ended && st.frames == 10 && alarms == 1);
	snprintf(p, sizeof(p), "%s/fromfifo/a.txt", tmp);
	CHECK_STR(slurp(p, NULL), "hello world\n");
}

/* A disk out of inodes (a tmpfs of 3 in a mount namespace of this
 * process's own): the directory of a name cannot be made - the host's
 * fault, -1. */
static void test_no_inodes(const char *stream)
{
	struct vt_stream_stats st;
	char mnt[256];

	snprintf(mnt, sizeof(mnt), "%s/small", tmp);
	CHECK(mkdir(mnt, 0755) == 0);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", mnt, "tmpfs", 0, "nr_inodes=3,size=64k")) {
		printf("skipped: a disk out of inodes: cannot mount a tmpfs: %s\n", strerror(errno));
		return;
	}
	/* the root, out/ and a.txt: no inode for dir/ */
	CHECK(unpack(stream, "small/out", &st) == -1 && st.files == 1);
	CHECK(msg_has("cannot create the directories of 'dir/b.txt' in ") &&
	      msg_has("/small/out: No space left on device"));
	CHECK(umount2(mnt, MNT_DETACH) == 0);
}

int main(void)
{
	char stream[256], cmd[300];
	size_t size;

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	signal(SIGXFSZ, SIG_IGN);
	snprintf(stream, sizeof(stream), "%s/s.bin", tmp);
	test_basics();
	test_writer();
	size = make_stream(stream);
	test_roundtrip(stream);
	test_truncated(stream, size);
	test_corrupt(stream, size);
	test_hostile();
	test_frames_refused();
	test_conflicts();
	test_host_faults(stream);
	test_max_files();
	test_interrupted(stream);
	test_no_inodes(stream);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_done();
}
