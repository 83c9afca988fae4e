// SPDX-License-Identifier: GPL-2.0
/*
 * memrate: memloop's work with a pulse, for benchmarks that compare a
 * guest's rate of work under different neighbours. vCPU 0 walks
 * [2 MiB, ram_size), one word per page, pass after pass, and says
 * "memrate: pass N" every MEMRATE_EVERY passes; the host times the lines.
 * Other vCPUs park.
 */
#include "lib.h"

#define MEMRATE_BASE	0x200000ULL
#define MEMRATE_EVERY	16

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t pages = ram_size > MEMRATE_BASE ? (ram_size - MEMRATE_BASE) / PAGE_SIZE : 0;

	(void)ncpus;
	if (cpu)
		park();
	for (uint64_t pass = 1;; pass++) {
		for (uint64_t p = 0; p < pages; p++)
			*gpa_ptr(uint64_t, MEMRATE_BASE + p * PAGE_SIZE) += pass;
		if (pass % MEMRATE_EVERY)
			continue;
		serial_puts("memrate: pass ");
		serial_put_dec(pass);
		serial_putc('\n');
	}
}
