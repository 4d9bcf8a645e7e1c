/*
 * tracedat_page.c - builds ring-buffer pages of the layout trace.dat
 * stores (lib/tracedat.h, events/header_page + header_event), for tools
 * that synthesise traces (test fixtures).  Pure, no allocation.
 */
#include <string.h>
#include "tracedat.h"

/* A 4096-byte page with a u64 commit, and the entry header of every kernel
 * since 2.6.31: what vmtrace's fixtures and converters write as
 * events/header_page and events/header_event. */
const char vt_td_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
const char vt_td_header_event[] =
	"# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

#define PG_TYPE_TIME_EXTEND	30
#define PG_TYPE_SHIFT		5
#define PG_DELTA_BITS		27
#define PG_DELTA_MASK		((1u << PG_DELTA_BITS) - 1)
#define PG_ALIGN		4
#define PG_HDR			4
#define PG_EXTEND_SIZE		8
#define PG_COMMIT_OFF		8

static void pg_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));	/* little-endian host, as the file */
}

void vt_td_page_init(struct vt_td_page *p, void *buf, size_t size)
{
	memset(buf, 0, size);
	p->buf = buf;
	p->size = size;
	p->used = 0;
	p->ts_last = 0;
	p->nr_events = 0;
}

int vt_td_page_add(struct vt_td_page *p, uint64_t ts, const void *data, uint32_t len)
{
	uint32_t plen = (len + PG_ALIGN - 1) / PG_ALIGN * PG_ALIGN;
	uint64_t delta, commit;
	size_t need;
	uint8_t *q;

	if (len == 0 || len > VT_TD_PAGE_SMALL_MAX)
		return -1;
	if (p->nr_events == 0) {
		memcpy(p->buf, &ts, sizeof(ts));
		p->ts_last = ts;
	}
	if (ts < p->ts_last)
		return -1;
	delta = ts - p->ts_last;
	need = PG_HDR + plen + (delta > PG_DELTA_MASK ? PG_EXTEND_SIZE : 0);
	if (VT_TD_PAGE_HDR_SIZE + p->used + need > p->size)
		return 1;
	q = p->buf + VT_TD_PAGE_HDR_SIZE + p->used;
	if (delta > PG_DELTA_MASK) {
		pg_put32(q, PG_TYPE_TIME_EXTEND | (uint32_t)(delta & PG_DELTA_MASK) << PG_TYPE_SHIFT);
		pg_put32(q + PG_HDR, (uint32_t)(delta >> PG_DELTA_BITS));
		q += PG_EXTEND_SIZE;
		delta = 0;
	}
	pg_put32(q, plen / PG_ALIGN | (uint32_t)delta << PG_TYPE_SHIFT);
	memcpy(q + PG_HDR, data, len);
	p->used += need;
	p->ts_last = ts;
	p->nr_events++;
	commit = p->used;
	memcpy(p->buf + PG_COMMIT_OFF, &commit, sizeof(commit));
	return 0;
}
