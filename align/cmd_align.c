/*
 * cmd_align.c - `vmtrace align HOSTDIR [GUESTDIR]`: loads the clock
 * sources of a host and a guest recording, builds the model and prints
 * the sources, the per-vCPU piecewise model, the error bound and the
 * warnings, as text or JSON.  Main thread of the command; allocates.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "align/align.h"
#include "cli.h"
#include "err.h"
#include "tsc.h"

#define JSON_FIRST_PLAIN	0x20	/* characters below are escaped as \\u00XX */
#define ALIGN_FMT_PREC	3	/* decimals of us/ms/h in the text report */
#define ALIGN_MAX_PORT	0xffff	/* x86 I/O ports are 16-bit */

struct opts {
	struct align_load_opts load;
	int json;
	int pairs;
	int fit_slope;
	enum align_source prefer;	/* --source: chosen where present */
	const char *host_dir;
	const char *guest_dir;
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: vmtrace align HOSTDIR [GUESTDIR] [options]\n"
		"  Relate the guest's TSC to the host's and prove it: reads kvm_write_tsc_offset\n"
		"  and marker events from HOSTDIR/trace.dat, debugfs readings and tsc.hz from\n"
		"  HOSTDIR/vmtrace.meta, markers from GUESTDIR/markers.dat.\n"
		"  --json             print the result as JSON\n"
		"  --pairs            also list the matched markers with their residuals\n"
		"  --tsc-hz HZ        host TSC frequency (default: tsc.hz of the host meta)\n"
		"  --guest-tsc-hz HZ  guest TSC frequency (default: tsc.hz of the guest meta)\n"
		"  --port P           the PIO marker port, alone (default: 0x%x and the ports\n"
		"                     the guest's markers name)\n"
		"  --marker-fd FD     host fd of the chardev markers (TCG; default: found)\n"
		"  --fit-slope        fit the slope from markers even when the ratio is known\n"
		"  --offset N         use guest = host + N (ticks) and only cross-check the rest\n"
		"  --source NAME      choose NAME's line where it has one (markers, debugfs,\n"
		"                     tracepoint, tsync): e.g. trace-cmd's own map (tsync)\n"
		"                     through the inside check; the others are cross-checked\n"
		"  HOSTDIR and GUESTDIR may also be trace.dat files: a trace-cmd host-guest\n"
		"  recording is HOST/trace.dat GUEST/trace-NAME.dat (docs/align.md)\n"
		"exit: 0 model found, 1 no usable source or unreadable input, 2 usage,\n"
		"      3 model found but guest markers or trace.dat were corrupt/truncated\n", VT_MARKER_PORT);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_JSON = 256, O_PAIRS, O_HZ, O_GHZ, O_PORT, O_FD, O_FIT, O_OFF, O_SRC, O_HELP };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "pairs", no_argument, NULL, O_PAIRS },
		{ "tsc-hz", required_argument, NULL, O_HZ },
		{ "guest-tsc-hz", required_argument, NULL, O_GHZ },
		{ "port", required_argument, NULL, O_PORT },
		{ "marker-fd", required_argument, NULL, O_FD },
		{ "fit-slope", no_argument, NULL, O_FIT },
		{ "offset", required_argument, NULL, O_OFF },
		{ "source", required_argument, NULL, O_SRC },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int64_t off;
	int c;

	memset(o, 0, sizeof(*o));
	align_load_opts_init(&o->load);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			o->json = 1;
			break;
		case O_PAIRS:
			o->pairs = 1;
			break;
		case O_HZ:
		case O_GHZ:
			if (vt_parse_hz(optarg, &v))
				return vt_err_set("bad frequency '%s' (Hz, e.g. 2096001000)", optarg);
			if (c == O_HZ)
				o->load.host_hz = v;
			else
				o->load.guest_hz = v;
			break;
		case O_PORT:
			if (vt_parse_u64(optarg, 0, ALIGN_MAX_PORT, &v))
				return vt_err_set("bad port '%s'", optarg);
			o->load.marker_port = (int)v;
			break;
		case O_FD:
			if (vt_parse_u64(optarg, 0, INT32_MAX, &v))
				return vt_err_set("bad fd '%s'", optarg);
			o->load.marker_fd = (int)v;
			break;
		case O_FIT:
			o->fit_slope = 1;
			break;
		case O_OFF:
			if (vt_parse_i64(optarg, &off))
				return vt_err_set("bad offset '%s'", optarg);
			o->load.offset_tsc = off;
			o->load.has_offset = 1;
			break;
		case O_SRC:
			o->prefer = align_source_by_name(optarg);
			if (o->prefer == ALIGN_SRC_NONE || o->prefer == ALIGN_SRC_USER)
				return vt_err_set("--source '%s': one of markers, debugfs, tracepoint, "
						  "tsync", optarg);
			break;
		case O_HELP:
		case 'h':
			usage(stdout);
			exit(VT_EXIT_OK);
		default:
			return vt_err_set("unknown option (see vmtrace align --help)");
		}
	}
	if (optind >= argc || argc - optind > 2)
		return vt_err_set("expected HOSTDIR [GUESTDIR] (see vmtrace align --help)");
	o->host_dir = argv[optind];
	o->guest_dir = argc - optind == 2 ? argv[optind + 1] : NULL;
	return 0;
}

/* ---- output helpers ---- */

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(fp, "\\%c", ch);
		else if (ch < JSON_FIRST_PLAIN)
			fprintf(fp, "\\u%04x", ch);
		else
			fputc(ch, fp);
	}
	fputc('"', fp);
}

/* Durations of the text report: three decimals. */
static void fmt_ns(char *buf, size_t sz, double ns)
{
	align_fmt_ns(buf, sz, ns, ALIGN_FMT_PREC);
}

/* "0", "1", ... or "all" for ALIGN_VCPU_ANY */
static const char *vcpu_str(char *buf, size_t sz, int vcpu)
{
	if (vcpu == ALIGN_VCPU_ANY)
		snprintf(buf, sz, "all");
	else
		snprintf(buf, sz, "%d", vcpu);
	return buf;
}

static int64_t seg_offset(const struct align_segment *s)
{
	return (int64_t)(s->ref_tsc_guest - s->ref_tsc_host);
}

/* residual of a pair after alignment: host instant minus the mapped middle
 * of the guest bracket, in ns, and the bracket's half width in ns */
static int pair_residual(const struct align_model *m, struct align_vcursors *vc,
			 const struct align_marker_pair *p, double *res_ns, double *half_ns)
{
	uint64_t hb, ha;
	double hz = (double)align_model_host_hz(m);

	/* the pairs in sequence order: each vCPU's readings in stream order,
	 * mapped as merge maps them */
	if (align_vcursors_guest_host(vc, p->vcpu, p->tsc_guest_before, &hb) < 0 ||
	    align_vcursors_guest_host(vc, p->vcpu, p->tsc_guest_after, &ha) < 0)
		return -1;
	*res_ns = ((double)(int64_t)(p->tsc_host - hb) - (double)(ha - hb) / 2) * (double)VT_NS_PER_SEC / hz;
	*half_ns = (double)(ha - hb) / 2 * (double)VT_NS_PER_SEC / hz;
	return 0;
}

static void print_notes(FILE *fp, const char *notes, int json)
{
	const char *p = notes;
	int first = 1;

	while (*p) {
		const char *e = strchr(p, '\n');
		char line[1024];
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		if (json) {
			fputs(first ? "" : ", ", fp);
			json_str(fp, line);
		} else {
			fprintf(fp, "  %s\n", line);
		}
		first = 0;
		p = e ? e + 1 : p + n;
	}
}

/* The inside check in one line (text) or as an object (JSON). */
static void print_inside(FILE *fp, const struct align_inside *in, int json)
{
	char b[32];
	double pct = in->n_events ? 100.0 * (double)in->n_inside / (double)in->n_events : 0;

	if (json) {
		if (!in->checked) {
			fprintf(fp, ", \"inside\": null");
			return;
		}
		fprintf(fp, ", \"inside\": {\"events\": %" PRIu64 ", \"inside\": %" PRIu64
			", \"fraction\": %.6f, \"worst_outside_ns\": %.1f, \"trace_events\": %"
			PRIu64 ", \"marker_readings\": %" PRIu64 ", \"outside_span\": %" PRIu64
			", \"unmapped\": %" PRIu64 ", \"runs\": %zu, \"shift_lo_ns\": %.1f, "
			"\"shift_hi_ns\": %.1f}", in->n_events, in->n_inside,
			pct / 100, in->worst_ns, in->n_trace_events, in->n_marker_readings,
			in->n_outside_span, in->n_unmapped, in->n_runs, in->shift_lo_ns,
			in->shift_hi_ns);
		return;
	}
	if (!in->checked) {
		fprintf(fp, "inside check: %s\n", !in->n_runs ?
			"no host kvm_entry/kvm_exit of the vCPU threads recorded" :
			"no guest events with a vCPU (a guest trace.dat or markers) to check");
		return;
	}
	fmt_ns(b, sizeof(b), in->worst_ns);
	fprintf(fp, "inside check: %" PRIu64 " of %" PRIu64 " guest events (%.2f%%) fall inside "
		"a host [kvm_entry, kvm_exit] of their vCPU; worst outside by %s", in->n_inside,
		in->n_events, pct, b);
	if (in->n_inside < in->n_events)
		fprintf(fp, " (vCPU %d, guest TSC %" PRIu64 ")", (int)in->worst_vcpu,
			in->worst_tsc_guest);
	fprintf(fp, "\n");
	if (in->n_inside == in->n_events) {
		char lo[32], hi[32];

		fmt_ns(lo, sizeof(lo), in->shift_lo_ns);
		fmt_ns(hi, sizeof(hi), in->shift_hi_ns);
		fprintf(fp, "  every one stays inside for a shift of the map in [%s, +%s]\n", lo, hi);
	}
}

static void print_text(FILE *fp, const struct opts *o, const struct align_samples *s,
		       const struct align_model *m, const struct align_inside *in)
{
	char b1[32], b2[32], vb[16];
	size_t nout = 0;

	fprintf(fp, "vmtrace align: host %s, guest %s\n", o->host_dir,
		o->guest_dir ? o->guest_dir : "(none)");
	fprintf(fp, "host TSC:  %" PRIu64 " Hz (%s)\n", s->in.host_hz, s->host_hz_from);
	if (s->in.guest_hz)
		fprintf(fp, "guest TSC: %" PRIu64 " Hz (%s)\n", s->in.guest_hz, s->guest_hz_from);
	else
		fprintf(fp, "guest TSC: frequency unknown (not needed: guest ticks map to host "
			"ticks)\n");
	fprintf(fp, "inputs:\n");
	print_notes(fp, s->notes, 0);
	for (size_t i = 0; i < align_model_nr_pairs(m); i++)
		nout += align_model_pair(m, i)->outlier;
	fprintf(fp, "markers: %zu guest, %zu host observations, %zu matched, %zu outliers\n",
		s->in.n_guest_markers, s->in.n_host_markers, align_model_nr_pairs(m), nout);
	fprintf(fp, "sources (offset = guest TSC - host TSC at the host time shown):\n");
	for (size_t i = 0; i < align_model_nr_views(m); i++) {
		const struct align_source_view *v = align_model_view(m, i);

		fmt_ns(b1, sizeof(b1), v->diff_ns);
		fprintf(fp, "  vCPU %-3s %-10s at host TSC %-16" PRIu64 " offset %-21" PRId64
			" slope %.9f  %s%s\n", vcpu_str(vb, sizeof(vb), v->vcpu),
			align_source_name(v->source), v->tsc_host,
			v->offset_tsc, v->slope,
			v->agrees < 0 ? "CHOSEN" : v->agrees ? "agrees, off by " :
			"DISAGREES, off by ", v->agrees < 0 ? "" : b1);
	}
	fprintf(fp, "model (guest = ref_guest + slope * (host - ref_host)):\n");
	for (size_t i = 0; i < align_model_nr_segments(m); i++) {
		const struct align_segment *g = align_model_segment(m, i);

		if (g->bound_ns >= 0)
			fmt_ns(b2, sizeof(b2), g->bound_ns);
		else
			snprintf(b2, sizeof(b2), "unproven");
		if (g->tsc_host_end == ALIGN_TSC_END)
			snprintf(b1, sizeof(b1), "end");
		else
			snprintf(b1, sizeof(b1), "%" PRIu64, g->tsc_host_end);
		fprintf(fp, "  vCPU %-3s host TSC [%" PRIu64 ", %s): %s, offset %" PRId64
			", slope %.9f, ref %" PRIu64 " -> %" PRIu64 ", bound +-%s (%u markers, "
			"%u outliers)\n", vcpu_str(vb, sizeof(vb), g->vcpu), g->tsc_host_start, b1,
			align_source_name(g->source), seg_offset(g), g->slope, g->ref_tsc_host,
			g->ref_tsc_guest, b2, g->n_markers, g->n_outliers);
	}
	if (o->pairs) {
		struct align_vcursors vc;

		fprintf(fp, "pairs (residual = host instant - aligned middle of the guest "
			"bracket):\n");
		align_vcursors_init(&vc, m);
		for (size_t i = 0; i < align_model_nr_pairs(m); i++) {
			const struct align_marker_pair *p = align_model_pair(m, i);
			double r, h;

			if (pair_residual(m, &vc, p, &r, &h) < 0)
				continue;
			fprintf(fp, "  seq %-8" PRIu64 " host %" PRIu64 " guest [%" PRIu64 ", %"
				PRIu64 "] residual %.0f ns (bracket +-%.0f ns)%s\n", p->seq,
				p->tsc_host, p->tsc_guest_before, p->tsc_guest_after, r, h,
				p->outlier ? " OUTLIER" : "");
		}
		align_vcursors_free(&vc);
	}
	fprintf(fp, "method: %s\n", align_model_summary(m));
	print_inside(fp, in, 0);
	if (align_model_nr_warnings(m)) {
		fprintf(fp, "warnings:\n");
		for (size_t i = 0; i < align_model_nr_warnings(m); i++)
			fprintf(fp, "  WARNING: %s\n", align_model_warning(m, i));
	}
}

static void json_num_or_null(FILE *fp, double v, int ok)
{
	if (ok && isfinite(v))
		fprintf(fp, "%.3f", v);
	else
		fputs("null", fp);
}

static void print_json(FILE *fp, const struct opts *o, const struct align_samples *s,
		       const struct align_model *m, const struct align_inside *in)
{
	fputs("{\"host_dir\": ", fp);
	json_str(fp, o->host_dir);
	fputs(", \"guest_dir\": ", fp);
	if (o->guest_dir)
		json_str(fp, o->guest_dir);
	else
		fputs("null", fp);
	fprintf(fp, ", \"host_hz\": %" PRIu64 ", \"host_hz_from\": ", s->in.host_hz);
	json_str(fp, s->host_hz_from);
	fprintf(fp, ", \"guest_hz\": %" PRIu64 ", \"notes\": [", s->in.guest_hz);
	print_notes(fp, s->notes, 1);
	fprintf(fp, "], \"markers\": {\"guest\": %zu, \"host\": %zu, \"pairs\": %zu, "
		"\"rejected_records\": %zu}", s->in.n_guest_markers, s->in.n_host_markers,
		align_model_nr_pairs(m), s->n_bad_guest_markers);
	fputs(", \"sources\": [", fp);
	for (size_t i = 0; i < align_model_nr_views(m); i++) {
		const struct align_source_view *v = align_model_view(m, i);

		fprintf(fp, "%s{\"vcpu\": %d, \"source\": \"%s\", \"tsc_host\": %" PRIu64
			", \"offset_tsc\": %" PRId64 ", \"slope\": %.12f, \"agrees\": %s, "
			"\"diff_ns\": ", i ? ", " : "", v->vcpu, align_source_name(v->source),
			v->tsc_host, v->offset_tsc, v->slope,
			v->agrees < 0 ? "null" : v->agrees ? "true" : "false");
		json_num_or_null(fp, v->diff_ns, v->agrees >= 0);
		fputs("}", fp);
	}
	fputs("], \"segments\": [", fp);
	for (size_t i = 0; i < align_model_nr_segments(m); i++) {
		const struct align_segment *g = align_model_segment(m, i);

		fprintf(fp, "%s{\"vcpu\": %d, \"tsc_host_start\": %" PRIu64 ", \"tsc_host_end\": ",
			i ? ", " : "", g->vcpu, g->tsc_host_start);
		if (g->tsc_host_end == ALIGN_TSC_END)
			fputs("null", fp);
		else
			fprintf(fp, "%" PRIu64, g->tsc_host_end);
		fprintf(fp, ", \"source\": \"%s\", \"ref_tsc_host\": %" PRIu64 ", \"ref_tsc_guest\": %"
			PRIu64 ", \"offset_tsc\": %" PRId64 ", \"slope\": %.12f, \"bound_ns\": ",
			align_source_name(g->source), g->ref_tsc_host, g->ref_tsc_guest,
			seg_offset(g), g->slope);
		json_num_or_null(fp, g->bound_ns, g->bound_ns >= 0);
		fprintf(fp, ", \"n_markers\": %u, \"n_outliers\": %u}", g->n_markers, g->n_outliers);
	}
	fputs("]", fp);
	if (o->pairs) {
		struct align_vcursors vc;
		int first = 1;

		fputs(", \"pairs\": [", fp);
		align_vcursors_init(&vc, m);
		for (size_t i = 0; i < align_model_nr_pairs(m); i++) {
			const struct align_marker_pair *p = align_model_pair(m, i);
			double r, h;

			if (pair_residual(m, &vc, p, &r, &h) < 0)
				continue;
			fprintf(fp, "%s{\"seq\": %" PRIu64 ", \"vcpu\": %d, \"tsc_host\": %" PRIu64
				", \"tsc_guest_before\": %" PRIu64 ", \"tsc_guest_after\": %" PRIu64
				", \"residual_ns\": %.1f, \"half_width_ns\": %.1f, \"outlier\": %s}",
				first ? "" : ", ", p->seq, p->vcpu, p->tsc_host, p->tsc_guest_before,
				p->tsc_guest_after, r, h, p->outlier ? "true" : "false");
			first = 0;
		}
		align_vcursors_free(&vc);
		fputs("]", fp);
	}
	print_inside(fp, in, 1);
	fprintf(fp, ", \"method\": \"%s\", \"bound_ns\": ",
		align_source_name(align_model_method(m)));
	json_num_or_null(fp, align_model_bound_ns(m), align_model_bound_ns(m) >= 0);
	fputs(", \"summary\": ", fp);
	json_str(fp, align_model_summary(m));
	fputs(", \"warnings\": [", fp);
	for (size_t i = 0; i < align_model_nr_warnings(m); i++) {
		fputs(i ? ", " : "", fp);
		json_str(fp, align_model_warning(m, i));
	}
	fputs("]}\n", fp);
}

/* `vmtrace align HOSTDIR [GUESTDIR]`: exit 0 model found, 1 no usable
 * source or unreadable input, 2 usage, 3 model found from partly corrupt
 * input (usage()). */
int cmd_align(int argc, char **argv)
{
	struct align_samples s;
	struct align_inside in;
	struct align_model *m;
	struct opts o;
	int ret;

	if (parse_opts(argc, argv, &o) < 0) {
		vt_err_print("align");
		return VT_EXIT_USAGE;
	}
	if (align_samples_load(&s, o.host_dir, o.guest_dir, &o.load) < 0) {
		vt_err_print("align");
		align_samples_free(&s);
		return VT_EXIT_FAIL;
	}
	s.in.fit_slope = o.fit_slope;
	s.in.prefer = o.prefer;
	m = align_model_build(&s.in);
	if (!m) {
		vt_err_print("align");
		/* never empty: a loaded HOSTDIR notes its meta or its absence */
		fprintf(stderr, "what was found:\n%s", s.notes);
		align_samples_free(&s);
		return VT_EXIT_FAIL;
	}
	if (align_inside_check(m, &s, &in) < 0) {
		vt_err_print("align");
		align_model_free(m);
		align_samples_free(&s);
		return VT_EXIT_FAIL;
	}
	if (o.json)
		print_json(stdout, &o, &s, m, &in);
	else
		print_text(stdout, &o, &s, m, &in);
	for (size_t i = 0; i < align_model_nr_warnings(m); i++)
		vt_warn("%s", align_model_warning(m, i));
	if (in.checked && in.n_inside < in.n_events)
		vt_warn("INSIDE CHECK FAILS: %" PRIu64 " of %" PRIu64 " guest events map outside "
			"every host run of their vCPU (worst by %.0f ns): the chosen map is wrong "
			"by at least that much there", in.n_events - in.n_inside, in.n_events,
			in.worst_ns);
	ret = s.n_bad_guest_markers || s.host_truncated ? VT_EXIT_PARTIAL : VT_EXIT_OK;
	if (fflush(stdout) != 0) {
		vt_err_errno("stdout");
		vt_err_print("align");
		ret = VT_EXIT_FAIL;
	}
	align_model_free(m);
	align_samples_free(&s);
	return ret;
}
