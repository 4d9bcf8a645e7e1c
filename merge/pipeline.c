/*
 * pipeline.c - merge as a library (merge/pipeline.h), for `vmtrace merge`,
 * `report` and `export`: plans the inputs (which is the host's, which a
 * guest's and of which VM, each one's clock map), builds each VM's clock
 * model (align/), opens the readers, then pulls every event in time order
 * from the sorter, links flows, derives syscall and thread-state slices for
 * the sinks that show them, and hands each event to the sink.  All its
 * state is the context's; one thread; memory bounded by names and threads,
 * not by the number of events.  Design: docs/merge.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
#include "samples.h"
#include "tracedat.h"
#include "tsc.h"
#include "align/align.h"
#include "merge.h"
#include "pipeline.h"
#include "plan.h"
#include "grow.h"

#define PROGRESS_EVERY	(1u << 20)	/* events between progress checks */

struct merge_ctx {
	struct merge_opts opts;
	struct merge_input in[MERGE_MAX_SOURCES];	/* what each input declares */
	/* the plan (merge/plan.c): the VMs (guest machine N = VM N-1: all guest
	 * inputs of one VM share its machine, its process/thread tracks and its
	 * one clock model), the host, each input's clock */
	struct merge_plan plan;
	struct merge_source sources[MERGE_MAX_SOURCES];
	int nr_sources;
	struct align_model *models[MERGE_MAX_SOURCES];	/* by VM */
	size_t vm_bad_markers[MERGE_MAX_SOURCES];	/* by VM: rejected markers.dat records */
	int meta_bad;		/* a vmtrace.meta did not parse: VT_EXIT_PARTIAL */
	struct merge_tables tables;	/* the events' interned names and tracks */
	struct merge_sorter sorter;
	struct merge_flows flows;
	struct merge_deriver deriver;
	struct timespec progress_last;	/* the progress line's last print */
};

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_file(const char *dir, const char *name)
{
	char p[4200];

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return 0;
	return is_file(p);
}

/* The directory whose vmtrace.meta describes input @path: the directory
 * itself, or the one holding a trace.dat file given by name; NULL if none. */
static const char *meta_dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (is_dir(path))
		return path;
	if (strcmp(slash ? slash + 1 : path, VT_TD_FILE))
		return NULL;
	if (!slash)
		return ".";
	if ((size_t)(slash - path) >= len)
		return NULL;
	memcpy(buf, path, (size_t)(slash - path));
	buf[slash - path] = 0;
	return *buf ? buf : "/";
}

/* No meta: the TSC frequency a trace-cmd trace.dat states (its TSC2NSEC
 * option), of the file @path or of the trace.dat in directory @path; 0 if
 * none.  The header alone: the file is read as an input later. */
static uint64_t td_tsc_hz(const char *path)
{
	char p[4200];
	uint64_t hz;

	if (is_dir(path)) {
		if (!has_file(path, VT_TD_FILE))
			return 0;
		snprintf(p, sizeof(p), "%s/%s", path, VT_TD_FILE);
		path = p;
	}
	return vt_td_file_tsc_hz(path, &hz) ? 0 : hz;
}

/* Whether the command the recorder started (cmdline) is QEMU itself: its
 * program's name begins "qemu-system-" or "qemu-kvm". */
static int command_is_qemu(const struct vt_meta *m)
{
	const char *c = vt_meta_get(m, VT_MK_CMDLINE), *e, *b;

	if (!c)
		return 0;
	e = c + strcspn(c, " \t");
	for (b = e; b > c && b[-1] != '/'; b--)
		;
	return (e - b > 12 && !strncmp(b, "qemu-system-", 12)) ||
	       (e - b == 8 && !strncmp(b, "qemu-kvm", 8));
}

/* QEMU's threads: the recorder's tasks (record.pids) whose process
 * (record.tgids, same order) is QEMU's; none found (nr_qtasks <= 0): the
 * readers know QEMU's threads by name. */
static void qemu_tasks(const struct vt_meta *m, struct merge_host_facts *host)
{
	const char *p = vt_meta_get(m, VT_MK_RECORD_PIDS), *g = vt_meta_get(m, VT_MK_RECORD_TGIDS);
	char *pe, *ge;

	host->nr_qtasks = -1;
	if (!p || !g)
		return;
	host->nr_qtasks = 0;
	while (*p && *g && host->nr_qtasks < MERGE_MAX_QTASKS) {
		long tid = strtol(p, &pe, 10), tgid = strtol(g, &ge, 10);

		if (pe == p || ge == g)
			break;
		if (tgid == host->qemu_pid && tid > 0)
			host->qtask_tid[host->nr_qtasks++] = (int)tid;
		p = *pe == ',' ? pe + 1 : pe;
		g = *ge == ',' ? ge + 1 : ge;
	}
}

/* What input @in (its path set) declares in its vmtrace.meta, or without
 * one what it is: its clock, frequency, domain, VM name (meta vm=, unless
 * @in->named) and, for a host recording, QEMU's pid, threads and vCPU
 * threads (kvm.*, record.*).  A meta that does not parse is warned about
 * and ignored; -1 when out of memory reading it (message set). */
static int read_meta(struct merge_ctx *mc, struct merge_input *in)
{
	const char *path = in->path;
	char dbuf[4200];
	const char *dir = meta_dir_of(path, dbuf, sizeof(dbuf));
	struct vt_meta *m = dir ? vt_meta_read_dir(dir) : NULL;
	struct merge_host_facts *host = &in->host;
	char key[VT_META_KEY_MAX];
	int64_t pid;
	double d;

	if (!m && dir && has_file(dir, VT_META_FILE)) {
		if (vt_err_code() == ENOMEM)
			return -1;
		vt_warn("%s (metadata ignored: defaults used)", vt_err_msg());
		mc->meta_bad = 1;
	}
	if (!m) {
		/* a plain `uftrace record` directory: uftrace's own ns clock */
		if (in->is_dir && has_file(path, "info") && !has_file(path, VT_META_FILE))
			in->is_ns = 1;
		in->hz = td_tsc_hz(path);
		return 0;
	}
	if (vt_meta_get_u64(m, VT_MK_TSC_HZ, &in->hz) < 0 &&
	    vt_meta_get_double(m, VT_MK_TSC_HZ, &d) == 0)
		in->hz = (uint64_t)(d + 0.5);
	const char *c = vt_meta_get(m, VT_MK_CLOCK), *dom = vt_meta_get(m, VT_MK_DOMAIN);
	const char *v = vt_meta_get(m, VT_MK_VM);

	if (c && (!strcmp(c, "ns") || !strcmp(c, "mono-ns")))
		in->is_ns = 1;
	if (dom && !strcmp(dom, "host"))
		in->dom = MERGE_DOM_HOST;
	else if (dom && !strcmp(dom, "guest"))
		in->dom = MERGE_DOM_GUEST;
	if (!in->named && v && *v)
		snprintf(in->vm, sizeof(in->vm), "%s", v);
	snprintf(key, sizeof(key), VT_MK_FMT_VM_PID, 0);	/* QEMU's: the first VM's */
	if (vt_meta_get_i64(m, key, &pid) == 0 && pid > 0 && pid < INT32_MAX)
		host->qemu_pid = (int)pid;
	else if (command_is_qemu(m) && vt_meta_get_i64(m, VT_MK_RECORD_COMMAND_PID, &pid) == 0 &&
		 pid > 0 && pid < INT32_MAX)
		host->qemu_pid = (int)pid;	/* no KVM (TCG): the QEMU `record --` started */
	if (host->qemu_pid > 0)
		qemu_tasks(m, host);
	struct vt_meta_vthread vt[MERGE_MAX_VTHREADS];
	int n = vt_meta_get_vthreads(m, vt, MERGE_MAX_VTHREADS);

	for (int i = 0; i < n; i++) {
		host->vthread_tid[i] = vt[i].tid;
		host->vthread_vcpu[i] = vt[i].vcpu;
	}
	host->nr_vthreads = n;
	vt_meta_free(m);
	return 0;
}

/* "PATH@NAME" (PATH itself not existing as given): PATH into @path, NAME
 * into @name; else the whole argument.  -1 if it does not fit. */
static int split_arg(const char *arg, char *path, size_t len, char *name)
{
	const char *at = strrchr(arg, '@');
	struct stat st;

	*name = 0;
	if (at && at > arg && at[1] && !strchr(at, '/') && stat(arg, &st) < 0 &&
	    strlen(at + 1) < MERGE_VM_NAME_MAX) {
		if ((size_t)(at - arg) >= len)
			return -1;
		memcpy(path, arg, (size_t)(at - arg));
		path[at - arg] = 0;
		strcpy(name, at + 1);
		return 0;
	}
	if (strlen(arg) >= len)
		return -1;
	strcpy(path, arg);
	return 0;
}

/* 1 if directory @dir holds trace data of its own (an input as it is). */
static int has_trace_data(const char *dir)
{
	return has_file(dir, VT_TD_FILE) || has_file(dir, "info") ||
	       has_file(dir, VT_SAMPLES_FILE) || has_file(dir, VT_MARKER_FILE);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* free the @n strings of @s (the ones not handed on when out of memory) */
static void free_strs(char **s, int n)
{
	for (int i = 0; i < n; i++)
		free(s[i]);
}

/*
 * The inputs as merge reads them: an argument naming a directory with no
 * trace data of its own but subdirectories that have some (the example's
 * guest/ with python/, kernel/ and markers/) stands for those
 * subdirectories, in name order, with its @NAME if it had one.  The new
 * argument list in *@out (*@nout entries, strings allocated: free with
 * free_inputs), or -1 with the message set.
 */
static int expand_inputs(char **args, int n, char ***out, int *nout)
{
	char **v = NULL;
	int nv = 0, cap = 0;

	for (int i = 0; i < n; i++) {
		char path[4096], name[MERGE_VM_NAME_MAX], *subs[MERGE_MAX_SOURCES];
		int nsub = 0, expanded;

		if (split_arg(args[i], path, sizeof(path), name) < 0)
			goto too_long;
		if (is_dir(path) && !has_trace_data(path)) {
			DIR *d = opendir(path);
			struct dirent *de;

			while (d && (de = readdir(d)) && nsub < MERGE_MAX_SOURCES) {
				char sub[4200];

				if (de->d_name[0] == '.' ||
				    snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub))
					continue;
				if (is_dir(sub) && has_trace_data(sub) && !(subs[nsub++] = strdup(sub))) {
					closedir(d);
					free_strs(subs, nsub);
					goto oom;
				}
			}
			if (d)
				closedir(d);
			vt_sort(subs, (size_t)nsub, sizeof(*subs), cmp_str);
		}
		expanded = nsub > 0;
		if (!expanded && !(subs[nsub++] = strdup(args[i])))
			goto oom;
		for (int k = 0; k < nsub; k++) {
			if (nv == cap) {
				char **nvv = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*v));

				if (!nvv) {
					free_strs(subs + k, nsub - k);
					goto oom;
				}
				v = nvv;
			}
			if (*name && expanded) {
				char *named = NULL;

				if (asprintf(&named, "%s@%s", subs[k], name) < 0) {
					free_strs(subs + k, nsub - k);
					goto oom;
				}
				free(subs[k]);
				subs[k] = named;
			}
			v[nv++] = subs[k];
		}
	}
	*out = v;
	*nout = nv;
	return 0;
too_long:
	vt_err_set("an input path is too long");
	goto fail;
oom:
	vt_err_set("out of memory");
fail:
	for (int k = 0; k < nv; k++)
		free(v[k]);
	free(v);
	return -1;
}

static void free_inputs(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* align's HOSTDIR (a directory or trace.dat), NULL when there is none. */
static const char *host_dir(const struct merge_ctx *mc)
{
	return mc->plan.host_in >= 0 ? mc->sources[mc->plan.host_in].path : NULL;
}

/* align's GUESTDIR of VM @v, NULL when it has none. */
static const char *vm_clock_dir(const struct merge_ctx *mc, int v)
{
	int i = mc->plan.vm_clock_in[v];

	return i >= 0 ? mc->sources[i].path : NULL;
}

/* Add the readers of one input path: a trace.dat file, or a directory with
 * a trace.dat and/or uftrace data (info) and/or samples.tsv. */
static int add_input(struct merge_source *src, int idx, int *found)
{
	char p[4200];

	if (!is_dir(src->path)) {
		(*found)++;
		return merge_reader_tracedat(src, idx, src->path);
	}
	if (has_file(src->path, VT_TD_FILE)) {
		if (snprintf(p, sizeof(p), "%s/%s", src->path, VT_TD_FILE) >= (int)sizeof(p))
			return vt_err_set("%s: path too long", src->path);
		(*found)++;
		if (merge_reader_tracedat(src, idx, p) < 0)
			return -1;
	}
	if (has_file(src->path, "info")) {
		(*found)++;
		if (merge_reader_uftrace(src, idx) < 0)
			return -1;
	}
	if (has_file(src->path, VT_SAMPLES_FILE)) {
		(*found)++;
		if (merge_reader_samples(src, idx) < 0)
			return -1;
	}
	return 0;
}

static void progress(struct merge_ctx *mc, uint64_t n, uint64_t ts_ns, uint64_t first_ns,
		     int force_end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force_end && now.tv_sec == mc->progress_last.tv_sec)
		return;
	mc->progress_last = now;
	fprintf(stderr, "\rvmtrace: %s: %" PRIu64 " events, at %.3f s%s", vt_err_command("merge"), n,
		(double)(ts_ns - first_ns) / VT_NS_PER_SEC, force_end ? "\n" : "   ");
}

static void summary(const struct merge_ctx *mc, const struct merge_sink_ops *sink,
		    const char *out, uint64_t total, uint64_t first_ns, uint64_t last_ns)
{
	fprintf(stderr, "vmtrace: %s: %" PRIu64 " events -> %s (%s)\n", vt_err_command("merge"),
		total, out, sink->name);
	for (int i = 0; i < mc->nr_sources; i++) {
		const struct merge_source *s = &mc->sources[i];

		fprintf(stderr, "  %-8s %-40s %12" PRIu64 " events", s->label, s->path, s->events);
		if (s->events)
			fprintf(stderr, ", %.9f .. %.9f s", (double)s->first_ns / VT_NS_PER_SEC,
				(double)s->last_ns / VT_NS_PER_SEC);
		fprintf(stderr, "%s%s\n", s->partial ? " (PARTIAL: truncated/corrupt input)" : "",
			s->clock_only ? " (sync markers only)" : "");
	}
	if (total)
		fprintf(stderr, "  span     %.9f s (%.9f .. %.9f s on the host timeline)\n",
			(double)(last_ns - first_ns) / VT_NS_PER_SEC, (double)first_ns / VT_NS_PER_SEC,
			(double)last_ns / VT_NS_PER_SEC);
	for (int v = 0; v < mc->plan.nr_vms; v++) {
		const char *name = *mc->plan.vm_name[v] ? mc->plan.vm_name[v] : "guest";
		uint64_t unmapped = 0;
		int guest_clock = 0;

		for (int i = 0; i < mc->nr_sources; i++)
			if (mc->sources[i].machine == (uint32_t)v + 1) {
				unmapped += mc->sources[i].clock.unmapped;
				guest_clock |= mc->sources[i].tsc_kind == ALIGN_CLOCK_GUEST;
			}
		if (!guest_clock)
			fprintf(stderr, "  align    %s: none needed (host-clock samples only)\n", name);
		else if (mc->models[v])
			fprintf(stderr, "  align    %s: %s (clock from %s)\n", name,
				align_model_summary(mc->models[v]), vm_clock_dir(mc, v));
		else
			fprintf(stderr, "  align    %s: no clock model: guest TSC - %" PRId64
				" = host TSC (error bound unknown)\n", name,
				mc->sources[0].clock.offset_tsc);
		if (unmapped)
			fprintf(stderr, "  align    %s: %" PRIu64 " stamps outside the model, "
				"placed with the offset\n", name, unmapped);
	}
	fprintf(stderr, "  flows    %" PRIu64 "\n", mc->flows.nr_flows);
}

/* Read what each of the @n inputs @args ("PATH" or "PATH@NAME") declares
 * into mc->in. */
static int read_inputs(struct merge_ctx *mc, char **args, int n)
{
	for (int i = 0; i < n; i++) {
		struct merge_input *in = &mc->in[i];

		memset(in, 0, sizeof(*in));
		if (split_arg(args[i], in->path, sizeof(in->path), in->vm) < 0) {
			vt_err_set("%s: path too long", args[i]);
			return VT_EXIT_USAGE;
		}
		in->named = *in->vm != 0;	/* DIR@NAME: overrides the meta */
		in->is_dir = is_dir(in->path);
		in->is_file = is_file(in->path);
		in->has_td = in->is_dir && has_file(in->path, VT_TD_FILE);
		in->has_markers = in->is_dir && has_file(in->path, VT_MARKER_FILE);
		in->has_samples = in->is_dir && has_file(in->path, VT_SAMPLES_FILE);
		if (read_meta(mc, in) < 0)
			return VT_EXIT_FAIL;
	}
	return VT_EXIT_OK;
}

struct merge_ctx *merge_new(const struct merge_opts *o)
{
	struct merge_ctx *mc = calloc(1, sizeof(*mc));

	if (!mc) {
		vt_err_set("out of memory");
		return NULL;
	}
	mc->opts = *o;
	merge_flows_init(&mc->flows, &mc->tables);
	merge_derive_init(&mc->deriver, &mc->tables);
	return mc;
}

int merge_plan(struct merge_ctx *mc, char *const *args, int n)
{
	char **inputs;
	int ret;

	if (n < 1) {
		vt_err_set("no input");
		return VT_EXIT_USAGE;
	}
	if (expand_inputs((char **)args, n, &inputs, &mc->plan.nin) < 0)
		return VT_EXIT_FAIL;
	if (mc->plan.nin > MERGE_MAX_SOURCES) {
		vt_err_set("at most %d inputs", MERGE_MAX_SOURCES);
		free_inputs(inputs, mc->plan.nin);
		mc->plan.nin = 0;
		return VT_EXIT_USAGE;
	}
	ret = read_inputs(mc, inputs, mc->plan.nin);
	free_inputs(inputs, mc->plan.nin);
	if (ret != VT_EXIT_OK)
		return ret;
	if (merge_plan_decide(mc->in, mc->plan.nin, mc->opts.tsc_hz, mc->opts.offset_tsc,
			      &mc->plan, mc->sources) < 0)
		return VT_EXIT_FAIL;
	for (int i = 0; i < mc->plan.nin; i++) {
		mc->sources[i].sorter = &mc->sorter;
		mc->sources[i].tables = &mc->tables;
	}
	return VT_EXIT_OK;
}

/* One clock model per VM (align/), handed to its inputs' clock maps; a VM
 * without one is warned about, -1 when out of memory (message set). */
static int build_models(struct merge_ctx *mc)
{
	const struct merge_opts *o = &mc->opts;
	struct merge_plan *plan = &mc->plan;

	for (int v = 0; v < mc->plan.nr_vms && !o->no_align && host_dir(mc); v++) {
		struct align_load_opts ao;
		struct align_model *model;

		if (!vm_clock_dir(mc, v))
			continue;	/* only trace.dat files given: no directory */
		align_load_opts_init(&ao);
		ao.host_hz = plan->hz;	/* the host frequency merge uses: one decision */
		ao.has_offset = o->has_offset;
		ao.offset_tsc = o->offset_tsc;
		model = mc->models[v] = align_model_from_dirs(host_dir(mc), vm_clock_dir(mc, v),
							      &ao, &mc->vm_bad_markers[v]);
		if (!model) {
			if (vt_err_code() == ENOMEM)
				return -1;
			vt_warn("%s: no clock model (%s): guest TSC - %" PRId64 " taken as host TSC",
				vm_clock_dir(mc, v), vt_err_msg(), o->offset_tsc);
			continue;
		}
		/* a model onto a ns host clock: the host's ns stamps are aligned */
		for (int i = 0; i < plan->nin && align_model_host_hz(model) == VT_NS_PER_SEC; i++)
			if (mc->sources[i].machine == MERGE_MACHINE_HOST)
				mc->sources[i].ns_model = 1;
		for (size_t w = 0; w < align_model_nr_warnings(model); w++)
			vt_warn("align %s: %s", *mc->plan.vm_name[v] ? mc->plan.vm_name[v] : "guest",
				align_model_warning(model, w));
		for (int i = 0; i < plan->nin; i++) {
			struct merge_source *s = &mc->sources[i];

			if (s->machine != (uint32_t)v + 1 || s->clock.kind != ALIGN_CLOCK_GUEST)
				continue;
			align_clock_set_model(&s->clock, model);
		}
	}
	return 0;
}

/* Every input's readers, then each VM's sync markers as its model matched
 * them (instants on both sides and a flow between). */
static int open_inputs(struct merge_ctx *mc)
{
	struct merge_plan *plan = &mc->plan;
	struct merge_source *sources = mc->sources;

	mc->nr_sources = plan->nin;
	for (int i = 0; i < plan->nin; i++) {
		int found = 0;

		if (add_input(&sources[i], i, &found) < 0)
			return VT_EXIT_FAIL;
		/* nothing found: a directory (add_input reads any other path) */
		if (!found && sources[i].machine != MERGE_MACHINE_HOST &&
		    has_file(sources[i].path, VT_MARKER_FILE)) {
			sources[i].clock_only = 1;	/* the VM's markers only */
			continue;
		}
		if (!found) {
			vt_err_set("%s: no trace.dat, no uftrace data (info) and no samples.tsv found",
				   sources[i].path);
			return VT_EXIT_FAIL;
		}
	}
	for (int v = 0; v < mc->plan.nr_vms; v++) {
		int g = -1, h = -1;

		if (!mc->models[v])
			continue;
		for (int i = 0; i < plan->nin; i++) {
			if (sources[i].machine == (uint32_t)v + 1 &&
			    sources[i].clock.kind == ALIGN_CLOCK_GUEST && (g < 0 || sources[i].clock_only))
				g = i;
			if (sources[i].machine == MERGE_MACHINE_HOST &&
			    sources[i].clock.kind == ALIGN_CLOCK_HOST && h < 0 &&
			    !strcmp(sources[i].path, host_dir(mc)))	/* set: a model was built */
				h = i;
		}
		if (g < 0)
			continue;
		if (merge_reader_markers(&sources[g], (uint16_t)g, h >= 0 ? &sources[h] : NULL,
					 (uint16_t)(h >= 0 ? h : 0), mc->models[v]) < 0)
			return VT_EXIT_FAIL;
	}
	return VT_EXIT_OK;
}

int merge_open(struct merge_ctx *mc)
{
	int ret;

	if (build_models(mc) < 0)
		return VT_EXIT_FAIL;
	ret = open_inputs(mc);
	if (ret == VT_EXIT_OK && mc->plan.unscaled >= 0 &&
	    mc->sources[mc->plan.unscaled].clock.kind != ALIGN_CLOCK_NS)
		vt_warn("%s: no tsc.hz in vmtrace.meta and no --tsc-hz: timestamps are "
			"written unscaled (1 tick = 1 ns)", mc->sources[mc->plan.unscaled].path);
	return ret;
}

/* Keep the open slices of @e's track counted: 0 for an end whose begin is
 * not in the trace (dropped), else 1. */
static int slice_depth(struct merge_tables *tb, const struct merge_event *e)
{
	struct merge_track *t = merge_track(tb, e->track);

	if (e->kind == MERGE_EV_BEGIN) {
		t->depth++;
	} else if (e->kind == MERGE_EV_END) {
		if (unlikely(!t->depth))
			return 0;
		t->depth--;
	}
	return 1;
}

/* The warnings of what was merged but not whole; VT_EXIT_PARTIAL if any. */
static int partial_inputs(const struct merge_ctx *mc)
{
	int ret = VT_EXIT_OK;

	for (int i = 0; i < mc->plan.nin && ret == VT_EXIT_OK; i++)
		if (mc->sources[i].partial) {
			vt_warn("%s: input truncated or corrupt: merged up to its last complete "
				"record", mc->sources[i].path);
			ret = VT_EXIT_PARTIAL;
		}
	for (int v = 0; v < mc->plan.nr_vms; v++)
		if (mc->vm_bad_markers[v]) {
			vt_warn("%s/%s: %zu marker records rejected (truncated or corrupt): "
				"clock model built from the others", vm_clock_dir(mc, v),
				VT_MARKER_FILE, mc->vm_bad_markers[v]);
			ret = VT_EXIT_PARTIAL;
		}
	if (mc->meta_bad)
		ret = VT_EXIT_PARTIAL;	/* warned when read */
	return ret;
}

int merge_run(struct merge_ctx *mc, const struct merge_sink_ops *sink, const char *out,
	      const void *sink_opts)
{
	int quiet = mc->opts.quiet, ret = VT_EXIT_OK;
	int tty = !quiet && isatty(STDERR_FILENO);
	uint64_t total = 0, first_ns = 0, last_ns = 0;
	struct merge_event *e, ev, derived[MERGE_DERIVE_MAX];
	void *sk = sink->open(&mc->tables, out, sink_opts);

	if (!sk)
		return VT_EXIT_FAIL;

	while ((e = merge_sort_next(&mc->sorter))) {
		struct merge_source *s = &mc->sources[e->src];
		int keep = 1, nd = 0;

		if (sink->derive)
			nd = merge_derive_feed(&mc->deriver, e, derived, &keep);
		if (keep && !slice_depth(&mc->tables, e))
			continue;	/* an end whose begin is not in the trace */
		if (likely(!s->samples))
			merge_flow_feed(&mc->flows, e);
		if (unlikely(keep && sink->event(sk, e) < 0)) {
			ret = VT_EXIT_FAIL;
			break;
		}
		for (int k = 0; k < nd; k++)
			if (slice_depth(&mc->tables, &derived[k]) &&
			    unlikely(sink->event(sk, &derived[k]) < 0)) {
				ret = VT_EXIT_FAIL;
				break;
			}
		if (unlikely(ret != VT_EXIT_OK))
			break;
		/* the per-source counts only: the totals are theirs, summed
		 * after the loop (output in time order: the first and the last
		 * of all are the earliest first and the latest last) */
		if (unlikely(!s->events))
			s->first_ns = e->ts_ns;
		s->events++;
		s->last_ns = e->ts_ns;
		if (unlikely(tty)) {
			if (unlikely(!total))
				first_ns = e->ts_ns;
			if (++total % PROGRESS_EVERY == 0)
				progress(mc, total, e->ts_ns, first_ns, 0);
		}
	}
	total = 0;
	for (int i = 0; i < mc->nr_sources; i++) {
		const struct merge_source *s = &mc->sources[i];

		if (!s->events)
			continue;
		if (!total || s->first_ns < first_ns)
			first_ns = s->first_ns;
		if (s->last_ns > last_ns)
			last_ns = s->last_ns;
		total += s->events;
	}
	/* a stream that ran out of memory ended early: no output is whole */
	for (int i = 0; ret == VT_EXIT_OK && i < mc->plan.nin; i++)
		if (mc->sources[i].oom) {
			vt_err_set("%s: out of memory", mc->sources[i].path);
			ret = VT_EXIT_FAIL;
		}
	/* close slices still open at the end (a recording stopped inside) */
	for (uint32_t i = 0; ret == VT_EXIT_OK && i < merge_track_count(&mc->tables); i++) {
		struct merge_track *t = merge_track(&mc->tables, i);

		memset(&ev, 0, sizeof(ev));
		ev.kind = MERGE_EV_END;
		ev.track = i;
		ev.ts_ns = last_ns;
		ev.cpu = -1;
		for (; t->depth; t->depth--)
			if (sink->event(sk, &ev) < 0) {
				ret = VT_EXIT_FAIL;
				break;
			}
	}
	if (ret == VT_EXIT_OK &&
	    (merge_strtab_failed(&mc->tables) || mc->deriver.failed || mc->flows.failed)) {
		vt_err_set("out of memory for names, tracks, derived slices or flows");
		ret = VT_EXIT_FAIL;
	}
	if (tty)
		progress(mc, total, last_ns, first_ns, 1);
	if (ret == VT_EXIT_FAIL) {
		/* keep the failure's message and kind: closing may set others */
		char msg[1024];
		int code = vt_err_code();

		snprintf(msg, sizeof(msg), "%s", vt_err_msg());
		if (sink->abort)
			sink->abort(sk);
		else
			sink->close(sk);
		vt_err_set_code(code, "%s", msg);
		return ret;
	}
	if (sink->close(sk) < 0)
		return VT_EXIT_FAIL;
	if (merge_strtab_failed(&mc->tables))	/* while closing */
		return vt_err_set("out of memory for names"), VT_EXIT_FAIL;
	if (!quiet)
		summary(mc, sink, out, total, first_ns, last_ns);
	return partial_inputs(mc);
}

void merge_free(struct merge_ctx *mc)
{
	if (!mc)
		return;
	merge_sort_free(&mc->sorter);
	for (int v = 0; v < mc->plan.nr_vms; v++)
		if (mc->models[v])
			align_model_free(mc->models[v]);
	merge_flows_free(&mc->flows);
	merge_derive_free(&mc->deriver);
	merge_tables_free(&mc->tables);
	free(mc);
}
