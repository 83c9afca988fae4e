// SPDX-License-Identifier: GPL-2.0
/*
 * A file per pageblock (mm/pbfile.c): the file of a pageblock goes to its
 * owner only, is the memory the pool's view shows, and never serves
 * anyone after the pageblock was wholly free: the old file is truncated
 * (what a process that kept it can reach is nothing), the next taker gets
 * a new file that reads zero, and the kernel's count of the files' memory
 * goes back to zero with the frames.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

static const struct mm_owner_ops no_moves;

static struct mm_pool *files_pool(size_t mib, uint32_t *a, uint32_t *b)
{
	struct mm_pool *pool = pool_new(mib, true);

	if (!pool)
		return NULL;
	if (mm_set_owned_blocks(pool) || mm_set_pageblock_files(pool) ||
	    mm_owner_register(pool, &no_moves, NULL, a) ||
	    mm_owner_register(pool, &no_moves, NULL, b)) {
		mm_pool_destroy(pool);
		return NULL;
	}
	return pool;
}

static ino_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

static off_t size_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : st.st_size;
}

/* What the owner is handed is what the pool's view writes; nobody else gets it. */
static void test_file_reaches_owner_only(void)
{
	uint32_t a, b;
	struct mm_pool *pool = files_pool(8, &a, &b);
	uint8_t *mine;
	long fa;
	off_t off;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	fa = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, a);
	CU_ASSERT_FATAL(fa >= 0);
	CU_ASSERT_EQUAL(mm_pageblock_file(pool, (uint64_t)fa, b), -ESRCH);
	CU_ASSERT_EQUAL(mm_pageblock_file(pool, (uint64_t)fa, MM_NO_OWNER), -ESRCH);
	fd = mm_pageblock_file(pool, (uint64_t)fa, a);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(size_of(fd), MM_PAGEBLOCK_SIZE);
	CU_ASSERT_EQUAL(inode_of(fd), inode_of(mm_frame_file(pool, (uint64_t)fa, &off)));
	CU_ASSERT_EQUAL(off, (off_t)(((uint64_t)fa % MM_PAGEBLOCK_PAGES) << MM_PAGE_SHIFT));
	mine = mmap(NULL, MM_PAGEBLOCK_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(mine != MAP_FAILED);
	memset(mm_pool_base(pool) + ((uint64_t)fa << MM_PAGE_SHIFT), 0x5a, MM_PAGE_SIZE);
	CU_ASSERT_EQUAL(mine[off], 0x5a);
	CU_ASSERT_EQUAL(mine[off + MM_PAGE_SIZE - 1], 0x5a);
	munmap(mine, MM_PAGEBLOCK_SIZE);
	close(fd);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)fa), 0);
	mm_pool_destroy(pool);
}

/*
 * A's pageblock, wholly free, is truncated under A's descriptor; B, taking
 * the same pageblock (the pool has one), gets another file, reading zero.
 */
static void test_free_pageblock_gets_fresh_file(void)
{
	uint32_t a, b;
	struct mm_pool *pool = files_pool(2, &a, &b);
	struct mm_stats st;
	long fa, fb;
	int fd_a, fd_b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	fa = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, a);
	CU_ASSERT_FATAL(fa >= 0);
	fd_a = mm_pageblock_file(pool, (uint64_t)fa, a);
	CU_ASSERT_FATAL(fd_a >= 0);
	memset(mm_pool_base(pool) + ((uint64_t)fa << MM_PAGE_SHIFT), 0xa5, MM_PAGE_SIZE);
	CU_ASSERT(mm_pool_host_bytes(pool) >= (int64_t)MM_PAGE_SIZE);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)fa), 0);
	CU_ASSERT_EQUAL(size_of(fd_a), 0);
	CU_ASSERT_EQUAL(mm_pool_host_bytes(pool), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.pb_retired, 1);
	CU_ASSERT_EQUAL(st.free_pages, mm_pool_frames(pool));

	fb = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, b);
	CU_ASSERT_EQUAL_FATAL(fb, fa);
	fd_b = mm_pageblock_file(pool, (uint64_t)fb, b);
	CU_ASSERT_FATAL(fd_b >= 0);
	CU_ASSERT_NOT_EQUAL(inode_of(fd_b), inode_of(fd_a));
	CU_ASSERT_EQUAL(*(mm_pool_base(pool) + ((uint64_t)fb << MM_PAGE_SHIFT)), 0);
	CU_ASSERT_EQUAL(size_of(fd_a), 0);
	close(fd_a);
	close(fd_b);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)fb), 0);
	mm_pool_destroy(pool);
}

/* Churn of two owners, then nothing held: every frame free, no file with memory. */
static void test_churn_leaves_nothing(void)
{
	uint32_t ids[2];
	struct mm_pool *pool = files_pool(16, &ids[0], &ids[1]);
	long held[512] = { 0 };
	struct mm_stats st;
	unsigned int seed = 7;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	for (unsigned int i = 0; i < 512; i++)
		held[i] = -1;
	for (unsigned int step = 0; step < 20000; step++) {
		unsigned int i = (unsigned int)rand_r(&seed) % 512;

		if (held[i] >= 0) {
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)held[i]), 0);
			held[i] = -1;
		} else {
			held[i] = mm_alloc(pool, NULL, i % 3 ? 0 : 2, MIGRATE_MOVABLE, ids[i % 2]);
			if (held[i] >= 0)
				*(mm_pool_base(pool) + ((uint64_t)held[i] << MM_PAGE_SHIFT)) = 1;
		}
	}
	for (unsigned int i = 0; i < 512; i++)
		if (held[i] >= 0)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)held[i]), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.free_pages, mm_pool_frames(pool));
	CU_ASSERT(st.counters.pb_retired > 0);
	CU_ASSERT_EQUAL(st.counters.pb_retire_fail, 0);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(pool, ids[0]) + mm_owner_pageblocks(pool, ids[1]), 0);
	CU_ASSERT_EQUAL(mm_pool_host_bytes(pool), 0);
	ASSERT_STATS_CONSISTENT(&st);
	mm_pool_destroy(pool);
}

/*
 * A populated pool keeps its memory (a reservation): in the new files at
 * the switch, and in the fresh file of a pageblock given back, while the
 * old file is still truncated under whoever kept it.
 */
static void test_populated_pool_keeps_memory(void)
{
	struct mm_pool *pool = pool_new(4, true);
	uint32_t a;
	long f;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_pool_populate(pool, 2), 2);
	CU_ASSERT_EQUAL_FATAL(mm_set_owned_blocks(pool), 0);
	CU_ASSERT_EQUAL_FATAL(mm_set_pageblock_files(pool), 0);
	CU_ASSERT_EQUAL(mm_pool_host_bytes(pool), 4 << 20);
	CU_ASSERT_EQUAL_FATAL(mm_owner_register(pool, &no_moves, NULL, &a), 0);
	f = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, a);
	CU_ASSERT_FATAL(f >= 0);
	fd = mm_pageblock_file(pool, (uint64_t)f, a);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f), 0);
	CU_ASSERT_EQUAL(size_of(fd), 0);
	CU_ASSERT_EQUAL(mm_pool_host_bytes(pool), 4 << 20);
	close(fd);
	mm_pool_destroy(pool);
}

int register_pbfile_suite(void)
{
	static const struct suite_test tests[] = {
		{ "a pageblock's file reaches its owner only", test_file_reaches_owner_only },
		{ "a free pageblock gets a fresh file", test_free_pageblock_gets_fresh_file },
		{ "churn leaves nothing behind", test_churn_leaves_nothing },
		{ "a populated pool keeps its memory", test_populated_pool_keeps_memory },
	};

	return SUITE("pbfile", tests);
}
