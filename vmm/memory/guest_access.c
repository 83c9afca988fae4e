// SPDX-License-Identifier: GPL-2.0
/*
 * The region a guest range lies in, and copies in and out of guest memory
 * on top of the one bounds-checked accessor (vm_guest_ptr). A file of
 * their own so that a harness with guest memory of its own
 * (tests/fuzz/fake_vm.c) uses these very pieces.
 */
#include <errno.h>
#include <string.h>

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

int vm_read_guest(struct vm *vm, uint64_t gpa, void *buf, uint64_t len)
{
	void *p = vm_guest_ptr(vm, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

int vm_write_guest(struct vm *vm, uint64_t gpa, const void *buf, uint64_t len)
{
	void *p = vm_guest_ptr(vm, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(p, buf, len);
	return 0;
}
