// SPDX-License-Identifier: GPL-2.0
/*
 * The buddy allocator proper: free_area[order].free_list[migratetype],
 * splitting on allocation and merging on free. All functions here run with
 * pool->lock held.
 */
#include "mm/internal.h"

void __add_free_block(struct mm_pool *pool, uint64_t pfn, unsigned int order,
		      enum mm_migratetype mt)
{
	struct mm_frame *f = &pool->frames[pfn];
	struct free_area *area = __area_of(pool, pfn, order);

	set_frame_state(f, MM_FRAME_FREE);
	f->order = order;
	set_frame_owner(f, mt, MM_NO_OWNER);
	list_add(pool, &area->free_list[mt], pfn);
	area->nr_free++;
	pool->free_pages += 1UL << order;
}

void __del_free_block(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];
	struct free_area *area = __area_of(pool, pfn, f->order);

	list_del(pool, &area->free_list[f->mt], pfn);
	area->nr_free--;
	pool->free_pages -= 1UL << f->order;
	set_frame_state(f, MM_FRAME_TAIL);
}

/*
 * Split a block of order @high down to @low, keeping the lowest piece and
 * putting each upper half on the @mt list: the remainder of a block serves
 * the same type later, which is what keeps a pageblock homogeneous.
 */
void expand(struct mm_pool *pool, uint64_t pfn, unsigned int low,
	    unsigned int high, enum mm_migratetype mt)
{
	while (high > low) {
		high--;
		__add_free_block(pool, pfn + (1UL << high), high, mt);
	}
}

static bool page_is_buddy(struct mm_pool *pool, uint64_t buddy,
			  unsigned int order)
{
	const struct mm_frame *f;

	if (buddy + (1UL << order) > pool->nr_frames)
		return false;
	f = &pool->frames[buddy];
	return frame_state(f) == MM_FRAME_FREE && f->order == order;
}

/*
 * Merge with free buddies as far as they go. The merged block goes on the
 * free list of its pageblock's type (patch 010: the pageblock, not the page,
 * decides), so a page an UNMOVABLE request borrowed from a MOVABLE block
 * returns to MOVABLE. A block larger than a pageblock is wholly free, so
 * its pageblocks take the head's type and the counts stay truthful.
 */
void __free_one_page(struct mm_pool *pool, uint64_t pfn, unsigned int order)
{
	enum mm_migratetype mt;

	set_frame_state(&pool->frames[pfn], MM_FRAME_TAIL);
	for (;; order++) {
		uint64_t buddy = pfn ^ (1UL << order);

		/* wholly free after use, with a file per pageblock: a fresh one first */
		if (order >= MM_PAGEBLOCK_ORDER && pool->pb_files &&
		    __pageblocks_retire(pool, pfn, order))
			return;
		if (order >= MM_MAX_ORDER - 1 || !page_is_buddy(pool, buddy, order))
			break;
		__del_free_block(pool, buddy);
		pfn &= buddy;
	}
	mt = free_list_type(pool, pfn);
	/* wholly free: the pageblock is no one's now */
	if (order >= MM_PAGEBLOCK_ORDER && pool->owned_blocks)
		__disown_pageblocks(pool, pfn, order);
	if (order > MM_PAGEBLOCK_ORDER && pool->grouping)
		set_pageblocks_migratetype(pool, pfn, order, mt);
	__add_free_block(pool, pfn, order, mt);
}

/*
 * Take the smallest free block of @mt that fits. Splitting a block of at
 * least a pageblock claims the pageblock(s) for @mt (patch 010).
 */
long __rmqueue_smallest(struct mm_pool *pool, unsigned int order,
			enum mm_migratetype mt)
{
	for (unsigned int o = order; o < MM_MAX_ORDER; o++) {
		uint32_t pfn = pool->free_area[o].free_list[mt].head;

		if (pfn == NIL)
			continue;
		__del_free_block(pool, pfn);
		if (o >= MM_PAGEBLOCK_ORDER) {
			if (pool->grouping)
				set_pageblocks_migratetype(pool, pfn, o, mt);
			__pageblocks_taken(pool, pfn, order);
		}
		expand(pool, pfn, order, o, mt);
		return pfn;
	}
	return -1;
}

/*
 * Plain buddy (grouping off) still finds blocks left on other lists by a
 * run with grouping on; it just never converts or counts a fallback.
 */
static long __rmqueue_any(struct mm_pool *pool, unsigned int order)
{
	static const enum mm_migratetype order_of_lists[] = {
		MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE,
	};

	for (unsigned int i = 0; i < MIGRATE_TYPES; i++) {
		long pfn = __rmqueue_smallest(pool, order, order_of_lists[i]);

		if (pfn >= 0)
			return pfn;
	}
	return -1;
}

long __rmqueue(struct mm_pool *pool, unsigned int order,
	       enum mm_migratetype mt)
{
	long pfn;

	if (!pool->grouping)
		return __rmqueue_any(pool, order);
	pfn = __rmqueue_smallest(pool, order, mt);
	if (pfn < 0)
		pfn = __rmqueue_fallback(pool, order, mt);
	return pfn;
}

/* Would a request of @order find a free block, of any type? */
bool __have_free_block(struct mm_pool *pool, unsigned int order)
{
	for (unsigned int o = order; o < MM_MAX_ORDER; o++)
		if (pool->free_area[o].nr_free)
			return true;
	return false;
}

/*
 * The head of the block that covers @pfn: blocks are aligned to their
 * order, so it is the nearest aligned head whose order reaches over @pfn.
 * NIL when there is none, which a frame map under pool->lock never shows.
 */
uint64_t __block_head(struct mm_pool *pool, uint64_t pfn)
{
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		uint64_t head = pfn & ~((1UL << o) - 1);
		const struct mm_frame *f = &pool->frames[head];

		if (frame_state(f) != MM_FRAME_TAIL && f->order >= o)
			return head;
	}
	return NIL;
}

void __mark_allocated(struct mm_pool *pool, uint64_t pfn, unsigned int order,
		      enum mm_migratetype mt, uint32_t owner)
{
	struct mm_frame *f = &pool->frames[pfn];

	set_frame_state(f, MM_FRAME_ALLOC);
	f->order = order;
	set_frame_owner(f, mt, owner);
	pool->counters.alloc[order]++;
}
