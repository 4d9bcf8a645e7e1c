/*
 * boot.S - entry of the vmtrace test unikernel: a multiboot (v1) header,
 * 32-bit protected-mode start (as QEMU's -kernel loader leaves it), an
 * identity map of the first 1 GiB with 2 MiB pages, the switch to long
 * mode, and a call of unikernel_main() on a 64 KiB stack.
 */
#define MB_MAGIC	0x1badb002
#define MB_FLAGS	0
#define CR0_PE		(1 << 0)
#define CR0_PG		(1 << 31)
#define CR4_PAE		(1 << 5)
#define MSR_EFER	0xc0000080
#define EFER_LME	(1 << 8)
#define PTE_P_W		0x3		/* present, writable */
#define PDE_HUGE	0x83		/* present, writable, 2 MiB page */
#define HUGE_PAGE	0x200000
#define STACK_BYTES	65536
#define CODE64_SEL	0x08
#define DATA_SEL	0x10

	.section .multiboot, "a"
	.p2align 2
	.long	MB_MAGIC
	.long	MB_FLAGS
	.long	-(MB_MAGIC + MB_FLAGS)

	.section .text.boot, "ax"
	.code32
	.globl	_start
_start:
	cli
	movl	$stack_top, %esp
	/* PML4[0] -> PDPT, PDPT[0] -> PD, PD[i] -> i * 2 MiB */
	movl	$pdpt, %eax
	orl	$PTE_P_W, %eax
	movl	%eax, pml4
	movl	$pd, %eax
	orl	$PTE_P_W, %eax
	movl	%eax, pdpt
	xorl	%ecx, %ecx
1:	movl	%ecx, %eax
	imull	$HUGE_PAGE, %eax
	orl	$PDE_HUGE, %eax
	movl	%eax, pd(, %ecx, 8)
	incl	%ecx
	cmpl	$512, %ecx
	jne	1b

	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	$pml4, %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	movl	%cr0, %eax
	orl	$(CR0_PG | CR0_PE), %eax
	movl	%eax, %cr0
	lgdt	gdt_desc
	ljmp	$CODE64_SEL, $long_mode

	.code64
long_mode:
	movw	$DATA_SEL, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss
	movw	%ax, %fs
	movw	%ax, %gs
	movq	$stack_top, %rsp
	xorq	%rbp, %rbp
	call	unikernel_main
2:	hlt
	jmp	2b

	.section .rodata
	.p2align 3
gdt:
	.quad	0			/* null */
	.quad	0x00af9a000000ffff	/* 0x08: 64-bit code, DPL 0 */
	.quad	0x00cf92000000ffff	/* 0x10: data */
gdt_end:
gdt_desc:
	.word	gdt_end - gdt - 1
	.long	gdt

	.section .bss
	.p2align 12
pml4:	.skip	4096
pdpt:	.skip	4096
pd:	.skip	4096
	.p2align 4
stack:	.skip	STACK_BYTES
stack_top:

	.section .note.GNU-stack, "", @progbits
