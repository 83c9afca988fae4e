// SPDX-License-Identifier: GPL-2.0
/*
 * Lumpy reclaim (MM_POLICY_LUMPY): a failed order >= 1 request frees the
 * whole aligned neighbourhood of an LRU victim, reclaiming the neighbours
 * whose owner can give them back and migrating out those it can move;
 * one neighbour that can do neither spoils the lump.
 */
#include <errno.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/unit/pattern_owner.h"
#include "tests/suite.h"

#define PB_PAGES	MM_PAGEBLOCK_PAGES

static struct mm_stats snapshot(struct mm_pool *pool)
{
	struct mm_stats st = { 0 };

	pool_snapshot(pool, &st);
	return st;
}

/*
 * A pool full of order-0 pages of an owner that can reclaim them: no
 * order-9 request can succeed without reclaim, and with lumpy reclaim one
 * does, from a single lump, every page of it given back by the owner.
 */
static void lumpy_full_pool(enum mm_migratetype mt)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	struct mm_stats st;
	uint64_t n;
	long r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	n = pattern_owner_fill(&po, NULL, mt);
	CU_ASSERT_EQUAL_FATAL(n, mm_pool_frames(pool));

	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, mt, MM_NO_OWNER),
			-ENOMEM);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.counters.lumpy_attempt, 0);
	CU_ASSERT_EQUAL(po.reclaim_calls, 0);

	mm_set_policy(pool, MM_POLICY_LUMPY);
	r = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, mt, MM_NO_OWNER);
	CU_ASSERT_FATAL(r >= 0);
	CU_ASSERT_EQUAL(r % PB_PAGES, 0);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT(st.counters.lumpy_attempt >= 1);
	CU_ASSERT_EQUAL(st.counters.lumpy_success, 1);
	CU_ASSERT_EQUAL(st.counters.lumpy_reclaimed, PB_PAGES);
	CU_ASSERT_EQUAL(st.counters.lumpy_migrated, 0);
	/* exactly one lump's worth was taken back, not more */
	CU_ASSERT_EQUAL(po.reclaims, PB_PAGES);
	CU_ASSERT_EQUAL(po.tracked, n - PB_PAGES);
	/* the owner forgot every page of the block it now does not own */
	CU_ASSERT(pattern_owner_track(&po, (uint64_t)r, MM_PAGEBLOCK_ORDER, mt, n));
	CU_ASSERT_EQUAL(st.lru_pages[mt][0] + st.lru_pages[mt][1], n - PB_PAGES);
	CU_ASSERT_EQUAL(po.overlaps, 0);
	CU_ASSERT_EQUAL(po.corrupted, 0);
	CU_ASSERT_EQUAL(po.unknown, 0);
	CU_ASSERT_EQUAL(po.foreign, 0);

	CU_ASSERT_EQUAL(pattern_owner_untrack(&po, n), r);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_lumpy_movable(void)
{
	lumpy_full_pool(MIGRATE_MOVABLE);
}

static void test_lumpy_reclaimable(void)
{
	lumpy_full_pool(MIGRATE_RECLAIMABLE);
}

/*
 * Neighbours of an owner that can only migrate are moved out of the lump,
 * into the free memory elsewhere, with their contents; neighbours of an
 * owner that can reclaim are reclaimed. Pageblocks 0 and 1 hold pages of
 * both owners in turn; pageblocks 2 and 3 are 3/4 free and hold only
 * pages that cannot be reclaimed, so the lump has to be in 0 or 1.
 */
static void test_lumpy_migrates_neighbours(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner pr, pm, *both[2] = { &pr, &pm };
	struct mm_stats st;
	uint64_t n = 0;
	long r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&pr, pool, PO_RECLAIM, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&pm, pool, PO_MIGRATE, 0), 0);
	while (pattern_owner_alloc(both[n % 2], NULL, 0, MIGRATE_MOVABLE, n) >= 0)
		n++;
	CU_ASSERT_EQUAL_FATAL(n, mm_pool_frames(pool));
	/* the buddy hands out ascending frames: odd ones are pm's */
	CU_ASSERT_FATAL(pattern_owner_id_at(&pm, 2 * PB_PAGES + 1) >= 0);
	for (uint64_t id = 0; id < n; id++) {
		struct pattern_owner *po = both[id % 2];
		long f = pattern_owner_frame(po, id);

		/* keep 1 in 4, all of them pm's: no reclaim victim out there */
		if (f >= (long)(2 * PB_PAGES) && f % 4 != 1)
			CU_ASSERT_EQUAL(pattern_owner_free(po, NULL, id), 0);
	}

	mm_set_policy(pool, MM_POLICY_LUMPY);
	r = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, MM_NO_OWNER);
	CU_ASSERT(r >= 0);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT(st.counters.lumpy_success >= 1);
	CU_ASSERT(st.counters.lumpy_migrated > 0);
	CU_ASSERT(st.counters.lumpy_reclaimed > 0);
	CU_ASSERT_EQUAL(st.counters.lumpy_migrated, pm.migrations);
	CU_ASSERT_EQUAL(st.counters.lumpy_reclaimed, pr.reclaimed_pages);
	/* the lump is one of the two full pageblocks, cleared of both owners */
	if (r >= 0) {
		CU_ASSERT(r < (long)(2 * PB_PAGES));
		CU_ASSERT(pattern_owner_track(&pm, (uint64_t)r,
					      MM_PAGEBLOCK_ORDER,
					      MIGRATE_MOVABLE, n));
		CU_ASSERT_EQUAL(pattern_owner_untrack(&pm, n), r);
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	}
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&pm), 0);
	CU_ASSERT_EQUAL(pm.corrupted + pr.corrupted, 0);
	CU_ASSERT_EQUAL(pm.overlaps + pr.overlaps, 0);
	CU_ASSERT_EQUAL(pm.unknown + pr.unknown, 0);

	CU_ASSERT_EQUAL(pattern_owner_free_all(&pm, NULL, n), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&pr, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&pm);
	pattern_owner_fini(&pr);
	mm_pool_destroy(pool);
}

/*
 * An owner that reclaims by writing (a VM swapping guest pages) and turns
 * down every other offer (a page it thinks hot): lumpy reclaim moves the
 * pages it keeps out of the lump and still frees the block, pages of
 * both kinds counted apart. Compaction never offers such an owner's pages
 * for reclaim: it moves them. Every pageblock is half free, one page in
 * two, so there are targets but no free block.
 */
static void test_lumpy_declined_reclaim_migrates(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	struct mm_stats st;
	uint64_t n;
	long r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE | PO_RECLAIM, 0), 0);
	po.ops.reclaim_writes = true;
	po.reclaim_fail_every = 2;
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL(pattern_owner_thin(&po, NULL, n, 2, 0), n / 2);

	/* compaction alone: moves, never reclaims */
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_SUCCESS);
	CU_ASSERT_EQUAL(po.reclaim_calls, 0);
	CU_ASSERT(po.migrations > 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);

	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL(pattern_owner_thin(&po, NULL, n, 2, 0), n / 2);
	po.migrations = 0;
	mm_set_policy(pool, MM_POLICY_LUMPY);
	r = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(r >= 0);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.counters.lumpy_success, 1);
	CU_ASSERT(po.reclaim_injected > 0);
	CU_ASSERT(po.reclaimed_pages > 0);
	CU_ASSERT_EQUAL(st.counters.lumpy_reclaimed, po.reclaimed_pages);
	CU_ASSERT_EQUAL(st.counters.lumpy_migrated, po.migrations);
	/* every page of the lump either went or moved: half a pageblock's worth */
	CU_ASSERT_EQUAL(po.reclaimed_pages + po.migrations, PB_PAGES / 2);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	CU_ASSERT_EQUAL(po.corrupted + po.overlaps + po.unknown, 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * One pinned page in each pageblock spoils every order-9 lump: the
 * request fails, and the owner's other pages are left alone rather than
 * reclaimed for nothing.
 */
static void test_lumpy_spoiled_by_pin(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct pattern_owner po;
	struct mm_stats st;
	uint64_t n, pinned[2];

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL_FATAL(n, 2 * PB_PAGES);
	for (unsigned int pb = 0; pb < 2; pb++) {
		long id = pattern_owner_id_at(&po, pb * PB_PAGES + 100);

		CU_ASSERT_FATAL(id >= 0);
		pinned[pb] = (uint64_t)id;
		CU_ASSERT_EQUAL_FATAL(pattern_owner_pin(&po, pinned[pb]), 0);
	}
	mm_set_policy(pool, MM_POLICY_LUMPY);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE,
				 MM_NO_OWNER), -ENOMEM);
	st = snapshot(pool);
	CU_ASSERT(st.counters.lumpy_attempt >= 1);
	CU_ASSERT_EQUAL(st.counters.lumpy_success, 0);
	CU_ASSERT_EQUAL(st.counters.lumpy_reclaimed, 0);
	CU_ASSERT_EQUAL(po.reclaim_calls, 0);
	CU_ASSERT_EQUAL(po.offered_pinned, 0);
	CU_ASSERT_EQUAL(po.tracked, n);

	/* smaller lumps that miss the pins do succeed */
	CU_ASSERT(mm_alloc(pool, NULL, 3, MIGRATE_MOVABLE, MM_NO_OWNER) >= 0);
	CU_ASSERT_EQUAL(po.offered_pinned, 0);
	for (unsigned int pb = 0; pb < 2; pb++) {
		CU_ASSERT_EQUAL(pattern_owner_frame(&po, pinned[pb]),
				(long)(pb * PB_PAGES + 100));
		CU_ASSERT_EQUAL(pattern_owner_unpin(&po, pinned[pb]), 0);
	}
	CU_ASSERT_EQUAL(po.corrupted, 0);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	for (uint64_t f = 0; f < mm_pool_frames(pool); f++)
		if (frame_state(pool, f) == MM_FRAME_ALLOC)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

int register_lumpy_suite(void)
{
	static const struct suite_test tests[] = {
		{ "full pool, movable", test_lumpy_movable },
		{ "full pool, reclaimable", test_lumpy_reclaimable },
		{ "migrates neighbours", test_lumpy_migrates_neighbours },
		{ "spoiled by a pin", test_lumpy_spoiled_by_pin },
		{ "a declined reclaim migrates", test_lumpy_declined_reclaim_migrates },
	};

	return SUITE("lumpy", tests);
}
