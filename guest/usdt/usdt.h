/*
 * usdt.h - CPython's static markers (USDT, ELF .note.stapsdt) turned into
 * uprobe events on tracefs, so an unprepared Python process is traced by the
 * recorder in the x86-tsc clock like every other kernel event.
 *
 * Used by `vmtrace record --python` (host/cmd_record.c) on the host or in a
 * guest.  Tools only: allocates, does I/O.
 */
#ifndef GUEST_USDT_H
#define GUEST_USDT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define USDT_NAME_MAX	64
#define USDT_ARGS_MAX	256
#define USDT_FETCH_MAX	512
#define USDT_MAX_PROBES	64

/* One marker of an ELF file, with what a uprobe needs. */
struct usdt_probe {
	char provider[USDT_NAME_MAX];
	char name[USDT_NAME_MAX];
	uint64_t pc_vaddr;		/* link-time address of the marker's nop */
	uint64_t sem_vaddr;		/* link-time address of the semaphore, 0 if none */
	uint64_t pc_off;		/* file offset of the marker (uprobe place) */
	uint64_t sem_off;		/* file offset of the semaphore (ref_ctr_offset) */
	char args[USDT_ARGS_MAX];	/* the note's argument string, e.g. "8@%rbp -4@%eax" */
};

/* Read every marker of @provider (NULL = all) in the ELF file @path.
 * Returns the number found (0..@max) or -1 with a message naming the file. */
int usdt_probes_read(const char *path, const char *provider, struct usdt_probe *out, int max);

/* Convert the note's argument string into uprobe fetch args named by @names
 * (NULL-terminated; "" skips an argument); an argument named in
 * @string_names is fetched as a user string.  0, or -1 when an operand
 * cannot be expressed as a fetch arg (message says which). */
int usdt_fetchargs(const char *stap_args, const char *const *names,
		   const char *const *string_names, char *out, size_t len);

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
	char group[USDT_NAME_MAX];		/* tracefs event system, unique per recorder */
	char file[4096];			/* the ELF file probed */
	int nr;					/* events created */
	char names[USDT_MAX_PROBES][USDT_NAME_MAX];
	char events[USDT_MAX_PROBES][2 * USDT_NAME_MAX];	/* "group:name" for the recorder */
	const char *missing[USDT_MAX_PROBES];	/* vmtrace's markers this file lacks */
	int nr_missing;
};

/* Create uprobe events (with fetch args and the semaphore's reference
 * counter, so the markers fire) for CPython's markers in @file, in the
 * tracefs event system "vmtrace_py_<our pid>".  0 or -1 (nothing left
 * behind on failure). */
int usdt_python_create(struct usdt_session *s, const char *file);

/* Remove every uprobe event @s created.  Safe to call twice. */
int usdt_python_remove(struct usdt_session *s);

/* Print, for the file probed, which Python events this interpreter can
 * show and what it cannot (function markers fire only for frames entered
 * from C on 3.11; absent on 3.12/3.13), to @fp. */
void usdt_python_explain(const struct usdt_session *s, void *fp);

/* `vmtrace top --python[=FILE] -p PID ...` (guest/usdt/top.c; cmd_top
 * hands over when it sees --python): returns an exit code. */
int usdt_top_main(int argc, char **argv);

#endif
