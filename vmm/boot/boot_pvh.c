// SPDX-License-Identifier: GPL-2.0
/*
 * Uncompressed vmlinux (ELF) by the PVH boot protocol: the kernel's ELF
 * note XEN_ELFNOTE_PHYS32_ENTRY names a 32-bit entry point that expects
 * protected mode without paging, flat segments, and in %ebx the physical
 * address of an hvm_start_info: command line, modules (the initrd), the
 * RSDP and the memory map. No decompression stage: the segments go
 * where their physical addresses say.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/boot/acpi.h"
#include "vmm/boot/boot.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/core/vm.h"

#define START_INFO_GPA		0x6000ULL
#define MODLIST_GPA		(START_INFO_GPA + 0x100)
#define MEMMAP_GPA		(START_INFO_GPA + 0x200)
#define XEN_ELFNOTE_PHYS32_ENTRY	18
#define HVM_START_MAGIC		0x336ec578
#define PVH_PHDRS_MAX		64

struct hvm_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr, size, cmdline_paddr, reserved;
};

struct hvm_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
};

/* The entry from the notes of one PT_NOTE segment; 0 when it has none. */
static uint32_t find_pvh_entry(int fd, const Elf64_Phdr *ph)
{
	uint8_t buf[4096];
	size_t len = ph->p_filesz < sizeof(buf) ? ph->p_filesz : sizeof(buf);
	size_t off = 0;

	if (pread(fd, buf, len, (off_t)ph->p_offset) != (ssize_t)len)
		return 0;
	while (off + sizeof(Elf64_Nhdr) <= len) {
		const Elf64_Nhdr *n = (const Elf64_Nhdr *)(buf + off);
		size_t name = off + sizeof(*n);
		size_t desc = name + ((n->n_namesz + 3) & ~3U);
		uint32_t entry;

		if (n->n_namesz > len || n->n_descsz > len || desc + n->n_descsz > len)
			return 0;
		if (n->n_type == XEN_ELFNOTE_PHYS32_ENTRY && n->n_namesz == 4 &&
		    !memcmp(buf + name, "Xen", 4) && n->n_descsz >= 4) {
			memcpy(&entry, buf + desc, 4);
			return entry;
		}
		off = desc + ((n->n_descsz + 3) & ~3U);
	}
	return 0;
}

/*
 * Every loadable segment inside the low RAM region, above the boot
 * structures; returns the highest byte used so the initrd stays clear.
 */
static int load_segments(struct vm *vm, int fd, const Elf64_Phdr *ph, unsigned int n,
			 uint64_t *end, char *err, size_t errlen)
{
	*end = 0;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t top = ph[i].p_paddr + ph[i].p_memsz;
		int ret;

		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_filesz > ph[i].p_memsz || top < ph[i].p_paddr ||
		    ph[i].p_paddr < 0x100000 || top > vm->regions[0].size) {
			snprintf(err, errlen, "kernel %s: segment %u at 0x%llx+0x%llx is not inside "
				 "the VM's %llu MiB above 1 MiB", vm->cfg.kernel, i,
				 (unsigned long long)ph[i].p_paddr,
				 (unsigned long long)ph[i].p_memsz,
				 (unsigned long long)(vm->regions[0].size >> 20));
			return -E2BIG;
		}
		ret = boot_copy_from_file(vm, fd, ph[i].p_offset, ph[i].p_paddr, ph[i].p_filesz);
		/* the rest of the segment (bss) must read as zeros: it may not be fresh */
		if (!ret && ph[i].p_memsz > ph[i].p_filesz) {
			uint8_t *z = vm_guest_ptr(vm, ph[i].p_paddr + ph[i].p_filesz,
						  ph[i].p_memsz - ph[i].p_filesz);

			if (z)
				memset(z, 0, ph[i].p_memsz - ph[i].p_filesz);
			else
				ret = -ENOMEM;
		}
		if (ret) {
			snprintf(err, errlen, "loading kernel %s: %s", vm->cfg.kernel, strerror(-ret));
			return ret;
		}
		if (top > *end)
			*end = top;
	}
	return 0;
}

/* The entry must be code the loader put in place, not wherever a note says. */
static bool entry_loaded(const Elf64_Phdr *ph, unsigned int n, uint32_t entry)
{
	for (unsigned int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && entry >= ph[i].p_paddr &&
		    entry - ph[i].p_paddr < ph[i].p_filesz)
			return true;
	return false;
}

static int write_start_info(struct vm *vm, uint64_t rsdp, uint64_t initrd, uint64_t size)
{
	struct boot_mem_entry map[BOOT_MEM_ENTRIES];
	struct hvm_memmap_entry mm[BOOT_MEM_ENTRIES];
	unsigned int n = boot_memory_map(vm, map);
	struct hvm_modlist_entry mod = { .paddr = initrd, .size = size };
	struct hvm_start_info si = {
		.magic = HVM_START_MAGIC,
		.version = 1,
		.nr_modules = size ? 1 : 0,
		.modlist_paddr = size ? MODLIST_GPA : 0,
		.cmdline_paddr = BOOT_CMDLINE_GPA,
		.rsdp_paddr = rsdp,
		.memmap_paddr = MEMMAP_GPA,
		.memmap_entries = n,
	};
	int ret;

	for (unsigned int i = 0; i < n; i++)
		mm[i] = (struct hvm_memmap_entry){ map[i].addr, map[i].size, map[i].type, 0 };
	ret = vm_write_guest(vm, MEMMAP_GPA, mm, n * sizeof(mm[0]));
	if (!ret && size)
		ret = vm_write_guest(vm, MODLIST_GPA, &mod, sizeof(mod));
	if (!ret)
		ret = vm_write_guest(vm, START_INFO_GPA, &si, sizeof(si));
	return ret;
}

int boot_load_pvh(struct vm *vm, int fd, char *err, size_t errlen)
{
	static const uint64_t gdt[] = {
		0,
		0x00cf9b000000ffffULL,	/* 0x08: 32-bit code */
		0x00cf93000000ffffULL,	/* 0x10: data */
	};
	const char *path = vm->cfg.kernel;
	Elf64_Phdr ph[PVH_PHDRS_MAX];
	uint64_t end, rsdp, initrd, size;
	uint32_t entry = 0;
	Elf64_Ehdr eh;
	int ret;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > PVH_PHDRS_MAX ||
	    pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) !=
		    (ssize_t)(eh.e_phnum * sizeof(ph[0]))) {
		snprintf(err, errlen, "kernel %s is not an x86-64 ELF kernel gpmm can read", path);
		return -ENOEXEC;
	}
	for (unsigned int i = 0; i < eh.e_phnum && !entry; i++)
		if (ph[i].p_type == PT_NOTE)
			entry = find_pvh_entry(fd, &ph[i]);
	if (!entry) {
		snprintf(err, errlen, "kernel %s has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY): "
			 "boot its bzImage instead", path);
		return -ENOEXEC;
	}
	if (!entry_loaded(ph, eh.e_phnum, entry)) {
		snprintf(err, errlen, "kernel %s: PVH entry 0x%x is not in a segment it loads",
			 path, entry);
		return -ENOEXEC;
	}
	ret = load_segments(vm, fd, ph, eh.e_phnum, &end, err, errlen);
	if (!ret)
		ret = boot_write_cmdline(vm, BOOT_CMDLINE_MAX - 1, err, errlen);
	if (!ret)
		ret = boot_load_initrd(vm, vm->regions[0].size, end, &initrd, &size, err, errlen);
	if (ret)
		return ret;
	ret = acpi_build(vm, &rsdp);
	if (!ret)
		ret = write_start_info(vm, rsdp, initrd, size);
	if (!ret)
		ret = boot_write_reset_vector(vm);
	if (!ret)
		ret = vm_write_guest(vm, BOOT_GDT_ADDR, gdt, sizeof(gdt));
	if (ret) {
		snprintf(err, errlen, "cannot write the boot structures: %s", strerror(-ret));
		return ret;
	}
	vm->boot = (struct boot_entry){
		.is_linux = true,
		.prot32 = true,
		.rip = entry,
		.rsi = START_INFO_GPA,
		.cs = 0x08,
		.ds = 0x10,
		.gdt_limit = sizeof(gdt) - 1,
	};
	return 0;
}
