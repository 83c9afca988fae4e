// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics: the mm/vmstat.c formulas on hand-built snapshots, buddyinfo
 * and pagetypeinfo counts of a real pool, and their text layouts.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/suite.h"

#define EPS	1e-9

/* A 256 MiB snapshot whose only free blocks are @nr_free, all MOVABLE. */
static void fill_stats(struct mm_stats *st, const uint64_t *nr_free)
{
	memset(st, 0, sizeof(*st));
	st->frames = 256 * FRAMES_PER_MIB;
	st->pageblocks = st->frames / MM_PAGEBLOCK_PAGES;
	st->pageblocks_type[MIGRATE_MOVABLE] = st->pageblocks;
	st->grouping = true;
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		st->nr_free[o] = nr_free[o];
		st->nr_free_type[MIGRATE_MOVABLE][o] = nr_free[o];
		st->free_pages += nr_free[o] << o;
	}
	st->allocated_pages[MIGRATE_MOVABLE] = st->frames - st->free_pages;
}

static void test_unusable_index(void)
{
	const uint64_t half[MM_MAX_ORDER] = { [0] = 512, [9] = 1 };
	const uint64_t mixed[MM_MAX_ORDER] = { [0] = 4, [2] = 3 };
	const uint64_t none[MM_MAX_ORDER] = { 0 };
	struct mm_stats st;

	fill_stats(&st, half);
	CU_ASSERT_EQUAL(st.free_pages, 1024);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 0), 0.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 1), 0.5, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 9), 0.5, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 10), 1.0, EPS);

	fill_stats(&st, mixed);
	CU_ASSERT_EQUAL(st.free_pages, 16);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 1), 0.25, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 2), 0.25, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 3), 1.0, EPS);

	fill_stats(&st, none);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, o), 1.0, EPS);
}

static void test_fragmentation_index(void)
{
	const uint64_t half[MM_MAX_ORDER] = { [0] = 512, [9] = 1 };
	const uint64_t twelve[MM_MAX_ORDER] = { [0] = 12 };
	const uint64_t mixed[MM_MAX_ORDER] = { [0] = 4, [2] = 3 };
	const uint64_t none[MM_MAX_ORDER] = { 0 };
	struct mm_stats st;

	fill_stats(&st, half);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 0), -1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 9), -1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 10),
			       1.0 - 2.0 / 513.0, EPS);

	fill_stats(&st, twelve);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 0), -1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 1),
			       1.0 - 7.0 / 12.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 3),
			       1.0 - 2.5 / 12.0, EPS);

	fill_stats(&st, mixed);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 2), -1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 3),
			       1.0 - 3.0 / 7.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 10),
			       1.0 - (1.0 + 16.0 / 1024.0) / 7.0, EPS);

	fill_stats(&st, none);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, o), 0.0,
				       EPS);
}

static void test_free_share_at_least(void)
{
	const uint64_t half[MM_MAX_ORDER] = { [0] = 512, [9] = 1 };
	const uint64_t mixed[MM_MAX_ORDER] = { [0] = 4, [2] = 3 };
	const uint64_t none[MM_MAX_ORDER] = { 0 };
	struct mm_stats st;

	fill_stats(&st, half);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 0), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 1), 0.5, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 9), 0.5, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 10), 0.0, EPS);

	fill_stats(&st, mixed);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 1), 0.75, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 3), 0.0, EPS);

	fill_stats(&st, none);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 0), 0.0, EPS);
}

/*
 * 8 MiB: a MOVABLE page splits one order-10 block; an UNMOVABLE order-3
 * block steals the other. Free: orders 0..2 once (MOVABLE), 3..9 twice
 * (once per type), 2039 pages in 17 blocks.
 */
static void test_real_pool_counts(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct mm_stats st;
	long m, u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	m = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, 0);
	u = mm_alloc(pool, NULL, 3, MIGRATE_UNMOVABLE, 0);
	CU_ASSERT_FATAL(m >= 0 && u >= 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_PAGEBLOCK_COUNTS(pool, &st);

	CU_ASSERT_EQUAL(st.frames, 2048);
	CU_ASSERT_EQUAL(st.pageblocks, 4);
	CU_ASSERT_EQUAL(st.free_pages, 2039);
	CU_ASSERT_EQUAL(st.pcp_pages, 0);
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		CU_ASSERT_EQUAL(st.nr_free[o], o < 3 ? 1 : o < 10 ? 2 : 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_MOVABLE][o],
				o < 10 ? 1 : 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_UNMOVABLE][o],
				o >= 3 && o < 10 ? 1 : 0);
		CU_ASSERT_EQUAL(st.nr_free_type[MIGRATE_RECLAIMABLE][o], 0);
	}
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 1);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 8);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_RECLAIMABLE], 0);
	CU_ASSERT_EQUAL(st.counters.alloc[0], 1);
	CU_ASSERT_EQUAL(st.counters.alloc[3], 1);
	CU_ASSERT_EQUAL(st.counters.fallback[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT(st.pageblocks_type[MIGRATE_UNMOVABLE] >= 1);
	CU_ASSERT_EQUAL(st.free_pageblocks, 2);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	CU_ASSERT_TRUE(st.grouping);

	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 4), 23.0 / 2039.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_unusable_index(&st, 10), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 9), -1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_fragmentation_index(&st, 10),
			       1.0 - (1.0 + 2039.0 / 1024.0) / 17.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mm_free_share_at_least(&st, 9),
			       1024.0 / 2039.0, EPS);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)m), 0);
	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	CU_ASSERT_EQUAL(st.counters.frees, 2);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

static void test_metadata_and_names(void)
{
	struct mm_pool *pool = pool_new(2, true);
	enum mm_migratetype mt;
	double per_frame;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	per_frame = mm_metadata_bytes_per_frame(pool);
	CU_ASSERT(per_frame > 0.0 && per_frame < 64.0);
	mm_pool_destroy(pool);

	for (int t = 0; t < MIGRATE_TYPES; t++) {
		const char *name = mm_migratetype_name((enum mm_migratetype)t);

		CU_ASSERT_PTR_NOT_NULL_FATAL(name);
		CU_ASSERT_EQUAL(mm_migratetype_parse(name, &mt), 0);
		CU_ASSERT_EQUAL(mt, t);
		for (int u = 0; u < t; u++)
			CU_ASSERT_NOT_EQUAL(strcmp(name,
				mm_migratetype_name((enum mm_migratetype)u)), 0);
	}
	CU_ASSERT(mm_migratetype_parse("no-such-type", &mt) < 0);
	CU_ASSERT(mm_migratetype_parse("", &mt) < 0);
}

/* Where "Node <spaces>0, zone" starts in @s, or NULL. */
static const char *find_node_zone(const char *s)
{
	for (const char *p = strstr(s, "Node"); p; p = strstr(p + 1, "Node")) {
		const char *q = p + 4;

		while (*q == ' ')
			q++;
		if (!strncmp(q, "0, zone", 7))
			return p;
	}
	return NULL;
}

/*
 * Parses @n unsigned numbers following the word @word in @line into @out;
 * "movable" inside "unmovable" or "Testzone," do not count as the word.
 */
static bool parse_counts(const char *line, const char *word, uint64_t *out,
			 unsigned int n)
{
	size_t len = strlen(word);

	for (const char *p = strstr(line, word); p; p = strstr(p + 1, word)) {
		const char *q = p + len;
		char *end;
		unsigned int i;

		if ((p > line && !isspace((unsigned char)p[-1])) ||
		    !isspace((unsigned char)*q))
			continue;
		for (i = 0; i < n; i++) {
			out[i] = strtoull(q, &end, 10);
			if (end == q)
				break;
			q = end;
		}
		if (i == n)
			return true;
	}
	return false;
}

static char *print_to_string(void (*print)(const struct mm_stats *,
					   const char *, FILE *),
			     const struct mm_stats *st, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	print(st, name, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void test_print_buddyinfo(void)
{
	uint64_t nr_free[MM_MAX_ORDER], got[MM_MAX_ORDER];
	struct mm_stats st;
	const char *line;
	char *out;

	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		nr_free[o] = o + 1;
	fill_stats(&st, nr_free);
	out = print_to_string(mm_print_buddyinfo, &st, "Testzone");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	line = find_node_zone(out);
	CU_ASSERT_PTR_NOT_NULL(line);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "Testzone"));
	CU_ASSERT_TRUE(line && parse_counts(line, "Testzone", got,
					    MM_MAX_ORDER));
	if (line && parse_counts(line, "Testzone", got, MM_MAX_ORDER))
		for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
			CU_ASSERT_EQUAL(got[o], nr_free[o]);
	free(out);
}

/*
 * Linux's layout: one "Node 0, zone <name>, type <type> counts..." line per
 * type, then a "Number of blocks type" header and a "Node 0, zone <name>
 * blocks..." line.
 */
static void test_print_pagetypeinfo(void)
{
	uint64_t nr_free[MM_MAX_ORDER] = { 0 }, got[MM_MAX_ORDER];
	bool rows[MIGRATE_TYPES] = { false }, blocks = false;
	struct mm_stats st;
	char *out, *save = NULL;

	fill_stats(&st, nr_free);
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		st.pageblocks_type[t] = 10 + (uint64_t)t;
		for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
			st.nr_free_type[t][o] = 100 * (uint64_t)t + o;
			st.nr_free[o] += st.nr_free_type[t][o];
		}
	}
	out = print_to_string(mm_print_pagetypeinfo, &st, "Testzone");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL(find_node_zone(out));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "Testzone"));

	for (char *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (find_node_zone(line) != line)
			continue;
		if (!strstr(line, "type")) {
			blocks = parse_counts(line, "Testzone", got,
					      MIGRATE_TYPES);
			for (int t = 0; blocks && t < MIGRATE_TYPES; t++)
				CU_ASSERT_EQUAL(got[t], st.pageblocks_type[t]);
			continue;
		}
		for (int t = 0; t < MIGRATE_TYPES; t++) {
			const char *name =
				mm_migratetype_name((enum mm_migratetype)t);

			if (!parse_counts(line, name, got, MM_MAX_ORDER))
				continue;
			rows[t] = true;
			for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
				CU_ASSERT_EQUAL(got[o], st.nr_free_type[t][o]);
		}
	}
	for (int t = 0; t < MIGRATE_TYPES; t++)
		CU_ASSERT_TRUE(rows[t]);
	CU_ASSERT_TRUE(blocks);
	free(out);
}

/*
 * mm_stats and mm_pageblock_walk come from one walk of the frame map and
 * must tell the same story, pageblock by pageblock, about a pool that
 * holds every kind of block: one larger than a pageblock, pinned ones,
 * two types in one pageblock (grouping off lets them share), frames
 * cached on a per-thread list and free blocks of several orders.
 */
struct pb_totals {
	uint64_t pageblocks, used, free, mixed, empty, whole;
	uint64_t big_pb;	/* first pageblock of the 4 MiB block */
	uint32_t owner_of_big;
};

static void add_pageblock(void *opaque, uint64_t pb,
			  const struct mm_pageblock_info *info)
{
	struct pb_totals *t = opaque;

	t->pageblocks++;
	t->used += info->used_pages;
	t->free += info->free_pages;
	t->mixed += (info->alloc_types & (info->alloc_types - 1)) != 0;
	t->empty += info->free_pages == MM_PAGEBLOCK_PAGES;
	t->whole += info->whole;
	if (pb == t->big_pb)
		t->owner_of_big = info->owner;
}

static void keep_pageblock(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	((struct mm_pageblock_info *)opaque)[pb] = *info;
}

/*
 * A walk of one pageblock tells what the whole walk does about it, the
 * second pageblock of a block that begins in the first one included.
 */
static void check_range_walks(struct mm_pool *pool, uint64_t pbs)
{
	struct mm_pageblock_info *all = calloc(pbs, sizeof(*all)), *one = calloc(pbs, sizeof(*one));

	CU_ASSERT_FATAL(all && one);
	CU_ASSERT_EQUAL(mm_pageblock_walk(pool, keep_pageblock, all), 0);
	for (uint64_t pb = 0; pb < pbs; pb++) {
		CU_ASSERT_EQUAL(mm_pageblock_walk_range(pool, pb, 1, keep_pageblock, one), 0);
		CU_ASSERT(!memcmp(&one[pb], &all[pb], sizeof(*one)));
	}
	CU_ASSERT_EQUAL(mm_pageblock_walk_range(pool, pbs, 1, keep_pageblock, one), -EINVAL);
	free(all);
	free(one);
}

static void test_reports_agree(void)
{
	struct mm_pool *pool = pool_new_pcp(16, false, 64, 16);
	struct pb_totals t = { 0 };
	struct mm_pcp *pcp = NULL;
	struct mm_stats st;
	long big, pinned, small[8], cached;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	big = mm_alloc(pool, NULL, MM_MAX_ORDER - 1, MIGRATE_MOVABLE, 7);
	pinned = mm_alloc(pool, NULL, 2, MIGRATE_MOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(big >= 0 && pinned >= 0);
	t.big_pb = (uint64_t)big / MM_PAGEBLOCK_PAGES;
	CU_ASSERT_EQUAL(mm_pin(pool, (uint64_t)pinned), 0);
	for (int i = 0; i < 8; i++) {
		small[i] = mm_alloc(pool, NULL, i % 3, i % 2 ? MIGRATE_UNMOVABLE :
				    MIGRATE_MOVABLE, MM_NO_OWNER);
		CU_ASSERT_FATAL(small[i] >= 0);
	}
	/* a refill caches a batch, of which one is handed out */
	cached = mm_alloc(pool, pcp, 0, MIGRATE_RECLAIMABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(cached >= 0);
	CU_ASSERT_FATAL(mm_pcp_count(pcp) > 0);

	CU_ASSERT_FATAL(pool_snapshot(pool, &st));
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(mm_pageblock_walk(pool, add_pageblock, &t), 0);

	CU_ASSERT_EQUAL(t.pageblocks, st.pageblocks);
	CU_ASSERT_EQUAL(t.used, st.allocated_pages[MIGRATE_UNMOVABLE] +
				st.allocated_pages[MIGRATE_RECLAIMABLE] +
				st.allocated_pages[MIGRATE_MOVABLE]);
	CU_ASSERT_EQUAL(t.free, st.free_pages);
	CU_ASSERT_EQUAL(t.used + t.free + st.pcp_pages, st.frames);
	CU_ASSERT_EQUAL(st.pcp_pages, mm_pcp_count(pcp));
	CU_ASSERT_EQUAL(st.pinned_pages, 4);
	CU_ASSERT_EQUAL(t.mixed, st.mixed_pageblocks);
	CU_ASSERT(st.mixed_pageblocks >= 1);
	CU_ASSERT_EQUAL(t.empty, st.free_pageblocks);
	/* the 4 MiB block fills its two pageblocks, one owner */
	CU_ASSERT_EQUAL(t.whole, 2);
	CU_ASSERT_EQUAL(t.owner_of_big, 7);
	check_range_walks(pool, st.pageblocks);

	CU_ASSERT_EQUAL(mm_unpin(pool, (uint64_t)pinned), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)pinned), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)big), 0);
	CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)cached), 0);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)small[i]), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
}

int register_stats_suite(void)
{
	static const struct suite_test tests[] = {
		{ "unusable free space index", test_unusable_index },
		{ "fragmentation index", test_fragmentation_index },
		{ "free share at least", test_free_share_at_least },
		{ "real pool counts", test_real_pool_counts },
		{ "reports agree", test_reports_agree },
		{ "metadata and type names", test_metadata_and_names },
		{ "buddyinfo layout", test_print_buddyinfo },
		{ "pagetypeinfo layout", test_print_pagetypeinfo },
	};
	return SUITE("stats", tests);
}
