/*
 * usdt_probes.h - CPython's static markers (USDT, ELF .note.stapsdt, read
 * by lib/usdt_note.h) turned into uprobe events on tracefs, so an
 * unprepared Python process is traced by the recorder in the x86-tsc
 * clock like every other kernel event (host/usdt_probes.c).
 *
 * Used by `vmtrace record --python` (host/cmd_record.c) and `vmtrace top
 * --python` (guest/usdt/top.c), on the host or in a guest.  Tools only:
 * allocates, does I/O.
 */
#ifndef HOST_USDT_PROBES_H
#define HOST_USDT_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "usdt_note.h"

#define USDT_MAX_PROBES	64

/* The file holding CPython's markers for a running process: the mapped
 * libpython*.so when it has them (an --enable-shared build), else the
 * executable.  0 with @out filled, -1 if the process maps no file with
 * "python" markers. */
int usdt_python_file_of_pid(pid_t pid, char *out, size_t len);

/* The file holding CPython's markers for the executable @path (searched
 * in $PATH when it has no '/'): @path itself when it has them, else the
 * libpython*.so with markers the dynamic loader would map for it (an
 * --enable-shared build).  0 with @out filled, -1 with a message. */
int usdt_python_file_of_binary(const char *path, char *out, size_t len);

/* 1 while process @pid exists and is not a zombie, else 0. */
int usdt_pid_alive(pid_t pid);

/* What one python marker means to vmtrace. */
struct usdt_python_event {
	const char *marker;		/* note name, e.g. "function__entry" */
	const char *const *args;	/* fetch arg names in note order */
	const char *const *strings;	/* those fetched as strings */
};

/* A set of uprobe events created for one Python file. */
struct usdt_session {
	char group[VT_USDT_NAME_MAX];		/* tracefs event system, unique per recorder */
	char file[4096];			/* the ELF file probed */
	int nr;					/* events created */
	char names[USDT_MAX_PROBES][VT_USDT_NAME_MAX];
	char events[USDT_MAX_PROBES][2 * VT_USDT_NAME_MAX];	/* "group:name" for the recorder */
	const char *missing[USDT_MAX_PROBES];	/* vmtrace's markers this file lacks */
	int nr_missing;
};

/* Create uprobe events (with fetch args and the semaphore's reference
 * counter, so the markers fire) for CPython's markers in @file, in the
 * tracefs event system "vmtrace_py_<our pid>", into @s.  0 or -1 (nothing
 * left behind on failure). */
int usdt_python_create(struct usdt_session *s, const char *file);

/* Remove every uprobe event @s created: 0, or -1 if one could not be
 * removed.  Safe to call twice. */
int usdt_python_remove(struct usdt_session *s);

/* Print, for the file probed, which Python events this interpreter can
 * show and what it cannot (function markers fire only for frames entered
 * from C on 3.11; absent on 3.12/3.13), to the FILE * @fp. */
void usdt_python_explain(const struct usdt_session *s, void *fp);

#endif
