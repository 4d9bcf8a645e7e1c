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
#include "tracedat.h"

/* Exported by libtracecmd 3.x but missing from its public header: the
 * clock named in the file's TRACECLOCK option (NULL if none). */
extern const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);

/* A truncated file is read from a copy padded with this much sparse zero
 * space: libtracecmd then sees whole CPU sections, the missing pages read
 * as empty (commit 0) and the cut page ends at its last whole record. */
#define PAD_BYTES	(1ULL << 40)
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
	uint64_t skipped;	/* records without a known format */
};

/* common_type, common_flags, common_preempt_count, common_pid */
#define TD_COMMON_SIZE	8

/* The header of a version <= 6 file is walked before libtracecmd sees it:
 * libtracecmd allocates every section size it reads, so a corrupt size
 * would be a multi-terabyte allocation.  Each section must fit in the file
 * (CPU data may be cut short: that is read from a padded copy). */
#define HDR_MAGIC_LEN	10	/* 0x17 0x08 0x44 "tracing" */
#define HDR_STR_MAX	64	/* version string, system names */
#define HDR_OPT_NAME	10	/* "options  \0", "flyrecord\0", "latency  \0" */

struct hdr_cur {
	int fd;
	uint64_t off, size;	/* read position, file size */
	uint64_t field;		/* offset of the last number read */
	int swap;		/* big-endian file */
};

static int hdr_read(struct hdr_cur *c, void *buf, size_t len)
{
	if (len > c->size - c->off || pread(c->fd, buf, len, (off_t)c->off) != (ssize_t)len)
		return -1;
	c->off += len;
	return 0;
}

static int hdr_skip(struct hdr_cur *c, uint64_t len)
{
	if (len > c->size - c->off)
		return -1;
	c->off += len;
	return 0;
}

static int hdr_u16(struct hdr_cur *c, uint16_t *v)
{
	c->field = c->off;
	if (hdr_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap16(*v);
	return 0;
}

static int hdr_u32(struct hdr_cur *c, uint32_t *v)
{
	c->field = c->off;
	if (hdr_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap32(*v);
	return 0;
}

static int hdr_u64(struct hdr_cur *c, uint64_t *v)
{
	c->field = c->off;
	if (hdr_read(c, v, sizeof(*v)))
		return -1;
	if (c->swap)
		*v = __builtin_bswap64(*v);
	return 0;
}

/* A NUL-terminated string of at most HDR_STR_MAX bytes into @buf. */
static int hdr_str(struct hdr_cur *c, char *buf)
{
	for (int i = 0; i < HDR_STR_MAX; i++) {
		if (hdr_read(c, &buf[i], 1))
			return -1;
		if (!buf[i])
			return 0;
	}
	return -1;
}

/* A section "NAME\0" + u64 size + size bytes. */
static int hdr_named(struct hdr_cur *c, const char *name)
{
	char buf[HDR_STR_MAX];
	uint64_t n;

	if (hdr_str(c, buf) || strcmp(buf, name) || hdr_u64(c, &n))
		return -1;
	return hdr_skip(c, n);
}

/* @nr entries of u64 size + text. */
static int hdr_texts(struct hdr_cur *c, uint32_t nr)
{
	uint64_t n;

	for (uint32_t i = 0; i < nr; i++)
		if (hdr_u64(c, &n) || hdr_skip(c, n))
			return -1;
	return 0;
}

/* 0 if the header of @path (fd @fd, @size bytes) is sound or version 7+,
 * -1 with a message naming the file and the offset of the bad field. */
static int hdr_check(const char *path, int fd, uint64_t size)
{
	struct hdr_cur c = { .fd = fd, .size = size };
	char buf[HDR_STR_MAX];
	uint8_t endian, lsize;
	uint32_t page, nr, nsys, n32;
	uint64_t n64;
	uint16_t id;

	if (hdr_skip(&c, HDR_MAGIC_LEN))
		return 0;	/* not even a header: libtracecmd says so */
	if (hdr_str(&c, buf))
		goto bad;
	/* libtracecmd takes the number the version string starts with; up to
	 * 6 the layout is this one, 7 has sections (its own checks) */
	if (strtol(buf, NULL, 10) > VT_TD_VERSION)
		return 0;
	if (hdr_read(&c, &endian, 1) || hdr_read(&c, &lsize, 1) || hdr_u32(&c, &page))
		goto bad;
	c.swap = endian != 0;
	if (hdr_named(&c, "header_page") || hdr_named(&c, "header_event") ||
	    hdr_u32(&c, &nr) || hdr_texts(&c, nr) || hdr_u32(&c, &nsys))
		goto bad;
	for (uint32_t i = 0; i < nsys; i++)
		if (hdr_str(&c, buf) || hdr_u32(&c, &nr) || hdr_texts(&c, nr))
			goto bad;
	if (hdr_u32(&c, &n32) || hdr_skip(&c, n32) ||		/* kallsyms */
	    hdr_u32(&c, &n32) || hdr_skip(&c, n32) ||		/* printk formats */
	    hdr_u64(&c, &n64) || hdr_skip(&c, n64) ||		/* cmdlines */
	    hdr_u32(&c, &nr) || hdr_read(&c, buf, HDR_OPT_NAME))	/* cpus */
		goto bad;
	if (!memcmp(buf, "options  ", HDR_OPT_NAME)) {
		do {
			if (hdr_u16(&c, &id))
				goto bad;
			if (id && (hdr_u32(&c, &n32) || hdr_skip(&c, n32)))
				goto bad;
		} while (id);
		if (hdr_read(&c, buf, HDR_OPT_NAME))
			goto bad;
	}
	/* the CPU count sizes libtracecmd's tables: its offsets must be here */
	c.field = c.off;
	if (!memcmp(buf, "flyrecord", HDR_OPT_NAME) &&
	    nr > (c.size - c.off) / (2 * sizeof(uint64_t)))
		goto bad;
	return 0;
bad:
	return vt_err_set("%s: corrupt trace.dat header: the size or count at offset %llu "
			  "does not fit in the file (%llu bytes)", path,
			  (unsigned long long)c.field, (unsigned long long)size);
}

/* Copy @path to a temporary file (unlinked at once) grown by PAD_BYTES of
 * sparse zeros, and open that with libtracecmd.  NULL with a message. */
static struct tracecmd_input *padded_open(const char *path)
{
	const char *tmpdir = getenv("TMPDIR");
	char tmp[4096];
	struct tracecmd_input *in = NULL;
	struct stat st;
	int src = -1, dst = -1;
	char *buf = NULL;

	snprintf(tmp, sizeof(tmp), "%s/vmtrace-td.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	src = open(path, O_RDONLY | O_CLOEXEC);
	dst = mkstemp(tmp);
	buf = malloc(COPY_CHUNK);
	if (src < 0 || dst < 0 || !buf || fstat(src, &st) < 0) {
		vt_err_errno("%s: CPU data truncated, and no padded copy could be made", path);
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
	if (ftruncate(dst, st.st_size + (off_t)PAD_BYTES) < 0) {
		vt_err_errno("%s: CPU data truncated; padding %s failed", path, tmp);
		goto out;
	}
	in = tracecmd_open_head(tmp, TRACECMD_FL_LOAD_NO_PLUGINS);
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

/* Open @path and check its header (hdr_check); -1 with a message. */
static int header_ok(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return vt_err_errno("%s: cannot open", path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return vt_err_errno("%s: cannot stat", path);
	}
	ret = hdr_check(path, fd, (uint64_t)st.st_size);
	close(fd);
	return ret;
}

struct vt_td_reader *vt_td_read_open(const char *path)
{
	struct vt_td_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	r->path = strdup(path);
	if (header_ok(path) < 0 || formats_ok(path) < 0)
		goto fail;
	r->in = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!r->in) {
		vt_err_set("%s: not a readable trace.dat (missing, truncated headers or corrupt)",
			   path);
		goto fail;
	}
	if (tracecmd_init_data(r->in) < 0) {
		/* libtracecmd 3.1 crashes closing a handle whose data failed to
		 * load (truncated CPU data): the handle is left open, once */
		r->in = padded_open(path);
		if (!r->in)
			goto fail;
		r->truncated = 1;
	}
	r->tep = tracecmd_get_tep(r->in);
	r->nr_cpus = tep_get_cpus(r->tep);
	if (r->nr_cpus < 0 || r->nr_cpus > 8192) {
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
	return r;
fail:
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
		if (r->peek[i])
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
	free(r->path);
	free(r);
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

static struct td_format *format_of(struct vt_td_reader *r, struct tep_record *rec)
{
	int id = tep_data_type(r->tep, rec);

	if (id < 0 || id > 65535)
		return NULL;
	if (id >= r->nr_fmts) {
		int n = id + 64;
		struct td_format *nf = realloc(r->fmts, n * sizeof(*nf));

		if (!nf)
			return NULL;
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
			return NULL;
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
		if (r->truncated)
			return NULL;
		r->skipped++;
		rec = next_data(r, cpu);
	}
	return rec;
}

static void fill(struct vt_td_reader *r, struct tep_record *rec, struct vt_td_event *ev)
{
	struct td_format *f = format_of(r, rec);

	ev->ts = rec->ts;
	ev->cpu = rec->cpu;
	ev->data = rec->data;
	ev->size = rec->size;
	ev->pid = tep_data_pid(r->tep, rec);
	ev->priv = f;
	ev->id = f ? f->event->id : -1;
	ev->system = f && f->event->system ? f->event->system : "";
	ev->name = f && f->event->name ? f->event->name : "";
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
		return 0;
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
