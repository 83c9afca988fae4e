/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Zeroed memory for the benches' big tables (a trace's live allocations,
 * a workload's pending frees), read at random over gigabytes: asked for
 * as transparent huge pages, so that each look-up misses the cache but
 * not the TLB as well. Pages are taken only when touched.
 */
#ifndef GPMM_BIGMEM_H
#define GPMM_BIGMEM_H

#include <stddef.h>

/* @bytes zeroed, or NULL. */
void *bigmem_alloc(size_t bytes);
/* Grow @p from @old to @bytes, moved if need be, contents kept; NULL: @p stays. */
void *bigmem_grow(void *p, size_t old, size_t bytes);
void bigmem_free(void *p, size_t bytes);

#endif
