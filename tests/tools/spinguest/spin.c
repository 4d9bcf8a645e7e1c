/*
 * spin.c - the sampling test guest (tests/tools/t-vmsample.sh): spins
 * forever in a known call tree, spending about three times as long in
 * spin_heavy() as in spin_light(), for tools/vmtrace-sample to sample
 * through QEMU's gdbstub.  Boot CPU only, interrupts off, no I/O.
 */
#define SPIN_LIGHT_ITERS	2000000
#define SPIN_HEAVY_ITERS	(3 * SPIN_LIGHT_ITERS)

volatile unsigned int spin_sink;

__attribute__((noinline)) void spin_light(void)
{
	for (unsigned int i = 0; i < SPIN_LIGHT_ITERS; i++)
		spin_sink += i;
}

__attribute__((noinline)) void spin_heavy(void)
{
	for (unsigned int i = 0; i < SPIN_HEAVY_ITERS; i++)
		spin_sink += i;
}

__attribute__((noinline)) void spin_round(void)
{
	spin_heavy();
	spin_light();
}

void spin_main(void)
{
	for (;;)
		spin_round();
}
