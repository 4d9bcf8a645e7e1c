/*
 * err.h - error reporting for vmtrace's tools (not for the runtimes that
 * live inside traced programs: they must never print or exit).
 *
 * Library code returns -1 or NULL and records a message with vt_err_set(),
 * and with it the failure's kind, an errno value (vt_err_errno() takes
 * errno's, vt_err_set_code() names one, vt_err_set() none, or ENOMEM when
 * its format says "out of memory", the one phrase of a failed allocation):
 * a command maps vt_err_code() to its exit status (no permission, no such
 * feature, ...).  errno itself is not part of that contract.  Only a
 * command's main path prints the message (vt_err_print) and exits.
 * Messages name the file and what is wrong with it.
 */
#ifndef VT_ERR_H
#define VT_ERR_H

#include <stdarg.h>
#include "compiler.h"

/* Exit codes of every vmtrace command (documented in docs/exit-codes.md). */
enum vt_exit {
	VT_EXIT_OK = 0,
	VT_EXIT_FAIL = 1,	/* the work failed (I/O error, bad input data) */
	VT_EXIT_USAGE = 2,	/* wrong options or arguments */
	VT_EXIT_PARTIAL = 3,	/* done, but input was truncated/corrupt: warned */
	VT_EXIT_PERM = 4,	/* no permission (root, ptrace, tracefs) */
	VT_EXIT_UNSUPPORTED = 5,/* the machine lacks a feature (kvm, tracefs) */
};

/* Record a message for the last failure; returns -1 for `return vt_err_set(...)`. */
int vt_err_set(const char *fmt, ...) VT_PRINTF(1, 2);
/* Like vt_err_set() with ": strerror(errno)" appended; the kind is errno. */
int vt_err_errno(const char *fmt, ...) VT_PRINTF(1, 2);
/* Like vt_err_set() for a message that says the last one again with
 * more (a file, a line, what to do): its arguments may be vt_err_msg(),
 * and a failed allocation (ENOMEM) stays one. */
int vt_err_wrap(const char *fmt, ...) VT_PRINTF(1, 2);
/* Like vt_err_set(), the failure's kind @code (an errno value). */
int vt_err_set_code(int code, const char *fmt, ...) VT_PRINTF(2, 3);
/* The last failure's kind (an errno value; 0: none was said). */
int vt_err_code(void);
/* Change the last failure's kind to @code, its message kept; returns -1. */
int vt_err_code_set(int code);
/* The last recorded message ("" if none). */
const char *vt_err_msg(void);
/* Name the running subcommand (the dispatcher does, before running it):
 * every message of the process then says it, whichever module prints
 * (`vmtrace report` runs merge's pipeline: its messages say "report"). */
void vt_err_set_command(const char *name);
/* The running subcommand's name, else @fallback. */
const char *vt_err_command(const char *fallback);
/* Print "vmtrace: <command>: <last message>" to stderr (<command>: the
 * running subcommand's name, else @prog). */
void vt_err_print(const char *prog);
/* Print "vmtrace: <command>: <message>" to stderr: a command's own error
 * line, in the one form every message takes. */
void vt_error(const char *fmt, ...) VT_PRINTF(1, 2);
/* Print a warning "vmtrace: warning: ..." to stderr. */
void vt_warn(const char *fmt, ...) VT_PRINTF(1, 2);
/* Print "vmtrace: note: ..." to stderr: information, not a problem. */
void vt_note(const char *fmt, ...) VT_PRINTF(1, 2);
/* Print an error and exit with @code (tools only). */
void vt_die(int code, const char *fmt, ...) VT_PRINTF(2, 3) __attribute__((noreturn));

#endif
