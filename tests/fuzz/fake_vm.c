// SPDX-License-Identifier: GPL-2.0
/*
 * A VM without KVM (fake_vm.h): the real guest memory and machine, and in
 * place of vmm/core/vm.c the few calls they make into the VM's life, each
 * logged. A page of no access on each side of the guest RAM window (when
 * the address space there is free) makes an access that escapes the bounds
 * checks fault at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tests/fuzz/fake_vm.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/page_move.h"

#define GUARD		4096ULL
#define POOL_SPARE	(8ULL << 20)	/* per-thread lists, fault-around */

struct fake_vm_log fake_vm_log;

uint64_t vm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void vm_request_stop(struct vm *vm, enum vm_state state, int code)
{
	fake_vm_log.stops++;
	vm->state = state;
	vm->exit_code = code;
	__atomic_store_n(&vm->stopping, true, __ATOMIC_RELEASE);
}

void vm_fail(struct vm *vm, struct vcpu *vcpu, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vm->report, sizeof(vm->report), fmt, ap);
	va_end(ap);
	vm_request_stop(vm, VM_FAILED, VM_FAIL_EXIT_CODE);
}

void vm_guest_power(struct vm *vm, bool reboot)
{
	vm_request_stop(vm, VM_SHUTDOWN, 0);
}

int vm_irq_line(struct vm *vm, unsigned int gsi, bool level)
{
	fake_vm_log.irq_changes++;
	return 0;
}

void vm_console_write(struct vm *vm, const char *buf, size_t len)
{
	fake_vm_log.console_bytes += len;
}

/* No vCPU runs: a checkpoint has nothing to pause. */
int vm_pause(struct vm *vm, struct vcpu *self)
{
	return 0;
}

int vm_resume(struct vm *vm, struct vcpu *self)
{
	return 0;
}

static void guard_pages(const struct vm_region *r)
{
	mmap(r->hva - GUARD, GUARD, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	mmap(r->hva + r->size, GUARD, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
}

static int fail(const char *what, const char *why, int ret)
{
	fprintf(stderr, "fake_vm: %s: %s\n", what, why);
	return ret;
}

int fake_vm_init(struct vm *vm, uint64_t ram)
{
	static const struct pool_host host = { .huge = false, .release_ms = 0 };
	char err[256];
	int ret;

	memset(vm, 0, sizeof(*vm));
	vm->cfg.ram_bytes = ram;
	vm->cfg.cpus = 1;
	vm->cfg.fault = VM_FAULT_4K;
	vm->fd = vm->uffd = vm->uffd_stop = -1;
	pthread_mutex_init(&vm->mem_lock, NULL);
	pthread_mutex_init(&vm->mig.lock, NULL);
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	ret = pool_open_host((ram + POOL_SPARE + MM_PAGEBLOCK_SIZE - 1) & ~(MM_PAGEBLOCK_SIZE - 1),
			     true, &host, &vm->pool);
	if (ret)
		return fail("pool", strerror(-ret), ret);
	ret = pool_owner_register(vm->pool, &vm_ram_owner_ops, vm, &vm->owner);
	if (!ret)
		ret = pool_pcp_create(vm->pool, &vm->mem_pcp);
	if (ret)
		return fail("pool owner", strerror(-ret), ret);
	ret = gmem_reserve(vm, err, sizeof(err));
	if (!ret)
		ret = gmem_uffd_start(vm, err, sizeof(err));
	if (ret)
		return fail("guest memory", err, ret);
	guard_pages(&vm->regions[0]);
	vm_machine_init(vm);
	return 0;
}

void fake_vm_reset(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_regions; i++)
		if (gmem_discard(vm, vm->regions[i].gpa, vm->regions[i].size))
			fprintf(stderr, "fake_vm: guest RAM not all given back\n");
	memset(&fake_vm_log, 0, sizeof(fake_vm_log));
	memset(&vm->discard, 0, sizeof(vm->discard));
	vm->state = VM_CREATED;
	__atomic_store_n(&vm->stopping, false, __ATOMIC_RELEASE);
}

void fake_vm_fini(struct vm *vm)
{
	gmem_uffd_stop(vm);
	gmem_destroy(vm);
	pool_pcp_destroy(vm->mem_pcp);
	pool_owner_unregister(vm->pool, vm->owner);
	pool_close(vm->pool);
	vm->pool = NULL;
}

uint8_t *fake_vm_ram(struct vm *vm)
{
	return vm->regions[0].hva;
}
