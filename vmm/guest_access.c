// SPDX-License-Identifier: GPL-2.0
/*
 * Copies in and out of guest memory, on top of the one bounds-checked
 * accessor (vm_guest_ptr). A file of their own so that a harness with
 * guest memory of its own (tests/fuzz/fake_vm.c) uses these very copies.
 */
#include <errno.h>
#include <string.h>

#include "vmm/guest_mem.h"

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
