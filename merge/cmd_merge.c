/*
 * cmd_merge.c - `vmtrace merge INPUT... -o OUT`: the command line over
 * merge's pipeline (merge/pipeline.h): options, the output format's sink
 * (the table of merge's formats), then plan, open and run.  Command thread only.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "err.h"
#include "merge.h"
#include "pipeline.h"

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: vmtrace merge INPUT... -o OUT [options]\n"
		"       vmtrace merge DIR -o OUT          (one input: a plain conversion)\n"
		"\n"
		"Merge a host recording (trace.dat) and guest traces (uftrace data dirs,\n"
		"guest kernel trace.dat) into one timeline in nanoseconds.  An INPUT is a\n"
		"directory or trace.dat file; its vmtrace.meta domain= says host or guest\n"
		"(undeclared: the first input is the host, the others guests).  All guest\n"
		"inputs are one VM unless named: DIR@NAME (or meta vm=NAME) puts DIR in\n"
		"VM NAME; DIR@host makes DIR a host input.  A guest directory holding\n"
		"only markers.dat adds the VM's sync markers; one holding samples.tsv\n"
		"(tools/vmtrace-sample) adds the VM's stack samples.\n"
		"\n"
		"  -o, --output OUT       output: .pftrace/.perfetto-trace, .json, or a directory\n"
		"  -F, --format FMT       perfetto | chrome | uftrace (default: from OUT)\n"
		"  -f, --force            uftrace OUT: replace the trace files of an existing\n"
		"                         directory (default: refused)\n"
		"      --tsc-hz HZ        host TSC frequency (default: HOSTDIR/vmtrace.meta)\n"
		"      --offset N         guest_tsc - host_tsc in ticks: the clock model's\n"
		"                         user source (ranked first, as vmtrace align --offset),\n"
		"                         and the map when no model can be built (default 0)\n"
		"      --guest-offset N   the old spelling of --offset\n"
		"      --no-align         do not build a clock model; use --offset\n"
		"      --machine-id       Perfetto: mark guest packets with TracePacket.machine_id\n"
		"                         (a machine per VM; default: guests are processes of\n"
		"                         one machine named \"guest: ...\", see docs/merge.md)\n"
		"      --no-machine-id    the default\n"
		"  -q, --quiet            no progress line, no summary\n"
		"  -h, --help\n");
}

/* merge's formats, in the order --format and an output's ending try them */
static const struct merge_sink_ops *const sinks[] = {
	&merge_sink_perfetto, &merge_sink_chrome, &merge_sink_uftrace,
};
#define NR_SINKS	((int)(sizeof(sinks) / sizeof(sinks[0])))

/* The sink of --format @fmt (NULL: chosen by @out, never NULL nor "": a
 * directory or a name with no ending, else the ending); NULL when none
 * fits. */
static const struct merge_sink_ops *sink_find(const char *fmt, const char *out)
{
	struct stat st;
	size_t n = strlen(out);
	const char *dot = strrchr(out, '.');
	int dir;

	if (fmt) {
		for (int i = 0; i < NR_SINKS; i++)
			if (!strcmp(fmt, sinks[i]->name) || merge_name_in(fmt, sinks[i]->also))
				return sinks[i];
		return NULL;
	}
	/* a directory, a name ending in '/', or one with no ending */
	dir = (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) || out[n - 1] == '/' ||
	      !dot || strchr(dot, '/');
	for (int i = 0; i < NR_SINKS; i++)
		if (dir ? sinks[i]->dir : merge_name_in(dot, sinks[i]->ext))
			return sinks[i];
	return NULL;
}

/* The command line: pipeline options into @o, Perfetto's into @po, the
 * uftrace directory's into @uo, the output and --format into *@out and
 * *@fmt.  0 to go on; -1 when the command ends here (--help, a bad option)
 * with its exit status in *@st. */
static int parse_opts(int argc, char **argv, struct merge_opts *o,
		      struct merge_perfetto_opts *po, struct merge_uftrace_opts *uo,
		      const char **out, const char **fmt, int *st)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'F' },
		{ "force", no_argument, NULL, 'f' },
		{ "tsc-hz", required_argument, NULL, 'H' },
		{ "offset", required_argument, NULL, 'G' },
		{ "guest-offset", required_argument, NULL, 'G' },	/* old spelling */
		{ "no-align", no_argument, NULL, 'N' },
		{ "no-machine-id", no_argument, NULL, 'M' },
		{ "machine-id", no_argument, NULL, 'I' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:F:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*out = optarg;
			break;
		case 'f':
			uo->force = 1;
			break;
		case 'F':
			*fmt = optarg;
			break;
		case 'H':
			if (vt_cli_tsc_hz(optarg, &o->tsc_hz)) {
				*st = VT_EXIT_USAGE;
				return -1;
			}
			break;
		case 'G':
			if (vt_parse_i64(optarg, &o->offset_tsc)) {
				vt_error("bad --offset '%s'", optarg);
				*st = VT_EXIT_USAGE;
				return -1;
			}
			o->has_offset = 1;
			break;
		case 'N':
			o->no_align = 1;
			break;
		case 'M':
			po->machine_ids = 0;
			break;
		case 'I':
			po->machine_ids = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		default:
			*st = vt_cli_usage(usage, c == 'h');
			return -1;
		}
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_opts o = { 0 };
	struct merge_perfetto_opts po = { 0 };
	struct merge_uftrace_opts uo = { 0 };
	const struct merge_sink_ops *sink;
	const char *out = NULL, *fmt = NULL;
	struct merge_ctx *m;
	int ret;

	if (parse_opts(argc, argv, &o, &po, &uo, &out, &fmt, &ret) < 0)
		return ret;
	if (argc - optind < 1 || !out || !*out)
		return vt_cli_usage(usage, 0);
	sink = sink_find(fmt, out);
	if (!sink) {
		vt_error("%s: unknown output format (use --format "
			"perfetto|chrome|uftrace or .pftrace/.json/a directory)", fmt ? fmt : out);
		return VT_EXIT_USAGE;
	}
	m = merge_new(&o);
	if (!m) {
		vt_err_print("merge");
		return VT_EXIT_FAIL;
	}
	ret = merge_plan(m, argv + optind, argc - optind);
	if (ret == VT_EXIT_OK)
		ret = merge_open(m);
	if (ret == VT_EXIT_OK)
		ret = merge_run(m, sink, out, sink == &merge_sink_perfetto ? (const void *)&po :
					      sink == &merge_sink_uftrace ? (const void *)&uo : NULL);
	if (ret != VT_EXIT_OK && ret != VT_EXIT_PARTIAL) {
		vt_err_print("merge");
		if (vt_err_code() == ENOTEMPTY)
			ret = VT_EXIT_USAGE;	/* an existing OUT: --force, as run and convert */
	}
	merge_free(m);
	return ret;
}
