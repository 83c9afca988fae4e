// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics with Linux's layouts and formulas (mm/vmstat.c): buddyinfo,
 * pagetypeinfo, the unusable free space index and the fragmentation index,
 * plus what grouping is judged by: pageblocks that mix types.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm/internal.h"

static const char *const migratetype_names[MIGRATE_TYPES] = {
	[MIGRATE_UNMOVABLE]   = "Unmovable",
	[MIGRATE_RECLAIMABLE] = "Reclaimable",
	[MIGRATE_MOVABLE]     = "Movable",
};

const char *mm_migratetype_name(enum mm_migratetype mt)
{
	return valid_migratetype(mt) ? migratetype_names[mt] : "Unknown";
}

/* Accepts the full name in any case or its first letter (U, R, M). */
int mm_migratetype_parse(const char *s, enum mm_migratetype *mt)
{
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		const char *name = migratetype_names[t];

		if (!strcasecmp(s, name) ||
		    (s[0] && !s[1] && tolower((unsigned char)s[0]) == tolower(name[0]))) {
			*mt = t;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Both reports, mm_stats and mm_pageblock_walk, come from the one walker
 * below, as every /proc file of vmstat.c comes from walk_zones_in_node: a
 * report only says what it notes about a block. Called with every pcp
 * and the pool locked, so that the blocks add up.
 */
typedef void (*block_fn)(void *opaque, uint64_t pfn, uint8_t state,
			 const struct mm_frame *f);

static void __walk_frames(struct mm_pool *pool, uint64_t start, uint64_t end, block_fn fn,
			  void *opaque)
{
	for_each_block(pool, pfn, start, end) {
		uint8_t state = frame_state(&pool->frames[pfn]);

		if (state != MM_FRAME_TAIL)
			fn(opaque, pfn, state, &pool->frames[pfn]);
	}
}

/*
 * For mm_stats, each pageblock collects a bit per allocation type found
 * in it, and PB_HAS_PCP for a cached frame: a pageblock with none of them
 * is free.
 */
#define PB_HAS_PCP	(1U << MIGRATE_TYPES)

struct stats_walk {
	struct mm_stats *st;
	uint8_t *types;		/* by pageblock */
};

static void count_block(void *opaque, uint64_t pfn, uint8_t state,
			const struct mm_frame *f)
{
	struct stats_walk *w = opaque;
	uint64_t pages = 1UL << f->order;
	uint8_t bit;

	if (state == MM_FRAME_ALLOC) {
		w->st->allocated_pages[f->mt] += pages;
		if (frame_flags(f) & F_PINNED)
			w->st->pinned_pages += pages;
		bit = 1U << f->mt;
	} else if (state == MM_FRAME_PCP) {
		w->st->pcp_pages += pages;
		bit = PB_HAS_PCP;
	} else {
		return;
	}
	for_each_pageblock_in(pb, pfn, f->order)
		w->types[pb] |= bit;
}

static void count_pageblocks(const uint8_t *types, struct mm_stats *st)
{
	for (uint64_t pb = 0; pb < st->pageblocks; pb++) {
		uint8_t alloc = types[pb] & (PB_HAS_PCP - 1);

		if (alloc & (alloc - 1))
			st->mixed_pageblocks++;
		if (!types[pb])
			st->free_pageblocks++;
	}
}

static void __copy_free_lists(struct mm_pool *pool, struct mm_stats *st)
{
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++) {
		st->nr_free[o] = pool->free_area[o].nr_free;
		for (int t = 0; t < MIGRATE_TYPES; t++)
			st->nr_free_type[t][o] =
				pool->free_area[o].free_list[t].count;
	}
	__owned_free_counts(pool, st->nr_free, st->nr_free_type);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		for (int lru = MM_LRU_INACTIVE; lru < MM_LRU_LISTS; lru++)
			for (uint32_t p = pool->lru[t][lru].head; p != NIL;
			     p = pool->frames[p].next)
				st->lru_pages[t][lru] += 1UL << pool->frames[p].order;
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++)
		st->pageblocks_type[get_pageblock_migratetype(
			pool, pb << MM_PAGEBLOCK_ORDER)]++;
}

int mm_stats(struct mm_pool *pool, struct mm_stats *st)
{
	uint8_t *types = calloc(pool->nr_pageblocks + 1, 1);
	struct stats_walk w = { st, types };

	if (!types)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	st->frames = pool->nr_frames;
	st->pageblocks = pool->nr_pageblocks;

	pcp_lock_all(pool);
	pthread_mutex_lock(&pool->lock);
	st->free_pages = pool->free_pages;
	st->grouping = pool->grouping;
	st->counters = pool->counters;
	for (struct mm_pcp *pcp = pool->pcps; pcp; pcp = pcp->next_pcp) {
		st->counters.alloc[0] += pcp->nr_alloc;
		st->counters.frees += pcp->nr_free;
	}
	__copy_free_lists(pool, st);
	__walk_frames(pool, 0, pool->nr_frames, count_block, &w);
	__hostmem_count(pool, &st->host_pageblocks, &st->host_huge_pageblocks);
	st->host_huge_errno = pool->host_huge_errno;
	pool_unlock(pool);
	pcp_unlock_all(pool);
	st->host_bytes = mm_pool_host_bytes(pool);

	count_pageblocks(types, st);
	free(types);
	return 0;
}

uint64_t mm_free_pageblocks(struct mm_pool *pool)
{
	uint64_t n = 0;

	pthread_mutex_lock(&pool->lock);
	for (unsigned int o = MM_PAGEBLOCK_ORDER; o < MM_MAX_ORDER; o++)
		n += pool->free_area[o].nr_free << (o - MM_PAGEBLOCK_ORDER);
	pool_unlock(pool);
	return n;
}

static uint64_t free_pages_at_least(const struct mm_stats *st,
				    unsigned int order)
{
	uint64_t pages = 0;

	for (unsigned int o = order; o < MM_MAX_ORDER; o++)
		pages += st->nr_free[o] << o;
	return pages;
}

uint64_t mm_free_blocks(const struct mm_stats *st, unsigned int order)
{
	return order < MM_MAX_ORDER ? free_pages_at_least(st, order) >> order : 0;
}

/*
 * How much of the free memory is useless for a request of @order: 0 when
 * all of it sits in blocks that large, 1 when none does (or none is free).
 */
double mm_unusable_index(const struct mm_stats *st, unsigned int order)
{
	if (!st->free_pages || order >= MM_MAX_ORDER)
		return 1.0;
	return (double)(st->free_pages - free_pages_at_least(st, order)) /
	       (double)st->free_pages;
}

/*
 * Linux's __fragmentation_index: near 0 an @order failure is for lack of
 * memory, near 1 for fragmentation; -1 means the request would succeed.
 */
double mm_fragmentation_index(const struct mm_stats *st, unsigned int order)
{
	uint64_t blocks = 0;
	double requested = (double)(1UL << order);

	if (order >= MM_MAX_ORDER)
		return 0.0;
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		blocks += st->nr_free[o];
	if (!blocks)
		return 0.0;
	if (free_pages_at_least(st, order))
		return -1.0;
	return 1.0 - (1.0 + (double)st->free_pages / requested) / (double)blocks;
}

double mm_free_share_at_least(const struct mm_stats *st, unsigned int order)
{
	if (!st->free_pages || order >= MM_MAX_ORDER)
		return 0.0;
	return (double)free_pages_at_least(st, order) / (double)st->free_pages;
}

void mm_print_buddyinfo(const struct mm_stats *st, const char *name, FILE *f)
{
	fprintf(f, "Node 0, zone %8s ", name ? name : "gpmm");
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		fprintf(f, "%6llu ", (unsigned long long)st->nr_free[o]);
	fputc('\n', f);
}

void mm_print_pagetypeinfo(const struct mm_stats *st, const char *name,
			   FILE *f)
{
	name = name ? name : "gpmm";
	fprintf(f, "Page block order: %d\nPages per block:  %lu\n\n",
		MM_PAGEBLOCK_ORDER, MM_PAGEBLOCK_PAGES);
	fprintf(f, "Free pages count per migrate type at order ");
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		fprintf(f, "%6u ", o);
	fputc('\n', f);
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		fprintf(f, "Node    0, zone %8s, type %12s ", name,
			migratetype_names[t]);
		for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
			fprintf(f, "%6llu ",
				(unsigned long long)st->nr_free_type[t][o]);
		fputc('\n', f);
	}
	fprintf(f, "\nNumber of blocks type    ");
	for (int t = 0; t < MIGRATE_TYPES; t++)
		fprintf(f, "%12s ", migratetype_names[t]);
	fprintf(f, "\nNode 0, zone %8s ", name);
	for (int t = 0; t < MIGRATE_TYPES; t++)
		fprintf(f, "%12llu ", (unsigned long long)st->pageblocks_type[t]);
	fputc('\n', f);
}

/* For mm_pageblock_walk: the pageblocks [first, first + n) of the walk. */
struct pb_walk {
	struct mm_pageblock_info *pbi;
	uint64_t first, n;
};

/* What a block puts in each pageblock of the walk it covers. */
static void note_block(void *opaque, uint64_t pfn, uint8_t state,
		       const struct mm_frame *f)
{
	struct pb_walk *w = opaque;
	uint64_t pages = f->order >= MM_PAGEBLOCK_ORDER ?
			 MM_PAGEBLOCK_PAGES : 1UL << f->order;

	if (state != MM_FRAME_ALLOC && state != MM_FRAME_FREE)
		return;
	for_each_pageblock_in(pb, pfn, f->order) {
		struct mm_pageblock_info *i;

		if (pb < w->first || pb >= w->first + w->n)
			continue;
		i = &w->pbi[pb - w->first];

		if (state == MM_FRAME_FREE) {
			i->free_pages += pages;
			continue;
		}
		i->alloc_types |= 1U << frame_mt(f);
		i->used_pages += pages;
		i->whole = f->order >= MM_PAGEBLOCK_ORDER;
		if (i->owner == MM_NO_OWNER)
			i->owner = frame_owner(f);
		else if (i->owner != frame_owner(f))
			i->owner = MM_OWNER_MIXED;
	}
}


/*
 * A walk of some pageblocks costs what they hold, not the pool: it starts
 * at the head of the block that covers the first of them (a block larger
 * than a pageblock may begin before it).
 */
int mm_pageblock_walk_range(struct mm_pool *pool, uint64_t first, uint64_t n,
			    mm_pageblock_fn fn, void *opaque)
{
	struct pb_walk w = { .first = first, .n = n };
	uint64_t start, end;

	if (first >= pool->nr_pageblocks)
		return -EINVAL;
	if (n > pool->nr_pageblocks - first)
		w.n = n = pool->nr_pageblocks - first;
	w.pbi = calloc(n, sizeof(*w.pbi));
	if (!w.pbi)
		return -ENOMEM;
	pcp_lock_all(pool);
	pthread_mutex_lock(&pool->lock);
	for (uint64_t pb = 0; pb < n; pb++)
		w.pbi[pb].mt = get_pageblock_migratetype(pool, (first + pb) << MM_PAGEBLOCK_ORDER);
	start = __block_head(pool, first << MM_PAGEBLOCK_ORDER);
	end = (first + n) << MM_PAGEBLOCK_ORDER;
	__walk_frames(pool, start == NIL ? first << MM_PAGEBLOCK_ORDER : start, end, note_block, &w);
	pool_unlock(pool);
	pcp_unlock_all(pool);
	for (uint64_t pb = 0; pb < n; pb++)
		fn(opaque, first + pb, &w.pbi[pb]);
	free(w.pbi);
	return 0;
}

/* The info of one pageblock @pb into @info. Every pcp and the pool locked. */
static void __note_pageblock(struct mm_pool *pool, uint64_t pb, struct mm_pageblock_info *info)
{
	struct pb_walk w = { .pbi = info, .first = pb, .n = 1 };
	uint64_t start = __block_head(pool, pb << MM_PAGEBLOCK_ORDER);

	*info = (struct mm_pageblock_info){ .mt = get_pageblock_migratetype(
		pool, pb << MM_PAGEBLOCK_ORDER) };
	__walk_frames(pool, start == NIL ? pb << MM_PAGEBLOCK_ORDER : start,
		      (pb + 1) << MM_PAGEBLOCK_ORDER, note_block, &w);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One owner's pageblocks (pageblocks owned whole): what a VM's report
 * reads of the pool, at the cost of the VM's own pageblocks, found on
 * its owner's list, not of the pool's.
 */
long mm_owner_pageblock_walk(struct mm_pool *pool, uint32_t owner, uint64_t first, uint64_t max,
			     mm_pageblock_fn fn, void *opaque)
{
	struct mm_pageblock_info *info = NULL;
	struct owned_blocks *ob;
	uint32_t *pbs = NULL;
	uint64_t n = 0, held = 0;

	pcp_lock_all(pool);
	pthread_mutex_lock(&pool->lock);
	ob = __owned_of(pool, owner);
	held = ob ? ob->nr_pageblocks : 0;
	if (held) {
		pbs = malloc(held * sizeof(*pbs));
		info = calloc(held, sizeof(*info));
	}
	for (uint32_t pb = ob && pbs && info ? ob->first_pb : NIL; pb != NIL; pb = pool->pb_next[pb])
		if (pb >= first)
			pbs[n++] = pb;
	if (n) {
		qsort(pbs, n, sizeof(*pbs), cmp_u32);
		n = n < max ? n : max;
		for (uint64_t i = 0; i < n; i++)
			__note_pageblock(pool, pbs[i], &info[i]);
	}
	pool_unlock(pool);
	pcp_unlock_all(pool);
	for (uint64_t i = 0; i < n; i++)
		fn(opaque, pbs[i], &info[i]);
	free(pbs);
	free(info);
	if (!ob)
		return -ENOENT;
	return held && (!pbs || !info) ? -ENOMEM : (long)n;
}

int mm_pageblock_walk(struct mm_pool *pool, mm_pageblock_fn fn, void *opaque)
{
	return mm_pageblock_walk_range(pool, 0, pool->nr_pageblocks, fn, opaque);
}
