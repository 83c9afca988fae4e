// SPDX-License-Identifier: GPL-2.0
/*
 * Pageblocks owned whole (mm_set_owned_blocks): in a pool shared by VMs
 * of different owners, the owner becomes part of a pageblock's type,
 * beside its migratetype, as the seed groups pages by mobility. An
 * owner's order-0..8 allocations come from its own pageblocks only, and
 * what it frees there stays on its own free lists; a pageblock is taken
 * from the pool's free 2 MiB blocks when the owner has no room left, and
 * goes back the moment it is wholly free again. So 4 KiB frames of two
 * owners never share a pageblock, a pin or a split fragments only the
 * pinner's own memory, and how many pageblocks an owner holds is a count
 * the pool keeps (and may limit) rather than a walk.
 *
 * Allocations of MM_NO_OWNER, and of a cookie that was never registered,
 * keep the pool's own lists: their pageblocks have no owner.
 */
#include <errno.h>
#include <stdlib.h>

#include "mm/internal.h"

uint64_t __owned_free_pages(const struct owned_blocks *ob)
{
	uint64_t n = 0;

	for (unsigned int o = 0; o < MM_PAGEBLOCK_ORDER; o++)
		n += ob->free_area[o].nr_free << o;
	return n;
}

int mm_set_owned_blocks(struct mm_pool *pool)
{
	int ret = 0;

	pthread_rwlock_wrlock(&pool->owners_lock);
	pthread_mutex_lock(&pool->lock);
	if (pool->owned_blocks)
		goto out;
	/* a block allocated before would belong to no owner's count */
	if (pool->free_pages != pool->nr_frames || pool->nr_owners) {
		ret = -EBUSY;
		goto out;
	}
	pool->pb_owner = calloc(pool->nr_pageblocks, sizeof(*pool->pb_owner));
	pool->pb_next = calloc(pool->nr_pageblocks, sizeof(*pool->pb_next));
	pool->pb_prev = calloc(pool->nr_pageblocks, sizeof(*pool->pb_prev));
	pool->owned = calloc(MM_MAX_OWNERS + 1, sizeof(*pool->owned));
	if (!pool->pb_owner || !pool->pb_next || !pool->pb_prev || !pool->owned) {
		free(pool->pb_owner);
		free(pool->pb_next);
		free(pool->pb_prev);
		free(pool->owned);
		pool->pb_owner = pool->pb_next = pool->pb_prev = NULL;
		pool->owned = NULL;
		ret = -ENOMEM;
		goto out;
	}
	pool->owned_blocks = true;
out:
	pool_unlock(pool);
	pthread_rwlock_unlock(&pool->owners_lock);
	return ret;
}

void owned_blocks_exit(struct mm_pool *pool)
{
	for (uint32_t s = 0; pool->owned && s <= MM_MAX_OWNERS; s++)
		free(pool->owned[s]);
	free(pool->owned);
	free(pool->pb_owner);
	free(pool->pb_next);
	free(pool->pb_prev);
}

/*
 * A registered owner gets its lists once per slot. A slot's lists are
 * reused by the slot's next owner only when they are empty: the slot is
 * not taken again while an old owner still holds pageblocks (owner.c).
 * Called with owners_lock write-held.
 */
int __owned_register(struct mm_pool *pool, uint32_t id)
{
	uint32_t slot = id & MM_OWNER_SLOT_MASK;
	struct owned_blocks *ob;

	if (!pool->owned_blocks)
		return 0;
	ob = pool->owned[slot];
	if (!ob) {
		ob = calloc(1, sizeof(*ob));
		if (!ob)
			return -ENOMEM;
		for (unsigned int o = 0; o < MM_PAGEBLOCK_ORDER; o++)
			for (int t = 0; t < MIGRATE_TYPES; t++)
				list_init(&ob->free_area[o].free_list[t]);
		ob->first_pb = NIL;
	}
	pthread_mutex_lock(&pool->lock);
	ob->id = id;
	ob->limit = UINT64_MAX;
	pool->owned[slot] = ob;
	pool_unlock(pool);
	return 0;
}

/* May the slot of a retired owner be used again? Its pageblocks are all back. */
bool __owned_slot_free(struct mm_pool *pool, uint32_t slot)
{
	bool empty;

	if (!pool->owned_blocks || !pool->owned[slot])
		return true;
	pthread_mutex_lock(&pool->lock);
	empty = pool->owned[slot]->nr_pageblocks == 0;
	pool_unlock(pool);
	return empty;
}

/* The lists of @owner's pageblocks, or NULL when it can own none. */
struct owned_blocks *__owned_of(struct mm_pool *pool, uint32_t owner)
{
	struct owned_blocks *ob;

	if (!pool->owned_blocks || owner == MM_NO_OWNER)
		return NULL;
	ob = pool->owned[owner & MM_OWNER_SLOT_MASK];
	return ob && ob->id == owner ? ob : NULL;
}

static void __pb_list_add(struct mm_pool *pool, struct owned_blocks *ob, uint32_t pb)
{
	pool->pb_prev[pb] = NIL;
	pool->pb_next[pb] = ob->first_pb;
	if (ob->first_pb != NIL)
		pool->pb_prev[ob->first_pb] = pb;
	ob->first_pb = pb;
	ob->nr_pageblocks++;
}

static void __pb_list_del(struct mm_pool *pool, struct owned_blocks *ob, uint32_t pb)
{
	if (pool->pb_prev[pb] != NIL)
		pool->pb_next[pool->pb_prev[pb]] = pool->pb_next[pb];
	else
		ob->first_pb = pool->pb_next[pb];
	if (pool->pb_next[pb] != NIL)
		pool->pb_prev[pool->pb_next[pb]] = pool->pb_prev[pb];
	ob->nr_pageblocks--;
}

/* The pageblocks of a block of @order at @pfn become @ob's. */
static void __own_pageblocks(struct mm_pool *pool, struct owned_blocks *ob, uint64_t pfn,
			     unsigned int order)
{
	for_each_pageblock_in(pb, pfn, order) {
		__atomic_store_n(&pool->pb_owner[pb], ob->id, __ATOMIC_RELAXED);
		__pb_list_add(pool, ob, (uint32_t)pb);
	}
}

/*
 * A block of @order >= a pageblock at @pfn is wholly free: its pageblocks
 * belong to no one any more. (Only the one the free began in can have
 * had an owner: a wholly free pageblock never has one.)
 */
void __disown_pageblocks(struct mm_pool *pool, uint64_t pfn, unsigned int order)
{
	for_each_pageblock_in(pb, pfn, order) {
		uint32_t owner = pool->pb_owner[pb];
		struct owned_blocks *ob = owner ? pool->owned[owner & MM_OWNER_SLOT_MASK] : NULL;

		if (!ob)
			continue;
		__pb_list_del(pool, ob, (uint32_t)pb);
		__atomic_store_n(&pool->pb_owner[pb], MM_NO_OWNER, __ATOMIC_RELAXED);
		pool->counters.owned_released++;
	}
}

/* Where a free block of @order at @pfn is listed: its owner's lists, or the pool's. */
struct free_area *__area_of(struct mm_pool *pool, uint64_t pfn, unsigned int order)
{
	uint32_t owner;

	if (!pool->owned_blocks || order >= MM_PAGEBLOCK_ORDER)
		return &pool->free_area[order];
	owner = pool->pb_owner[pfn >> MM_PAGEBLOCK_ORDER];
	if (owner == MM_NO_OWNER)
		return &pool->free_area[order];
	return &pool->owned[owner & MM_OWNER_SLOT_MASK]->free_area[order];
}

/* The smallest free block of @mt in @ob's own pageblocks that fits. */
static long __rmqueue_own_smallest(struct mm_pool *pool, struct owned_blocks *ob,
				   unsigned int order, enum mm_migratetype mt)
{
	for (unsigned int o = order; o < MM_PAGEBLOCK_ORDER; o++) {
		uint32_t pfn = ob->free_area[o].free_list[mt].head;

		if (pfn == NIL)
			continue;
		__del_free_block(pool, pfn);
		expand(pool, pfn, order, o, mt);
		return pfn;
	}
	return -1;
}

/* Another type's room in @ob's pageblocks, the pageblock converted (the seed's steal). */
static long __rmqueue_own_fallback(struct mm_pool *pool, struct owned_blocks *ob,
				   unsigned int order, enum mm_migratetype mt)
{
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		uint32_t pfn = NIL;

		if (t == (int)mt)
			continue;
		for (unsigned int o = order; o < MM_PAGEBLOCK_ORDER && pfn == NIL; o++)
			pfn = ob->free_area[o].free_list[t].head;
		if (pfn == NIL)
			continue;
		if (pool->grouping)
			move_freepages_block(pool, pfn, mt);
		pool->counters.fallback[mt]++;
		return __rmqueue_own_smallest(pool, ob, order, mt);
	}
	return -1;
}

/*
 * An allocation for an owner of a pool whose pageblocks are owned: its
 * own room of the type first, then a free pageblock of the pool taken
 * whole (unless @claim is false or the owner holds its limit), then its
 * own room of another type. -1: none, -2: none within its limit.
 */
long __rmqueue_owned(struct mm_pool *pool, struct owned_blocks *ob, unsigned int order,
		     enum mm_migratetype mt, bool claim)
{
	unsigned int take = order > MM_PAGEBLOCK_ORDER ? order : MM_PAGEBLOCK_ORDER;
	long pfn = order < MM_PAGEBLOCK_ORDER ? __rmqueue_own_smallest(pool, ob, order, mt) : -1;

	if (pfn >= 0)
		return pfn;
	if (claim && ob->nr_pageblocks + (1UL << (take - MM_PAGEBLOCK_ORDER)) <= ob->limit) {
		pfn = __rmqueue(pool, take, mt);
		if (pfn >= 0) {
			__own_pageblocks(pool, ob, (uint64_t)pfn, take);
			pool->counters.owned_claimed++;
			expand(pool, (uint64_t)pfn, order, take, mt);
			return pfn;
		}
	}
	pfn = order < MM_PAGEBLOCK_ORDER ? __rmqueue_own_fallback(pool, ob, order, mt) : -1;
	if (pfn < 0 && claim && ob->nr_pageblocks >= ob->limit)
		return -2;
	return pfn;
}

/* The queue for @owner: its own pageblocks where it has them, else the pool's lists. */
long __rmqueue_for(struct mm_pool *pool, unsigned int order, enum mm_migratetype mt,
		   uint32_t owner, bool claim)
{
	struct owned_blocks *ob = __owned_of(pool, owner);

	return ob ? __rmqueue_owned(pool, ob, order, mt, claim) : __rmqueue(pool, order, mt);
}

int mm_owner_set_limit(struct mm_pool *pool, uint32_t owner, uint64_t pageblocks)
{
	struct owned_blocks *ob;
	int ret = -ENOENT;

	pthread_mutex_lock(&pool->lock);
	ob = __owned_of(pool, owner);
	if (ob) {
		ob->limit = pageblocks;
		ret = 0;
	}
	pool_unlock(pool);
	return ret;
}

uint64_t mm_owner_pageblocks(struct mm_pool *pool, uint32_t owner)
{
	struct owned_blocks *ob;
	uint64_t n = 0;

	pthread_mutex_lock(&pool->lock);
	ob = __owned_of(pool, owner);
	if (ob)
		n = ob->nr_pageblocks;
	pool_unlock(pool);
	return n;
}

uint32_t __pageblock_owner(struct mm_pool *pool, uint64_t pb)
{
	return pool->owned_blocks ? __atomic_load_n(&pool->pb_owner[pb], __ATOMIC_RELAXED)
				  : MM_NO_OWNER;
}

/* The free lists of every owner, added to a snapshot's (stats, compaction). */
void __owned_free_counts(struct mm_pool *pool, uint64_t *nr_free,
			 uint64_t (*nr_free_type)[MM_MAX_ORDER])
{
	uint32_t n = __atomic_load_n(&pool->nr_owners, __ATOMIC_ACQUIRE);

	for (uint32_t s = 1; pool->owned_blocks && s <= n; s++) {
		const struct owned_blocks *ob = pool->owned[s];

		for (unsigned int o = 0; ob && o < MM_PAGEBLOCK_ORDER; o++) {
			nr_free[o] += ob->free_area[o].nr_free;
			for (int t = 0; nr_free_type && t < MIGRATE_TYPES; t++)
				nr_free_type[t][o] += ob->free_area[o].free_list[t].count;
		}
	}
}
