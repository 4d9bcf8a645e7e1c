/*
 * host_extents.h - extents.tsv of a host recording (host/extents.c): the
 * FIEMAP extents of the regular files (1 MiB and up: disk images) the
 * recorded QEMU processes have open.
 */
#ifndef HOST_HOST_EXTENTS_H
#define HOST_HOST_EXTENTS_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

#include "extents.h"

/* the files read at the start, read again at the end */
#define HOST_EXT_FILES	32
#define HOST_EXT_ALIAS	8	/* other fds of a file noted (extents.tsv fd lines) */
struct host_ext_file {
	pid_t pid;
	int fd;			/* its lowest fd */
	int alias[HOST_EXT_ALIAS];	/* its other fds (QEMU may open an image twice) */
	int nr_alias;
	int nr_alias_written;	/* ... of them in extents.tsv's fd lines */
	int read;		/* its start reading done: @ident is its identity */
	struct vt_extent ident;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];	/* its name then (a deleted file's is not); last */
};
struct host_ext_files {
	int n;
	struct host_ext_file f[HOST_EXT_FILES];
};

/* Scan the fds of processes @pids[0..nr): append to @out the start
 * reading of the files not yet in @files (noting them there) and an fd
 * line for each other fd of a known file not yet written; a scan again
 * later finds the fds and files opened since.  Files that cannot be read
 * or mapped are skipped; -1 only on a write error. */
int host_extents_write(FILE *out, const pid_t *pids, int nr, struct host_ext_files *files);
/* Append the end reading of @files: through the process's fd while it
 * has it, else by the file's name (the same file: device and inode). */
int host_extents_write_end(FILE *out, struct host_ext_files *files);

#endif
