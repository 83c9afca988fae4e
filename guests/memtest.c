// SPDX-License-Identifier: GPL-2.0
/*
 * memtest: every vCPU checks its own contiguous slice of
 * [MEMTEST_BASE, ram_size) in four passes: write a pattern, verify it,
 * write its complement, verify that. The first pass checks that the
 * fresh RAM reads zero before it writes.
 *
 * A guest memory access costs about 5 µs here, so each pass touches ONE
 * 8-byte word per 4 KiB page (64 MiB, 2 vCPUs: ~16k pages, ~64k accesses).
 * That is enough for what gpmm can get wrong — a page backed by the wrong
 * frame, a stale copy after migration, a bad 2 MiB assembly — since each
 * word's value depends on its own address. It is not a DRAM cell test.
 */
#include "lib.h"

/* Below 2 MiB: the VMM's tables and stacks and this image (payload.ld). */
#define MEMTEST_BASE	0x200000ULL
#define MEMTEST_SEED	0x5a5a5a5a5a5a5a5aULL
#define MEMTEST_PASSES	4

/* vCPUs that finished all passes; the last one reports for all. */
static uint32_t cpus_done;

/*
 * The word tested in page @page (counted from MEMTEST_BASE). Its offset
 * moves 7 words a page: consecutive pages use different cache lines, and
 * since 7 is odd every 512 pages cover all 512 offsets of a page.
 */
static inline uint64_t word_gpa(uint64_t page)
{
	return MEMTEST_BASE + page * PAGE_SIZE + ((page * 56) & (PAGE_SIZE - 1));
}

static inline uint64_t pattern(uint64_t gpa, uint64_t invert)
{
	return gpa ^ MEMTEST_SEED ^ invert;
}

static void write_pass(uint64_t first, uint64_t end, uint64_t invert)
{
	for (uint64_t p = first; p < end; p++) {
		uint64_t gpa = word_gpa(p);

		*gpa_ptr(uint64_t, gpa) = pattern(gpa, invert);
	}
}

static __attribute__((noreturn)) void mismatch(uint64_t cpu, uint64_t gpa,
					       uint64_t want, uint64_t found)
{
	/* Keep the lock: the VM stops on the exit, nobody needs it after. */
	serial_lock();
	serial_puts("memtest cpu ");
	serial_put_dec(cpu);
	serial_puts(": mismatch at ");
	serial_put_hex(gpa);
	fail_expected(want, found);
}

static void verify_pass(uint64_t cpu, uint64_t first, uint64_t end,
			uint64_t invert)
{
	for (uint64_t p = first; p < end; p++) {
		uint64_t gpa = word_gpa(p);
		uint64_t found = *gpa_ptr(uint64_t, gpa);

		if (found != pattern(gpa, invert))
			mismatch(cpu, gpa, pattern(gpa, invert), found);
	}
}

/*
 * Fresh RAM reads zero: whatever backs it (a 4 KiB frame, a whole 2 MiB
 * block, a hole the host punched) may have held another VM's data, and
 * the VMM must have cleared it. Read before the first write.
 */
static void verify_zero(uint64_t cpu, uint64_t first, uint64_t end)
{
	for (uint64_t p = first; p < end; p++) {
		uint64_t gpa = word_gpa(p);
		uint64_t found = *gpa_ptr(uint64_t, gpa);

		if (found)
			mismatch(cpu, gpa, 0, found);
	}
}

static void report_pass(uint64_t cpu, uint64_t pages, int pass)
{
	serial_lock();
	serial_puts("memtest cpu ");
	serial_put_dec(cpu);
	serial_puts(": ");
	serial_put_dec(pages * PAGE_SIZE / MiB);
	serial_puts(" MiB ok (pass ");
	serial_put_dec(pass);
	serial_puts("/4)\n");
	serial_unlock();
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t pages = ram_size > MEMTEST_BASE ?
			 (ram_size - MEMTEST_BASE) / PAGE_SIZE : 0;
	uint64_t first = pages * cpu / ncpus;
	uint64_t end = pages * (cpu + 1) / ncpus;

	/* A vCPU the count does not include has no slice and must not count. */
	if (cpu >= ncpus)
		park();

	for (int pass = 1; pass <= MEMTEST_PASSES; pass++) {
		uint64_t invert = pass > 2 ? ~0ULL : 0;

		if (pass == 1)
			verify_zero(cpu, first, end);
		if (pass & 1)
			write_pass(first, end, invert);
		else
			verify_pass(cpu, first, end, invert);
		report_pass(cpu, end - first, pass);
	}

	if (!last_one_out(&cpus_done, (uint32_t)ncpus))
		park();
	serial_lock();
	serial_puts("memtest: ");
	serial_put_dec(pages * PAGE_SIZE / MiB);
	serial_puts(" MiB ok on ");
	serial_put_dec(ncpus);
	serial_puts(" cpus\n");
	serial_unlock();
	return GPMM_EXIT_OK;
}
