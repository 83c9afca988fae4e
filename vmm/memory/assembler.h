/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 2 MiB assembler: one thread per daemon that walks every VM's
 * aligned 2 MiB ranges and moves scattered ones onto one order-9 block.
 */
#ifndef GPMM_ASSEMBLER_H
#define GPMM_ASSEMBLER_H

#include "vmm/core/vm.h"

struct assembler;

__must_check int assembler_start(struct assembler **out, unsigned int interval_ms);
void assembler_stop(struct assembler *a);
__must_check int assembler_add(struct assembler *a, struct vm *vm);
/* Returns once the assembler no longer touches @vm. */
void assembler_remove(struct assembler *a, struct vm *vm);
/*
 * The rate limit: add one tick of @interval_ms to @bucket_ns (capped at a
 * second) and return how many ranges it pays for at @rate a second
 * (UINT64_MAX for no limit). The caller subtracts what it spends.
 */
uint64_t assembler_refill(uint64_t *bucket_ns, unsigned int rate,
			  unsigned int interval_ms);
/* One pass over @vm now (tests, benchmarks); ranges assembled. */
unsigned int assembler_pass(struct vm *vm);

#endif
