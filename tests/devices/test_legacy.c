// SPDX-License-Identifier: GPL-2.0
/*
 * The legacy devices on the machine double: the UART's output, input and
 * interrupt line; the payload protocol's exit and checkpoint ports; the
 * power-off and reset registers and the ACPI power button. Each request
 * must reach the machine through its interface, and only the one asked.
 */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <string.h>

#include "devices/legacy/power.h"
#include "guests/abi.h"
#include "tests/devices/bus.h"
#include "tests/suite.h"

#define COM1		GPMM_COM1_PORT
#define COM1_IRQ	4

static struct machine_double dbl;

static void up(void)
{
	struct machine_config cfg = { .disk = "" };

	bus_up(&dbl, 1 << 20, &cfg);
}

static uint32_t in(uint16_t port, unsigned int len)
{
	return bus_read(&dbl, BUS_PIO, port, len);
}

static void out(uint16_t port, uint32_t val, unsigned int len)
{
	bus_write(&dbl, BUS_PIO, port, val, len);
}

/* The registry makes no virtio device for a config without disk or balloon. */
static void test_registry_follows_config(void)
{
	uint8_t b = 0;

	up();
	CU_ASSERT_EQUAL(dbl.m.bus.nr_mmio, 0);
	CU_ASSERT_EQUAL(dbl.m.bus.nr_acpi, 0);
	CU_ASSERT_EQUAL(dev_mmio(&dbl.m, NULL, 0xd0000000ULL, &b, 1, false), -ENODEV);
	CU_ASSERT_EQUAL(dev_pio(&dbl.m, NULL, 0x1234, &b, 1, false), -ENODEV);
	bus_down(&dbl);
}

static void test_serial_output_and_input(void)
{
	up();
	out(COM1, 'h', 1);
	out(COM1, 'i', 1);
	CU_ASSERT_EQUAL(dbl.log.console_bytes, 2);
	CU_ASSERT_STRING_EQUAL(dbl.log.console, "hi");

	/* input with the receive interrupt on: the line goes up, data ready */
	out(COM1 + 4, 0x08, 1);		/* MCR: OUT2 lets the line through */
	out(COM1 + 1, 0x01, 1);		/* IER: received data */
	CU_ASSERT_EQUAL(machine_console_input(&dbl.m, "ok", 2), 2);
	CU_ASSERT_EQUAL(dbl.log.irq_level[COM1_IRQ], 1);
	CU_ASSERT(in(COM1 + 5, 1) & 0x01);	/* LSR: data ready */
	CU_ASSERT_EQUAL(in(COM1, 1), 'o');
	CU_ASSERT_EQUAL(in(COM1, 1), 'k');
	CU_ASSERT_FALSE(in(COM1 + 5, 1) & 0x01);
	CU_ASSERT_EQUAL(dbl.log.irq_level[COM1_IRQ], 0);
	bus_down(&dbl);
	/* the UART is gone: input has nowhere to go */
	CU_ASSERT_EQUAL(machine_console_input(&dbl.m, "x", 1), 0);
}

/*
 * A 32-bit `out` to the 1-byte exit port reaches it whole; the checkpoint
 * port hands its number to the machine; the POST port reads all ones.
 */
static void test_payload_ports(void)
{
	up();
	CU_ASSERT_EQUAL(in(GPMM_POST_PORT, 1), 0xff);
	out(GPMM_CHECKPOINT_PORT, 7, 4);
	CU_ASSERT_EQUAL(dbl.log.checkpoints, 1);
	CU_ASSERT_EQUAL(dbl.log.checkpoint, 7);
	CU_ASSERT_EQUAL(dbl.log.exits, 0);
	out(GPMM_EXIT_PORT, 0x12345, 4);
	CU_ASSERT_EQUAL(dbl.log.exits, 1);
	CU_ASSERT_EQUAL(dbl.log.exit_code, 0x12345);
	CU_ASSERT_TRUE(machine_stopping(&dbl.m));
	bus_down(&dbl);
}

static void test_power_registers(void)
{
	up();
	/* a sleep type other than S5 is not a power-off */
	out(PM_SLEEP_CTL_PORT, 0x20 | (3 << 2), 1);
	CU_ASSERT_EQUAL(dbl.log.power_off, 0);
	out(PM_SLEEP_CTL_PORT, 0x20 | (PM_S5_SLP_TYP << 2), 1);
	CU_ASSERT_EQUAL(dbl.log.power_off, 1);
	CU_ASSERT_EQUAL(dbl.log.reset, 0);
	out(PM_RESET_PORT, PM_RESET_VALUE, 1);
	out(0xcf9, 0x04, 1);
	out(0x64, 0xfe, 1);
	CU_ASSERT_EQUAL(dbl.log.reset, 3);
	CU_ASSERT_EQUAL(dbl.log.power_off, 1);
	bus_down(&dbl);
}

/* The button exists only for a guest with ACPI tables: one pulse, edge. */
static void test_power_button(void)
{
	up();
	CU_ASSERT_EQUAL(power_button_press(&dbl.m), -ENODEV);
	CU_ASSERT_EQUAL(dbl.log.irq_raised, 0);
	dbl.m.acpi = true;
	CU_ASSERT_EQUAL(power_button_press(&dbl.m), 0);
	CU_ASSERT_EQUAL(dbl.log.irq_raised, 1);
	CU_ASSERT_EQUAL(dbl.log.irq_lowered, 1);
	CU_ASSERT_EQUAL(dbl.log.irq_level[PM_GED_GSI], 0);
	bus_down(&dbl);
}

static const struct suite_test tests[] = {
	{ "registry: devices follow the config", test_registry_follows_config },
	{ "serial: output, input and its interrupt", test_serial_output_and_input },
	{ "payload ports: exit, checkpoint, POST", test_payload_ports },
	{ "power: off and reset registers", test_power_registers },
	{ "power: button only with ACPI", test_power_button },
};

int register_legacy_suite(void)
{
	return SUITE("legacy", tests);
}
