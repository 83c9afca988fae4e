// SPDX-License-Identifier: GPL-2.0
/*
 * The flat payload protocol's ports (DESIGN.md): 0x501 ends the VM with
 * the 32-bit value written, 0x502 runs the host's checkpoint hook with the
 * whole VM stopped (tests move pages there), and 0x80, the PC's POST code
 * port, is accepted and ignored so a payload can announce its first
 * instruction.
 */
#include <errno.h>
#include <string.h>

#include "devices/device.h"
#include "guests/abi.h"


static uint32_t port_value(const uint8_t *data, unsigned int len)
{
	uint32_t v = 0;

	memcpy(&v, data, len < 4 ? len : 4);
	return v;
}

static int post_io(struct machine *m, struct vcpu *vcpu, void *opaque,
		   uint64_t addr, uint8_t *data, unsigned int len, bool is_write)
{
	if (!is_write)
		memset(data, 0xff, len);
	return 0;
}

static int exit_io(struct machine *m, struct vcpu *vcpu, void *opaque,
		   uint64_t addr, uint8_t *data, unsigned int len, bool is_write)
{
	if (!is_write) {
		memset(data, 0xff, len);
		return 0;
	}
	machine_exit(m, (int)port_value(data, len));
	return 0;
}

static int checkpoint_io(struct machine *m, struct vcpu *vcpu, void *opaque,
			 uint64_t addr, uint8_t *data, unsigned int len,
			 bool is_write)
{
	if (!is_write) {
		memset(data, 0xff, len);
		return 0;
	}
	return machine_checkpoint(m, vcpu, port_value(data, len));
}

static int debugport_init(struct machine *m, void **priv)
{
	int err;

	err = dev_register_pio(&m->bus, "post", GPMM_POST_PORT, 1, post_io, NULL);
	if (!err)
		err = dev_register_pio(&m->bus, "exit", GPMM_EXIT_PORT, 1, exit_io, NULL);
	if (!err)
		err = dev_register_pio(&m->bus, "checkpoint", GPMM_CHECKPOINT_PORT, 1,
				       checkpoint_io, NULL);
	return err;
}

const struct device_ops debugport_device = {
	.name = "debugport",
	.init = debugport_init,
};
