/*
 * cmd_finalize.c - `vmtrace finalize [--force] DIR`: fold the stage files
 * (lib/pystage.h) a killed or os._exit()ed Python tracer left in DIR and
 * its fork-<PID> children into their .dat files, so that plain uftrace
 * reads every record.  Command main thread; the directory is untrusted
 * input; allocates.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include "err.h"
#include "meta.h"
#include "pystage.h"
#include "cli.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace finalize [-f] [-q] [--tsc-hz HZ] DIR\n"
		"  finish a trace directory whose writer is gone (killed, os._exit) for uftrace:\n"
		"  fold a Python tracer's <TID>.stage files into their <TID>.dat files (also in\n"
		"  DIR/fork-*), cut each .dat after its last record, and make the .dat files\n"
		"  and task.txt nanosecond copies of the TSC stamps, which stay beside them as\n"
		"  <TID>.tsc and task.tsc (vmtrace reads those)\n"
		"  -f, --force     even if the process named by vmtrace.meta python.pid runs\n"
		"  -q, --quiet     no summary line\n"
		"  --tsc-hz HZ     the TSC frequency of the copies (default: DIR's tsc.hz)\n"
		"exit: 0 done, 1 a stage could not be folded or a directory finished (named;\n"
		"the rest is done), 2 usage, or the writer still runs\n");
}

/* The pid of DIR's Python writer if that process still exists, else 0. */
static long writer_alive(const char *dir)
{
	struct vt_meta *m = vt_meta_read_dir(dir);
	uint64_t pid = 0;

	if (!m)
		return 0;
	if (vt_meta_get_u64(m, VT_MK_PYTHON_PID, &pid) || pid == 0 || pid > (uint64_t)INT32_MAX)
		pid = 0;
	vt_meta_free(m);
	if (pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
		return (long)pid;
	return 0;
}

/* `vmtrace finalize [-f] [-q] DIR`: returns an exit code. */
int cmd_finalize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "tsc-hz", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int force = 0, quiet = 0, c;
	struct vt_uft_fin_stats fin;
	uint64_t tsc_hz = 0;
	const char *dir;
	long pid;

	while ((c = getopt_long(argc, argv, "fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 't':
			if (vt_cli_tsc_hz(optarg, &tsc_hz))
				return VT_EXIT_USAGE;
			break;
		default:
			return vt_cli_usage(usage, c == 'h');
		}
	}
	if (optind + 1 != argc)
		return vt_cli_usage(usage, 0);
	dir = argv[optind];
	pid = writer_alive(dir);
	if (pid && !force) {
		fprintf(stderr, "vmtrace: finalize: %s is written by process %ld, which still runs "
			"(stop it first, or --force)\n", dir, pid);
		return VT_EXIT_USAGE;
	}
	if (vt_uft_finalize(dir, 0, tsc_hz, &fin) < 0) {
		vt_err_print("finalize");
		return VT_EXIT_FAIL;
	}
	if (fin.unfinished)
		vt_warn("%s: left in TSC ticks for uftrace (%s): give --tsc-hz HZ (vmtrace tsc "
			"tells it on the machine that ran the tracer)", dir, fin.no_hz);
	if (!quiet)
		printf("%s: %u stage file%s folded, %u director%s finished in ns for uftrace\n",
		       dir, fin.folded, fin.folded == 1 ? "" : "s", fin.finished,
		       fin.finished == 1 ? "y" : "ies");
	return VT_EXIT_OK;
}
