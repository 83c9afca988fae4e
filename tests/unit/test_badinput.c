// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: every rejected call returns the documented errno, is counted
 * where the API says so, and leaves the pool consistent.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

static struct mm_counters counters(struct mm_pool *pool)
{
	struct mm_stats st = { 0 };

	pool_snapshot(pool, &st);
	return st.counters;
}

static void test_bad_order(void)
{
	const unsigned int orders[] = { MM_MAX_ORDER, MM_MAX_ORDER + 1, 64,
					UINT_MAX };
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		CU_ASSERT_EQUAL(mm_alloc(pool, NULL, orders[i],
					 MIGRATE_MOVABLE, 0), -EINVAL);
		CU_ASSERT_EQUAL(mm_alloc(pool, pcp, orders[i],
					 MIGRATE_UNMOVABLE, 0), -EINVAL);
	}
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_bad_migratetype(void)
{
	const int types[] = { MIGRATE_TYPES, MIGRATE_TYPES + 1, -1, INT_MAX };
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		enum mm_migratetype mt = (enum mm_migratetype)types[i];

		CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 0, mt, 0), -EINVAL);
		CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 5, mt, 0), -EINVAL);
		CU_ASSERT_EQUAL(mm_alloc(pool, pcp, 0, mt, 0), -EINVAL);
	}
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_free_out_of_range(void)
{
	struct mm_pool *pool = pool_new(4, true);
	const uint64_t frames[] = { 1024, 1025, 1ULL << 32, UINT64_MAX };
	struct mm_pcp *pcp = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		CU_ASSERT_EQUAL(mm_free(pool, NULL, frames[i]), -EINVAL);
		CU_ASSERT_EQUAL(mm_free(pool, pcp, frames[i]), -EINVAL);
	}
	CU_ASSERT_EQUAL(counters(pool).bad_frees, 8);
	CU_ASSERT_EQUAL(counters(pool).double_frees, 0);
	CU_ASSERT_EQUAL(counters(pool).frees, 0);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_free_tail_frame(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;
	struct mm_frame_info fi;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	x = mm_alloc(pool, NULL, 2, MIGRATE_MOVABLE, TEST_OWNER);
	CU_ASSERT_FATAL(x >= 0);
	for (uint64_t t = 1; t < 4; t++) {
		CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)x + t),
				MM_FRAME_TAIL);
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x + t), -EINVAL);
	}
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x + 1), -EINVAL);
	CU_ASSERT_EQUAL(counters(pool).bad_frees, 4);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), 0);
	CU_ASSERT_EQUAL(mm_frame_info(pool, (uint64_t)x, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(fi.order, 2);
	CU_ASSERT_EQUAL(fi.owner, TEST_OWNER);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * A frame that was never handed out sits inside a free block: whether the
 * allocator calls that "not a head" or "already free" is its choice, but
 * it must refuse, count it once, and change nothing.
 */
static void test_free_never_allocated(void)
{
	struct mm_pool *pool = pool_new(4, true);
	const uint64_t frames[] = { 0, 5, 512, 1023 };
	uint64_t before = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		struct mm_counters c;
		int rc = mm_free(pool, NULL, frames[i]);

		CU_ASSERT(rc == -EINVAL || rc == -EALREADY);
		c = counters(pool);
		CU_ASSERT_EQUAL(c.bad_frees + c.double_frees, before + 1);
		before = c.bad_frees + c.double_frees;
		CU_ASSERT_EQUAL(c.frees, 0);
	}
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_double_free_order0(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_stats st;
	long a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
	b = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), -EALREADY);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.counters.double_frees, 1);
	CU_ASSERT_EQUAL(st.counters.frees, 1);
	CU_ASSERT_EQUAL(st.free_pages, 1023);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)b), MM_FRAME_ALLOC);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), -EALREADY);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), -EALREADY);
	CU_ASSERT_EQUAL(counters(pool).double_frees, 3);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_double_free_via_pcp(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct mm_pcp *pcp = NULL;
	unsigned int count;
	long x;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	x = mm_alloc(pool, pcp, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x), 0);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)x), MM_FRAME_PCP);
	count = mm_pcp_count(pcp);

	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)x), -EALREADY);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), -EALREADY);
	CU_ASSERT_EQUAL(mm_pcp_count(pcp), count);
	CU_ASSERT_EQUAL(frame_state(pool, (uint64_t)x), MM_FRAME_PCP);
	CU_ASSERT_EQUAL(counters(pool).double_frees, 2);

	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_double_free_after_merge(void)
{
	struct mm_pool *pool = pool_new(4, true);
	long x, y;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	x = mm_alloc(pool, NULL, 3, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(x >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), 0);
	ASSERT_POOL_WHOLE(pool);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)x), -EALREADY);
	CU_ASSERT_EQUAL(counters(pool).double_frees, 1);
	ASSERT_POOL_WHOLE(pool);

	y = mm_alloc(pool, NULL, 10, MIGRATE_MOVABLE, 0);
	CU_ASSERT_EQUAL(y, 0);
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0), -ENOMEM);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, 0), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/* Bad frees in the middle of real traffic must not damage the pool. */
static void test_pool_consistent_after_bad_frees(void)
{
	struct mm_pool *pool = pool_new(8, true);
	uint64_t seed = 0xbadf00d, held[256];
	struct mm_pcp *pcp = NULL;
	size_t nr = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	for (int i = 0; i < 3000; i++) {
		uint64_t rnd = rng_next(&seed);
		unsigned int order = (rnd >> 8) % 4;
		enum mm_migratetype mt =
			(enum mm_migratetype)((rnd >> 12) % MIGRATE_TYPES);

		if (nr < 256 && (rnd & 1)) {
			long r = mm_alloc(pool, pcp, order, mt, 0);

			CU_ASSERT(r >= 0 || r == -ENOMEM);
			if (r >= 0)
				held[nr++] = (uint64_t)r;
		} else if (nr) {
			size_t j = (rnd >> 20) % nr;
			uint64_t f = held[j];
			struct mm_frame_info fi;

			CU_ASSERT_EQUAL_FATAL(mm_frame_info(pool, f, &fi), 0);
			if (fi.order > 0)
				CU_ASSERT_EQUAL(mm_free(pool, pcp, f + 1),
						-EINVAL);
			CU_ASSERT_EQUAL(mm_free(pool, pcp, f), 0);
			CU_ASSERT_EQUAL(mm_free(pool, pcp, f), -EALREADY);
			held[j] = held[--nr];
		}
	}
	while (nr)
		CU_ASSERT_EQUAL(mm_free(pool, pcp, held[--nr]), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void check_pool_size_rejected(size_t size)
{
	struct mm_pool_config cfg = { .size = size, .grouping = true };
	struct mm_pool *pool = NULL;
	int rc = mm_pool_create(&cfg, &pool);

	CU_ASSERT_EQUAL(rc, -EINVAL);
	if (rc == 0)
		mm_pool_destroy(pool);
}

static void test_pool_size_not_pageblock_multiple(void)
{
	check_pool_size_rejected(1 * MIB);
	check_pool_size_rejected(3 * MIB);
	check_pool_size_rejected(2 * MIB + MM_PAGE_SIZE);
	check_pool_size_rejected(MM_PAGE_SIZE);
	check_pool_size_rejected(1);
}

static void test_pool_size_beyond_2_32_frames(void)
{
	check_pool_size_rejected(((1ULL << 32) + MM_PAGEBLOCK_PAGES) *
				 MM_PAGE_SIZE);
}

/* The size limit is per process: try it in a child. */
static void test_ftruncate_error_propagated(void)
{
	pid_t pid = fork();
	int status = 0;

	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct rlimit lim = { .rlim_cur = MIB, .rlim_max = MIB };
		struct mm_pool_config cfg = { .size = 4 * MIB };
		struct mm_pool *pool = NULL;
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim))
			_exit(100);
		rc = mm_pool_create(&cfg, &pool);
		if (rc == 0) {
			mm_pool_destroy(pool);
			_exit(101);
		}
		_exit(-rc & 0xff);
	}
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status));
	CU_ASSERT_EQUAL(WEXITSTATUS(status), EFBIG);
}

static void test_frame_info_out_of_range(void)
{
	struct mm_pool *pool = pool_new(2, true);
	struct mm_frame_info fi;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_frame_info(pool, 511, &fi), 0);
	CU_ASSERT_EQUAL(mm_frame_info(pool, 512, &fi), -EINVAL);
	CU_ASSERT_EQUAL(mm_frame_info(pool, UINT64_MAX, &fi), -EINVAL);
	mm_pool_destroy(pool);
}

int register_badinput_suite(void)
{
	static const struct suite_test tests[] = {
		{ "order >= MM_MAX_ORDER", test_bad_order },
		{ "bad migratetype", test_bad_migratetype },
		{ "free out of range", test_free_out_of_range },
		{ "free a tail frame", test_free_tail_frame },
		{ "free a never-allocated frame", test_free_never_allocated },
		{ "double free, order 0", test_double_free_order0 },
		{ "double free through a pcp", test_double_free_via_pcp },
		{ "double free after merging", test_double_free_after_merge },
		{ "pool consistent after bad frees",
		  test_pool_consistent_after_bad_frees },
		{ "pool size not a multiple of 2 MiB",
		  test_pool_size_not_pageblock_multiple },
		{ "pool of more than 2^32 frames",
		  test_pool_size_beyond_2_32_frames },
		{ "ftruncate error propagated",
		  test_ftruncate_error_propagated },
		{ "frame info out of range", test_frame_info_out_of_range },
	};
	return SUITE("badinput", tests);
}
