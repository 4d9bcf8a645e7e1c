/*
 * pio-loop.c - a freestanding multiboot (ELF32) guest for the KVM recorder
 * benchmark (tests/bench/b-kvm.sh): a tight loop of LOOPS 32-bit PIO writes
 * to port 0x5f0 (each a VM exit KVM hands to QEMU: kvm_exit, kvm_pio,
 * kvm_userspace_exit, kvm_entry on the host), then isa-debug-exit (QEMU
 * exits 1).  No libc.
 */
#include <stdint.h>

#define MB_MAGIC	0x1BADB002u
#define MB_FLAGS	0u
#define LOOPS		20000
#define PORT		0x5f0
#define EXIT_PORT	0xf4
#define STACK_SIZE	4096
#define VT_STR2(x)	#x
#define VT_STR(x)	VT_STR2(x)

__attribute__((section(".text.multiboot"), used, aligned(4)))
static const uint32_t mb_header[3] = { MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS) };

static uint8_t stack[STACK_SIZE] __attribute__((aligned(16), used));

void guest_main(void);

__asm__(".globl _start\n"
	"_start:\n"
	"	cli\n"
	"	lea stack+" VT_STR(STACK_SIZE) ", %esp\n"
	"	call guest_main\n"
	"1:	hlt\n"
	"	jmp 1b\n");

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

void guest_main(void)
{
	for (uint32_t i = 0; i < LOOPS; i++)
		outl(PORT, i);
	__asm__ __volatile__("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)EXIT_PORT));
}
