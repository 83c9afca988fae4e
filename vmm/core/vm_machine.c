// SPDX-License-Identifier: GPL-2.0
/*
 * The machine its devices see (devices/machine.h), implemented once over
 * a KVM VM: guest memory through the bounds-checked guest_mem accessors,
 * interrupt lines through KVM_IRQ_LINE, the console, power and stop
 * requests through the VM's lifecycle in vm.c. Devices get vm->mach and
 * nothing else of struct vm.
 */
#include "vmm/core/vm.h"
#include "vmm/memory/guest_mem.h"

static void *mach_guest_ptr(struct machine *m, uint64_t gpa, uint64_t len)
{
	return vm_guest_ptr(vm_of_machine(m), gpa, len);
}

static bool mach_guest_ram(struct machine *m, uint64_t gpa, uint64_t len)
{
	return gmem_region(vm_of_machine(m), gpa, len) != NULL;
}

static int mach_guest_discard(struct machine *m, uint64_t gpa, uint64_t len)
{
	return gmem_discard(vm_of_machine(m), gpa, len);
}

static int mach_irq_line(struct machine *m, unsigned int gsi, bool level)
{
	return vm_irq_line(vm_of_machine(m), gsi, level);
}

static void mach_console_write(struct machine *m, const char *buf, size_t len)
{
	vm_console_write(vm_of_machine(m), buf, len);
}

static void mach_power(struct machine *m, bool reboot)
{
	vm_guest_power(vm_of_machine(m), reboot);
}

static void mach_exit(struct machine *m, int code)
{
	vm_request_stop(vm_of_machine(m), VM_SHUTDOWN, code);
}

/*
 * The VM is paused while whoever runs it looks at the checkpoint (a test
 * that remaps guest pages, say), so no vCPU runs guest code meanwhile.
 */
static int mach_checkpoint(struct machine *m, struct vcpu *self, uint32_t n)
{
	struct vm *vm = vm_of_machine(m);
	int err, ret;

	if (!vm->checkpoint)
		return 0;
	err = vm_pause(vm, self);
	if (err)
		return err;
	err = vm->checkpoint(vm, n, vm->checkpoint_opaque);
	ret = vm_resume(vm, self);
	return err ? err : ret;
}

static bool mach_stopping(struct machine *m)
{
	return vm_is_stopping(vm_of_machine(m));
}

static uint64_t mach_now_ns(struct machine *m)
{
	return vm_now_ns();
}

static const struct machine_ops vm_machine_ops = {
	.guest_ptr = mach_guest_ptr,
	.guest_ram = mach_guest_ram,
	.guest_discard = mach_guest_discard,
	.irq_line = mach_irq_line,
	.console_write = mach_console_write,
	.power = mach_power,
	.exit = mach_exit,
	.checkpoint = mach_checkpoint,
	.stopping = mach_stopping,
	.now_ns = mach_now_ns,
};

void vm_machine_init(struct vm *vm)
{
	vm->mach.ops = &vm_machine_ops;
	vm->mach.cfg = (struct machine_config){
		.ram_bytes = vm->cfg.ram_bytes,
		.disk = vm->cfg.disk,
		.disk_readonly = vm->cfg.disk_readonly,
		.balloon = vm->cfg.balloon,
		.balloon_reporting = !vm->cfg.balloon_no_reporting,
		.net = vm->cfg.net,
		.nr_net = vm->cfg.nr_net,
	};
}
