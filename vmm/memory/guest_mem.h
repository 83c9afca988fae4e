/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest RAM over the pool: a 2 MiB-aligned host window per region, each
 * 4 KiB guest page mapped MAP_FIXED|MAP_SHARED from one pool frame, and
 * a backing map from guest page to frame.
 */
#ifndef GPMM_GUEST_MEM_H
#define GPMM_GUEST_MEM_H

#include "vmm/core/vm.h"

/* A demand fault backs the aligned 64 KiB around the page (guest_mem.c). */
#define GMEM_FAULT_AROUND_ORDER	4
#define GMEM_FAULT_AROUND_PAGES	(1U << GMEM_FAULT_AROUND_ORDER)

/*
 * Move the guest page at @gpa to @new_frame (allocated by the caller from
 * the VM's pool; the VM owns it from now on) and free the old frame. The
 * guest must be stopped: paused, or in a checkpoint hook.
 */
__must_check int vm_remap_page(struct vm *vm, uint64_t gpa, uint64_t new_frame);
/* Frame backing @gpa, or -ENOENT when not populated. */
long vm_gpa_to_frame(struct vm *vm, uint64_t gpa);

/*
 * The one way the VMM and devices touch guest memory: bounds-checked.
 * Devices reach it through vm->mach; the copies are the machine's.
 */
void *vm_guest_ptr(struct vm *vm, uint64_t gpa, uint64_t len);

static inline __must_check int vm_read_guest(struct vm *vm, uint64_t gpa, void *buf,
					     uint64_t len)
{
	return machine_read_guest(&vm->mach, gpa, buf, len);
}

static inline __must_check int vm_write_guest(struct vm *vm, uint64_t gpa, const void *buf,
					      uint64_t len)
{
	return machine_write_guest(&vm->mach, gpa, buf, len);
}

/* Pages backed now; counted by the fault thread, read by anyone. */
static inline uint64_t vm_populated_pages(struct vm *vm)
{
	return __atomic_load_n(&vm->stats.populated_pages, __ATOMIC_RELAXED);
}

/*
 * mem_lock held: @range of @r was touched, or mapped anew (which drops a
 * write-protection the reclaim clock set: its writes would go unseen);
 * the touch order is what the clock's last resort goes by.
 */
static inline void gmem_range_seen(struct vm *vm, struct vm_region *r, uint64_t range)
{
	if (r->referenced)
		r->referenced[range] |= RANGE_SEEN;
	if (r->touched_at)
		r->touched_at[range] = ++vm->swap.touches;
}


/*
 * The guest gave [@gpa, @gpa + @len) back (balloon, free page reporting):
 * page-aligned, inside one region. Every backed page's frame returns to the
 * pool (a 2 MiB backing as one block when the range covers it, else split
 * first); the next touch faults in a zeroed page. Counted in vm->discard.
 * -EINVAL for a bad range, -EBUSY if a pinned page had to stay, or the
 * error of remapping (the pages concerned are then kept).
 */
__must_check int gmem_discard(struct vm *vm, uint64_t gpa, uint64_t len);
/* Tests only: called between a discard's new mapping and its registration. */
extern void (*gmem_test_unarmed_hook)(uint8_t *hva, uint64_t len);
/* Tests only: called once a page touched then is copied, before it is mapped. */
extern void (*gmem_test_adopt_hook)(uint8_t *hva);

/* The windows and the bookkeeping of guest RAM, then its KVM memory slots. */
__must_check int gmem_init(struct vm *vm, char *err, size_t errlen);
/*
 * gmem_init without the memory slots: guest memory of a VM without KVM,
 * where every access goes through vm_guest_ptr or the fault thread
 * (tests/fuzz/fake_vm.c fuzzes the devices over it).
 */
__must_check int gmem_reserve(struct vm *vm, char *err, size_t errlen);
/* Free each of @n per-region maps and leave NULL behind. */
void gmem_free_maps(void **const maps[], size_t n);
/* Unmaps the windows and returns every frame to the pool. */
void gmem_destroy(struct vm *vm);
__must_check int gmem_prefault(struct vm *vm, char *err, size_t errlen);
__must_check int gmem_uffd_start(struct vm *vm, char *err, size_t errlen);
void gmem_uffd_stop(struct vm *vm);

/* for page_move.c; mem_lock held where it says __ */
struct vm_region *gmem_region(struct vm *vm, uint64_t gpa, uint64_t len);
/* The region and page (*@idx) that @frame backs now; NULL: none of this VM's. */
struct vm_region *__gmem_frame_page(struct vm *vm, uint64_t frame, uint64_t *idx);
__must_check int gmem_map(struct vm *vm, uint8_t *hva, uint64_t frame, uint64_t len);
/* Remap @n old frames after a failed remap with error @why; fails the VM if it can't. */
void gmem_map_back(struct vm *vm, uint8_t *hva, const uint32_t *frames,
		   uint64_t n, int why);
/* Back to the pool; a refusal is counted (migstats.free_errors). */
void gmem_free_frame(struct vm *vm, struct mm_pcp *pcp, uint64_t frame, unsigned int order);
__must_check int __gmem_populate(struct vm *vm, struct vm_region *r, uint64_t idx,
		    struct mm_pcp *pcp);

#endif
