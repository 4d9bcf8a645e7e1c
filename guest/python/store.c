/*
 * store.c - the guest Python tracer's storage: per thread a <TID>.dat in a
 * uftrace data directory, preallocated in chunks (fallocate, so a full disk
 * is an error here, never a SIGBUS on a store), filled by pwrite() from the
 * thread's reused memory-mapped stage (lib/pystage.h); plus the
 * directory's info, task.txt, sid map, .sym and vmtrace.meta.
 *
 * Runs in the traced program's threads.  The per-event path is in vtpy.h;
 * everything here is slow path (a new thread, a full chunk, start/stop,
 * fork) and may allocate and block.  Session state changes happen with the
 * GIL held; the store list is also guarded by a mutex because a thread's
 * exit destructor runs without the GIL.
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
#include "vtpy.h"
#include "tsc.h"

/* Bytes of a .dat preallocated at a time; the smallest piece tried when
 * the disk is nearly full. */
#define CHUNK_BYTES	(4UL << 20)
#define CHUNK_MIN_BYTES	(64UL << 10)
#define REC_BYTES	sizeof(struct vt_uft_record)
/* Threads recorded in the info file. */
#define MAX_TIDS	4096

struct vtpy_store vtpy_store_none = { .fd = -1 };
__thread struct vtpy_store *vtpy_tls VTPY_TLS_MODEL = &vtpy_store_none;
unsigned vtpy_max_depth = VT_UFT_MAX_DEPTH + 1;
int vtpy_clock_ns;

static struct {
	char dir[PATH_MAX];
	char exename[PATH_MAX];
	char *cmdline;
	char sid[VT_UFT_SID_LEN + 1];
	unsigned sess;			/* current session number, 0 = off */
	unsigned next_sess;
	int lines;
	int pid;
	int sym_fd;
	int gc_fd;
	int err;
	uint64_t start_ns;
	uint64_t start_tsc;		/* vt_rdtsc() beside start_ns */
	struct vt_tsc_freq freq;	/* hz 0: none known at the start */
	uint64_t lost;			/* of stores already gone */
	int tids[MAX_TIDS];
	int nr_tids;
} g;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vtpy_store *g_stores;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static uint64_t wall_ns(void)
{
	return vt_mono_ns();
}

static void store_fail(struct vtpy_store *s, int err)
{
	s->err = err;
	if (!g.err)
		g.err = err;
}

/* Preallocate the .dat so that @bytes more, plus one record kept for a
 * LOST record, fit after dat_off: 4 MiB at a time, smaller pieces (down to
 * CHUNK_MIN_BYTES) when the disk has less left, so that what fits is kept.
 * 0, or -1 (s->err set; alloc_end may have grown anyway). */
static int store_reserve(struct vtpy_store *s, uint64_t bytes)
{
	uint64_t len = CHUNK_BYTES;

	while (s->dat_off + bytes + REC_BYTES > s->alloc_end) {
		int rc;

		do
			rc = posix_fallocate(s->fd, (off_t)s->alloc_end, (off_t)len);
		while (rc == EINTR);
		if (rc == ENOSPC && len > CHUNK_MIN_BYTES) {
			len /= 2;
			continue;
		}
		if (rc) {
			s->err = rc;
			return -1;
		}
		s->alloc_end += len;
	}
	return 0;
}

/* Copy @n records into the .dat at dat_off (preallocated); -1 on error. */
static int store_copy(struct vtpy_store *s, const struct vt_uft_record *r, size_t n)
{
	const char *p = (const char *)r;
	size_t left = n * REC_BYTES;

	while (left) {
		ssize_t w = pwrite(s->fd, p, left, (off_t)s->dat_off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			store_fail(s, w < 0 ? errno : ENOSPC);
			return -1;
		}
		/* a partial copy is whole records (page-sized steps) */
		s->dat_off += (uint64_t)w / REC_BYTES * REC_BYTES;
		p += w;
		left -= (size_t)w;
	}
	return 0;
}

/* The LOST record for the records counted since space ran out, into the
 * slot store_reserve() kept. */
static void store_put_lost(struct vtpy_store *s)
{
	struct vt_uft_record r = {
		.time = vtpy_now(),
		.bits = vt_uft_pack(VT_UFT_LOST, 0, s->lost),
	};

	if (s->dat_off + REC_BYTES > s->alloc_end || store_copy(s, &r, 1) < 0)
		return;
	s->lost_total += s->lost;
	g.lost += s->lost;
	s->lost = 0;
	s->full = 0;
}

/*
 * Copy the stage into the .dat and empty it.  What does not fit (disk
 * full) is counted; a LOST record goes in first when space comes back.
 * Crash order: the copy, then the stage's records are invalidated, then
 * the header moves on, so a reader of a killed writer's files finds every
 * record once (lib/pystage.h): stage records below the .dat's end are
 * skipped, so the invalidation may happen in any order.
 */
static void store_flush(struct vtpy_store *s)
{
	size_t n = (size_t)(s->pos - s->base), fit;
	uint64_t room;

	if (!n)
		return;
	if (store_reserve(s, (n + (s->full != 0)) * REC_BYTES) < 0)
		store_fail(s, s->err);
	/* preallocated bytes after dat_off, less the slot kept for LOST */
	room = s->alloc_end > s->dat_off + REC_BYTES ? s->alloc_end - s->dat_off - REC_BYTES : 0;
	if (s->full && room >= REC_BYTES) {
		/* space again: first say what was lost */
		if (s->lost) {
			store_put_lost(s);
			/* the stage's records now belong after the LOST record */
			s->hdr->dat_off = s->dat_off;
		} else
			s->full = 0;
		room -= REC_BYTES;
	}
	fit = s->full ? 0 : (size_t)(room / REC_BYTES < n ? room / REC_BYTES : n);
	if (fit < n)
		s->full = 1;
	if (fit && store_copy(s, s->base, fit) < 0) {
		s->full = 1;
		fit = 0;
	}
	s->lost += n - fit;
	/* the magic words, then the header: a reader stops at the first
	 * record without, and skips those below the .dat's end */
	vt_pystage_clear(s->hdr, s->base, n, s->dat_off);
	s->pos = s->base;
}

static int store_stage_path(char *buf, size_t len, int tid)
{
	char dat[PATH_MAX];

	if (vt_uft_dat_path(dat, sizeof(dat), g.dir, tid) < 0)
		return -1;
	return vt_pystage_path(buf, len, dat);
}

/* Unmap the stage; with @cut (the thread's file in the current session)
 * copy it into the .dat first, cut the .dat after its last record and
 * remove the stage file. */
static void store_close(struct vtpy_store *s, int cut)
{
	char path[PATH_MAX];

	if (s->hdr) {
		if (cut) {
			store_flush(s);
			if (s->full && s->lost)
				store_put_lost(s);
			if (ftruncate(s->fd, (off_t)s->dat_off) < 0 && !g.err)
				g.err = errno;
			if (store_stage_path(path, sizeof(path), s->tid) == 0)
				unlink(path);
		}
		munmap(s->hdr, VT_PYSTAGE_BYTES);
	}
	if (s->fd >= 0)
		close(s->fd);
	s->lost_total += s->lost;
	g.lost += s->lost;
	s->lost = 0;
	s->full = 0;
	s->fd = -1;
	s->hdr = NULL;
	s->base = s->pos = s->end = s->fast_end = NULL;
	s->sess = 0;
	free(s->line_addr);
	s->line_addr = NULL;
	s->depth = 0;
}

/* Create and map the thread's stage file (preallocated: no SIGBUS). */
static int store_stage_open(struct vtpy_store *s)
{
	char path[PATH_MAX];
	void *p;
	int fd, rc;

	if (store_stage_path(path, sizeof(path), s->tid) < 0) {
		s->err = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		s->err = errno;
		return -1;
	}
	do
		rc = posix_fallocate(fd, 0, VT_PYSTAGE_BYTES);
	while (rc == EINTR);
	p = rc ? MAP_FAILED : mmap(NULL, VT_PYSTAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		s->err = rc ? rc : errno;
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
#ifdef MADV_POPULATE_WRITE
	/* one call instead of a write fault per page (costly when virtualised) */
	madvise(p, VT_PYSTAGE_BYTES, MADV_POPULATE_WRITE);
#endif
	s->hdr = p;
	vt_pystage_init(s->hdr, s->dat_off);
	s->base = s->pos = (struct vt_uft_record *)(s->hdr + 1);
	s->end = s->base + VT_PYSTAGE_RECS;
	s->fast_end = g.lines || vtpy_clock_ns || vtpy_max_depth <= VT_UFT_MAX_DEPTH ? NULL : s->end;
	return 0;
}

static void note_tid(int tid)
{
	for (int i = 0; i < g.nr_tids; i++)
		if (g.tids[i] == tid)
			return;
	if (g.nr_tids < MAX_TIDS)
		g.tids[g.nr_tids++] = tid;
}

static int write_info(int exit_status)
{
	struct vt_uft_info info = {
		.exename = g.exename,
		.cmdline = g.cmdline ? g.cmdline : g.exename,
		.exit_status = exit_status,
		.nr_tids = g.nr_tids,
		.tids = g.tids,
		.max_stack = (uint16_t)(vtpy_max_depth > VT_UFT_MAX_DEPTH ?
					VT_UFT_MAX_DEPTH + 1 : vtpy_max_depth),
		.elapsed_ns = exit_status == -1 ? 0 : wall_ns() - g.start_ns,
	};

	return vt_uft_write_info(g.dir, &info);
}

/* Open (or reopen after a stop/start or a fork) the thread's file. */
static struct vtpy_store *store_open(struct vtpy_store *s)
{
	char path[PATH_MAX];
	struct stat st;

	if (vt_uft_dat_path(path, sizeof(path), g.dir, s->tid) < 0) {
		s->err = ENAMETOOLONG;
		return NULL;
	}
	s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->fd < 0 || fstat(s->fd, &st) < 0)
		goto fail;
	/* a tid reused within the session appends after the earlier thread */
	s->dat_off = (uint64_t)st.st_size / REC_BYTES * REC_BYTES;
	s->alloc_end = s->dat_off;
	s->full = 0;
	if (store_stage_open(s) < 0)
		goto fail;
	/* the first chunk now: a full disk shows at once */
	if (store_reserve(s, 0) < 0) {
		store_fail(s, s->err);
		s->full = 1;
	}
	if (g.lines && !s->line_addr)
		s->line_addr = calloc(VTPY_LINE_DEPTH, sizeof(uint64_t));
	s->sess = g.sess;
	s->depth = 0;
	if (st.st_size == 0) {
		vt_uft_task_thread(g.dir, vtpy_now(), s->tid, g.pid);
		note_tid(s->tid);
		write_info(-1);
	}
	return s;
fail:
	if (!s->err)
		s->err = errno;
	if (!g.err)
		g.err = s->err;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	return NULL;
}

static void store_destroy(void *arg)
{
	struct vtpy_store *s = arg, **pp;

	pthread_mutex_lock(&g_lock);
	if (s->sess && s->sess == g.sess)
		store_close(s, 1);
	else if (s->sess)
		store_close(s, 0);
	for (pp = &g_stores; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&g_lock);
	if (vtpy_tls == s)
		vtpy_tls = &vtpy_store_none;
	free(s->line_addr);
	free(s);
}

static void key_init(void)
{
	pthread_key_create(&g_key, store_destroy);
}

struct vtpy_store *vtpy_store_get(void)
{
	struct vtpy_store *s = vtpy_tls;

	if (!g.sess)
		return NULL;
	if (s == &vtpy_store_none) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->fd = -1;
		s->tid = (int)syscall(SYS_gettid);
		pthread_once(&g_key_once, key_init);
		pthread_setspecific(g_key, s);
		pthread_mutex_lock(&g_lock);
		s->next = g_stores;
		g_stores = s;
		pthread_mutex_unlock(&g_lock);
		vtpy_tls = s;
	}
	if (s->sess != g.sess) {
		if (s->sess)
			store_close(s, 0);
		if (!store_open(s)) {
			/* remember the failure so every event does not retry */
			s->sess = g.sess;
			s->base = s->pos = s->end = s->fast_end = NULL;
			return s;
		}
	}
	return s;
}

struct vt_uft_record *vtpy_store_grow(struct vtpy_store *s)
{
	if (unlikely(!s->base)) {
		/* no stage for this thread: nothing can be written */
		s->lost++;
		return NULL;
	}
	store_flush(s);
	return s->pos;
}

long vtpy_dat_finish(const char *path)
{
	return vt_pystage_fold(path);
}

int vtpy_dir_finish_ns(const char *dir)
{
	return vt_uft_finish_ns(dir, 0);
}

void vtpy_line(uint64_t addr)
{
	struct vtpy_store *s = vtpy_cur();
	unsigned d;

	if (unlikely(!s || !s->line_addr || s->depth == 0 || s->depth >= VTPY_LINE_DEPTH))
		return;
	d = s->depth - 1;
	if (s->line_addr[d]) {
		if (d < vtpy_max_depth)
			vtpy_put(s, VT_UFT_EXIT, d, s->line_addr[d]);
		s->line_addr[d] = 0;
		s->depth = d;
	}
	d = s->depth++;
	s->line_addr[d] = addr;
	if (d < vtpy_max_depth)
		vtpy_put(s, VT_UFT_ENTRY, d, addr);
}

/* Extra metadata from ext.c (python version, backend ...). */
extern void vtpy_meta_extra(struct vt_meta *m);

static int session_files(void)
{
	char path[PATH_MAX];
	struct vt_meta *m;
	int rc;

	g.pid = getpid();
	vt_uft_sid_make(g.sid, g.pid, vtpy_now());
	if (vt_uft_task_session(g.dir, vtpy_now(), g.pid, g.sid, g.exename) < 0 ||
	    vt_uft_write_map_fixed(g.dir, g.sid, VTPY_ADDR_BASE, VTPY_ADDR_BASE + VTPY_ADDR_SPAN,
				   VTPY_MAP_PATH) < 0)
		return -1;
	if (strlen(g.dir) + sizeof(VTPY_SYM_FILE) + 1 > sizeof(path))
		return vt_err_set("%s: path too long", g.dir);
	snprintf(path, sizeof(path), "%.*s/%s", (int)(sizeof(path) - sizeof(VTPY_SYM_FILE) - 1),
		 g.dir, VTPY_SYM_FILE);
	g.sym_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0644);
	if (g.sym_fd < 0)
		return vt_err_errno("%s", path);
	g.gc_fd = -1;
	g.nr_tids = 0;
	if (write_info(-1) < 0)
		return -1;
	m = vt_meta_new();
	if (!m)
		return vt_err_set("%s: out of memory", g.dir);
	vt_meta_set(m, VT_MK_PRODUCER, "python");
	/* a guest tracer by design; `vmtrace merge DIR@host` overrides */
	vt_meta_set(m, VT_MK_DOMAIN, "guest");
	vt_meta_set(m, VT_MK_CLOCK, "%s", vtpy_clock_ns ? "ns" : "tsc");
	vt_meta_set(m, VT_MK_PYTHON_PID, "%d", g.pid);
	vt_meta_set(m, VT_MK_PYTHON_SID, "%s", g.sid);
	if (g.freq.hz)	/* else decided at the end, from the run itself */
		vt_tsc_meta_set(m, &g.freq);
	vtpy_meta_extra(m);
	rc = vt_meta_write_dir(m, g.dir);
	vt_meta_free(m);
	return rc;
}

int vtpy_session_open(const struct vtpy_session *cfg)
{
	if (g.sess)
		return vt_err_set("tracing is already on (into %s)", g.dir);
	if (strlen(cfg->dir) >= sizeof(g.dir) || strlen(cfg->exename) >= sizeof(g.exename))
		return vt_err_set("%s: path too long", cfg->dir);
	strcpy(g.dir, cfg->dir);
	strcpy(g.exename, cfg->exename);
	free(g.cmdline);
	g.cmdline = cfg->cmdline ? strdup(cfg->cmdline) : NULL;
	g.lines = cfg->lines;
	g.err = 0;
	g.lost = 0;
	g.start_ns = wall_ns();
	g.start_tsc = vt_rdtsc();
	/* the TSC's frequency, for uftrace's ns copies at the end: quick
	 * methods only (no calibration, no child process) */
	if (!vtpy_clock_ns && vt_tsc_freq_opts(&g.freq, VT_TSC_NO_CALIBRATE) < 0)
		g.freq.hz = 0;
	if (vt_uft_dir_create(g.dir, 1) < 0)
		return -1;
	if (session_files() < 0)
		return -1;
	g.sess = ++g.next_sess;
	return 0;
}

uint64_t vtpy_session_close(int exit_status)
{
	struct vtpy_store *s;
	struct vt_meta *m;

	if (!g.sess)
		return 0;
	pthread_mutex_lock(&g_lock);
	for (s = g_stores; s; s = s->next)
		if (s->sess == g.sess)
			store_close(s, 1);
	pthread_mutex_unlock(&g_lock);
	g.sess = 0;
	write_info(exit_status);
	/* keep what session_files() wrote, add the outcome */
	m = vt_meta_read_dir(g.dir);
	if (m) {
		vt_meta_set(m, VT_MK_PYTHON_LOST, "%llu", (unsigned long long)g.lost);
		if (!vtpy_clock_ns && !g.freq.hz &&
		    vt_tsc_freq_span(&g.freq, g.start_tsc, g.start_ns, vt_rdtsc(), wall_ns()) == 0)
			vt_tsc_meta_set(m, &g.freq);
		vt_meta_write_dir(m, g.dir);
		vt_meta_free(m);
	}
	/* uftrace reads ns: the .dat files become ns copies, the raw
	 * stamps stay beside (lib/uftrace.h vt_uft_finish_ns) */
	if (!vtpy_clock_ns && vt_uft_finish_ns(g.dir, 0) < 0 && !g.err)
		g.err = EIO;
	if (g.sym_fd >= 0)
		close(g.sym_fd);
	if (g.gc_fd >= 0)
		close(g.gc_fd);
	g.sym_fd = g.gc_fd = -1;
	return g.lost;
}

int vtpy_session_active(void)
{
	return g.sess != 0;
}

const char *vtpy_session_dir(void)
{
	return g.dir;
}

int vtpy_session_errno(void)
{
	return g.err;
}

int vtpy_session_sym(uint64_t addr, const char *name)
{
	if (g.sym_fd < 0)
		return 0;
	/* uftrace looks symbols up relative to the mapping start */
	return vt_uft_sym_append(g.sym_fd, addr - VTPY_ADDR_BASE, VTPY_SYM_SLOT, 'T', name);
}

void vtpy_session_gc(int gen, long collected, long uncollectable)
{
	char buf[160];
	int n;

	if (!g.sess)
		return;
	if (g.gc_fd < 0) {
		snprintf(buf, sizeof(buf), "%.100s/%s", g.dir, VTPY_GC_FILE);
		if (strlen(g.dir) > 100)
			return;
		g.gc_fd = open(buf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (g.gc_fd < 0)
			return;
	}
	n = snprintf(buf, sizeof(buf), "%llu %ld %d %ld %ld\n", (unsigned long long)vtpy_now(),
		     syscall(SYS_gettid), gen, collected, uncollectable);
	if (write(g.gc_fd, buf, (size_t)n) < 0 && !g.err)
		g.err = errno;
}

int vtpy_session_fork_child(void)
{
	struct vtpy_store *s;
	char dir[PATH_MAX];
	int ppid = g.pid;

	if (!g.sess)
		return 0;
	/* the parent's files stay the parent's: unmap, never cut */
	for (s = g_stores; s; s = s->next)
		if (s->sess)
			store_close(s, 0);
	if (g.sym_fd >= 0)
		close(g.sym_fd);
	if (g.gc_fd >= 0)
		close(g.gc_fd);
	g.sym_fd = g.gc_fd = -1;
	g.sess = 0;
	if (snprintf(dir, sizeof(dir), "%s/fork-%d", g.dir, (int)getpid()) >= (int)sizeof(dir))
		return vt_err_set("%s: path too long", g.dir);
	vt_uft_task_fork(g.dir, vtpy_now(), getpid(), ppid);
	strcpy(g.dir, dir);
	g.lost = 0;
	if (vt_uft_dir_create(g.dir, 1) < 0 || session_files() < 0)
		return -1;
	g.sess = ++g.next_sess;
	return 0;
}
