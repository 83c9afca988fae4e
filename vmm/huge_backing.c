// SPDX-License-Identifier: GPL-2.0
/*
 * How much of a VM's RAM sits on 2 MiB backings: by our own bookkeeping,
 * and as the kernel sees it. The kernel is the judge: ShmemPmdMapped in
 * /proc/self/smaps counts what is really mapped by one PMD. The report
 * shows both; a difference is a bug made visible.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vmm/guest_mem.h"
#include "vmm/vm.h"

int vm_range_populated(struct vm *vm, uint64_t gpa, bool *huge)
{
	struct vm_region *r = gmem_region(vm, gpa, 1);
	uint64_t range;
	int n;

	if (!r)
		return -1;
	range = (gpa - r->gpa) >> 21;
	pthread_mutex_lock(&vm->mem_lock);
	n = r->populated[range];
	if (huge)
		*huge = r->huge[range];
	pthread_mutex_unlock(&vm->mem_lock);
	return n;
}

static uint64_t bytes_at_least(struct vm *vm, enum range_backing min)
{
	uint64_t bytes = 0;

	pthread_mutex_lock(&vm->mem_lock);
	for (unsigned int i = 0; i < vm->nr_regions; i++)
		for (uint64_t g = 0; g < vm->regions[i].size >> MM_PAGEBLOCK_SHIFT; g++)
			bytes += vm->regions[i].huge[g] >= min ? MM_PAGEBLOCK_SIZE : 0;
	pthread_mutex_unlock(&vm->mem_lock);
	return bytes;
}

uint64_t vm_block_bytes(struct vm *vm)
{
	return bytes_at_least(vm, RANGE_BLOCK);
}

uint64_t vm_huge_bytes(struct vm *vm)
{
	return bytes_at_least(vm, RANGE_PMD);
}

static bool in_windows(struct vm *vm, uint64_t start, uint64_t end)
{
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		uint64_t w = (uintptr_t)vm->regions[i].hva;

		if (start >= w && end <= w + vm->regions[i].size)
			return true;
	}
	return false;
}

int64_t vm_huge_bytes_kernel(struct vm *vm, uint64_t *mappings)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool ours = false;
	int64_t kb = 0;

	if (mappings)
		*mappings = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, v;

		/* a mapping's first line is "start-end perms ..."; fields follow */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &start, &end) == 2) {
			ours = in_windows(vm, start, end);
			if (ours && mappings)
				(*mappings)++;
		}
		else if (ours && sscanf(line, "ShmemPmdMapped: %" SCNu64 " kB", &v) == 1)
			kb += (int64_t)v;
	}
	fclose(f);
	return kb * 1024;
}
