/*
 * usdt_probes.c - CPython's static markers (USDT, read by lib/usdt_note.c) as
 * uprobe events on tracefs, so an unprepared Python process is traced by
 * the recorder in the x86-tsc clock like every other kernel event: which
 * file of a process or an executable holds the markers, creating the
 * events (with fetch args and the semaphore as the uprobe's reference
 * counter) and removing them again.  For `vmtrace record --python`
 * (host/cmd_record.c) and `vmtrace top --python` (guest/usdt/top.c), on
 * the host or in a guest.  Runs in the command's main thread; may
 * allocate and block.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tracefs.h>
#include "elfread.h"
#include "err.h"
#include "usdt_probes.h"

#define USDT_GROUP_PREFIX	"vmtrace_py_"
#define USDT_REMOVE_TRIES	20
#define USDT_REMOVE_WAIT_US	50000
#define USDT_LDD_MAX		8192	/* bytes of the loader's list we read */
#define USDT_EXEC_FAILED	127

static int has_python_markers(const char *path)
{
	struct vt_usdt_probe p[4];

	return vt_usdt_probes_read(path, "python", p, 4) > 0;
}

int usdt_python_file_of_pid(pid_t pid, char *out, size_t len)
{
	char maps[64], line[4096 + 256], exe[PATH_MAX], path[PATH_MAX];
	FILE *fp;
	ssize_t n;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	fp = fopen(maps, "re");
	if (!fp)
		return vt_err_errno("%s: cannot open", maps);
	while (fgets(line, sizeof(line), fp)) {
		char *f = strchr(line, '/');

		if (!f || !strstr(f, "libpython"))
			continue;
		f[strcspn(f, "\n")] = 0;
		if (has_python_markers(f)) {
			snprintf(out, len, "%s", f);
			fclose(fp);
			return 0;
		}
	}
	fclose(fp);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, path, sizeof(path) - 1);
	if (n < 0)
		return vt_err_errno("%s: cannot read", exe);
	path[n] = 0;
	if (!has_python_markers(path))
		return vt_err_set("process %d (%s) maps no file with CPython's USDT markers "
				  "(a CPython built --with-dtrace is needed)", (int)pid, path);
	snprintf(out, len, "%s", path);
	return 0;
}

/* @name found in $PATH (or @name itself when it has a '/'): 0 or -1. */
static int find_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return 0;
	}
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (snprintf(out, len, "%.*s/%s", (int)(e - p), p, name) < (int)len &&
		    !access(out, X_OK))
			return 0;
	}
	return vt_err_set_code(ENOENT, "%s: not found in $PATH", name);
}

/*
 * Ask the dynamic loader which libpython it maps for @exe (its list mode,
 * as ldd does: nothing of @exe runs) and put the first one with python
 * markers into @out.  0 or -1.
 */
static int loader_libpython(const char *exe, char *out, size_t len)
{
	char buf[USDT_LDD_MAX], *line, *save = NULL;
	size_t used = 0;
	ssize_t n;
	int p[2], st;
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
		dup2(p[1], STDOUT_FILENO);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		execl(exe, exe, (char *)NULL);
		_exit(USDT_EXEC_FAILED);
	}
	close(p[1]);
	while (used < sizeof(buf) - 1 &&
	       (n = read(p[0], buf + used, sizeof(buf) - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, "=> /"), *sp;

		if (!arrow || !strstr(line, "libpython"))
			continue;
		arrow += 3;
		sp = strchr(arrow, ' ');
		if (sp)
			*sp = 0;
		if (has_python_markers(arrow)) {
			snprintf(out, len, "%s", arrow);
			return 0;
		}
	}
	return vt_err_set("%s has no CPython USDT markers and maps no libpython with them "
			  "(a CPython built --with-dtrace is needed; or give --python=FILE)", exe);
}

int usdt_python_file_of_binary(const char *path, char *out, size_t len)
{
	char found[PATH_MAX], real[PATH_MAX];
	struct vt_elf *e;

	if (find_in_path(path, found, sizeof(found)))
		return -1;
	if (!realpath(found, real))
		return vt_err_errno("%s: cannot resolve", found);
	e = vt_elf_open(real);
	if (!e)
		return -1;
	vt_elf_close(e);
	if (has_python_markers(real)) {
		snprintf(out, len, "%s", real);
		return 0;
	}
	return loader_libpython(real, out, len);
}

int usdt_pid_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* "pid (comm) S ...": comm may hold ')' */
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

static const char *const fn_args[] = { "file", "func", "line", NULL };
static const char *const fn_strings[] = { "file", "func", NULL };
static const char *const gc_start_args[] = { "generation", NULL };
static const char *const gc_done_args[] = { "collected", NULL };
static const char *const imp_start_args[] = { "module", NULL };
static const char *const imp_done_args[] = { "module", "found", NULL };
static const char *const imp_strings[] = { "module", NULL };

static const struct usdt_python_event python_events[] = {
	{ "function__entry", fn_args, fn_strings },
	{ "function__return", fn_args, fn_strings },
	{ "gc__start", gc_start_args, NULL },
	{ "gc__done", gc_done_args, NULL },
	{ "import__find__load__start", imp_start_args, imp_strings },
	{ "import__find__load__done", imp_done_args, imp_strings },
};

static int uprobe_events_write(const char *line)
{
	char *path = tracefs_get_tracing_file("uprobe_events");
	int fd, ret = 0;

	if (!path)
		return vt_err_set("tracefs not found (mount -t tracefs nodev /sys/kernel/tracing)");
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		ret = vt_err_errno("%s: cannot open", path);
	} else {
		if (write(fd, line, strlen(line)) < 0)
			ret = vt_err_errno("%s: cannot write '%s'", path, line);
		close(fd);
	}
	tracefs_put_tracing_file(path);
	return ret;
}

/* Remove one event, retrying @tries times while it is busy (an instance
 * being torn down still holds it). */
static int remove_event(const char *group, const char *name, int tries)
{
	char line[2 * VT_USDT_NAME_MAX + 8];

	snprintf(line, sizeof(line), "-:%s/%s\n", group, name);
	for (int i = 0; i < tries; i++) {
		if (!uprobe_events_write(line))
			return 0;
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		usleep(USDT_REMOVE_WAIT_US);
	}
	return -1;
}

/* Remove probe groups left by a vmtrace that died before cleaning up. */
static void sweep_stale(void)
{
	char *path = tracefs_get_tracing_file("uprobe_events");
	char line[8192], group[VT_USDT_NAME_MAX], name[VT_USDT_NAME_MAX];
	FILE *fp;

	if (!path)
		return;
	fp = fopen(path, "re");
	tracefs_put_tracing_file(path);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		int pid;

		if (sscanf(line, "p:" USDT_GROUP_PREFIX "%d/%63s", &pid, name) != 2)
			continue;
		if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
			snprintf(group, sizeof(group), USDT_GROUP_PREFIX "%d", pid);
			remove_event(group, name, 1);	/* busy: its instance lives on */
		}
	}
	fclose(fp);
}

/* One uprobe event @name in @s for the marker site @p. 0 or -1. */
static int create_one(struct usdt_session *s, const struct usdt_python_event *ev,
		      const struct vt_usdt_probe *p, const char *name)
{
	char fetch[VT_USDT_FETCH_MAX], line[8192];
	int n;

	if (vt_usdt_fetchargs(p->args, ev->args, ev->strings, fetch, sizeof(fetch)))
		return vt_err_wrap("%s: marker %s (%s): %s", s->file, ev->marker, p->args,
				   vt_err_msg());
	if (p->sem_vaddr)
		n = snprintf(line, sizeof(line), "p:%s/%s %s:0x%llx(0x%llx) %s\n",
			     s->group, name, s->file, (unsigned long long)p->pc_off,
			     (unsigned long long)p->sem_off, fetch);
	else
		n = snprintf(line, sizeof(line), "p:%s/%s %s:0x%llx %s\n",
			     s->group, name, s->file, (unsigned long long)p->pc_off, fetch);
	if (n < 0 || n >= (int)sizeof(line))
		return vt_err_set("%s: uprobe definition too long", s->file);
	if (uprobe_events_write(line))
		return -1;
	snprintf(s->names[s->nr], VT_USDT_NAME_MAX, "%s", name);
	memcpy(s->events[s->nr], s->group, strlen(s->group));
	snprintf(s->events[s->nr] + strlen(s->group), sizeof(s->events[0]) - strlen(s->group),
		 ":%s", name);
	s->nr++;
	return 0;
}

int usdt_python_create(struct usdt_session *s, const char *file)
{
	struct vt_usdt_probe probes[USDT_MAX_PROBES];
	int nr;

	memset(s, 0, sizeof(*s));
	snprintf(s->group, sizeof(s->group), USDT_GROUP_PREFIX "%d", (int)getpid());
	if (!realpath(file, s->file))
		return vt_err_errno("%s: cannot resolve", file);
	nr = vt_usdt_probes_read(s->file, "python", probes, USDT_MAX_PROBES);
	if (nr < 0)
		return -1;
	if (nr == 0)
		return vt_err_set("%s: no CPython USDT markers (provider \"python\"); "
				  "CPython must be built --with-dtrace", s->file);
	sweep_stale();
	for (size_t e = 0; e < sizeof(python_events) / sizeof(python_events[0]); e++) {
		const struct usdt_python_event *ev = &python_events[e];
		int sites = 0;

		/* a marker the compiler duplicated (inlining) has several
		 * sites: "name", then "name_2", "name_3", ... */
		for (int i = 0; i < nr; i++) {
			char name[VT_USDT_NAME_MAX];

			if (strcmp(probes[i].name, ev->marker))
				continue;
			if (sites++)
				snprintf(name, sizeof(name), "%.50s_%d", ev->marker, sites);
			else
				snprintf(name, sizeof(name), "%s", ev->marker);
			if (s->nr >= USDT_MAX_PROBES) {
				vt_err_set("%s: more than %d marker sites", s->file, USDT_MAX_PROBES);
				goto fail;
			}
			if (create_one(s, ev, &probes[i], name))
				goto fail;
		}
		if (!sites)
			s->missing[s->nr_missing++] = ev->marker;
	}
	return 0;
fail:
	{
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", vt_err_msg());
		usdt_python_remove(s);
		vt_err_wrap("%s", msg);
	}
	return -1;
}

int usdt_python_remove(struct usdt_session *s)
{
	int ret = 0;

	for (int i = s->nr - 1; i >= 0; i--)
		if (remove_event(s->group, s->names[i], USDT_REMOVE_TRIES))
			ret = -1;
	s->nr = 0;
	return ret;
}

void usdt_python_explain(const struct usdt_session *s, void *out)
{
	FILE *fp = out;
	int fn = 0;

	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->names[i], "function__entry"))
			fn = 1;
	fprintf(fp, "vmtrace: python markers of %s: %d probed", s->file, s->nr);
	for (int i = 0; i < s->nr; i++)
		fprintf(fp, "%s%s", i ? ", " : " (", s->names[i]);
	fprintf(fp, "%s\n", s->nr ? ")" : "");
	if (!fn)
		fprintf(fp, "vmtrace: this interpreter has no function markers (CPython 3.12 and "
			"3.13 removed them): gc and imports only; for every call use "
			"`vmtrace attach PID` (the extension)\n");
	else if (strstr(s->file, "3.11"))
		fprintf(fp, "vmtrace: CPython 3.11 fires function__return for every Python return, "
			"but function__entry only when a generator is resumed by throw()/close() "
			"or while a sys.setprofile/settrace hook is active (CPython issue 98894): "
			"calls are counted by their returns, without start times; for every call "
			"with its duration use `vmtrace attach PID`\n");
}
