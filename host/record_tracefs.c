/*
 * record_tracefs.c - the recorder's tracefs setup (record_int.h): finding
 * or mounting tracefs, enabling the events (the host and guest defaults,
 * the guest's virtio kick probe), the common_pid filter of the pid-limited
 * systems and the traced tasks it follows, the page size and the per-CPU
 * files.  Main thread only; allocates.
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

/* Host defaults: KVM events that matter for latency and clocks. */
static const char *const rec_host_defaults[] = {
	"kvm:kvm_write_tsc_offset", "kvm:kvm_exit", "kvm:kvm_entry", "kvm:kvm_pio",
	"kvm:kvm_mmio", "kvm:kvm_fast_mmio", "kvm:kvm_hypercall", "kvm:kvm_msi_set_irq",
	"kvm:kvm_set_irq", "kvm:kvm_inj_virq", "kvm:kvm_apic_accept_irq",
	"kvm:kvm_userspace_exit", "kvm:kvm_pvclock_update", "kvm:kvm_update_master_clock",
	"kvm:kvm_track_tsc", "sched:sched_switch", "sched:sched_wakeup",
	/* QEMU's aio=io_uring operations: submit (opcode, user_data; the
	 * event is io_uring_submit_sqe before Linux 6.4) and completion
	 * (user_data, res); docs/report.md */
	"io_uring:io_uring_submit_req", "io_uring:io_uring_submit_sqe",
	"io_uring:io_uring_complete",
	/* the host block layer: a bio queued by QEMU's submission (io_submit,
	 * io_uring) names its disk bytes, which Linux AIO's and io_uring's
	 * events do not; the request's completion ends it (docs/report.md) */
	"block:block_bio_queue", "block:block_rq_complete",
};

static const char *const rec_guest_defaults[] = {
	"block", "irq", "sched:sched_switch", "sched:sched_wakeup",
};

/* A guest's virtio kicks: no tracepoint exists, so the guest defaults add a
 * kprobe on virtqueue_notify (virtio_ring), which merge links to the host
 * exit the kick causes (merge/flow.c). */
#define REC_KICK_SYSTEM	"vmtrace"
#define REC_KICK_EVENT	"virtqueue_notify"

/* Systems whose events are limited to the traced pids. */
static const char *const rec_pid_systems[REC_NR_PID_SYSTEMS] = { "syscalls", "raw_syscalls" };

#define REC_CHILDREN_MAX	4096	/* one read of /proc/PID/task/TID/children */
#define REC_BYTES_PER_KB	1024
#define REC_FILTER_MAX		4000
/* Pids the kernel may hand out between two polls (50 ms), system-wide */
#define REC_NEW_PID_WINDOW	4096
#define REC_PID_RESERVED	300	/* the kernel's RESERVED_PIDS: where pids wrap to */
#define REC_LAST_PID_PATH	"/proc/sys/kernel/ns_last_pid"
#define REC_PID_MAX_PATH	"/proc/sys/kernel/pid_max"
#define REC_FORK_ENABLE		"events/" REC_FORK_EVENT "/enable"
#define REC_FOLLOW_ROUNDS	64	/* generations of descendants per follow */
#define REC_TRACED_MIN_BYTES	(32768 / 8)	/* the traced-tid bitmap at first */

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
	int ps;

	/* a bad or unknown event is a usage error (EINVAL) */
	if (sl >= sizeof(sys))
		return vt_err_set_code(EINVAL, "event '%s': system name too long", spec);
	memcpy(sys, spec, sl);
	sys[sl] = 0;
	if (!rec_name_ok(sys) || (ev && !rec_name_ok(ev)))
		return vt_err_set_code(EINVAL, "event '%s': expected SYSTEM or SYSTEM:EVENT", spec);
	if (ev)
		snprintf(file, sizeof(file), "events/%s/%s/enable", sys, ev);
	else
		snprintf(file, sizeof(file), "events/%s/enable", sys);
	if (!tracefs_file_exists(r->inst, file)) {
		if (quiet_missing)
			return 0;
		return vt_err_set_code(EINVAL, "event '%s' not found: no %s/%.*s", spec,
				       tracefs_tracing_dir(),
				       (int)(strlen(file) - strlen("/enable")), file);
	}
	if (tracefs_instance_file_write(r->inst, file, "1") < 0) {
		vt_err_errno("cannot enable event '%s' (%s)", spec, file);
		/* the kernel's EINVAL here is no usage error */
		return vt_err_code() == EINVAL ? vt_err_code_set(EIO) : -1;
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

/* The tasks traced ones start, for rec_discard_foreign: sched_process_fork
 * (quietly absent on a kernel without it), unless the user's events have
 * it already (it then stays unfiltered and is kept). */
static void rec_enable_fork(struct host_record *r)
{
	long long on = 0;

	if (!tracefs_file_exists(r->inst, REC_FORK_ENABLE) ||
	    (!tracefs_instance_file_read_number(r->inst, REC_FORK_ENABLE, &on) && on))
		return;
	if (tracefs_instance_file_write(r->inst, REC_FORK_ENABLE, "1") > 0)
		r->fork_ours = 1;
}

int rec_enable_events(struct host_record *r, const struct host_record_opts *o)
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
	if (o->nr_pids && (r->pid_system_on[0] || r->pid_system_on[1]))
		rec_enable_fork(r);
	if (dflt && o->guest)
		rec_kick_probe(r);
	return 0;
}

/* The new-pid window of the filter into @buf: tids the kernel hands out
 * after r->new_after ("" when there is none). */
static int rec_new_pid_clause(const struct host_record *r, char *buf, size_t len)
{
	long hi = (long)r->new_after + REC_NEW_PID_WINDOW;

	buf[0] = 0;
	if (r->new_after < 0 || r->pid_max <= REC_PID_RESERVED)
		return 0;
	if (hi < r->pid_max)
		return snprintf(buf, len, "||(common_pid>%d&&common_pid<=%ld)", r->new_after, hi);
	/* the window wraps to RESERVED_PIDS */
	return snprintf(buf, len, "||common_pid>%d||(common_pid>=%d&&common_pid<%ld)",
			r->new_after, REC_PID_RESERVED,
			REC_PID_RESERVED + hi - r->pid_max);
}

/*
 * Rewrite the common_pid filter of the pid-limited systems: the live
 * traced tasks, and the tids born since the last follow (a thread or
 * child a traced task starts is traced from its first instruction; the
 * next poll finds it, names it in the filter and moves the window past
 * it, so the tasks of other processes born meanwhile are traced for at
 * most one poll).
 */
int rec_write_filter(struct host_record *r)
{
	char filter[REC_FILTER_MAX], file[REC_NAME_MAX * 2], win[REC_NAME_MAX * 2];
	size_t len = 0;
	int n;

	if (!r->pid_filtered)
		return 0;
	filter[0] = 0;
	for (int i = 0; i < r->nr_live; i++) {
		n = snprintf(filter + len, sizeof(filter) - len, "%scommon_pid==%d",
			     i ? "||" : "", (int)r->tids[i]);
		if (n < 0 || (size_t)n >= sizeof(filter) - len)
			return vt_err_set("pid filter too long (%d tasks)", r->nr_live);
		len += n;
	}
	if (!r->nr_live) {
		snprintf(filter, sizeof(filter), "common_pid==-1");
	} else {
		rec_new_pid_clause(r, win, sizeof(win));
		n = snprintf(filter + len, sizeof(filter) - len, "%s", win);
		if (n < 0 || (size_t)n >= sizeof(filter) - len)
			return vt_err_set("pid filter too long (%d tasks)", r->nr_live);
	}
	for (size_t s = 0; s < VT_ARRAY_SIZE(rec_pid_systems); s++) {
		if (!r->pid_system_on[s])
			continue;
		snprintf(file, sizeof(file), "events/%s/filter", rec_pid_systems[s]);
		if (tracefs_instance_file_write(r->inst, file, filter) < 0)
			return vt_err_errno("cannot set the pid filter of %s", file);
	}
	if (r->fork_ours) {
		/* the same tasks as parents: common_pid -> parent_pid */
		char fork_filter[REC_FILTER_MAX + REC_FILTER_MAX / 8];
		size_t fl = 0;

		for (const char *p = filter; *p && fl < sizeof(fork_filter) - 16;) {
			if (!strncmp(p, "common_pid", 10)) {
				fl += snprintf(fork_filter + fl, sizeof(fork_filter) - fl, "parent_pid");
				p += 10;
			} else {
				fork_filter[fl++] = *p++;
			}
		}
		fork_filter[fl] = 0;
		if (tracefs_instance_file_write(r->inst, "events/" REC_FORK_EVENT "/filter",
						fork_filter) < 0)
			return vt_err_errno("cannot set the pid filter of %s", REC_FORK_EVENT);
	}
	r->filter_dirty = 0;
	return 0;
}

/* A number from the one-line /proc file @path, or -1. */
static int rec_proc_int(const char *path)
{
	char buf[32], *e;
	long v;

	if (host_proc_read_small(path, buf, sizeof(buf)))
		return -1;
	v = strtol(buf, &e, 10);
	return e == buf || v < 0 || v > INT_MAX ? -1 : (int)v;
}

/* The kernel's last allocated pid, -1 unknown: ns_last_pid is kept open
 * and read at offset 0 (a sysctl reads afresh there), one syscall a poll. */
static int rec_last_pid(struct host_record *r)
{
	char buf[32], *e;
	ssize_t n;
	long v;

	if (r->last_pid_fd < 0)
		r->last_pid_fd = open(REC_LAST_PID_PATH, O_RDONLY | O_CLOEXEC);
	if (r->last_pid_fd < 0)
		return -1;
	n = pread(r->last_pid_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	v = strtol(buf, &e, 10);
	return e == buf || v < 0 || v > INT_MAX ? -1 : (int)v;
}

int rec_mark_new_pids(struct host_record *r)
{
	int last;

	if (!r->pid_max)
		r->pid_max = rec_proc_int(REC_PID_MAX_PATH);
	last = rec_last_pid(r);
	if (last >= 0 && last == r->new_after)
		return 0;
	if (last != r->new_after) {
		r->new_after = last;
		r->filter_dirty = 1;
	}
	return 1;
}

/* The thread name of @tid into @comm (REC_COMM_MAX bytes); @comm is kept
 * as it was when the thread is gone. */
void rec_read_comm(pid_t tid, char *comm)
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

int rec_task_mark(struct host_record *r, pid_t tid)
{
	if (tid < 0)
		return -1;
	if ((size_t)tid / 8 >= r->traced_bytes) {
		size_t nb = (size_t)tid / 8 + 1 > REC_TRACED_MIN_BYTES ?
			    ((size_t)tid / 8 + 1) * 2 : REC_TRACED_MIN_BYTES;
		uint8_t *n = realloc(r->traced, nb);

		if (!n)
			return -1;
		memset(n + r->traced_bytes, 0, nb - r->traced_bytes);
		r->traced = n;
		r->traced_bytes = nb;
	}
	r->traced[tid / 8] |= 1u << (tid % 8);
	return 0;
}

/* The process of thread @tid (Tgid of /proc/TID/status), 0 unknown. */
static pid_t rec_read_tgid(pid_t tid)
{
	char path[REC_PROC_PATH_MAX], buf[REC_CHILDREN_MAX];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (host_proc_read_small(path, buf, sizeof(buf)) || !(p = strstr(buf, "\nTgid:")))
		return 0;
	return (pid_t)strtol(p + 6, NULL, 10);
}

int rec_task_add(struct host_record *r, pid_t tid)
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
	if (rec_task_mark(r, tid)) {
		vt_warn("out of memory: syscalls of thread %d are not recorded", (int)tid);
		return 0;
	}
	t->tid = tid;
	t->live = 1;
	t->round = r->follow_round;
	t->tgid = rec_read_tgid(tid);
	t->comm[0] = 0;
	rec_read_comm(tid, t->comm);
	rec_live_tids(r);
	r->filter_dirty = 1;
	return 1;
}

/* Tasks that ended leave the filter (their tids may be reused). */
void rec_prune(struct host_record *r)
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

/* Add the threads and child processes of @pid (one level). */
void rec_follow(struct host_record *r, pid_t pid)
{
	host_proc_each_task(pid, rec_follow_task, r);
}

static int rec_pid_in(const pid_t *set, int nr, pid_t pid)
{
	for (int i = 0; i < nr; i++)
		if (set[i] == pid)
			return 1;
	return 0;
}

/*
 * Each round follows one process once (its threads are listed by one of
 * them: following every thread would list the group once per thread),
 * and after the first round only the processes of the tasks the previous
 * round added: the rest were followed already.
 */
void rec_follow_all(struct host_record *r)
{
	pid_t todo[HOST_RECORD_MAX_PIDS], done[HOST_RECORD_MAX_PIDS];

	for (int round = 0; round < REC_FOLLOW_ROUNDS; round++) {
		unsigned prev = r->follow_round++;
		int nr = 0, nr_done = 0;

		for (int i = 0; i < r->nr_task && nr < HOST_RECORD_MAX_PIDS; i++) {
			const struct rec_task *t = &r->task[i];
			pid_t p = t->tgid > 0 ? t->tgid : t->tid;

			if (!t->live || (round && t->round != prev) || rec_pid_in(todo, nr, p))
				continue;
			todo[nr++] = p;
		}
		for (int i = 0; i < nr; i++)
			if (!rec_pid_in(done, nr_done, todo[i])) {
				rec_follow(r, todo[i]);
				done[nr_done++] = todo[i];
			}
		if (!nr)
			break;
	}
}


const char *rec_tracefs(void)
{
	const char *dir = NULL;
	char path[REC_PATH_MAX];

	/* tracefs_tracing_dir() mounts tracefs when it can (and, unlike
	 * tracefs_tracing_dir_is_mounted() in libtracefs 1.6, leaks nothing) */
	dir = tracefs_tracing_dir();
	if (!dir) {
		vt_err_set_code(ENODEV, "tracefs is not mounted and could not be mounted; as "
				"root run: mount -t tracefs nodev /sys/kernel/tracing");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (access(path, W_OK)) {
		vt_err_errno("%s: cannot create a tracing instance (run as root)", path);
		return NULL;
	}
	return dir;
}

int rec_page_size(struct host_record *r)
{
	long long kb;

	if (tracefs_file_exists(r->inst, "buffer_subbuf_size_kb") &&
	    !tracefs_instance_file_read_number(r->inst, "buffer_subbuf_size_kb", &kb) && kb > 0)
		r->page_size = (uint32_t)kb * REC_BYTES_PER_KB;
	else
		r->page_size = (uint32_t)getpagesize();
	return 0;
}

int rec_open_cpus(struct host_record *r)
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
