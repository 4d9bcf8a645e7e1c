/*
 * marker-guest.c - a freestanding multiboot (ELF32) test guest for the
 * aligner's real-data tests: emits sync markers with lib/marker.h's inline
 * emitter (one debugcon byte each on VT_MARKER_DEBUGCON_PORT, or a PIO
 * marker on VT_MARKER_PORT when built with -DMARKER_PIO), then hands its
 * markers.dat out byte by byte through a second debugcon port and exits
 * QEMU through isa-debug-exit (QEMU's exit status 1).  No libc.
 */
#include <stdint.h>
#include "marker.h"

#define MB_MAGIC	0x1BADB002u
#define MB_FLAGS	0u
#define N_MARKERS	40
#define GAP_TSC		4000000ull	/* ~2 ms at 2 GHz between markers */
#define DUMP_PORT	0x4e9		/* debugcon carrying markers.dat (0x402 is SeaBIOS log) */
#define EXIT_PORT	0xf4		/* isa-debug-exit */
#define STACK_SIZE	16384
#define VT_STR2(x)	#x
#define VT_STR(x)	VT_STR2(x)

__attribute__((section(".text.multiboot"), used, aligned(4)))
static const uint32_t mb_header[3] = { MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS) };

static uint8_t stack[STACK_SIZE] __attribute__((aligned(16), used));
static struct vt_marker recs[N_MARKERS];

void guest_main(void);

__asm__(".globl _start\n"
	"_start:\n"
	"	cli\n"
	"	lea stack+" VT_STR(STACK_SIZE) ", %esp\n"
	"	call guest_main\n"
	"1:	hlt\n"
	"	jmp 1b\n");

void guest_main(void)
{
	uint8_t buf[VT_MARKER_REC_SIZE];

	for (int i = 0; i < N_MARKERS; i++) {
		uint64_t t;

#ifdef MARKER_PIO
		vt_marker_emit_pio(&recs[i], VT_MARKER_PORT, (uint64_t)i);
#else
		vt_marker_emit_chardev(&recs[i], VT_MARKER_DEBUGCON_PORT, (uint64_t)i);
#endif
		t = vt_rdtsc();
		while (vt_rdtsc() - t < GAP_TSC)
			;
	}
	for (int i = 0; i < N_MARKERS; i++) {
		vt_marker_encode(&recs[i], buf);
		for (int k = 0; k < VT_MARKER_REC_SIZE; k++)
			vt_marker_outb(DUMP_PORT, buf[k]);
	}
	vt_marker_outb(EXIT_PORT, 0);
}
