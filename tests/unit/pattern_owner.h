/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test owner that proves migration and reclaim right by content: every
 * 8-byte word of a tracked block holds a value derived from (allocation
 * id, page of the block, word of the page), written through a MAP_SHARED
 * mapping of the pool memfd. A block the allocator moves must arrive with
 * its words intact; a block it offers must be one the owner holds, of the
 * type and pin state the test gave it.
 *
 * The owner keeps its own table (head frame -> allocation) under its own
 * mutex, so it does not have to trust the allocator's view of what it
 * owns. Tests address blocks by allocation id: the frame changes when a
 * block is migrated.
 *
 * Threads: any thread may call the functions below; counters are read
 * after the threads that drive the pool have stopped (or under po->lock).
 */
#ifndef GPMM_TESTS_UNIT_PATTERN_OWNER_H
#define GPMM_TESTS_UNIT_PATTERN_OWNER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mm/mm.h"

/* Which operations the owner registers. */
#define PO_MIGRATE	0x1
#define PO_RECLAIM	0x2

enum po_call { PO_CALL_MIGRATE, PO_CALL_RECLAIM };

struct pattern_owner;

/*
 * Runs at the start of a callback, before the owner looks at the block
 * and without po->lock held, so it may allocate, free, pin or unregister
 * through this owner. @new_frame is UINT64_MAX for a reclaim. Return
 * PO_HOOK_CONTINUE for the normal callback, anything else is returned to
 * the allocator as is.
 */
#define PO_HOOK_CONTINUE	1
typedef int (*po_hook_fn)(struct pattern_owner *po, enum po_call call,
			  uint64_t old_frame, uint64_t new_frame,
			  unsigned int order);
/* Runs at the end of a migrate, without po->lock, with its result. */
typedef int (*po_after_fn)(struct pattern_owner *po, uint64_t old_frame,
			   uint64_t new_frame, unsigned int order, int ret);

struct po_block {
	uint64_t id;		/* allocation id + 1; 0: nothing tracked here */
	uint8_t order;
	uint8_t mt;		/* the type the test allocated it with */
	bool pinned;
};

struct pattern_owner {
	struct mm_pool *pool;
	uint32_t owner;		/* from mm_owner_register */
	struct mm_owner_ops ops;
	uint8_t *mem;		/* the whole pool memfd */
	uint64_t frames;
	uint64_t max_ids;

	pthread_mutex_t lock;	/* guards everything below */
	struct po_block *blocks;	/* by head frame */
	uint32_t *cover;	/* by frame: head + 1 of the tracked block over it */
	uint64_t *where;	/* by allocation id: head frame + 1 */
	uint64_t tracked;	/* blocks */

	/* knobs: set before the pool calls back */
	unsigned int migrate_fail_every;	/* 1: every call, 3: every 3rd */
	unsigned int reclaim_fail_every;
	unsigned int delay_us;			/* a slow owner */
	po_hook_fn hook;
	po_after_fn after;
	void *hook_data;

	/* what the allocator did to us */
	uint64_t migrate_calls, migrations, migrated_pages, migrate_injected;
	uint64_t reclaim_calls, reclaims, reclaimed_pages, reclaim_injected;
	uint64_t corrupted;	/* bytes found wrong in callbacks and untracks */
	uint64_t unknown;	/* offered a block the owner does not hold */
	uint64_t foreign;	/* mm_frame_info disagreed about the block */
	uint64_t overlaps;	/* a block handed out over one we hold */
	uint64_t offered_mt[MIGRATE_TYPES];	/* by the type it was allocated */
	uint64_t offered_pinned;
	uint64_t pin_eagain;	/* mm_pin on the moving block said -EAGAIN */
	uint64_t pinned_while_moving;	/* ... or succeeded */
	atomic_bool unregistered;
	atomic_ulong calls_after_unregister;
	atomic_int in_flight;		/* callbacks running now */
	int in_flight_at_unregister;	/* when mm_owner_unregister returned */
};

/* Map the pool, register with @ops_mask (PO_*). max_ids 0: 4 per frame. */
int pattern_owner_init(struct pattern_owner *po, struct mm_pool *pool,
		       unsigned int ops_mask, uint64_t max_ids);
/* Unregister (if still registered), unmap, free the tables. */
void pattern_owner_fini(struct pattern_owner *po);
void pattern_owner_unregister(struct pattern_owner *po);

/*
 * The test allocated @frame (2^@order frames, type @mt) as allocation
 * @id: write its pattern and remember it. False (and po->overlaps
 * counted) when a frame of it is already held: a frame handed out twice.
 */
bool pattern_owner_track(struct pattern_owner *po, uint64_t frame,
			 unsigned int order, enum mm_migratetype mt,
			 uint64_t id);
/* mm_alloc through this owner, then track; the mm_alloc result. */
long pattern_owner_alloc(struct pattern_owner *po, struct mm_pcp *pcp,
			 unsigned int order, enum mm_migratetype mt,
			 uint64_t id);
/*
 * Check and forget allocation @id before the test frees it; its frame
 * (where it is now), or -1 when the owner does not hold it (reclaimed).
 * Once forgotten, the owner refuses to move it, so the frame stays valid
 * until the test frees it.
 */
long pattern_owner_untrack(struct pattern_owner *po, uint64_t id);
/* untrack + mm_free: the mm_free result, or -ENOENT when not held. */
int pattern_owner_free(struct pattern_owner *po, struct mm_pcp *pcp,
		       uint64_t id);
/* Where allocation @id is now, -1 when not held. */
long pattern_owner_frame(struct pattern_owner *po, uint64_t id);
/* mm_pin/mm_unpin of allocation @id, remembered in the table. */
int pattern_owner_pin(struct pattern_owner *po, uint64_t id);
int pattern_owner_unpin(struct pattern_owner *po, uint64_t id);
bool pattern_owner_holds(struct pattern_owner *po, uint64_t id);
/* The allocation id held at head @frame, -1 when none (for hooks). */
long pattern_owner_id_at(struct pattern_owner *po, uint64_t frame);

/* Re-check every tracked block; the number of corrupted bytes. */
uint64_t pattern_owner_verify_all(struct pattern_owner *po);

/* The pattern alone, for blocks no owner tracks (MM_NO_OWNER). */
void pattern_fill(struct pattern_owner *po, uint64_t frame,
		  unsigned int order, uint64_t id);
uint64_t pattern_check(struct pattern_owner *po, uint64_t frame,
		       unsigned int order, uint64_t id);

/*
 * Fragmenting a pool the same way in every suite: fill it with order-0
 * allocations of @mt (ids 0, 1, ...; returns how many), then free all
 * but the frames with frame % @keep_every == 0, or, with @seed != 0, a
 * seeded random 1 in @keep_every. Returns the number kept.
 */
uint64_t pattern_owner_fill(struct pattern_owner *po, struct mm_pcp *pcp,
			    enum mm_migratetype mt);
uint64_t pattern_owner_thin(struct pattern_owner *po, struct mm_pcp *pcp,
			    uint64_t nr_ids, unsigned int keep_every,
			    uint64_t seed);
/* Free every block still held (ids < @nr_ids); the number of mm_free errors. */
uint64_t pattern_owner_free_all(struct pattern_owner *po, struct mm_pcp *pcp,
				uint64_t nr_ids);

/* Free pageblock-sized units in the buddy lists (order >= 9 blocks). */
uint64_t free_pageblock_units(const struct mm_stats *st);

#endif /* GPMM_TESTS_UNIT_PATTERN_OWNER_H */
