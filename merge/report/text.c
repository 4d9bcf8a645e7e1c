/*
 * text.c - the terminal output of `vmtrace report`: first the answer (the
 * slowest Python calls and guest syscalls, each split into its critical
 * path's parts), then link coverage, the per-stage table, the slowest
 * requests with their Python stacks, vCPU and thread states, VM exits per
 * vCPU and time per function.  Runs once after the merge (command
 * thread); no allocation beyond stdio.
 */
#include <inttypes.h>
#include <string.h>
#include "err.h"
#include "report.h"

#define MAX_MASKS	16	/* distinct link masks listed */
#define US_BUF		32

/* ns as microseconds with 3 decimals (exact to the ns) */
static const char *us(uint64_t ns, char *buf)
{
	snprintf(buf, US_BUF, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return buf;
}

/* The label of part @p of call @c ("host fdatasync" for the disk). */
const char *report_part_label(const struct report *r, const struct report_call *c, int p,
			      char *buf, size_t len)
{
	if (p == RP_HOST_IO && c->host_sys) {
		snprintf(buf, len, "host %s", report_str(r, c->host_sys));
		return buf;
	}
	return report_part_names[p];
}

/* Part indexes of @c by share, largest first; how many are non-zero. */
int report_call_order(const struct report_call *c, int *order)
{
	int n = 0;

	for (int p = 0; p < RP_NR; p++)
		if (c->part[p])
			order[n++] = p;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && c->part[order[j]] > c->part[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	return n;
}

static void headline(const struct report *r, FILE *fp, int sys, int top)
{
	size_t n = report_nr_calls(r, sys);
	char a[US_BUF], lb[96];

	fprintf(fp, "Slowest %s, each split into disjoint parts that sum to it "
		"(docs/report.md: critical path):\n", sys ? "guest syscalls of the traced program" :
		"Python/C calls (own time >= half of the call; no start-up frames unless --all-calls)");
	if (!n) {
		fprintf(fp, "  none in the inputs (%s)\n", sys ?
			"no guest kernel syscall events of threads with traced calls" :
			"no Python/C tracer data");
		return;
	}
	for (size_t i = 0; i < n && i < (size_t)top; i++) {
		const struct report_call *c = report_call_at(r, sys, i);
		int order[RP_NR], k = report_call_order(c, order), shown = 0;
		uint64_t rest = 0;

		fprintf(fp, "  %s %.1f ms =", report_str(r, c->name), (double)c->dur / 1e6);
		for (int j = 0; j < k; j++) {
			double pct = 100.0 * (double)c->part[order[j]] / (double)c->dur;

			if (pct < 1.0 || shown == 6) {
				rest += c->part[order[j]];
				continue;
			}
			fprintf(fp, "%s %.0f%% %s", shown++ ? "," : "", pct,
				report_part_label(r, c, order[j], lb, sizeof(lb)));
		}
		if (rest)
			fprintf(fp, "%s %.0f%% other parts", shown ? "," : "",
				100.0 * (double)rest / (double)c->dur);
		fprintf(fp, "\n      %s %d tid %d at %s us:", c->machine ? "guest" : "host",
			(int)c->machine, c->tid, us(c->begin, a));
		for (int j = 0; j < k; j++)
			fprintf(fp, " %s=%s", report_part_ids[order[j]], us(c->part[order[j]], a));
		fprintf(fp, "; vCPU preempted during the call %s us", us(c->preempt_overlap, a));
		if (c->waker)
			fprintf(fp, "; woken by %s", report_str(r, c->waker));
		fprintf(fp, "\n");
	}
}

static void vcpu_states(const struct report *r, FILE *fp)
{
	size_t n = report_nr_vcpus(r);
	char a[US_BUF];

	fprintf(fp, "\nvCPU states on the host (us; from kvm_entry/kvm_exit, kvm_userspace_exit "
		"and the host's sched_switch/sched_wakeup):\n");
	if (!n) {
		fprintf(fp, "  no vCPU threads in the host recording\n");
		return;
	}
	fprintf(fp, "  %-5s %-8s", "vCPU", "tid");
	for (int s = 0; s < RV_NR; s++)
		fprintf(fp, " %16s", report_vstate_names[s]);
	fprintf(fp, "\n");
	for (size_t i = 0; i < n; i++) {
		const struct report_vcpu *v = report_vcpu_at(r, i);

		fprintf(fp, "  %-5d %-8d", v->vcpu, v->tid);
		for (int s = 0; s < RV_NR; s++)
			fprintf(fp, " %16s", us(v->ns[s], a));
		fprintf(fp, "\n");
	}
	if (!report_have_exit_slices(r))
		fprintf(fp, "  no kvm_entry/kvm_exit events (PVM, or not recorded): guest mode and VM "
			"exits are not told apart, a vCPU on a CPU is counted as unknown\n");
}

static void thread_states(const struct report *r, FILE *fp, int max)
{
	size_t n = report_nr_threads(r);
	char a[US_BUF];

	fprintf(fp, "\nThread states (us; from sched_switch/sched_wakeup and irq events; "
		"by running time):\n");
	if (!n) {
		fprintf(fp, "  no scheduling events in the inputs\n");
		return;
	}
	fprintf(fp, "  %-8s %-8s", "machine", "tid");
	for (int s = 0; s < RT_NR; s++)
		fprintf(fp, " %16s", report_tstate_names[s]);
	fprintf(fp, "  name\n");
	for (size_t i = 0; i < n && i < (size_t)max; i++) {
		const struct report_thread *t = report_thread_at(r, i);

		fprintf(fp, "  %-8s %-8d", t->machine ? "guest" : "host", t->tid);
		for (int s = 0; s < RT_NR; s++)
			fprintf(fp, " %16s", us(t->ns[s], a));
		fprintf(fp, "  %s\n", t->name ? report_str(r, t->name) : "?");
	}
	if (n > (size_t)max)
		fprintf(fp, "  ... %zu more threads\n", n - (size_t)max);
}

static void coverage(const struct report *r, FILE *fp)
{
	uint32_t masks[MAX_MASKS];
	uint64_t counts[MAX_MASKS];
	size_t n = report_masks(r, masks, counts, MAX_MASKS), nq = report_nr_reqs(r);
	char mb[RL_NR + 1];

	fprintf(fp, "\nI/O requests: %zu guest block requests; %" PRIu64 " guest syscalls, %"
		PRIu64 " host kicks, %" PRIu64 " QEMU I/O syscalls, %" PRIu64
		" injections, %" PRIu64 " guest virtio irqs (of %" PRIu64 " events)\n",
		nq, report_nr_syscalls(r), report_nr_kicks(r), report_nr_host_io(r),
		report_nr_injects(r), report_nr_guest_irqs(r), report_events(r));
	if (!nq) {
		fprintf(fp, "  no block_rq_issue/insert events: record the guest with "
			"`vmtrace record --guest` (block:*, irq:*, syscalls)\n");
		return;
	}
	fprintf(fp, "\nLinks present (%s = %s", report_link_chars, report_link_names[0]);
	for (int i = 1; i < RL_NR; i++)
		fprintf(fp, ", %s", report_link_names[i]);
	fprintf(fp, "; '.' = missing in the data, not guessed):\n");
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "  %s  %8" PRIu64 " requests\n", report_mask_str(masks[i], mb), counts[i]);
	for (int l = 0; l < RL_NR; l++) {
		uint64_t have = 0;

		for (size_t i = 0; i < nq; i++)
			have += !!(report_req_at(r, i)->mask & (1u << l));
		if (have < nq)
			fprintf(fp, "  missing %-14s in %" PRIu64 " of %zu requests\n",
				report_link_names[l], nq - have, nq);
	}
}

/* How each link was matched (docs/report.md, "Matching rules"), the
 * guesses counted, and the offset rule found per guest device. */
static void methods(const struct report *r, FILE *fp)
{
	uint64_t guess = 0, greq = 0;

	fprintf(fp, "\nHow the links were matched (time-guess = time order only):\n");
	for (int l = 0; l < RL_NR; l++) {
		int first = 1;

		for (int h = 1; h < RH_NR; h++) {
			uint64_t n = report_how_count(r, l, h);

			if (!n || l == RL_HOST_END)
				continue;
			if (first)
				fprintf(fp, "  %-14s", report_link_names[l]);
			fprintf(fp, "%s %" PRIu64 " %s", first ? "" : ",", n, report_how_names[h]);
			first = 0;
			if (h == RH_GUESS)
				guess += n;
		}
		if (!first)
			fprintf(fp, "\n");
	}
	for (size_t i = 0; i < report_nr_reqs(r); i++) {
		const struct report_req *q = report_req_at(r, i);
		int g = 0;

		for (int l = 0; l < RL_NR; l++)
			g |= (q->mask & (1u << l)) && q->how[l] == RH_GUESS;
		greq += g;
	}
	fprintf(fp, "  guesses: %" PRIu64 " links in %" PRIu64 " of %zu requests\n", guess, greq,
		report_nr_reqs(r));
	const uint64_t *be = report_bio_extents(r);

	if (be[0] + be[1] + be[2])
		fprintf(fp, "  QEMU's bios on image files (extents.tsv): %" PRIu64 " mapped to file "
			"offsets, %" PRIu64 " in unwritten or changed extents, %" PRIu64
			" outside the files' extents\n", be[0], be[1], be[2]);
	for (size_t i = 0; i < report_nr_devs(r); i++) {
		uint32_t machine, dev;
		int64_t fd, delta;

		if (report_dev_map(r, i, &machine, &dev, &fd, &delta) && report_bdev(r, fd))
			fprintf(fp, "  device %u:%u (guest %u): host block device %u:%u (QEMU's "
				"bios), byte = sector * 512 + %" PRId64 "\n",
				dev >> 20, dev & 0xfffff, machine, report_bdev(r, fd) >> 20,
				report_bdev(r, fd) & 0xfffff, delta);
		else if (report_dev_map(r, i, &machine, &dev, &fd, &delta))
			fprintf(fp, "  device %u:%u (guest %u): QEMU fd %" PRId64
				", file offset = sector * 512 + %" PRId64 "\n",
				dev >> 20, dev & 0xfffff, machine, fd, delta);
		else
			fprintf(fp, "  device %u:%u (guest %u): no offset rule holds (not a raw "
				"image, or no offsets recorded): its host I/O is a time guess\n",
				dev >> 20, dev & 0xfffff, machine);
	}
}

static void stages(const struct report *r, FILE *fp)
{
	char a[US_BUF], b[US_BUF], c[US_BUF], d[US_BUF];

	fprintf(fp, "\nPer-stage latency (us; nearest-rank percentiles over the requests "
		"with both links):\n");
	fprintf(fp, "  %-22s %-40s %8s %12s %12s %12s %12s\n", "stage", "from -> to", "count",
		"p50", "p90", "p99", "max");
	for (int s = 0; s < REPORT_NR_STAGES; s++) {
		const struct report_pct *p = report_stage_pct(r, s);

		if (!p->n) {
			fprintf(fp, "  %-22s %-40s %8s  (a link missing in every request)\n",
				report_stages[s].name, report_stages[s].label, "0");
			continue;
		}
		fprintf(fp, "  %-22s %-40s %8" PRIu64 " %12s %12s %12s %12s\n",
			report_stages[s].name, report_stages[s].label, p->n, us(p->p50, a),
			us(p->p90, b), us(p->p99, c), us(p->max, d));
	}
}

static void slowest(const struct report *r, FILE *fp, int top)
{
	size_t n;
	const uint32_t *idx = report_slowest(r, &n);
	char a[US_BUF], mb[RL_NR + 1];

	/* (report_print_text: only with requests) */
	fprintf(fp, "\nSlowest %d requests (end to end: syscall entry or issue -> syscall "
		"return or completion):\n", (int)(n < (size_t)top ? n : (size_t)top));
	for (size_t i = 0; i < n && i < (size_t)top; i++) {
		const struct report_req *q = report_req_at(r, idx[i]);
		const struct report_sys *s = report_sys_at(r, q->sys);

		fprintf(fp, "  #%zu %s us  [%s]  %s%.0u dev %u:%u sector %" PRIu64 " +%u %s",
			i + 1, us(report_req_latency(q), a), report_mask_str(q->mask, mb),
			q->machine ? "guest" : "host", q->machine, q->dev >> 20, q->dev & ((1u << 20) - 1), q->sector,
			q->nr_sector, report_str(r, q->rwbs));
		if (s)
			fprintf(fp, " %s() tid %d", report_str(r, s->name), s->tid);
		if (q->host_tid >= 0)
			fprintf(fp, "; host %s() tid %d", report_str(r, q->host_sys), q->host_tid);
		fprintf(fp, "\n     ");
		for (int st = 0; st < REPORT_NR_STAGES; st++) {
			const struct report_stage *g = &report_stages[st];
			uint32_t need = 1u << g->from | 1u << g->to;

			if ((q->mask & need) == need && strncmp(g->label, "TOTAL", 5))
				fprintf(fp, " %s %s", g->name, us(q->t[g->to] - q->t[g->from], a));
		}
		fprintf(fp, "\n      python: %s\n",
			s && s->stack ? report_str(r, s->stack) : "(no Python call in the data)");
	}
}

static void exits(const struct report *r, FILE *fp)
{
	char a[US_BUF];
	size_t n = report_nr_exits(r);

	fprintf(fp, "\nVM exits per vCPU:\n");
	if (!n) {
		fprintf(fp, "  none in the data (no host kvm events recorded)\n");
		return;
	}
	if (!report_have_exit_slices(r))
		fprintf(fp, "  no kvm_exit events (PVM, or kvm:kvm_exit not recorded): counting "
			"the exit-causing events kvm_pio/kvm_mmio/kvm_fast_mmio/"
			"kvm_userspace_exit/kvm_hypercall instead (count only, no time)\n");
	fprintf(fp, "  %-6s %-36s %10s %14s %12s\n", "vCPU", "reason", "count", "time us",
		"mean us");
	for (size_t i = 0; i < n; i++) {
		const struct report_exit *e = report_exit_at(r, i);
		char v[16], b[US_BUF];

		if (!e->is_slice && report_have_exit_slices(r))
			continue;	/* the exit slices say it all */
		if (e->vcpu < 0)
			snprintf(v, sizeof(v), "?");
		else
			snprintf(v, sizeof(v), "%d", e->vcpu);
		if (e->is_slice)
			fprintf(fp, "  %-6s %-36s %10" PRIu64 " %14s %12s\n", v,
				report_str(r, e->name), e->count, us(e->ns, a), us(e->ns / e->count, b));
		else
			fprintf(fp, "  %-6s %-36s %10" PRIu64 " %14s %12s\n", v,
				report_str(r, e->name), e->count, "-", "-");
	}
}

static void functions(const struct report *r, FILE *fp, int max)
{
	char a[US_BUF], b[US_BUF], c[US_BUF];
	size_t n = report_nr_fns(r);
	int unknown = 0;

	fprintf(fp, "\nTime per function (Python/C tracer slices; inclusive; waiting = inside syscalls of its "
		"thread; recursion counted per call):\n");
	if (!n) {
		fprintf(fp, "  no function slices (Python/C tracer data) in the inputs\n");
		return;
	}
	fprintf(fp, "  %10s %14s %14s %14s %6s  %s\n", "calls", "total us", "running us",
		"waiting us", "wait%", "function");
	for (size_t i = 0; i < n && i < (size_t)max; i++) {
		const struct report_fn *f = report_fn_at(r, i);
		uint64_t w = f->wait_ns > f->incl_ns ? f->incl_ns : f->wait_ns;

		if (!f->wait_known) {
			fprintf(fp, "  %10" PRIu64 " %14s %14s %14s %6s  %s\n", f->calls,
				us(f->incl_ns, a), "-", "-", "-", report_str(r, f->name));
			unknown = 1;
			continue;
		}
		fprintf(fp, "  %10" PRIu64 " %14s %14s %14s %5.1f%%  %s\n", f->calls,
			us(f->incl_ns, a), us(f->incl_ns - w, b), us(w, c),
			f->incl_ns ? 100.0 * (double)w / (double)f->incl_ns : 0.0,
			report_str(r, f->name));
	}
	if (unknown)
		fprintf(fp, "  -: unknown, no syscall events of the machine (a guest: record it "
			"with `vmtrace record --guest`)\n");
	if (n > (size_t)max)
		fprintf(fp, "  ... %zu more (--functions N)\n", n - (size_t)max);
}

int report_print_text(const struct report *r, FILE *fp, const struct report_opts *o)
{
	headline(r, fp, 0, o->top);
	fprintf(fp, "\n");
	headline(r, fp, 1, o->top);
	coverage(r, fp);
	if (report_nr_reqs(r)) {
		methods(r, fp);
		stages(r, fp);
		slowest(r, fp, o->top);
	}
	vcpu_states(r, fp);
	thread_states(r, fp, o->top);
	exits(r, fp);
	functions(r, fp, o->fns);
	if (fflush(fp) || ferror(fp))
		return vt_err_errno("%s: write error", o->text_out ? o->text_out : "standard output");
	return 0;
}
