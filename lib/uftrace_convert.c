/*
 * uftrace_convert.c - copying a clock=tsc uftrace data directory to a
 * clock=ns one (lib/uftrace.h vt_uft_convert_ns), for `vmtrace convert`
 * and `vmtrace run`: task.txt and every record's time converted as
 * `vmtrace merge` converts them, the other trace files copied.  Reads its
 * input through lib/uftrace_read.c and lib/uftrace_stream.c.  Allocates
 * and blocks; any thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fileio.h"
#include "meta.h"
#include "tsc.h"
#include "uftrace_int.h"

#define MIN_TSC_HZ		1000	/* below: surely not a TSC frequency */

/* Copy the file @src to @dst (created or truncated): 0, or -1 with a
 * message. */
static int copy_file(const char *src, const char *dst)
{
	char buf[COPY_BUF_BYTES];
	int in, out, ret = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return vt_err_errno("%s: cannot open", src);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, FILE_MODE);
	if (out < 0) {
		close(in);
		return vt_err_errno("%s: cannot create", dst);
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = vt_err_errno("%s: read error", src);
			break;
		}
		if (uft_write_all(out, buf, n, dst)) {
			ret = -1;
			break;
		}
	}
	close(in);
	if (close(out) && !ret)
		ret = vt_err_errno("%s: write failed", dst);
	return ret;
}

/* Rewrite task.txt with every "timestamp=S.N" converted. */
static int convert_task_txt(const char *src, const char *dst, uint64_t hz)
{
	struct uft_sbuf sb = { 0 };
	struct uft_lines l;
	char *buf, *line;
	int bad;

	buf = uft_lines_read(&l, src, TASK_MAX_BYTES);
	if (!buf)
		return -1;
	while ((line = uft_next_line(&l, &bad))) {
		uint64_t ts;
		char *rest;

		if (bad || strlen(line) < 5 || uft_parse_ts(line + 5, &ts, &rest)) {
			if (!line[0] && !bad)
				continue;
			free(buf);
			free(sb.buf);
			return vt_err_set("%s:%d: malformed line", src, l.lineno);
		}
		ts = vt_tsc_to_ns(ts, hz);	/* a few lines: no need for vt_tsc_ns */
		uft_sb_printf(&sb, "%.5stimestamp=%" PRIu64 ".%09" PRIu64 "%s\n", line,
			  ts / VT_NS_PER_SEC, ts % VT_NS_PER_SEC, rest);
	}
	free(buf);
	return uft_sb_write(&sb, dst);
}

/* Write task @idx's records (its raw stamps: vt_uft_raw_path) to the
 * new file @fd (named @dst, closed here) with their times in ns at @hz;
 * 1 if the input ended early (truncated/corrupt: @warn says where), 0, or
 * -1 with a message. */
static int convert_dat_fd(struct vt_uft_reader *r, int idx, int fd, const char *dst,
			  uint64_t hz, char *warn, size_t warn_len)
{
	struct vt_uft_stream *s = vt_uft_stream_open(r, idx);
	struct vt_uft_record rec;
	uint8_t out[COPY_BUF_BYTES] __attribute__((aligned(VT_IO_ALIGN)));
	size_t used = 0;
	int ret, partial = 0;
	struct vt_tsc_ns conv = { 0 };

	if (!s) {
		close(fd);
		return -1;
	}
	vt_tsc_ns_init(&conv, hz);	/* hz != 0: checked by the caller */
	for (;;) {
		const void *pl;
		size_t plen, total = sizeof(rec), n;
		const uint8_t *run = vt_uft_stream_run(s, (sizeof(out) - used) / sizeof(rec), &n);

		/* the plain records already read, converted in one go: no call
		 * per record (a finish converts every record a tracer wrote) */
		for (size_t k = 0; k < n; k++) {
			memcpy(&rec, run + k * sizeof(rec), sizeof(rec));
			rec.time = vt_tsc_ns(&conv, rec.time);
			memcpy(out + used + k * sizeof(rec), &rec, sizeof(rec));
		}
		used += n * sizeof(rec);
		if (n)
			continue;
		/* a record with data, the end, corruption, or out full */
		ret = vt_uft_stream_next(s, &rec);
		if (ret != 1)
			break;
		rec.time = vt_tsc_ns(&conv, rec.time);
		pl = vt_uft_stream_payload(s, &plen);
		if (pl)
			total += (2 + plen + 7) & ~(size_t)7;
		if (sizeof(out) - used < total) {
			if (uft_write_all(fd, out, used, dst))
				goto fail;
			used = 0;
		}
		memcpy(out + used, &rec, sizeof(rec));
		if (pl) {
			uint16_t l16 = plen;

			memset(out + used + sizeof(rec), 0, total - sizeof(rec));
			memcpy(out + used + sizeof(rec), &l16, 2);
			memcpy(out + used + sizeof(rec) + 2, pl, plen);
		}
		used += total;
	}
	if (ret < 0) {
		snprintf(warn, warn_len, "%s", vt_err_msg());
		partial = 1;
	} else if (vt_uft_stream_truncated(s)) {
		snprintf(warn, warn_len, "%s: truncated last record at offset %" PRIu64 " dropped",
			 vt_uft_stream_path(s), vt_uft_stream_offset(s));
		partial = 1;
	}
	if (uft_write_all(fd, out, used, dst))
		goto fail;
	vt_uft_stream_close(s);
	if (close(fd))
		return vt_err_errno("%s: write failed", dst);
	return partial;
fail:
	vt_uft_stream_close(s);
	close(fd);
	return -1;
}

/* convert_dat_fd() into the file @dst, created or truncated. */
static int convert_dat(struct vt_uft_reader *r, int idx, const char *dst, uint64_t hz,
		       char *warn, size_t warn_len)
{
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, FILE_MODE);

	if (fd < 0)
		return vt_err_errno("%s: cannot create", dst);
	return convert_dat_fd(r, idx, fd, dst, hz, warn, warn_len);
}

/* The TSC frequency of clock=tsc directory @in: @tsc_hz if given, else
 * its vmtrace.meta's tsc.hz; 0 with a message if there is none. */
static uint64_t dir_tsc_hz(const struct vt_meta *m, const char *in, uint64_t tsc_hz)
{
	double hz;

	if (!tsc_hz && vt_meta_get_u64(m, VT_MK_TSC_HZ, &tsc_hz)) {
		if (vt_meta_get_double(m, VT_MK_TSC_HZ, &hz) || hz < 1) {
			vt_err_set("%s/%s: no valid tsc.hz (give the frequency explicitly)", in,
				   VT_META_FILE);
			return 0;
		}
		tsc_hz = (uint64_t)(hz + 0.5);
	}
	if (tsc_hz < MIN_TSC_HZ) {
		vt_err_set("TSC frequency %" PRIu64 " Hz is implausible", tsc_hz);
		return 0;
	}
	return tsc_hz;
}

int vt_uft_convert_ns(const char *in, const char *out, uint64_t tsc_hz, int force)
{
	char src[PATH_MAX], dst[PATH_MAX], rin[PATH_MAX], rout[PATH_MAX];
	char warn[1024] = "";
	struct vt_uft_reader *r = NULL;
	struct vt_meta *m;
	struct dirent *de;
	const char *clock;
	int ret = -1, partial = 0, given = tsc_hz != 0;
	DIR *d = NULL;

	rin[0] = 0;
	m = vt_meta_read_dir(in);
	if (!m)
		return vt_err_wrap("%s: no usable vmtrace.meta, cannot tell the clock (%s)", in,
				   vt_err_msg());
	clock = vt_meta_get(m, VT_MK_CLOCK);
	if (!clock || strcmp(clock, "tsc")) {
		vt_err_set("%s: clock is '%s', not 'tsc': nothing to convert", in,
			   clock ? clock : "(unset)");
		goto out;
	}
	tsc_hz = dir_tsc_hz(m, in, tsc_hz);
	if (!tsc_hz)
		goto out;
	r = vt_uft_open(in);
	if (!r)
		goto out;
	/* before creating (and, with force, emptying) @out */
	if (realpath(in, rin) && realpath(out, rout) && !strcmp(rin, rout)) {
		vt_err_set("%s: input and output are the same directory", out);
		goto out;
	}
	if (vt_uft_dir_create(out, force))
		goto out;
	d = opendir(in);
	if (!d) {
		vt_err_errno("%s: cannot read directory", in);
		goto out;
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *end;
		struct stat st;

		if (uft_path_join(src, sizeof(src), in, n) || uft_path_join(dst, sizeof(dst), out, n))
			goto out;
		if (lstat(src, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!strcmp(n, VT_META_FILE) || !strcmp(n, VT_UFT_RAW_TASK))
			continue;
		if (!strcmp(n, "task.txt")) {
			/* a finished directory's task.txt is its ns copy */
			if (uft_raw_task_path(src, sizeof(src), in) ||
			    convert_task_txt(src, dst, tsc_hz))
				goto out;
			continue;
		}
		if (uft_parse_int(n, &end) > 0 &&
		    (!strcmp(end, ".dat") || !strcmp(end, VT_UFT_RAW_SUFFIX)))
			continue;	/* below, through the reader */
		if (!uft_is_trace_file(n))
			continue;
		if (copy_file(src, dst))
			goto out;
	}
	for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
		char w[1024];
		int c;

		w[0] = 0;
		if (vt_uft_raw_path(src, sizeof(src), in, vt_uft_task_tid(r, i)) ||
		    vt_uft_dat_path(dst, sizeof(dst), out, vt_uft_task_tid(r, i)))
			goto out;
		if (access(src, F_OK))
			continue;
		c = convert_dat(r, i, dst, tsc_hz, w, sizeof(w));
		if (c < 0)
			goto out;
		if (c) {
			partial = 1;
			if (!warn[0])
				snprintf(warn, sizeof(warn), "%s", w);
		}
	}
	vt_meta_del(m, VT_MK_UFTRACE_NS_HZ);	/* the copy keeps no raw stamps */
	if (vt_meta_set(m, VT_MK_CLOCK, "ns") || vt_meta_set_u64(m, VT_MK_TSC_HZ, tsc_hz) ||
	    (given && vt_meta_set(m, VT_MK_TSC_HZ_SOURCE, "option")) ||
	    vt_meta_set(m, VT_MK_CONVERT_FROM, "%s", rin[0] ? rin : in) ||
	    vt_meta_write_dir(m, out))
		goto out;
	ret = 0;
	if (partial) {
		vt_err_set("%s", warn);
		ret = VT_UFT_PARTIAL;
	}
out:
	if (d)
		closedir(d);
	vt_uft_close(r);
	vt_meta_free(m);
	return ret;
}

/* 1 if the files @a and @b both exist and have the same size. */
static int same_size(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_size == sb.st_size;
}

/* Keep the file @cur's raw stamps as @raw, once (a second finish starts
 * from @raw).  1 if @raw holds them (and @cur is written anew from it), 0
 * if there is neither file, -1 with a message. */
static int keep_raw(const char *cur, const char *raw)
{
	if (access(raw, F_OK) == 0)
		return 1;
	if (access(cur, F_OK))
		return 0;
	if (rename(cur, raw))
		return vt_err_errno("%s: cannot rename to %s", cur, raw);
	return 1;
}

/* Finish task @idx of @dir: its raw stamps kept as <TID>.tsc, its .dat
 * written anew from them in ns at @hz (a temporary file renamed over it,
 * so a crash leaves the .tsc and either .dat whole); with @done (the
 * directory was finished at @hz before) a .dat of the .tsc's size is that
 * copy and is kept (a shorter one - a stream cut while it was sent - is
 * made again).  0, 1 (the raw stamps end early: @warn says where), or -1
 * with a message. */
static int finish_task(struct vt_uft_reader *r, int idx, const char *dir, uint64_t hz,
		       int done, char *warn, size_t wlen)
{
	char raw[PATH_MAX], dat[PATH_MAX], tmp[PATH_MAX];
	int tid = vt_uft_task_tid(r, idx), fd, c;

	if (vt_uft_dat_path(dat, sizeof(dat), dir, tid) ||
	    snprintf(raw, sizeof(raw), "%s/%d%s", dir, tid, VT_UFT_RAW_SUFFIX) >= (int)sizeof(raw) ||
	    snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", dat) >= (int)sizeof(tmp))
		return vt_err_set("%s: path too long", dir);
	if (done && same_size(raw, dat))
		return 0;
	c = keep_raw(dat, raw);
	if (c <= 0)
		return c;	/* 0: a task that recorded nothing */
	fd = mkstemp(tmp);
	if (fd < 0)
		return vt_err_errno("%s: cannot create", tmp);
	if (fchmod(fd, FILE_MODE)) {
		vt_err_errno("%s: cannot chmod", tmp);
		close(fd);
		unlink(tmp);
		return -1;
	}
	c = convert_dat_fd(r, idx, fd, tmp, hz, warn, wlen);
	if (c >= 0 && rename(tmp, dat))
		c = vt_err_errno("%s: cannot rename to %s", tmp, dat);
	if (c < 0)
		unlink(tmp);
	return c;
}

/* task.txt of @dir in ns at @hz, its raw lines kept as task.tsc (a few
 * lines: made again every time). */
static int finish_task_txt(const char *dir, uint64_t hz)
{
	char raw[PATH_MAX], txt[PATH_MAX];
	int c;

	if (uft_path_join(raw, sizeof(raw), dir, VT_UFT_RAW_TASK) ||
	    uft_path_join(txt, sizeof(txt), dir, "task.txt"))
		return -1;
	c = keep_raw(txt, raw);
	return c <= 0 ? c : convert_task_txt(raw, txt, hz);
}

int vt_uft_finish_ns(const char *dir, uint64_t tsc_hz)
{
	char path[PATH_MAX], warn[1024] = "";
	struct vt_uft_reader *r = NULL;
	struct vt_meta *m = NULL;
	const char *clock;
	int ret = -1, partial = 0, done;
	uint64_t was = 0;

	/* only a uftrace directory (info) of vmtrace's raw clock */
	if (uft_path_join(path, sizeof(path), dir, "info") || access(path, F_OK) ||
	    uft_path_join(path, sizeof(path), dir, VT_META_FILE) || access(path, F_OK))
		return VT_UFT_FIN_NONE;
	m = vt_meta_read_dir(dir);
	if (!m)
		return -1;
	clock = vt_meta_get(m, VT_MK_CLOCK);
	if (!clock || strcmp(clock, "tsc")) {
		vt_meta_free(m);
		return VT_UFT_FIN_NONE;
	}
	tsc_hz = dir_tsc_hz(m, dir, tsc_hz);
	if (!tsc_hz) {
		ret = VT_UFT_FIN_NO_HZ;
		goto out;
	}
	/* finished at this frequency before (the tracer's end, then unpack or
	 * finalize): the copies it made stand, only missing or short ones are
	 * made again */
	done = vt_meta_get_u64(m, VT_MK_UFTRACE_NS_HZ, &was) == 0 && was == tsc_hz;
	r = vt_uft_open(dir);
	if (!r)
		goto out;
	for (int i = 0; i < vt_uft_nr_tasks(r); i++) {
		char w[1024] = "";
		int c = finish_task(r, i, dir, tsc_hz, done, w, sizeof(w));

		if (c < 0)
			goto out;
		if (c && !partial) {
			partial = 1;
			snprintf(warn, sizeof(warn), "%s", w);
		}
	}
	if (finish_task_txt(dir, tsc_hz) ||
	    vt_meta_set_u64(m, VT_MK_UFTRACE_NS_HZ, tsc_hz) || vt_meta_write_dir(m, dir))
		goto out;
	ret = VT_UFT_FIN_DONE;
	if (partial) {
		vt_err_set("%s", warn);
		ret = VT_UFT_FIN_PARTIAL;
	}
out:
	vt_uft_close(r);
	vt_meta_free(m);
	return ret;
}
