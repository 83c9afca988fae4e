/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM without KVM for the fuzz targets that drive guest-facing code (the
 * virtio devices, the kernel loaders): guest RAM is one anonymous mapping
 * at guest address 0 with an inaccessible page on each side, so an access
 * that escapes the bounds checks faults at once instead of landing in
 * some other allocation. fake_vm.c implements the guest memory accessors
 * of vmm/memory/guest_mem.h and the few vm.c services devices call, in place of
 * vmm/memory/guest_mem.c and vmm/core/vm.c.
 */
#ifndef GPMM_TESTS_FUZZ_FAKE_VM_H
#define GPMM_TESTS_FUZZ_FAKE_VM_H

#include <stdint.h>

#include "vmm/core/vm.h"

/* Map @ram bytes (a multiple of 4 KiB) as the VM's only region; 0 or -errno. */
int fake_vm_init(struct vm *vm, uint64_t ram);
/* Guest RAM reads zero again, the VM's counters start over; devices stay. */
void fake_vm_reset(struct vm *vm);
void fake_vm_fini(struct vm *vm);
/* Host address of guest RAM, for a harness that fills it. */
uint8_t *fake_vm_ram(struct vm *vm);

/* What the fake services saw since the last reset. */
struct fake_vm_log {
	uint64_t irq_raised;
	uint64_t console_bytes;
	uint64_t discards;
};

extern struct fake_vm_log fake_vm_log;

#endif
