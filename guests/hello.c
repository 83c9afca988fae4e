// SPDX-License-Identifier: GPL-2.0
/* hello: the smallest payload that proves boot, serial output and exit. */
#include "lib.h"

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("hello from gpmm guest\n");
	return GPMM_EXIT_OK;
}
