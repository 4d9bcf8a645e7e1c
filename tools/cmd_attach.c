/*
 * cmd_attach.c - `vmtrace attach PID`: start (and later stop) the Python tracer
 * inside a running CPython process that was not prepared for it.  gdb, in
 * batch mode, waits for a thread of the target to release the GIL (a
 * breakpoint on PyEval_SaveThread: the interpreter's state is whole there,
 * as releasing the GIL needs), then calls PyGILState_Ensure,
 * PyRun_SimpleString("import vmtrace; vmtrace.start(...)") and
 * PyGILState_Release in that thread.  Python code run where gdb happened
 * to stop the process (inside a bytecode, an allocator, a dict resize)
 * could crash it.  A process that releases no GIL within
 * ATTACH_SAFE_WAIT_MS (pure computation in one thread) is stopped where it
 * is, as before.  Runs in the vmtrace command; forks gdb, blocks while it
 * works.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "cli.h"
#include "tsc.h"

#define ATTACH_OUT_MAX		65536
#define ATTACH_CODE_MAX		(2 * PATH_MAX + 512)
#define YAMA_PTRACE_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
/* yama: 3 = no process may be traced, whatever its privileges */
#define YAMA_NO_ATTACH		3
/* How long gdb waits for the target to release the GIL before it is
 * interrupted (SIGINT: gdb stops the target where it is and goes on). */
#define ATTACH_SAFE_WAIT_MS	2000

static volatile sig_atomic_t attach_quit;

static void attach_on_signal(int sig)
{
	attach_quit = 1;
}

static uint64_t attach_now_ms(void)
{
	return vt_mono_ns() / 1000000;
}

/* Run gdb on @pid calling PyRun_SimpleString(@code) with the GIL held, at
 * the target's next release of the GIL (or where it is after
 * ATTACH_SAFE_WAIT_MS: *@stopped set).  0 when the code ran without an
 * exception. */
static int attach_run(int pid, const char *code, int *exit_code, int *stopped)
{
	char pidbuf[32], ensure[] = "call (int)PyGILState_Ensure()";
	char run[ATTACH_CODE_MAX + 64], out[ATTACH_OUT_MAX];
	int fds[2], status, gil = -1, rc_run = -2;
	struct pollfd pfd;
	uint64_t t0;
	size_t len = 0;
	ssize_t n;
	pid_t child;
	char *p;

	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	snprintf(run, sizeof(run), "call (int)PyRun_SimpleString(\"%s\")", code);
	if (pipe(fds) < 0)
		return vt_err_errno("pipe");
	child = fork();
	if (child < 0)
		return vt_err_errno("fork");
	if (child == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		/* SIGINT (the fallback below) stops the target but is not
		 * passed on to it, not even at the detach */
		execlp("gdb", "gdb", "-nx", "-batch", "-p", pidbuf, "-ex", "set confirm off",
		       "-ex", "handle SIGINT stop nopass", "-ex", "break PyEval_SaveThread",
		       "-ex", "continue", "-ex", "delete", "-ex", ensure, "-ex", run,
		       "-ex", "call (void)PyGILState_Release($1)", "-ex", "detach", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	*stopped = 0;
	t0 = 0;		/* the wait starts once the breakpoint is set */
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	while (len < sizeof(out) - 1) {
		int pr = poll(&pfd, 1, 100);

		if (pr == 0 || (pr < 0 && errno == EINTR)) {
			if (t0 && !*stopped && attach_now_ms() - t0 >= ATTACH_SAFE_WAIT_MS) {
				/* no GIL released: gdb stops the target where it is */
				kill(child, SIGINT);
				*stopped = 1;
			}
			continue;
		}
		n = read(fds[0], out + len, sizeof(out) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		out[len] = '\0';
		/* gdb attached and went on to `continue` (with the breakpoint,
		 * or without it in a Python that has no such symbol) */
		if (!t0 && (strstr(out, "Breakpoint 1 at") ||
			    strstr(out, "\"PyEval_SaveThread\" not defined")))
			t0 = attach_now_ms();
	}
	out[len] = '\0';
	close(fds[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !strstr(out, "GNU gdb") &&
	    len == 0) {
		*exit_code = VT_EXIT_UNSUPPORTED;
		return vt_err_set("gdb not found (apt-get install gdb)");
	}
	if (strstr(out, "ptrace: Operation not permitted") ||
	    strstr(out, "Could not attach to process")) {
		*exit_code = VT_EXIT_PERM;
		return vt_err_set("process %d: ptrace not permitted (need root or CAP_SYS_PTRACE, "
				  "and %s <= 2; or the target is already traced)", pid,
				  YAMA_PTRACE_SCOPE);
	}
	if (strstr(out, "No such process")) {
		*exit_code = VT_EXIT_FAIL;
		return vt_err_set("process %d: no such process", pid);
	}
	if (strstr(out, "No symbol \"PyGILState_Ensure\"") || strstr(out, "No symbol table")) {
		*exit_code = VT_EXIT_UNSUPPORTED;
		return vt_err_set("process %d: not a CPython process (no PyGILState_Ensure)", pid);
	}
	/* gdb prints "$1 = <gil state>" then "$2 = <PyRun result>" */
	if ((p = strstr(out, "$1 = ")))
		gil = atoi(p + 5);
	if ((p = strstr(out, "$2 = ")))
		rc_run = atoi(p + 5);
	if (gil < 0 || rc_run == -2) {
		char *last = strrchr(out, '\n');

		while (last && last > out && last[1] == '\0') {
			*last = '\0';
			last = strrchr(out, '\n');
		}
		*exit_code = VT_EXIT_FAIL;
		return vt_err_set("process %d: gdb could not call into Python: %s", pid,
				  last ? last + 1 : out);
	}
	if (rc_run != 0) {
		*exit_code = VT_EXIT_FAIL;
		return vt_err_set("process %d: the Python code raised (see the process's stderr): %s",
				  pid, code);
	}
	return 0;
}

static int attach_pythonpath(char *buf, size_t len, int pid)
{
	char exe[PATH_MAX], link[64], target[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (n < 0)
		return vt_err_errno("/proc/self/exe");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	/* the build of the extension for the target's version */
	if (strstr(target, "3.13") && snprintf(buf, len, "%s/../python313", exe) < (int)len &&
	    stat(buf, &st) == 0)
		return 0;
	if (snprintf(buf, len, "%s/../python", exe) >= (int)len)
		return vt_err_set("%s: path too long", exe);
	return 0;
}

static int has_quote(const char *s)
{
	return strchr(s, '\'') || strchr(s, '"') || strchr(s, '\\') || strchr(s, '\n');
}

static void attach_usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace attach [-o DIR] [--duration S] [--pythonpath DIR] PID\n"
		    "  trace the running Python process PID into DIR (default\n"
		    "  vmtrace-python-PID) for S seconds, or until Ctrl-C\n");
}

/* `vmtrace attach [-o DIR] [--duration S] [--pythonpath D] PID`: returns an
 * exit code (VT_EXIT_PERM when ptrace is not allowed). */
int cmd_attach(int argc, char **argv)
{
	char code[ATTACH_CODE_MAX], pypath[PATH_MAX], dirbuf[PATH_MAX], absdir[PATH_MAX];
	const char *dir = NULL, *pp = NULL;
	double duration = -1;
	int pid = 0, code_rc = VT_EXIT_FAIL, stopped = 0;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;

		if (!strcmp(a, "-o") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(a, "--duration") && i + 1 < argc) {
			duration = strtod(argv[++i], &end);
			if (*end || duration < 0) {
				fprintf(stderr, "vmtrace: attach: bad duration: %s\n", argv[i]);
				return VT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--pythonpath") && i + 1 < argc) {
			pp = argv[++i];
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			attach_usage(stdout);
			return VT_EXIT_OK;
		} else if (a[0] != '-' && !pid) {
			long v = strtol(a, &end, 10);

			if (*end || v <= 0 || v > INT_MAX) {
				fprintf(stderr, "vmtrace: attach: not a process id: %s\n", a);
				return VT_EXIT_USAGE;
			}
			pid = (int)v;
		} else {
			fprintf(stderr, "vmtrace: attach: unknown option or extra argument: %s\n", a);
			return vt_cli_usage(attach_usage, 0);
		}
	}
	if (!pid)
		return vt_cli_usage(attach_usage, 0);
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "vmtrace: attach: process %d: no such process\n", pid);
		return VT_EXIT_FAIL;
	}
	f = fopen(YAMA_PTRACE_SCOPE, "r");
	if (f) {
		int scope = 0;

		if (fscanf(f, "%d", &scope) == 1 && scope >= YAMA_NO_ATTACH) {
			fclose(f);
			fprintf(stderr, "vmtrace: attach: ptrace is disabled (%s = %d): "
				"no process can be attached until reboot\n", YAMA_PTRACE_SCOPE, scope);
			return VT_EXIT_PERM;
		}
		fclose(f);
	}
	if (!dir) {
		snprintf(dirbuf, sizeof(dirbuf), "vmtrace-python-%d", pid);	/* docs/cli.md */
		dir = dirbuf;
	}
	if (dir[0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(absdir, sizeof(absdir), "%s/%s", cwd, dir) >= (int)sizeof(absdir)) {
			fprintf(stderr, "vmtrace: attach: %s: path too long\n", dir);
			return VT_EXIT_USAGE;
		}
		dir = absdir;
	}
	if (!pp) {
		if (attach_pythonpath(pypath, sizeof(pypath), pid) < 0) {
			vt_err_print("attach");
			return VT_EXIT_FAIL;
		}
		pp = pypath;
	}
	if (has_quote(dir) || has_quote(pp)) {
		fprintf(stderr, "vmtrace: attach: quotes or backslashes in paths are not supported\n");
		return VT_EXIT_USAGE;
	}
	snprintf(code, sizeof(code),
		 "import sys; sys.path.insert(0, '%s'); import vmtrace; vmtrace.start('%s')", pp, dir);
	if (attach_run(pid, code, &code_rc, &stopped) < 0) {
		vt_err_print("attach");
		return code_rc;
	}
	if (stopped)
		fprintf(stderr, "vmtrace: attach: process %d released no GIL in %d ms: "
			"tracing started where it was stopped\n", pid, ATTACH_SAFE_WAIT_MS);
	fprintf(stderr, "vmtrace: attach: tracing process %d into %s\n", pid, dir);
	signal(SIGINT, attach_on_signal);
	signal(SIGTERM, attach_on_signal);
	if (duration >= 0) {
		struct timespec ts = { (time_t)duration,
				       (long)((duration - (double)(time_t)duration) * 1e9) };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !attach_quit)
			;
	} else {
		while (!attach_quit)
			pause();
	}
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "vmtrace: attach: process %d ended; its trace is in %s\n", pid, dir);
		return VT_EXIT_OK;
	}
	if (attach_run(pid, "import vmtrace; vmtrace.stop()", &code_rc, &stopped) < 0) {
		vt_err_print("attach");
		return code_rc;
	}
	fprintf(stderr, "vmtrace: attach: stopped; trace in %s\n", dir);
	return VT_EXIT_OK;
}
