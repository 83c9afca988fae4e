// SPDX-License-Identifier: GPL-2.0
/*
 * remap: proves that a guest page moved to another host frame behind the
 * guest's back (checkpoint hook: copy + remap) keeps its contents, and that
 * the guest then reads the new frame, not a stale mapping of the old one:
 * the hook writes GPMM_REMAP_MARKER through the new frame only. Constants
 * and exit statuses: abi.h.
 */
#include "lib.h"

#define remap_word(i)	gpa_ptr(uint64_t, GPMM_REMAP_GPA + (i) * GPMM_REMAP_STRIDE)

_Static_assert((GPMM_REMAP_WORDS - 1) * GPMM_REMAP_STRIDE < GPMM_REMAP_MARKER_OFF,
	       "a pattern word would overlap the marker");

static void print_word(const char *what, uint64_t gpa, uint64_t v)
{
	serial_puts(what);
	serial_puts(" at ");
	serial_put_hex(gpa);
	serial_puts(": ");
	serial_put_hex(v);
}

/* Returns the number of pattern words that changed, printing the first. */
static unsigned int check_pattern(void)
{
	unsigned int bad = 0;

	for (unsigned int i = 0; i < GPMM_REMAP_WORDS; i++) {
		uint64_t v = *remap_word(i);

		if (v == GPMM_REMAP_PATTERN(i))
			continue;
		if (bad++)
			continue;
		print_word("remap: pattern word", GPMM_REMAP_GPA + i * GPMM_REMAP_STRIDE, v);
		serial_puts(", expected ");
		serial_put_hex(GPMM_REMAP_PATTERN(i));
		serial_putc('\n');
	}
	return bad;
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	unsigned int bad;
	uint64_t marker;

	(void)ncpus;
	if (cpu)
		park();
	if (ram_size < GPMM_REMAP_GPA + PAGE_SIZE) {
		serial_puts("remap: RAM ends below the test page\n");
		return GPMM_EXIT_FAIL;
	}

	for (unsigned int i = 0; i < GPMM_REMAP_WORDS; i++)
		*remap_word(i) = GPMM_REMAP_PATTERN(i);
	serial_puts("remap: pattern written, checkpoint 1\n");
	gpmm_checkpoint(GPMM_CHECKPOINT_REMAP);

	bad = check_pattern();
	marker = *gpa_ptr(uint64_t, GPMM_REMAP_GPA + GPMM_REMAP_MARKER_OFF);
	serial_puts("remap: ");
	serial_put_dec(GPMM_REMAP_WORDS - bad);
	serial_putc('/');
	serial_put_dec(GPMM_REMAP_WORDS);
	serial_puts(" pattern words ok, ");
	print_word("marker", GPMM_REMAP_GPA + GPMM_REMAP_MARKER_OFF, marker);
	serial_puts(marker == GPMM_REMAP_MARKER ? " ok\n" : " missing\n");
	if (bad)
		return GPMM_EXIT_REMAP_PATTERN;
	return marker == GPMM_REMAP_MARKER ? GPMM_EXIT_OK : GPMM_EXIT_REMAP_MARKER;
}
