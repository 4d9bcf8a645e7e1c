/*
 * fuzz-uftrace.c - libFuzzer target for the uftrace reader (lib/uftrace_read.c) (uftrace
 * data directories, from `vmtrace run` or the Python tracer in a guest,
 * are untrusted).  The input is a whole data directory packed as
 *   "#VTFUZZ# <name>\n" <content> { "\n#VTFUZZ# <name>\n" <content> }
 * (tests/fuzz/pack-uftrace packs a real one).  Up to FUZZ_MAX_FILES files
 * with safe names ([A-Za-z0-9._-], no leading dot) are written to a fresh
 * directory, which is opened; every task's stream is read to its end, every
 * record's address looked up (a task's stream also reads the Python
 * tracer's <TID>.stage, lib/pystage.c), then every .dat folded with its
 * stage as `vmtrace finalize` does (`vt_pystage_fold`: the trim too).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pystage.h"
#include "uftrace.h"

#define FUZZ_TAG	"#VTFUZZ# "
#define FUZZ_SEP	"\n" FUZZ_TAG
#define FUZZ_MAX_FILES	16
#define FUZZ_NAME_MAX	64

static int safe_name(const char *p, size_t n)
{
	if (!n || n >= FUZZ_NAME_MAX || p[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(p[i] == '.' || p[i] == '_' || p[i] == '-' ||
		      (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9')))
			return 0;
	return 1;
}

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
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Unpack @data into @dir: the number of files written. */
static int unpack(const char *dir, const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t tag = strlen(FUZZ_TAG), sep = strlen(FUZZ_SEP);
	int nr = 0;

	if (size < tag || memcmp(p, FUZZ_TAG, tag))
		return 0;
	p += tag;
	while (p < end && nr < FUZZ_MAX_FILES) {
		const uint8_t *nl = memchr(p, '\n', end - p);
		char name[FUZZ_NAME_MAX];

		if (!nl)
			break;
		const uint8_t *body = nl + 1;
		const uint8_t *q = memmem(body, end - body, FUZZ_SEP, sep);
		size_t n = q ? (size_t)(q - body) : (size_t)(end - body);

		if (safe_name((const char *)p, nl - p)) {
			memcpy(name, p, nl - p);
			name[nl - p] = 0;
			put(dir, name, body, n);
			nr++;
		}
		if (!q)
			break;
		p = q + sep;
	}
	return nr;
}

static void fold_dats(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 4 || strcmp(de->d_name + n - 4, ".dat"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		(void)vt_pystage_fold(path);
	}
	if (d)
		closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/vt-fuzz-uftrace.XXXXXX";
	struct vt_uft_reader *r;
	uint64_t start;

	if (!mkdtemp(dir))
		return 0;
	if (!unpack(dir, data, size)) {
		clean(dir);
		return 0;
	}
	r = vt_uft_open(dir);
	if (r) {
		for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
			struct vt_uft_stream *s = vt_uft_stream_open(r, i);
			struct vt_uft_record rec;
			size_t len;

			(void)vt_uft_task_tid(r, i);
			(void)vt_uft_task_pid(r, i);
			if (!s)
				continue;
			while (vt_uft_stream_next(s, &rec) == 1) {
				(void)vt_uft_sym_name(r, vt_uft_addr(rec.bits));
				(void)vt_uft_sym_find(r, vt_uft_addr(rec.bits), &start);
				(void)vt_uft_stream_payload(s, &len);
				(void)vt_uft_stream_offset(s);
			}
			(void)vt_uft_stream_truncated(s);
			(void)vt_uft_stream_staged(s);
			(void)vt_uft_stream_path(s);
			vt_uft_stream_close(s);
		}
		(void)vt_uft_reader_info(r);
		(void)vt_uft_feat_mask(r);
		(void)vt_uft_info_mask(r);
		(void)vt_uft_nr_syms(r);
		vt_uft_close(r);
	}
	fold_dats(dir);
	clean(dir);
	return 0;
}
