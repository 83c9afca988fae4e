/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading a guest: the flat payload protocol of DESIGN.md, or a Linux
 * kernel by the x86 boot protocol (bzImage). The loader leaves in
 * vm->boot how the vCPUs start.
 */
#ifndef GPMM_BOOT_H
#define GPMM_BOOT_H

#include "vmm/core/compiler.h"

#include "guests/abi.h"	/* the payload protocol: load address, stacks, ports */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

#define BOOT_GDT_ADDR		0x500ULL
#define BOOT_PML4_ADDR		0x1000ULL
#define BOOT_PDPT_ADDR		0x2000ULL
#define BOOT_PD_ADDR		0x3000ULL

/* How the vCPUs start, in 64-bit mode on the identity page tables. */
struct boot_entry {
	bool is_linux;		/* only vCPU 0 runs; the others wait for INIT/SIPI */
	bool prot32;		/* PVH: 32-bit protected mode, no paging, %ebx = start info */
	uint64_t rip;
	uint64_t rsi;		/* bzImage: the zero page; PVH: its start info (in %rbx) */
	uint16_t cs, ds;	/* selectors into the GDT at BOOT_GDT_ADDR */
	uint16_t gdt_limit;
};

/* Load vm->cfg.kernel, whatever its format, and set vm->boot. */
__must_check int boot_load(struct vm *vm, char *err, size_t errlen);

/* for the loaders */
__must_check int boot_load_flat(struct vm *vm, const char *path, char *err, size_t errlen);
__must_check int boot_load_bzimage(struct vm *vm, int fd, uint64_t size, char *err,
				   size_t errlen);
__must_check int boot_load_pvh(struct vm *vm, int fd, char *err, size_t errlen);

/* shared by the Linux loaders (boot_linux.c) */
#define BOOT_CMDLINE_GPA	0x20000ULL
#define BOOT_CMDLINE_MAX	0x10000ULL
#define BOOT_MEM_ENTRIES	8	/* 3 fixed + one per RAM region, with room */
#define E820_RAM		1
#define E820_RESERVED		2

struct boot_mem_entry {
	uint64_t addr, size;
	uint32_t type;		/* E820_* */
};

unsigned int boot_memory_map(const struct vm *vm, struct boot_mem_entry *map);
__must_check int boot_copy_from_file(struct vm *vm, int fd, uint64_t off, uint64_t gpa,
				     uint64_t len);
__must_check int boot_write_cmdline(struct vm *vm, uint32_t max, char *err, size_t errlen);
__must_check int boot_load_initrd(struct vm *vm, uint64_t limit, uint64_t low,
				  uint64_t *addr, uint64_t *size, char *err, size_t errlen);
__must_check int boot_write_reset_vector(struct vm *vm);

/* Identity-map [0, @top) with 2 MiB pages and write @gdt. */
__must_check int boot_long_mode(struct vm *vm, uint64_t top, const uint64_t *gdt,
				unsigned int entries);

#endif
