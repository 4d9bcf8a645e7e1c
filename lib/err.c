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

int vt_err_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vt_errbuf, sizeof(vt_errbuf), fmt, ap);
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
	char buf[sizeof(vt_errbuf)];	/* the arguments may be vt_err_msg() */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(vt_errbuf, buf, sizeof(buf));
	if (vt_errcode != ENOMEM)
		vt_errcode = strstr(fmt, "out of memory") ? ENOMEM : 0;
	return -1;
}

int vt_err_set_code(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vt_errbuf, sizeof(vt_errbuf), fmt, ap);
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
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vt_errbuf, sizeof(vt_errbuf), fmt, ap);
	va_end(ap);
	n = strlen(vt_errbuf);
	snprintf(vt_errbuf + n, sizeof(vt_errbuf) - n, ": %s", strerror(saved));
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
