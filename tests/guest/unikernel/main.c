/*
 * main.c - the test unikernel's untraced half: starts the freestanding
 * mcount runtime on a static buffer, runs the traced work (work.c), then
 * sends the trace, the PIO markers and a hello frame through isa-debugcon
 * (lib/debugcon.h) and powers off through isa-debug-exit.  Protocol:
 * docs/format/unikernel.md.  Runs on the boot CPU, interrupts off.
 */
#include <stddef.h>
#include <stdint.h>
#include "debugcon.h"
#include "marker.h"
#include "vt_mcount_free.h"
#include "work.h"

/* isa-debug-exit (-device isa-debug-exit,iobase=0xf4,iosize=4): QEMU
 * exits with status (value << 1) | 1, so UNIK_EXIT_OK gives 33. */
#define UNIK_EXIT_PORT	0xf4
#define UNIK_EXIT_OK	0x10
#define UNIK_EXIT_FAIL	0x11
#define UNIK_BUF_BYTES	(1u << 20)
#define UNIK_MAX_DEPTH	64

static uint64_t trace_buf[UNIK_BUF_BYTES / sizeof(uint64_t)];
static struct vt_marker marks[UNIK_NR_MARKS];
static uint8_t mark_bytes[UNIK_NR_MARKS][VT_MARKER_REC_SIZE];

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

void unikernel_main(void);

void unikernel_main(void)
{
	static const char hello[] =
		"format=vmtrace-unikernel\nversion=1\nclock=tsc\ntid=1\n"
		"marker_port=0x5f0\n";
	const void *data;
	size_t len;

	say("vmtrace unikernel: start\n");
	if (vt_mcount_free_init(trace_buf, sizeof(trace_buf), UNIK_MAX_DEPTH, 0) < 0) {
		say("vmtrace unikernel: init failed\n");
		outl(UNIK_EXIT_PORT, UNIK_EXIT_FAIL);
	}
	vt_mcount_free_start();
	work_run(marks);
	vt_mcount_free_stop();

	len = vt_mcount_free_data(&data);
	for (int i = 0; i < UNIK_NR_MARKS; i++)
		vt_marker_encode(&marks[i], mark_bytes[i]);
	vt_dc_frame(VT_DC_PORT, VT_DC_HELLO, hello, sizeof(hello) - 1);
	vt_dc_frame(VT_DC_PORT, VT_DC_RECORDS, data, len);
	vt_dc_frame(VT_DC_PORT, VT_DC_MARKERS, mark_bytes, sizeof(mark_bytes));
	vt_dc_frame(VT_DC_PORT, VT_DC_END, NULL, 0);
	say("vmtrace unikernel: done\n");
	outl(UNIK_EXIT_PORT, UNIK_EXIT_OK);
}
