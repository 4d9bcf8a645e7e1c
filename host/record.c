/*
 * record.c - the tracefs recorder behind `vmtrace record` (see record.h).
 *
 * The main thread sets up a private tracefs instance (trace clock
 * x86-tsc), enables the events and starts one reader thread per CPU.  A
 * reader thread only moves whole ring-buffer pages from the CPU's
 * trace_pipe_raw to a raw file in the output directory with splice(2):
 * no parsing, no allocation, no locks.  At stop the main thread drains
 * the buffers, then writes trace.dat (lib/tracedat_write.c), counting
 * events and lost events from the page headers, and vmtrace.meta.
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
#include <sys/utsname.h>
#include <unistd.h>
#include <tracefs.h>
#include "err.h"
#include "kvmfacts.h"
#include "proc.h"
#include "meta.h"
#include "record.h"
#include "tracedat.h"
#include "tsc.h"

#define REC_TRACE_CLOCK		"x86-tsc"
#define REC_RAW_FMT		"%s/trace.cpu%u.raw"
#define REC_FILE_MODE		0644
#define REC_DIR_MODE		0755
#define REC_PIPE_BYTES		(1024 * 1024)
#define REC_BUFFER_PERCENT	"50"
#define REC_COMM_MAX		16
#define REC_PROC_PATH_MAX	64
#define REC_CHILDREN_MAX	4096	/* one read of /proc/PID/task/TID/children */
#define REC_VENDOR_MAX		64
#define REC_BYTES_PER_KB	1024
#define REC_READ_ALL_START	(1 << 20)	/* first buffer of a whole-file read */
/* the UNAME option: 4 utsname fields of up to 65 bytes, separators, NUL */
#define REC_UNAME_MAX		(4 * sizeof(((struct utsname *)0)->release) + 8)
#define REC_PATH_MAX		PATH_MAX
#define REC_FILTER_MAX		4000
#define REC_NAME_MAX		64
#define REC_COMM_REFRESH_POLLS	10
#define REC_MS_PER_S		1000
#define REC_US_PER_MS		1000
#define REC_MAX_SEEN		1024	/* tasks remembered (cmdlines, meta) */
#define REC_META_VAL_ROOM	4000

/* Host defaults: KVM events that matter for latency and clocks. */
static const char *const rec_host_defaults[] = {
	"kvm:kvm_write_tsc_offset", "kvm:kvm_exit", "kvm:kvm_entry", "kvm:kvm_pio",
	"kvm:kvm_mmio", "kvm:kvm_fast_mmio", "kvm:kvm_hypercall", "kvm:kvm_msi_set_irq",
	"kvm:kvm_set_irq", "kvm:kvm_inj_virq", "kvm:kvm_apic_accept_irq",
	"kvm:kvm_userspace_exit", "kvm:kvm_pvclock_update", "kvm:kvm_update_master_clock",
	"kvm:kvm_track_tsc", "sched:sched_switch", "sched:sched_wakeup",
};

static const char *const rec_guest_defaults[] = {
	"block", "irq", "sched:sched_switch",
};

/* Systems whose events are limited to the traced pids. */
static const char *const rec_pid_systems[] = { "syscalls", "raw_syscalls" };

struct rec_cpu {
	struct host_record *rec;
	unsigned cpu;
	int in_fd;		/* per_cpu/cpuN/trace_pipe_raw */
	int out_fd;		/* DIR/trace.cpuN.raw */
	int pipe[2];
	size_t pipe_bytes;
	pthread_t thread;
	int started;
	int err;		/* errno of a failure, 0 if none */
	char *page;		/* one page for the final partial reads */
};

struct rec_task {
	pid_t tid;
	int live;		/* in the pid filter (the task still exists) */
	char comm[REC_COMM_MAX];
};

struct host_record {
	char *dir;
	int guest, kvm_facts;
	struct tracefs_instance *inst;
	unsigned nr_cpus;
	uint32_t page_size;
	struct rec_cpu *cpu;
	int stop_pipe[2];
	struct rec_task task[REC_MAX_SEEN];
	pid_t tids[HOST_RECORD_MAX_PIDS];	/* the live tasks */
	int nr_task, nr_live;
	int tasks_dropped;
	int pid_filtered;	/* pids were given: pid systems get a filter */
	int filter_dirty;
	int pid_system_on[VT_ARRAY_SIZE(rec_pid_systems)];
	unsigned polls;
	struct host_kvm *kvm;
	struct vt_meta *meta;
	char *events;		/* enabled events, as given/defaulted */
};

/* ---- reader threads (no allocation, no locks) ---- */

static int rec_move(struct rec_cpu *c, size_t n)
{
	while (n) {
		ssize_t m = splice(c->pipe[0], NULL, c->out_fd, NULL, n, SPLICE_F_MOVE);

		if (unlikely(m <= 0)) {
			if (m < 0 && errno == EINTR)
				continue;
			return m < 0 ? errno : EIO;
		}
		n -= m;
	}
	return 0;
}

/* Splice what full pages there are; 0 = none left, 1 = moved, -1 = error. */
static int rec_splice_once(struct rec_cpu *c)
{
	ssize_t n = splice(c->in_fd, NULL, c->pipe[1], NULL, c->pipe_bytes,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		c->err = errno;
		return -1;
	}
	if (n == 0)
		return 0;
	c->err = rec_move(c, n);
	return c->err ? -1 : 1;
}

/* After tracing stopped: whole pages, then the partial last page(s). */
static void rec_drain(struct rec_cpu *c)
{
	uint32_t psz = c->rec->page_size;

	while (rec_splice_once(c) > 0)
		;
	if (c->err)
		return;
	for (;;) {
		ssize_t n = read(c->in_fd, c->page, psz);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		memset(c->page + n, 0, psz - n);
		for (size_t off = 0; off < psz;) {
			ssize_t m = write(c->out_fd, c->page + off, psz - off);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				c->err = m < 0 ? errno : EIO;
				return;
			}
			off += m;
		}
	}
}

static void *rec_cpu_main(void *arg)
{
	struct rec_cpu *c = arg;
	struct pollfd pfd[2] = {
		{ .fd = c->in_fd, .events = POLLIN },
		{ .fd = c->rec->stop_pipe[0], .events = POLLIN },
	};

	for (;;) {
		if (unlikely(poll(pfd, 2, -1) < 0)) {
			if (errno == EINTR)
				continue;
			c->err = errno;
			break;
		}
		if (unlikely(pfd[1].revents))
			break;
		if (pfd[0].revents & POLLIN) {
			/* poll says "buffer_percent full": take all full pages */
			int r;

			while ((r = rec_splice_once(c)) > 0)
				;
			if (unlikely(r < 0))
				break;
		}
	}
	if (!c->err)
		rec_drain(c);
	return NULL;
}

/* ---- setup ---- */

static int rec_name_ok(const char *s)
{
	if (!*s || strlen(s) >= REC_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return 0;
	return 1;
}

static int rec_is_pid_system(const char *sys)
{
	for (size_t i = 0; i < VT_ARRAY_SIZE(rec_pid_systems); i++)
		if (!strcmp(sys, rec_pid_systems[i]))
			return (int)i;
	return -1;
}

/* Enable "SYSTEM" or "SYSTEM:EVENT"; @quiet_missing: a default, skip it. */
static int rec_enable(struct host_record *r, const char *spec, int quiet_missing)
{
	char sys[REC_NAME_MAX], file[3 * REC_NAME_MAX];
	const char *colon = strchr(spec, ':');
	const char *ev = colon ? colon + 1 : NULL;
	size_t sl = colon ? (size_t)(colon - spec) : strlen(spec);
	int ps, e;

	errno = EINVAL;	/* a bad or unknown event is a usage error */
	if (sl >= sizeof(sys))
		return vt_err_set("event '%s': system name too long", spec);
	memcpy(sys, spec, sl);
	sys[sl] = 0;
	if (!rec_name_ok(sys) || (ev && !rec_name_ok(ev)))
		return vt_err_set("event '%s': expected SYSTEM or SYSTEM:EVENT", spec);
	if (ev)
		snprintf(file, sizeof(file), "events/%s/%s/enable", sys, ev);
	else
		snprintf(file, sizeof(file), "events/%s/enable", sys);
	if (!tracefs_file_exists(r->inst, file)) {
		if (quiet_missing)
			return 0;
		errno = EINVAL;
		return vt_err_set("event '%s' not found: no %s/%.*s", spec, tracefs_tracing_dir(),
				  (int)(strlen(file) - strlen("/enable")), file);
	}
	if (tracefs_instance_file_write(r->inst, file, "1") < 0) {
		e = errno;
		vt_err_errno("cannot enable event '%s' (%s)", spec, file);
		errno = e == EINVAL ? EIO : e;
		return -1;
	}
	ps = rec_is_pid_system(sys);
	if (ps >= 0)
		r->pid_system_on[ps] = 1;
	return 0;
}

static int rec_append_event(struct host_record *r, const char *spec)
{
	size_t old = r->events ? strlen(r->events) : 0;
	char *n = realloc(r->events, old + strlen(spec) + 2);

	if (!n)
		return vt_err_set("out of memory");
	if (old)
		n[old++] = ',';
	strcpy(n + old, spec);
	r->events = n;
	return 0;
}

static int rec_enable_events(struct host_record *r, const struct host_record_opts *o)
{
	const char *const *list = o->events;
	int nr = o->nr_events, dflt = !list || !nr;

	if (dflt) {
		list = o->guest ? rec_guest_defaults : rec_host_defaults;
		nr = o->guest ? (int)VT_ARRAY_SIZE(rec_guest_defaults)
			      : (int)VT_ARRAY_SIZE(rec_host_defaults);
	}
	for (int i = 0; i < nr; i++)
		if (rec_enable(r, list[i], dflt) || rec_append_event(r, list[i]))
			return -1;
	if (dflt && o->nr_pids)
		if (rec_enable(r, "syscalls", 1) || rec_append_event(r, "syscalls"))
			return -1;
	return 0;
}

/* Rewrite the common_pid filter of the pid-limited systems. */
static int rec_write_filter(struct host_record *r)
{
	char filter[REC_FILTER_MAX], file[REC_NAME_MAX * 2];
	size_t len = 0;

	if (!r->pid_filtered)
		return 0;
	filter[0] = 0;
	for (int i = 0; i < r->nr_live; i++) {
		int n = snprintf(filter + len, sizeof(filter) - len, "%scommon_pid==%d",
				 i ? "||" : "", (int)r->tids[i]);

		if (n < 0 || (size_t)n >= sizeof(filter) - len)
			return vt_err_set("pid filter too long (%d tasks)", r->nr_live);
		len += n;
	}
	if (!r->nr_live)
		snprintf(filter, sizeof(filter), "common_pid==-1");
	for (size_t s = 0; s < VT_ARRAY_SIZE(rec_pid_systems); s++) {
		if (!r->pid_system_on[s])
			continue;
		snprintf(file, sizeof(file), "events/%s/filter", rec_pid_systems[s]);
		if (tracefs_instance_file_write(r->inst, file, filter) < 0)
			return vt_err_errno("cannot set the pid filter of %s", file);
	}
	r->filter_dirty = 0;
	return 0;
}

/* The thread name of @tid into @comm (REC_COMM_MAX bytes); @comm is kept
 * as it was when the thread is gone. */
static void rec_read_comm(pid_t tid, char *comm)
{
	char path[REC_PROC_PATH_MAX], name[REC_COMM_MAX];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	if (!host_proc_read_small(path, name, sizeof(name)))
		memcpy(comm, name, sizeof(name));
}

/* The live tasks into r->tids (what the filter and KVM facts use). */
static void rec_live_tids(struct host_record *r)
{
	r->nr_live = 0;
	for (int i = 0; i < r->nr_task; i++)
		if (r->task[i].live)
			r->tids[r->nr_live++] = r->task[i].tid;
}

static int rec_task_add(struct host_record *r, pid_t tid)
{
	struct rec_task *t = NULL;

	for (int i = 0; i < r->nr_task; i++)
		if (r->task[i].tid == tid) {
			if (r->task[i].live)
				return 0;
			t = &r->task[i];	/* the tid was reused */
			break;
		}
	if (r->nr_live >= HOST_RECORD_MAX_PIDS) {
		if (!r->tasks_dropped++)
			vt_warn("more than %d live traced threads: syscalls of the rest are not recorded",
				HOST_RECORD_MAX_PIDS);
		return 0;
	}
	/* full: reuse a slot of an ended task (there are REC_MAX_SEEN -
	 * HOST_RECORD_MAX_PIDS of them at least) */
	for (int i = 0; !t && i < r->nr_task && r->nr_task >= REC_MAX_SEEN; i++)
		if (!r->task[i].live)
			t = &r->task[i];	/* forget a task that ended */
	if (!t)
		t = &r->task[r->nr_task++];
	t->tid = tid;
	t->live = 1;
	t->comm[0] = 0;
	rec_read_comm(tid, t->comm);
	rec_live_tids(r);
	r->filter_dirty = 1;
	return 1;
}

/* Tasks that ended leave the filter (their tids may be reused). */
static void rec_prune(struct host_record *r)
{
	char path[32];
	int gone = 0;

	for (int i = 0; i < r->nr_task; i++) {
		if (!r->task[i].live)
			continue;
		snprintf(path, sizeof(path), "/proc/%d", (int)r->task[i].tid);
		if (access(path, F_OK)) {
			r->task[i].live = 0;
			gone = 1;
		}
	}
	if (gone) {
		rec_live_tids(r);
		r->filter_dirty = 1;
	}
}

/* host_proc_each_task callback: add thread @tid of @pid and its child
 * processes (/proc/PID/task/TID/children). */
static void rec_follow_task(void *arg, pid_t pid, pid_t tid)
{
	struct host_record *r = arg;
	char path[REC_PROC_PATH_MAX], buf[REC_CHILDREN_MAX];

	rec_task_add(r, tid);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	if (host_proc_read_small(path, buf, sizeof(buf)))
		return;
	for (char *p = buf, *e; *p; p = e) {
		long c = strtol(p, &e, 10);

		if (e == p)
			break;
		if (c > 0)
			rec_task_add(r, (pid_t)c);
	}
}

/* Add the threads and child processes of @pid (one level per poll). */
static void rec_follow(struct host_record *r, pid_t pid)
{
	host_proc_each_task(pid, rec_follow_task, r);
}

int host_record_add_pid(struct host_record *r, pid_t pid)
{
	rec_task_add(r, pid);
	rec_follow(r, pid);
	return r->filter_dirty ? rec_write_filter(r) : 0;
}

int host_record_poll(struct host_record *r)
{
	pid_t live[HOST_RECORD_MAX_PIDS];
	int nr = r->nr_live;

	r->polls++;
	memcpy(live, r->tids, nr * sizeof(*live));
	for (int i = 0; i < nr; i++)
		rec_follow(r, live[i]);
	if (r->polls % REC_COMM_REFRESH_POLLS == 0)
		for (int i = 0; i < r->nr_task; i++)
			if (r->task[i].live)
				rec_read_comm(r->task[i].tid, r->task[i].comm);
	if (r->kvm)
		host_kvm_poll(r->kvm, r->tids, r->pid_filtered ? r->nr_live : 0, 0);
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

/* Create the output directory (*created = 1), or empty an existing one
 * with @force. */
static int rec_make_dir(const char *dir, int force, int *created)
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
		errno = EEXIST;
		return vt_err_set("%s: exists and is not a directory", dir);
	}
	if (!force) {
		errno = EEXIST;
		return vt_err_set("%s: output directory exists (use --force to replace its trace)",
				  dir);
	}
	if (access(dir, W_OK))
		return vt_err_errno("%s: output directory not writable", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_META_FILE);
	unlink(path);
	for (unsigned i = 0;; i++) {
		snprintf(path, sizeof(path), REC_RAW_FMT, dir, i);
		if (unlink(path) && errno == ENOENT && i >= (unsigned)sysconf(_SC_NPROCESSORS_CONF))
			break;
	}
	return 0;
}

/* Remove the tracing instances "vmtrace-PID" of recorders that were killed
 * (PID gone): each holds ring buffers of every CPU until removed.  An
 * instance still in use (open files) refuses rmdir and is kept. */
static void rec_reap_stale(const char *tdir)
{
	char path[REC_PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", tdir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, "vmtrace-", 8))
			continue;
		pid = strtol(de->d_name + 8, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || pid == getpid() ||
		    !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", tdir, de->d_name);
		if (!rmdir(path))
			vt_warn("removed %s, left by a killed recorder (pid %ld)", path, pid);
	}
	closedir(d);
}

/* tracefs mounted (mount it if we may), instances writable. */
static const char *rec_tracefs(void)
{
	const char *dir = NULL;
	char path[REC_PATH_MAX];

	/* tracefs_tracing_dir() mounts tracefs when it can (and, unlike
	 * tracefs_tracing_dir_is_mounted() in libtracefs 1.6, leaks nothing) */
	dir = tracefs_tracing_dir();
	if (!dir) {
		errno = ENODEV;
		vt_err_set("tracefs is not mounted and could not be mounted; as root run: "
			   "mount -t tracefs nodev /sys/kernel/tracing");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (access(path, W_OK)) {
		int e = errno;

		vt_err_errno("%s: cannot create a tracing instance (run as root)", path);
		errno = e;
		return NULL;
	}
	return dir;
}

static int rec_page_size(struct host_record *r)
{
	long long kb;

	if (tracefs_file_exists(r->inst, "buffer_subbuf_size_kb") &&
	    !tracefs_instance_file_read_number(r->inst, "buffer_subbuf_size_kb", &kb) && kb > 0)
		r->page_size = (uint32_t)kb * REC_BYTES_PER_KB;
	else
		r->page_size = (uint32_t)getpagesize();
	return 0;
}

static int rec_open_cpus(struct host_record *r)
{
	char file[REC_NAME_MAX], path[REC_PATH_MAX];

	r->nr_cpus = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
	r->cpu = calloc(r->nr_cpus, sizeof(*r->cpu));
	if (!r->cpu) {
		r->nr_cpus = 0;
		return vt_err_set("out of memory");
	}
	for (unsigned i = 0; i < r->nr_cpus; i++)
		r->cpu[i].in_fd = r->cpu[i].out_fd = r->cpu[i].pipe[0] = r->cpu[i].pipe[1] = -1;
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		struct rec_cpu *c = &r->cpu[i];
		int sz;

		c->rec = r;
		c->cpu = i;
		snprintf(file, sizeof(file), "per_cpu/cpu%u/trace_pipe_raw", i);
		c->in_fd = tracefs_instance_file_open(r->inst, file, O_RDONLY | O_NONBLOCK);
		if (c->in_fd < 0)
			return vt_err_errno("%s/%s: cannot open",
					    tracefs_instance_get_dir(r->inst) ?: "", file);
		snprintf(path, sizeof(path), REC_RAW_FMT, r->dir, i);
		c->out_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				 REC_FILE_MODE);
		if (c->out_fd < 0)
			return vt_err_errno("%s: cannot create", path);
		if (pipe2(c->pipe, O_CLOEXEC))
			return vt_err_errno("pipe");
		fcntl(c->pipe[1], F_SETPIPE_SZ, REC_PIPE_BYTES);
		sz = fcntl(c->pipe[1], F_GETPIPE_SZ);
		c->pipe_bytes = sz > 0 ? (size_t)sz : r->page_size;
		c->page = malloc(r->page_size);
		if (!c->page)
			return vt_err_set("out of memory");
	}
	return 0;
}

static void rec_free(struct host_record *r)
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
	if (r->stop_pipe[0] >= 0)
		close(r->stop_pipe[0]);
	if (r->stop_pipe[1] >= 0)
		close(r->stop_pipe[1]);
	if (r->inst) {
		tracefs_instance_destroy(r->inst);
		tracefs_instance_free(r->inst);
	}
	host_kvm_free(r->kvm);
	vt_meta_free(r->meta);
	free(r->events);
	free(r->dir);
	free(r);
}

static void rec_unlink_raw(struct host_record *r)
{
	char path[REC_PATH_MAX];

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
	    vt_meta_set(m, "cpu.vendor", "%s", vendor))
		return -1;
	if (vt_meta_set(m, "format", "trace.dat") ||
	    vt_meta_set(m, "producer", "vmtrace-record") ||
	    vt_meta_set(m, "domain", "%s", o->guest ? "guest" : "host") ||
	    vt_meta_set(m, "clock", "tsc") ||
	    vt_meta_set(m, "trace_clock", REC_TRACE_CLOCK) ||
	    vt_meta_set(m, "hostname", "%s", u.nodename) ||
	    vt_meta_set(m, "kernel", "%s %s", u.sysname, u.release) ||
	    vt_meta_set(m, "kernel.version", "%s", u.version) ||
	    vt_meta_set(m, "machine", "%s", u.machine) ||
	    vt_meta_set(m, "record.buffer_kb", "%u", o->buffer_kb) ||
	    vt_meta_set(m, "record.page_size", "%u", r->page_size) ||
	    vt_meta_set(m, "record.nr_cpus", "%u", r->nr_cpus) ||
	    vt_meta_set(m, "record.events", "%s", r->events ? r->events : ""))
		return -1;
	if (o->command && vt_meta_set(m, "cmdline", "%s", o->command))
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
		errno = EINVAL;
		vt_err_set("no output directory");
		return NULL;
	}
	tdir = rec_tracefs();
	if (!tdir)
		return NULL;
	if (rec_make_dir(o->out_dir, o->force, &created))
		return NULL;	/* errno: EEXIST (exists), else mkdir's */
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(o->out_dir)) || !(r->meta = vt_meta_new())) {
		vt_err_set("out of memory");
		goto fail;
	}
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
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
		errno = ENODEV;
		vt_err_set("%s/instances/%s/trace_clock: the %s clock is not available here",
			   tdir, name, REC_TRACE_CLOCK);
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
	for (int i = 0; i < o->nr_pids; i++) {
		rec_task_add(r, o->pids[i]);
		rec_follow(r, o->pids[i]);
	}
	if (rec_write_filter(r))
		goto fail;
	if (o->kvm_facts || !o->guest) {
		r->kvm = host_kvm_new(NULL);
		if (!r->kvm) {
			vt_err_set("out of memory");
			goto fail;
		}
	}
	if (rec_open_cpus(r) || rec_meta_start(r, o))
		goto fail;
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		e = pthread_create(&r->cpu[i].thread, NULL, rec_cpu_main, &r->cpu[i]);
		if (e) {
			errno = e;
			vt_err_errno("cannot start the reader thread of cpu%u", i);
			goto fail;
		}
		r->cpu[i].started = 1;
	}
	if (r->kvm)
		host_kvm_poll(r->kvm, r->tids, r->pid_filtered ? r->nr_live : 0, 0);
	vt_meta_set_u64(r->meta, "record.start_tsc_host", vt_rdtsc_ordered());
	if (tracefs_trace_on(r->inst) < 0) {
		vt_err_errno("%s/instances/%s/tracing_on: cannot turn tracing on", tdir, name);
		goto fail;
	}
	return r;
fail:
	e = errno;
	if (r) {
		rec_join(r);
		rec_unlink_raw(r);
		rec_free(r);
	}
	if (created)
		rmdir(o->out_dir);	/* only if still empty */
	errno = e;
	return NULL;
}

/* ---- writing trace.dat ---- */

static char *rec_read_all(const char *path, size_t *len)
{
	size_t cap = REC_READ_ALL_START, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t m;

		if (n == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		m = read(fd, buf + n, cap - n);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			break;
		n += m;
	}
	close(fd);
	*len = n;
	return buf;
}

/* Format texts of the events of one system (list from tracefs). */
static int rec_write_formats(struct vt_td_writer *w, const char *sys, char **evs, int nr,
			     int ftrace)
{
	char **fmt = calloc(nr ? nr : 1, sizeof(*fmt));
	size_t *len = calloc(nr ? nr : 1, sizeof(*len));
	int ok = 0, ret = -1;

	if (!fmt || !len) {
		vt_err_set("out of memory");
		goto out;
	}
	for (int i = 0; i < nr; i++) {
		int l = 0;

		fmt[ok] = tracefs_event_file_read(NULL, sys, evs[i], "format", &l);
		if (!fmt[ok] || l <= 0) {
			free(fmt[ok]);
			fmt[ok] = NULL;
			continue;
		}
		len[ok++] = l;
	}
	ret = ftrace ? vt_td_write_ftrace_formats(w, ok, (const char *const *)fmt, len)
		     : vt_td_write_system(w, sys, ok, (const char *const *)fmt, len);
out:
	for (int i = 0; fmt && i < nr; i++)
		free(fmt[i]);
	free(fmt);
	free(len);
	return ret;
}

/* The "sys:event" lines of set_event, grouped by system: writes the
 * systems section.  @set_event is cut into lines in place. */
static int rec_write_systems(struct vt_td_writer *w, char *set_event)
{
	char **sys = NULL, **evs = NULL, **line = NULL;
	int nsys = 0, nline = 0, ret = -1;

	for (char *p = set_event, *e; *p; p = e) {
		e = strchr(p, '\n');
		if (e)
			*e++ = 0;
		else
			e = p + strlen(p);
		if (strchr(p, ':') && !(line = tracefs_list_add(line, p)))
			goto oom;
	}
	nline = line ? tracefs_list_size(line) : 0;
	for (int i = 0; i < nline; i++) {
		char *c = strchr(line[i], ':');
		int known = 0;

		*c = 0;
		for (int j = 0; j < nsys; j++)
			known |= !strcmp(sys[j], line[i]);
		if (!known) {
			if (!(sys = tracefs_list_add(sys, line[i])))
				goto oom;
			nsys++;
		}
		*c = ':';
	}
	if (vt_td_systems_begin(w, nsys))
		goto out;
	for (int s = 0; s < nsys; s++) {
		size_t sl = strlen(sys[s]);
		int nev = 0;

		for (int i = 0; i < nline; i++)
			if (!strncmp(line[i], sys[s], sl) && line[i][sl] == ':') {
				if (!(evs = tracefs_list_add(evs, line[i] + sl + 1)))
					goto oom;
				nev++;
			}
		if (rec_write_formats(w, sys[s], evs, nev, 0))
			goto out;
		tracefs_list_free(evs);
		evs = NULL;
	}
	ret = 0;
	goto out;
oom:
	vt_err_set("out of memory");
out:
	tracefs_list_free(evs);
	tracefs_list_free(line);
	tracefs_list_free(sys);
	return ret;
}

static int rec_cmdline_has(const pid_t *pids, int nr, pid_t pid)
{
	for (int i = 0; i < nr; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

/* Our pid->comm map first (vCPU threads, traced tasks), then the lines of
 * the kernel's saved_cmdlines for other pids.  NULL when out of memory. */
static char *rec_cmdlines(struct host_record *r, size_t *lenp)
{
	char *saved = tracefs_instance_file_read(NULL, "saved_cmdlines", NULL);
	int nthr = r->kvm ? host_kvm_nr_threads(r->kvm) : 0, nr = 0;
	size_t cap = (saved ? strlen(saved) : 0) +
		     (size_t)(r->nr_task + nthr) * (REC_COMM_MAX + 16) + 2;
	pid_t *mine = calloc(r->nr_task + nthr + 1, sizeof(*mine));
	char *out = malloc(cap);
	size_t len = 0;

	if (!out || !mine) {
		free(out);
		free(mine);
		free(saved);
		return NULL;
	}
	for (int i = 0; i < nthr; i++) {
		mine[nr] = host_kvm_thread_tid(r->kvm, i);
		len += snprintf(out + len, cap - len, "%d %.15s\n", (int)mine[nr++],
				host_kvm_thread_comm(r->kvm, i));
	}
	for (int i = 0; i < r->nr_task; i++) {
		if (!r->task[i].comm[0] || rec_cmdline_has(mine, nr, r->task[i].tid))
			continue;
		mine[nr] = r->task[i].tid;
		len += snprintf(out + len, cap - len, "%d %s\n", (int)mine[nr++],
				r->task[i].comm);
	}
	for (char *p = saved, *e; p && *p; p = e) {
		int pid = atoi(p);

		e = strchr(p, '\n');
		e = e ? e + 1 : p + strlen(p);
		if (pid <= 0 || rec_cmdline_has(mine, nr, pid))
			continue;
		memcpy(out + len, p, e - p);
		len += e - p;
		if (out[len - 1] != '\n')
			out[len++] = '\n';
	}
	out[len] = 0;
	free(mine);
	free(saved);
	*lenp = len;
	return out;
}

static int rec_options(struct host_record *r, struct vt_td_writer *w, char **stats)
{
	char buf[REC_UNAME_MAX], *clock;
	struct utsname u;
	int ret;

	clock = tracefs_instance_file_read(r->inst, "trace_clock", NULL);
	if (!clock)
		return vt_err_errno("cannot read trace_clock");
	ret = vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock, strlen(clock) + 1);
	free(clock);
	if (ret)
		return -1;
	uname(&u);
	snprintf(buf, sizeof(buf), "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
	if (vt_td_add_option(w, VT_TD_OPT_UNAME, buf, strlen(buf) + 1))
		return -1;
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		char *s;

		if (asprintf(&s, "CPU: %u\n%s", i, stats[i] ? stats[i] : "") < 0)
			return vt_err_set("out of memory");
		ret = vt_td_add_option(w, VT_TD_OPT_CPUSTAT, s, strlen(s) + 1);
		free(s);
		if (ret)
			return -1;
	}
	return 0;
}

static uint64_t rec_stat_field(const char *stats, const char *name)
{
	const char *p = stats ? strstr(stats, name) : NULL;

	return p ? strtoull(p + strlen(name), NULL, 10) : 0;
}

static int rec_write_tracedat(struct host_record *r, char *set_event, char **stats,
			      struct vt_td_cpu_stats *cs)
{
	char path[REC_PATH_MAX], *hp = NULL, *he = NULL, *ks = NULL, *pk = NULL, *cl = NULL;
	char **ftrace = NULL;
	int hpl = 0, hel = 0, pkl = 0, ret = -1, *fds = NULL;
	size_t ksl = 0, cll = 0;
	struct vt_td_writer *w;

	snprintf(path, sizeof(path), "%s/%s", r->dir, VT_TD_FILE);
	w = vt_td_create(path, r->page_size);
	if (!w)
		return -1;
	hp = tracefs_instance_file_read(NULL, "events/header_page", &hpl);
	he = tracefs_instance_file_read(NULL, "events/header_event", &hel);
	if (!hp || !he) {
		vt_err_errno("%s: cannot read events/header_page/header_event", tracefs_tracing_dir());
		goto out;
	}
	if (vt_td_write_headers(w, hp, hpl, he, hel))
		goto out;
	ftrace = tracefs_system_events(NULL, "ftrace");
	if (rec_write_formats(w, "ftrace", ftrace, ftrace ? tracefs_list_size(ftrace) : 0, 1) ||
	    rec_write_systems(w, set_event))
		goto out;
	ks = rec_read_all("/proc/kallsyms", &ksl);
	if (vt_td_write_kallsyms(w, ks ? ks : "", ks ? ksl : 0))
		goto out;
	pk = tracefs_instance_file_read(NULL, "printk_formats", &pkl);
	if (vt_td_write_printk(w, pk ? pk : "", pk && pkl > 0 ? pkl : 0))
		goto out;
	cl = rec_cmdlines(r, &cll);
	if (!cl) {
		vt_err_set("out of memory");
		goto out;
	}
	if (vt_td_write_cmdlines(w, cl, cll) || rec_options(r, w, stats))
		goto out;
	fds = calloc(r->nr_cpus, sizeof(*fds));
	if (!fds) {
		vt_err_set("out of memory");
		goto out;
	}
	for (unsigned i = 0; i < r->nr_cpus; i++)
		fds[i] = r->cpu[i].out_fd;
	if (vt_td_write_cpu_data(w, r->nr_cpus, fds, cs))
		goto out;
	ret = vt_td_close(w);
	w = NULL;
out:
	if (w)
		vt_td_abort(w);
	free(fds);
	free(hp);
	free(he);
	free(ks);
	free(pk);
	free(cl);
	tracefs_list_free(ftrace);
	return ret;
}

static int rec_meta_end(struct host_record *r, char **stats, const struct vt_td_cpu_stats *cs,
			struct host_record_result *res)
{
	struct vt_meta *m = r->meta;
	char key[VT_META_KEY_MAX];

	memset(res, 0, sizeof(*res));
	res->nr_cpus = r->nr_cpus;
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		uint64_t overrun = rec_stat_field(stats[i], "overrun: ");
		uint64_t dropped = rec_stat_field(stats[i], "dropped events: ");
		/* pages read by splice carry a "lost" flag but rarely the count:
		 * the ring buffer's own counters give it */
		uint64_t lost = cs[i].lost > overrun + dropped ? cs[i].lost : overrun + dropped;

		res->events += cs[i].events;
		res->lost += lost;
		res->lost_pages += cs[i].lost_unknown;
		res->bytes += cs[i].bytes;
		if (i < HOST_RECORD_REPORT_CPUS)
			res->lost_cpu[i] = lost;
		snprintf(key, sizeof(key), "events.cpu%u", i);
		vt_meta_set_u64(m, key, cs[i].events);
		snprintf(key, sizeof(key), "lost.cpu%u", i);
		vt_meta_set_u64(m, key, lost);
		snprintf(key, sizeof(key), "lost_pages.cpu%u", i);
		vt_meta_set_u64(m, key, cs[i].lost_unknown);
		snprintf(key, sizeof(key), "overrun.cpu%u", i);
		vt_meta_set_u64(m, key, overrun);
		snprintf(key, sizeof(key), "dropped.cpu%u", i);
		vt_meta_set_u64(m, key, dropped);
	}
	vt_meta_set_u64(m, "events.total", res->events);
	vt_meta_set_u64(m, "lost.total", res->lost);
	vt_meta_set_u64(m, "lost_pages.total", res->lost_pages);
	vt_meta_set_u64(m, "record.data_bytes", res->bytes);
	if (r->nr_task) {
		char buf[REC_META_VAL_ROOM + 16];
		size_t len = 0;

		buf[0] = 0;
		for (int i = 0; i < r->nr_task && len < REC_META_VAL_ROOM; i++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "",
					(int)r->task[i].tid);
		if (len >= REC_META_VAL_ROOM)
			snprintf(buf + REC_META_VAL_ROOM, sizeof(buf) - REC_META_VAL_ROOM, ",...");
		vt_meta_set(m, "record.pids", "%s", buf);
	}
	if (r->kvm && host_kvm_to_meta(r->kvm, m))
		return -1;
	return vt_meta_write_dir(m, r->dir);
}

/* tsc.hz / tsc.hz_source: decided once, by lib/tsc.c (after tracing, so
 * its calibration sleep costs nothing to the recording). */
static int rec_meta_tsc(struct host_record *r)
{
	struct vt_tsc_freq f;

	if (vt_tsc_freq(&f) || !f.hz) {
		vt_warn("TSC frequency unknown (%s): tsc.hz not in %s/%s", vt_err_msg(), r->dir,
			VT_META_FILE);
		return 0;
	}
	return vt_tsc_meta_set(r->meta, &f);
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
	vt_meta_set_u64(r->meta, "record.stop_tsc_host", vt_rdtsc_ordered());
	if (r->kvm)
		host_kvm_poll(r->kvm, r->tids, r->pid_filtered ? r->nr_live : 0, 1);
	rec_join(r);
	if (!getrusage(RUSAGE_SELF, &ru))
		vt_meta_set_u64(r->meta, "record.cpu_ms",
				(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * REC_MS_PER_S +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / REC_US_PER_MS);
	for (unsigned i = 0; i < r->nr_cpus; i++)
		if (r->cpu[i].err) {
			vt_err_set("%s/trace.cpu%u.raw: %s (raw pages kept)", r->dir, i,
				   strerror(r->cpu[i].err));
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
	if (rec_write_tracedat(r, set_event, stats, cs) || rec_meta_tsc(r) ||
	    rec_meta_end(r, stats, cs, res))
		goto out;
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
