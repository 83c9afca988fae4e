/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's power button and reset line: the registers the ACPI tables
 * (vmm/boot/acpi.c) point the guest at, and the legacy ways to reset a PC.
 */
#ifndef GPMM_POWER_H
#define GPMM_POWER_H

#define PM_SLEEP_CTL_PORT	0x600	/* FADT sleep control register */
#define PM_SLEEP_STS_PORT	0x601	/* FADT sleep status register */
#define PM_RESET_PORT		0x602	/* FADT reset register */
#define PM_RESET_VALUE		0x1
#define PM_S5_SLP_TYP		5	/* the \_S5 package of the DSDT */
#define PM_GED_GSI		10	/* the power button's Generic Event Device */

struct machine;

/*
 * Press the guest's ACPI power button (vmm/boot/acpi.c); -ENODEV when the
 * guest has no ACPI (a flat payload), else what KVM_IRQ_LINE said.
 */
int power_button_press(struct machine *m);

#endif
