/*
 * record.c - the tracefs recorder behind `vmtrace record` (see record.h):
 * its lifecycle (start, poll, add_pid, meta, stop).  Its other concerns
 * are in files of their own, listed in record_int.h.
 *
 * The main thread sets up a private tracefs instance (trace clock
 * x86-tsc), enables the events and starts one reader thread per CPU.  A
 * reader thread only moves whole ring-buffer pages from the CPU's
 * trace_pipe_raw to a raw file in the output directory with splice(2):
 * no parsing, no allocation, no locks.  At stop the main thread drains
 * the buffers, then writes trace.dat (lib/tracedat_write.c), counting
 * events and lost events from the page headers, and vmtrace.meta.
 * host_record_finish (`vmtrace record --finish`, main thread only) does
 * the same for the directory a killed or failed recorder left: it drains
 * that recorder's instance (found through DIR/record.state) and writes the
 * trace.dat it could not.
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
#include "host_extents.h"
#include "extents.h"
#include "proc.h"
#include "meta.h"
#include "record_int.h"
#include "tracedat.h"
#include "tsc.h"

#define REC_TRACE_CLOCK		"x86-tsc"
#define REC_DIR_MODE		0755
#define REC_BUFFER_PERCENT	"50"
#define REC_VENDOR_MAX		64
#define REC_COMM_REFRESH_POLLS	10
#define REC_MS_PER_S		1000
#define REC_US_PER_MS		1000

int host_record_add_pid(struct host_record *r, pid_t pid)
{
	rec_mark_new_pids(r);
	rec_task_add(r, pid);
	rec_follow_all(r);
	r->fresh = 1;	/* the next poll looks for its vCPU threads */
	return r->filter_dirty ? rec_write_filter(r) : 0;
}

/*
 * When no task started anywhere since the last poll (the kernel's last pid
 * did not move), there is nothing new to follow and no tid was reused, so
 * the tasks that ended may stay in the filter until a poll that follows:
 * such a poll costs one read.  vCPU threads are looked for at the poll
 * that sees a task start and at the next one (QEMU names a thread as it
 * starts, a poll may come between).
 */
/* extents.tsv: the extents of the files of each QEMU process with vCPU
 * threads, read the first time a poll sees it (its drives are open) and,
 * with @end, of every one known at the end.  The known processes' fds are
 * scanned again at polls 1, 2, 4, 8, ... and at the end: an image QEMU
 * opens again (its second fd, after the vCPU threads start) or a drive
 * added later.  Best effort: a file that cannot be written leaves the
 * report without them. */
static void rec_extents(struct host_record *r, int end)
{
	pid_t pids[REC_EXT_PIDS], todo[REC_EXT_PIDS];
	int n = end ? 0 : host_kvm_pids(r->kvm, pids, REC_EXT_PIDS, 1), nt = 0;
	int rescan = end || !(r->polls & (r->polls - 1));
	char path[REC_PATH_MAX];
	FILE *fp;

	for (int i = 0; i < n; i++) {
		int j;

		for (j = 0; j < r->nr_ext_pids && r->ext_pids[j] != pids[i]; j++)
			;
		/* a recording of more QEMU processes than that reads the
		 * first ones' files only (their bios stay counted guesses) */
		if (j == r->nr_ext_pids && r->nr_ext_pids < REC_EXT_PIDS) {
			todo[nt++] = pids[i];
			r->ext_pids[r->nr_ext_pids++] = pids[i];
		}
	}
	if (rescan) {
		nt = r->nr_ext_pids;
		memcpy(todo, r->ext_pids, sizeof(*todo) * (size_t)nt);
	}
	if (!nt && !(end && r->ext_files && r->ext_files->n))
		return;
	if (!r->ext_files && !(r->ext_files = calloc(1, sizeof(*r->ext_files))))
		return;
	snprintf(path, sizeof(path), "%s/%s", r->dir, VT_EXTENTS_FILE);
	int fresh = access(path, F_OK) != 0;

	fp = fopen(path, "a");
	if (!fp)
		return;
	if (fresh)
		vt_extents_write_header(fp);
	host_extents_write(fp, todo, nt, r->ext_files);
	if (end)
		host_extents_write_end(fp, r->ext_files);
	fclose(fp);
}

int host_record_poll(struct host_record *r)
{
	r->polls++;
	r->fresh_before = r->fresh;
	r->fresh = rec_mark_new_pids(r);	/* before following: see rec_write_filter */
	if (r->fresh)
		rec_follow_all(r);
	if (r->polls % REC_COMM_REFRESH_POLLS == 0)
		for (int i = 0; i < r->nr_task; i++)
			if (r->task[i].live)
				rec_read_comm(r->task[i].tid, r->task[i].comm);
	if (r->kvm) {
		host_kvm_poll(r->kvm, r->tids, r->pid_filtered ? r->nr_live : 0,
			      r->fresh || r->fresh_before, 0);
		if (r->fresh || r->fresh_before || !(r->polls & (r->polls - 1)))
			rec_extents(r, 0);
	}
	if (r->fresh)
		rec_prune(r);
	for (unsigned i = 0; i < r->nr_cpus; i++)
		if (r->cpu[i].err)
			return vt_err_set("%s/trace.cpu%u.raw: %s", r->dir, i,
					  strerror(r->cpu[i].err));
	return r->filter_dirty ? rec_write_filter(r) : 0;
}

int host_record_meta(struct host_record *r, const char *key, const char *val)
{
	return vt_meta_set(r->meta, key, "%s", val);
}

/* Remove the recovery state of @dir (its recording is complete). */
static void rec_state_unlink(const char *dir)
{
	char path[REC_PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, REC_STATE_FILE);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, REC_EVENTS_FILE);
	unlink(path);
}

/* Create the output directory (*created = 1), or empty an existing one
 * with @force. */
int rec_make_dir(const char *dir, int force, int *created)
{
	char path[REC_PATH_MAX];
	struct stat st;

	*created = 0;
	if (!mkdir(dir, REC_DIR_MODE)) {
		*created = 1;
		return 0;
	}
	if (errno != EEXIST)
		return vt_err_errno("%s: cannot create the output directory", dir);
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		return vt_err_set_code(EEXIST, "%s: exists and is not a directory", dir);
	}
	if (!force) {
		return vt_err_set_code(EEXIST, "%s: output directory exists (use --force to "
				       "replace its trace)", dir);
	}
	if (access(dir, W_OK))
		return vt_err_errno("%s: output directory not writable", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_META_FILE);
	unlink(path);
	rec_state_unlink(dir);
	for (unsigned i = 0;; i++) {
		snprintf(path, sizeof(path), REC_RAW_FMT, dir, i);
		if (unlink(path) && errno == ENOENT && i >= (unsigned)sysconf(_SC_NPROCESSORS_CONF))
			break;
	}
	return 0;
}


void rec_free(struct host_record *r)
{
	if (!r)
		return;
	for (unsigned i = 0; r->cpu && i < r->nr_cpus; i++) {
		struct rec_cpu *c = &r->cpu[i];

		if (c->in_fd >= 0)
			close(c->in_fd);
		if (c->out_fd >= 0)
			close(c->out_fd);
		if (c->pipe[0] >= 0)
			close(c->pipe[0]);
		if (c->pipe[1] >= 0)
			close(c->pipe[1]);
		free(c->page);
	}
	free(r->cpu);
	if (r->last_pid_fd >= 0)
		close(r->last_pid_fd);
	if (r->stop_pipe[0] >= 0)
		close(r->stop_pipe[0]);
	if (r->stop_pipe[1] >= 0)
		close(r->stop_pipe[1]);
	if (r->inst) {
		tracefs_instance_destroy(r->inst);
		tracefs_instance_free(r->inst);
		if (r->registry_pid)
			rec_registry_del(r->registry_pid);
	}
	if (r->kick_probe) {
		tracefs_dynevent_destroy(r->kick_probe, true);
		tracefs_dynevent_free(r->kick_probe);
	}
	host_kvm_free(r->kvm);
	vt_meta_free(r->meta);
	free(r->events);
	free(r->traced);
	free(r->ext_files);
	free(r->dir);
	free(r);
}

void rec_unlink_raw(struct host_record *r)
{
	char path[REC_PATH_MAX];

	rec_state_unlink(r->dir);
	for (unsigned i = 0; r->cpu && i < r->nr_cpus; i++) {
		if (r->cpu[i].out_fd < 0)
			continue;	/* not ours (creation failed) */
		snprintf(path, sizeof(path), REC_RAW_FMT, r->dir, i);
		unlink(path);
	}
}

/* Stop the reader threads (they drain first) and wait for them. */
static void rec_join(struct host_record *r)
{
	char b = 1;

	if (r->stop_pipe[1] >= 0 && write(r->stop_pipe[1], &b, 1) < 0)
		vt_warn("cannot signal the reader threads: %s", strerror(errno));
	for (unsigned i = 0; r->cpu && i < r->nr_cpus; i++)
		if (r->cpu[i].started)
			pthread_join(r->cpu[i].thread, NULL);
}

static int rec_meta_start(struct host_record *r, const struct host_record_opts *o)
{
	struct utsname u;
	struct vt_meta *m = r->meta;
	char vendor[REC_VENDOR_MAX];

	uname(&u);
	/* align reads it for the TSC scaling ratio's fraction bits */
	if (!host_proc_cpu_vendor(vendor, sizeof(vendor)) &&
	    vt_meta_set(m, VT_MK_CPU_VENDOR, "%s", vendor))
		return -1;
	if (vt_meta_set(m, VT_MK_FORMAT, "trace.dat") ||
	    vt_meta_set(m, VT_MK_PRODUCER, "vmtrace-record") ||
	    vt_meta_set(m, VT_MK_DOMAIN, "%s", o->guest ? "guest" : "host") ||
	    vt_meta_set(m, VT_MK_CLOCK, "tsc") ||
	    vt_meta_set(m, VT_MK_TRACE_CLOCK, REC_TRACE_CLOCK) ||
	    vt_meta_set(m, VT_MK_HOSTNAME, "%s", u.nodename) ||
	    vt_meta_set(m, VT_MK_KERNEL, "%s %s", u.sysname, u.release) ||
	    vt_meta_set(m, VT_MK_KERNEL_VERSION, "%s", u.version) ||
	    vt_meta_set(m, VT_MK_MACHINE, "%s", u.machine) ||
	    vt_meta_set(m, VT_MK_RECORD_BUFFER_KB, "%u", o->buffer_kb) ||
	    vt_meta_set(m, VT_MK_RECORD_PAGE_SIZE, "%u", r->page_size) ||
	    vt_meta_set(m, VT_MK_RECORD_TRACEDAT, "%s", o->v6 ? REC_FORMAT_V6 : REC_FORMAT_V7) ||
	    vt_meta_set(m, VT_MK_RECORD_NR_CPUS, "%u", r->nr_cpus) ||
	    vt_meta_set(m, VT_MK_RECORD_KALLSYMS, "%s",
			o->kallsyms ? REC_KALLSYMS_ALWAYS : REC_KALLSYMS_AUTO) ||
	    vt_meta_set(m, VT_MK_RECORD_EVENTS, "%s", r->events ? r->events : ""))
		return -1;
	if (o->command && vt_meta_set(m, VT_MK_CMDLINE, "%s", o->command))
		return -1;
	if (o->command_pid > 0 && vt_meta_set(m, VT_MK_RECORD_COMMAND_PID, "%d", o->command_pid))
		return -1;
	return 0;
}

struct host_record *host_record_start(const struct host_record_opts *o)
{
	struct host_record *r;
	char name[REC_NAME_MAX], *clock;
	const char *tdir;
	int e, created;

	if (!o->out_dir || !*o->out_dir) {
		vt_err_set_code(EINVAL, "no output directory");
		return NULL;
	}
	tdir = rec_tracefs();
	if (!tdir)
		return NULL;
	if (rec_make_dir(o->out_dir, o->force, &created))
		return NULL;	/* kind: EEXIST (exists), else mkdir's */
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(o->out_dir)) || !(r->meta = vt_meta_new())) {
		vt_err_set("out of memory");
		goto fail;
	}
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
	r->last_pid_fd = -1;
	r->guest = o->guest;
	if (pipe2(r->stop_pipe, O_CLOEXEC)) {
		vt_err_errno("pipe");
		goto fail;
	}
	rec_reap_stale(tdir);
	snprintf(name, sizeof(name), "vmtrace-%d", (int)getpid());
	r->inst = tracefs_instance_create(name);
	if (!r->inst) {
		vt_err_errno("%s/instances/%s: cannot create the tracing instance", tdir, name);
		goto fail;
	}
	if (tracefs_trace_off(r->inst) < 0) {
		vt_err_errno("%s/instances/%s/tracing_on: cannot write", tdir, name);
		goto fail;
	}
	if (tracefs_instance_file_write(r->inst, "trace_clock", REC_TRACE_CLOCK) < 0 ||
	    !(clock = tracefs_instance_file_read(r->inst, "trace_clock", NULL))) {
		vt_err_errno("%s/instances/%s/trace_clock: cannot select %s", tdir, name,
			     REC_TRACE_CLOCK);
		goto fail;
	}
	e = !strstr(clock, "[" REC_TRACE_CLOCK "]");
	free(clock);
	if (e) {
		vt_err_set_code(ENODEV, "%s/instances/%s/trace_clock: the %s clock is not "
				"available here", tdir, name, REC_TRACE_CLOCK);
		goto fail;
	}
	if (o->buffer_kb && tracefs_instance_set_buffer_size(r->inst, o->buffer_kb, -1) < 0) {
		vt_err_errno("%s/instances/%s/buffer_size_kb: cannot set %u KB", tdir, name,
			     o->buffer_kb);
		goto fail;
	}
	if (tracefs_file_exists(r->inst, "buffer_percent"))
		tracefs_instance_file_write(r->inst, "buffer_percent", REC_BUFFER_PERCENT);
	rec_page_size(r);
	if (rec_enable_events(r, o))
		goto fail;
	r->pid_filtered = o->nr_pids > 0;
	r->new_after = -1;
	rec_mark_new_pids(r);
	for (int i = 0; i < o->nr_pids; i++)
		rec_task_add(r, o->pids[i]);
	rec_follow_all(r);
	r->fresh = 1;	/* the first poll looks for vCPU threads again */
	if (rec_write_filter(r))
		goto fail;
	if (o->kvm_facts || !o->guest) {
		r->kvm = host_kvm_new(NULL);
		if (!r->kvm) {
			vt_err_set("out of memory");
			goto fail;
		}
	}
	if (rec_open_cpus(r) || rec_meta_start(r, o) || rec_state_write(r, tdir, name))
		goto fail;
	r->registry_pid = getpid();
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		e = pthread_create(&r->cpu[i].thread, NULL, rec_cpu_main, &r->cpu[i]);
		if (e) {
			errno = e;
			vt_err_errno("cannot start the reader thread of cpu%u", i);
			goto fail;
		}
		r->cpu[i].started = 1;
	}
	if (r->kvm) {
		host_kvm_poll(r->kvm, r->tids, r->pid_filtered ? r->nr_live : 0, 1, 0);
		rec_extents(r, 0);
	}
	vt_meta_set_u64(r->meta, VT_MK_RECORD_START_TSC_HOST, vt_rdtsc_ordered());
	if (tracefs_trace_on(r->inst) < 0) {
		vt_err_errno("%s/instances/%s/tracing_on: cannot turn tracing on", tdir, name);
		goto fail;
	}
	return r;
fail:
	e = vt_err_code();	/* the failure's kind, kept over the clean-up */
	if (r) {
		rec_join(r);
		rec_unlink_raw(r);
		rec_free(r);
	}
	if (created)
		rmdir(o->out_dir);	/* only if still empty */
	vt_err_code_set(e);
	return NULL;
}


int host_record_stop(struct host_record *r, struct host_record_result *res)
{
	struct host_record_result dummy;
	struct vt_td_cpu_stats *cs;
	struct rusage ru;
	char **stats, *set_event;
	int ret = -1;

	if (!res)
		res = &dummy;
	tracefs_trace_off(r->inst);
	vt_meta_set_u64(r->meta, VT_MK_RECORD_STOP_TSC_HOST, vt_rdtsc_ordered());
	if (r->kvm) {
		host_kvm_poll(r->kvm, r->tids, r->pid_filtered ? r->nr_live : 0, 1, 1);
		rec_extents(r, 1);
	}
	rec_join(r);
	if (!getrusage(RUSAGE_SELF, &ru))
		vt_meta_set_u64(r->meta, VT_MK_RECORD_CPU_MS,
				(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * REC_MS_PER_S +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / REC_US_PER_MS);
	for (unsigned i = 0; i < r->nr_cpus; i++)
		if (r->cpu[i].err) {
			/* the pages the kernel still holds stay in the instance
			 * (tracing off) for `--finish DIR -o OTHERDIR` */
			vt_err_set("%s/trace.cpu%u.raw: %s (raw pages kept, the rest stays in "
				   "tracing instance %s; finish with: vmtrace record --finish %s "
				   "-o OTHERDIR)", r->dir, i, strerror(r->cpu[i].err),
				   tracefs_instance_get_name(r->inst), r->dir);
			tracefs_instance_free(r->inst);
			r->inst = NULL;
			rec_free(r);
			return -1;
		}
	stats = calloc(r->nr_cpus, sizeof(*stats));
	cs = calloc(r->nr_cpus, sizeof(*cs));
	set_event = tracefs_instance_file_read(r->inst, "set_event", NULL);
	if (!stats || !cs || !set_event) {
		vt_err_set("cannot read the instance's set_event");
		goto out;
	}
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		char file[REC_NAME_MAX];

		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", i);
		stats[i] = tracefs_instance_file_read(r->inst, file, NULL);
	}
	if (rec_discard_foreign(r, set_event) ||
	    rec_write_tracedat(r, set_event, stats, cs) || rec_meta_tsc(r) ||
	    rec_meta_end(r, stats, cs, res)) {
		vt_err_wrap("%s (raw pages kept; finish with: vmtrace record --finish %s [-o OTHERDIR])",
			    vt_err_msg(), r->dir);
		goto out;
	}
	rec_unlink_raw(r);
	ret = 0;
out:
	for (unsigned i = 0; stats && i < r->nr_cpus; i++)
		free(stats[i]);
	free(stats);
	free(cs);
	free(set_event);
	rec_free(r);
	return ret;
}
