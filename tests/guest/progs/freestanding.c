/*
 * freestanding.c - test program for libvmtrace-mcount-free.a: a static
 * -nostdlib -ffreestanding x86_64 Linux program (own _start, raw
 * syscalls, no libc) whose -pg functions are traced into a static buffer;
 * the trace goes to stdout as lib/debugcon.h frames, which
 * `vmtrace debugcon` decodes.  "small" as argv[1]: a buffer too small for
 * the calls, to show the stop + VT_UFT_LOST marker.
 */
#include <stddef.h>
#include <stdint.h>
#include "debugcon.h"
#include "vt_mcount_free.h"

#define SYS_WRITE	1
#define SYS_EXIT	60
#define STDOUT		1
#define MAX_DEPTH	32
#define BIG_BYTES	(64 * 1024)
/* the shadow stack and 10 records */
#define SMALL_BYTES	(MAX_DEPTH * VT_MCOUNT_FREE_FRAME_BYTES + 10 * 16)
#define ROUNDS		3

static uint64_t buf[BIG_BYTES / sizeof(uint64_t)];
static volatile int sink;

__attribute__((no_instrument_function)) static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			     : "rcx", "r11", "memory");
	return ret;
}

__attribute__((no_instrument_function)) static void put(const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		long n = sys3(SYS_WRITE, STDOUT, (long)c, (long)len);

		if (n <= 0)
			sys3(SYS_EXIT, 1, 0, 0);
		c += n;
		len -= (size_t)n;
	}
}

__attribute__((no_instrument_function)) static void frame(unsigned type, const void *p,
							   size_t len)
{
	uint8_t hdr[VT_DC_HDR_SIZE];

	vt_dc_header(hdr, type, p, len);
	put(hdr, sizeof(hdr));
	put(p, len);
}

void leaf(int i)
{
	sink += i;
}

void branch(int i)
{
	leaf(i);
	leaf(i + 1);
}

void trunk(void)
{
	for (int i = 0; i < ROUNDS; i++)
		branch(i);
}

__attribute__((no_instrument_function, used)) void fs_main(long argc, char **argv)
{
	size_t len = BIG_BYTES;
	const void *data;
	size_t n;

	if (argc > 1 && argv[1][0] == 's')
		len = SMALL_BYTES;
	if (vt_mcount_free_init(buf, len, MAX_DEPTH, 0) < 0)
		sys3(SYS_EXIT, 2, 0, 0);
	vt_mcount_free_start();
	trunk();
	vt_mcount_free_stop();
	n = vt_mcount_free_data(&data);
	frame(VT_DC_RECORDS, data, n);
	frame(VT_DC_END, NULL, 0);
	sys3(SYS_EXIT, 0, 0, 0);
}

/* the kernel starts us with argc at (%rsp), argv after it */
__asm__(".globl _start\n"
	"_start:\n"
	"	xorl %ebp, %ebp\n"
	"	movq (%rsp), %rdi\n"
	"	leaq 8(%rsp), %rsi\n"
	"	andq $-16, %rsp\n"
	"	call fs_main\n"
	"	hlt\n");
