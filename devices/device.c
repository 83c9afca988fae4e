// SPDX-License-Identifier: GPL-2.0
/*
 * Device registry and bus dispatch. The registry is a table: every VM gets
 * each device in it, in order; a device claims its port or MMIO ranges
 * from its init hook.
 */
#include <errno.h>

#include "devices/device.h"

/*
 * virtio-mmio devices take the next free slot in this order: with a disk,
 * virtio-blk at 0xd0000000 (GSI 16) and the balloon next; without, the
 * balloon there; network interfaces after them, in the order given.
 */
static const struct device_ops *const device_registry[] = {
	&serial8250_device,
	&debugport_device,
	&power_device,
	&virtio_blk_device,
	&virtio_balloon_device,
	&virtio_net_device,
};

#define NR_DEVICES (sizeof(device_registry) / sizeof(device_registry[0]))
_Static_assert(NR_DEVICES <= DEV_MAX_DEVICES, "device_bus.priv too small");

static int add_range(struct dev_range *ranges, unsigned int *nr,
		     const char *name, uint64_t base, uint64_t len,
		     dev_io_fn io, void *opaque)
{
	if (!len || base + len < base)
		return -EINVAL;
	if (*nr == DEV_MAX_RANGES)
		return -ENOSPC;
	for (unsigned int i = 0; i < *nr; i++)
		if (base < ranges[i].base + ranges[i].len &&
		    ranges[i].base < base + len)
			return -EEXIST;
	ranges[(*nr)++] = (struct dev_range){ name, base, len, io, opaque };
	return 0;
}

int dev_register_pio(struct device_bus *bus, const char *name, uint16_t base,
		     uint16_t len, dev_io_fn io, void *opaque)
{
	if ((uint32_t)base + len > 0x10000)
		return -EINVAL;
	return add_range(bus->pio, &bus->nr_pio, name, base, len, io, opaque);
}

int dev_register_mmio(struct device_bus *bus, const char *name, uint64_t base,
		      uint64_t len, dev_io_fn io, void *opaque)
{
	return add_range(bus->mmio, &bus->nr_mmio, name, base, len, io, opaque);
}

int dev_announce(struct device_bus *bus, const char *hid, uint64_t base,
		 uint32_t len, uint32_t gsi)
{
	if (bus->nr_acpi == DEV_MAX_ACPI)
		return -ENOSPC;
	bus->acpi[bus->nr_acpi++] = (struct dev_acpi){ hid, base, len, gsi };
	return 0;
}

/*
 * An access belongs to the range its first byte falls in: a 32-bit `out`
 * to the 1-byte exit port 0x501 must reach it, not spill into 0x502.
 */
static const struct dev_range *find(const struct dev_range *r, unsigned int nr,
				    uint64_t addr)
{
	for (unsigned int i = 0; i < nr; i++)
		if (addr >= r[i].base && addr - r[i].base < r[i].len)
			return &r[i];
	return NULL;
}

int dev_pio(struct machine *m, struct vcpu *vcpu, uint16_t port, uint8_t *data,
	    unsigned int len, bool is_write)
{
	const struct dev_range *r = find(m->bus.pio, m->bus.nr_pio, port);

	return r ? r->io(m, vcpu, r->opaque, port, data, len, is_write)
		 : -ENODEV;
}

int dev_mmio(struct machine *m, struct vcpu *vcpu, uint64_t addr, uint8_t *data,
	     unsigned int len, bool is_write)
{
	const struct dev_range *r = find(m->bus.mmio, m->bus.nr_mmio, addr);

	return r ? r->io(m, vcpu, r->opaque, addr, data, len, is_write)
		 : -ENODEV;
}

/*
 * A device that fails cleans up after itself; those before it are undone
 * here. Either way each exit hook runs once: the VM's destruction calls
 * devices_exit again, which skips what is gone (priv NULL).
 */
int devices_init(struct machine *m)
{
	for (unsigned int i = 0; i < NR_DEVICES; i++) {
		int err = device_registry[i]->init(m, &m->bus.priv[i]);

		if (err) {
			m->bus.priv[i] = NULL;
			devices_exit(m);
			return err;
		}
	}
	return 0;
}

void *dev_priv(struct machine *m, const struct device_ops *ops)
{
	for (unsigned int i = 0; i < NR_DEVICES; i++)
		if (device_registry[i] == ops)
			return m->bus.priv[i];
	return NULL;
}

void devices_exit(struct machine *m)
{
	for (unsigned int i = NR_DEVICES; i-- > 0;) {
		if (device_registry[i]->exit && m->bus.priv[i])
			device_registry[i]->exit(m, m->bus.priv[i]);
		m->bus.priv[i] = NULL;
	}
}
