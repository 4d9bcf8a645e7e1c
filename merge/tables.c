/*
 * tables.c - merge's interned strings and its track table, both members
 * of a struct merge_tables (merge.h; the pipeline's context owns one, no
 * state here).  Runs on the merge command's thread; allocates only when a
 * new name, thread or process appears (bounded by distinct names, not by
 * events).  Every
 * string it holds is valid UTF-8 (lib/utf8.h): what the inputs give cut
 * inside a character (the kernel's 15-byte comm) or with invalid bytes is
 * cleaned once, when first seen, so no sink writes an invalid string.
 */
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "merge.h"
#include "utf8.h"

#define STRTAB_INIT_SLOTS	4096	/* hash slots at start (power of 2) */
#define STRTAB_CHUNK		(1u << 20)	/* bytes of string storage per chunk */

static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static char *str_store(struct merge_tables *tb, const char *s, size_t len)
{
	if (len + 1 > tb->chunk_left) {
		size_t sz = len + 1 > STRTAB_CHUNK ? len + 1 : STRTAB_CHUNK;
		char **nc = realloc(tb->chunks, (tb->nr_chunks + 1) * sizeof(*nc));
		char *c = nc ? malloc(sz) : NULL;

		if (nc)
			tb->chunks = nc;
		if (!c)
			return NULL;
		tb->chunks[tb->nr_chunks++] = c;
		tb->chunk_pos = c;
		tb->chunk_left = sz;
	}
	char *p = tb->chunk_pos;

	memcpy(p, s, len);
	p[len] = 0;
	tb->chunk_pos += len + 1;
	tb->chunk_left -= len + 1;
	return p;
}

static int str_grow_slots(struct merge_tables *tb)
{
	uint32_t nslots = tb->str_mask ? (tb->str_mask + 1) * 2 : STRTAB_INIT_SLOTS;
	uint32_t *ns = calloc(nslots, sizeof(*ns));

	if (!ns)
		return -1;
	for (uint32_t id = 1; id < tb->str_nr; id++) {
		uint32_t i = tb->str_ents[id].hash & (nslots - 1);

		while (ns[i])
			i = (i + 1) & (nslots - 1);
		ns[i] = id + 1;
	}
	free(tb->str_slots);
	tb->str_slots = ns;
	tb->str_mask = nslots - 1;
	return 0;
}

static int str_init(struct merge_tables *tb)
{
	tb->str_cap = STRTAB_INIT_SLOTS;
	tb->str_ents = calloc(tb->str_cap, sizeof(*tb->str_ents));
	if (!tb->str_ents)
		return -1;
	tb->str_ents[0].s = "";
	tb->str_nr = 1;
	if (str_grow_slots(tb) < 0) {
		/* not half made: the next intern would use no slots */
		free(tb->str_ents);
		tb->str_ents = NULL;
		return -1;
	}
	return 0;
}

static uint32_t str_oom(struct merge_tables *tb)
{
	tb->str_failed = 1;
	vt_err_set("merge: out of memory interning names");
	return MERGE_NO_STR;
}

static uint32_t intern_clean(struct merge_tables *tb, const char *s, size_t len);

uint32_t merge_str_intern(struct merge_tables *tb, const char *s, size_t len)
{
	if (!len)
		return MERGE_NO_STR;
	if (unlikely(!tb->str_ents) && str_init(tb) < 0)
		return str_oom(tb);

	uint32_t h = str_hash(s, len), mask = tb->str_mask;
	const uint32_t *slots = tb->str_slots;
	const struct merge_str_ent *ents = tb->str_ents;
	uint32_t i = h & mask;

	for (uint32_t id; (id = slots[i]); i = (i + 1) & mask) {
		const struct merge_str_ent *e = &ents[id - 1];

		if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
			return id - 1;
	}
	if (unlikely(!vt_utf8_valid(s, len)))
		return intern_clean(tb, s, len);
	if (tb->str_nr == tb->str_cap) {
		struct merge_str_ent *ne = realloc(tb->str_ents, 2 * tb->str_cap * sizeof(*ne));

		if (!ne)
			return str_oom(tb);
		tb->str_ents = ne;
		tb->str_cap *= 2;
	}
	char *p = str_store(tb, s, len);

	if (!p)
		return str_oom(tb);
	tb->str_ents[tb->str_nr] = (struct merge_str_ent){ p, (uint32_t)len, h };
	tb->str_slots[i] = tb->str_nr + 1;
	tb->str_nr++;
	if (tb->str_nr * 2 > tb->str_mask && str_grow_slots(tb) < 0)
		return str_oom(tb);
	return tb->str_nr - 1;
}

/* @s is no valid UTF-8: the id of its cleaned form (each time it is seen:
 * invalid input is rare, and a raw key kept beside would be a second
 * table). */
static uint32_t intern_clean(struct merge_tables *tb, const char *s, size_t len)
{
	size_t cap = len * VT_UTF8_REPL_LEN + 1;
	char stackbuf[256], *buf = cap <= sizeof(stackbuf) ? stackbuf : malloc(cap);
	uint32_t id;

	if (!buf)
		return str_oom(tb);
	id = merge_str_intern(tb, buf, vt_utf8_clean(buf, cap, s, len));
	if (buf != stackbuf)
		free(buf);
	return id;
}

uint32_t merge_str_intern0(struct merge_tables *tb, const char *s)
{
	return merge_str_intern(tb, s, strlen(s));
}

uint32_t merge_str_count(const struct merge_tables *tb)
{
	return tb->str_nr ? tb->str_nr : 1;
}

int merge_strtab_failed(const struct merge_tables *tb)
{
	return tb->str_failed;
}

/* ---- tracks -------------------------------------------------------- */

uint32_t merge_track_get_lane(struct merge_tables *tb, uint32_t machine, int32_t pid,
			      int32_t tid, uint32_t lane, uint32_t pname, uint32_t tname)
{
	/* few threads: a linear scan from the last hit is enough */
	uint32_t last = tb->track_last, nr = tb->nr_tracks;
	uint32_t main_idx = UINT32_MAX;
	uint8_t qemu = 0;	/* a new thread of QEMU's process is QEMU's */

	const struct merge_track *t = tb->tracks;

	if (last < nr && t[last].machine == machine && t[last].tid == tid &&
	    t[last].pid == pid && t[last].lane == lane)
		return last;
	for (uint32_t i = 0; i < nr; i++) {
		if (t[i].machine != machine || t[i].pid != pid)
			continue;
		if (t[i].tid == tid && t[i].lane == lane)
			return tb->track_last = i;
		qemu |= t[i].qemu;
	}
	if (lane) {
		main_idx = merge_track_get_lane(tb, machine, pid, tid, 0, pname, tname);
		if (main_idx == UINT32_MAX)
			return UINT32_MAX;
	}
	if (tb->nr_tracks == tb->cap_tracks) {
		uint32_t nc = tb->cap_tracks ? tb->cap_tracks * 2 : 64;
		struct merge_track *nt = realloc(tb->tracks, nc * sizeof(*nt));

		if (!nt) {
			tb->str_failed = 1;	/* merge_strtab_failed(): the tables lost one */
			vt_err_set("merge: out of memory for the track table");
			return UINT32_MAX;
		}
		tb->tracks = nt;
		tb->cap_tracks = nc;
	}
	nr = tb->nr_tracks;
	tb->tracks[nr] = (struct merge_track){
		.machine = machine, .pid = pid, .tid = tid, .name = tname, .pname = pname,
		.lane = lane, .main = lane ? main_idx : nr, .qemu = qemu,
	};
	tb->nr_tracks = nr + 1;
	return tb->track_last = nr;
}

uint32_t merge_track_get(struct merge_tables *tb, uint32_t machine, int32_t pid, int32_t tid,
			 uint32_t pname, uint32_t tname)
{
	return merge_track_get_lane(tb, machine, pid, tid, 0, pname, tname);
}

uint32_t merge_track_find_tid(const struct merge_tables *tb, uint32_t machine, int32_t tid)
{
	for (uint32_t i = 0; i < tb->nr_tracks; i++)
		if (tb->tracks[i].machine == machine && tb->tracks[i].tid == tid &&
		    !tb->tracks[i].lane)
			return i;
	return UINT32_MAX;
}

void merge_track_set_name(struct merge_tables *tb, uint32_t idx, uint32_t tname)
{
	if (idx < tb->nr_tracks && tname)
		tb->tracks[idx].name = tname;
}

void merge_track_set_pname(struct merge_tables *tb, uint32_t machine, int32_t pid, uint32_t pname)
{
	for (uint32_t i = 0; pname && i < tb->nr_tracks; i++)
		if (tb->tracks[i].machine == machine && tb->tracks[i].pid == pid)
			tb->tracks[i].pname = pname;
}

void merge_track_mark_qemu(struct merge_tables *tb, uint32_t machine, int32_t pid)
{
	for (uint32_t i = 0; i < tb->nr_tracks; i++)
		if (tb->tracks[i].machine == machine && tb->tracks[i].pid == pid)
			tb->tracks[i].qemu = 1;
}

void merge_tables_free(struct merge_tables *tb)
{
	for (size_t i = 0; i < tb->nr_chunks; i++)
		free(tb->chunks[i]);
	free(tb->chunks);
	free(tb->str_ents);
	free(tb->str_slots);
	free(tb->tracks);
	memset(tb, 0, sizeof(*tb));
}
