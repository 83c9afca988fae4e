// SPDX-License-Identifier: GPL-2.0
/*
 * Power-off and reset. A Linux guest powers off through the ACPI sleep
 * control register with the sleep type the DSDT's \_S5 names, and resets
 * through the FADT's reset register, falling back to the keyboard
 * controller's reset pulse (0xfe to port 0x64) and the PCI reset control
 * port 0xcf9. Each ends the VM's run: a power-off with status 0, a reset
 * with a restart by the VM's owner.
 */
#include <errno.h>
#include <stdlib.h>

#include "devices/device.h"
#include "devices/legacy/power.h"

#define SLP_EN			0x20
#define SLP_TYP(v)		(((v) >> 2) & 7)
#define I8042_DATA_PORT		0x60
#define I8042_CMD_PORT		0x64
#define I8042_CMD_RESET		0xfe
#define RST_CNT_PORT		0xcf9
#define RST_CNT_RESET		0x04

/* Reads: no wake event, nothing to report, a controller never busy. */
static int read_zero(uint8_t *data, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		data[i] = 0;
	return 0;
}

static int pm_io(struct machine *m, struct vcpu *vcpu, void *opaque, uint64_t port,
		 uint8_t *data, unsigned int len, bool is_write)
{
	if (!is_write)
		return read_zero(data, len);
	if (port == PM_SLEEP_CTL_PORT && (data[0] & SLP_EN) &&
	    SLP_TYP(data[0]) == PM_S5_SLP_TYP)
		machine_power(m, false);
	else if (port == PM_RESET_PORT && data[0] == PM_RESET_VALUE)
		machine_power(m, true);
	return 0;
}

static int i8042_io(struct machine *m, struct vcpu *vcpu, void *opaque, uint64_t port,
		    uint8_t *data, unsigned int len, bool is_write)
{
	if (!is_write)
		return read_zero(data, len);
	if (port == I8042_CMD_PORT && data[0] == I8042_CMD_RESET)
		machine_power(m, true);
	return 0;
}

static int rst_cnt_io(struct machine *m, struct vcpu *vcpu, void *opaque, uint64_t port,
		      uint8_t *data, unsigned int len, bool is_write)
{
	if (!is_write)
		return read_zero(data, len);
	if (data[0] & RST_CNT_RESET)
		machine_power(m, true);
	return 0;
}

/* The GED's interrupt is edge-triggered: one pulse is one press. */
int power_button_press(struct machine *m)
{
	int ret;

	if (!m->acpi)
		return -ENODEV;
	ret = machine_irq_line(m, PM_GED_GSI, true);
	if (!ret)
		ret = machine_irq_line(m, PM_GED_GSI, false);
	return ret;
}

static int power_init(struct machine *m, void **priv)
{
	int err = dev_register_pio(&m->bus, "acpi-pm", PM_SLEEP_CTL_PORT, 3, pm_io, NULL);

	if (!err)
		err = dev_register_pio(&m->bus, "i8042", I8042_DATA_PORT, 1, i8042_io, NULL);
	if (!err)
		err = dev_register_pio(&m->bus, "i8042", I8042_CMD_PORT, 1, i8042_io, NULL);
	if (!err)
		err = dev_register_pio(&m->bus, "reset-control", RST_CNT_PORT, 1, rst_cnt_io, NULL);
	return err;
}

const struct device_ops power_device = {
	.name = "power",
	.init = power_init,
};
