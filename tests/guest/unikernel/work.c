/*
 * work.c - the traced code of the test unikernel (built -pg: every
 * function here enters mcount of libvmtrace-mcount-free.a): PIO markers
 * on VT_MARKER_PORT and a small recursion, a call tree fixed by
 * UNIK_NR_MARKS and UNIK_FIB_N (tests/guest/unikernel.expect).
 */
#include "work.h"

void work_mark(struct vt_marker *m, int seq)
{
	vt_marker_emit_pio(m, VT_MARKER_PORT, (uint64_t)seq);
}

int fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

void work_run(struct vt_marker *marks)
{
	for (int i = 0; i < UNIK_NR_MARKS; i++) {
		work_mark(&marks[i], i);
		fib(UNIK_FIB_N);
	}
}
