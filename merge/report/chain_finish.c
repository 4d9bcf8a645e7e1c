/*
 * chain_finish.c - the I/O chain analyser after the stream (report_finish,
 * report.h): the syscall and Python links from the syscall records, the
 * host-side links searched per request (kick, QEMU I/O, injection, guest
 * irq; matching rules in docs/report.md), then the per-stage percentiles,
 * the slowest requests, the per-function and per-vCPU exit tables.  Merge
 * thread; allocates.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "chain_int.h"

#define SCAN_MAX	256	/* candidates looked at per link search */

/* first index with ts >= @ts in a vector sorted by ts */
#define LOWER_BOUND(arr, n, field, ts) ({				\
	size_t lo_ = 0, hi_ = (n);					\
	while (lo_ < hi_) {						\
		size_t mid_ = (lo_ + hi_) / 2;				\
		if ((arr)[mid_] field < (ts))				\
			lo_ = mid_ + 1;					\
		else							\
			hi_ = mid_;					\
	}								\
	lo_; })

static void set_link(struct report_req *q, int link, uint64_t ts)
{
	q->t[link] = ts;
	q->mask |= 1u << link;
}

static void link_host(struct report *r, struct report_req *q)
{
	uint64_t from = q->t[RL_ISSUE];
	uint64_t until = has(q, RL_COMPLETE) ? q->t[RL_COMPLETE] : UINT64_MAX;

	if (!has(q, RL_ISSUE))
		return;
	/* kick: the first on the issuing vCPU at/after the issue */
	size_t i = LOWER_BOUND(r->kicks.a, r->kicks.n, .ts, from);

	for (size_t n = 0; i < r->kicks.n && n < SCAN_MAX && r->kicks.a[i].ts <= until; i++, n++) {
		const struct kick *k = &r->kicks.a[i];

		if (k->vcpu == NONE || q->cpu < 0 || k->vcpu == q->cpu) {
			set_link(q, RL_KICK, k->ts);
			q->kick_vcpu = k->vcpu;
			break;
		}
	}
	/* guest irq: the last virtio irq entry at/before the completion, on
	 * the completing vCPU, after the kick (or the issue) */
	if (has(q, RL_COMPLETE)) {
		uint64_t lo = has(q, RL_KICK) ? q->t[RL_KICK] : from;
		size_t j = LOWER_BOUND(r->irqs.a, r->irqs.n, .ts, until + 1);

		for (size_t n = 0; j > 0 && n < SCAN_MAX; j--, n++) {
			const struct girq *g = &r->irqs.a[j - 1];

			if (g->ts < lo)
				break;
			if (g->machine == q->machine && (q->cpu_done < 0 || g->cpu < 0 ||
							 g->cpu == q->cpu_done)) {
				set_link(q, RL_IRQ, g->ts);
				break;
			}
		}
	}
	uint64_t hi = has(q, RL_IRQ) ? q->t[RL_IRQ] : until;
	uint64_t after = has(q, RL_KICK) ? q->t[RL_KICK] : from;

	/* QEMU I/O: the first I/O syscall of a QEMU thread entered after the
	 * kick (no kick in the data, e.g. TCG: after the issue) and done
	 * before the guest irq (or the completion) */
	if (hi == UINT64_MAX)
		return;
	size_t h = LOWER_BOUND(r->hostio.a, r->hostio.n, .enter, after);

	for (size_t n = 0; h < r->hostio.n && n < SCAN_MAX && r->hostio.a[h].enter <= hi; h++, n++)
		if (r->hostio.a[h].exit <= hi) {
			set_link(q, RL_HOST_BEGIN, r->hostio.a[h].enter);
			set_link(q, RL_HOST_END, r->hostio.a[h].exit);
			q->host_tid = r->hostio.a[h].tid;
			q->host_sys = r->hostio.a[h].name;
			break;
		}
	/* injection: the first after the QEMU I/O (or the kick), up to the irq */
	uint64_t lo = has(q, RL_HOST_END) ? q->t[RL_HOST_END] : after;
	size_t k = LOWER_BOUND(r->injects.a, r->injects.n, , lo);

	if (k < r->injects.n && r->injects.a[k] <= hi)
		set_link(q, RL_INJECT, r->injects.a[k]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_hostio(const void *a, const void *b)
{
	const struct hostio *x = a, *y = b;

	return x->enter < y->enter ? -1 : x->enter > y->enter;
}

static const struct report *sort_ctx;

static int cmp_slow(const void *a, const void *b)
{
	uint64_t x = report_req_latency(&sort_ctx->reqs.a[*(const uint32_t *)a]);
	uint64_t y = report_req_latency(&sort_ctx->reqs.a[*(const uint32_t *)b]);

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct report_fn *x = a, *y = b;

	if (x->incl_ns != y->incl_ns)
		return x->incl_ns > y->incl_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_exit(const void *a, const void *b)
{
	const struct report_exit *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	if (x->is_slice != y->is_slice)
		return y->is_slice - x->is_slice;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(merge_str(x->name), merge_str(y->name));
}

static uint64_t nearest_rank(const uint64_t *v, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

int report_finish(struct report *r)
{
	if (r->oom)
		return vt_err_set("report: out of memory");
	/* syscall and Python links from the syscall records */
	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];

		if (q->sys != NONE) {
			const struct report_sys *s = &r->sys.a[q->sys];

			set_link(q, RL_SYS_ENTER, s->enter);
			if (s->exit)
				set_link(q, RL_SYS_EXIT, s->exit);
			if (s->py_begin)
				set_link(q, RL_PY_BEGIN, s->py_begin);
			if (s->py_end)
				set_link(q, RL_PY_END, s->py_end);
		}
	}
	if (r->hostio.n)
		qsort(r->hostio.a, r->hostio.n, sizeof(*r->hostio.a), cmp_hostio);
	for (size_t i = 0; i < r->reqs.n; i++)
		link_host(r, &r->reqs.a[i]);
	for (int s = 0; s < REPORT_NR_STAGES; s++) {
		const struct report_stage *st = &report_stages[s];
		uint32_t need = 1u << st->from | 1u << st->to;
		size_t n = 0;

		r->samples[s] = malloc((r->reqs.n ? r->reqs.n : 1) * sizeof(uint64_t));
		if (!r->samples[s])
			return vt_err_set("report: out of memory");
		for (size_t i = 0; i < r->reqs.n; i++) {
			const struct report_req *q = &r->reqs.a[i];

			if ((q->mask & need) == need && q->t[st->to] >= q->t[st->from])
				r->samples[s][n++] = q->t[st->to] - q->t[st->from];
		}
		qsort(r->samples[s], n, sizeof(uint64_t), cmp_u64);
		r->nsamples[s] = n;
		struct report_pct *p = &r->pct[s];

		p->n = n;
		for (size_t i = 0; i < n; i++)
			p->sum += r->samples[s][i];
		if (n) {
			p->p50 = nearest_rank(r->samples[s], n, 50);
			p->p90 = nearest_rank(r->samples[s], n, 90);
			p->p99 = nearest_rank(r->samples[s], n, 99);
			p->max = r->samples[s][n - 1];
		}
	}
	r->slow = malloc((r->reqs.n ? r->reqs.n : 1) * sizeof(uint32_t));
	if (!r->slow)
		return vt_err_set("report: out of memory");
	for (size_t i = 0; i < r->reqs.n; i++)
		r->slow[i] = (uint32_t)i;
	sort_ctx = r;
	qsort(r->slow, r->reqs.n, sizeof(uint32_t), cmp_slow);
	for (uint32_t i = 0; i < r->fncap; i++) {
		if (!r->fns[i].calls)
			continue;
		struct report_fn *f = VEC_PUSH(r, r->fnlist);

		if (!f)
			return vt_err_set("report: out of memory");
		f->name = i;
		f->calls = r->fns[i].calls;
		f->incl_ns = r->fns[i].incl;
		f->wait_ns = r->fns[i].wait;
	}
	if (r->fnlist.n)
		qsort(r->fnlist.a, r->fnlist.n, sizeof(*r->fnlist.a), cmp_fn);
	if (r->exits.n)
		qsort(r->exits.a, r->exits.n, sizeof(*r->exits.a), cmp_exit);
	return 0;
}
