/*
 * html.c - `vmtrace report --html OUT.html`: one self-contained page
 * (inline CSS, SVG and a few lines of JS; no network fetch) opening with
 * the slowest calls and syscalls (a stacked bar of their parts each), then
 * the per-stage table and histograms, a timeline of the slowest requests, VM
 * exits per vCPU and time per function.  Runs once after the merge
 * (command thread); writes through stdio.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "err.h"
#include "report.h"

#define HIST_BINS	24	/* log-scale bins per histogram */
#define HIST_W		330
#define HIST_H		120
#define TL_W		1000	/* timeline drawing width (px) */
#define TL_ROW		22
#define TL_LABEL	170
#define US_BUF		32
#define MAX_MASKS	16
#define STACK_SHOWN	3	/* innermost frames shown in the table */

/* colours of the chain stages (non-total ones, in report_stages order) */
static const char *const stage_color[REPORT_NR_STAGES] = {
	"#8e6bbf", "#4e79a7", "#76b7b2", "#f28e2b", "#e15759", "#b6002a", "#ff9da7",
	"#edc948", "#59a14f", "#9c755f", "#bab0ac", "#555", "#555", "#555",
};

static int is_total(int s)
{
	return !strncmp(report_stages[s].label, "TOTAL", 5);
}

static const char *us(uint64_t ns, char *buf)
{
	snprintf(buf, US_BUF, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return buf;
}

static void esc(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '&': fputs("&amp;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fputc(*s, fp);
		}
	}
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fafafa}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid #ddd;padding-bottom:4px}"
	"table{border-collapse:collapse;background:#fff;font-size:13px}"
	"td,th{padding:3px 8px;border:1px solid #e3e3e3;text-align:right}"
	"th{background:#f0f0f0}td.l,th.l{text-align:left}"
	".mono{font-family:ui-monospace,monospace}"
	".hists{display:flex;flex-wrap:wrap;gap:12px}"
	".hist{background:#fff;border:1px solid #e3e3e3;padding:6px 8px}"
	".hist h3{font-size:13px;margin:0 0 2px}.hist .sub{font-size:11px;color:#666}"
	".sw{display:inline-block;width:11px;height:11px;margin:0 4px 0 10px;vertical-align:-1px}"
	".note{color:#666;font-size:12px}.stack{font-size:12px;color:#333}"
	".bar{display:inline-block;height:10px}"
	".stk{display:flex;width:600px;height:14px;background:#eee}.stk .bar{height:14px}"
	".parts{font-size:12px;color:#333;max-width:900px}";

/* colours of the parts of a call (enum report_part order) */
static const char *const part_color[RP_NR] = {
	"#4e79a7", "#a0cbe8", "#86bcb6", "#d62728", "#f1ce63", "#ff9d9a", "#b07aa1",
	"#d4a6c8", "#f28e2b", "#8c564b", "#ffbe7d", "#e377c2", "#59a14f", "#bab0ac",
	"#79706e", "#dddddd",
};

#define BAR_W	600	/* px of a call's stacked bar */

static void headline(const struct report *r, FILE *fp, int sys, int top)
{
	size_t n = report_nr_calls(r, sys);
	char a[US_BUF], lb[96];

	fprintf(fp, "<h2>Slowest %s</h2>", sys ? "guest syscalls of the traced program" :
		"Python/C calls");
	if (!n) {
		fprintf(fp, "<p class=note>None in the inputs.</p>");
		return;
	}
	fprintf(fp, "<table class=calls><tr><th class=l>call</th><th>ms</th>"
		"<th class=l>where the time went (parts sum to the call)</th></tr>");
	for (size_t i = 0; i < n && i < (size_t)top; i++) {
		const struct report_call *c = report_call_at(r, sys, i);
		int order[RP_NR], k = report_call_order(c, order);

		fprintf(fp, "<tr><td class='l mono'>");
		esc(fp, report_str(r, c->name));
		fprintf(fp, "</td><td>%.1f</td><td class=l><div class=stk>", (double)c->dur / 1e6);
		for (int j = 0; j < k; j++) {
			int p = order[j];
			double pct = 100.0 * (double)c->part[p] / (double)c->dur;

			fprintf(fp, "<span class=bar data-part='%s' title='%.0f%% %s' "
				"style='width:%.1fpx;background:%s'></span>", report_part_ids[p], pct,
				report_part_label(r, c, p, lb, sizeof(lb)),
				(double)c->part[p] * BAR_W / (double)c->dur, part_color[p]);
		}
		fprintf(fp, "</div><div class=parts>");
		for (int j = 0; j < k; j++) {
			int p = order[j];

			fprintf(fp, "%s<span class=sw style='background:%s'></span>%.0f%% ",
				j ? ", " : "", part_color[p],
				100.0 * (double)c->part[p] / (double)c->dur);
			esc(fp, report_part_label(r, c, p, lb, sizeof(lb)));
			fprintf(fp, " (%s &micro;s)", us(c->part[p], a));
		}
		fprintf(fp, "; vCPU preempted during the call %s &micro;s; tid %d",
			us(c->preempt_overlap, a), c->tid);
		if (c->waker) {
			fprintf(fp, "; woken by ");
			esc(fp, report_str(r, c->waker));
		}
		fprintf(fp, "</div></td></tr>");
	}
	fprintf(fp, "</table>");
}

static void states(const struct report *r, FILE *fp, int top)
{
	char a[US_BUF];
	size_t n = report_nr_vcpus(r);

	fprintf(fp, "<h2>vCPU states on the host (&micro;s)</h2>");
	if (!n) {
		fprintf(fp, "<p class=note>No vCPU threads in the host recording.</p>");
	} else {
		fprintf(fp, "<table><tr><th>vCPU</th><th>tid</th>");
		for (int s = 0; s < RV_NR; s++)
			fprintf(fp, "<th>%s</th>", report_vstate_names[s]);
		fprintf(fp, "</tr>");
		for (size_t i = 0; i < n; i++) {
			const struct report_vcpu *v = report_vcpu_at(r, i);

			fprintf(fp, "<tr><td>%d</td><td>%d</td>", v->vcpu, v->tid);
			for (int s = 0; s < RV_NR; s++)
				fprintf(fp, "<td>%s</td>", us(v->ns[s], a));
			fprintf(fp, "</tr>");
		}
		fprintf(fp, "</table>");
		if (!report_have_exit_slices(r))
			fprintf(fp, "<p class=note>No kvm_entry/kvm_exit events (PVM, or not "
				"recorded): guest mode and VM exits are not told apart, a vCPU on a "
				"CPU is counted as unknown.</p>");
	}
	n = report_nr_threads(r);
	fprintf(fp, "<h2>Thread states (&micro;s)</h2>");
	if (!n) {
		fprintf(fp, "<p class=note>No scheduling events in the inputs.</p>");
		return;
	}
	fprintf(fp, "<table><tr><th class=l>machine</th><th>tid</th>");
	for (int s = 0; s < RT_NR; s++)
		fprintf(fp, "<th>%s</th>", report_tstate_names[s]);
	fprintf(fp, "<th class=l>name</th></tr>");
	for (size_t i = 0; i < n && i < (size_t)top; i++) {
		const struct report_thread *t = report_thread_at(r, i);

		fprintf(fp, "<tr><td class=l>%s</td><td>%d</td>", t->machine ? "guest" : "host",
			t->tid);
		for (int s = 0; s < RT_NR; s++)
			fprintf(fp, "<td>%s</td>", us(t->ns[s], a));
		fprintf(fp, "<td class=l>");
		esc(fp, t->name ? report_str(r, t->name) : "?");
		fprintf(fp, "</td></tr>");
	}
	fprintf(fp, "</table>");
}

static void coverage(const struct report *r, FILE *fp)
{
	uint32_t masks[MAX_MASKS];
	uint64_t counts[MAX_MASKS];
	size_t n = report_masks(r, masks, counts, MAX_MASKS);
	char mb[RL_NR + 1];

	fprintf(fp, "<h2>Links present per request</h2><p class=note>Letters %s = ",
		report_link_chars);
	for (int i = 0; i < RL_NR; i++)
		fprintf(fp, "%s%c %s", i ? ", " : "", report_link_chars[i], report_link_names[i]);
	fprintf(fp, "; '.' = the link is missing in the data (not guessed).</p>"
		"<table><tr><th class=l>links</th><th>requests</th></tr>");
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "<tr><td class='l mono'>%s</td><td>%" PRIu64 "</td></tr>",
			report_mask_str(masks[i], mb), counts[i]);
	fprintf(fp, "</table>");
}

static void stage_table(const struct report *r, FILE *fp)
{
	char a[US_BUF], b[US_BUF], c[US_BUF], d[US_BUF];

	fprintf(fp, "<h2>Per-stage latency (&micro;s)</h2><table><tr><th class=l>stage</th>"
		"<th class=l>from &rarr; to</th><th>count</th><th>p50</th><th>p90</th>"
		"<th>p99</th><th>max</th></tr>");
	for (int s = 0; s < REPORT_NR_STAGES; s++) {
		const struct report_pct *p = report_stage_pct(r, s);

		fprintf(fp, "<tr><td class=l><span class=sw style='background:%s'></span>%s</td>"
			"<td class=l>", stage_color[s], report_stages[s].name);
		esc(fp, report_stages[s].label);
		if (p->n)
			fprintf(fp, "</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%s</td>"
				"<td>%s</td></tr>", p->n, us(p->p50, a), us(p->p90, b),
				us(p->p99, c), us(p->max, d));
		else
			fprintf(fp, "</td><td>0</td><td colspan=4 class=note>a link missing in "
				"every request</td></tr>");
	}
	fprintf(fp, "</table>");
}

static void histogram(const struct report *r, FILE *fp, int s)
{
	size_t n;
	const uint64_t *v = report_stage_samples(r, s, &n);
	uint64_t bins[HIST_BINS] = { 0 }, top = 0;
	char a[US_BUF], b[US_BUF];

	if (!n)
		return;
	double lo = log10((double)(v[0] ? v[0] : 1)), hi = log10((double)(v[n - 1] ? v[n - 1] : 1));

	if (hi - lo < 1e-9) {
		lo -= 0.5;
		hi += 0.5;
	}
	for (size_t i = 0; i < n; i++) {
		double x = log10((double)(v[i] ? v[i] : 1));
		int k = (int)((x - lo) / (hi - lo) * HIST_BINS);

		k = k < 0 ? 0 : k >= HIST_BINS ? HIST_BINS - 1 : k;
		if (++bins[k] > top)
			top = bins[k];
	}
	fprintf(fp, "<div class=hist><h3>%s</h3><div class=sub>", report_stages[s].name);
	esc(fp, report_stages[s].label);
	fprintf(fp, " &middot; n=%zu</div><svg class=histsvg width=%d height=%d "
		"viewBox='0 0 %d %d'>", n, HIST_W, HIST_H + 18, HIST_W, HIST_H + 18);
	double bw = (double)HIST_W / HIST_BINS;

	for (int k = 0; k < HIST_BINS; k++) {
		if (!bins[k])
			continue;
		double h = (double)bins[k] / (double)top * (HIST_H - 4);
		double e0 = pow(10, lo + (hi - lo) * k / HIST_BINS);
		double e1 = pow(10, lo + (hi - lo) * (k + 1) / HIST_BINS);

		fprintf(fp, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'>"
			"<title>%.3f..%.3f us: %" PRIu64 "</title></rect>", k * bw + 1,
			HIST_H - h, bw - 2, h, stage_color[s], e0 / 1000, e1 / 1000, bins[k]);
	}
	fprintf(fp, "<line x1=0 y1=%d x2=%d y2=%d stroke='#999'/>"
		"<text x=0 y=%d font-size=11 fill='#444'>%s us</text>"
		"<text x=%d y=%d font-size=11 fill='#444' text-anchor=end>%s us (log)</text>"
		"</svg></div>", HIST_H, HIST_W, HIST_H, HIST_H + 14, us(v[0], a), HIST_W,
		HIST_H + 14, us(v[n - 1], b));
}

/* The innermost STACK_SHOWN frames of a stack (the whole on hover). */
static void short_stack(FILE *fp, const char *stack)
{
	const char *p = stack + strlen(stack);
	int seps = 0;

	while (p > stack) {
		p--;
		if (!strncmp(p, " > ", 3) && ++seps == STACK_SHOWN)
			break;
	}
	fprintf(fp, "<span title=\"");
	esc(fp, stack);
	fprintf(fp, "\">%s", seps == STACK_SHOWN ? "&hellip;" : "");
	esc(fp, p);
	fprintf(fp, "</span>");
}

static void timeline(const struct report *r, FILE *fp, int top)
{
	size_t n;
	const uint32_t *idx = report_slowest(r, &n);
	uint64_t span = 1;
	char a[US_BUF], mb[RL_NR + 1];

	if ((size_t)top < n)
		n = (size_t)top;
	if (!n)
		return;
	/* each row starts at its request's first link; one common scale */
	for (size_t i = 0; i < n; i++) {
		const struct report_req *q = report_req_at(r, idx[i]);
		uint64_t first = UINT64_MAX, last = 0;

		for (int l = 0; l < RL_NR; l++)
			if (q->mask & (1u << l)) {
				first = q->t[l] < first ? q->t[l] : first;
				last = q->t[l] > last ? q->t[l] : last;
			}
		if (last - first > span)
			span = last - first;
	}
	fprintf(fp, "<h2>Timeline of the %zu slowest requests</h2><p class=note>Each row "
		"starts at the request's first link; segments are the chain stages present "
		"(gaps: links missing). Scale: %s &micro;s full width.</p><div>", n, us(span, a));
	for (int s = 0; s < REPORT_NR_STAGES; s++)
		if (!is_total(s))
			fprintf(fp, "<span class=sw style='background:%s'></span>%s",
				stage_color[s], report_stages[s].name);
	int h = (int)n * TL_ROW + 24;

	fprintf(fp, "</div><svg id=timeline width='100%%' style='max-width:%dpx' "
		"viewBox='0 0 %d %d'>", TL_LABEL + TL_W + 10, TL_LABEL + TL_W + 10, h);
	for (size_t i = 0; i < n; i++) {
		const struct report_req *q = report_req_at(r, idx[i]);
		const struct report_sys *y = report_sys_at(r, q->sys);
		uint64_t first = UINT64_MAX;
		int yy = (int)i * TL_ROW + 4;

		for (int l = 0; l < RL_NR; l++)
			if (q->mask & (1u << l) && q->t[l] < first)
				first = q->t[l];
		fprintf(fp, "<text x=0 y=%d font-size=11 font-family=monospace>#%zu %s</text>",
			yy + 13, i + 1, report_mask_str(q->mask, mb));
		for (int s = 0; s < REPORT_NR_STAGES; s++) {
			const struct report_stage *g = &report_stages[s];
			uint32_t need = 1u << g->from | 1u << g->to;

			if (is_total(s) || (q->mask & need) != need || q->t[g->to] < q->t[g->from])
				continue;
			double x0 = TL_LABEL + (double)(q->t[g->from] - first) * TL_W / (double)span;
			double w = (double)(q->t[g->to] - q->t[g->from]) * TL_W / (double)span;

			fprintf(fp, "<rect x='%.2f' y=%d width='%.2f' height=%d fill='%s'>"
				"<title>#%zu %s: %s us", x0, yy + (s == 2 ? 10 : 2),
				w < 0.5 ? 0.5 : w, s == 2 ? 6 : 14, stage_color[s], i + 1, g->name,
				us(q->t[g->to] - q->t[g->from], a));
			if (y && y->stack) {
				fprintf(fp, "\n");
				esc(fp, report_str(r, y->stack));
			}
			fprintf(fp, "</title></rect>");
		}
	}
	fprintf(fp, "<line x1=%d y1=%d x2=%d y2=%d stroke='#999'/>"
		"<text x=%d y=%d font-size=11>0</text><text x=%d y=%d font-size=11 "
		"text-anchor=end>%s us</text></svg>", TL_LABEL, h - 18, TL_LABEL + TL_W, h - 18,
		TL_LABEL, h - 4, TL_LABEL + TL_W, h - 4, us(span, a));
	fprintf(fp, "<table><tr><th>#</th><th>latency &micro;s</th><th class=l>links</th>"
		"<th class=l>request</th><th class=l>Python stack</th></tr>");
	for (size_t i = 0; i < n; i++) {
		const struct report_req *q = report_req_at(r, idx[i]);
		const struct report_sys *y = report_sys_at(r, q->sys);

		fprintf(fp, "<tr><td>%zu</td><td>%s</td><td class='l mono'>%s</td><td class=l>"
			"%s%.0u %u:%u sector %" PRIu64 " +%u %s</td><td class='l stack'>", i + 1,
			us(report_req_latency(q), a), report_mask_str(q->mask, mb),
			q->machine ? "guest" : "host", q->machine, q->dev >> 20, q->dev & ((1u << 20) - 1), q->sector, q->nr_sector,
			y ? report_str(r, y->name) : "");
		if (y && y->stack)
			short_stack(fp, report_str(r, y->stack));
		else
			fprintf(fp, "(no Python call in the data)");
		fprintf(fp, "</td></tr>");
	}
	fprintf(fp, "</table>");
}

static void exits(const struct report *r, FILE *fp)
{
	char a[US_BUF];
	size_t n = report_nr_exits(r);

	fprintf(fp, "<h2>VM exits per vCPU</h2>");
	if (!n) {
		fprintf(fp, "<p class=note>No host kvm events in the data.</p>");
		return;
	}
	if (!report_have_exit_slices(r))
		fprintf(fp, "<p class=note>No kvm_exit events (PVM, or kvm:kvm_exit not "
			"recorded): the exit-causing events kvm_pio / kvm_mmio / kvm_fast_mmio / "
			"kvm_userspace_exit / kvm_hypercall are counted instead (no time).</p>");
	fprintf(fp, "<table><tr><th>vCPU</th><th class=l>reason</th><th>count</th>"
		"<th>time &micro;s</th></tr>");
	for (size_t i = 0; i < n; i++) {
		const struct report_exit *e = report_exit_at(r, i);

		if (!e->is_slice && report_have_exit_slices(r))
			continue;	/* the exit slices say it all */
		fprintf(fp, "<tr><td>");
		if (e->vcpu < 0)
			fprintf(fp, "?");
		else
			fprintf(fp, "%d", e->vcpu);
		fprintf(fp, "</td><td class=l>");
		esc(fp, report_str(r, e->name));
		fprintf(fp, "</td><td>%" PRIu64 "</td><td>%s</td></tr>", e->count,
			e->is_slice ? us(e->ns, a) : "-");
	}
	fprintf(fp, "</table>");
}

static void functions(const struct report *r, FILE *fp, int max)
{
	char a[US_BUF], b[US_BUF], c[US_BUF];
	size_t n = report_nr_fns(r);
	uint64_t big = n ? report_fn_at(r, 0)->incl_ns : 1;

	fprintf(fp, "<h2>Time per function (Python/C tracer slices)</h2>");
	if (!n) {
		fprintf(fp, "<p class=note>No function slices (Python/C tracer data) in the inputs.</p>");
		return;
	}
	fprintf(fp, "<p class=note>Inclusive time split into running and waiting (inside "
		"syscalls of its thread).<span class=sw style='background:#4e79a7'></span>running"
		"<span class=sw style='background:#e15759'></span>waiting"
		"<span class=sw style='background:#bab0ac'></span>unknown (no syscall events of "
		"the machine: -)</p><table><tr>"
		"<th>calls</th><th>total &micro;s</th><th>running &micro;s</th>"
		"<th>waiting &micro;s</th><th class=l></th><th class=l>function</th></tr>");
	for (size_t i = 0; i < n && i < (size_t)max; i++) {
		const struct report_fn *f = report_fn_at(r, i);
		uint64_t w = f->wait_ns > f->incl_ns ? f->incl_ns : f->wait_ns;
		double scale = 200.0 / (double)(big ? big : 1);

		if (!f->wait_known)	/* no syscall events: one grey bar */
			fprintf(fp, "<tr><td>%" PRIu64 "</td><td>%s</td><td>-</td><td>-</td>"
				"<td class=l style='min-width:205px'><span class=bar style="
				"'width:%.0fpx;background:#bab0ac' title='running and waiting "
				"unknown: no syscall events of the machine'></span></td>"
				"<td class='l mono'>", f->calls, us(f->incl_ns, a),
				(double)f->incl_ns * scale);
		else
			fprintf(fp, "<tr><td>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%s</td>"
				"<td class=l style='min-width:205px'><span class=bar style='width:%.0fpx;"
				"background:#4e79a7'></span><span class=bar style='width:%.0fpx;"
				"background:#e15759'></span></td><td class='l mono'>", f->calls,
				us(f->incl_ns, a), us(f->incl_ns - w, b), us(w, c),
				(double)(f->incl_ns - w) * scale, (double)w * scale);
		esc(fp, report_str(r, f->name));
		fprintf(fp, "</td></tr>");
	}
	fprintf(fp, "</table>");
}

int report_write_html(const struct report *r, const char *path, const struct report_opts *o)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return vt_err_errno("%s: cannot create", path);
	fprintf(fp, "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
		"<title>vmtrace report</title><style>%s</style></head><body>"
		"<h1>vmtrace report: where the time went</h1><p class=note>%zu guest block "
		"requests &middot; %" PRIu64 " guest syscalls &middot; %" PRIu64 " host kicks "
		"&middot; %" PRIu64 " QEMU I/O syscalls &middot; %" PRIu64 " injections "
		"&middot; %" PRIu64 " guest virtio irqs &middot; %" PRIu64 " events. Times on "
		"the host timeline.</p>", css, report_nr_reqs(r), report_nr_syscalls(r),
		report_nr_kicks(r), report_nr_host_io(r), report_nr_injects(r),
		report_nr_guest_irqs(r), report_events(r));
	headline(r, fp, 0, o->top);
	headline(r, fp, 1, o->top);
	if (report_nr_reqs(r)) {
		stage_table(r, fp);
		fprintf(fp, "<h2>Per-stage histograms</h2><div class=hists>");
		for (int s = 0; s < REPORT_NR_STAGES; s++)
			histogram(r, fp, s);
		fprintf(fp, "</div>");
		timeline(r, fp, o->top);
		coverage(r, fp);
	} else {
		fprintf(fp, "<p>No guest block requests in the inputs (record the guest with "
			"<code>vmtrace record --guest</code>).</p>");
	}
	states(r, fp, o->top);
	exits(r, fp);
	functions(r, fp, o->fns);
	/* a marker the tests read back with --dump-dom: the page's script ran */
	fprintf(fp, "<script>document.body.setAttribute('data-vt-ok',"
		"String(document.querySelectorAll('svg.histsvg').length));</script>"
		"</body></html>\n");
	if (fflush(fp) || ferror(fp)) {
		fclose(fp);
		return vt_err_errno("%s: write error", path);
	}
	if (fclose(fp))
		return vt_err_errno("%s: write error", path);
	return 0;
}
