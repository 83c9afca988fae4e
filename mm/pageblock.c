// SPDX-License-Identifier: GPL-2.0
/*
 * Pageblock flags (patches 008-010): a flags byte per 2 MiB pageblock kept
 * beside the frame metadata, so that the migratetype of a block costs no
 * bit in struct mm_frame (layout in internal.h).
 *
 * Writers hold pool->lock; per-thread frees read a block's type without
 * it (as free_hot_cold_page did), hence the relaxed atomic accesses.
 */
#include <errno.h>
#include <stdlib.h>

#include "mm/internal.h"

size_t pageblock_bitmap_bytes(const struct mm_pool *pool)
{
	return pool->nr_pageblocks;
}

int pageblock_bitmap_init(struct mm_pool *pool)
{
	pool->pageblock_flags = calloc(pool->nr_pageblocks + 1, 1);
	return pool->pageblock_flags ? 0 : -ENOMEM;
}

static void set_pageblock_flags_group(struct mm_pool *pool, uint64_t pb,
				      unsigned int val, unsigned int mask)
{
	uint8_t old = __atomic_load_n(&pool->pageblock_flags[pb], __ATOMIC_RELAXED);

	__atomic_store_n(&pool->pageblock_flags[pb], (uint8_t)((old & ~mask) | (val & mask)),
			 __ATOMIC_RELAXED);
}

void set_pageblock_migratetype(struct mm_pool *pool, uint64_t pfn,
			       enum mm_migratetype mt)
{
	set_pageblock_flags_group(pool, pfn >> MM_PAGEBLOCK_ORDER, mt,
				  PB_MIGRATE_MASK);
}

/* Every pageblock a block of @order at @pfn overlaps. */
void set_pageblocks_migratetype(struct mm_pool *pool, uint64_t pfn,
				unsigned int order, enum mm_migratetype mt)
{
	for_each_pageblock_in(pb, pfn, order)
		set_pageblock_flags_group(pool, pb, mt, PB_MIGRATE_MASK);
}

enum mm_migratetype mm_pageblock_migratetype(struct mm_pool *pool,
					     uint64_t pageblock)
{
	enum mm_migratetype mt;

	if (pageblock >= pool->nr_pageblocks)
		return MIGRATE_TYPES;
	pthread_mutex_lock(&pool->lock);
	mt = get_pageblock_migratetype(pool, pageblock << MM_PAGEBLOCK_ORDER);
	pool_unlock(pool);
	return mt;
}

/* Compaction's skip hint: nothing to gain here until the hints reset. */
bool get_pageblock_skip(struct mm_pool *pool, uint64_t pb)
{
	return get_pageblock_flags_group(pool, pb, PB_SKIP_MASK) != 0;
}

void set_pageblock_skip(struct mm_pool *pool, uint64_t pb, bool skip)
{
	set_pageblock_flags_group(pool, pb, skip ? PB_SKIP_MASK : 0, PB_SKIP_MASK);
}
