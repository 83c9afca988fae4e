// SPDX-License-Identifier: GPL-2.0
/*
 * bzImage loading by the Linux x86 boot protocol, 64-bit entry.
 *
 * The protected-mode kernel goes to 1 MiB (a relocatable kernel moves
 * itself to where it wants, 16 MiB, to decompress), the zero page is
 * filled from the file's own setup header plus what a boot loader owes
 * the kernel: its command line, the initrd, the e820 map of the VM's
 * real layout (RAM below the PCI hole and above 4 GiB, the BIOS area
 * reserved because the ACPI tables live there) and the RSDP's address.
 * vCPU 0 enters at the 64-bit entry (load address + 0x200) with the zero
 * page in %rsi, on identity page tables and a GDT whose 0x10 and 0x18
 * are the flat code and data segments the protocol asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/legacy/power.h"
#include "vmm/boot/acpi.h"
#include "vmm/boot/boot.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/core/vm.h"

#define ZERO_PAGE_GPA		0x7000ULL
#define KERNEL_GPA		0x100000ULL
#define EBDA_START		0x9fc00ULL
#define BIOS_START		ACPI_TABLES_GPA
#define BIOS_END		0x100000ULL
#define DECOMPRESS_GPA		0x1000000ULL	/* LOAD_PHYSICAL_ADDR of x86-64 */
#define IDENTITY_TOP		(4ULL << 30)
#define RESET_VECTOR_GPA	0xffff0ULL

/* struct boot_params and its setup header, by offset (boot.rst) */
#define BP_ACPI_RSDP		0x070
#define BP_EXT_RAMDISK_IMAGE	0x0c0
#define BP_EXT_RAMDISK_SIZE	0x0c4
#define BP_EXT_CMD_LINE_PTR	0x0c8
#define BP_E820_ENTRIES		0x1e8
#define BP_SETUP_SECTS		0x1f1
#define BP_BOOT_FLAG		0x1fe
#define BP_JUMP			0x200
#define BP_HEADER		0x202
#define BP_VERSION		0x206
#define BP_TYPE_OF_LOADER	0x210
#define BP_LOADFLAGS		0x211
#define BP_RAMDISK_IMAGE	0x218
#define BP_RAMDISK_SIZE		0x21c
#define BP_HEAP_END_PTR		0x224
#define BP_CMD_LINE_PTR		0x228
#define BP_INITRD_ADDR_MAX	0x22c
#define BP_XLOADFLAGS		0x236
#define BP_CMDLINE_SIZE		0x238
#define BP_INIT_SIZE		0x260
#define BP_E820_TABLE		0x2d0
#define BP_E820_MAX		128

#define LOADED_HIGH		0x01
#define CAN_USE_HEAP		0x80
#define XLF_KERNEL_64		0x01

struct zero_page {
	uint8_t b[4096];
};

static uint32_t rd32(const struct zero_page *zp, unsigned int off)
{
	uint32_t v;

	memcpy(&v, zp->b + off, 4);
	return v;
}

static uint16_t rd16(const struct zero_page *zp, unsigned int off)
{
	uint16_t v;

	memcpy(&v, zp->b + off, 2);
	return v;
}

static void wr(struct zero_page *zp, unsigned int off, uint64_t v, unsigned int len)
{
	memcpy(zp->b + off, &v, len);	/* x86 is little-endian */
}

/*
 * What this loader needs of the kernel: a protocol new enough to have a
 * 64-bit entry (2.12, xloadflags) that the kernel says it has, loading
 * high. Anything else is refused with the reason.
 */
static int check_header(const struct zero_page *zp, const char *path, char *err,
			size_t errlen)
{
	uint16_t version = rd16(zp, BP_VERSION);

	if (rd16(zp, BP_BOOT_FLAG) != 0xaa55) {
		snprintf(err, errlen, "kernel %s: no boot flag 0xaa55 in its setup header", path);
		return -ENOEXEC;
	}
	if (version < 0x020c) {
		snprintf(err, errlen, "kernel %s: boot protocol %u.%02u is too old (2.12 or later)",
			 path, version >> 8, version & 0xff);
		return -ENOEXEC;
	}
	if (!(rd16(zp, BP_XLOADFLAGS) & XLF_KERNEL_64) || !(zp->b[BP_LOADFLAGS] & LOADED_HIGH)) {
		snprintf(err, errlen, "kernel %s has no 64-bit entry point", path);
		return -ENOEXEC;
	}
	return 0;
}

static void e820_add(struct zero_page *zp, uint64_t addr, uint64_t size, uint32_t type)
{
	unsigned int n = zp->b[BP_E820_ENTRIES];
	unsigned int off = BP_E820_TABLE + n * 20;

	if (n >= BP_E820_MAX || !size)
		return;
	wr(zp, off, addr, 8);
	wr(zp, off + 8, size, 8);
	wr(zp, off + 16, type, 4);
	zp->b[BP_E820_ENTRIES] = (uint8_t)(n + 1);
}

/*
 * The VM's real layout: RAM below the PCI hole and above 4 GiB, the EBDA
 * and BIOS area reserved (the ACPI tables and the reset vector live
 * there). The same map for the e820 table and PVH's memory map.
 */
unsigned int boot_memory_map(const struct vm *vm, struct boot_mem_entry *map)
{
	const struct vm_region *low = &vm->regions[0];
	unsigned int n = 0;

	map[n++] = (struct boot_mem_entry){ 0, EBDA_START, E820_RAM };
	map[n++] = (struct boot_mem_entry){ EBDA_START, 0xa0000 - EBDA_START, E820_RESERVED };
	map[n++] = (struct boot_mem_entry){ BIOS_START, BIOS_END - BIOS_START, E820_RESERVED };
	map[n++] = (struct boot_mem_entry){ BIOS_END, low->size - BIOS_END, E820_RAM };
	for (unsigned int i = 1; i < vm->nr_regions; i++)
		map[n++] = (struct boot_mem_entry){ vm->regions[i].gpa, vm->regions[i].size,
						    E820_RAM };
	return n;
}

static void build_e820(struct zero_page *zp, const struct vm *vm)
{
	struct boot_mem_entry map[BOOT_MEM_ENTRIES];
	unsigned int n = boot_memory_map(vm, map);

	for (unsigned int i = 0; i < n; i++)
		e820_add(zp, map[i].addr, map[i].size, map[i].type);
}

int boot_copy_from_file(struct vm *vm, int fd, uint64_t off, uint64_t gpa, uint64_t len)
{
	uint8_t *dst = vm_guest_ptr(vm, gpa, len);

	if (!dst)
		return -ENOMEM;
	while (len) {
		ssize_t n = pread(fd, dst, len, (off_t)off);

		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		dst += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* gpmm's own part first, so the operator's words can override it. */
int boot_write_cmdline(struct vm *vm, uint32_t max, char *err, size_t errlen)
{
	char line[sizeof(vm->cfg.append) + 64];
	int n;

	n = snprintf(line, sizeof(line), "%s%s",
		     strcmp(vm->cfg.console, "none") ? "console=ttyS0 " : "", vm->cfg.append);
	if (n < 0 || (uint32_t)n > max || (uint64_t)n >= BOOT_CMDLINE_MAX) {
		snprintf(err, errlen, "the kernel command line is %d bytes; this kernel takes %u",
			 n, max);
		return -E2BIG;
	}
	return vm_write_guest(vm, BOOT_CMDLINE_GPA, line, (uint64_t)n + 1);
}

static int write_cmdline(struct vm *vm, struct zero_page *zp, char *err, size_t errlen)
{
	wr(zp, BP_CMD_LINE_PTR, BOOT_CMDLINE_GPA, 4);
	wr(zp, BP_EXT_CMD_LINE_PTR, BOOT_CMDLINE_GPA >> 32, 4);
	return boot_write_cmdline(vm, rd32(zp, BP_CMDLINE_SIZE), err, errlen);
}

/*
 * The initrd goes as high as the kernel allows (@limit) below the PCI
 * hole, page aligned, and must stay clear of the kernel (up to @low).
 * Nothing to do without one: *size stays 0.
 */
int boot_load_initrd(struct vm *vm, uint64_t limit, uint64_t low, uint64_t *addr,
		     uint64_t *size, char *err, size_t errlen)
{
	const char *path = vm->cfg.initrd;
	struct stat st;
	int fd, ret;

	*addr = *size = 0;
	if (!path[0])
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = fd < 0 ? -errno : -EINVAL;
		snprintf(err, errlen, "cannot read initrd %s: %s", path,
			 fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	if (limit > vm->regions[0].size)
		limit = vm->regions[0].size;
	*addr = (limit - (uint64_t)st.st_size) & ~0xfffULL;
	if ((uint64_t)st.st_size > limit || *addr < low) {
		ret = -E2BIG;
		snprintf(err, errlen, "initrd %s (%lld bytes) does not fit between the kernel "
			 "(up to %llu MiB) and %llu MiB: give the VM more RAM", path,
			 (long long)st.st_size, (unsigned long long)(low >> 20),
			 (unsigned long long)(limit >> 20));
		goto out;
	}
	ret = boot_copy_from_file(vm, fd, 0, *addr, (uint64_t)st.st_size);
	if (ret)
		snprintf(err, errlen, "loading initrd %s: %s", path, strerror(-ret));
	else
		*size = (uint64_t)st.st_size;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int load_initrd(struct vm *vm, struct zero_page *zp, uint64_t kernel_end,
		       char *err, size_t errlen)
{
	uint64_t addr, size;
	int ret = boot_load_initrd(vm, (uint64_t)rd32(zp, BP_INITRD_ADDR_MAX) + 1, kernel_end,
				   &addr, &size, err, errlen);

	if (ret || !size)
		return ret;
	wr(zp, BP_RAMDISK_IMAGE, addr, 4);
	wr(zp, BP_RAMDISK_SIZE, size, 4);
	wr(zp, BP_EXT_RAMDISK_IMAGE, addr >> 32, 4);
	wr(zp, BP_EXT_RAMDISK_SIZE, size >> 32, 4);
	return 0;
}

/*
 * A hardware-reduced ACPI guest without EFI reboots through "the BIOS":
 * Linux tries EFI, then jumps to the real-mode reset vector F000:FFF0.
 * There is no BIOS here, so the vector holds the few instructions that
 * press our reset register instead of running off into zeroed memory.
 */
int boot_write_reset_vector(struct vm *vm)
{
	static const uint8_t stub[] = {
		0xba, PM_RESET_PORT & 0xff, PM_RESET_PORT >> 8,	/* mov dx, reset port */
		0xb0, PM_RESET_VALUE,				/* mov al, value */
		0xee,						/* out dx, al */
		0xf4,						/* hlt */
		0xeb, 0xfd,					/* jmp hlt */
	};

	return vm_write_guest(vm, RESET_VECTOR_GPA, stub, sizeof(stub));
}

int boot_load_bzimage(struct vm *vm, int fd, uint64_t size, char *err, size_t errlen)
{
	static const uint64_t gdt[] = {
		0,
		0,
		0x00af9b000000ffffULL,	/* 0x10 __BOOT_CS: 64-bit code */
		0x00cf93000000ffffULL,	/* 0x18 __BOOT_DS: data */
	};
	const char *path = vm->cfg.kernel;
	struct zero_page zp = { { 0 } };
	uint64_t setup_size, kernel_size, kernel_end, rsdp;
	unsigned int hdr_end;
	int ret;

	if (pread(fd, zp.b, sizeof(zp.b), 0) != (ssize_t)sizeof(zp.b)) {
		snprintf(err, errlen, "kernel %s is too short for a bzImage", path);
		return -ENOEXEC;
	}
	ret = check_header(&zp, path, err, errlen);
	if (ret)
		return ret;
	/* only the setup header is the kernel's to give; the rest is ours */
	hdr_end = BP_JUMP + 2 + zp.b[BP_JUMP + 1];
	memset(zp.b, 0, BP_SETUP_SECTS);
	memset(zp.b + hdr_end, 0, sizeof(zp.b) - hdr_end);

	setup_size = ((uint64_t)(zp.b[BP_SETUP_SECTS] ? zp.b[BP_SETUP_SECTS] : 4) + 1) * 512;
	if (setup_size >= size) {
		snprintf(err, errlen, "kernel %s: setup (%llu bytes) is the whole file", path,
			 (unsigned long long)setup_size);
		return -ENOEXEC;
	}
	kernel_size = size - setup_size;
	kernel_end = DECOMPRESS_GPA + rd32(&zp, BP_INIT_SIZE);
	if (kernel_end < KERNEL_GPA + kernel_size)
		kernel_end = KERNEL_GPA + kernel_size;
	if (kernel_end > vm->regions[0].size) {
		snprintf(err, errlen, "kernel %s needs %llu MiB of RAM to decompress; the VM has %llu",
			 path, (unsigned long long)((kernel_end + (1 << 20) - 1) >> 20),
			 (unsigned long long)(vm->cfg.ram_bytes >> 20));
		return -E2BIG;
	}
	ret = boot_copy_from_file(vm, fd, setup_size, KERNEL_GPA, kernel_size);
	if (ret) {
		snprintf(err, errlen, "loading kernel %s: %s", path, strerror(-ret));
		return ret;
	}
	zp.b[BP_TYPE_OF_LOADER] = 0xff;
	zp.b[BP_LOADFLAGS] |= CAN_USE_HEAP;
	wr(&zp, BP_HEAP_END_PTR, 0xfe00, 2);
	ret = write_cmdline(vm, &zp, err, errlen);
	if (!ret)
		ret = load_initrd(vm, &zp, kernel_end, err, errlen);
	if (ret)
		return ret;
	ret = acpi_build(vm, &rsdp);
	if (ret) {
		snprintf(err, errlen, "cannot build the ACPI tables: %s", strerror(-ret));
		return ret;
	}
	wr(&zp, BP_ACPI_RSDP, rsdp, 8);
	build_e820(&zp, vm);

	vm->boot = (struct boot_entry){
		.is_linux = true,
		.rip = KERNEL_GPA + 0x200,
		.rsi = ZERO_PAGE_GPA,
		.cs = 0x10,
		.ds = 0x18,
	};
	ret = vm_write_guest(vm, ZERO_PAGE_GPA, &zp, sizeof(zp));
	if (!ret)
		ret = boot_write_reset_vector(vm);
	if (!ret)
		ret = boot_long_mode(vm, IDENTITY_TOP, gdt, 4);
	if (ret)
		snprintf(err, errlen, "cannot write the boot structures: %s", strerror(-ret));
	return ret;
}
