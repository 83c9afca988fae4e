// SPDX-License-Identifier: GPL-2.0
/*
 * Pageblock migratetypes (seed patch 010) and the per-pageblock statistics
 * built on them: pageblocks_type, mixed_pageblocks, free_pageblocks.
 */
#include <errno.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

static void test_initial_all_movable(void)
{
	struct mm_pool *pool = pool_new(64, true);
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (uint64_t pb = 0; pb < 32; pb++)
		CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, pb),
				MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.pageblocks, 32);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_MOVABLE], 32);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_UNMOVABLE], 0);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_RECLAIMABLE], 0);
	CU_ASSERT_EQUAL(st.free_pageblocks, 32);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	mm_pool_destroy(pool);
}

/*
 * 4 MiB = one order-10 block, pageblocks 0 and 1. Stealing it for an
 * UNMOVABLE order-10 block converts its head pageblock; freed, it lands on
 * the UNMOVABLE list, and splitting it from there for UNMOVABLE marks both
 * pageblocks it covers.
 */
static void test_split_marks_covered_pageblocks(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_stats st;
	long a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a = mm_alloc(pool, NULL, 10, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_EQUAL_FATAL(a, 0);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, 1);
	CU_ASSERT_EQUAL(st.free_pageblocks, 0);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, 0), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][10], 1);
	CU_ASSERT_EQUAL(st.free_pageblocks, 2);

	b = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_FATAL(b >= 0);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 1), MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_UNMOVABLE], 2);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 1);
	for (unsigned int o = 0; o < 10; o++)
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][o], 1);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 1), MIGRATE_UNMOVABLE);
	mm_pool_destroy(pool);
}

/*
 * Freed while grouping is off, an order-10 block of UNMOVABLE pageblocks
 * sits on the MOVABLE list; once grouping is back, a MOVABLE request that
 * splits it from its own list claims both pageblocks without a fallback.
 */
static void test_own_list_split_retypes_pageblocks(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_stats st;
	long a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a = mm_alloc(pool, NULL, 10, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_EQUAL_FATAL(a, 0);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_UNMOVABLE);

	mm_set_grouping(pool, false);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, 0), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][10], 1);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_UNMOVABLE);

	mm_set_grouping(pool, true);
	b = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(b >= 0);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 1), MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_MOVABLE], 0);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_MOVABLE], 2);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_steal_marks_head_pageblock(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_frame_info fi;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	x = mm_alloc(pool, NULL, 0, MIGRATE_RECLAIMABLE, 0);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)x), MIGRATE_RECLAIMABLE);
	CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)x ^ 1, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_FREE);
	CU_ASSERT_EQUAL(fi.mt, MIGRATE_RECLAIMABLE);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)x), MIGRATE_RECLAIMABLE);
	mm_pool_destroy(pool);
}

static void test_movable_allocations_keep_movable(void)
{
	struct mm_pool *pool = pool_new(8, true);
	long blocks[MM_MAX_ORDER];
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (unsigned int o = 0; o < 10; o++) {
		blocks[o] = mm_alloc(pool, NULL, o, MIGRATE_MOVABLE, 0);
		CU_ASSERT_FATAL(blocks[o] >= 0);
	}
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_MOVABLE], 4);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	for (unsigned int o = 0; o < 10; o++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)blocks[o]), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_pageblock_counts_under_churn(void)
{
	struct mm_pool *pool = pool_new(16, true);
	uint64_t seed = 0xfeedface, held[512];
	size_t nr = 0;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (int i = 0; i < 4000; i++) {
		uint64_t rnd = rng_next(&seed);

		if (nr < 512 && (rnd & 3) != 0) {
			unsigned int order = (rnd >> 8) % 7;
			enum mm_migratetype mt =
				(enum mm_migratetype)((rnd >> 16) % MIGRATE_TYPES);
			long r = mm_alloc(pool, NULL, order, mt, 0);

			CU_ASSERT(r >= 0 || r == -ENOMEM);
			if (r >= 0)
				held[nr++] = (uint64_t)r;
		} else if (nr) {
			size_t j = (rnd >> 24) % nr;

			CU_ASSERT_EQUAL(mm_free(pool, NULL, held[j]), 0);
			held[j] = held[--nr];
		}
		if (i % 64 == 0) {
			CU_ASSERT_FATAL(pool_snapshot(pool, &st));
			ASSERT_STATS_CONSISTENT(&st);
			ASSERT_PAGEBLOCK_COUNTS(pool, &st);
		}
	}
	while (nr)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, held[--nr]), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	mm_pool_destroy(pool);
}

/*
 * Grouping off, 8 MiB: an UNMOVABLE page splits an order-10 block, the
 * order-9 half goes to RECLAIMABLE and the MOVABLE order-3 block comes
 * from the smallest piece left, which shares the UNMOVABLE page's
 * pageblock: that pageblock is mixed.
 */
static void test_mixed_with_grouping_off(void)
{
	struct mm_pool *pool = pool_new(8, false);
	struct mm_stats st;
	long u, r, m;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	u = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, 0);
	r = mm_alloc(pool, NULL, 9, MIGRATE_RECLAIMABLE, 0);
	m = mm_alloc(pool, NULL, 3, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(u >= 0 && r >= 0 && m >= 0);
	CU_ASSERT_EQUAL(u / 512, m / 512);
	CU_ASSERT_NOT_EQUAL(u / 512, r / 512);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 1);
	CU_ASSERT_EQUAL(st.free_pageblocks, 2);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_RECLAIMABLE], 512);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 8);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_MOVABLE], 4);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)m), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * Grouping on: with only order-0 MOVABLE holes left, a RECLAIMABLE page
 * steals one without converting the pageblock, which is then mixed.
 */
static void test_mixed_by_small_fallback(void)
{
	struct mm_pool *pool = pool_new(2, true);
	struct mm_stats st;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (int i = 0; i < 512; i++)
		CU_ASSERT_FATAL(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0) >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, 100), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	CU_ASSERT_EQUAL(st.free_pageblocks, 0);

	x = mm_alloc(pool, NULL, 0, MIGRATE_RECLAIMABLE, 0);
	CU_ASSERT_EQUAL_FATAL(x, 100);
	CU_ASSERT_EQUAL(mm_pageblock_migratetype(pool, 0), MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 1);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_RECLAIMABLE], 1);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, 0);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_RECLAIMABLE], 1);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 511);

	for (uint64_t f = 0; f < 512; f++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * A pcp refill of 31 frames splits one order-10 block and takes the first
 * frames smallest piece first: all 31 sit in one pageblock. Cached frames
 * keep their pageblock out of free_pageblocks.
 */
static void test_free_pageblocks_count_pcp(void)
{
	struct mm_pool *pool = pool_new_pcp(8, true, 0, 31);
	struct mm_pcp *pcp = NULL;
	struct mm_stats st;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	x = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.free_pageblocks, 3);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.pcp_pages, 31);
	CU_ASSERT_EQUAL(st.free_pageblocks, 3);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	mm_drain_all(pool);
	ASSERT_POOL_WHOLE(pool);
	mm_pcp_destroy(pcp);
	mm_pool_destroy(pool);
}

int register_pageblock_suite(void)
{
	static const struct suite_test tests[] = {
		{ "initially all MOVABLE", test_initial_all_movable },
		{ "splitting marks covered pageblocks",
		  test_split_marks_covered_pageblocks },
		{ "own-list split retypes its pageblocks",
		  test_own_list_split_retypes_pageblocks },
		{ "stealing marks the head pageblock",
		  test_steal_marks_head_pageblock },
		{ "MOVABLE allocations keep MOVABLE",
		  test_movable_allocations_keep_movable },
		{ "pageblock counts under churn",
		  test_pageblock_counts_under_churn },
		{ "mixed pageblock, grouping off", test_mixed_with_grouping_off },
		{ "mixed pageblock by small fallback",
		  test_mixed_by_small_fallback },
		{ "pcp frames keep pageblocks busy",
		  test_free_pageblocks_count_pcp },
	};
	return SUITE("pageblock", tests);
}
