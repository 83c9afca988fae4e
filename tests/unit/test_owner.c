// SPDX-License-Identifier: GPL-2.0
/*
 * Owners, pins and the LRU: registration, which blocks go on which LRU
 * list, what mm_touch and mm_shrink do to them, the pin and unpin rules,
 * frees an owner makes from inside its own callback, and an owner that
 * unregisters while compaction is moving its blocks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/unit/pattern_owner.h"
#include "tests/suite.h"

#define MOVABLE_MASK	(1U << MIGRATE_MOVABLE)
#define ALL_TYPES_MASK	((1U << MIGRATE_TYPES) - 1)

static struct mm_stats snapshot(struct mm_pool *pool)
{
	struct mm_stats st = { 0 };

	pool_snapshot(pool, &st);
	return st;
}

static void test_register_ids(void)
{
	struct mm_pool *pool = pool_new(4, true);
	static const struct mm_owner_ops none = { NULL, NULL };
	uint32_t a = 0, b = 0, c = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_owner_register(pool, &none, NULL, &a), 0);
	CU_ASSERT_EQUAL(mm_owner_register(pool, &none, NULL, &b), 0);
	/* 0 is MM_NO_OWNER: an id must never collide with it */
	CU_ASSERT(a >= 1 && b >= 1);
	CU_ASSERT_NOT_EQUAL(a, b);
	/* unknown ids are ignored, twice is harmless */
	mm_owner_unregister(pool, MM_NO_OWNER);
	mm_owner_unregister(pool, 4242);
	mm_owner_unregister(pool, a);
	mm_owner_unregister(pool, a);
	/* a retired id is not handed out again to a new owner */
	CU_ASSERT_EQUAL(mm_owner_register(pool, &none, NULL, &c), 0);
	CU_ASSERT(c >= 1 && c != a && c != b);
	/* slots come back: more owners over time than there are ids at once */
	for (unsigned int i = 0; i < 70000; i++) {
		uint32_t id = 0;

		if (mm_owner_register(pool, &none, NULL, &id)) {
			CU_FAIL("owner ids ran out");
			break;
		}
		CU_ASSERT(id != MM_NO_OWNER && id != MM_OWNER_MIXED && id != a && id != b && id != c);
		mm_owner_unregister(pool, id);
	}
	mm_pool_destroy(pool);
}

/* Blocks go on an LRU only when their owner can reclaim them. */
static void test_lru_membership(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct pattern_owner pr, pm;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&pr, pool, PO_RECLAIM, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&pm, pool, PO_MIGRATE, 0), 0);
	for (uint64_t id = 0; id < 4; id++) {
		CU_ASSERT(pattern_owner_alloc(&pr, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
		CU_ASSERT(pattern_owner_alloc(&pm, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
	}
	CU_ASSERT(pattern_owner_alloc(&pr, NULL, 2, MIGRATE_RECLAIMABLE, 4) >= 0);
	CU_ASSERT(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, MM_NO_OWNER) >= 0);
	st = snapshot(pool);
	/* pages, not blocks: the order-2 block counts 4 */
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0], 4);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][1], 0);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_RECLAIMABLE][0], 4);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_UNMOVABLE][0], 0);
	ASSERT_STATS_CONSISTENT(&st);

	/* freeing takes a block off its LRU */
	CU_ASSERT_EQUAL(pattern_owner_free(&pr, NULL, 0), 0);
	CU_ASSERT_EQUAL(pattern_owner_free(&pr, NULL, 4), 0);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0], 3);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_RECLAIMABLE][0], 0);

	pattern_owner_free_all(&pr, NULL, 5);
	pattern_owner_free_all(&pm, NULL, 4);
	for (uint64_t f = 0; f < mm_pool_frames(pool); f++)
		if (frame_state(pool, f) == MM_FRAME_ALLOC)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, f), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_EQUAL(pr.corrupted + pm.corrupted, 0);
	pattern_owner_fini(&pr);
	pattern_owner_fini(&pm);
	mm_pool_destroy(pool);
}

/*
 * mm_touch promotes to the active list; mm_shrink takes the inactive
 * tail (oldest first) and touches the active list only when the inactive
 * one has run dry, oldest-touched first.
 */
static void test_touch_and_shrink(void)
{
	enum { N = 16 };
	struct mm_pool *pool = pool_new(4, true);
	struct pattern_owner po;
	long frame[N];
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	for (uint64_t id = 0; id < N; id++) {
		frame[id] = pattern_owner_alloc(&po, NULL, 0, MIGRATE_MOVABLE, id);
		CU_ASSERT_FATAL(frame[id] >= 0);
	}
	for (uint64_t id = 0; id < 4; id++)
		mm_touch(pool, (uint64_t)frame[id]);
	/* touching twice, a free frame, or past the pool changes nothing */
	mm_touch(pool, (uint64_t)frame[0]);
	mm_touch(pool, mm_pool_frames(pool) - 1);
	mm_touch(pool, mm_pool_frames(pool));
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0], N - 4);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][1], 4);

	CU_ASSERT_EQUAL(mm_shrink(pool, 4, MOVABLE_MASK), 4);
	CU_ASSERT_EQUAL(po.reclaims, 4);
	for (uint64_t id = 0; id < N; id++)
		CU_ASSERT_EQUAL(pattern_owner_holds(&po, id), id < 4 || id >= 8);
	for (uint64_t id = 4; id < 8; id++)
		CU_ASSERT_NOT_EQUAL(frame_state(pool, (uint64_t)frame[id]),
				    MM_FRAME_ALLOC);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0], N - 8);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][1], 4);
	CU_ASSERT_EQUAL(st.counters.reclaim_success, 4);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], N - 4);

	/* all 8 inactive go before any active; then the first touched */
	CU_ASSERT_EQUAL(mm_shrink(pool, 10, MOVABLE_MASK), 10);
	for (uint64_t id = 0; id < N; id++)
		CU_ASSERT_EQUAL(pattern_owner_holds(&po, id), id == 2 || id == 3);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0] +
			st.lru_pages[MIGRATE_MOVABLE][1], 2);

	CU_ASSERT_EQUAL(mm_shrink(pool, 100, MOVABLE_MASK), 2);
	CU_ASSERT_EQUAL(mm_shrink(pool, 1, ALL_TYPES_MASK), 0);
	CU_ASSERT_EQUAL(po.reclaims, N);
	CU_ASSERT_EQUAL(po.tracked, 0);
	CU_ASSERT_EQUAL(po.corrupted, 0);
	CU_ASSERT_EQUAL(po.unknown, 0);
	CU_ASSERT_EQUAL(po.foreign, 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/* The type mask picks the lists; an UNMOVABLE block is never reclaimed. */
static void test_shrink_typemask(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct pattern_owner po;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	for (uint64_t id = 0; id < 8; id++) {
		CU_ASSERT(pattern_owner_alloc(&po, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
		CU_ASSERT(pattern_owner_alloc(&po, NULL, 0, MIGRATE_RECLAIMABLE,
					      8 + id) >= 0);
	}
	CU_ASSERT(pattern_owner_alloc(&po, NULL, 1, MIGRATE_UNMOVABLE, 16) >= 0);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0], 8);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_RECLAIMABLE][0], 8);

	CU_ASSERT_EQUAL(mm_shrink(pool, 100, 0), 0);
	CU_ASSERT_EQUAL(mm_shrink(pool, 100, 1U << MIGRATE_UNMOVABLE), 0);
	CU_ASSERT_EQUAL(mm_shrink(pool, 100, 1U << MIGRATE_RECLAIMABLE), 8);
	for (uint64_t id = 0; id < 16; id++)
		CU_ASSERT_EQUAL(pattern_owner_holds(&po, id), id < 8);
	CU_ASSERT_EQUAL(mm_shrink(pool, 100, ALL_TYPES_MASK), 8);
	/* only the unmovable block is left, and it was never offered */
	CU_ASSERT(pattern_owner_holds(&po, 16));
	CU_ASSERT_EQUAL(po.offered_mt[MIGRATE_UNMOVABLE], 0);
	CU_ASSERT_EQUAL(po.reclaims, 16);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 2);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE] +
			st.allocated_pages[MIGRATE_RECLAIMABLE], 0);

	CU_ASSERT_EQUAL(pattern_owner_free(&po, NULL, 16), 0);
	CU_ASSERT_EQUAL(po.corrupted, 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * A failing reclaim leaves the block allocated and on its LRU, and one
 * mm_shrink call offers each block at most once (owner.c takes the block
 * off the list while it tries "so a failure does not retry it").
 */
static void test_shrink_reclaim_fails(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct pattern_owner po;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	for (uint64_t id = 0; id < 4; id++)
		CU_ASSERT(pattern_owner_alloc(&po, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
	po.reclaim_fail_every = 1;
	CU_ASSERT_EQUAL(mm_shrink(pool, 4, MOVABLE_MASK), 0);
	for (uint64_t id = 0; id < 4; id++)
		CU_ASSERT(pattern_owner_holds(&po, id));
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0] +
			st.lru_pages[MIGRATE_MOVABLE][1], 4);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 4);
	CU_ASSERT_EQUAL(st.counters.reclaim_fail, po.reclaim_calls);
	CU_ASSERT_EQUAL(st.counters.reclaim_success, 0);
	CU_ASSERT_EQUAL(po.reclaim_calls, 4);

	/* the owner recovers: the same blocks can go now */
	po.reclaim_fail_every = 0;
	CU_ASSERT_EQUAL(mm_shrink(pool, 4, MOVABLE_MASK), 4);
	CU_ASSERT_EQUAL(po.tracked, 0);
	CU_ASSERT_EQUAL(po.corrupted, 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_pin_rules(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;
	struct mm_stats before, st;
	long big, small, cached;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	big = mm_alloc(pool, NULL, 2, MIGRATE_MOVABLE, TEST_OWNER);
	small = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, TEST_OWNER);
	cached = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, TEST_OWNER);
	CU_ASSERT_FATAL(big >= 0 && small >= 0 && cached >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)cached), 0);
	CU_ASSERT_EQUAL_FATAL(frame_state(pool, (uint64_t)cached), MM_FRAME_PCP);
	before = snapshot(pool);

	/* only the head of an allocated block can be pinned */
	CU_ASSERT_EQUAL(mm_pin(pool, mm_pool_frames(pool)), -EINVAL);
	CU_ASSERT_EQUAL(mm_pin(pool, UINT64_MAX), -EINVAL);
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)big + 1), -EINVAL);
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)cached), -EINVAL);
	CU_ASSERT_EQUAL(mm_pin(pool, mm_pool_frames(pool) - 1), -EINVAL);
	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)big), -EINVAL);
	CU_ASSERT_EQUAL(mm_unpin(pool, mm_pool_frames(pool)), -EINVAL);
	CU_ASSERT_EQUAL(mm_unpin(pool, mm_pool_frames(pool) - 1), -EINVAL);
	CU_ASSERT_EQUAL(snapshot(pool).pinned_pages, 0);

	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)big), 0);
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)big), 0);
	CU_ASSERT_EQUAL(snapshot(pool).pinned_pages, 4);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)big), -EBUSY);
	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)big), 0);
	/* pins count: one left */
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)big), -EBUSY);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)big), MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)big), 0);
	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)big), -EINVAL);
	CU_ASSERT_EQUAL(snapshot(pool).pinned_pages, 0);

	/* the lock-free per-thread free must see the pin as well */
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)small), 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)small), -EBUSY);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)small), MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)small), 0);

	/* a refused free is neither a bad nor a double free */
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.counters.bad_frees, before.counters.bad_frees);
	CU_ASSERT_EQUAL(st.counters.double_frees, before.counters.double_frees);
	CU_ASSERT_EQUAL(st.counters.frees, before.counters.frees);
	ASSERT_STATS_CONSISTENT(&st);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)big), 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)small), 0);
	/* a freed block has no pins left to drop */
	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)big), -EINVAL);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * A pinned block is skipped by reclaim, but it still belongs to an owner
 * that can reclaim it: once unpinned, the LRU must offer it again.
 */
static void test_shrink_skips_pinned(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct pattern_owner po;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	for (uint64_t id = 0; id < 4; id++)
		CU_ASSERT(pattern_owner_alloc(&po, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
	CU_ASSERT_EQUAL(pattern_owner_pin(&po, 0), 0);
	CU_ASSERT_EQUAL(mm_shrink(pool, 4, MOVABLE_MASK), 3);
	CU_ASSERT(pattern_owner_holds(&po, 0));
	CU_ASSERT_EQUAL(po.offered_pinned, 0);
	CU_ASSERT_EQUAL(snapshot(pool).allocated_pages[MIGRATE_MOVABLE], 1);

	CU_ASSERT_EQUAL(pattern_owner_unpin(&po, 0), 0);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0] +
			st.lru_pages[MIGRATE_MOVABLE][1], 1);
	CU_ASSERT_EQUAL(mm_shrink(pool, 4, MOVABLE_MASK), 1);
	CU_ASSERT_FALSE(pattern_owner_holds(&po, 0));

	/* clean up whatever the shrinker left */
	pattern_owner_free_all(&po, NULL, 4);
	CU_ASSERT_EQUAL(po.corrupted, 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * The owner frees the block it is asked to give up, from inside the
 * reclaim callback: the free must wait for the callback and happen once.
 */
struct free_in_cb {
	int ret;		/* what the callback answers after freeing */
	uint64_t freed, free_errors;
};

static int reclaim_frees_itself(struct pattern_owner *po, enum po_call call,
				uint64_t old_frame, uint64_t new_frame,
				unsigned int order)
{
	struct free_in_cb *d = po->hook_data;
	long id = pattern_owner_id_at(po, old_frame);

	if (id < 0)
		return PO_HOOK_CONTINUE;
	if (pattern_owner_free(po, NULL, (uint64_t)id))
		d->free_errors++;
	d->freed++;
	return d->ret;
}

static void free_inside_reclaim(int ret)
{
	enum { N = 8 };
	struct mm_pool *pool = pool_new(4, true);
	struct free_in_cb d = { .ret = ret };
	struct pattern_owner po;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_RECLAIM, 0), 0);
	for (uint64_t id = 0; id < N; id++)
		CU_ASSERT(pattern_owner_alloc(&po, NULL, 0, MIGRATE_MOVABLE, id) >= 0);
	po.hook = reclaim_frees_itself;
	po.hook_data = &d;
	mm_shrink(pool, N, MOVABLE_MASK);
	CU_ASSERT_EQUAL(d.freed, N);
	CU_ASSERT_EQUAL(d.free_errors, 0);

	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 0);
	CU_ASSERT_EQUAL(st.counters.frees, N);
	CU_ASSERT_EQUAL(st.counters.double_frees, 0);
	CU_ASSERT_EQUAL(st.counters.bad_frees, 0);
	/* each of those frees arrived while the block was being reclaimed */
	CU_ASSERT_EQUAL(st.counters.deferred_frees, N);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][0] +
			st.lru_pages[MIGRATE_MOVABLE][1], 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_free_inside_reclaim_fail(void)
{
	free_inside_reclaim(-EBUSY);
}

static void test_free_inside_reclaim_ok(void)
{
	free_inside_reclaim(0);
}

/* Blocks of an unregistered owner stay where they are. */
static void test_unregistered_blocks_stay(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	uint64_t n, kept, *where;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool,
						 PO_MIGRATE | PO_RECLAIM, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL_FATAL(n, mm_pool_frames(pool));
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);
	where = calloc(n, sizeof(*where));
	CU_ASSERT_PTR_NOT_NULL_FATAL(where);
	for (uint64_t id = 0; id < n; id++)
		where[id] = (uint64_t)pattern_owner_frame(&po, id);

	pattern_owner_unregister(&po);
	mm_compact_all(pool);
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_COMPLETE);
	CU_ASSERT_EQUAL(mm_shrink(pool, n, ALL_TYPES_MASK), 0);
	mm_set_policy(pool, MM_POLICY_ALL);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE,
				 MM_NO_OWNER), -ENOMEM);

	CU_ASSERT_EQUAL(po.migrate_calls + po.reclaim_calls, 0);
	for (uint64_t id = 0; id < n; id++) {
		struct mm_frame_info fi;

		if ((long)where[id] < 0)
			continue;
		CU_ASSERT_EQUAL(pattern_owner_frame(&po, id), (long)where[id]);
		CU_ASSERT_EQUAL(mm_frame_info(pool, where[id], &fi), 0);
		CU_ASSERT_EQUAL(fi.state, MM_FRAME_ALLOC);
		CU_ASSERT_EQUAL(fi.owner, po.owner);
	}
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], kept);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	free(where);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * A slot used again names a new owner: frames the old one still holds
 * (its process died, their free is yet to come) never reach the new
 * owner's callbacks, and the new owner cannot pin them as its own.
 */
static void test_reused_slot_stale_id(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po, po2;
	uint64_t n, kept = 0;
	long frame = -1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE | PO_RECLAIM, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);
	CU_ASSERT_FATAL(kept > 0 && kept < n);
	pattern_owner_unregister(&po);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po2, pool, PO_MIGRATE | PO_RECLAIM, 0), 0);
	CU_ASSERT_EQUAL(po2.owner & 0xffff, po.owner & 0xffff);
	CU_ASSERT_NOT_EQUAL(po2.owner, po.owner);
	mm_compact_all(pool);
	CU_ASSERT_EQUAL(mm_shrink(pool, n, ALL_TYPES_MASK), 0);
	CU_ASSERT_EQUAL(po.migrate_calls + po.reclaim_calls, 0);
	CU_ASSERT_EQUAL(po2.migrate_calls + po2.reclaim_calls, 0);
	CU_ASSERT_EQUAL(mm_owner_pages(pool, po.owner), kept);
	CU_ASSERT_EQUAL(mm_owner_pages(pool, po2.owner), 0);
	for (uint64_t id = 0; id < n && frame < 0; id++)
		frame = pattern_owner_frame(&po, id);
	CU_ASSERT_FATAL(frame >= 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)frame, po2.owner, MM_OWNED_PIN), -EPERM);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po2);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * mm_owner_unregister from a second thread while compaction moves the
 * owner's blocks through a slow callback: unregister waits for what is in
 * flight, nothing reaches the owner after it returns, and the compaction
 * still finishes with the pool consistent.
 */
struct unreg_thread {
	struct pattern_owner *po;
	atomic_bool compaction_done;
	bool started_during_compaction;
	uint64_t calls_before;
};

static uint64_t migrate_calls(struct pattern_owner *po)
{
	uint64_t n;

	pthread_mutex_lock(&po->lock);
	n = po->migrate_calls;
	pthread_mutex_unlock(&po->lock);
	return n;
}

static void *unregister_main(void *arg)
{
	struct unreg_thread *t = arg;

	while (migrate_calls(t->po) < 20 && !atomic_load(&t->compaction_done))
		usleep(50);
	t->started_during_compaction = !atomic_load(&t->compaction_done);
	t->calls_before = migrate_calls(t->po);
	pattern_owner_unregister(t->po);
	return NULL;
}

static void test_unregister_during_compaction(void)
{
	struct mm_pool *pool = pool_new(16, true);
	struct unreg_thread t = { 0 };
	struct pattern_owner po;
	uint64_t n, kept, calls;
	struct mm_stats st;
	pthread_t tid;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);
	po.delay_us = 100;
	t.po = &po;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&tid, NULL, unregister_main, &t), 0);
	mm_compact_all(pool);
	atomic_store(&t.compaction_done, true);
	CU_ASSERT_EQUAL(pthread_join(tid, NULL), 0);

	CU_ASSERT(t.started_during_compaction);
	CU_ASSERT(t.calls_before >= 20);
	CU_ASSERT_EQUAL(atomic_load(&po.calls_after_unregister), 0);
	CU_ASSERT_EQUAL(po.in_flight_at_unregister, 0);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	/* nothing lost or leaked: every allocated page is one the owner holds */
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], kept);
	CU_ASSERT_EQUAL(po.tracked, kept);
	CU_ASSERT_EQUAL(st.counters.pgmigrate_success, po.migrations);

	/* unregistered: a second sweep leaves every block alone */
	calls = po.migrate_calls;
	po.delay_us = 0;
	mm_compact_all(pool);
	CU_ASSERT_EQUAL(po.migrate_calls, calls);
	CU_ASSERT_EQUAL(atomic_load(&po.calls_after_unregister), 0);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	CU_ASSERT_EQUAL(po.corrupted, 0);
	CU_ASSERT_EQUAL(po.unknown, 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * mm_frames_pinned answers for a scattered range at once: a frame is
 * pinned when the block over it is (a tail of a pinned block too), free
 * and cached frames count as unallocated, and a frame past the pool
 * fails the whole call.
 */
static void test_frames_pinned(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;
	long a, b, c, x, y;
	uint64_t cached = 0;
	size_t unalloc = 99;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	a = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, TEST_OWNER);
	b = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, TEST_OWNER);
	c = mm_alloc(pool, NULL, 2, MIGRATE_MOVABLE, TEST_OWNER);
	x = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, TEST_OWNER);
	/* a refill caches a batch, of which y is handed out */
	y = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, TEST_OWNER);
	CU_ASSERT_FATAL(a >= 0 && b >= 0 && c >= 0 && x >= 0 && y >= 0);
	while (cached < mm_pool_frames(pool) &&
	       frame_state(pool, cached) != MM_FRAME_PCP)
		cached++;
	CU_ASSERT_FATAL(cached < mm_pool_frames(pool));
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)a), 0);
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)a), 0);
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)c), 0);

	{
		const uint32_t range[] = {
			(uint32_t)b, (uint32_t)c + 3, (uint32_t)x, (uint32_t)a,
			(uint32_t)y, (uint32_t)cached, (uint32_t)c,
		};
		const size_t n = sizeof(range) / sizeof(range[0]);
		uint32_t bad[] = { (uint32_t)a, (uint32_t)mm_pool_frames(pool) };

		/* pinned: a (twice pinned, once counted), c and its tail */
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, range, n, &unalloc), 3);
		CU_ASSERT_EQUAL(unalloc, 2);	/* x freed, one cached */
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, range, n, NULL), 3);
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, range, 1, NULL), 0);
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, range, 0, &unalloc), 0);
		CU_ASSERT_EQUAL(unalloc, 0);

		unalloc = 99;
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, bad, 2, &unalloc), -EINVAL);
		CU_ASSERT_EQUAL(unalloc, 99);
		bad[1] = UINT32_MAX;
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, bad, 2, NULL), -EINVAL);

		CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)c), 0);
		CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)a), 0);
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, range, n, NULL), 1);
		CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)a), 0);
		CU_ASSERT_EQUAL(mm_frames_pinned(pool, range, n, &unalloc), 0);
		CU_ASSERT_EQUAL(unalloc, 2);
	}

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)c), 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)y), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * mm_free_owned: a block of another owner stays, the owner's own goes and
 * its order comes back (a service counts what each client holds by it).
 */
static void test_free_owned(void)
{
	struct mm_pool *pool = pool_new(4, true);
	long b;

	CU_ASSERT_FATAL(pool != NULL);
	b = mm_alloc(pool, NULL, 3, MIGRATE_MOVABLE, 7);
	CU_ASSERT_FATAL(b >= 0);
	CU_ASSERT_EQUAL(mm_free_owned(pool, (uint64_t)b, 8), -EPERM);
	CU_ASSERT_EQUAL(mm_owner_pages(pool, 7), 8);
	CU_ASSERT_EQUAL(mm_free_owned(pool, (uint64_t)b, 7), 3);
	CU_ASSERT_EQUAL(mm_owner_pages(pool, 7), 0);
	CU_ASSERT_EQUAL(mm_free_owned(pool, (uint64_t)b, 7), -EALREADY);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/* Split, pin and unpin for one owner: another's block is refused whole. */
static void test_owned_ops(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_frame_info fi;
	long b;

	CU_ASSERT_FATAL(pool != NULL);
	b = mm_alloc(pool, NULL, 3, MIGRATE_MOVABLE, 7);
	CU_ASSERT_FATAL(b >= 0);
	for (int op = MM_OWNED_SPLIT; op < MM_OWNED_OPS; op++)
		CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 8, op), -EPERM);
	CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)b, &fi), 0);
	CU_ASSERT(fi.order == 3 && fi.pins == 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 7, MM_OWNED_PIN), 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 7, MM_OWNED_SPLIT), -EBUSY);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 7, MM_OWNED_UNPIN), 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 7, MM_OWNED_SPLIT), 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b + 1, 7, MM_OWNED_PIN), 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b + 1, 7, MM_OWNED_UNPIN), 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, 1ULL << 40, 7, MM_OWNED_PIN), -EINVAL);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 7, MM_OWNED_OPS), -EINVAL);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b + i), 0);
	CU_ASSERT_EQUAL(mm_owned_op(pool, (uint64_t)b, 7, MM_OWNED_PIN), -EINVAL);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

int register_owner_suite(void)
{
	static const struct suite_test tests[] = {
		{ "register ids", test_register_ids },
		{ "LRU membership", test_lru_membership },
		{ "touch and shrink", test_touch_and_shrink },
		{ "frames pinned", test_frames_pinned },
		{ "shrink type mask", test_shrink_typemask },
		{ "shrink, reclaim fails", test_shrink_reclaim_fails },
		{ "pin rules", test_pin_rules },
		{ "shrink skips pinned", test_shrink_skips_pinned },
		{ "free inside reclaim, -EBUSY", test_free_inside_reclaim_fail },
		{ "free inside reclaim, 0", test_free_inside_reclaim_ok },
		{ "unregistered blocks stay", test_unregistered_blocks_stay },
		{ "unregister during compaction", test_unregister_during_compaction },
		{ "free by its owner only", test_free_owned },
		{ "owned split, pin and unpin", test_owned_ops },
		{ "a slot used again: the stale id reaches no one", test_reused_slot_stale_id },
	};

	return SUITE("owner", tests);
}
