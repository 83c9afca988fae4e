// SPDX-License-Identifier: GPL-2.0
/*
 * memloop: a guest that never stops writing, for live migration. Every
 * vCPU walks its slice of [2 MiB, ram_size) pass after pass; in each page
 * it reads the word it wrote on the previous pass, checks it, and writes
 * the next pass's value. A write lost by a migration (copied before the
 * write, mapped after) shows up on the next pass as the value of the pass
 * before: the guest prints it and exits with GPMM_EXIT_FAIL.
 *
 * It runs until the host stops it. Once every vCPU has touched its whole
 * slice it says "memloop: N MiB touched" so the host knows RAM is
 * populated.
 */
#include "lib.h"

#define MEMLOOP_BASE	0x200000ULL

static uint32_t cpus_touched;

static inline uint64_t word_gpa(uint64_t page)
{
	return MEMLOOP_BASE + page * PAGE_SIZE + ((page * 56) & (PAGE_SIZE - 1));
}

static inline uint64_t value(uint64_t gpa, uint64_t pass)
{
	return (gpa << 20) ^ pass ^ 0x6d656d6c6f6f7000ULL;
}

static __attribute__((noreturn)) void lost(uint64_t cpu, uint64_t gpa,
					   uint64_t pass, uint64_t found)
{
	serial_lock();
	serial_puts("memloop cpu ");
	serial_put_dec(cpu);
	serial_puts(": lost write at ");
	serial_put_hex(gpa);
	serial_puts(" in pass ");
	serial_put_dec(pass);
	fail_expected(value(gpa, pass - 1), found);
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t pages = ram_size > MEMLOOP_BASE ?
			 (ram_size - MEMLOOP_BASE) / PAGE_SIZE : 0;
	uint64_t first = pages * cpu / ncpus;
	uint64_t end = pages * (cpu + 1) / ncpus;

	if (cpu >= ncpus)
		park();
	for (uint64_t pass = 1;; pass++) {
		for (uint64_t p = first; p < end; p++) {
			volatile uint64_t *w = gpa_ptr(uint64_t, word_gpa(p));

			if (pass > 1 && *w != value(word_gpa(p), pass - 1))
				lost(cpu, word_gpa(p), pass, *w);
			*w = value(word_gpa(p), pass);
		}
		if (pass == 1 && __atomic_add_fetch(&cpus_touched, 1, __ATOMIC_ACQ_REL) ==
				 ncpus) {
			serial_lock();
			serial_puts("memloop: ");
			serial_put_dec(pages * PAGE_SIZE / MiB);
			serial_puts(" MiB touched\n");
			serial_unlock();
		}
	}
}
