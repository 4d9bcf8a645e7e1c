/*
 * cmd_report.c - `vmtrace report INPUT...` and `vmtrace export --sqlite
 * OUT.db INPUT...`: both run merge's pipeline (merge/pipeline.h: readers ->
 * clock -> sorter -> flows) over the recorded directories and consume the
 * sorted events through their own sink ("report": the chain analyser and
 * its text/HTML output, opened with the command's struct report_opts;
 * "sqlite": merge/report/sink_sqlite.c).  Command thread only.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "err.h"
#include "crit.h"
#include "merge/pipeline.h"

#define DEFAULT_TOP	10
#define DEFAULT_FNS	25

/* ---- the "report" sink ------------------------------------------------ */

struct report_sink {
	struct report *r;
	struct report_opts o;
};

static void *rs_open(struct merge_tables *tb, const char *out, const void *opts)
{
	struct report_sink *rs = calloc(1, sizeof(*rs));

	if (!rs) {
		vt_err_set("report: out of memory");
		return NULL;
	}
	rs->o = *(const struct report_opts *)opts;
	rs->r = report_new(tb, rs->o.all_calls);
	if (!rs->r || report_load_extents(rs->r, &rs->o)) {
		if (rs->r)
			report_free(rs->r);
		free(rs);
		return NULL;
	}
	return rs;
}

static int rs_event(void *sink, const struct merge_event *ev)
{
	struct report *r = ((struct report_sink *)sink)->r;

	return report_feed(r, ev) < 0 ? -1 : crit_feed(r, ev);
}

static int rs_close(void *sink)
{
	struct report_sink *rs = sink;
	struct report *r = rs->r;
	const struct report_opts *o = &rs->o;
	int ret = report_finish(r);

	if (ret == 0)
		ret = crit_finish(r);
	FILE *fp = stdout;

	if (ret == 0 && o->text_out && !(fp = fopen(o->text_out, "w")))
		ret = vt_err_errno("%s: cannot create", o->text_out);
	if (ret == 0)
		ret = report_print_text(r, fp, o);
	if (fp && fp != stdout && fclose(fp) && ret == 0)
		ret = vt_err_errno("%s: write error", o->text_out);
	if (ret == 0 && o->html)
		ret = report_write_html(r, o->html, o);
	report_free(r);
	free(rs);
	return ret;
}

const struct merge_sink_ops report_sink_report = {
	.name = "report",
	.open = rs_open,
	.event = rs_event,
	.close = rs_close,
};

/* ---- the commands ----------------------------------------------------- */

enum { O_TSC_HZ = 256, O_GUEST_OFFSET, O_NO_ALIGN, O_HTML, O_FNS, O_SQLITE, O_ALL_CALLS };

static const struct option common_opts[] = {
	{ "tsc-hz", required_argument, NULL, O_TSC_HZ },
	{ "offset", required_argument, NULL, O_GUEST_OFFSET },
	{ "guest-offset", required_argument, NULL, O_GUEST_OFFSET },	/* old spelling */
	{ "no-align", no_argument, NULL, O_NO_ALIGN },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "html", required_argument, NULL, O_HTML },
	{ "top", required_argument, NULL, 'n' },
	{ "functions", required_argument, NULL, O_FNS },
	{ "output", required_argument, NULL, 'o' },
	{ "sqlite", required_argument, NULL, O_SQLITE },
	{ "all-calls", no_argument, NULL, O_ALL_CALLS },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *fp, int export)
{
	if (export)
		fprintf(fp, "usage: vmtrace export --sqlite OUT.db HOSTDIR [GUESTDIR...] [options]\n"
			"\nMerge the inputs (as `vmtrace merge`) into an SQLite database: tables\n"
			"processes, threads, slices, instants, counters, flows, requests (the\n"
			"per-request I/O chain) and view request_stages; docs/format/sqlite.md.\n\n");
	else
		fprintf(fp, "usage: vmtrace report HOSTDIR [GUESTDIR...] [options]\n"
			"\nWhere the time goes: first the slowest Python calls and guest syscalls,\n"
			"each split into disjoint parts (guest CPU, vCPU preempted on the host,\n"
			"host disk, ...; docs/report.md: critical path), then per block request the chain\n"
			"Python call -> syscall -> block issue -> kick -> QEMU I/O -> injection ->\n"
			"guest irq -> completion -> return, from the links present (docs/report.md).\n"
			"Inputs as for `vmtrace merge`: the host recording directory first, then\n"
			"guest directories (Python/C uftrace data and/or guest kernel trace.dat).\n\n"
			"  -n, --top N            slowest calls, syscalls and requests listed (default %d)\n"
			"      --all-calls        interpreter start-up frames and helper processes'\n"
			"                         syscalls in the headline too\n"
			"      --functions N      functions listed (default %d)\n"
			"      --html OUT.html    also write a self-contained HTML page\n"
			"  -o, --output FILE      the text report to FILE (default stdout)\n",
			DEFAULT_TOP, DEFAULT_FNS);
	fprintf(fp, "      --tsc-hz HZ        host TSC frequency (default: HOSTDIR/vmtrace.meta)\n"
		"      --offset N         guest_tsc - host_tsc in ticks (as vmtrace merge\n"
		"                         --offset; --guest-offset is the old spelling)\n"
		"      --no-align         no clock model; use --offset\n"
		"  -q, --quiet            no merge progress line or summary\n");
}

static void usage_report(FILE *fp)
{
	usage(fp, 0);
}

static void usage_export(FILE *fp)
{
	usage(fp, 1);
}

static int parse_count(const char *cmd, const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < 0 || v > 1000000) {
		vt_error("bad count '%s'", s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int run(int argc, char **argv, int export)
{
	const char *cmd = export ? "export" : "report", *db = NULL;
	struct report_opts ro = { .top = DEFAULT_TOP, .fns = DEFAULT_FNS };
	struct merge_opts mo = { 0 };
	struct merge_ctx *m;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "n:o:qh", common_opts, NULL)) != -1) {
		switch (c) {
		case O_TSC_HZ:
			if (vt_cli_tsc_hz(optarg, &mo.tsc_hz))
				return VT_EXIT_USAGE;
			break;
		case O_GUEST_OFFSET:
			if (vt_parse_i64(optarg, &mo.offset_tsc)) {
				vt_error("bad --offset '%s'", optarg);
				return VT_EXIT_USAGE;
			}
			mo.has_offset = 1;
			break;
		case O_NO_ALIGN:
			mo.no_align = 1;
			break;
		case 'q':
			mo.quiet = 1;
			break;
		case 'h':
			usage(stdout, export);
			return VT_EXIT_OK;
		case O_HTML:
			if (export)
				goto bad;
			ro.html = optarg;
			break;
		case 'n':
			if (export || parse_count(cmd, optarg, &ro.top))
				goto bad;
			break;
		case O_FNS:
			if (export || parse_count(cmd, optarg, &ro.fns))
				goto bad;
			break;
		case O_ALL_CALLS:
			if (export)
				goto bad;
			ro.all_calls = 1;
			break;
		case 'o':
			if (export)
				goto bad;
			ro.text_out = optarg;
			break;
		case O_SQLITE:
			if (!export)
				goto bad;
			db = optarg;
			break;
		default:
			goto bad;
		}
	}
	int nin = argc - optind;

	ro.inputs = argv + optind;
	ro.ninputs = nin;

	if (nin < 1 || nin > MERGE_MAX_SOURCES || (export && !db))
		goto bad;
	m = merge_new(&mo);
	if (!m) {
		vt_err_print(cmd);
		return VT_EXIT_FAIL;
	}
	ret = merge_plan(m, argv + optind, nin);
	if (ret == VT_EXIT_OK)
		ret = merge_open(m);
	if (ret == VT_EXIT_OK)
		ret = export ? merge_run(m, &report_sink_sqlite, db, &ro)
			     : merge_run(m, &report_sink_report, "-", &ro);
	if (ret != VT_EXIT_OK && ret != VT_EXIT_PARTIAL)
		vt_err_print(cmd);
	merge_free(m);
	return ret;
bad:
	return vt_cli_usage(export ? usage_export : usage_report, 0);
}

/* `vmtrace report`: the text (and HTML) report of the inputs. */
int cmd_report(int argc, char **argv)
{
	return run(argc, argv, 0);
}

/* `vmtrace export --sqlite OUT.db`: the merged events in SQLite. */
int cmd_export(int argc, char **argv)
{
	return run(argc, argv, 1);
}
