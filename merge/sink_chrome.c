/*
 * sink_chrome.c - merge's Chrome JSON sink (trace event format): B/E
 * slices, i instants, C counters, s/f flow pairs, M metadata naming
 * processes and threads, timestamps in microseconds with ns decimals.
 * Streamed: each event is formatted into the output buffer as it comes.
 * Runs on the merge thread; allocates only a table of the tracks (each
 * one's metadata written, its pid/tid text: formatted once, copied per event).
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "merge.h"
#include "utf8.h"

#define PID_MACHINE_STRIDE	10000000	/* guest N pid p -> N*stride + p */
#define EV_MAX_BYTES		(128 * 1024)	/* one formatted event, at most */
#define JSON_NAME_MAX		1024		/* longer names are cut */

/* A track as every event on it starts: its pid and tid after the "ph"
 * (at most 8 + 20 + 7 + 20 bytes), formatted once, copied whole. */
#define HEAD_MAX	62
struct ctrack {
	char head[HEAD_MAX];	/* ","pid":P,"tid":T */
	uint8_t len;		/* of head */
	uint8_t named;		/* metadata written (head set) */
};

struct csink {
	struct merge_out out;		/* first (merge_file_sink_open) */
	struct ctrack *tracks;		/* by track index */
	uint32_t tracks_cap;
	struct merge_idset procs;	/* pids whose process_name is written */
	int any;			/* an event was written (the next needs a comma) */
	const struct merge_tables *tables;	/* the events' names and tracks */
};

static inline char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}
#define PUTS(p, lit) put(p, lit, sizeof(lit) - 1)

/* "00" .. "99" */
static const char digits2[201] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* @v in decimal: written from its last digit back, two at a time (in
 * 32-bit arithmetic once it fits: cheaper divisions), into a scratch
 * buffer, then copied with one fixed-size move (its room in the output is
 * reserved: the bytes past the number are overwritten next). */
static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[40], *end = tmp + 20, *q = end;	/* 20: the longest uint64 */
	uint32_t w;

	while (unlikely(v > UINT32_MAX)) {
		uint64_t r = v % 100;

		v /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	w = (uint32_t)v;
	while (w >= 100) {
		uint32_t r = w % 100;

		w /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	if (w >= 10) {
		q -= 2;
		memcpy(q, digits2 + 2 * w, 2);
	} else {
		*--q = (char)('0' + w);
	}
	memcpy(p, q, 20);
	return p + (end - q);
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* ns -> "us.nnn" */
static inline char *put_ts(char *p, uint64_t ns)
{
	uint32_t frac = (uint32_t)(ns % 1000);

	p = put_u64(p, ns / 1000);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	memcpy(p + 2, digits2 + 2 * (frac % 100), 2);
	return p + 4;
}

static char *put_jstr(char *p, const struct merge_tables *tb, uint32_t id)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)merge_str(tb, id);
	uint32_t n = merge_str_len(tb, id);

	/* merge's strings are valid UTF-8 (merge/tables.c): cut on a
	 * character boundary, multi-byte characters pass through */
	if (unlikely(n > JSON_NAME_MAX))
		n = (uint32_t)vt_utf8_cut((const char *)s, n, JSON_NAME_MAX);
	*p++ = '"';
	for (uint32_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (likely(c >= 0x20 && c != '"' && c != '\\' && c < 0x7f)) {
			*p++ = (char)c;
		} else if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c >= 0x80) {
			*p++ = (char)c;
		} else {
			p = PUTS(p, "\\u00");
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	*p++ = '"';
	return p;
}

/* The numbers of array argument @a of @ev as a JSON array. */
static char *put_array(char *p, const struct merge_event *ev, const struct merge_arg *a)
{
	uint32_t first = merge_arr_first(a->v.u), n = merge_arr_count(a->v.u);

	*p++ = '[';
	for (uint32_t k = 0; k < n && first + k < MERGE_ARR_MAX; k++) {
		if (k)
			*p++ = ',';
		if (a->type == MERGE_ARG_ARRAY_I64)
			p = put_i64(p, (int64_t)ev->arr[first + k]);
		else
			p = put_u64(p, ev->arr[first + k]);
	}
	*p++ = ']';
	return p;
}

static int64_t json_pid(const struct merge_track *t)
{
	return (int64_t)t->machine * PID_MACHINE_STRIDE + t->pid;
}

static int64_t json_tid(const struct merge_track *t)
{
	return (int64_t)t->machine * PID_MACHINE_STRIDE + t->tid +
	       (int64_t)t->lane * MERGE_LANE_TID_STRIDE;
}

/* An event's start on track @ct (its head set): {"ph":"@ph","pid":P,"tid":T */
static inline char *put_head(char *p, struct csink *s, char ph, const struct ctrack *ct)
{
	if (likely(s->any))
		*p++ = ',';
	s->any = 1;
	*p++ = '\n';
	p = PUTS(p, "{\"ph\":\"");
	*p++ = ph;
	memcpy(p, ct->head, HEAD_MAX);	/* whole: a fixed-size copy */
	return p + ct->len;
}

static int name_track(struct csink *s, uint32_t idx)
{
	const struct merge_track *t = merge_track(s->tables, idx);
	struct ctrack *ct = &s->tracks[idx];
	int64_t pid = json_pid(t);
	char *p = merge_out_reserve(&s->out, 16 * JSON_NAME_MAX);
	char *h = ct->head;
	int added;

	if (!p)
		return -1;
	char *start = p;

	h = PUTS(h, "\",\"pid\":");
	h = put_i64(h, pid);
	h = PUTS(h, ",\"tid\":");
	h = put_i64(h, json_tid(t));
	ct->len = (uint8_t)(h - ct->head);
	added = merge_idset_add(&s->procs, (uint64_t)pid);
	if (added < 0)
		return vt_err_set("chrome: out of memory");
	if (added) {
		p = put_head(p, s, 'M', ct);
		p = PUTS(p, ",\"name\":\"process_name\",\"args\":{\"name\":");
		p = put_jstr(p, s->tables, t->pname);
		p = PUTS(p, "}}");
	}
	p = put_head(p, s, 'M', ct);
	p = PUTS(p, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	p = put_jstr(p, s->tables, t->name);
	p = PUTS(p, "}}");
	s->out.len += (size_t)(p - start);
	return 0;
}

static void *chrome_open(struct merge_tables *tb, const char *out, const void *opts)
{
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
	struct csink *s = merge_file_sink_open(sizeof(*s), out);

	if (!s)
		return NULL;

	s->tables = tb;
	memcpy(s->out.buf, head, sizeof(head) - 1);
	s->out.len = sizeof(head) - 1;
	return s;
}

/* Track @idx's entry, its metadata written first; NULL on failure. */
static inline const struct ctrack *need_track(struct csink *s, uint32_t idx)
{
	if (unlikely(idx >= s->tracks_cap) &&
	    merge_table_grow(&s->tracks, &s->tracks_cap, idx + 1, sizeof(*s->tracks)) < 0) {
		vt_err_set("chrome: out of memory");
		return NULL;
	}
	if (unlikely(!s->tracks[idx].named)) {
		s->tracks[idx].named = 1;
		if (name_track(s, idx) < 0)
			return NULL;
	}
	return &s->tracks[idx];
}

/* The rest of a flow event (s or f of @ev's flow @id) after its "ts" key:
 * the time @ns, category, name and id. */
static char *put_flow(char *p, const struct merge_tables *tb, uint64_t ns, uint64_t id,
		       const struct merge_event *ev)
{
	p = put_ts(p, ns);
	p = PUTS(p, ",\"cat\":\"flow\",\"name\":");
	p = put_jstr(p, tb, ev->flow_name);
	p = PUTS(p, ",\"id\":");
	p = put_u64(p, id);
	return PUTS(p, "}");
}

static int chrome_event(void *sink, const struct merge_event *ev)
{
	struct csink *s = sink;
	const struct ctrack *t = need_track(s, ev->track);

	if (unlikely(!t))
		return -1;

	char *p = merge_out_reserve(&s->out, EV_MAX_BYTES);

	if (!p)
		return -1;
	char *start = p;

	switch (ev->kind) {
	case MERGE_EV_BEGIN:
		p = put_head(p, s, 'B', t);
		break;
	case MERGE_EV_END:
		p = put_head(p, s, 'E', t);
		break;
	case MERGE_EV_COUNTER:
		p = put_head(p, s, 'C', t);
		break;
	default:
		p = put_head(p, s, 'i', t);
		p = PUTS(p, ",\"s\":\"t\"");
		break;
	}
	p = PUTS(p, ",\"ts\":");
	p = put_ts(p, ev->ts_ns);
	if (ev->kind != MERGE_EV_END) {
		p = PUTS(p, ",\"name\":");
		p = put_jstr(p, s->tables, ev->name);
	}
	if (ev->kind == MERGE_EV_COUNTER) {
		p = PUTS(p, ",\"args\":{\"value\":");
		p = put_i64(p, ev->value);
		p = PUTS(p, "}");
	} else if (ev->nr_args) {
		p = PUTS(p, ",\"args\":{");
		for (int i = 0; i < ev->nr_args; i++) {
			const struct merge_arg *a = &ev->args[i];

			if (i)
				*p++ = ',';
			p = put_jstr(p, s->tables, a->key);
			*p++ = ':';
			if (a->type == MERGE_ARG_STR)
				p = put_jstr(p, s->tables, a->v.str);
			else if (unlikely(ev->sym_mask & (1u << i)))
				p = put_jstr(p, s->tables, ev->sym_text[i]);
			else if (a->type == MERGE_ARG_I64)
				p = put_i64(p, a->v.i);
			else if (a->type == MERGE_ARG_U64)
				p = put_u64(p, a->v.u);
			else
				p = put_array(p, ev, a);
		}
		*p++ = '}';
	}
	p = PUTS(p, "}");
	if (unlikely(ev->flow_start_id)) {
		/* a start, at this event (bound to the slice enclosing it) */
		p = put_head(p, s, 's', t);
		p = PUTS(p, ",\"ts\":");
		p = put_flow(p, s->tables, ev->ts_ns, ev->flow_start_id, ev);
	}
	if (unlikely(ev->flow_id)) {
		p = put_head(p, s, 'f', t);
		p = PUTS(p, ",\"bp\":\"e\",\"ts\":");
		p = put_flow(p, s->tables, ev->ts_ns, ev->flow_id, ev);
	}
	s->out.len += (size_t)(p - start);
	return 0;
}

static int chrome_close(void *sink)
{
	struct csink *s = sink;
	char *p = merge_out_reserve(&s->out, 8);

	if (p) {
		memcpy(p, "\n]}\n", 4);
		s->out.len += 4;
	}
	free(s->tracks);
	merge_idset_free(&s->procs);
	return merge_file_sink_close(s);	/* fails too when p did (the output's
						 * failure is kept) */
}

static const char *const merge_sink_chrome_ext[] = { ".json", NULL };
static const char *const merge_sink_chrome_also[] = { "json", NULL };

const struct merge_sink_ops merge_sink_chrome = {
	.name = "chrome",
	.also = merge_sink_chrome_also,
	.ext = merge_sink_chrome_ext,
	.open = chrome_open,
	.event = chrome_event,
	.close = chrome_close,
	.derive = 1,
};

