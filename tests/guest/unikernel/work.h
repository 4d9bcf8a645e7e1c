/*
 * work.h - the traced part of the test unikernel (work.c, built -pg).
 */
#ifndef UNIK_WORK_H
#define UNIK_WORK_H

#include "marker.h"

/* Number of PIO markers (and fib() calls) one work_run() makes. */
#define UNIK_NR_MARKS	4
/* fib() argument of each round: a fixed, small call tree */
#define UNIK_FIB_N	3

/* For each i < UNIK_NR_MARKS: work_mark(&marks[i], i), then fib(UNIK_FIB_N). */
void work_run(struct vt_marker *marks);
int fib(int n);
void work_mark(struct vt_marker *m, int seq);

#endif
