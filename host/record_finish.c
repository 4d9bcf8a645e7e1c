/*
 * record_finish.c - `vmtrace record --finish DIR` (host_record_finish,
 * record.h): completes the recording a killed or failed recorder left.  It
 * drains that recorder's instance if it still exists (found through
 * DIR/record.state), writes the trace.dat it could not
 * (record_tracedat.c) and removes the instance, the raw files and the
 * state; optionally all in a copy of DIR.  Main thread only; allocates.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <tracefs.h>
#include "err.h"
#include "fileio.h"
#include "kvmfacts.h"
#include "proc.h"
#include "meta.h"
#include "record_int.h"
#include "tracedat.h"
#include "tsc.h"

#define REC_COPY_CHUNK		(1 << 20)

static int rec_copy_pages(const char *src, const char *dst, uint32_t page_size, int *torn)
{
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1, ret = -1;
	char *buf = malloc(REC_COPY_CHUNK);
	uint64_t left;
	struct stat sb;

	if (in < 0 && errno == ENOENT) {
		in = -1;
		sb.st_size = 0;
	} else if (in < 0 || fstat(in, &sb)) {
		vt_err_errno("%s: cannot read", src);
		goto out;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, REC_FILE_MODE);
	if (out < 0 || !buf) {
		vt_err_errno("%s: cannot create", dst);
		goto out;
	}
	*torn |= sb.st_size % page_size != 0;
	left = (uint64_t)sb.st_size - (uint64_t)sb.st_size % page_size;
	while (left) {
		ssize_t n = read(in, buf, left < REC_COPY_CHUNK ? left : REC_COPY_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			vt_err_errno("%s: read failed", src);
			goto out;
		}
		if (vt_file_write_all(out, buf, n)) {
			vt_err_errno("%s: write failed", dst);
			goto out;
		}
		left -= n;
	}
	if (fsync(out)) {
		vt_err_errno("%s: fsync failed", dst);
		goto out;
	}
	ret = 0;
out:
	free(buf);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

/* Set up @out as the place to finish @dir: the state, events and whole
 * raw pages copied there. */
static int rec_finish_move(const char *dir, const char *out, int force, const struct vt_meta *st,
			   unsigned nr_cpus, uint32_t page_size, int *torn)
{
	char src[REC_PATH_MAX], dst[REC_PATH_MAX];
	char *ev;
	size_t len;
	int created;

	if (rec_make_dir(out, force, &created))
		return -1;
	snprintf(dst, sizeof(dst), "%s/%s", out, REC_STATE_FILE);
	if (vt_meta_write(st, dst))
		return -1;
	snprintf(src, sizeof(src), "%s/%s", dir, REC_EVENTS_FILE);
	snprintf(dst, sizeof(dst), "%s/%s", out, REC_EVENTS_FILE);
	ev = vt_file_read_all(src, REC_READ_ALL_MAX, &len);
	if (!ev)
		return -1;	/* the message names src */
	if (vt_file_write_atomic(dst, ev, strlen(ev), REC_FILE_MODE, VT_FILE_FSYNC)) {
		free(ev);
		return -1;
	}
	free(ev);
	for (unsigned i = 0; i < nr_cpus; i++) {
		snprintf(src, sizeof(src), REC_RAW_FMT, dir, i);
		snprintf(dst, sizeof(dst), REC_RAW_FMT, out, i);
		if (rec_copy_pages(src, dst, page_size, torn))
			return -1;
	}
	return 0;
}

/* 1 if the recorder @pid of @st still runs (a vmtrace process). */
static int rec_recorder_alive(pid_t pid)
{
	char path[REC_PROC_PATH_MAX], comm[REC_COMM_MAX];

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (host_proc_read_small(path, comm, sizeof(comm)))
		return 0;
	return !strncmp(comm, "vmtrace", strlen("vmtrace"));
}

int host_record_finish(const char *dir, const char *out, int force, struct host_record_result *res)
{
	char path[REC_PATH_MAX], reason[REC_PATH_MAX], boot[REC_BOOT_ID_MAX], **stats = NULL;
	struct vt_td_cpu_stats *cs = NULL;
	struct host_record *r = NULL;
	struct vt_meta *st;
	const char *name, *tdir, *work = out ? out : dir, *oldboot, *salvaged;
	uint64_t pid = 0, ncpu = 0, psz = 0;
	char *set_event = NULL;
	size_t len;
	int torn = 0, drained = 0, self_drained = 0, ret = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, REC_STATE_FILE);
	if (access(path, F_OK)) {
		snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
		return vt_err_set_code(EINVAL, "%s: no %s: not an interrupted recording%s", dir,
				       REC_STATE_FILE,
				       access(path, F_OK) ? "" : " (its trace.dat is complete)");
	}
	st = rec_state_of(dir, 0, NULL);
	if (!st) {
		char why[REC_PATH_MAX];

		snprintf(why, sizeof(why), "%s", vt_err_msg());
		snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
		if (!access(path, F_OK))
			return vt_err_set_code(EINVAL, "%s: already has a trace.dat: nothing to finish",
					       dir);
		return vt_err_set_code(EINVAL, "%s/%s: unreadable or incomplete (%s)", dir,
				       REC_STATE_FILE, why);
	}
	name = vt_meta_get(st, VT_MK_RECORD_INSTANCE);
	if (vt_meta_get_u64(st, VT_MK_RECORD_PID, &pid) ||
	    vt_meta_get_u64(st, VT_MK_RECORD_NR_CPUS, &ncpu) || !ncpu || ncpu > INT_MAX ||
	    vt_meta_get_u64(st, VT_MK_RECORD_PAGE_SIZE, &psz) || psz < 2 * VT_TD_PAGE_HDR_SIZE ||
	    psz > UINT32_MAX || (psz & (psz - 1))) {
		vt_err_set_code(EINVAL, "%s/%s: record.pid, record.nr_cpus or record.page_size "
				"missing or bad",
			   dir, REC_STATE_FILE);
		goto out;
	}
	if (rec_recorder_alive((pid_t)pid)) {
		vt_err_set_code(EBUSY, "%s: its recorder (pid %llu) is still running: stop it "
				"(kill -INT %llu)", dir, (unsigned long long)pid,
				(unsigned long long)pid);
		goto out;
	}
	if (!(tdir = rec_tracefs()))
		goto out;
	if (host_proc_read_small(REC_BOOT_ID_PATH, boot, sizeof(boot)))
		boot[0] = 0;
	boot[strcspn(boot, "\n")] = 0;
	oldboot = vt_meta_get(st, VT_MK_RECORD_BOOT_ID);
	if (oldboot && boot[0] && strcmp(oldboot, boot))
		vt_warn("%s was recorded before a reboot: event formats and kallsyms are taken "
			"from the running kernel", dir);
	if (out && rec_finish_move(dir, out, force, st, (unsigned)ncpu, (uint32_t)psz, &torn))
		goto out;
	r = calloc(1, sizeof(*r));
	stats = calloc(ncpu, sizeof(*stats));
	cs = calloc(ncpu, sizeof(*cs));
	if (!r || !stats || !cs || !(r->dir = strdup(work)) || !(r->cpu = calloc(ncpu, sizeof(*r->cpu)))) {
		vt_err_set("out of memory");
		goto out;
	}
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
	r->last_pid_fd = -1;
	r->nr_cpus = (unsigned)ncpu;
	r->page_size = (uint32_t)psz;
	r->meta = st;
	st = NULL;
	for (unsigned i = 0; i < r->nr_cpus; i++)
		r->cpu[i].in_fd = r->cpu[i].out_fd = r->cpu[i].pipe[0] = r->cpu[i].pipe[1] = -1;
	snprintf(path, sizeof(path), "%s/instances/%s", tdir, name);
	if (!access(path, F_OK) && (r->inst = tracefs_instance_alloc(NULL, name))) {
		if (rec_drain_instance(r->inst, work, r->nr_cpus, r->page_size, stats)) {
			tracefs_instance_free(r->inst);	/* kept: its pages are not saved */
			r->inst = NULL;
			goto out;
		}
		drained = 1;
		r->registry_pid = (pid_t)pid;
		set_event = tracefs_instance_file_read(r->inst, "set_event", NULL);
	}
	if (!set_event) {
		snprintf(path, sizeof(path), "%s/%s", work, REC_EVENTS_FILE);
		set_event = vt_file_read_all(path, REC_READ_ALL_MAX, &len);
		if (!set_event)
			goto out;	/* the message names the event list */
	}
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		struct stat sb;

		snprintf(path, sizeof(path), REC_RAW_FMT, work, i);
		r->cpu[i].out_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
					REC_FILE_MODE);
		if (r->cpu[i].out_fd < 0 || fstat(r->cpu[i].out_fd, &sb)) {
			vt_err_errno("%s: cannot open", path);
			goto out;
		}
		torn |= sb.st_size % r->page_size != 0;
	}
	salvaged = vt_meta_get(r->meta, VT_MK_RECORD_SALVAGED_BY);
	/* instance and registry entry gone in the same boot, no reaper
	 * involved: the recorder removed its instance itself, which it does
	 * only once every page is in the raw files (it failed after that) */
	rec_registry_path(path, sizeof(path), (pid_t)pid);
	if (!drained && !salvaged && vt_meta_get(r->meta, VT_MK_RECORD_REGISTRY) && oldboot &&
	    !strcmp(oldboot, boot) && access(path, F_OK))
		self_drained = 1;
	snprintf(reason, sizeof(reason), "recorder pid %llu ended without writing trace.dat; %s%s%s",
		 (unsigned long long)pid,
		 drained ? "the pages left in its tracing instance were saved"
			 : salvaged ? "the pages left in its tracing instance were saved by recorder pid "
			 : self_drained ? "it had saved every page of its tracing instance"
			 : "its tracing instance was gone: pages not yet written when it ended are lost",
		 !drained && salvaged ? salvaged : "",
		 torn ? "; a torn last page was dropped" : "");
	if (vt_meta_set(r->meta, VT_MK_RECORD_RECOVERED, "1") ||
	    vt_meta_set(r->meta, VT_MK_RECORD_RECOVER_REASON, "%s", reason) ||
	    vt_meta_set(r->meta, VT_MK_RECORD_RECOVER_INSTANCE, "%s",
			drained ? "drained" : salvaged ? "salvaged" :
			self_drained ? "drained_by_recorder" : "gone")) {
		goto out;
	}
	vt_meta_del(r->meta, VT_MK_RECORD_INSTANCE);
	vt_meta_del(r->meta, VT_MK_RECORD_TRACEFS);
	if (rec_write_tracedat(r, set_event, stats, cs)) {
		if (vt_err_code() == ENOSPC) {
			char msg[REC_PATH_MAX];

			snprintf(msg, sizeof(msg), "%s", vt_err_msg());
			vt_err_set_code(ENOSPC, "%s; the pages are kept in %s/trace.cpuN.raw: "
					"finish elsewhere with --finish %s -o OTHERDIR", msg, work, work);
		}
		goto out;
	}
	if (rec_meta_tsc(r) || rec_meta_end(r, stats, cs, res))
		goto out;
	rec_unlink_raw(r);
	ret = (drained || salvaged || self_drained) && !torn ? 0 : 1;
out:
	for (unsigned i = 0; stats && i < ncpu; i++)
		free(stats[i]);
	free(stats);
	free(cs);
	free(set_event);
	vt_meta_free(st);
	if (ret >= 0)
		rec_registry_del((pid_t)pid);
	rec_free(r);	/* removes a drained instance: its pages are on disk now */
	return ret;
}
