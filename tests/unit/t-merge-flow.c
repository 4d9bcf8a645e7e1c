/*
 * t-merge-flow.c - merge's flow matcher (merge/flow.c, rules in
 * docs/merge.md), fed events in time order as the merge loop feeds it:
 * a guest kick starts a "kick" flow that the next host I/O exit of the
 * same vCPU within 1 ms ends; a host injection starts an "irq" flow that
 * the guest's interrupt handling on that vCPU ends; a kick of unknown vCPU
 * serves any vCPU's exit, an exit of unknown vCPU takes the latest kick;
 * a start is ended once; vCPUs past the tracked ones count as unknown; the two instants of a sync marker are linked
 * whichever side comes first; names of neither side are marked to skip.
 */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "merge/merge.h"

#define MS		1000000ULL
#define NO_VCPU		(-1)

static uint32_t guest_trk, host_vcpu[3], host_other;
static uint64_t now = 10 * MS;
static struct merge_tables tb;		/* names and tracks (a pipeline's) */
static struct merge_flows flows;	/* the matcher's state (merge_flows_init) */

/* An event on @track named @name at the current time + @dt ns. */
static struct merge_event ev_at(uint32_t track, const char *name, int cpu, uint64_t dt)
{
	struct merge_event ev = {
		.ts_ns = now + dt, .track = track, .name = merge_str_intern0(&tb, name),
		.kind = MERGE_EV_INSTANT, .cpu = cpu,
	};

	return ev;
}

/* Feed @ev as the merge loop does (END events and skipped names never
 * reach merge_flow_check). */
static void feed(struct merge_event *ev)
{
	merge_flow_feed(&flows, ev);
}

/* Leave every pending start behind the 1 ms window. */
static void later(void)
{
	now += 10 * MS;
}

static void setup(void)
{
	uint32_t q = merge_str_intern0(&tb, "qemu");

	merge_flows_init(&flows, &tb);
	guest_trk = merge_track_get(&tb, 1, 50, 51, 0, 0);
	for (int i = 0; i < 3; i++) {
		host_vcpu[i] = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4243 + i, q, 0);
		merge_track(&tb, host_vcpu[i])->vcpu = (uint32_t)i + 1;	/* vCPU i's thread */
	}
	host_other = merge_track_get(&tb, MERGE_MACHINE_HOST, 4242, 4300, q, 0); /* no vCPU */
}

static void test_kick(void)
{
	struct merge_event k = ev_at(guest_trk, "virtqueue_notify", 0, 0);
	struct merge_event x = ev_at(host_vcpu[0], "kvm_pio", 0, 2000);
	struct merge_event x2 = ev_at(host_vcpu[0], "kvm_pio", 0, 3000);
	uint64_t before = flows.nr_flows;

	feed(&k);
	CHECK(k.flow_start_id != 0 && k.flow_id == 0);
	CHECK_STR(merge_str(&tb, k.flow_name), "kick");
	feed(&x);
	CHECK(x.flow_id == k.flow_start_id && x.flow_start_id == 0);
	CHECK(x.flow_ts_ns == k.ts_ns && x.flow_track == guest_trk);
	CHECK_STR(merge_str(&tb, x.flow_name), "kick");
	CHECK(flows.nr_flows == before + 1);
	/* a start is ended once */
	feed(&x2);
	CHECK(x2.flow_id == 0);
	CHECK(flows.nr_flows == before + 1);
	later();
}

static void test_window_and_vcpu(void)
{
	struct merge_event k = ev_at(guest_trk, "virtqueue_kick", 1, 0);
	struct merge_event other = ev_at(host_vcpu[0], "kvm_mmio", 0, 1000);
	struct merge_event late = ev_at(host_vcpu[1], "kvm_mmio", 1, MS + 1);
	struct merge_event k2 = ev_at(guest_trk, "vp_notify", 1, 2 * MS);
	struct merge_event edge = ev_at(host_vcpu[1], "exit: EPT_MISCONFIG", 1, 3 * MS);

	feed(&k);
	CHECK(k.flow_start_id != 0);
	/* another vCPU's exit does not take it */
	feed(&other);
	CHECK(other.flow_id == 0);
	/* its own vCPU's exit, but more than 1 ms later: not linked */
	feed(&late);
	CHECK(late.flow_id == 0);
	/* exactly 1 ms later still is */
	feed(&k2);
	feed(&edge);
	CHECK(edge.flow_id == k2.flow_start_id && edge.flow_id != k.flow_start_id);
	later();
}

static void test_unknown_vcpu(void)
{
	/* a kick of unknown vCPU waits in the shared slot for any vCPU */
	struct merge_event k = ev_at(guest_trk, "virtqueue_notify", NO_VCPU, 0);
	struct merge_event x = ev_at(host_vcpu[2], "kvm_hypercall", 2, 500);

	feed(&k);
	feed(&x);
	CHECK(k.flow_start_id && x.flow_id == k.flow_start_id);
	later();

	/* an exit on a thread of unknown vCPU takes the latest pending kick */
	struct merge_event k0 = ev_at(guest_trk, "virtqueue_notify", 0, 0);
	struct merge_event k1 = ev_at(guest_trk, "virtqueue_notify", 1, 100);
	struct merge_event xa = ev_at(host_other, "kvm_pio", 0, 200);
	struct merge_event xb = ev_at(host_other, "kvm_pio", 0, 300);

	feed(&k0);
	feed(&k1);
	feed(&xa);
	CHECK(xa.flow_id == k1.flow_start_id);
	feed(&xb);
	CHECK(xb.flow_id == k0.flow_start_id);
	later();
}

static void test_irq(void)
{
	struct merge_event inj = ev_at(host_vcpu[2], "kvm_inj_virq", 5, 0);
	struct merge_event wrong = ev_at(guest_trk, "irq_handler_entry", 1, 100);
	struct merge_event irq = ev_at(guest_trk, "irq_handler_entry", 2, 200);

	feed(&inj);
	CHECK(inj.flow_start_id != 0);
	CHECK_STR(merge_str(&tb, inj.flow_name), "irq");
	feed(&wrong);
	CHECK(wrong.flow_id == 0);
	feed(&irq);
	CHECK(irq.flow_id == inj.flow_start_id && irq.flow_track == host_vcpu[2]);
	CHECK_STR(merge_str(&tb, irq.flow_name), "irq");
	/* the guest's names are no ends on the host, and the reverse */
	struct merge_event hirq = ev_at(host_vcpu[0], "irq_handler_entry", 0, 300);
	struct merge_event gpio = ev_at(guest_trk, "kvm_pio", 0, 400);
	struct merge_event gk = ev_at(host_vcpu[0], "virtqueue_notify", 0, 500);

	feed(&hirq);
	feed(&gpio);
	feed(&gk);
	CHECK(!hirq.flow_id && !hirq.flow_start_id && !gpio.flow_id && !gk.flow_start_id);
	later();
}

static void test_markers(void)
{
	struct merge_event g = ev_at(guest_trk, "sync marker", 0, 0);
	struct merge_event h = ev_at(host_vcpu[0], "sync marker", 0, 100);
	struct merge_event h2 = ev_at(host_vcpu[1], "sync marker", 1, 200);
	struct merge_event g2 = ev_at(guest_trk, "sync marker", 1, 5 * MS);

	g.value = 7;
	h.value = 7;
	h2.value = 8;
	g2.value = 8;
	feed(&g);
	CHECK(g.flow_start_id != 0);
	CHECK_STR(merge_str(&tb, g.flow_name), "sync");
	feed(&h);
	CHECK(h.flow_id == g.flow_start_id && h.flow_track == guest_trk);
	/* host first this time, and no 1 ms window for markers */
	feed(&h2);
	CHECK(h2.flow_start_id != 0);
	feed(&g2);
	CHECK(g2.flow_id == h2.flow_start_id && g2.flow_ts_ns == h2.ts_ns);
	later();
}

/* Keys k and k + 256 share a slot of the pending-marker table: the second
 * starts a flow of its own (it ends no flow of the first), and its other
 * side links to it. */
static void test_marker_collision(void)
{
	struct merge_event g = ev_at(guest_trk, "sync marker", 0, 0);
	struct merge_event x = ev_at(guest_trk, "sync marker", 0, 100);
	struct merge_event h = ev_at(host_vcpu[0], "sync marker", 0, 200);

	g.value = 9;
	x.value = 9 + 256;
	h.value = 9 + 256;
	feed(&g);
	CHECK(g.flow_start_id != 0);
	feed(&x);
	CHECK(x.flow_id == 0 && x.flow_start_id != 0 && x.flow_start_id != g.flow_start_id);
	feed(&h);
	CHECK(h.flow_id == x.flow_start_id && h.flow_ts_ns == x.ts_ns);
	later();
}

static void test_skip(void)
{
	struct merge_event e = ev_at(host_vcpu[0], "some_function", 0, 0);
	struct merge_event end = ev_at(host_vcpu[0], "kvm_pio", 0, 100);
	struct merge_event k = ev_at(guest_trk, "virtqueue_notify", 0, 50);
	struct merge_event none = ev_at(guest_trk, "", 0, 60);

	CHECK(e.name >= flows.skip_cap || !flows.skip[e.name]);
	feed(&e);
	CHECK(e.name < flows.skip_cap && flows.skip[e.name]);
	CHECK(!e.flow_id && !e.flow_start_id);
	/* a class of either side is never skipped */
	CHECK(end.name >= flows.skip_cap || !flows.skip[end.name]);
	CHECK(k.name >= flows.skip_cap || !flows.skip[k.name]);
	/* an unnamed event and a slice's end are no flow ends */
	feed(&k);
	feed(&none);
	CHECK(!none.flow_id && !none.flow_start_id);
	end.kind = MERGE_EV_END;
	feed(&end);
	CHECK(end.flow_id == 0);
	later();
}

/* vCPU numbers past the ones tracked apart share the "unknown" slot: a
 * kick on guest CPU 5000 serves the exit of a thread of no vCPU; an
 * interrupt handled on CPU 5000 takes the latest injection of all (the
 * scan passes an older one after it). */
static void test_big_vcpu(void)
{
	struct merge_event k = ev_at(guest_trk, "virtqueue_notify", 5000, 0);
	struct merge_event x = ev_at(host_other, "kvm_pio", NO_VCPU, 1000);
	struct merge_event j1 = ev_at(host_vcpu[1], "kvm_inj_virq", 0, 2000);
	struct merge_event j0 = ev_at(host_vcpu[0], "kvm_inj_virq", 0, 3000);
	struct merge_event j2 = ev_at(host_vcpu[2], "kvm_inj_virq", 0, 1500);
	struct merge_event h = ev_at(guest_trk, "irq_handler_entry", 5000, 4000);

	feed(&k);
	feed(&x);
	CHECK(k.flow_start_id && x.flow_id == k.flow_start_id);
	feed(&j2);
	feed(&j1);
	feed(&j0);
	feed(&h);
	CHECK(j0.flow_start_id && h.flow_id == j0.flow_start_id);
	CHECK_STR(merge_str(&tb, h.flow_name), "irq");
	later();
}

int main(void)
{
	setup();
	test_kick();
	test_window_and_vcpu();
	test_unknown_vcpu();
	test_irq();
	test_markers();
	test_marker_collision();
	test_skip();
	test_big_vcpu();
	return check_done();
}
