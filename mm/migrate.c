// SPDX-License-Identifier: GPL-2.0
/*
 * Moving or taking back one allocated block through its owner, the way
 * Linux's migrate_pages() works through callbacks: the allocator never
 * copies memory itself.
 *
 * A block is isolated first (F_ISOLATED, set by compare-and-swap against
 * a lock-free free from a per-thread list), then the owner's callback
 * runs without the pool lock. If the owner frees the block meanwhile, the
 * free is recorded (F_FREED) and carried out when the callback returns,
 * so neither side ever sees the block vanish under it.
 */
#include <errno.h>

#include "mm/internal.h"

bool __isolate_block(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	for (;;) {
		uint8_t old = __atomic_load_n(&f->state, __ATOMIC_RELAXED);

		if ((old & F_STATE_MASK) != MM_FRAME_ALLOC ||
		    (old & (F_ISOLATED | F_PINNED)))
			return false;
		if (frame_cmpxchg(f, old, old | F_ISOLATED))
			return true;
	}
}

/*
 * A free block taken off the buddy lists looks allocated and isolated,
 * owned by nobody: no merge takes it, no free reaches it, and no scanner
 * tries to move it, until it is a migration target or goes back.
 */
void __mark_isolated_free(struct mm_pool *pool, uint64_t pfn, unsigned int order)
{
	struct mm_frame *f = &pool->frames[pfn];

	set_frame_state(f, MM_FRAME_ALLOC | F_ISOLATED);
	f->order = order;
	set_frame_owner(f, MIGRATE_MOVABLE, MM_NO_OWNER);
	f->pins = 0;
}

/*
 * Take every free block in [@start, @end) off the buddy lists into
 * @held (*@nr of @max used); the pages taken. Compaction's free scanner
 * takes its targets this way, and lumpy reclaim the pieces of a lump, so
 * that nothing else is allocated there meanwhile.
 */
unsigned int __isolate_free_blocks(struct mm_pool *pool, uint64_t start,
				   uint64_t end, struct isolated *held,
				   unsigned int *nr, unsigned int max)
{
	unsigned int got = 0;

	for_each_block(pool, pfn, start, end) {
		unsigned int order = pool->frames[pfn].order;

		if (*nr >= max)
			break;
		if (frame_state(&pool->frames[pfn]) != MM_FRAME_FREE)
			continue;
		__del_free_block(pool, pfn);
		if (order >= MM_PAGEBLOCK_ORDER)
			__pageblocks_taken(pool, pfn, order);
		__mark_isolated_free(pool, pfn, order);
		held[(*nr)++] = (struct isolated){ (uint32_t)pfn, order };
		got += 1U << order;
	}
	return got;
}

/* Give the blocks in @held back to the buddy lists, merging as they go. */
void __release_isolated(struct mm_pool *pool, struct isolated *held,
			unsigned int *nr)
{
	for (unsigned int i = 0; i < *nr; i++) {
		set_frame_state(&pool->frames[held[i].pfn], MM_FRAME_ALLOC);
		__free_one_page(pool, held[i].pfn, held[i].order);
	}
	*nr = 0;
}

/* Movable: allocated, not unmovable, not pinned, its owner can migrate. */
bool __block_is_movable(struct mm_pool *pool, uint64_t pfn)
{
	const struct mm_frame *f = &pool->frames[pfn];
	const struct mm_owner *o;

	if (frame_state(f) != MM_FRAME_ALLOC || (frame_flags(f) & F_PINNED) ||
	    frame_mt(f) == MIGRATE_UNMOVABLE)
		return false;
	o = __owner_of(pool, frame_owner(f));
	return o && o->ops && (o->ops->migrate || o->ops->reclaim);
}

void __free_allocated(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	__lru_del(pool, pfn);
	set_frame_state(f, MM_FRAME_ALLOC);
	f->pins = 0;
	__free_one_page(pool, pfn, f->order);
}

/* The callback failed or the block went away: undo the isolation. */
void __putback_isolated(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	if (frame_flags(f) & F_FREED) {
		pool->counters.deferred_frees++;
		__free_allocated(pool, pfn);
		return;
	}
	frame_clear_flags(f, F_ISOLATED);
}

static void __migration_done(struct mm_pool *pool, uint64_t pfn,
			     uint64_t target)
{
	struct mm_frame *f = &pool->frames[pfn], *t = &pool->frames[target];
	uint8_t flags = frame_flags(f);
	/* the owner may already have freed the new block, or the old one */
	bool freed = (flags | frame_flags(t)) & F_FREED;

	set_frame_state(t, MM_FRAME_ALLOC);
	if (flags & F_LRU) {
		__lru_del(pool, pfn);
		__lru_add(pool, target);
		if (flags & F_ACTIVE) {
			list_del(pool, &pool->lru[t->mt][MM_LRU_INACTIVE], target);
			frame_set_flags(t, F_ACTIVE);
			list_add(pool, &pool->lru[t->mt][MM_LRU_ACTIVE], target);
		}
	}
	if (freed) {
		pool->counters.deferred_frees++;
		__free_allocated(pool, target);
	}
	__free_allocated(pool, pfn);
	pool->counters.pgmigrate_success += 1UL << t->order;
}

/*
 * Move the isolated block at @pfn into @target, an isolated free block of
 * the same order. Returns 0, or the owner's error (the block stays).
 */
int migrate_block(struct mm_pool *pool, uint64_t pfn, uint64_t target)
{
	struct mm_frame *f = &pool->frames[pfn], *t = &pool->frames[target];
	const struct mm_owner *o;
	unsigned int order;
	int ret = -EPERM;

	pthread_rwlock_rdlock(&pool->owners_lock);
	pthread_mutex_lock(&pool->lock);
	o = __owner_of(pool, frame_owner(f));
	order = f->order;
	t->order = order;
	t->mt = f->mt;
	t->owner = frame_owner(f);
	pool_unlock(pool);

	if (o && o->ops && o->ops->migrate)
		ret = o->ops->migrate(o->priv, pfn, target, order);

	pthread_mutex_lock(&pool->lock);
	if (ret == 0) {
		__migration_done(pool, pfn, target);
	} else if (ret == -EINPROGRESS) {
		/* undecided: the owner holds both and frees the one it does not use */
		set_frame_state(t, MM_FRAME_ALLOC);
		__putback_isolated(pool, pfn);
		pool->counters.pgmigrate_fail += 1UL << order;
	} else {
		set_frame_state(t, MM_FRAME_ALLOC);
		t->owner = MM_NO_OWNER;
		__free_one_page(pool, target, order);
		__putback_isolated(pool, pfn);
		pool->counters.pgmigrate_fail += 1UL << order;
	}
	pool_unlock(pool);
	pthread_rwlock_unlock(&pool->owners_lock);
	return ret;
}

/* Ask the owner to give the block at @pfn up; 0 when it is free now. */
int reclaim_block(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];
	const struct mm_owner *o;
	unsigned int order;
	int ret = -EPERM;

	pthread_rwlock_rdlock(&pool->owners_lock);
	pthread_mutex_lock(&pool->lock);
	/* isolated first: only then do its type and owner stay put */
	if (!__isolate_block(pool, pfn)) {
		pool_unlock(pool);
		pthread_rwlock_unlock(&pool->owners_lock);
		return -EBUSY;
	}
	o = __owner_of(pool, frame_owner(f));
	if (!o || !o->ops || !o->ops->reclaim || f->mt == MIGRATE_UNMOVABLE) {
		__putback_isolated(pool, pfn);
		pool_unlock(pool);
		pthread_rwlock_unlock(&pool->owners_lock);
		return -EBUSY;
	}
	order = f->order;
	pool_unlock(pool);

	ret = o->ops->reclaim(o->priv, pfn, order);

	pthread_mutex_lock(&pool->lock);
	if (ret == 0) {
		if (frame_flags(f) & F_FREED)
			pool->counters.deferred_frees++;
		__free_allocated(pool, pfn);
		pool->counters.reclaim_success++;
	} else {
		bool freed = frame_flags(f) & F_FREED;

		__putback_isolated(pool, pfn);
		if (!freed && !(frame_flags(f) & F_LRU))
			__lru_add(pool, pfn);
		pool->counters.reclaim_fail++;
	}
	pool_unlock(pool);
	pthread_rwlock_unlock(&pool->owners_lock);
	return ret;
}
