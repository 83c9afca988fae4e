// SPDX-License-Identifier: GPL-2.0
/*
 * Pageblocks owned whole (mm/owned.c): two owners' frames never share a
 * pageblock, an owner's count of pageblocks is what the frame map says,
 * the limit holds, compaction moves an owner's pages within its own
 * pageblocks only and gives the emptied ones back, and the statistics
 * still add up with the owners' free lists in them.
 */
#include <errno.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/unit/pattern_owner.h"
#include "tests/suite.h"

struct pb_owners {
	uint64_t mixed, owned_by[2], free;
	uint32_t ids[2];
};

static void count_owner(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	struct pb_owners *c = opaque;

	if (info->owner == MM_OWNER_MIXED)
		c->mixed++;
	else if (info->owner == c->ids[0])
		c->owned_by[0]++;
	else if (info->owner == c->ids[1])
		c->owned_by[1]++;
	else if (info->free_pages == MM_PAGEBLOCK_PAGES)
		c->free++;
}

static struct pb_owners walk_owners(struct mm_pool *pool, uint32_t a, uint32_t b)
{
	struct pb_owners c = { .ids = { a, b } };

	CU_ASSERT_EQUAL(mm_pageblock_walk(pool, count_owner, &c), 0);
	return c;
}

static struct mm_pool *owned_pool(size_t mib)
{
	struct mm_pool *pool = pool_new(mib, true);

	if (pool && mm_set_owned_blocks(pool)) {
		mm_pool_destroy(pool);
		return NULL;
	}
	return pool;
}

/* Interleaved allocations of two owners still land in pageblocks of their own. */
static void test_owners_never_share(void)
{
	struct mm_pool *pool = owned_pool(16);
	struct pattern_owner a, b;
	struct pb_owners c;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&a, pool, PO_MIGRATE, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&b, pool, PO_MIGRATE, 0), 0);
	for (uint64_t id = 0; id < 1000; id++) {
		CU_ASSERT(pattern_owner_alloc(&a, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
		CU_ASSERT(pattern_owner_alloc(&b, NULL, id % 2, MIGRATE_MOVABLE, id) >= 0);
	}
	c = walk_owners(pool, a.owner, b.owner);
	CU_ASSERT_EQUAL(c.mixed, 0);
	/* 1000 frames are two pageblocks; 1500 of b's are three */
	CU_ASSERT_EQUAL(c.owned_by[0], 2);
	CU_ASSERT_EQUAL(c.owned_by[1], 3);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, a.owner), c.owned_by[0]);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, b.owner), c.owned_by[1]);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	/* a's frees stay a's: b's next allocations take a pageblock of b's */
	for (uint64_t id = 0; id < 500; id++)
		CU_ASSERT_EQUAL(pattern_owner_free(&a, NULL, id), 0);
	for (uint64_t id = 1000; id < 1100; id++)
		CU_ASSERT(pattern_owner_alloc(&b, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
	c = walk_owners(pool, a.owner, b.owner);
	CU_ASSERT_EQUAL(c.mixed, 0);
	CU_ASSERT_EQUAL(c.owned_by[0], 2);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&a) + pattern_owner_verify_all(&b), 0);
	/* all freed: every pageblock back to no one, the pool whole */
	CU_ASSERT_EQUAL(pattern_owner_free_all(&a, NULL, 1000), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&b, NULL, 1100), 0);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, a.owner), 0);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, b.owner), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&a);
	pattern_owner_fini(&b);
	mm_pool_destroy(pool);
}

/*
 * The limit is in pageblocks: splitting a block and keeping one pinned
 * frame of it costs the whole pageblock, so an owner limited to 2 holds
 * at most 2 however it goes about it.
 */
static void test_limit_in_pageblocks(void)
{
	struct mm_pool *pool = owned_pool(16);
	static const struct mm_owner_ops none = { NULL, NULL };
	uint32_t id;
	long f;
	int pinned = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_owner_register(pool, &none, NULL, &id), 0);
	CU_ASSERT_EQUAL(mm_owner_set_limit(pool, id, 2), 0);
	while ((f = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, id)) >= 0) {
		CU_ASSERT_EQUAL_FATAL(mm_split(pool, (uint64_t)f), 0);
		for (uint64_t i = 1; i < MM_PAGEBLOCK_PAGES; i++)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f + i), 0);
		CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)f), 0);
		pinned++;
		if (pinned > 8)
			break;
	}
	CU_ASSERT_EQUAL(f, -EDQUOT);
	CU_ASSERT_EQUAL(pinned, 2);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, id), 2);
	/* room in its own pageblocks still serves it */
	f = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, id);
	CU_ASSERT(f >= 0);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, id), 2);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f), 0);
	CU_ASSERT_EQUAL(mm_owner_set_limit(pool, 4242, 1), -ENOENT);
	CU_ASSERT_EQUAL(mm_free_owner(pool, id), 2);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, id), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * An owner's thinned pages are compacted within its own pageblocks: the
 * emptied ones go back to the pool, the other owner's pages stay where
 * they were, and no page moves into a pageblock it does not own.
 */
static void test_compaction_stays_within_owner(void)
{
	struct mm_pool *pool = owned_pool(16);
	struct pattern_owner a, b;
	uint64_t before_b[512], kept;
	struct pb_owners c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&a, pool, PO_MIGRATE, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&b, pool, PO_MIGRATE, 0), 0);
	for (uint64_t id = 0; id < 512; id++) {
		CU_ASSERT(pattern_owner_alloc(&b, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
		before_b[id] = (uint64_t)pattern_owner_frame(&b, id);
	}
	/* a: four pageblocks, one page in four kept */
	for (uint64_t id = 0; id < 4 * MM_PAGEBLOCK_PAGES; id++)
		CU_ASSERT(pattern_owner_alloc(&a, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
	kept = 0;
	for (uint64_t id = 0; id < 4 * MM_PAGEBLOCK_PAGES; id++) {
		if (!(id % 4)) {
			kept++;
			continue;
		}
		CU_ASSERT_EQUAL(pattern_owner_free(&a, NULL, id), 0);
	}
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, a.owner), 4);
	mm_compact_all(pool);
	CU_ASSERT(a.migrate_calls > 0);
	CU_ASSERT_EQUAL(b.migrate_calls, 0);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, a.owner), 1);
	CU_ASSERT_EQUAL(mm_owner_pages(pool, a.owner), kept);
	c = walk_owners(pool, a.owner, b.owner);
	CU_ASSERT_EQUAL(c.mixed, 0);
	CU_ASSERT_EQUAL(c.owned_by[0], 1);
	CU_ASSERT_EQUAL(c.owned_by[1], 1);
	for (uint64_t id = 0; id < 512; id++)
		CU_ASSERT_EQUAL((uint64_t)pattern_owner_frame(&b, id), before_b[id]);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&a) + pattern_owner_verify_all(&b), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&a, NULL, 4 * MM_PAGEBLOCK_PAGES), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&b, NULL, 512), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&a);
	pattern_owner_fini(&b);
	mm_pool_destroy(pool);
}

/*
 * Turned on after the first allocation, the count would be wrong, and a
 * frame handed out of the pool's memfd would stay there: both refused.
 */
static void test_owned_only_from_the_start(void)
{
	struct mm_pool *pool = pool_new(4, true);
	long f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	f = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(f >= 0);
	CU_ASSERT_EQUAL(mm_set_owned_blocks(pool), -EBUSY);
	CU_ASSERT_EQUAL(mm_set_pageblock_files(pool), -EBUSY);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f), 0);
	CU_ASSERT_EQUAL(mm_set_owned_blocks(pool), 0);
	CU_ASSERT_EQUAL(mm_set_owned_blocks(pool), 0);
	mm_pool_destroy(pool);
}

int register_owned_suite(void)
{
	static const struct suite_test tests[] = {
		{ "two owners never share a pageblock", test_owners_never_share },
		{ "the limit is in pageblocks", test_limit_in_pageblocks },
		{ "compaction stays within the owner", test_compaction_stays_within_owner },
		{ "owned pageblocks only from the start", test_owned_only_from_the_start },
	};

	return SUITE("owned", tests);
}
