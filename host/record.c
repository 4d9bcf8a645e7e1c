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
#define REC_READ_ALL_MAX	UINT32_MAX	/* a whole-file read (kallsyms: a u32 size in trace.dat) */
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
/* Recovery of an interrupted recording (`vmtrace record --finish DIR`):
 * DIR/record.state (the metadata known at start + how to find the tracefs
 * instance) and DIR/record.events (the instance's set_event) exist while a
 * recording runs and stay when it is killed or fails; REC_REGISTRY_DIR
 * maps a recorder pid to its DIR for the stale-instance reaper. */
#define REC_STATE_FILE		"record.state"
#define REC_EVENTS_FILE		"record.events"
#define REC_REGISTRY_DIR	"/run/vmtrace"
#define REC_REGISTRY_FMT	REC_REGISTRY_DIR "/record-%d"
#define REC_REGISTRY_MODE	0700
#define REC_INSTANCE_PREFIX	"vmtrace-"
#define REC_BOOT_ID_PATH	"/proc/sys/kernel/random/boot_id"
#define REC_BOOT_ID_MAX		64
#define REC_CLOCK_FALLBACK	"[" "x86-tsc" "]"
#define REC_COPY_CHUNK		(1 << 20)
#define REC_DRAIN_SPARE_PAGES	2

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

/* A guest's virtio kicks: no tracepoint exists, so the guest defaults add a
 * kprobe on virtqueue_notify (virtio_ring), which merge links to the host
 * exit the kick causes (merge/flow.c). */
#define REC_KICK_SYSTEM	"vmtrace"
#define REC_KICK_EVENT	"virtqueue_notify"

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
	pid_t registry_pid;	/* registry entry to remove with the instance */
	struct tracefs_dynevent *kick_probe;	/* made by us: removed at the end */
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

/* Probe the guest's virtio kicks (quietly absent when the kernel has no
 * kprobes or virtio_ring is not loaded); a probe left by another recorder
 * is used as it is. */
static void rec_kick_probe(struct host_record *r)
{
	struct tracefs_dynevent *kp;

	if (!tracefs_file_exists(NULL, "events/" REC_KICK_SYSTEM "/" REC_KICK_EVENT)) {
		kp = tracefs_kprobe_alloc(REC_KICK_SYSTEM, REC_KICK_EVENT, REC_KICK_EVENT, NULL);
		if (!kp)
			return;
		if (tracefs_dynevent_create(kp) < 0) {
			tracefs_dynevent_free(kp);
			return;
		}
		r->kick_probe = kp;
	}
	if (rec_enable(r, REC_KICK_SYSTEM ":" REC_KICK_EVENT, 1) == 0)
		rec_append_event(r, REC_KICK_SYSTEM ":" REC_KICK_EVENT);
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
	if (dflt && o->guest)
		rec_kick_probe(r);
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
	rec_state_unlink(dir);
	for (unsigned i = 0;; i++) {
		snprintf(path, sizeof(path), REC_RAW_FMT, dir, i);
		if (unlink(path) && errno == ENOENT && i >= (unsigned)sysconf(_SC_NPROCESSORS_CONF))
			break;
	}
	return 0;
}

/* ---- interrupted recordings: state, registry, draining ---- */

static void rec_registry_path(char *path, size_t len, pid_t pid)
{
	snprintf(path, len, REC_REGISTRY_FMT, (int)pid);
}

/* Remember that @pid records into @dir (absolute): the reaper of a later
 * recorder finds the directory of a killed one here.  Best effort: 0 if
 * the entry was written. */
static int rec_registry_add(pid_t pid, const char *dir)
{
	char path[REC_PATH_MAX], abs[REC_PATH_MAX];
	struct stat st;

	if (!realpath(dir, abs))
		return -1;
	if (mkdir(REC_REGISTRY_DIR, REC_REGISTRY_MODE) && errno != EEXIST)
		return -1;
	if (lstat(REC_REGISTRY_DIR, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -1;	/* not ours: never write through it */
	rec_registry_path(path, sizeof(path), pid);
	if (vt_file_write_atomic(path, abs, strlen(abs), REC_FILE_MODE, 0)) {
		vt_warn("%s: cannot record the output directory (%s)", path, vt_err_msg());
		return -1;
	}
	return 0;
}

static void rec_registry_del(pid_t pid)
{
	char path[REC_PATH_MAX];

	rec_registry_path(path, sizeof(path), pid);
	unlink(path);
}

/* The output directory a (killed) recorder @pid registered, into @dir. */
static int rec_registry_get(pid_t pid, char *dir, size_t len)
{
	char path[REC_PATH_MAX];

	rec_registry_path(path, sizeof(path), pid);
	return host_proc_read_small(path, dir, len);
}

/* The state file of @dir if it belongs to the recorder @pid with instance
 * @inst (NULL: any); NULL otherwise (or when @dir holds a trace.dat). */
static struct vt_meta *rec_state_of(const char *dir, pid_t pid, const char *inst)
{
	char path[REC_PATH_MAX];
	struct vt_meta *m;
	uint64_t v;
	const char *name;

	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	if (!access(path, F_OK))
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, REC_STATE_FILE);
	m = vt_meta_read(path);
	if (!m)
		return NULL;
	name = vt_meta_get(m, "record.instance");
	if (vt_meta_get_u64(m, "record.pid", &v) || (pid > 0 && v != (uint64_t)pid) || !name ||
	    (inst && strcmp(name, inst))) {
		vt_meta_free(m);
		return NULL;
	}
	return m;
}

/* Write DIR/record.state and DIR/record.events (and the registry entry)
 * once the instance is set up: what `--finish` needs if we are killed. */
static int rec_state_write(struct host_record *r, const char *tdir, const char *name)
{
	char path[REC_PATH_MAX], boot[REC_BOOT_ID_MAX];
	struct vt_meta *m = vt_meta_new();
	char *set_event = tracefs_instance_file_read(r->inst, "set_event", NULL);
	int ret = -1;

	if (!m || !set_event) {
		vt_err_set("%s/instances/%s/set_event: cannot read", tdir, name);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", r->dir, REC_EVENTS_FILE);
	if (vt_file_write_atomic(path, set_event, strlen(set_event), REC_FILE_MODE, 0))
		goto out;
	for (int i = 0; i < vt_meta_count(r->meta); i++)
		if (vt_meta_set(m, vt_meta_key(r->meta, i), "%s", vt_meta_val(r->meta, i)))
			goto out;
	if (host_proc_read_small(REC_BOOT_ID_PATH, boot, sizeof(boot)))
		boot[0] = 0;
	boot[strcspn(boot, "\n")] = 0;
	/* record.registry=1: the registry entry goes only with the instance */
	if (vt_meta_set(m, "record.pid", "%d", (int)getpid()) ||
	    vt_meta_set(m, "record.instance", "%s", name) ||
	    vt_meta_set(m, "record.tracefs", "%s", tdir) ||
	    (boot[0] && vt_meta_set(m, "record.boot_id", "%s", boot)) ||
	    (!rec_registry_add(getpid(), r->dir) && vt_meta_set(m, "record.registry", "1")))
		goto out;
	snprintf(path, sizeof(path), "%s/%s", r->dir, REC_STATE_FILE);
	if (vt_meta_write(m, path))
		goto out;
	ret = 0;
out:
	free(set_event);
	vt_meta_free(m);
	return ret;
}

/* A numeric field of a per_cpu/cpuN/stats text (0 if absent). */
static uint64_t rec_stat_field(const char *stats, const char *name);

/*
 * Move what the ring buffers of @inst still hold to @dir/trace.cpuN.raw
 * (appended after the whole pages already there; a torn last page is cut
 * off first), tracing off.  @stats[i] (may be NULL) get the per-CPU stats
 * read before.  Checks first that @dir has room for all of it: then
 * nothing is drained (the pages stay in the kernel) and the message names
 * @dir.  -1 with a message on failure.
 */
static int rec_drain_instance(struct tracefs_instance *inst, const char *dir, unsigned nr_cpus,
			      uint32_t page_size, char **stats)
{
	struct host_record fake = { .page_size = page_size };
	char file[REC_NAME_MAX], path[REC_PATH_MAX];
	uint64_t need = 0;
	struct statvfs vfs;

	tracefs_trace_off(inst);
	for (unsigned i = 0; i < nr_cpus; i++) {
		char *st;

		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", i);
		st = tracefs_instance_file_read(inst, file, NULL);
		/* "bytes": event bytes still unread; plus page headers, a
		 * partial page and a torn one cut off */
		need += (rec_stat_field(st, "bytes: ") / (page_size - VT_TD_PAGE_HDR_SIZE) +
			 REC_DRAIN_SPARE_PAGES) * page_size;
		if (stats)
			stats[i] = st;
		else
			free(st);
	}
	if (statvfs(dir, &vfs))
		return vt_err_errno("%s: cannot check the free space", dir);
	if ((uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
		errno = ENOSPC;
		return vt_err_set("%s: %s: %llu bytes free, the tracing instance %s holds up to "
				  "%llu: nothing drained (the pages stay in the kernel); finish "
				  "into another directory with --finish DIR -o OTHERDIR", dir,
				  strerror(ENOSPC), (unsigned long long)vfs.f_bavail * vfs.f_frsize,
				  tracefs_instance_get_name(inst), (unsigned long long)need);
	}
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct rec_cpu c = { .rec = &fake, .cpu = i, .pipe = { -1, -1 } };
		struct stat sb;
		int ok = 0;

		snprintf(file, sizeof(file), "per_cpu/cpu%u/trace_pipe_raw", i);
		snprintf(path, sizeof(path), REC_RAW_FMT, dir, i);
		c.in_fd = tracefs_instance_file_open(inst, file, O_RDONLY | O_NONBLOCK);
		c.out_fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, REC_FILE_MODE);
		c.page = malloc(page_size);
		if (c.in_fd < 0 || c.out_fd < 0 || !c.page || pipe2(c.pipe, O_CLOEXEC) ||
		    fstat(c.out_fd, &sb) ||
		    ftruncate(c.out_fd, sb.st_size - sb.st_size % page_size) ||
		    lseek(c.out_fd, 0, SEEK_END) < 0) {
			vt_err_errno("%s: cannot drain cpu%u of the tracing instance into it",
				     c.out_fd < 0 || c.in_fd >= 0 ? path : file, i);
		} else {
			int sz;

			fcntl(c.pipe[1], F_SETPIPE_SZ, REC_PIPE_BYTES);
			sz = fcntl(c.pipe[1], F_GETPIPE_SZ);
			c.pipe_bytes = sz > 0 ? (size_t)sz : page_size;
			rec_drain(&c);
			if (c.err)
				vt_err_set("%s: %s (draining cpu%u)", path, strerror(c.err), i);
			else if (fsync(c.out_fd))
				vt_err_errno("%s: fsync failed", path);
			else
				ok = 1;
		}
		if (c.in_fd >= 0)
			close(c.in_fd);
		if (c.out_fd >= 0)
			close(c.out_fd);
		if (c.pipe[0] >= 0)
			close(c.pipe[0]);
		if (c.pipe[1] >= 0)
			close(c.pipe[1]);
		free(c.page);
		if (!ok)
			return -1;
	}
	return 0;
}

/*
 * Remove the tracing instances "vmtrace-PID" of recorders that were killed
 * (PID gone): each holds ring buffers of every CPU until removed.  When
 * the killed recorder's directory (registry) is not finished yet, the
 * buffered pages are first drained into its raw files (then `--finish
 * DIR` makes the trace.dat); if that fails (no room) the instance is kept
 * and the warning says how to finish it.  An instance still in use (open
 * files) refuses rmdir and is kept.
 */
static void rec_reap_stale(const char *tdir)
{
	char path[REC_PATH_MAX + REC_NAME_MAX], dir[REC_PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", tdir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct tracefs_instance *inst;
		struct vt_meta *st = NULL;
		uint64_t ncpu = 0, psz = 0;
		char *end;
		long pid;

		if (strncmp(de->d_name, REC_INSTANCE_PREFIX, strlen(REC_INSTANCE_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(REC_INSTANCE_PREFIX), &end, 10);
		/* an instance named after our own pid is stale: ours is not made yet */
		if (*end || pid <= 0 || pid > INT_MAX ||
		    (pid != getpid() && (!kill((pid_t)pid, 0) || errno != ESRCH)))
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", tdir, de->d_name);
		if (!rec_registry_get((pid_t)pid, dir, sizeof(dir)))
			st = rec_state_of(dir, (pid_t)pid, de->d_name);
		if (st && !vt_meta_get_u64(st, "record.nr_cpus", &ncpu) &&
		    !vt_meta_get_u64(st, "record.page_size", &psz) && ncpu && psz &&
		    (inst = tracefs_instance_alloc(NULL, de->d_name))) {
			int e = rec_drain_instance(inst, dir, (unsigned)ncpu, (uint32_t)psz, NULL);

			tracefs_instance_free(inst);
			if (e) {
				vt_warn("kept %s of the killed recorder (pid %ld): %s; run: vmtrace "
					"record --finish %s", path, pid, vt_err_msg(), dir);
				vt_meta_free(st);
				continue;
			}
			vt_warn("saved the buffered pages of the killed recorder (pid %ld) into %s; "
				"make its trace.dat with: vmtrace record --finish %s", pid, dir, dir);
			snprintf(path, sizeof(path), "%s/%s", dir, REC_STATE_FILE);
			if (vt_meta_set(st, "record.salvaged_by", "%d", (int)getpid()) ||
			    vt_meta_write(st, path))
				vt_warn("%s", vt_err_msg());
			snprintf(path, sizeof(path), "%s/instances/%s", tdir, de->d_name);
		}
		vt_meta_free(st);
		if (!rmdir(path)) {
			vt_warn("removed %s, left by a killed recorder (pid %ld)", path, pid);
			rec_registry_del((pid_t)pid);
		}
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
	free(r->dir);
	free(r);
}

static void rec_unlink_raw(struct host_record *r)
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

	clock = r->inst ? tracefs_instance_file_read(r->inst, "trace_clock", NULL)
			: strdup(REC_CLOCK_FALLBACK);
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
	ks = vt_file_read_all("/proc/kallsyms", REC_READ_ALL_MAX, &ksl);
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

		if (cs[i].bad_pages)
			vt_warn("%s: cpu%u: %llu malformed ring-buffer pages (the first at byte %llu "
				"of its data), kept as they are", r->dir, i,
				(unsigned long long)cs[i].bad_pages,
				(unsigned long long)cs[i].first_bad);
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
	if (rec_write_tracedat(r, set_event, stats, cs) || rec_meta_tsc(r) ||
	    rec_meta_end(r, stats, cs, res)) {
		char msg[REC_PATH_MAX];

		snprintf(msg, sizeof(msg), "%s", vt_err_msg());
		vt_err_set("%s (raw pages kept; finish with: vmtrace record --finish %s [-o OTHERDIR])",
			   msg, r->dir);
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

/* ---- `vmtrace record --finish DIR`: recover an interrupted recording ---- */

/* Copy the whole pages of @src to @dst (created, O_EXCL|O_NOFOLLOW). */
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
		errno = EINVAL;
		return vt_err_set("%s: no %s: not an interrupted recording%s", dir, REC_STATE_FILE,
				  access(path, F_OK) ? "" : " (its trace.dat is complete)");
	}
	st = rec_state_of(dir, 0, NULL);
	if (!st) {
		errno = EINVAL;
		snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
		if (!access(path, F_OK))
			return vt_err_set("%s: already has a trace.dat: nothing to finish", dir);
		return vt_err_set("%s/%s: unreadable or incomplete (%s)", dir, REC_STATE_FILE,
				  vt_err_msg());
	}
	name = vt_meta_get(st, "record.instance");
	if (vt_meta_get_u64(st, "record.pid", &pid) ||
	    vt_meta_get_u64(st, "record.nr_cpus", &ncpu) || !ncpu || ncpu > INT_MAX ||
	    vt_meta_get_u64(st, "record.page_size", &psz) || psz < 2 * VT_TD_PAGE_HDR_SIZE ||
	    psz > UINT32_MAX || (psz & (psz - 1))) {
		errno = EINVAL;
		vt_err_set("%s/%s: record.pid, record.nr_cpus or record.page_size missing or bad",
			   dir, REC_STATE_FILE);
		goto out;
	}
	if (rec_recorder_alive((pid_t)pid)) {
		errno = EBUSY;
		vt_err_set("%s: its recorder (pid %llu) is still running: stop it (kill -INT %llu)",
			   dir, (unsigned long long)pid, (unsigned long long)pid);
		goto out;
	}
	if (!(tdir = rec_tracefs()))
		goto out;
	if (host_proc_read_small(REC_BOOT_ID_PATH, boot, sizeof(boot)))
		boot[0] = 0;
	boot[strcspn(boot, "\n")] = 0;
	oldboot = vt_meta_get(st, "record.boot_id");
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
	salvaged = vt_meta_get(r->meta, "record.salvaged_by");
	/* instance and registry entry gone in the same boot, no reaper
	 * involved: the recorder removed its instance itself, which it does
	 * only once every page is in the raw files (it failed after that) */
	rec_registry_path(path, sizeof(path), (pid_t)pid);
	if (!drained && !salvaged && vt_meta_get(r->meta, "record.registry") && oldboot &&
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
	if (vt_meta_set(r->meta, "record.recovered", "1") ||
	    vt_meta_set(r->meta, "record.recover_reason", "%s", reason) ||
	    vt_meta_set(r->meta, "record.recover_instance", "%s",
			drained ? "drained" : salvaged ? "salvaged" :
			self_drained ? "drained_by_recorder" : "gone")) {
		goto out;
	}
	vt_meta_del(r->meta, "record.instance");
	vt_meta_del(r->meta, "record.tracefs");
	if (rec_write_tracedat(r, set_event, stats, cs)) {
		if (errno == ENOSPC) {
			char msg[REC_PATH_MAX];

			snprintf(msg, sizeof(msg), "%s", vt_err_msg());
			vt_err_set("%s; the pages are kept in %s/trace.cpuN.raw: finish elsewhere "
				   "with --finish %s -o OTHERDIR", msg, work, work);
			errno = ENOSPC;
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
