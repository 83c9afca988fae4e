/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entry of every flat payload, the first byte of the binary (payload.ld).
 * The VMM enters here on all vCPUs at once, in long mode with identity
 * paging, IF = 0 and no IDT (DESIGN.md "Flat payload boot protocol"):
 *	RDI = guest RAM size, RSI = vCPU index, RDX = number of vCPUs,
 *	RSP = 0x100000 - index * 16 KiB (16-byte aligned, as a call needs).
 * RDI/RSI/RDX are already payload_main's three SysV arguments. RDX = 0
 * (a VMM that does not say) becomes 1.
 *
 * Exit convention: int payload_main(ram_size, cpu, ncpus). If it returns,
 * its value V goes out as 32 bits to port 0x501, which stops the whole VM
 * with status V (`gpmm run` exits V mod 256). A vCPU that must not end
 * the VM calls park() and never returns.
 */
	.section .text.entry, "ax"
	.globl	_start
	.type	_start, @function
_start:
	/* The VMM times launch-to-first-instruction by this exit: keep it first. */
	outb	%al, $0x80
	cld
	testq	%rdx, %rdx
	jnz	1f
	movl	$1, %edx
1:
	/*
	 * vCPU 0 alone clears .bss, and the others wait for it: a vCPU clearing
	 * late would wipe a lock or counter another one already took.
	 * bss_ready lives in .data, so it is 0 in the image itself.
	 */
	testq	%rsi, %rsi
	jnz	.Lwait_bss
	movq	%rdi, %r8
	leaq	__bss_start(%rip), %rdi
	leaq	__bss_end(%rip), %rcx
	subq	%rdi, %rcx
	xorl	%eax, %eax
	rep stosb
	movq	%r8, %rdi
	/* xchg is a full barrier: the fast-string stores above are not ordered. */
	movl	$1, %eax
	xchgl	%eax, bss_ready(%rip)
	jmp	.Lmain
.Lwait_bss:
	pause
	cmpl	$0, bss_ready(%rip)
	je	.Lwait_bss
.Lmain:
	call	payload_main
	movw	$0x501, %dx
	outl	%eax, %dx
	/* Only reached if the VMM lets this vCPU run on after the exit port. */
2:	cli
	hlt
	jmp	2b
	.size	_start, . - _start

	.section .data
	.balign	4
bss_ready:
	.long	0

	.section .note.GNU-stack, "", @progbits
