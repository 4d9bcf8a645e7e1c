/*
 * derive.c - what the sinks people read (Chrome JSON, Perfetto) make of a
 * kernel recording's instants: syscalls as slices and threads' scheduling
 * states as slices, each on a track of its own beside the thread's track
 * (docs/merge.md: "Syscalls and thread states").
 *
 *   - sys_enter .. sys_exit of one thread (raw_syscalls, or syscalls:
 *     sys_enter_NAME .. sys_exit_NAME; both recorded: one slice) become a
 *     slice named after the syscall on the thread's "syscalls" track, the
 *     enter's arguments on its begin, the exit's on its end.  An exit whose
 *     enter came before the recording stays an instant.
 *   - sched_switch / sched_waking / sched_wakeup(_new) become the thread's
 *     states on its "thread state" track: Running from being switched in,
 *     then what prev_state says at the switch out (Runnable, Runnable
 *     (Preempted) for R+, Sleeping, Uninterruptible Sleep, ...), Runnable
 *     again from a wakeup of a sleeping thread.
 *
 * Runs on the merge thread, called for each event in time order when the
 * sink shows derived slices; its state is the caller's struct merge_deriver
 * (one per pipeline); memory is per thread (a few bytes), never per event.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "merge.h"

#define LANE_SYSCALLS	2	/* track lanes (struct merge_track.lane) */
#define LANE_STATE	3

static const char *const syscall_names[] = {
#include "syscall_names.h"
};
#define NR_SYSCALL_NAMES	(sizeof(syscall_names) / sizeof(syscall_names[0]))

enum { K_NONE, K_RAW_ENTER, K_RAW_EXIT, K_ENTER, K_EXIT, K_SWITCH, K_WAKE };

/* Per thread (its lane-0 track): the open syscall and the open state. */
struct merge_derive_thread {
	int64_t sys_nr;		/* open syscall's number, -1 none */
	uint8_t sys_kind;	/* K_RAW_ENTER / K_ENTER that opened it */
	uint8_t twin_kind;	/* after a close: the exit kind that closed it */
	int64_t twin_nr;	/* ... and its number (-1 none) */
	uint32_t state;		/* open state slice's name, 0 none */
};

static void init_keys(struct merge_deriver *dv)
{
	dv->k_id = merge_str_intern0(dv->tables, "id");
	dv->k_nr = merge_str_intern0(dv->tables, "__syscall_nr");
	dv->k_prev_pid = merge_str_intern0(dv->tables, "prev_pid");
	dv->k_prev_state = merge_str_intern0(dv->tables, "prev_state");
	dv->k_next_pid = merge_str_intern0(dv->tables, "next_pid");
	dv->k_pid = merge_str_intern0(dv->tables, "pid");
	dv->n_syscalls = merge_str_intern0(dv->tables, "syscalls");
	dv->n_state = merge_str_intern0(dv->tables, "thread state");
	dv->n_running = merge_str_intern0(dv->tables, "Running");
	dv->n_runnable = merge_str_intern0(dv->tables, "Runnable");
}

static int classify(const struct merge_tables *tb, uint32_t name)
{
	const char *s = merge_str(tb, name);

	if (!strcmp(s, "sys_enter"))
		return K_RAW_ENTER;
	if (!strcmp(s, "sys_exit"))
		return K_RAW_EXIT;
	if (!strncmp(s, "sys_enter_", 10))
		return K_ENTER;
	if (!strncmp(s, "sys_exit_", 9))
		return K_EXIT;
	if (!strcmp(s, "sched_switch"))
		return K_SWITCH;
	if (!strcmp(s, "sched_waking") || !strcmp(s, "sched_wakeup") ||
	    !strcmp(s, "sched_wakeup_new"))
		return K_WAKE;
	return K_NONE;
}

static int arg_num(const struct merge_event *ev, uint32_t key, int64_t *out)
{
	const struct merge_arg *a = merge_event_arg(ev, key);

	if (!a || (a->type != MERGE_ARG_U64 && a->type != MERGE_ARG_I64))
		return -1;
	*out = a->v.i;
	return 0;
}

static struct merge_derive_thread *thread_of(struct merge_deriver *dv, uint32_t track)
{
	if (track >= dv->threads_cap) {
		uint32_t old = dv->threads_cap;

		if (merge_table_grow(&dv->threads, &dv->threads_cap, track + 1,
				     sizeof(*dv->threads)) < 0) {
			dv->failed = 1;
			return NULL;
		}
		for (uint32_t i = old; i < dv->threads_cap; i++)
			dv->threads[i].sys_nr = dv->threads[i].twin_nr = -1;
	}
	return &dv->threads[track];
}

/* The lane-0 track of thread @tid of @machine, UINT32_MAX for the idle
 * task or a thread the readers have not placed yet (its process is theirs
 * to know: QEMU's threads are grouped by the recording's facts, not here;
 * a thread's own first event - the sched_switch that switches it out -
 * places it). */
static uint32_t thread_track(const struct merge_tables *tb, uint32_t machine, int64_t tid)
{
	if (tid <= 0 || tid > INT32_MAX)
		return UINT32_MAX;
	return merge_track_find_tid(tb, machine, (int32_t)tid);
}

static struct merge_event *out_ev(struct merge_event *out, int *n, const struct merge_event *ev,
				  uint32_t track, uint8_t kind, uint32_t name)
{
	struct merge_event *o = &out[(*n)++];

	memset(o, 0, offsetof(struct merge_event, args));
	o->ts_ns = ev->ts_ns;
	o->ts_raw = ev->ts_raw;
	o->src = ev->src;
	o->cpu = ev->cpu;
	o->track = track;
	o->kind = kind;
	o->name = kind == MERGE_EV_END ? MERGE_NO_STR : name;
	o->sym_mask = 0;
	o->nr_arr = 0;
	return o;
}

/* The track of lane @lane of the thread of lane-0 track @main. */
static uint32_t lane_of(struct merge_tables *tb, uint32_t main, uint32_t lane, uint32_t name)
{
	const struct merge_track *t = merge_track(tb, main);

	return merge_track_get_lane(tb, t->machine, t->pid, t->tid, lane, t->pname, name);
}

/* Switch thread (lane-0 track @main) to state @state (0: none) at @ev. */
static void set_state(struct merge_deriver *dv, struct merge_event *out, int *n,
		      const struct merge_event *ev, uint32_t main, uint32_t state, uint32_t letters)
{
	struct merge_derive_thread *d = thread_of(dv, main);
	uint32_t lane;

	if (!d || d->state == state)
		return;
	lane = lane_of(dv->tables, main, LANE_STATE, dv->n_state);
	if (lane == UINT32_MAX)
		return;
	if (d->state)
		out_ev(out, n, ev, lane, MERGE_EV_END, 0);
	d->state = state;
	if (!state)
		return;
	struct merge_event *o = out_ev(out, n, ev, lane, MERGE_EV_BEGIN, state);

	if (letters) {
		o->nr_args = 1;
		o->args[0] = (struct merge_arg){ .key = dv->k_prev_state, .type = MERGE_ARG_STR,
						 .v.str = letters };
	}
}

/* The state name of the kernel's prev_state letters (as it prints them). */
static uint32_t state_name(const struct merge_deriver *dv, const char *l)
{
	static const struct { char c; const char *name; } tab[] = {
		{ 'S', "Sleeping" }, { 'D', "Uninterruptible Sleep" }, { 'T', "Stopped" },
		{ 't', "Traced" }, { 'X', "Dead" }, { 'Z', "Zombie" }, { 'P', "Parked" },
		{ 'I', "Idle" }, { 'W', "Waking" }, { 'K', "Wakekill" },
	};

	if (l[0] == 'R')
		return l[1] != '+' ? dv->n_runnable :
		       merge_str_intern0(dv->tables, "Runnable (Preempted)");
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (l[0] == tab[i].c)
			return merge_str_intern0(dv->tables, tab[i].name);
	return merge_str_intern0(dv->tables, l);
}

static void sched(struct merge_deriver *dv, struct merge_event *out, int *n,
		  const struct merge_event *ev, int kind)
{
	uint32_t machine = merge_track(dv->tables, ev->track)->machine;
	int64_t prev, next;

	if (kind == K_WAKE) {
		uint32_t tr;
		struct merge_derive_thread *d;

		if (arg_num(ev, dv->k_pid, &next) < 0)
			return;
		tr = thread_track(dv->tables, machine, next);
		d = tr == UINT32_MAX ? NULL : thread_of(dv, tr);
		/* a sleeping (or not yet seen) thread becomes runnable */
		if (d && d->state != dv->n_running && d->state != dv->n_runnable)
			set_state(dv, out, n, ev, tr, dv->n_runnable, 0);
		return;
	}
	if (arg_num(ev, dv->k_prev_pid, &prev) < 0 || arg_num(ev, dv->k_next_pid, &next) < 0)
		return;

	const struct merge_arg *ps = merge_event_arg(ev, dv->k_prev_state);
	uint32_t letters = MERGE_NO_STR;

	if (ps) {
		int i = (int)(ps - ev->args);

		letters = ps->type == MERGE_ARG_STR ? ps->v.str :
			  (ev->sym_mask & (1u << i)) ? ev->sym_text[i] : MERGE_NO_STR;
	}
	uint32_t tr = thread_track(dv->tables, machine, prev);

	if (tr != UINT32_MAX)
		set_state(dv, out, n, ev, tr,
			  letters ? state_name(dv, merge_str(dv->tables, letters)) : 0, letters);
	tr = thread_track(dv->tables, machine, next);
	if (tr != UINT32_MAX)
		set_state(dv, out, n, ev, tr, dv->n_running, 0);
}

/* The slice name of syscall @nr entered by event @name (sys_enter_NAME). */
static uint32_t syscall_name(struct merge_tables *tb, uint32_t name, int kind, int64_t nr)
{
	char buf[48];

	if (kind == K_ENTER)
		return merge_str_intern0(tb, merge_str(tb, name) + 10);
	if ((uint64_t)nr < NR_SYSCALL_NAMES && syscall_names[nr])
		return merge_str_intern0(tb, syscall_names[nr]);
	snprintf(buf, sizeof(buf), "syscall %lld", (long long)nr);
	return merge_str_intern0(tb, buf);
}

static int syscall_slice(struct merge_deriver *dv, struct merge_event *out, int *n,
			 const struct merge_event *ev, int kind)
{
	int enter = kind == K_RAW_ENTER || kind == K_ENTER;
	int64_t nr;
	uint32_t main = merge_track(dv->tables, ev->track)->main, lane;
	struct merge_derive_thread *d = thread_of(dv, main);
	uint32_t k_id = dv->k_id, k_nr = dv->k_nr;

	/* a number below 0 (the kernel's -1: no syscall) is no slice: -1 is
	 * also sys_nr's "none", its slice would never end */
	if (arg_num(ev, kind == K_RAW_ENTER || kind == K_RAW_EXIT ? k_id : k_nr, &nr) < 0 ||
	    nr < 0 || !d)
		return 1;
	lane = lane_of(dv->tables, main, LANE_SYSCALLS, dv->n_syscalls);
	if (lane == UINT32_MAX)
		return 1;
	if (enter) {
		if (d->sys_nr == nr && d->sys_kind != kind)
			return 0;	/* the other tracepoint of the same entry */
		if (d->sys_nr >= 0)	/* its exit was not recorded */
			out_ev(out, n, ev, lane, MERGE_EV_END, 0);
		struct merge_event *o = out_ev(out, n, ev, lane, MERGE_EV_BEGIN,
					       syscall_name(dv->tables, ev->name, kind, nr));

		for (int i = 0; i < ev->nr_args; i++)
			if (ev->args[i].key != k_id && ev->args[i].key != k_nr)
				o->args[o->nr_args++] = ev->args[i];
		memcpy(o->arr, ev->arr, sizeof(o->arr));
		o->nr_arr = ev->nr_arr;
		d->sys_nr = nr;
		d->sys_kind = (uint8_t)kind;
		d->twin_nr = -1;
		return 0;
	}
	if (d->sys_nr == nr) {
		struct merge_event *o = out_ev(out, n, ev, lane, MERGE_EV_END, 0);

		for (int i = 0; i < ev->nr_args; i++)
			if (ev->args[i].key != k_id && ev->args[i].key != k_nr)
				o->args[o->nr_args++] = ev->args[i];
		d->sys_nr = -1;
		d->twin_nr = nr;
		d->twin_kind = (uint8_t)kind;
		return 0;
	}
	if (d->twin_nr == nr && d->twin_kind != kind) {
		d->twin_nr = -1;	/* the other tracepoint of that exit */
		return 0;
	}
	return 1;	/* entered before the recording: the instant stays */
}

int merge_derive(struct merge_deriver *dv, const struct merge_event *ev, struct merge_event *out,
		 int *keep)
{
	int n = 0, kind;

	*keep = 1;
	if (ev->kind != MERGE_EV_INSTANT || !ev->name)
		return 0;
	if (unlikely(ev->name >= dv->kinds_cap)) {
		if (!dv->kinds_cap)
			init_keys(dv);
		if (merge_table_grow(&dv->kinds, &dv->kinds_cap, ev->name + 1, 1) < 0) {
			dv->failed = 1;
			return 0;
		}
	}
	if (unlikely(!dv->kinds[ev->name]))
		dv->kinds[ev->name] = (uint8_t)(classify(dv->tables, ev->name) + 1);
	kind = dv->kinds[ev->name] - 1;
	if (likely(kind == K_NONE))
		return 0;
	if (kind == K_SWITCH || kind == K_WAKE)
		sched(dv, out, &n, ev, kind);
	else
		*keep = syscall_slice(dv, out, &n, ev, kind);
	return n;
}

void merge_derive_init(struct merge_deriver *dv, struct merge_tables *tb)
{
	memset(dv, 0, sizeof(*dv));
	dv->tables = tb;
}

void merge_derive_free(struct merge_deriver *dv)
{
	free(dv->kinds);
	free(dv->threads);
	memset(dv, 0, sizeof(*dv));
}
