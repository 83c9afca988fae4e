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

#endif
