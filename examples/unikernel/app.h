/*
 * app.h - the traced half of the unikernel example's guest (app.c, built
 * -pg against libvmtrace-mcount-free.a): a small table workload with a sync
 * marker before, between and after its rounds.  Its `unik_app` runs it
 * under the unikernel guests' shared untraced half
 * (tests/guest/unikernel/main.c, unikernel.h).
 */
#ifndef UNIK_APP_H
#define UNIK_APP_H

#include "unikernel.h"

/* Rounds of work; a marker before the first and after every round. */
#define APP_ROUNDS	8
#define APP_NR_MARKS	(APP_ROUNDS + 1)

/* Run the workload, filling @marks[0..APP_NR_MARKS) through @mark.
 * Returns a checksum of the work, so nothing is optimised away. */
uint32_t app_run(struct vt_marker *marks, unik_mark_fn mark);

#endif
