/*
 * store.c - the guest Python tracer's storage: one memory-mapped <TID>.dat
 * per thread in a uftrace data directory, grown in preallocated chunks
 * (fallocate, so a full disk is an error here, never a SIGBUS on a store),
 * plus the directory's info, task.txt, sid map, .sym and vmtrace.meta.
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

/* Bytes mapped and preallocated at a time per thread. */
#define CHUNK_BYTES	(4UL << 20)
#define CHUNK_RECS	(CHUNK_BYTES / sizeof(struct vt_uft_record))
/* While out of space, try to allocate again after this many lost records. */
#define RETRY_MASK	4095
/* Threads recorded in the info file. */
#define MAX_TIDS	4096

__thread struct vtpy_store *vtpy_tls VTPY_TLS_MODEL;
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
	uint64_t lost;			/* of stores already gone */
	int tids[MAX_TIDS];
	int nr_tids;
} g;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vtpy_store *g_stores;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

uint64_t vtpy_clock_ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	return vtpy_clock_ns_now();
}

/* Unmap the window and cut the file after its last record. */
static void store_close(struct vtpy_store *s, int cut)
{
	if (s->base) {
		if (s->full && s->lost && cut) {
			/* the reserved last slot of the chunk says what was lost */
			struct vt_uft_record *r = s->pos;

			r->time = vtpy_now();
			r->bits = vt_uft_pack(VT_UFT_LOST, 0, s->lost);
			s->pos = r + 1;
		}
		if (cut && ftruncate(s->fd, (off_t)(s->map_off +
				     (uint64_t)(s->pos - s->base) * sizeof(*s->pos))) < 0 && !g.err)
			g.err = errno;
		munmap(s->base, CHUNK_BYTES);
	}
	if (s->fd >= 0)
		close(s->fd);
	s->lost_total += s->lost;
	g.lost += s->lost;
	s->lost = 0;
	s->full = 0;
	s->fd = -1;
	s->base = s->pos = s->end = NULL;
	s->sess = 0;
	free(s->line_addr);
	s->line_addr = NULL;
	s->depth = 0;
}

/* Map the chunk at file offset @off (already allocated). */
static int store_map(struct vtpy_store *s, uint64_t off)
{
	void *p = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, (off_t)off);

	if (p == MAP_FAILED) {
		s->err = errno;
		s->base = s->pos = s->end = NULL;
		return -1;
	}
#ifdef MADV_POPULATE_WRITE
	/* one call instead of a write fault per page (costly when virtualised) */
	madvise(p, CHUNK_BYTES, MADV_POPULATE_WRITE);
#endif
	s->base = p;
	s->map_off = off;
	s->pos = s->base;
	/* the last slot stays free for a LOST record */
	s->end = s->base + CHUNK_RECS - 1;
	return 0;
}

static int store_alloc(struct vtpy_store *s, uint64_t off)
{
	int rc;

	do
		rc = posix_fallocate(s->fd, (off_t)off, CHUNK_BYTES);
	while (rc == EINTR);
	if (rc) {
		s->err = rc;
		return -1;
	}
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
	uint64_t size, off;

	if (vt_uft_dat_path(path, sizeof(path), g.dir, s->tid) < 0) {
		s->err = ENAMETOOLONG;
		return NULL;
	}
	s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->fd < 0 || fstat(s->fd, &st) < 0)
		goto fail;
	/* a tid reused within the session appends after the earlier thread */
	size = (uint64_t)st.st_size / sizeof(struct vt_uft_record) * sizeof(struct vt_uft_record);
	off = size & ~(uint64_t)(CHUNK_BYTES - 1);
	if (store_alloc(s, off) < 0 || store_map(s, off) < 0)
		goto fail;
	s->pos = s->base + (size - off) / sizeof(struct vt_uft_record);
	if (g.lines && !s->line_addr)
		s->line_addr = calloc(VTPY_LINE_DEPTH, sizeof(uint64_t));
	s->sess = g.sess;
	s->depth = 0;
	if (size == 0) {
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
		vtpy_tls = NULL;
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
	if (!s) {
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
			s->base = s->pos = s->end = NULL;
			return s;
		}
	}
	return s;
}

struct vt_uft_record *vtpy_store_grow(struct vtpy_store *s)
{
	struct vt_uft_record *chunk_end;

	if (unlikely(!s->base)) {
		/* no file for this thread: nothing can be written */
		s->lost++;
		return NULL;
	}
	chunk_end = s->base + CHUNK_RECS;
	if (s->pos == chunk_end) {
		/* the next chunk was allocated when this one filled */
		uint64_t off = s->map_off + CHUNK_BYTES;

		munmap(s->base, CHUNK_BYTES);
		s->base = NULL;
		if (store_map(s, off) < 0) {
			s->lost++;
			return NULL;
		}
		return s->pos;
	}
	/* pos is the reserved last slot: allocate the next chunk first */
	if (s->full && (s->lost & RETRY_MASK) != RETRY_MASK) {
		s->lost++;
		return NULL;
	}
	if (store_alloc(s, s->map_off + CHUNK_BYTES) < 0) {
		if (!s->full && !g.err)
			g.err = s->err;
		s->full = 1;
		s->lost++;
		return NULL;
	}
	if (s->full) {
		s->pos->time = vtpy_now();
		s->pos->bits = vt_uft_pack(VT_UFT_LOST, 0, s->lost);
		s->pos++;
		s->lost_total += s->lost;
		g.lost += s->lost;
		s->lost = 0;
		s->full = 0;
		return vtpy_store_grow(s);
	}
	s->end = chunk_end;
	return s->pos;
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
	vt_meta_set(m, "producer", "python");
	/* a guest tracer by design; `vmtrace merge DIR@host` overrides */
	vt_meta_set(m, "domain", "guest");
	vt_meta_set(m, "clock", "%s", vtpy_clock_ns ? "ns" : "tsc");
	vt_meta_set(m, "python.pid", "%d", g.pid);
	vt_meta_set(m, "python.sid", "%s", g.sid);
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
		vt_meta_set(m, "python.lost", "%llu", (unsigned long long)g.lost);
		vt_meta_write_dir(m, g.dir);
		vt_meta_free(m);
	}
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
