/*
 * uft_fixture.h - for the uftrace unit tests (t-uftrace, t-uftrace-corrupt,
 * t-uftrace-convert):
 * a uftrace data directory of two threads written through
 * lib/uftrace_write.c - 101 (alpha > beta > gamma, 6 records) and 102
 * (a lost-records mark inside alpha, 3 records) - with a map, the symbols
 * @syms and info; uft_fixture_put writes any other file of a directory.
 */
#ifndef VT_TESTS_UFT_FIXTURE_H
#define VT_TESTS_UFT_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include "check.h"
#include "err.h"
#include "uftrace.h"

#define UFT_FIX_EXE	"/opt/t-uftrace/prog"
#define UFT_FIX_BASE	0x400000ULL

/* Write the fixture into the created directory @dir, the stamps from @t
 * on.  0, or -1 with the message set. */
static inline int uft_fixture_write(const char *dir, uint64_t t, const struct vt_uft_sym *syms,
				    size_t nsyms)
{
	const uint64_t base = UFT_FIX_BASE;
	struct vt_uft_record r[6];
	struct vt_uft_info info = { 0 };
	char sid[VT_UFT_SID_LEN + 1], path[1024];
	FILE *fp;

	vt_uft_sid_make(sid, 101, t);
	if (vt_uft_write_map_fixed(dir, sid, base, base + 0x3000, UFT_FIX_EXE) ||
	    vt_uft_write_syms(dir, UFT_FIX_EXE, syms, nsyms) ||
	    vt_uft_task_session(dir, t - 10, 101, sid, UFT_FIX_EXE) ||
	    vt_uft_task_thread(dir, t - 9, 101, 101) ||
	    vt_uft_task_thread(dir, t - 8, 102, 101))
		return -1;
	r[0] = (struct vt_uft_record){ t + 0, vt_uft_pack(VT_UFT_ENTRY, 0, base + 0x1000) };
	r[1] = (struct vt_uft_record){ t + 100, vt_uft_pack(VT_UFT_ENTRY, 1, base + 0x1100) };
	r[2] = (struct vt_uft_record){ t + 200, vt_uft_pack(VT_UFT_ENTRY, 2, base + 0x1200) };
	r[3] = (struct vt_uft_record){ t + 300, vt_uft_pack(VT_UFT_EXIT, 2, base + 0x1200) };
	r[4] = (struct vt_uft_record){ t + 400, vt_uft_pack(VT_UFT_EXIT, 1, base + 0x1100) };
	r[5] = (struct vt_uft_record){ t + 1000, vt_uft_pack(VT_UFT_EXIT, 0, base + 0x1000) };
	snprintf(path, sizeof(path), "%s/101.dat", dir);
	fp = fopen(path, "wb");
	if (!fp || fwrite(r, sizeof(r), 1, fp) != 1 || fclose(fp))
		return vt_err_set("%s: write failed", path);
	r[0].time = t + 50;
	r[1] = (struct vt_uft_record){ t + 60, vt_uft_pack(VT_UFT_LOST, 0, 7) };
	r[2] = (struct vt_uft_record){ t + 70, vt_uft_pack(VT_UFT_EXIT, 0, base + 0x1000) };
	snprintf(path, sizeof(path), "%s/102.dat", dir);
	fp = fopen(path, "wb");
	if (!fp || fwrite(r, sizeof(r[0]), 3, fp) != 3 || fclose(fp))
		return vt_err_set("%s: write failed", path);
	info.exename = UFT_FIX_EXE;
	info.cmdline = "prog \"quoted\" arg";
	info.exit_status = 3 << 8;
	info.max_stack = 128;
	info.elapsed_ns = 1234567890;
	return vt_uft_write_info(dir, &info);	/* tids found from the .dat files */
}

/* Write @n bytes of @data to @dir/@name (appended with @append), each
 * step CHECKed. */
static inline void uft_fixture_put(const char *dir, const char *name, const void *data, size_t n,
				   int append)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, append ? "ab" : "wb");
	CHECK(fp != NULL);
	if (!fp)
		return;
	CHECK(fwrite(data, 1, n, fp) == n);
	fclose(fp);
}

#endif
