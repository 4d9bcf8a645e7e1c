/*
 * session.h - helpers shared by `vmtrace run` and the Linux mcount
 * runtime: the environment contract between them and the rewrite of a
 * data directory's info file.  Not on any hot path (they allocate).
 */
#ifndef MCOUNT_SESSION_H
#define MCOUNT_SESSION_H

#include <stdint.h>
#include "uftrace.h"

/* Environment set by `vmtrace run` for the preloaded runtime. */
#define MCOUNT_ENV_DIR		"VMTRACE_DIR"		/* output directory */
#define MCOUNT_ENV_DEPTH	"VMTRACE_DEPTH"		/* depth limit */
#define MCOUNT_ENV_ENTRIES	"VMTRACE_ENTRIES_ONLY"	/* "1": no return hooks */
#define MCOUNT_ENV_BUFSIZE	"VMTRACE_BUFSIZE"	/* per-thread buffer bytes */
#define MCOUNT_ENV_RUN		"VMTRACE_RUN"		/* "1": dir prepared by run */
#define MCOUNT_DEFAULT_DIR	"vmtrace-mcount"	/* docs/cli.md, Default output */
#define MCOUNT_DEFAULT_DEPTH	VT_UFT_MAX_DEPTH
/* 64 KiB: 4096 records; a SIGKILL loses at most this much per thread */
#define MCOUNT_DEFAULT_BUF_BYTES (64 * 1024)
#define MCOUNT_MIN_BUF_BYTES	4096
#define MCOUNT_MAX_BUF_BYTES	(256 * 1024 * 1024)

/*
 * Rewrite DIR/info (atomically, by lib) for the program @exename run as
 * @cmdline, listing every <TID>.dat now in @dir.  @exit_status is a
 * wait() status or -1 while the program runs.  0 or -1 (lib/err.h).
 */
int mcount_session_write_info(const char *dir, const char *exename, const char *cmdline,
			      int exit_status, unsigned max_depth, uint64_t elapsed_ns);

#endif
