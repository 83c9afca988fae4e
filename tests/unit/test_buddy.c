// SPDX-License-Identifier: GPL-2.0
/*
 * Buddy split and merge: blocks come out aligned and disjoint, and freeing
 * everything, in any order, merges the pool back into max-order blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

struct block {
	uint64_t frame;
	unsigned int order;
};

/* Blocks handed out by a test, with a byte per frame to catch overlaps. */
struct ledger {
	struct mm_pool *pool;
	uint64_t frames;
	uint8_t *used;
	struct block *blocks;
	size_t nr;
	bool broken;
};

static bool ledger_init(struct ledger *l, struct mm_pool *pool)
{
	l->pool = pool;
	l->frames = mm_pool_frames(pool);
	l->used = calloc(l->frames, 1);
	l->blocks = calloc(l->frames, sizeof(*l->blocks));
	l->nr = 0;
	l->broken = false;
	return l->used && l->blocks;
}

static void ledger_fini(struct ledger *l)
{
	free(l->used);
	free(l->blocks);
}

/* Returns mm_alloc's result after checking a successful block in full. */
static long ledger_alloc(struct ledger *l, unsigned int order,
			 enum mm_migratetype mt)
{
	long r = mm_alloc(l->pool, NULL, order, mt, TEST_OWNER);
	uint64_t size = 1ULL << order;
	struct mm_frame_info fi;

	if (r < 0) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		if (r != -ENOMEM)
			l->broken = true;
		return r;
	}
	CU_ASSERT_EQUAL((uint64_t)r & (size - 1), 0);
	CU_ASSERT((uint64_t)r + size <= l->frames);
	if (((uint64_t)r & (size - 1)) || (uint64_t)r + size > l->frames) {
		l->broken = true;
		return r;
	}
	for (uint64_t f = (uint64_t)r; f < (uint64_t)r + size; f++) {
		CU_ASSERT_EQUAL(l->used[f], 0);
		if (l->used[f])
			l->broken = true;
		l->used[f] = 1;
	}
	CU_ASSERT_EQUAL(mm_frame_info(l->pool, (uint64_t)r, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(fi.order, order);
	CU_ASSERT_EQUAL(fi.mt, mt);
	CU_ASSERT_EQUAL(fi.owner, TEST_OWNER);
	l->blocks[l->nr].frame = (uint64_t)r;
	l->blocks[l->nr].order = order;
	l->nr++;
	return r;
}

static void ledger_free_at(struct ledger *l, size_t i)
{
	struct block b = l->blocks[i];

	CU_ASSERT_EQUAL(mm_free(l->pool, NULL, b.frame), 0);
	for (uint64_t f = b.frame; f < b.frame + (1ULL << b.order); f++)
		l->used[f] = 0;
	l->blocks[i] = l->blocks[--l->nr];
}

/* Frees @count random blocks (all of them when @count >= nr). */
static void ledger_free_random(struct ledger *l, size_t count,
			       uint64_t *seed)
{
	while (count-- && l->nr)
		ledger_free_at(l, rng_next(seed) % l->nr);
}

/* Allocates @orders cyclically until an order-0 request fails. */
static void ledger_fill(struct ledger *l, const unsigned int *orders,
			size_t nr_orders)
{
	for (size_t i = 0; !l->broken; i++) {
		unsigned int order = orders[i % nr_orders];
		enum mm_migratetype mt = (enum mm_migratetype)(i % MIGRATE_TYPES);

		if (ledger_alloc(l, order, mt) < 0 && order == 0)
			break;
	}
}

static void check_full(struct ledger *l)
{
	struct mm_stats st;
	uint64_t allocated = 0;

	CU_ASSERT_FATAL(pool_snapshot(l->pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.free_pages, 0);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		allocated += st.allocated_pages[t];
	CU_ASSERT_EQUAL(allocated, l->frames);
	for (uint64_t f = 0; f < l->frames; f++)
		if (!l->used[f]) {
			CU_FAIL("a frame is neither free nor handed out");
			break;
		}
}

static void run_patterns(bool grouping)
{
	static const unsigned int up[] = { 0, 3, 10, 1, 5, 2, 9, 0, 7, 4, 6, 8 };
	static const unsigned int down[] = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	struct mm_pool *pool = pool_new(64, grouping);
	struct ledger l;
	uint64_t seed = grouping ? 0x1234567 : 0x7654321;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_FATAL(ledger_init(&l, pool));

	ledger_fill(&l, up, sizeof(up) / sizeof(up[0]));
	check_full(&l);
	ledger_free_random(&l, l.nr / 2, &seed);
	ledger_fill(&l, down, sizeof(down) / sizeof(down[0]));
	check_full(&l);
	ledger_free_random(&l, l.nr, &seed);
	CU_ASSERT_FALSE(l.broken);
	ASSERT_POOL_WHOLE(pool);

	ledger_fini(&l);
	mm_pool_destroy(pool);
}

static void test_init_layout(void)
{
	struct mm_pool *pool = pool_new(64, true);
	struct mm_frame_info fi;
	struct mm_stats st;
	struct stat sb;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_pool_frames(pool), 64 * FRAMES_PER_MIB);
	CU_ASSERT_TRUE(mm_grouping(pool));
	CU_ASSERT_FATAL(mm_pool_fd(pool) >= 0);
	CU_ASSERT_EQUAL_FATAL(fstat(mm_pool_fd(pool), &sb), 0);
	CU_ASSERT_EQUAL(sb.st_size, (off_t)(64 * MIB));

	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.frames, 16384);
	CU_ASSERT_EQUAL(st.pageblocks, 32);
	CU_ASSERT_EQUAL(st.nr_free[10], 16);
	CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][10], 16);
	CU_ASSERT_TRUE(st.grouping);
	ASSERT_POOL_WHOLE(pool);

	for (uint64_t f = 0; f < st.frames; f += MAX_ORDER_PAGES) {
		CU_ASSERT_EQUAL(mm_frame_info(pool, f, &fi), 0);
		CU_ASSERT_EQUAL(fi.state, MM_FRAME_FREE);
		CU_ASSERT_EQUAL(fi.order, 10);
		CU_ASSERT_EQUAL(fi.mt, MIGRATE_MOVABLE);
		CU_ASSERT_EQUAL(frame_state(pool, f + 1), MM_FRAME_TAIL);
		CU_ASSERT_EQUAL(frame_state(pool, f + 512), MM_FRAME_TAIL);
	}
	mm_pool_destroy(pool);
}

static void test_default_size(void)
{
	struct mm_pool_config cfg = { .size = 0, .grouping = true };
	struct mm_pool *pool = NULL;
	struct mm_stats st;

	CU_ASSERT_EQUAL_FATAL(mm_pool_create(&cfg, &pool), 0);
	CU_ASSERT_EQUAL(mm_pool_frames(pool), MM_DEFAULT_POOL_SIZE / MM_PAGE_SIZE);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free[10], MM_DEFAULT_POOL_SIZE / (4 * MIB));
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_pool_2mib(void)
{
	struct mm_pool *pool = pool_new(2, true);
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_pool_frames(pool), 512);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free[9], 1);
	CU_ASSERT_EQUAL(st.nr_free[10], 0);
	CU_ASSERT_EQUAL(st.pageblocks, 1);
	ASSERT_POOL_WHOLE(pool);

	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 9, MIGRATE_MOVABLE, 0), 0);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, 0), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_pool_6mib_tail(void)
{
	struct mm_pool *pool = pool_new(6, true);
	struct mm_frame_info fi;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_pool_frames(pool), 1536);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free[10], 1);
	CU_ASSERT_EQUAL(st.nr_free[9], 1);
	CU_ASSERT_EQUAL(st.pageblocks, 3);
	CU_ASSERT_EQUAL(mm_frame_info(pool, 1024, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_FREE);
	CU_ASSERT_EQUAL(fi.order, 9);
	ASSERT_POOL_WHOLE(pool);

	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0), 0);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 9, MIGRATE_MOVABLE, 0), 1024);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, 1024), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, 0), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_split_leaves_one_block_per_order(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (unsigned int order = 0; order < MM_MAX_ORDER; order++) {
		long r = mm_alloc(pool, NULL, order, MIGRATE_MOVABLE, 7);

		CU_ASSERT_FATAL(r >= 0);
		CU_ASSERT_FATAL(pool_snapshot(pool, &st));
		ASSERT_STATS_CONSISTENT(&st);
		CU_ASSERT_EQUAL(st.free_pages, 1024 - (1ULL << order));
		for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
			uint64_t expect = o >= order && o < 10 ? 1 : 0;

			CU_ASSERT_EQUAL(st.nr_free[o], expect);
		}
		CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE],
				1ULL << order);
		CU_ASSERT_EQUAL(st.counters.alloc[order], 1);
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
		ASSERT_POOL_WHOLE(pool);
	}
	mm_pool_destroy(pool);
}

static void test_buddies_merge(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_stats st;
	long a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a = mm_alloc(pool, NULL, 9, MIGRATE_MOVABLE, 0);
	b = mm_alloc(pool, NULL, 9, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	CU_ASSERT_EQUAL(a + b, 512);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free[9], 1);
	CU_ASSERT_EQUAL(st.nr_free[10], 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), 0);
	ASSERT_POOL_WHOLE(pool);

	for (uint64_t i = 0; i < 1024; i++)
		CU_ASSERT(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0) >= 0);
	for (uint64_t f = 0; f < 1024; f += 2)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.nr_free[0], 512);
	CU_ASSERT_EQUAL(st.free_pages, 512);
	for (uint64_t f = 1024; f > 0; f -= 2)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, f - 1), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_patterns_grouping_on(void)
{
	run_patterns(true);
}

static void test_patterns_grouping_off(void)
{
	run_patterns(false);
}

static void test_whole_pool_order0_random_free(void)
{
	struct mm_pool *pool = pool_new(64, true);
	uint64_t seed = 0xdecafbad, frames, *order0;
	uint8_t *seen;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	frames = mm_pool_frames(pool);
	order0 = calloc(frames, sizeof(*order0));
	seen = calloc(frames, 1);
	CU_ASSERT_FATAL(order0 && seen);

	for (uint64_t i = 0; i < frames; i++) {
		long r = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 1);

		CU_ASSERT_FATAL(r >= 0 && (uint64_t)r < frames);
		CU_ASSERT_FATAL(!seen[r]);
		seen[r] = 1;
		order0[i] = (uint64_t)r;
	}
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 1), -ENOMEM);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.free_pages, 0);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], frames);
	CU_ASSERT_EQUAL(st.counters.alloc[0], frames);
	CU_ASSERT_EQUAL(st.counters.alloc_fail, 1);
	CU_ASSERT_EQUAL(st.free_pageblocks, 0);

	shuffle_u64(order0, frames, &seed);
	for (uint64_t i = 0; i < frames; i++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, order0[i]), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.frees, frames);
	ASSERT_POOL_WHOLE(pool);

	free(seen);
	free(order0);
	mm_pool_destroy(pool);
}

static void test_enomem_when_full(void)
{
	struct mm_pool *pool = pool_new(64, true);
	long blocks[16], r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (int i = 0; i < 16; i++) {
		blocks[i] = mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0);
		CU_ASSERT_FATAL(blocks[i] >= 0);
		CU_ASSERT_EQUAL(blocks[i] % 1024, 0);
	}
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0), -ENOMEM);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 0, (enum mm_migratetype)t,
					 0), -ENOMEM);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)blocks[5]), 0);
	r = mm_alloc(pool, NULL, 9, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT(r >= blocks[5] && r < blocks[5] + 1024);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	for (int i = 0; i < 16; i++)
		if (i != 5)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)blocks[i]),
					0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

int register_buddy_suite(void)
{
	static const struct suite_test tests[] = {
		{ "init layout", test_init_layout },
		{ "default size", test_default_size },
		{ "2 MiB pool", test_pool_2mib },
		{ "6 MiB pool, order-9 tail", test_pool_6mib_tail },
		{ "split leaves one block per order",
		  test_split_leaves_one_block_per_order },
		{ "buddies merge", test_buddies_merge },
		{ "order patterns, grouping on", test_patterns_grouping_on },
		{ "order patterns, grouping off", test_patterns_grouping_off },
		{ "whole pool order 0, random free",
		  test_whole_pool_order0_random_free },
		{ "ENOMEM when full", test_enomem_when_full },
	};
	return SUITE("buddy", tests);
}
