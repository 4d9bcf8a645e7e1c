/*
 * err.c - the last-error message of vmtrace's library code and the
 * print/die helpers used by command main paths.  Not for traced programs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"

static __thread char vt_errbuf[1024];
static __thread int vt_errcode;	/* the last failure's kind (errno value) */

#define ERR_CUT		"..."
#define ERR_HEAD	(sizeof(vt_errbuf) / 4)	/* bytes kept before ERR_CUT */

/* @fmt's text then @suffix (NULL: none) into vt_errbuf.  A message longer
 * than the buffer loses its middle, not its end: its first ERR_HEAD bytes,
 * ERR_CUT, then its last bytes - a message naming a long path still ends
 * in what went wrong - each cut on a UTF-8 character's boundary.  The
 * arguments may be vt_err_msg(): they are formatted elsewhere first. */
static void err_vformat(const char *suffix, const char *fmt, va_list ap)
{
	char small[sizeof(vt_errbuf)], *s = small;
	size_t slen = suffix ? strlen(suffix) : 0, n, total, head, from;
	va_list aq;
	int len;

	va_copy(aq, ap);
	len = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	n = len > 0 ? (size_t)len : 0;
	if (n + slen >= sizeof(small)) {
		s = malloc(n + slen + 1);
		if (s) {
			vsnprintf(s, n + 1, fmt, ap);
		} else {	/* out of memory: the start only, as it fits */
			s = small;
			n = strlen(small);
			slen = 0;
		}
	}
	if (len < 0)
		s[0] = 0;
	memcpy(s + n, suffix ? suffix : "", slen + 1);
	total = n + slen;
	if (total < sizeof(vt_errbuf)) {
		memcpy(vt_errbuf, s, total + 1);
	} else {
		head = ERR_HEAD;
		while (head && ((unsigned char)s[head] & 0xc0) == 0x80)
			head--;
		from = total - (sizeof(vt_errbuf) - 1 - ERR_HEAD - strlen(ERR_CUT));
		while (from < total && ((unsigned char)s[from] & 0xc0) == 0x80)
			from++;
		memcpy(vt_errbuf, s, head);
		memcpy(vt_errbuf + head, ERR_CUT, strlen(ERR_CUT));
		memcpy(vt_errbuf + head + strlen(ERR_CUT), s + from, total - from + 1);
	}
	if (s != small)
		free(s);
}

int vt_err_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vformat(NULL, fmt, ap);
	va_end(ap);
	/* "out of memory" is every failed allocation's message: its kind is
	 * ENOMEM, so that a command going on without a part that failed to
	 * load (metadata, a clock model) fails instead when memory ran out.
	 * Read from the format, the program's own text: never from what it
	 * formats (a file named "out of memory" is not a failed allocation) */
	vt_errcode = strstr(fmt, "out of memory") ? ENOMEM : 0;
	return -1;
}

int vt_err_wrap(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vformat(NULL, fmt, ap);	/* the arguments may be vt_err_msg() */
	va_end(ap);
	if (vt_errcode != ENOMEM)
		vt_errcode = strstr(fmt, "out of memory") ? ENOMEM : 0;
	return -1;
}

int vt_err_set_code(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vformat(NULL, fmt, ap);
	va_end(ap);
	vt_errcode = code;
	return -1;
}

int vt_err_code(void)
{
	return vt_errcode;
}

int vt_err_code_set(int code)
{
	vt_errcode = code;
	return -1;
}

int vt_err_errno(const char *fmt, ...)
{
	int saved = errno;
	char reason[256];
	va_list ap;

	snprintf(reason, sizeof(reason), ": %s", strerror(saved));
	va_start(ap, fmt);
	err_vformat(reason, fmt, ap);
	va_end(ap);
	vt_errcode = saved;
	errno = saved;
	return -1;
}

const char *vt_err_msg(void)
{
	return vt_errbuf;
}

static const char *vt_command;	/* the running subcommand, set once */

void vt_err_set_command(const char *name)
{
	vt_command = name;
}

const char *vt_err_command(const char *fallback)
{
	return vt_command ? vt_command : fallback;
}

void vt_err_print(const char *prog)
{
	fprintf(stderr, "vmtrace: %s: %s\n", vt_err_command(prog),
		vt_errbuf[0] ? vt_errbuf : "unknown error");
}

void vt_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vmtrace: %s: ", vt_err_command("vmtrace"));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void vt_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("vmtrace: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void vt_note(const char *fmt, ...)
{
	va_list ap;

	fputs("vmtrace: note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void vt_die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("vmtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}
