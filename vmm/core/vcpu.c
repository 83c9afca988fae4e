// SPDX-License-Identifier: GPL-2.0
/*
 * vCPU threads. The run loop is a flat switch over exit reasons that hands
 * I/O to the device bus; it never allocates guest memory itself (pages
 * come through userfaultfd or the accessor).
 *
 * Stopping: whoever wants the vCPU out of KVM_RUN sets run->immediate_exit
 * and sends SIGUSR1. The flag covers a signal that lands before KVM_RUN,
 * the signal one that lands inside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/device.h"
#include "vmm/boot/boot.h"
#include "vmm/core/kvm.h"
#include "vmm/sys/sandbox.h"
#include "vmm/core/vcpu.h"
#include "vmm/core/vm.h"

#define KICK_SIGNAL	SIGUSR1

static void kick_handler(int sig)
{
}

void vcpu_install_kick_signal(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	sigemptyset(&sa.sa_mask);
	sigaction(KICK_SIGNAL, &sa, NULL);
}

/*
 * What KVM supports, plus what a VMM owes its guest: the hypervisor bit
 * (without it Linux never looks for KVM's leaves: no kvmclock, no TSC
 * frequency, a guest that thinks it runs on bare hardware), and a
 * topology that matches the MADT: N CPUs, one thread each, APIC id =
 * vCPU index. No cmpxchg16b (DESIGN.md: the emulator).
 */
static void fix_cpuid_entry(struct kvm_cpuid_entry2 *e, unsigned int index,
			    unsigned int cpus)
{
	unsigned int shift = 0;

	while ((1U << shift) < cpus)
		shift++;
	switch (e->function) {
	case 1:
		e->ebx = (e->ebx & 0x0000ffff) | (index << 24) | (cpus << 16);
		e->ecx &= ~(1U << 13);
		e->ecx |= 1U << 31;
		if (cpus > 1)
			e->edx |= 1U << 28;	/* HTT: ebx[23:16] is valid */
		break;
	case 0xb:
	case 0x1f:
		if (e->index == 0) {		/* SMT level: one thread a core */
			e->eax = 0;
			e->ebx = 1;
			e->ecx = (1U << 8) | e->index;
		} else if (e->index == 1) {	/* core level: every vCPU */
			e->eax = shift;
			e->ebx = cpus;
			e->ecx = (2U << 8) | e->index;
		} else {
			e->eax = e->ebx = 0;
			e->ecx = e->index;
		}
		e->edx = index;
		break;
	case 0x80000008:
		e->ecx = (e->ecx & ~0xf0ffU) | (shift << 12) | (cpus - 1);
		break;
	}
}

static int vcpu_set_cpuid(struct vcpu *vcpu)
{
	const struct kvm_cpuid2 *host = kvm_supported_cpuid();
	size_t size = sizeof(*host) + host->nent * sizeof(host->entries[0]);
	struct kvm_cpuid2 *c = malloc(size);
	int ret;

	if (!c)
		return -ENOMEM;
	memcpy(c, host, size);
	for (unsigned int i = 0; i < c->nent; i++)
		fix_cpuid_entry(&c->entries[i], vcpu->index, vcpu->vm->cfg.cpus);
	ret = kvm_ioctl(vcpu->fd, KVM_SET_CPUID2, c) < 0 ? -errno : 0;
	free(c);
	return ret;
}

int vcpu_init(struct vm *vm, struct vcpu *vcpu, unsigned int index)
{
	int ret;

	vcpu->vm = vm;
	vcpu->index = index;
	vcpu->fd = kvm_ioctl(vm->fd, KVM_CREATE_VCPU, index);
	if (vcpu->fd < 0)
		return -errno;
	vcpu->run_size = kvm_vcpu_mmap_size();
	vcpu->run = MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
				mmap(NULL, vcpu->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				     vcpu->fd, 0));
	if (vcpu->run == MAP_FAILED) {
		vcpu->run = NULL;
		return -errno;
	}
	ret = vcpu_set_cpuid(vcpu);
	if (!ret)
		ret = vcpu_setup_boot(vcpu);
	return ret;
}

void vcpu_exit(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->run_size);
	if (vcpu->fd > 0)
		close(vcpu->fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
}

static void set_segment(struct kvm_segment *s, uint16_t sel, uint8_t type,
			bool code64)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = !code64, .s = 1, .l = code64, .g = 1,
	};
}

/*
 * Every vCPU of a flat payload starts at once at the entry; a Linux guest
 * starts on vCPU 0 alone, the others stay as KVM made them (waiting for
 * the INIT/SIPI the kernel sends through its local APIC).
 */
int vcpu_setup_boot(struct vcpu *vcpu)
{
	const struct boot_entry *b = &vcpu->vm->boot;
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct kvm_sregs sregs;
	struct kvm_regs regs = {
		.rip = b->rip,
		.rflags = 0x2,
	};

	if (b->is_linux && vcpu->index)
		return 0;
	if (b->prot32) {
		regs.rbx = b->rsi;
	} else if (b->is_linux) {
		regs.rsi = b->rsi;
	} else {
		regs.rdi = vcpu->vm->cfg.ram_bytes;
		regs.rsi = vcpu->index;
		regs.rdx = vcpu->vm->nr_vcpus;
		regs.rsp = GPMM_PAYLOAD_BASE - vcpu->index * GPMM_STACK_STRIDE;
	}
	if (kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	set_segment(&sregs.cs, b->cs, 0xb, !b->prot32);
	set_segment(&sregs.ds, b->ds, 0x3, false);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.gdt.base = BOOT_GDT_ADDR;
	sregs.gdt.limit = b->gdt_limit;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;
	if (b->prot32) {
		sregs.cr0 = 0x11;			/* ET PE: no paging */
		sregs.cr4 = 0;
		sregs.efer = 0;
	} else {
		sregs.cr3 = BOOT_PML4_ADDR;
		sregs.cr4 = 1U << 5;			/* PAE */
		sregs.cr0 = 0x80050033;			/* PG WP NE ET MP PE, AM */
		sregs.efer = (1U << 8) | (1U << 10);	/* LME, LMA */
	}
	if (kvm_ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0 ||
	    kvm_ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return kvm_ioctl(vcpu->fd, KVM_SET_MP_STATE, &mp) < 0 ? -errno : 0;
}

void vcpu_dump(struct vcpu *vcpu, char *buf, size_t len)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	size_t used = strlen(buf);

	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, &r) < 0 ||
	    kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &s) < 0)
		return;
	snprintf(buf + used, len - used,
		 "vcpu %u: rip %016llx rsp %016llx rflags %08llx\n"
		 "  rax %016llx rbx %016llx rcx %016llx rdx %016llx\n"
		 "  rsi %016llx rdi %016llx rbp %016llx\n"
		 "  cr0 %08llx cr3 %08llx cr4 %08llx efer %llx cs %04x\n",
		 vcpu->index, r.rip, r.rsp, r.rflags, r.rax, r.rbx, r.rcx, r.rdx,
		 r.rsi, r.rdi, r.rbp, s.cr0, s.cr3, s.cr4, s.efer, s.cs.selector);
}

static int handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;

	for (uint32_t i = 0; i < run->io.count; i++) {
		int ret = dev_pio(&vcpu->vm->mach, vcpu, run->io.port, data,
				  run->io.size, is_write);

		/* an unclaimed port reads as all ones, as on a PC */
		if (ret == -ENODEV && !is_write)
			memset(data, 0xff, run->io.size);
		else if (ret && ret != -ENODEV)
			return ret;
		data += run->io.size;
	}
	return 0;
}

static int handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	int ret = dev_mmio(&vcpu->vm->mach, vcpu, run->mmio.phys_addr, run->mmio.data,
			   run->mmio.len, run->mmio.is_write);

	if (ret == -ENODEV)
		vm_fail(vcpu->vm, vcpu, "guest %s %u bytes at unmapped MMIO address 0x%llx",
			run->mmio.is_write ? "wrote" : "read", run->mmio.len,
			(unsigned long long)run->mmio.phys_addr);
	return ret;
}

/* One exit; a non-zero return ends the loop (the VM is already failed). */
static int handle_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	int ret;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		ret = handle_io(vcpu);
		if (ret)
			vm_fail(vcpu->vm, vcpu, "device error on port 0x%x: %s",
				run->io.port, strerror(-ret));
		return ret;
	case KVM_EXIT_MMIO:
		return handle_mmio(vcpu);
	case KVM_EXIT_INTR:
	case KVM_EXIT_HLT:
		return 0;
	case KVM_EXIT_SHUTDOWN:
		vm_fail(vcpu->vm, vcpu, "triple fault (KVM_EXIT_SHUTDOWN)");
		return -EFAULT;
	case KVM_EXIT_FAIL_ENTRY:
		vm_fail(vcpu->vm, vcpu, "VM entry failed, hardware reason 0x%llx",
			(unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		return -EFAULT;
	case KVM_EXIT_INTERNAL_ERROR:
		vm_fail(vcpu->vm, vcpu, "KVM internal error, suberror %u",
			run->internal.suberror);
		return -EFAULT;
	case KVM_EXIT_SYSTEM_EVENT:
		vm_request_stop(vcpu->vm, VM_SHUTDOWN, 0);
		return 0;
	default:
		vm_fail(vcpu->vm, vcpu, "unhandled exit reason %u", run->exit_reason);
		return -EFAULT;
	}
}

/*
 * Park while the VM is paused; false once the VM is stopping. Called with
 * vm->lock held.
 */
static bool __vcpu_wait_runnable(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;

	while (vm->pause_req && !vm->stopping) {
		vm->parked++;
		pthread_cond_broadcast(&vm->cond);
		while (vm->pause_req && !vm->stopping)
			pthread_cond_wait(&vm->cond, &vm->lock);
		vm->parked--;
	}
	return !vm->stopping;
}

/* The thread's own allow-list, before it runs guest code. */
static int vcpu_sandbox(struct vcpu *vcpu)
{
	char err[256];

	if (!sandbox_enter_vcpu(err, sizeof(err)))
		return 0;
	vm_fail(vcpu->vm, vcpu, "%s", err);
	return -1;
}

/*
 * Fault injection's "syscall" site: a call no vCPU thread may make (an IPv4
 * socket), which is how a test shows that the filter ends this process and
 * nothing else, and that --no-seccomp lets it through.
 */
static void forbidden_call_if_injected(void)
{
	int fd;

	if (!mm_fault_hit(MM_FAULT_SYSCALL))
		return;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd >= 0)
		close(fd);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	char name[16];
	sigset_t set;

	snprintf(name, sizeof(name), "vcpu%u", vcpu->index);
	pthread_setname_np(pthread_self(), name);
	sigemptyset(&set);
	sigaddset(&set, KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	pthread_mutex_lock(&vm->lock);
	vcpu->tid = gettid();
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	if (vm->seccomp && vcpu_sandbox(vcpu))
		goto out;
	forbidden_call_if_injected();

	for (;;) {
		bool go;

		pthread_mutex_lock(&vm->lock);
		go = __vcpu_wait_runnable(vcpu);
		pthread_mutex_unlock(&vm->lock);
		if (!go)
			break;
		if (kvm_ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			__atomic_store_n(&vcpu->run->immediate_exit, 0, __ATOMIC_RELAXED);
			if (errno == EINTR || errno == EAGAIN)
				continue;
			vm_fail(vm, vcpu, "KVM_RUN: %s", strerror(errno));
			break;
		}
		if (!__atomic_load_n(&vm->stats.first_exit_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&vm->stats.first_exit_ns, vm_now_ns(),
					 __ATOMIC_RELAXED);
		__atomic_add_fetch(&vm->stats.exits, 1, __ATOMIC_RELAXED);
		if (handle_exit(vcpu))
			break;
	}
out:
	pthread_mutex_lock(&vm->lock);
	vm->running_vcpus--;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return NULL;
}

int vcpu_start(struct vcpu *vcpu)
{
	sigset_t set, old;
	int ret;

	/* the thread unblocks the kick signal itself, once it can take it */
	sigemptyset(&set);
	sigaddset(&set, KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	ret = -pthread_create(&vcpu->thread, NULL, vcpu_thread, vcpu);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&vcpu->started, !ret, __ATOMIC_RELEASE);
	return ret;
}

void vcpu_kick(struct vcpu *vcpu)
{
	if (!__atomic_load_n(&vcpu->started, __ATOMIC_ACQUIRE) || !vcpu->run)
		return;
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(vcpu->thread, KICK_SIGNAL);
}
