/*
 * vmtrace.c - the `vmtrace` command: a thin dispatcher of git-style
 * subcommands.  Each subcommand lives with the module that owns its work
 * (guest/, host/, align/, merge/) as `int cmd_<name>(int argc, char **argv)`
 * and returns an exit code from err.h.  A subcommand not built in this
 * tree is reported as such.
 */
#include <stdio.h>
#include <string.h>
#include "err.h"
#include "cli.h"

#define VT_VERSION "0.1"

typedef int (*vt_cmd_fn)(int argc, char **argv);

/* weak: a module not linked leaves its entry NULL */
#define CMD(name) extern int cmd_##name(int argc, char **argv) __attribute__((weak));
CMD(tsc) CMD(run) CMD(convert) CMD(record) CMD(attach) CMD(top) CMD(align)
CMD(merge) CMD(report) CMD(export) CMD(marker) CMD(info)
CMD(debugcon)
CMD(meta)
CMD(stream) CMD(unpack)
CMD(finalize)
CMD(lab)
#undef CMD

static const struct {
	const char *name;
	vt_cmd_fn fn;
	const char *help;
} cmds[] = {
#define E(n, h) { #n, cmd_##n, h }
	E(tsc, "print the TSC frequency and how it was found (methods cross-checked)"),
	E(run, "run a program with the mcount runtime preloaded: uftrace data in TSC"),
	E(convert, "copy a TSC-clock trace directory to nanoseconds (for uftrace replay)"),
	E(record, "record kernel events (kvm:*, block, sched...) in the x86-tsc clock"),
	E(attach, "start tracing inside a running Python process"),
	E(top, "show the hottest functions of a trace directory, live"),
	E(align, "compute and prove the guest<->host clock model of recorded traces"),
	E(merge, "merge host and guest traces into Perfetto, Chrome JSON or uftrace"),
	E(report, "where the time of slow guest I/O went (from the recordings merge reads)"),
	E(export, "export the recordings' merged events and I/O chains to an SQLite database"),
	E(marker, "emit a guest<->host sync marker (guest side)"),
	E(info, "describe a trace directory: clock, events, span, metadata"),
	E(debugcon, "decode a freestanding guest's isa-debugcon trace dump to uftrace data"),
	E(meta, "print or set a directory's vmtrace.meta keys (for scripts)"),
	E(stream, "send a trace directory over a virtio-serial port while it is written (guest)"),
	E(unpack, "rebuild the directory a guest sent with 'vmtrace stream' (host)"),
	E(finalize, "finish a killed tracer's directory: stages folded, ns copies for uftrace"),
	E(lab, "run a command in the KVM lab: a Linux host with /dev/kvm nested under TCG"),
#undef E
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < VT_ARRAY_SIZE(cmds); i++)
		if (cmds[i].fn)
			fprintf(fp, "  %-9s %s\n", cmds[i].name, cmds[i].help);
	fprintf(fp, "\n'vmtrace help <command>' (or 'vmtrace <command> --help') describes a command.\n");
}

int main(int argc, char **argv)
{
	static char prog[64];

	if (argc < 2)
		return vt_cli_usage(usage, 0);
	if (!strcmp(argv[1], "help") && argc == 3) {
		/* `vmtrace help CMD` is `vmtrace CMD --help` */
		static char help_opt[] = "--help";
		char *hargv[] = { argv[0], argv[2], help_opt, NULL };

		return main(3, hargv);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return VT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("vmtrace %s\n", VT_VERSION);
		return VT_EXIT_OK;
	}
	for (size_t i = 0; i < VT_ARRAY_SIZE(cmds); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		if (!cmds[i].fn) {
			fprintf(stderr, "vmtrace: '%s' is not built in this vmtrace\n", argv[1]);
			return VT_EXIT_UNSUPPORTED;
		}
		/* every message says which command speaks, getopt's included
		 * (it prints argv[0]): "vmtrace: merge: ..." */
		snprintf(prog, sizeof(prog), "vmtrace: %s", cmds[i].name);
		vt_err_set_command(cmds[i].name);
		argv[1] = prog;
		return cmds[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "vmtrace: unknown command '%s'\nTry 'vmtrace --help' for the list of commands.\n",
		argv[1]);
	return VT_EXIT_USAGE;
}
