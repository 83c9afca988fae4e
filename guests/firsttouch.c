// SPDX-License-Identifier: GPL-2.0
/*
 * firsttouch: the guest's own timing of its first touch of its RAM, for
 * `gpmm bench fault` (abi.h). One write per 4 KiB page, so each page
 * costs one first-touch fault and little guest work; the TSC around the
 * loop is the guest's clock, the same whatever backs the RAM.
 */
#include "lib.h"

static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	/* lfence: no load of the loop may start before the clock is read */
	asm volatile("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t pages = ram_size > GPMM_FIRSTTOUCH_BASE ?
			 (ram_size - GPMM_FIRSTTOUCH_BASE) / PAGE_SIZE : 0;
	uint64_t t0, t1;

	(void)ncpus;
	if (cpu)
		park();
	gpmm_checkpoint(GPMM_CHECKPOINT_FIRSTTOUCH);
	t0 = rdtsc_ordered();
	for (uint64_t p = 0; p < pages; p++)
		*gpa_ptr(uint64_t, GPMM_FIRSTTOUCH_BASE + p * PAGE_SIZE) = p + 1;
	t1 = rdtsc_ordered();
	serial_puts("firsttouch: ");
	serial_put_dec(pages);
	serial_puts(" pages ");
	serial_put_dec(t1 - t0);
	serial_puts(" cycles\n");
	return GPMM_EXIT_OK;
}
