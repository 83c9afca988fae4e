/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM without KVM for the fuzz targets: its guest memory is the VMM's own
 * (vmm/memory/guest_mem.c over a pool of this process's mm/, userfaultfd
 * and its fault thread), made by gmem_reserve instead of gmem_init, and
 * its devices see it through the VMM's machine (vmm/core/vm_machine.c). So
 * the bounds checks, populate and gmem_discard a fuzzed input reaches are
 * the real ones. What needs KVM or vCPU threads (vm.c) is replaced here:
 * interrupt lines, the console, power and stop requests are logged.
 *
 * Needs what gpmm needs: userfaultfd (root, or access to /dev/userfaultfd
 * or vm.unprivileged_userfaultfd=1).
 */
#ifndef GPMM_TESTS_FUZZ_FAKE_VM_H
#define GPMM_TESTS_FUZZ_FAKE_VM_H

#include <stdint.h>

#include "vmm/core/vm.h"

/* What the VM's machine was asked besides guest memory. */
struct fake_vm_log {
	uint64_t irq_changes;
	uint64_t console_bytes;
	uint64_t stops;			/* power off, reset, exit, failure */
};

/*
 * @ram bytes (a multiple of 4 KiB, below 3 GiB) of guest RAM at guest
 * address 0 from a pool of its own; vm->mach is the VMM's machine, its
 * config from vm->cfg. 0 or -errno, the reason on stderr.
 */
int fake_vm_init(struct vm *vm, uint64_t ram);
/*
 * All guest RAM given back (gmem_discard): it reads zero again; the log
 * and the discard counts start over, the VM is not stopping.
 */
void fake_vm_reset(struct vm *vm);
void fake_vm_fini(struct vm *vm);
/* Host address of guest RAM: a harness's raw touch faults in through the fault thread. */
uint8_t *fake_vm_ram(struct vm *vm);
extern struct fake_vm_log fake_vm_log;

#endif
