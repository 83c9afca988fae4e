// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread lists: the seed's per-cpu pages, one per allocating thread
 * (a vCPU thread later). Order-0 frames are cached per migratetype so the
 * common alloc/free pair never takes the pool lock; they move to and from
 * the buddy lists in batches.
 *
 * Locking: a pcp's lists are touched by its owner thread and, rarely, by a
 * thread draining every pcp after a failed allocation (patch 006 used an
 * IPI for that; a thread cannot be interrupted, so each pcp has a tiny
 * lock its owner takes uncontended). Order: pcp_list_lock -> pcp->lock ->
 * pool->lock. Frames on a pcp list belong to it: the buddy code only reads
 * their state, which never reads as FREE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm/internal.h"

static void pcp_lock(struct mm_pcp *pcp)
{
	while (atomic_flag_test_and_set_explicit(&pcp->lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void pcp_unlock(struct mm_pcp *pcp)
{
	atomic_flag_clear_explicit(&pcp->lock, memory_order_release);
}

int mm_pcp_create(struct mm_pool *pool, struct mm_pcp **out)
{
	struct mm_pcp *pcp = aligned_alloc(64, sizeof(*pcp));

	if (!pcp)
		return -ENOMEM;
	memset(pcp, 0, sizeof(*pcp));
	pcp->pool = pool;
	atomic_flag_clear(&pcp->lock);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		list_init(&pcp->lists[t]);
	pthread_mutex_lock(&pool->pcp_list_lock);
	pcp->pb_flags = pool->grouping ? pool->pageblock_flags : NULL;
	pcp->next_pcp = pool->pcps;
	pool->pcps = pcp;
	pthread_mutex_unlock(&pool->pcp_list_lock);
	*out = pcp;
	return 0;
}

/* Give back up to @nr frames, most recently freed first. pcp lock held. */
static void __pcp_spill(struct mm_pcp *pcp, unsigned int nr)
{
	struct mm_pool *pool = pcp->pool;
	unsigned int done = 0;

	pthread_mutex_lock(&pool->lock);
	for (int t = 0; t < MIGRATE_TYPES && done < nr; t++) {
		uint32_t pfn;

		while (done < nr && (pfn = list_pop(pool, &pcp->lists[t])) != NIL) {
			__free_one_page(pool, pfn, 0);
			done++;
		}
	}
	pool_unlock(pool);
	pcp->count -= done;
}

/*
 * One frame of a refill. The first may fall back to another type (its
 * claim_block() has run); under MM_POLICY_CLAIM_WHOLE the rest of an
 * unmovable or reclaimable batch comes from the type's own lists only:
 * 30 more frames taken by fallback would be 30 pieces of other types'
 * pageblocks, each one scattering the type a little further, while a
 * short batch merely brings the next request back to claim_block().
 */
static long __rmqueue_refill(struct mm_pool *pool, enum mm_migratetype mt,
			     unsigned int nr)
{
	if (nr && mt != MIGRATE_MOVABLE && (pool->policy & MM_POLICY_CLAIM_WHOLE))
		return __rmqueue_smallest(pool, 0, mt);
	return __rmqueue(pool, 0, mt);
}

/*
 * Take pcp_batch frames of @mt from the buddy lists at one lock round.
 * They are queued so that they come off the list in the order the buddy
 * handed them out (ascending within a block): a guest touching ascending
 * addresses then gets ascending frames, and the host merges the adjacent
 * mappings into one VMA instead of one per page.
 */
static void __rmqueue_bulk(struct mm_pcp *pcp, enum mm_migratetype mt)
{
	struct mm_pool *pool = pcp->pool;
	uint32_t got[PCP_MAX_BATCH];
	unsigned int nr = 0;

	pthread_mutex_lock(&pool->lock);
	while (nr < pool->pcp_batch) {
		long pfn = __rmqueue_refill(pool, mt, nr);

		if (pfn < 0)
			break;
		set_frame_state(&pool->frames[pfn], MM_FRAME_PCP);
		pool->frames[pfn].order = 0;
		pool->frames[pfn].mt = mt;
		got[nr++] = (uint32_t)pfn;
	}
	for (unsigned int i = nr; i-- > 0;)
		list_add(pool, &pcp->lists[mt], got[i]);
	pool->counters.pcp_refill++;
	pool_unlock(pool);
	pcp->count += nr;
}

long pcp_alloc(struct mm_pcp *pcp, enum mm_migratetype mt, uint32_t owner)
{
	struct mm_pool *pool = pcp->pool;
	enum mm_migratetype list_mt;
	struct mm_frame *f;
	uint32_t pfn;

	pcp_lock(pcp);
	list_mt = pcp->pb_flags ? mt : MIGRATE_MOVABLE;
	if (pcp->lists[list_mt].head == NIL) {
		if (list_mt != MIGRATE_MOVABLE) {
			/* compaction drains this list too: not under its lock */
			pcp_unlock(pcp);
			claim_block(pool, 0, mt);
			pcp_lock(pcp);
		}
		if (pcp->lists[list_mt].head == NIL)
			__rmqueue_bulk(pcp, list_mt);
	}
	pfn = list_pop(pool, &pcp->lists[list_mt]);
	if (pfn != NIL) {
		pcp->count--;
		pcp->nr_alloc++;
		f = &pool->frames[pfn];
		set_frame_owner(f, mt, owner);
		set_frame_state(f, MM_FRAME_ALLOC);
	}
	pcp_unlock(pcp);
	return pfn == NIL ? -ENOMEM : (long)pfn;
}

/*
 * The frame goes on the list of its pageblock's type (patch 010), so a
 * later request of that type reuses it and the block stays homogeneous.
 */
void pcp_free(struct mm_pcp *pcp, uint64_t pfn)
{
	struct mm_pool *pool = pcp->pool;
	struct mm_frame *f = &pool->frames[pfn];
	enum mm_migratetype mt = MIGRATE_MOVABLE;

	pcp_lock(pcp);
	if (pcp->pb_flags)
		mt = __atomic_load_n(&pcp->pb_flags[pfn >> MM_PAGEBLOCK_ORDER],
				     __ATOMIC_RELAXED) & PB_MIGRATE_MASK;
	set_frame_owner(f, mt, MM_NO_OWNER);
	set_frame_state(f, MM_FRAME_PCP);
	list_add(pool, &pcp->lists[mt], pfn);
	pcp->count++;
	pcp->nr_free++;
	if (pcp->count > pool->pcp_high)
		__pcp_spill(pcp, pool->pcp_batch);
	pcp_unlock(pcp);
}

static void pcp_drain(struct mm_pcp *pcp)
{
	pcp_lock(pcp);
	__pcp_spill(pcp, pcp->count);
	pcp_unlock(pcp);
}

/*
 * Frames cached on per-thread lists are allocated as far as the buddy
 * lists know, so they keep their buddies from merging: a high-order
 * request can fail while enough memory sits in the caches. Patch 006
 * spills every cache back before giving up.
 */
void mm_drain_all(struct mm_pool *pool)
{
	pthread_mutex_lock(&pool->pcp_list_lock);
	for (struct mm_pcp *pcp = pool->pcps; pcp; pcp = pcp->next_pcp)
		pcp_drain(pcp);
	pthread_mutex_lock(&pool->lock);
	pool->counters.pcp_drain_all++;
	pool_unlock(pool);
	pthread_mutex_unlock(&pool->pcp_list_lock);
}

void mm_pcp_destroy(struct mm_pcp *pcp)
{
	struct mm_pool *pool;
	struct mm_pcp **pp;

	if (!pcp)
		return;
	pool = pcp->pool;
	pthread_mutex_lock(&pool->pcp_list_lock);
	for (pp = &pool->pcps; *pp; pp = &(*pp)->next_pcp) {
		if (*pp == pcp) {
			*pp = pcp->next_pcp;
			break;
		}
	}
	pcp_drain(pcp);
	pthread_mutex_lock(&pool->lock);
	pool->counters.alloc[0] += pcp->nr_alloc;
	pool->counters.frees += pcp->nr_free;
	pool_unlock(pool);
	pthread_mutex_unlock(&pool->pcp_list_lock);
	free(pcp);
}

unsigned int mm_pcp_count(const struct mm_pcp *pcp)
{
	return pcp->count;
}

/* mm_set_grouping: every per-thread list follows the policy. */
void pcp_set_grouping(struct mm_pool *pool, bool on)
{
	pthread_mutex_lock(&pool->pcp_list_lock);
	for (struct mm_pcp *pcp = pool->pcps; pcp; pcp = pcp->next_pcp) {
		pcp_lock(pcp);
		pcp->pb_flags = on ? pool->pageblock_flags : NULL;
		pcp_unlock(pcp);
	}
	pthread_mutex_unlock(&pool->pcp_list_lock);
}

/* For a consistent snapshot: every pcp, then the pool, locked. */
void pcp_lock_all(struct mm_pool *pool)
{
	pthread_mutex_lock(&pool->pcp_list_lock);
	for (struct mm_pcp *pcp = pool->pcps; pcp; pcp = pcp->next_pcp)
		pcp_lock(pcp);
}

void pcp_unlock_all(struct mm_pool *pool)
{
	for (struct mm_pcp *pcp = pool->pcps; pcp; pcp = pcp->next_pcp)
		pcp_unlock(pcp);
	pthread_mutex_unlock(&pool->pcp_list_lock);
}
