// SPDX-License-Identifier: GPL-2.0
/*
 * hotcold: a guest with a hot and a cold set, for the reclaim clock.
 * vCPU 0 writes all but the first eighth of [2 MiB, ram_size) once (the
 * cold set; one page in eight only read, so it stays zeros), then writes
 * and checks that first eighth (the hot set, whole 2 MiB ranges) pass
 * after pass, forever. At hot pass
 * GPMM_HOTCOLD_CHECK_PASS it stops at a checkpoint (abi.h), then checks the
 * whole cold set once: a page the swap file gave back wrong ends the guest
 * with "lost write". Other vCPUs park.
 *
 * It says "hotcold: N MiB cold set written" after the first pass, "hotcold: hot
 * pass N" every HOTCOLD_SAY passes and "hotcold: cold set checked".
 */
#include "lib.h"

#define HOTCOLD_BASE		0x200000ULL
#define HOTCOLD_SAY		32

static inline uint64_t word_gpa(uint64_t page)
{
	return HOTCOLD_BASE + page * PAGE_SIZE + ((page * 40) & (PAGE_SIZE - 1));
}

static inline uint64_t value(uint64_t page, uint64_t pass)
{
	return (word_gpa(page) << 20) ^ pass ^ 0x686f74636f6c6400ULL;
}

/* one page in eight of the cold set is only read: zeros the host can drop */
static inline bool read_only(uint64_t page, uint64_t hot)
{
	return page >= hot && page % 8 == 7;
}

static __attribute__((noreturn)) void lost(uint64_t page, uint64_t want, uint64_t found)
{
	serial_puts("hotcold: lost write at ");
	serial_put_hex(word_gpa(page));
	fail_expected(want, found);
}

static void check_cold(uint64_t hot, uint64_t pages)
{
	for (uint64_t p = hot; p < pages; p++) {
		uint64_t want = read_only(p, hot) ? 0 : value(p, 0);
		uint64_t found = *gpa_ptr(uint64_t, word_gpa(p));

		if (found != want)
			lost(p, want, found);
	}
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t pages = ram_size > HOTCOLD_BASE ? (ram_size - HOTCOLD_BASE) / PAGE_SIZE : 0;
	/* whole 2 MiB ranges: a range half hot, half cold is neither to a clock over ranges */
	uint64_t hot = pages / 8 / 512 * 512, sum = 0;

	(void)ncpus;
	if (cpu)
		park();
	for (uint64_t p = hot; p < pages; p++) {
		if (read_only(p, hot))
			sum += *gpa_ptr(uint64_t, word_gpa(p));
		else
			*gpa_ptr(uint64_t, word_gpa(p)) = value(p, 0);
	}
	serial_puts("hotcold: ");
	serial_put_dec((pages - hot) * PAGE_SIZE / MiB);
	serial_puts(" MiB cold set written, hot set ");
	serial_put_dec(hot * PAGE_SIZE / MiB);
	serial_puts(" MiB\n");
	if (sum)
		lost(0, 0, sum);
	for (uint64_t pass = 1;; pass++) {
		for (uint64_t p = 0; p < hot; p++) {
			volatile uint64_t *w = gpa_ptr(uint64_t, word_gpa(p));

			if (pass > 1 && *w != value(p, pass - 1))
				lost(p, value(p, pass - 1), *w);
			*w = value(p, pass);
		}
		if (pass % HOTCOLD_SAY == 0) {
			serial_puts("hotcold: hot pass ");
			serial_put_dec(pass);
			serial_putc('\n');
		}
		if (pass == GPMM_HOTCOLD_CHECK_PASS) {
			gpmm_checkpoint(GPMM_CHECKPOINT_HOTCOLD);
			check_cold(hot, pages);
			serial_puts("hotcold: cold set checked\n");
		}
	}
}
