/*
 * cmd_tsc.c - `vmtrace tsc`: print the TSC frequency, every method's
 * figure, the choice and why, and warnings (lib/tsc.c decides).  Runs on
 * the command's main thread; prints and exits.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "err.h"
#include "tsc.h"
#include "cli.h"

static const char *const status_name[] = { "ok", "skipped", "failed" };

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace tsc [-q | --json] [--no-calibrate] [--kcore]\n"
		"  -q, --quiet       print only the frequency in Hz\n"
		"  --json            print everything as one JSON object\n"
		"  --no-calibrate    skip the ~0.1 s CLOCK_MONOTONIC_RAW measurement\n"
		"  --kcore           also read tsc_khz from /proc/kcore with gdb (slow, root)\n");
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < ' ')
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static const char *tri(int v)
{
	return v < 0 ? "null" : v ? "true" : "false";
}

static void print_json(const struct vt_tsc_freq *f)
{
	printf("{\"hz\": %" PRIu64 ", \"source\": ", f->hz);
	json_str(f->source);
	printf(", \"why\": ");
	json_str(f->why);
	printf(", \"constant_tsc\": %s, \"nonstop_tsc\": %s, \"tsc_known_freq\": %s, "
	       "\"clocksource\": ", tri(f->constant_tsc), tri(f->nonstop_tsc), tri(f->known_freq));
	json_str(f->clocksource);
	printf(", \"methods\": [");
	for (int i = 0; i < f->nr_methods; i++) {
		const struct vt_tsc_method *m = &f->m[i];

		printf("%s{\"name\": ", i ? ", " : "");
		json_str(m->name);
		printf(", \"status\": \"%s\", \"hz\": %" PRIu64 ", \"note\": ",
		       status_name[m->status], m->hz);
		json_str(m->note);
		printf("}");
	}
	printf("], \"warnings\": [");
	for (int i = 0; i < f->nr_warnings; i++) {
		printf("%s", i ? ", " : "");
		json_str(f->warnings[i]);
	}
	printf("]}\n");
}

static void print_text(const struct vt_tsc_freq *f)
{
	printf("%-16s %-8s %16s  %s\n", "METHOD", "STATUS", "MHz", "NOTE");
	for (int i = 0; i < f->nr_methods; i++) {
		const struct vt_tsc_method *m = &f->m[i];
		char mhz[32] = "-";

		if (m->status == VT_TSC_OK)
			snprintf(mhz, sizeof(mhz), "%.6f", m->hz / 1e6);
		printf("%-16s %-8s %16s  %s\n", m->name, status_name[m->status], mhz, m->note);
	}
	printf("\nflags: constant_tsc=%s nonstop_tsc=%s tsc_known_freq=%s clocksource=%s\n",
	       tri(f->constant_tsc), tri(f->nonstop_tsc), tri(f->known_freq), f->clocksource);
	if (f->hz)
		printf("chosen: %" PRIu64 " Hz (%.6f MHz) from %s: %s\n", f->hz, f->hz / 1e6,
		       f->source, f->why);
	else
		printf("chosen: none: %s\n", f->why);
	for (int i = 0; i < f->nr_warnings; i++)
		printf("warning: %s\n", f->warnings[i]);
}

/* `vmtrace tsc [-q|--json] [--no-calibrate] [--kcore]`: exit 0, or 5 when no
 * method gives a frequency. */
int cmd_tsc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-calibrate", no_argument, NULL, 'n' },
		{ "kcore", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vt_tsc_freq f;
	int quiet = 0, json = 0, c, ret;
	unsigned flags = 0;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'n':
			flags |= VT_TSC_NO_CALIBRATE;
			break;
		case 'k':
			flags |= VT_TSC_KCORE;
			break;
		default:
			return vt_cli_usage(usage, c == 'h');
		}
	}
	if (optind != argc || (quiet && json))
		return vt_cli_usage(usage, 0);
	ret = vt_tsc_freq_opts(&f, flags);
	if (json)
		print_json(&f);
	else if (quiet && !ret)
		printf("%" PRIu64 "\n", f.hz);
	else if (!quiet)
		print_text(&f);
	if (ret) {
		vt_err_print("tsc");
		return VT_EXIT_UNSUPPORTED;
	}
	if (quiet)
		for (int i = 0; i < f.nr_warnings; i++)
			vt_warn("%s", f.warnings[i]);
	return VT_EXIT_OK;
}
