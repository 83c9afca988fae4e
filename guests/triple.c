// SPDX-License-Identifier: GPL-2.0
/*
 * triple: with an empty IDT, the #UD of ud2 finds no gate and becomes #GP,
 * which becomes #DF, which shuts the vCPU down: KVM_EXIT_SHUTDOWN. The VMM
 * loads no IDT either; loading an empty one makes the fault not depend on
 * that.
 */
#include "lib.h"

struct __attribute__((packed)) idt_ptr {
	uint16_t limit;
	uint64_t base;
};

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	/* Limit 0 covers one byte: no 16-byte gate of any vector fits. */
	static const struct idt_ptr empty_idt = { 0, 0 };

	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("about to triple fault\n");
	asm volatile("lidt %0\n\tud2" : : "m"(empty_idt) : "memory");
	serial_puts("still alive\n");
	return GPMM_EXIT_SURVIVED;
}
