/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The watermarks of an overcommitted pool and the reclaim ladder they
 * drive in one VM process (pressure.c): balloon pressure first, swap
 * after it.
 */
#ifndef GPMM_PRESSURE_H
#define GPMM_PRESSURE_H

#include "vmm/core/vm.h"

/*
 * Once a second at most (the assembler's thread calls it, under
 * assembler.lock): below the low watermark a VM holding more than its
 * share gives memory back, by its balloon while the guest follows, else
 * by swap; above the high watermark the balloon gets back what pressure
 * took from it, a step at a time.
 */
void pressure_balance(struct vm *vm);

#endif
