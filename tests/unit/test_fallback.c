// SPDX-License-Identifier: GPL-2.0
/*
 * Fallback and stealing (seed patches 003, 007, 010): a type whose lists
 * are empty takes the largest free block of another type, trying the
 * fallback table's types in order at each order; a stolen block of order
 * >= MM_MAX_ORDER / 2 converts its pageblock.
 */
#include <errno.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

#define STEAL_ORDER	(MM_MAX_ORDER / 2)

static long alloc_direct(struct mm_pool *pool, unsigned int order,
			 enum mm_migratetype mt)
{
	return mm_alloc(pool, NULL, order, mt, TEST_OWNER);
}

static void check_frame(struct mm_pool *pool, uint64_t frame,
			enum mm_frame_state state, unsigned int order,
			enum mm_migratetype mt)
{
	struct mm_frame_info fi;

	CU_ASSERT_EQUAL_FATAL(mm_frame_info(pool, frame, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, state);
	CU_ASSERT_EQUAL(fi.order, order);
	CU_ASSERT_EQUAL(fi.mt, mt);
}

/*
 * 8 MiB = two order-10 blocks. One order-9 allocation of @first and one of
 * @second leave exactly one free order-9 block on each of their lists and
 * none on @req's; @req must take @first's block, then @second's.
 */
static void check_preference(enum mm_migratetype req,
			     enum mm_migratetype first,
			     enum mm_migratetype second)
{
	struct mm_pool *pool = pool_new(8, true);
	uint64_t f1, f2, steals;
	struct mm_stats st;
	long a1, a2, x, x2, y;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a1 = alloc_direct(pool, 9, first);
	a2 = alloc_direct(pool, 9, second);
	CU_ASSERT_FATAL(a1 >= 0 && a2 >= 0);
	CU_ASSERT_FATAL(a1 / 1024 != a2 / 1024);
	f1 = (uint64_t)a1 ^ 512;
	f2 = (uint64_t)a2 ^ 512;

	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL_FATAL(st.free_pages, 1024);
	CU_ASSERT_EQUAL_FATAL(st.nr_free_type[first][9], 1);
	CU_ASSERT_EQUAL_FATAL(st.nr_free_type[second][9], 1);
	CU_ASSERT_EQUAL(st.counters.fallback[first], 1);
	CU_ASSERT_EQUAL(st.counters.fallback[second],
			second == MIGRATE_MOVABLE ? 0 : 1);
	CU_ASSERT_EQUAL(st.counters.fallback[req], 0);
	steals = st.counters.pageblock_steal;
	CU_ASSERT_EQUAL(steals, second == MIGRATE_MOVABLE ? 1 : 2);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)a1), first);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)a2), second);
	check_frame(pool, f1, MM_FRAME_FREE, 9, first);
	check_frame(pool, f2, MM_FRAME_FREE, 9, second);

	x = alloc_direct(pool, 0, req);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL_FATAL((uint64_t)x / 512, f1 / 512);
	check_frame(pool, (uint64_t)x, MM_FRAME_ALLOC, 0, req);
	CU_ASSERT_EQUAL(pb_type(pool, f1), req);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_EQUAL(st.counters.fallback[req], 1);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, steals + 1);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		CU_ASSERT_EQUAL(st.nr_free_type[req][o], o < 9 ? 1 : 0);
		CU_ASSERT_EQUAL(st.nr_free_type[first][o], 0);
		CU_ASSERT_EQUAL(st.nr_free_type[second][o], o == 9 ? 1 : 0);
	}
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);

	x2 = alloc_direct(pool, 0, req);
	CU_ASSERT_FATAL(x2 >= 0);
	CU_ASSERT_EQUAL((uint64_t)x2 / 512, f1 / 512);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.fallback[req], 1);

	y = alloc_direct(pool, 9, req);
	CU_ASSERT_EQUAL_FATAL(y, (long)f2);
	CU_ASSERT_EQUAL(pb_type(pool, f2), req);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.fallback[req], 2);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, steals + 2);
	CU_ASSERT_EQUAL(st.nr_free_type[second][9], 0);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)y), 0);
	check_frame(pool, (uint64_t)y, MM_FRAME_FREE, 9, req);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free_type[req][9], 1);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x2), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		CU_ASSERT_EQUAL(st.nr_free_type[req][o], o == 9 ? 2 : 0);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a1), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a2), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_unmovable_prefers_reclaimable(void)
{
	check_preference(MIGRATE_UNMOVABLE, MIGRATE_RECLAIMABLE,
			 MIGRATE_MOVABLE);
}

static void test_reclaimable_prefers_unmovable(void)
{
	check_preference(MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE,
			 MIGRATE_MOVABLE);
}

static void test_movable_prefers_reclaimable(void)
{
	check_preference(MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE,
			 MIGRATE_UNMOVABLE);
}

static void test_fallback_takes_largest_block(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_stats st;
	long m, x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	m = alloc_direct(pool, 0, MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(m >= 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_MOVABLE], 0);

	x = alloc_direct(pool, 0, MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_NOT_EQUAL(x / 1024, m / 1024);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)x), MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)m), MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, 1);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][o],
				o < 10 ? 1 : 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][o],
				o < 10 ? 1 : 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_RECLAIMABLE][o], 0);
	}

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)m), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * 4 MiB pool allocated page by page as MOVABLE, then every other aligned
 * run of 2^k frames freed: the only free blocks are MOVABLE order-k ones.
 * An UNMOVABLE page must steal one; only k >= STEAL_ORDER converts the
 * pageblock and drags its other free blocks along.
 */
static void check_steal_of_order(unsigned int k)
{
	struct mm_pool *pool = pool_new(4, true);
	uint64_t per_pb = MM_PAGEBLOCK_PAGES >> (k + 1);
	bool converts = k >= STEAL_ORDER;
	enum mm_migratetype home;
	struct mm_stats st;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (int i = 0; i < 1024; i++)
		CU_ASSERT_FATAL(alloc_direct(pool, 0, MIGRATE_MOVABLE) >= 0);
	for (uint64_t f = 0; f < 1024; f++)
		if (!((f >> k) & 1))
			CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL_FATAL(st.nr_free_type[MIGRATE_MOVABLE][k], 2 * per_pb);
	CU_ASSERT_EQUAL_FATAL(st.free_pages, 512);

	x = alloc_direct(pool, 0, MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL(((uint64_t)x >> k) & 1, 0);
	check_frame(pool, (uint64_t)x, MM_FRAME_ALLOC, 0, MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)x),
			converts ? MIGRATE_UNMOVABLE : MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, converts ? 1 : 0);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_UNMOVABLE], converts ? 1 : 0);
	for (unsigned int o = 0; o < k; o++)
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][o], 1);
	if (converts) {
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][k],
				per_pb - 1);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][k], per_pb);
	} else {
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][k], 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][k],
				2 * per_pb - 1);
	}
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 1);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 1);

	home = pb_type(pool, (uint64_t)x);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.nr_free[k], 2 * per_pb);
	CU_ASSERT_EQUAL(st.nr_free_type[home][k],
			converts ? per_pb : 2 * per_pb);
	for (unsigned int o = 0; o < k; o++)
		CU_ASSERT_EQUAL(st.nr_free[o], 0);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);

	for (uint64_t f = 0; f < 1024; f++)
		if ((f >> k) & 1)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_steal_order2_keeps_pageblock(void)
{
	check_steal_of_order(2);
}

static void test_steal_order4_keeps_pageblock(void)
{
	check_steal_of_order(STEAL_ORDER - 1);
}

static void test_steal_order5_converts_pageblock(void)
{
	check_steal_of_order(STEAL_ORDER);
}

static void test_steal_order7_converts_pageblock(void)
{
	check_steal_of_order(7);
}

/* Grouping off: one list, no fallback, every pageblock stays MOVABLE. */
static void check_plain_buddy(struct mm_pool *pool)
{
	struct mm_stats st;
	long u, r, m, big;

	CU_ASSERT_FALSE(mm_grouping(pool));
	u = alloc_direct(pool, 0, MIGRATE_UNMOVABLE);
	r = alloc_direct(pool, 9, MIGRATE_RECLAIMABLE);
	m = alloc_direct(pool, 3, MIGRATE_MOVABLE);
	big = alloc_direct(pool, 10, MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(u >= 0 && r >= 0 && m >= 0 && big >= 0);
	check_frame(pool, (uint64_t)u, MM_FRAME_ALLOC, 0, MIGRATE_UNMOVABLE);
	check_frame(pool, (uint64_t)r, MM_FRAME_ALLOC, 9, MIGRATE_RECLAIMABLE);
	check_frame(pool, (uint64_t)m, MM_FRAME_ALLOC, 3, MIGRATE_MOVABLE);
	check_frame(pool, (uint64_t)big, MM_FRAME_ALLOC, 10, MIGRATE_UNMOVABLE);

	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);
	CU_ASSERT_FALSE(st.grouping);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		CU_ASSERT_EQUAL(st.counters.fallback[t], 0);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, 0);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_MOVABLE], st.pageblocks);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][o], 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_RECLAIMABLE][o], 0);
	}
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 1025);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_RECLAIMABLE], 512);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 8);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)m), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)big), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_MOVABLE], st.pageblocks);
	CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][10], 2);
}

static void test_grouping_off_by_config(void)
{
	struct mm_pool *pool = pool_new(8, false);

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	check_plain_buddy(pool);
	mm_pool_destroy(pool);
}

static void test_grouping_off_at_runtime(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_stats st;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	mm_set_grouping(pool, false);
	check_plain_buddy(pool);

	mm_set_grouping(pool, true);
	CU_ASSERT_TRUE(mm_grouping(pool));
	x = alloc_direct(pool, 0, MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)x), MIGRATE_UNMOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_TRUE(st.grouping);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, 1);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

int register_fallback_suite(void)
{
	static const struct suite_test tests[] = {
		{ "UNMOVABLE falls back to RECLAIMABLE, then MOVABLE",
		  test_unmovable_prefers_reclaimable },
		{ "RECLAIMABLE falls back to UNMOVABLE, then MOVABLE",
		  test_reclaimable_prefers_unmovable },
		{ "MOVABLE falls back to RECLAIMABLE, then UNMOVABLE",
		  test_movable_prefers_reclaimable },
		{ "fallback takes the largest block",
		  test_fallback_takes_largest_block },
		{ "stealing order 2 keeps the pageblock",
		  test_steal_order2_keeps_pageblock },
		{ "stealing order 4 keeps the pageblock",
		  test_steal_order4_keeps_pageblock },
		{ "stealing order 5 converts the pageblock",
		  test_steal_order5_converts_pageblock },
		{ "stealing order 7 converts the pageblock",
		  test_steal_order7_converts_pageblock },
		{ "grouping off by config", test_grouping_off_by_config },
		{ "grouping off at run time", test_grouping_off_at_runtime },
	};
	return SUITE("fallback", tests);
}
