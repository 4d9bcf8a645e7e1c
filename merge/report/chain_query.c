/*
 * chain_query.c - the read side of the I/O chain analyser (report.h):
 * what the text, HTML and SQLite outputs ask of a finished analysis.
 */
#include <stddef.h>
#include "chain_int.h"

uint64_t report_req_latency(const struct report_req *q)
{
	static const int first[] = { RL_SYS_ENTER, RL_INSERT, RL_ISSUE };
	static const int last[] = { RL_SYS_EXIT, RL_COMPLETE };
	uint64_t a = 0, b = 0;
	int end = 0;

	/* by the links present, not by a time of 0 (the timeline may start
	 * there); every request has an insert or an issue (chain.c) */
	for (size_t i = 0; i < sizeof(first) / sizeof(*first); i++)
		if (chain_has(q, first[i])) {
			a = q->t[first[i]];
			break;
		}
	for (size_t i = 0; i < sizeof(last) / sizeof(*last); i++)
		if (chain_has(q, last[i])) {
			b = q->t[last[i]];
			end = 1;
			break;
		}
	return end && b > a ? b - a : 0;
}

size_t report_nr_reqs(const struct report *r) { return r->reqs.n; }
const struct report_req *report_req_at(const struct report *r, size_t i) { return &r->reqs.a[i]; }
const struct report_sys *report_sys_at(const struct report *r, int32_t i)
{
	return i < 0 ? NULL : &r->sys.a[i];
}
const struct report_pct *report_stage_pct(const struct report *r, int s) { return &r->pct[s]; }
const uint64_t *report_stage_samples(const struct report *r, int s, size_t *n)
{
	*n = r->nsamples[s];
	return r->samples[s];
}
const uint32_t *report_slowest(const struct report *r, size_t *n)
{
	*n = r->reqs.n;
	return r->slow;
}
size_t report_nr_fns(const struct report *r) { return r->fnlist.n; }
const struct report_fn *report_fn_at(const struct report *r, size_t i) { return &r->fnlist.a[i]; }
size_t report_nr_exits(const struct report *r) { return r->exits.n; }
const struct report_exit *report_exit_at(const struct report *r, size_t i) { return &r->exits.a[i]; }
int report_have_exit_slices(const struct report *r) { return r->have_exit_slices; }
uint64_t report_events(const struct report *r) { return r->events; }
uint64_t report_nr_syscalls(const struct report *r) { return r->sys.n; }
uint64_t report_nr_kicks(const struct report *r) { return r->kicks.n; }
uint64_t report_nr_injects(const struct report *r) { return r->injects.n; }
uint64_t report_nr_host_io(const struct report *r) { return r->hostio.n; }
uint64_t report_nr_guest_irqs(const struct report *r) { return r->irqs.n; }

const char *report_mask_str(uint32_t mask, char *buf)
{
	for (int i = 0; i < RL_NR; i++)
		buf[i] = mask & (1u << i) ? report_link_chars[i] : '.';
	buf[RL_NR] = 0;
	return buf;
}

size_t report_masks(const struct report *r, uint32_t *masks, uint64_t *counts, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->reqs.n; i++) {
		uint32_t m = r->reqs.a[i].mask;
		size_t j;

		for (j = 0; j < n && masks[j] != m; j++)
			;
		if (j == n) {
			if (n == max)
				continue;
			masks[n] = m;
			counts[n++] = 0;
		}
		counts[j]++;
	}
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && counts[b] > counts[b - 1]; b--) {
			uint32_t tm = masks[b];
			uint64_t tc = counts[b];

			masks[b] = masks[b - 1];
			counts[b] = counts[b - 1];
			masks[b - 1] = tm;
			counts[b - 1] = tc;
		}
	return n;
}

const struct report_hostio *report_req_hostio(const struct report *r,
					      const struct report_req *q, uint32_t k)
{
	if (k >= q->host_n)
		return NULL;
	return &r->hostio.a[r->hlinks.a[q->host_first + k]].p;
}

uint64_t report_how_count(const struct report *r, int link, int how)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->reqs.n; i++)
		n += chain_has(&r->reqs.a[i], link) && r->reqs.a[i].how[link] == how;
	return n;
}

size_t report_nr_devs(const struct report *r) { return r->devs.n; }

uint32_t report_bdev(const struct report *r, int64_t fd)
{
	if (fd < REPORT_BDEV_FD || (uint64_t)(fd - REPORT_BDEV_FD) >= r->bdevs.n)
		return 0;
	return r->bdevs.a[fd - REPORT_BDEV_FD];
}

int report_dev_map(const struct report *r, size_t i, uint32_t *machine, uint32_t *dev,
		   int64_t *fd, int64_t *delta)
{
	const struct devmap *m = &r->devs.a[i];

	*machine = m->machine;
	*dev = m->dev;
	*fd = m->fd;
	*delta = m->delta;
	return m->ok;
}
