/*
 * gen-tracedat.c - test helper: writes a synthetic trace.dat through the
 * lib/tracedat.h writer, with events described on stdin, in ring-buffer
 * pages as the kernel lays them out.  Event formats (and header_page /
 * header_event) are this machine's, read from tracefs, so the events are
 * the ones `vmtrace record` would capture.  Single-threaded; allocates.
 *
 * usage: gen-tracedat [-z] OUT.dat [TRACEFS]   (TRACEFS default /sys/kernel/tracing;
 *        -z: version 7 with zstd-compressed sections, as `vmtrace record` writes)
 * stdin, one directive a line:
 *   clock NAME                 trace clock of the file (default x86-tsc;
 *                              "-": no TRACECLOCK option, as older files)
 *   comm TID NAME              a cmdline entry ("CPU 0/KVM")
 *   ev CPU TS TID SYS/EVENT [field=value ...]   one event (per CPU in order);
 *                              a value that is not a number fills a char
 *                              array field (rwbs=WS; "\s" in it is a space:
 *                              next_comm=CPU\s0/KVM; a __data_loc char[]
 *                              field's text goes after the fixed fields,
 *                              the record up to 112 bytes)
 * Exit 77 when tracefs or an event format is missing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "tracedat.h"

#define PAGE		4096
#define MAX_CPUS	8
#define MAX_EVTYPES	32
#define MAX_FIELDS	32
#define DELTA_BITS	27
#define TYPE_TIME_EXTEND 30
#define MAX_DATA_TYPE_LEN 28	/* type_len 1..28: length = 4 * type_len */

struct field {
	char name[64];
	int offset, size;
	int dyn;		/* a __data_loc char[]: (length << 16 | offset) */
};

struct evtype {
	char sys[64], name[64];
	char *fmt;
	size_t fmt_len;
	int id, size, nr;
	struct field f[MAX_FIELDS];
};

struct cpu {
	FILE *fp;
	uint8_t page[PAGE];
	size_t used;		/* bytes of event data in page */
	uint64_t page_ts, last_ts;
	int open;
};

static struct evtype types[MAX_EVTYPES];
static int nr_types;
static struct cpu cpus[MAX_CPUS];
static const char *tracefs = "/sys/kernel/tracing";

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!fp)
		return NULL;
	do {
		if (n + 4096 > cap) {
			cap = cap ? 2 * cap : 16384;
			buf = realloc(buf, cap);
		}
		r = fread(buf + n, 1, cap - n - 1, fp);
		n += r;
	} while (r);
	fclose(fp);
	buf[n] = 0;
	*len = n;
	return buf;
}

static struct evtype *get_type(const char *sysev)
{
	char sys[64], name[64], path[512];

	if (sscanf(sysev, "%63[^/]/%63s", sys, name) != 2)
		return NULL;
	for (int i = 0; i < nr_types; i++)
		if (!strcmp(types[i].sys, sys) && !strcmp(types[i].name, name))
			return &types[i];
	if (nr_types == MAX_EVTYPES)
		return NULL;
	struct evtype *t = &types[nr_types];

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs, sys, name);
	t->fmt = slurp(path, &t->fmt_len);
	if (!t->fmt) {
		printf("no format for %s/%s in %s\n", sys, name, tracefs);
		exit(77);
	}
	strcpy(t->sys, sys);
	strcpy(t->name, name);
	for (char *l = t->fmt; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char decl[256];
		int off, sz;

		if (sscanf(l, "ID: %d", &t->id) == 1)
			continue;
		if (sscanf(l, " field:%255[^;]; offset:%d; size:%d;", decl, &off, &sz) != 3 ||
		    t->nr == MAX_FIELDS)
			continue;
		char *nm = strrchr(decl, ' ');

		snprintf(t->f[t->nr].name, sizeof(t->f[t->nr].name), "%.63s", nm ? nm + 1 : decl);
		/* "rwbs[10]": the array's name */
		*strchrnul(t->f[t->nr].name, '[') = 0;
		t->f[t->nr].offset = off;
		t->f[t->nr].size = sz;
		t->f[t->nr].dyn = !!strstr(decl, "__data_loc");
		if (off + sz > t->size)
			t->size = off + sz;
		t->nr++;
	}
	nr_types++;
	return t;
}

static void put_field(uint8_t *rec, const struct evtype *t, const char *name, uint64_t v)
{
	for (int i = 0; i < t->nr; i++)
		if (!strcmp(t->f[i].name, name)) {
			memcpy(rec + t->f[i].offset, &v, t->f[i].size > 8 ? 8 : t->f[i].size);
			return;
		}
	fprintf(stderr, "gen-tracedat: %s/%s has no field %s\n", t->sys, t->name, name);
	exit(2);
}

/* A fixed char array field (rwbs[10], comm[16]) set to @v, NUL-padded;
 * a __data_loc char[] one: @v appended at the record's end (*@size). */
static void put_str(uint8_t *rec, int *size, const struct evtype *t, const char *name,
		    const char *v)
{
	for (int i = 0; i < t->nr; i++)
		if (!strcmp(t->f[i].name, name)) {
			char *d = (char *)rec + t->f[i].offset;
			int max = t->f[i].size - 1;

			if (t->f[i].dyn) {
				uint32_t loc;

				d = (char *)rec + *size;
				max = 4 * MAX_DATA_TYPE_LEN - *size - 1;
				loc = (uint32_t)(strlen(v) + 1 > (size_t)max + 1 ? (size_t)max + 1 : strlen(v) + 1);
				*size += (int)loc;
				loc = loc << 16 | (uint32_t)(d - (char *)rec);
				memcpy(rec + t->f[i].offset, &loc, 4);
			}
			for (int k = 0; *v && k < max; k++, v++) {
				if (v[0] == '\\' && v[1] == 's') {
					d[k] = ' ';
					v++;
				} else {
					d[k] = *v;
				}
			}
			return;
		}
	fprintf(stderr, "gen-tracedat: %s/%s has no field %s\n", t->sys, t->name, name);
	exit(2);
}

static void flush_page(struct cpu *c)
{
	uint64_t commit = c->used;

	memcpy(c->page, &c->page_ts, 8);
	memcpy(c->page + 8, &commit, 8);
	memset(c->page + 16 + c->used, 0, PAGE - 16 - c->used);
	fwrite(c->page, PAGE, 1, c->fp);
	c->open = 0;
	c->used = 0;
}

static void add_event(struct cpu *c, uint64_t ts, const uint8_t *rec, int size)
{
	int len = (size + 3) & ~3;
	size_t need = 4 + (size_t)len + 8;	/* + a possible time extend */

	if (c->open && 16 + c->used + need > PAGE)
		flush_page(c);
	if (!c->open) {
		c->open = 1;
		c->page_ts = ts;
		c->last_ts = ts;
	}
	uint64_t delta = ts - c->last_ts;
	uint8_t *p = c->page + 16 + c->used;
	uint32_t hdr;

	if (delta >> DELTA_BITS) {
		uint32_t hi = (uint32_t)(delta >> DELTA_BITS);

		hdr = TYPE_TIME_EXTEND | (uint32_t)(delta & ((1u << DELTA_BITS) - 1)) << 5;
		memcpy(p, &hdr, 4);
		memcpy(p + 4, &hi, 4);
		p += 8;
		c->used += 8;
		delta = 0;
	}
	hdr = (uint32_t)(len / 4) | (uint32_t)delta << 5;
	memcpy(p, &hdr, 4);
	memcpy(p + 4, rec, size);
	memset(p + 4 + size, 0, len - size);
	c->used += 4 + len;
	c->last_ts = ts;
}

int main(int argc, char **argv)
{
	char line[4096], clock[64] = "x86-tsc", cmdlines[16384] = "";
	size_t cl_len = 0;
	int zstd = argc > 1 && !strcmp(argv[1], "-z");

	if (zstd) {
		argc--;
		argv++;
	}
	if (argc < 2)
		return 2;
	if (argc > 2)
		tracefs = argv[2];
	for (int i = 0; i < MAX_CPUS; i++)
		cpus[i].fp = tmpfile();
	while (fgets(line, sizeof(line), stdin)) {
		char name[256], sysev[160];
		int cpu, tid, n;
		unsigned long long ts;

		if (sscanf(line, "clock %63s", clock) == 1)
			continue;
		if (sscanf(line, "comm %d %255[^\n]", &tid, name) == 2) {
			cl_len += snprintf(cmdlines + cl_len, sizeof(cmdlines) - cl_len, "%d %s\n",
					   tid, name);
			continue;
		}
		if (sscanf(line, "ev %d %llu %d %159s%n", &cpu, &ts, &tid, sysev, &n) != 4 ||
		    cpu < 0 || cpu >= MAX_CPUS)
			continue;
		struct evtype *t = get_type(sysev);
		uint8_t rec[512] = { 0 };
		char *tok, *save;
		int size;

		if (!t || t->size > (int)sizeof(rec) || t->size > 4 * MAX_DATA_TYPE_LEN)
			return 2;
		put_field(rec, t, "common_type", (uint64_t)t->id);
		put_field(rec, t, "common_pid", (uint64_t)tid);
		size = t->size;
		for (tok = strtok_r(line + n, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
			char *eq = strchr(tok, '=');

			if (!eq)
				continue;
			char *end;
			uint64_t v;

			*eq = 0;
			v = strtoull(eq + 1, &end, 0);
			if (*end || end == eq + 1)	/* not a number: a char array's text */
				put_str(rec, &size, t, tok, eq + 1);
			else
				put_field(rec, t, tok, v);
		}
		add_event(&cpus[cpu], ts, rec, size);
	}

	int nr_cpus = 1, fds[MAX_CPUS];

	for (int i = 0; i < MAX_CPUS; i++) {
		if (cpus[i].open)
			flush_page(&cpus[i]);
		fflush(cpus[i].fp);
		if (ftell(cpus[i].fp) > 0)
			nr_cpus = i + 1;
		fds[i] = fileno(cpus[i].fp);
		lseek(fds[i], 0, SEEK_SET);
	}

	char path[512], *hp, *he;
	size_t hp_len, he_len;

	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	hp = slurp(path, &hp_len);
	snprintf(path, sizeof(path), "%s/events/header_event", tracefs);
	he = slurp(path, &he_len);
	if (!hp || !he) {
		printf("no tracefs headers in %s\n", tracefs);
		return 77;
	}
	char clockopt[80];
	struct vt_td_writer *w;

	snprintf(clockopt, sizeof(clockopt), "[%s]", clock);
	unlink(argv[1]);
	w = zstd ? vt_td_create_zstd(argv[1], PAGE) : vt_td_create(argv[1], PAGE);
	if (!w || vt_td_write_headers(w, hp, hp_len, he, he_len) ||
	    vt_td_write_ftrace_formats(w, 0, NULL, NULL))
		goto fail;
	/* one system per distinct name, in first-use order */
	int nsys = 0;
	const char *sysn[MAX_EVTYPES];

	for (int i = 0; i < nr_types; i++) {
		int j;

		for (j = 0; j < nsys && strcmp(sysn[j], types[i].sys); j++)
			;
		if (j == nsys)
			sysn[nsys++] = types[i].sys;
	}
	if (vt_td_systems_begin(w, nsys))
		goto fail;
	for (int s = 0; s < nsys; s++) {
		const char *fm[MAX_EVTYPES];
		size_t ln[MAX_EVTYPES];
		unsigned k = 0;

		for (int i = 0; i < nr_types; i++)
			if (!strcmp(types[i].sys, sysn[s])) {
				fm[k] = types[i].fmt;
				ln[k++] = types[i].fmt_len;
			}
		if (vt_td_write_system(w, sysn[s], k, fm, ln))
			goto fail;
	}
	if (vt_td_write_kallsyms(w, "", 0) || vt_td_write_printk(w, "", 0) ||
	    vt_td_write_cmdlines(w, cmdlines, cl_len) ||
	    (strcmp(clock, "-") &&
	     vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clockopt, strlen(clockopt) + 1)) ||
	    vt_td_write_cpu_data(w, nr_cpus, fds, NULL) || vt_td_close(w))
		goto fail;
	free(hp);
	free(he);
	for (int i = 0; i < nr_types; i++)
		free(types[i].fmt);
	return 0;
fail:
	vt_err_print("gen-tracedat");
	return 1;
}
