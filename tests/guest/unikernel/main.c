/*
 * main.c - the untraced half of every unikernel guest (multiboot, booted
 * by QEMU's -kernel; boot code: boot.S): starts the freestanding mcount
 * runtime on a static buffer, runs the workload linked with it (its
 * `unik_app`, unikernel.h: work.c for the tests, examples/unikernel/app.c
 * for the example), then hands the trace, the markers and a hello frame
 * to the host as debugcon frames (lib/debugcon.h, docs/format/unikernel.md)
 * on port 0xe9 and powers off through isa-debug-exit.  Runs on the boot
 * CPU, interrupts off; no allocation (static buffers).
 *
 * Build-time option: with UNIK_MARKER_CHARDEV (the TCG image) each marker
 * is one byte to an isa-debugcon the host maps at VT_MARKER_PORT, which
 * QEMU's vCPU thread write()s to a chardev file (the host recorder sees
 * the syscall); otherwise (the KVM image) an in-band hypercall marker
 * (lib/marker.h, 64-bit ABI: kvm:kvm_hypercall on the host carries its TSC
 * readings) when CPUID says KVM, else a 32-bit PIO write to VT_MARKER_PORT
 * (kvm:kvm_pio).  With UNIK_SPIN_MS=N
 * (the sampling image, build/guest/unikernel-spin.elf) it first spins for
 * about N ms in spin.c's call tree, for tools/vmtrace-sample; the traced
 * run, markers and frames that follow are the default image's.
 */
#include <stddef.h>
#include <stdint.h>
#include "debugcon.h"
#include "marker.h"
#include "vt_mcount_free.h"
#include "unikernel.h"
#ifdef UNIK_SPIN_MS
#include "spin.h"
#endif

/* isa-debug-exit (-device isa-debug-exit,iobase=0xf4,iosize=4): QEMU
 * exits with status (value << 1) | 1, so UNIK_EXIT_OK gives 33. */
#define UNIK_EXIT_PORT	0xf4
#define UNIK_EXIT_OK	0x10
#define UNIK_EXIT_FAIL	0x11
#define UNIK_BUF_BYTES	(1u << 20)
#define UNIK_MAX_DEPTH	64
#define UNIK_HELLO_MAX	512
/* the hello lines every guest sends; the workload's own follow */
#define UNIK_HELLO_BASE	"format=vmtrace-unikernel\nversion=1\nclock=tsc\ntid=1\n"

static uint64_t trace_buf[UNIK_BUF_BYTES / sizeof(uint64_t)];
static struct vt_marker marks[UNIK_MAX_MARKS];
static uint8_t mark_bytes[UNIK_MAX_MARKS][VT_MARKER_REC_SIZE];
static char hello[UNIK_HELLO_MAX];

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

/* Append @s to hello[] at *@len (cut at UNIK_HELLO_MAX). */
static void hello_add(size_t *len, const char *s)
{
	while (*s && *len < sizeof(hello))
		hello[(*len)++] = *s++;
}

static void fail(const char *why)
{
	say(why);
	outl(UNIK_EXIT_PORT, UNIK_EXIT_FAIL);
}

#ifndef UNIK_MARKER_CHARDEV
static struct vt_marker_hc hc;
static int hc_ok;	/* under KVM: hypercall markers */
#endif

static void mark(struct vt_marker *m, uint64_t seq)
{
#ifdef UNIK_MARKER_CHARDEV
	vt_marker_emit_chardev(m, VT_MARKER_PORT, seq);
#else
	if (hc_ok) {
		hc.seq = seq;
		vt_marker_emit_hypercall(m, &hc, 0);
	} else {
		vt_marker_emit_pio(m, VT_MARKER_PORT, seq);
	}
#endif
}

void unikernel_main(void);

void unikernel_main(void)
{
	int nr = unik_app.nr_marks;
	size_t hello_len = 0;
	const void *data;
	size_t len;

	/* the host's boot handshake waits for this line */
	say("vmtrace unikernel: start\n");
#ifdef UNIK_SPIN_MS
	unik_spin(UNIK_SPIN_MS);
#endif
	if (nr < 1 || nr > UNIK_MAX_MARKS)
		fail("vmtrace unikernel: bad marker count\n");
	if (vt_mcount_free_init(trace_buf, sizeof(trace_buf), UNIK_MAX_DEPTH, 0) < 0)
		fail("vmtrace unikernel: init failed\n");
#ifndef UNIK_MARKER_CHARDEV
	hc_ok = vt_marker_hc_init(&hc);
#endif
	vt_mcount_free_start();
	unik_app.run(marks, mark);
	vt_mcount_free_stop();
#ifndef UNIK_MARKER_CHARDEV
	if (hc_ok)	/* the last marker's "after" reading, for the host trace */
		vt_marker_hc_close(&hc, 0);
#endif

	len = vt_mcount_free_data(&data);
	for (int i = 0; i < nr; i++)
		vt_marker_encode(&marks[i], mark_bytes[i]);
	hello_add(&hello_len, UNIK_HELLO_BASE);
	hello_add(&hello_len, unik_app.hello);
	vt_dc_frame(VT_DC_PORT, VT_DC_HELLO, hello, hello_len);
	vt_dc_frame(VT_DC_PORT, VT_DC_RECORDS, data, len);
	vt_dc_frame(VT_DC_PORT, VT_DC_MARKERS, mark_bytes, (size_t)nr * VT_MARKER_REC_SIZE);
	vt_dc_frame(VT_DC_PORT, VT_DC_END, NULL, 0);
	say("vmtrace unikernel: done\n");
	outl(UNIK_EXIT_PORT, UNIK_EXIT_OK);
}
