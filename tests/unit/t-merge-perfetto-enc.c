/*
 * t-merge-perfetto-enc.c - merge's Perfetto sink has two encoders of a
 * TracePacket (merge/sink_perfetto.c): event_slow(), built on the generic
 * protobuf writer, for any event, and event_fast(), constant tag bytes for
 * the common slice begin/end or instant on a described host track.  Its
 * comment promises the same bytes for the same event; this test holds it
 * to that:
 *   - event by event: every kind, timestamps and track/name ids on both
 *     sides of each varint length step, encoded by both, must be equal;
 *   - whole traces: one event sequence (host and guest tracks, arguments,
 *     flows, counters, long names) written once through the sink's own
 *     dispatcher (fast where it may) and once through event_slow() only
 *     must be the same file, with and without --machine-id;
 *   - each packet's room refused by a failed write (/dev/full): the event
 *     fails with the output's message.
 * The sink's source is included to reach its static encoders.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "merge/sink_perfetto.c"

#define NR_TRACKS	300	/* track and name ids past the 1- and 2-byte varints */
#define NR_NAMES	300
#define NR_SEQ		100000	/* events of the whole-trace comparison: past the
				 * output buffer (1 MiB), so that the fast path's
				 * room check sends one the slow way */
#define PKT_ROOM	256

static struct merge_tables tb;		/* names and tracks (a pipeline's) */
static uint32_t names[NR_NAMES + 1];	/* names[i]: interned "fn<i>" */
static uint32_t tracks[NR_TRACKS];	/* host tracks */
static uint32_t guest_tracks[8];
static uint32_t long_name;		/* longer than the sink's MAX_NAME_LEN */

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd64(void)
{
	return check_xorshift(&rnd_state);
}

static void setup_tables(void)
{
	char buf[64], buf2[MAX_NAME_LEN + 100];

	for (int i = 1; i <= NR_NAMES; i++) {
		snprintf(buf, sizeof(buf), "fn%d", i);
		names[i] = merge_str_intern0(&tb, buf);
	}
	for (int i = 0; i < NR_TRACKS; i++)
		tracks[i] = merge_track_get(&tb, MERGE_MACHINE_HOST, 1000 + i / 10, 1000 + i,
					    merge_str_intern0(&tb, "host proc"),
					    names[1 + i % NR_NAMES]);
	memset(buf2, 'x', sizeof(buf2) - 1);
	buf2[sizeof(buf2) - 1] = 0;
	long_name = merge_str_intern0(&tb, buf2);
	for (int i = 0; i < 8; i++)
		guest_tracks[i] = merge_track_get(&tb, 1 + i / 4, 200, 200 + i,
						  merge_str_intern0(&tb, "guest proc"),
						  merge_str_intern0(&tb, "guest thread"));
}

/* The packet event_slow() (@slow) or event_fast() writes for @ev, copied
 * to @out; its length, or -1.  The track must be described and the name
 * interned already (what the fast path requires). */
static int encode_one(struct psink *s, const struct merge_event *ev, int slow, uint8_t *out)
{
	uint32_t name = ev->kind == MERGE_EV_END ? MERGE_NO_STR : ev->name;
	int len;

	s->out.len = 0;		/* the buffer's old bytes are not needed */
	if (slow) {
		if (event_slow(s, ev) < 0)
			return -1;
	} else {
		event_fast(s, ev, name);
	}
	len = (int)s->out.len;
	if (len > PKT_ROOM)
		return -1;
	memcpy(out, s->out.buf, (size_t)len);
	s->out.len = 0;
	return len;
}

/* Event by event, over the edges of every varint the fast path writes. */
static void test_each_event(void)
{
	static const uint64_t ts[] = {
		0, 1, 127, 128, 16383, 16384, 1000000000ull, (1ull << 32) - 1, 1ull << 32,
		(1ull << 56) - 1, 1ull << 56, 1ull << 63, UINT64_MAX,
	};
	static const int track_at[] = { 0, 1, 125, 126, 127, 128, 200, NR_TRACKS - 1 };
	static const int name_at[] = { 1, 126, 127, 128, 129, 255, NR_NAMES };
	static const uint8_t kinds[] = { MERGE_EV_BEGIN, MERGE_EV_END, MERGE_EV_INSTANT };
	uint8_t a[PKT_ROOM], b[PKT_ROOM];
	struct psink *s = perfetto_open(&tb, "each.pftrace", NULL);
	int compared = 0, differ = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	for (size_t t = 0; t < VT_ARRAY_SIZE(track_at); t++) {
		for (size_t n = 0; n < VT_ARRAY_SIZE(name_at); n++) {
			struct merge_event ev = {
				.track = tracks[track_at[t]], .name = names[name_at[n]],
				.kind = MERGE_EV_INSTANT,
			};

			/* describe the track, intern the name */
			CHECK(event_slow(s, &ev) == 0);
			for (size_t k = 0; k < VT_ARRAY_SIZE(kinds); k++) {
				for (size_t i = 0; i < VT_ARRAY_SIZE(ts); i++) {
					int la, lb;

					ev.kind = kinds[k];
					ev.ts_ns = ts[i];
					la = encode_one(s, &ev, 1, a);
					lb = encode_one(s, &ev, 0, b);
					compared++;
					if (la < 0 || la != lb || memcmp(a, b, (size_t)la)) {
						if (!differ++)
							fprintf(stderr, "differ: track %u name %u kind %u "
								"ts %llu: %d vs %d bytes\n", ev.track,
								ev.name, ev.kind,
								(unsigned long long)ev.ts_ns, la, lb);
					}
				}
			}
		}
	}
	CHECK(differ == 0);
	CHECK(compared == (int)(VT_ARRAY_SIZE(track_at) * VT_ARRAY_SIZE(name_at) *
				VT_ARRAY_SIZE(kinds) * VT_ARRAY_SIZE(ts)));
	/* the largest packet still fits the one-byte lengths event_fast writes */
	{
		struct merge_event ev = {
			.track = tracks[NR_TRACKS - 1], .name = names[NR_NAMES],
			.kind = MERGE_EV_BEGIN, .ts_ns = UINT64_MAX,
		};
		int la = encode_one(s, &ev, 1, a);

		CHECK(la > 0 && la <= FAST_PKT_MAX && a[1] == la - 2);
	}
	CHECK(perfetto_close(s) == 0);
}

/* Event @i of the whole-trace sequence: mostly fast-path slices and
 * instants, with every kind of slow event among them. */
static void seq_event(int i, struct merge_event *ev)
{
	uint64_t r = rnd64();

	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = 1000000000ull + (uint64_t)i * 997;
	ev->track = (r & 0xf) == 0 ? guest_tracks[(r >> 4) % 8] : tracks[(r >> 8) % NR_TRACKS];
	ev->name = names[1 + (r >> 20) % NR_NAMES];
	ev->kind = (uint8_t)((r >> 32) % 3);
	switch ((r >> 40) % 32) {
	case 0:		/* arguments of each type */
		ev->nr_args = 3;
		ev->args[0] = (struct merge_arg){ .key = names[1 + (r >> 48) % 16],
						  .type = MERGE_ARG_U64, .v.u = r };
		ev->args[1] = (struct merge_arg){ .key = names[17], .type = MERGE_ARG_I64,
						  .v.i = -(int64_t)(r >> 50) };
		ev->args[2] = (struct merge_arg){ .key = names[18], .type = MERGE_ARG_STR,
						  .v.str = names[19] };
		break;
	case 1:
		ev->flow_start_id = (uint64_t)i + 1;
		break;
	case 2:
		ev->flow_id = (uint64_t)i;
		break;
	case 3:
		ev->kind = MERGE_EV_COUNTER;
		ev->value = (int64_t)(r >> 16) - (1 << 20);
		break;
	case 4:
		ev->name = MERGE_NO_STR;	/* an unnamed instant */
		ev->kind = MERGE_EV_INSTANT;
		break;
	case 5:
		ev->name = long_name;		/* cut in the output */
		break;
	}
}

/* Write the sequence to @path through the sink's dispatcher (@slow_only:
 * every event through event_slow(); @machine_ids: the sink's option). */
static int write_seq(const char *path, int slow_only, int machine_ids)
{
	struct merge_perfetto_opts po = { .machine_ids = machine_ids };
	struct psink *s = perfetto_open(&tb, path, &po);
	struct merge_event ev;
	int ret = 0;

	if (!s)
		return -1;
	rnd_state = 0x2545f4914f6cdd1dull;
	for (int i = 0; i < NR_SEQ && !ret; i++) {
		seq_event(i, &ev);
		ret = slow_only ? event_slow(s, &ev) : perfetto_event(s, &ev);
	}
	if (perfetto_close(s) < 0)
		ret = -1;
	return ret;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*len = 0;
	if (!fp)
		return NULL;
	if (!fseek(fp, 0, SEEK_END) && (n = ftell(fp)) > 0 && !fseek(fp, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, fp) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(fp);
	return buf;
}

/* The whole trace is the same file either way. */
static void test_whole_trace(int machine_ids)
{
	size_t la, lb;
	char *a, *b;

	CHECK(write_seq("dispatch.pftrace", 0, machine_ids) == 0);
	CHECK(write_seq("slow.pftrace", 1, machine_ids) == 0);
	a = slurp("dispatch.pftrace", &la);
	b = slurp("slow.pftrace", &lb);
	CHECK(a && b && la > NR_SEQ * 8);
	CHECK(la == lb && a && b && !memcmp(a, b, la));
	if (a && b && (la != lb || memcmp(a, b, la))) {
		size_t i = 0;

		while (i < la && i < lb && a[i] == b[i])
			i++;
		fprintf(stderr, "machine_ids=%d: traces differ at byte %zu (%zu vs %zu bytes)\n",
			machine_ids, i, la, lb);
	}
	free(a);
	free(b);
}

/* Each packet the sink writes can be the one whose room a failed write
 * refuses: a process's descriptor, a thread's (its process described), a
 * lane's (its thread described, or not yet), an event's; each fails the
 * event with the output's message, and the close after it. */
static void test_full_output(void)
{
	uint32_t pn = merge_str_intern0(&tb, "full proc"), tn = merge_str_intern0(&tb, "full thread");
	uint32_t t1 = merge_track_get(&tb, MERGE_MACHINE_HOST, 7000, 7001, pn, tn);
	uint32_t t2 = merge_track_get(&tb, MERGE_MACHINE_HOST, 7000, 7002, pn, tn);
	uint32_t l1 = merge_track_get_lane(&tb, MERGE_MACHINE_HOST, 7000, 7001, 2, pn, tn);
	uint32_t l3 = merge_track_get_lane(&tb, MERGE_MACHINE_HOST, 7000, 7003, 2, pn, tn);
	struct merge_event ev = { .kind = MERGE_EV_INSTANT, .name = names[1] };
	const char *want = "/dev/full: write failed: No space left on device";
	struct psink *s;

	if (access("/dev/full", W_OK)) {
		printf("no /dev/full: the failed writes not checked\n");
		return;
	}
	for (int step = 0; step < 5; step++) {
		s = perfetto_open(&tb, "/dev/full", NULL);
		CHECK(s != NULL);
		if (!s)
			continue;
		/* what is described before the write fails */
		ev.track = t1;
		if (step >= 1)
			CHECK(event_slow(s, &ev) == 0);
		memset(s->out.buf, 0, s->out.cap);
		s->out.len = s->out.cap - 50;	/* no room for even a fast event */
		ev.track = step == 0 ? t1 : step == 1 ? t2 : step == 2 ? l1 : step == 3 ? l3 : t1;
		CHECK(perfetto_event(s, &ev) < 0);
		CHECK_STR(vt_err_msg(), want);
		CHECK(perfetto_close(s) < 0);
	}
}

int main(void)
{
	setup_tables();
	CHECK(merge_track_count(&tb) == NR_TRACKS + 8);
	test_each_event();
	test_whole_trace(0);
	test_whole_trace(1);
	test_full_output();
	unlink("each.pftrace");
	unlink("dispatch.pftrace");
	unlink("slow.pftrace");
	merge_tables_free(&tb);
	return check_done();
}
