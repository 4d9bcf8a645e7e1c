/*
 * t-merge-plan.c - the pure part of merge's plan (merge/plan.c), on inputs
 * that exist nowhere: which input is the host's and which a guest's and of
 * which VM (undeclared, meta-declared, DIR@NAME, DIR@host, a single input,
 * stack samples), labels and machines, each VM's clock input (markers.dat
 * before a Python directory, a trace.dat file when no directory has one,
 * whichever comes first; the first of two with markers.dat),
 * align's host input, the lane of a host's uftrace data, the clock maps'
 * kinds and frequencies (the host's, given or its own; a guest's own when
 * there is no host frequency; unscaled when none), and the host facts
 * gathered from the first host input that has each.
 */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "tsc.h"
#include "merge/plan.h"

#define GHZ2	2000000000ULL
#define GHZ3	3000000000ULL

static struct merge_input in[8];
static struct merge_source src[8];
static struct merge_plan plan;

/* Input @i: a directory @path holding trace.dat (@td) and/or markers.dat
 * (@mk), declaring domain @dom, frequency @hz. */
static void dir_in(int i, const char *path, int td, int mk, enum merge_dom dom, uint64_t hz)
{
	memset(&in[i], 0, sizeof(in[i]));
	snprintf(in[i].path, sizeof(in[i].path), "%s", path);
	in[i].is_dir = 1;
	in[i].has_td = td;
	in[i].has_markers = mk;
	in[i].dom = dom;
	in[i].hz = hz;
}

static int decide(int n, uint64_t hz)
{
	memset(src, 0, sizeof(src));
	return merge_plan_decide(in, n, hz, -7, &plan, src);
}

static void test_undeclared(void)
{
	dir_in(0, "h", 1, 0, MERGE_DOM_UNKNOWN, GHZ2);
	dir_in(1, "g", 0, 0, MERGE_DOM_UNKNOWN, GHZ3);
	CHECK(decide(2, 0) == 0);
	CHECK(plan.dom[0] == MERGE_DOM_HOST && plan.dom[1] == MERGE_DOM_GUEST);
	CHECK_STR(src[0].label, "host");
	CHECK_STR(src[1].label, "guest");
	CHECK(src[0].machine == MERGE_MACHINE_HOST && src[1].machine == 1);
	CHECK(plan.nr_vms == 1 && plan.vm_clock_in[0] == 1 && plan.host_in == 0);
	CHECK(src[0].lane == 1 && src[1].lane == 0);	/* host trace.dat + others */
	CHECK(plan.hz == GHZ2 && src[1].tsc_hz == GHZ2);	/* the host's, not its own */
	CHECK(src[0].clock.kind == ALIGN_CLOCK_HOST && src[1].clock.kind == ALIGN_CLOCK_GUEST);
	CHECK(src[1].clock.offset_tsc == -7);
	CHECK(plan.unscaled == -1);
	CHECK(!src[0].single && !src[1].single);
	CHECK_STR(src[1].path, "g");
}

static void test_declared_order(void)
{
	/* the meta says guest first, host second */
	dir_in(0, "g", 0, 1, MERGE_DOM_GUEST, 0);
	dir_in(1, "h", 1, 0, MERGE_DOM_HOST, GHZ2);
	dir_in(2, "g2", 0, 0, MERGE_DOM_UNKNOWN, 0);	/* undeclared: a guest */
	CHECK(decide(3, 0) == 0);
	CHECK(plan.dom[0] == MERGE_DOM_GUEST && plan.dom[1] == MERGE_DOM_HOST &&
	      plan.dom[2] == MERGE_DOM_GUEST);
	CHECK(plan.host_in == 1 && plan.nr_vms == 1);
	CHECK(src[0].machine == 1 && src[2].machine == 1);
	CHECK(plan.vm_clock_in[0] == 0);	/* the one with markers.dat stays */
	CHECK(src[0].tsc_hz == GHZ2 && src[2].tsc_hz == GHZ2);
}

static void test_named_vms(void)
{
	dir_in(0, "h", 1, 0, MERGE_DOM_HOST, GHZ2);
	dir_in(1, "a", 0, 0, MERGE_DOM_UNKNOWN, 0);
	strcpy(in[1].vm, "vm1");
	in[1].named = 1;
	dir_in(2, "b", 0, 1, MERGE_DOM_HOST, 0);	/* @vm2 overrides its meta */
	strcpy(in[2].vm, "vm2");
	in[2].named = 1;
	dir_in(3, "c", 0, 1, MERGE_DOM_UNKNOWN, 0);
	strcpy(in[3].vm, "vm1");	/* a meta vm= with no domain: a guest */
	dir_in(4, "x", 1, 0, MERGE_DOM_GUEST, 0);
	strcpy(in[4].vm, "host");	/* DIR@host */
	in[4].named = 1;
	CHECK(decide(5, 0) == 0);
	CHECK(plan.nr_vms == 2);
	CHECK_STR(plan.vm_name[0], "vm1");
	CHECK_STR(plan.vm_name[1], "vm2");
	CHECK(src[1].machine == 1 && src[3].machine == 1 && src[2].machine == 2);
	CHECK_STR(src[1].label, "guest vm1");
	CHECK_STR(src[2].label, "guest vm2");
	CHECK(plan.dom[4] == MERGE_DOM_HOST && src[4].machine == MERGE_MACHINE_HOST);
	CHECK(plan.host_in == 0);	/* the first host input with a trace.dat */
	/* an undeclared first input is the host only when no input is */
	dir_in(0, "h", 1, 0, MERGE_DOM_UNKNOWN, GHZ2);
	CHECK(decide(5, 0) == 0);
	CHECK(plan.dom[0] == MERGE_DOM_GUEST && plan.host_in == 4 && plan.nr_vms == 3);
	CHECK_STR(plan.vm_name[0], "");
	dir_in(0, "h", 1, 0, MERGE_DOM_HOST, GHZ2);
	CHECK(decide(5, 0) == 0);
	/* vm1: a, then c holding markers.dat where a has none */
	CHECK(plan.vm_clock_in[0] == 3 && plan.vm_clock_in[1] == 2);
}

static void test_single_and_files(void)
{
	dir_in(0, "py", 0, 0, MERGE_DOM_GUEST, GHZ3);
	CHECK(decide(1, 0) == 0);
	CHECK(plan.dom[0] == MERGE_DOM_HOST && src[0].single && src[0].lane == 0);
	CHECK_STR(src[0].label, "trace");
	CHECK(plan.host_in == 0);	/* a directory, even without trace.dat */
	CHECK(src[0].tsc_hz == GHZ3);

	/* trace-cmd's pair: two trace.dat files */
	memset(in, 0, sizeof(in));
	strcpy(in[0].path, "trace.dat");
	strcpy(in[1].path, "trace-guest.dat");
	in[0].is_file = in[1].is_file = 1;
	in[0].hz = GHZ2;
	CHECK(decide(2, 0) == 0);
	CHECK(plan.host_in == 0 && plan.vm_clock_in[0] == 1);
	CHECK(src[0].lane == 1);
}

static void test_samples(void)
{
	dir_in(0, "h", 1, 0, MERGE_DOM_UNKNOWN, GHZ2);
	dir_in(1, "s", 0, 0, MERGE_DOM_HOST, 0);	/* vmtrace-sample: host clock */
	in[1].has_samples = 1;
	dir_in(2, "t", 0, 0, MERGE_DOM_GUEST, 0);
	in[2].has_samples = 1;
	dir_in(3, "py", 0, 0, MERGE_DOM_UNKNOWN, 0);
	CHECK(decide(4, 0) == 0);
	CHECK(plan.dom[1] == MERGE_DOM_GUEST && src[1].machine == 1 && src[1].samples);
	CHECK(src[1].clock.kind == ALIGN_CLOCK_HOST);
	CHECK(src[2].clock.kind == ALIGN_CLOCK_GUEST);
	CHECK(plan.vm_clock_in[0] == 3);	/* never a samples directory */
}

static void test_frequencies(void)
{
	dir_in(0, "h", 1, 0, MERGE_DOM_UNKNOWN, GHZ2);
	dir_in(1, "g", 0, 0, MERGE_DOM_UNKNOWN, GHZ3);
	CHECK(decide(2, GHZ3) == 0);	/* --tsc-hz wins */
	CHECK(plan.hz == GHZ3 && src[0].tsc_hz == GHZ3);

	dir_in(0, "h", 1, 0, MERGE_DOM_UNKNOWN, 0);	/* no host frequency */
	dir_in(1, "g", 0, 0, MERGE_DOM_UNKNOWN, GHZ3);
	dir_in(2, "u", 0, 0, MERGE_DOM_UNKNOWN, 0);
	dir_in(3, "ns", 0, 0, MERGE_DOM_UNKNOWN, 0);
	in[3].is_ns = 1;
	CHECK(decide(4, 0) == 0);
	CHECK(plan.hz == 0 && src[1].tsc_hz == GHZ3);	/* the guest's own */
	CHECK(plan.unscaled == 0 && src[0].tsc_hz == VT_NS_PER_SEC);
	CHECK(src[3].clock.kind == ALIGN_CLOCK_NS);

	/* a host input in ns gives no host frequency */
	dir_in(0, "h", 1, 0, MERGE_DOM_UNKNOWN, GHZ2);
	in[0].is_ns = 1;
	dir_in(1, "g", 0, 0, MERGE_DOM_UNKNOWN, GHZ3);
	CHECK(decide(2, 0) == 0);
	CHECK(plan.hz == 0 && src[1].tsc_hz == GHZ3 && src[0].clock.kind == ALIGN_CLOCK_NS);
}

/* A VM's clock input among several: a directory over a trace.dat file
 * given before it, a trace.dat file never over a directory, the first of
 * two directories that both hold markers.dat. */
static void test_clock_inputs(void)
{
	dir_in(0, "h", 1, 0, MERGE_DOM_HOST, GHZ2);
	memset(&in[1], 0, sizeof(in[1]));
	strcpy(in[1].path, "guest.dat");
	in[1].is_file = 1;
	dir_in(2, "py", 0, 0, MERGE_DOM_GUEST, 0);
	CHECK(decide(3, 0) == 0);
	CHECK(plan.nr_vms == 1 && plan.vm_clock_in[0] == 2);
	in[3] = in[1];
	CHECK(decide(4, 0) == 0);	/* a file after the directory */
	CHECK(plan.vm_clock_in[0] == 2);
	dir_in(1, "m1", 0, 1, MERGE_DOM_GUEST, 0);
	dir_in(2, "m2", 0, 1, MERGE_DOM_GUEST, 0);
	CHECK(decide(3, 0) == 0);
	CHECK(plan.vm_clock_in[0] == 1);
}

static void test_host_facts(void)
{
	dir_in(0, "h1", 1, 0, MERGE_DOM_HOST, GHZ2);
	in[0].host.nr_vthreads = 1;
	in[0].host.vthread_tid[0] = 101;
	dir_in(1, "h2", 0, 0, MERGE_DOM_HOST, 0);
	in[1].host.qemu_pid = 100;
	in[1].host.nr_qtasks = 2;
	in[1].host.qtask_tid[0] = 100;
	in[1].host.qtask_tid[1] = 102;
	in[1].host.nr_vthreads = 1;
	in[1].host.vthread_tid[0] = 999;
	dir_in(2, "g", 0, 0, MERGE_DOM_GUEST, 0);
	in[2].host.qemu_pid = 555;	/* a guest's facts are not the host's */
	dir_in(3, "h3", 0, 0, MERGE_DOM_HOST, 0);	/* a later host's tasks: not taken */
	in[3].host.qemu_pid = 100;
	in[3].host.nr_qtasks = 1;
	in[3].host.qtask_tid[0] = 300;
	CHECK(decide(4, 0) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(src[i].host.qemu_pid == 100 && src[i].host.nr_qtasks == 2);
		CHECK(src[i].host.qtask_tid[1] == 102);
		CHECK(src[i].host.nr_vthreads == 1 && src[i].host.vthread_tid[0] == 101);
	}
	CHECK(src[2].host.qemu_pid == 0);
	CHECK(src[3].host.nr_qtasks == 2 && src[3].host.qtask_tid[0] == 100);
	/* QEMU's pid from a host input without tasks: the tasks of a later one */
	in[1].host.nr_qtasks = 0;
	CHECK(decide(4, 0) == 0);
	CHECK(src[0].host.qemu_pid == 100 && src[0].host.nr_qtasks == 1);
	CHECK(src[0].host.qtask_tid[0] == 300);
}

int main(void)
{
	test_undeclared();
	test_declared_order();
	test_named_vms();
	test_single_and_files();
	test_samples();
	test_frequencies();
	test_clock_inputs();
	test_host_facts();
	return check_done();
}
