/*
 * mcount.S - the x86_64 entry points of the mcount runtime: `mcount`
 * (gcc -pg), `__fentry__` (gcc -pg -mfentry) and the return trampoline.
 * They run on the traced thread at every function entry/return, save the
 * registers the System V ABI passes arguments/results in, and call the C
 * hot path (linux.c / free.c).  Built twice: for Linux, and with
 * VT_MCOUNT_FREESTANDING (no vector registers touched: kernels may not
 * have SSE state enabled, and their code returns no floats).
 *
 * Stack alignment: none is assumed anywhere; see entry_point below.
 */

/* integer argument registers + %rax (vector count of varargs) + %r10
 * (static chain), 8 bytes each */
#define GPR_SAVE	64
/* %xmm0-%xmm7, 16 bytes each */
#define XMM_SAVE	128

/* The return trampoline's frame: the integer result registers %rax:%rdx,
 * %rbx (holds the unaligned stack pointer), then (Linux only) the vector
 * result registers %xmm0:%xmm1. */
#define RET_RAX		0
#define RET_RDX		8
#define RET_RBX		16
#define RET_XMM0	24
#define RET_XMM1	40
#ifndef VT_MCOUNT_FREESTANDING
#define RET_FRAME	56
#else
#define RET_FRAME	24
#endif

.macro save_gprs
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
	movq	%rax, 48(%rsp)
	movq	%r10, 56(%rsp)
.endm

.macro restore_gprs
	movq	0(%rsp), %rdi
	movq	8(%rsp), %rsi
	movq	16(%rsp), %rdx
	movq	24(%rsp), %rcx
	movq	32(%rsp), %r8
	movq	40(%rsp), %r9
	movq	48(%rsp), %rax
	movq	56(%rsp), %r10
.endm

/*
 * gcc calls mcount/__fentry__ outside the ABI: the stack may be 8 mod 16
 * or 0 mod 16 (callee-saved registers may be pushed first).  So after
 * saving the argument registers we keep the stack pointer in %rbx
 * (callee-saved: C calls keep it) and align %rsp down to 16 for the C
 * calls.  After `pushq %rbx`, the saved GPRs start at 8(%rbx) and our
 * own return address (an address inside the traced function) is at
 * GPR_SAVE+8(%rbx).
 *
 * Call mcount_enter(parent_loc, child_ip); when it asks for the slow path
 * (Linux: thread buffer not set up, or full), save the vector argument
 * registers, call mcount_slow() (which may call libc) and retry once.
 * \fentry: 0 for mcount (the parent's return address is at 8(%rbp)), 1
 * for __fentry__ (it is just above our return address).
 */
.macro parent_loc fentry
	.if \fentry
	leaq	GPR_SAVE + 16(%rbx), %rdi
	.else
	leaq	8(%rbp), %rdi
	.endif
	movq	GPR_SAVE + 8(%rbx), %rsi
.endm

.macro entry_point fentry
	subq	$GPR_SAVE, %rsp
	save_gprs
	pushq	%rbx
	movq	%rsp, %rbx
	andq	$-16, %rsp
	parent_loc \fentry
	call	mcount_enter
#ifndef VT_MCOUNT_FREESTANDING
	testl	%eax, %eax
	jnz	1f
#endif
2:
	movq	%rbx, %rsp
	popq	%rbx
	restore_gprs
	addq	$GPR_SAVE, %rsp
	ret
#ifndef VT_MCOUNT_FREESTANDING
1:
	subq	$XMM_SAVE, %rsp
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
	call	mcount_slow
	parent_loc \fentry
	call	mcount_enter
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	jmp	2b
#endif
.endm

	.text

/* gcc -pg: called after the prologue; the parent's return address is at
 * 8(%rbp), ours (an address inside the traced function) at (%rsp). */
	.globl	mcount
	.type	mcount, @function
	.p2align 4
mcount:
	entry_point 0
	.size	mcount, . - mcount

/* gcc -pg -mfentry: called before the prologue; our return address is at
 * (%rsp), the traced function's own return address just above it. */
	.globl	__fentry__
	.type	__fentry__, @function
	.p2align 4
__fentry__:
	entry_point 1
	.size	__fentry__, . - __fentry__

/* Hooked functions return here: save the return registers, let
 * mcount_exit(sp) record the exit and give the original return address,
 * restore and jump there.  %r11 is scratch in the ABI, never a result;
 * %rbx keeps the unaligned stack pointer, as above. */
	.globl	mcount_return_trampoline
	.hidden	mcount_return_trampoline
	.type	mcount_return_trampoline, @function
	.p2align 4
mcount_return_trampoline:
	subq	$RET_FRAME, %rsp
	movq	%rax, RET_RAX(%rsp)
	movq	%rdx, RET_RDX(%rsp)
	movq	%rbx, RET_RBX(%rsp)
#ifndef VT_MCOUNT_FREESTANDING
	movdqu	%xmm0, RET_XMM0(%rsp)
	movdqu	%xmm1, RET_XMM1(%rsp)
#endif
	leaq	RET_FRAME(%rsp), %rdi
	movq	%rsp, %rbx
	andq	$-16, %rsp
	call	mcount_exit
	movq	%rax, %r11
	movq	%rbx, %rsp
	movq	RET_RAX(%rsp), %rax
	movq	RET_RDX(%rsp), %rdx
	movq	RET_RBX(%rsp), %rbx
#ifndef VT_MCOUNT_FREESTANDING
	movdqu	RET_XMM0(%rsp), %xmm0
	movdqu	RET_XMM1(%rsp), %xmm1
#endif
	addq	$RET_FRAME, %rsp
	jmp	*%r11
	.size	mcount_return_trampoline, . - mcount_return_trampoline

	.section .note.GNU-stack, "", @progbits
