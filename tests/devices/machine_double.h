/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test double of devices/machine.h: the machine a device sits in, over
 * plain memory and without KVM, for the device suites and the fuzz
 * targets. Guest RAM is one anonymous mapping at guest address 0 with an
 * inaccessible page on each side, so an access that escapes the bounds
 * checks faults at once instead of landing in another allocation. Every
 * request a device makes is counted in the double's log.
 */
#ifndef GPMM_TESTS_MACHINE_DOUBLE_H
#define GPMM_TESTS_MACHINE_DOUBLE_H

#include "devices/machine.h"

struct machine_double_log {
	uint64_t irq_raised;		/* calls that set a line high */
	uint64_t irq_lowered;
	int irq_level[32];		/* each line's level now */
	uint64_t console_bytes;
	char console[256];		/* the first bytes written */
	uint64_t discards;
	uint64_t discarded_bytes;
	uint64_t power_off, reset;
	uint64_t exits;
	int exit_code;			/* the last exit's */
	uint64_t checkpoints;
	uint32_t checkpoint;		/* the last one's number */
};

struct machine_double {
	struct machine m;
	uint8_t *ram;			/* guest address 0 */
	uint64_t ram_bytes;
	bool stopping;			/* what machine_stopping answers */
	uint64_t now;			/* a clock that moves 1 us per reading */
	struct machine_double_log log;
	/* Called by each discard once it is done and logged (tests: a discard that waits, stops) */
	void (*on_discard)(struct machine_double *d);
};

/*
 * @bytes (a multiple of 4 KiB) of zeroed memory between two inaccessible
 * pages; NULL with errno set. Also the guest RAM of the loaders' fuzz VM.
 */
uint8_t *guarded_ram_map(uint64_t bytes);
void guarded_ram_unmap(uint8_t *ram, uint64_t bytes);

/* Map @ram bytes (a multiple of 4 KiB) of guest RAM; 0 or -errno. */
int machine_double_init(struct machine_double *d, uint64_t ram,
			const struct machine_config *cfg);
/* Guest RAM reads zero again and the log starts over; devices stay. */
void machine_double_reset(struct machine_double *d);
void machine_double_fini(struct machine_double *d);

#endif
