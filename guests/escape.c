// SPDX-License-Identifier: GPL-2.0
/*
 * escape: a guest that tries everything a guest can do to its VMM at once,
 * for the test that it ends only its own VM:
 *
 *  - a storm of exits (POST port writes, each a trip to the VMM);
 *  - every I/O port read and written with ~0 (bytes; every width at each
 *    fourth port),
 *    except the few whose writes are the guest's own ways to end or
 *    reset itself (exit, checkpoint, reset controls): those are features;
 *  - every register of the virtio-mmio balloon read and written with ~0
 *    and garbage;
 *  - then a triple fault.
 *
 * It says how far it got on the serial port; the host expects the last
 * line before the VM ends to be the triple fault's.
 */
#include "lib.h"
#include "vdrv.h"

#define EXIT_STORM		20000
/* slot 0: the balloon every VM has; an empty slot is unclaimed MMIO, which ends the VM */
#define VIRTIO_SLOTS		1

/* Bytes at every port; the wider accesses at every fourth (exits are slow here). */
static void sweep_ports(uint32_t value)
{
	for (uint32_t port = 0; port < 0x10000; port++) {
		bool wide = !(port & 3);

		(void)inb((uint16_t)port);
		if (wide) {
			(void)inw((uint16_t)port);
			(void)inl((uint16_t)port);
		}
		if (port_is_off_switch(port))
			continue;
		outb((uint16_t)port, (uint8_t)value);
		if (wide) {
			outw((uint16_t)port, (uint16_t)value);
			outl((uint16_t)port, value);
		}
	}
}

static void sweep_virtio(void)
{
	for (uint64_t slot = 0; slot < VIRTIO_SLOTS; slot++) {
		uint64_t base = VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SLOT_SIZE;

		for (uint64_t off = 0; off < VIRTIO_MMIO_SLOT_SIZE; off += 4) {
			(void)*gpa_ptr(uint32_t, base + off);
			*gpa_ptr(uint32_t, base + off) = 0xffffffffU;
			*gpa_ptr(uint32_t, base + off) = (uint32_t)(off * 0x9e3779b9U);
		}
	}
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("escape: exit storm\n");
	for (uint32_t i = 0; i < EXIT_STORM; i++)
		outb(GPMM_POST_PORT, (uint8_t)i);
	serial_puts("escape: every port\n");
	sweep_ports(0xffffffffU);
	serial_puts("escape: virtio registers\n");
	sweep_virtio();
	serial_puts("escape: triple fault\n");
	triple_fault();
	serial_puts("escape: still alive\n");
	return GPMM_EXIT_SURVIVED;
}
