// SPDX-License-Identifier: GPL-2.0
/*
 * The region a guest range lies in: the bounds check every guest memory
 * accessor starts from. A file of its own so that a harness with guest
 * memory of its own (tests/fuzz/fake_vm.c) uses this very check.
 */
#include "vmm/memory/guest_mem.h"

struct vm_region *gmem_region(struct vm *vm, uint64_t gpa, uint64_t len)
{
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];

		if (gpa >= r->gpa && gpa - r->gpa < r->size &&
		    len <= r->size - (gpa - r->gpa))
			return r;
	}
	return NULL;
}
