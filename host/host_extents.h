/*
 * host_extents.h - extents.tsv of a host recording (host/extents.c): the
 * FIEMAP extents of the regular files (1 MiB and up: disk images) the
 * recorded QEMU processes have open.
 */
#ifndef HOST_HOST_EXTENTS_H
#define HOST_HOST_EXTENTS_H

#include <stdio.h>
#include <sys/types.h>

/* Append to @out the extents of the files processes @pids[0..nr) have
 * open, read now; @end: the end reading (else the start).  Files that
 * cannot be read or mapped are skipped; -1 only on a write error. */
int host_extents_write(FILE *out, const pid_t *pids, int nr, int end);

#endif
