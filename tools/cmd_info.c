/*
 * cmd_info.c - `vmtrace info DIR`: describe a trace directory: its
 * vmtrace.meta (clock, TSC frequency, domain...); for uftrace data the
 * tasks, record counts per type and the time span, with every truncated
 * or corrupt file named; for a recorder directory (trace.dat) the events
 * per system:event and per CPU, the time span and the events lost.
 * Command main thread; prints and exits.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "filekind.h"
#include "meta.h"
#include "tracedat.h"
#include "uftrace.h"
#include "cli.h"
#include "grow.h"

#define INFO_PATH_MAX		4096
#define INFO_KEY_MAX		64

struct task_stats {
	uint64_t nr[4];		/* by enum vt_uft_type */
	uint64_t first, last;
	uint64_t backwards;	/* records older than the one before */
	int truncated, corrupt;
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace info [-r] DIR\n"
		"  describe a trace directory: metadata, tasks, records, time span\n"
		"  -r, --records   also list every record (tid, time, type, depth, function)\n");
}

/* 1 if @dir holds a uftrace info file. */
static int has_uftrace_info(const char *dir)
{
	char p[PATH_MAX];

	return snprintf(p, sizeof(p), "%s/info", dir) < (int)sizeof(p) && !access(p, F_OK);
}

/* Print a span of @d timestamps in the directory's clock. */
static void print_span(uint64_t d, const char *clock, uint64_t hz)
{
	if (!strcmp(clock, "tsc")) {
		printf("%" PRIu64 " TSC ticks", d);
		if (hz)
			printf(" = %.9f s at %" PRIu64 " Hz", (double)d / hz, hz);
	} else {
		printf("%.9f s", d / 1e9);
	}
}

static const char *const type_name[] = { "entry", "exit", "lost", "event" };

static int scan_task(struct vt_uft_reader *r, int idx, struct task_stats *st, int list)
{
	struct vt_uft_stream *s = vt_uft_stream_open(r, idx);
	struct vt_uft_record rec;
	uint64_t prev = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!s)
		return -1;
	while ((ret = vt_uft_stream_next(s, &rec)) == 1) {
		uint64_t total = st->nr[0] + st->nr[1] + st->nr[2] + st->nr[3];

		st->nr[vt_uft_type(rec.bits)]++;
		if (list) {
			unsigned t = vt_uft_type(rec.bits);
			uint64_t a = vt_uft_addr(rec.bits);

			printf("  %8d %20" PRIu64 " %-5s %5u ", vt_uft_task_tid(r, idx), rec.time,
			       type_name[t], vt_uft_depth(rec.bits));
			if (t == VT_UFT_LOST)
				printf("(%" PRIu64 " lost)\n", a);
			else if (t == VT_UFT_EVENT)
				printf("(event %" PRIu64 ")\n", a);
			else
				printf("%s <%#" PRIx64 ">\n", vt_uft_sym_name(r, a), a);
		}
		if (!total)
			st->first = rec.time;
		else if (rec.time < prev)
			st->backwards++;
		if (rec.time > st->last)
			st->last = rec.time;
		prev = rec.time;
	}
	if (ret < 0) {
		st->corrupt = 1;
		vt_warn("%s", vt_err_msg());
	} else if (vt_uft_stream_truncated(s)) {
		st->truncated = 1;
		vt_warn("%s: ends inside a record at offset %" PRIu64 " (truncated: a killed "
			"writer?)", vt_uft_stream_path(s), vt_uft_stream_offset(s));
	}
	vt_uft_stream_close(s);
	return 0;
}

static int info_uftrace(const char *dir, const char *clock, uint64_t hz, int list)
{
	struct vt_uft_reader *r = vt_uft_open(dir);
	const struct vt_uft_info *in;
	uint64_t first = UINT64_MAX, last = 0, all[4] = { 0 };
	int partial = 0;

	if (!r) {
		vt_err_print("info");
		return VT_EXIT_FAIL;
	}
	in = vt_uft_reader_info(r);
	printf("\nuftrace data (feat_mask %#" PRIx64 ", info_mask %#" PRIx64 ")\n",
	       vt_uft_feat_mask(r), vt_uft_info_mask(r));
	printf("  exename:     %s\n", in->exename);
	printf("  cmdline:     %s\n", in->cmdline);
	if (in->exit_status >= 0)
		printf("  exit status: %d\n", in->exit_status);
	if (in->max_stack)
		printf("  max depth:   %u\n", in->max_stack);
	printf("  symbols:     %zu\n", vt_uft_nr_syms(r));
	printf("  tasks:       %d\n\n", vt_uft_nr_tasks(r));
	if (list) {
		printf("  %8s %20s %-5s %5s %s\n", "TID", "TIME", "TYPE", "DEPTH", "FUNCTION");
		for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
			struct task_stats ignored;

			if (scan_task(r, i, &ignored, 1)) {
				vt_err_print("info");
				vt_uft_close(r);
				return VT_EXIT_FAIL;
			}
		}
		printf("\n");
	}
	printf("  %8s %8s %10s %10s %8s %8s  %s\n", "TID", "PID", "ENTRY", "EXIT", "LOST",
	       "EVENT", "SPAN");
	for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
		struct task_stats st;
		uint64_t n;

		if (scan_task(r, i, &st, 0)) {
			vt_err_print("info");
			vt_uft_close(r);
			return VT_EXIT_FAIL;
		}
		partial |= st.truncated | st.corrupt;
		n = st.nr[0] + st.nr[1] + st.nr[2] + st.nr[3];
		printf("  %8d %8d %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "  ",
		       vt_uft_task_tid(r, i), vt_uft_task_pid(r, i), st.nr[VT_UFT_ENTRY],
		       st.nr[VT_UFT_EXIT], st.nr[VT_UFT_LOST], st.nr[VT_UFT_EVENT]);
		if (n)
			print_span(st.last - st.first, clock, hz);
		else
			printf("-");
		printf("%s%s\n", st.truncated ? " (truncated)" : "", st.corrupt ? " (corrupt)" : "");
		if (st.backwards)
			vt_warn("task %d: %" PRIu64 " records older than their predecessor",
				vt_uft_task_tid(r, i), st.backwards);
		for (int t = 0; t < 4; t++)
			all[t] += st.nr[t];
		if (n && st.first < first)
			first = st.first;
		if (n && st.last > last)
			last = st.last;
	}
	printf("\n  records:     %" PRIu64 " (%" PRIu64 " entry, %" PRIu64 " exit, %" PRIu64
	       " lost, %" PRIu64 " event)\n", all[0] + all[1] + all[2] + all[3], all[0], all[1],
	       all[2], all[3]);
	if (last >= first && first != UINT64_MAX) {
		printf("  time:        %" PRIu64 " .. %" PRIu64 " (%s)\n  span:        ", first,
		       last, clock);
		print_span(last - first, clock, hz);
		printf("\n");
	}
	vt_uft_close(r);
	return partial ? VT_EXIT_PARTIAL : VT_EXIT_OK;
}

/* One system:event of a trace.dat and how often it occurs. */
struct td_count {
	int id;
	char *name;		/* "system:event" */
	uint64_t n;
};

static int td_count_cmp(const void *a, const void *b)
{
	return strcmp(((const struct td_count *)a)->name, ((const struct td_count *)b)->name);
}

/* Count @ev into @c[0..*nr) by event id; -1 when out of memory. */
static int td_count_add(struct td_count **c, int *nr, const struct vt_td_event *ev)
{
	struct td_count *n;

	for (int i = 0; i < *nr; i++)
		if ((*c)[i].id == ev->id) {
			(*c)[i].n++;
			return 0;
		}
	n = realloc(*c, (*nr + 1) * sizeof(*n));
	if (!n)
		return vt_err_set("out of memory");
	*c = n;
	n = &n[(*nr)++];
	n->id = ev->id;
	n->n = 1;
	if (asprintf(&n->name, "%s:%s", ev->system, ev->name) < 0) {
		n->name = NULL;
		return vt_err_set("out of memory");
	}
	return 0;
}

/* Describe DIR/trace.dat: events per system:event and CPU, span, lost
 * (the recorder's counts in @m, may be NULL).  An exit code. */
static int info_tracedat(const char *path, const struct vt_meta *m, uint64_t hz)
{
	struct vt_td_reader *r = vt_td_read_open(path);
	struct td_count *c = NULL;
	uint64_t *per_cpu, total = 0, first = 0, last = 0, v;
	struct vt_td_event ev;
	char key[INFO_KEY_MAX];
	int nr = 0, nr_cpus, ret = VT_EXIT_OK, rd;
	const char *clock;

	if (!r) {
		vt_err_print("info");
		return VT_EXIT_FAIL;
	}
	if (vt_td_read_warning(r))
		vt_warn("%s", vt_td_read_warning(r));
	nr_cpus = vt_td_read_nr_cpus(r);
	clock = vt_td_read_clock(r);
	per_cpu = calloc(nr_cpus > 0 ? nr_cpus : 1, sizeof(*per_cpu));
	if (!per_cpu) {
		vt_td_read_close(r);
		vt_err_set("out of memory");
		vt_err_print("info");
		return VT_EXIT_FAIL;
	}
	while ((rd = vt_td_read_next_any(r, &ev)) == 1) {
		if (td_count_add(&c, &nr, &ev)) {
			vt_err_print("info");
			ret = VT_EXIT_FAIL;
			break;
		}
		if (!total++)
			first = ev.ts;
		last = ev.ts;
		if (ev.cpu >= 0 && ev.cpu < nr_cpus)
			per_cpu[ev.cpu]++;
	}
	if (rd < 0) {
		vt_err_print("info");
		ret = VT_EXIT_FAIL;
	}
	printf("\ntrace.dat (trace clock %s)\n", *clock ? clock : "not recorded");
	printf("  cpus:        %d\n", nr_cpus);
	printf("  events:      %" PRIu64 "\n", total);
	if (total) {
		printf("  time:        %" PRIu64 " .. %" PRIu64 "\n  span:        ", first, last);
		print_span(last - first, vt_td_clock_is_ns(clock) ? "ns" : "tsc", hz);
		printf("\n");
	}
	if (m && !vt_meta_get_u64(m, VT_MK_LOST_TOTAL, &v))
		printf("  lost:        %" PRIu64 "\n", v);
	else
		printf("  lost:        not recorded (no lost.total in %s)\n", VT_META_FILE);
	if (vt_td_read_truncated(r)) {
		vt_warn("%s: CPU data cut short (truncated: a killed recorder?)", path);
		if (ret == VT_EXIT_OK)
			ret = VT_EXIT_PARTIAL;
	}
	printf("\n  %4s %12s %12s\n", "CPU", "EVENTS", "LOST");
	for (int i = 0; i < nr_cpus; i++) {
		snprintf(key, sizeof(key), VT_MK_FMT_LOST_CPU, (unsigned)i);
		printf("  %4d %12" PRIu64 " ", i, per_cpu[i]);
		if (m && !vt_meta_get_u64(m, key, &v))
			printf("%12" PRIu64 "\n", v);
		else
			printf("%12s\n", "-");
	}
	if (nr)
		vt_sort(c, nr, sizeof(*c), td_count_cmp);
	printf("\n");
	for (int i = 0; i < nr; i++)
		printf("  event %s %" PRIu64 "\n", c[i].name ? c[i].name : "?", c[i].n);
	for (int i = 0; i < nr; i++)
		free(c[i].name);
	free(c);
	free(per_cpu);
	vt_td_read_close(r);
	return ret;
}

/* `vmtrace info [-r] DIR`: exit 0, 3 if a file is truncated/corrupt, 1 if
 * the directory cannot be read. */
int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int list = 0;
	char path[INFO_PATH_MAX];
	const char *dir, *clock = "ns";
	struct vt_meta *m = NULL;
	uint64_t hz = 0;
	int c, ret = VT_EXIT_OK;
	struct stat st;

	while ((c = getopt_long(argc, argv, "rh", opts, NULL)) != -1) {
		if (c == 'r') {
			list = 1;
			continue;
		}
		if (c == 'h') {
			usage(stdout);
			return VT_EXIT_OK;
		}
		return vt_cli_usage(usage, 0);
	}
	if (optind + 1 != argc)
		return vt_cli_usage(usage, 0);
	dir = argv[optind];
	if (!stat(dir, &st) && !S_ISDIR(st.st_mode)) {
		uint8_t head[VT_FILE_KIND_HEAD];
		ssize_t n = -1;
		int fd = open(dir, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			n = read(fd, head, sizeof(head));
			close(fd);
		}
		if (n < 0)
			vt_err_errno("%s: cannot read", dir);
		else
			vt_err_set("%s: not a trace directory: this is %s; info wants a directory "
				   "(vmtrace record -o DIR, vmtrace run -o DIR, python3 -m vmtrace -o DIR)",
				   dir, vt_file_kind(head, (size_t)n));
		vt_err_print("info");
		return VT_EXIT_FAIL;
	}
	if (access(dir, R_OK | X_OK)) {
		vt_err_errno("%s: cannot read directory", dir);
		vt_err_print("info");
		return VT_EXIT_FAIL;
	}
	printf("directory:     %s\n", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, VT_META_FILE);
	if (!access(path, F_OK)) {
		m = vt_meta_read(path);
		if (!m) {
			/* a bad file is described without it; no memory is a failure */
			vt_err_print("info");
			ret = vt_err_code() == ENOMEM ? VT_EXIT_FAIL : VT_EXIT_PARTIAL;
		}
	}
	if (m) {
		const char *v = vt_meta_get(m, VT_MK_CLOCK);

		if (v)
			clock = v;
		vt_meta_get_u64(m, VT_MK_TSC_HZ, &hz);
		printf("clock:         %s\n", clock);
		if (hz)
			printf("TSC Hz:        %" PRIu64 " (source: %s)\n", hz,
			       vt_meta_get(m, VT_MK_TSC_HZ_SOURCE) ?
			       vt_meta_get(m, VT_MK_TSC_HZ_SOURCE) : "not recorded");
		if (vt_meta_get(m, VT_MK_UFTRACE_NS_HZ))
			printf("for uftrace:   <TID>.dat and task.txt in ns (at %s Hz); the TSC "
			       "stamps in <TID>.tsc, task.tsc\n", vt_meta_get(m, VT_MK_UFTRACE_NS_HZ));
		else if (!strcmp(clock, "tsc") && has_uftrace_info(dir))
			printf("for uftrace:   the .dat files hold TSC ticks, not ns: vmtrace "
			       "finalize [--tsc-hz HZ] %s\n", dir);
		printf("metadata:\n");
		for (int i = 0; i < vt_meta_count(m); i++) {
			printf("  ");
			vt_meta_print_line(stdout, vt_meta_key(m, i), vt_meta_val(m, i));
		}
	} else {
		printf("clock:         ns (no %s: assumed, as uftrace record writes)\n",
		       VT_META_FILE);
	}
	snprintf(path, sizeof(path), "%s/info", dir);
	if (!access(path, F_OK)) {
		int r = info_uftrace(dir, clock, hz, list);

		if (r != VT_EXIT_OK)
			ret = r;
	} else {
		snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
		if (!access(path, F_OK)) {
			int r = info_tracedat(path, m, hz);

			if (r != VT_EXIT_OK)
				ret = r;
		} else {
			printf("\n(no trace data: no %s/info, no %s)\n", dir, path);
			vt_err_set("%s: no trace data (no info, no %s)", dir, VT_TD_FILE);
			vt_err_print("info");
			ret = VT_EXIT_FAIL;
		}
	}
	vt_meta_free(m);
	return ret;
}
