/*
 * tables.c - merge's interned strings and its track table.  Runs on the
 * merge command's thread; allocates only when a new name, thread or
 * process appears (bounded by distinct names, not by events).  Every
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

struct str_ent {
	const char *s;
	uint32_t len;
	uint32_t hash;
};

static struct str_ent *str_ents;	/* by id; id 0 = "" */
static uint32_t str_nr, str_cap;
static uint32_t *str_slots;		/* hash -> id + 1 (0 empty) */
static uint32_t str_mask;
static char **chunks;
static size_t nr_chunks;
static char *chunk_pos;
static size_t chunk_left;
static int str_failed;

static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static char *str_store(const char *s, size_t len)
{
	if (len + 1 > chunk_left) {
		size_t sz = len + 1 > STRTAB_CHUNK ? len + 1 : STRTAB_CHUNK;
		char **nc = realloc(chunks, (nr_chunks + 1) * sizeof(*nc));
		char *c = nc ? malloc(sz) : NULL;

		if (nc)
			chunks = nc;
		if (!c)
			return NULL;
		chunks[nr_chunks++] = c;
		chunk_pos = c;
		chunk_left = sz;
	}
	char *p = chunk_pos;

	memcpy(p, s, len);
	p[len] = 0;
	chunk_pos += len + 1;
	chunk_left -= len + 1;
	return p;
}

static int str_grow_slots(void)
{
	uint32_t nslots = str_mask ? (str_mask + 1) * 2 : STRTAB_INIT_SLOTS;
	uint32_t *ns = calloc(nslots, sizeof(*ns));

	if (!ns)
		return -1;
	for (uint32_t id = 1; id < str_nr; id++) {
		uint32_t i = str_ents[id].hash & (nslots - 1);

		while (ns[i])
			i = (i + 1) & (nslots - 1);
		ns[i] = id + 1;
	}
	free(str_slots);
	str_slots = ns;
	str_mask = nslots - 1;
	return 0;
}

static int str_init(void)
{
	str_cap = STRTAB_INIT_SLOTS;
	str_ents = calloc(str_cap, sizeof(*str_ents));
	if (!str_ents)
		return -1;
	str_ents[0].s = "";
	str_nr = 1;
	return str_grow_slots();
}

static uint32_t intern_clean(const char *s, size_t len);

uint32_t merge_str_intern(const char *s, size_t len)
{
	if (!len)
		return MERGE_NO_STR;
	if (unlikely(!str_ents) && str_init() < 0)
		goto oom;

	uint32_t h = str_hash(s, len);
	uint32_t i = h & str_mask;

	for (uint32_t id; (id = str_slots[i]); i = (i + 1) & str_mask) {
		const struct str_ent *e = &str_ents[id - 1];

		if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
			return id - 1;
	}
	if (unlikely(!vt_utf8_valid(s, len)))
		return intern_clean(s, len);
	if (str_nr == str_cap) {
		struct str_ent *ne = realloc(str_ents, 2 * str_cap * sizeof(*ne));

		if (!ne)
			goto oom;
		str_ents = ne;
		str_cap *= 2;
	}
	char *p = str_store(s, len);

	if (!p)
		goto oom;
	str_ents[str_nr] = (struct str_ent){ p, (uint32_t)len, h };
	str_slots[i] = str_nr + 1;
	str_nr++;
	if (str_nr * 2 > str_mask && str_grow_slots() < 0)
		goto oom;
	return str_nr - 1;
oom:
	str_failed = 1;
	vt_err_set("merge: out of memory interning names");
	return MERGE_NO_STR;
}

/* @s is no valid UTF-8: the id of its cleaned form (each time it is seen:
 * invalid input is rare, and a raw key kept beside would be a second
 * table). */
static uint32_t intern_clean(const char *s, size_t len)
{
	size_t cap = len * VT_UTF8_REPL_LEN + 1;
	char stackbuf[256], *buf = cap <= sizeof(stackbuf) ? stackbuf : malloc(cap);
	uint32_t id;

	if (!buf) {
		str_failed = 1;
		vt_err_set("merge: out of memory interning names");
		return MERGE_NO_STR;
	}
	id = merge_str_intern(buf, vt_utf8_clean(buf, cap, s, len));
	if (buf != stackbuf)
		free(buf);
	return id;
}

uint32_t merge_str_intern0(const char *s)
{
	return merge_str_intern(s, strlen(s));
}

const char *merge_str(uint32_t id)
{
	return id < str_nr ? str_ents[id].s : "";
}

uint32_t merge_str_len(uint32_t id)
{
	return id < str_nr ? str_ents[id].len : 0;
}

uint32_t merge_str_count(void)
{
	return str_nr ? str_nr : 1;
}

int merge_strtab_failed(void)
{
	return str_failed;
}

void merge_strtab_free(void)
{
	for (size_t i = 0; i < nr_chunks; i++)
		free(chunks[i]);
	free(chunks);
	free(str_ents);
	free(str_slots);
	chunks = NULL;
	str_ents = NULL;
	str_slots = NULL;
	nr_chunks = str_nr = str_cap = str_mask = 0;
	chunk_left = 0;
}

/* ---- tracks -------------------------------------------------------- */

struct merge_track *merge_tracks_arr;	/* read inline by merge_track() */
static uint32_t nr_tracks, cap_tracks;

uint32_t merge_track_get_lane(uint32_t machine, int32_t pid, int32_t tid, uint32_t lane,
			      uint32_t pname, uint32_t tname)
{
	/* few threads: a linear scan from the last hit is enough */
	static uint32_t last;
	uint32_t main_idx = UINT32_MAX;
	uint8_t qemu = 0;	/* a new thread of QEMU's process is QEMU's */

	const struct merge_track *t = merge_tracks_arr;

	if (last < nr_tracks && t[last].machine == machine && t[last].tid == tid &&
	    t[last].pid == pid && t[last].lane == lane)
		return last;
	for (uint32_t i = 0; i < nr_tracks; i++) {
		if (t[i].machine != machine || t[i].pid != pid)
			continue;
		if (t[i].tid == tid && t[i].lane == lane)
			return last = i;
		qemu |= t[i].qemu;
	}
	if (lane) {
		main_idx = merge_track_get_lane(machine, pid, tid, 0, pname, tname);
		if (main_idx == UINT32_MAX)
			return UINT32_MAX;
	}
	if (nr_tracks == cap_tracks) {
		uint32_t nc = cap_tracks ? cap_tracks * 2 : 64;
		struct merge_track *nt = realloc(merge_tracks_arr, nc * sizeof(*nt));

		if (!nt) {
			vt_err_set("merge: out of memory for merge_tracks_arr");
			return UINT32_MAX;
		}
		merge_tracks_arr = nt;
		cap_tracks = nc;
	}
	merge_tracks_arr[nr_tracks] = (struct merge_track){
		.machine = machine, .pid = pid, .tid = tid, .name = tname, .pname = pname,
		.lane = lane, .main = lane ? main_idx : nr_tracks, .qemu = qemu,
	};
	return last = nr_tracks++;
}

uint32_t merge_track_get(uint32_t machine, int32_t pid, int32_t tid,
			 uint32_t pname, uint32_t tname)
{
	return merge_track_get_lane(machine, pid, tid, 0, pname, tname);
}

uint32_t merge_track_find_tid(uint32_t machine, int32_t tid)
{
	for (uint32_t i = 0; i < nr_tracks; i++)
		if (merge_tracks_arr[i].machine == machine && merge_tracks_arr[i].tid == tid &&
		    !merge_tracks_arr[i].lane)
			return i;
	return UINT32_MAX;
}

uint32_t merge_track_count(void)
{
	return nr_tracks;
}

void merge_track_set_name(uint32_t idx, uint32_t tname)
{
	if (idx < nr_tracks && tname)
		merge_tracks_arr[idx].name = tname;
}

void merge_track_set_pname(uint32_t machine, int32_t pid, uint32_t pname)
{
	for (uint32_t i = 0; pname && i < nr_tracks; i++)
		if (merge_tracks_arr[i].machine == machine && merge_tracks_arr[i].pid == pid)
			merge_tracks_arr[i].pname = pname;
}

void merge_track_mark_qemu(uint32_t machine, int32_t pid)
{
	for (uint32_t i = 0; i < nr_tracks; i++)
		if (merge_tracks_arr[i].machine == machine && merge_tracks_arr[i].pid == pid)
			merge_tracks_arr[i].qemu = 1;
}

void merge_tracks_free(void)
{
	free(merge_tracks_arr);
	merge_tracks_arr = NULL;
	nr_tracks = cap_tracks = 0;
}
