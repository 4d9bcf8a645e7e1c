/*
 * rdtsc.c - test helper: print the TSC (one `lfence; rdtsc`) as a decimal
 * number, for tests that bracket a recorded run between two TSC reads.
 * Runs once per call; no allocation.
 */
#include <inttypes.h>
#include <stdio.h>
#include "tsc.h"

int main(void)
{
	printf("%" PRIu64 "\n", vt_rdtsc_ordered());
	return 0;
}
