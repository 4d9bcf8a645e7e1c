/*
 * record_registry.c - what lets an interrupted recording be finished
 * (record_int.h): DIR/record.state and DIR/record.events, the registry
 * /run/vmtrace/record-PID (recorder pid -> its DIR), draining a tracing
 * instance into DIR's raw files, and the reaper a new recorder runs on the
 * instances of recorders that are gone.  Main thread only; allocates.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <tracefs.h>
#include "err.h"
#include "fileio.h"
#include "kvmfacts.h"
#include "proc.h"
#include "meta.h"
#include "record_int.h"
#include "tracedat.h"
#include "tsc.h"

#define REC_REGISTRY_DIR	"/run/vmtrace"
#define REC_REGISTRY_FMT	REC_REGISTRY_DIR "/record-%d"
#define REC_REGISTRY_MODE	0700
#define REC_INSTANCE_PREFIX	"vmtrace-"
#define REC_DRAIN_SPARE_PAGES	2

void rec_registry_path(char *path, size_t len, pid_t pid)
{
	snprintf(path, len, REC_REGISTRY_FMT, (int)pid);
}

/* Remember that @pid records into @dir (absolute): the reaper of a later
 * recorder finds the directory of a killed one here.  Best effort: 0 if
 * the entry was written. */
static int rec_registry_add(pid_t pid, const char *dir)
{
	char path[REC_PATH_MAX], abs[REC_PATH_MAX];
	struct stat st;

	if (!realpath(dir, abs))
		return -1;
	if (mkdir(REC_REGISTRY_DIR, REC_REGISTRY_MODE) && errno != EEXIST)
		return -1;
	if (lstat(REC_REGISTRY_DIR, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -1;	/* not ours: never write through it */
	rec_registry_path(path, sizeof(path), pid);
	if (vt_file_write_atomic(path, abs, strlen(abs), REC_FILE_MODE, 0)) {
		vt_warn("%s: cannot record the output directory (%s)", path, vt_err_msg());
		return -1;
	}
	return 0;
}

void rec_registry_del(pid_t pid)
{
	char path[REC_PATH_MAX];

	rec_registry_path(path, sizeof(path), pid);
	unlink(path);
}

/* The output directory a (killed) recorder @pid registered, into @dir. */
static int rec_registry_get(pid_t pid, char *dir, size_t len)
{
	char path[REC_PATH_MAX];

	rec_registry_path(path, sizeof(path), pid);
	return host_proc_read_small(path, dir, len);
}

/* The state file of @dir if it belongs to the recorder @pid with instance
 * @inst (NULL: any); NULL otherwise (or when @dir holds a trace.dat). */
struct vt_meta *rec_state_of(const char *dir, pid_t pid, const char *inst)
{
	char path[REC_PATH_MAX];
	struct vt_meta *m;
	uint64_t v;
	const char *name;

	snprintf(path, sizeof(path), "%s/%s", dir, VT_TD_FILE);
	if (!access(path, F_OK))
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, REC_STATE_FILE);
	m = vt_meta_read(path);
	if (!m)
		return NULL;
	name = vt_meta_get(m, VT_MK_RECORD_INSTANCE);
	if (vt_meta_get_u64(m, VT_MK_RECORD_PID, &v) || (pid > 0 && v != (uint64_t)pid) || !name ||
	    (inst && strcmp(name, inst))) {
		vt_meta_free(m);
		return NULL;
	}
	return m;
}

/* Write DIR/record.state and DIR/record.events (and the registry entry)
 * once the instance is set up: what `--finish` needs if we are killed. */
int rec_state_write(struct host_record *r, const char *tdir, const char *name)
{
	char path[REC_PATH_MAX], boot[REC_BOOT_ID_MAX];
	struct vt_meta *m = vt_meta_new();
	char *set_event = tracefs_instance_file_read(r->inst, "set_event", NULL);
	int ret = -1;

	if (!m || !set_event) {
		vt_err_set("%s/instances/%s/set_event: cannot read", tdir, name);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", r->dir, REC_EVENTS_FILE);
	if (vt_file_write_atomic(path, set_event, strlen(set_event), REC_FILE_MODE, 0))
		goto out;
	for (int i = 0; i < vt_meta_count(r->meta); i++)
		if (vt_meta_set(m, vt_meta_key(r->meta, i), "%s", vt_meta_val(r->meta, i)))
			goto out;
	if (host_proc_read_small(REC_BOOT_ID_PATH, boot, sizeof(boot)))
		boot[0] = 0;
	boot[strcspn(boot, "\n")] = 0;
	/* record.registry=1: the registry entry goes only with the instance */
	if (vt_meta_set(m, VT_MK_RECORD_PID, "%d", (int)getpid()) ||
	    vt_meta_set(m, VT_MK_RECORD_INSTANCE, "%s", name) ||
	    vt_meta_set(m, VT_MK_RECORD_TRACEFS, "%s", tdir) ||
	    (boot[0] && vt_meta_set(m, VT_MK_RECORD_BOOT_ID, "%s", boot)) ||
	    (!rec_registry_add(getpid(), r->dir) && vt_meta_set(m, VT_MK_RECORD_REGISTRY, "1")))
		goto out;
	snprintf(path, sizeof(path), "%s/%s", r->dir, REC_STATE_FILE);
	if (vt_meta_write(m, path))
		goto out;
	ret = 0;
out:
	free(set_event);
	vt_meta_free(m);
	return ret;
}

/*
 * Move what the ring buffers of @inst still hold to @dir/trace.cpuN.raw
 * (appended after the whole pages already there; a torn last page is cut
 * off first), tracing off.  @stats[i] (may be NULL) get the per-CPU stats
 * read before.  Checks first that @dir has room for all of it: then
 * nothing is drained (the pages stay in the kernel) and the message names
 * @dir.  -1 with a message on failure.
 */
int rec_drain_instance(struct tracefs_instance *inst, const char *dir, unsigned nr_cpus,
			      uint32_t page_size, char **stats)
{
	struct host_record fake = { .page_size = page_size };
	char file[REC_NAME_MAX], path[REC_PATH_MAX];
	uint64_t need = 0;
	struct statvfs vfs;

	tracefs_trace_off(inst);
	for (unsigned i = 0; i < nr_cpus; i++) {
		char *st;

		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", i);
		st = tracefs_instance_file_read(inst, file, NULL);
		/* "bytes": event bytes still unread; plus page headers, a
		 * partial page and a torn one cut off */
		need += (rec_stat_field(st, "bytes: ") / (page_size - VT_TD_PAGE_HDR_SIZE) +
			 REC_DRAIN_SPARE_PAGES) * page_size;
		if (stats)
			stats[i] = st;
		else
			free(st);
	}
	if (statvfs(dir, &vfs))
		return vt_err_errno("%s: cannot check the free space", dir);
	if ((uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
		return vt_err_set_code(ENOSPC, "%s: %s: %llu bytes free, the tracing instance %s "
				       "holds up to %llu: nothing drained (the pages stay in the "
				       "kernel); finish into another directory with --finish DIR "
				       "-o OTHERDIR", dir, strerror(ENOSPC),
				       (unsigned long long)vfs.f_bavail * vfs.f_frsize,
				       tracefs_instance_get_name(inst), (unsigned long long)need);
	}
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct rec_cpu c = { .rec = &fake, .cpu = i, .pipe = { -1, -1 } };
		struct stat sb;
		int ok = 0;

		snprintf(file, sizeof(file), "per_cpu/cpu%u/trace_pipe_raw", i);
		snprintf(path, sizeof(path), REC_RAW_FMT, dir, i);
		c.in_fd = tracefs_instance_file_open(inst, file, O_RDONLY | O_NONBLOCK);
		c.out_fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, REC_FILE_MODE);
		c.page = malloc(page_size);
		if (c.in_fd < 0 || c.out_fd < 0 || !c.page || pipe2(c.pipe, O_CLOEXEC) ||
		    fstat(c.out_fd, &sb) ||
		    ftruncate(c.out_fd, sb.st_size - sb.st_size % page_size) ||
		    lseek(c.out_fd, 0, SEEK_END) < 0) {
			vt_err_errno("%s: cannot drain cpu%u of the tracing instance into it",
				     c.out_fd < 0 || c.in_fd >= 0 ? path : file, i);
		} else {
			int sz;

			fcntl(c.pipe[1], F_SETPIPE_SZ, REC_PIPE_BYTES);
			sz = fcntl(c.pipe[1], F_GETPIPE_SZ);
			c.pipe_bytes = sz > 0 ? (size_t)sz : page_size;
			rec_drain(&c);
			if (c.err)
				vt_err_set("%s: %s (draining cpu%u)", path, strerror(c.err), i);
			else if (fsync(c.out_fd))
				vt_err_errno("%s: fsync failed", path);
			else
				ok = 1;
		}
		if (c.in_fd >= 0)
			close(c.in_fd);
		if (c.out_fd >= 0)
			close(c.out_fd);
		if (c.pipe[0] >= 0)
			close(c.pipe[0]);
		if (c.pipe[1] >= 0)
			close(c.pipe[1]);
		free(c.page);
		if (!ok)
			return -1;
	}
	return 0;
}

/*
 * Remove the tracing instances "vmtrace-PID" of recorders that were killed
 * (PID gone): each holds ring buffers of every CPU until removed.  When
 * the killed recorder's directory (registry) is not finished yet, the
 * buffered pages are first drained into its raw files (then `--finish
 * DIR` makes the trace.dat); if that fails (no room) the instance is kept
 * and the warning says how to finish it.  An instance still in use (open
 * files) refuses rmdir and is kept.
 */
void rec_reap_stale(const char *tdir)
{
	char path[REC_PATH_MAX + REC_NAME_MAX], dir[REC_PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", tdir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct tracefs_instance *inst;
		struct vt_meta *st = NULL;
		uint64_t ncpu = 0, psz = 0;
		char *end;
		long pid;

		if (strncmp(de->d_name, REC_INSTANCE_PREFIX, strlen(REC_INSTANCE_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(REC_INSTANCE_PREFIX), &end, 10);
		/* an instance named after our own pid is stale: ours is not made yet */
		if (*end || pid <= 0 || pid > INT_MAX ||
		    (pid != getpid() && (!kill((pid_t)pid, 0) || errno != ESRCH)))
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", tdir, de->d_name);
		if (!rec_registry_get((pid_t)pid, dir, sizeof(dir)))
			st = rec_state_of(dir, (pid_t)pid, de->d_name);
		if (st && !vt_meta_get_u64(st, VT_MK_RECORD_NR_CPUS, &ncpu) &&
		    !vt_meta_get_u64(st, VT_MK_RECORD_PAGE_SIZE, &psz) && ncpu && psz &&
		    (inst = tracefs_instance_alloc(NULL, de->d_name))) {
			int e = rec_drain_instance(inst, dir, (unsigned)ncpu, (uint32_t)psz, NULL);

			tracefs_instance_free(inst);
			if (e) {
				vt_warn("kept %s of the killed recorder (pid %ld): %s; run: vmtrace "
					"record --finish %s", path, pid, vt_err_msg(), dir);
				vt_meta_free(st);
				continue;
			}
			vt_warn("saved the buffered pages of the killed recorder (pid %ld) into %s; "
				"make its trace.dat with: vmtrace record --finish %s", pid, dir, dir);
			snprintf(path, sizeof(path), "%s/%s", dir, REC_STATE_FILE);
			if (vt_meta_set(st, VT_MK_RECORD_SALVAGED_BY, "%d", (int)getpid()) ||
			    vt_meta_write(st, path))
				vt_warn("%s", vt_err_msg());
			snprintf(path, sizeof(path), "%s/instances/%s", tdir, de->d_name);
		}
		vt_meta_free(st);
		if (!rmdir(path)) {
			vt_warn("removed %s, left by a killed recorder (pid %ld)", path, pid);
			rec_registry_del((pid_t)pid);
		}
	}
	closedir(d);
}

/* tracefs mounted (mount it if we may), instances writable. */
