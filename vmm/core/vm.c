// SPDX-License-Identifier: GPL-2.0
/*
 * A VM's life once built (vm_create.c builds it): its state, the pause
 * protocol, interrupts, console and power. A VM ends in one of two ways:
 * the guest asks (exit port, system event) or something fails (fault,
 * pool exhausted, bad exit); in both cases vm_request_stop records why,
 * marks the VM stopping and kicks every vCPU. Whoever owns the VM then
 * calls vm_wait and vm_destroy, which returns every frame to the pool.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "vmm/core/kvm.h"
#include "vmm/core/vcpu.h"
#include "vmm/core/vm.h"

uint64_t vm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

long vm_guest_tsc_khz(struct vm *vm)
{
	long khz;

	if (!vm->vcpus || !vm->nr_vcpus || vm->vcpus[0].fd < 0)
		return -ENODEV;
	khz = kvm_ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);
	return khz > 0 ? khz : -errno;
}

static const char *const state_names[] = {
	[VM_CREATED] = "prelaunch",
	[VM_RUNNING] = "running",
	[VM_PAUSED] = "paused",
	[VM_SHUTDOWN] = "shutdown",
	[VM_FAILED] = "internal-error",
};

const char *vm_state_name(enum vm_state state)
{
	return state_names[state];
}

static void kick_all(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
}

/*
 * The first reason to stop wins: a guest that exits while another vCPU
 * faults keeps the exit it asked for.
 */
void vm_request_stop(struct vm *vm, enum vm_state state, int code)
{
	bool first;
	vm_end_fn on_end;

	pthread_mutex_lock(&vm->lock);
	first = !vm->stopping;
	if (first) {
		__atomic_store_n(&vm->stopping, true, __ATOMIC_RELEASE);
		vm->state = state;
		vm->exit_code = code;
	}
	on_end = vm->on_end;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	kick_all(vm);
	if (first && on_end)
		on_end(vm, vm->on_end_opaque);
}

void vm_fail(struct vm *vm, struct vcpu *vcpu, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&vm->lock);
	if (!vm->stopping) {
		va_start(ap, fmt);
		vsnprintf(vm->report, sizeof(vm->report), fmt, ap);
		va_end(ap);
		strncat(vm->report, "\n", sizeof(vm->report) - strlen(vm->report) - 1);
		if (vcpu)
			vcpu_dump(vcpu, vm->report, sizeof(vm->report));
	}
	pthread_mutex_unlock(&vm->lock);
	vm_request_stop(vm, VM_FAILED, VM_FAIL_EXIT_CODE);
}

int vm_wait(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		if (__atomic_load_n(&vm->vcpus[i].started, __ATOMIC_ACQUIRE)) {
			pthread_join(vm->vcpus[i].thread, NULL);
			__atomic_store_n(&vm->vcpus[i].started, false, __ATOMIC_RELEASE);
		}
	}
	return vm->exit_code;
}


/*
 * Stop every vCPU but @self and wait until they are parked. @self is a
 * vCPU stopping the world for a checkpoint; NULL is an operator's pause
 * (QMP stop), which leaves the VM "paused" until vm_resume. Pauses nest:
 * a checkpoint during an operator's pause is fine.
 */
int vm_pause(struct vm *vm, struct vcpu *self)
{
	pthread_mutex_lock(&vm->lock);
	if (vm->stopping || (!self && vm->state != VM_RUNNING)) {
		int ret = vm->state == VM_PAUSED ? 0 : -EINVAL;

		pthread_mutex_unlock(&vm->lock);
		return ret;
	}
	vm->pause_req++;
	if (self)
		vm->parked++;
	else
		vm->state = VM_PAUSED;
	pthread_mutex_unlock(&vm->lock);
	kick_all(vm);
	pthread_mutex_lock(&vm->lock);
	while (vm->parked < vm->running_vcpus && !vm->stopping)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

int vm_resume(struct vm *vm, struct vcpu *self)
{
	pthread_mutex_lock(&vm->lock);
	if (!vm->pause_req || (!self && vm->state != VM_PAUSED)) {
		pthread_mutex_unlock(&vm->lock);
		return -EALREADY;
	}
	if (self)
		vm->parked--;
	else
		vm->state = VM_RUNNING;
	vm->pause_req--;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

enum vm_state vm_get_state(struct vm *vm)
{
	enum vm_state s;

	pthread_mutex_lock(&vm->lock);
	s = vm->state;
	pthread_mutex_unlock(&vm->lock);
	return s;
}

int vm_irq_line(struct vm *vm, unsigned int gsi, bool level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = level };

	return kvm_ioctl(vm->fd, KVM_IRQ_LINE, &irq) < 0 ? -errno : 0;
}

void vm_console_write(struct vm *vm, const char *buf, size_t len)
{
	if (vm->console)
		vm->console(vm->console_opaque, buf, len);
}

/*
 * A reset ends this run of the VM like a power-off; whoever owns it sees
 * vm->reboot and starts it again from the same configuration, so the new
 * run begins with fresh RAM and devices, as after a real reset.
 */
void vm_guest_power(struct vm *vm, bool reboot)
{
	pthread_mutex_lock(&vm->lock);
	if (!vm->stopping)
		vm->reboot = reboot;
	pthread_mutex_unlock(&vm->lock);
	vm_request_stop(vm, VM_SHUTDOWN, 0);
}
