/*
 * t-merge-derive.c - merge/derive.c, the syscall and thread-state slices
 * the Chrome JSON and Perfetto sinks show, fed events directly: what each
 * event derives (kind, track lane, name, arguments) and whether it stays,
 * for the inputs the trace.dat fixtures of tests/merge do not make:
 * arguments missing or of the wrong type, the idle task and tids past
 * INT32_MAX, a state unchanged, a switch out without prev_state, states
 * by letter (unknown letters as they are), prev_state as a number with
 * and without its symbolic text, syscall numbers past the name table, in
 * a hole of it or below 0 (-1 was a slice that never ended: fixed), both
 * tracepoints of one exit, one tracepoint twice, non-instants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "merge/merge.h"

static struct merge_tables tb;
static struct merge_deriver dv;
static struct merge_event out[MERGE_DERIVE_MAX];
static int nout, keep;
static uint32_t t300, t301;

/* Derive from an event of @kind named @name on @track, arguments as in
 * t-report-chain (key=NUMBER, key='TEXT'); key=#N: a number whose
 * symbolic text is @sym. */
static void feed(uint32_t track, int kind, const char *name, const char *args, const char *sym)
{
	struct merge_event ev = {
		.ts_ns = 1000, .track = track, .kind = (uint8_t)kind,
		.name = name ? merge_str_intern0(&tb, name) : 0,
	};
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", args ? args : "");
	for (char *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(a, '=');
		struct merge_arg *g = &ev.args[ev.nr_args];

		*eq = 0;
		g->key = merge_str_intern0(&tb, a);
		if (eq[1] == '\'') {
			eq[strlen(eq + 1)] = 0;
			g->type = MERGE_ARG_STR;
			g->v.str = merge_str_intern0(&tb, eq + 2);
		} else if (eq[1] == '#') {
			g->type = MERGE_ARG_U64;
			g->v.u = strtoull(eq + 2, NULL, 0);
			if (sym) {
				ev.sym_mask |= 1u << ev.nr_args;
				ev.sym_text[ev.nr_args] = merge_str_intern0(&tb, sym);
			}
		} else {
			g->type = MERGE_ARG_I64;
			g->v.i = strtoll(eq + 1, NULL, 0);
		}
		ev.nr_args++;
	}
	nout = merge_derive_feed(&dv, &ev, out, &keep);
}

static void ins(uint32_t track, const char *name, const char *args)
{
	feed(track, MERGE_EV_INSTANT, name, args, NULL);
}

/* The derived events as text: "B lane NAME" / "E lane", joined by "; ". */
static const char *got(void)
{
	static char buf[512];
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < nout; i++) {
		const struct merge_track *t = merge_track(&tb, out[i].track);

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%c %s %d%s%s", i ? "; " : "",
				      out[i].kind == MERGE_EV_BEGIN ? 'B' : 'E',
				      merge_str(&tb, t->name), t->tid, out[i].name ? " " : "",
				      out[i].name ? merge_str(&tb, out[i].name) : "");
	}
	return buf;
}

static void test_sched(void)
{
	const char *sw = "prev_pid=%d prev_state='%s' next_pid=%lld";
	char a[128];

	ins(t300, "sched_switch", "prev_pid=0 prev_state='R' next_pid=300");
	CHECK_STR(got(), "B thread state 300 Running");
	ins(t300, "sched_switch", "prev_pid=0 prev_state='R' next_pid=300");	/* still running */
	CHECK(nout == 0 && keep == 1);
	snprintf(a, sizeof(a), sw, 300, "D", 301LL);
	ins(t300, "sched_switch", a);
	CHECK_STR(got(), "E thread state 300; B thread state 300 Uninterruptible Sleep; "
			 "B thread state 301 Running");
	CHECK(nout == 3 && out[1].nr_args == 1 &&
	      !strcmp(merge_str(&tb, out[1].args[0].v.str), "D"));
	snprintf(a, sizeof(a), sw, 301, "Q", 1LL << 40);	/* unknown letter; tid past int */
	ins(t301, "sched_switch", a);
	CHECK_STR(got(), "E thread state 301; B thread state 301 Q");
	feed(t301, MERGE_EV_INSTANT, "sched_switch", "prev_pid=301 prev_state=#1 next_pid=0", "S");
	CHECK_STR(got(), "E thread state 301; B thread state 301 Sleeping");
	ins(t301, "sched_switch", "prev_pid=301 prev_state=#2 next_pid=0");	/* no text: none */
	CHECK_STR(got(), "E thread state 301");
	ins(t301, "sched_wakeup", "pid=301");
	CHECK_STR(got(), "B thread state 301 Runnable");
	ins(t301, "sched_switch", "prev_pid=0 next_pid=301");
	CHECK_STR(got(), "E thread state 301; B thread state 301 Running");
	ins(t301, "sched_switch", "prev_pid=301 next_pid=0");	/* no prev_state: none */
	CHECK_STR(got(), "E thread state 301");
	ins(t300, "sched_waking", "pid='x'");
	CHECK(nout == 0);
	ins(t300, "sched_wakeup_new", "comm='x'");
	CHECK(nout == 0);
	ins(t300, "sched_switch", "prev_pid=300 prev_state='S'");	/* no next_pid */
	CHECK(nout == 0 && keep == 1);
	ins(t300, "sched_switch", "next_pid=300");
	CHECK(nout == 0);
	ins(t300, "sched_wakeup", "pid=-5");
	CHECK(nout == 0);
}

static void test_syscalls(void)
{
	ins(t300, "sys_enter", "id=1 fd=3");
	CHECK_STR(got(), "B syscalls 300 write");
	CHECK(keep == 0 && out[0].nr_args == 1);
	ins(t300, "sys_enter_write", "__syscall_nr=1 fd=3");	/* the same entry */
	CHECK(nout == 0 && keep == 0);
	ins(t300, "sys_exit", "id=1 ret=8");
	CHECK_STR(got(), "E syscalls 300");
	CHECK(keep == 0 && out[0].nr_args == 1);
	ins(t300, "sys_exit_write", "__syscall_nr=1 ret=8");	/* the same exit */
	CHECK(nout == 0 && keep == 0);
	ins(t300, "sys_exit", "id=1 ret=8");	/* entered before the recording */
	CHECK(nout == 0 && keep == 1);
	ins(t300, "sys_enter", "id=-1");	/* no syscall: stays an instant */
	CHECK(nout == 0 && keep == 1);
	ins(t300, "sys_enter", "id=100000");
	CHECK_STR(got(), "B syscalls 300 syscall 100000");
	ins(t300, "sys_enter", "id=0");		/* the open one's exit lost */
	CHECK_STR(got(), "E syscalls 300; B syscalls 300 read");
	ins(t300, "sys_enter_openat", "fd=3");	/* no __syscall_nr */
	CHECK(nout == 0 && keep == 1);
	ins(t300, "sys_enter", "id='x'");
	CHECK(nout == 0 && keep == 1);
	feed(t300, MERGE_EV_BEGIN, "sys_enter", "id=1", NULL);
	CHECK(nout == 0 && keep == 1);
	feed(t300, MERGE_EV_INSTANT, NULL, NULL, NULL);
	CHECK(nout == 0 && keep == 1);
	ins(t300, "kvm_exit", "reason=1");
	CHECK(nout == 0 && keep == 1);
	/* a number in a hole of the name table (335), given unsigned */
	feed(t300, MERGE_EV_INSTANT, "sys_enter", "id=#335", NULL);
	CHECK_STR(got(), "E syscalls 300; B syscalls 300 syscall 335");
	ins(t300, "sys_exit", "id=335 ret=0");
	CHECK_STR(got(), "E syscalls 300");
	ins(t300, "sys_exit", "id=335 ret=0");	/* the same tracepoint again: an instant */
	CHECK(nout == 0 && keep == 1);
}

int main(void)
{
	t300 = merge_track_get(&tb, 1, 300, 300, merge_str_intern0(&tb, "app"), 0);
	t301 = merge_track_get(&tb, 1, 300, 301, merge_str_intern0(&tb, "app"), 0);
	merge_derive_init(&dv, &tb);
	test_sched();
	test_syscalls();
	CHECK(!dv.failed);
	merge_derive_free(&dv);
	merge_tables_free(&tb);
	return check_done();
}
