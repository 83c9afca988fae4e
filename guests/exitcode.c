// SPDX-License-Identifier: GPL-2.0
/* exitcode: a status no other payload uses, to see it reach `gpmm run`'s own. */
#include "lib.h"

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	return GPMM_EXIT_EXITCODE;
}
