/*
 * linux.c - the Linux build of the mcount runtime
 * (build/lib/libvmtrace-mcount.so, preloaded by `vmtrace run` or linked
 * in).  Runs inside the traced program: the hot path (mcount_enter,
 * mcount_exit, __cyg_profile_func_*) runs on every traced call of every
 * thread with no lock, allocation or syscall; the slow paths (thread
 * start, full buffer, thread/process exit) may allocate, lock and write.
 *
 * Each thread owns a buffer of MCOUNT_DEFAULT_BUF_BYTES (VMTRACE_BUFSIZE)
 * and a shadow stack, mapped on its first traced call; a full buffer is
 * written to DIR/<TID>.dat with write(2) (O_APPEND), so whatever was
 * flushed survives a SIGKILL.  See docs/mcount.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <link.h>
#include "cli.h"
#include "err.h"
#include "fileio.h"
#include "meta.h"
#include "uftrace.h"
#include "guest/mcount/core.h"
#include "guest/mcount/session.h"

#define EXPORT		__attribute__((visibility("default")))
#define TLS_IE		__attribute__((tls_model("initial-exec")))
/* session ids are 16 hex digits in uftrace */
#define SID_LEN		16
#define MCOUNT_SID_PID_SHIFT	40	/* the pid mixed into the high bits of the TSC */
#define CMDLINE_MAX	4096

/* Runtime states (mcount_state). */
enum {
	STATE_OFF = 0,		/* before the constructor: record nothing */
	STATE_ON = 1,
	STATE_DONE = 2,		/* process exit flushed everything */
};

/* A thread's recording state, in its TLS. */
struct mcount_thread {
	struct mcount_ctx ctx;		/* first: the hot fields */
	struct vt_uft_record *buf;	/* NULL until the first traced call */
	void *map;			/* buffer + shadow stack mapping */
	size_t map_len;
	off_t written;			/* bytes in the .dat so far */
	int fd;
	int tid;
	int in_slow;			/* recursion guard of the slow paths */
	int dead;			/* thread exit handled: record nothing */
	struct mcount_thread *next;	/* registry of live threads */
};

static __thread struct mcount_thread mcount_tls TLS_IE;

static int mcount_state;
static char mcount_dir[PATH_MAX];
static char mcount_sid[SID_LEN + 1];
static unsigned mcount_max_depth = MCOUNT_DEFAULT_DEPTH;
static unsigned mcount_entries_only;
static size_t mcount_buf_bytes = MCOUNT_DEFAULT_BUF_BYTES;
static int mcount_standalone;		/* not started by `vmtrace run` */
/* calls not recorded by finished threads (beyond the depth limit) and
 * records lost (write errors), summed at thread finish */
static uint64_t mcount_skipped_total;
static uint64_t mcount_lost_total;
static pthread_key_t mcount_key;
static pthread_mutex_t mcount_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mcount_thread *mcount_threads;

/* ---- flushing ---------------------------------------------------------- */

/* Write the thread's records to its .dat; on a write error cut the file
 * back to its last whole record and count the rest as lost. */
static void thread_flush(struct mcount_thread *t)
{
	const char *p = (const char *)t->buf;
	size_t len = (size_t)((char *)t->ctx.pos - p);
	size_t done = 0;

	while (done < len && t->fd >= 0) {
		ssize_t n = write(t->fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			off_t whole = (t->written + (off_t)done) &
				      ~(off_t)(sizeof(struct vt_uft_record) - 1);

			if (ftruncate(t->fd, whole) == 0)
				done = (size_t)(whole - t->written);
			t->ctx.lost += (len - done) / sizeof(struct vt_uft_record);
			break;
		}
		done += (size_t)n;
	}
	t->written += (off_t)done;
	t->ctx.pos = t->buf;
}

static int mcount_room(struct mcount_ctx *c)
{
	struct mcount_thread *t = (struct mcount_thread *)c;
	int saved_errno;

	if (likely(c->pos < c->end))
		return 1;
	if (!t->buf || t->in_slow)
		return 0;
	saved_errno = errno;
	t->in_slow = 1;
	thread_flush(t);
	t->in_slow = 0;
	errno = saved_errno;
	return c->pos < c->end;
}

/* ---- thread start and exit --------------------------------------------- */

static void info_write(int exit_status);

static int thread_start(struct mcount_thread *t)
{
	/* the records start on a page: write() copies from there 2.3x faster
	 * than from a few bytes before a page's end (lib/fileio.h) */
	size_t shadow = ((size_t)mcount_max_depth * sizeof(struct mcount_frame) +
			 VT_IO_ALIGN - 1) & ~(size_t)(VT_IO_ALIGN - 1);
	char path[PATH_MAX];
	void *map;

	t->tid = (int)gettid();
	t->map_len = mcount_buf_bytes + shadow;
	map = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	if (vt_uft_dat_path(path, sizeof(path), mcount_dir, t->tid) < 0)
		goto fail;
	t->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (t->fd < 0)
		goto fail;
	t->map = map;
	t->written = 0;
	t->buf = (struct vt_uft_record *)((char *)map + shadow);
	t->ctx.base = map;
	t->ctx.top = map;
	t->ctx.limit = t->ctx.base + (mcount_entries_only ? 0 : mcount_max_depth);
	t->ctx.max_depth = mcount_max_depth;
	t->ctx.record_below = mcount_max_depth;
	t->ctx.entries_only = mcount_entries_only;
	t->ctx.pos = t->buf;
	t->ctx.end = t->buf + mcount_buf_bytes / sizeof(struct vt_uft_record);

	pthread_setspecific(mcount_key, t);
	vt_uft_task_thread(mcount_dir, vt_rdtsc(), t->tid, (int)getpid());

	/* list the new .dat in info now: a trace whose writers are all
	 * killed (the program and `vmtrace run`) stays readable */
	pthread_mutex_lock(&mcount_lock);
	t->next = mcount_threads;
	mcount_threads = t;
	info_write(-1);
	pthread_mutex_unlock(&mcount_lock);
	return 0;
fail:
	munmap(map, t->map_len);
	t->map = NULL;
	t->buf = NULL;
	return -1;
}

static void registry_remove(struct mcount_thread *t)
{
	struct mcount_thread **pp;

	pthread_mutex_lock(&mcount_lock);
	for (pp = &mcount_threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&mcount_lock);
}

/* Record exits of the unfinished frames, flush, and stop this thread. */
static void thread_finish(struct mcount_thread *t)
{
	t->in_slow = 0;
	mcount_core_unwind_all(&t->ctx);
	t->in_slow = 1;
	thread_flush(t);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->ctx.pos = t->ctx.end = NULL;
	t->dead = 1;
	__atomic_fetch_add(&mcount_skipped_total, t->ctx.skipped, __ATOMIC_RELAXED);
	__atomic_fetch_add(&mcount_lost_total, t->ctx.lost, __ATOMIC_RELAXED);
}

/* Add this process's counts to mcount.skipped / mcount.lost in DIR's
 * vmtrace.meta (at process exit; processes of one run add up). */
static void meta_add_counts(uint64_t skipped, uint64_t lost)
{
	struct vt_meta *m = vt_meta_read_dir(mcount_dir);
	uint64_t old;

	if (!m)
		return;
	if (vt_meta_get_u64(m, VT_MK_MCOUNT_SKIPPED, &old) == 0)
		skipped += old;
	if (vt_meta_get_u64(m, VT_MK_MCOUNT_LOST, &old) == 0)
		lost += old;
	vt_meta_set_u64(m, VT_MK_MCOUNT_SKIPPED, skipped);
	vt_meta_set_u64(m, VT_MK_MCOUNT_LOST, lost);
	vt_meta_write_dir(m, mcount_dir);
	vt_meta_free(m);
}

/* pthread key destructor: the thread is exiting (its frames are gone). */
static void thread_exit_cb(void *arg)
{
	struct mcount_thread *t = arg;
	int saved_errno = errno;

	if (t != &mcount_tls || t->dead || !t->buf)
		return;
	registry_remove(t);
	thread_finish(t);
	munmap(t->map, t->map_len);
	t->map = NULL;
	t->buf = NULL;
	errno = saved_errno;
}

/* ---- hot path entry points (called from mcount.S and by gcc) ------------ */

int mcount_enter(uint64_t *parent_loc, uint64_t child_ip) __attribute__((visibility("hidden")));
void mcount_slow(void) __attribute__((visibility("hidden")));
uint64_t mcount_exit(uint64_t *sp) __attribute__((visibility("hidden")));

VT_NOTRACE int mcount_enter(uint64_t *parent_loc, uint64_t child_ip)
{
	struct mcount_ctx *c = &mcount_tls.ctx;

	if (unlikely(c->pos >= c->end))
		return MCOUNT_SLOW;
	mcount_core_enter(c, parent_loc, child_ip);
	return MCOUNT_DONE;
}

/* The thread has no buffer yet (start it) or its buffer is full (flush). */
VT_NOTRACE void mcount_slow(void)
{
	struct mcount_thread *t = &mcount_tls;
	int saved_errno;

	if (t->in_slow || t->dead || mcount_state != STATE_ON)
		return;
	saved_errno = errno;
	t->in_slow = 1;
	if (!t->buf) {
		if (thread_start(t) < 0)
			t->dead = 1;
	} else {
		thread_flush(t);
	}
	t->in_slow = 0;
	errno = saved_errno;
}

VT_NOTRACE uint64_t mcount_exit(uint64_t *sp)
{
	return mcount_core_exit(&mcount_tls.ctx, sp);
}

EXPORT VT_NOTRACE void __cyg_profile_func_enter(void *fn, void *call_site)
{
	struct mcount_ctx *c = &mcount_tls.ctx;

	if (unlikely(!mcount_tls.buf)) {
		mcount_slow();
		if (!mcount_tls.buf) {
			/* keep depths balanced even before the buffer exists */
			c->cyg_depth++;
			return;
		}
	}
	mcount_core_cyg_enter(c, fn);
}

EXPORT VT_NOTRACE void __cyg_profile_func_exit(void *fn, void *call_site)
{
	struct mcount_ctx *c = &mcount_tls.ctx;

	if (unlikely(!mcount_tls.buf)) {
		if (c->cyg_depth)
			c->cyg_depth--;
		return;
	}
	mcount_core_cyg_exit(c, fn);
}

/* ---- process start and exit ------------------------------------------- */

static void read_cmdline(char *buf, size_t len)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
}

static int exe_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;	/* the first object is the executable */
}

/* Write this process's session: map, task.txt SESS line, .sym of the
 * executable (once per directory), and for a standalone run the info. */
static void session_start(void)
{
	char exe[PATH_MAX], symfile[2 * PATH_MAX + 8];
	const char *base;
	uint64_t bias = 0;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return;
	exe[n] = '\0';
	snprintf(mcount_sid, sizeof(mcount_sid), "%016llx",
		 (unsigned long long)(vt_rdtsc() ^ ((uint64_t)getpid() << MCOUNT_SID_PID_SHIFT)));
	vt_uft_write_map(mcount_dir, mcount_sid, 0);
	vt_uft_task_session(mcount_dir, vt_rdtsc(), (int)getpid(), mcount_sid, exe);
	base = strrchr(exe, '/');
	snprintf(symfile, sizeof(symfile), "%s/%s.sym", mcount_dir, base ? base + 1 : exe);
	if (access(symfile, F_OK) != 0) {
		dl_iterate_phdr(exe_bias_cb, &bias);
		vt_uft_write_syms_elf(mcount_dir, exe, bias);
	}
}

static void info_write(int exit_status)
{
	char exe[PATH_MAX], cmdline[CMDLINE_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return;
	exe[n] = '\0';
	read_cmdline(cmdline, sizeof(cmdline));
	mcount_session_write_info(mcount_dir, exe, cmdline, exit_status, mcount_max_depth, 0);
}

/* Standalone (linked in, no `vmtrace run`): make the directory and say
 * that its clock is the TSC; `vmtrace convert` needs the frequency, which
 * `vmtrace tsc` decides on the host of the run. */
static int standalone_prepare(void)
{
	struct vt_meta *m;

	if (mkdir(mcount_dir, 0755) < 0 && errno != EEXIST)
		return -1;
	m = vt_meta_new();
	if (!m)
		return -1;
	vt_meta_set(m, VT_MK_CLOCK, "tsc");
	vt_meta_set(m, VT_MK_DOMAIN, "guest");
	vt_meta_set(m, VT_MK_PRODUCER, "libvmtrace-mcount");
	vt_meta_write_dir(m, mcount_dir);
	vt_meta_free(m);
	return 0;
}

/* fork(): the child is a new task; its copy of the buffer holds records
 * the parent will flush, so it starts empty in its own .dat. */
static void atfork_child(void)
{
	struct mcount_thread *t = &mcount_tls;
	char path[PATH_MAX];

	mcount_threads = NULL;
	pthread_mutex_init(&mcount_lock, NULL);
	if (!t->buf)
		return;
	if (t->fd >= 0)
		close(t->fd);
	t->tid = (int)gettid();
	t->written = 0;
	t->ctx.pos = t->buf;
	t->fd = -1;
	if (vt_uft_dat_path(path, sizeof(path), mcount_dir, t->tid) == 0)
		t->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	t->next = NULL;
	mcount_threads = t;
	vt_uft_task_fork(mcount_dir, vt_rdtsc(), t->tid, (int)getppid());
	vt_uft_task_thread(mcount_dir, vt_rdtsc(), t->tid, t->tid);
}

__attribute__((constructor)) static void mcount_init(void)
{
	const char *dir = getenv(MCOUNT_ENV_DIR);
	const char *s;
	uint64_t v;
	int saved_errno = errno;

	if (!dir || !*dir)
		dir = MCOUNT_DEFAULT_DIR;
	if (strlen(dir) >= sizeof(mcount_dir))
		return;
	strcpy(mcount_dir, dir);
	if (vt_parse_u64(getenv(MCOUNT_ENV_DEPTH), 1, VT_UFT_MAX_DEPTH, &v) == 0)
		mcount_max_depth = (unsigned)v;
	s = getenv(MCOUNT_ENV_ENTRIES);
	mcount_entries_only = s && !strcmp(s, "1");
	if (vt_parse_u64(getenv(MCOUNT_ENV_BUFSIZE), MCOUNT_MIN_BUF_BYTES, MCOUNT_MAX_BUF_BYTES,
			 &v) == 0)
		mcount_buf_bytes = v & ~(unsigned long)(sizeof(struct vt_uft_record) - 1);
	s = getenv(MCOUNT_ENV_RUN);
	mcount_standalone = !(s && !strcmp(s, "1"));
	if (mcount_standalone && standalone_prepare() < 0)
		return;
	if (pthread_key_create(&mcount_key, thread_exit_cb) != 0)
		return;
	pthread_atfork(NULL, NULL, atfork_child);
	session_start();
	if (mcount_standalone)
		info_write(-1);
	mcount_state = STATE_ON;
	errno = saved_errno;
}

/*
 * Process exit: the calling thread records exits for its unfinished
 * frames (exit() called inside them) and flushes; threads still running
 * are flushed as they are (a record being written concurrently may be
 * missed; their unfinished frames get no exit records).
 */
__attribute__((destructor)) static void mcount_fini(void)
{
	struct mcount_thread *t;
	int saved_errno = errno;
	uint64_t skipped = 0, lost = 0;

	if (mcount_state != STATE_ON)
		return;

	pthread_mutex_lock(&mcount_lock);
	for (t = mcount_threads; t; t = t->next) {
		skipped += t->ctx.skipped;
		lost += t->ctx.lost;
		if (t == &mcount_tls || t->in_slow)
			continue;
		t->in_slow = 1;
		thread_flush(t);
	}
	pthread_mutex_unlock(&mcount_lock);
	if (mcount_tls.buf && !mcount_tls.dead) {
		thread_finish(&mcount_tls);
		/* thread_finish() added ours to the totals too */
		skipped -= mcount_tls.ctx.skipped;
		lost -= mcount_tls.ctx.lost;
	}
	mcount_state = STATE_DONE;
	meta_add_counts(skipped + __atomic_load_n(&mcount_skipped_total, __ATOMIC_RELAXED),
			lost + __atomic_load_n(&mcount_lost_total, __ATOMIC_RELAXED));
	/* libraries loaded later (dlopen) appear in a map written now */
	vt_uft_write_map(mcount_dir, mcount_sid, 0);
	if (mcount_standalone)
		info_write(-1);
	errno = saved_errno;
}
