// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory for the kernel loaders' fuzz target (fake_vm.h). The
 * accessor keeps the contract of vmm/memory/guest_mem.c: a range is served
 * only when it lies wholly inside one region, else NULL / -EFAULT. It
 * skips what needs a pool and userfaultfd (backing pages on first touch),
 * which no loader sees anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/devices/machine_double.h"
#include "tests/fuzz/fake_vm.h"
#include "vmm/memory/guest_mem.h"

/* The loaders' copies (vm_write_guest) are the machine's, over vm_guest_ptr. */
static void *fake_guest_ptr(struct machine *m, uint64_t gpa, uint64_t len)
{
	return vm_guest_ptr(vm_of_machine(m), gpa, len);
}

static const struct machine_ops fake_machine_ops = { .guest_ptr = fake_guest_ptr };

int fake_vm_init(struct vm *vm, uint64_t ram)
{
	uint8_t *map;

	memset(vm, 0, sizeof(*vm));
	map = guarded_ram_map(ram);
	if (!map)
		return -errno;
	vm->cfg.ram_bytes = ram;
	vm->cfg.cpus = 1;
	vm->regions[0] = (struct vm_region){ .gpa = 0, .size = ram, .hva = map };
	vm->nr_regions = 1;
	vm->mach.ops = &fake_machine_ops;
	return 0;
}

/*
 * Only the pages an input touched cost anything to drop; the mapping
 * stays, zero-filled on the next touch like freshly backed guest RAM.
 */
void fake_vm_reset(struct vm *vm)
{
	madvise(vm->regions[0].hva, vm->regions[0].size, MADV_DONTNEED);
	vm->stopping = false;
}

void fake_vm_fini(struct vm *vm)
{
	guarded_ram_unmap(vm->regions[0].hva, vm->regions[0].size);
	vm->nr_regions = 0;
}

uint8_t *fake_vm_ram(struct vm *vm)
{
	return vm->regions[0].hva;
}

void *vm_guest_ptr(struct vm *vm, uint64_t gpa, uint64_t len)
{
	struct vm_region *r = gmem_region(vm, gpa, len ? len : 1);

	return r ? r->hva + (gpa - r->gpa) : NULL;
}
