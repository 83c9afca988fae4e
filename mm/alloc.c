// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator's entry points: argument checks, the per-thread fast path,
 * the pool-locked slow path, and the drain-and-retry of patch 006.
 */
#include <errno.h>

#include "mm/internal.h"

static long rmqueue(struct mm_pool *pool, unsigned int order,
		    enum mm_migratetype mt, uint32_t owner)
{
	long pfn;

	pthread_mutex_lock(&pool->lock);
	pfn = __rmqueue(pool, order, mt);
	if (pfn >= 0)
		__mark_allocated(pool, pfn, order, mt, owner);
	pthread_mutex_unlock(&pool->lock);
	return pfn;
}

static long try_alloc(struct mm_pool *pool, struct mm_pcp *pcp,
		      unsigned int order, enum mm_migratetype mt,
		      uint32_t owner)
{
	if (pcp && order == 0)
		return pcp_alloc(pcp, mt, owner);
	return rmqueue(pool, order, mt, owner);
}

long mm_alloc(struct mm_pool *pool, struct mm_pcp *pcp, unsigned int order,
	      enum mm_migratetype mt, uint32_t owner)
{
	long pfn;

	if (order >= MM_MAX_ORDER || !valid_migratetype(mt))
		return -EINVAL;
	if (pcp && pcp->pool != pool)
		return -EINVAL;
	pfn = try_alloc(pool, pcp, order, mt, owner);
	if (pfn >= 0)
		return pfn;
	mm_drain_all(pool);
	pfn = try_alloc(pool, pcp, order, mt, owner);
	if (pfn >= 0)
		return pfn;
	pthread_mutex_lock(&pool->lock);
	pool->counters.alloc_fail++;
	pthread_mutex_unlock(&pool->lock);
	return -ENOMEM;
}

/*
 * A tail frame is either inside an allocated block (a bad free) or inside
 * a free block that absorbed it after an earlier free (a double free).
 * The enclosing block's head is the nearest aligned head that covers it.
 */
static int __classify_tail(struct mm_pool *pool, uint64_t pfn)
{
	for (unsigned int o = 1; o < MM_MAX_ORDER; o++) {
		uint64_t head = pfn & ~((1UL << o) - 1);
		const struct mm_frame *f = &pool->frames[head];

		if (frame_state(f) == MM_FRAME_TAIL || f->order < o)
			continue;
		return frame_state(f) == MM_FRAME_FREE ? -EALREADY : -EINVAL;
	}
	return -EINVAL;
}

static int __free_checked(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	switch (frame_state(f)) {
	case MM_FRAME_ALLOC:
		__free_one_page(pool, pfn, f->order);
		pool->counters.frees++;
		return 0;
	case MM_FRAME_FREE:
	case MM_FRAME_PCP:
		return -EALREADY;
	default:
		return __classify_tail(pool, pfn);
	}
}

int mm_free(struct mm_pool *pool, struct mm_pcp *pcp, uint64_t frame)
{
	int err;

	if (frame < pool->nr_frames && pcp && pcp->pool == pool) {
		const struct mm_frame *f = &pool->frames[frame];

		if (frame_state(f) == MM_FRAME_ALLOC && f->order == 0) {
			pcp_free(pcp, frame);
			return 0;
		}
	}
	pthread_mutex_lock(&pool->lock);
	err = frame < pool->nr_frames ? __free_checked(pool, frame) : -EINVAL;
	if (err == -EALREADY)
		pool->counters.double_frees++;
	else if (err)
		pool->counters.bad_frees++;
	pthread_mutex_unlock(&pool->lock);
	return err;
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
	info->owner = f->owner;
	pthread_mutex_unlock(&pool->lock);
	pcp_unlock_all(pool);
	return 0;
}
