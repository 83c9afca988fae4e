/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest RAM swapped out to a file of the VM process's own, 2 MiB at a
 * time, and faulted back in on first touch (swap.c): what lets a pool
 * lend more RAM than it holds (overcommit).
 */
#ifndef GPMM_SWAP_H
#define GPMM_SWAP_H

#include <linux/userfaultfd.h>

#include "vmm/core/vm.h"

/*
 * Before the sandbox: the swap file @cfg asks for (swap_dir "auto":
 * /var/tmp), unlinked, sized to the VM's RAM, into cfg->swap_fd (-1:
 * none asked). A warning for the operator, or "", in @err on success.
 */
__must_check int swap_file_open(struct vm_config *cfg, char *err, size_t errlen);

/*
 * The swap file (unlinked: it dies with the process, SIGKILL included) in
 * vm->cfg.swap_dir, the per-page bookkeeping and the thread that reads
 * the second userfaultfd, for a VM whose pool is overcommitted or that
 * named a directory; the VM owns cfg.swap_fd from here on (closed now when
 * it does not swap). Nothing when swap is off ("" dir, no file).
 */
__must_check int swap_init(struct vm *vm, char *err, size_t errlen);
void swap_destroy(struct vm *vm);

static inline bool swap_enabled(const struct vm *vm)
{
	return vm->swap.opened && vm->swap.fd >= 0;
}

/* mem_lock held: whether guest page @idx of @r lives in the swap file. */
static inline bool __swap_page_out(const struct vm_region *r, uint64_t idx)
{
	return r->swapped && (r->swapped[idx / 64] >> (idx % 64) & 1);
}

/* mem_lock held: any page of [@idx, @idx + @n) in the swap file. */
bool __swap_any_out(const struct vm_region *r, uint64_t idx, uint64_t n);

/*
 * mem_lock held: the contents of swapped-out page @idx into @dst (a frame
 * just allocated for it); once it is mapped, __swap_page_back says the
 * page is in again. -errno: nothing changed, the page stays out.
 */
__must_check int __swap_read_page(struct vm *vm, const struct vm_region *r, uint64_t idx,
				  void *dst);
void __swap_page_back(struct vm *vm, struct vm_region *r, uint64_t idx);
/* The same for all of 2 MiB @range into a block at @dst (pages not out: zeros). */
__must_check int __swap_read_range(struct vm *vm, const struct vm_region *r, uint64_t range,
				   void *dst);
void __swap_range_back(struct vm *vm, struct vm_region *r, uint64_t range);

/*
 * mem_lock held: write one cold 2 MiB range (never @keep_r's @keep_range,
 * the one being faulted) to the swap file and give its frames back to
 * the pool; @block: only a range backed by one 2 MiB block (a pageblock
 * freed whole). 0 when a range went, -ENOENT when none could.
 */
__must_check int __swap_reclaim(struct vm *vm, const struct vm_region *keep_r,
				uint64_t keep_range, bool block);

/*
 * The pool's lumpy reclaim asks for the 4 KiB frame @frame back (the owner
 * callback, page_move.c): its page goes to the swap file if the clock
 * thinks it cold and the VM holds more than its share; 0: gone, the pool
 * frees the frame. -EBUSY: kept (the pool moves it instead). Takes mem_lock.
 */
__must_check int swap_reclaim_frame(struct vm *vm, uint64_t frame);

/*
 * mem_lock held: arm a few ranges for the clock ahead of need, once the
 * VM holds more than its share (after a fault, on the pressure tick).
 */
void __swap_age(struct vm *vm);

/* A reclaim counter the report reads while the fault and pressure threads add to it. */
static inline void swap_count(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* Pages a VM may hold before the others' shortage is its business: RAM over the ratio. */
static inline uint64_t swap_fair_share(const struct vm *vm)
{
	return (vm->cfg.ram_bytes >> MM_PAGE_SHIFT) * 100 / vm->pool->host.overcommit_pct;
}

/*
 * The fault thread: a write-protect fault at @addr of @r outside any
 * window; true when it was the reclaim clock's sampling (handled, the
 * writer woken).
 */
bool swap_wp_fault(struct vm *vm, struct vm_region *r, uint64_t addr);

/* The fault thread polls this descriptor: faults the swap thread passed on. */
static inline int swap_forward_fd(const struct vm *vm)
{
	return vm->swap.pipe[0];
}

#endif
