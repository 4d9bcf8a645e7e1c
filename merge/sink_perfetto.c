/*
 * sink_perfetto.c - merge's Perfetto sink: a native protobuf trace
 * (perfetto.protos.Trace) encoded by hand, no protobuf library.  One
 * packet sequence; TrackDescriptors for processes and threads emitted
 * before a track's first event; event and argument names interned
 * (InternedData, SEQ_INCREMENTAL_STATE_CLEARED on the first packet);
 * guests are processes of the host machine with their pids moved up
 * (TracePacket.machine_id on their packets only with --machine-id:
 * docs/merge.md says why).  Field numbers are those of
 * the published protos, listed in merge/perfetto_subset.proto.  Runs on
 * the merge thread; allocates only per new name/track (bitmaps).
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "merge.h"
#include "utf8.h"

/* wire types */
#define WT_VARINT	0
#define WT_FIXED64	1
#define WT_LEN		2

/* perfetto.protos field numbers (merge/perfetto_subset.proto) */
enum {
	F_TRACE_PACKET = 1,
	F_TP_TIMESTAMP = 8,
	F_TP_SEQ_ID = 10,
	F_TP_TRACK_EVENT = 11,
	F_TP_INTERNED = 12,
	F_TP_SEQ_FLAGS = 13,
	F_TP_TRACK_DESC = 60,
	F_TP_MACHINE_ID = 98,
	F_TE_DEBUG_ANN = 4,
	F_TE_TYPE = 9,
	F_TE_NAME_IID = 10,
	F_TE_TRACK_UUID = 11,
	F_TE_NAME = 23,
	F_TE_COUNTER_VALUE = 30,
	F_TE_FLOW_IDS = 47,
	F_TE_TERM_FLOW_IDS = 48,
	F_TD_UUID = 1,
	F_TD_NAME = 2,
	F_TD_PROCESS = 3,
	F_TD_THREAD = 4,
	F_TD_PARENT = 5,
	F_TD_COUNTER = 8,
	F_PD_PID = 1,
	F_PD_NAME = 6,
	F_THD_PID = 1,
	F_THD_TID = 2,
	F_THD_NAME = 5,
	F_ID_EVENT_NAMES = 2,
	F_ID_ANN_NAMES = 3,
	F_IN_IID = 1,
	F_IN_NAME = 2,
	F_DA_NAME_IID = 1,
	F_DA_UINT = 3,
	F_DA_INT = 4,
	F_DA_STRING = 6,
	F_DA_ARRAY = 12,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
_Static_assert(TYPE_SLICE_BEGIN == MERGE_EV_BEGIN + 1 && TYPE_SLICE_END == MERGE_EV_END + 1 &&
	       TYPE_INSTANT == MERGE_EV_INSTANT + 1, "event_fast writes kind + 1");
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

#define SEQ_ID		1	/* our one trusted_packet_sequence_id */
#define PKT_MAX		(64 * 1024)	/* the biggest packet we encode */
#define NESTED_MAX	8
#define THREAD_UUID_BASE 1	/* + track index (small: one varint byte);
				 * process uuids live above 2^40 */
#define MAX_NAME_LEN	1024	/* longer names are cut in the output */
#define FAST_PKT_MAX	64	/* room event_fast needs (it writes <= 33 bytes) */

/* The one-byte tag of a field numbered below 16. */
#define TAG1(field, wt)	((uint8_t)((field) << 3 | (wt)))

#define PID_MACHINE_STRIDE 10000000	/* without machine ids: guest N's pid
					 * p is N * stride + p (as in Chrome JSON) */

struct psink;
struct pb {
	uint8_t *p;
	uint8_t *start[NESTED_MAX];
	int depth;
	struct psink *s;	/* its sink (packet_head): strings, names cut */
};

/* A track's state in the output (track_state[]). */
enum {
	TRACK_UNSENT,		/* no descriptor written yet */
	TRACK_PLAIN,		/* described; its packets carry no machine_id */
	TRACK_MACHINE,		/* described; its packets carry machine_id */
};

struct psink {
	struct merge_out out;		/* first (merge_file_sink_open) */
	int machine_ids;		/* struct merge_perfetto_opts */
	uint8_t *name_sent;		/* by string id: event name interned
					 * (id 0, no name, counts as sent) */
	uint8_t *ann_sent;		/* by string id: annotation name interned */
	uint32_t name_cap, ann_cap;
	uint8_t *track_state;		/* by track index: TRACK_* */
	uint32_t tracks_cap;
	struct merge_idset procs;	/* process uuids emitted */
	int first;
	const struct merge_tables *tables;	/* the events' names and tracks */
	uint64_t names_cut;		/* strings cut to MAX_NAME_LEN (said at close) */
	/* event_fast's timestamps: the varint of ts >> 14 (a stamp's bytes
	 * past its first two, the same for 16 us), kept while it holds */
	uint64_t ts_hi;			/* its ts >> 14; TS_HI_NONE at first */
	uint8_t ts_hi_enc[16];		/* room for an 8-byte copy */
	uint32_t ts_hi_len;
};

#define TS_HI_NONE	UINT64_MAX	/* never a ts >> 14 */

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline void pb_varint(struct pb *b, uint64_t v)
{
	b->p = put_varint(b->p, v);
}

static inline void pb_tag(struct pb *b, unsigned field, unsigned wt)
{
	pb_varint(b, ((uint64_t)field << 3) | wt);
}

static inline void pb_u64(struct pb *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, WT_VARINT);
	pb_varint(b, v);
}

static inline void pb_fixed64(struct pb *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, WT_FIXED64);
	memcpy(b->p, &v, 8);	/* little-endian host */
	b->p += 8;
}

static inline void pb_bytes(struct pb *b, unsigned field, const char *s, size_t len)
{
	if (unlikely(len > MAX_NAME_LEN)) {
		/* merge's strings are valid UTF-8: cut between characters */
		len = vt_utf8_cut(s, len, MAX_NAME_LEN);
		b->s->names_cut++;
	}
	pb_tag(b, field, WT_LEN);
	pb_varint(b, len);
	memcpy(b->p, s, len);
	b->p += len;
}

static inline void pb_str(struct pb *b, unsigned field, uint32_t id)
{
	const struct merge_tables *tb = b->s->tables;

	pb_bytes(b, field, merge_str(tb, id), merge_str_len(tb, id));
}

/* Nested message: one length byte reserved, moved when it needs more. */
static inline void pb_begin(struct pb *b, unsigned field)
{
	pb_tag(b, field, WT_LEN);
	b->start[b->depth++] = b->p++;
}

static inline void pb_end(struct pb *b)
{
	uint8_t *lp = b->start[--b->depth];
	size_t len = (size_t)(b->p - lp - 1);

	if (likely(len < 0x80)) {
		*lp = (uint8_t)len;
		return;
	}
	uint8_t tmp[10];
	int n = 0;

	for (size_t v = len; ; v >>= 7) {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		if (v < 0x80)
			break;
	}
	memmove(lp + n, lp + 1, len);
	memcpy(lp, tmp, n);
	b->p += n - 1;
}

/* Grow name_sent to @need ids; id 0 (no name) needs no interning. */
static int grow_names(struct psink *s, uint32_t need)
{
	if (merge_table_grow(&s->name_sent, &s->name_cap, need, 1) < 0)
		return -1;
	s->name_sent[MERGE_NO_STR] = 1;
	return 0;
}

/* A packet is encoded in place in the output buffer as Trace.packet, a
 * nested message; packet_head reserves room for the biggest packet. */
static void flush_packet(struct psink *s, struct pb *b)
{
	pb_end(b);
	s->out.len = (size_t)(b->p - (uint8_t *)s->out.buf);
}

static int packet_head(struct psink *s, struct pb *b, uint32_t machine)
{
	char *o = merge_out_reserve(&s->out, PKT_MAX);

	if (unlikely(!o))
		return -1;
	b->p = (uint8_t *)o;
	b->depth = 0;
	b->s = s;
	pb_begin(b, F_TRACE_PACKET);
	pb_u64(b, F_TP_SEQ_ID, SEQ_ID);
	if (machine != MERGE_MACHINE_HOST && s->machine_ids)
		pb_u64(b, F_TP_MACHINE_ID, machine);
	return 0;
}

static uint64_t proc_uuid(const struct merge_track *t)
{
	return ((uint64_t)(t->machine + 1) << 40) | (uint32_t)t->pid;
}

/* pid/tid as written: a guest's own numbers on its own machine, else moved
 * above the host's (pid_max < stride) so the one machine has no clash. */
static uint32_t desc_id(const struct psink *s, const struct merge_track *t, int32_t id)
{
	if (t->machine == MERGE_MACHINE_HOST || s->machine_ids)
		return (uint32_t)id;
	return t->machine * PID_MACHINE_STRIDE + (uint32_t)id;
}

static inline int need_track(struct psink *s, uint32_t idx);

static int send_track(struct psink *s, uint32_t idx)
{
	struct merge_track *t = merge_track(s->tables, idx);
	uint64_t pu = proc_uuid(t);
	struct pb b;
	int added;

	if (t->lane) {
		/* a second track of a thread: a child of its thread track,
		 * which Perfetto shows as a sibling in the same thread's
		 * process (a thread descriptor is allowed once per thread) */
		if (need_track(s, t->main) < 0 || packet_head(s, &b, t->machine) < 0)
			return -1;
		pb_begin(&b, F_TP_TRACK_DESC);
		pb_u64(&b, F_TD_UUID, THREAD_UUID_BASE + idx);
		pb_str(&b, F_TD_NAME, t->name);
		pb_u64(&b, F_TD_PARENT, THREAD_UUID_BASE + t->main);
		pb_end(&b);
		flush_packet(s, &b);
		return 0;
	}
	added = merge_idset_add(&s->procs, pu);
	if (added < 0)
		return vt_err_set("perfetto: out of memory");
	if (added) {
		if (packet_head(s, &b, t->machine) < 0)
			return -1;
		if (s->first) {
			pb_u64(&b, F_TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
			s->first = 0;
		}
		pb_begin(&b, F_TP_TRACK_DESC);
		pb_u64(&b, F_TD_UUID, pu);
		pb_begin(&b, F_TD_PROCESS);
		pb_u64(&b, F_PD_PID, desc_id(s, t, t->pid));
		pb_str(&b, F_PD_NAME, t->pname);
		pb_end(&b);
		pb_end(&b);
		flush_packet(s, &b);
	}
	if (packet_head(s, &b, t->machine) < 0)
		return -1;
	pb_begin(&b, F_TP_TRACK_DESC);
	pb_u64(&b, F_TD_UUID, THREAD_UUID_BASE + idx);
	pb_u64(&b, F_TD_PARENT, pu);
	pb_begin(&b, F_TD_THREAD);
	pb_u64(&b, F_THD_PID, desc_id(s, t, t->pid));
	pb_u64(&b, F_THD_TID, desc_id(s, t, t->tid));
	pb_str(&b, F_THD_NAME, t->name);
	pb_end(&b);
	pb_end(&b);
	flush_packet(s, &b);
	return 0;
}

static inline int need_track(struct psink *s, uint32_t idx)
{
	if (unlikely(idx >= s->tracks_cap) &&
	    merge_table_grow(&s->track_state, &s->tracks_cap, idx + 1, 1) < 0)
		return vt_err_set("perfetto: out of memory");
	if (likely(s->track_state[idx] != TRACK_UNSENT))
		return 0;
	s->track_state[idx] = merge_track(s->tables, idx)->machine != MERGE_MACHINE_HOST &&
			      s->machine_ids ? TRACK_MACHINE : TRACK_PLAIN;
	return send_track(s, idx);
}

static void *perfetto_open(struct merge_tables *tb, const char *out, const void *opts)
{
	const struct merge_perfetto_opts *o = opts;
	struct psink *s = merge_file_sink_open(sizeof(*s), out);

	if (s) {
		s->first = 1;
		s->ts_hi = TS_HI_NONE;
		s->tables = tb;
		s->machine_ids = o ? o->machine_ids : 0;
	}
	return s;
}

/* Array argument @a of @ev: one unnamed DebugAnnotation per number. */
static void put_array(struct pb *b, const struct merge_event *ev, const struct merge_arg *a)
{
	uint32_t first = merge_arr_first(a->v.u), n = merge_arr_count(a->v.u);

	for (uint32_t k = 0; k < n && first + k < MERGE_ARR_MAX; k++) {
		pb_begin(b, F_DA_ARRAY);
		if (a->type == MERGE_ARG_ARRAY_I64)
			pb_u64(b, F_DA_INT, ev->arr[first + k]);
		else
			pb_u64(b, F_DA_UINT, ev->arr[first + k]);
		pb_end(b);
	}
}

/* Any event: interned data, arguments, flows, counters, machine ids. */
static __attribute__((noinline)) int event_slow(struct psink *s, const struct merge_event *ev)
{
	struct pb b;
	uint32_t max_id = ev->name;

	if (unlikely(need_track(s, ev->track) < 0))
		return -1;
	for (int i = 0; i < ev->nr_args; i++)
		if (ev->args[i].key > max_id)
			max_id = ev->args[i].key;
	/* name_sent and ann_sent grow together, to the same need */
	if (unlikely(max_id >= s->ann_cap) &&
	    (grow_names(s, max_id + 1) < 0 ||
	     merge_table_grow(&s->ann_sent, &s->ann_cap, max_id + 1, 1) < 0))
		return vt_err_set("perfetto: out of memory");

	if (unlikely(packet_head(s, &b, merge_track(s->tables, ev->track)->machine) < 0))
		return -1;
	pb_u64(&b, F_TP_TIMESTAMP, ev->ts_ns);
	pb_u64(&b, F_TP_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);

	/* interned data first used by this packet */
	int interned = 0;

	if (ev->kind != MERGE_EV_END && ev->name && !s->name_sent[ev->name]) {
		s->name_sent[ev->name] = 1;
		pb_begin(&b, F_TP_INTERNED);
		interned = 1;
		pb_begin(&b, F_ID_EVENT_NAMES);
		pb_u64(&b, F_IN_IID, ev->name);
		pb_str(&b, F_IN_NAME, ev->name);
		pb_end(&b);
	}
	for (int i = 0; i < ev->nr_args; i++) {
		uint32_t k = ev->args[i].key;

		if (s->ann_sent[k])
			continue;
		s->ann_sent[k] = 1;
		if (!interned) {
			pb_begin(&b, F_TP_INTERNED);
			interned = 1;
		}
		pb_begin(&b, F_ID_ANN_NAMES);
		pb_u64(&b, F_IN_IID, k);
		pb_str(&b, F_IN_NAME, k);
		pb_end(&b);
	}
	if (interned)
		pb_end(&b);

	pb_begin(&b, F_TP_TRACK_EVENT);
	switch (ev->kind) {
	case MERGE_EV_BEGIN:
		pb_u64(&b, F_TE_TYPE, TYPE_SLICE_BEGIN);
		break;
	case MERGE_EV_END:
		pb_u64(&b, F_TE_TYPE, TYPE_SLICE_END);
		break;
	case MERGE_EV_COUNTER:
		pb_u64(&b, F_TE_TYPE, TYPE_COUNTER);
		break;
	default:
		pb_u64(&b, F_TE_TYPE, TYPE_INSTANT);
		break;
	}
	pb_u64(&b, F_TE_TRACK_UUID, THREAD_UUID_BASE + ev->track);
	if (ev->kind != MERGE_EV_END && ev->name)
		pb_u64(&b, F_TE_NAME_IID, ev->name);
	if (ev->kind == MERGE_EV_COUNTER)
		pb_u64(&b, F_TE_COUNTER_VALUE, (uint64_t)ev->value);
	for (int i = 0; i < ev->nr_args; i++) {
		const struct merge_arg *a = &ev->args[i];

		pb_begin(&b, F_TE_DEBUG_ANN);
		pb_u64(&b, F_DA_NAME_IID, a->key);
		if (a->type == MERGE_ARG_STR)
			pb_str(&b, F_DA_STRING, a->v.str);
		else if (unlikely(ev->sym_mask & (1u << i)))
			pb_str(&b, F_DA_STRING, ev->sym_text[i]);
		else if (a->type == MERGE_ARG_I64)
			pb_u64(&b, F_DA_INT, (uint64_t)a->v.i);
		else if (a->type == MERGE_ARG_U64)
			pb_u64(&b, F_DA_UINT, a->v.u);
		else
			put_array(&b, ev, a);
		pb_end(&b);
	}
	/* a flow starts here (flow_ids) and/or one ends here */
	if (unlikely(ev->flow_start_id))
		pb_fixed64(&b, F_TE_FLOW_IDS, ev->flow_start_id);
	if (unlikely(ev->flow_id))
		pb_fixed64(&b, F_TE_TERM_FLOW_IDS, ev->flow_id);
	pb_end(&b);
	flush_packet(s, &b);
	return 0;
}

/* Timestamp @v as a varint at @p: v >= 2^14 is its two low 7-bit groups
 * (continued) and the varint of v >> 14, kept encoded in @s; the same
 * bytes as put_varint. */
static inline uint8_t *put_ts(struct psink *s, uint8_t *p, uint64_t v)
{
	uint64_t hi = v >> 14;

	if (unlikely(hi != s->ts_hi)) {
		if (unlikely(!hi))
			return put_varint(p, v);
		s->ts_hi = hi;
		s->ts_hi_len = (uint32_t)(put_varint(s->ts_hi_enc, hi) - s->ts_hi_enc);
	}
	p[0] = (uint8_t)v | 0x80;
	p[1] = (uint8_t)(v >> 7) | 0x80;
	memcpy(p + 2, s->ts_hi_enc, 8);	/* hi < 2^50: at most 8 bytes */
	return p + 2 + s->ts_hi_len;
}

/* The common event: a slice begin/end or an instant without arguments or
 * flow, on a described host track, its name already interned.  Encoded
 * with constant tag bytes, in the order event_slow writes the same fields
 * (the output is the same bytes); every length fits in one byte. */
static inline void event_fast(struct psink *s, const struct merge_event *ev, uint32_t name)
{
	uint8_t *p = (uint8_t *)s->out.buf + s->out.len, *pkt_len, *te_len;

	p[0] = TAG1(F_TRACE_PACKET, WT_LEN);
	pkt_len = p + 1;
	p[2] = TAG1(F_TP_SEQ_ID, WT_VARINT);
	p[3] = SEQ_ID;
	p[4] = TAG1(F_TP_TIMESTAMP, WT_VARINT);
	p = put_ts(s, p + 5, ev->ts_ns);
	p[0] = TAG1(F_TP_SEQ_FLAGS, WT_VARINT);
	p[1] = SEQ_NEEDS_INCREMENTAL_STATE;
	p[2] = TAG1(F_TP_TRACK_EVENT, WT_LEN);
	te_len = p + 3;
	p[4] = TAG1(F_TE_TYPE, WT_VARINT);
	p[5] = (uint8_t)(ev->kind + 1);	/* TrackEvent.type (asserted above) */
	p[6] = TAG1(F_TE_TRACK_UUID, WT_VARINT);
	p = put_varint(p + 7, THREAD_UUID_BASE + ev->track);
	if (name) {
		*p++ = TAG1(F_TE_NAME_IID, WT_VARINT);
		p = put_varint(p, name);
	}
	*te_len = (uint8_t)(p - te_len - 1);
	*pkt_len = (uint8_t)(p - pkt_len - 1);
	s->out.len = (size_t)(p - (uint8_t *)s->out.buf);
}

static int perfetto_event(void *sink, const struct merge_event *ev)
{
	struct psink *s = sink;
	uint32_t name = ev->kind == MERGE_EV_END ? MERGE_NO_STR : ev->name;

	if (likely(ev->track < s->tracks_cap && s->track_state[ev->track] == TRACK_PLAIN &&
		   !(ev->nr_args | ev->flow_id | ev->flow_start_id) && ev->kind < MERGE_EV_COUNTER &&
		   name < s->name_cap && s->name_sent[name] &&
		   s->out.len + FAST_PKT_MAX <= s->out.cap)) {
		event_fast(s, ev, name);
		return 0;
	}
	return event_slow(s, ev);
}

static int perfetto_close(void *sink)
{
	struct psink *s = sink;

	free(s->name_sent);
	free(s->ann_sent);
	free(s->track_state);
	merge_idset_free(&s->procs);
	if (s->names_cut)
		vt_warn("perfetto: %llu names or strings longer than %d bytes were cut to %d",
			(unsigned long long)s->names_cut, MAX_NAME_LEN, MAX_NAME_LEN);
	return merge_file_sink_close(s);
}

static const char *const merge_sink_perfetto_ext[] = { ".pftrace", ".perfetto-trace", ".pb", NULL };

const struct merge_sink_ops merge_sink_perfetto = {
	.name = "perfetto",
	.ext = merge_sink_perfetto_ext,
	.open = perfetto_open,
	.event = perfetto_event,
	.close = perfetto_close,
	.derive = 1,
};

