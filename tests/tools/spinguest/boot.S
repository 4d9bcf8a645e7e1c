/*
 * boot.S - multiboot entry of the sampling test guest (32-bit protected
 * mode as the multiboot loader leaves it): a stack, then spin_main().
 */
#define MB_MAGIC	0x1BADB002
#define MB_FLAGS	0
	.section .multiboot, "a"
	.align 4
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

	.text
	.globl _start
_start:
	movl	$stack_top, %esp
	xorl	%ebp, %ebp
	call	spin_main
1:	hlt
	jmp	1b

	.bss
	.align 16
	.skip 16384
stack_top:
	.section .note.GNU-stack, "", @progbits
