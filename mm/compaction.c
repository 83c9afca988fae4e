// SPDX-License-Identifier: GPL-2.0
/*
 * Compaction, after Linux's mm/compaction.c: a migrate scanner walks
 * pageblocks up from the bottom and empties them, a free scanner walks
 * down from the top and supplies the targets; where they meet, a sweep
 * ends. A pageblock whose every allocation can move is emptied whole, and
 * its frames merge back into a free 2 MiB block.
 *
 * Targets come only from MOVABLE pageblocks that are partly used: moving
 * movable pages into an unmovable block would undo the grouping, and
 * breaking an already free pageblock would trade one hole for another.
 *
 * Locking: compact_lock makes sweeps one at a time; the pool lock is held
 * while scanning and isolating and dropped around every owner callback.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mm/internal.h"

#define CC_MAX_FREE		1024
#define EXTFRAG_THRESHOLD	0.5	/* below: a failure is for lack of memory */

/*
 * Linux's compact_gap: free pages enough for the block being made and for
 * the targets of what moves out of it; with less, migration runs dry.
 */
#define COMPACT_GAP(order)	(2UL << (order))

/* The fragmentation score's scale: a percentage. */
#define SCORE_MAX		100
/*
 * kcompactd wakes above target + PROACTIVE_SLACK and works down to the
 * target (Linux's fragmentation_score_wmark): without the gap it would
 * wake for every page that fragments the pool by a hair.
 */
#define PROACTIVE_SLACK		10

struct compact_control {
	struct mm_pool *pool;
	unsigned int order;
	bool direct;		/* stop at the first success, honour skip hints */
	unsigned int target_score;	/* proactive: stop at this score */
	uint64_t migrate_pb;	/* next pageblock to empty */
	uint64_t free_pb;	/* pageblocks >= this one were scanned for targets */
	uint32_t owner;		/* owned pageblocks: the one owner this sweep moves */
	struct isolated free[CC_MAX_FREE];
	unsigned int nr_free;
};

enum pb_result { PB_DONE, PB_UNSUITABLE, PB_FAILED, PB_NO_TARGETS };

/* The part of a snapshot the vmstat.c formulas read: the free lists. */
static void __free_snapshot(struct mm_pool *pool, struct mm_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->free_pages = pool->free_pages;
	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		st->nr_free[o] = pool->free_area[o].nr_free;
	__owned_free_counts(pool, st->nr_free, NULL);
}

/* Owned pageblocks: a sweep moves one owner's pages within its own pageblocks. */
static bool __other_owners(struct compact_control *cc, uint64_t pb)
{
	return cc->pool->owned_blocks && __pageblock_owner(cc->pool, pb) != cc->owner;
}

static double __fragmentation_score(struct mm_pool *pool)
{
	struct mm_stats st;

	__free_snapshot(pool, &st);
	return mm_fragmentation_score(&st);
}

/*
 * compaction_suitable: compacting only helps when there is enough free
 * memory for the block and the targets, and when the failure is one of
 * fragmentation (a high fragmentation index), not of memory.
 */
static enum mm_compact_result __compaction_suitable(struct mm_pool *pool,
						    unsigned int order)
{
	struct mm_stats st;
	double fragindex;

	if (__have_free_block(pool, order))
		return COMPACT_SUCCESS;
	if (pool->free_pages < COMPACT_GAP(order))
		return COMPACT_SKIPPED;
	__free_snapshot(pool, &st);
	fragindex = mm_fragmentation_index(&st, order);
	if (fragindex >= 0 && fragindex <= EXTFRAG_THRESHOLD)
		return COMPACT_SKIPPED;
	return COMPACT_COMPLETE;	/* i.e. go on */
}

static bool __pageblock_wholly_free(struct mm_pool *pool, uint64_t pb)
{
	uint64_t head = __block_head(pool, pb << MM_PAGEBLOCK_ORDER);

	return head != NIL && frame_state(&pool->frames[head]) == MM_FRAME_FREE &&
	       pool->frames[head].order >= MM_PAGEBLOCK_ORDER;
}

/* isolate_freepages_block: take every free block of one pageblock. */
static unsigned int __isolate_freepages_block(struct compact_control *cc,
					      uint64_t pb)
{
	struct mm_pool *pool = cc->pool;
	uint64_t start = pb << MM_PAGEBLOCK_ORDER;
	unsigned int got;

	got = __isolate_free_blocks(pool, start, start + MM_PAGEBLOCK_PAGES,
				    cc->free, &cc->nr_free, CC_MAX_FREE);
	pool->counters.compact_free_scanned += MM_PAGEBLOCK_PAGES;
	pool->counters.compact_isolated += got;
	return got;
}

/* isolate_freepages: walk down from the top until some targets are found. */
static bool __isolate_freepages(struct compact_control *cc)
{
	struct mm_pool *pool = cc->pool;

	while (cc->free_pb > cc->migrate_pb + 1) {
		uint64_t pb = --cc->free_pb;

		if (pool->grouping && get_pageblock_migratetype(
			    pool, pb << MM_PAGEBLOCK_ORDER) != MIGRATE_MOVABLE)
			continue;
		if (__other_owners(cc, pb))
			continue;
		if ((cc->direct && get_pageblock_skip(pool, pb)) ||
		    __pageblock_wholly_free(pool, pb))
			continue;
		if (__isolate_freepages_block(cc, pb))
			return true;
		set_pageblock_skip(pool, pb, true);
	}
	return false;
}

/* A target of @order from the isolated free blocks, split as needed. */
static long __get_target(struct compact_control *cc, unsigned int order)
{
	struct isolated *best = NULL;
	uint32_t pfn;

	for (;;) {
		for (unsigned int i = 0; i < cc->nr_free; i++)
			if (cc->free[i].order >= order &&
			    (!best || cc->free[i].order < best->order))
				best = &cc->free[i];
		if (best)
			break;
		/* the pieces held are too small: scan further down */
		if (cc->nr_free >= CC_MAX_FREE - MM_PAGEBLOCK_PAGES ||
		    !__isolate_freepages(cc))
			return -1;
	}
	pfn = best->pfn;
	while (best->order > order && cc->nr_free < CC_MAX_FREE) {
		best->order--;
		cc->free[cc->nr_free] = (struct isolated){
			pfn + (1U << best->order), best->order };
		__mark_isolated_free(cc->pool, pfn + (1U << best->order), best->order);
		cc->nr_free++;
	}
	if (best->order > order)
		return -1;
	*best = cc->free[--cc->nr_free];
	__mark_isolated_free(cc->pool, pfn, order);
	return pfn;
}

/*
 * Collect the allocated heads of pageblock @pb; false when any of them
 * cannot move (unmovable, pinned, no owner callbacks): then emptying the
 * block is hopeless and it is marked to be skipped.
 */
static bool __collect_movable(struct mm_pool *pool, uint64_t pb, uint32_t *heads,
			      unsigned int *nr, bool reclaim_only)
{
	uint64_t start = pb << MM_PAGEBLOCK_ORDER;

	*nr = 0;
	for_each_block(pool, pfn, start, start + MM_PAGEBLOCK_PAGES) {
		const struct mm_frame *f = &pool->frames[pfn];

		if (frame_state(f) != MM_FRAME_ALLOC)
			continue;
		/* a block as large as the pageblock has nothing to gain */
		if (!__block_is_movable(pool, pfn) || f->order >= MM_PAGEBLOCK_ORDER ||
		    (frame_flags(f) & F_ISOLATED))
			return false;
		if (reclaim_only && !owner_reclaims_cheaply(pool, frame_owner(f)))
			return false;
		heads[(*nr)++] = (uint32_t)pfn;
	}
	pool->counters.compact_migrate_scanned += MM_PAGEBLOCK_PAGES;
	return true;
}

/*
 * Move one block out of the way. A block its owner can give back without
 * a write is reclaimed rather than migrated: that costs no copy and no target, and
 * it is how a pageblock of reclaimable memory (caches, pages the guest
 * reported free) is emptied at all, since no movable target may sit in it.
 */
static enum pb_result move_one(struct compact_control *cc, uint64_t pfn)
{
	struct mm_pool *pool = cc->pool;
	long target;

	pthread_mutex_lock(&pool->lock);
	if (owner_reclaims_cheaply(pool, frame_owner(&pool->frames[pfn]))) {
		pool_unlock(pool);
		return reclaim_block(pool, pfn) ? PB_FAILED : PB_DONE;
	}
	if (!__isolate_block(pool, pfn)) {
		/* freed under us is as good as moved */
		bool gone = frame_state(&pool->frames[pfn]) != MM_FRAME_ALLOC;

		pool_unlock(pool);
		return gone ? PB_DONE : PB_FAILED;
	}
	/* freed and reused since the scan: look again, now that it holds still */
	if (!__block_is_movable(pool, pfn)) {
		__putback_isolated(pool, pfn);
		pool_unlock(pool);
		return PB_FAILED;
	}
	target = __get_target(cc, pool->frames[pfn].order);
	if (target < 0) {
		__putback_isolated(pool, pfn);
		pool_unlock(pool);
		return PB_NO_TARGETS;
	}
	pool_unlock(pool);
	return migrate_block(pool, pfn, target) ? PB_FAILED : PB_DONE;
}

static enum pb_result compact_pageblock(struct compact_control *cc, uint64_t pb,
					bool reclaim_only)
{
	struct mm_pool *pool = cc->pool;
	uint32_t heads[MM_PAGEBLOCK_PAGES];
	unsigned int nr;
	bool ok;

	pthread_mutex_lock(&pool->lock);
	if (cc->direct && get_pageblock_skip(pool, pb)) {
		pool_unlock(pool);
		return PB_UNSUITABLE;
	}
	ok = __collect_movable(pool, pb, heads, &nr, reclaim_only);
	if (!ok && !reclaim_only)
		set_pageblock_skip(pool, pb, true);
	pool_unlock(pool);
	if (!ok)
		return PB_UNSUITABLE;
	for (unsigned int i = 0; i < nr; i++) {
		enum pb_result r = move_one(cc, heads[i]);

		if (r != PB_DONE)
			return r;
	}
	return PB_DONE;
}

static bool cc_finished(struct compact_control *cc)
{
	struct mm_pool *pool = cc->pool;
	bool done;

	pthread_mutex_lock(&pool->lock);
	if (cc->direct)
		done = __have_free_block(pool, cc->order);
	else
		done = __fragmentation_score(pool) <= cc->target_score;
	pool_unlock(pool);
	return done;
}

static void __reset_skip_hints(struct mm_pool *pool)
{
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++)
		set_pageblock_skip(pool, pb, false);
	pool->compact_migrate_pb = 0;
	pool->compact_free_pb = pool->nr_pageblocks;
}

/*
 * One sweep: returns SUCCESS as soon as the goal is met. Past the point
 * where the scanners meet, pageblocks that reclaim alone can empty are
 * still worth a look: they need no targets.
 */
static enum mm_compact_result __compact_sweep(struct compact_control *cc)
{
	struct mm_pool *pool = cc->pool;
	enum mm_compact_result ret = COMPACT_COMPLETE;

	while (cc->migrate_pb < pool->nr_pageblocks) {
		bool reclaim_only = cc->migrate_pb >= cc->free_pb;
		enum pb_result r;

		if (__other_owners(cc, cc->migrate_pb)) {
			cc->migrate_pb++;
			continue;
		}
		r = compact_pageblock(cc, cc->migrate_pb, reclaim_only);

		if (r == PB_NO_TARGETS) {
			/* no more targets: from here on, reclaim only */
			cc->free_pb = cc->migrate_pb;
			continue;
		}
		cc->migrate_pb++;
		if (r == PB_DONE && cc_finished(cc)) {
			ret = COMPACT_SUCCESS;
			break;
		}
	}
	pthread_mutex_lock(&pool->lock);
	__release_isolated(pool, cc->free, &cc->nr_free);
	if (ret == COMPACT_SUCCESS && cc->direct && !pool->owned_blocks) {
		pool->compact_migrate_pb = cc->migrate_pb;
		pool->compact_free_pb = cc->free_pb;
	} else {
		__reset_skip_hints(pool);
	}
	pool_unlock(pool);
	return ret;
}

/*
 * Could a sweep of @ob's pageblocks empty one? Only if the free room in
 * them adds up to a pageblock at least. Owners with the most room go
 * first: they give a pageblock back for the fewest moves.
 */
static uint32_t __next_owner(struct mm_pool *pool, const uint8_t *done)
{
	uint32_t n = __atomic_load_n(&pool->nr_owners, __ATOMIC_ACQUIRE), best = 0;
	uint64_t best_free = MM_PAGEBLOCK_PAGES - 1;

	for (uint32_t s = 1; s <= n; s++) {
		const struct owned_blocks *ob = pool->owned[s];
		uint64_t room = ob && !done[s] ? __owned_free_pages(ob) : 0;

		if (room > best_free && ob->nr_pageblocks > 1) {
			best = s;
			best_free = room;
		}
	}
	return best;
}

/*
 * With owned pageblocks, compaction is each owner's: its pages move only
 * within its own pageblocks (the process holding them does the move, on
 * request), so a sweep per owner, the unowned pageblocks first, until the
 * goal is met. The owner a sweep serves is chosen under pool->lock.
 */
static enum mm_compact_result compact_zone(struct compact_control *cc)
{
	struct mm_pool *pool = cc->pool;
	enum mm_compact_result ret;
	uint8_t *done;

	pthread_rwlock_rdlock(&pool->owners_lock);
	ret = __compact_sweep(cc);
	done = pool->owned_blocks && ret != COMPACT_SUCCESS ?
	       calloc(MM_MAX_OWNERS + 1, 1) : NULL;
	while (done) {
		uint32_t slot;

		pthread_mutex_lock(&pool->lock);
		slot = __next_owner(pool, done);
		if (slot) {
			done[slot] = 1;
			cc->owner = pool->owned[slot]->id;
		}
		pool_unlock(pool);
		if (!slot)
			break;
		cc->migrate_pb = 0;
		cc->free_pb = pool->nr_pageblocks;
		ret = __compact_sweep(cc);
		if (ret == COMPACT_SUCCESS)
			break;
	}
	free(done);
	pthread_rwlock_unlock(&pool->owners_lock);
	return ret;
}

int compact_for_order(struct mm_pool *pool, unsigned int order, bool direct)
{
	struct compact_control *cc = calloc(1, sizeof(*cc));
	enum mm_compact_result ret;
	uint64_t start_pb;

	if (!cc)
		return COMPACT_SKIPPED;
	pthread_mutex_lock(&pool->compact_lock);
	mm_drain_all(pool);
	pthread_mutex_lock(&pool->lock);
	ret = direct ? __compaction_suitable(pool, order) : COMPACT_COMPLETE;
	if (direct)
		pool->counters.compact_stall++;
	cc->pool = pool;
	cc->order = order;
	cc->direct = direct;
	cc->migrate_pb = direct ? pool->compact_migrate_pb : 0;
	cc->free_pb = direct ? pool->compact_free_pb : pool->nr_pageblocks;
	if (!direct)
		__reset_skip_hints(pool);
	pool_unlock(pool);

	start_pb = cc->migrate_pb;
	if (ret == COMPACT_SKIPPED) {
		/*
		 * Too little free memory to migrate into: what reclaim alone can
		 * empty is all there is to gain (Linux reclaims, then compacts).
		 */
		cc->migrate_pb = cc->free_pb = 0;
		if (compact_zone(cc) == COMPACT_SUCCESS)
			ret = COMPACT_SUCCESS;
	} else if (ret == COMPACT_COMPLETE) {
		ret = compact_zone(cc);
		/* a sweep that started halfway gets one more from the bottom */
		if (ret == COMPACT_COMPLETE && direct && start_pb) {
			cc->migrate_pb = 0;
			cc->free_pb = pool->nr_pageblocks;
			ret = compact_zone(cc);
		}
	}
	pthread_mutex_lock(&pool->lock);
	if (direct && ret == COMPACT_SUCCESS)
		pool->counters.compact_success++;
	else if (direct)
		pool->counters.compact_fail++;
	pool_unlock(pool);
	pthread_mutex_unlock(&pool->compact_lock);
	free(cc);
	return ret;
}

enum mm_compact_result mm_compact(struct mm_pool *pool, unsigned int order)
{
	if (order >= MM_MAX_ORDER)
		return COMPACT_SKIPPED;
	return compact_for_order(pool, order, true);
}

/*
 * A whole-pool sweep, ignoring (and resetting) skip hints, that stops
 * once the fragmentation score is down to @target_score.
 */
static void compact_pool(struct mm_pool *pool, unsigned int target_score)
{
	struct compact_control *cc = calloc(1, sizeof(*cc));

	if (!cc)
		return;
	pthread_mutex_lock(&pool->compact_lock);
	mm_drain_all(pool);
	pthread_mutex_lock(&pool->lock);
	cc->pool = pool;
	cc->order = MM_PAGEBLOCK_ORDER;
	cc->free_pb = pool->nr_pageblocks;
	cc->target_score = target_score;
	__reset_skip_hints(pool);
	pool_unlock(pool);
	compact_zone(cc);
	pthread_mutex_unlock(&pool->compact_lock);
	free(cc);
}

void mm_compact_all(struct mm_pool *pool)
{
	compact_pool(pool, 0);
}

double mm_fragmentation_score(const struct mm_stats *st)
{
	return SCORE_MAX * mm_unusable_index(st, MM_PAGEBLOCK_ORDER);
}

/* Proactive compaction: kcompactd, a pass every interval. */
static void kcompactd_pass(struct mm_pool *pool, void *arg)
{
	unsigned int target = *(unsigned int *)arg;
	double score;

	pthread_mutex_lock(&pool->lock);
	score = __fragmentation_score(pool);
	if (score > target + PROACTIVE_SLACK)
		pool->counters.kcompactd_wake++;
	pool_unlock(pool);
	if (score > target + PROACTIVE_SLACK)
		compact_pool(pool, target);
}

int mm_kcompactd_start(struct mm_pool *pool, unsigned int target,
		       unsigned int interval_ms)
{
	if (pool->kcompactd || target > SCORE_MAX || !interval_ms)
		return -EINVAL;
	pool->kcompactd_target = target;
	return mm_worker_start(&pool->kcompactd, pool, interval_ms, kcompactd_pass,
			       &pool->kcompactd_target, "gpmm-kcompactd");
}

void mm_kcompactd_stop(struct mm_pool *pool)
{
	mm_worker_stop(pool->kcompactd);
	pool->kcompactd = NULL;
}
