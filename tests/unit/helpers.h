/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the mm/ unit suites. Tests go through mm/mm.h only;
 * the check_* helpers report failures at the caller's file and line.
 */
#ifndef GPMM_TESTS_UNIT_HELPERS_H
#define GPMM_TESTS_UNIT_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mm/mm.h"

#define MIB			(1UL << 20)
#define FRAMES_PER_MIB		(MIB / MM_PAGE_SIZE)
#define MAX_ORDER_PAGES		(1UL << (MM_MAX_ORDER - 1))
#define TEST_OWNER		0x600dU

struct mm_pool *pool_new(size_t mib, bool grouping);
struct mm_pool *pool_new_pcp(size_t mib, bool grouping, unsigned int high,
			     unsigned int batch);

/* mm_stats() that records a failure when it does not return 0. */
bool pool_snapshot(struct mm_pool *pool, struct mm_stats *st);

/* Pageblock type of the pageblock holding @frame. */
enum mm_migratetype pb_type(struct mm_pool *pool, uint64_t frame);

/* Frame state of @frame, or -1 when mm_frame_info fails. */
int frame_state(struct mm_pool *pool, uint64_t frame);

/*
 * Invariants every snapshot must hold: free_pages is the sum of the
 * buddyinfo, buddyinfo is the sum of pagetypeinfo, pageblocks_type sums
 * to pageblocks, and every frame is free, cached on a pcp or allocated.
 */
void check_stats_consistent(const struct mm_stats *st, const char *file,
			    unsigned int line);
#define ASSERT_STATS_CONSISTENT(st) \
	check_stats_consistent((st), __FILE__, __LINE__)

/*
 * The pool is back to its initial layout: every frame free on the buddy
 * lists in max-order blocks (an order-9 tail where 4 MiB does not fit),
 * nothing allocated or cached, every pageblock free.
 */
void check_pool_whole(struct mm_pool *pool, const char *file,
		      unsigned int line);
#define ASSERT_POOL_WHOLE(pool) check_pool_whole((pool), __FILE__, __LINE__)

/* The pageblock_type counts agree with mm_pageblock_migratetype(). */
void check_pageblock_counts(struct mm_pool *pool, const struct mm_stats *st,
			    const char *file, unsigned int line);
#define ASSERT_PAGEBLOCK_COUNTS(pool, st) \
	check_pageblock_counts((pool), (st), __FILE__, __LINE__)

/* xorshift64*: reproducible sequences; the state must not be 0. */
uint64_t rng_next(uint64_t *state);
void shuffle_u64(uint64_t *v, size_t n, uint64_t *state);

#endif /* GPMM_TESTS_UNIT_HELPERS_H */
