// SPDX-License-Identifier: GPL-2.0
/*
 * Big tables in anonymous mappings of their own. A heap allocation of the
 * same size would also be a mapping (glibc's mmap threshold), but without
 * the huge-page hint, and a realloc would copy it instead of moving its
 * page tables.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

#include "bench/bigmem.h"

#define BIGMEM_HUGE	(2UL << 20)
#define BIGMEM_PAGE	4096UL
/* Smaller tables stay on 4 KiB pages: a huge page would be mostly unused. */
#define BIGMEM_MIN_HUGE	(8UL << 20)

/* Whole 2 MiB for a table that gets huge pages, whole pages for others. */
static size_t bigmem_span(size_t bytes)
{
	size_t unit = bytes >= BIGMEM_MIN_HUGE ? BIGMEM_HUGE : BIGMEM_PAGE;

	bytes = bytes ? bytes : 1;
	return (bytes + unit - 1) & ~(unit - 1);
}

/* A hint: without THP the table still works, on 4 KiB pages. */
static void bigmem_advise(void *p, size_t span)
{
	if (span >= BIGMEM_MIN_HUGE)
		(void)madvise(p, span, MADV_HUGEPAGE);
}

void *bigmem_alloc(size_t bytes)
{
	size_t span = bigmem_span(bytes);
	void *p = mmap(NULL, span, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	bigmem_advise(p, span);
	return p;
}

void *bigmem_grow(void *p, size_t old, size_t bytes)
{
	size_t from = bigmem_span(old), to = bigmem_span(bytes);
	void *q;

	if (!p)
		return bigmem_alloc(bytes);
	if (to <= from)
		return p;
	q = mremap(p, from, to, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	bigmem_advise(q, to);
	return q;
}

void bigmem_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bigmem_span(bytes));
}
