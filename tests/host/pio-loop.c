/*
 * pio-loop.c - a freestanding multiboot (ELF32) guest for the KVM recorder
 * benchmarks (tests/bench/b-kvm.sh, b-kvm-stress.sh): a tight loop of 32-bit
 * PIO writes to port 0x5f0 (each a VM exit KVM hands to QEMU: kvm_exit,
 * kvm_pio, kvm_userspace_exit, kvm_entry on the host), then isa-debug-exit
 * (QEMU exits 1).  No libc.
 *
 * Its command line (QEMU's -append, the multiboot cmdline) may set
 *   loops=N   writes (default 20000)
 *   delay=N   iterations of an empty loop between two writes (default 0:
 *             exits as fast as the vCPU makes them)
 * and, when it has any of them, the guest also prints one line on COM1
 * (port 0x3f8; about 50 more exits, after the loop):
 *   pio-loop: loops N delay N cycles N
 * where cycles is the guest's TSC from the first write to the last, so the
 * exit rate is loops * TSC Hz / cycles.  With no command line it writes
 * nothing but the loop (b-kvm.sh's workload).
 */
#include <stdint.h>

#define MB_MAGIC	0x1BADB002u
#define MB_FLAGS	0u
#define MB_BOOT_MAGIC	0x2BADB002u	/* in %eax at entry */
#define MB_INFO_CMDLINE	(1u << 2)	/* mbi flags: cmdline valid */
#define LOOPS		20000
#define PORT		0x5f0
#define EXIT_PORT	0xf4
#define COM1		0x3f8
#define STACK_SIZE	4096
#define VT_STR2(x)	#x
#define VT_STR(x)	VT_STR2(x)

struct mb_info {
	uint32_t flags;
	uint32_t mem_lower;
	uint32_t mem_upper;
	uint32_t boot_device;
	uint32_t cmdline;
};

__attribute__((section(".text.multiboot"), used, aligned(4)))
static const uint32_t mb_header[3] = { MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS) };

static uint8_t stack[STACK_SIZE] __attribute__((aligned(16), used));

void guest_main(uint32_t magic, const struct mb_info *mbi);

__asm__(".globl _start\n"
	"_start:\n"
	"	cli\n"
	"	lea stack+" VT_STR(STACK_SIZE) ", %esp\n"
	"	push %ebx\n"
	"	push %eax\n"
	"	call guest_main\n"
	"1:	hlt\n"
	"	jmp 1b\n");

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void puts_com1(const char *s)
{
	while (*s)
		outb(COM1, (uint8_t)*s++);
}

/* decimal, by subtraction: 64-bit division would need libgcc */
static void putu_com1(uint64_t v)
{
	int lead = 1;

	for (int k = 19; k >= 0; k--) {
		uint64_t p = 1;
		uint8_t d = 0;

		for (int i = 0; i < k; i++)
			p *= 10;
		while (v >= p) {
			v -= p;
			d++;
		}
		if (d || !lead || !k) {
			outb(COM1, (uint8_t)('0' + d));
			lead = 0;
		}
	}
}

/* The value of KEY=N in the command line; 0 if absent, *found set if not. */
static uint32_t cmdline_u32(const char *cl, const char *key, int *found)
{
	for (const char *p = cl; *p; p++) {
		const char *k = key, *q = p;
		uint32_t v = 0;

		if (p != cl && p[-1] != ' ')
			continue;
		while (*k && *q == *k) {
			k++;
			q++;
		}
		if (*k || *q != '=')
			continue;
		for (q++; *q >= '0' && *q <= '9'; q++)
			v = v * 10 + (uint32_t)(*q - '0');
		*found = 1;
		return v;
	}
	return 0;
}

void guest_main(uint32_t magic, const struct mb_info *mbi)
{
	const char *cl = "";
	uint32_t loops = LOOPS, delay = 0, v;
	uint64_t t0, t1;
	int report = 0, found = 0;

	if (magic == MB_BOOT_MAGIC && (mbi->flags & MB_INFO_CMDLINE) && mbi->cmdline)
		cl = (const char *)(uintptr_t)mbi->cmdline;
	v = cmdline_u32(cl, "loops", &found);
	if (found) {
		loops = v;
		report = 1;
	}
	found = 0;
	v = cmdline_u32(cl, "delay", &found);
	if (found) {
		delay = v;
		report = 1;
	}
	t0 = rdtsc();
	for (uint32_t i = 0; i < loops; i++) {
		outl(PORT, i);
		for (uint32_t d = 0; d < delay; d++)
			__asm__ __volatile__("" : : : "memory");
	}
	t1 = rdtsc();
	if (report) {
		puts_com1("pio-loop: loops ");
		putu_com1(loops);
		puts_com1(" delay ");
		putu_com1(delay);
		puts_com1(" cycles ");
		putu_com1(t1 - t0);
		puts_com1("\n");
	}
	outb(EXIT_PORT, 0);
}
