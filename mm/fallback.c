// SPDX-License-Identifier: GPL-2.0
/*
 * What to do when a migratetype's own lists are empty: borrow from another
 * type (patch 007's fallbacks[] and __rmqueue_fallback). Runs under
 * pool->lock.
 */
#include "mm/internal.h"

/*
 * The order in which other types are raided. UNMOVABLE and RECLAIMABLE
 * prefer each other, because mixing two kinds of hard-to-move memory costs
 * less than polluting a MOVABLE block; MOVABLE prefers RECLAIMABLE because
 * those pages can at least be given back later.
 */
static const enum mm_migratetype fallbacks[MIGRATE_TYPES][MIGRATE_TYPES - 1] = {
	[MIGRATE_UNMOVABLE]   = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE,   MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE]     = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
};

/*
 * Re-type every free block inside the pageblock of @pfn and claim the
 * pageblock for @mt. Allocated frames keep their pages; they come back to
 * the @mt lists when freed. Returns the number of free pages moved.
 */
unsigned int move_freepages_block(struct mm_pool *pool, uint64_t pfn,
				  enum mm_migratetype mt)
{
	uint64_t start = pfn & ~(MM_PAGEBLOCK_PAGES - 1);
	unsigned int moved = 0;

	set_pageblock_migratetype(pool, start, mt);
	for_each_block(pool, p, start, start + MM_PAGEBLOCK_PAGES) {
		struct mm_frame *f = &pool->frames[p];
		struct free_area *area = __area_of(pool, p, f->order);

		if (frame_state(f) != MM_FRAME_FREE || f->mt == mt)
			continue;
		list_del(pool, &area->free_list[f->mt], p);
		list_add(pool, &area->free_list[mt], p);
		f->mt = mt;
		moved += 1U << f->order;
	}
	return moved;
}

static void steal_pageblock(struct mm_pool *pool, uint64_t pfn,
			    unsigned int order, enum mm_migratetype mt)
{
	if (order >= MM_PAGEBLOCK_ORDER)
		set_pageblocks_migratetype(pool, pfn, order, mt);
	else
		move_freepages_block(pool, pfn, mt);
	pool->counters.pageblock_steal++;
}

/*
 * Take the LARGEST free block of a fallback type: a big block is most
 * likely a whole pageblock that can be converted, and breaking it hurts
 * the other type less than nibbling at many of its blocks would.
 */
long __rmqueue_fallback(struct mm_pool *pool, unsigned int order,
			enum mm_migratetype start_mt)
{
	for (int o = MM_MAX_ORDER - 1; o >= (int)order; o--) {
		for (int i = 0; i < MIGRATE_TYPES - 1; i++) {
			enum mm_migratetype mt = fallbacks[start_mt][i];
			uint32_t pfn = pool->free_area[o].free_list[mt].head;

			if (pfn == NIL)
				continue;
			__del_free_block(pool, pfn);
			pool->counters.fallback[start_mt]++;
			if (o >= STEAL_WHOLE_BLOCK_ORDER)
				steal_pageblock(pool, pfn, o, start_mt);
			if (o >= MM_PAGEBLOCK_ORDER)
				__pageblocks_taken(pool, pfn, order);
			expand(pool, pfn, order, o, start_mt);
			return pfn;
		}
	}
	return -1;
}
