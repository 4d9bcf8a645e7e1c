/*
 * gen-trace.c - test/bench helper: writes a synthetic uftrace data
 * directory through lib/uftrace.h with known timestamps, for merge's
 * known-answer tests and its benchmark.  Single-threaded tool; allocates.
 *
 * usage: gen-trace DIR [options]
 *   -t TASKS     threads (default 1), tids PID+0.., pid -p (default 1000)
 *   -n RECORDS   records in all (default 1000), split over the tasks
 *   -c CLOCK     tsc | ns (vmtrace.meta clock; default tsc)
 *   -z HZ        tsc.hz written to vmtrace.meta (default 2000000000)
 *   -s START     first timestamp (default 1000000)
 *   -d STEP      timestamp step between records of one task (default 100)
 *   -D DEPTH     call depth of the pattern (default 4, at most 4096; past
 *                64 the names and symbols repeat: depth d calls NAMES[d % 64]
 *                and records carry uftrace's 10-bit depth, d & 1023)
 *   -g           domain=guest in vmtrace.meta (default host)
 *   -f NAMES     function names, comma separated (default f0,f1,...)
 *   -j AT:DELTA  add DELTA to the time of records AT.. of each task (a
 *                clock step, e.g. a TSC offset change)
 *   -M KEY=VAL   extra vmtrace.meta line (repeatable)
 *
 * Record i of a task has time START + i*STEP; the pattern enters DEPTH
 * nested functions then leaves them (names NAMES[depth]), so every task's
 * calls are balanced when RECORDS per task is a multiple of 2*DEPTH.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
#include "uftrace.h"

#define EXE		"/usr/bin/gen-trace-prog"
#define BASE		0x400000ULL
#define FN_SIZE		0x100
#define MAX_FN		64
#define MAX_DEPTH	4096
#define BUF_RECS	4096

int main(int argc, char **argv)
{
	int tasks = 1, depth = 4, guest = 0, pid = 1000, c;
	uint64_t n = 1000, hz = 2000000000ULL, start = 1000000, step = 100;
	const char *clock = "tsc";
	char *names[MAX_FN], *fnlist = NULL, *extra[MAX_FN];
	int nr_names = 0, nr_extra = 0;
	uint64_t jump_at = UINT64_MAX, jump = 0;

	while ((c = getopt(argc, argv, "t:n:c:z:s:d:D:gf:p:j:M:")) != -1) {
		switch (c) {
		case 't': tasks = atoi(optarg); break;
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'c': clock = optarg; break;
		case 'z': hz = strtoull(optarg, NULL, 0); break;
		case 's': start = strtoull(optarg, NULL, 0); break;
		case 'd': step = strtoull(optarg, NULL, 0); break;
		case 'D': depth = atoi(optarg); break;
		case 'g': guest = 1; break;
		case 'f': fnlist = optarg; break;
		case 'p': pid = atoi(optarg); break;
		case 'j':
			if (sscanf(optarg, "%lu:%lu", &jump_at, &jump) != 2)
				return 2;
			break;
		case 'M':
			if (nr_extra < MAX_FN)
				extra[nr_extra++] = optarg;
			break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || tasks < 1 || depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "usage: gen-trace DIR [-t TASKS] [-n RECORDS] [-c tsc|ns] "
			"[-z HZ] [-s START] [-d STEP] [-D DEPTH] [-g] [-f NAMES] [-p PID]\n");
		return 2;
	}
	const char *dir = argv[optind];

	for (char *tok = fnlist ? strtok(fnlist, ",") : NULL; tok && nr_names < MAX_FN;
	     tok = strtok(NULL, ","))
		names[nr_names++] = tok;
	int nr_syms = depth < MAX_FN ? depth : MAX_FN;

	for (int i = nr_names; i < nr_syms; i++) {
		names[i] = malloc(16);
		snprintf(names[i], 16, "f%d", i);
	}
	if (vt_uft_dir_create(dir, 1) < 0)
		goto fail;

	char sid[VT_UFT_SID_LEN + 1];
	struct vt_uft_sym syms[MAX_FN];
	int *tids = calloc(tasks, sizeof(*tids));

	vt_uft_sid_make(sid, pid, start);
	if (vt_uft_task_session(dir, start, pid, sid, EXE) < 0 ||
	    vt_uft_write_map_fixed(dir, sid, BASE, BASE + (MAX_FN + 1) * FN_SIZE, EXE) < 0)
		goto fail;
	for (int i = 0; i < nr_syms; i++)
		syms[i] = (struct vt_uft_sym){ BASE + (uint64_t)(i + 1) * FN_SIZE, FN_SIZE, 'T',
					       names[i] };
	if (vt_uft_write_syms(dir, EXE, syms, nr_syms) < 0)
		goto fail;

	struct vt_uft_record *buf = malloc(BUF_RECS * sizeof(*buf));
	uint64_t per = n / tasks;

	for (int t = 0; t < tasks; t++) {
		char path[4200];
		int tid = pid + t;
		FILE *fp;

		tids[t] = tid;
		if (vt_uft_task_thread(dir, start, tid, pid) < 0 ||
		    vt_uft_dat_path(path, sizeof(path), dir, tid) < 0)
			goto fail;
		fp = fopen(path, "w");
		if (!fp) {
			vt_err_errno("%s: cannot create", path);
			goto fail;
		}
		uint64_t cnt = per + (t == tasks - 1 ? n % tasks : 0);
		int d = 0, up = 1;
		size_t nb = 0;

		for (uint64_t i = 0; i < cnt; i++) {
			unsigned type;
			int fn;

			if (up) {
				type = VT_UFT_ENTRY;
				fn = d++;
				if (d == depth)
					up = 0;
			} else {
				type = VT_UFT_EXIT;
				fn = --d;
				if (d == 0)
					up = 1;
			}
			buf[nb].time = start + i * step + (i >= jump_at ? jump : 0);
			buf[nb].bits = vt_uft_pack(type, (unsigned)fn,
						   BASE + (uint64_t)(fn % MAX_FN + 1) * FN_SIZE);
			if (++nb == BUF_RECS) {
				if (fwrite(buf, sizeof(*buf), nb, fp) != nb)
					goto fail_io;
				nb = 0;
			}
		}
		if (nb && fwrite(buf, sizeof(*buf), nb, fp) != nb)
			goto fail_io;
		if (fclose(fp)) {
fail_io:
			vt_err_errno("%s: write failed", path);
			goto fail;
		}
	}
	struct vt_uft_info info = {
		.exename = EXE, .cmdline = "gen-trace-prog", .exit_status = 0,
		.nr_tids = tasks, .tids = tids, .max_stack = VT_UFT_MAX_DEPTH,
	};
	struct vt_meta *m = vt_meta_new();

	if (vt_uft_write_info(dir, &info) < 0 || !m || vt_meta_set(m, VT_MK_CLOCK, "%s", clock) < 0 ||
	    vt_meta_set_u64(m, VT_MK_TSC_HZ, hz) < 0 ||
	    vt_meta_set(m, VT_MK_DOMAIN, "%s", guest ? "guest" : "host") < 0)
		goto fail;
	for (int i = 0; i < nr_extra; i++) {
		char *eq = strchr(extra[i], '=');

		if (!eq)
			return 2;
		*eq = 0;
		if (vt_meta_set(m, extra[i], "%s", eq + 1) < 0)
			goto fail;
	}
	if (vt_meta_write_dir(m, dir) < 0)
		goto fail;
	vt_meta_free(m);
	free(buf);
	free(tids);
	for (int i = nr_names; i < nr_syms; i++)
		free(names[i]);
	return 0;
fail:
	vt_err_print("gen-trace");
	return 1;
}
