// SPDX-License-Identifier: GPL-2.0
/*
 * mm/ under fault injection (mm.h, GPMM_FAULT_INJECT): frame allocations
 * and the host calls a pool is made of fail at chosen or random points,
 * and afterwards the pool is whole, its statistics add up, and nothing of
 * the host's (descriptors, mappings) is left behind.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "mm/mm.h"
#include "tests/suite.h"
#include "tests/unit/helpers.h"

#define LIVE		512

static void arm(const char *spec)
{
	char err[256];

	CU_ASSERT_EQUAL_FATAL(mm_fault_configure(spec, err, sizeof(err)), 0);
}

static unsigned int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned int n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static unsigned int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The Nth allocation fails, and only it: the one after it is served. */
static void test_nth_frame(void)
{
	struct mm_pool *pool = pool_new(16, true);
	long f[6];

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	arm("frame:3");
	for (int i = 0; i < 6; i++)
		f[i] = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, MM_NO_OWNER);
	arm("");
	CU_ASSERT_EQUAL(f[2], -ENOMEM);
	for (int i = 0; i < 6; i++) {
		if (i == 2)
			continue;
		CU_ASSERT(f[i] >= 0);
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f[i]), 0);
	}
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * One allocation in ten fails at random while a workload of every order
 * and type churns through a per-thread list: each failure is -ENOMEM and
 * changes nothing; at the end the pool is whole and its counts agree.
 */
static void test_random_frames(void)
{
	struct mm_pool *pool = pool_new(64, true);
	struct mm_pcp *pcp;
	struct mm_stats st;
	long live[LIVE];
	unsigned int failed = 0, served = 0;
	uint64_t x = 12345;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	for (int i = 0; i < LIVE; i++)
		live[i] = -1;
	arm("frame:rand:100,seed:7");
	for (int round = 0; round < 20000; round++) {
		unsigned int slot, order;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		slot = (unsigned int)(x >> 33) % LIVE;
		order = (unsigned int)(x >> 20) % 4 ? 0 : (unsigned int)(x >> 24) % 6;
		if (live[slot] >= 0) {
			CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)live[slot]), 0);
			live[slot] = -1;
			continue;
		}
		live[slot] = mm_alloc(pool, pcp, order, (enum mm_migratetype)((x >> 40) % 3),
				      MM_NO_OWNER);
		if (live[slot] == -ENOMEM)
			failed++;
		else
			served += live[slot] >= 0;
		CU_ASSERT(live[slot] >= 0 || live[slot] == -ENOMEM);
	}
	arm("");
	CU_ASSERT(failed > 100);
	CU_ASSERT(served > 1000);
	for (int i = 0; i < LIVE; i++)
		if (live[i] >= 0)
			CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)live[i]), 0);
	mm_pcp_destroy(pcp);
	CU_ASSERT_EQUAL(mm_stats(pool, &st), 0);
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * A leaked mapping stays; other threads of the process come and go: a
 * thread of an earlier suite still exiting unmaps its stack after its join
 * returned (seen once in ~35 runs). So the count must come back to at most
 * @maps, and may take a moment.
 */
static bool maps_settle_at_most(unsigned int maps)
{
	for (int i = 0; i < 100; i++) {
		if (count_lines("/proc/self/maps") <= maps)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Pool creation with each of its host calls failing in turn (memfd, every
 * mmap): a clean error and no descriptor or mapping left; and a pool made
 * huge page by huge page with the madvise failing still serves.
 */
static void test_pool_create_faults(void)
{
	static const char *const sites[] = { "memfd", "mmap" };
	struct mm_pool_config cfg = { .size = 8 << 20, .grouping = true, .host_huge = true };
	struct mm_pool *warm = NULL;
	unsigned int fds, maps;

	/*
	 * One clean pool first: what malloc (and a sanitizer's allocator)
	 * maps the first time a pool's sizes are asked for stays mapped, and
	 * is no leak of the pool's.
	 */
	CU_ASSERT_FATAL(mm_pool_create(&cfg, &warm) == 0);
	mm_pool_destroy(warm);
	fds = count_fds();
	maps = count_lines("/proc/self/maps");

	for (size_t s = 0; s < sizeof(sites) / sizeof(sites[0]); s++) {
		for (int n = 1; n <= 4; n++) {
			struct mm_pool *pool = NULL;
			char spec[32];
			int ret;

			snprintf(spec, sizeof(spec), "%s:%d", sites[s], n);
			arm(spec);
			ret = mm_pool_create(&cfg, &pool);
			if (!ret) {
				long f = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE,
						  MM_NO_OWNER);

				CU_ASSERT(f >= 0 || f == -ENOMEM);
				if (f >= 0)
					CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f), 0);
				arm("");
				ASSERT_POOL_WHOLE(pool);
				mm_pool_destroy(pool);
			} else {
				CU_ASSERT(ret < 0);
			}
			arm("");
			CU_ASSERT_EQUAL(count_fds(), fds);
			CU_ASSERT(maps_settle_at_most(maps));
		}
	}
}

static void test_bad_spec(void)
{
	char err[256] = "";

	CU_ASSERT_EQUAL(mm_fault_configure("nosuch:1", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "memfd mmap madvise kvm frame"));
	CU_ASSERT_EQUAL(mm_fault_configure("frame:0", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(mm_fault_configure("frame:rand:1001", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(mm_fault_configure("frame", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(mm_fault_configure("", err, sizeof(err)), 0);
	CU_ASSERT_FALSE(mm_fault_hit(MM_FAULT_FRAME));
}

static const struct suite_test tests[] = {
	{ "the Nth frame allocation fails alone", test_nth_frame },
	{ "random frame failures leave the pool whole", test_random_frames },
	{ "pool creation under host call failures", test_pool_create_faults },
	{ "bad fault specs are refused", test_bad_spec },
};

int register_fault_suite(void)
{
	return SUITE("fault", tests);
}
