/*
 * t-stream.c - unit and fault tests of lib/stream.c (the guest->host trace
 * stream): CRC-32 check value, name rules, write -> unpack round trip with
 * RESET and UNLINK, and untrusted input: a stream cut at every byte of its
 * last frame, a flipped payload or header byte, names escaping the output
 * directory, a wrong first frame, a file used as a directory.  Each time
 * the unpack must keep what came before and name the stream, the offset
 * and the file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int main(void)
{
	char stream[256], cmd[300];
	size_t size;

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(stream, sizeof(stream), "%s/s.bin", tmp);
	test_basics();
	size = make_stream(stream);
	test_roundtrip(stream);
	test_truncated(stream, size);
	test_corrupt(stream, size);
	test_hostile();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_done();
}
