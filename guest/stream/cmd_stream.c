/*
 * cmd_stream.c - `vmtrace stream DIR OUT`: inside a guest, follow the trace
 * directory DIR while the tracers write it and send every new file and
 * every appended byte to OUT (a virtio-serial port) as frames of the
 * vmtrace stream (lib/stream.h), so the host has the traces without access
 * to the guest's files, and keeps what was sent if the guest dies.
 *
 * Runs as its own process (the command's main thread), next to the
 * tracers; blocks on file reads and on the port, allocates per file.
 * Every interval it rescans DIR:
 *   - a uftrace per-thread store (<TID>.dat: mmap'd, preallocated with
 *     zeroes, written in place) is sent only up to its last complete
 *     record (magic 5, docs/format/python.md), and that range is read
 *     twice: a record whose magic the first read saw has its time word
 *     visible to the second (the writer stores time, then magic);
 *   - any other file is sent up to its current end (appended files:
 *     task.txt, .sym, markers.dat, the kernel recorder's trace.cpuN.raw
 *     pages, logs), before the stores, so a cut stream keeps what makes
 *     the records readable;
 *   - a replaced file (new inode), one shorter than what was sent, or a
 *     small one (<= STREAM_VERIFY_MAX) whose sent bytes changed is sent
 *     again whole (RESET); small files are re-checked when their size or
 *     mtime changed, the Python tracer's .stage (a reused shared mapping:
 *     no mtime change) every pass; a vanished one gets an UNLINK frame; the temporary
 *     files of atomic replaces (NAME.tmpXXXXXX) are left out.
 * On SIGTERM/SIGINT/SIGUSR1 (the writers are done) a last pass re-reads
 * every file and checks the CRC of what was sent: a file rewritten in
 * place (trace.dat headers patched, vmtrace.meta rewritten) is sent again
 * whole; then the END frame.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "err.h"
#include "stream.h"
#include "uftrace.h"

#define STREAM_INTERVAL_MS	250
#define STREAM_INTERVAL_MAX_MS	60000
/* payload bytes per DATA frame (a multiple of the uftrace record size) */
#define STREAM_CHUNK		(256u << 10)
/* files up to this size are re-checked every pass (they may be rewritten
 * in place: the Python tracer's .stage, info); bigger ones at the last */
#define STREAM_VERIFY_MAX	(256u << 10)
/* bytes of a store read first to see whether it has new records */
#define STORE_PROBE		4096
/* the Python tracer's per-thread stage: a reused shared mapping, rewritten
 * in place without touching the file's mtime (tmpfs) */
#define STAGE_SUFFIX		".stage"
/* lib/fileio.c's temporary name of an atomic replace: NAME.tmpXXXXXX */
#define TMP_SUFFIX		".tmp"
#define TMP_RANDOM_LEN		6
#define NS_PER_MS		1000000L
#define MS_PER_S		1000

struct sfile {
	char name[VT_STREAM_NAME_MAX + 1];
	dev_t dev;
	ino_t ino;
	uint64_t sent;		/* bytes of the file the host has */
	uint32_t crc;		/* CRC-32 of those bytes */
	int store;		/* a uftrace <TID>.dat: send whole records only */
	int mapped;		/* changed in place unseen by mtime: check every pass */
	struct timespec mtime;	/* at the last pass */
	off_t size;
	int seen;		/* found by the current scan */
	int announced;		/* the host knows the file (even empty) */
};

struct streamer {
	const char *dir;
	const char *out_name;
	int out;
	dev_t out_dev;		/* OUT itself, if it is a file inside DIR */
	ino_t out_ino;
	struct sfile *files;
	size_t nr, cap;
	uint8_t *buf;
	uint64_t frames, bytes;
	int verify;		/* last pass: check what was sent */
	int warned_long;
};

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	stop_flag = 1;
}

/* 1 if @base is the temporary file of an atomic replace (renamed soon:
 * the final name is sent instead). */
static int is_temp(const char *base)
{
	size_t n = strlen(base), t = strlen(TMP_SUFFIX);

	return n > t + TMP_RANDOM_LEN &&
	       !strncmp(base + n - TMP_RANDOM_LEN - t, TMP_SUFFIX, t);
}

/* 1 if @base ends in @suffix. */
static int has_suffix(const char *base, const char *suffix)
{
	size_t n = strlen(base), k = strlen(suffix);

	return n > k && !strcmp(base + n - k, suffix);
}

/* 1 if @base is "<digits>.dat", a uftrace per-thread store. */
static int is_store(const char *base)
{
	const char *p = base;

	while (*p >= '0' && *p <= '9')
		p++;
	return p != base && !strcmp(p, ".dat");
}

static struct sfile *file_get(struct streamer *s, const char *name)
{
	struct sfile *f;
	const char *base = strrchr(name, '/');

	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->files[i].name, name))
			return &s->files[i];
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct sfile *n = realloc(s->files, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->files = n;
		s->cap = cap;
	}
	f = &s->files[s->nr++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->store = is_store(base ? base + 1 : name);
	f->mapped = has_suffix(base ? base + 1 : name, STAGE_SUFFIX);
	return f;
}

static int send_frame(struct streamer *s, unsigned type, unsigned flags, const char *name,
		      uint64_t off, const void *data, size_t len)
{
	struct vt_stream_frame fr = {
		.type = type, .flags = flags, .offset = off, .len = (uint32_t)len, .data = data,
	};

	snprintf(fr.name, sizeof(fr.name), "%s", name ? name : "");
	if (vt_stream_write(s->out, s->out_name, &fr) < 0)
		return -1;
	s->frames++;
	s->bytes += len;
	return 0;
}

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Bytes at the start of @buf (@len) that are complete uftrace records. */
static size_t store_valid(const uint8_t *buf, size_t len)
{
	const struct vt_uft_record *r = (const void *)buf;
	size_t n = len / sizeof(*r), i;

	for (i = 0; i < n; i++)
		if (vt_uft_magic(r[i].bits) != VT_UFT_RECORD_MAGIC)
			break;
	return i * sizeof(*r);
}

/* 1 if the first f->sent bytes of @fd still have CRC f->crc. */
static int sent_unchanged(struct streamer *s, struct sfile *f, int fd)
{
	uint64_t off = 0;
	uint32_t crc = 0;

	while (off < f->sent) {
		size_t want = f->sent - off < STREAM_CHUNK ? (size_t)(f->sent - off) : STREAM_CHUNK;
		ssize_t n = pread_full(fd, s->buf, want, off);

		if (n != (ssize_t)want)
			return 0;
		crc = vt_stream_crc32(crc, s->buf, want);
		off += want;
	}
	return crc == f->crc;
}

/* Send what the host does not have of file @f (open as @fd, @st). */
static int file_send(struct streamer *s, struct sfile *f, int fd, const struct stat *st)
{
	int changed = f->mapped || f->size != st->st_size ||
		      f->mtime.tv_sec != st->st_mtim.tv_sec ||
		      f->mtime.tv_nsec != st->st_mtim.tv_nsec;
	int verify = s->verify ||
		     (!f->store && changed && (uint64_t)st->st_size <= STREAM_VERIFY_MAX);
	unsigned flags = 0;

	f->mtime = st->st_mtim;
	f->size = st->st_size;
	if (f->dev != st->st_dev || f->ino != st->st_ino || (uint64_t)st->st_size < f->sent ||
	    (verify && f->sent && !sent_unchanged(s, f, fd))) {
		if (f->sent || f->ino)
			flags = VT_STREAM_F_RESET;
		f->dev = st->st_dev;
		f->ino = st->st_ino;
		f->sent = 0;
		f->crc = 0;
	}
	for (;;) {
		/* a store is mostly preallocated zeroes: look at one page first */
		size_t want = f->store && !flags ? STORE_PROBE : STREAM_CHUNK;
		ssize_t n = pread_full(fd, s->buf, want, f->sent);
		size_t len;

		if (want == STORE_PROBE && n == STORE_PROBE &&
		    store_valid(s->buf, STORE_PROBE) == STORE_PROBE)
			n = pread_full(fd, s->buf, STREAM_CHUNK, f->sent);
		if (n < 0)
			return 0;	/* gone or unreadable: the next scan sees */
		len = (size_t)n;
		if (f->store) {
			len = store_valid(s->buf, len);
			if (len && pread_full(fd, s->buf, len, f->sent) != (ssize_t)len)
				return 0;
		}
		if (len == 0 && !flags && f->announced)
			return 0;
		if (f->sent + len > VT_STREAM_MAX_FILE)
			return 0;
		if (send_frame(s, VT_STREAM_DATA, flags, f->name, f->sent, s->buf, len) < 0)
			return -1;
		flags = 0;
		f->announced = 1;
		f->crc = vt_stream_crc32(f->crc, s->buf, len);
		f->sent += len;
		if (len < STREAM_CHUNK)
			return 0;
	}
}

/* Scan directory @rel of DIR ("" for DIR itself), @depth components deep:
 * in phase 0 every file but the uftrace stores, in phase 1 the stores (the
 * small files that make the records readable lead: a cut stream is more
 * useful). */
static int scan(struct streamer *s, const char *rel, int depth, int phase)
{
	char path[PATH_MAX], name[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s%s%s", s->dir, rel[0] ? "/" : "", rel);
	d = opendir(path);
	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		struct sfile *f;
		struct stat st;
		int fd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_temp(e->d_name))
			continue;
		if ((size_t)snprintf(name, sizeof(name), "%s%s%s", rel, rel[0] ? "/" : "",
				     e->d_name) >= sizeof(name) ||
		    !vt_stream_name_ok(name, strlen(name))) {
			if (!s->warned_long++)
				vt_warn("stream: '%s/%s' cannot be streamed (name too long or too deep): skipped",
					path, e->d_name);
			continue;
		}
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		if (st.st_dev == s->out_dev && st.st_ino == s->out_ino) {
			close(fd);	/* never stream the stream */
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			if (depth + 1 < VT_STREAM_MAX_DEPTH)
				rc = scan(s, name, depth + 1, phase);
			continue;
		}
		if (S_ISREG(st.st_mode) && is_store(e->d_name) == phase) {
			f = file_get(s, name);
			if (!f) {
				close(fd);
				return vt_err_errno("stream: no memory for '%s'", name);
			}
			f->seen = 1;
			rc = file_send(s, f, fd, &st);
		}
		close(fd);
	}
	closedir(d);
	return rc;
}

/* One pass over DIR: send what is new, UNLINK what is gone. */
static int pass(struct streamer *s)
{
	size_t i = 0;

	for (size_t k = 0; k < s->nr; k++)
		s->files[k].seen = 0;
	if (scan(s, "", 0, 0) < 0 || scan(s, "", 0, 1) < 0)
		return -1;
	while (i < s->nr) {
		if (s->files[i].seen) {
			i++;
			continue;
		}
		if (send_frame(s, VT_STREAM_UNLINK, 0, s->files[i].name, 0, NULL, 0) < 0)
			return -1;
		s->files[i] = s->files[--s->nr];
	}
	return 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / MS_PER_S, (long)(ms % MS_PER_S) * NS_PER_MS };

	/* a stop signal interrupts the sleep (no SA_RESTART) */
	nanosleep(&ts, NULL);
}

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace stream [-i MS] [--once] DIR OUT\n"
		"  follow the trace directory DIR and send its files to OUT (a virtio-serial\n"
		"  port such as /dev/vport0p1, or a file) as a vmtrace stream, until\n"
		"  SIGTERM/SIGINT/SIGUSR1: then a last checked pass and an END frame.\n"
		"  The host rebuilds DIR with 'vmtrace unpack OUT -o DIR'.\n"
		"  -i, --interval MS  rescan every MS milliseconds (default %d); a unit may\n"
		"                     be given instead: 250ms, 1s\n"
		"  --once             one pass and END (DIR is complete already)\n",
		STREAM_INTERVAL_MS);
}

/* `vmtrace stream [-i MS] [--once] DIR OUT`: exit 0 after the END frame,
 * 1 when OUT cannot be written, 2 on bad options. */
int cmd_stream(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct streamer s = { .out = -1 };
	struct sigaction sa;
	char hello[PATH_MAX + 128], end[128];
	uint64_t interval_ms = STREAM_INTERVAL_MS;
	int once = 0, c, rc = VT_EXIT_FAIL;
	struct stat st;

	while ((c = getopt_long(argc, argv, "i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (vt_parse_ms(optarg, 1, 1, STREAM_INTERVAL_MAX_MS, &interval_ms)) {
				vt_error("bad --interval '%s' (1..%d ms: a bare number of ms, or "
					 "with a unit: 250ms, 1s)", optarg, STREAM_INTERVAL_MAX_MS);
				return VT_EXIT_USAGE;
			}
			break;
		case 'O':
			once = 1;
			break;
		default:
			return vt_cli_usage(usage, c == 'h');
		}
	}
	if (optind + 2 != argc)
		return vt_cli_usage(usage, 0);
	s.dir = argv[optind];
	s.out_name = argv[optind + 1];
	if (stat(s.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "vmtrace: stream: %s is not a directory\n", s.dir);
		return VT_EXIT_USAGE;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	s.buf = malloc(STREAM_CHUNK);
	if (!s.buf) {
		vt_err_errno("stream: no memory");
		goto out;
	}
	s.out = open(s.out_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (s.out < 0) {
		vt_err_errno("%s: cannot open", s.out_name);
		goto out;
	}
	if (fstat(s.out, &st) == 0) {
		s.out_dev = st.st_dev;
		s.out_ino = st.st_ino;
	}
	snprintf(hello, sizeof(hello), "producer=vmtrace-stream\nversion=%d\ndir=%s\ninterval_ms=%" PRIu64 "\n",
		 VT_STREAM_VERSION, s.dir, interval_ms);
	if (send_frame(&s, VT_STREAM_HELLO, 0, NULL, 0, hello, strlen(hello)) < 0)
		goto out;
	while (!once && !stop_flag) {
		if (pass(&s) < 0)
			goto out;
		if (!stop_flag)
			sleep_ms((unsigned)interval_ms);
	}
	s.verify = 1;
	if (pass(&s) < 0)
		goto out;
	snprintf(end, sizeof(end), "files=%zu\nframes=%" PRIu64 "\nbytes=%" PRIu64 "\n",
		 s.nr, s.frames + 1, s.bytes);
	if (send_frame(&s, VT_STREAM_END, 0, NULL, 0, end, strlen(end)) < 0)
		goto out;
	rc = VT_EXIT_OK;
out:
	if (rc != VT_EXIT_OK)
		vt_err_print("stream");
	if (s.out >= 0 && close(s.out) < 0 && rc == VT_EXIT_OK) {
		vt_err_errno("%s: close", s.out_name);
		vt_err_print("stream");
		rc = VT_EXIT_FAIL;
	}
	free(s.files);
	free(s.buf);
	return rc;
}
