/*
 * t-merge-tables.c - merge's name and track tables (merge/tables.c) and
 * the small tables its sinks share (merge/sink.c): interning gives one id
 * per distinct string (0 for ""; two whose hashes collide are two), ids
 * and strings round-trip through the table's growth; a track is found again by (machine, pid, tid, lane),
 * a second lane makes its thread's first one, renames reach the right
 * tracks; two tables are independent; merge_name_in, merge_table_grow and merge_idset behave as
 * merge.h says.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "merge/merge.h"

#define NR_MANY		100000	/* past the first hash table and storage chunk */

static void test_strings(void)
{
	struct merge_tables tb = { 0 };
	char buf[32];
	uint32_t a, b, c, *ids;
	int bad = 0;

	CHECK(merge_str_intern0(&tb, "") == MERGE_NO_STR);
	CHECK(merge_str_intern(&tb, "abc", 0) == MERGE_NO_STR);
	CHECK_STR(merge_str(&tb, MERGE_NO_STR), "");
	a = merge_str_intern0(&tb, "kvm_exit");
	b = merge_str_intern0(&tb, "kvm_entry");
	c = merge_str_intern0(&tb, "kvm_exit");
	CHECK(a != MERGE_NO_STR && b != MERGE_NO_STR);
	CHECK(a == c && a != b);
	CHECK_STR(merge_str(&tb, a), "kvm_exit");
	CHECK(merge_str_len(&tb, a) == 8);
	/* a length that cuts the string: its prefix, stored NUL-terminated */
	c = merge_str_intern(&tb, "kvm_entry_more", 9);
	CHECK(c == b);
	c = merge_str_intern(&tb, "kvm_exit_x", 7);
	CHECK(c != a && c != b);
	CHECK_STR(merge_str(&tb, c), "kvm_exi");
	CHECK(merge_str_len(&tb, c) == 7);
	/* invalid UTF-8 too long for the 256-byte stack buffer (100 bytes, up
	 * to 3 each cleaned): cleaned on the heap, each byte U+FFFD */
	{
		char bad100[100], want[301];

		memset(bad100, 0xff, sizeof(bad100));
		for (int i = 0; i < 100; i++)
			memcpy(want + 3 * i, "\xef\xbf\xbd", 3);
		want[300] = 0;
		c = merge_str_intern(&tb, bad100, sizeof(bad100));
		CHECK_STR(merge_str(&tb, c), want);
		CHECK(merge_str_intern(&tb, bad100, sizeof(bad100)) == c);
	}
	/* FNV-1a collisions (found by search): the same hash, the same or
	 * another length, are still two names */
	{
		uint32_t x = merge_str_intern0(&tb, "iskuks"), y = merge_str_intern0(&tb, "lprtpd");
		uint32_t u = merge_str_intern0(&tb, "muxgarc"), v = merge_str_intern0(&tb, "bmbggz");

		CHECK(x != y && u != v);
		CHECK(merge_str_intern0(&tb, "lprtpd") == y && merge_str_intern0(&tb, "bmbggz") == v);
		CHECK_STR(merge_str(&tb, y), "lprtpd");
		CHECK_STR(merge_str(&tb, v), "bmbggz");
	}
	/* bytes after a NUL count: "a\0b" is not "a" */
	CHECK(merge_str_intern(&tb, "a\0b", 3) != merge_str_intern0(&tb, "a"));
	/* out of range: empty, not a crash */
	CHECK_STR(merge_str(&tb, UINT32_MAX), "");
	CHECK(merge_str_len(&tb, UINT32_MAX) == 0);

	ids = malloc(NR_MANY * sizeof(*ids));
	CHECK(ids != NULL);
	if (!ids)
		return;
	for (int i = 0; i < NR_MANY; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		ids[i] = merge_str_intern0(&tb, buf);
	}
	for (int i = 0; i < NR_MANY; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		if (strcmp(merge_str(&tb, ids[i]), buf) || merge_str_intern0(&tb, buf) != ids[i] ||
		    merge_str_len(&tb, ids[i]) != strlen(buf) || (i && ids[i] <= ids[i - 1]))
			bad++;
	}
	CHECK(bad == 0);
	CHECK(merge_str_count(&tb) > NR_MANY);
	CHECK_STR(merge_str(&tb, a), "kvm_exit");	/* still there after growing */
	CHECK(!merge_strtab_failed(&tb));
	free(ids);
	merge_tables_free(&tb);
	CHECK(merge_str_count(&tb) == 1);		/* just "" */
	CHECK(merge_str_intern0(&tb, "again") == 1);
	merge_tables_free(&tb);
}

static void test_tracks(void)
{
	struct merge_tables tb = { 0 };
	uint32_t p = merge_str_intern0(&tb, "qemu"), t1 = merge_str_intern0(&tb, "vcpu0");
	uint32_t h, h2, g, lane, again;

	CHECK(merge_track_count(&tb) == 0);
	h = merge_track_get(&tb, MERGE_MACHINE_HOST, 100, 101, p, t1);
	CHECK(h == 0);
	CHECK(merge_track_get(&tb, MERGE_MACHINE_HOST, 100, 101, 0, 0) == h);
	CHECK(merge_track(&tb, h)->pname == p && merge_track(&tb, h)->name == t1);
	CHECK(merge_track(&tb, h)->lane == 0 && merge_track(&tb, h)->main == h);
	h2 = merge_track_get(&tb, MERGE_MACHINE_HOST, 100, 102, p, 0);
	CHECK(h2 == 1);
	/* the same pid/tid on a guest is another track */
	g = merge_track_get(&tb, 1, 100, 101, 0, 0);
	CHECK(g == 2 && merge_track(&tb, g)->machine == 1);
	/* lane 1 of a new thread makes its lane-0 track first */
	lane = merge_track_get_lane(&tb, MERGE_MACHINE_HOST, 200, 201, 1, p, 0);
	CHECK(merge_track_count(&tb) == 5);
	CHECK(lane == 4 && merge_track(&tb, lane)->lane == 1);
	CHECK(merge_track(&tb, lane)->main == 3 && merge_track(&tb, 3)->lane == 0);
	CHECK(merge_track(&tb, 3)->tid == 201 && merge_track(&tb, 3)->pid == 200);
	again = merge_track_get_lane(&tb, MERGE_MACHINE_HOST, 200, 201, 1, 0, 0);
	CHECK(again == lane);
	/* by tid alone: the lane-0 track, whatever the pid, on that machine */
	CHECK(merge_track_find_tid(&tb, MERGE_MACHINE_HOST, 201) == 3);
	CHECK(merge_track_find_tid(&tb, MERGE_MACHINE_HOST, 101) == h);
	CHECK(merge_track_find_tid(&tb, 1, 101) == g);
	CHECK(merge_track_find_tid(&tb, 2, 101) == UINT32_MAX);
	/* renames: 0 keeps the name; a process rename reaches all its tracks
	 * on that machine only */
	merge_track_set_name(&tb, h, 0);
	CHECK(merge_track(&tb, h)->name == t1);
	merge_track_set_name(&tb, h, merge_str_intern0(&tb, "vcpu0 renamed"));
	CHECK_STR(merge_str(&tb, merge_track(&tb, h)->name), "vcpu0 renamed");
	merge_track_set_name(&tb, UINT32_MAX, t1);	/* out of range: ignored */
	merge_track_set_pname(&tb, MERGE_MACHINE_HOST, 100, merge_str_intern0(&tb, "qemu-system"));
	CHECK_STR(merge_str(&tb, merge_track(&tb, h)->pname), "qemu-system");
	CHECK_STR(merge_str(&tb, merge_track(&tb, h2)->pname), "qemu-system");
	CHECK(merge_track(&tb, g)->pname == 0);
	CHECK(merge_track(&tb, 3)->pname == p);
	/* QEMU's process: its tracks, and its threads' tracks made later;
	 * not the same pid on a guest machine, nor another process */
	CHECK(!merge_track(&tb, h)->qemu);
	merge_track_mark_qemu(&tb, MERGE_MACHINE_HOST, 100);
	CHECK(merge_track(&tb, h)->qemu && merge_track(&tb, h2)->qemu);
	CHECK(!merge_track(&tb, g)->qemu && !merge_track(&tb, 3)->qemu);
	CHECK(merge_track(&tb, merge_track_get(&tb, MERGE_MACHINE_HOST, 100, 109, 0, 0))->qemu);
	CHECK(!merge_track(&tb, merge_track_get(&tb, 1, 100, 109, 0, 0))->qemu);
	/* many threads: the table grows, indexes stay */
	for (int i = 0; i < 1000; i++)
		CHECK(merge_track_get(&tb, MERGE_MACHINE_HOST, 300, 1000 + i, 0, 0) ==
		      (uint32_t)(7 + i));
	CHECK(merge_track_get(&tb, MERGE_MACHINE_HOST, 300, 1000, 0, 0) == 7);
	CHECK(merge_track(&tb, lane)->main == 3);
	/* the same tid under another pid right after it (the last hit's
	 * shortcut sees the pid differ): another track */
	h = merge_track_get(&tb, 2, 100, 101, 0, 0);
	h2 = merge_track_get(&tb, 2, 999, 101, 0, 0);
	CHECK(h != h2 && merge_track(&tb, h2)->pid == 999 && merge_track(&tb, h)->pid == 100);
	CHECK(merge_track_get(&tb, 2, 100, 101, 0, 0) == h);
	/* a process renamed to no name keeps its name */
	merge_track_set_pname(&tb, MERGE_MACHINE_HOST, 100, 0);
	CHECK_STR(merge_str(&tb, merge_track(&tb, 0)->pname), "qemu-system");
	merge_tables_free(&tb);
	CHECK(merge_track_count(&tb) == 0 && merge_str_count(&tb) == 1);
}

/* Two tables (two pipelines' contexts) share nothing: ids, strings and
 * tracks of one are not the other's, and freeing one leaves the other. */
static void test_two_tables(void)
{
	struct merge_tables a = { 0 }, b = { 0 };
	uint32_t xa = merge_str_intern0(&a, "x"), yb = merge_str_intern0(&b, "y");
	uint32_t xb = merge_str_intern0(&b, "x");

	CHECK(xa == 1 && yb == 1 && xb == 2);
	CHECK_STR(merge_str(&a, 1), "x");
	CHECK_STR(merge_str(&b, 1), "y");
	CHECK(merge_str_count(&a) == 2 && merge_str_count(&b) == 3);
	CHECK(merge_track_get(&a, MERGE_MACHINE_HOST, 1, 2, xa, xa) == 0);
	CHECK(merge_track_get(&b, MERGE_MACHINE_HOST, 3, 4, 0, 0) == 0);
	CHECK(merge_track_get(&b, MERGE_MACHINE_HOST, 1, 2, 0, 0) == 1);
	CHECK(merge_track_find_tid(&a, MERGE_MACHINE_HOST, 4) == UINT32_MAX);
	merge_track_mark_qemu(&b, MERGE_MACHINE_HOST, 1);
	CHECK(!merge_track(&a, 0)->qemu && merge_track(&b, 1)->qemu);
	merge_tables_free(&a);
	CHECK(merge_track_count(&a) == 0 && merge_track_count(&b) == 2);
	CHECK_STR(merge_str(&b, xb), "x");
	merge_tables_free(&b);
}

static void test_sink_tables(void)
{
	static const char *const list[] = { "json", "chrome", NULL };
	struct merge_idset set = { 0 };
	uint32_t *tab = NULL, cap = 0;

	CHECK(merge_name_in("json", list) == 1);
	CHECK(merge_name_in("chrome", list) == 1);
	CHECK(merge_name_in("jso", list) == 0);
	CHECK(merge_name_in("json", NULL) == 0);

	CHECK(merge_table_grow(&tab, &cap, 10, sizeof(*tab)) == 0);
	CHECK(cap == MERGE_TABLE_MIN && tab != NULL);
	tab[9] = 7;
	CHECK(merge_table_grow(&tab, &cap, 5, sizeof(*tab)) == 0 && cap == MERGE_TABLE_MIN);
	CHECK(merge_table_grow(&tab, &cap, MERGE_TABLE_MIN * 3, sizeof(*tab)) == 0);
	CHECK(cap == MERGE_TABLE_MIN * 4);
	CHECK(tab[9] == 7 && tab[MERGE_TABLE_MIN] == 0 && tab[cap - 1] == 0);
	CHECK(merge_table_grow(&tab, &cap, UINT32_MAX, sizeof(*tab)) == -1);
	CHECK(cap == MERGE_TABLE_MIN * 4);
	free(tab);

	CHECK(merge_idset_add(&set, 42) == 1);
	CHECK(merge_idset_add(&set, 42) == 0);
	for (uint64_t i = 0; i < 200; i++)
		CHECK(merge_idset_add(&set, 1000 + i) == 1);
	CHECK(merge_idset_add(&set, 1100) == 0);
	CHECK(set.nr == 201);
	merge_idset_free(&set);
	CHECK(set.nr == 0 && set.ids == NULL);
	CHECK(merge_idset_add(&set, 42) == 1);
	merge_idset_free(&set);
}

int main(void)
{
	test_strings();
	test_tracks();
	test_two_tables();
	test_sink_tables();
	return check_done();
}
