/*
 * cmd_top.c - `vmtrace top DIR`: the hottest functions of a trace directory,
 * refreshed while the traced program is still writing it (the Python
 * tracer's files are readable live: a record is complete once its magic is
 * there, zeroed space after it is preallocated, not corrupt).  Runs in the
 * vmtrace command; allocates; reads the directory again on every refresh
 * through lib's uftrace reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
#include "uftrace.h"
#include "guest/usdt/usdt.h"
#include "cli.h"
#include "grow.h"

#define TOP_ROWS_DEFAULT	20
#define TOP_STACK		(VT_UFT_MAX_DEPTH + 1)
#define TOP_TABLE_MIN		4096
/* Fibonacci hashing of symbol addresses (their low 4 bits are flags) */
#define TOP_HASH_MUL		0x9e3779b97f4a7c15ULL
#define TOP_HASH_SHIFT		20

struct top_fn {
	uint64_t addr;		/* symbol start (0: free slot) */
	uint64_t calls;
	uint64_t total;		/* clock units */
	uint64_t self;
	const char *name;
};

struct top_frame {
	uint64_t addr;
	uint64_t start;
	uint64_t child;
};

struct top {
	struct top_fn *fn;
	size_t size, used;
	uint64_t records;
	int tasks;
	int partial;
};

static volatile sig_atomic_t top_quit;

static void top_on_signal(int sig)
{
	top_quit = 1;
}

static struct top_fn *top_fn_get(struct top *t, uint64_t addr)
{
	size_t i;

	if ((t->used + 1) * 2 > t->size) {
		size_t n = t->size ? t->size * 2 : TOP_TABLE_MIN;
		struct top_fn *fn = calloc(n, sizeof(*fn));

		if (!fn)
			return NULL;
		for (size_t j = 0; j < t->size; j++) {
			if (!t->fn[j].addr)
				continue;
			for (i = (t->fn[j].addr * TOP_HASH_MUL) >> TOP_HASH_SHIFT & (n - 1); fn[i].addr;
			     i = (i + 1) & (n - 1))
				;
			fn[i] = t->fn[j];
		}
		free(t->fn);
		t->fn = fn;
		t->size = n;
	}
	for (i = (addr * TOP_HASH_MUL) >> TOP_HASH_SHIFT & (t->size - 1); t->fn[i].addr;
	     i = (i + 1) & (t->size - 1))
		if (t->fn[i].addr == addr)
			return &t->fn[i];
	t->fn[i].addr = addr;
	t->used++;
	return &t->fn[i];
}

/* One record into the table; -1 when out of memory. */
static int top_rec(struct top *t, struct vt_uft_reader *r, struct top_frame *stack,
		   const struct vt_uft_record *rec)
{
	unsigned d = vt_uft_depth(rec->bits);
	uint64_t addr = vt_uft_addr(rec->bits), start = 0;
	struct top_frame *f = &stack[d];
	struct top_fn *fn;

	t->records++;
	if (vt_uft_type(rec->bits) == VT_UFT_ENTRY) {
		f->addr = addr;
		f->start = rec->time;
		f->child = 0;
		return 0;
	}
	if (vt_uft_type(rec->bits) != VT_UFT_EXIT || !f->start)
		return 0;
	if (!vt_uft_sym_find(r, addr, &start))
		start = addr;
	fn = top_fn_get(t, start);
	if (!fn)
		return vt_err_set("out of memory");
	if (rec->time >= f->start) {
		uint64_t dur = rec->time - f->start;

		fn->calls++;
		fn->total += dur;
		fn->self += dur > f->child ? dur - f->child : 0;
		if (d > 0)
			stack[d - 1].child += dur;
	}
	f->start = 0;
	return 0;
}

/* Read one task's records into the table: its .dat, then the newest
 * records still in its stage file (lib's reader takes both). */
static int top_task(struct top *t, struct vt_uft_reader *r, int idx)
{
	static struct top_frame stack[TOP_STACK];
	struct vt_uft_stream *s = vt_uft_stream_open(r, idx);
	struct vt_uft_record rec;
	int rc;

	if (!s)
		return -1;
	memset(stack, 0, sizeof(stack));
	while ((rc = vt_uft_stream_next(s, &rec)) == 1)
		if (top_rec(t, r, stack, &rec) < 0) {
			vt_uft_stream_close(s);
			return -1;
		}
	if (rc < 0)
		t->partial = 1;
	vt_uft_stream_close(s);
	return 0;
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_fn *x = a, *y = b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static int top_show(const char *dir, int rows, int clear)
{
	struct vt_uft_reader *r = vt_uft_open(dir);
	struct top t = { 0 };
	struct vt_meta *m;
	double unit_ms = 0;
	uint64_t hz = 0;
	const char *clock = "?";
	size_t n = 0;

	if (!r)
		return -1;
	m = vt_meta_read_dir(dir);
	if (m) {
		clock = vt_meta_get(m, VT_MK_CLOCK) ? vt_meta_get(m, VT_MK_CLOCK) : "?";
		if (!strcmp(clock, "ns"))
			unit_ms = 1e-6;
		else if (vt_meta_get_u64(m, VT_MK_TSC_HZ, &hz) == 0 && hz)
			unit_ms = 1e3 / (double)hz;
	}
	t.tasks = vt_uft_nr_tasks(r);
	for (int i = 0; i < t.tasks; i++)
		if (top_task(&t, r, i) < 0)
			t.partial = 1;
	for (size_t i = 0; i < t.size; i++)
		if (t.fn[i].addr) {
			t.fn[i].name = vt_uft_sym_name(r, t.fn[i].addr);
			t.fn[n++] = t.fn[i];
		}
	vt_sort(t.fn, n, sizeof(*t.fn), top_cmp);
	if (clear)
		fputs("\033[H\033[J", stdout);
	printf("vmtrace top: %s  %d threads, %" PRIu64 " records, clock %s%s\n", dir, t.tasks,
	       t.records, clock, t.partial ? " (some data unreadable)" : "");
	printf("%12s %12s %10s  %s\n", unit_ms ? "TOTAL ms" : "TOTAL", unit_ms ? "SELF ms" : "SELF",
	       "CALLS", "FUNCTION");
	for (size_t i = 0; i < n && (int)i < rows; i++) {
		const char *name = t.fn[i].name && *t.fn[i].name ? t.fn[i].name : "?";

		if (unit_ms)
			printf("%12.3f %12.3f %10" PRIu64 "  %s\n", (double)t.fn[i].total * unit_ms,
			       (double)t.fn[i].self * unit_ms, t.fn[i].calls, name);
		else
			printf("%12" PRIu64 " %12" PRIu64 " %10" PRIu64 "  %s\n", t.fn[i].total,
			       t.fn[i].self, t.fn[i].calls, name);
	}
	fflush(stdout);
	free(t.fn);
	vt_meta_free(m);
	vt_uft_close(r);
	return 0;
}

/* -i, --interval: a bare number of ms, as every -i (docs/cli.md); below
 * TOP_MIN_INTERVAL_MS it is refused, which also catches seconds meant by
 * a bare number (the unit top -i once had).  0, or -1 with the message
 * printed. */
int top_parse_interval(const char *s, uint64_t *ms)
{
	if (!vt_parse_ms(s, 1, TOP_MIN_INTERVAL_MS, TOP_MAX_INTERVAL_MS, ms))
		return 0;
	vt_error("bad value for -i: %s (%d ms..%d s: a bare number of ms, or with a unit: "
		 "500ms, 2s)", s, TOP_MIN_INTERVAL_MS, TOP_MAX_INTERVAL_MS / 1000);
	return -1;
}

static void top_usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace top [--once] [-n ROWS] [-i MS] DIR\n"
		    "  show the functions with the most total time in a uftrace data directory,\n"
		    "  refreshing while it is written (Ctrl-C ends)\n"
		    "  -i, --interval MS  refresh every MS milliseconds (default 1s, at least\n"
		    "                     %d ms); a unit may be given instead: 500ms, 2s\n",
		    TOP_MIN_INTERVAL_MS);
}

/* `vmtrace top [--once] [-n ROWS] [-i MS] DIR`: returns an exit code. */
int cmd_top(int argc, char **argv)
{
	const char *dir = NULL;
	int once = 0, rows = TOP_ROWS_DEFAULT;
	double interval = 1.0;

	for (int i = 1; i < argc; i++)	/* live from USDT markers: guest/usdt/top.c */
		if (!strncmp(argv[i], "--python", strlen("--python")))
			return usdt_top_main(argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--once")) {
			once = 1;
		} else if (!strcmp(a, "-n") && i + 1 < argc) {
			uint64_t v;

			if (vt_parse_u64(argv[++i], 1, 100000, &v)) {
				vt_error("bad value for -n: %s", argv[i]);
				return VT_EXIT_USAGE;
			}
			rows = (int)v;
		} else if ((!strcmp(a, "-i") || !strcmp(a, "--interval")) && i + 1 < argc) {
			uint64_t v;

			if (top_parse_interval(argv[++i], &v))
				return VT_EXIT_USAGE;
			interval = (double)v / 1000;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			top_usage(stdout);
			return VT_EXIT_OK;
		} else if (a[0] == '-' || dir) {
			fprintf(stderr, "vmtrace: top: unknown option or extra argument: %s\n", a);
			return vt_cli_usage(top_usage, 0);
		} else {
			dir = a;
		}
	}
	if (!dir)
		return vt_cli_usage(top_usage, 0);
	signal(SIGINT, top_on_signal);
	signal(SIGTERM, top_on_signal);
	do {
		struct timespec ts = { (time_t)interval,
				       (long)((interval - (double)(time_t)interval) * 1e9) };

		if (top_show(dir, rows, !once && isatty(1)) < 0) {
			vt_err_print("top");
			return VT_EXIT_FAIL;
		}
		if (once)
			break;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !top_quit)
			;
	} while (!top_quit);
	return VT_EXIT_OK;
}
