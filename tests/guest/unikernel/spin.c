/*
 * spin.c - the spinning phase of the sampling image of the test unikernel
 * (spin.h): main.c calls unik_spin() before the traced workload when built
 * with -DUNIK_SPIN_MS=N, so the default image's call tree, markers and
 * frames are untouched.  Not built -pg (the samples come from QEMU's
 * gdbstub, not from mcount).  Boot CPU, interrupts off, no allocation; the
 * only I/O is the PIT (ports 0x42/0x43/0x61) for the TSC calibration.
 */
#include "spin.h"

#define SPIN_LIGHT_ITERS	100000u
#define SPIN_HEAVY_ITERS	(4 * SPIN_LIGHT_ITERS)

/* PIT channel 2, gated through port 0x61, counts down CAL_MS ms once */
#define PIT_HZ			1193182u
#define PIT_CH2_PORT		0x42
#define PIT_CMD_PORT		0x43
#define PIT_CMD_CH2_ONESHOT	0xb0	/* channel 2, lo/hi byte, mode 0, binary */
#define PIT_GATE_PORT		0x61
#define PIT_GATE_ON		0x01
#define PIT_SPEAKER_ON		0x02
#define PIT_OUT2		0x20
#define CAL_MS			10u
#define MS_PER_SEC		1000u
/* give up waiting for the PIT after this many TSC ticks (no PIT) */
#define CAL_MAX_TSC		(1ull << 34)

volatile uint32_t unik_spin_sink;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ __volatile__("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* TSC ticks per millisecond, measured over one CAL_MS one-shot of PIT
 * channel 2. */
static __attribute__((noinline)) uint64_t tsc_per_ms(void)
{
	uint32_t latch = PIT_HZ / (MS_PER_SEC / CAL_MS);
	uint64_t t0, t1;

	outb(PIT_GATE_PORT, (uint8_t)((inb(PIT_GATE_PORT) & ~PIT_SPEAKER_ON) | PIT_GATE_ON));
	outb(PIT_CMD_PORT, PIT_CMD_CH2_ONESHOT);
	outb(PIT_CH2_PORT, (uint8_t)latch);
	outb(PIT_CH2_PORT, (uint8_t)(latch >> 8));
	t0 = rdtsc();
	do
		t1 = rdtsc();
	while (!(inb(PIT_GATE_PORT) & PIT_OUT2) && t1 - t0 < CAL_MAX_TSC);
	return (t1 - t0) / CAL_MS + 1;
}

__attribute__((noinline)) void unik_spin_light(void)
{
	for (uint32_t i = 0; i < SPIN_LIGHT_ITERS; i++)
		unik_spin_sink += i;
}

__attribute__((noinline)) void unik_spin_heavy(void)
{
	for (uint32_t i = 0; i < SPIN_HEAVY_ITERS; i++)
		unik_spin_sink += i;
}

__attribute__((noinline)) void unik_spin_round(void)
{
	unik_spin_heavy();
	unik_spin_light();
}

__attribute__((noinline)) uint64_t unik_spin(uint32_t ms)
{
	uint64_t end = rdtsc() + tsc_per_ms() * ms, rounds = 0;

	while (rdtsc() < end) {
		unik_spin_round();
		rounds++;
	}
	return rounds;
}
