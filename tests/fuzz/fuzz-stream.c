/*
 * fuzz-stream.c - libFuzzer target for lib/stream.c's reader and unpacker
 * (the trace stream comes from guests: untrusted).  The input is decoded
 * frame by frame from memory, then written to a file and unpacked into a
 * fresh directory, which is removed afterwards; any write outside that
 * directory or a crash is a finding.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz-util.h"
#include "stream.h"

#define FUZZ_FTW_FDS	16

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* tmpfs: thousands of small files a second */
	char path[] = "/dev/shm/vt-fuzz-stream.XXXXXX";
	char dir[] = "/dev/shm/vt-fuzz-stream-out.XXXXXX";
	struct vt_stream_frame f;
	struct vt_stream_stats st;
	size_t off = 0;

	/* the pure decoder over the buffer */
	while (off < size) {
		long n = vt_stream_decode(data + off, size - off, &f);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (fuzz_write_temp(data, size, path) < 0)
		return 0;
	if (mkdtemp(dir)) {
		(void)vt_stream_unpack(path, dir, &st);
		nftw(dir, rm_one, FUZZ_FTW_FDS, FTW_DEPTH | FTW_PHYS);
	}
	unlink(path);
	return 0;
}
