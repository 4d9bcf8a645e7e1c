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
#include "grow.h"

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

#define SECTOR_BYTES	512
#define RMW_MAX		4	/* reads of one read-modify-write */
#define QEMU_ALIGN	4096	/* the widest alignment QEMU widens requests to
				 * (cache=none on 4 KiB host blocks) */

static void set_link(struct report_req *q, int link, uint64_t ts, int how)
{
	q->t[link] = ts;
	q->mask |= 1u << link;
	q->how[link] = (uint8_t)how;
}

/* The most frequent value per key, learned from what the unambiguous
 * requests show (the device's notify address, MSI, offset rule). */
struct learn { uint64_t key, val; };
struct modes {
	CHAIN_VEC(struct learn) in;	/* the observations */
	struct chain_hmap idx;	/* key -> index in val */
	CHAIN_VEC(uint64_t) val;
	CHAIN_VEC(uint64_t) cnt;	/* how many observations gave it */
};

static int cmp_learn(const void *a, const void *b)
{
	const struct learn *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->val < y->val ? -1 : x->val > y->val;
}

static void learn_add(struct report *r, struct modes *m, uint64_t key, uint64_t val)
{
	struct learn *l = CHAIN_VEC_PUSH(r, m->in);

	if (l) {
		l->key = key;
		l->val = val;
	}
}

/* Reduce the observations to the mode per key (ties: the smaller value). */
static int learn_done(struct report *r, struct modes *m)
{
	if (r->oom)
		return vt_err_set("report: out of memory");
	if (m->in.n)
		vt_sort(m->in.a, m->in.n, sizeof(*m->in.a), cmp_learn);
	for (size_t i = 0; i < m->in.n;) {
		size_t j = i, best = i, bestn = 0;

		while (j < m->in.n && m->in.a[j].key == m->in.a[i].key) {
			size_t k = j;

			while (k < m->in.n && m->in.a[k].key == m->in.a[j].key &&
			       m->in.a[k].val == m->in.a[j].val)
				k++;
			if (k - j > bestn) {
				bestn = k - j;
				best = j;
			}
			j = k;
		}
		uint32_t *v = chain_hmap_slot(&m->idx, m->in.a[i].key, 1);
		uint64_t *pv = CHAIN_VEC_PUSH(r, m->val), *pc = CHAIN_VEC_PUSH(r, m->cnt);

		if (!v || !pv || !pc) {
			r->oom = 1;	/* link_kick's caller sees it */
			return vt_err_set("report: out of memory");
		}
		*v = (uint32_t)(m->val.n - 1);
		*pv = m->in.a[best].val;
		*pc = bestn;
		i = j;
	}
	return 0;
}

/* The learned value of @key: 1 and *@val (*@cnt observations), 0 none. */
static int learn_get(struct modes *m, uint64_t key, uint64_t *val, uint64_t *cnt)
{
	uint32_t *v = chain_hmap_slot(&m->idx, key, 0);

	if (!v || *v == UINT32_MAX)
		return 0;
	*val = m->val.a[*v];
	if (cnt)
		*cnt = m->cnt.a[*v];
	return 1;
}

static void learn_free(struct modes *m)
{
	free(m->in.a);
	free(m->val.a);
	free(m->cnt.a);
	chain_hmap_free(&m->idx);
}

static uint64_t dev_key(const struct report_req *q)
{
	return (uint64_t)q->dev << 16 | (q->machine & 0xffff);
}

static uint64_t dev_cpu_key(const struct report_req *q, int32_t cpu)
{
	return dev_key(q) << 12 ^ (uint64_t)(uint32_t)(cpu + 1);
}

/* The request's direction as QEMU's operations have it: 'R', 'W', 'F',
 * 'D' (discard and write-zeroes, rwbs 'N': QEMU's fallocate), 0 unknown. */
static char req_dir(const struct report *r, const struct report_req *q)
{
	char d = q->rwbs == MERGE_NO_STR ? 0 : report_rwbs_op(merge_str(r->tables, q->rwbs));

	return d == 'N' ? 'D' : d;
}

static uint64_t req_until(const struct report_req *q)
{
	return chain_has(q, RL_COMPLETE) ? q->t[RL_COMPLETE] : UINT64_MAX;
}

/* The kicks a request can have: on its issuing vCPU (host threads of unknown
 * vCPU match any), from the issue to the completion.  @fn(k) for each, in
 * time order, until it returns non-zero. */
#define FOR_KICKS(r, q, k)							\
	for (size_t i_ = LOWER_BOUND((r)->kicks.a, (r)->kicks.n, .ts, (q)->t[RL_ISSUE]), \
	     n_ = 0; i_ < (r)->kicks.n && n_ < SCAN_MAX &&			\
	     (r)->kicks.a[i_].ts <= req_until(q); i_++, n_++)			\
		if ((k = &(r)->kicks.a[i_])->vcpu == CHAIN_NONE || (q)->cpu < 0 ||	\
		    k->vcpu == (q)->cpu)

/* kick: the first on the issuing vCPU at/after the issue written to the
 * device's notify address (the address most requests of the device and
 * vCPU see first); none learned: the first, a guess */
static void link_kick(struct report *r, struct modes *notify)
{
	const struct kick *k;

	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];

		if (!chain_has(q, RL_ISSUE))
			continue;
		FOR_KICKS(r, q, k) {
			learn_add(r, notify, dev_cpu_key(q, q->cpu), k->addr);
			break;
		}
	}
	if (learn_done(r, notify) < 0)
		return;
	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];
		uint64_t addr = 0;
		int known;

		if (!chain_has(q, RL_ISSUE))
			continue;
		known = learn_get(notify, dev_cpu_key(q, q->cpu), &addr, NULL);
		FOR_KICKS(r, q, k) {
			if (known && k->addr != addr)
				continue;
			set_link(q, RL_KICK, k->ts, known ? RH_NOTIFY : RH_GUESS);
			q->kick_vcpu = k->vcpu;
			q->kick_tid = k->tid;
			q->kick_addr = k->addr;
			break;
		}
	}
}

/* guest irq: the last virtio irq entry at/before the completion, on the
 * completing vCPU, after the kick (or the issue) */
static void link_irq(struct report *r, struct report_req *q)
{
	if (!chain_has(q, RL_COMPLETE) || !chain_has(q, RL_ISSUE))
		return;
	uint64_t lo = chain_has(q, RL_KICK) ? q->t[RL_KICK] : q->t[RL_ISSUE];
	size_t j = LOWER_BOUND(r->irqs.a, r->irqs.n, .ts, q->t[RL_COMPLETE] + 1);

	for (size_t n = 0; j > 0 && n < SCAN_MAX; j--, n++) {
		const struct girq *g = &r->irqs.a[j - 1];

		if (g->ts < lo)
			break;
		if (g->machine == q->machine &&
		    (q->cpu_done < 0 || g->cpu < 0 || g->cpu == q->cpu_done)) {
			set_link(q, RL_IRQ, g->ts, RH_CPU);
			break;
		}
	}
}

/* The QEMU operations in a request's window: entered at/after its issue,
 * done by its completion (a submission: entered by then). */
#define FOR_HOSTIO(r, q, h, lo, hi)						\
	for (size_t i_ = LOWER_BOUND((r)->hostio.a, (r)->hostio.n, .p.enter, lo), \
	     n_ = 0; i_ < (r)->hostio.n && n_ < SCAN_MAX &&			\
	     (r)->hostio.a[i_].p.enter <= (hi); i_++, n_++)			\
		if ((h = &(r)->hostio.a[i_])->p.exit <= (hi))

/* the offset rule of each device: the (fd, offset - sector * 512) most of
 * its reads and writes show; kept when a quarter of them show it */
static int learn_offsets(struct report *r, struct modes *off)
{
	struct hostio *h;

	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];
		char d = req_dir(r, q);

		if (!chain_has(q, RL_ISSUE) || !chain_has(q, RL_COMPLETE) || !q->nr_sector ||
		    (d != 'R' && d != 'W'))
			continue;
		uint64_t base = q->sector * SECTOR_BYTES, len = (uint64_t)q->nr_sector * SECTOR_BYTES;

		/* a syscall covering the range at the identity (QEMU widens
		 * ranges to its alignment) votes for delta 0, else one
		 * starting at or after it for its distance */
		FOR_HOSTIO(r, q, h, q->t[RL_ISSUE], q->t[RL_COMPLETE]) {
			if (!h->p.has_off || h->p.dir != d || h->p.fd < 0 || h->p.len < len)
				continue;
			if (h->p.off <= base && h->p.off + h->p.len >= base + len)
				learn_add(r, off, dev_key(q), (uint64_t)h->p.fd << 48);
			else if (h->p.off >= base && h->p.off - base < (1ULL << 48))
				learn_add(r, off, dev_key(q),
					  (uint64_t)h->p.fd << 48 | (h->p.off - base));
		}
	}
	if (learn_done(r, off) < 0)
		return -1;
	/* the devices (text output), with the rule where one holds */
	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];
		uint64_t v = 0, cnt = 0, nrw = 0;
		size_t d;

		for (d = 0; d < r->devs.n; d++)
			if (r->devs.a[d].machine == q->machine && r->devs.a[d].dev == q->dev)
				break;
		if (d < r->devs.n)
			continue;
		for (size_t j = i; j < r->reqs.n; j++) {
			const struct report_req *o = &r->reqs.a[j];
			char od = req_dir(r, o);

			nrw += o->machine == q->machine && o->dev == q->dev &&
			       (od == 'R' || od == 'W') && chain_has(o, RL_COMPLETE);
		}
		struct devmap *m = CHAIN_VEC_PUSH(r, r->devs);

		if (!m)
			return vt_err_set("report: out of memory");
		m->machine = q->machine;
		m->dev = q->dev;
		m->ok = learn_get(off, dev_key(q), &v, &cnt) && cnt * 4 >= nrw;
		m->fd = m->ok ? (int64_t)(v >> 48) : CHAIN_NONE;
		m->delta = m->ok ? (int64_t)(v & ((1ULL << 48) - 1)) : 0;
	}
	return 0;
}

static const struct devmap *dev_map(const struct report *r, const struct report_req *q)
{
	for (size_t d = 0; d < r->devs.n; d++)
		if (r->devs.a[d].machine == q->machine && r->devs.a[d].dev == q->dev)
			return &r->devs.a[d];
	return NULL;
}

static int cmp_idx_enter(const void *a, const void *b, void *report);

/* Give request @q the QEMU operations @idx[0..n) (any order), matched by @how. */
static int host_give(struct report *r, struct report_req *q, uint32_t *idx, size_t n, int how)
{
	uint64_t b = UINT64_MAX, e = 0;

	qsort_r(idx, n, sizeof(*idx), cmp_idx_enter, r);
	q->host_first = (uint32_t)r->hlinks.n;
	q->host_n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		const struct report_hostio *h = &r->hostio.a[idx[i]].p;
		uint32_t *l = CHAIN_VEC_PUSH(r, r->hlinks);

		if (!l)
			return vt_err_set("report: out of memory");
		*l = idx[i];
		b = h->enter < b ? h->enter : b;
		e = h->exit > e ? h->exit : e;
	}
	q->host_tid = r->hostio.a[idx[0]].p.tid;
	q->host_sys = r->hostio.a[idx[0]].p.name;
	set_link(q, RL_HOST_BEGIN, b, how);
	if (e)	/* a submission alone: its end is not known */
		set_link(q, RL_HOST_END, e, how);
	return 0;
}

/* 1 if QEMU operations @idx[0..n) together cover bytes [lo, hi). */
static int covers(const struct report *r, const uint32_t *idx, size_t n, uint64_t lo, uint64_t hi)
{
	uint64_t at = lo;

	for (int moved = 1; moved && at < hi;) {
		moved = 0;
		for (size_t i = 0; i < n; i++) {
			const struct report_hostio *h = &r->hostio.a[idx[i]].p;

			if (h->off <= at && h->off + h->len > at) {
				at = h->off + h->len;
				moved = 1;
			}
		}
	}
	return at >= hi;
}

/* Pass 1: by identity.  A read, write or write-zeroes request: the syscall
 * at its offset with its length (exact), else one covering it with room
 * left for it (covering: merged requests, or QEMU widening it to its
 * alignment), else unclaimed pieces on its range that together cover it
 * (split); a write so served and reads of its range before the write:
 * read-modify-write.  A flush: the device's next fdatasync/fsync (shared:
 * QEMU coalesces). */
static int host_exact(struct report *r, struct report_req *q)
{
	const struct devmap *m = dev_map(r, q);
	char d = req_dir(r, q);
	uint64_t hi = req_until(q);
	uint32_t idx[SCAN_MAX + RMW_MAX];
	size_t n = 0;
	struct hostio *h;

	if (!chain_has(q, RL_ISSUE) || (d == 'F' && hi == UINT64_MAX))
		return 0;
	if (d == 'F') {
		/* of the device's fd; a rule of QEMU's bios names the block
		 * device, or the image file's fd extents.tsv names (QEMU
		 * may hold the file twice), not the fd QEMU flushes: any */
		int any = m && m->ok && (m->fd >= REPORT_BDEV_FD || chain_extents_fd(r, m->fd));

		FOR_HOSTIO(r, q, h, q->t[RL_ISSUE], hi)
			if (h->p.dir == 'F' && h->p.exit &&
			    (!m || !m->ok || h->p.fd < 0 || h->p.fd == m->fd || any)) {
				idx[0] = (uint32_t)(h - r->hostio.a);
				return host_give(r, q, idx, 1, RH_FLUSH);
			}
		return 0;
	}
	if (!m || !m->ok || !q->nr_sector || (d != 'R' && d != 'W' && d != 'D'))
		return 0;
	uint64_t lo = q->sector * SECTOR_BYTES + (uint64_t)m->delta;
	uint64_t len = (uint64_t)q->nr_sector * SECTOR_BYTES;
	int how = 0;

#define SAME(h) ((h)->p.has_off && (h)->p.fd == m->fd && (h)->p.dir == d && (h)->p.exit && \
		 !(h)->rmw_read)
	FOR_HOSTIO(r, q, h, q->t[RL_ISSUE], hi)
		if (SAME(h) && h->p.off == lo && h->p.len == len && !h->claimed) {
			idx[n++] = (uint32_t)(h - r->hostio.a);
			how = RH_EXACT;
			break;
		}
	if (!n)
		FOR_HOSTIO(r, q, h, q->t[RL_ISSUE], hi)
			if (SAME(h) && h->p.off <= lo && h->p.off + h->p.len >= lo + len &&
			    h->claimed + len <= h->p.len) {
				idx[n++] = (uint32_t)(h - r->hostio.a);
				how = RH_COVER;
				break;
			}
	if (!n) {
		/* pieces on its range, within it widened to QEMU's alignment;
		 * a write-zeroes or discard also by the writes QEMU falls back
		 * to when fallocate fails */
		uint64_t wlo = lo & ~(QEMU_ALIGN - 1), whi = (lo + len + QEMU_ALIGN - 1) & ~(QEMU_ALIGN - 1);

		FOR_HOSTIO(r, q, h, q->t[RL_ISSUE], hi)
			if (h->p.has_off && h->p.fd == m->fd && h->p.exit && !h->rmw_read &&
			    !h->claimed && (h->p.dir == d || (d == 'D' && h->p.dir == 'W')) &&
			    h->p.off >= wlo && h->p.off + h->p.len <= whi &&
			    h->p.off < lo + len && h->p.off + h->p.len > lo && n < SCAN_MAX)
				idx[n++] = (uint32_t)(h - r->hostio.a);
		if (!n || !covers(r, idx, n, lo, lo + len))
			return 0;
		how = RH_SPLIT;
	}
#undef SAME
	for (size_t i = 0; i < n; i++)
		r->hostio.a[idx[i]].claimed += how == RH_SPLIT ? r->hostio.a[idx[i]].p.len : len;
	if (d == 'W' || d == 'D') {
		/* read-modify-write: reads of the range before the first write */
		uint64_t first = UINT64_MAX;
		size_t nw = n;

		for (size_t i = 0; i < nw; i++)
			if (r->hostio.a[idx[i]].p.enter < first)
				first = r->hostio.a[idx[i]].p.enter;
		FOR_HOSTIO(r, q, h, q->t[RL_ISSUE], first)
			if (n < nw + RMW_MAX && h->p.has_off && h->p.fd == m->fd &&
			    h->p.dir == 'R' && h->p.exit && !h->claimed && !h->rmw_read &&
			    h->p.off < lo + len && h->p.off + h->p.len > lo) {
				h->rmw_read = 1;
				idx[n++] = (uint32_t)(h - r->hostio.a);
				how = RH_RMW;
			}
	}
	return host_give(r, q, idx, n, how);
}

/* Pass 2: by time, a guess: the first unclaimed operation of the request's
 * direction (or of an unknown one: io_submit) between its kick (or issue)
 * and its guest irq (or completion).  An operation with an offset is not
 * guessed for a device whose offset rule holds: it served another. */
static int host_guess(struct report *r, struct report_req *q)
{
	const struct devmap *m = dev_map(r, q);
	char d = req_dir(r, q);
	uint64_t lo = chain_has(q, RL_KICK) ? q->t[RL_KICK] : q->t[RL_ISSUE];
	uint64_t hi = chain_has(q, RL_IRQ) ? q->t[RL_IRQ] : req_until(q);
	struct hostio *h;
	uint32_t idx;

	if (!chain_has(q, RL_ISSUE) || chain_has(q, RL_HOST_BEGIN) || hi == UINT64_MAX || d == 'F')
		return 0;
	FOR_HOSTIO(r, q, h, lo, hi) {
		if (h->claimed || h->rmw_read || (d && h->p.dir != d && h->p.dir != '?') ||
		    (m && m->ok && h->p.has_off))
			continue;
		if (r->have_uring && !strcmp(merge_str(r->tables, h->p.name), "io_uring_enter"))
			continue;	/* its io_uring operations are there */
		if (h->p.dir != '?')	/* a submission may carry several */
			h->claimed = (uint64_t)q->nr_sector * SECTOR_BYTES + 1;
		idx = (uint32_t)(h - r->hostio.a);
		return host_give(r, q, &idx, 1, RH_GUESS);
	}
	return 0;
}

/* The injections a request can have: of the kind used, after its QEMU I/O
 * (or kick, or issue), at/before its guest irq (or completion). */
#define FOR_INJ(r, q, j)							\
	for (size_t i_ = LOWER_BOUND((r)->injects.a, (r)->injects.n, .ts, inj_from(q)), \
	     n_ = 0; i_ < (r)->injects.n && n_ < SCAN_MAX &&			\
	     (r)->injects.a[i_].ts <= inj_until(q); i_++, n_++)		\
		if ((j = &(r)->injects.a[i_])->kind == (r)->inj_kind)

static uint64_t inj_from(const struct report_req *q)
{
	return chain_has(q, RL_HOST_END) ? q->t[RL_HOST_END] :
	       chain_has(q, RL_KICK) ? q->t[RL_KICK] : q->t[RL_ISSUE];
}

static uint64_t inj_until(const struct report_req *q)
{
	return chain_has(q, RL_IRQ) ? q->t[RL_IRQ] : req_until(q);
}

static uint64_t inj_val(const struct inj *j)
{
	return j->addr << 32 ^ (j->data & 0xffffffff);
}

/* injection: the first of the device's MSI (address, data: the vector and
 * destination most of its requests completing on that vCPU see first);
 * without MSI, kvm_set_irq of its gsi, else kvm_inj_virq of its vector */
static int link_inject(struct report *r, struct modes *msi)
{
	const struct inj *j;

	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];

		if (!chain_has(q, RL_ISSUE) || inj_until(q) == UINT64_MAX)
			continue;
		FOR_INJ(r, q, j) {
			learn_add(r, msi, dev_cpu_key(q, q->cpu_done), inj_val(j));
			break;
		}
	}
	if (learn_done(r, msi) < 0)
		return -1;
	for (size_t i = 0; i < r->reqs.n; i++) {
		struct report_req *q = &r->reqs.a[i];
		uint64_t v = 0;
		int known;

		if (!chain_has(q, RL_ISSUE) || inj_until(q) == UINT64_MAX)
			continue;
		known = learn_get(msi, dev_cpu_key(q, q->cpu_done), &v, NULL);
		FOR_INJ(r, q, j) {
			if (known && inj_val(j) != v)
				continue;
			set_link(q, RL_INJECT, j->ts, known ? RH_MSI : RH_GUESS);
			q->inj_tid = j->tid;
			q->inj_addr = j->addr;
			q->inj_data = j->data;
			break;
		}
	}
	return 0;
}

static int link_host(struct report *r)
{
	struct modes notify = { 0 }, off = { 0 }, msi = { 0 };
	int ret = 0;

	link_kick(r, &notify);
	for (size_t i = 0; i < r->reqs.n; i++)
		link_irq(r, &r->reqs.a[i]);
	ret = r->oom ? vt_err_set("report: out of memory") : learn_offsets(r, &off);
	for (size_t i = 0; i < r->reqs.n && !ret; i++)
		ret = host_exact(r, &r->reqs.a[i]);
	for (size_t i = 0; i < r->reqs.n && !ret; i++)
		ret = host_guess(r, &r->reqs.a[i]);
	if (!ret)
		ret = link_inject(r, &msi);
	learn_free(&notify);
	learn_free(&off);
	learn_free(&msi);
	return ret;
}

static int cmp_idx_enter(const void *a, const void *b, void *report)
{
	const struct report *r = report;
	uint64_t x = r->hostio.a[*(const uint32_t *)a].p.enter;
	uint64_t y = r->hostio.a[*(const uint32_t *)b].p.enter;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_hostio(const void *a, const void *b)
{
	const struct hostio *x = a, *y = b;

	return x->p.enter < y->p.enter ? -1 : x->p.enter > y->p.enter;
}

static int cmp_slow(const void *a, const void *b, void *report)
{
	const struct report *r = report;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = report_req_latency(&r->reqs.a[i]);
	uint64_t y = report_req_latency(&r->reqs.a[j]);

	if (x != y)
		return x > y ? -1 : 1;
	return (i > j) - (i < j);	/* ties by index */
}

static int cmp_fn(const void *a, const void *b)
{
	const struct report_fn *x = a, *y = b;

	if (x->incl_ns != y->incl_ns)
		return x->incl_ns > y->incl_ns ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

static int cmp_exit(const void *a, const void *b, void *tables)
{
	const struct merge_tables *tb = tables;
	const struct report_exit *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	if (x->is_slice != y->is_slice)
		return y->is_slice - x->is_slice;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(merge_str(tb, x->name), merge_str(tb, y->name));
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

		if (q->sys != CHAIN_NONE) {
			const struct report_sys *s = &r->sys.a[q->sys];

			set_link(q, RL_SYS_ENTER, s->enter, RH_THREAD);
			if (s->exit)
				set_link(q, RL_SYS_EXIT, s->exit, RH_THREAD);
			if (s->py_begin)
				set_link(q, RL_PY_BEGIN, s->py_begin, RH_THREAD);
			if (s->py_end)
				set_link(q, RL_PY_END, s->py_end, RH_THREAD);
		}
	}
	if (r->hostio.n)
		vt_sort(r->hostio.a, r->hostio.n, sizeof(*r->hostio.a), cmp_hostio);
	if (link_host(r) < 0)
		return -1;
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
		vt_sort(r->samples[s], n, sizeof(uint64_t), cmp_u64);
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
	qsort_r(r->slow, r->reqs.n, sizeof(uint32_t), cmp_slow, r);
	for (uint32_t i = 0; i < r->fncap; i++) {
		if (!r->fns[i].calls)
			continue;
		struct report_fn *f = CHAIN_VEC_PUSH(r, r->fnlist);

		if (!f)
			return vt_err_set("report: out of memory");
		f->name = i;
		f->calls = r->fns[i].calls;
		f->incl_ns = r->fns[i].incl;
		f->wait_ns = r->fns[i].wait;
		/* no syscall events of a call's machine: its waiting is unknown */
		f->wait_known = !(r->fns[i].machines & ~r->sys_machines);
	}
	if (r->fnlist.n)
		vt_sort(r->fnlist.a, r->fnlist.n, sizeof(*r->fnlist.a), cmp_fn);
	if (r->exits.n)
		qsort_r(r->exits.a, r->exits.n, sizeof(*r->exits.a), cmp_exit, r->tables);
	return 0;
}
