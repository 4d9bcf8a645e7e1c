/*
 * tracedat_read.c - the reader half of lib/tracedat.h: trace.dat files
 * (vmtrace's recorder or trace-cmd) read through libtracecmd and
 * libtraceevent, per CPU in time order, with bounded field access.  For
 * host-side tools (merge, align); allocates at open and once per event
 * format, never per event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <trace-cmd/trace-cmd.h>
#include "err.h"
#include "fileio.h"
#include "filekind.h"
#include "tracedat.h"
#include "tracedat_check.h"
#include "tsc.h"

/* Exported by libtracecmd 3.x but missing from its public header: the
 * clock named in the file's TRACECLOCK option (NULL if none). */
extern const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
/* Also exported but private (trace-cmd-private.h): a handle's flags, and
 * TRACECMD_FL_RAW_TS of enum tracecmd_flags (3.x): timestamps as recorded,
 * no TIME_SHIFT, TSC2NSEC, OFFSET or date applied. */
extern void tracecmd_set_flag(struct tracecmd_input *handle, int flag);
#define VT_TRACECMD_FL_RAW_TS	(1 << 3)

#define COPY_CHUNK	(1 << 20)

struct td_format {
	struct tep_event *event;
	int nr;
	struct tep_format_field **fields;	/* non-common fields */
};

struct vt_td_reader {
	struct tracecmd_input *in;
	struct tep_handle *tep;
	char *path;
	int nr_cpus;
	struct tep_record **cur;	/* per CPU: record handed out last */
	struct tep_record **peek;	/* per CPU: next record (next_any) */
	unsigned long long *next_off;	/* per CPU: file offset past the last record */
	struct td_format *fmts;		/* by event id (sparse, grown) */
	int nr_fmts;
	char clock[32];
	int truncated;		/* read from a padded copy, or a CPU stalled */
	int failed;		/* out of memory while reading: reads return -1 */
	int compressed;		/* v7 compressed: read from an inflated copy */
	char warning[4400];	/* vt_td_read_warning(), "" if none */
	uint64_t skipped;	/* records without a known format */
	struct vt_td_tsync *tsync;	/* TIME_SHIFT, NULL if none */
	int nr_guests;
	struct vt_td_guest *guests;	/* GUEST options */
	int has_trace_id, has_tsc_hz;
	uint64_t trace_id, tsc_hz;
};

/* common_type, common_flags, common_preempt_count, common_pid */
#define TD_COMMON_SIZE	8

/* libtracecmd's handle of @path, its headers read, reading raw stamps:
 * vmtrace converts every stamp itself (align/), so a trace-cmd guest
 * file's TIME_SHIFT or a host file's TSC2NSEC must not be applied first.
 * NULL on failure. */
static struct tracecmd_input *open_raw(const char *path)
{
	struct tracecmd_input *in = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);

	if (in)
		tracecmd_set_flag(in, VT_TRACECMD_FL_RAW_TS);
	return in;
}

/* Copy @path to a temporary file (unlinked at once) whose cut CPU sizes
 * (@h->clips) are clipped to whole pages of what the file holds, the cut
 * page padded with zeros, and open that with libtracecmd: the missing
 * part of the cut page reads as padding, the page ends at its last whole
 * record.  NULL with a message. */
static struct tracecmd_input *clipped_open(const char *path, const struct hdr_cur *h)
{
	const char *tmpdir = getenv("TMPDIR");
	char tmp[4096];
	struct tracecmd_input *in = NULL;
	int src = -1, dst = -1;
	char *buf = NULL;

	snprintf(tmp, sizeof(tmp), "%s/vmtrace-td.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	src = open(path, O_RDONLY | O_CLOEXEC);
	dst = mkstemp(tmp);
	buf = vt_io_alloc(COPY_CHUNK);
	if (src < 0 || dst < 0 || !buf) {
		vt_err_errno("%s: CPU data truncated, and no clipped copy could be made", path);
		goto out;
	}
	for (;;) {
		ssize_t n = read(src, buf, COPY_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && write(dst, buf, n) != n)) {
			vt_err_errno("%s: CPU data truncated; copying it to %s failed", path, tmp);
			goto out;
		}
		if (!n)
			break;
	}
	for (int i = 0; i < h->nr_clips; i++) {
		uint64_t v = h->swap ? __builtin_bswap64(h->clips[i].size) : h->clips[i].size;

		if (pwrite(dst, &v, sizeof(v), (off_t)h->clips[i].field) != sizeof(v)) {
			vt_err_errno("%s: CPU data truncated; writing %s failed", path, tmp);
			goto out;
		}
	}
	for (uint64_t i = 0; i < h->nr_bad; i++) {
		uint64_t c64 = h->swap ? __builtin_bswap64(h->bad[i].good) : h->bad[i].good;
		uint32_t c32 = h->swap ? __builtin_bswap32(h->bad[i].good) : h->bad[i].good;
		size_t len = h->long8 ? sizeof(c64) : sizeof(c32);

		/* the commit: the page ends at its last sound event */
		if (pwrite(dst, h->long8 ? (void *)&c64 : (void *)&c32, len,
			   (off_t)(h->bad[i].off + PG_TS_SIZE)) != (ssize_t)len) {
			vt_err_errno("%s: malformed pages; writing %s failed", path, tmp);
			goto out;
		}
	}
	if (h->pad_to > h->size && ftruncate(dst, (off_t)h->pad_to) < 0) {
		vt_err_errno("%s: CPU data truncated; padding %s failed", path, tmp);
		goto out;
	}
	in = open_raw(tmp);
	if (in && tracecmd_init_data(in) < 0)
		in = NULL;	/* leaked: see vt_td_read_open */
	if (!in)
		vt_err_set("%s: CPU data truncated or corrupt (libtracecmd cannot load it)",
			   path);
out:
	free(buf);
	if (src >= 0)
		close(src);
	if (dst >= 0) {
		unlink(tmp);	/* libtracecmd holds its own descriptor */
		close(dst);
	}
	return in;
}

/* Exit codes of the probe child (anything else: it crashed). */
#define PROBE_OK	0
#define PROBE_FAIL	2

/* libtraceevent 1.7 dereferences NULL on some malformed event format texts
 * (tep_parse_event), which tracecmd_open_head parses: parse them first in
 * a child process, silenced, and refuse the file if that child crashes. */
static int formats_ok(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return 0;	/* no probe: libtracecmd's own checks */
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		_exit(tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS) ? PROBE_OK
									    : PROBE_FAIL);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	if (WIFEXITED(st) && (WEXITSTATUS(st) == PROBE_OK || WEXITSTATUS(st) == PROBE_FAIL))
		return 0;
	return vt_err_set("%s: corrupt event formats (libtraceevent crashed parsing them)", path);
}

static void tsync_free(struct vt_td_tsync *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->samples && i < t->nr_cpus; i++)
		free(t->samples[i]);
	free(t->samples);
	free(t->count);
	free(t);
}

/* TIME_SHIFT: u64 peer, u32 flags, u32 cpus, per CPU u32 count + count
 * times, offsets, scalings; then (trace-cmd >= 3.0) per CPU count fraction
 * bits.  Its counts were checked against its size (tdh_check). */
static struct vt_td_tsync *tsync_decode(const uint8_t *d, uint32_t n, int swap)
{
	struct vt_td_tsync *t = calloc(1, sizeof(*t));
	uint32_t pos = 2 * sizeof(uint64_t);

	if (!t || n < pos)
		goto bad;
	t->peer_id = tdh_get64(d, swap);
	t->flags = tdh_get32(d + sizeof(uint64_t), swap);
	t->nr_cpus = tdh_get32(d + sizeof(uint64_t) + sizeof(uint32_t), swap);
	t->count = calloc(t->nr_cpus + 1, sizeof(*t->count));
	t->samples = calloc(t->nr_cpus + 1, sizeof(*t->samples));
	if (!t->count || !t->samples)
		goto bad;
	for (uint32_t c = 0; c < t->nr_cpus; c++) {
		uint32_t cnt = tdh_get32(d + pos, swap);
		struct vt_td_tsync_sample *s = calloc(cnt + 1, sizeof(*s));

		if (!s)
			goto bad;
		pos += sizeof(uint32_t);
		t->count[c] = cnt;
		t->samples[c] = s;
		for (uint32_t k = 0; k < cnt; k++) {
			s[k].time = tdh_get64(d + pos + k * 8, swap);
			s[k].offset = (int64_t)tdh_get64(d + pos + (cnt + k) * 8, swap);
			s[k].scaling = tdh_get64(d + pos + (2 * cnt + k) * 8, swap);
		}
		pos += 3 * cnt * sizeof(uint64_t);
	}
	for (uint32_t c = 0; c < t->nr_cpus; c++) {
		if (n - pos < (uint64_t)t->count[c] * sizeof(uint64_t))
			break;	/* no fractions (older writers): 0 */
		for (uint32_t k = 0; k < t->count[c]; k++)
			t->samples[c][k].frac = (uint32_t)tdh_get64(d + pos + k * 8, swap);
		pos += t->count[c] * sizeof(uint64_t);
	}
	return t;
bad:
	tsync_free(t);
	return NULL;
}

/* GUEST: name, u64 trace id, u32 vcpus, per vCPU u32 id + u32 host pid. */
static int guest_decode(struct vt_td_guest *g, const uint8_t *d, uint32_t n, int swap)
{
	const uint8_t *z = memchr(d, 0, n);
	uint32_t pos;

	if (!z)
		return -1;
	pos = (uint32_t)(z - d) + 1;
	snprintf(g->name, sizeof(g->name), "%s", (const char *)d);
	if (n - pos < sizeof(uint64_t) + sizeof(uint32_t))
		return -1;
	g->trace_id = tdh_get64(d + pos, swap);
	g->nr_vcpus = tdh_get32(d + pos + sizeof(uint64_t), swap);
	pos += sizeof(uint64_t) + sizeof(uint32_t);
	if (g->nr_vcpus > (n - pos) / (2 * sizeof(uint32_t)))
		return -1;
	g->vcpu = calloc(g->nr_vcpus + 1, sizeof(*g->vcpu));
	g->tid = calloc(g->nr_vcpus + 1, sizeof(*g->tid));
	if (!g->vcpu || !g->tid)
		return -1;
	for (uint32_t i = 0; i < g->nr_vcpus; i++) {
		g->vcpu[i] = tdh_get32(d + pos + 8 * i, swap);
		g->tid[i] = tdh_get32(d + pos + 8 * i + 4, swap);
	}
	return 0;
}

/* TSC2NSEC (u32 mult, u32 shift, u64 offset; ns = tsc * mult >> shift):
 * the frequency 1e9 << shift / mult into *@hz; -1 if it states none. */
static int tsc2nsec_hz(const struct hdr_opt *o, int swap, uint64_t *hz)
{
	uint32_t mult, shift;

	if (o->n < 2 * sizeof(uint32_t))
		return -1;
	mult = tdh_get32(o->d, swap);
	shift = tdh_get32(o->d + sizeof(uint32_t), swap);
	if (!mult || shift >= 64 || ((unsigned __int128)VT_NS_PER_SEC << shift) < mult)
		return -1;
	*hz = (uint64_t)((((unsigned __int128)VT_NS_PER_SEC << shift) + mult / 2) / mult);
	return 0;
}

int vt_td_file_tsc_hz(const char *path, uint64_t *hz)
{
	struct hdr_cur h;
	int ret = -1;

	if (!tdh_header_ok(path, &h))
		for (int i = 0; i < h.nr_opts && ret; i++)
			if (h.opts[i].id == HDR_OPT_TSC2NSEC)
				ret = tsc2nsec_hz(&h.opts[i], h.swap, hz);
	tdh_free(&h);
	return ret;
}

/* The host-guest options tdh_check() kept, decoded into @r. */
static int options_decode(struct vt_td_reader *r, const struct hdr_cur *h)
{
	for (int i = 0; i < h->nr_opts; i++) {
		const struct hdr_opt *o = &h->opts[i];

		/* tdh_check() checked their sizes and counts: a decode
		 * fails only when an allocation does */
		if (o->id == HDR_OPT_TIME_SHIFT && !r->tsync) {
			if (!(r->tsync = tsync_decode(o->d, o->n, h->swap)))
				return vt_err_set("%s: out of memory", r->path);
		} else if (o->id == HDR_OPT_GUEST) {
			struct vt_td_guest *g = realloc(r->guests, (r->nr_guests + 1) * sizeof(*g));

			if (!g)
				return vt_err_set("%s: out of memory", r->path);
			r->guests = g;
			memset(&g[r->nr_guests], 0, sizeof(*g));
			if (guest_decode(&g[r->nr_guests++], o->d, o->n, h->swap))
				return vt_err_set("%s: out of memory", r->path);
		} else if (o->id == HDR_OPT_TRACEID && o->n >= sizeof(uint64_t)) {
			r->trace_id = tdh_get64(o->d, h->swap);
			r->has_trace_id = 1;
		} else if (o->id == HDR_OPT_TSC2NSEC && !tsc2nsec_hz(o, h->swap, &r->tsc_hz)) {
			r->has_tsc_hz = 1;
		}
	}
	return 0;
}

const struct vt_td_tsync *vt_td_read_tsync(const struct vt_td_reader *r)
{
	return r->tsync;
}

int vt_td_read_nr_guests(const struct vt_td_reader *r)
{
	return r->nr_guests;
}

const struct vt_td_guest *vt_td_read_guest(const struct vt_td_reader *r, int i)
{
	return i >= 0 && i < r->nr_guests ? &r->guests[i] : NULL;
}

int vt_td_read_trace_id(const struct vt_td_reader *r, uint64_t *id)
{
	if (!r->has_trace_id)
		return -1;
	*id = r->trace_id;
	return 0;
}

int vt_td_read_tsc_hz(const struct vt_td_reader *r, uint64_t *hz)
{
	if (!r->has_tsc_hz)
		return -1;
	*hz = r->tsc_hz;
	return 0;
}

/* A failure reading the uncompressed copy of @path: the message names
 * @path first (the copy is a temporary file the user never saw). */
static void copy_failed(const char *path)
{
	vt_err_wrap("%s (compressed; read from its uncompressed copy): %s", path, vt_err_msg());
}

struct vt_td_reader *vt_td_read_open(const char *path)
{
	struct vt_td_reader *r = calloc(1, sizeof(*r));
	const char *rpath = path;	/* the file libtracecmd reads */
	char tmp[4096] = "";
	uint64_t bad_chunks = 0, nr_chunks = 0;
	char zname[HDR_STR_MAX] = "";
	struct hdr_cur h;

	if (!r) {
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	r->path = strdup(path);
	if (tdh_header_ok(path, &h) < 0)
		goto fail;
	if (h.compressed) {
		/* inflated by vmtrace: libtracecmd then reads plain v7 */
		if (tdh_unzip(path, &h, tmp, sizeof(tmp), &bad_chunks, &nr_chunks) < 0) {
			tmp[0] = 0;
			goto fail;
		}
		snprintf(zname, sizeof(zname), "%s", h.zname);
		tdh_free(&h);
		rpath = tmp;
		if (tdh_header_ok(rpath, &h) < 0) {
			copy_failed(path);
			goto fail;
		}
		r->compressed = 1;
	}
	if (formats_ok(rpath) < 0 || tdh_pages_check(rpath, &h) < 0) {
		if (rpath != path)
			copy_failed(path);
		goto fail;
	}
	if (bad_chunks)
		snprintf(r->warning, sizeof(r->warning), "%s: %llu of %llu compressed chunks do "
			 "not inflate (%s): their pages read as empty", path,
			 (unsigned long long)bad_chunks, (unsigned long long)nr_chunks, zname);
	else if (h.nr_bad)
		snprintf(r->warning, sizeof(r->warning), "%s: %llu malformed or cut ring-buffer "
			 "pages read up to their last sound event", path,
			 (unsigned long long)h.nr_bad);
	if (h.nr_clips || h.nr_bad) {
		/* CPU data cut short (killed or full-disk writer) or damaged */
		r->in = clipped_open(rpath, &h);
		if (!r->in) {
			if (rpath != path)
				copy_failed(path);
			goto fail;
		}
		r->truncated = 1;
	} else {
		r->in = open_raw(rpath);
		if (!r->in) {
			vt_err_set("%s: not a readable trace.dat (missing, truncated headers or "
				   "corrupt)", path);
			goto fail;
		}
		if (tracecmd_init_data(r->in) < 0) {
			/* libtracecmd 3.1 crashes closing a handle whose data
			 * failed to load: the handle is left open, once */
			r->in = NULL;
			vt_err_set("%s: corrupt CPU data (libtracecmd cannot load it)", path);
			goto fail;
		}
	}
	r->truncated |= bad_chunks != 0;
	if (options_decode(r, &h) < 0)
		goto fail;
	if (tmp[0])
		unlink(tmp);	/* libtracecmd holds its own descriptor */
	tmp[0] = 0;
	r->tep = tracecmd_get_tep(r->in);
	r->nr_cpus = tep_get_cpus(r->tep);
	if (r->nr_cpus < 0 || r->nr_cpus > HDR_MAX_CPUS) {
		vt_err_set("%s: bad CPU count %d", path, r->nr_cpus);
		goto fail;
	}
	r->next_off = calloc(r->nr_cpus + 1, sizeof(*r->next_off));
	r->cur = calloc(r->nr_cpus + 1, sizeof(*r->cur));
	r->peek = calloc(r->nr_cpus + 1, sizeof(*r->peek));
	if (!r->cur || !r->peek || !r->next_off || !r->path) {
		vt_err_set("%s: out of memory", path);
		goto fail;
	}
	const char *c = tracecmd_get_trace_clock(r->in);

	snprintf(r->clock, sizeof(r->clock), "%s", c ? c : "");
	tdh_free(&h);
	return r;
fail:
	if (tmp[0])
		unlink(tmp);
	tdh_free(&h);
	vt_td_read_close(r);
	return NULL;
}

void vt_td_read_close(struct vt_td_reader *r)
{
	if (!r)
		return;
	for (int i = 0; r->cur && i < r->nr_cpus; i++) {
		if (r->cur[i])
			tracecmd_free_record(r->cur[i]);
		if (r->peek && r->peek[i])
			tracecmd_free_record(r->peek[i]);
	}
	for (int i = 0; i < r->nr_fmts; i++)
		free(r->fmts[i].fields);
	free(r->fmts);
	free(r->cur);
	free(r->peek);
	free(r->next_off);
	if (r->in)
		tracecmd_close(r->in);
	tsync_free(r->tsync);
	for (int i = 0; i < r->nr_guests; i++) {
		free(r->guests[i].vcpu);
		free(r->guests[i].tid);
	}
	free(r->guests);
	free(r->path);
	free(r);
}

const char *vt_td_read_warning(const struct vt_td_reader *r)
{
	return r->warning[0] ? r->warning : NULL;
}

int vt_td_read_truncated(const struct vt_td_reader *r)
{
	return r->truncated;
}

int vt_td_read_nr_cpus(const struct vt_td_reader *r)
{
	return r->nr_cpus;
}

const char *vt_td_read_clock(const struct vt_td_reader *r)
{
	return r->clock;
}

int vt_td_clock_is_ns(const char *clock)
{
	static const char *const ns_clocks[] = {
		"local", "global", "perf", "mono", "mono_raw", "boot", "tai",
	};

	for (size_t i = 0; i < VT_ARRAY_SIZE(ns_clocks); i++)
		if (!strcmp(clock, ns_clocks[i]))
			return 1;
	return 0;
}

/* An event's format could not be kept: the reads end, and say why */
static struct td_format *format_oom(struct vt_td_reader *r)
{
	r->failed = 1;
	vt_err_set("%s: out of memory", r->path);
	return NULL;
}

static struct td_format *format_of(struct vt_td_reader *r, struct tep_record *rec)
{
	int id = tep_data_type(r->tep, rec);

	if (id < 0 || id > 65535)
		return NULL;
	if (id >= r->nr_fmts) {
		int n = id + 64;
		struct td_format *nf = realloc(r->fmts, n * sizeof(*nf));

		if (!nf)
			return format_oom(r);
		memset(nf + r->nr_fmts, 0, (n - r->nr_fmts) * sizeof(*nf));
		r->fmts = nf;
		r->nr_fmts = n;
	}
	struct td_format *f = &r->fmts[id];

	if (!f->event) {
		struct tep_event *e = tep_find_event_by_record(r->tep, rec);
		int nr = 0;

		if (!e)
			return NULL;
		for (struct tep_format_field *fl = e->format.fields; fl; fl = fl->next)
			nr++;
		f->fields = calloc(nr + 1, sizeof(*f->fields));
		if (!f->fields)
			return format_oom(r);
		nr = 0;
		for (struct tep_format_field *fl = e->format.fields; fl; fl = fl->next)
			f->fields[nr++] = fl;
		f->nr = nr;
		f->event = e;
	}
	return f;
}

/* The next record of @cpu that is an event we can describe.  In a padded
 * copy the first one that is not (the zeros after the cut) ends the CPU;
 * elsewhere such records (no format) are skipped and counted. */
/* The next record of @cpu from libtracecmd, which on some corrupt pages
 * hands out the same record again and again: a record that does not lie
 * past the last one ends that CPU (counted as cut short). */
static struct tep_record *next_data(struct vt_td_reader *r, int cpu)
{
	struct tep_record *rec = tracecmd_read_data(r->in, cpu);

	if (!rec)
		return NULL;
	if (unlikely(rec->offset < r->next_off[cpu])) {
		tracecmd_free_record(rec);
		r->truncated = 1;
		return NULL;
	}
	r->next_off[cpu] = rec->offset + (rec->size > 0 ? (unsigned)rec->size : 1);
	return rec;
}

static struct tep_record *read_rec(struct vt_td_reader *r, int cpu)
{
	struct tep_record *rec = next_data(r, cpu);

	while (rec && unlikely(rec->size < TD_COMMON_SIZE || !format_of(r, rec))) {
		tracecmd_free_record(rec);
		if (r->truncated || r->failed)
			return NULL;
		r->skipped++;
		rec = next_data(r, cpu);
	}
	return rec;
}

static void fill(struct vt_td_reader *r, struct tep_record *rec, struct vt_td_event *ev)
{
	struct td_format *f = format_of(r, rec);	/* read_rec found it: cached */

	ev->ts = rec->ts;
	ev->cpu = rec->cpu;
	ev->data = rec->data;
	ev->size = rec->size;
	ev->pid = tep_data_pid(r->tep, rec);
	ev->priv = f;
	ev->id = f->event->id;
	ev->system = f->event->system ? f->event->system : "";
	ev->name = f->event->name ? f->event->name : "";
}

int vt_td_read_next(struct vt_td_reader *r, int cpu, struct vt_td_event *ev)
{
	if (cpu < 0 || cpu >= r->nr_cpus)
		return 0;
	if (r->cur[cpu]) {
		tracecmd_free_record(r->cur[cpu]);
		r->cur[cpu] = NULL;
	}
	struct tep_record *rec = read_rec(r, cpu);

	if (!rec)
		return r->failed ? -1 : 0;
	r->cur[cpu] = rec;
	fill(r, rec, ev);
	return 1;
}

int vt_td_read_next_any(struct vt_td_reader *r, struct vt_td_event *ev)
{
	int best = -1;

	for (int cpu = 0; cpu < r->nr_cpus; cpu++) {
		if (r->cur[cpu]) {
			tracecmd_free_record(r->cur[cpu]);
			r->cur[cpu] = NULL;
		}
		if (!r->peek[cpu])
			r->peek[cpu] = read_rec(r, cpu);
		if (r->peek[cpu] && (best < 0 || r->peek[cpu]->ts < r->peek[best]->ts))
			best = cpu;
	}
	if (r->failed)
		return -1;
	if (best < 0)
		return 0;
	r->cur[best] = r->peek[best];
	r->peek[best] = NULL;
	fill(r, r->cur[best], ev);
	return 1;
}

const char *vt_td_event_info(struct vt_td_reader *r, const struct vt_td_event *ev,
			     char *buf, size_t len)
{
	struct tep_record *rec = ev->cpu >= 0 && ev->cpu < r->nr_cpus ? r->cur[ev->cpu] : NULL;
	struct trace_seq sq;

	if (!len)
		return buf;
	buf[0] = 0;
	if (!rec)
		return buf;
	trace_seq_init(&sq);
	tep_print_event(r->tep, &sq, rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&sq);
	snprintf(buf, len, "%s", sq.buffer ? sq.buffer : "");
	trace_seq_destroy(&sq);
	return buf;
}

const char *vt_td_read_comm(struct vt_td_reader *r, int pid)
{
	const char *c = tep_data_comm_from_pid(r->tep, pid);

	return c && strcmp(c, "<...>") ? c : "";
}

static struct tep_format_field *find(const struct vt_td_event *ev, const char *name)
{
	const struct td_format *f = ev->priv;

	if (!f)
		return NULL;
	for (int i = 0; i < f->nr; i++)
		if (!strcmp(f->fields[i]->name, name))
			return f->fields[i];
	return NULL;
}

static int field_num(const struct tep_format_field *fl)
{
	return !(fl->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) &&
	       (fl->size == 1 || fl->size == 2 || fl->size == 4 || fl->size == 8);
}

static int read_num(const struct vt_td_event *ev, const struct tep_format_field *fl,
		    uint64_t *out)
{
	if (!field_num(fl) || fl->offset < 0 || fl->offset + fl->size > ev->size)
		return -1;
	unsigned long long v;

	if (tep_read_number_field((struct tep_format_field *)fl, ev->data, &v) < 0)
		return -1;
	if ((fl->flags & TEP_FIELD_IS_SIGNED) && fl->size < 8) {
		unsigned shift = 64 - 8 * fl->size;

		v = (unsigned long long)((long long)(v << shift) >> shift);
	}
	*out = v;
	return 0;
}

static const struct tep_format_field *field_at(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;

	return f && i >= 0 && i < f->nr ? f->fields[i] : NULL;
}

int vt_td_field_u64_idx(const struct vt_td_event *ev, int i, uint64_t *out)
{
	const struct tep_format_field *fl = field_at(ev, i);

	return fl ? read_num(ev, fl, out) : -1;
}

int vt_td_field_u64(const struct vt_td_event *ev, const char *field, uint64_t *out)
{
	const struct tep_format_field *fl = find(ev, field);

	return fl ? read_num(ev, fl, out) : -1;
}

static const char *read_str(const struct vt_td_event *ev, const struct tep_format_field *fl,
			    char *buf, size_t len)
{
	const unsigned char *d = ev->data;
	int off, sz;

	if (!fl || !len)
		return NULL;
	if (fl->flags & TEP_FIELD_IS_DYNAMIC) {
		uint32_t loc;

		if (fl->offset < 0 || fl->offset + 4 > ev->size)
			return NULL;
		memcpy(&loc, d + fl->offset, 4);
		off = loc & 0xffff;
		sz = loc >> 16;
		if (fl->flags & TEP_FIELD_IS_RELATIVE)
			off += fl->offset + fl->size;
	} else if (fl->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_ARRAY)) {
		off = fl->offset;
		sz = fl->size;
	} else {
		return NULL;
	}
	if (off < 0 || sz < 0 || off > ev->size || sz > ev->size - off)
		return NULL;
	size_t n = strnlen((const char *)d + off, sz);

	if (n >= len)
		n = len - 1;
	memcpy(buf, d + off, n);
	buf[n] = 0;
	return buf;
}

const char *vt_td_field_str(const struct vt_td_event *ev, const char *field,
			    char *buf, size_t len)
{
	return read_str(ev, find(ev, field), buf, len);
}

const char *vt_td_field_str_idx(const struct vt_td_event *ev, int i, char *buf, size_t len)
{
	return read_str(ev, field_at(ev, i), buf, len);
}

int vt_td_nr_fields(const struct vt_td_event *ev)
{
	const struct td_format *f = ev->priv;

	return f ? f->nr : 0;
}

const char *vt_td_field_name(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;

	return f && i >= 0 && i < f->nr ? f->fields[i]->name : "";
}

int vt_td_field_is_num(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;

	return f && i >= 0 && i < f->nr && field_num(f->fields[i]);
}

enum vt_td_field_kind vt_td_field_kind(const struct vt_td_event *ev, int i)
{
	const struct tep_format_field *fl = field_at(ev, i);
	int sgn;

	if (!fl)
		return VT_TD_FIELD_OTHER;
	sgn = !!(fl->flags & TEP_FIELD_IS_SIGNED);
	if (field_num(fl))
		return sgn ? VT_TD_FIELD_SIGNED : VT_TD_FIELD_UNSIGNED;
	if (fl->flags & TEP_FIELD_IS_STRING)
		return VT_TD_FIELD_STRING;
	if (fl->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
		unsigned es = fl->elementsize;

		if (es == 1 || es == 2 || es == 4 || es == 8)
			return sgn ? VT_TD_FIELD_ARRAY_SIGNED : VT_TD_FIELD_ARRAY;
	}
	return VT_TD_FIELD_OTHER;
}

int vt_td_field_array_idx(const struct vt_td_event *ev, int i, uint64_t *out, int max)
{
	const struct tep_format_field *fl = field_at(ev, i);
	const unsigned char *d = ev->data;
	enum vt_td_field_kind k = vt_td_field_kind(ev, i);
	int off, sz, n = 0;

	if (k != VT_TD_FIELD_ARRAY && k != VT_TD_FIELD_ARRAY_SIGNED)
		return -1;
	if (fl->flags & TEP_FIELD_IS_DYNAMIC) {
		uint32_t loc;

		if (fl->offset < 0 || fl->offset + 4 > ev->size)
			return -1;
		memcpy(&loc, d + fl->offset, 4);
		off = loc & 0xffff;
		sz = loc >> 16;
		if (fl->flags & TEP_FIELD_IS_RELATIVE)
			off += fl->offset + fl->size;
	} else {
		off = fl->offset;
		sz = fl->size;
	}
	if (off < 0 || sz < 0 || off > ev->size || sz > ev->size - off)
		return -1;
	unsigned es = fl->elementsize;

	for (int at = 0; at + (int)es <= sz && n < max; at += (int)es) {
		uint64_t v = 0;

		memcpy(&v, d + off + at, es);	/* little-endian host and file */
		if (k == VT_TD_FIELD_ARRAY_SIGNED && es < 8) {
			unsigned shift = 64 - 8 * es;

			v = (uint64_t)((int64_t)(v << shift) >> shift);
		}
		out[n++] = v;
	}
	return n;
}

/* 1 if print argument @a (a subtree) holds a __print_flags or
 * __print_symbolic; 2 if it does and names field @name in it. */
static int arg_symbolic(const struct tep_print_arg *a, const char *name, int in_sym)
{
	int r = 0;

	for (; a; a = a->next) {
		switch (a->type) {
		case TEP_PRINT_FIELD:
			if (in_sym && a->field.name && !strcmp(a->field.name, name))
				return 2;
			break;
		case TEP_PRINT_FLAGS:
			if (arg_symbolic(a->flags.field, name, 1) == 2)
				return 2;
			break;
		case TEP_PRINT_SYMBOL:
			if (arg_symbolic(a->symbol.field, name, 1) == 2)
				return 2;
			break;
		case TEP_PRINT_OP:
			if ((r = arg_symbolic(a->op.left, name, in_sym)) == 2 ||
			    (r = arg_symbolic(a->op.right, name, in_sym)) == 2)
				return 2;
			break;
		case TEP_PRINT_TYPE:
			if (arg_symbolic(a->typecast.item, name, in_sym) == 2)
				return 2;
			break;
		default:
			break;
		}
	}
	return 0;
}

int vt_td_field_is_symbolic(const struct vt_td_event *ev, int i)
{
	const struct td_format *f = ev->priv;
	const struct tep_format_field *fl = field_at(ev, i);

	if (!f || !fl || !f->event)
		return 0;
	/* an argument of the format that holds a table of names, anywhere
	 * below it, and the field in that table's value */
	for (const struct tep_print_arg *a = f->event->print_fmt.args; a; a = a->next) {
		struct tep_print_arg one = *a;

		one.next = NULL;
		if (arg_symbolic(&one, fl->name, 0) == 2)
			return 1;
	}
	return 0;
}
