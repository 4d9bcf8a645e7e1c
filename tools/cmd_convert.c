/*
 * cmd_convert.c - `vmtrace convert IN OUT`: copy a clock=tsc uftrace data
 * directory to a clock=ns one (lib/uftrace_convert.c vt_uft_convert_ns), so that
 * `uftrace replay` shows real durations.  Command main thread.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "err.h"
#include "uftrace.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace convert [--tsc-hz HZ] [-f] IN OUT\n"
		"  copy the TSC-clock trace directory IN to OUT in nanoseconds\n"
		"  --tsc-hz HZ   TSC frequency (default: tsc.hz of IN/vmtrace.meta)\n"
		"  -f, --force   replace the trace files of an existing OUT\n");
}

/* `vmtrace convert [--tsc-hz HZ] [-f] IN OUT`: exit 0, 3 if an input was
 * truncated (the copy holds its complete records), 1 on failure. */
int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tsc-hz", required_argument, NULL, 'z' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t hz = 0;
	int force = 0, c, ret;

	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'z':
			if (vt_cli_tsc_hz(optarg, &hz))
				return VT_EXIT_USAGE;
			break;
		case 'f':
			force = 1;
			break;
		default:
			return vt_cli_usage(usage, c == 'h');
		}
	}
	if (optind + 2 != argc)
		return vt_cli_usage(usage, 0);
	ret = vt_uft_convert_ns(argv[optind], argv[optind + 1], hz, force);
	if (ret < 0) {
		int busy = vt_err_code() == ENOTEMPTY;	/* an existing OUT: a usage error, as in run */

		vt_err_print("convert");
		return busy ? VT_EXIT_USAGE : VT_EXIT_FAIL;
	}
	if (ret == VT_UFT_PARTIAL) {
		vt_warn("%s", vt_err_msg());
		return VT_EXIT_PARTIAL;
	}
	return VT_EXIT_OK;
}
