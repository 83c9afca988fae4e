// SPDX-License-Identifier: GPL-2.0
/*
 * Guest loading. The format is the file's own: a Linux setup header
 * ("HdrS" at 0x202) makes it a bzImage, an ELF header a vmlinux booted by
 * PVH, anything else a flat payload.
 *
 * Flat payloads: the file goes to 0x100000; below it the VMM builds a GDT
 * and page tables that map guest-physical memory 1:1 with 2 MiB pages, up
 * to the top of RAM or 4 GiB, whichever is higher (so a payload can touch
 * the PCI hole and get an MMIO exit instead of a page fault).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/boot/boot.h"
#include "vmm/core/vm.h"
#include "vmm/memory/guest_mem.h"

#define PTE_P		(1ULL << 0)
#define PTE_W		(1ULL << 1)
#define PTE_PS		(1ULL << 7)
#define GIB		(1ULL << 30)

static uint64_t mapped_top(const struct vm *vm)
{
	const struct vm_region *last = &vm->regions[vm->nr_regions - 1];
	uint64_t top = last->gpa + last->size;

	top = top > VM_HIGH_RAM_START ? top : VM_HIGH_RAM_START;
	return (top + GIB - 1) & ~(GIB - 1);
}

static int build_page_tables(struct vm *vm, uint64_t top)
{
	uint64_t gib = top / GIB;
	uint64_t pml4e = BOOT_PDPT_ADDR | PTE_P | PTE_W;
	int ret;

	ret = vm_write_guest(vm, BOOT_PML4_ADDR, &pml4e, sizeof(pml4e));
	for (uint64_t g = 0; g < gib && !ret; g++) {
		uint64_t pd_addr = BOOT_PD_ADDR + g * 0x1000;
		uint64_t pdpte = pd_addr | PTE_P | PTE_W;
		uint64_t *pd = vm_guest_ptr(vm, pd_addr, 0x1000);

		ret = vm_write_guest(vm, BOOT_PDPT_ADDR + g * 8, &pdpte, sizeof(pdpte));
		if (!pd)
			return -EFAULT;
		for (uint64_t i = 0; i < 512; i++)
			pd[i] = (g * GIB + (i << 21)) | PTE_P | PTE_W | PTE_PS;
	}
	return ret;
}

int boot_long_mode(struct vm *vm, uint64_t top, const uint64_t *gdt,
		   unsigned int entries)
{
	int ret = vm_write_guest(vm, BOOT_GDT_ADDR, gdt, entries * sizeof(*gdt));

	vm->boot.gdt_limit = (uint16_t)(entries * sizeof(*gdt) - 1);
	return ret ? ret : build_page_tables(vm, top);
}

static int read_payload(struct vm *vm, const char *path, char *err, size_t errlen)
{
	uint64_t room = vm->regions[0].size - GPMM_PAYLOAD_BASE;
	struct stat st;
	ssize_t n;
	void *dst;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read kernel %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		ret = -EINVAL;
		snprintf(err, errlen, "kernel %s is not a non-empty regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > room) {
		ret = -EFBIG;
		snprintf(err, errlen, "kernel %s is %lld bytes; %llu fit above 1 MiB in %llu MiB of RAM",
			 path, (long long)st.st_size, (unsigned long long)room,
			 (unsigned long long)(vm->cfg.ram_bytes >> 20));
		goto out;
	}
	dst = vm_guest_ptr(vm, GPMM_PAYLOAD_BASE, st.st_size);
	if (!dst) {
		ret = -ENOMEM;
		snprintf(err, errlen, "the pool cannot back the kernel image");
		goto out;
	}
	n = pread(fd, dst, st.st_size, 0);
	if (n != st.st_size) {
		ret = n < 0 ? -errno : -EIO;
		snprintf(err, errlen, "reading kernel %s: %s", path, strerror(-ret));
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int boot_load_flat(struct vm *vm, const char *path, char *err, size_t errlen)
{
	static const uint64_t gdt[] = {
		0,
		0x00af9b000000ffffULL,	/* 0x08: 64-bit code, DPL 0 */
		0x00cf93000000ffffULL,	/* 0x10: data, DPL 0 */
	};
	int ret;

	if (vm->regions[0].size <= GPMM_PAYLOAD_BASE) {
		snprintf(err, errlen, "RAM must be larger than 1 MiB for a flat payload");
		return -EINVAL;
	}
	ret = read_payload(vm, path, err, errlen);
	if (ret)
		return ret;
	vm->boot = (struct boot_entry){ .rip = GPMM_PAYLOAD_BASE, .cs = 0x08, .ds = 0x10 };
	ret = boot_long_mode(vm, mapped_top(vm), gdt, 3);
	if (ret)
		snprintf(err, errlen, "cannot write the boot page tables: %s",
			 strerror(-ret));
	return ret;
}

static bool is_bzimage(const uint8_t *head, ssize_t n)
{
	return n >= 0x206 && !memcmp(head + 0x202, "HdrS", 4);
}

int boot_load(struct vm *vm, char *err, size_t errlen)
{
	const char *path = vm->cfg.kernel;
	uint8_t head[0x400];
	struct stat st;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read kernel %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	n = pread(fd, head, sizeof(head), 0);
	if (S_ISREG(st.st_mode) && is_bzimage(head, n))
		ret = boot_load_bzimage(vm, fd, (uint64_t)st.st_size, err, errlen);
	else if (S_ISREG(st.st_mode) && n >= 4 && !memcmp(head, "\177ELF", 4))
		ret = boot_load_pvh(vm, fd, err, errlen);
	else
		ret = boot_load_flat(vm, path, err, errlen);
	close(fd);
	return ret;
}
