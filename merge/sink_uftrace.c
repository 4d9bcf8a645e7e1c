/*
 * sink_uftrace.c - merge's uftrace sink: a uftrace data directory in
 * nanoseconds with host and guest threads side by side, written through
 * lib/uftrace.h (dir, info, task.txt, map, .sym; records packed with
 * vt_uft_pack).  Every distinct event name becomes a symbol of a synthetic
 * executable "vmtrace-merged"; instants become zero-length calls.  Guest N
 * task ids are N * 10000000 + tid.  Runs on the merge thread; allocates per
 * new track (a name stack of VT_UFT_MAX_DEPTH entries and a file buffer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "fileio.h"
#include "merge.h"
#include "meta.h"
#include "uftrace.h"

#define UFT_EXE		"/vmtrace-merged"	/* synthetic executable */
#define UFT_BASE	0x400000ULL	/* its load address */
#define UFT_SYM_STRIDE	16		/* bytes per synthetic symbol */
#define UFT_MACHINE_STRIDE 10000000	/* guest N tid t -> N*stride + t */
#define UFT_FILE_BUF	(64 * 1024)

struct utrack {
	FILE *fp;
	char *buf;		/* fp's buffer (setvbuf's own is BUFSIZ on glibc) */
	uint32_t *stack;	/* open slices' names */
	uint32_t depth;
	uint64_t first_ns;
};

struct usink {
	char dir[4096];
	struct utrack *tr;
	uint32_t nr_tr;
	uint8_t *used;		/* names used, by id */
	uint32_t used_cap;
	uint64_t first_ns;
	uint64_t dropped;	/* slices deeper than uftrace's limit */
	int failed;
	const struct merge_tables *tables;	/* the events' names and tracks */
};

static int out_tid(const struct merge_track *t, int tid)
{
	return (int)(t->machine * UFT_MACHINE_STRIDE + (uint32_t)tid);
}

/* the task number of track @t (a second lane of a thread is a task of its own) */
static int thread_tid(const struct merge_track *t)
{
	return out_tid(t, t->tid) + (int)(t->lane * MERGE_LANE_TID_STRIDE);
}

static void *uftrace_open(struct merge_tables *tb, const char *out, const void *opts)
{
	const struct merge_uftrace_opts *o = opts;
	struct usink *s = calloc(1, sizeof(*s));

	if (!s) {
		vt_err_set("%s: out of memory", out);
		return NULL;
	}
	if (snprintf(s->dir, sizeof(s->dir), "%s", out) >= (int)sizeof(s->dir) ||
	    vt_uft_dir_create(out, o && o->force) < 0) {
		if (strlen(out) >= sizeof(s->dir))
			vt_err_set("%s: path too long", out);
		free(s);
		return NULL;
	}
	s->tables = tb;
	return s;
}

static struct utrack *get_track(struct usink *s, uint32_t idx, uint64_t ts)
{
	if (unlikely(idx >= s->nr_tr) &&
	    merge_table_grow(&s->tr, &s->nr_tr, idx + 1, sizeof(*s->tr)) < 0) {
		vt_err_set("out of memory");
		return NULL;
	}
	struct utrack *u = &s->tr[idx];

	if (likely(u->fp))
		return u;

	const struct merge_track *t = merge_track(s->tables, idx);
	char path[4200];

	if (!u->stack)
		u->stack = malloc((VT_UFT_MAX_DEPTH + 1) * sizeof(*u->stack));
	if (!u->buf)
		u->buf = vt_io_alloc(UFT_FILE_BUF);
	if (!u->stack || !u->buf) {
		vt_err_set("out of memory");
		return NULL;
	}
	if (vt_uft_dat_path(path, sizeof(path), s->dir, thread_tid(t)) < 0)
		return NULL;
	u->fp = fopen(path, "we");
	if (!u->fp) {
		vt_err_errno("%s: cannot create", path);
		return NULL;
	}
	setvbuf(u->fp, u->buf, _IOFBF, UFT_FILE_BUF);
	u->first_ns = ts;
	if (!s->first_ns)
		s->first_ns = ts;
	return u;
}

static int mark_used(struct usink *s, uint32_t id)
{
	if (unlikely(id >= s->used_cap) &&
	    merge_table_grow(&s->used, &s->used_cap, id + 1, 1) < 0)
		return -1;
	s->used[id] = 1;
	return 0;
}

static inline int put_rec(struct usink *s, struct utrack *u, uint64_t ts, unsigned type,
			  unsigned depth, uint32_t name)
{
	struct vt_uft_record r = {
		.time = ts,
		.bits = vt_uft_pack(type, depth, UFT_BASE + (uint64_t)name * UFT_SYM_STRIDE),
	};

	if (unlikely(fwrite(&r, sizeof(r), 1, u->fp) != 1)) {
		s->failed = 1;
		return vt_err_errno("%s: write failed", s->dir);
	}
	return 0;
}

static int uftrace_event(void *sink, const struct merge_event *ev)
{
	struct usink *s = sink;
	struct utrack *u = get_track(s, ev->track, ev->ts_ns);

	if (unlikely(!u))
		return vt_err_wrap("%s: cannot add a thread: %s", s->dir, vt_err_msg());
	switch (ev->kind) {
	case MERGE_EV_BEGIN:
		if (unlikely(u->depth >= VT_UFT_MAX_DEPTH)) {
			u->depth++;
			s->dropped++;
			return 0;
		}
		if (unlikely(mark_used(s, ev->name) < 0))
			return vt_err_set("%s: out of memory", s->dir);
		u->stack[u->depth] = ev->name;
		if (put_rec(s, u, ev->ts_ns, VT_UFT_ENTRY, u->depth, ev->name) < 0)
			return -1;
		u->depth++;
		return 0;
	case MERGE_EV_END:
		if (unlikely(!u->depth))
			return 0;
		u->depth--;
		if (unlikely(u->depth >= VT_UFT_MAX_DEPTH))
			return 0;
		return put_rec(s, u, ev->ts_ns, VT_UFT_EXIT, u->depth, u->stack[u->depth]);
	default:
		if (unlikely(u->depth >= VT_UFT_MAX_DEPTH))
			return 0;
		if (unlikely(mark_used(s, ev->name) < 0))
			return vt_err_set("%s: out of memory", s->dir);
		if (put_rec(s, u, ev->ts_ns, VT_UFT_ENTRY, u->depth, ev->name) < 0)
			return -1;
		return put_rec(s, u, ev->ts_ns, VT_UFT_EXIT, u->depth, ev->name);
	}
}

/* Per process: a session (task.txt SESS + its map); then TASK lines. */
static int write_tasks(struct usink *s, int **tids_out, int *nr_out)
{
	uint32_t n = merge_track_count(s->tables), nr_strs = merge_str_count(s->tables);
	int *tids = calloc(n + 1, sizeof(*tids)), nr = 0;
	int64_t *pids = calloc(n + 1, sizeof(*pids));
	int nr_pids = 0;
	char sid[VT_UFT_SID_LEN + 1];

	if (!tids || !pids) {
		free(tids);
		free(pids);
		return vt_err_set("%s: out of memory", s->dir);
	}
	for (uint32_t i = 0; i < n && i < s->nr_tr; i++) {
		const struct merge_track *t = merge_track(s->tables, i);
		int pid = out_tid(t, t->pid), j;

		if (!s->tr[i].fp)
			continue;
		for (j = 0; j < nr_pids && pids[j] != pid; j++)
			;
		if (j == nr_pids) {
			pids[nr_pids++] = pid;
			vt_uft_sid_make(sid, pid, s->first_ns);
			if (vt_uft_task_session(s->dir, s->first_ns, pid, sid, UFT_EXE) < 0 ||
			    vt_uft_write_map_fixed(s->dir, sid, UFT_BASE,
						   UFT_BASE + (uint64_t)(nr_strs + 1) *
						   UFT_SYM_STRIDE, UFT_EXE) < 0)
				goto fail;
		}
		if (vt_uft_task_thread(s->dir, s->tr[i].first_ns, thread_tid(t), pid) < 0)
			goto fail;
		tids[nr++] = thread_tid(t);
	}
	free(pids);
	*tids_out = tids;
	*nr_out = nr;
	return 0;
fail:
	free(pids);
	free(tids);
	return -1;
}

static int write_syms(struct usink *s)
{
	uint32_t nr = 0;
	struct vt_uft_sym *syms = calloc(s->used_cap + 1, sizeof(*syms));

	if (!syms)
		return vt_err_set("%s: out of memory", s->dir);
	for (uint32_t id = 0; id < s->used_cap; id++) {
		if (!s->used[id])
			continue;
		syms[nr++] = (struct vt_uft_sym){
			.addr = UFT_BASE + (uint64_t)id * UFT_SYM_STRIDE,
			.size = UFT_SYM_STRIDE, .type = 'T',
			.name = id ? merge_str(s->tables, id) : "(unnamed)",
		};
	}
	int ret = vt_uft_write_syms(s->dir, UFT_EXE, syms, nr);

	free(syms);
	return ret;
}

static int uftrace_close(void *sink)
{
	struct usink *s = sink;
	int ret = s->failed ? -1 : 0, *tids = NULL, nr = 0;

	for (uint32_t i = 0; i < s->nr_tr; i++) {
		struct utrack *u = &s->tr[i];

		if (u->fp && fclose(u->fp) != 0 && !ret)
			ret = vt_err_errno("%s: write failed", s->dir);
	}
	if (!ret && s->dropped)
		vt_warn("%s: %llu slices nested deeper than uftrace's %d levels left out",
			s->dir, (unsigned long long)s->dropped, VT_UFT_MAX_DEPTH);
	if (!ret && !s->first_ns)
		ret = vt_err_set("%s: no events to write", s->dir);
	if (!ret && write_tasks(s, &tids, &nr) < 0)
		ret = -1;
	if (!ret && write_syms(s) < 0)
		ret = -1;
	if (!ret) {
		struct vt_uft_info info = {
			.exename = UFT_EXE, .cmdline = "vmtrace merge", .exit_status = 0,
			.nr_tids = nr, .tids = tids, .max_stack = VT_UFT_MAX_DEPTH,
		};

		if (vt_uft_write_info(s->dir, &info) < 0)
			ret = -1;
	}
	if (!ret) {
		struct vt_meta *m = vt_meta_new();

		if (!m)
			ret = vt_err_set("%s: out of memory", s->dir);
		else if (vt_meta_set(m, VT_MK_CLOCK, "ns") < 0 ||
			 vt_meta_set(m, VT_MK_DOMAIN, "merged") < 0 ||
			 vt_meta_write_dir(m, s->dir) < 0)
			ret = -1;
		vt_meta_free(m);
	}
	for (uint32_t i = 0; i < s->nr_tr; i++) {
		free(s->tr[i].stack);
		free(s->tr[i].buf);
	}
	free(tids);
	free(s->tr);
	free(s->used);
	free(s);
	return ret;
}

const struct merge_sink_ops merge_sink_uftrace = {
	.name = "uftrace",
	.dir = 1,
	.open = uftrace_open,
	.event = uftrace_event,
	.close = uftrace_close,
};

