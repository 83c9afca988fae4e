/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device bus of a VM: port and MMIO ranges with their handlers. A
 * handler returns 0, or a negative errno that stops the VM with a report.
 */
#ifndef GPMM_DEVICE_H
#define GPMM_DEVICE_H

#include "devices/machine.h"

/*
 * A device model: what the registry below instantiates for every VM. init
 * may leave *priv NULL (nothing to make for this VM's config); exit runs
 * once, for a non-NULL priv only.
 */
struct device_ops {
	const char *name;
	int (*init)(struct machine *m, void **priv);
	void (*exit)(struct machine *m, void *priv);
};

__must_check int dev_register_pio(struct device_bus *bus, const char *name, uint16_t base,
		     uint16_t len, dev_io_fn io, void *opaque);
__must_check int dev_register_mmio(struct device_bus *bus, const char *name, uint64_t base,
		      uint64_t len, dev_io_fn io, void *opaque);
__must_check int dev_announce(struct device_bus *bus, const char *hid, uint64_t base,
			      uint32_t len, uint32_t gsi);
/* -ENODEV when nothing claims the address. */
int dev_pio(struct machine *m, struct vcpu *vcpu, uint16_t port, uint8_t *data,
	    unsigned int len, bool is_write);
int dev_mmio(struct machine *m, struct vcpu *vcpu, uint64_t addr, uint8_t *data,
	     unsigned int len, bool is_write);

__must_check int devices_init(struct machine *m);
void devices_exit(struct machine *m);
/* The instance of registry device @ops in @m, NULL if it made none. */
void *dev_priv(struct machine *m, const struct device_ops *ops);

extern const struct device_ops serial8250_device;
extern const struct device_ops debugport_device;
extern const struct device_ops power_device;
extern const struct device_ops virtio_blk_device;
extern const struct device_ops virtio_balloon_device;
extern const struct device_ops virtio_net_device;

/*
 * "tap=NAME|fd=N[,mac=XX:XX:XX:XX:XX:XX][,offload=on|off]" into @out; 0, or
 * -EINVAL with what is wrong in @err.
 */
__must_check int net_spec_parse(const char *spec, struct machine_net *out, char *err,
				size_t errlen);

#endif
