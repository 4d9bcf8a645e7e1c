/*
 * unikernel.h - the contract between the unikernel guests' one untraced
 * half (tests/guest/unikernel/main.c: boot hand-off, runtime start,
 * debugcon frames, power-off) and their traced workloads (built -pg):
 * tests/guest/unikernel/work.c for the tests, examples/unikernel/app.c
 * for the example.  A workload defines `unik_app`.
 */
#ifndef UNIK_UNIKERNEL_H
#define UNIK_UNIKERNEL_H

#include <stdint.h>
#include "marker.h"

/* The most markers a workload may emit in one run. */
#define UNIK_MAX_MARKS	32

/* Emits one marker with sequence number @seq into @m: a PIO write (the
 * KVM image), or a byte to an isa-debugcon (the TCG image, built with
 * UNIK_MARKER_CHARDEV).  main.c provides it; it is not traced. */
typedef void (*unik_mark_fn)(struct vt_marker *m, uint64_t seq);

/* What a workload tells main.c. */
struct unik_app {
	const char *hello;	/* its own "key=value\n" lines of the hello frame */
	int nr_marks;		/* markers one run fills, 1..UNIK_MAX_MARKS */
	/* the traced work: fills @marks[0..nr_marks) through @mark; returns
	 * a checksum of the work (so nothing is optimised away) */
	uint32_t (*run)(struct vt_marker *marks, unik_mark_fn mark);
};

/* Defined by the workload. */
extern const struct unik_app unik_app;

#endif
