// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the kernel loaders (vmm/boot/boot.c boot_load, which picks
 * boot_load_bzimage in vmm/boot/boot_linux.c for a Linux setup header,
 * boot_load_pvh for an ELF, the flat loader otherwise), with the command
 * line, an initrd and the ACPI tables they write. The input is the kernel
 * file; the loaders take a path and an fd, so it goes to a memfd named by
 * /proc/self/fd/N.
 *
 * The VM is fake_vm.c's, without KVM, its guest memory the VMM's own
 * (vmm/memory/guest_mem.c): 128 MiB at 0, so a header's init_size of a
 * real kernel fits and a larger one does not.
 * The initrd is a fixed 5000-byte file, placed wherever the header lets it.
 *
 * Checked besides the sanitizers: a refusal says why in a C string; an
 * accepted kernel leaves an entry point inside guest RAM and, for Linux,
 * a zero page whose e820 table and command line pointer are the loader's.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/fake_vm.h"
#include "vmm/boot/boot.h"

#define RAM_BYTES	(128ULL << 20)
#define INITRD_BYTES	5000
#define ZERO_PAGE_GPA	0x7000

static struct vm vm;
static int kernel_fd = -1;

static int memfd_path(const char *name, char *path, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return fd;
}

static void setup_once(void)
{
	char initrd[INITRD_BYTES];
	int fd;

	if (fake_vm_init(&vm, RAM_BYTES))
		abort();
	kernel_fd = memfd_path("fuzz-kernel", vm.cfg.kernel, sizeof(vm.cfg.kernel));
	fd = memfd_path("fuzz-initrd", vm.cfg.initrd, sizeof(vm.cfg.initrd));
	memset(initrd, 0x42, sizeof(initrd));
	if (write(fd, initrd, sizeof(initrd)) != sizeof(initrd))
		abort();
	strcpy(vm.cfg.console, "stdio");
	strcpy(vm.cfg.append, "quiet gpmm.run=memwork");
	vm.cfg.cpus = 2;
}

static void check_linux(void)
{
	const uint8_t *zp = fake_vm_ram(&vm) + ZERO_PAGE_GPA;
	uint32_t cmdline;

	memcpy(&cmdline, zp + 0x228, 4);
	if (zp[0x1e8] == 0 || zp[0x1e8] > 128 || cmdline != BOOT_CMDLINE_GPA)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	int ret;

	if (kernel_fd < 0)
		setup_once();
	if (ftruncate(kernel_fd, 0) || pwrite(kernel_fd, data, size, 0) != (ssize_t)size)
		abort();
	fake_vm_reset(&vm);
	memset(&vm.boot, 0, sizeof(vm.boot));
	memset(err, 0xa5, sizeof(err));
	ret = boot_load(&vm, err, sizeof(err));
	if (ret) {
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			abort();	/* a refusal must say why, in a C string */
		return 0;
	}
	if (vm.boot.rip >= RAM_BYTES)
		abort();
	if (vm.boot.is_linux && !vm.boot.prot32)
		check_linux();
	return 0;
}
