/*
 * app.h - the traced half of the unikernel example's guest (app.c, built
 * -pg against libvmtrace-mcount-free.a): a small table workload with a sync
 * marker before, between and after its rounds.
 */
#ifndef UNIK_APP_H
#define UNIK_APP_H

#include "marker.h"

/* Rounds of work; a marker before the first and after every round. */
#define APP_ROUNDS	8
#define APP_NR_MARKS	(APP_ROUNDS + 1)

/* Emits one marker into @m (PIO or chardev: main.c decides). */
typedef void (*app_mark_fn)(struct vt_marker *m, uint64_t seq);

/* Run the workload, filling @marks[0..APP_NR_MARKS).  Returns a checksum
 * of the work, so nothing is optimised away. */
uint32_t app_run(struct vt_marker *marks, app_mark_fn mark);

#endif
