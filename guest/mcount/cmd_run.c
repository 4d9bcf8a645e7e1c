/*
 * cmd_run.c - `vmtrace run -o DIR -- PROG ARGS`: trace a program's -pg /
 * -finstrument-functions code with the preloaded mcount runtime into a
 * uftrace data directory in the TSC clock.  Runs in the vmtrace command's
 * main thread; prepares the directory before the program starts (so a
 * bad directory fails early and a killed program leaves a readable
 * trace), waits for it, and writes the final info.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "elfread.h"
#include "err.h"
#include "meta.h"
#include "tsc.h"
#include "uftrace.h"
#include "guest/mcount/session.h"

#define RUN_LIB_NAME	"libvmtrace-mcount.so"
/* overrides where the runtime library is looked up */
#define RUN_ENV_LIB	"VMTRACE_MCOUNT_LIB"
#define RUN_NS_SUFFIX	".ns"
#define RUN_SIG_EXIT	128	/* exit code of a program killed by a signal */
#define RUN_EXEC_FAILED	127	/* the shell's exit code for "cannot run" */

struct run_opts {
	const char *dir;
	uint64_t depth;
	uint64_t bufsize;
	int entries_only;
	int dir_default;	/* no -o: say where the trace went */
	int ns;
	int force;
	char **argv;
};

static void run_usage(FILE *fp)
{
	fprintf(fp,
		"usage: vmtrace run [-o DIR] [options] -- PROGRAM [ARGS...]\n"
		"Trace PROGRAM (built with -pg, -pg -mfentry or -finstrument-functions)\n"
		"into the uftrace data directory DIR; timestamps are raw TSC ticks.\n\n"
		"  -o, --output DIR     output directory (default %s)\n"
		"  -D, --depth N        record calls up to depth N (1..%d, default %d)\n"
		"      --entries-only   record entries only, hook no returns\n"
		"  -b, --bufsize SIZE   per-thread buffer, flushed when full: a bare number\n"
		"                       of KB (as record -b), or with a unit: 512K, 4M, 64KB\n"
		"                       (default %d KB)\n"
		"      --ns             also write DIR%s in nanoseconds (for uftrace replay)\n"
		"  -f, --force          replace an existing trace in DIR\n",
		MCOUNT_DEFAULT_DIR, VT_UFT_MAX_DEPTH, MCOUNT_DEFAULT_DEPTH, MCOUNT_DEFAULT_BUF_BYTES >> 10, RUN_NS_SUFFIX);
}

static int run_parse(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "depth", required_argument, NULL, 'D' },
		{ "entries-only", no_argument, NULL, 'e' },
		{ "bufsize", required_argument, NULL, 'b' },
		{ "ns", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->depth = MCOUNT_DEFAULT_DEPTH;
	o->bufsize = MCOUNT_DEFAULT_BUF_BYTES;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:D:b:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->dir = optarg;
			break;
		case 'D':
			if (vt_parse_u64(optarg, 1, VT_UFT_MAX_DEPTH, &o->depth))
				return vt_err_set("--depth %s: want 1..%d", optarg,
						  VT_UFT_MAX_DEPTH);
			break;
		case 'e':
			o->entries_only = 1;
			break;
		case 'b':
			if (vt_parse_size(optarg, 1024, MCOUNT_MIN_BUF_BYTES, MCOUNT_MAX_BUF_BYTES,
					  &o->bufsize))
				return vt_err_set("--bufsize %s: want %d..%d KB (a bare number is KB; "
						  "B for bytes: 8192B)", optarg,
						  MCOUNT_MIN_BUF_BYTES >> 10, MCOUNT_MAX_BUF_BYTES >> 10);
			break;
		case 'n':
			o->ns = 1;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			run_usage(stdout);
			exit(VT_EXIT_OK);
		default:
			return vt_err_set("bad option (see vmtrace run --help)");
		}
	}
	if (!o->dir) {
		o->dir = MCOUNT_DEFAULT_DIR;
		o->dir_default = 1;
	}
	if (optind >= argc)
		return vt_err_set("no program to run (vmtrace run [-o DIR] -- PROGRAM ARGS)");
	o->argv = argv + optind;
	return 0;
}

/* The names a compiler's instrumentation calls: -pg (mcount, its aliases
 * and -mfentry's __fentry__) and -finstrument-functions. */
static const char *const run_hook_syms[] = {
	"mcount", "_mcount", "__fentry__", "__gnu_mcount_nc", "__cyg_profile_func_enter", NULL,
};

/* 0 if ELF program @prog calls an instrumentation hook, else -1 with the
 * message set (a program built without -pg would give an empty trace).
 * A program that is not ELF (a script) is left to its interpreter. */
static int run_check_prog(const char *prog)
{
	struct vt_elf *e = vt_elf_open(prog);
	int has;

	if (!e)
		return 0;	/* not ELF: exec says what it is */
	has = vt_elf_has_sym(e, run_hook_syms);
	vt_elf_close(e);
	if (has < 0)
		return -1;
	if (!has)
		return vt_err_set("%s: no mcount, __fentry__ or __cyg_profile_func_enter symbol: "
				  "not built with -pg or -finstrument-functions, nothing to trace "
				  "(rebuild it with -pg)", prog);
	return 0;
}

/* Find @prog like execvp() does; the absolute path into @out. */
static int run_find_prog(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/')) {
		if (!realpath(prog, out))
			return vt_err_errno("%s: cannot run", prog);
		if (access(out, X_OK))
			return vt_err_errno("%s: cannot run", prog);
		return 0;
	}
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog) <
			    (int)sizeof(buf) &&
		    access(buf, X_OK) == 0 && realpath(buf, out))
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	return vt_err_set("%s: not found in PATH", prog);
}

/* The runtime library: $VMTRACE_MCOUNT_LIB, else ../lib/ next to us. */
static int run_find_lib(char *out, size_t len)
{
	const char *env = getenv(RUN_ENV_LIB);
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		if (!realpath(env, out))
			return vt_err_errno("%s (from %s)", env, RUN_ENV_LIB);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return vt_err_errno("/proc/self/exe");
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if (snprintf(out, len, "%s/../lib/%s", self, RUN_LIB_NAME) >= (int)len)
		return vt_err_set("%s: path too long", self);
	if (access(out, R_OK))
		return vt_err_errno("%s: the mcount runtime is missing (make?)", out);
	return 0;
}

/* The TSC frequency and its source into @m (lib/tsc.c decides it; the
 * ~0.1 s calibration only when no other method gives a figure). */
static int run_tsc_meta(struct vt_meta *m)
{
	struct vt_tsc_freq f;

	if (vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE) < 0 && vt_tsc_freq(&f) < 0)
		return -1;
	return vt_tsc_meta_set(m, &f);
}

/* vmtrace.meta of the run: clock, TSC frequency and how it was found. */
static int run_write_meta(const char *dir, const struct run_opts *o)
{
	struct vt_meta *m = vt_meta_new();
	int rc;

	if (!m)
		return vt_err_set("out of memory");
	vt_meta_set(m, VT_MK_CLOCK, "tsc");
	vt_meta_set(m, VT_MK_DOMAIN, "guest");
	vt_meta_set(m, VT_MK_PRODUCER, "vmtrace run");
	rc = run_tsc_meta(m);
	if (rc == 0) {
		vt_meta_set_u64(m, VT_MK_MCOUNT_DEPTH, o->depth);
		vt_meta_set(m, VT_MK_MCOUNT_ENTRIES_ONLY, "%d", o->entries_only);
		vt_meta_set_u64(m, VT_MK_MCOUNT_BUFSIZE, o->bufsize);
		rc = vt_meta_write_dir(m, dir);
	}
	vt_meta_free(m);
	return rc;
}

/* "a b c" from argv (for the info file). */
static void run_cmdline(char **argv, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && off + 1 < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
}

static int run_setenv(const struct run_opts *o, const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	char num[32];
	int rc;

	if (old && *old)
		rc = asprintf(&preload, "%s:%s", lib, old);
	else
		rc = asprintf(&preload, "%s", lib);
	if (rc < 0)
		return -1;
	rc = setenv("LD_PRELOAD", preload, 1);
	free(preload);
	snprintf(num, sizeof(num), "%" PRIu64, o->depth);
	rc |= setenv(MCOUNT_ENV_DEPTH, num, 1);
	snprintf(num, sizeof(num), "%" PRIu64, o->bufsize);
	rc |= setenv(MCOUNT_ENV_BUFSIZE, num, 1);
	rc |= setenv(MCOUNT_ENV_ENTRIES, o->entries_only ? "1" : "0", 1);
	rc |= setenv(MCOUNT_ENV_RUN, "1", 1);
	rc |= setenv(MCOUNT_ENV_DIR, o->dir, 1);
	return rc;
}

/* `vmtrace run -o DIR [options] -- PROGRAM [ARGS...]`: the program's exit
 * status (128 + signal when killed), or an exit code of lib/err.h when
 * vmtrace itself fails. */
int cmd_run(int argc, char **argv)
{
	char prog[PATH_MAX], lib[PATH_MAX], dir[PATH_MAX], cmdline[4096];
	struct run_opts o;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	uint64_t start_ns;
	pid_t pid;
	int status, rc = VT_EXIT_OK, existed;

	if (run_parse(argc, argv, &o) < 0) {
		vt_err_print("run");
		return VT_EXIT_USAGE;
	}
	if (run_find_prog(o.argv[0], prog, sizeof(prog)) < 0 ||
	    run_find_lib(lib, sizeof(lib)) < 0) {
		vt_err_print("run");
		return VT_EXIT_FAIL;
	}
	existed = access(o.dir, F_OK) == 0;
	if (vt_uft_dir_create(o.dir, o.force) < 0) {
		int err = vt_err_code();

		vt_err_print("run");
		if (err == ENOTEMPTY)
			return VT_EXIT_USAGE;	/* like `vmtrace record`: needs --force */
		return err == EACCES || err == EPERM || err == EROFS ? VT_EXIT_PERM
								     : VT_EXIT_FAIL;
	}
	/* after the directory's own checks (they name it), before anything is
	 * written in it: a directory made here goes again */
	if (run_check_prog(prog) < 0) {
		vt_err_print("run");
		if (!existed)
			rmdir(o.dir);
		return VT_EXIT_USAGE;
	}
	/* the runtime and the program may chdir: give them an absolute path */
	if (!realpath(o.dir, dir)) {
		vt_err_errno("%s", o.dir);
		vt_err_print("run");
		return VT_EXIT_FAIL;
	}
	o.dir = dir;
	run_cmdline(o.argv, cmdline, sizeof(cmdline));
	if (run_write_meta(dir, &o) < 0 ||
	    mcount_session_write_info(dir, prog, cmdline, -1, o.depth, 0) < 0) {
		vt_err_print("run");
		return VT_EXIT_FAIL;
	}

	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	start_ns = vt_mono_ns();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		vt_err_errno("fork");
		vt_err_print("run");
		return VT_EXIT_FAIL;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		if (run_setenv(&o, lib) == 0)
			execv(prog, o.argv);
		fprintf(stderr, "vmtrace: run: %s: %s\n", prog, strerror(errno));
		_exit(RUN_EXEC_FAILED);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			vt_err_errno("waitpid %d", (int)pid);
			vt_err_print("run");
			return VT_EXIT_FAIL;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);

	if (mcount_session_write_info(dir, prog, cmdline, status, o.depth,
				      vt_mono_ns() - start_ns) < 0) {
		vt_err_print("run");
		return VT_EXIT_FAIL;
	}
	/* uftrace reads ns: the .dat files become ns copies, the TSC
	 * stamps stay beside them (lib/uftrace.h vt_uft_finish_ns) */
	switch (vt_uft_finish_ns(dir, 0)) {
	case VT_UFT_FIN_PARTIAL:
		vt_warn("%s", vt_err_msg());
		break;
	case VT_UFT_FIN_NO_HZ:
	case -1:
		vt_warn("%s: not made readable by uftrace (%s); vmtrace finalize --tsc-hz HZ %s",
			dir, vt_err_msg(), dir);
		break;
	}
	if (o.ns) {
		char ns_dir[PATH_MAX + sizeof(RUN_NS_SUFFIX)];
		int crc;

		snprintf(ns_dir, sizeof(ns_dir), "%s%s", dir, RUN_NS_SUFFIX);
		crc = vt_uft_convert_ns(dir, ns_dir, 0, 1);
		if (crc < 0) {
			vt_err_print("run");
			return VT_EXIT_FAIL;
		}
		if (crc == VT_UFT_PARTIAL)
			vt_warn("%s", vt_err_msg());
	}
	if (o.dir_default)
		fprintf(stderr, "vmtrace: run: trace in %s%s\n", MCOUNT_DEFAULT_DIR,
			o.ns ? " (and " MCOUNT_DEFAULT_DIR RUN_NS_SUFFIX " in ns)" : "");
	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = RUN_SIG_EXIT + WTERMSIG(status);
	return rc;
}
