/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 2 MiB backings of guest RAM: assembly onto one order-9 block while the
 * guest runs, split back to 4 KiB, and how much is huge-backed (ours and
 * the kernel's account).
 */
#ifndef GPMM_HUGE_BACKING_H
#define GPMM_HUGE_BACKING_H

#include "vmm/core/vm.h"

/* Back the aligned 2 MiB at @gpa with one order-9 block, live. */
__must_check int vm_assemble_range(struct vm *vm, uint64_t gpa);
/* Record MADV_COLLAPSE's answer @ret for a 2 MiB range of @r; mem_lock held. */
void __vm_range_collapsed(struct vm *vm, struct vm_region *r, uint64_t range, int ret);
/* Back an assembled 2 MiB range with 4 KiB pages again. */
__must_check int vm_split_range(struct vm *vm, uint64_t gpa);
/* The same, mem_lock held, for 2 MiB range number @range of @r. */
__must_check int __vm_split_range(struct vm *vm, struct vm_region *r, uint64_t range);
/* Pages backed in the aligned 2 MiB range at @gpa (0..512), -1 if none. */
int vm_range_populated(struct vm *vm, uint64_t gpa, bool *huge);
/* The guest gave back pages of the 2 MiB range at @gpa and has not refilled it. */
bool vm_range_given_back(struct vm *vm, uint64_t gpa);
/* Bytes of RAM on one order-9 block each (assembled), and of those, the
 * bytes MADV_COLLAPSE said it mapped by a PMD. */
uint64_t vm_block_bytes(struct vm *vm);
uint64_t vm_huge_bytes(struct vm *vm);
/*
 * The kernel's view: ShmemPmdMapped of the VM's windows in
 * /proc/self/smaps, bytes, and (if @mappings) how many host mappings
 * (VMAs) the windows take. -errno if it cannot be read.
 */
int64_t vm_huge_bytes_kernel(struct vm *vm, uint64_t *mappings);


#endif
