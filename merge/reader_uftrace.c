/*
 * reader_uftrace.c - merge's reader of uftrace data directories (vmtrace's
 * guest/host runtimes or uftrace record): one stream per task, read through
 * lib/uftrace.h (the only uftrace parser).  Entries/exits become slice
 * begin/end on the task's thread track, named from the .sym files, handed
 * to the sorter in batches.  Runs on the merge thread; allocates at open
 * only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "uftrace.h"
#include "merge.h"

#define NAME_CACHE_SIZE	4096	/* direct-mapped addr -> name id cache */

struct uft_src {
	struct vt_uft_reader *r;
	struct merge_tables *tables;	/* its source's */
	int refs;
	uint64_t cache_addr[NAME_CACHE_SIZE];
	uint32_t cache_id[NAME_CACHE_SIZE];
	uint32_t lost_name, event_name, count_key, addr_key;
};

struct uft_stream {
	struct merge_stream base;
	struct uft_src *us;
	struct vt_uft_stream *st;
	struct merge_source *src;
	uint32_t track;
	uint32_t depth;
	uint64_t last_ts;
	int done;
};

/* The name id of function address @addr: a cache miss (first call of a
 * function, or a collision) looks the symbol up and interns it. */
static __attribute__((noinline)) uint32_t sym_id_miss(struct uft_src *us, uint64_t addr,
						      uint32_t h)
{
	const char *n = vt_uft_sym_name(us->r, addr);	/* "" for none */
	uint32_t id;

	if (*n) {
		id = merge_str_intern0(us->tables, n);
	} else {
		char buf[32];

		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		id = merge_str_intern0(us->tables, buf);
	}
	us->cache_addr[h] = addr;
	us->cache_id[h] = id;
	return id;
}

static inline uint32_t sym_id(struct uft_src *us, uint64_t addr)
{
	uint32_t h = (uint32_t)((addr >> 2) ^ (addr >> 14)) & (NAME_CACHE_SIZE - 1);

	if (likely(us->cache_addr[h] == addr && us->cache_id[h]))
		return us->cache_id[h];
	return sym_id_miss(us, addr, h);
}

/* The common records: a call's entry (a slice begins) and the exit of a
 * call seen entering (an end closes the innermost slice: no name needed),
 * of the stream of @us on @track whose open calls are *@depth (a local of
 * the caller's: the batch loop keeps it in a register).  1 with *@ev
 * filled, 0 for any other record; the caller keeps the stream's last_ts. */
static inline int uft_call(struct uft_src *us, uint32_t track, uint32_t *depth,
			   struct merge_event *ev, const struct vt_uft_record *rec)
{
	unsigned type = vt_uft_type(rec->bits);

	if (likely(type == VT_UFT_ENTRY)) {
		ev->kind = MERGE_EV_BEGIN;
		ev->name = sym_id(us, vt_uft_addr(rec->bits));
		++*depth;
	} else if (likely(type == VT_UFT_EXIT && *depth)) {
		ev->kind = MERGE_EV_END;
		ev->name = MERGE_NO_STR;
		--*depth;
	} else {
		return 0;
	}
	ev->ts_raw = rec->time;
	ev->cpu = -1;
	ev->track = track;
	ev->nr_args = 0;
	return 1;
}

/* Any other record: 1 with *@ev filled (an instant: records lost, an
 * event), 0 for the exit of a call entered before recording (skipped). */
static __attribute__((noinline)) int uft_other(struct uft_stream *s, struct merge_event *ev,
					       const struct vt_uft_record *rec)
{
	ev->ts_raw = rec->time;
	ev->cpu = -1;
	ev->track = s->track;
	s->last_ts = rec->time;
	if (vt_uft_type(rec->bits) == VT_UFT_EXIT)
		return 0;	/* exit of a call entered before recording */
	/* a lost record (its count) or an event (its address) */
	int lost = vt_uft_type(rec->bits) == VT_UFT_LOST;

	ev->kind = MERGE_EV_INSTANT;
	ev->name = lost ? s->us->lost_name : s->us->event_name;
	ev->nr_args = 1;
	ev->args[0] = (struct merge_arg){ .key = lost ? s->us->count_key : s->us->addr_key,
		.type = MERGE_ARG_U64, .v.u = vt_uft_addr(rec->bits) };
	return 1;
}

/* A Python tracer writer that was killed (or still runs) has its newest
 * records in <TID>.stage: the lib reader read them after the .dat's (a
 * stage is looked for only beside a .dat: vt_pystage_path). */
static void uft_note_staged(const struct uft_stream *s)
{
	size_t n = vt_uft_stream_staged(s->st);
	const char *p = vt_uft_stream_path(s->st);

	if (!n)
		return;
	vt_note("%.*s.stage: %zu records not yet folded, read too ('vmtrace finalize' folds them)",
		(int)(strlen(p) - strlen(".dat")), p, n);
}

/* The stream's next event, a record at a time through
 * vt_uft_stream_next() (what vt_uft_stream_run() does not give: the end,
 * corruption, records with data, staged records); after the end, the
 * ends of the slices left open.  1 with *@ev filled, 0 at the end. */
static __attribute__((noinline)) int uft_next_slow(struct uft_stream *s, struct merge_event *ev)
{
	struct vt_uft_record rec;
	int r;

	for (;;) {
		if (unlikely(s->done)) {
			/* close what the (possibly truncated) stream left open */
			if (!s->depth)
				return 0;
			s->depth--;
			ev->ts_raw = s->last_ts;
			ev->cpu = -1;
			ev->track = s->track;
			ev->kind = MERGE_EV_END;
			ev->name = MERGE_NO_STR;
			ev->nr_args = 0;
			return 1;
		}
		r = vt_uft_stream_next(s->st, &rec);
		if (unlikely(r <= 0)) {
			if (r < 0 && vt_err_code() == ENOMEM) {
				s->src->oom = 1;	/* not the input's fault: merge fails */
			} else if (r < 0) {
				vt_warn("%s", vt_err_msg());
				s->src->partial = 1;
			} else if (vt_uft_stream_truncated(s->st)) {
				vt_warn("%s: ends inside a record (truncated)",
					vt_uft_stream_path(s->st));
				s->src->partial = 1;
			}
			uft_note_staged(s);
			s->done = 1;
			continue;
		}
		if (uft_call(s->us, s->track, &s->depth, ev, &rec)) {
			s->last_ts = rec.time;
			return 1;
		}
		if (uft_other(s, ev, &rec))
			return 1;
	}
}

/* Up to @max events: the records already read, in place
 * (vt_uft_stream_run), decoded here with the stream's depth in a
 * register; the rest through uft_next_slow. */
static int uft_next_batch(struct merge_stream *ms, struct merge_event *evs, int max)
{
	struct uft_stream *s = (struct uft_stream *)ms;
	struct uft_src *us = s->us;
	const uint32_t track = s->track;
	int n = 0;

	while (n < max) {
		const uint8_t *p;
		size_t got = 0;

		if (likely(!s->done))
			p = vt_uft_stream_run(s->st, (size_t)(max - n), &got);
		if (unlikely(!got)) {
			if (!uft_next_slow(s, &evs[n]))
				break;
			n++;
			continue;
		}
		uint32_t depth = s->depth;
		struct vt_uft_record rec = { 0 };	/* got > 0: the loop sets it */
		struct merge_event *ev = &evs[n];
		const uint8_t *end = p + got * sizeof(rec);

		for (; p < end; p += sizeof(rec)) {
			memcpy(&rec, p, sizeof(rec));
			if (likely(uft_call(us, track, &depth, ev, &rec)))
				ev++;
			else
				ev += uft_other(s, ev, &rec);
		}
		n = (int)(ev - evs);
		s->depth = depth;
		s->last_ts = rec.time;	/* every record sets it: the run's last */
	}
	return n;
}

static void uft_close(struct merge_stream *ms)
{
	struct uft_stream *s = (struct uft_stream *)ms;

	vt_uft_stream_close(s->st);
	if (--s->us->refs == 0) {
		vt_uft_close(s->us->r);
		free(s->us);
	}
	free(s);
}

static const struct merge_stream_ops uft_ops = { .close = uft_close, .next_batch = uft_next_batch };

/* Whether @exe (the traced executable named by the info file, "" when
 * it names none) is QEMU. */
static int exe_is_qemu(const char *exe)
{
	const char *base = strrchr(exe, '/');

	base = base ? base + 1 : exe;
	return !strncmp(base, "qemu-system-", strlen("qemu-system-"));
}

/* 1 if task pid @pid is the host's QEMU process: the pid the recorder
 * found, or, where it found none - TCG has no KVM facts - the data of a
 * traced QEMU executable. */
static int is_qemu_task(const struct merge_source *src, int pid, int qemu_exe)
{
	return src->machine == MERGE_MACHINE_HOST && !src->single &&
	       (pid == src->host.qemu_pid || (src->host.qemu_pid <= 0 && qemu_exe));
}

/* Process name of task pid @pid: the host's QEMU process is named as the
 * trace.dat reader names it, so both land on one process whichever input
 * is read first. */
static uint32_t task_pname(const struct merge_source *src, int pid, int qemu_exe)
{
	char buf[128];

	if (is_qemu_task(src, pid, qemu_exe))
		snprintf(buf, sizeof(buf), "%s: QEMU (pid %d)", src->label, pid);
	else
		snprintf(buf, sizeof(buf), "%s: pid %d", src->label, pid);
	return merge_str_intern0(src->tables, buf);
}

/* Thread name of task @tid ("vCPU n" for a vCPU thread the host recorder
 * listed); @lane: the name of its second track (" (uftrace)" added). */
static uint32_t task_tname(const struct merge_source *src, int tid, int lane)
{
	const char *what = lane ? " (uftrace)" : "";
	char buf[128];

	for (int i = 0; i < src->host.nr_vthreads; i++)
		if (src->host.vthread_tid[i] == tid) {
			snprintf(buf, sizeof(buf), "vCPU %d%s", src->host.vthread_vcpu[i], what);
			return merge_str_intern0(src->tables, buf);
		}
	snprintf(buf, sizeof(buf), "tid %d%s", tid, what);
	return merge_str_intern0(src->tables, buf);
}

int merge_reader_uftrace(struct merge_source *src, uint16_t idx)
{
	struct uft_src *us = calloc(1, sizeof(*us));

	if (!us)
		return vt_err_set("%s: out of memory", src->path);
	us->r = vt_uft_open(src->path);
	if (!us->r) {
		free(us);
		return -1;
	}
	us->tables = src->tables;
	us->lost_name = merge_str_intern0(us->tables, "uftrace: records lost");
	us->event_name = merge_str_intern0(us->tables, "uftrace: event");
	us->count_key = merge_str_intern0(us->tables, "count");
	us->addr_key = merge_str_intern0(us->tables, "id");
	us->refs = 1;	/* held until all streams are added */

	int n = vt_uft_nr_tasks(us->r), ret = 0;
	int qemu_exe = exe_is_qemu(vt_uft_reader_info(us->r)->exename);

	for (int i = 0; i < n; i++) {
		struct uft_stream *s = calloc(1, sizeof(*s));
		int pid = vt_uft_task_pid(us->r, i), tid = vt_uft_task_tid(us->r, i);

		if (!s) {
			ret = vt_err_set("%s: out of memory", src->path);
			break;
		}
		s->st = vt_uft_stream_open(us->r, i);
		if (!s->st && vt_err_code() == ENOMEM) {
			free(s);
			ret = -1;
			break;
		}
		if (!s->st) {
			/* a task without data (or unreadable): warn, go on */
			vt_warn("%s", vt_err_msg());
			src->partial = 1;
			free(s);
			continue;
		}
		uint32_t pname = task_pname(src, pid, qemu_exe), tname = task_tname(src, tid, 0);

		/* a second lane: its thread's own track first, plainly named */
		s->track = merge_track_get(src->tables, src->machine, pid, tid, pname, tname);
		if (src->lane && s->track != UINT32_MAX)
			s->track = merge_track_get_lane(src->tables, src->machine, pid, tid,
							(uint32_t)src->lane, pname,
							task_tname(src, tid, 1));
		if (s->track == UINT32_MAX) {
			vt_uft_stream_close(s->st);
			free(s);
			ret = -1;
			break;
		}
		if (is_qemu_task(src, pid, qemu_exe))
			merge_track_mark_qemu(src->tables, src->machine, pid);
		s->base.ops = &uft_ops;
		s->base.clock = &src->clock;
		s->base.src = idx;
		s->base.vcpu = ALIGN_VCPU_ANY;
		merge_stream_clock_init(&s->base);
		s->us = us;
		s->src = src;
		us->refs++;
		if (merge_sort_add(src->sorter, &s->base) < 0) {
			uft_close(&s->base);
			ret = -1;
			break;
		}
	}
	if (--us->refs == 0) {
		vt_uft_close(us->r);
		free(us);
	}
	return ret;
}
