// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM, populated page by page from the pool.
 *
 * A window starts as anonymous memory registered with userfaultfd (missing
 * mode): the first touch of a page, by a vCPU through KVM or by anyone,
 * stops in the kernel and reaches the fault thread, which takes a MOVABLE
 * frame from the faulting vCPU's per-thread list, zeroes it, maps it over
 * the page with MAP_FIXED|MAP_SHARED and wakes the waiter. KVM's MMU
 * notifier follows every such host mapping change, so a later remap of
 * the page is seen by the guest too.
 *
 * The backing map and the mappings change under vm->mem_lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/memory/guest_mem.h"
#include "vmm/core/kvm.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/page_move.h"
#include "vmm/memory/swap.h"
#include "vmm/core/vcpu.h"
#include "vmm/sys/uffd.h"

/* Below 3 GiB in one region; above that the rest goes over 4 GiB. */
static void layout_regions(struct vm *vm)
{
	uint64_t ram = vm->cfg.ram_bytes;

	vm->nr_regions = 1;
	vm->regions[0].gpa = 0;
	vm->regions[0].size = ram < VM_PCI_HOLE_START ? ram : VM_PCI_HOLE_START;
	if (ram > VM_PCI_HOLE_START) {
		vm->nr_regions = 2;
		vm->regions[1].gpa = VM_HIGH_RAM_START;
		vm->regions[1].size = ram - VM_PCI_HOLE_START;
	}
}

static uint8_t *reserve_window(uint64_t size)
{
	uint8_t *p = MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
				 mmap(NULL, size + MM_PAGEBLOCK_SIZE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
	uint8_t *aligned;

	if (p == MAP_FAILED)
		return NULL;
	aligned = (uint8_t *)(((uintptr_t)p + MM_PAGEBLOCK_SIZE - 1) & ~(MM_PAGEBLOCK_SIZE - 1));
	if (aligned > p)
		munmap(p, aligned - p);
	munmap(aligned + size, p + MM_PAGEBLOCK_SIZE - aligned);
	return aligned;
}

static int add_memslot(struct vm *vm, unsigned int slot, struct vm_region *r)
{
	struct kvm_userspace_memory_region mr = {
		.slot = slot,
		.guest_phys_addr = r->gpa,
		.memory_size = r->size,
		.userspace_addr = (uintptr_t)r->hva,
	};

	return kvm_ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &mr) < 0 ? -errno : 0;
}

int gmem_reserve(struct vm *vm, char *err, size_t errlen)
{
	layout_regions(vm);
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];
		uint64_t pages = r->size >> MM_PAGE_SHIFT;

		/* no frame yet: a failure below must leave gmem_destroy nothing to free */
		r->backing = malloc(pages * sizeof(*r->backing));
		if (r->backing)
			memset(r->backing, 0xff, pages * sizeof(*r->backing));
		r->huge = calloc((pages >> MM_PAGEBLOCK_ORDER) + 1, 1);
		r->populated = calloc((pages >> MM_PAGEBLOCK_ORDER) + 1, sizeof(*r->populated));
		r->given_back = calloc((pages >> MM_PAGEBLOCK_ORDER) + 1, 1);
		r->hva = reserve_window(r->size);
		if (!r->backing || !r->huge || !r->populated || !r->given_back || !r->hva) {
			snprintf(err, errlen, "cannot reserve %llu MiB of address space",
				 (unsigned long long)(r->size >> 20));
			return -ENOMEM;
		}
		madvise(r->hva, r->size, MADV_DONTFORK);
		if (vm->cfg.ram != VM_RAM_POOL)
			madvise(r->hva, r->size, vm->cfg.ram == VM_RAM_ANON_THP ?
				MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	}
	return 0;
}

int gmem_init(struct vm *vm, char *err, size_t errlen)
{
	int ret = gmem_reserve(vm, err, errlen);

	for (unsigned int i = 0; !ret && i < vm->nr_regions; i++) {
		ret = add_memslot(vm, i, &vm->regions[i]);
		if (ret)
			snprintf(err, errlen, "KVM_SET_USER_MEMORY_REGION: %s",
				 strerror(-ret));
	}
	return ret;
}

static struct vm_region *region_of_hva(struct vm *vm, uint64_t hva)
{
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];

		if (hva >= (uintptr_t)r->hva && hva - (uintptr_t)r->hva < r->size)
			return r;
	}
	return NULL;
}

/* @len stays within @frame's pageblock: a pageblock may be a file of its own. */
int gmem_map(struct vm *vm, uint8_t *hva, uint64_t frame, uint64_t len)
{
	off_t off;
	int fd = pool_frame_file(vm->pool, frame, &off);
	void *p;

	if (fd < 0)
		return fd;
	p = MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
			mmap(hva, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off));
	if (p != MAP_FAILED)
		return 0;
	/* the host ran out of VMAs, not of memory: say which */
	return errno == ENOMEM ? -EMFILE : -errno;
}

static const char *populate_error(int ret)
{
	if (ret == -ENOMEM)
		return "the pool is exhausted";
	if (ret == -EMFILE)
		return "the host's mapping limit is reached (sysctl vm.max_map_count)";
	return strerror(-ret);
}

/* The bookkeeping of a newly backed guest page. mem_lock held. */
static void account_page(struct vm *vm, struct vm_region *r, uint64_t idx, long frame)
{
	r->backing[idx] = (uint32_t)frame;
	vm->pool->gpa_of[frame] = r->gpa + (idx << MM_PAGE_SHIFT) + 1;
	__atomic_add_fetch(&vm->stats.populated_pages, 1, __ATOMIC_RELAXED);
	gmem_range_seen(vm, r, idx >> MM_PAGEBLOCK_ORDER);
	/* the guest wants all of a range it once gave back: fill may take it again */
	if (++r->populated[idx >> MM_PAGEBLOCK_ORDER] == MM_PAGEBLOCK_PAGES)
		r->given_back[idx >> MM_PAGEBLOCK_ORDER] = 0;
}

static int map_missing(struct vm *vm, uint8_t *hva, uint64_t len);
static void __adopt_strays(struct vm *vm, struct vm_region *r, uint64_t idx, uint64_t n);

/*
 * mem_lock held: the last page of a range swapped out came back page by
 * page. Its pages never backed are still the swap userfaultfd's; armed
 * for the fault thread's own again, so that a write-protect window (a
 * move, an assembly, the next swap-out) can be opened over the range.
 * They hold nothing: a touch in between reads zero, as a missing page
 * does, and is taken into the pool (__adopt_strays).
 */
static void __rearm_unbacked(struct vm *vm, struct vm_region *r, uint64_t range)
{
	uint64_t idx = range << MM_PAGEBLOCK_ORDER, end = idx + MM_PAGEBLOCK_PAGES;

	while (idx < end) {
		uint64_t n = 0;

		while (idx + n < end && r->backing[idx + n] == NIL_FRAME)
			n++;
		if (n && !map_missing(vm, r->hva + (idx << MM_PAGE_SHIFT), n << MM_PAGE_SHIFT))
			__adopt_strays(vm, r, idx, n);
		idx += n ? n : 1;
	}
}

/*
 * What a new frame for guest page @idx starts as: what the page held when
 * it was swapped out, else zeros. Zeroing goes through the pool's own
 * mapping, so a guest never sees what a frame held for its previous owner.
 */
static int __fill_page(struct vm *vm, struct vm_region *r, uint64_t idx, void *dst)
{
	if (!__swap_page_out(r, idx)) {
		memset(dst, 0, MM_PAGE_SIZE);
		return 0;
	}
	return __swap_read_page(vm, r, idx, dst);
}

/* Back one guest page. mem_lock held. */
int __gmem_populate(struct vm *vm, struct vm_region *r, uint64_t idx,
		    struct mm_pcp *pcp)
{
	bool swapped = __swap_page_out(r, idx);
	long frame;
	int ret;

	if (r->backing[idx] != NIL_FRAME)
		return 0;
	/* never compact here: compaction calls back into this VM, for mem_lock */
	frame = pool_alloc_page(vm->pool, pcp, vm->owner);
	if (frame < 0)
		return (int)frame;
	ret = __fill_page(vm, r, idx, pool_frame_ptr(vm->pool, frame));
	if (!ret)
		ret = gmem_map(vm, r->hva + (idx << MM_PAGE_SHIFT), frame, MM_PAGE_SIZE);
	if (ret) {
		gmem_free_frame(vm, pcp, (uint64_t)frame, 0);
		return ret;
	}
	account_page(vm, r, idx, frame);
	if (swapped) {
		__swap_page_back(vm, r, idx);
		if (!r->swapped_n[idx >> MM_PAGEBLOCK_ORDER])
			__rearm_unbacked(vm, r, idx >> MM_PAGEBLOCK_ORDER);
	}
	return 0;
}

/*
 * Guests touch memory in runs: a kernel decompressing itself, clearing its
 * memory map, unpacking its initramfs; a process filling a buffer. So a
 * fault backs the aligned 64 KiB around the page at once, with one
 * contiguous block (split into pages, each its own allocation as ever)
 * and one mapping, where page by page it would take 16 round trips
 * through the fault thread. Not in a range the guest gave back (balloon,
 * free page reporting): what it returned stays returned until touched.
 * Any page of the 64 KiB already backed, or no such block free: one page.
 * mem_lock held, so no reclaim or compaction for the block: they would
 * call back into this VM (ram_migrate takes mem_lock) and deadlock.
 */
static int __gmem_populate_around(struct vm *vm, struct vm_region *r, uint64_t idx,
				  struct mm_pcp *pcp)
{
	uint64_t first = idx & ~(GMEM_FAULT_AROUND_PAGES - 1);
	long frame;

	if (r->given_back[idx >> MM_PAGEBLOCK_ORDER] ||
	    first + GMEM_FAULT_AROUND_PAGES > r->size >> MM_PAGE_SHIFT ||
	    __swap_any_out(r, first, GMEM_FAULT_AROUND_PAGES))
		return __gmem_populate(vm, r, idx, pcp);
	for (uint64_t i = first; i < first + GMEM_FAULT_AROUND_PAGES; i++)
		if (r->backing[i] != NIL_FRAME)
			return __gmem_populate(vm, r, idx, pcp);
	frame = pool_alloc_pages(vm->pool, pcp, GMEM_FAULT_AROUND_ORDER, vm->owner);
	if (frame < 0)
		return __gmem_populate(vm, r, idx, pcp);
	memset(pool_frame_ptr(vm->pool, frame), 0, GMEM_FAULT_AROUND_PAGES << MM_PAGE_SHIFT);
	if (gmem_map(vm, r->hva + (first << MM_PAGE_SHIFT), frame,
		     GMEM_FAULT_AROUND_PAGES << MM_PAGE_SHIFT)) {
		for (uint64_t i = 0; i < GMEM_FAULT_AROUND_PAGES; i++)
			gmem_free_frame(vm, pcp, (uint64_t)frame + i, 0);
		return __gmem_populate(vm, r, idx, pcp);
	}
	for (uint64_t i = 0; i < GMEM_FAULT_AROUND_PAGES; i++)
		account_page(vm, r, first + i, frame + (long)i);
	return 0;
}

/*
 * Free blocks the pool keeps for other VMs' first touches, for their
 * assemblies and for unmovable claims, before `auto` falls back to
 * 4 KiB: one sixteenth of the pool's pageblocks, at least two. `huge`
 * keeps none (`4k` never gets here).
 */
static uint64_t huge_first_keep_free(struct vm *vm)
{
	uint64_t pageblocks = pool_frames(vm->pool) >> MM_PAGEBLOCK_ORDER;

	if (vm->cfg.fault == VM_FAULT_HUGE)
		return 0;
	return pageblocks / 16 > 2 ? pageblocks / 16 : 2;
}

/*
 * Huge first: the first fault in an aligned 2 MiB guest range takes a
 * whole free order-9 block, zeroes it (it may hold another VM's old data;
 * a block that had no host memory reads zero already: the kernel zeroed
 * it, as it does a punched hole, so it is not cleared twice),
 * and maps it with one 2 MiB mapping, which MADV_COLLAPSE turns into one
 * PMD without copying when the pool made the block a host huge page. The
 * range is then what an assembly would have made it, with no later
 * migration; its frames stay individually splittable and movable. No
 * block free without compaction (which would call back into this VM,
 * under mem_lock), or the range was given back or is partly backed: 4 KiB,
 * and the assembler repairs later. mem_lock held.
 */
static int __gmem_populate_huge(struct vm *vm, struct vm_region *r, uint64_t idx)
{
	uint64_t range = idx >> MM_PAGEBLOCK_ORDER, first = range << MM_PAGEBLOCK_ORDER;
	uint8_t *hva = r->hva + (first << MM_PAGE_SHIFT);
	bool swapped = r->swapped && r->swapped_n[range];
	bool zeroed = false;
	uint64_t t0;
	long block;

	/* no 2 MiB backings (huge off), or only so many (a target): the assembler's job */
	if (vm->cfg.fault == VM_FAULT_4K || !vm->cfg.huge || vm->cfg.huge_target < 100 ||
	    r->populated[range] || (r->given_back[range] && !swapped) ||
	    ((r->gpa >> MM_PAGE_SHIFT) + first) % MM_PAGEBLOCK_PAGES ||
	    first + MM_PAGEBLOCK_PAGES > r->size >> MM_PAGE_SHIFT)
		return -EAGAIN;
	/* a range swapped out comes back whole: no block kept back for others' first touch */
	block = pool_alloc_block_nowait(vm->pool, vm->owner,
					swapped ? 0 : huge_first_keep_free(vm), &zeroed);
	if (block < 0) {
		vm->stats.huge_first_fallback++;
		return -EAGAIN;
	}
	t0 = vm_now_ns();
	if (swapped && __swap_read_range(vm, r, range, pool_frame_ptr(vm->pool, block))) {
		gmem_free_frame(vm, NULL, (uint64_t)block, MM_PAGEBLOCK_ORDER);
		return -EAGAIN;
	} else if (zeroed && !swapped) {
		vm->stats.huge_first_kernel_zeroed++;
	} else if (!swapped) {
		memset(pool_frame_ptr(vm->pool, block), 0, MM_PAGEBLOCK_SIZE);
		vm->stats.zero_ns += vm_now_ns() - t0;
	}
	if (gmem_map(vm, hva, (uint64_t)block, MM_PAGEBLOCK_SIZE)) {
		gmem_free_frame(vm, NULL, (uint64_t)block, MM_PAGEBLOCK_ORDER);
		vm->stats.huge_first_fallback++;
		return -EAGAIN;
	}
	for (uint64_t i = 0; i < MM_PAGEBLOCK_PAGES; i++)
		account_page(vm, r, first + i, block + (long)i);
	r->huge[range] = RANGE_BLOCK;
	__vm_range_collapsed(vm, r, range, mm_host_collapse(hva));
	if (swapped)
		__swap_range_back(vm, r, range);
	else
		vm->stats.huge_first++;
	return 0;
}

static int populate(struct vm *vm, struct vm_region *r, uint64_t idx,
		    struct mm_pcp *pcp)
{
	int ret;

	pthread_mutex_lock(&vm->mem_lock);
	ret = __gmem_populate(vm, r, idx, pcp);
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}

void *vm_guest_ptr(struct vm *vm, uint64_t gpa, uint64_t len)
{
	struct vm_region *r = gmem_region(vm, gpa, len ? len : 1);
	uint64_t first, last;

	if (!r)
		return NULL;
	/* the kernel's anonymous memory: it backs whatever is touched */
	if (vm->cfg.ram != VM_RAM_POOL)
		return r->hva + (gpa - r->gpa);
	first = (gpa - r->gpa) >> MM_PAGE_SHIFT;
	last = (gpa - r->gpa + (len ? len - 1 : 0)) >> MM_PAGE_SHIFT;
	for (uint64_t idx = first; idx <= last; idx++)
		if (populate(vm, r, idx, vm->mem_pcp))
			return NULL;
	return r->hva + (gpa - r->gpa);
}

long vm_gpa_to_frame(struct vm *vm, uint64_t gpa)
{
	struct vm_region *r = gmem_region(vm, gpa, 1);
	uint32_t frame;

	if (!r)
		return -EINVAL;
	pthread_mutex_lock(&vm->mem_lock);
	frame = r->backing[(gpa - r->gpa) >> MM_PAGE_SHIFT];
	pthread_mutex_unlock(&vm->mem_lock);
	return frame == NIL_FRAME ? -ENOENT : (long)frame;
}

int vm_remap_page(struct vm *vm, uint64_t gpa, uint64_t new_frame)
{
	struct vm_region *r = gmem_region(vm, gpa, 1);
	uint64_t idx;
	uint32_t old;
	int ret;

	if (!r || new_frame >= pool_frames(vm->pool))
		return -EINVAL;
	pthread_mutex_lock(&vm->lock);
	ret = vm->state == VM_RUNNING && vm->parked < vm->running_vcpus ? -EBUSY : 0;
	pthread_mutex_unlock(&vm->lock);
	if (ret)
		return ret;
	idx = (gpa - r->gpa) >> MM_PAGE_SHIFT;
	pthread_mutex_lock(&vm->mem_lock);
	old = r->backing[idx];
	if (old == NIL_FRAME || r->huge[idx >> MM_PAGEBLOCK_ORDER]) {
		ret = old == NIL_FRAME ? -ENOENT : -EBUSY;
		goto out;
	}
	memcpy(pool_frame_ptr(vm->pool, new_frame), pool_frame_ptr(vm->pool, old),
	       MM_PAGE_SIZE);
	ret = gmem_map(vm, r->hva + (idx << MM_PAGE_SHIFT), new_frame, MM_PAGE_SIZE);
	if (ret)
		goto out;
	r->backing[idx] = (uint32_t)new_frame;
	vm->pool->gpa_of[new_frame] = vm->pool->gpa_of[old];
	vm->pool->gpa_of[old] = 0;
	gmem_free_frame(vm, NULL, old, 0);
out:
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}

int gmem_prefault(struct vm *vm, char *err, size_t errlen)
{
	uint64_t t0 = vm_now_ns();

	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];

		for (uint64_t idx = 0; idx < r->size >> MM_PAGE_SHIFT; idx++) {
			int ret = populate(vm, r, idx, vm->mem_pcp);

			if (ret) {
				snprintf(err, errlen, "prefault of guest page 0x%llx failed: %s",
					 (unsigned long long)(r->gpa + (idx << MM_PAGE_SHIFT)),
					 populate_error(ret));
				return ret;
			}
		}
	}
	vm->stats.prefault_ns = vm_now_ns() - t0;
	return 0;
}

/*
 * mem_lock held: back the page at @idx the way a first touch does (a
 * whole block, else the 64 KiB around it, else the page). When the pool
 * has nothing left and the VM may swap, cold ranges of its own go out to
 * the swap file, one at a time, until the page can be backed: a pool that
 * lends more than it holds is paid back by the VM that asks. A range
 * that went out whole comes back whole (and a `huge` VM's first touch is
 * backed whole): if no block is free, one is made first by sending out a
 * range that holds one (@whole).
 */
#define GMEM_RECLAIM_TRIES	64
/*
 * A VM with nothing of its own left to send out waits for the others'
 * background reclaim (pressure_balance, once a second each): 30 s at most.
 */
#define GMEM_WAIT_US		20000
#define GMEM_WAIT_TRIES		1500

static int __gmem_fault_in(struct vm *vm, struct vm_region *r, uint64_t idx)
{
	uint64_t range = idx >> MM_PAGEBLOCK_ORDER;
	bool whole = swap_enabled(vm) && vm->cfg.fault != VM_FAULT_4K && vm->cfg.huge &&
		     (r->swapped_n[range] || vm->cfg.fault == VM_FAULT_HUGE);
	int ret = __gmem_populate_huge(vm, r, idx);

	for (int i = 0; ret && whole && i < GMEM_RECLAIM_TRIES && !r->populated[range]; i++) {
		if (__swap_reclaim(vm, r, range, true))
			break;
		ret = __gmem_populate_huge(vm, r, idx);
	}
	if (ret)
		ret = __gmem_populate_around(vm, r, idx, vm->mem_pcp);
	for (int i = 0; ret == -ENOMEM && i < GMEM_RECLAIM_TRIES; i++) {
		if (__swap_reclaim(vm, r, range, false))
			break;
		ret = __gmem_populate_around(vm, r, idx, vm->mem_pcp);
	}
	return ret;
}

/*
 * Resolve one missing-page fault, from the fault thread's userfaultfd or
 * (@swapped) passed on from the swap one. When the pool cannot back the
 * page the VM is stopped, and the faulting thread is released with the
 * zero page so that it can leave KVM_RUN and see the stop.
 */
static void handle_fault(struct vm *vm, const struct uffd_msg *msg, bool swapped)
{
	uint64_t addr = msg->arg.pagefault.address & ~(MM_PAGE_SIZE - 1);
	struct vm_region *r = region_of_hva(vm, addr);
	int uffd = swapped ? vm->swap.uffd : vm->uffd;

	if (!swapped && (msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
		if (migrate_in_window(vm, addr) || !r || !swap_wp_fault(vm, r, addr))
			migrate_wp_fault(vm, addr);
		return;
	}
	struct uffdio_range range = { .start = addr, .len = MM_PAGE_SIZE };
	uint64_t t0 = vm_now_ns();
	int ret = -EFAULT;

	if (r) {
		uint64_t idx = (addr - (uintptr_t)r->hva) >> MM_PAGE_SHIFT;

		pthread_mutex_lock(&vm->mem_lock);
		ret = __gmem_fault_in(vm, r, idx);
		for (int i = 0; ret == -ENOMEM && swap_enabled(vm) && i < GMEM_WAIT_TRIES &&
		     !vm_is_stopping(vm); i++) {
			/* nothing of its own left to send out: others give back in the background */
			pthread_mutex_unlock(&vm->mem_lock);
			usleep(GMEM_WAIT_US);
			__atomic_add_fetch(&vm->swap.waits, 1, __ATOMIC_RELAXED);
			pthread_mutex_lock(&vm->mem_lock);
			ret = __gmem_fault_in(vm, r, idx);
		}
		if (!ret)
			__swap_age(vm);
		pthread_mutex_unlock(&vm->mem_lock);
	}
	if (ret) {
		struct uffdio_zeropage zp = { .range = range };
		uint64_t gpa = r ? r->gpa + (addr - (uintptr_t)r->hva) : 0;

		vm_fail(vm, NULL, "guest page 0x%llx could not be backed: %s",
			(unsigned long long)gpa, populate_error(ret));
		if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) == 0)
			return;
	}
	ioctl(uffd, UFFDIO_WAKE, &range);
	__atomic_add_fetch(&vm->stats.demand_faults, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&vm->stats.fault_ns, vm_now_ns() - t0, __ATOMIC_RELAXED);
}

/* A fault the swap thread passed on (it arrives whole: the pipe is atomic for it). */
static void take_forwarded(void *opaque, const struct pollfd *pfd)
{
	struct vm *vm = opaque;
	struct uffd_msg msg;

	if ((pfd[2].revents & POLLIN) &&
	    read(swap_forward_fd(vm), &msg, sizeof(msg)) == sizeof(msg))
		handle_fault(vm, &msg, true);
}

static void fault_msg(void *opaque, const struct uffd_msg *msg)
{
	if (msg->event == UFFD_EVENT_PAGEFAULT)
		handle_fault(opaque, msg, false);
}

/* The queue was empty when the read began: what write-protect stalls are timed from. */
static void fault_queue_empty(void *opaque, uint64_t began_ns)
{
	migrate_fault_queue_empty(opaque, began_ns);
}

static void *uffd_thread_fn(void *arg)
{
	struct vm *vm = arg;
	struct pollfd pfd[3] = {
		{ .fd = vm->uffd, .events = POLLIN },
		{ .fd = vm->uffd_stop, .events = POLLIN },
		{ .fd = swap_forward_fd(vm), .events = POLLIN },
	};

	pthread_setname_np(pthread_self(), "gpmm-fault");
	uffd_read_loop(&(struct uffd_reader){ .pfd = pfd, .nfd = 3, .msg = fault_msg,
		       .empty = fault_queue_empty, .ready = take_forwarded, .now = vm_now_ns,
		       .opaque = vm });
	return NULL;
}

/*
 * Write-protect on shared memory is what live migration needs; without it
 * (older kernels) the VM runs, but its pages only move while it is stopped.
 */
static int uffd_open(bool want_wp, char *err, size_t errlen)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = want_wp ? UFFD_FEATURE_WP_HUGETLBFS_SHMEM : 0 };
	int fd = uffd_create(O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		uffd_explain(fd, err, errlen);
		return fd;
	}
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int e = errno;

		snprintf(err, errlen, "UFFDIO_API: %s", strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

int gmem_uffd_start(struct vm *vm, char *err, size_t errlen)
{
	int ret;

	vm->uffd = uffd_open(true, err, errlen);
	vm->mig.wp_supported = vm->uffd >= 0;
	if (vm->uffd < 0)
		vm->uffd = uffd_open(false, err, errlen);
	if (vm->uffd < 0)
		return vm->uffd;
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct uffdio_register reg = {
			.range = { (uintptr_t)vm->regions[i].hva, vm->regions[i].size },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};

		if (ioctl(vm->uffd, UFFDIO_REGISTER, &reg) < 0) {
			ret = -errno;
			snprintf(err, errlen, "UFFDIO_REGISTER: %s", strerror(errno));
			return ret;
		}
	}
	/* before the fault thread, which polls what the swap thread passes on */
	ret = swap_init(vm, err, errlen);
	if (ret)
		return ret;
	vm->uffd_stop = eventfd(0, EFD_CLOEXEC);
	if (vm->uffd_stop < 0) {
		ret = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return ret;
	}
	ret = -pthread_create(&vm->uffd_thread, NULL, uffd_thread_fn, vm);
	if (ret) {
		snprintf(err, errlen, "cannot start the fault thread: %s", strerror(-ret));
		return ret;
	}
	vm->uffd_running = true;
	return 0;
}

void gmem_uffd_stop(struct vm *vm)
{
	if (vm->uffd_running) {
		uint64_t one = 1;

		if (write(vm->uffd_stop, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(vm->uffd_thread);
		pthread_join(vm->uffd_thread, NULL);
		vm->uffd_running = false;
	}
	if (vm->uffd_stop > 0)
		close(vm->uffd_stop);
	if (vm->uffd > 0)
		close(vm->uffd);
	vm->uffd = vm->uffd_stop = -1;
}

/*
 * After a failed remap: a MAP_FIXED that fails may already have unmapped
 * the range (the host out of mappings, vm.max_map_count), so the old
 * frames go back under it, page by page. If even that fails the guest
 * would run on a hole: the VM fails instead, with the reason.
 */
void gmem_map_back(struct vm *vm, uint8_t *hva, const uint32_t *frames,
		   uint64_t n, int why)
{
	for (uint64_t i = 0; i < n; i++)
		if (gmem_map(vm, hva + (i << MM_PAGE_SHIFT), frames[i], MM_PAGE_SIZE)) {
			vm_fail(vm, NULL, "guest RAM at host %p has no mapping left: %s",
				(void *)hva, strerror(-why));
			return;
		}
}

/*
 * The pool remembers which guest page a frame backs (gpa_of, written with
 * the backing map under mem_lock); both must agree, or the frame is no
 * longer this page's (moved or freed since the pool looked).
 */
struct vm_region *__gmem_frame_page(struct vm *vm, uint64_t frame, uint64_t *idx)
{
	uint64_t gpa1 = vm->pool->gpa_of[frame];
	struct vm_region *r = gpa1 ? gmem_region(vm, gpa1 - 1, 1) : NULL;

	if (!r)
		return NULL;
	*idx = (gpa1 - 1 - r->gpa) >> MM_PAGE_SHIFT;
	return r->backing[*idx] == frame ? r : NULL;
}

/*
 * A frame the VM no longer uses goes back to the pool. mm_free refuses
 * only a frame that is pinned, not allocated, or already free: here that
 * is a bookkeeping bug of gpmm's, so it is counted where the operator sees
 * it (the report's free_errors), never dropped silently.
 */
void gmem_free_frame(struct vm *vm, struct mm_pcp *pcp, uint64_t frame, unsigned int order)
{
	if (pool_free(vm->pool, pcp, frame, order))
		__atomic_add_fetch(&vm->migstats.free_errors, 1, __ATOMIC_RELAXED);
}

/*
 * Give a frame of a dying VM back. Its pins (a device's ring, DMA in
 * flight) were this VM's and die with it: drop them first, or mm_free
 * answers -EBUSY and a long-lived daemon's pool loses the frame for good.
 */
static void release_frame(struct vm *vm, uint32_t frame, unsigned int order)
{
	for (int i = 0; i < 1 << 16; i++) {
		int ret = pool_unpin(vm->pool, frame);

		if (ret && ret != -EAGAIN)
			break;		/* no pin left */
	}
	gmem_free_frame(vm, NULL, frame, order);
}

void gmem_free_maps(void **const maps[], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(*maps[i]);
		*maps[i] = NULL;
	}
}

void gmem_destroy(struct vm *vm)
{
	bool released;

	/* unmapped first: no frame goes back while this process still reaches it */
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		if (vm->regions[i].hva)
			munmap(vm->regions[i].hva, vm->regions[i].size);
		vm->regions[i].hva = NULL;
	}
	/* in one step where the pool can (the service); else frame by frame */
	released = vm->owner && pool_release_all(vm->pool, vm->owner) >= 0;
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];
		uint64_t pages = r->size >> MM_PAGE_SHIFT;

		for (uint64_t idx = 0; r->backing && idx < pages; idx++) {
			uint32_t frame = r->backing[idx];

			if (frame == NIL_FRAME)
				continue;
			vm->pool->gpa_of[frame] = 0;
			/* a 2 MiB backing is one order-9 block: free it once */
			if (released)
				continue;
			if (!r->huge[idx >> MM_PAGEBLOCK_ORDER])
				release_frame(vm, frame, 0);
			else if (!(idx & (MM_PAGEBLOCK_PAGES - 1)))
				release_frame(vm, frame, MM_PAGEBLOCK_ORDER);
		}
		gmem_free_maps((void **[]){ (void **)&r->backing, (void **)&r->huge,
					    (void **)&r->populated, (void **)&r->given_back }, 4);
	}
	swap_destroy(vm);
	__atomic_store_n(&vm->stats.populated_pages, 0, __ATOMIC_RELAXED);
}

/*
 * Guest RAM the guest gives back (balloon inflate, free page reporting).
 *
 * Why this is safe against everything else that moves guest pages:
 *
 * - Everything that maps, moves or frees a page of this VM does it under
 *   mem_lock: populate (fault thread, vm_guest_ptr), a 4 KiB migration and
 *   a 2 MiB assembly (both open and close their write-protect window inside
 *   mem_lock), a split, the compaction callback. So while a discard holds
 *   mem_lock no window is open and no copy is in flight from or to a frame
 *   of this VM.
 * - Those that drop mem_lock and come back check that the page is still
 *   what they think: ram_migrate finds the page through gpa_of[] and checks
 *   backing[] under mem_lock (a frame discarded meanwhile has gpa_of 0:
 *   -ENOENT, and mm/ carries out our free of a frame it has isolated when
 *   its callback returns); vm_assemble_range re-checks under mem_lock that
 *   all 512 pages are backed (a discarded one fails it, the block goes
 *   back); the collapse after an assembly marks the range PMD-mapped only
 *   if it is still RANGE_BLOCK, and MADV_COLLAPSE itself does not fill
 *   empty PTEs of a userfaultfd-armed mapping.
 * - A thread holding a host pointer from vm_guest_ptr (a device mid-request)
 *   keeps a valid address: the window never moves. After the discard the
 *   address is fresh anonymous memory armed for missing faults, so the next
 *   touch by anyone (the guest through KVM, whose MMU notifier dropped the
 *   old translation when the mapping was replaced) faults and gets a new
 *   frame, zeroed by __gmem_populate: the guest reads zeros, never stale data.
 * - The mapping is replaced before the frame is freed: freed first, the
 *   frame could go to another VM while this one still reached it.
 */

/* Tests only: runs between map_missing's mapping and its registration. */
void (*gmem_test_unarmed_hook)(uint8_t *hva, uint64_t len);
/* Tests only: runs between a stray page's copy and the mapping of the copy. */
void (*gmem_test_adopt_hook)(uint8_t *hva);

/*
 * Arm [@hva, @hva + @len) for demand faults again, as the window was at
 * creation: anonymous memory (MAP_FIXED replaces the old mapping in one
 * step, nothing is left unmapped), registered with the VM's userfaultfd in
 * missing mode, kept out of fork().
 *
 * A registration applies to a mapping that exists, so there is a moment
 * when the range is plain anonymous memory: a touch then (a device thread
 * writing through a pointer it took before the guest gave the page back,
 * a vCPU) gets a host page from outside the pool. Not made PROT_NONE for
 * that moment: such a touch would kill the VMM (SIGSEGV on a device
 * thread) or fail KVM_RUN. Instead __adopt_strays takes every page
 * touched in that moment into the pool once the registration is on.
 */
static int map_missing(struct vm *vm, uint8_t *hva, uint64_t len)
{
	struct uffdio_register reg = {
		.range = { (uintptr_t)hva, len }, .mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	if (MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
			mmap(hva, len, PROT_READ | PROT_WRITE,
			     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			     -1, 0)) == MAP_FAILED)
		return errno == ENOMEM ? -EMFILE : -errno;
	madvise(hva, len, MADV_DONTFORK);
	if (gmem_test_unarmed_hook)
		gmem_test_unarmed_hook(hva, len);
	if (ioctl(vm->uffd, UFFDIO_REGISTER, &reg) < 0)
		return -errno;
	return 0;
}

static bool page_reads_zero(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)p;

	for (size_t i = 0; i < MM_PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/*
 * Take the page at @hva (armed now) out of the window into a mapping of
 * its own, which no other thread knows. MREMAP_DONTUNMAP moves the page
 * table entry and leaves the window's mapping in place, still registered:
 * a touch from now on is a missing fault, which waits for mem_lock, so no
 * write can land in the page while it is copied and be lost. NULL: the
 * kernel refused (a kernel before 5.7); the page is then copied in place.
 */
static uint8_t *take_aside(uint8_t *hva)
{
	/* the kernel reads the new address (a hint) with DONTUNMAP: pass one */
	void *p = mremap(hva, MM_PAGE_SIZE, MM_PAGE_SIZE,
			 MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * mem_lock held: the page at @idx, touched before its range was armed and
 * now at @src, becomes a pool frame holding what was written to it. The
 * pool has no frame (or no mapping is left): false, and the caller drops
 * the page; its next touch faults to the pool like any other.
 */
static bool __adopt_stray(struct vm *vm, struct vm_region *r, uint64_t idx,
			  const uint8_t *src)
{
	uint8_t *hva = r->hva + (idx << MM_PAGE_SHIFT);
	long frame = pool_alloc_page(vm->pool, NULL, vm->owner);

	if (frame < 0)
		return false;
	memcpy(pool_frame_ptr(vm->pool, frame), src, MM_PAGE_SIZE);
	if (gmem_test_adopt_hook)
		gmem_test_adopt_hook(hva);
	if (gmem_map(vm, hva, (uint64_t)frame, MM_PAGE_SIZE)) {
		gmem_free_frame(vm, NULL, (uint64_t)frame, 0);
		return false;
	}
	account_page(vm, r, idx, frame);
	__atomic_add_fetch(&vm->discard.strays, 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * mem_lock held: the resident page at @idx (hva @p) goes into the pool if
 * it holds data, else is dropped. False: dropped.
 */
static bool __adopt_or_drop(struct vm *vm, struct vm_region *r, uint64_t idx, uint8_t *p)
{
	uint8_t *page = take_aside(p), *src = page ? page : p;
	bool kept = !page_reads_zero(src) && __adopt_stray(vm, r, idx, src);

	if (page)
		munmap(page, MM_PAGE_SIZE);
	else if (!kept)
		madvise(p, MM_PAGE_SIZE, MADV_DONTNEED);
	return kept;
}

/*
 * mem_lock held, after map_missing armed [@idx, @idx + @n) and its frames
 * went back: a page resident now was touched between the mapping and the
 * registration (from then on a touch of a missing page waits for the
 * fault thread, which waits for mem_lock). Each is first taken aside
 * (take_aside), so that a write racing its copy waits instead of being
 * lost. One that holds data is taken into the pool; one that reads zero
 * (a read, or the rest of a host huge page one touch brought in) is
 * dropped: a missing page reads zero too, and the next touch faults it in
 * from the pool. So no host page from outside the pool stays under the
 * guest.
 */
static void __adopt_strays(struct vm *vm, struct vm_region *r, uint64_t idx, uint64_t n)
{
	unsigned char vec[MM_PAGEBLOCK_PAGES];

	for (uint64_t done = 0; done < n; done += MM_PAGEBLOCK_PAGES) {
		uint64_t chunk = n - done < MM_PAGEBLOCK_PAGES ? n - done : MM_PAGEBLOCK_PAGES;
		uint8_t *base = r->hva + ((idx + done) << MM_PAGE_SHIFT);

		if (mincore(base, chunk << MM_PAGE_SHIFT, vec))
			continue;	/* only EAGAIN/ENOMEM: the range is mapped */
		for (uint64_t i = 0; i < chunk; i++)
			if ((vec[i] & 1) &&
			    !__adopt_or_drop(vm, r, idx + done + i, base + (i << MM_PAGE_SHIFT)))
				__atomic_add_fetch(&vm->discard.strays_dropped, 1,
						   __ATOMIC_RELAXED);
	}
}

/* mem_lock held: @n backed, unpinned pages from @idx leave the VM. */
static int __discard_run(struct vm *vm, struct vm_region *r, uint64_t idx,
			 uint64_t n, uint64_t *freed)
{
	uint8_t *hva = r->hva + (idx << MM_PAGE_SHIFT);
	int ret = map_missing(vm, hva, n << MM_PAGE_SHIFT);

	if (ret) {
		/* the guest keeps its pages as they were */
		gmem_map_back(vm, hva, &r->backing[idx], n, ret);
		return ret;
	}
	for (uint64_t i = idx; i < idx + n; i++) {
		uint32_t frame = r->backing[i];

		r->backing[i] = NIL_FRAME;
		vm->pool->gpa_of[frame] = 0;
		r->populated[i >> MM_PAGEBLOCK_ORDER]--;
		r->given_back[i >> MM_PAGEBLOCK_ORDER] = 1;
		gmem_free_frame(vm, NULL, frame, 0);
	}
	__atomic_sub_fetch(&vm->stats.populated_pages, n, __ATOMIC_RELAXED);
	*freed += n;
	__adopt_strays(vm, r, idx, n);
	return 0;
}

/*
 * mem_lock held: the 4 KiB-backed pages [@idx, @end) of one 2 MiB range
 * leave, in runs of backed pages (one mapping call each). A pinned frame
 * (a device ring, DMA in flight) stays: -EBUSY once the rest is done.
 */
static int __discard_pages(struct vm *vm, struct vm_region *r, uint64_t idx,
			   uint64_t end, uint64_t *freed)
{
	int busy = 0;

	while (idx < end) {
		uint64_t n = 0;
		long pinned;
		int ret;

		while (idx + n < end && r->backing[idx + n] != NIL_FRAME)
			n++;
		if (!n) {
			idx++;
			continue;
		}
		pinned = pool_frames_pinned(vm->pool, &r->backing[idx], n, NULL);
		if (pinned) {
			/* rare: page by page through this run, the pinned ones left */
			n = 1;
			pinned = pool_frames_pinned(vm->pool, &r->backing[idx], 1, NULL);
		}
		if (pinned) {
			busy = pinned < 0 ? (int)pinned : -EBUSY;
			idx++;
			continue;
		}
		ret = __discard_run(vm, r, idx, n, freed);
		if (ret)
			return ret;
		idx += n;
	}
	return busy;
}

/*
 * mem_lock held: a whole 2 MiB range backed by one order-9 block leaves;
 * the block is freed once, as one allocation (as gmem_destroy does).
 */
static int __discard_block(struct vm *vm, struct vm_region *r, uint64_t range,
			   uint64_t *freed)
{
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER;
	uint32_t block = r->backing[idx0];
	uint8_t *hva = r->hva + (idx0 << MM_PAGE_SHIFT);
	long pinned = pool_frames_pinned(vm->pool, &block, 1, NULL);
	int ret;

	if (pinned)
		return pinned < 0 ? (int)pinned : -EBUSY;
	ret = map_missing(vm, hva, MM_PAGEBLOCK_SIZE);
	if (ret) {
		/* one mapping of the block again; a later collapse makes it a PMD */
		if (gmem_map(vm, hva, block, MM_PAGEBLOCK_SIZE))
			gmem_map_back(vm, hva, &r->backing[idx0], MM_PAGEBLOCK_PAGES, ret);
		r->huge[range] = RANGE_BLOCK;
		return ret;
	}
	for (uint64_t i = 0; i < MM_PAGEBLOCK_PAGES; i++) {
		vm->pool->gpa_of[block + i] = 0;
		r->backing[idx0 + i] = NIL_FRAME;
	}
	__atomic_sub_fetch(&vm->stats.populated_pages, r->populated[range], __ATOMIC_RELAXED);
	*freed += r->populated[range];
	r->populated[range] = 0;
	r->huge[range] = RANGE_4K;
	r->given_back[range] = 1;
	gmem_free_frame(vm, NULL, block, MM_PAGEBLOCK_ORDER);
	__atomic_add_fetch(&vm->discard.blocks, 1, __ATOMIC_RELAXED);
	__adopt_strays(vm, r, idx0, MM_PAGEBLOCK_PAGES);
	return 0;
}

int gmem_discard(struct vm *vm, uint64_t gpa, uint64_t len)
{
	struct vm_region *r = gmem_region(vm, gpa, len);
	uint64_t idx, end, freed = 0;
	int ret = 0;

	if (!r || !len || ((gpa | len) & (MM_PAGE_SIZE - 1))) {
		__atomic_add_fetch(&vm->discard.failed, 1, __ATOMIC_RELAXED);
		return -EINVAL;
	}
	if (vm->cfg.ram != VM_RAM_POOL)
		return -EOPNOTSUPP;
	idx = (gpa - r->gpa) >> MM_PAGE_SHIFT;
	end = idx + (len >> MM_PAGE_SHIFT);
	pthread_mutex_lock(&vm->mem_lock);
	while (idx < end) {
		uint64_t range = idx >> MM_PAGEBLOCK_ORDER;
		uint64_t next = (range + 1) << MM_PAGEBLOCK_ORDER;
		int err;

		next = next < end ? next : end;
		if (r->huge[range] == RANGE_4K)
			err = __discard_pages(vm, r, idx, next, &freed);
		else if (next - idx == MM_PAGEBLOCK_PAGES)
			err = __discard_block(vm, r, range, &freed);
		else if (!(err = __vm_split_range(vm, r, range)))
			err = __discard_pages(vm, r, idx, next, &freed);
		if (err && !ret)
			ret = err;
		idx = next;
	}
	__atomic_add_fetch(&vm->discard.calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&vm->discard.bytes, freed << MM_PAGE_SHIFT, __ATOMIC_RELAXED);
	if (ret)
		__atomic_add_fetch(&vm->discard.failed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}
