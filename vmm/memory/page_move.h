/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving guest pages while the guest runs: one page moved under the vCPUs, the
 * write-protect window that makes it safe (also used by 2 MiB assembly),
 * pins, the owner callback compaction uses, and the fault thread's side.
 */
#ifndef GPMM_PAGE_MOVE_H
#define GPMM_PAGE_MOVE_H

#include <stdint.h>

#include "vmm/core/vm.h"

/*
 * Move the page at @gpa to @new_frame while the vCPUs run (no
 * write is lost: userfaultfd write-protect, copy, remap, wake). The VM
 * takes @new_frame; the old frame is returned in *@old (not freed).
 */
__must_check int vm_migrate_page(struct vm *vm, uint64_t gpa, uint64_t new_frame,
		    uint64_t *old);
/* Pin the page at @gpa in place (a device ring): never moved. */
__must_check int vm_pin_page(struct vm *vm, uint64_t gpa);
__must_check int vm_unpin_page(struct vm *vm, uint64_t gpa);
/* Stall percentile (0..100) over recent migrations, in ns. */
uint64_t vm_stall_percentile(struct vm *vm, double pct);
/* The pool owner ops of guest RAM. */
extern const struct mm_owner_ops vm_ram_owner_ops;

/*
 * Write-protect [start, start + len) of a VM's window (mem_lock held): a
 * writer there blocks until migrate_window_close. One window at a time.
 */
__must_check int migrate_window_open(struct vm *vm, uint64_t start, uint64_t len);
/* Wake the window's writers and record their stalls. */
void migrate_window_close(struct vm *vm);
/* Whether @addr is in the window open now. */
bool migrate_in_window(struct vm *vm, uint64_t addr);
/*
 * Write-protect backed guest pages outside any window (mem_lock held),
 * for the reclaim clock's sampling: a write faults to the fault thread,
 * which lifts it. -EOPNOTSUPP where the host has no write-protect faults.
 */
__must_check int migrate_protect(struct vm *vm, uint64_t start, uint64_t len);
__must_check int migrate_unprotect(struct vm *vm, uint64_t start, uint64_t len);

/* A writer hit a write-protected page at host address @addr. */
void migrate_wp_fault(struct vm *vm, uint64_t addr);
/* The fault queue was empty at @when (vm_now_ns): no write waits from before. */
void migrate_fault_queue_empty(struct vm *vm, uint64_t when);

#endif
