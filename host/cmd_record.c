/*
 * cmd_record.c - `vmtrace record`: the command-line front of the tracefs
 * recorder (host/record.h).  Main thread only: parses options, optionally
 * forks the command to trace, polls the recorder until the command exits
 * or a signal arrives, then writes the output directory and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "err.h"
#include "meta.h"
#include "record.h"
#include "usdt_probes.h"

#define REC_MAX_EVENTS		256
#define REC_MAX_BUFFER_KB	(1 << 22)	/* 4 GiB of ring buffer per CPU */
#define REC_NS_PER_MS		1000000L
#define REC_EXIT_SIGNAL_BASE	128
#define REC_EXEC_FAILED		127
#define REC_CMDLINE_MAX		4096

static volatile sig_atomic_t rec_signals;
static volatile sig_atomic_t rec_last_signal;

static void rec_on_signal(int sig)
{
	rec_signals++;
	rec_last_signal = sig;
}

static void rec_usage(FILE *fp)
{
	fprintf(fp,
"usage: vmtrace record [-e SYSTEM[:EVENT]]... [-p PID]... [-o DIR] [-b SIZE]\n"
"                      [--guest] [-f|--force] [--format v7|v6] [--kallsyms]\n"
"                      [--python[=FILE]]\n"
"                      [-- COMMAND ARGS...]\n"
"       vmtrace record --finish DIR [-o OTHERDIR [--force]]\n"
"\n"
"Record kernel events in the x86-tsc trace clock into DIR/trace.dat\n"
"(trace-cmd's format, read by trace-cmd report and KernelShark) and\n"
"DIR/vmtrace.meta.  Uses its own tracefs instance; needs root.\n"
"\n"
"  -e SYSTEM[:EVENT]  event or whole system to record (repeatable);\n"
"                     replaces the defaults\n"
"  -p PID             trace the syscalls of PID, its threads and children\n"
"                     (repeatable); other events stay system-wide\n"
"  -o DIR             output directory (default vmtrace-host; with --guest\n"
"                     vmtrace-guest)\n"
"  -b, --bufsize SIZE ring buffer per CPU: a bare number of KB (as\n"
"                     trace-cmd record -b), or with a unit: 512K, 4M, 1G\n"
"                     (default %u KB)\n"
"  --guest            inside a guest: block, irq, sched_switch/wakeup defaults\n"
"  -f, --force        reuse an existing DIR (its trace files are replaced)\n"
"  --format v7|v6     trace.dat version: v7 with zstd-compressed sections\n"
"                     (default, as trace-cmd record --compression zstd), or\n"
"                     v6 uncompressed (readers without zstd; 6-27x larger)\n"
"  --kallsyms         always store /proc/kallsyms in trace.dat (default: only\n"
"                     when an event recorded prints a kernel symbol, e.g.\n"
"                     workqueue, timer, kmem, probes; not kvm, sched_switch,\n"
"                     syscalls, block)\n"
"  --finish DIR       recover the recording a killed or failed recorder left\n"
"                     in DIR: drain its tracing instance if it is still there,\n"
"                     write DIR/trace.dat + vmtrace.meta (record.recovered=1);\n"
"                     with -o OTHERDIR it is copied there and finished there\n"
"                     (DIR on a full disk); exit 0, or 3 when pages were lost\n"
"  -- COMMAND         run COMMAND traced, stop when it exits, exit with its status\n"
"  --python[=FILE]    also record CPython's USDT markers (function entry/return\n"
"                     where the interpreter fires them, gc, imports) as uprobes;\n"
"                     FILE: the python executable or libpython (default: the\n"
"                     COMMAND's, or the -p process's); without -e only sched\n"
"                     switch/wakeup are added; with -p, stops when it exits\n"
"\n"
"Host defaults: kvm:{write_tsc_offset,exit,entry,pio,mmio,fast_mmio,hypercall,\n"
"msi_set_irq,set_irq,inj_virq,apic_accept_irq,userspace_exit,pvclock_update,\n"
"update_master_clock,track_tsc}, sched:sched_switch, sched:sched_wakeup, and\n"
"syscalls of the traced pids.  Ctrl-C stops cleanly and keeps everything.\n",
		HOST_RECORD_DEFAULT_BUFFER_KB);
}

static int rec_exit_code(int err)
{
	if (err == EACCES || err == EPERM)
		return VT_EXIT_PERM;
	if (err == ENODEV)
		return VT_EXIT_UNSUPPORTED;
	if (err == EEXIST || err == EINVAL)
		return VT_EXIT_USAGE;
	return VT_EXIT_FAIL;
}

/* Fork @argv held at a pipe until recording runs; -1 on failure. */
static pid_t rec_spawn(char **argv, int *go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return vt_err_errno("pipe");
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return vt_err_errno("fork");
	}
	if (pid == 0) {
		char b;

		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(REC_EXEC_FAILED);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "vmtrace: record: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(REC_EXEC_FAILED);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

static void rec_join_args(char *buf, size_t len, char **argv)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; argv[i] && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "", argv[i]);
}

/* ---- --python: CPython's USDT markers as uprobe events (usdt_probes.c) ---- */

static struct usdt_session rec_usdt;
static const char *const rec_python_sched[] = { "sched:sched_switch", "sched:sched_wakeup" };

/*
 * Find the interpreter file (@file, else @cmd's executable, else the first
 * -p pid's), create the uprobe events and add them to @o's events (plus
 * sched switch/wakeup when no -e was given).  0 or -1 (nothing left).
 */
static int rec_python_start(const char *file, struct host_record_opts *o, const char **events,
			    char **cmd, pid_t child)
{
	char path[4096];
	int dflt = o->nr_events == 0;

	if (file) {
		if (usdt_python_file_of_binary(file, path, sizeof(path)))
			return -1;
	} else if (child > 0 && cmd[0]) {
		if (usdt_python_file_of_binary(cmd[0], path, sizeof(path)))
			return vt_err_wrap("%s (a wrapper script? name the interpreter: "
					   "--python=FILE)", vt_err_msg());
	} else if (o->nr_pids) {
		if (usdt_python_file_of_pid(o->pids[0], path, sizeof(path)))
			return -1;
	} else {
		return vt_err_set_code(EINVAL, "--python needs a COMMAND, -p PID or --python=FILE");
	}
	if (o->nr_events + USDT_MAX_PROBES + (int)VT_ARRAY_SIZE(rec_python_sched) > REC_MAX_EVENTS)
		return vt_err_set("too many events with --python");
	if (usdt_python_create(&rec_usdt, path))
		return -1;
	usdt_python_explain(&rec_usdt, stderr);
	for (int i = 0; i < rec_usdt.nr; i++)
		events[o->nr_events++] = rec_usdt.events[i];
	for (size_t i = 0; dflt && i < VT_ARRAY_SIZE(rec_python_sched); i++)
		events[o->nr_events++] = rec_python_sched[i];
	return 0;
}

/* Remove the uprobe events of --python (no-op without it).  0 or -1. */
static int rec_python_end(void)
{
	return rec_usdt.nr ? usdt_python_remove(&rec_usdt) : 0;
}

/* 1 while any -p process still exists (0 when none was given). */
static int rec_python_pids_alive(const struct host_record_opts *o)
{
	for (int i = 0; i < o->nr_pids; i++)
		if (usdt_pid_alive(o->pids[i]))
			return 1;
	return 0;
}

/* --finish DIR [-o OUT]: recover an interrupted recording; exit code. */
static int rec_finish(const char *dir, const char *out, int force)
{
	struct host_record_result res;
	int ret = host_record_finish(dir, out, force, &res);

	if (ret < 0) {
		int e = vt_err_code();

		vt_err_print("record");
		return e == EBUSY ? VT_EXIT_FAIL : rec_exit_code(e);
	}
	fprintf(stderr, "vmtrace: record: recovered %llu events, %llu bytes of pages on %u CPUs, "
		"%llu lost -> %s/trace.dat\n", (unsigned long long)res.events,
		(unsigned long long)res.bytes, res.nr_cpus, (unsigned long long)res.lost,
		out ? out : dir);
	if (ret) {
		fprintf(stderr, "vmtrace: record: WARNING: the recording is incomplete "
			"(record.recover_reason in %s/vmtrace.meta)\n", out ? out : dir);
		return VT_EXIT_PARTIAL;
	}
	return VT_EXIT_OK;
}

/* `vmtrace record [options] -o DIR [-- COMMAND...]` (usage() lists them):
 * exit 0, or an exit code of lib/err.h; a traced command's failure is
 * reported in the metadata, not as the exit code. */
/* The command line of `vmtrace record`. */
struct rec_cli {
	const char *events[REC_MAX_EVENTS];
	pid_t pids[HOST_RECORD_MAX_PIDS];
	struct host_record_opts o;
	int use_python;
	const char *python_file, *finish_dir;
	int format_set;
};

/* Options into @c; -1 to go on, else the exit status (usage). */
static int rec_parse(int argc, char **argv, struct rec_cli *c)
{
	static const struct option longopts[] = {
		{ "bufsize", required_argument, NULL, 'b' },
		{ "guest", no_argument, NULL, 'g' },
		{ "force", no_argument, NULL, 'f' },
		{ "python", optional_argument, NULL, 'y' },
		{ "finish", required_argument, NULL, 'F' },
		{ "format", required_argument, NULL, 'V' },
		{ "kallsyms", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct host_record_opts *o = &c->o;
	int ch;

	o->buffer_kb = HOST_RECORD_DEFAULT_BUFFER_KB;
	o->events = c->events;
	o->pids = c->pids;
	while ((ch = getopt_long(argc, argv, "+e:p:o:b:fh", longopts, NULL)) != -1) {
		uint64_t v;

		switch (ch) {
		case 'e':
			if (o->nr_events >= REC_MAX_EVENTS)
				vt_die(VT_EXIT_USAGE, "record: too many -e (max %d)", REC_MAX_EVENTS);
			c->events[o->nr_events++] = optarg;
			break;
		case 'p':
			if (vt_parse_u64(optarg, 1, INT32_MAX, &v))
				vt_die(VT_EXIT_USAGE, "record: -p %s: not a pid", optarg);
			if (o->nr_pids >= HOST_RECORD_MAX_PIDS)
				vt_die(VT_EXIT_USAGE, "record: too many -p (max %d)",
				       HOST_RECORD_MAX_PIDS);
			if (kill((pid_t)v, 0) && errno == ESRCH)
				vt_die(VT_EXIT_USAGE, "record: -p %d: no such process", (int)v);
			c->pids[o->nr_pids++] = (pid_t)v;
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 'b':
			if (vt_parse_size(optarg, 1024, 1024, (uint64_t)REC_MAX_BUFFER_KB << 10, &v))
				vt_die(VT_EXIT_USAGE, "record: -b %s: want a size, K/M/G or a bare "
				       "number of KB (1 KB..%d KB)", optarg, REC_MAX_BUFFER_KB);
			o->buffer_kb = (unsigned)(v >> 10);
			break;
		case 'g':
			o->guest = 1;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'y':
			c->use_python = 1;
			c->python_file = optarg;
			break;
		case 'F':
			c->finish_dir = optarg;
			break;
		case 'K':
			o->kallsyms = 1;
			break;
		case 'V':
			if (strcmp(optarg, "v7") && strcmp(optarg, "v6"))
				vt_die(VT_EXIT_USAGE, "record: --format %s: want v7 (zstd, the "
				       "default) or v6 (uncompressed)", optarg);
			o->v6 = !strcmp(optarg, "v6");
			c->format_set = 1;
			break;
		default:
			return vt_cli_usage(rec_usage, ch == 'h');
		}
	}
	return -1;
}

/* Poll @r until the command @child ends (*@status, 1 returned), a signal
 * or the traced interpreter says stop (0), or the recorder fails (-1). */
static int rec_wait(struct host_record *r, const struct rec_cli *c, pid_t child, int *status)
{
	for (;;) {
		struct timespec ts = { 0, HOST_RECORD_POLL_MS * REC_NS_PER_MS };
		int seen = rec_signals;

		nanosleep(&ts, NULL);
		if (host_record_poll(r))
			return -1;
		if (child > 0 && waitpid(child, status, WNOHANG) == child)
			return 1;
		if (rec_signals && child <= 0)
			return 0;
		if (c->use_python && child <= 0 && c->o.nr_pids && !rec_python_pids_alive(&c->o))
			return 0;	/* the traced interpreter is gone */
		if (rec_signals > 1)
			return 0;	/* second signal: do not wait for the command */
		if (rec_signals && !seen)
			kill(child, rec_last_signal);
	}
}

/* What the recording holds, on stderr. */
static void rec_summary(const struct host_record_result *res, const char *out_dir)
{
	fprintf(stderr, "vmtrace: record: %llu events, %llu bytes of pages on %u CPUs, "
		"%llu lost%s -> %s/trace.dat\n",
		(unsigned long long)res->events, (unsigned long long)res->bytes, res->nr_cpus,
		(unsigned long long)res->lost, res->lost_pages ? " (gaps flagged in pages)" : "",
		out_dir);
	if (!res->lost && !res->lost_pages)
		return;
	fprintf(stderr, "vmtrace: record: WARNING: events were lost; per CPU counts in "
		"%s/vmtrace.meta (lost.cpuN); try a larger -b\n", out_dir);
	for (unsigned i = 0; i < res->nr_cpus && i < HOST_RECORD_REPORT_CPUS; i++)
		if (res->lost_cpu[i])
			fprintf(stderr, "vmtrace: record:   cpu%u: %llu lost\n", i,
				(unsigned long long)res->lost_cpu[i]);
}

int cmd_record(int argc, char **argv)
{
	static struct rec_cli c;
	struct host_record_opts *o = &c.o;
	struct host_record_result res;
	struct host_record *r;
	struct sigaction sa;
	char cmdline[REC_CMDLINE_MAX], val[32];
	pid_t child = -1;
	int go_fd = -1, status = 0, child_done = 0, ret = VT_EXIT_OK, w;

	memset(&c, 0, sizeof(c));
	if ((ret = rec_parse(argc, argv, &c)) >= 0)
		return ret;
	ret = VT_EXIT_OK;
	if (c.finish_dir) {
		if (optind < argc || o->nr_pids || o->nr_events || c.use_python || o->guest ||
		    c.format_set || o->kallsyms)
			vt_die(VT_EXIT_USAGE, "record: --finish takes only -o and --force");
		return rec_finish(c.finish_dir, o->out_dir, o->force);
	}
	if (!o->out_dir)
		o->out_dir = o->guest ? "vmtrace-guest" : "vmtrace-host";
	o->kvm_facts = !o->guest;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rec_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (optind < argc) {
		rec_join_args(cmdline, sizeof(cmdline), argv + optind);
		o->command = cmdline;
		child = rec_spawn(argv + optind, &go_fd);
		if (child < 0) {
			vt_err_print("record");
			return VT_EXIT_FAIL;
		}
		if (o->nr_pids >= HOST_RECORD_MAX_PIDS)
			vt_die(VT_EXIT_USAGE, "record: too many pids");
		c.pids[o->nr_pids++] = child;
		o->command_pid = (int)child;
	}
	if (c.use_python && rec_python_start(c.python_file, o, c.events, argv + optind, child) < 0) {
		int e = vt_err_code();

		vt_err_print("record");
		if (child > 0) {
			close(go_fd);
			waitpid(child, NULL, 0);
		}
		return rec_exit_code(e);
	}
	r = host_record_start(o);
	if (!r) {
		int e = vt_err_code();

		vt_err_print("record");
		rec_python_end();
		if (child > 0) {
			close(go_fd);
			waitpid(child, NULL, 0);
		}
		return rec_exit_code(e);
	}
	if (child > 0) {
		if (write(go_fd, "g", 1) != 1)
			vt_warn("cannot start the command: %s", strerror(errno));
		close(go_fd);
	}
	fprintf(stderr, "vmtrace: record: recording to %s%s\n", o->out_dir,
		child > 0 ? "" : " (Ctrl-C to stop)");
	w = rec_wait(r, &c, child, &status);
	if (w < 0) {
		vt_err_print("record");
		ret = VT_EXIT_FAIL;
	}
	child_done = w == 1;
	if (child > 0) {
		if (!child_done)
			vt_warn("command %d still running; recording stopped", (int)child);
		else if (WIFEXITED(status))
			snprintf(val, sizeof(val), "%d", WEXITSTATUS(status));
		else
			snprintf(val, sizeof(val), "signal %d", WTERMSIG(status));
		if (child_done)
			host_record_meta(r, VT_MK_RECORD_COMMAND_EXIT, val);
	}
	if (host_record_stop(r, &res)) {
		vt_err_print("record");
		rec_python_end();
		return VT_EXIT_FAIL;
	}
	if (rec_python_end()) {
		vt_err_print("record");
		ret = VT_EXIT_FAIL;
	}
	rec_summary(&res, o->out_dir);
	if (ret)
		return ret;
	if (child > 0 && child_done) {
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return REC_EXIT_SIGNAL_BASE + WTERMSIG(status);
	}
	return VT_EXIT_OK;
}
