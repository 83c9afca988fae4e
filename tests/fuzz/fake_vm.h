/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM without KVM for the kernel loaders' fuzz target: guest RAM is one
 * anonymous mapping at guest address 0 with an inaccessible page on each
 * side (guarded_ram_map), so an access that escapes the bounds checks
 * faults at once instead of landing in some other allocation. fake_vm.c
 * implements vm_guest_ptr of vmm/memory/guest_mem.h in place of
 * vmm/memory/guest_mem.c. The devices' fuzz target needs no VM: it runs
 * against the machine double (tests/devices/machine_double.h).
 */
#ifndef GPMM_TESTS_FUZZ_FAKE_VM_H
#define GPMM_TESTS_FUZZ_FAKE_VM_H

#include <stdint.h>

#include "vmm/core/vm.h"

/* Map @ram bytes (a multiple of 4 KiB) as the VM's only region; 0 or -errno. */
int fake_vm_init(struct vm *vm, uint64_t ram);
/* Guest RAM reads zero again. */
void fake_vm_reset(struct vm *vm);
void fake_vm_fini(struct vm *vm);
/* Host address of guest RAM, for a harness that fills it. */
uint8_t *fake_vm_ram(struct vm *vm);

#endif
