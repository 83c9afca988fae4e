// SPDX-License-Identifier: GPL-2.0
/* triple: a triple fault (lib.h's triple_fault) must stop the VM. */
#include "lib.h"

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("about to triple fault\n");
	triple_fault();
	serial_puts("still alive\n");
	return GPMM_EXIT_SURVIVED;
}
