/*
 * tracedat_write.c - the trace.dat (trace-cmd v6) writer, see tracedat.h
 * for the byte table.  Used by the recorder's main thread after recording
 * (allocates, blocks on file I/O); never on a tracing hot path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "tracedat.h"

#define TD_MAGIC		"\x17\x08\x44tracing"
#define TD_MAGIC_LEN		10
#define TD_LONG_SIZE		8
#define TD_FILE_MODE		0644
#define TD_COMMIT_MASK		((1U << 27) - 1)
#define TD_MISSED_EVENTS	(1ULL << 31)
#define TD_MISSED_STORED	(1ULL << 30)
#define TD_EVT_HDR_SIZE		4
#define TD_TYPE_DATA_MAX	28
#define TD_TYPE_PADDING		29
#define TD_TYPE_TIME_EXTEND	30
#define TD_TYPE_TIME_STAMP	31
#define TD_TYPE_LEN_MASK	0x1f
#define TD_ALIGNMENT		4
#define TD_TIME_EVENT_SIZE	8
#define TD_COPY_PAGES		64
#define TD_MAX_OPTIONS		256
#define TD_HEADER_PAGE		"header_page"	/* section names, written with their NUL */
#define TD_HEADER_EVENT		"header_event"

/* Writer states: each section moves the file one step on. */
enum td_state {
	TD_S_INIT,
	TD_S_HEADERS,
	TD_S_FTRACE,
	TD_S_SYSTEMS,
	TD_S_KALLSYMS,
	TD_S_PRINTK,
	TD_S_CMDLINES,
	TD_S_DATA,
};

struct td_option {
	uint16_t id;
	uint32_t len;
	void *data;
};

struct vt_td_writer {
	int fd;
	char *path;
	uint32_t page_size;
	uint64_t off;		/* bytes written so far */
	enum td_state state;
	unsigned systems_left;
	unsigned nr_opts;
	struct td_option opts[TD_MAX_OPTIONS];
};

static int td_write(struct vt_td_writer *w, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return vt_err_errno("%s: write failed at offset %llu", w->path,
					    (unsigned long long)w->off);
		}
		p += n;
		len -= n;
		w->off += n;
	}
	return 0;
}

static int td_u16(struct vt_td_writer *w, uint16_t v)
{
	return td_write(w, &v, sizeof(v));
}

static int td_u32(struct vt_td_writer *w, uint32_t v)
{
	return td_write(w, &v, sizeof(v));
}

static int td_u64(struct vt_td_writer *w, uint64_t v)
{
	return td_write(w, &v, sizeof(v));
}

static int td_step(struct vt_td_writer *w, enum td_state from, const char *what)
{
	if (w->state != from)
		return vt_err_set("%s: trace.dat writer: %s written out of order", w->path, what);
	w->state = from + 1;
	return 0;
}

struct vt_td_writer *vt_td_create(const char *path, uint32_t page_size)
{
	struct vt_td_writer *w;
	uint8_t endian = 0, long_size = TD_LONG_SIZE;

	if (page_size < VT_TD_PAGE_HDR_SIZE * 2 || (page_size & (page_size - 1))) {
		vt_err_set("%s: bad ring-buffer page size %u", path, page_size);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	w->page_size = page_size;
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, TD_FILE_MODE);
	if (w->fd < 0) {
		vt_err_errno("%s: cannot create", path);
		free(w->path);
		free(w);
		return NULL;
	}
	if (td_write(w, TD_MAGIC, TD_MAGIC_LEN) || td_write(w, "6", 2) ||
	    td_write(w, &endian, 1) || td_write(w, &long_size, 1) || td_u32(w, page_size)) {
		vt_td_abort(w);
		return NULL;
	}
	return w;
}

int vt_td_write_headers(struct vt_td_writer *w, const char *header_page, size_t page_len,
			const char *header_event, size_t event_len)
{
	if (td_step(w, TD_S_INIT, "headers"))
		return -1;
	if (td_write(w, TD_HEADER_PAGE, sizeof(TD_HEADER_PAGE)) || td_u64(w, page_len) ||
	    td_write(w, header_page, page_len) ||
	    td_write(w, TD_HEADER_EVENT, sizeof(TD_HEADER_EVENT)) || td_u64(w, event_len) ||
	    td_write(w, header_event, event_len))
		return -1;
	return 0;
}

static int td_formats(struct vt_td_writer *w, unsigned nr, const char *const *fmts,
		      const size_t *lens)
{
	if (td_u32(w, nr))
		return -1;
	for (unsigned i = 0; i < nr; i++)
		if (td_u64(w, lens[i]) || td_write(w, fmts[i], lens[i]))
			return -1;
	return 0;
}

int vt_td_write_ftrace_formats(struct vt_td_writer *w, unsigned nr,
			       const char *const *fmts, const size_t *lens)
{
	if (td_step(w, TD_S_HEADERS, "ftrace formats"))
		return -1;
	return td_formats(w, nr, fmts, lens);
}

int vt_td_systems_begin(struct vt_td_writer *w, unsigned nr)
{
	if (w->state != TD_S_FTRACE)
		return vt_err_set("%s: trace.dat writer: systems out of order", w->path);
	w->systems_left = nr;
	if (td_u32(w, nr))
		return -1;
	if (!nr)
		w->state = TD_S_SYSTEMS;
	return 0;
}

int vt_td_write_system(struct vt_td_writer *w, const char *system, unsigned nr,
		       const char *const *fmts, const size_t *lens)
{
	if (w->state != TD_S_FTRACE || !w->systems_left)
		return vt_err_set("%s: trace.dat writer: system %s out of order", w->path,
				  system);
	if (td_write(w, system, strlen(system) + 1) || td_formats(w, nr, fmts, lens))
		return -1;
	if (!--w->systems_left)
		w->state = TD_S_SYSTEMS;
	return 0;
}

int vt_td_write_kallsyms(struct vt_td_writer *w, const char *buf, size_t len)
{
	if (len > UINT32_MAX)
		return vt_err_set("%s: kallsyms too large (%zu bytes)", w->path, len);
	if (td_step(w, TD_S_SYSTEMS, "kallsyms") || td_u32(w, len) || td_write(w, buf, len))
		return -1;
	return 0;
}

int vt_td_write_printk(struct vt_td_writer *w, const char *buf, size_t len)
{
	if (len > UINT32_MAX)
		return vt_err_set("%s: printk formats too large (%zu bytes)", w->path, len);
	if (td_step(w, TD_S_KALLSYMS, "printk formats") || td_u32(w, len) ||
	    td_write(w, buf, len))
		return -1;
	return 0;
}

int vt_td_write_cmdlines(struct vt_td_writer *w, const char *buf, size_t len)
{
	if (td_step(w, TD_S_PRINTK, "cmdlines") || td_u64(w, len) || td_write(w, buf, len))
		return -1;
	return 0;
}

int vt_td_add_option(struct vt_td_writer *w, enum vt_td_option id, const void *data,
		     uint32_t len)
{
	struct td_option *o;

	if (w->nr_opts >= TD_MAX_OPTIONS || id == VT_TD_OPT_DONE)
		return vt_err_set("%s: trace.dat writer: option %d refused", w->path, id);
	o = &w->opts[w->nr_opts];
	o->data = malloc(len ? len : 1);
	if (!o->data)
		return vt_err_set("%s: out of memory", w->path);
	memcpy(o->data, data, len);
	o->id = id;
	o->len = len;
	w->nr_opts++;
	return 0;
}

/* A discarded event needs a non-zero time delta (a zero one ends the
 * page): one tick may be taken from the entry at @next (page data offset)
 * when it is an event, padding or time extend whose own delta stays
 * non-zero; none is needed when nothing follows (the page's end) or an
 * absolute stamp does.  1 if the delta may be one tick. */
static int td_borrow_tick(uint8_t *data, size_t next, size_t size)
{
	uint32_t hdr, type_len, min;

	if (next + TD_EVT_HDR_SIZE > size)
		return 1;
	memcpy(&hdr, data + next, sizeof(hdr));
	type_len = hdr & TD_TYPE_LEN_MASK;
	if (type_len == TD_TYPE_PADDING && !(hdr >> 5))
		return 1;	/* the rest of the page is padding */
	if (type_len == TD_TYPE_TIME_STAMP)
		return 1;	/* absolute: what follows does not add our delta */
	if (type_len == TD_TYPE_TIME_EXTEND) {
		uint32_t hi;
		uint64_t ext;

		if (next + TD_TIME_EVENT_SIZE > size)
			return 0;
		memcpy(&hi, data + next + TD_EVT_HDR_SIZE, sizeof(hi));
		ext = ((uint64_t)hi << 27) | (hdr >> 5);
		if (ext < 2)
			return 0;
		ext--;
		hdr = (uint32_t)((ext & ((1u << 27) - 1)) << 5) | TD_TYPE_TIME_EXTEND;
		hi = (uint32_t)(ext >> 27);
		memcpy(data + next, &hdr, sizeof(hdr));
		memcpy(data + next + TD_EVT_HDR_SIZE, &hi, sizeof(hi));
		return 1;
	}
	min = type_len == TD_TYPE_PADDING ? 2 : 1;
	if ((hdr >> 5) < min)
		return 0;
	hdr -= 1u << 5;
	memcpy(data + next, &hdr, sizeof(hdr));
	return 1;
}

/*
 * Walk one ring-buffer page: count it into @st, and where @keep is given,
 * turn each data event it refuses into a discarded event - padding of the
 * same length carrying the same time delta, as the kernel's
 * rb_event_discard() leaves it, so readers skip it and every later stamp
 * stays exact.  An event with a zero delta joins the padding of a discarded
 * one just before it, else takes a tick from the entry after it
 * (td_borrow_tick), else is kept: a zero-delta padding would end the page.
 * *@nr_discarded counts the discarded.  -1 if the page is
 * malformed.
 */
static int td_page_walk(uint8_t *page, size_t len, struct vt_td_cpu_stats *st,
			int (*keep)(void *arg, const void *data, uint32_t len), void *arg,
			uint64_t *nr_discarded)
{
	uint8_t *p = page, *prev_pad = NULL;
	uint64_t ts, commit;
	size_t size, off;

	if (unlikely(len < VT_TD_PAGE_HDR_SIZE))
		return -1;
	memcpy(&ts, p, sizeof(ts));
	memcpy(&commit, p + 8, sizeof(commit));
	size = commit & TD_COMMIT_MASK;
	if (unlikely(size > len - VT_TD_PAGE_HDR_SIZE))
		return -1;
	if (!st->pages)
		st->first_ts = ts;
	st->pages++;
	if (unlikely(commit & TD_MISSED_EVENTS)) {
		uint64_t missed;

		if ((commit & TD_MISSED_STORED) &&
		    size + sizeof(missed) <= len - VT_TD_PAGE_HDR_SIZE) {
			memcpy(&missed, p + VT_TD_PAGE_HDR_SIZE + size, sizeof(missed));
			st->lost += missed;
		} else {
			st->lost_unknown++;
		}
	}
	p += VT_TD_PAGE_HDR_SIZE;
	for (off = 0; off < size;) {
		uint32_t hdr, type_len, len32;
		size_t evlen, data_off = 0;
		uint8_t *pad = NULL;

		if (unlikely(size - off < TD_EVT_HDR_SIZE))
			return -1;
		memcpy(&hdr, p + off, sizeof(hdr));
		type_len = hdr & TD_TYPE_LEN_MASK;
		if (type_len == TD_TYPE_TIME_EXTEND || type_len == TD_TYPE_TIME_STAMP) {
			evlen = TD_TIME_EVENT_SIZE;
		} else if (type_len == 0 || type_len == TD_TYPE_PADDING) {
			if (type_len == TD_TYPE_PADDING && !(hdr >> 5))
				break;	/* rest of the page is padding */
			if (unlikely(size - off < 2 * TD_EVT_HDR_SIZE))
				return -1;
			memcpy(&len32, p + off + TD_EVT_HDR_SIZE, sizeof(len32));
			evlen = (size_t)len32 + TD_EVT_HDR_SIZE;
			data_off = 2 * TD_EVT_HDR_SIZE;
			if (type_len == 0)
				st->events++;
			else
				pad = p + off;
		} else {
			evlen = (size_t)type_len * TD_ALIGNMENT + TD_EVT_HDR_SIZE;
			data_off = TD_EVT_HDR_SIZE;
			st->events++;
		}
		if (unlikely(evlen > size - off || evlen < TD_EVT_HDR_SIZE))
			return -1;
		if (keep && type_len <= TD_TYPE_DATA_MAX && evlen > data_off &&
		    !keep(arg, p + off + data_off, (uint32_t)(evlen - data_off))) {
			if (prev_pad && !(hdr >> 5)) {
				memcpy(&len32, prev_pad + TD_EVT_HDR_SIZE, sizeof(len32));
				len32 += (uint32_t)evlen;
				memcpy(prev_pad + TD_EVT_HDR_SIZE, &len32, sizeof(len32));
				pad = prev_pad;
				st->events--;
				++*nr_discarded;
			} else if ((hdr >> 5) || td_borrow_tick(p, off + evlen, size)) {
				/* the padding's length: what follows its header */
				len32 = (uint32_t)evlen - TD_EVT_HDR_SIZE;
				hdr = (hdr & ~(uint32_t)TD_TYPE_LEN_MASK) | TD_TYPE_PADDING;
				if (!(hdr >> 5))
					hdr += 1u << 5;	/* the tick borrowed */
				memcpy(p + off, &hdr, sizeof(hdr));
				memcpy(p + off + TD_EVT_HDR_SIZE, &len32, sizeof(len32));
				pad = p + off;
				st->events--;
				++*nr_discarded;
			}
		}
		prev_pad = pad;
		off += evlen;
	}
	return 0;
}

int vt_td_page_count(const void *page, size_t len, struct vt_td_cpu_stats *st)
{
	return td_page_walk((uint8_t *)page, len, st, NULL, NULL, NULL);
}

int vt_td_page_discard(void *page, size_t len, int (*keep)(void *arg, const void *data,
							   uint32_t len),
		       void *arg, uint64_t *nr_discarded)
{
	struct vt_td_cpu_stats st = { 0 };

	return td_page_walk(page, len, &st, keep, arg, nr_discarded);
}

/* Copy one CPU's file of pages to the output, counting them. */
static int td_copy_cpu(struct vt_td_writer *w, unsigned cpu, int fd, uint64_t size,
		       struct vt_td_cpu_stats *st, char *buf)
{
	size_t chunk = (size_t)w->page_size * TD_COPY_PAGES;
	uint64_t done = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return vt_err_errno("%s: cpu%u data: cannot seek", w->path, cpu);
	while (done < size) {
		size_t want = size - done < chunk ? size - done : chunk;
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vt_err_errno("%s: cpu%u data: read failed", w->path, cpu);
		if (n == 0)
			return vt_err_set("%s: cpu%u data: file shrank while copying", w->path,
					  cpu);
		if (n % w->page_size)
			return vt_err_set("%s: cpu%u data: short read of %zd bytes", w->path,
					  cpu, n);
		for (ssize_t o = 0; o < n; o += w->page_size)
			if (vt_td_page_count(buf + o, w->page_size, st) && !st->bad_pages++)
				st->first_bad = done + (uint64_t)o;	/* the caller warns */
		if (td_write(w, buf, n))
			return -1;
		done += n;
	}
	st->bytes = done;
	return 0;
}

int vt_td_write_cpu_data(struct vt_td_writer *w, unsigned nr_cpus, const int *fds,
			 struct vt_td_cpu_stats *stats)
{
	uint64_t *sizes, off;
	char *buf, zero = 0;
	const char *clock = NULL;
	size_t clock_len = 0;
	int ret = -1;

	if (td_step(w, TD_S_CMDLINES, "cpu data"))
		return -1;
	sizes = calloc(nr_cpus ? nr_cpus : 1, sizeof(*sizes));
	buf = malloc((size_t)w->page_size * TD_COPY_PAGES);
	if (!sizes || !buf) {
		vt_err_set("%s: out of memory", w->path);
		goto out;
	}
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct stat sb;

		if (fstat(fds[i], &sb)) {
			vt_err_errno("%s: cpu%u data: cannot stat", w->path, i);
			goto out;
		}
		/* only whole pages: a torn last page (crash) is left out */
		sizes[i] = (uint64_t)sb.st_size - (uint64_t)sb.st_size % w->page_size;
	}
	if (td_u32(w, nr_cpus) || td_write(w, "options  ", 10))
		goto out;
	for (unsigned i = 0; i < w->nr_opts; i++)
		if (td_u16(w, w->opts[i].id) || td_u32(w, w->opts[i].len) ||
		    td_write(w, w->opts[i].data, w->opts[i].len))
			goto out;
	if (td_u16(w, VT_TD_OPT_DONE) || td_write(w, "flyrecord", 10))
		goto out;
	/* with a TRACECLOCK option libtracecmd reads u64 size + the clock text
	 * right after the offsets (v6): written here, never left to the
	 * padding (whose bytes, near a page end, would be the first page's) */
	for (unsigned i = 0; i < w->nr_opts; i++)
		if (w->opts[i].id == VT_TD_OPT_TRACECLOCK) {
			clock = w->opts[i].data;
			clock_len = strnlen(clock, w->opts[i].len);
		}
	off = w->off + (uint64_t)nr_cpus * 2 * sizeof(uint64_t);
	if (clock)
		off += sizeof(uint64_t) + clock_len;
	off = (off + w->page_size - 1) / w->page_size * w->page_size;
	for (unsigned i = 0; i < nr_cpus; i++) {
		if (td_u64(w, off) || td_u64(w, sizes[i]))
			goto out;
		off += sizes[i];
	}
	if (clock && (td_u64(w, clock_len) || td_write(w, clock, clock_len)))
		goto out;
	while (w->off % w->page_size)
		if (td_write(w, &zero, 1))
			goto out;
	for (unsigned i = 0; i < nr_cpus; i++) {
		struct vt_td_cpu_stats dummy;
		struct vt_td_cpu_stats *st = stats ? &stats[i] : &dummy;

		memset(st, 0, sizeof(*st));
		if (td_copy_cpu(w, i, fds[i], sizes[i], st, buf))
			goto out;
	}
	ret = 0;
out:
	free(sizes);
	free(buf);
	return ret;
}

static void td_free(struct vt_td_writer *w)
{
	for (unsigned i = 0; i < w->nr_opts; i++)
		free(w->opts[i].data);
	free(w->path);
	free(w);
}

int vt_td_close(struct vt_td_writer *w)
{
	int ret = 0;

	if (w->state != TD_S_DATA)
		ret = vt_err_set("%s: trace.dat closed before its cpu data", w->path);
	if (!ret && fsync(w->fd))
		ret = vt_err_errno("%s: fsync failed", w->path);
	if (close(w->fd) && !ret)
		ret = vt_err_errno("%s: close failed", w->path);
	td_free(w);
	return ret;
}

void vt_td_abort(struct vt_td_writer *w)
{
	close(w->fd);
	unlink(w->path);
	td_free(w);
}
