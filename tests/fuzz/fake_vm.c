// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory for fuzz targets (fake_vm.h). The accessors keep the
 * contract of vmm/memory/guest_mem.c: a range is served only when it lies wholly
 * inside one region, else NULL / -EFAULT. They skip what needs a pool and
 * userfaultfd (backing pages on first touch), which no parser or device
 * sees anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/fuzz/fake_vm.h"
#include "vmm/memory/guest_mem.h"

#define GUARD	4096ULL

struct fake_vm_log fake_vm_log;
static uint64_t fake_now;

int fake_vm_init(struct vm *vm, uint64_t ram)
{
	uint8_t *map;

	memset(vm, 0, sizeof(*vm));
	map = mmap(NULL, ram + 2 * GUARD, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -errno;
	if (mprotect(map + GUARD, ram, PROT_READ | PROT_WRITE)) {
		munmap(map, ram + 2 * GUARD);
		return -errno;
	}
	vm->cfg.ram_bytes = ram;
	vm->cfg.cpus = 1;
	vm->regions[0] = (struct vm_region){ .gpa = 0, .size = ram, .hva = map + GUARD };
	vm->nr_regions = 1;
	return 0;
}

/*
 * Only the pages an input touched cost anything to drop; the mapping
 * stays, zero-filled on the next touch like freshly backed guest RAM.
 */
void fake_vm_reset(struct vm *vm)
{
	madvise(vm->regions[0].hva, vm->regions[0].size, MADV_DONTNEED);
	memset(&vm->discard, 0, sizeof(vm->discard));
	vm->stopping = false;
	memset(&fake_vm_log, 0, sizeof(fake_vm_log));
	fake_now = 0;
}

void fake_vm_fini(struct vm *vm)
{
	munmap(vm->regions[0].hva - GUARD, vm->regions[0].size + 2 * GUARD);
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

/* The guest gave the pages back: they read zero on the next touch. */
int gmem_discard(struct vm *vm, uint64_t gpa, uint64_t len)
{
	struct vm_region *r = gmem_region(vm, gpa, len);

	if (!r || !len || ((gpa | len) & (MM_PAGE_SIZE - 1))) {
		vm->discard.failed++;
		return -EINVAL;
	}
	memset(r->hva + (gpa - r->gpa), 0, len);
	vm->discard.calls++;
	vm->discard.bytes += len;
	fake_vm_log.discards++;
	return 0;
}

int vm_irq_line(struct vm *vm, unsigned int gsi, bool level)
{
	fake_vm_log.irq_raised += level;
	return 0;
}

void vm_console_write(struct vm *vm, const char *buf, size_t len)
{
	fake_vm_log.console_bytes += len;
}

/* A clock that moves, and the same way on every run of an input. */
uint64_t vm_now_ns(void)
{
	return fake_now += 1000;
}
