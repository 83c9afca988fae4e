// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's host memory (mm/hostmem.c): pageblocks take host memory when
 * first used, become host huge pages, and go back to the host whole when
 * they stay free. What the host holds is read from the kernel (the memfd's
 * st_blocks, /proc/self/smaps), never from the allocator's own counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

#define PB_BYTES	MM_PAGEBLOCK_SIZE

/* The kernel's count of the pool's host memory. */
static int64_t host_bytes(struct mm_pool *pool)
{
	struct stat st;

	if (fstat(mm_pool_fd(pool), &st) < 0)
		return -1;
	return (int64_t)st.st_blocks * 512;
}

static struct mm_pool *pool_host(size_t mib, bool huge)
{
	struct mm_pool_config cfg = { .size = mib * MIB, .grouping = true,
				      .host_huge = huge };
	struct mm_pool *pool = NULL;

	if (mm_pool_create(&cfg, &pool))
		return NULL;
	return pool;
}

static uint8_t *frame_ptr(struct mm_pool *pool, uint64_t frame)
{
	return mm_pool_base(pool) + (frame << MM_PAGE_SHIFT);
}

static void fill(struct mm_pool *pool, uint64_t frame, uint64_t pages, uint8_t v)
{
	memset(frame_ptr(pool, frame), v, pages << MM_PAGE_SHIFT);
}

/* Every byte of the @pages frames at @frame still @v. */
static bool holds(struct mm_pool *pool, uint64_t frame, uint64_t pages, uint8_t v)
{
	const uint8_t *p = frame_ptr(pool, frame);

	for (uint64_t i = 0; i < pages << MM_PAGE_SHIFT; i++)
		if (p[i] != v)
			return false;
	return true;
}

/*
 * One 2 MiB-aligned mapping of pageblock @pb, touched once: the kernel
 * maps a huge pool block by a PMD at once (DESIGN.md), which smaps shows.
 */
static uint8_t *map_block_aligned(struct mm_pool *pool, uint64_t pb, uint8_t **res)
{
	uint8_t *va = mmap(NULL, 2 * PB_BYTES, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *win;

	*res = va;
	if (va == MAP_FAILED)
		return NULL;
	win = (uint8_t *)(((uintptr_t)va + PB_BYTES - 1) & ~(uintptr_t)(PB_BYTES - 1));
	if (mmap(win, PB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 mm_pool_fd(pool), (off_t)(pb * PB_BYTES)) == MAP_FAILED)
		return NULL;
	(void)*(volatile uint8_t *)win;
	return win;
}

/* kB mapped by PMDs in /proc/self/smaps over [@va, @va + @len). */
static long smaps_pmd_kb(const uint8_t *va, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kb = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e, v;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &s, &e) == 2)
			in = s < (uintptr_t)va + len && e > (uintptr_t)va;
		else if (in && sscanf(line, "ShmemPmdMapped: %" SCNu64 " kB", &v) == 1)
			kb += (long)v;
	}
	fclose(f);
	return kb;
}

static void test_pool_starts_empty(void)
{
	struct mm_pool *pool = pool_host(64, false);
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(host_bytes(pool), 0);
	CU_ASSERT_EQUAL(mm_pool_host_bytes(pool), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.host_pageblocks, 0);
	CU_ASSERT_EQUAL(st.host_bytes, 0);
	/* the pool's own view can never map a huge page by a PMD */
	CU_ASSERT_NOT_EQUAL(((uintptr_t)mm_pool_base(pool)) % PB_BYTES, 0);
	mm_pool_destroy(pool);
}

/*
 * Two 2 MiB blocks written, one freed: giving back returns exactly that
 * pageblock to the host, and the other keeps its data.
 */
static void test_release_whole_free_pageblock(void)
{
	struct mm_pool *pool = pool_host(8, false);
	struct mm_stats st;
	long a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, 0);
	b = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	fill(pool, (uint64_t)a, MM_PAGEBLOCK_PAGES, 0xa5);
	fill(pool, (uint64_t)b, MM_PAGEBLOCK_PAGES, 0x5a);
	CU_ASSERT_EQUAL(host_bytes(pool), 2 * PB_BYTES);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.host_pageblocks, 2);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), 0);
	CU_ASSERT_EQUAL(mm_release_free(pool), 1);
	CU_ASSERT_EQUAL(host_bytes(pool), PB_BYTES);
	CU_ASSERT(holds(pool, (uint64_t)b, MM_PAGEBLOCK_PAGES, 0x5a));
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.host_pageblocks, 1);
	CU_ASSERT_EQUAL(st.counters.host_released, 1);
	ASSERT_STATS_CONSISTENT(&st);

	/* a second pass has nothing left to give: the freed block is unbacked */
	CU_ASSERT_EQUAL(mm_release_free(pool), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)b), 0);
	CU_ASSERT_EQUAL(mm_release_free(pool), 1);
	CU_ASSERT_EQUAL(host_bytes(pool), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * Grouping's promise: a pageblock with one frame still in use is never
 * given back, whatever else in it is free; once that frame goes, it is.
 */
static void test_partly_used_pageblock_kept(void)
{
	struct mm_pool *pool = pool_host(2, false);
	long frames[MM_PAGEBLOCK_PAGES];

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (unsigned int i = 0; i < MM_PAGEBLOCK_PAGES; i++) {
		frames[i] = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
		CU_ASSERT_FATAL(frames[i] >= 0);
		fill(pool, (uint64_t)frames[i], 1, (uint8_t)(i | 1));
	}
	for (unsigned int i = 1; i < MM_PAGEBLOCK_PAGES; i++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)frames[i]), 0);
	CU_ASSERT_EQUAL(mm_release_free(pool), 0);
	CU_ASSERT_EQUAL(host_bytes(pool), PB_BYTES);
	CU_ASSERT(holds(pool, (uint64_t)frames[0], 1, 1));

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)frames[0]), 0);
	CU_ASSERT_EQUAL(mm_release_free(pool), 1);
	CU_ASSERT_EQUAL(host_bytes(pool), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * The reporter gives a block back only once it stayed free from one pass
 * to the next; waiting is bounded by passes, not by a speed.
 */
static void test_reporter_gives_back(void)
{
	struct mm_pool *pool = pool_host(16, false);
	struct mm_stats st;
	long a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	a = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER + 1, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(a >= 0);
	fill(pool, (uint64_t)a, 2 * MM_PAGEBLOCK_PAGES, 0x11);
	CU_ASSERT_EQUAL(host_bytes(pool), 2 * PB_BYTES);
	CU_ASSERT_EQUAL_FATAL(mm_page_reporting_start(pool, 20), 0);
	CU_ASSERT_EQUAL(mm_page_reporting_start(pool, 20), -EINVAL);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)a), 0);
	for (int i = 0; i < 2000 && host_bytes(pool) > 0; i++)
		usleep(5000);
	CU_ASSERT_EQUAL(host_bytes(pool), 0);
	mm_page_reporting_stop(pool);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.host_released, 2);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * host_huge: the first order-0 allocation in a pageblock makes it one host
 * huge page. The kernel says so: a 2 MiB mapping of it is PMD-mapped at
 * first touch, with no copy.
 * Given back, it leaves the host whole.
 */
static void test_first_use_makes_huge(void)
{
	struct mm_pool *pool = pool_host(8, true);
	struct mm_stats st;
	long f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	f = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
	CU_ASSERT_FATAL(f >= 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.host_huge, 1);
	CU_ASSERT_EQUAL(st.counters.host_huge_fail, 0);
	CU_ASSERT_EQUAL(st.host_huge_pageblocks, 1);
	CU_ASSERT(mm_pageblock_host_huge(pool, (uint64_t)f));
	CU_ASSERT_EQUAL(host_bytes(pool), PB_BYTES);
	fill(pool, (uint64_t)f, 1, 0x77);
	/* the kernel agrees: a 2 MiB mapping of the block is one PMD at first touch */
	{
		uint8_t *res, *win = map_block_aligned(pool, (uint64_t)f / MM_PAGEBLOCK_PAGES, &res);

		CU_ASSERT_PTR_NOT_NULL_FATAL(win);
		CU_ASSERT_EQUAL(smaps_pmd_kb(win, PB_BYTES), PB_BYTES >> 10);
		CU_ASSERT_EQUAL(win[(f % MM_PAGEBLOCK_PAGES) << MM_PAGE_SHIFT], 0x77);
		munmap(res, 2 * PB_BYTES);
	}
	/* and the pool's own view never maps it by a PMD */
	CU_ASSERT_EQUAL(smaps_pmd_kb(mm_pool_base(pool), mm_pool_frames(pool) << MM_PAGE_SHIFT), 0);
	/* a second frame of the same block costs nothing more */
	CU_ASSERT(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0) >= 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.host_huge, 1);
	CU_ASSERT(holds(pool, (uint64_t)f, 1, 0x77));
	mm_pool_destroy(pool);
}

static void test_populate_then_release(void)
{
	struct mm_pool *pool = pool_host(8, true);
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_pool_populate(pool, 3), 3);
	CU_ASSERT_EQUAL(host_bytes(pool), 3 * PB_BYTES);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.host_huge_pageblocks, 3);
	CU_ASSERT_EQUAL(st.free_pageblocks, 4);	/* populated, still free */
	/* only the one unbacked pageblock is left to populate */
	CU_ASSERT_EQUAL(mm_pool_populate(pool, 8), 1);
	CU_ASSERT_EQUAL(host_bytes(pool), 4 * PB_BYTES);
	/* a populated block serves allocations without being made huge again */
	CU_ASSERT(mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0) >= 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.host_huge, 4);
	CU_ASSERT_EQUAL(mm_release_free(pool), 3);
	CU_ASSERT_EQUAL(host_bytes(pool), PB_BYTES);
	mm_pool_destroy(pool);
}

/*
 * Threads churn order-0 frames, each checking its frames' contents before
 * freeing them, while the reporter punches every free pageblock it finds
 * as fast as it can: a punch that hit an allocated frame shows as a frame
 * of zeros.
 */
struct churn {
	struct mm_pool *pool;
	uint64_t seed;
	unsigned int bad;
};

#define CHURN_LIVE	600
#define CHURN_ROUNDS	40

static void *churn_fn(void *arg)
{
	struct churn *c = arg;
	struct mm_pcp *pcp;
	long live[CHURN_LIVE];

	if (mm_pcp_create(c->pool, &pcp))
		return NULL;
	for (int r = 0; r < CHURN_ROUNDS; r++) {
		unsigned int n = 0;
		uint8_t v = (uint8_t)(rng_next(&c->seed) | 1);

		while (n < CHURN_LIVE) {
			live[n] = mm_alloc(c->pool, pcp, 0, MIGRATE_MOVABLE, 0);
			if (live[n] < 0)
				break;
			fill(c->pool, (uint64_t)live[n++], 1, v);
		}
		for (unsigned int i = 0; i < n; i++) {
			if (!holds(c->pool, (uint64_t)live[i], 1, v))
				c->bad++;
			if (mm_free(c->pool, pcp, (uint64_t)live[i]))
				c->bad++;
		}
		mm_drain_all(c->pool);
	}
	mm_pcp_destroy(pcp);
	return NULL;
}

static void test_reporting_never_punches_used_frames(void)
{
	struct mm_pool *pool = pool_host(16, false);
	struct churn c[2] = { { pool, 0x1234, 0 }, { pool, 0x9876, 0 } };
	pthread_t t[2];
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_page_reporting_start(pool, 1), 0);
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, churn_fn, &c[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(c[i].bad, 0);
	}
	mm_page_reporting_stop(pool);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT(st.counters.host_released > 0);
	CU_ASSERT_EQUAL(st.counters.host_release_fail, 0);
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

/*
 * A process signal must never land on mm/'s reporter thread: with SIGUSR1
 * blocked here, one sent to the process stays pending until this thread
 * takes it. Had the reporter left it unblocked, its default action would
 * have ended the test program.
 */
static void test_reporter_takes_no_signal(void)
{
	struct mm_pool *pool = pool_host(4, false);
	struct timespec ts = { .tv_sec = 10 };
	sigset_t usr1, old;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old);
	CU_ASSERT_EQUAL_FATAL(mm_page_reporting_start(pool, 10), 0);
	CU_ASSERT_EQUAL(kill(getpid(), SIGUSR1), 0);
	CU_ASSERT_EQUAL(sigtimedwait(&usr1, NULL, &ts), SIGUSR1);
	mm_page_reporting_stop(pool);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	mm_pool_destroy(pool);
}

/*
 * A metadata-only pool far larger than the host: no memfd, no view, and
 * every host-memory call does nothing, while allocation behaves as on any
 * pool (a whole pageblock taken reads zero: nothing was ever behind it).
 */
static void test_metadata_only_pool(void)
{
	struct mm_pool_config cfg = { .size = 64UL << 30, .grouping = true,
				      .metadata_only = true };
	struct mm_pool *pool = NULL;
	long frame;

	CU_ASSERT_EQUAL_FATAL(mm_pool_create(&cfg, &pool), 0);
	CU_ASSERT_EQUAL(mm_pool_fd(pool), -1);
	CU_ASSERT_PTR_NULL(mm_pool_base(pool));
	CU_ASSERT_EQUAL(mm_pool_host_bytes(pool), 0);
	CU_ASSERT_EQUAL(mm_page_reporting_start(pool, 10), -EOPNOTSUPP);
	CU_ASSERT_EQUAL(mm_pool_populate(pool, 8), 0);
	frame = mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(frame >= 0);
	CU_ASSERT(mm_pageblock_take_zeroed(pool, (uint64_t)frame));
	CU_ASSERT_FALSE(mm_pageblock_host_huge(pool, (uint64_t)frame));
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)frame), 0);
	CU_ASSERT_EQUAL(mm_release_free(pool), 0);
	mm_pool_destroy(pool);

	/* nothing to make huge */
	cfg.host_huge = true;
	CU_ASSERT_EQUAL(mm_pool_create(&cfg, &pool), -EINVAL);
}

static const struct suite_test tests[] = {
	{ "pool starts with no host memory", test_pool_starts_empty },
	{ "a whole free pageblock goes back, others keep data",
	  test_release_whole_free_pageblock },
	{ "a partly used pageblock is never given back", test_partly_used_pageblock_kept },
	{ "the reporter gives back blocks that stay free", test_reporter_gives_back },
	{ "first use makes a pageblock a host huge page", test_first_use_makes_huge },
	{ "populate ahead, then give back", test_populate_then_release },
	{ "reporting never punches a used frame", test_reporting_never_punches_used_frames },
	{ "the reporter thread takes no signal", test_reporter_takes_no_signal },
	{ "a metadata-only pool has no host memory", test_metadata_only_pool },
};

int register_hostmem_suite(void)
{
	return SUITE("hostmem", tests);
}
