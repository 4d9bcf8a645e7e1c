/*
 * spin.h - the optional spinning phase of the test unikernel (spin.c),
 * built only into the sampling image (build/guest/unikernel-spin.elf, main.c
 * compiled with -DUNIK_SPIN_MS=N) for tools/vmtrace-sample to sample.
 */
#ifndef UNIK_SPIN_H
#define UNIK_SPIN_H

#include <stdint.h>

/* Spin for about @ms milliseconds (the TSC calibrated against the PIT) in
 * a fixed call tree: unik_spin -> unik_spin_round -> unik_spin_heavy (about
 * 4/5 of the time) / unik_spin_light.  Returns the number of rounds. */
uint64_t unik_spin(uint32_t ms);

#endif
