// SPDX-License-Identifier: GPL-2.0
/*
 * Lumpy reclaim (Whitcroft): when a request of order N fails, take the
 * victim at the tail of an LRU as usual, but also free everything else in
 * the victim's aligned order-N neighbourhood, so that one reclaim pass
 * yields one whole block instead of N scattered pages. Neighbours are
 * reclaimed when their owner can give them back, migrated out when it can
 * move them; one unmovable or pinned neighbour spoils the lump.
 *
 * While a lump is worked on, its free pieces are held out of the buddy
 * lists, so migration targets land outside it and no other allocation
 * slips into the block being assembled.
 */
#include <stdlib.h>

#include "mm/internal.h"

#define LUMPY_MAX_VICTIMS	8

struct lump {
	uint64_t base;
	unsigned int order;
	uint32_t *heads, nr_heads;
	struct isolated *pieces;
	unsigned int nr_pieces;
};

static unsigned int lump_pages(const struct lump *l)
{
	return 1U << l->order;
}

static uint32_t __pick_victim(struct mm_pool *pool, enum mm_migratetype mt)
{
	static const enum mm_migratetype order_of_types[MIGRATE_TYPES][MIGRATE_TYPES] = {
		[MIGRATE_UNMOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE, MIGRATE_UNMOVABLE },
		[MIGRATE_RECLAIMABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE, MIGRATE_UNMOVABLE },
		[MIGRATE_MOVABLE] = { MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	};

	for (int i = 0; i < MIGRATE_TYPES; i++) {
		for (int lru = MM_LRU_INACTIVE; lru < MM_LRU_LISTS; lru++) {
			struct frame_list *l = &pool->lru[order_of_types[mt][i]][lru];
			uint32_t pfn = l->tail;

			if (pfn == NIL)
				continue;
			/* rotate it, so the next attempt looks at another lump */
			list_del(pool, l, pfn);
			list_add(pool, l, pfn);
			return pfn;
		}
	}
	return NIL;
}

/*
 * Look over the lump under the pool lock: collect its allocated heads,
 * false if one cannot go or spills over the lump's edge.
 */
static bool __survey_lump(struct mm_pool *pool, struct lump *l)
{
	uint64_t end = l->base + lump_pages(l);

	l->nr_heads = 0;
	for_each_block(pool, pfn, l->base, end) {
		const struct mm_frame *f = &pool->frames[pfn];
		uint8_t state = frame_state(f);

		if (state == MM_FRAME_PCP)
			return false;
		if (state == MM_FRAME_TAIL)
			continue;
		if (next_block(pool, pfn) > end)
			return false;
		if (state != MM_FRAME_ALLOC)
			continue;
		if ((frame_flags(f) & F_ISOLATED) || !__block_is_movable(pool, pfn))
			return false;
		l->heads[l->nr_heads++] = (uint32_t)pfn;
	}
	return true;
}

/*
 * A migration target outside the lump, isolated; -1 when there is none.
 * Pieces of the lump that neighbours freed meanwhile come back first:
 * they are held with the others, and the search goes on.
 */
static long __target_outside(struct mm_pool *pool, struct lump *l,
			     unsigned int order, uint32_t owner)
{
	for (;;) {
		/* in an owner's own room: a pageblock taken for it would undo the lump */
		long t = __rmqueue_for(pool, order, MIGRATE_MOVABLE, owner, false);

		if (t < 0)
			return -1;
		__mark_isolated_free(pool, (uint64_t)t, order);
		if ((uint64_t)t < l->base || (uint64_t)t >= l->base + lump_pages(l))
			return t;
		l->pieces[l->nr_pieces++] = (struct isolated){ (uint32_t)t, order };
	}
}

/*
 * Free one neighbour: reclaim it if its owner can give it up now, else
 * migrate it out. An owner may decline (a guest page it thinks hot): the
 * block is then moved like any movable one, and only one that can neither
 * go nor move spoils the lump.
 */
static bool clear_neighbour(struct mm_pool *pool, struct lump *l, uint64_t pfn)
{
	unsigned int order;
	long target;

	pthread_mutex_lock(&pool->lock);
	order = pool->frames[pfn].order;
	if (frame_state(&pool->frames[pfn]) != MM_FRAME_ALLOC) {
		pool_unlock(pool);
		return true;	/* its owner freed it meanwhile */
	}
	if (owner_has_reclaim(pool, frame_owner(&pool->frames[pfn]))) {
		pool_unlock(pool);
		if (!reclaim_block(pool, pfn)) {
			pthread_mutex_lock(&pool->lock);
			pool->counters.lumpy_reclaimed += 1UL << order;
			pool_unlock(pool);
			return true;
		}
		pthread_mutex_lock(&pool->lock);
		if (frame_state(&pool->frames[pfn]) != MM_FRAME_ALLOC) {
			pool_unlock(pool);
			return true;
		}
		if (!owner_has_migrate(pool, frame_owner(&pool->frames[pfn]))) {
			pool_unlock(pool);
			return false;
		}
	}
	if (!__isolate_block(pool, pfn)) {
		pool_unlock(pool);
		return false;
	}
	/* now that it holds still: is it still what the survey saw? */
	if (!__block_is_movable(pool, pfn) ||
	    (target = __target_outside(pool, l, pool->frames[pfn].order,
				       frame_owner(&pool->frames[pfn]))) < 0) {
		__putback_isolated(pool, pfn);
		pool_unlock(pool);
		return false;
	}
	order = pool->frames[pfn].order;
	pool_unlock(pool);
	if (migrate_block(pool, pfn, target))
		return false;
	pthread_mutex_lock(&pool->lock);
	pool->counters.lumpy_migrated += 1UL << order;
	pool_unlock(pool);
	return true;
}

static bool try_lump(struct mm_pool *pool, struct lump *l)
{
	bool ok;

	pthread_mutex_lock(&pool->lock);
	ok = __survey_lump(pool, l);
	l->nr_pieces = 0;
	if (ok)
		__isolate_free_blocks(pool, l->base, l->base + lump_pages(l),
				      l->pieces, &l->nr_pieces, lump_pages(l));
	pool_unlock(pool);
	for (uint32_t i = 0; ok && i < l->nr_heads; i++)
		ok = clear_neighbour(pool, l, l->heads[i]);
	pthread_mutex_lock(&pool->lock);
	__release_isolated(pool, l->pieces, &l->nr_pieces);
	ok = ok && frame_state(&pool->frames[l->base]) == MM_FRAME_FREE &&
	     pool->frames[l->base].order >= l->order;
	pool_unlock(pool);
	return ok;
}

bool lumpy_reclaim(struct mm_pool *pool, unsigned int order,
		   enum mm_migratetype mt)
{
	struct lump l = { .order = order };
	bool ok = false;

	l.heads = malloc(sizeof(*l.heads) << order);
	l.pieces = malloc(sizeof(*l.pieces) << order);
	if (!l.heads || !l.pieces)
		goto out;
	pthread_rwlock_rdlock(&pool->owners_lock);
	for (int v = 0; v < LUMPY_MAX_VICTIMS && !ok; v++) {
		uint32_t victim;

		pthread_mutex_lock(&pool->lock);
		pool->counters.lumpy_attempt++;
		victim = __pick_victim(pool, mt);
		pool_unlock(pool);
		if (victim == NIL)
			break;
		l.base = victim & ~((1UL << order) - 1);
		if (l.base + (1UL << order) > pool->nr_frames)
			continue;
		ok = try_lump(pool, &l);
	}
	if (ok) {
		pthread_mutex_lock(&pool->lock);
		pool->counters.lumpy_success++;
		pool_unlock(pool);
	}
	pthread_rwlock_unlock(&pool->owners_lock);
out:
	free(l.heads);
	free(l.pieces);
	return ok;
}
