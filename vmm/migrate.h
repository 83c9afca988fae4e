/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live migration's side of the userfaultfd fault thread (guest_mem.c):
 * write-protect faults, and the moments the stall of each is timed from.
 */
#ifndef GPMM_MIGRATE_H
#define GPMM_MIGRATE_H

#include <stdint.h>

struct vm;

/* A writer hit a write-protected page at host address @addr. */
void migrate_wp_fault(struct vm *vm, uint64_t addr);
/* The fault queue was empty at @when (vm_now_ns): no write waits from before. */
void migrate_fault_queue_empty(struct vm *vm, uint64_t when);

#endif
