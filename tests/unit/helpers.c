// SPDX-License-Identifier: GPL-2.0
#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"

#define CHECK_AT(cond, file, line) \
	CU_assertImplementation(!!(cond), (line), #cond, (file), "", CU_FALSE)

struct mm_pool *pool_new_pcp(size_t mib, bool grouping, unsigned int high,
			     unsigned int batch)
{
	struct mm_pool_config cfg = {
		.size = mib * MIB,
		.grouping = grouping,
		.pcp_high = high,
		.pcp_batch = batch,
		.name = "gpmm-unit",
	};
	struct mm_pool *pool = NULL;
	int rc = mm_pool_create(&cfg, &pool);

	CU_ASSERT_EQUAL(rc, 0);
	return rc == 0 ? pool : NULL;
}

struct mm_pool *pool_new(size_t mib, bool grouping)
{
	return pool_new_pcp(mib, grouping, 0, 0);
}

bool pool_snapshot(struct mm_pool *pool, struct mm_stats *st)
{
	int rc = mm_stats(pool, st);

	CU_ASSERT_EQUAL(rc, 0);
	return rc == 0;
}

enum mm_migratetype pb_type(struct mm_pool *pool, uint64_t frame)
{
	return mm_pageblock_migratetype(pool, frame / MM_PAGEBLOCK_PAGES);
}

int frame_state(struct mm_pool *pool, uint64_t frame)
{
	struct mm_frame_info fi;

	if (mm_frame_info(pool, frame, &fi) != 0)
		return -1;
	return (int)fi.state;
}

void check_stats_consistent(const struct mm_stats *st, const char *file,
			    unsigned int line)
{
	uint64_t free_pages = 0, pageblocks = 0, allocated = 0;

	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		uint64_t by_type = 0;

		for (int t = 0; t < MIGRATE_TYPES; t++)
			by_type += st->nr_free_type[t][o];
		CHECK_AT(by_type == st->nr_free[o], file, line);
		free_pages += st->nr_free[o] << o;
	}
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		pageblocks += st->pageblocks_type[t];
		allocated += st->allocated_pages[t];
	}
	CHECK_AT(free_pages == st->free_pages, file, line);
	CHECK_AT(pageblocks == st->pageblocks, file, line);
	CHECK_AT(st->pageblocks * MM_PAGEBLOCK_PAGES == st->frames, file,
		 line);
	CHECK_AT(st->free_pages + st->pcp_pages + allocated == st->frames,
		 file, line);
	CHECK_AT(st->free_pageblocks + st->mixed_pageblocks <= st->pageblocks,
		 file, line);
}

void check_pool_whole(struct mm_pool *pool, const char *file,
		      unsigned int line)
{
	struct mm_stats st;
	uint64_t frames = mm_pool_frames(pool);

	if (!CHECK_AT(mm_stats(pool, &st) == 0, file, line))
		return;
	check_stats_consistent(&st, file, line);
	CHECK_AT(st.frames == frames, file, line);
	CHECK_AT(st.free_pages == frames, file, line);
	CHECK_AT(st.pcp_pages == 0, file, line);
	CHECK_AT(st.nr_free[MM_MAX_ORDER - 1] == frames / MAX_ORDER_PAGES,
		 file, line);
	CHECK_AT(st.nr_free[MM_PAGEBLOCK_ORDER] ==
		 (frames % MAX_ORDER_PAGES) / MM_PAGEBLOCK_PAGES, file, line);
	for (unsigned int o = 0; o < MM_PAGEBLOCK_ORDER; o++)
		CHECK_AT(st.nr_free[o] == 0, file, line);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		CHECK_AT(st.allocated_pages[t] == 0, file, line);
	CHECK_AT(st.mixed_pageblocks == 0, file, line);
	CHECK_AT(st.free_pageblocks == st.pageblocks, file, line);
}

void check_pageblock_counts(struct mm_pool *pool, const struct mm_stats *st,
			    const char *file, unsigned int line)
{
	uint64_t seen[MIGRATE_TYPES] = { 0 };

	for (uint64_t pb = 0; pb < st->pageblocks; pb++) {
		enum mm_migratetype mt = mm_pageblock_migratetype(pool, pb);

		if (!CHECK_AT(mt >= 0 && mt < MIGRATE_TYPES, file, line))
			return;
		seen[mt]++;
	}
	for (int t = 0; t < MIGRATE_TYPES; t++)
		CHECK_AT(seen[t] == st->pageblocks_type[t], file, line);
}

uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

void shuffle_u64(uint64_t *v, size_t n, uint64_t *state)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_next(state) % i;
		uint64_t tmp = v[i - 1];

		v[i - 1] = v[j];
		v[j] = tmp;
	}
}
