/*
 * reader_tracedat.c - merge's reader of trace.dat files (host recordings,
 * guest kernel recordings made with --guest), through lib/tracedat.h.  One
 * stream per CPU (each in time order).  KVM exits become slices on the
 * vCPU thread, everything else instants with their fields as arguments.
 * Runs on the merge thread; allocates at open and per new thread/name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "tracedat.h"
#include "merge.h"
#include "usdt_python.h"

#define TID_CACHE_SIZE	1024	/* direct-mapped tid -> track cache */
#define REASON_CACHE	128	/* distinct exit reasons remembered */
#define STR_ARG_MAX	64	/* string fields are cut to this (on a
				 * character boundary, by merge's string table) */
#define SYM_CACHE	1024	/* (event, field, value) -> its text, direct-mapped */
#define SYM_TEXT_MAX	64	/* longest text of a symbolic value kept */
#define EXIT_INFO_ARGS	4	/* fields of kvm_exit copied as arguments */

#define ID_CACHE_MAX	65536	/* event type ids cached (ids are u16) */
#define FIELDS_CACHED	MERGE_MAX_ARGS

enum { K_OTHER = 1, K_EXIT, K_ENTRY, K_USDT };

/* What an event type maps to, worked out at its first event. */
struct evinfo {
	uint8_t kind;		/* 0 = not yet looked at */
	uint8_t nr;		/* fields kept as arguments */
	int8_t reason;		/* kvm_exit: index of exit_reason, -1 none */
	uint8_t usdt;		/* K_USDT: the merge_usdt_kind() */
	uint32_t name;
	uint32_t key[FIELDS_CACHED];
	uint8_t ftype[FIELDS_CACHED];	/* enum vt_td_field_kind */
	uint8_t sym[FIELDS_CACHED];	/* printed through a table of names */
	uint8_t idx[FIELDS_CACHED];
};

/* A symbolic field's value as the kernel's print format shows it. */
struct sym_ent {
	uint64_t value;
	uint32_t key;		/* event id << 8 | field index, + 1; 0 = empty */
	uint32_t text;		/* interned */
};

struct td_src {
	struct vt_td_reader *r;
	struct merge_source *src;
	int refs;
	uint64_t tid_key[TID_CACHE_SIZE];	/* (uint32_t)tid + 1, never 0; 0 = empty */
	uint32_t tid_track[TID_CACHE_SIZE];
	uint32_t reason_num[REASON_CACHE];
	uint32_t reason_id[REASON_CACHE];
	int nr_reasons;
	uint32_t qemu_pname;
	struct evinfo *info;	/* by event type id */
	uint32_t nr_info;
	struct merge_usdt usdt;	/* python uprobe events (usdt_python.c) */
	struct sym_ent sym[SYM_CACHE];
};

struct td_stream {
	struct merge_stream base;
	struct td_src *ts;
	int cpu;
};

/* "CPU 3/KVM" -> 3; -1 if @comm is not a vCPU thread name */
static int vcpu_of_comm(const char *comm)
{
	int n, end = 0;

	if (sscanf(comm, "CPU %d/KVM%n", &n, &end) == 1 && end && !comm[end])
		return n;
	return -1;
}

/* A QEMU thread by name (recordings that do not list QEMU's tasks): vCPU,
 * main, vhost, iothread ("IO <id>"), thread-pool worker threads. */
static int is_qemu_comm(const char *comm)
{
	return vcpu_of_comm(comm) >= 0 || !strncmp(comm, "qemu", 4) ||
	       !strncmp(comm, "vhost-", 6) || !strncmp(comm, "IO ", 3) ||
	       !strncmp(comm, "worker", 6);
}

/* A thread of QEMU's process: by the recorder's task list when it has
 * one (whatever the thread's name), else by name. */
static int is_qemu_tid(const struct merge_source *src, int tid, const char *comm)
{
	if (src->host.nr_qtasks <= 0)
		return is_qemu_comm(comm);
	if (tid == src->host.qemu_pid)
		return 1;
	for (int i = 0; i < src->host.nr_qtasks; i++)
		if (src->host.qtask_tid[i] == tid)
			return 1;
	return 0;
}

static uint32_t track_of(struct td_src *t, int tid)
{
	uint32_t h = (uint32_t)tid & (TID_CACHE_SIZE - 1);

	if (likely(t->tid_key[h] == (uint64_t)(uint32_t)tid + 1))
		return t->tid_track[h];

	const char *comm = vt_td_read_comm(t->r, tid);
	struct merge_source *src = t->src;
	struct merge_tables *tb = src->tables;
	char tname[96], pname[128];
	int vcpu = vcpu_of_comm(comm), pid = tid, known = 0;
	uint32_t pn;

	for (int i = 0; i < src->host.nr_vthreads; i++)
		if (src->host.vthread_tid[i] == tid) {
			vcpu = src->host.vthread_vcpu[i];
			known = 1;
		}
	int qemu = src->machine == MERGE_MACHINE_HOST && tid && (known || is_qemu_tid(src, tid, comm));

	/* another VM's vCPU thread has the very name: with QEMU's threads
	 * listed, a name makes a vCPU of the traced QEMU's threads only */
	if (!qemu && !known && src->host.nr_qtasks > 0)
		vcpu = -1;

	if (vcpu >= 0)
		snprintf(tname, sizeof(tname), "vCPU %d", vcpu);
	else if (*comm)
		snprintf(tname, sizeof(tname), "%s", comm);
	else
		snprintf(tname, sizeof(tname), "tid %d", tid);
	/* a thread another input of this machine (its uftrace data) already
	 * placed: one track, with that input's pid and this one's names */
	uint32_t tn = merge_str_intern0(tb, tname);
	uint32_t tr = tid ? merge_track_find_tid(tb, src->machine, tid) : UINT32_MAX;

	if (tr != UINT32_MAX && qemu && src->host.qemu_pid <= 0)
		src->host.qemu_pid = merge_track(tb, tr)->pid;	/* QEMU's pid, from uftrace */
	if (qemu) {
		if (src->host.qemu_pid <= 0)
			src->host.qemu_pid = tid;	/* unknown: group under the first */
		pid = src->host.qemu_pid;
		if (!t->qemu_pname) {
			snprintf(pname, sizeof(pname), "host: QEMU (pid %d)", pid);
			t->qemu_pname = merge_str_intern0(tb, pname);
		}
		pn = t->qemu_pname;
	} else {
		if (!tid)
			snprintf(pname, sizeof(pname), "%s: kernel (idle)", src->label);
		else
			snprintf(pname, sizeof(pname), "%s: %s (pid %d)", src->label,
				 *comm ? comm : "?", tid);
		pn = merge_str_intern0(tb, pname);
	}
	if (tr != UINT32_MAX) {
		struct merge_track *mt = merge_track(tb, tr);

		merge_track_set_name(tb, tr, tn);
		if (qemu ? mt->pid == pid : mt->pid == tid)
			merge_track_set_pname(tb, src->machine, mt->pid, pn);
	} else {
		tr = merge_track_get(tb, src->machine, pid, tid, pn, tn);
	}
	if (tr != UINT32_MAX) {
		if (qemu)
			merge_track_mark_qemu(tb, src->machine, pid);
		if (vcpu >= 0 && src->machine == MERGE_MACHINE_HOST)
			merge_track(tb, tr)->vcpu = vcpu + 1;
		t->tid_key[h] = (uint64_t)(uint32_t)tid + 1;
		t->tid_track[h] = tr;
	}
	return tr;
}

/* The name of a kvm_exit slice, "exit: <REASON>", from the event's own
 * print format (once per distinct reason). */
static uint32_t exit_name(struct td_src *t, const struct vt_td_event *e, uint64_t reason)
{
	for (int i = 0; i < t->nr_reasons; i++)
		if (t->reason_num[i] == reason)
			return t->reason_id[i];

	char info[256], buf[96], word[64];
	const char *p = strstr(vt_td_event_info(t->r, e, info, sizeof(info)), "reason ");

	if (p && sscanf(p + 7, "%63s", word) == 1)
		snprintf(buf, sizeof(buf), "exit: %s", word);
	else
		snprintf(buf, sizeof(buf), "exit: %llu", (unsigned long long)reason);
	uint32_t id = merge_str_intern0(t->src->tables, buf);

	if (t->nr_reasons < REASON_CACHE) {
		t->reason_num[t->nr_reasons] = (uint32_t)reason;
		t->reason_id[t->nr_reasons++] = id;
	}
	return id;
}

static struct evinfo *info_of(struct td_src *t, const struct vt_td_event *e)
{
	if (unlikely(e->id < 0 || e->id >= ID_CACHE_MAX))
		return NULL;
	if (unlikely((uint32_t)e->id >= t->nr_info) &&
	    merge_table_grow(&t->info, &t->nr_info, (uint32_t)e->id + 1, sizeof(*t->info)) < 0)
		return NULL;
	struct evinfo *in = &t->info[e->id];

	if (likely(in->kind))
		return in;
	int kvm = !strcmp(e->system, "kvm");
	int n = vt_td_nr_fields(e);

	in->kind = kvm && !strcmp(e->name, "kvm_exit") ? K_EXIT :
		   kvm && !strcmp(e->name, "kvm_entry") ? K_ENTRY : K_OTHER;
	in->name = merge_str_intern0(t->src->tables, e->name);
	in->reason = -1;
	in->usdt = (uint8_t)merge_usdt_kind(e->system, e->name);
	if (in->usdt)
		in->kind = K_USDT;
	for (int i = 0; i < n; i++) {
		const char *fname = vt_td_field_name(e, i);

		if (!strcmp(fname, "exit_reason") && i < INT8_MAX)
			in->reason = (int8_t)i;
		if (in->nr < (in->kind == K_EXIT ? EXIT_INFO_ARGS : FIELDS_CACHED)) {
			enum vt_td_field_kind k = vt_td_field_kind(e, i);

			if (k == VT_TD_FIELD_OTHER)
				continue;
			in->key[in->nr] = merge_str_intern0(t->src->tables, fname);
			in->ftype[in->nr] = (uint8_t)k;
			in->sym[in->nr] = (uint8_t)(k == VT_TD_FIELD_UNSIGNED || k == VT_TD_FIELD_SIGNED) &&
					  vt_td_field_is_symbolic(e, i);
			in->idx[in->nr++] = (uint8_t)i;
		}
	}
	return in;
}

/* The text the event's print format gives field @i (its @name) of value
 * @v, e.g. sched_switch prev_state 1 -> "S", 0x100 -> "R+": printed once
 * per distinct (event, field, value) by libtraceevent, then cached.
 * MERGE_NO_STR when the printed line has no "NAME=TEXT". */
static uint32_t sym_text(struct td_src *t, const struct vt_td_event *e, int i,
			 const char *name, uint64_t v)
{
	uint32_t key = ((uint32_t)e->id << 8 | (uint32_t)(i & 0xff)) + 1;
	uint64_t h = (v ^ (uint64_t)key * 0x9e3779b97f4a7c15ULL) * 0x9e3779b97f4a7c15ULL;
	struct sym_ent *se = &t->sym[(h >> 32) & (SYM_CACHE - 1)];

	if (likely(se->key == key && se->value == v))
		return se->text;

	char info[1024], word[SYM_TEXT_MAX];
	const char *line = vt_td_event_info(t->r, e, info, sizeof(info));
	size_t nl = strlen(name);
	uint32_t id = MERGE_NO_STR;

	for (const char *p = strstr(line, name); p; p = strstr(p + 1, name)) {
		if ((p == line || p[-1] == ' ') && p[nl] == '=') {
			size_t n = strcspn(p + nl + 1, " ");

			/* a number is the field printed as it is (softirq's
			 * "vec=%u [action=%s]"): the text is elsewhere, keep it a number */
			if (n && n < sizeof(word) && strspn(p + nl + 1, "0123456789xabcdef") < n) {
				memcpy(word, p + nl + 1, n);
				id = merge_str_intern(t->src->tables, word, n);
			}
			break;
		}
	}
	*se = (struct sym_ent){ .value = v, .key = key, .text = id };
	return id;
}

static void add_fields(struct td_src *t, struct merge_event *ev, const struct vt_td_event *e,
		       const struct evinfo *in)
{
	char sbuf[STR_ARG_MAX];

	for (int i = 0; i < in->nr; i++) {
		struct merge_arg *a = &ev->args[ev->nr_args];
		int n;

		switch (in->ftype[i]) {
		case VT_TD_FIELD_UNSIGNED:
		case VT_TD_FIELD_SIGNED:
			if (vt_td_field_u64_idx(e, in->idx[i], &a->v.u) < 0)
				continue;
			a->type = in->ftype[i] == VT_TD_FIELD_SIGNED ? MERGE_ARG_I64 : MERGE_ARG_U64;
			if (unlikely(in->sym[i])) {
				uint32_t txt = sym_text(t, e, in->idx[i],
							merge_str(t->src->tables, in->key[i]),
							a->v.u);

				if (txt) {
					ev->sym_mask |= (uint8_t)(1u << ev->nr_args);
					ev->sym_text[ev->nr_args] = txt;
				}
			}
			break;
		case VT_TD_FIELD_STRING: {
			const char *sv = vt_td_field_str_idx(e, in->idx[i], sbuf, sizeof(sbuf));

			if (!sv)
				continue;
			a->type = MERGE_ARG_STR;
			a->v.str = merge_str_intern0(t->src->tables, sv);
			break;
		}
		default:	/* arrays of numbers */
			n = vt_td_field_array_idx(e, in->idx[i], ev->arr + ev->nr_arr,
						  MERGE_ARR_MAX - ev->nr_arr);
			if (n < 0)
				continue;
			a->type = in->ftype[i] == VT_TD_FIELD_ARRAY_SIGNED ? MERGE_ARG_ARRAY_I64 :
									      MERGE_ARG_ARRAY_U64;
			a->v.u = merge_arr_ref((uint32_t)ev->nr_arr, (uint32_t)n);
			ev->nr_arr = (uint8_t)(ev->nr_arr + n);
			break;
		}
		a->key = in->key[i];
		ev->nr_args++;
	}
}

static int td_next(struct merge_stream *ms, struct merge_event *ev)
{
	struct td_stream *s = (struct td_stream *)ms;
	struct td_src *t = s->ts;
	struct vt_td_event e;
	int rd = vt_td_read_next(t->r, s->cpu, &e);

	if (rd < 0)
		t->src->oom = 1;	/* the only error of the reads */
	if (rd <= 0)
		return rd;

	uint32_t tr = track_of(t, e.pid);
	const struct evinfo *in = info_of(t, &e);

	if (unlikely(tr == UINT32_MAX || !in)) {
		t->src->oom = 1;
		return vt_err_set("%s: out of memory", t->src->path);
	}
	ev->ts_raw = e.ts;
	ev->track = tr;
	ev->cpu = e.cpu;
	ev->nr_args = 0;
	ev->nr_arr = 0;
	ev->sym_mask = 0;
	switch (in->kind) {
	case K_EXIT: {
		uint64_t reason = 0;

		if (in->reason >= 0)
			vt_td_field_u64_idx(&e, in->reason, &reason);
		else	/* none, or past the index an int8_t holds: by name */
			vt_td_field_u64(&e, "exit_reason", &reason);
		ev->kind = MERGE_EV_BEGIN;
		ev->name = exit_name(t, &e, reason);
		add_fields(t, ev, &e, in);
		return 1;
	}
	case K_ENTRY:
		ev->kind = MERGE_EV_END;
		ev->name = MERGE_NO_STR;
		return 1;
	case K_USDT:
		return merge_usdt_event(&t->usdt, in->usdt, tr, &e, ev) < 0 ? -1 : 1;
	default:
		ev->kind = MERGE_EV_INSTANT;
		ev->name = in->name;
		add_fields(t, ev, &e, in);
		return 1;
	}
}

static void td_close(struct merge_stream *ms)
{
	struct td_stream *s = (struct td_stream *)ms;

	if (--s->ts->refs == 0) {
		vt_td_read_close(s->ts->r);
		merge_usdt_free(&s->ts->usdt);
		free(s->ts->info);
		free(s->ts);
	}
	free(s);
}

static const struct merge_stream_ops td_ops = { .next = td_next, .close = td_close };

int merge_reader_tracedat(struct merge_source *src, uint16_t idx, const char *file)
{
	struct td_src *t = calloc(1, sizeof(*t));
	int ret = 0;

	if (!t)
		return vt_err_set("%s: out of memory", file);
	t->r = vt_td_read_open(file);
	if (!t->r) {
		free(t);
		return -1;
	}
	if (vt_td_read_warning(t->r))
		vt_warn("%s", vt_td_read_warning(t->r));
	t->src = src;
	t->usdt.tables = src->tables;
	t->refs = 1;
	if (src->machine == MERGE_MACHINE_HOST && src->host.nr_qtasks > 0)
		src->tables->qemu_tasks_known = 1;	/* QEMU's threads by tid */
	if (vt_td_read_truncated(t->r)) {
		vt_warn("%s: CPU data cut short: each CPU is read up to its last whole record",
			file);
		src->partial = 1;
	}

	const char *clock = vt_td_read_clock(t->r);

	/* a trace-cmd pair on a ns clock: a guest's map is already its
	 * model's, whose host ticks are ns (align/src_tsync.c) */
	int ns_pair = src->clock.model && src->clock.host_hz == VT_NS_PER_SEC;
	int is_ns = vt_td_clock_is_ns(clock);

	if (is_ns && !ns_pair) {
		if (src->machine != MERGE_MACHINE_HOST || (!src->single && !src->ns_model))
			vt_warn("%s: recorded with the '%s' trace clock (ns), not x86-tsc: "
				"its events are placed by their ns stamps, unaligned", file, clock);
		align_clock_init(&src->clock, ALIGN_CLOCK_NS, 0);
	} else if (!is_ns && *clock && strcmp(clock, "x86-tsc")) {
		vt_err_set("%s: trace clock '%s' is neither x86-tsc nor a ns clock: "
			   "cannot place it on the timeline", file, clock);
		vt_td_read_close(t->r);
		free(t);
		return -1;
	}
	for (int cpu = 0; cpu < vt_td_read_nr_cpus(t->r); cpu++) {
		struct td_stream *s = calloc(1, sizeof(*s));

		if (!s) {
			ret = vt_err_set("%s: out of memory", file);
			break;
		}
		s->base.ops = &td_ops;
		s->base.clock = &src->clock;
		s->base.src = idx;
		s->base.vcpu = src->machine == MERGE_MACHINE_HOST ? ALIGN_VCPU_ANY : cpu;
		merge_stream_clock_init(&s->base);
		s->ts = t;
		s->cpu = cpu;
		t->refs++;
		if (merge_sort_add(src->sorter, &s->base) < 0) {
			td_close(&s->base);
			ret = -1;
			break;
		}
	}
	if (--t->refs == 0) {
		vt_td_read_close(t->r);
		free(t->info);
		free(t);
	}
	return ret;
}
