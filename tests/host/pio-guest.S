/*
 * pio-guest.S - a freestanding multiboot (ELF32) test guest for the
 * recorder's KVM test: writes a known sequence of 32-bit values to PIO
 * port PIO_PORT (each write is one kvm_pio exit on the host), then exits
 * QEMU through isa-debug-exit (iobase 0xf4; QEMU's exit status is 1).
 * Run: qemu-system-x86_64 -kernel pio-guest.elf -device isa-debug-exit ...
 */
#define MB_MAGIC	0x1BADB002
#define MB_FLAGS	0
#define PIO_PORT	0x7e0
#define PIO_FIRST	0xC0DE0001
#define PIO_COUNT	8
#define DEBUG_EXIT_PORT	0xf4

	.section .text
	.code32
	.align 4
mb_header:
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

	.globl _start
_start:
	cli
	mov $PIO_FIRST, %eax
	mov $PIO_COUNT, %ecx
	mov $PIO_PORT, %dx
1:	outl %eax, %dx
	inc %eax
	loop 1b
	mov $DEBUG_EXIT_PORT, %dx
	xor %eax, %eax
	outb %al, %dx
2:	hlt
	jmp 2b
