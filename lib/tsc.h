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

#endif
