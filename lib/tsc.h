/*
 * tsc.h - the time-stamp counter: reading it (hot path, freestanding-safe)
 * and deciding its frequency (tools only: the one place it is decided).
 */
#ifndef VT_TSC_H
#define VT_TSC_H

#include <stdint.h>
#include "compiler.h"

/* Read the TSC.  Not serialising: cheap, for per-event timestamps. */
static inline VT_NOTRACE uint64_t vt_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* Read the TSC after all earlier instructions completed (lfence; rdtsc):
 * for sync markers, where the read must not move across the action. */
static inline VT_NOTRACE uint64_t vt_rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

/*
 * Deciding the TSC frequency (lib/tsc.c; tools only, hosted: reads
 * /proc, /dev/kmsg, perf_event, sleeps ~0.1 s to calibrate).  Every method
 * is run and reported; one figure is chosen and the others are
 * cross-checked against it (docs/format/meta.md: tsc.hz, tsc.hz_source).
 */
enum vt_tsc_status {
	VT_TSC_OK = 0,		/* the method gave a figure */
	VT_TSC_SKIPPED = 1,	/* not available on this machine (note says why) */
	VT_TSC_FAILED = 2,	/* available but failed (note says why) */
};

#define VT_TSC_MAX_METHODS	10
#define VT_TSC_MAX_WARNINGS	10
#define VT_TSC_NOTE_LEN		160
/* Largest disagreement between methods before a warning (0.1 %). */
#define VT_TSC_AGREE_PPM	1000

struct vt_tsc_method {
	const char *name;	/* "cpuid-15h", "kernel-refined", "calibrate"... */
	int status;		/* enum vt_tsc_status */
	uint64_t hz;		/* when VT_TSC_OK */
	char note[VT_TSC_NOTE_LEN];
};

struct vt_tsc_freq {
	uint64_t hz;		/* the chosen frequency, 0 if none was found */
	const char *source;	/* name of the chosen method (tsc.hz_source) */
	char why[VT_TSC_NOTE_LEN * 2];
	int constant_tsc;	/* 1/0 from cpuinfo flags or CPUID, -1 unknown */
	int nonstop_tsc;
	int known_freq;		/* kernel took the figure from CPUID/hypervisor */
	char clocksource[32];	/* the kernel's current clocksource */
	int nr_methods;
	struct vt_tsc_method m[VT_TSC_MAX_METHODS];
	int nr_warnings;
	char warnings[VT_TSC_MAX_WARNINGS][VT_TSC_NOTE_LEN * 2];
};

/* Options of vt_tsc_freq_opts(). */
enum {
	VT_TSC_NO_CALIBRATE = 1U << 0,	/* quick: skip the ~0.1 s measurement
					 * and the journalctl fallback (no
					 * child process: fit for use inside
					 * a traced program) */
	VT_TSC_KCORE = 1U << 1,		/* also run tools/tsc-khz-kcore (gdb on
					 * /proc/kcore: seconds, root) */
};

/* Run every method, choose, cross-check.  0 with out->hz set, -1 (message
 * in vt_err_msg()) when no method gave a figure; @out is filled anyway. */
int vt_tsc_freq(struct vt_tsc_freq *out);
int vt_tsc_freq_opts(struct vt_tsc_freq *out, unsigned flags);

/* Store tsc.hz and tsc.hz_source of @f in @m (lib/meta.h). */
struct vt_meta;
int vt_tsc_meta_set(struct vt_meta *m, const struct vt_tsc_freq *f);

#endif
