// SPDX-License-Identifier: GPL-2.0
/*
 * hammer: a guest that does nothing but make its VMM work, forever: every
 * I/O port read and written (but its own off switches: lib.h), the
 * balloon's registers read, the POST port stormed. Its own work is
 * nothing; what it costs is the exits, which a benchmark expects it
 * alone to pay for.
 */
#include "lib.h"
#include "vdrv.h"

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	serial_puts("hammer: on\n");
	for (uint32_t round = 0;; round++) {
		for (uint32_t port = 0; port < 0x10000; port++) {
			(void)inb((uint16_t)port);
			if (!port_is_off_switch(port))
				outb((uint16_t)port, (uint8_t)(port ^ round));
		}
		for (uint64_t off = 0; off < VIRTIO_MMIO_SLOT_SIZE; off += 4)
			(void)*gpa_ptr(uint32_t, VIRTIO_MMIO_BASE + off);
		for (uint32_t i = 0; i < 4096; i++)
			outb(GPMM_POST_PORT, (uint8_t)i);
	}
}
