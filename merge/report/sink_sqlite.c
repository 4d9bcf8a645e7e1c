/*
 * sink_sqlite.c - merge sink "sqlite" of `vmtrace export --sqlite OUT.db`:
 * writes the merged events into an SQLite database (processes, threads,
 * slices, instants, counters, flows) and, through the chain analyser
 * (chain.c, fed the same events), the per-request I/O chain (requests,
 * view request_stages, request_links: each link's event and how it was
 * matched).  Columns: docs/format/sqlite.md.  Runs on the
 * merge thread; memory: open slices per track and the analyser's state.
 * The database is built as OUT.db.tmp and renamed when complete.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "report.h"

#define ARGS_MAX	1024	/* bytes of an args JSON object */
#define COMMIT_EVERY	(1u << 20)	/* rows per transaction */

static const char schema[] =
	"PRAGMA journal_mode=OFF;"
	"PRAGMA synchronous=OFF;"
	"PRAGMA cache_size=-65536;"
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE processes(upid INTEGER PRIMARY KEY, machine INTEGER, pid INTEGER,"
	" name TEXT);"
	"CREATE TABLE threads(utid INTEGER PRIMARY KEY, upid INTEGER, machine INTEGER,"
	" tid INTEGER, name TEXT, vcpu INTEGER);"
	"CREATE TABLE slices(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, utid INTEGER,"
	" depth INTEGER, name TEXT, cpu INTEGER, args TEXT);"
	"CREATE TABLE instants(id INTEGER PRIMARY KEY, ts INTEGER, utid INTEGER, name TEXT,"
	" cpu INTEGER, args TEXT);"
	"CREATE TABLE counters(id INTEGER PRIMARY KEY, ts INTEGER, utid INTEGER, name TEXT,"
	" value INTEGER);"
	"CREATE TABLE flows(id INTEGER PRIMARY KEY, name TEXT, ts_out INTEGER,"
	" utid_out INTEGER, ts_in INTEGER, utid_in INTEGER);"
	"BEGIN;";

struct open_slice {
	uint64_t ts;
	uint32_t name;
	int32_t cpu;
	char *args;
};

struct slstack {
	struct open_slice *a;
	uint32_t n, cap;
};

struct sq {
	struct merge_tables *tables;	/* the events' names and tracks */
	sqlite3 *db;
	sqlite3_stmt *ins_slice, *ins_instant, *ins_counter, *ins_flow;
	struct report *rep;
	struct slstack *st;	/* by track */
	uint32_t nst;
	char *path, *tmp;
	uint64_t rows;
	int aborted;		/* sq_abort: nothing more written, OUT.db.tmp removed */
};

static int sq_fail(struct sq *s, const char *what)
{
	return vt_err_set("%s: sqlite %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static void json_str(char *buf, size_t cap, size_t *n, const char *v)
{
	for (; *v && *n + 8 < cap; v++) {
		unsigned char ch = (unsigned char)*v;

		if (ch == '"' || ch == '\\')
			*n += (size_t)snprintf(buf + *n, cap - *n, "\\%c", ch);
		else if (ch < 0x20)
			*n += (size_t)snprintf(buf + *n, cap - *n, "\\u%04x", ch);
		else
			buf[(*n)++] = (char)ch;
	}
	buf[*n] = 0;
}

/* The event's arguments as a JSON object ("" when none) into @buf. */
static const char *args_json(const struct sq *s, const struct merge_event *ev, char *buf,
			     size_t cap)
{
	size_t n = 0;

	buf[0] = 0;
	if (!ev->nr_args)
		return buf;
	buf[n++] = '{';
	for (int i = 0; i < ev->nr_args && n + 64 < cap; i++) {
		const struct merge_arg *a = &ev->args[i];

		if (i)
			buf[n++] = ',';
		buf[n++] = '"';
		json_str(buf, cap - 16, &n, merge_str(s->tables, a->key));
		buf[n++] = '"';
		buf[n++] = ':';
		if (a->type == MERGE_ARG_U64)
			n += (size_t)snprintf(buf + n, cap - n, "%" PRIu64, a->v.u);
		else if (a->type == MERGE_ARG_I64)
			n += (size_t)snprintf(buf + n, cap - n, "%" PRId64, a->v.i);
		else if (a->type != MERGE_ARG_STR) {	/* an array of numbers */
			uint32_t f = merge_arr_first(a->v.u), c = merge_arr_count(a->v.u);

			buf[n++] = '[';
			for (uint32_t k = 0; k < c && f + k < MERGE_ARR_MAX && n + 24 < cap - 16; k++)
				n += (size_t)(a->type == MERGE_ARG_ARRAY_I64 ?
					snprintf(buf + n, cap - n, "%s%" PRId64, k ? "," : "",
						 (int64_t)ev->arr[f + k]) :
					snprintf(buf + n, cap - n, "%s%" PRIu64, k ? "," : "",
						 ev->arr[f + k]));
			buf[n++] = ']';
		} else {
			buf[n++] = '"';
			json_str(buf, cap - 16, &n, merge_str(s->tables, a->v.str));
			buf[n++] = '"';
		}
	}
	buf[n++] = '}';
	buf[n] = 0;
	return buf;
}

static void *sq_open(struct merge_tables *tb, const char *out, const void *opts)
{
	struct sq *s = calloc(1, sizeof(*s));

	if (!s) {
		vt_err_set("%s: out of memory", out);
		return NULL;
	}
	s->tables = tb;
	s->path = strdup(out);
	if (!s->path || asprintf(&s->tmp, "%s.tmp", out) < 0) {
		vt_err_set("%s: out of memory", out);
		goto fail;
	}
	unlink(s->tmp);
	if (sqlite3_open(s->tmp, &s->db) != SQLITE_OK) {
		vt_err_set("%s: cannot create: %s", s->tmp, s->db ? sqlite3_errmsg(s->db) : "?");
		goto fail;
	}
	if (sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK) {
		sq_fail(s, "schema");
		goto fail;
	}
	if (sqlite3_prepare_v2(s->db, "INSERT INTO slices(ts,dur,utid,depth,name,cpu,args) "
			       "VALUES(?,?,?,?,?,?,?)", -1, &s->ins_slice, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO instants(ts,utid,name,cpu,args) "
			       "VALUES(?,?,?,?,?)", -1, &s->ins_instant, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO counters(ts,utid,name,value) VALUES(?,?,?,?)",
			       -1, &s->ins_counter, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO flows(name,ts_out,utid_out,ts_in,utid_in) "
			       "VALUES(?,?,?,?,?)", -1, &s->ins_flow, NULL)) {
		sq_fail(s, "prepare");
		goto fail;
	}
	s->rep = report_new(tb, 0);
	if (!s->rep || report_load_extents(s->rep, opts))	/* opts: export's */
		goto fail;
	return s;
fail:
	if (s->rep)
		report_free(s->rep);
	if (s->db) {
		sqlite3_finalize(s->ins_slice);
		sqlite3_finalize(s->ins_instant);
		sqlite3_finalize(s->ins_counter);
		sqlite3_finalize(s->ins_flow);
		sqlite3_close(s->db);
		unlink(s->tmp);
	}
	free(s->path);
	free(s->tmp);
	free(s);
	return NULL;
}

static int step(struct sq *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (unlikely(rc != SQLITE_DONE))
		return sq_fail(s, "insert");
	if (unlikely(++s->rows % COMMIT_EVERY == 0) &&
	    sqlite3_exec(s->db, "COMMIT; BEGIN;", NULL, NULL, NULL) != SQLITE_OK)
		return sq_fail(s, "commit");
	return 0;
}

static void bind_text(sqlite3_stmt *st, int col, const char *v)
{
	if (v && *v)
		sqlite3_bind_text(st, col, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, col);
}

static void bind_cpu(sqlite3_stmt *st, int col, int32_t cpu)
{
	if (cpu >= 0)
		sqlite3_bind_int(st, col, cpu);
	else
		sqlite3_bind_null(st, col);
}

static struct slstack *stack_of(struct sq *s, uint32_t track)
{
	if (unlikely(track >= s->nst)) {
		uint32_t nc = s->nst ? s->nst : 64;

		while (nc <= track)
			nc *= 2;
		struct slstack *n = realloc(s->st, nc * sizeof(*n));

		if (!n)
			return NULL;
		memset(n + s->nst, 0, (nc - s->nst) * sizeof(*n));
		s->st = n;
		s->nst = nc;
	}
	return &s->st[track];
}

static int sq_event(void *sink, const struct merge_event *ev)
{
	struct sq *s = sink;
	char args[ARGS_MAX];
	struct slstack *k = stack_of(s, ev->track);

	if (unlikely(!k))
		return vt_err_set("%s: out of memory", s->path);
	if (report_feed(s->rep, ev) < 0)
		return -1;
	if (ev->flow_id) {
		sqlite3_stmt *st = s->ins_flow;

		bind_text(st, 1, merge_str(s->tables, ev->flow_name));
		sqlite3_bind_int64(st, 2, (sqlite3_int64)ev->flow_ts_ns);
		sqlite3_bind_int64(st, 3, ev->flow_track);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)ev->ts_ns);
		sqlite3_bind_int64(st, 5, ev->track);
		if (step(s, st) < 0)
			return -1;
	}
	switch (ev->kind) {
	case MERGE_EV_BEGIN: {
		if (k->n == k->cap) {
			uint32_t nc = k->cap ? k->cap * 2 : 16;
			struct open_slice *n = realloc(k->a, nc * sizeof(*n));

			if (!n)
				return vt_err_set("%s: out of memory", s->path);
			k->a = n;
			k->cap = nc;
		}
		char *a = ev->nr_args ? strdup(args_json(s, ev, args, sizeof(args))) : NULL;

		if (ev->nr_args && !a)	/* not a slice without its args */
			return vt_err_set("%s: out of memory", s->path);
		struct open_slice *o = &k->a[k->n++];

		o->ts = ev->ts_ns;
		o->name = ev->name;
		o->cpu = ev->cpu;
		o->args = a;
		return 0;
	}
	case MERGE_EV_END: {
		if (!k->n)
			return 0;
		struct open_slice *o = &k->a[--k->n];
		sqlite3_stmt *st = s->ins_slice;

		sqlite3_bind_int64(st, 1, (sqlite3_int64)o->ts);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)(ev->ts_ns - o->ts));
		sqlite3_bind_int64(st, 3, ev->track);
		sqlite3_bind_int(st, 4, (int)k->n);
		bind_text(st, 5, merge_str(s->tables, o->name));
		bind_cpu(st, 6, o->cpu);
		bind_text(st, 7, o->args);
		free(o->args);
		return step(s, st);
	}
	case MERGE_EV_INSTANT: {
		sqlite3_stmt *st = s->ins_instant;

		sqlite3_bind_int64(st, 1, (sqlite3_int64)ev->ts_ns);
		sqlite3_bind_int64(st, 2, ev->track);
		bind_text(st, 3, merge_str(s->tables, ev->name));
		bind_cpu(st, 4, ev->cpu);
		bind_text(st, 5, args_json(s, ev, args, sizeof(args)));
		return step(s, st);
	}
	default: {
		sqlite3_stmt *st = s->ins_counter;

		sqlite3_bind_int64(st, 1, (sqlite3_int64)ev->ts_ns);
		sqlite3_bind_int64(st, 2, ev->track);
		bind_text(st, 3, merge_str(s->tables, ev->name));
		sqlite3_bind_int64(st, 4, ev->value);
		return step(s, st);
	}
	}
}

static int write_tracks(struct sq *s)
{
	sqlite3_stmt *tp = NULL, *tt = NULL;
	int ret = 0;

	if (sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO processes(upid,machine,pid,name) "
			       "VALUES(?,?,?,?)", -1, &tp, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO threads(utid,upid,machine,tid,name,vcpu) "
			       "VALUES(?,?,?,?,?,?)", -1, &tt, NULL)) {
		ret = sq_fail(s, "prepare");
		goto out;
	}
	for (uint32_t i = 0; i < merge_track_count(s->tables) && !ret; i++) {
		const struct merge_track *t = merge_track(s->tables, i);
		/* upid: (machine, pid) packed, as merge's Perfetto process uuid */
		int64_t upid = (int64_t)((uint64_t)(t->machine + 1) << 32 | (uint32_t)t->pid);

		sqlite3_bind_int64(tp, 1, upid);
		sqlite3_bind_int64(tp, 2, t->machine);
		sqlite3_bind_int64(tp, 3, t->pid);
		bind_text(tp, 4, merge_str(s->tables, t->pname));
		sqlite3_bind_int64(tt, 1, i);
		sqlite3_bind_int64(tt, 2, upid);
		sqlite3_bind_int64(tt, 3, t->machine);
		sqlite3_bind_int64(tt, 4, t->tid);
		bind_text(tt, 5, merge_str(s->tables, t->name));
		bind_cpu(tt, 6, t->vcpu ? (int32_t)t->vcpu - 1 : -1);
		if (step(s, tp) < 0 || step(s, tt) < 0)
			ret = -1;
	}
out:
	sqlite3_finalize(tp);
	sqlite3_finalize(tt);
	return ret;
}

static int write_requests(struct sq *s)
{
	char sql[4096], mb[RL_NR + 1];
	size_t n = 0;
	sqlite3_stmt *st = NULL;
	int ret = 0;

	n += (size_t)snprintf(sql + n, sizeof(sql) - n,
			      "CREATE TABLE requests(id INTEGER PRIMARY KEY, machine INTEGER,"
			      " dev INTEGER, sector INTEGER, nr_sector INTEGER, rwbs TEXT,"
			      " cpu INTEGER, tid INTEGER, links TEXT, mask INTEGER,"
			      " latency INTEGER, syscall TEXT, python_stack TEXT,"
			      " host_tid INTEGER, host_syscall TEXT, kick_vcpu INTEGER");
	for (int l = 0; l < RL_NR; l++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", %s INTEGER",
				      report_link_names[l]);
	n += (size_t)snprintf(sql + n, sizeof(sql) - n, "); CREATE VIEW request_stages AS "
			      "SELECT id, links");
	for (int g = 0; g < REPORT_NR_STAGES; g++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", %s - %s AS %s",
				      report_link_names[report_stages[g].to],
				      report_link_names[report_stages[g].from],
				      report_stages[g].name);
	snprintf(sql + n, sizeof(sql) - n, " FROM requests;");
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sq_fail(s, "requests table");
	n = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO requests VALUES(?");
	for (int i = 1; i < 16 + RL_NR; i++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, ",?");
	snprintf(sql + n, sizeof(sql) - n, ")");
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL))
		return sq_fail(s, "prepare");
	for (size_t i = 0; i < report_nr_reqs(s->rep) && !ret; i++) {
		const struct report_req *q = report_req_at(s->rep, i);
		const struct report_sys *y = report_sys_at(s->rep, q->sys);

		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_int64(st, 2, q->machine);
		sqlite3_bind_int64(st, 3, q->dev);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)q->sector);
		sqlite3_bind_int64(st, 5, q->nr_sector);
		bind_text(st, 6, merge_str(s->tables, q->rwbs));
		bind_cpu(st, 7, q->cpu);
		sqlite3_bind_int64(st, 8, q->tid);
		bind_text(st, 9, report_mask_str(q->mask, mb));
		sqlite3_bind_int64(st, 10, q->mask);
		sqlite3_bind_int64(st, 11, (sqlite3_int64)report_req_latency(q));
		bind_text(st, 12, y ? merge_str(s->tables, y->name) : NULL);
		bind_text(st, 13, y && y->stack ? merge_str(s->tables, y->stack) : NULL);
		bind_cpu(st, 14, q->host_tid);
		bind_text(st, 15, q->host_tid >= 0 ? merge_str(s->tables, q->host_sys) : NULL);
		bind_cpu(st, 16, q->kick_vcpu);
		for (int l = 0; l < RL_NR; l++)
			if (q->mask & (1u << l))
				sqlite3_bind_int64(st, 17 + l, (sqlite3_int64)q->t[l]);
			else
				sqlite3_bind_null(st, 17 + l);
		ret = step(s, st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* request_links: per request each link's event and how it was matched;
 * the QEMU operations (host_io) one row each with their file range. */
static int write_links(struct sq *s)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if (sqlite3_exec(s->db, "CREATE TABLE request_links(request_id INTEGER, link TEXT,"
			 " ts INTEGER, ts_end INTEGER, method TEXT, tid INTEGER, syscall TEXT,"
			 " fd INTEGER, offset INTEGER, length INTEGER, dir TEXT,"
			 " address INTEGER, data INTEGER);", NULL, NULL, NULL) != SQLITE_OK)
		return sq_fail(s, "request_links table");
	if (sqlite3_prepare_v2(s->db, "INSERT INTO request_links VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL))
		return sq_fail(s, "prepare");
	for (size_t i = 0; i < report_nr_reqs(s->rep) && !ret; i++) {
		const struct report_req *q = report_req_at(s->rep, i);
		const struct report_sys *y = report_sys_at(s->rep, q->sys);

		for (int l = 0; l < RL_NR && !ret; l++) {
			if (!(q->mask & (1u << l)) || l == RL_HOST_END)
				continue;
			for (int c = 1; c <= 13; c++)
				sqlite3_bind_null(st, c);
			sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
			bind_text(st, 5, report_how_names[q->how[l]]);
			if (l == RL_HOST_BEGIN) {
				bind_text(st, 2, "host_io");
				for (uint32_t k = 0; k < q->host_n && !ret; k++) {
					const struct report_hostio *h = report_req_hostio(s->rep, q, k);
					char dir[2] = { h->dir, 0 };

					sqlite3_bind_int64(st, 3, (sqlite3_int64)h->enter);
					if (h->exit)
						sqlite3_bind_int64(st, 4, (sqlite3_int64)h->exit);
					else
						sqlite3_bind_null(st, 4);
					sqlite3_bind_int64(st, 6, h->tid);
					bind_text(st, 7, merge_str(s->tables, h->name));
					if (h->fd >= 0)
						sqlite3_bind_int64(st, 8, h->fd);
					if (h->has_off) {
						sqlite3_bind_int64(st, 9, (sqlite3_int64)h->off);
						sqlite3_bind_int64(st, 10, (sqlite3_int64)h->len);
					}
					bind_text(st, 11, dir);
					ret = step(s, st);
				}
				continue;
			}
			bind_text(st, 2, report_link_names[l]);
			sqlite3_bind_int64(st, 3, (sqlite3_int64)q->t[l]);
			if (l == RL_KICK) {
				bind_cpu(st, 6, q->kick_tid);
				sqlite3_bind_int64(st, 12, (sqlite3_int64)q->kick_addr);
			} else if (l == RL_INJECT) {
				bind_cpu(st, 6, q->inj_tid);
				sqlite3_bind_int64(st, 12, (sqlite3_int64)q->inj_addr);
				sqlite3_bind_int64(st, 13, (sqlite3_int64)q->inj_data);
			} else if (l == RL_SYS_ENTER || l == RL_SYS_EXIT) {
				sqlite3_bind_int64(st, 6, y ? y->tid : q->tid);
				bind_text(st, 7, y ? merge_str(s->tables, y->name) : NULL);
			} else if (l != RL_IRQ && l != RL_COMPLETE) {
				sqlite3_bind_int64(st, 6, q->tid);
			}
			ret = step(s, st);
		}
	}
	sqlite3_finalize(st);
	return ret;
}

static int sq_close(void *sink)
{
	struct sq *s = sink;
	int ret = s->aborted ? -1 : report_finish(s->rep);

	for (uint32_t i = 0; i < s->nst; i++) {
		for (uint32_t j = 0; j < s->st[i].n; j++)
			free(s->st[i].a[j].args);
		free(s->st[i].a);
	}
	free(s->st);
	if (!ret)
		ret = write_tracks(s);
	if (!ret)
		ret = write_requests(s);
	if (!ret)
		ret = write_links(s);
	if (!ret && sqlite3_exec(s->db,
				 "INSERT INTO meta VALUES('format','vmtrace-sqlite 1'),"
				 "('ts_unit','ns, host timeline');"
				 "COMMIT;"
				 "CREATE INDEX slices_name ON slices(name);"
				 "CREATE INDEX instants_name ON instants(name);",
				 NULL, NULL, NULL) != SQLITE_OK)
		ret = sq_fail(s, "commit");
	sqlite3_finalize(s->ins_slice);
	sqlite3_finalize(s->ins_instant);
	sqlite3_finalize(s->ins_counter);
	sqlite3_finalize(s->ins_flow);
	if (sqlite3_close(s->db) != SQLITE_OK && !ret)
		ret = vt_err_set("%s: sqlite close failed", s->tmp);
	if (!ret && rename(s->tmp, s->path))
		ret = vt_err_errno("%s: cannot rename to %s", s->tmp, s->path);
	if (ret)
		unlink(s->tmp);
	report_free(s->rep);
	free(s->path);
	free(s->tmp);
	free(s);
	return ret;
}

/* after a failure: the database is not renamed into place (not half made) */
static void sq_abort(void *sink)
{
	struct sq *s = sink;

	s->aborted = 1;
	sq_close(s);
}

const struct merge_sink_ops report_sink_sqlite = {
	.name = "sqlite",
	.open = sq_open,
	.event = sq_event,
	.abort = sq_abort,
	.close = sq_close,
};

