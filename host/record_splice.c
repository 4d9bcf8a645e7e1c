/*
 * record_splice.c - the recorder's per-CPU reader threads (record_int.h):
 * each only moves whole ring-buffer pages from its CPU's trace_pipe_raw
 * to a raw file in the output directory with splice(2), and drains the
 * partial last pages when tracing stopped.  No parsing, no allocation, no
 * locks: this is the recorder's per-event path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <tracefs.h>
#include "err.h"
#include "fileio.h"
#include "kvmfacts.h"
#include "proc.h"
#include "meta.h"
#include "record_int.h"
#include "tracedat.h"
#include "tsc.h"

static int rec_move(struct rec_cpu *c, size_t n)
{
	while (n) {
		ssize_t m = splice(c->pipe[0], NULL, c->out_fd, NULL, n, SPLICE_F_MOVE);

		if (unlikely(m <= 0)) {
			if (m < 0 && errno == EINTR)
				continue;
			return m < 0 ? errno : EIO;
		}
		n -= m;
	}
	return 0;
}

/* Splice what full pages there are; 0 = none left, 1 = moved, -1 = error. */
static int rec_splice_once(struct rec_cpu *c)
{
	ssize_t n = splice(c->in_fd, NULL, c->pipe[1], NULL, c->pipe_bytes,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		c->err = errno;
		return -1;
	}
	if (n == 0)
		return 0;
	c->err = rec_move(c, n);
	return c->err ? -1 : 1;
}

/* After tracing stopped: whole pages, then the partial last page(s). */
void rec_drain(struct rec_cpu *c)
{
	uint32_t psz = c->rec->page_size;

	while (rec_splice_once(c) > 0)
		;
	if (c->err)
		return;
	for (;;) {
		ssize_t n = read(c->in_fd, c->page, psz);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		memset(c->page + n, 0, psz - n);
		for (size_t off = 0; off < psz;) {
			ssize_t m = write(c->out_fd, c->page + off, psz - off);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				c->err = m < 0 ? errno : EIO;
				return;
			}
			off += m;
		}
	}
}

void *rec_cpu_main(void *arg)
{
	struct rec_cpu *c = arg;
	struct pollfd pfd[2] = {
		{ .fd = c->in_fd, .events = POLLIN },
		{ .fd = c->rec->stop_pipe[0], .events = POLLIN },
	};

	for (;;) {
		if (unlikely(poll(pfd, 2, -1) < 0)) {
			if (errno == EINTR)
				continue;
			c->err = errno;
			break;
		}
		if (unlikely(pfd[1].revents))
			break;
		if (pfd[0].revents & POLLIN) {
			/* poll says "buffer_percent full": take all full pages */
			int r;

			while ((r = rec_splice_once(c)) > 0)
				;
			if (unlikely(r < 0))
				break;
		}
	}
	if (!c->err)
		rec_drain(c);
	return NULL;
}
