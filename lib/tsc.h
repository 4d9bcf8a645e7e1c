/*
 * tsc.h - the time-stamp counter: reading it (hot path, freestanding-safe),
 * turning ticks into nanoseconds without a division (vt_tsc_ns: the one
 * arithmetic every converter uses), and deciding its frequency (tools only:
 * the one place it is decided).
 */
#ifndef VT_TSC_H
#define VT_TSC_H

#include <stdint.h>
#include "compiler.h"

#define VT_NS_PER_SEC		((uint64_t)1000000000)	/* the one definition */

/* Read the TSC.  Not serialising: cheap, for per-event timestamps. */
static inline VT_NOTRACE uint64_t vt_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* Store the TSC at @dst (8 bytes, little-endian) as rdtsc gives it: its
 * two 32-bit halves, with no shift and or to join them first (per-event
 * writers of the guest tracers). */
static inline VT_NOTRACE void vt_rdtsc_store(void *dst)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	__builtin_memcpy(dst, &lo, 4);
	__builtin_memcpy((char *)dst + 4, &hi, 4);
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
 * Ticks -> ns, exact and division-free: ns = floor(tsc * 1e9 / hz) for every
 * 64-bit tsc and hz >= 1 (saturated at UINT64_MAX when hz < 1e9 makes it
 * overflow).  With a scale 2^s, mult = ceil(2^s * 1e9 / hz); tsc * mult / 2^s
 * then exceeds the true quotient by less than tsc / 2^s < 1 / hz when
 * 2^s > tsc * hz, which never crosses an integer: the floor is exact
 * (Granlund-Montgomery).  Every TSC (hz > 1e9) takes s = 128: mult < 2^128
 * and the result is the top word of tsc * mult, two multiplies and an add,
 * no shift, no overflow (ns < tsc).  Slower clocks (hz <= 1e9) take
 * s = 64 + bits(hz): mult < 2^94, a shift and a saturation check.
 * tests/unit/t-tscns.c checks both against the 128-bit division over edge
 * and random values.  (64-bit builds only: the 32-bit freestanding guests
 * that include this file for vt_rdtsc do not convert.)
 */
#ifdef __SIZEOF_INT128__
struct vt_tsc_ns {
	uint64_t mult_hi, mult_lo;	/* mult = mult_hi * 2^64 + mult_lo */
	uint32_t shift;			/* s - 64: 64 for every hz > 1e9 */
};

/* Precompute @c for @hz ticks per second; -1 (no message) when @hz is 0.
 * Inline (a few 128-bit divisions, once per clock), like the rest of this
 * block, so that every module converting ticks links nothing more. */
static inline int vt_tsc_ns_init(struct vt_tsc_ns *c, uint64_t hz)
{
	unsigned __int128 top, rem;
	uint64_t lo;
	uint32_t b = 0;

	if (!hz)
		return -1;
	if (hz > VT_NS_PER_SEC) {
		/* mult = ceil(1e9 * 2^128 / hz) by long division in 64-bit
		 * digits: 1e9 < hz, so the quotient has two of them */
		rem = VT_NS_PER_SEC;
		c->mult_hi = (uint64_t)((rem << 64) / hz);
		rem = (rem << 64) % hz;
		lo = (uint64_t)((rem << 64) / hz);
		rem = (rem << 64) % hz;
		c->mult_lo = lo + (rem != 0);	/* no carry: see below */
		c->shift = 64;
		return 0;
	}
	while (hz >> b)		/* hz <= 1e9: b <= 30 */
		b++;
	/* mult = ceil(1e9 * 2^b * 2^64 / hz), in two digits of 64 bits */
	top = (unsigned __int128)VT_NS_PER_SEC << b;	/* < 2^94 */
	c->mult_hi = (uint64_t)(top / hz);		/* < 2^30 */
	rem = top % hz;
	lo = (uint64_t)((rem << 64) / hz);
	rem = (rem << 64) % hz;
	/* the ceiling never carries into mult_hi: rem < hz < 2^64 makes
	 * lo = (rem * 2^64) / hz < 2^64 - 2^64 / hz < 2^64 - 1 */
	c->mult_lo = lo + (rem != 0);
	c->shift = b;
	return 0;
}

/* @tsc ticks -> ns through @c (hot path). */
static inline uint64_t vt_tsc_ns(const struct vt_tsc_ns *c, uint64_t tsc)
{
	uint64_t lo = (uint64_t)(((unsigned __int128)tsc * c->mult_lo) >> 64);
	unsigned __int128 q = (unsigned __int128)tsc * c->mult_hi + lo;

	if (likely(c->shift == 64))
		return (uint64_t)(q >> 64);
	q >>= c->shift;
	return likely(!(uint64_t)(q >> 64)) ? (uint64_t)q : UINT64_MAX;
}

/* The reference: the same value by a 128-bit division (0 when @hz is 0);
 * for tests and for one-off conversions off the per-event path. */
static inline uint64_t vt_tsc_to_ns(uint64_t tsc, uint64_t hz)
{
	unsigned __int128 q;

	if (!hz)
		return 0;
	q = (unsigned __int128)tsc * VT_NS_PER_SEC / hz;
	return (uint64_t)(q >> 64) ? UINT64_MAX : (uint64_t)q;
}
#endif

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

/* The frequency a run measured itself: (@tsc0, @ns0) and (@tsc1, @ns1)
 * read at its start and end (CLOCK_MONOTONIC ns beside the TSC), at
 * least VT_TSC_SPAN_MIN_NS apart; source "run-span".  For a tracer that
 * must not calibrate (vt_tsc_freq_opts' quick methods found nothing).
 * 0 with @f set, or -1 (message) for a span too short or implausible. */
#define VT_TSC_SPAN_MIN_NS	1000000
int vt_tsc_freq_span(struct vt_tsc_freq *f, uint64_t tsc0, uint64_t ns0, uint64_t tsc1,
		     uint64_t ns1);

/* Store tsc.hz and tsc.hz_source of @f in @m (lib/meta.h). */
struct vt_meta;
int vt_tsc_meta_set(struct vt_meta *m, const struct vt_tsc_freq *f);

/* CLOCK_MONOTONIC now, in ns (hosted: elapsed times, the ns test clock). */
uint64_t vt_mono_ns(void);

#endif
