/*
 * usdt_python.c - CPython's USDT markers, recorded as uprobe events by
 * `vmtrace record --python` (guest/usdt), turned into merge events: the
 * same Python function slices as the extension's output, plus gc and
 * import slices.  Runs on the merge thread from reader_tracedat.c;
 * allocates only when a new track is seen.
 *
 * Per track a small stack says what each open slice of ours is (which
 * function, or gc/import), so a marker whose begin is not in the trace (CPython 3.11 fires
 * function__return for every return but function__entry almost never,
 * CPython issue 98894; a recording that started inside a call) becomes an
 * instant instead of closing somebody else's slice; also the returns of a
 * sys.setprofile hook, whose own calls fire no entry.  The kernel's ring
 * buffers are per CPU and merge pulls them in near time order: a thread
 * that migrates between an entry and its return can, rarely, see the
 * return first (then: an instant, and a slice closed at the end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "merge.h"
#include "usdt_python.h"

#define USDT_GROUP_PREFIX	"vmtrace_py_"
#define USDT_STR_MAX		512	/* longest file/func/module kept */
#define USDT_NAME_MAX		(3 * USDT_STR_MAX + 32)
#define USDT_STACK_MAX		128	/* open slices remembered per track */

enum {
	MERGE_USDT_ENTRY = 1,
	MERGE_USDT_RETURN,
	MERGE_USDT_GC_START,
	MERGE_USDT_GC_DONE,
	MERGE_USDT_IMPORT_START,
	MERGE_USDT_IMPORT_DONE,
};

/* Open slices of ours on a track: key[i] = the interned "module.func
 * (file)" of open slice i, USDT_KEY_OTHER for gc/import; deeper than
 * USDT_STACK_MAX only counted (and taken to match). */
#define USDT_KEY_OTHER	UINT32_MAX
struct merge_usdt_track {
	uint32_t depth;
	uint32_t key[USDT_STACK_MAX];
};

static const struct {
	const char *name;
	int kind;
} usdt_names[] = {
	{ "function__entry", MERGE_USDT_ENTRY },
	{ "function__return", MERGE_USDT_RETURN },
	{ "gc__start", MERGE_USDT_GC_START },
	{ "gc__done", MERGE_USDT_GC_DONE },
	{ "import__find__load__start", MERGE_USDT_IMPORT_START },
	{ "import__find__load__done", MERGE_USDT_IMPORT_DONE },
};

int merge_usdt_kind(const char *system, const char *name)
{
	if (strncmp(system, USDT_GROUP_PREFIX, strlen(USDT_GROUP_PREFIX)))
		return 0;
	/* "function__return" or, for a marker's further sites, "function__return_2" */
	size_t n = strlen(name), d = n;

	while (d > 0 && (unsigned int)(name[d - 1] - '0') <= 9)
		d--;
	if (d < n && d > 1 && name[d - 1] == '_')
		n = d - 1;
	for (size_t i = 0; i < sizeof(usdt_names) / sizeof(usdt_names[0]); i++)
		if (strlen(usdt_names[i].name) == n && !strncmp(name, usdt_names[i].name, n))
			return usdt_names[i].kind;
	return 0;
}

static struct merge_usdt_track *trk_of(struct merge_usdt *u, uint32_t track)
{
	if (unlikely(track >= u->nr) &&
	    merge_table_grow(&u->trk, &u->nr, track + 1, sizeof(*u->trk)) < 0)
		return NULL;
	return &u->trk[track];
}

static void push(struct merge_usdt_track *t, uint32_t key)
{
	if (t->depth < USDT_STACK_MAX)
		t->key[t->depth] = key;
	t->depth++;
}

/* 1 and pops when the innermost open slice of ours has @key. */
static int pop_if(struct merge_usdt_track *t, uint32_t key)
{
	if (!t->depth)
		return 0;
	if (t->depth <= USDT_STACK_MAX && t->key[t->depth - 1] != key)
		return 0;
	t->depth--;
	return 1;
}

/* "<frozen importlib._bootstrap>" -> "importlib._bootstrap",
 * "/usr/lib/python3.11/json/decoder.py" -> "decoder": the extension names
 * functions by their module's __name__, which the markers do not carry. */
static void module_of(const char *file, char *out, size_t len)
{
	const char *b = strrchr(file, '/');
	size_t n;

	if (!strncmp(file, "<frozen ", 8)) {
		n = strcspn(file + 8, ">");
		snprintf(out, len, "%.*s", (int)n, file + 8);
		return;
	}
	b = b ? b + 1 : file;
	n = strlen(b);
	if (n > 3 && !strcmp(b + n - 3, ".py"))
		n -= 3;
	snprintf(out, len, "%.*s", (int)n, b);
}

static void arg_u64(struct merge_tables *tb, struct merge_event *ev, const char *key, uint64_t v)
{
	struct merge_arg *a = &ev->args[ev->nr_args++];

	a->key = merge_str_intern0(tb, key);
	a->type = MERGE_ARG_I64;
	a->v.i = (int64_t)v;
}

static void arg_str(struct merge_tables *tb, struct merge_event *ev, const char *key, const char *v)
{
	struct merge_arg *a = &ev->args[ev->nr_args++];

	a->key = merge_str_intern0(tb, key);
	a->type = MERGE_ARG_STR;
	a->v.str = merge_str_intern0(tb, v);
}

/* Function markers: entry -> begin "module.func (file:line)"; a return
 * closing an entry of ours -> end; any other return -> an instant
 * "module.func (file)" with the line of the return. */
static void on_function(struct merge_tables *tb, struct merge_usdt_track *t, int kind,
			const struct vt_td_event *e, struct merge_event *ev)
{
	char file[USDT_STR_MAX], func[USDT_STR_MAX], mod[USDT_STR_MAX], name[USDT_NAME_MAX];
	uint64_t line = 0;
	uint32_t key;

	if (!vt_td_field_str(e, "file", file, sizeof(file)))
		snprintf(file, sizeof(file), "?");
	if (!vt_td_field_str(e, "func", func, sizeof(func)))
		snprintf(func, sizeof(func), "?");
	vt_td_field_u64(e, "line", &line);
	module_of(file, mod, sizeof(mod));
	snprintf(name, sizeof(name), "%s.%s (%s)", mod, func, file);
	key = merge_str_intern0(tb, name);
	if (kind == MERGE_USDT_RETURN && pop_if(t, key)) {
		ev->kind = MERGE_EV_END;
		ev->name = MERGE_NO_STR;
		return;
	}
	if (kind == MERGE_USDT_ENTRY) {
		snprintf(name, sizeof(name), "%s.%s (%s:%d)", mod, func, file, (int)line);
		ev->kind = MERGE_EV_BEGIN;
		ev->name = merge_str_intern0(tb, name);
		push(t, key);
		return;
	}
	ev->kind = MERGE_EV_INSTANT;
	ev->name = key;
	arg_str(tb, ev, "marker", "function__return");
	arg_u64(tb, ev, "line", line);
}

int merge_usdt_event(struct merge_usdt *u, int kind, uint32_t track,
		     const struct vt_td_event *e, struct merge_event *ev)
{
	struct merge_usdt_track *t = trk_of(u, track);
	struct merge_tables *tb = u->tables;
	char buf[USDT_STR_MAX], name[USDT_NAME_MAX];
	uint64_t v = 0;

	if (!t)
		return vt_err_set("out of memory");
	ev->nr_args = 0;
	switch (kind) {
	case MERGE_USDT_ENTRY:
	case MERGE_USDT_RETURN:
		on_function(tb, t, kind, e, ev);
		break;
	case MERGE_USDT_GC_START:
		vt_td_field_u64(e, "generation", &v);
		snprintf(name, sizeof(name), "gc (generation %d)", (int)v);
		ev->kind = MERGE_EV_BEGIN;
		ev->name = merge_str_intern0(tb, name);
		arg_u64(tb, ev, "generation", v);
		push(t, USDT_KEY_OTHER);
		break;
	case MERGE_USDT_IMPORT_START:
		if (!vt_td_field_str(e, "module", buf, sizeof(buf)))
			snprintf(buf, sizeof(buf), "?");
		snprintf(name, sizeof(name), "import %s", buf);
		ev->kind = MERGE_EV_BEGIN;
		ev->name = merge_str_intern0(tb, name);
		push(t, USDT_KEY_OTHER);
		break;
	case MERGE_USDT_GC_DONE:
	case MERGE_USDT_IMPORT_DONE:
		vt_td_field_u64(e, kind == MERGE_USDT_GC_DONE ? "collected" : "found", &v);
		if (pop_if(t, USDT_KEY_OTHER)) {
			ev->kind = MERGE_EV_END;
			ev->name = MERGE_NO_STR;
		} else {
			ev->kind = MERGE_EV_INSTANT;
			ev->name = merge_str_intern0(tb, e->name);
		}
		arg_u64(tb, ev, kind == MERGE_USDT_GC_DONE ? "collected" : "found", v);
		break;
	}
	return 0;
}

void merge_usdt_free(struct merge_usdt *u)
{
	free(u->trk);
	u->trk = NULL;
	u->nr = 0;
}
