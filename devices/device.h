/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device bus of a VM: port and MMIO ranges with their handlers. A
 * handler returns 0, or a negative errno that stops the VM with a report.
 */
#ifndef GPMM_DEVICE_H
#define GPMM_DEVICE_H

#include "vmm/core/compiler.h"

#include <stdbool.h>
#include <stdint.h>

struct vm;
struct vcpu;

typedef int (*dev_io_fn)(struct vm *vm, struct vcpu *vcpu, void *opaque,
			 uint64_t addr, uint8_t *data, unsigned int len,
			 bool is_write);

struct dev_range {
	const char *name;
	uint64_t base;
	uint64_t len;
	dev_io_fn io;
	void *opaque;
};

#define DEV_MAX_RANGES	16
#define DEV_MAX_DEVICES	8

/*
 * A device the guest cannot probe for (virtio-mmio): the ACPI tables
 * describe it to the guest by its hardware id, registers and interrupt.
 */
struct dev_acpi {
	const char *hid;	/* e.g. "LNRO0005" for virtio-mmio */
	uint64_t base;
	uint32_t len;
	uint32_t gsi;
};

#define DEV_MAX_ACPI	8

struct device_bus {
	struct dev_acpi acpi[DEV_MAX_ACPI];
	unsigned int nr_acpi;
	void *priv[DEV_MAX_DEVICES];	/* per device of the registry */
	struct dev_range pio[DEV_MAX_RANGES];
	unsigned int nr_pio;
	struct dev_range mmio[DEV_MAX_RANGES];
	unsigned int nr_mmio;
};

/*
 * A device model: what the registry below instantiates for every VM. init
 * may leave *priv NULL (nothing to make for this VM's config); exit runs
 * once, for a non-NULL priv only.
 */
struct device_ops {
	const char *name;
	int (*init)(struct vm *vm, void **priv);
	void (*exit)(struct vm *vm, void *priv);
};

__must_check int dev_register_pio(struct device_bus *bus, const char *name, uint16_t base,
		     uint16_t len, dev_io_fn io, void *opaque);
__must_check int dev_register_mmio(struct device_bus *bus, const char *name, uint64_t base,
		      uint64_t len, dev_io_fn io, void *opaque);
__must_check int dev_announce(struct device_bus *bus, const char *hid, uint64_t base,
			      uint32_t len, uint32_t gsi);
/* -ENODEV when nothing claims the address. */
int dev_pio(struct vm *vm, struct vcpu *vcpu, uint16_t port, uint8_t *data,
	    unsigned int len, bool is_write);
int dev_mmio(struct vm *vm, struct vcpu *vcpu, uint64_t addr, uint8_t *data,
	     unsigned int len, bool is_write);

__must_check int devices_init(struct vm *vm);
void devices_exit(struct vm *vm);
/* The instance of registry device @ops in @vm, NULL if it made none. */
void *dev_priv(struct vm *vm, const struct device_ops *ops);

extern const struct device_ops serial8250_device;
extern const struct device_ops debugport_device;
extern const struct device_ops power_device;
extern const struct device_ops virtio_blk_device;
extern const struct device_ops virtio_balloon_device;

#endif
