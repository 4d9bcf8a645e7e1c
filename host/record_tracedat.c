/*
 * record_tracedat.c - the end of a recording (record_int.h): trace.dat
 * from the raw per-CPU pages (lib/tracedat_write.c: event formats,
 * kallsyms, cmdlines, options, the pages, with the counts of events and
 * lost events from the page headers) and the end's vmtrace.meta.  For
 * host_record_stop() and `--finish`; main thread only; allocates.
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

/* the UNAME option: 4 utsname fields of up to 65 bytes, separators, NUL */
#define REC_UNAME_MAX		(4 * sizeof(((struct utsname *)0)->release) + 8)
#define REC_META_VAL_ROOM	4000
#define REC_CLOCK_FALLBACK	"[" "x86-tsc" "]"

/*
 * 1 if the event format @fmt shows a kernel address as a symbol: its print
 * format prints a pointer as a function or symbol (%ps %pS %pB %pF %pf, as
 * workqueue, timer, irq's tasklets, kmem's call_site), or it is a probe
 * (__probe_ip: trace-cmd shows a kprobe's place by kallsyms).  Such events
 * need /proc/kallsyms in trace.dat; kvm, sched_switch/wakeup, syscalls,
 * block do not.
 */
static int rec_fmt_needs_kallsyms(const char *fmt)
{
	const char *p = strstr(fmt, "print fmt:");

	if (strstr(fmt, "__probe_ip"))
		return 1;
	for (p = p ? p : fmt; (p = strstr(p, "%p")); p += 2)
		if (p[2] && strchr("sSBfF", p[2]))
			return 1;
	return 0;
}

/* The formats of @sys's events @evs (ftrace's when @ftrace); *@need_ks set
 * when one of them prints a kernel symbol. */
static int rec_write_formats(struct vt_td_writer *w, const char *sys, char **evs, int nr,
			     int ftrace, int *need_ks)
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
		if (need_ks && rec_fmt_needs_kallsyms(fmt[ok]))
			*need_ks = 1;
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
 * systems section (*@need_ks: rec_write_formats).  @set_event is cut into
 * lines in place. */
static int rec_write_systems(struct vt_td_writer *w, char *set_event, int *need_ks)
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
		if (rec_write_formats(w, sys[s], evs, nev, 0, need_ks))
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

uint64_t rec_stat_field(const char *stats, const char *name)
{
	const char *p = stats ? strstr(stats, name) : NULL;

	return p ? strtoull(p + strlen(name), NULL, 10) : 0;
}

#define REC_EVENT_IDS		65536	/* common_type is a u16 */
#define REC_COMMON_PID_OFF	4	/* common_pid, after common_type/flags/preempt_count */

/* What rec_keep() decides with. */
struct rec_keep_ctx {
	struct host_record *r;
	uint8_t pid_event[REC_EVENT_IDS / 8];	/* ids of the pid-limited events */
	int fork_id;				/* sched_process_fork, -1: none */
	int parent_off, child_off;		/* its pid fields */
	pid_t (*fork)[2];			/* parent, child of each fork seen */
	size_t nr_fork, cap_fork;
	int collect;				/* 1: the pass that gathers forks */
};

static int rec_is_traced(const struct host_record *r, int32_t pid)
{
	return pid >= 0 && (size_t)pid / 8 < r->traced_bytes &&
	       (r->traced[pid / 8] & (1u << (pid % 8)));
}

/* vt_td_page_discard's test.  Gathering pass: remember each fork, keep
 * all.  Then 0 for an event of a pid-limited system whose task was never
 * traced, and for our own fork events. */
static int rec_keep(void *arg, const void *data, uint32_t len)
{
	struct rec_keep_ctx *k = arg;
	uint16_t type;
	int32_t pid;

	if (len < REC_COMMON_PID_OFF + sizeof(pid))
		return 1;
	memcpy(&type, data, sizeof(type));
	if (type == k->fork_id) {
		if (!k->collect)
			return !k->r->fork_ours;
		if ((uint32_t)k->parent_off + 4 > len || (uint32_t)k->child_off + 4 > len)
			return 1;
		if (k->nr_fork == k->cap_fork) {
			size_t nc = k->cap_fork ? 2 * k->cap_fork : 256;
			void *n = realloc(k->fork, nc * sizeof(*k->fork));

			if (!n)
				return 1;	/* its children stay unknown */
			k->fork = n;
			k->cap_fork = nc;
		}
		memcpy(&k->fork[k->nr_fork][0], (const char *)data + k->parent_off, 4);
		memcpy(&k->fork[k->nr_fork][1], (const char *)data + k->child_off, 4);
		k->nr_fork++;
		return 1;
	}
	if (k->collect || !(k->pid_event[type / 8] & (1u << (type % 8))))
		return 1;
	memcpy(&pid, (const char *)data + REC_COMMON_PID_OFF, sizeof(pid));
	return rec_is_traced(k->r, pid);
}

/* The offset of field @name in the format text @fmt, or -1. */
static int rec_field_off(const char *fmt, const char *name)
{
	char key[REC_NAME_MAX];
	const char *p;

	snprintf(key, sizeof(key), " %s;", name);
	p = fmt ? strstr(fmt, key) : NULL;
	if (!p || !(p = strstr(p, "offset:")))
		return -1;
	return atoi(p + strlen("offset:"));
}

/* The id of the event SYS/EV (tracefs events/SYS/EV/id), or -1. */
static int rec_event_id(const char *sys, const char *ev)
{
	char file[4 * REC_NAME_MAX];
	long long id;

	snprintf(file, sizeof(file), "events/%s/%s/id", sys, ev);
	if (tracefs_instance_file_read_number(NULL, file, &id) || id < 0 || id >= REC_EVENT_IDS)
		return -1;
	return (int)id;
}

/* One pass of rec_keep over every page of every CPU (pages it changed
 * are written back).  0, or -1 with a message. */
static int rec_pages_pass(struct host_record *r, struct rec_keep_ctx *k, char *page,
			  uint64_t *discarded)
{
	for (unsigned i = 0; i < r->nr_cpus; i++) {
		struct rec_cpu *c = &r->cpu[i];

		for (off_t o = 0;; o += r->page_size) {
			uint64_t before = *discarded;
			ssize_t n = pread(c->out_fd, page, r->page_size, o);

			if (n < 0)
				return vt_err_errno("%s/trace.cpu%u.raw: cannot read", r->dir, i);
			if (n < (ssize_t)r->page_size)
				break;
			/* a malformed page is copied as it is (and counted bad) */
			vt_td_page_discard(page, r->page_size, rec_keep, k, discarded);
			if (*discarded != before &&
			    pwrite(c->out_fd, page, r->page_size, o) != (ssize_t)r->page_size)
				return vt_err_errno("%s/trace.cpu%u.raw: cannot write", r->dir, i);
		}
	}
	return 0;
}

int rec_discard_foreign(struct host_record *r, const char *set_event)
{
	struct rec_keep_ctx *k;
	uint64_t discarded = 0;
	int nr_ids = 0, ret = -1, grew;
	char *page = NULL, *fmt;

	if (!r->pid_filtered || !(r->pid_system_on[0] || r->pid_system_on[1]))
		return 0;
	k = calloc(1, sizeof(*k));
	page = malloc(r->page_size);
	if (!k || !page) {
		vt_err_set("out of memory");
		goto out;
	}
	k->r = r;
	k->fork_id = -1;
	for (const char *p = set_event, *e; p && *p; p = *e ? e + 1 : e) {
		char line[3 * REC_NAME_MAX], *colon;
		int id;

		e = strchrnul(p, '\n');
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = 0;
		if (!strcmp(line, "sched") && !strcmp(colon + 1, "sched_process_fork")) {
			fmt = tracefs_instance_file_read(NULL, "events/" REC_FORK_EVENT "/format",
							 NULL);
			k->parent_off = rec_field_off(fmt, "parent_pid");
			k->child_off = rec_field_off(fmt, "child_pid");
			free(fmt);
			if (k->parent_off >= 0 && k->child_off >= 0)
				k->fork_id = rec_event_id(line, colon + 1);
			continue;
		}
		if (strcmp(line, "syscalls") && strcmp(line, "raw_syscalls"))
			continue;
		id = rec_event_id(line, colon + 1);
		if (id < 0) {
			vt_err_errno("%s/events/%s/%s/id: cannot read the event id",
				     tracefs_tracing_dir(), line, colon + 1);
			goto out;
		}
		k->pid_event[id / 8] |= 1u << (id % 8);
		nr_ids++;
	}
	if (!nr_ids) {
		ret = 0;
		goto out;
	}
	/* the tasks traced ones started, however briefly they lived */
	k->collect = 1;
	if (k->fork_id >= 0 && rec_pages_pass(r, k, page, &discarded))
		goto out;
	do {
		grew = 0;
		for (size_t i = 0; i < k->nr_fork; i++)
			if (rec_is_traced(r, k->fork[i][0]) && !rec_is_traced(r, k->fork[i][1]) &&
			    k->fork[i][1] > 0 && rec_task_mark(r, k->fork[i][1]) == 0)
				grew = 1;
	} while (grew);
	k->collect = 0;
	if (rec_pages_pass(r, k, page, &discarded))
		goto out;
	ret = vt_meta_set_u64(r->meta, VT_MK_RECORD_DISCARDED, discarded);
out:
	free(page);
	if (k)
		free(k->fork);
	free(k);
	return ret;
}

int rec_write_tracedat(struct host_record *r, char *set_event, char **stats,
			      struct vt_td_cpu_stats *cs)
{
	char path[REC_PATH_MAX], *hp = NULL, *he = NULL, *ks = NULL, *pk = NULL, *cl = NULL;
	char **ftrace = NULL;
	const char *fmt, *ksmode;
	int hpl = 0, hel = 0, pkl = 0, ret = -1, *fds = NULL, need_ks = 0;
	size_t ksl = 0, cll = 0;
	struct vt_td_writer *w;

	snprintf(path, sizeof(path), "%s/%s", r->dir, VT_TD_FILE);
	/* the format chosen at start (kept in record.state for --finish) */
	fmt = vt_meta_get(r->meta, VT_MK_RECORD_TRACEDAT);
	w = fmt && !strcmp(fmt, REC_FORMAT_V6) ? vt_td_create(path, r->page_size)
					       : vt_td_create_zstd(path, r->page_size);
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
	/* ftrace's own formats are written whole, but vmtrace enables none
	 * of its events (no tracer): they do not ask for kallsyms */
	if (rec_write_formats(w, "ftrace", ftrace, ftrace ? tracefs_list_size(ftrace) : 0, 1,
			      NULL) ||
	    rec_write_systems(w, set_event, &need_ks))
		goto out;
	/* /proc/kallsyms only when an event needs it (or --kallsyms): its
	 * reading and compression were a third of a kvm recording's CPU */
	ksmode = vt_meta_get(r->meta, VT_MK_RECORD_KALLSYMS);
	if (need_ks || (ksmode && !strcmp(ksmode, REC_KALLSYMS_ALWAYS)))
		ks = vt_file_read_all("/proc/kallsyms", REC_READ_ALL_MAX, &ksl);
	if (vt_td_write_kallsyms(w, ks ? ks : "", ks ? ksl : 0) ||
	    vt_meta_set_u64(r->meta, VT_MK_RECORD_KALLSYMS_BYTES, ks ? ksl : 0))
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

int rec_meta_end(struct host_record *r, char **stats, const struct vt_td_cpu_stats *cs,
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
		snprintf(key, sizeof(key), VT_MK_FMT_EVENTS_CPU, i);
		vt_meta_set_u64(m, key, cs[i].events);
		snprintf(key, sizeof(key), VT_MK_FMT_LOST_CPU, i);
		vt_meta_set_u64(m, key, lost);
		snprintf(key, sizeof(key), VT_MK_FMT_LOST_PAGES_CPU, i);
		vt_meta_set_u64(m, key, cs[i].lost_unknown);
		snprintf(key, sizeof(key), VT_MK_FMT_OVERRUN_CPU, i);
		vt_meta_set_u64(m, key, overrun);
		snprintf(key, sizeof(key), VT_MK_FMT_DROPPED_CPU, i);
		vt_meta_set_u64(m, key, dropped);
	}
	vt_meta_set_u64(m, VT_MK_EVENTS_TOTAL, res->events);
	vt_meta_set_u64(m, VT_MK_LOST_TOTAL, res->lost);
	vt_meta_set_u64(m, VT_MK_LOST_PAGES_TOTAL, res->lost_pages);
	vt_meta_set_u64(m, VT_MK_RECORD_DATA_BYTES, res->bytes);
	if (r->nr_task) {
		char buf[REC_META_VAL_ROOM + 16];
		size_t len = 0;

		buf[0] = 0;
		for (int i = 0; i < r->nr_task && len < REC_META_VAL_ROOM; i++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "",
					(int)r->task[i].tid);
		if (len >= REC_META_VAL_ROOM)
			snprintf(buf + REC_META_VAL_ROOM, sizeof(buf) - REC_META_VAL_ROOM, ",...");
		vt_meta_set(m, VT_MK_RECORD_PIDS, "%s", buf);
		/* their processes, in the same order (merge: QEMU's threads
		 * are the tasks of QEMU's process, whatever their names) */
		len = 0;
		buf[0] = 0;
		for (int i = 0; i < r->nr_task && len < REC_META_VAL_ROOM; i++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "",
					(int)r->task[i].tgid);
		if (len < REC_META_VAL_ROOM)
			vt_meta_set(m, VT_MK_RECORD_TGIDS, "%s", buf);
	}
	if (r->kvm && host_kvm_to_meta(r->kvm, m))
		return -1;
	return vt_meta_write_dir(m, r->dir);
}

/* tsc.hz / tsc.hz_source: decided once, by lib/tsc.c (after tracing, so
 * its calibration sleep costs nothing to the recording). */
int rec_meta_tsc(struct host_record *r)
{
	struct vt_tsc_freq f;

	if (vt_tsc_freq(&f) || !f.hz) {
		vt_warn("TSC frequency unknown (%s): tsc.hz not in %s/%s", vt_err_msg(), r->dir,
			VT_META_FILE);
		return 0;
	}
	return vt_tsc_meta_set(r->meta, &f);
}
