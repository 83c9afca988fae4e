// SPDX-License-Identifier: GPL-2.0
/*
 * Owners of allocations, pins, and the LRU lists that reclaim walks.
 *
 * Only blocks whose owner can reclaim them sit on an LRU: one list pair
 * (inactive, active) per migratetype. New blocks start inactive; a touch
 * promotes them; reclaim takes from the inactive tail and, when the
 * inactive list runs short, ages the active tail down, as Linux's
 * two-list LRU does.
 */
#include <errno.h>
#include <stdlib.h>

#include "mm/internal.h"

static void __retire_slot(struct mm_pool *pool, uint32_t slot)
{
	pool->owners[slot - 1].next_retired = 0;
	if (pool->retired_tail)
		pool->owners[pool->retired_tail - 1].next_retired = slot;
	else
		pool->retired_head = slot;
	pool->retired_tail = slot;
}

/*
 * The slot a new owner takes: the one retired longest ago (its old ids
 * have had the most time to die out), else one never used. Its
 * generation moves on, so the id differs from every one the slot had.
 * A slot whose old owner still holds owned pageblocks (a block being
 * moved is freed when its move ends) waits at the back of the queue.
 */
static uint32_t __take_slot(struct mm_pool *pool, uint32_t *gen)
{
	for (uint32_t tries = pool->nr_owners; pool->retired_head && tries; tries--) {
		uint32_t slot = pool->retired_head;
		struct mm_owner *o = &pool->owners[slot - 1];

		pool->retired_head = o->next_retired;
		if (!pool->retired_head)
			pool->retired_tail = 0;
		if (!__owned_slot_free(pool, slot)) {
			__retire_slot(pool, slot);
			continue;
		}
		*gen = ((o->id >> MM_OWNER_SLOT_BITS) + 1) & MM_OWNER_SLOT_MASK;
		return slot;
	}
	if (pool->nr_owners == MM_MAX_OWNERS)
		return 0;
	*gen = 0;
	return pool->nr_owners + 1;
}

int mm_owner_register(struct mm_pool *pool, const struct mm_owner_ops *ops,
		      void *priv, uint32_t *id)
{
	uint32_t slot, gen;
	struct mm_owner *o;

	if (!ops)
		return -EINVAL;
	pthread_rwlock_wrlock(&pool->owners_lock);
	if (!pool->owners)
		pool->owners = calloc(MM_MAX_OWNERS, sizeof(*pool->owners));
	slot = pool->owners ? __take_slot(pool, &gen) : 0;
	if (!slot) {
		pthread_rwlock_unlock(&pool->owners_lock);
		return pool->owners ? -ENOSPC : -ENOMEM;
	}
	o = &pool->owners[slot - 1];
	if (__owned_register(pool, gen << MM_OWNER_SLOT_BITS | slot)) {
		if (slot <= pool->nr_owners)
			__retire_slot(pool, slot);
		pthread_rwlock_unlock(&pool->owners_lock);
		return -ENOMEM;
	}
	o->ops = ops;
	o->priv = priv;
	o->next_retired = 0;
	__atomic_store_n(&o->id, gen << MM_OWNER_SLOT_BITS | slot, __ATOMIC_RELAXED);
	/* ops and priv are seen by whoever sees the owner live */
	__atomic_store_n(&o->live, true, __ATOMIC_RELEASE);
	if (slot > pool->nr_owners)
		__atomic_store_n(&pool->nr_owners, slot, __ATOMIC_RELEASE);
	*id = o->id;
	pthread_rwlock_unlock(&pool->owners_lock);
	return 0;
}

/*
 * The registry's entry of a live @id, or NULL (no callbacks); lock-free
 * (see mm_pool). Callers about to call one hold owners_lock (read), which
 * keeps a live owner live until they are done.
 */
struct mm_owner *__owner_of(struct mm_pool *pool, uint32_t id)
{
	uint32_t slot = id & MM_OWNER_SLOT_MASK;
	struct mm_owner *o;

	if (slot < 1 || slot > __atomic_load_n(&pool->nr_owners, __ATOMIC_ACQUIRE))
		return NULL;
	o = &pool->owners[slot - 1];
	if (__atomic_load_n(&o->id, __ATOMIC_RELAXED) != id ||
	    !__atomic_load_n(&o->live, __ATOMIC_ACQUIRE))
		return NULL;
	return o;
}

void mm_owner_unregister(struct mm_pool *pool, uint32_t id)
{
	struct mm_owner *o;
	uint32_t slot = id & MM_OWNER_SLOT_MASK;

	pthread_rwlock_wrlock(&pool->owners_lock);
	o = __owner_of(pool, id);
	if (o) {
		__atomic_store_n(&o->live, false, __ATOMIC_RELAXED);
		__retire_slot(pool, slot);
	}
	pthread_rwlock_unlock(&pool->owners_lock);
}

/*
 * Does pageblock @pb begin with a block of its own? Not when a block
 * larger than a pageblock covers it from an earlier one: that block is
 * counted (or freed) from the pageblock its head is in.
 */
static bool __heads_in(struct mm_pool *pool, uint64_t pb)
{
	uint64_t head = __block_head(pool, pb << MM_PAGEBLOCK_ORDER);

	return head == NIL || head >= pb << MM_PAGEBLOCK_ORDER;
}

/* An allocation of @id's, and not one it freed already while it was being moved. */
static bool __held_by(const struct mm_frame *f, uint32_t id)
{
	return frame_state(f) == MM_FRAME_ALLOC && frame_owner(f) == id &&
	       !(frame_flags(f) & F_FREED);
}

/* What to do with each block an owner holds; the pages it counts. */
typedef uint64_t (*held_fn)(struct mm_pool *pool, uint64_t pfn);

/* The next block is found before @fn may free (and merge away) this one. */
static uint64_t __walk_held(struct mm_pool *pool, uint32_t id, uint64_t pfn, uint64_t end,
			    held_fn fn)
{
	uint64_t pages = 0;

	while (pfn < end) {
		uint64_t next = next_block(pool, pfn);

		if (__held_by(&pool->frames[pfn], id))
			pages += fn(pool, pfn);
		pfn = next;
	}
	return pages;
}

/*
 * Every block @id holds. With pageblocks owned whole they are all in its
 * own pageblocks: a walk of those (listed first, as frees may give them
 * back) costs what the owner holds, not the pool; without a list (or
 * memory for it), a walk of the pool.
 */
static uint64_t __for_each_held(struct mm_pool *pool, uint32_t id, held_fn fn)
{
	struct owned_blocks *ob = __owned_of(pool, id);
	uint64_t pages = 0, n = 0;
	uint32_t *pbs = NULL;

	if (ob && ob->nr_pageblocks)
		pbs = malloc(ob->nr_pageblocks * sizeof(*pbs));
	if (!ob || (ob->nr_pageblocks && !pbs))
		return __walk_held(pool, id, 0, pool->nr_frames, fn);
	for (uint32_t pb = ob->first_pb; pbs && pb != NIL; pb = pool->pb_next[pb])
		pbs[n++] = pb;
	for (uint64_t i = 0; i < n; i++)
		if (__heads_in(pool, pbs[i]))
			pages += __walk_held(pool, id, (uint64_t)pbs[i] << MM_PAGEBLOCK_ORDER,
					     ((uint64_t)pbs[i] + 1) << MM_PAGEBLOCK_ORDER, fn);
	free(pbs);
	return pages;
}

/*
 * A dead owner's pins were its own: they go with it. Its blocks being
 * moved carry F_FREED and are freed where the move ends, as any free
 * during a move is.
 */
static uint64_t __free_held(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];
	unsigned int order = f->order;

	frame_clear_flags(f, F_PINNED);
	f->pins = 0;
	pool->counters.frees++;
	if (frame_flags(f) & F_ISOLATED)
		frame_set_flags(f, F_FREED);
	else
		__free_allocated(pool, pfn);
	return 1UL << order;
}

static uint64_t __count_held(struct mm_pool *pool, uint64_t pfn)
{
	return 1UL << pool->frames[pfn].order;
}

uint64_t mm_free_owner(struct mm_pool *pool, uint32_t id)
{
	uint64_t pages;

	pthread_mutex_lock(&pool->lock);
	pages = __for_each_held(pool, id, __free_held);
	pool_unlock(pool);
	return pages;
}

uint64_t mm_owner_pages(struct mm_pool *pool, uint32_t id)
{
	uint64_t pages;

	pthread_mutex_lock(&pool->lock);
	pages = __for_each_held(pool, id, __count_held);
	pool_unlock(pool);
	return pages;
}

/*
 * Can the owner give its blocks back? Lock-free: the allocation path asks
 * to put a block on an LRU, compaction and lumpy reclaim to choose reclaim
 * over migration. The answer holds while owners_lock is read-held, which
 * whoever then calls back holds.
 */
bool owner_has_reclaim(struct mm_pool *pool, uint32_t id)
{
	const struct mm_owner *o = __owner_of(pool, id);

	return o && o->ops->reclaim;
}

/* Can it move them? Under owners_lock, as above. */
bool owner_has_migrate(struct mm_pool *pool, uint32_t id)
{
	const struct mm_owner *o = __owner_of(pool, id);

	return o && o->ops->migrate;
}

/* The same for compaction, which asks only owners whose reclaim writes nothing. */
bool owner_reclaims_cheaply(struct mm_pool *pool, uint32_t id)
{
	const struct mm_owner *o = __owner_of(pool, id);

	return o && o->ops->reclaim && !o->ops->reclaim_writes;
}

static struct frame_list *lru_of(struct mm_pool *pool, const struct mm_frame *f)
{
	return &pool->lru[f->mt][frame_flags(f) & F_ACTIVE ? MM_LRU_ACTIVE :
						       MM_LRU_INACTIVE];
}

void __lru_add(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	frame_clear_flags(f, F_ACTIVE);
	frame_set_flags(f, F_LRU);
	list_add(pool, lru_of(pool, f), pfn);
}

void __lru_del(struct mm_pool *pool, uint64_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	if (!(frame_flags(f) & F_LRU))
		return;
	list_del(pool, lru_of(pool, f), pfn);
	frame_clear_flags(f, F_LRU | F_ACTIVE);
}

/*
 * A caller that knows which blocks it will free next (a trace replay) can
 * overlap their metadata's cache misses with its work.
 */
void mm_prefetch(struct mm_pool *pool, uint64_t frame)
{
	if (frame < pool->nr_frames)
		__builtin_prefetch(&pool->frames[frame], 1);
}

/*
 * Freeing an allocated block unlinks it from its LRU list, writing both
 * neighbours: two more misses a free, as many as the block's own. The
 * links are only read here (a racing change makes a useless hint).
 */
void mm_prefetch_links(struct mm_pool *pool, uint64_t frame)
{
	const struct mm_frame *f;
	uint32_t prev, next;

	if (frame >= pool->nr_frames)
		return;
	f = &pool->frames[frame];
	prev = __atomic_load_n(&f->prev, __ATOMIC_RELAXED);
	next = __atomic_load_n(&f->next, __ATOMIC_RELAXED);
	if (prev < pool->nr_frames)
		__builtin_prefetch(&pool->frames[prev], 1);
	if (next < pool->nr_frames)
		__builtin_prefetch(&pool->frames[next], 1);
}

void mm_touch(struct mm_pool *pool, uint64_t frame)
{
	struct mm_frame *f;

	if (frame >= pool->nr_frames)
		return;
	f = &pool->frames[frame];
	pthread_mutex_lock(&pool->lock);
	if ((frame_flags(f) & (F_LRU | F_ACTIVE)) == F_LRU) {
		list_del(pool, lru_of(pool, f), frame);
		frame_set_flags(f, F_ACTIVE);
		list_add(pool, lru_of(pool, f), frame);
	}
	pool_unlock(pool);
}

static int __allocated_head(struct mm_pool *pool, uint64_t frame)
{
	if (frame >= pool->nr_frames ||
	    frame_state(&pool->frames[frame]) != MM_FRAME_ALLOC)
		return -EINVAL;
	return 0;
}

static int __pin(struct mm_pool *pool, uint64_t frame)
{
	struct mm_frame *f;
	int ret;

	ret = __allocated_head(pool, frame);
	f = &pool->frames[ret ? 0 : frame];
	if (!ret && (frame_flags(f) & F_ISOLATED))
		ret = -EAGAIN;
	else if (!ret && f->pins == UINT8_MAX)
		ret = -EOVERFLOW;
	if (!ret && f->pins++ == 0)
		frame_set_flags(f, F_PINNED);
	return ret;
}

static int __unpin(struct mm_pool *pool, uint64_t frame)
{
	struct mm_frame *f;
	int ret;

	ret = __allocated_head(pool, frame);
	f = &pool->frames[ret ? 0 : frame];
	if (!ret && !f->pins)
		ret = -EINVAL;
	if (!ret && --f->pins == 0)
		frame_clear_flags(f, F_PINNED);
	return ret;
}

static int locked_op(struct mm_pool *pool, int (*op)(struct mm_pool *, uint64_t), uint64_t frame)
{
	int ret;

	pthread_mutex_lock(&pool->lock);
	ret = op(pool, frame);
	pool_unlock(pool);
	return ret;
}

int mm_pin(struct mm_pool *pool, uint64_t frame)
{
	return locked_op(pool, __pin, frame);
}

int mm_unpin(struct mm_pool *pool, uint64_t frame)
{
	return locked_op(pool, __unpin, frame);
}

static int (*const owned_ops[MM_OWNED_OPS])(struct mm_pool *, uint64_t) = {
	[MM_OWNED_SPLIT] = __mm_split,
	[MM_OWNED_PIN] = __pin,
	[MM_OWNED_UNPIN] = __unpin,
};

/*
 * For a caller that acts for one owner only (the pool service, for a VM
 * process): the check that @frame heads a block of @owner's and the
 * operation are one step under pool->lock, so a free on another thread
 * cannot hand the block to someone else in between.
 */
int mm_owned_op(struct mm_pool *pool, uint64_t frame, uint32_t owner, enum mm_owned_op op)
{
	int ret;

	if (frame >= pool->nr_frames || (unsigned int)op >= MM_OWNED_OPS)
		return -EINVAL;
	pthread_mutex_lock(&pool->lock);
	ret = __allocated_head(pool, frame);
	if (!ret && frame_owner(&pool->frames[frame]) != owner)
		ret = -EPERM;
	if (!ret)
		ret = owned_ops[op](pool, frame);
	pool_unlock(pool);
	return ret;
}

/* Move the active tail down when the inactive list is the shorter. */
static void __age_active(struct mm_pool *pool, int t)
{
	struct frame_list *inactive = &pool->lru[t][MM_LRU_INACTIVE];
	struct frame_list *active = &pool->lru[t][MM_LRU_ACTIVE];

	while (active->count > inactive->count) {
		uint32_t pfn = active->tail;
		struct mm_frame *f = &pool->frames[pfn];

		list_del(pool, active, pfn);
		frame_clear_flags(f, F_ACTIVE);
		list_add(pool, inactive, pfn);
	}
}

static uint32_t __lru_tail(struct mm_pool *pool, unsigned int mask)
{
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		uint32_t pfn;

		if (!(mask & (1U << t)))
			continue;
		__age_active(pool, t);
		pfn = pool->lru[t][MM_LRU_INACTIVE].tail;
		if (pfn != NIL)
			return pfn;
	}
	return NIL;
}

/*
 * Each LRU block is tried at most once per call: one that cannot go now
 * (pinned, its owner said no) goes back to the head of its list, behind
 * the others.
 */
static uint64_t shrink_type(struct mm_pool *pool, uint64_t pages, int t)
{
	uint64_t done = 0, tries;

	pthread_mutex_lock(&pool->lock);
	tries = pool->lru[t][MM_LRU_INACTIVE].count + pool->lru[t][MM_LRU_ACTIVE].count;
	pool_unlock(pool);

	while (done < pages && tries--) {
		uint32_t pfn;
		unsigned int order;

		pthread_mutex_lock(&pool->lock);
		pfn = __lru_tail(pool, 1U << t);
		order = pfn == NIL ? 0 : pool->frames[pfn].order;
		/* off the list while we try, so a failure does not retry it */
		if (pfn != NIL)
			__lru_del(pool, pfn);
		pool_unlock(pool);
		if (pfn == NIL)
			break;
		if (reclaim_block(pool, pfn) == 0) {
			done += 1UL << order;
			continue;
		}
		pthread_mutex_lock(&pool->lock);
		if (frame_state(&pool->frames[pfn]) == MM_FRAME_ALLOC &&
		    !(frame_flags(&pool->frames[pfn]) & (F_LRU | F_ISOLATED)))
			__lru_add(pool, pfn);
		pool_unlock(pool);
	}
	return done;
}

uint64_t mm_shrink(struct mm_pool *pool, uint64_t pages, unsigned int mask)
{
	uint64_t done = 0;

	for (int t = 0; t < MIGRATE_TYPES && done < pages; t++)
		if (mask & (1U << t))
			done += shrink_type(pool, pages - done, t);
	return done;
}
