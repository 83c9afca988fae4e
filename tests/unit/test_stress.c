// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads, each with its own pcp, allocate and free blocks of orders
 * 0..3 and every type on one pool. A flag per frame, set atomically on
 * allocation and cleared before the free, catches any frame handed out
 * twice. CUnit is not thread-safe: threads only count, the main thread
 * asserts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

#define STRESS_THREADS		2
#define STRESS_OPS		200000
#define STRESS_MAX_HELD		4096
#define STRESS_DRAIN_EVERY	8192

struct stress_block {
	uint64_t frame;
	unsigned int order;
};

struct stress_thread {
	struct mm_pool *pool;
	atomic_uchar *taken;
	uint64_t frames;
	unsigned int id;
	uint64_t seed;
	int pcp_rc;

	uint64_t allocs, frees, enomem;
	uint64_t overlaps, bad_blocks, bad_info, alloc_errors, free_errors;

	struct stress_block held[STRESS_MAX_HELD];
	size_t nr;
};

static void stress_take(struct stress_thread *t, long r, unsigned int order)
{
	uint64_t size = 1ULL << order;

	if (((uint64_t)r & (size - 1)) || (uint64_t)r + size > t->frames) {
		t->bad_blocks++;
		return;
	}
	for (uint64_t f = (uint64_t)r; f < (uint64_t)r + size; f++)
		if (atomic_exchange(&t->taken[f], 1))
			t->overlaps++;
	t->held[t->nr].frame = (uint64_t)r;
	t->held[t->nr].order = order;
	t->nr++;
	t->allocs++;
}

static void stress_release(struct stress_thread *t, struct mm_pcp *pcp,
			   size_t i)
{
	struct stress_block b = t->held[i];
	struct mm_frame_info fi;

	if (mm_frame_info(t->pool, b.frame, &fi) || fi.state != MM_FRAME_ALLOC ||
	    fi.order != b.order || fi.owner != t->id)
		t->bad_info++;
	for (uint64_t f = b.frame; f < b.frame + (1ULL << b.order); f++)
		if (!atomic_exchange(&t->taken[f], 0))
			t->overlaps++;
	if (mm_free(t->pool, pcp, b.frame))
		t->free_errors++;
	t->held[i] = t->held[--t->nr];
	t->frees++;
}

static void *stress_main(void *arg)
{
	struct stress_thread *t = arg;
	struct mm_pcp *pcp = NULL;

	t->pcp_rc = mm_pcp_create(t->pool, &pcp);
	if (t->pcp_rc)
		return NULL;
	for (unsigned int op = 0; op < STRESS_OPS; op++) {
		uint64_t rnd = rng_next(&t->seed);
		bool want_alloc = t->nr == 0 ||
			(t->nr < STRESS_MAX_HELD && rnd % 100 < 55);

		if (t->id == 1 && op % STRESS_DRAIN_EVERY == 0)
			mm_drain_all(t->pool);
		if (want_alloc) {
			unsigned int order = (rnd >> 8) & 1 ? 0 : (rnd >> 9) & 3;
			enum mm_migratetype mt =
				(enum mm_migratetype)((rnd >> 16) % MIGRATE_TYPES);
			long r = mm_alloc(t->pool, pcp, order, mt, t->id);

			if (r >= 0) {
				stress_take(t, r, order);
				continue;
			}
			if (r == -ENOMEM)
				t->enomem++;
			else
				t->alloc_errors++;
			if (!t->nr)
				continue;
		}
		stress_release(t, pcp, (rnd >> 32) % t->nr);
	}
	while (t->nr)
		stress_release(t, pcp, t->nr - 1);
	mm_pcp_destroy(pcp);
	return NULL;
}

static void test_two_threads(void)
{
	struct mm_pool *pool = pool_new(64, true);
	struct stress_thread *threads;
	pthread_t tids[STRESS_THREADS];
	uint64_t allocs = 0, frees = 0, counted = 0;
	atomic_uchar *taken;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	taken = calloc(mm_pool_frames(pool), sizeof(*taken));
	threads = calloc(STRESS_THREADS, sizeof(*threads));
	CU_ASSERT_FATAL(taken && threads);

	for (unsigned int i = 0; i < STRESS_THREADS; i++) {
		threads[i].pool = pool;
		threads[i].taken = taken;
		threads[i].frames = mm_pool_frames(pool);
		threads[i].id = i + 1;
		threads[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tids[i], NULL, stress_main,
						     &threads[i]), 0);
	}
	for (unsigned int i = 0; i < STRESS_THREADS; i++)
		CU_ASSERT_EQUAL(pthread_join(tids[i], NULL), 0);

	for (unsigned int i = 0; i < STRESS_THREADS; i++) {
		struct stress_thread *t = &threads[i];

		CU_ASSERT_EQUAL(t->pcp_rc, 0);
		CU_ASSERT_EQUAL(t->overlaps, 0);
		CU_ASSERT_EQUAL(t->bad_blocks, 0);
		CU_ASSERT_EQUAL(t->bad_info, 0);
		CU_ASSERT_EQUAL(t->alloc_errors, 0);
		CU_ASSERT_EQUAL(t->free_errors, 0);
		CU_ASSERT(t->allocs > STRESS_OPS / 4);
		CU_ASSERT_EQUAL(t->allocs, t->frees);
		allocs += t->allocs;
		frees += t->frees;
	}
	for (uint64_t f = 0; f < mm_pool_frames(pool); f++)
		if (atomic_load(&taken[f])) {
			CU_FAIL("a frame is still marked taken");
			break;
		}

	mm_drain_all(pool);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		counted += st.counters.alloc[o];
	CU_ASSERT_EQUAL(counted, allocs);
	CU_ASSERT_EQUAL(st.counters.frees, frees);
	CU_ASSERT_EQUAL(st.counters.double_frees, 0);
	CU_ASSERT_EQUAL(st.counters.bad_frees, 0);

	free(threads);
	free(taken);
	mm_pool_destroy(pool);
}

int register_stress_suite(void)
{
	static const struct suite_test tests[] = {
		{ "two threads, own pcps", test_two_threads },
	};

	return SUITE("stress", tests);
}
