// SPDX-License-Identifier: GPL-2.0
/*
 * spin: vCPU 0 never exits to the VMM again, so only a kick from outside
 * (signal + immediate_exit) can stop it: what `quit` must handle. The loop
 * touches no memory, so it causes no faults the VMM could catch it by.
 */
#include "lib.h"

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("spinning\n");
	asm volatile("1: jmp 1b");
	__builtin_unreachable();
}
