/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the device suites share: a machine double with the registry's
 * devices for a config, and register accesses as a vCPU's exit makes
 * them, each asserting that a device claimed the address.
 */
#ifndef GPMM_TESTS_DEVICES_BUS_H
#define GPMM_TESTS_DEVICES_BUS_H

#include <CUnit/CUnit.h>

#include "devices/device.h"
#include "tests/devices/machine_double.h"

enum bus_space { BUS_PIO, BUS_MMIO };

static inline void bus_up(struct machine_double *d, uint64_t ram,
			  const struct machine_config *cfg)
{
	CU_ASSERT_EQUAL_FATAL(machine_double_init(d, ram, cfg), 0);
	CU_ASSERT_EQUAL_FATAL(devices_init(&d->m), 0);
}

static inline void bus_down(struct machine_double *d)
{
	devices_exit(&d->m);
	machine_double_fini(d);
}

static inline int bus_access(struct machine_double *d, enum bus_space space, uint64_t addr,
			     uint32_t *val, unsigned int len, bool is_write)
{
	return space == BUS_PIO ?
		dev_pio(&d->m, NULL, (uint16_t)addr, (uint8_t *)val, len, is_write) :
		dev_mmio(&d->m, NULL, addr, (uint8_t *)val, len, is_write);
}

static inline uint32_t bus_read(struct machine_double *d, enum bus_space space, uint64_t addr,
				unsigned int len)
{
	uint32_t v = 0;

	CU_ASSERT_EQUAL(bus_access(d, space, addr, &v, len, false), 0);
	return v;
}

static inline void bus_write(struct machine_double *d, enum bus_space space, uint64_t addr,
			     uint32_t val, unsigned int len)
{
	CU_ASSERT_EQUAL(bus_access(d, space, addr, &val, len, true), 0);
}

#endif
