/*
 * work.h - the traced workload of the test unikernel (work.c, built -pg;
 * its `unik_app` runs it: unikernel.h).
 */
#ifndef UNIK_WORK_H
#define UNIK_WORK_H

#include "unikernel.h"

/* Number of PIO markers (and fib() calls) one work_run() makes. */
#define UNIK_NR_MARKS	4
/* fib() argument of each round: a fixed, small call tree */
#define UNIK_FIB_N	3

/* For each i < UNIK_NR_MARKS: work_mark(&marks[i], i, mark), then
 * fib(UNIK_FIB_N).  Returns the sum of the fib() results. */
uint32_t work_run(struct vt_marker *marks, unik_mark_fn mark);
int fib(int n);
void work_mark(struct vt_marker *m, int seq, unik_mark_fn mark);

#endif
