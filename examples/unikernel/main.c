/*
 * main.c - the untraced half of the unikernel example's guest (multiboot,
 * booted by QEMU's -kernel; boot code: tests/guest/unikernel/boot.S).
 * Starts the freestanding mcount runtime on a static buffer, runs app.c,
 * then hands the trace and the markers to the host as debugcon frames
 * (lib/debugcon.h, docs/format/unikernel.md) on port 0xe9 and powers off
 * through isa-debug-exit.  Runs on the boot CPU, interrupts off.
 *
 * Markers: built with UNIK_MARKER_CHARDEV (the TCG image) each marker is
 * one byte to an isa-debugcon the host maps at VT_MARKER_PORT, which QEMU's
 * vCPU thread write()s to a chardev file (the host recorder sees the
 * syscall); otherwise (the KVM image) a 32-bit PIO write to VT_MARKER_PORT,
 * seen on the host as kvm:kvm_pio.
 */
#include <stddef.h>
#include <stdint.h>
#include "debugcon.h"
#include "marker.h"
#include "vt_mcount_free.h"
#include "app.h"

/* isa-debug-exit at 0xf4: QEMU exits with status (value << 1) | 1 */
#define UNIK_EXIT_PORT	0xf4
#define UNIK_EXIT_OK	0x10		/* exit status 33 */
#define UNIK_EXIT_FAIL	0x11		/* exit status 35 */
#define UNIK_BUF_BYTES	(1u << 20)
#define UNIK_MAX_DEPTH	64

static uint64_t trace_buf[UNIK_BUF_BYTES / sizeof(uint64_t)];
static struct vt_marker marks[APP_NR_MARKS];
static uint8_t mark_bytes[APP_NR_MARKS][VT_MARKER_REC_SIZE];

static void outl(uint16_t port, uint32_t v)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port));
}

static size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static void say(const char *s)
{
	vt_dc_out(VT_DC_PORT, s, str_len(s));
}

static void mark(struct vt_marker *m, uint64_t seq)
{
#ifdef UNIK_MARKER_CHARDEV
	vt_marker_emit_chardev(m, VT_MARKER_PORT, seq);
#else
	vt_marker_emit_pio(m, VT_MARKER_PORT, seq);
#endif
}

void unikernel_main(void);

void unikernel_main(void)
{
	static const char hello[] =
		"format=vmtrace-unikernel\nversion=1\nclock=tsc\ntid=1\n"
		"program=vmtrace-example-unikernel\n";
	const void *data;
	size_t len;

	/* the host's boot handshake waits for this line */
	say("vmtrace unikernel: start\n");
	if (vt_mcount_free_init(trace_buf, sizeof(trace_buf), UNIK_MAX_DEPTH, 0) < 0) {
		say("vmtrace unikernel: init failed\n");
		outl(UNIK_EXIT_PORT, UNIK_EXIT_FAIL);
	}
	vt_mcount_free_start();
	app_run(marks, mark);
	vt_mcount_free_stop();

	len = vt_mcount_free_data(&data);
	for (int i = 0; i < APP_NR_MARKS; i++)
		vt_marker_encode(&marks[i], mark_bytes[i]);
	vt_dc_frame(VT_DC_PORT, VT_DC_HELLO, hello, sizeof(hello) - 1);
	vt_dc_frame(VT_DC_PORT, VT_DC_RECORDS, data, len);
	vt_dc_frame(VT_DC_PORT, VT_DC_MARKERS, mark_bytes, sizeof(mark_bytes));
	vt_dc_frame(VT_DC_PORT, VT_DC_END, NULL, 0);
	say("vmtrace unikernel: done\n");
	outl(UNIK_EXIT_PORT, UNIK_EXIT_OK);
}
