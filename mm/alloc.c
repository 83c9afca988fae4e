// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator's entry points: argument checks, the per-thread fast path,
 * the pool-locked slow path, and the drain-and-retry of patch 006.
 */
#include <errno.h>

#include "mm/internal.h"

/*
 * A block lumpy reclaim frees goes back to the buddy lists, where another
 * thread may take it before this one allocates: try a few lumps, not
 * forever, since each costs owner callbacks.
 */
#define LUMPY_RETRIES	4

static long rmqueue(struct mm_pool *pool, unsigned int order,
		    enum mm_migratetype mt, uint32_t owner)
{
	long pfn;

	pthread_mutex_lock(&pool->lock);
	pfn = __rmqueue_for(pool, order, mt, owner, true);
	if (pfn >= 0)
		__mark_allocated(pool, pfn, order, mt, owner);
	pool_unlock(pool);
	return pfn;
}

/*
 * An owner of owned pageblocks allocates under the pool's lock: a
 * per-thread list holds frames of any pageblock, and would hand it
 * another owner's.
 */
static long try_alloc(struct mm_pool *pool, struct mm_pcp *pcp,
		      unsigned int order, enum mm_migratetype mt,
		      uint32_t owner)
{
	if (pcp && order == 0 && !__owned_of(pool, owner))
		return pcp_alloc(pcp, mt, owner);
	return rmqueue(pool, order, mt, owner);
}

/*
 * The smallest free block a fallback may take whole. The seed converts a
 * pageblock from STEAL_WHOLE_BLOCK_ORDER up, but on a nearly full pool
 * such a block is a hole in a pageblock still full of movable pages: the
 * pageblock turns unmovable, the few free pages serve a few requests, and
 * the next claim converts another one. Unmovable memory that would fit
 * in 8 pageblocks ends up over 50 of them. MM_POLICY_CLAIM_WHOLE takes
 * only a wholly free pageblock and has compaction empty one otherwise.
 */
static unsigned int __claim_order(struct mm_pool *pool)
{
	return (pool->policy & MM_POLICY_CLAIM_WHOLE) ? MM_PAGEBLOCK_ORDER
						      : STEAL_WHOLE_BLOCK_ORDER;
}

/*
 * Would an unmovable or reclaimable request have to take a small piece of
 * another type's pageblock? That is how the seed scatters unmovable memory
 * over a nearly full pool: no free block is large enough to claim, so
 * every request pollutes another block.
 */
static bool __would_scatter(struct mm_pool *pool, unsigned int order,
			    enum mm_migratetype mt)
{
	for (unsigned int o = order; o < MM_MAX_ORDER; o++)
		if (pool->free_area[o].free_list[mt].count)
			return false;
	return !__have_free_block(pool, __claim_order(pool));
}

/*
 * A compaction that found no movable pageblock to empty will find none on
 * the next request either, and each try sweeps the whole pool. As Linux
 * defers compaction, skip the next 2^shift claims after a failure,
 * doubling up to 64; one success ends the backing off. Only under
 * MM_POLICY_CLAIM_WHOLE, which claims far more often than the seed.
 */
#define CLAIM_DEFER_SHIFT_MAX	6

static bool __claim_deferred(struct mm_pool *pool)
{
	if (!(pool->policy & MM_POLICY_CLAIM_WHOLE) || !pool->claim_defer_shift)
		return false;
	if (++pool->claim_considered >= 1U << pool->claim_defer_shift) {
		pool->claim_considered = 0;
		return false;
	}
	pool->counters.claim_deferred++;
	return true;
}

static void __claim_done(struct mm_pool *pool, bool success)
{
	pool->claim_considered = 0;
	if (success) {
		pool->claim_defer_shift = 0;
		pool->counters.claim_block++;
	} else if (pool->claim_defer_shift < CLAIM_DEFER_SHIFT_MAX) {
		pool->claim_defer_shift++;
	}
}

/*
 * Better than the seed for a near-full pool: rather than scatter an
 * unmovable or reclaimable request, compact one movable pageblock free
 * and let the fallback claim it whole; later requests of the type then
 * fill it. Called with no lock held (compaction drains every per-thread
 * list): by mm_alloc for a request the buddy lists serve, by pcp_alloc
 * only when its list of @mt ran dry, so that a per-thread hit pays
 * nothing for it.
 */
void claim_block(struct mm_pool *pool, unsigned int order,
		 enum mm_migratetype mt)
{
	bool scatter;
	int ret;

	if (!(pool->policy & MM_POLICY_CLAIM_BLOCK) || mt == MIGRATE_MOVABLE ||
	    !pool->grouping)
		return;
	pthread_mutex_lock(&pool->lock);
	scatter = __would_scatter(pool, order, mt) && !__claim_deferred(pool);
	pool_unlock(pool);
	if (!scatter)
		return;
	ret = compact_for_order(pool, MM_PAGEBLOCK_ORDER, true);
	pthread_mutex_lock(&pool->lock);
	__claim_done(pool, ret == COMPACT_SUCCESS);
	pool_unlock(pool);
}

/*
 * The slow path, in the order the seed and its successors use: spill the
 * per-thread lists (patch 006), lumpy reclaim around LRU victims, then
 * direct compaction for costly orders.
 */
static long alloc_slowpath(struct mm_pool *pool, struct mm_pcp *pcp,
			   unsigned int order, enum mm_migratetype mt,
			   uint32_t owner)
{
	long pfn;

	mm_drain_all(pool);
	pfn = try_alloc(pool, pcp, order, mt, owner);
	if (pfn >= 0 || !order)
		return pfn;
	if (pool->policy & MM_POLICY_LUMPY) {
		for (int i = 0; i < LUMPY_RETRIES && pfn < 0; i++) {
			if (!lumpy_reclaim(pool, order, mt))
				break;
			pfn = try_alloc(pool, pcp, order, mt, owner);
		}
	}
	if (pfn < 0 && order > MM_COSTLY_ORDER && (pool->policy & MM_POLICY_COMPACT) &&
	    compact_for_order(pool, order, true) == COMPACT_SUCCESS)
		pfn = try_alloc(pool, pcp, order, mt, owner);
	return pfn;
}

/*
 * @may_move: the request may reclaim and compact, which call back into
 * owners. A caller that holds a lock an owner's callback takes (a VM's
 * fault path under its memory lock) must not: Linux's GFP_NOWAIT. Its
 * slow path only spills the per-thread lists. Only MOVABLE requests come
 * without it (mm_alloc_nowait): pcp_alloc would claim a block for others.
 */
static long __mm_alloc(struct mm_pool *pool, struct mm_pcp *pcp, unsigned int order,
		       enum mm_migratetype mt, uint32_t owner, bool may_move)
{
	long pfn;

	if (order >= MM_MAX_ORDER || !valid_migratetype(mt))
		return -EINVAL;
	if (pcp && pcp->pool != pool)
		return -EINVAL;
	if (mm_fault_hit(MM_FAULT_FRAME))
		return -ENOMEM;
	if ((!pcp || order) && may_move)
		claim_block(pool, order, mt);
	pfn = try_alloc(pool, pcp, order, mt, owner);
	if (pfn < 0 && may_move) {
		pfn = alloc_slowpath(pool, pcp, order, mt, owner);
	} else if (pfn < 0) {
		mm_drain_all(pool);
		pfn = try_alloc(pool, pcp, order, mt, owner);
	}
	if (pfn < 0) {
		pthread_mutex_lock(&pool->lock);
		pool->counters.alloc_fail++;
		pool_unlock(pool);
		return pfn == RMQUEUE_OVER_LIMIT ? -EDQUOT : -ENOMEM;
	}
	if (__atomic_load_n(&pool->host_prep_pending, __ATOMIC_RELAXED))
		hostmem_prepare_pending(pool);
	/* unmovable memory is never reclaimed: keep it off the LRU */
	if (owner != MM_NO_OWNER && mt != MIGRATE_UNMOVABLE &&
	    owner_has_reclaim(pool, owner)) {
		pthread_mutex_lock(&pool->lock);
		if (!(frame_flags(&pool->frames[pfn]) & F_LRU))
			__lru_add(pool, pfn);
		pool_unlock(pool);
	}
	return pfn;
}

long mm_alloc(struct mm_pool *pool, struct mm_pcp *pcp, unsigned int order,
	      enum mm_migratetype mt, uint32_t owner)
{
	return __mm_alloc(pool, pcp, order, mt, owner, true);
}

long mm_alloc_nowait(struct mm_pool *pool, struct mm_pcp *pcp, unsigned int order,
		     uint32_t owner)
{
	return __mm_alloc(pool, pcp, order, MIGRATE_MOVABLE, owner, false);
}

/*
 * A tail frame is either inside an allocated block (a bad free) or inside
 * a free block that absorbed it after an earlier free (a double free).
 */
static int __classify_tail(struct mm_pool *pool, uint64_t pfn)
{
	uint64_t head = __block_head(pool, pfn);

	if (head != NIL && frame_state(&pool->frames[head]) == MM_FRAME_FREE)
		return -EALREADY;
	return -EINVAL;
}

static int __free_checked(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	switch (frame_state(f)) {
	case MM_FRAME_ALLOC:
		if (frame_flags(f) & F_PINNED)
			return -EBUSY;
		pool->counters.frees++;
		if (frame_flags(f) & F_ISOLATED) {
			/* being moved: whoever moves it frees it after */
			if (frame_flags(f) & F_FREED)
				return -EALREADY;
			frame_set_flags(f, F_FREED);
			return 0;
		}
		__free_allocated(pool, pfn);
		return 0;
	case MM_FRAME_FREE:
	case MM_FRAME_PCP:
		return -EALREADY;
	default:
		return __classify_tail(pool, pfn);
	}
}

/* A refused free is a caller's bug: counted where the report shows it. */
static int __count_free_error(struct mm_pool *pool, int err)
{
	if (err == -EALREADY)
		pool->counters.double_frees++;
	else if (err && err != -EBUSY)
		pool->counters.bad_frees++;
	return err;
}

int mm_free(struct mm_pool *pool, struct mm_pcp *pcp, uint64_t frame)
{
	int err;

	/* lock-free only for a plain block (no pin, LRU or move) of no owned pageblock */
	if (frame < pool->nr_frames && pcp && pcp->pool == pool &&
	    !__pageblock_owner(pool, frame >> MM_PAGEBLOCK_ORDER)) {
		struct mm_frame *f = &pool->frames[frame];

		if (f->order == 0 && frame_cmpxchg(f, MM_FRAME_ALLOC, MM_FRAME_PCP)) {
			pcp_free(pcp, frame);
			return 0;
		}
	}
	pthread_mutex_lock(&pool->lock);
	err = __count_free_error(pool, frame < pool->nr_frames ?
					__free_checked(pool, frame) : -EINVAL);
	pool_unlock(pool);
	return err;
}

int mm_free_owned(struct mm_pool *pool, uint64_t frame, uint32_t owner)
{
	unsigned int order;
	int err = -EINVAL;

	if (frame >= pool->nr_frames)
		return err;
	pthread_mutex_lock(&pool->lock);
	/* the order before the free: a merge may make this frame a tail */
	order = pool->frames[frame].order;
	if (frame_state(&pool->frames[frame]) == MM_FRAME_ALLOC &&
	    frame_owner(&pool->frames[frame]) != owner)
		err = -EPERM;
	else
		err = __count_free_error(pool, __free_checked(pool, frame));
	pool_unlock(pool);
	return err ? err : (int)order;
}

int mm_frame_info(struct mm_pool *pool, uint64_t frame,
		  struct mm_frame_info *info)
{
	const struct mm_frame *f;

	if (frame >= pool->nr_frames)
		return -EINVAL;
	pcp_lock_all(pool);
	pthread_mutex_lock(&pool->lock);
	f = &pool->frames[frame];
	info->state = frame_state(f);
	info->order = frame_state(f) == MM_FRAME_TAIL ? 0 : f->order;
	info->mt = f->mt;
	info->owner = frame_owner(f);
	info->pins = frame_state(f) == MM_FRAME_ALLOC ? f->pins : 0;
	info->moving = frame_state(f) == MM_FRAME_ALLOC &&
		       (frame_flags(f) & F_ISOLATED);
	pool_unlock(pool);
	pcp_unlock_all(pool);
	return 0;
}

/*
 * A frame inside no allocation: free on the buddy lists, cached on a
 * per-thread list, or in a free block compaction or lumpy reclaim holds
 * off the lists for a moment. Such a held block is the one isolated block
 * owned by nobody: only blocks whose owner has callbacks are ever isolated.
 */
static bool __frame_unallocated(struct mm_pool *pool, uint64_t head)
{
	const struct mm_frame *f;

	if (head == NIL)
		return true;
	f = &pool->frames[head];
	if (frame_state(f) != MM_FRAME_ALLOC)
		return true;
	return (frame_flags(f) & F_ISOLATED) && frame_owner(f) == MM_NO_OWNER;
}

/*
 * Pins change under pool->lock only, so the count is exact while it is
 * held. The per-thread locks are taken as well so that no cached frame
 * turns allocated halfway through the count.
 */
long mm_frames_pinned(struct mm_pool *pool, const uint32_t *frames, size_t n,
		      size_t *unallocated)
{
	size_t pinned = 0, unalloc = 0;

	for (size_t i = 0; i < n; i++)
		if (frames[i] >= pool->nr_frames)
			return -EINVAL;
	pcp_lock_all(pool);
	pthread_mutex_lock(&pool->lock);
	for (size_t i = 0; i < n; i++) {
		uint64_t head = __block_head(pool, frames[i]);

		if (__frame_unallocated(pool, head))
			unalloc++;
		else if (frame_flags(&pool->frames[head]) & F_PINNED)
			pinned++;
	}
	pool_unlock(pool);
	pcp_unlock_all(pool);
	if (unallocated)
		*unallocated = unalloc;
	return (long)pinned;
}

int __mm_split(struct mm_pool *pool, uint64_t frame)
{
	struct mm_frame *f = &pool->frames[frame];
	unsigned int order;
	bool lru;

	if (frame_state(f) != MM_FRAME_ALLOC)
		return -EINVAL;
	if (frame_flags(f) & (F_ISOLATED | F_PINNED))
		return -EBUSY;
	order = f->order;
	lru = frame_flags(f) & F_LRU;
	__lru_del(pool, frame);
	for (uint64_t i = 1; i < (1UL << order); i++) {
		struct mm_frame *t = &pool->frames[frame + i];

		set_frame_state(t, MM_FRAME_ALLOC);
		t->order = 0;
		t->mt = f->mt;
		t->owner = frame_owner(f);
		t->pins = 0;
	}
	f->order = 0;
	/* each piece is an allocation of its own, reclaimable as the block was */
	for (uint64_t i = 0; lru && i < (1UL << order); i++)
		__lru_add(pool, frame + i);
	return 0;
}

int mm_split(struct mm_pool *pool, uint64_t frame)
{
	int ret;

	if (frame >= pool->nr_frames)
		return -EINVAL;
	pthread_mutex_lock(&pool->lock);
	ret = __mm_split(pool, frame);
	pool_unlock(pool);
	return ret;
}
