// SPDX-License-Identifier: GPL-2.0
/*
 * 2 MiB backings of guest RAM: assembling an aligned range onto one
 * order-9 block while the guest runs, splitting it back to 4 KiB, and how
 * much of a VM's RAM sits on them, by our own bookkeeping and as the kernel
 * sees it. The kernel is the judge: ShmemPmdMapped in /proc/self/smaps
 * counts what is really mapped by one PMD. The report shows both; a
 * difference is a bug made visible.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/memory/guest_mem.h"
#include "vmm/sys/host.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/page_move.h"
#include "vmm/core/vm.h"

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

bool vm_range_given_back(struct vm *vm, uint64_t gpa)
{
	struct vm_region *r = gmem_region(vm, gpa, 1);
	bool given;

	if (!r)
		return false;
	pthread_mutex_lock(&vm->mem_lock);
	given = r->given_back[(gpa - r->gpa) >> MM_PAGEBLOCK_SHIFT];
	pthread_mutex_unlock(&vm->mem_lock);
	return given;
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

/* mem_lock held: every page of the range backed, none pinned. */
static int __range_ready(struct vm *vm, struct vm_region *r, uint64_t idx0)
{
	size_t unallocated = 0;
	long pinned;

	for (uint64_t i = 0; i < MM_PAGEBLOCK_PAGES; i++)
		if (r->backing[idx0 + i] == NIL_FRAME)
			return -ENOENT;
	/* one lock round for the 512 frames, not 512 (mm_frame_info each) */
	pinned = pool_frames_pinned(vm->pool, &r->backing[idx0], MM_PAGEBLOCK_PAGES, &unallocated);
	if (pinned < 0)
		return (int)pinned;
	return pinned || unallocated ? -EBUSY : 0;
}

/*
 * One write-protect, 512 copies, one 2 MiB mapping of the new block, one
 * wake; then MADV_COLLAPSE has the range mapped by one PMD (DESIGN.md: it
 * ignores the sysfs THP setting). When the pool made the block a host huge
 * page on its first use (mm/hostmem.c), that collapse only maps it; else
 * the kernel copies the 2 MiB into a new huge page first.
 */
static int __assemble(struct vm *vm, struct vm_region *r, uint64_t idx0,
		      uint64_t block)
{
	uint8_t *hva = r->hva + (idx0 << MM_PAGE_SHIFT);
	uint64_t gpa = r->gpa + (idx0 << MM_PAGE_SHIFT);
	uint32_t old[MM_PAGEBLOCK_PAGES];
	int ret;

	ret = migrate_window_open(vm, (uintptr_t)hva, MM_PAGEBLOCK_SIZE);
	if (ret)
		return ret;
	for (uint64_t i = 0; i < MM_PAGEBLOCK_PAGES; i++) {
		old[i] = r->backing[idx0 + i];
		memcpy(pool_frame_ptr(vm->pool, block + i),
		       pool_frame_ptr(vm->pool, old[i]), MM_PAGE_SIZE);
	}
	ret = gmem_map(vm, hva, block, MM_PAGEBLOCK_SIZE);
	if (ret)
		gmem_map_back(vm, hva, old, MM_PAGEBLOCK_PAGES, ret);
	migrate_window_close(vm);
	if (ret)
		return ret;
	for (uint64_t i = 0; i < MM_PAGEBLOCK_PAGES; i++) {
		r->backing[idx0 + i] = (uint32_t)(block + i);
		vm->pool->gpa_of[old[i]] = 0;
		vm->pool->gpa_of[block + i] = gpa + (i << MM_PAGE_SHIFT) + 1;
		gmem_free_frame(vm, NULL, old[i], 0);
	}
	r->huge[idx0 / MM_PAGEBLOCK_PAGES] = RANGE_BLOCK;
	gmem_range_seen(vm, r, idx0 / MM_PAGEBLOCK_PAGES);
	return 0;
}

/*
 * The outcome of MADV_COLLAPSE on range @range (an assembly's, or a huge
 * first touch's): a PMD unless the range was split meanwhile, or the
 * failure and why, for the report. mem_lock held.
 */
void __vm_range_collapsed(struct vm *vm, struct vm_region *r, uint64_t range, int ret)
{
	if (ret) {
		vm->migstats.collapse_errno = -ret;
		vm->migstats.collapse_fail++;
	} else if (r->huge[range] == RANGE_BLOCK) {
		r->huge[range] = RANGE_PMD;
	}
}

/*
 * A test hook (GPMM_TEST_ASSEMBLY_STALL=N): after N ranges, the next
 * assembly takes its block and stops there, outside every lock, until the
 * VM stops: a process killed then dies in the middle of an assembly, with
 * a block of the pool in its hands (tests/integration/test_hostpool.c).
 */
static void test_stall(struct vm *vm)
{
	const char *n = getenv("GPMM_TEST_ASSEMBLY_STALL");

	if (!n || vm->migstats.ranges_assembled < strtoull(n, NULL, 10))
		return;
	fprintf(stderr, "gpmm: test hook: assembly stalled holding a 2 MiB block\n");
	while (!vm_is_stopping(vm))
		usleep(10000);
}

int vm_assemble_range(struct vm *vm, uint64_t gpa)
{
	struct vm_region *r = gmem_region(vm, gpa, MM_PAGEBLOCK_SIZE);
	uint64_t idx0, t0 = vm_now_ns();
	bool onto_huge;
	long block;
	int ret;

	if (!r || (gpa & (MM_PAGEBLOCK_SIZE - 1)) || ((gpa - r->gpa) & (MM_PAGEBLOCK_SIZE - 1)))
		return -EINVAL;
	idx0 = (gpa - r->gpa) >> MM_PAGE_SHIFT;
	if (r->huge[idx0 / MM_PAGEBLOCK_PAGES])
		return -EALREADY;
	/* before mem_lock: direct compaction may call back into this VM */
	/* a host huge page already: the collapse below copies nothing */
	block = pool_alloc_block(vm->pool, vm->owner, &onto_huge);
	if (block < 0) {
		vm->migstats.assemble_fail_nomem++;
		return (int)block;
	}
	test_stall(vm);
	pthread_mutex_lock(&vm->mem_lock);
	ret = r->huge[idx0 / MM_PAGEBLOCK_PAGES] ? -EALREADY : __range_ready(vm, r, idx0);
	if (!ret)
		ret = __assemble(vm, r, idx0, block);
	pthread_mutex_unlock(&vm->mem_lock);
	if (ret) {
		if (ret == -EBUSY)
			vm->migstats.assemble_fail_busy++;
		gmem_free_frame(vm, NULL, (uint64_t)block, MM_PAGEBLOCK_ORDER);
		return ret;
	}
	ret = mm_host_collapse(r->hva + (idx0 << MM_PAGE_SHIFT));
	pthread_mutex_lock(&vm->mem_lock);
	__vm_range_collapsed(vm, r, idx0 / MM_PAGEBLOCK_PAGES, ret);
	/* under mem_lock, as 4 KiB migrations count theirs: compaction may run beside us */
	vm->migstats.ranges_assembled++;
	vm->migstats.ranges_onto_huge += onto_huge;
	vm->migstats.pages += MM_PAGEBLOCK_PAGES;
	vm->migstats.bytes += MM_PAGEBLOCK_SIZE;
	t0 = vm_now_ns() - t0;
	if (t0 > vm->migstats.range_ns_max)
		vm->migstats.range_ns_max = t0;
	pthread_mutex_unlock(&vm->mem_lock);
	return 0;
}

/*
 * Back to 4 KiB: the block becomes 512 order-0 allocations in place (no
 * copy), so that one page can leave (balloon, reclaim) or move on its own.
 * The mapping stays as it is (one 2 MiB mapping of the block, PMD or PTEs):
 * page i of the range is still frame block + i, which is all the 4 KiB
 * bookkeeping says. mem_lock held.
 */
int __vm_split_range(struct vm *vm, struct vm_region *r, uint64_t range)
{
	int ret;

	if (!r->huge[range])
		return -EINVAL;
	ret = pool_split(vm->pool, r->backing[range << MM_PAGEBLOCK_ORDER]);
	if (ret)
		return ret;
	r->huge[range] = RANGE_4K;
	vm->migstats.ranges_split++;
	return 0;
}

int vm_split_range(struct vm *vm, uint64_t gpa)
{
	struct vm_region *r = gmem_region(vm, gpa, MM_PAGEBLOCK_SIZE);
	int ret;

	if (!r || (gpa & (MM_PAGEBLOCK_SIZE - 1)))
		return -EINVAL;
	pthread_mutex_lock(&vm->mem_lock);
	ret = __vm_split_range(vm, r, (gpa - r->gpa) >> MM_PAGEBLOCK_SHIFT);
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}
