/* SPDX-License-Identifier: GPL-2.0 */
/* The flat payload boot protocol of DESIGN.md. */
#ifndef GPMM_BOOT_H
#define GPMM_BOOT_H

#include "vmm/compiler.h"

#include "guests/abi.h"	/* the payload protocol: load address, stacks, ports */

#include <stddef.h>
#include <stdint.h>

struct vm;

#define BOOT_GDT_ADDR		0x500ULL
#define BOOT_PML4_ADDR		0x1000ULL
#define BOOT_PDPT_ADDR		0x2000ULL
#define BOOT_PD_ADDR		0x3000ULL
#define BOOT_SEL_CODE		0x08
#define BOOT_SEL_DATA		0x10

/* Load the payload file and build the identity page tables and GDT. */
__must_check int boot_load_flat(struct vm *vm, const char *path, char *err, size_t errlen);

#endif
