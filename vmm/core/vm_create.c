// SPDX-License-Identifier: GPL-2.0
/*
 * Building a VM and taking it apart: vm_create puts together its KVM VM,
 * guest memory, devices, the loaded kernel and its vCPUs, in that order;
 * vm_start lets the vCPU threads run; vm_destroy undoes it all and gives
 * every frame back to the pool. What a VM does while it lives (pause,
 * stop, fail, interrupts, console) is vm.c's; this file alone calls into
 * memory/, boot/ and devices/ to make one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/device.h"
#include "vmm/boot/boot.h"
#include "vmm/core/kvm.h"
#include "vmm/core/vcpu.h"
#include "vmm/core/config.h"
#include "vmm/core/vm.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/page_move.h"

#define TSS_ADDR		0xfffbd000ULL
#define IDENTITY_MAP_ADDR	0xfffbc000ULL

static int check_config(const struct vm_config *cfg, char *err, size_t errlen)
{
	if (cfg->cpus < 1 || cfg->cpus > VM_MAX_CPUS) {
		snprintf(err, errlen, "cpus must be 1..%d, not %u", VM_MAX_CPUS, cfg->cpus);
		return -EINVAL;
	}
	if (config_check_ram(cfg, err, errlen))
		return -EINVAL;
	if (!cfg->kernel[0]) {
		snprintf(err, errlen, "no kernel given");
		return -EINVAL;
	}
	if (cfg->ram != VM_RAM_POOL && (cfg->prefault || cfg->balloon)) {
		snprintf(err, errlen, "RAM of the kernel's anonymous memory takes neither "
			 "prefault nor a balloon");
		return -EINVAL;
	}
	return 0;
}

static int create_kvm_vm(struct vm *vm, char *err, size_t errlen)
{
	struct kvm_pit_config pit = { .flags = 0 };
	int kvm = kvm_fd();

	if (kvm < 0) {
		snprintf(err, errlen, "KVM is not available: %s", kvm_unavailable());
		return kvm;
	}
	vm->fd = kvm_ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		snprintf(err, errlen, "KVM_CREATE_VM: %s", strerror(errno));
		return -errno;
	}
	if (kvm_ioctl(vm->fd, KVM_SET_TSS_ADDR, TSS_ADDR) < 0 ||
	    kvm_ioctl(vm->fd, KVM_SET_IDENTITY_MAP_ADDR, &(uint64_t){ IDENTITY_MAP_ADDR }) < 0 ||
	    kvm_ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0) < 0 ||
	    kvm_ioctl(vm->fd, KVM_CREATE_PIT2, &pit) < 0) {
		snprintf(err, errlen, "setting up the VM's irqchip and PIT: %s",
			 strerror(errno));
		return -errno;
	}
	return 0;
}

static int create_vcpus(struct vm *vm, char *err, size_t errlen)
{
	struct vcpu *vcpus = calloc(vm->cfg.cpus, sizeof(*vm->vcpus));

	if (!vcpus)
		return -ENOMEM;
	for (unsigned int i = 0; i < vm->cfg.cpus; i++)
		vcpus[i].fd = -1;
	/* the fault thread already runs: publish the array, then its length */
	vm->vcpus = vcpus;
	__atomic_store_n(&vm->nr_vcpus, vm->cfg.cpus, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		int ret = vcpu_init(vm, &vm->vcpus[i], i);

		if (ret) {
			snprintf(err, errlen, "creating vCPU %u: %s", i, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int vm_create(const struct vm_config *cfg, struct pool *pool,
	      struct vm **out, char *err, size_t errlen)
{
	struct vm *vm;
	int ret;

	ret = check_config(cfg, err, errlen);
	if (ret)
		return ret;
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return -ENOMEM;
	vm->stats.create_ns = vm_now_ns();
	vm->cfg = *cfg;
	vm->pool = pool;
	vm_machine_init(vm);
	vm->fd = vm->uffd = vm->uffd_stop = -1;
	vm->swap.fd = vm->swap.uffd = vm->swap.stop = vm->swap.pipe[0] = vm->swap.pipe[1] = -1;
	pthread_mutex_init(&vm->mem_lock, NULL);
	pthread_mutex_init(&vm->mig.lock, NULL);
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	vcpu_install_kick_signal();

	/* the pool's one admission, shared with every other VM it serves */
	ret = pool_admit(pool, cfg->ram_bytes, err, errlen);
	if (!ret)
		vm->admitted = cfg->ram_bytes;
	/* guest RAM is MOVABLE: compaction may move it through this owner */
	if (!ret)
		ret = pool_owner_register(pool, &vm_ram_owner_ops, vm, &vm->owner);
	if (!ret)
		ret = pool_pcp_create(pool, &vm->mem_pcp);
	if (!ret)
		ret = create_kvm_vm(vm, err, errlen);
	if (!ret)
		ret = gmem_init(vm, err, errlen);
	if (!ret && cfg->ram == VM_RAM_POOL)
		ret = gmem_uffd_start(vm, err, errlen);
	if (!ret && cfg->prefault)
		ret = gmem_prefault(vm, err, errlen);
	/* a device that refuses says why in vm->mach.why */
	if (!ret && (ret = devices_init(&vm->mach)))
		snprintf(err, errlen, "device setup: %s",
			 vm->mach.why[0] ? vm->mach.why : strerror(-ret));
	if (!ret)
		ret = boot_load(vm, err, errlen);
	if (!ret)
		ret = create_vcpus(vm, err, errlen);
	if (ret) {
		vm_destroy(vm);
		return ret;
	}
	*out = vm;
	return 0;
}

/*
 * @paused: the vCPU threads start parked, as after vm_pause, so no guest
 * instruction runs before vm_resume (QEMU's -S). Either way the call
 * returns once every vCPU thread has said its thread id.
 */
static int __vm_start(struct vm *vm, bool paused)
{
	int ret = 0;

	pthread_mutex_lock(&vm->lock);
	if (vm->state != VM_CREATED) {
		pthread_mutex_unlock(&vm->lock);
		return -EALREADY;
	}
	vm->state = paused ? VM_PAUSED : VM_RUNNING;
	if (paused)
		vm->pause_req++;
	for (unsigned int i = 0; i < vm->nr_vcpus && !ret; i++) {
		ret = vcpu_start(&vm->vcpus[i]);
		if (!ret)
			vm->running_vcpus++;
	}
	for (unsigned int i = 0; i < vm->nr_vcpus && !ret; i++)
		while (vm->vcpus[i].started && !vm->vcpus[i].tid)
			pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
	if (ret)
		vm_fail(vm, NULL, "cannot start vCPU threads: %s", strerror(-ret));
	return ret;
}

int vm_start(struct vm *vm)
{
	return __vm_start(vm, false);
}

int vm_start_paused(struct vm *vm)
{
	return __vm_start(vm, true);
}

void vm_destroy(struct vm *vm)
{
	if (!vm)
		return;
	if (!vm->stopping && vm->state != VM_CREATED)
		vm_request_stop(vm, VM_SHUTDOWN, 0);
	vm_wait(vm);
	/* no callback may reach this VM from here on */
	if (vm->owner)
		pool_owner_unregister(vm->pool, vm->owner);
	gmem_uffd_stop(vm);
	for (unsigned int i = 0; vm->vcpus && i < vm->nr_vcpus; i++)
		vcpu_exit(&vm->vcpus[i]);
	devices_exit(&vm->mach);
	gmem_destroy(vm);
	if (vm->fd >= 0)
		close(vm->fd);
	pool_pcp_destroy(vm->mem_pcp);
	pool_unadmit(vm->pool, vm->admitted);
	free(vm->vcpus);
	pthread_mutex_destroy(&vm->mem_lock);
	pthread_mutex_destroy(&vm->mig.lock);
	pthread_mutex_destroy(&vm->lock);
	pthread_cond_destroy(&vm->cond);
	free(vm);
}
