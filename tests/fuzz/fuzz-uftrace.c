/*
 * fuzz-uftrace.c - libFuzzer target for lib/uftrace.c's reader (uftrace
 * data directories come from guests: untrusted).  The input is a data
 * directory packed as files separated by FUZZ_SEP, in this order:
 *   info, task.txt, sid-fuzzfuzzfuzzfuzz.map, demo.sym, 4242.dat, 4243.dat
 * They are written to a fresh directory, opened, every task's stream read
 * to its end and every record's address looked up.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uftrace.h"

#define FUZZ_SEP	"\n#VTFUZZ#\n"

static const char *const names[] = {
	"info", "task.txt", "sid-fuzzfuzzfuzzfuzz.map", "demo.sym", "4242.dat", "4243.dat",
};

static void put(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp)
		return;
	fwrite(p, 1, n, fp);
	fclose(fp);
}

static void clean(const char *dir)
{
	char path[512];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/vt-fuzz-uftrace.XXXXXX";
	const uint8_t *p = data, *end = data + size;
	struct vt_uft_reader *r;
	size_t sep = strlen(FUZZ_SEP);

	if (!mkdtemp(dir))
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && p <= end; i++) {
		const uint8_t *q = memmem(p, end - p, FUZZ_SEP, sep);
		size_t n = q ? (size_t)(q - p) : (size_t)(end - p);

		put(dir, names[i], p, n);
		p += n + sep;
	}
	r = vt_uft_open(dir);
	if (r) {
		for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
			struct vt_uft_stream *s = vt_uft_stream_open(r, i);
			struct vt_uft_record rec;
			size_t len;

			if (!s)
				continue;
			while (vt_uft_stream_next(s, &rec) == 1) {
				(void)vt_uft_sym_name(r, vt_uft_addr(rec.bits));
				(void)vt_uft_stream_payload(s, &len);
			}
			(void)vt_uft_stream_truncated(s);
			vt_uft_stream_close(s);
		}
		(void)vt_uft_reader_info(r);
		vt_uft_close(r);
	}
	clean(dir);
	return 0;
}
