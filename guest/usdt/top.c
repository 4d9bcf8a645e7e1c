/*
 * top.c - `vmtrace top --python -p PID`: the Python functions a running,
 * unprepared interpreter calls most, per second, live, from CPython's
 * function__return USDT marker (it fires for every return on 3.11, where
 * function__entry mostly does not; CPython issue 98894).  Creates the
 * uprobe events (host/usdt_probes.c), enables function__return in a small tracefs
 * instance of its own limited to the process's threads (set_event_pid +
 * event-fork), reads its per-CPU trace_pipe_raw pages through libtracefs
 * (binary records: no text formatting in the kernel) and counts by
 * function; ring-buffer overruns are shown as lost.
 * Removes the instance and the probes on every way out.  Runs in the
 * vmtrace command's main thread; allocates, blocks.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tracefs.h>
#include "err.h"
#include "usdt.h"
#include "host/usdt_probes.h"
#include "cli.h"
#include "tsc.h"
#include "grow.h"

#define TOP_INSTANCE_PREFIX	"vmtrace_top_"
#define TOP_BUFFER_KB		2048
#define TOP_ROWS_DEFAULT	20
#define TOP_TABLE_SIZE		8192	/* distinct functions counted (power of 2) */
#define TOP_KEY_MAX		256
#define TOP_POLL_MS		100
#define TOP_MS_PER_S		1000
#define TOP_LOC_OFF_MASK	0xffff	/* __data_loc: length << 16 | offset */
#define TOP_LOC_LEN_SHIFT	16
#define TOP_HASH_MUL		16777619u	/* FNV-1a */
#define TOP_HASH_SEED		2166136261u

struct top_fn {
	char key[TOP_KEY_MAX];	/* "func (file)"; "" = free slot */
	uint64_t interval;	/* returns in the current interval */
	uint64_t total;
};

struct top_state {
	struct top_fn *fn;
	int used;
	uint64_t other;		/* returns not counted by function (table full) */
	uint64_t interval, total;
	uint64_t lost;		/* ring-buffer overruns (all CPUs) */
	int nr_ids;		/* function__return's sites (usually 1) */
	int event_id[USDT_MAX_PROBES];
	struct tep_format_field *file_f[USDT_MAX_PROBES], *func_f[USDT_MAX_PROBES];
};

static volatile sig_atomic_t top_quit;

static void top_on_signal(int sig)
{
	top_quit = 1;
}

static double top_now_s(void)
{
	return (double)vt_mono_ns() / (double)VT_NS_PER_SEC;
}

static void top_count(struct top_state *t, const char *key)
{
	uint32_t h = TOP_HASH_SEED;

	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * TOP_HASH_MUL;
	t->interval++;
	t->total++;
	for (uint32_t i = 0; i < TOP_TABLE_SIZE; i++) {
		struct top_fn *f = &t->fn[(h + i) & (TOP_TABLE_SIZE - 1)];

		if (!f->key[0]) {
			if (t->used >= TOP_TABLE_SIZE / 2)
				break;
			snprintf(f->key, sizeof(f->key), "%s", key);
			t->used++;
		} else if (strcmp(f->key, key)) {
			continue;
		}
		f->interval++;
		f->total++;
		return;
	}
	t->other++;
}

/* The string of a __data_loc / __rel_loc field of @rec; "?" if malformed. */
static void top_str(const struct tep_format_field *f, const struct tep_record *rec,
		    char *out, size_t len)
{
	uint32_t loc, off, n;

	snprintf(out, len, "?");
	if (!f || f->offset + sizeof(loc) > (unsigned)rec->size)
		return;
	memcpy(&loc, (const char *)rec->data + f->offset, sizeof(loc));
	off = loc & TOP_LOC_OFF_MASK;
	n = loc >> TOP_LOC_LEN_SHIFT;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += f->offset + f->size;
	if (off + n > (unsigned)rec->size || !n)
		return;
	snprintf(out, len, "%.*s", (int)strnlen((const char *)rec->data + off, n),
		 (const char *)rec->data + off);
}

static int top_on_record(struct tep_event *ev, struct tep_record *rec, int cpu, void *arg)
{
	struct top_state *t = arg;
	char file[TOP_KEY_MAX], func[TOP_KEY_MAX], key[TOP_KEY_MAX];

	int i = 0;

	while (i < t->nr_ids && ev->id != t->event_id[i])
		i++;
	if (i == t->nr_ids)
		return 0;
	top_str(t->file_f[i], rec, file, sizeof(file));
	top_str(t->func_f[i], rec, func, sizeof(func));
	snprintf(key, sizeof(key), "%.100s (%.140s)", func, file);
	top_count(t, key);
	return top_quit;
}

/* Sum of the per-CPU "overrun" counters of @inst. */
static uint64_t top_overruns(struct tracefs_instance *inst)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t sum = 0;

	for (long cpu = 0; cpu < n; cpu++) {
		char f[64], *text, *p;

		snprintf(f, sizeof(f), "per_cpu/cpu%ld/stats", cpu);
		text = tracefs_instance_file_read(inst, f, NULL);
		if (!text)
			continue;
		p = strstr(text, "overrun:");
		if (p)
			sum += strtoull(p + strlen("overrun:"), NULL, 10);
		free(text);
	}
	return sum;
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_fn *x = *(struct top_fn *const *)a, *y = *(struct top_fn *const *)b;

	if (x->interval != y->interval)
		return x->interval < y->interval ? 1 : -1;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static void top_print(struct top_state *t, pid_t pid, const char *file, double secs,
		      int rows, int clear)
{
	struct top_fn *list[TOP_TABLE_SIZE];
	int n = 0;

	for (int i = 0; i < TOP_TABLE_SIZE; i++)
		if (t->fn[i].key[0] && t->fn[i].interval)
			list[n++] = &t->fn[i];
	vt_sort(list, n, sizeof(list[0]), top_cmp);
	if (clear)
		fputs("\033[H\033[J", stdout);
	printf("vmtrace top --python: pid %d (%s): %.0f calls/s over %.2f s, %llu in all\n",
	       (int)pid, file, (double)t->interval / secs, secs,
	       (unsigned long long)t->total);
	printf("%12s %12s  %s\n", "CALLS/S", "TOTAL", "FUNCTION (FILE)");
	for (int i = 0; i < n && i < rows; i++)
		printf("%12.0f %12llu  %s\n", (double)list[i]->interval / secs,
		       (unsigned long long)list[i]->total, list[i]->key);
	if (t->other)
		printf("%12s %12llu  (not by name: more distinct functions than the table holds)\n",
		       "", (unsigned long long)t->other);
	if (t->lost)
		printf("%12s %12llu  LOST (the ring buffer overran)\n", "",
		       (unsigned long long)t->lost);
	fflush(stdout);
	for (int i = 0; i < TOP_TABLE_SIZE; i++)
		t->fn[i].interval = 0;
	t->interval = 0;
}

/*
 * A tep handle that knows the ring-buffer page header and the formats of
 * @group's function__return events only (tracefs_local_events_system()
 * would also parse /proc/kallsyms: seconds under a sanitizer).  NULL with
 * a message on failure.
 */
static struct tep_handle *top_tep(const struct usdt_session *s)
{
	struct tep_handle *tep = tep_alloc();
	char *text;
	int size;

	if (!tep) {
		vt_err_set("out of memory");
		return NULL;
	}
	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, getpagesize());
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	text = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (!text || tep_parse_header_page(tep, text, size, sizeof(long))) {
		free(text);
		vt_err_errno("%s/events/header_page: cannot read or parse",
			     tracefs_tracing_dir());
		tep_free(tep);
		return NULL;
	}
	free(text);
	for (int i = 0; i < s->nr; i++) {
		if (strncmp(s->names[i], "function__return", strlen("function__return")))
			continue;
		text = tracefs_event_file_read(NULL, s->group, s->names[i], "format", &size);
		if (!text || tep_parse_event(tep, text, size, s->group)) {
			free(text);
			vt_err_errno("%s/events/%s/%s/format: cannot read or parse",
				     tracefs_tracing_dir(), s->group, s->names[i]);
			tep_free(tep);
			return NULL;
		}
		free(text);
	}
	return tep;
}

/* Remove instances of top commands that died without cleaning up. */
static int top_sweep_cb(const char *name, void *arg)
{
	struct tracefs_instance *inst;
	int pid;

	if (sscanf(name, TOP_INSTANCE_PREFIX "%d", &pid) != 1 || pid <= 0)
		return 0;
	if (!kill(pid, 0) || errno != ESRCH)
		return 0;
	inst = tracefs_instance_alloc(NULL, name);
	if (inst) {
		char f[VT_USDT_NAME_MAX * 2];

		/* its probes are in the group of the same pid (usdt.c) */
		snprintf(f, sizeof(f), "events/vmtrace_py_%d/enable", pid);
		tracefs_instance_file_write(inst, f, "0");
		tracefs_instance_destroy(inst);
		tracefs_instance_free(inst);
	}
	return 0;
}

/* set_event_pid := every thread of @pid (event-fork adds new ones). */
static int top_set_pids(struct tracefs_instance *inst, pid_t pid)
{
	char path[64], buf[4096];
	struct dirent *d;
	size_t used = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return vt_err_errno("%s: cannot list the threads", path);
	buf[0] = 0;
	while ((d = readdir(dir)) && used < sizeof(buf) - 16)
		if (d->d_name[0] != '.')
			used += snprintf(buf + used, sizeof(buf) - used, "%s ", d->d_name);
	closedir(dir);
	if (tracefs_instance_file_write(inst, "options/event-fork", "1") < 0 ||
	    tracefs_instance_file_write(inst, "set_event_pid", buf) < 0)
		return vt_err_errno("%s: cannot limit events to pid %d",
				    tracefs_instance_get_name(inst), (int)pid);
	return 0;
}

static void top_usage(FILE *fp)
{
	fprintf(fp,
"usage: vmtrace top --python[=FILE] -p PID [-n ROWS] [-i MS] [--once]\n"
"                   [--duration SECONDS]\n"
"  the Python functions PID calls most per second, from CPython's USDT\n"
"  function__return marker through a uprobe (no change to the process;\n"
"  a CPython built --with-dtrace; root).  Counted at return: on 3.11 every\n"
"  Python call; 3.12/3.13 have no function markers (use `vmtrace attach`).\n"
"  --once: one table after one interval; --duration: stop after SECONDS;\n"
"  stops by itself when PID exits.\n"
"  -i, --interval MS  a table every MS milliseconds (default 1s, at least\n"
"                     %d ms); a unit may be given instead: 500ms, 2s\n",
		TOP_MIN_INTERVAL_MS);
}

/* Parse a positive number for @opt; exits with a usage error if bad. */
static double top_num(const char *opt, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (*end || !(d > 0))
		vt_die(VT_EXIT_USAGE, "top: bad value for %s: %s", opt, v);
	return d;
}

/* The live loop: drains @inst's buffers until a signal, the duration,
 * or @pid exits. */
static int top_loop(struct top_state *t, struct tep_handle *tep, struct tracefs_instance *inst,
		    pid_t pid, const char *file, int rows, double interval, double duration,
		    int once)
{
	double start = top_now_s(), last = start;
	int clear = !once && isatty(STDOUT_FILENO), gone = 0;

	while (!top_quit) {
		struct timespec ts = { 0, TOP_POLL_MS * (long)(VT_NS_PER_SEC / TOP_MS_PER_S) };
		double now;

		nanosleep(&ts, NULL);
		if (tracefs_iterate_raw_events(tep, inst, NULL, 0, top_on_record, t) < 0 &&
		    !top_quit)
			return vt_err_errno("%s: cannot read trace_pipe_raw",
					    tracefs_instance_get_name(inst));
		now = top_now_s();
		if (!gone && !usdt_pid_alive(pid))
			gone = 1;
		if (now - last < interval && !gone && !(duration > 0 && now - start >= duration))
			continue;
		t->lost = top_overruns(inst);
		top_print(t, pid, file, now - last, rows, clear);
		last = now;
		if (once || gone || (duration > 0 && now - start >= duration))
			break;
	}
	if (gone)
		fprintf(stderr, "vmtrace: top: process %d exited\n", (int)pid);
	return 0;
}

/* `vmtrace top --python ...` (called by cmd_top when --python is given):
 * returns an exit code. */
int usdt_top_main(int argc, char **argv)
{
	const char *file_opt = NULL;
	char file[4096], name[64], event[3 * VT_USDT_NAME_MAX];
	struct tep_handle *tep = NULL;
	struct tep_event *ev;
	struct usdt_session *s = NULL;
	struct tracefs_instance *inst = NULL;
	struct top_state *t = NULL;
	int rows = TOP_ROWS_DEFAULT, once = 0, ret = VT_EXIT_FAIL;
	double interval = 1.0, duration = 0;
	pid_t pid = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--python")) {
			continue;
		} else if (!strncmp(a, "--python=", 9)) {
			file_opt = a + 9;
		} else if (!strcmp(a, "--once")) {
			once = 1;
		} else if (!strcmp(a, "-p") && i + 1 < argc) {
			pid = (pid_t)top_num(a, argv[++i]);
		} else if (!strcmp(a, "-n") && i + 1 < argc) {
			rows = (int)top_num(a, argv[++i]);
		} else if ((!strcmp(a, "-i") || !strcmp(a, "--interval")) && i + 1 < argc) {
			uint64_t ms;

			if (top_parse_interval(argv[++i], &ms))
				return VT_EXIT_USAGE;
			interval = (double)ms / 1000;
		} else if (!strcmp(a, "--duration") && i + 1 < argc) {
			duration = top_num(a, argv[++i]);
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			top_usage(stdout);
			return VT_EXIT_OK;
		} else {
			fprintf(stderr, "vmtrace: top: unknown option or argument: %s\n", a);
			return vt_cli_usage(top_usage, 0);
		}
	}
	if (pid <= 0)
		return vt_cli_usage(top_usage, 0);
	if (kill(pid, 0) && errno == ESRCH)
		vt_die(VT_EXIT_USAGE, "top: -p %d: no such process", (int)pid);
	if (file_opt ? usdt_python_file_of_binary(file_opt, file, sizeof(file))
		     : usdt_python_file_of_pid(pid, file, sizeof(file))) {
		vt_err_print("top");
		return VT_EXIT_FAIL;
	}
	s = calloc(1, sizeof(*s));
	t = calloc(1, sizeof(*t));
	if (t)
		t->fn = calloc(TOP_TABLE_SIZE, sizeof(*t->fn));
	if (!s || !t || !t->fn) {
		vt_err_set("out of memory");
		goto out;
	}
	signal(SIGINT, top_on_signal);
	signal(SIGTERM, top_on_signal);
	tracefs_instances_walk(top_sweep_cb, NULL);
	if (usdt_python_create(s, file))
		goto out;
	usdt_python_explain(s, stderr);
	tep = top_tep(s);
	if (!tep)
		goto out;
	/* "function__return" and its further sites "function__return_N" */
	for (int i = 0; i < s->nr; i++) {
		if (strncmp(s->names[i], "function__return", strlen("function__return")))
			continue;
		ev = tep_find_event_by_name(tep, s->group, s->names[i]);
		if (!ev) {
			vt_err_set("no format of %s:%s", s->group, s->names[i]);
			goto out;
		}
		t->event_id[t->nr_ids] = ev->id;
		t->file_f[t->nr_ids] = tep_find_field(ev, "file");
		t->func_f[t->nr_ids++] = tep_find_field(ev, "func");
	}
	if (!t->nr_ids) {
		vt_err_set("%s has no function markers: nothing to count (for every call: "
			   "`vmtrace attach %d`, then `vmtrace top DIR`)", s->file, (int)pid);
		ret = VT_EXIT_UNSUPPORTED;
		goto out;
	}
	snprintf(name, sizeof(name), TOP_INSTANCE_PREFIX "%d", (int)getpid());
	inst = tracefs_instance_create(name);
	if (!inst) {
		vt_err_errno("cannot create the tracefs instance %s", name);
		ret = errno == EACCES || errno == EPERM ? VT_EXIT_PERM : VT_EXIT_FAIL;
		goto out;
	}

	if (tracefs_instance_set_buffer_size(inst, TOP_BUFFER_KB, -1) < 0) {
		vt_err_errno("%s: cannot set a %d KB buffer", name, TOP_BUFFER_KB);
		goto out;
	}
	if (top_set_pids(inst, pid))
		goto out;
	for (int i = 0; i < s->nr; i++) {
		if (strncmp(s->names[i], "function__return", strlen("function__return")))
			continue;
		snprintf(event, sizeof(event), "events/%s/%s/enable", s->group, s->names[i]);
		if (tracefs_instance_file_write(inst, event, "1") < 0) {
			vt_err_errno("%s: cannot enable %s", name, event);
			goto out;
		}
	}
	if (top_loop(t, tep, inst, pid, s->file, rows, interval, duration, once))
		goto out;
	ret = VT_EXIT_OK;
out:
	if (ret != VT_EXIT_OK)
		vt_err_print("top");
	if (inst) {
		snprintf(event, sizeof(event), "events/%s/enable", s->group);
		tracefs_instance_file_write(inst, event, "0");
		tracefs_instance_destroy(inst);
		tracefs_instance_free(inst);
	}
	if (s && usdt_python_remove(s)) {
		vt_err_print("top");
		ret = VT_EXIT_FAIL;
	}
	if (tep)
		tep_free(tep);
	if (t)
		free(t->fn);
	free(t);
	free(s);
	return ret;
}
