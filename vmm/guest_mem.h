/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest RAM over the pool: a 2 MiB-aligned host window per region, each
 * 4 KiB guest page mapped MAP_FIXED|MAP_SHARED from one pool frame, and
 * a backing map from guest page to frame.
 */
#ifndef GPMM_GUEST_MEM_H
#define GPMM_GUEST_MEM_H

#include "vmm/vm.h"

int gmem_init(struct vm *vm, char *err, size_t errlen);
/* Unmaps the windows and returns every frame to the pool. */
void gmem_destroy(struct vm *vm);
int gmem_prefault(struct vm *vm, char *err, size_t errlen);
int gmem_uffd_start(struct vm *vm, char *err, size_t errlen);
void gmem_uffd_stop(struct vm *vm);

/* for migrate.c; mem_lock held where it says __ */
struct vm_region *gmem_region(struct vm *vm, uint64_t gpa, uint64_t len);
int gmem_map(struct vm *vm, uint8_t *hva, uint64_t frame, uint64_t len);
/* Back to the pool; a refusal is counted (migstats.free_errors). */
void gmem_free_frame(struct vm *vm, struct mm_pcp *pcp, uint64_t frame);
int __gmem_populate(struct vm *vm, struct vm_region *r, uint64_t idx,
		    struct mm_pcp *pcp);

#endif
