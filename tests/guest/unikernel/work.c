/*
 * work.c - the traced code of the test unikernel (built -pg: every
 * function here enters mcount of libvmtrace-mcount-free.a): markers on
 * VT_MARKER_PORT (emitted by main.c's untraced mark function) and a small
 * recursion, a call tree fixed by UNIK_NR_MARKS and UNIK_FIB_N
 * (tests/guest/expect/unikernel.txt).  Boot CPU, interrupts off.
 */
#include "work.h"

/* The hello line the test's host side expects (docs/format/unikernel.md). */
#define WORK_HELLO	"marker_port=0x5f0\n"

const struct unik_app unik_app = {
	.hello = WORK_HELLO,
	.nr_marks = UNIK_NR_MARKS,
	.run = work_run,
};

void work_mark(struct vt_marker *m, int seq, unik_mark_fn mark)
{
	mark(m, (uint64_t)seq);
}

int fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

uint32_t work_run(struct vt_marker *marks, unik_mark_fn mark)
{
	uint32_t sum = 0;

	for (int i = 0; i < UNIK_NR_MARKS; i++) {
		work_mark(&marks[i], i, mark);
		sum += (uint32_t)fib(UNIK_FIB_N);
	}
	return sum;
}
