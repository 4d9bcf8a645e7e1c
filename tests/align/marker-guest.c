/*
 * marker-guest.c - a freestanding multiboot (ELF32) test guest for the
 * aligner's real-data tests: emits sync markers with lib/marker.h's inline
 * emitter (one debugcon byte each on VT_MARKER_DEBUGCON_PORT, or a PIO
 * marker on VT_MARKER_PORT when built with -DMARKER_PIO), then hands its
 * markers.dat out byte by byte through a second debugcon port and exits
 * QEMU through isa-debug-exit (QEMU's exit status 1).  No libc.
 * With -DMARKER_HYPERCALL the markers are in-band hypercalls (32-bit ABI
 * of lib/marker.h: the host's kvm_hypercall events carry the readings),
 * closed by one more call.  Built with -DMARKER_TSC_WRITE as well, it writes IA32_TSC (MSR 0x10)
 * halfway through, moving its TSC TSC_JUMP ticks ahead (with
 * -DMARKER_TSC_WRITE=0x3b IA32_TSC_ADJUST, by the same amount): KVM then
 * writes a new TSC offset, and the markers on both sides prove the two
 * segments.  With -DMARKER_PROGRESS each marker is followed by one byte on
 * PROGRESS_PORT (a third debugcon): a test watching that file knows how far
 * the guest is (the save/restore test migrates it halfway).
 */
#include <stdint.h>
#include "marker.h"

#define MB_MAGIC	0x1BADB002u
#define MB_FLAGS	0u
#ifndef N_MARKERS
#define N_MARKERS	40
#endif
#ifndef GAP_TSC
#define GAP_TSC		4000000ull	/* ~2 ms at 2 GHz between markers */
#endif
#define DUMP_PORT	0x4e9		/* debugcon carrying markers.dat (0x402 is SeaBIOS log) */
#define EXIT_PORT	0xf4		/* isa-debug-exit */
#define PROGRESS_PORT	0x4ea		/* -DMARKER_PROGRESS: a byte per marker */
#define STACK_SIZE	16384
#define MSR_IA32_TSC	0x10
#define MSR_IA32_TSC_ADJUST	0x3b
#define TSC_JUMP	1000000000000ull	/* ~7 min at 2.4 GHz */
#define VT_STR2(x)	#x
#define VT_STR(x)	VT_STR2(x)

__attribute__((section(".text.multiboot"), used, aligned(4)))
static const uint32_t mb_header[3] = { MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS) };

static uint8_t stack[STACK_SIZE] __attribute__((aligned(16), used));
static struct vt_marker recs[N_MARKERS];

void guest_main(void);

#ifdef MARKER_TSC_WRITE
static void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}
#endif

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
#ifdef MARKER_HYPERCALL
	struct vt_marker_hc hc;

	if (!vt_marker_hc_init(&hc))
		vt_marker_outb(EXIT_PORT, 1);	/* not KVM: QEMU exits 3 */
#endif

	for (int i = 0; i < N_MARKERS; i++) {
		uint64_t t;

#ifdef MARKER_TSC_WRITE
		if (i == N_MARKERS / 2) {
			if (MARKER_TSC_WRITE == MSR_IA32_TSC_ADJUST)
				wrmsr(MSR_IA32_TSC_ADJUST, TSC_JUMP);
			else
				wrmsr(MSR_IA32_TSC, vt_rdtsc() + TSC_JUMP);
		}
#endif
#if defined(MARKER_HYPERCALL)
		vt_marker_emit_hypercall(&recs[i], &hc, 0);
#elif defined(MARKER_PIO)
		vt_marker_emit_pio(&recs[i], VT_MARKER_PORT, (uint64_t)i);
#else
		vt_marker_emit_chardev(&recs[i], VT_MARKER_DEBUGCON_PORT, (uint64_t)i);
#endif
#ifdef MARKER_PROGRESS
		vt_marker_outb(PROGRESS_PORT, '.');
#endif
		t = vt_rdtsc();
		while (vt_rdtsc() - t < GAP_TSC)
			;
	}
#ifdef MARKER_HYPERCALL
	vt_marker_hc_close(&hc, 0);
#endif
	for (int i = 0; i < N_MARKERS; i++) {
		vt_marker_encode(&recs[i], buf);
		for (int k = 0; k < VT_MARKER_REC_SIZE; k++)
			vt_marker_outb(DUMP_PORT, buf[k]);
	}
	vt_marker_outb(EXIT_PORT, 0);
}
