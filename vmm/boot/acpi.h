/* SPDX-License-Identifier: GPL-2.0 */
/* ACPI tables for Linux guests (vmm/boot/acpi.c says why ACPI). */
#ifndef GPMM_ACPI_H
#define GPMM_ACPI_H

#include <stdint.h>

#include "vmm/core/compiler.h"

struct vm;

#define ACPI_TABLES_GPA		0xe0000ULL	/* BIOS area: reserved in e820 */
#define ACPI_TABLES_SIZE	0x10000ULL
#define ACPI_RSDP_SIZE		36

/* Write the tables into guest RAM; the RSDP's address comes back. */
__must_check int acpi_build(struct vm *vm, uint64_t *rsdp_gpa);

#endif
