// SPDX-License-Identifier: GPL-2.0
/*
 * Compaction: whole-pool sweeps, direct compaction on the allocation
 * path, the results of mm_compact, kcompactd, and what must never be
 * moved. Every moved block belongs to a pattern owner, so a wrong copy,
 * a lost block or a block moved that should not have been shows up as
 * bytes or counters, not just as a pool that looks tidy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/unit/helpers.h"
#include "tests/unit/pattern_owner.h"
#include "tests/suite.h"

#define PB_PAGES	MM_PAGEBLOCK_PAGES
#define ALL_TYPES_MASK	((1U << MIGRATE_TYPES) - 1)

static struct mm_stats snapshot(struct mm_pool *pool)
{
	struct mm_stats st = { 0 };

	pool_snapshot(pool, &st);
	return st;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The owner saw nothing it should not have: the common postconditions. */
static void check_owner_clean(struct pattern_owner *po, const char *file,
			      unsigned int line)
{
	CU_assertImplementation(pattern_owner_verify_all(po) == 0, line,
				"pattern_owner_verify_all(po) == 0", file, "",
				CU_FALSE);
	CU_assertImplementation(po->corrupted == 0, line, "po->corrupted == 0",
				file, "", CU_FALSE);
	CU_assertImplementation(po->overlaps == 0, line, "po->overlaps == 0",
				file, "", CU_FALSE);
	CU_assertImplementation(po->foreign == 0, line, "po->foreign == 0",
				file, "", CU_FALSE);
	CU_assertImplementation(po->offered_mt[MIGRATE_UNMOVABLE] == 0, line,
				"po->offered_mt[MIGRATE_UNMOVABLE] == 0", file,
				"", CU_FALSE);
	CU_assertImplementation(po->offered_pinned == 0, line,
				"po->offered_pinned == 0", file, "", CU_FALSE);
	CU_assertImplementation(po->pinned_while_moving == 0, line,
				"po->pinned_while_moving == 0", file, "",
				CU_FALSE);
}
#define ASSERT_OWNER_CLEAN(po) check_owner_clean((po), __FILE__, __LINE__)

/*
 * Gupta's experiment: a pool filled with order-0 movable pages, 3 of
 * every 4 freed, so that no pageblock is free. A full sweep must gather
 * the survivors into as few pageblocks as they fill and hand back nearly
 * all the others as free 2 MiB blocks, each survivor intact.
 */
/*
 * A VM's fault path allocates under a lock the owner's migrate callback
 * takes: mm_alloc_nowait must fail rather than compact (the callback
 * would deadlock), where mm_alloc on the same pool compacts and succeeds.
 */
static void test_nowait_never_calls_back(void)
{
	struct mm_pool *pool = pool_new(16, true);
	struct mm_pcp *pcp = NULL;
	struct pattern_owner po;
	uint64_t n;
	long f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	mm_set_policy(pool, MM_POLICY_ALL);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, pcp, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL_FATAL(n, mm_pool_frames(pool));
	CU_ASSERT_EQUAL(pattern_owner_thin(&po, pcp, n, 4, 0), n / 4);
	mm_drain_all(pool);
	CU_ASSERT_EQUAL(mm_alloc_nowait(pool, pcp, 4, po.owner), -ENOMEM);
	CU_ASSERT_EQUAL(po.migrate_calls, 0);
	f = mm_alloc(pool, NULL, 4, MIGRATE_MOVABLE, MM_NO_OWNER);
	CU_ASSERT(f >= 0);
	CU_ASSERT(po.migrate_calls > 0);
	/* an order-0 request still finds a frame without moving anything */
	CU_ASSERT(mm_alloc_nowait(pool, pcp, 0, MM_NO_OWNER) >= 0);
	CU_ASSERT_EQUAL(mm_alloc_nowait(pool, pcp, 0 + MM_MAX_ORDER, MM_NO_OWNER), -EINVAL);
	mm_pcp_destroy(pcp);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_gupta_compact_all(void)
{
	struct mm_pool *pool = pool_new(64, true);
	struct mm_pcp *pcp = NULL;
	struct pattern_owner po;
	uint64_t n, kept, possible, units;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	CU_ASSERT(po.owner >= 1);
	n = pattern_owner_fill(&po, pcp, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL_FATAL(n, mm_pool_frames(pool));
	kept = pattern_owner_thin(&po, pcp, n, 4, 0);
	CU_ASSERT_EQUAL(kept, n / 4);
	mm_drain_all(pool);
	st = snapshot(pool);
	CU_ASSERT_EQUAL_FATAL(free_pageblock_units(&st), 0);

	mm_compact_all(pool);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	possible = st.pageblocks - (kept + PB_PAGES - 1) / PB_PAGES;
	units = free_pageblock_units(&st);
	CU_ASSERT(units * 10 >= possible * 9);
	CU_ASSERT(units <= possible);
	CU_ASSERT(st.counters.pgmigrate_success > 0);
	CU_ASSERT_EQUAL(st.counters.pgmigrate_success, po.migrations);
	CU_ASSERT_EQUAL(st.counters.pgmigrate_fail, 0);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], kept);
	CU_ASSERT_EQUAL(po.tracked, kept);
	/* every block offered was isolated: a pin had to wait */
	CU_ASSERT_EQUAL(po.pin_eagain, po.migrate_calls);
	CU_ASSERT_EQUAL(po.unknown, 0);
	ASSERT_OWNER_CLEAN(&po);

	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, pcp, n), 0);
	mm_pcp_destroy(pcp);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * Order-9 movable requests on a seeded fragmentation until one fails;
 * how many succeeded. Runs the whole life of one pool.
 */
struct direct_run {
	unsigned int got;
	uint64_t possible;	/* pageblocks the kept pages leave free */
	struct mm_counters c;
	uint64_t corrupted, migrations;
	long last_error;
	enum mm_compact_result retry;	/* mm_compact right after the failure */
};

static void order9_until_failure(unsigned int policy, uint64_t seed,
				 struct direct_run *run)
{
	struct mm_pool *pool = pool_new(32, true);
	struct pattern_owner po;
	uint64_t n, id, kept;
	long r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, seed);
	run->possible = n / PB_PAGES - (kept + PB_PAGES - 1) / PB_PAGES;
	mm_set_policy(pool, policy);
	for (id = n; (r = pattern_owner_alloc(&po, NULL, MM_PAGEBLOCK_ORDER,
					      MIGRATE_MOVABLE, id)) >= 0; id++)
		CU_ASSERT_EQUAL(r % PB_PAGES, 0);
	run->last_error = r;
	run->got = (unsigned int)(id - n);
	run->c = snapshot(pool).counters;
	run->migrations = po.migrations;
	run->retry = mm_compact(pool, MM_PAGEBLOCK_ORDER);
	run->corrupted = pattern_owner_verify_all(&po) + po.corrupted;
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, id), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_direct_compaction(void)
{
	struct direct_run plain = { 0 }, compact = { 0 };

	order9_until_failure(0, 0x5eed, &plain);
	order9_until_failure(MM_POLICY_COMPACT, 0x5eed, &compact);

	CU_ASSERT_EQUAL(plain.last_error, -ENOMEM);
	CU_ASSERT_EQUAL(compact.last_error, -ENOMEM);
	CU_ASSERT_EQUAL(plain.c.compact_stall, 0);
	CU_ASSERT_EQUAL(plain.c.pgmigrate_success, 0);
	/*
	 * 16 pageblocks, ~1/4 of the pages kept: ~12 can be freed. Direct
	 * compaction stops at each first success, so it may fall a little
	 * short of a whole-pool sweep, not by a quarter.
	 */
	CU_ASSERT(compact.got > plain.got);
	CU_ASSERT(compact.got * 4 >= compact.possible * 3);
	/*
	 * The request that failed had its direct compaction: a compaction
	 * run right after, with nothing changed, must not do better.
	 */
	CU_ASSERT_NOT_EQUAL(compact.retry, COMPACT_SUCCESS);
	CU_ASSERT(compact.c.compact_stall >= compact.c.compact_success);
	CU_ASSERT(compact.c.compact_success >= 1);
	/* each success served the request that stalled */
	CU_ASSERT(compact.c.compact_success >= compact.got - plain.got);
	/* the last request failed after a stall that found nothing */
	CU_ASSERT(compact.c.compact_fail >= 1);
	CU_ASSERT(compact.c.pgmigrate_success > 0);
	CU_ASSERT_EQUAL(compact.c.pgmigrate_success, compact.migrations);
	CU_ASSERT_EQUAL(compact.corrupted, 0);
}

/*
 * Replace the block at @frame (held by @po) by a fresh order-0 one of
 * @mt owned by @owner. The pool being otherwise full, the buddy can only
 * hand back the same frame; returns it (or < 0).
 */
static long realloc_in_place(struct pattern_owner *po, uint64_t frame,
			     enum mm_migratetype mt, uint32_t owner)
{
	long id = pattern_owner_id_at(po, frame);

	if (id < 0 || pattern_owner_free(po, NULL, (uint64_t)id))
		return -1;
	return mm_alloc(po->pool, NULL, 0, mt, owner);
}

/*
 * Blocks that must never move, scattered through a fragmented pool among
 * blocks that may: UNMOVABLE ones of owners that could move them, pinned
 * ones, blocks with no owner, with an id never registered, and of an
 * owner gone since. Full compaction, direct compaction, lumpy reclaim and
 * shrinking all run over them.
 */
enum special_kind {
	SP_UNMOVABLE_M,		/* UNMOVABLE, owner can migrate */
	SP_UNMOVABLE_R,		/* UNMOVABLE, owner can migrate and reclaim */
	SP_PINNED_M,
	SP_PINNED_R,
	SP_NO_OWNER,
	SP_UNKNOWN_OWNER,
	SP_GONE_OWNER,
	SP_KINDS
};

#define SP_PAGEBLOCKS	6	/* the last two pageblocks hold none */
#define UNKNOWN_OWNER	4242

struct special {
	enum special_kind kind;
	uint64_t frame;
	uint32_t owner;
	enum mm_migratetype mt;
	struct pattern_owner *po;	/* tracking it, or NULL: pattern only */
	uint64_t id;
};

/* pm and pr hold the pool's blocks, px is the owner that goes away */
struct owners {
	struct pattern_owner pm, pr, px;
};

/*
 * Frames are multiples of 4 so that thinning keeps them. Owners alternate
 * every 4 frames; SP_PINNED_R's frame is 4 past the others' so that it
 * lands on a block of pr.
 */
static uint64_t special_frame(unsigned int pb, enum special_kind k)
{
	return pb * PB_PAGES + 64 * k + (k == SP_PINNED_R ? 4 : 0);
}

/* Turn the block at @s->frame into a special of @s->kind. */
static void make_special(struct owners *o, struct special *s)
{
	struct pattern_owner *holder =
		pattern_owner_id_at(&o->pm, s->frame) >= 0 ? &o->pm : &o->pr;
	long r;

	switch (s->kind) {
	case SP_UNMOVABLE_M:
	case SP_UNMOVABLE_R:
		s->po = s->kind == SP_UNMOVABLE_M ? &o->pm : &o->pr;
		s->owner = s->po->owner;
		s->mt = MIGRATE_UNMOVABLE;
		r = realloc_in_place(holder, s->frame, s->mt, s->owner);
		CU_ASSERT_EQUAL_FATAL(r, (long)s->frame);
		CU_ASSERT_FATAL(pattern_owner_track(s->po, s->frame, 0, s->mt,
						    s->id));
		break;
	case SP_PINNED_M:
	case SP_PINNED_R:
		CU_ASSERT_FATAL(holder ==
				(s->kind == SP_PINNED_M ? &o->pm : &o->pr));
		s->po = holder;
		s->owner = holder->owner;
		s->id = (uint64_t)pattern_owner_id_at(holder, s->frame);
		CU_ASSERT_EQUAL_FATAL(pattern_owner_pin(holder, s->id), 0);
		break;
	default:
		s->owner = s->kind == SP_NO_OWNER ? MM_NO_OWNER :
			   s->kind == SP_UNKNOWN_OWNER ? UNKNOWN_OWNER :
			   o->px.owner;
		r = realloc_in_place(holder, s->frame, s->mt, s->owner);
		CU_ASSERT_EQUAL_FATAL(r, (long)s->frame);
		pattern_fill(&o->pm, s->frame, 0, s->id);
	}
}

/* Same frame, same owner, same type, same bytes. */
static void check_special(struct owners *o, const struct special *s)
{
	struct mm_frame_info fi;

	CU_ASSERT_EQUAL(mm_frame_info(o->pm.pool, s->frame, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(fi.order, 0);
	CU_ASSERT_EQUAL(fi.owner, s->owner);
	CU_ASSERT_EQUAL(fi.mt, s->mt);
	if (s->po) {
		CU_ASSERT_EQUAL(pattern_owner_frame(s->po, s->id),
				(long)s->frame);
	} else {
		CU_ASSERT_EQUAL(pattern_check(&o->pm, s->frame, 0, s->id), 0);
	}
}

static void free_special(struct owners *o, const struct special *s)
{
	if (s->kind == SP_PINNED_M || s->kind == SP_PINNED_R)
		CU_ASSERT_EQUAL(pattern_owner_unpin(s->po, s->id), 0);
	if (s->po) {
		CU_ASSERT_EQUAL(pattern_owner_free(s->po, NULL, s->id), 0);
	} else {
		CU_ASSERT_EQUAL(mm_free(o->pm.pool, NULL, s->frame), 0);
	}
}

/* Everything that moves or takes back blocks, at every size. */
static uint64_t shake_pool(struct owners *o, uint64_t next_id)
{
	struct mm_pool *pool = o->pm.pool;

	mm_compact_all(pool);
	CU_ASSERT_NOT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER),
			    COMPACT_SKIPPED);
	mm_set_policy(pool, MM_POLICY_LUMPY | MM_POLICY_COMPACT);
	for (unsigned int order = MM_PAGEBLOCK_ORDER; order >= 3; order -= 3)
		for (int i = 0; i < 64; i++, next_id++)
			if (pattern_owner_alloc(&o->pm, NULL, order,
						MIGRATE_MOVABLE, next_id) < 0)
				break;
	mm_shrink(pool, mm_pool_frames(pool), ALL_TYPES_MASK);
	mm_compact_all(pool);
	return next_id;
}

static void test_never_moved(void)
{
	struct mm_pool *pool = pool_new(16, true);
	struct special sp[SP_PAGEBLOCKS * SP_KINDS];
	struct owners *o = calloc(1, sizeof(*o));
	struct pattern_owner *both[2];
	uint64_t n = 0, next_id, nsp = 0;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&o->pm, pool, PO_MIGRATE, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&o->pr, pool,
						 PO_MIGRATE | PO_RECLAIM, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&o->px, pool, PO_MIGRATE, 0), 0);
	both[0] = &o->pm;
	both[1] = &o->pr;
	while (pattern_owner_alloc(both[(n / 4) % 2], NULL, 0, MIGRATE_MOVABLE,
				   n) >= 0)
		n++;
	CU_ASSERT_EQUAL_FATAL(n, mm_pool_frames(pool));
	next_id = n;
	for (unsigned int pb = 0; pb < SP_PAGEBLOCKS; pb++) {
		for (int k = 0; k < SP_KINDS; k++, nsp++) {
			sp[nsp] = (struct special){ .kind = k,
				.frame = special_frame(pb, k),
				.mt = MIGRATE_MOVABLE, .id = next_id++ };
			make_special(o, &sp[nsp]);
		}
	}
	pattern_owner_unregister(&o->px);
	pattern_owner_thin(&o->pm, NULL, n, 4, 0);
	pattern_owner_thin(&o->pr, NULL, n, 4, 0);

	next_id = shake_pool(o, next_id);

	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	/* not vacuous: the blocks around them did move or go */
	CU_ASSERT(st.counters.pgmigrate_success > 0);
	CU_ASSERT(st.counters.reclaim_success > 0);
	CU_ASSERT(st.counters.lumpy_success > 0);
	CU_ASSERT_EQUAL(st.pinned_pages, 2 * SP_PAGEBLOCKS);
	for (uint64_t i = 0; i < nsp; i++)
		check_special(o, &sp[i]);
	ASSERT_OWNER_CLEAN(&o->pm);
	ASSERT_OWNER_CLEAN(&o->pr);
	CU_ASSERT_EQUAL(o->pm.unknown + o->pr.unknown, 0);
	CU_ASSERT_EQUAL(o->px.migrate_calls + o->px.reclaim_calls, 0);

	for (uint64_t i = 0; i < nsp; i++)
		free_special(o, &sp[i]);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&o->pm, NULL, next_id), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&o->pr, NULL, next_id), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&o->pm);
	pattern_owner_fini(&o->pr);
	pattern_owner_fini(&o->px);
	free(o);
	mm_pool_destroy(pool);
}

/*
 * An owner whose migrate fails (every call, or every third): compaction
 * gives up on those blocks, counts them, corrupts nothing, loses nothing.
 */
static void failing_migrations(unsigned int every)
{
	struct mm_pool *pool = pool_new(16, true);
	struct pattern_owner po;
	uint64_t n, kept;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);
	po.migrate_fail_every = every;

	mm_compact_all(pool);
	mm_compact(pool, MM_PAGEBLOCK_ORDER);
	mm_set_policy(pool, MM_POLICY_COMPACT | MM_POLICY_LUMPY);
	if (every == 1)
		CU_ASSERT_EQUAL(mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER,
					 MIGRATE_MOVABLE, MM_NO_OWNER), -ENOMEM);

	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT(po.migrate_injected > 0);
	/* order-0 blocks: pages and calls are the same count */
	CU_ASSERT_EQUAL(st.counters.pgmigrate_fail, po.migrate_injected);
	CU_ASSERT_EQUAL(st.counters.pgmigrate_success, po.migrations);
	if (every == 1) {
		CU_ASSERT_EQUAL(po.migrations, 0);
		CU_ASSERT_EQUAL(free_pageblock_units(&st), 0);
	} else {
		CU_ASSERT(po.migrations > 0);
	}
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], kept);
	CU_ASSERT_EQUAL(po.tracked, kept);
	CU_ASSERT_EQUAL(po.unknown, 0);
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_migrate_always_fails(void)
{
	failing_migrations(1);
}

static void test_migrate_fails_every_third(void)
{
	failing_migrations(3);
}

/*
 * The owner frees blocks while compaction moves them. From inside its
 * migrate callback it frees the old block (and says -EBUSY, or 0); after
 * a successful move it frees the new one, as another thread of the owner
 * could the moment the owner's table points there. Either way each free
 * is carried out once, after the move, and the pool loses nothing.
 */
struct free_during_move {
	unsigned int every;
	uint64_t calls, freed, free_errors;
	uint64_t freed_old_ok;	/* freed old, answered 0 */
};

static int migrate_frees_old(struct pattern_owner *po, enum po_call call,
			     uint64_t old_frame, uint64_t new_frame,
			     unsigned int order)
{
	struct free_during_move *d = po->hook_data;
	long id;

	if (++d->calls % d->every)
		return PO_HOOK_CONTINUE;
	id = pattern_owner_id_at(po, old_frame);
	if (id < 0)
		return PO_HOOK_CONTINUE;
	if (pattern_owner_free(po, NULL, (uint64_t)id))
		d->free_errors++;
	d->freed++;
	if (d->calls % (2 * d->every))
		return -EBUSY;
	d->freed_old_ok++;
	return 0;
}

static int migrate_then_free_new(struct pattern_owner *po, uint64_t old_frame,
				 uint64_t new_frame, unsigned int order, int ret)
{
	struct free_during_move *d = po->hook_data;
	long id;

	if (ret || ++d->calls % d->every)
		return ret;
	id = pattern_owner_id_at(po, new_frame);
	if (id < 0)
		return ret;
	if (pattern_owner_free(po, NULL, (uint64_t)id))
		d->free_errors++;
	d->freed++;
	return ret;
}

static void free_during_move(bool new_block)
{
	struct mm_pool *pool = pool_new(16, true);
	struct free_during_move d = { .every = 7 };
	struct pattern_owner po;
	uint64_t n, kept;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);
	po.hook_data = &d;
	if (new_block)
		po.after = migrate_then_free_new;
	else
		po.hook = migrate_frees_old;

	mm_compact_all(pool);
	CU_ASSERT_FATAL(d.freed > 0);
	CU_ASSERT_EQUAL(d.free_errors, 0);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.counters.deferred_frees, d.freed);
	CU_ASSERT_EQUAL(st.counters.double_frees, 0);
	CU_ASSERT_EQUAL(st.counters.bad_frees, 0);
	/* every page still allocated is one the owner holds */
	CU_ASSERT_EQUAL(po.tracked, kept - d.freed);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], po.tracked);
	ASSERT_OWNER_CLEAN(&po);

	po.hook = NULL;
	po.after = NULL;
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_free_old_inside_migrate(void)
{
	free_during_move(false);
}

static void test_free_new_after_migrate(void)
{
	free_during_move(true);
}

/*
 * A block the sweep has already looked at is freed and its frame handed
 * out again, UNMOVABLE, before the sweep reaches it (here from inside
 * the previous block's callback; in life from any other thread). The
 * sweep must look again before moving it.
 */
struct reuse {
	bool done;
	uint64_t victim;
	long got;
};

static int migrate_reuses_next(struct pattern_owner *po, enum po_call call,
			       uint64_t old_frame, uint64_t new_frame,
			       unsigned int order)
{
	struct reuse *d = po->hook_data;
	long id;

	if (d->done)
		return PO_HOOK_CONTINUE;
	d->done = true;
	d->victim = old_frame + 1;
	id = pattern_owner_id_at(po, d->victim);
	if (id < 0 || pattern_owner_free(po, NULL, (uint64_t)id))
		return PO_HOOK_CONTINUE;
	d->got = mm_alloc(po->pool, NULL, 0, MIGRATE_UNMOVABLE, po->owner);
	if (d->got >= 0)
		pattern_owner_track(po, (uint64_t)d->got, 0, MIGRATE_UNMOVABLE,
				    po->max_ids - 1);
	return PO_HOOK_CONTINUE;
}

static void test_reused_as_unmovable_mid_sweep(void)
{
	struct mm_pool *pool = pool_new(4, true);
	struct reuse d = { .got = -1 };
	struct pattern_owner po;
	struct mm_frame_info fi;
	uint64_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL_FATAL(n, 2 * PB_PAGES);
	/* pageblock 0 full, pageblock 1 the targets */
	for (uint64_t id = 0; id < n; id++) {
		long f = pattern_owner_frame(&po, id);

		if (f >= (long)PB_PAGES && f % 4)
			CU_ASSERT_EQUAL(pattern_owner_free(&po, NULL, id), 0);
	}
	po.hook = migrate_reuses_next;
	po.hook_data = &d;
	mm_compact_all(pool);
	/* the setup: the only free frame was the one just freed */
	CU_ASSERT_FATAL(d.done);
	CU_ASSERT_EQUAL_FATAL(d.got, (long)d.victim);

	CU_ASSERT_EQUAL(po.offered_mt[MIGRATE_UNMOVABLE], 0);
	CU_ASSERT_EQUAL(mm_frame_info(pool, d.victim, &fi), 0);
	CU_ASSERT_EQUAL(fi.state, MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(fi.mt, MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(pattern_owner_frame(&po, po.max_ids - 1), (long)d.victim);
	CU_ASSERT_EQUAL(pattern_owner_verify_all(&po), 0);
	po.hook = NULL;
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, po.max_ids), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * The three answers of mm_compact and the counters behind them. SKIPPED:
 * too little free memory, or free memory in blocks so large the failure
 * is one of memory (fragmentation index <= 0.5). COMPLETE: the scanners
 * met without a free pageblock (every pageblock holds an unmovable
 * page). SUCCESS: a free block of the order exists afterwards.
 */
static void test_compact_results(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	struct mm_counters c0, c;
	struct mm_stats st;
	uint64_t n, id;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_compact(pool, MM_MAX_ORDER), COMPACT_SKIPPED);
	c0 = snapshot(pool).counters;
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_SUCCESS);
	c = snapshot(pool).counters;
	CU_ASSERT_EQUAL(c.compact_stall, c0.compact_stall + 1);
	CU_ASSERT_EQUAL(c.compact_success, c0.compact_success + 1);
	CU_ASSERT_EQUAL(c.compact_fail, c0.compact_fail);
	CU_ASSERT_EQUAL(c.pgmigrate_success, 0);

	/* full: nothing to migrate into */
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	c0 = snapshot(pool).counters;
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_SKIPPED);
	c = snapshot(pool).counters;
	CU_ASSERT_EQUAL(c.compact_stall, c0.compact_stall + 1);
	CU_ASSERT_EQUAL(c.compact_fail, c0.compact_fail + 1);
	CU_ASSERT_EQUAL(po.migrate_calls, 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);

	/* order-8 halves, one free per pageblock: index (1 + 2) / 4 -> 0.25 */
	for (id = 0; pattern_owner_alloc(&po, NULL, 8, MIGRATE_MOVABLE, id) >= 0;)
		id++;
	CU_ASSERT_EQUAL_FATAL(id, 8);
	for (uint64_t i = 0; i < id; i++)
		if (pattern_owner_frame(&po, i) % PB_PAGES)
			CU_ASSERT_EQUAL(pattern_owner_free(&po, NULL, i), 0);
	st = snapshot(pool);
	CU_ASSERT_EQUAL_FATAL(st.nr_free[8], 4);
	CU_ASSERT(mm_fragmentation_index(&st, MM_PAGEBLOCK_ORDER) <= 0.5);
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_SKIPPED);
	CU_ASSERT_EQUAL(po.migrate_calls, 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, id), 0);
	ASSERT_POOL_WHOLE(pool);

	/* an unmovable page in every pageblock: COMPLETE, nothing gained */
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	for (unsigned int pb = 0; pb < 4; pb++)
		CU_ASSERT_EQUAL(realloc_in_place(&po, pb * PB_PAGES + 8,
						 MIGRATE_UNMOVABLE, po.owner),
				(long)(pb * PB_PAGES + 8));
	pattern_owner_thin(&po, NULL, n, 4, 0);
	c0 = snapshot(pool).counters;
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_COMPLETE);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.counters.compact_fail, c0.compact_fail + 1);
	CU_ASSERT_EQUAL(st.counters.compact_success, c0.compact_success);
	CU_ASSERT_EQUAL(free_pageblock_units(&st), 0);
	for (unsigned int pb = 0; pb < 4; pb++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, pb * PB_PAGES + 8), 0);

	/* the unmovable pages gone: SUCCESS, by migration */
	c0 = st.counters;
	CU_ASSERT_EQUAL(mm_compact(pool, MM_PAGEBLOCK_ORDER), COMPACT_SUCCESS);
	st = snapshot(pool);
	CU_ASSERT(free_pageblock_units(&st) >= 1);
	CU_ASSERT_EQUAL(st.counters.compact_success, c0.compact_success + 1);
	CU_ASSERT(st.counters.pgmigrate_success > c0.pgmigrate_success);
	ASSERT_STATS_CONSISTENT(&st);
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * Direct compaction is for costly orders only (MM_COSTLY_ORDER, Linux's
 * PAGE_ALLOC_COSTLY_ORDER): on a pool where no free block of order 2 or
 * more is left, a request of MM_COSTLY_ORDER fails without a stall, and
 * one of the next order stalls, compacts and succeeds.
 */
static void test_costly_order_boundary(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	struct mm_counters c0, c;
	uint64_t n;
	long r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	pattern_owner_thin(&po, NULL, n, 4, 0);
	mm_set_policy(pool, MM_POLICY_COMPACT);

	c0 = snapshot(pool).counters;
	CU_ASSERT_EQUAL(mm_alloc(pool, NULL, MM_COSTLY_ORDER, MIGRATE_MOVABLE,
				 MM_NO_OWNER), -ENOMEM);
	c = snapshot(pool).counters;
	CU_ASSERT_EQUAL(c.compact_stall, c0.compact_stall);
	CU_ASSERT_EQUAL(po.migrate_calls, 0);

	r = mm_alloc(pool, NULL, MM_COSTLY_ORDER + 1, MIGRATE_MOVABLE,
		     MM_NO_OWNER);
	CU_ASSERT_FATAL(r >= 0);
	c = snapshot(pool).counters;
	CU_ASSERT_EQUAL(c.compact_stall, c0.compact_stall + 1);
	CU_ASSERT_EQUAL(c.compact_success, c0.compact_success + 1);
	CU_ASSERT(po.migrations > 0);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)r), 0);
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * Targets come from MOVABLE pageblocks only: movable pages moved into an
 * UNMOVABLE pageblock would mix what grouping keeps apart. Here the top
 * pageblock, where the free scanner looks first, is UNMOVABLE and all but
 * one page free; the three below are movable and 3/4 free. A full sweep
 * must put the survivors into the movable pageblocks and nothing into the
 * unmovable one.
 */
static void test_targets_movable_only(void)
{
	struct mm_pool *pool = pool_new(8, true);
	const uint64_t top = 3 * PB_PAGES;
	struct pattern_owner po;
	struct mm_stats st;
	uint64_t n, kept;
	long u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	for (uint64_t id = 0; id < n; id++)
		if ((uint64_t)pattern_owner_frame(&po, id) >= top)
			CU_ASSERT_EQUAL(pattern_owner_free(&po, NULL, id), 0);
	/* the one free pageblock: an unmovable request claims it whole */
	u = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(u >= (long)top);
	CU_ASSERT_EQUAL_FATAL(pb_type(pool, top), MIGRATE_UNMOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);

	mm_compact_all(pool);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT(po.migrations > 0);
	CU_ASSERT(free_pageblock_units(&st) >= 1);
	CU_ASSERT_EQUAL(pb_type(pool, top), MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(po.tracked, kept);
	for (uint64_t id = 0; id < n; id++)
		if (pattern_owner_holds(&po, id))
			CU_ASSERT((uint64_t)pattern_owner_frame(&po, id) < top);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	ASSERT_OWNER_CLEAN(&po);

	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * A block on the active LRU list that is migrated stays active: its new
 * frame holds the same recently used memory, and demoting it would make
 * it the next reclaim victim. A block on an LRU is normally reclaimed
 * rather than migrated, so the owner here stops offering reclaim once its
 * blocks are on the LRU, and compaction has to migrate them.
 */
static void test_migration_keeps_active(void)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	uint64_t n, kept, touched = 0;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool,
						 PO_MIGRATE | PO_RECLAIM, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0);
	/* the survivors of the first pageblock, emptied first, are active */
	for (uint64_t id = 0; id < n; id++) {
		long f = pattern_owner_frame(&po, id);

		if (f >= 0 && (uint64_t)f < PB_PAGES) {
			mm_touch(pool, (uint64_t)f);
			touched++;
		}
	}
	st = snapshot(pool);
	CU_ASSERT_EQUAL_FATAL(st.lru_pages[MIGRATE_MOVABLE][MM_LRU_ACTIVE], touched);
	CU_ASSERT_EQUAL_FATAL(st.lru_pages[MIGRATE_MOVABLE][MM_LRU_INACTIVE],
			      kept - touched);
	po.ops.reclaim = NULL;

	mm_compact_all(pool);
	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT(po.migrations >= touched);
	CU_ASSERT_EQUAL(po.reclaim_calls, 0);
	CU_ASSERT_EQUAL(po.tracked, kept);
	for (uint64_t id = 0; id < n; id++)
		if (pattern_owner_holds(&po, id))
			CU_ASSERT((uint64_t)pattern_owner_frame(&po, id) >= PB_PAGES);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][MM_LRU_ACTIVE], touched);
	CU_ASSERT_EQUAL(st.lru_pages[MIGRATE_MOVABLE][MM_LRU_INACTIVE],
			kept - touched);
	ASSERT_OWNER_CLEAN(&po);

	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * Skip hints: a pageblock the free scanner found without a free page is
 * marked, and direct compaction does not scan it again until the hints
 * reset, even when the migrate scanner gets there (past the point where
 * the scanners met, looking for what reclaim alone can empty). A sweep
 * of the whole pool ignores the hints.
 *
 * Eight pageblocks: 0 movable and 3/4 free, 1-6 the same but each with an
 * unmovable page (never emptied, 6 gives the targets), 7 full of pages an
 * owner can reclaim. Direct compaction for order 10 empties pageblock 0,
 * finds 1-6 hopeless, and must leave 7, marked by the free scanner, alone.
 */
static void test_skip_hints(void)
{
	struct mm_pool *pool = pool_new(16, true);
	const uint64_t top = 7 * PB_PAGES;
	struct pattern_owner pm, pr;
	struct mm_counters c0, c;
	uint64_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&pm, pool, PO_MIGRATE, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&pr, pool, PO_RECLAIM, 0), 0);
	n = pattern_owner_fill(&pm, NULL, MIGRATE_MOVABLE);
	for (uint64_t id = 0; id < n; id++)
		if ((uint64_t)pattern_owner_frame(&pm, id) >= top)
			CU_ASSERT_EQUAL(pattern_owner_free(&pm, NULL, id), 0);
	for (uint64_t id = 0; id < PB_PAGES; id++)
		CU_ASSERT_FATAL(pattern_owner_alloc(&pr, NULL, 0, MIGRATE_MOVABLE,
						    id) >= (long)top);
	for (unsigned int pb = 1; pb < 7; pb++)
		CU_ASSERT_EQUAL_FATAL(realloc_in_place(&pm, pb * PB_PAGES + 8,
						       MIGRATE_UNMOVABLE,
						       MM_NO_OWNER),
				      (long)(pb * PB_PAGES + 8));
	pattern_owner_thin(&pm, NULL, n, 4, 0);

	c0 = snapshot(pool).counters;
	CU_ASSERT_EQUAL(mm_compact(pool, MM_MAX_ORDER - 1), COMPACT_COMPLETE);
	c = snapshot(pool).counters;
	CU_ASSERT(pm.migrations > 0);
	/* pageblock 0 emptied; 7 looked at by the free scanner only */
	CU_ASSERT_EQUAL(c.compact_migrate_scanned - c0.compact_migrate_scanned,
			PB_PAGES);
	CU_ASSERT_EQUAL(c.compact_free_scanned - c0.compact_free_scanned,
			2 * PB_PAGES);
	CU_ASSERT_EQUAL(pr.reclaim_calls, 0);
	CU_ASSERT_EQUAL(pr.tracked, PB_PAGES);

	/* a whole-pool sweep resets the hints first: 7 is emptied now */
	mm_compact_all(pool);
	CU_ASSERT_EQUAL(pr.reclaims, PB_PAGES);
	CU_ASSERT_EQUAL(pr.tracked, 0);
	ASSERT_OWNER_CLEAN(&pm);
	ASSERT_OWNER_CLEAN(&pr);

	for (unsigned int pb = 1; pb < 7; pb++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, pb * PB_PAGES + 8), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&pm, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&pm);
	pattern_owner_fini(&pr);
	mm_pool_destroy(pool);
}

/*
 * MM_POLICY_CLAIM_BLOCK: in a fragmented pool an unmovable request would
 * land in some movable pageblock; with the policy, compaction frees a
 * whole pageblock first and the request claims it for UNMOVABLE.
 */
static void claim_block_run(bool policy, struct mm_stats *st,
			    enum mm_migratetype *pb_mt, long *u2_same_pb)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	uint64_t n;
	long u, u2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	pattern_owner_thin(&po, NULL, n, 4, 0);
	mm_set_policy(pool, policy ? MM_POLICY_CLAIM_BLOCK : 0);
	u = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, MM_NO_OWNER);
	u2 = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(u >= 0 && u2 >= 0);
	*pb_mt = pb_type(pool, (uint64_t)u);
	*u2_same_pb = u2 / (long)PB_PAGES == u / (long)PB_PAGES;
	*st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(st);
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u2), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_claim_block(void)
{
	enum mm_migratetype mt;
	struct mm_stats st;
	long same;

	claim_block_run(false, &st, &mt, &same);
	CU_ASSERT_EQUAL(st.counters.claim_block, 0);
	CU_ASSERT_EQUAL(mt, MIGRATE_MOVABLE);
	CU_ASSERT(st.mixed_pageblocks >= 1);

	claim_block_run(true, &st, &mt, &same);
	CU_ASSERT_EQUAL(st.counters.claim_block, 1);
	CU_ASSERT_EQUAL(mt, MIGRATE_UNMOVABLE);
	CU_ASSERT(same);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_UNMOVABLE], 1);
}

/*
 * MM_POLICY_CLAIM_WHOLE: a free order-5 hole in a pageblock otherwise full
 * of movable pages is no pageblock to claim. The seed converts that
 * pageblock for unmovable (its movable pages stay: a mixed block that no
 * later free makes whole); the policy has compaction empty a pageblock
 * and claims that one, so no pageblock mixes.
 */
static void claim_whole_run(unsigned int policy, struct mm_stats *st,
			    long *u_out)
{
	struct mm_pool *pool = pool_new(8, true);
	struct pattern_owner po;
	uint64_t n, hole = 3 * PB_PAGES;
	long u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	pattern_owner_thin(&po, NULL, n, 4, 0);
	for (uint64_t id = 0; id < n; id++) {
		long f = pattern_owner_frame(&po, id);

		if (f >= (long)hole && f < (long)hole + 32)
			CU_ASSERT_EQUAL(pattern_owner_free(&po, NULL, id), 0);
	}
	*st = snapshot(pool);
	CU_ASSERT_EQUAL_FATAL(st->nr_free[5], 1);
	CU_ASSERT_EQUAL_FATAL(free_pageblock_units(st), 0);
	mm_set_policy(pool, policy);
	u = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, MM_NO_OWNER);
	CU_ASSERT_FATAL(u >= 0);
	*u_out = u;
	*st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(st);
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u), 0);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

static void test_claim_whole_block(void)
{
	struct mm_stats st;
	long u;

	claim_whole_run(MM_POLICY_CLAIM_BLOCK, &st, &u);
	CU_ASSERT_EQUAL(st.counters.claim_block, 0);
	CU_ASSERT_EQUAL((uint64_t)u / PB_PAGES, 3);
	CU_ASSERT(st.mixed_pageblocks >= 1);

	claim_whole_run(MM_POLICY_CLAIM_BLOCK | MM_POLICY_CLAIM_WHOLE, &st, &u);
	CU_ASSERT_EQUAL(st.counters.claim_block, 1);
	CU_ASSERT_EQUAL(st.mixed_pageblocks, 0);
	CU_ASSERT_EQUAL(st.pageblocks_type[MIGRATE_UNMOVABLE], 1);
}

/*
 * A per-thread refill of unmovable frames under MM_POLICY_CLAIM_WHOLE
 * takes what the unmovable lists hold and no more: pageblock 0 is
 * unmovable with 3 free frames, the movable pageblocks have 8 free. The
 * seed fills its batch of 31 from the movable pageblocks as well, one
 * unmovable frame in each of 8 holes.
 */
static unsigned int refill_run(unsigned int policy, long *first)
{
	struct mm_pool *pool = pool_new(8, true);
	uint64_t frames = 8 * FRAMES_PER_MIB, nr_m = 0;
	long *u = calloc(frames, sizeof(*u)), *m = calloc(frames, sizeof(*m));
	struct mm_pcp *pcp = NULL;
	unsigned int count;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_FATAL(u && m);
	for (uint64_t i = 0; i < frames; i++) {
		u[i] = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE, MM_NO_OWNER);
		CU_ASSERT_FATAL(u[i] >= 0);
	}
	for (uint64_t i = 0; i < frames; i++) {
		if (u[i] >= (long)PB_PAGES) {
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u[i]), 0);
			u[i] = -1;
		}
	}
	while ((m[nr_m] = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE, MM_NO_OWNER)) >= 0)
		CU_ASSERT_FATAL(m[nr_m++] >= (long)PB_PAGES);
	CU_ASSERT_EQUAL_FATAL(nr_m, frames - PB_PAGES);
	for (uint64_t i = 0, freed = 0; i < frames && freed < 3; i++) {
		if (u[i] >= 0 && i % 100 == 0) {
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u[i]), 0);
			u[i] = -1;
			freed++;
		}
	}
	for (uint64_t i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)m[i * 150]), 0);
		m[i * 150] = -1;
	}
	mm_set_policy(pool, policy);
	CU_ASSERT_EQUAL_FATAL(mm_pcp_create(pool, &pcp), 0);
	*first = mm_alloc(pool, pcp, 0, MIGRATE_UNMOVABLE, MM_NO_OWNER);
	count = mm_pcp_count(pcp);
	CU_ASSERT(*first >= 0);
	if (*first >= 0)
		CU_ASSERT_EQUAL(mm_free(pool, pcp, (uint64_t)*first), 0);
	mm_pcp_destroy(pcp);
	for (uint64_t i = 0; i < frames; i++) {
		if (u[i] >= 0)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u[i]), 0);
		if (i < nr_m && m[i] >= 0)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)m[i]), 0);
	}
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
	free(u);
	free(m);
	return count;
}

static void test_claim_whole_refill(void)
{
	long first;

	CU_ASSERT_EQUAL(refill_run(MM_POLICY_CLAIM_BLOCK, &first), 3 + 8 - 1);
	CU_ASSERT_EQUAL(refill_run(MM_POLICY_CLAIM_BLOCK | MM_POLICY_CLAIM_WHOLE,
				   &first), 3 - 1);
	CU_ASSERT_EQUAL(first / (long)PB_PAGES, 0);
}

/*
 * Nothing in the pool can move (no owner has callbacks), so every claim's
 * compaction fails. The seed compacts again for every unmovable request
 * its lists cannot serve; MM_POLICY_CLAIM_WHOLE backs off as Linux's
 * compaction deferral does, doubling the number of claims it skips.
 */
static uint64_t claim_stalls(unsigned int policy, uint64_t *deferred)
{
	struct mm_pool *pool = pool_new(8, true);
	uint64_t frames = 8 * FRAMES_PER_MIB;
	long *f = calloc(frames, sizeof(*f)), u[64];
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (uint64_t i = 0; i < frames; i++)
		CU_ASSERT_FATAL((f[i] = mm_alloc(pool, NULL, 0, MIGRATE_MOVABLE,
						 MM_NO_OWNER)) >= 0);
	for (uint64_t i = 0; i < frames; i++)
		if (f[i] % 4)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f[i]), 0);
	mm_set_policy(pool, policy);
	for (int i = 0; i < 64; i++)
		CU_ASSERT_FATAL((u[i] = mm_alloc(pool, NULL, 0, MIGRATE_UNMOVABLE,
						 MM_NO_OWNER)) >= 0);
	st = snapshot(pool);
	*deferred = st.counters.claim_deferred;
	CU_ASSERT_EQUAL(st.counters.claim_block, 0);
	for (int i = 0; i < 64; i++)
		CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)u[i]), 0);
	for (uint64_t i = 0; i < frames; i++)
		if (f[i] % 4 == 0)
			CU_ASSERT_EQUAL(mm_free(pool, NULL, (uint64_t)f[i]), 0);
	ASSERT_POOL_WHOLE(pool);
	mm_pool_destroy(pool);
	free(f);
	return st.counters.compact_stall;
}

static void test_claim_deferred(void)
{
	uint64_t deferred, seed, whole;

	seed = claim_stalls(MM_POLICY_CLAIM_BLOCK, &deferred);
	CU_ASSERT(seed >= 24);
	CU_ASSERT_EQUAL(deferred, 0);
	whole = claim_stalls(MM_POLICY_CLAIM_BLOCK | MM_POLICY_CLAIM_WHOLE, &deferred);
	CU_ASSERT(whole >= 1 && whole <= 8);
	CU_ASSERT(deferred > 0);
}

/*
 * Compaction sweeps in one thread while another allocates and frees
 * orders 0..3 through its own pcp, as one owner: no frame may be handed
 * out twice (the owner's table rejects a block over one it holds), no
 * byte may change, no UNMOVABLE block may be offered.
 */
#define CHURN_SLOTS	1024

struct churn {
	struct mm_pool *pool;
	struct pattern_owner *po;
	atomic_bool stop;
	uint64_t seed;
	uint64_t allocs, frees, enomem, alloc_errors, free_errors, overlaps;
	uint64_t sweeps;
	int pcp_rc;
};

static void *compactor_main(void *arg)
{
	struct churn *c = arg;

	while (!atomic_load(&c->stop)) {
		mm_compact_all(c->pool);
		mm_compact(c->pool, MM_PAGEBLOCK_ORDER);
		c->sweeps++;
	}
	return NULL;
}

static void *churner_main(void *arg)
{
	struct churn *c = arg;
	uint64_t held[CHURN_SLOTS], free_ids[CHURN_SLOTS];
	size_t nr_held = 0, nr_free = CHURN_SLOTS;
	struct mm_pcp *pcp = NULL;

	c->pcp_rc = mm_pcp_create(c->pool, &pcp);
	if (c->pcp_rc)
		return NULL;
	for (size_t i = 0; i < CHURN_SLOTS; i++)
		free_ids[i] = CHURN_SLOTS - 1 - i;
	while (!atomic_load(&c->stop)) {
		uint64_t rnd = rng_next(&c->seed);

		if (nr_free && (!nr_held || rnd % 100 < 55)) {
			unsigned int order = (rnd >> 8) & 1 ? 0 : (rnd >> 9) & 3;
			enum mm_migratetype mt = (rnd >> 16) % 8 ?
				MIGRATE_MOVABLE : MIGRATE_UNMOVABLE;
			uint64_t id = free_ids[nr_free - 1];
			long r = mm_alloc(c->pool, pcp, order, mt, c->po->owner);

			if (r == -ENOMEM) {
				c->enomem++;
			} else if (r < 0) {
				c->alloc_errors++;
			} else if (!pattern_owner_track(c->po, (uint64_t)r, order,
							mt, id)) {
				/* handed out over a block we hold */
				c->overlaps++;
			} else {
				held[nr_held++] = id;
				nr_free--;
				c->allocs++;
			}
			continue;
		}
		if (nr_held) {
			size_t i = (rnd >> 32) % nr_held;

			if (pattern_owner_free(c->po, pcp, held[i]))
				c->free_errors++;
			free_ids[nr_free++] = held[i];
			held[i] = held[--nr_held];
			c->frees++;
		}
	}
	while (nr_held)
		if (pattern_owner_free(c->po, pcp, held[--nr_held]))
			c->free_errors++;
	mm_pcp_destroy(pcp);
	return NULL;
}

static void test_concurrent_compaction(void)
{
	struct mm_pool *pool = pool_new(16, true);
	struct churn c = { .seed = 0x2545f4914f6cdd1dULL };
	struct pattern_owner po;
	pthread_t compactor, churner;
	struct mm_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE,
						 CHURN_SLOTS), 0);
	c.pool = pool;
	c.po = &po;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&churner, NULL, churner_main, &c), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&compactor, NULL, compactor_main,
					     &c), 0);
	usleep(1200 * 1000);
	atomic_store(&c.stop, true);
	CU_ASSERT_EQUAL(pthread_join(churner, NULL), 0);
	CU_ASSERT_EQUAL(pthread_join(compactor, NULL), 0);

	CU_ASSERT_EQUAL(c.pcp_rc, 0);
	CU_ASSERT_EQUAL(c.overlaps, 0);
	CU_ASSERT_EQUAL(c.alloc_errors, 0);
	CU_ASSERT_EQUAL(c.free_errors, 0);
	CU_ASSERT(c.allocs > 1000);
	CU_ASSERT(c.sweeps > 0);
	CU_ASSERT(po.migrations > 0);
	CU_ASSERT_EQUAL(po.tracked, 0);
	ASSERT_OWNER_CLEAN(&po);
	st = snapshot(pool);
	CU_ASSERT_EQUAL(st.counters.pgmigrate_success, po.migrated_pages);
	CU_ASSERT_EQUAL(st.counters.double_frees, 0);
	CU_ASSERT_EQUAL(st.counters.bad_frees, 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

/*
 * kcompactd on a fragmented pool brings the fragmentation score from
 * ~100 down to its target (with its +10 slack) within a couple of
 * seconds, and stops when told; one per pool.
 */
static void test_kcompactd(void)
{
	struct mm_pool *pool = pool_new(32, true);
	struct pattern_owner po;
	double score, t0;
	struct mm_stats st;
	uint64_t n, kept;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	CU_ASSERT_EQUAL(mm_kcompactd_start(pool, 101, 20), -EINVAL);
	CU_ASSERT_EQUAL(mm_kcompactd_start(pool, 10, 0), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(pattern_owner_init(&po, pool, PO_MIGRATE, 0), 0);
	n = pattern_owner_fill(&po, NULL, MIGRATE_MOVABLE);
	kept = pattern_owner_thin(&po, NULL, n, 4, 0x6b63);
	st = snapshot(pool);
	CU_ASSERT_FATAL(mm_fragmentation_score(&st) > 90);

	CU_ASSERT_EQUAL_FATAL(mm_kcompactd_start(pool, 10, 20), 0);
	CU_ASSERT_EQUAL(mm_kcompactd_start(pool, 10, 20), -EINVAL);
	t0 = now_s();
	do {
		usleep(10 * 1000);
		st = snapshot(pool);
		score = mm_fragmentation_score(&st);
	} while (score > 20 && now_s() - t0 < 2.0);
	mm_kcompactd_stop(pool);
	CU_ASSERT(score <= 20);
	CU_ASSERT(st.counters.kcompactd_wake > 0);
	CU_ASSERT(st.counters.pgmigrate_success > 0);
	/* kcompactd is not direct compaction */
	CU_ASSERT_EQUAL(st.counters.compact_stall, 0);

	/* stopped: it can start again, and stopping twice is harmless */
	CU_ASSERT_EQUAL(mm_kcompactd_start(pool, 10, 20), 0);
	mm_kcompactd_stop(pool);
	mm_kcompactd_stop(pool);

	st = snapshot(pool);
	ASSERT_STATS_CONSISTENT(&st);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], kept);
	CU_ASSERT_EQUAL(po.tracked, kept);
	ASSERT_OWNER_CLEAN(&po);
	CU_ASSERT_EQUAL(pattern_owner_free_all(&po, NULL, n), 0);
	ASSERT_POOL_WHOLE(pool);
	pattern_owner_fini(&po);
	mm_pool_destroy(pool);
}

int register_compaction_suite(void)
{
	static const struct suite_test tests[] = {
		{ "Gupta: compact_all", test_gupta_compact_all },
		{ "nowait allocation never calls back", test_nowait_never_calls_back },
		{ "direct compaction", test_direct_compaction },
		{ "never moved", test_never_moved },
		{ "migrate always fails", test_migrate_always_fails },
		{ "migrate fails every third", test_migrate_fails_every_third },
		{ "free old inside migrate", test_free_old_inside_migrate },
		{ "free new after migrate", test_free_new_after_migrate },
		{ "reused as unmovable mid-sweep", test_reused_as_unmovable_mid_sweep },
		{ "compact results", test_compact_results },
		{ "costly order boundary", test_costly_order_boundary },
		{ "targets from movable pageblocks only", test_targets_movable_only },
		{ "migration keeps a block active", test_migration_keeps_active },
		{ "skip hints", test_skip_hints },
		{ "claim block", test_claim_block },
		{ "claim whole: not a hole", test_claim_whole_block },
		{ "claim whole: refill stops", test_claim_whole_refill },
		{ "claim whole: deferred", test_claim_deferred },
		{ "concurrent compaction", test_concurrent_compaction },
		{ "kcompactd", test_kcompactd },
	};

	return SUITE("compaction", tests);
}
