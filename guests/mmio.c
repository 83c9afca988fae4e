// SPDX-License-Identifier: GPL-2.0
/*
 * mmio: a store to an unclaimed GPA in the PCI hole. The identity paging
 * covers it, so the guest takes no fault and the access reaches the VMM as
 * KVM_EXIT_MMIO, which must stop the VM before "still alive".
 */
#include "lib.h"

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("touching unmapped mmio\n");
	*gpa_ptr(uint32_t, GPMM_MMIO_GPA) = GPMM_MMIO_VALUE;
	serial_puts("still alive\n");
	return GPMM_EXIT_SURVIVED;
}
