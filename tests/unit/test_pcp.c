// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread lists (seed patches 004 and 006): order-0 frames come from
 * and go back to a pcp in batches, one list per migratetype; a failed
 * allocation drains every pcp of the pool and retries once.
 */
#include <errno.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

#define DEFAULT_HIGH	186U
#define DEFAULT_BATCH	31U

static uint64_t pcp_pages(struct mm_pool *pool)
{
	struct mm_stats st;

	if (!pool_snapshot(pool, &st))
		return UINT64_MAX;
	return st.pcp_pages;
}

static struct mm_counters counters(struct mm_pool *pool)
{
	struct mm_stats st = { 0 };

	pool_snapshot(pool, &st);
	return st.counters;
}

static void test_refill_in_batches(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_pcp *pcp = NULL;
	uint8_t seen[2048] = { 0 };
	long got[2 * DEFAULT_BATCH];
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);

	got[0] = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, TEST_OWNER);
	CU_ASSERT_FATAL(got[0] >= 0);
	seen[got[0]] = 1;
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), DEFAULT_BATCH - 1);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.counters.pcp_refill, 1);
	CU_ASSERT_EQUAL(st.pcp_pages, DEFAULT_BATCH - 1);
	CU_ASSERT_EQUAL(st.free_pages, 2048 - DEFAULT_BATCH);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 1);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)got[0]), MM_FRAME_ALLOC);

	for (unsigned int i = 1; i < DEFAULT_BATCH; i++) {
		got[i] = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, TEST_OWNER);
		CU_ASSERT_FATAL(got[i] >= 0 && got[i] < 2048);
		CU_ASSERT_FATAL(!seen[got[i]]);
		seen[got[i]] = 1;
	}
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 1);

	got[DEFAULT_BATCH] = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(got[DEFAULT_BATCH] >= 0);
	CU_ASSERT_FATAL(!seen[got[DEFAULT_BATCH]]);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), DEFAULT_BATCH - 1);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 2);

	for (unsigned int i = 0; i <= DEFAULT_BATCH; i++) {
		CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)got[i]), 0);
		CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)got[i]),
				MM_FRAME_PCP);
	}
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 2 * DEFAULT_BATCH);
	CU_ASSERT_EQUAL(pcp_pages(pool), 2 * DEFAULT_BATCH);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_configured_batch(void)
{
	struct mm_pool *pool = pool_new_pcp(4, true, 32, 8);
	struct mm_pcp *pcp = NULL;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	x = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 7);
	CU_ASSERT_EQUAL(pcp_pages(pool), 7);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 1);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_types_served_from_own_list(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_pcp *pcp = NULL;
	long u, m, r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);

	u = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_FATAL(u >= 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), DEFAULT_BATCH - 1);
	m = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(m >= 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 2 * (DEFAULT_BATCH - 1));
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 2);
	CU_ASSERT_EQUAL(counters(pool).fallback[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)u), MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)m), MIGRATE_MOVABLE);

	for (unsigned int i = 1; i < DEFAULT_BATCH; i++) {
		struct mm_frame_info fi;

		r = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, 0);
		CU_ASSERT_FATAL(r >= 0);
		CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)r), MIGRATE_UNMOVABLE);
		CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)r, &fi), 0);
		CU_ASSERT_EQUAL(fi.mt, MIGRATE_UNMOVABLE);
		r = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
		CU_ASSERT_FATAL(r >= 0);
		CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)r), MIGRATE_MOVABLE);
		CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)r, &fi), 0);
		CU_ASSERT_EQUAL(fi.mt, MIGRATE_MOVABLE);
	}
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 2);

	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)m), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 1);
	r = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_FATAL(r >= 0);
	CU_ASSERT_NOT_EQUAL(r, m);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)m), MM_FRAME_PCP);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 3);
	r = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_EQUAL(r, m);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 3);

	mm_pcp_destroy(pcp);
	mm_pool_destroy(pool);
}

static void test_frees_go_to_pcp(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;
	struct mm_stats st;
	long x, y;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	x = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
	y = mm_alloc(pool, pcp, 3, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(x >= 0 && y >= 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	CU_ASSERT_EQUAL(counters(pool).pcp_refill, 0);

	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)x), MM_FRAME_PCP);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 1);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.pcp_pages, 1);
	CU_ASSERT_EQUAL(st.free_pages, 1024 - 9);

	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)y), 0);
	CU_ASSERT_NOT_EQUAL(frame_state(pool, (uint64_t)y), MM_FRAME_PCP);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 1);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.free_pages, 1024 - 1);

	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_spill_above_high(void)
{
	enum { HIGH = 16, BATCH = 4, N = 40 };
	struct mm_pool *pool = pool_new_pcp(4, true, HIGH, BATCH);
	struct mm_pcp *pcp = NULL;
	unsigned int expect = 0;
	long frames[N];

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	for (int i = 0; i < N; i++) {
		frames[i] = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
		CU_ASSERT_FATAL(frames[i] >= 0);
	}
	for (int i = 0; i < N; i++) {
		unsigned int cached = 0;

		CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)frames[i]), 0);
		if (++expect > HIGH)
			expect -= BATCH;
		CU_ASSERT_EQUAL(mm_pcp_count(pcp), expect);
		CU_ASSERT_EQUAL(pcp_pages(pool), expect);
		for (int j = 0; j <= i; j++)
			if (frame_state(pool, (uint64_t)frames[j]) ==
			    MM_FRAME_PCP)
				cached++;
		CU_ASSERT_EQUAL(cached, expect);
	}
	CU_ASSERT(mm_pcp_count(pcp) <= HIGH);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * 2 MiB pool handed out page by page; eight aligned frames then freed
 * through pcp B are the only free memory. An order-3 request through
 * pcp A finds the buddy empty, drains every pcp, and the eight merge.
 */
static void test_failure_drains_all_pcps(void)
{
	struct mm_pool *pool = pool_new(2, true);
	struct mm_pcp *a = NULL, *b = NULL;
	struct mm_frame_info fi;
	struct mm_stats st;
	long r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &a), 0);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &b), 0);
	for (int i = 0; i < 512; i++)
		CU_ASSERT_FATAL(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0) >= 0);
	for (uint64_t f = 64; f < 72; f++)
		CU_ASSERT_EQUAL(mm_free(pool, b, f), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(b), 8);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.free_pages, 0);
	CU_ASSERT_EQUAL(st.pcp_pages, 8);
	CU_ASSERT_EQUAL(st.counters.pcp_drain_all, 0);

	r = mm_alloc(pool, a, 3, MIGRATE_MOVABLE, TEST_OWNER);
	CU_ASSERT_EQUAL_FATAL(r, 64);
	CU_ASSERT_EQUAL(mm_pcp_count(b), 0);
	CU_ASSERT_EQUAL(mm_frame_info(pool, 64, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(fi.order, 3);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.counters.pcp_drain_all, 1);
	CU_ASSERT_EQUAL(st.pcp_pages, 0);
	CU_ASSERT_EQUAL(st.counters.alloc_fail, 0);

	CU_ASSERT_EQUAL(mm_alloc(pool, a, 3, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.pcp_drain_all, 2);
	CU_ASSERT_EQUAL(st.counters.alloc_fail, 1);

	CU_ASSERT_EQUAL(mm_free(pool, b, 200), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(b), 1);
	r = mm_alloc(pool, a, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_EQUAL(r, 200);
	CU_ASSERT_EQUAL(mm_pcp_count(a), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(b), 0);
	CU_ASSERT_EQUAL(counters(pool).pcp_drain_all, 3);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, 64), 0);
	for (uint64_t f = 0; f < 512; f++)
		if (f < 64 || f >= 72)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	mm_pcp_destroy(a);
	mm_pcp_destroy(b);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_destroy_returns_frames(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_pcp *pcp = NULL;
	long x, y;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	x = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	y = mm_alloc(pool, pcp, 0, MIGRATE_RECLAIMABLE, 0);
	CU_ASSERT_FATAL(x >= 0 && y >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(pcp_pages(pool), 2 * DEFAULT_BATCH - 1);

	mm_pcp_destroy(pcp);
	CU_ASSERT_EQUAL(pcp_pages(pool), 0);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)y), MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)y), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_drain_all_empties(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_pcp *a = NULL, *b = NULL;
	long x, y;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &a), 0);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &b), 0);
	x = mm_alloc(pool, a, 0, MIGRATE_UNMOVABLE, 0);
	y = mm_alloc(pool, b, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(x >= 0 && y >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, b, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(a), DEFAULT_BATCH - 1);
	CU_ASSERT_EQUAL(mm_pcp_count(b), DEFAULT_BATCH);

	mm_drain_all(pool);
	CU_ASSERT_EQUAL(mm_pcp_count(a), 0);
	CU_ASSERT_EQUAL(mm_pcp_count(b), 0);
	CU_ASSERT_EQUAL(pcp_pages(pool), 0);
	CU_ASSERT_NOT_EQUAL(frame_state(pool, (uint64_t)x), MM_FRAME_PCP);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)y), MM_FRAME_ALLOC);

	CU_ASSERT_EQUAL(mm_free(pool, a, (uint64_t)y), 0);
	mm_drain_all(pool);
	ASSERT_POOL_WHOLE(pool);
	mm_pcp_destroy(a);
	mm_pcp_destroy(b);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_pcp_with_grouping_off(void)
{
	struct mm_pool *pool = pool_new(8, false);
	struct mm_pcp *pcp = NULL;
	struct mm_stats st;
	long u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	u = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_FATAL(u >= 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), DEFAULT_BATCH - 1);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)u), MIGRATE_MOVABLE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 0);
	CU_ASSERT_EQUAL(st.counters.pageblock_steal, 0);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)u), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * A refill hands frames out in the order the buddy split them, so a run of
 * order-0 allocations ascends and the host can merge their mappings.
 */
static void test_refill_ascends(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_pcp *pcp;
	long prev = -1;

	CU_ASSERT_FATAL(pool != NULL);
	CU_ASSERT_FATAL(mm_pcp_create(pool, &pcp) == 0);
	for (int i = 0; i < 100; i++) {
		long pfn = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, TEST_OWNER);

		CU_ASSERT_FATAL(pfn >= 0);
		if (i)
			CU_ASSERT_EQUAL(pfn, prev + 1);
		prev = pfn;
	}
	mm_pcp_destroy(pcp);
	mm_pool_destroy(pool);
}

/*
 * Grouping switched at run time reaches lists that already exist: with it
 * off, a freed frame joins the one (MOVABLE) list whatever its pageblock.
 */
static void test_grouping_switch_reaches_pcp(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_frame_info info;
	struct mm_pcp *pcp;
	long u;

	CU_ASSERT_FATAL(pool != NULL);
	CU_ASSERT_FATAL(mm_pcp_create(pool, &pcp) == 0);
	u = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, TEST_OWNER);
	CU_ASSERT_FATAL(u >= 0);
	CU_ASSERT_EQUAL(pb_type(pool, (uint64_t)u), MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)u, &info), 0);
	CU_ASSERT_EQUAL(info.mt, MIGRATE_UNMOVABLE);

	u = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, TEST_OWNER);
	mm_set_grouping(pool, false);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)u, &info), 0);
	CU_ASSERT_EQUAL(info.state, MM_FRAME_PCP);
	CU_ASSERT_EQUAL(info.mt, MIGRATE_MOVABLE);
	/* and an unmovable request is served from that one list */
	CU_ASSERT_EQUAL(mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, TEST_OWNER), u);
	mm_pcp_destroy(pcp);
	mm_pool_destroy(pool);
}

int register_pcp_suite(void)
{
	static const struct suite_test tests[] = {
		{ "refill in batches", test_refill_in_batches },
		{ "configured batch", test_configured_batch },
		{ "types served from their own list",
		  test_types_served_from_own_list },
		{ "frees go to the pcp", test_frees_go_to_pcp },
		{ "spill above high", test_spill_above_high },
		{ "failure drains every pcp", test_failure_drains_all_pcps },
		{ "destroy returns frames", test_destroy_returns_frames },
		{ "drain all empties every pcp", test_drain_all_empties },
		{ "pcp with grouping off", test_pcp_with_grouping_off },
		{ "refill ascends", test_refill_ascends },
		{ "grouping switch reaches pcp", test_grouping_switch_reaches_pcp },
	};
	return SUITE("pcp", tests);
}
