// SPDX-License-Identifier: GPL-2.0
/*
 * The pattern owner (see pattern_owner.h). Locking: po->lock guards the
 * table and the counters; it is never held across a call into mm/ that
 * can call back (mm_alloc, mm_free, compaction), because the allocator
 * calls back into this owner from other threads. mm_pin/mm_unpin never
 * call back, so they run under po->lock and the pin state in the table
 * cannot disagree with the pool's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "tests/unit/pattern_owner.h"

#define WORDS_PER_PAGE	(MM_PAGE_SIZE / sizeof(uint64_t))

/*
 * splitmix64 over (id, page, word): neighbouring words, pages and
 * allocations all differ, so a block copied to the wrong place, copied
 * short, or overwritten by another block's pattern shows up as bytes.
 */
static uint64_t pattern_word(uint64_t id, uint64_t page, uint64_t word)
{
	uint64_t x = (id << 20) ^ (page << 9) ^ word ^ 0x9e3779b97f4a7c15ULL;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t *frame_words(struct pattern_owner *po, uint64_t frame)
{
	return (uint64_t *)(po->mem + frame * MM_PAGE_SIZE);
}

void pattern_fill(struct pattern_owner *po, uint64_t frame,
		  unsigned int order, uint64_t id)
{
	for (uint64_t p = 0; p < 1ULL << order; p++) {
		uint64_t *w = frame_words(po, frame + p);

		for (uint64_t i = 0; i < WORDS_PER_PAGE; i++)
			w[i] = pattern_word(id, p, i);
	}
}

uint64_t pattern_check(struct pattern_owner *po, uint64_t frame,
		       unsigned int order, uint64_t id)
{
	uint64_t bad = 0;

	for (uint64_t p = 0; p < 1ULL << order; p++) {
		const uint64_t *w = frame_words(po, frame + p);

		for (uint64_t i = 0; i < WORDS_PER_PAGE; i++) {
			uint64_t diff = w[i] ^ pattern_word(id, p, i);

			for (; diff; diff >>= 8)
				bad += (diff & 0xff) != 0;
		}
	}
	return bad;
}

static const struct mm_owner_ops po_ops[4];

int pattern_owner_init(struct pattern_owner *po, struct mm_pool *pool,
		       unsigned int ops_mask, uint64_t max_ids)
{
	int err;

	memset(po, 0, sizeof(*po));
	po->pool = pool;
	po->frames = mm_pool_frames(pool);
	po->max_ids = max_ids ? max_ids : 4 * po->frames;
	po->mem = mmap(NULL, po->frames * MM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, mm_pool_fd(pool), 0);
	if (po->mem == MAP_FAILED)
		return -errno;
	po->blocks = calloc(po->frames, sizeof(*po->blocks));
	po->cover = calloc(po->frames, sizeof(*po->cover));
	po->where = calloc(po->max_ids, sizeof(*po->where));
	err = -ENOMEM;
	if (!po->blocks || !po->cover || !po->where)
		goto fail;
	pthread_mutex_init(&po->lock, NULL);
	po->ops = po_ops[ops_mask & (PO_MIGRATE | PO_RECLAIM)];
	err = mm_owner_register(pool, &po->ops, po, &po->owner);
	if (err)
		goto fail;
	return 0;
fail:
	free(po->blocks);
	free(po->cover);
	free(po->where);
	munmap(po->mem, po->frames * MM_PAGE_SIZE);
	return err;
}

void pattern_owner_unregister(struct pattern_owner *po)
{
	if (atomic_load(&po->unregistered))
		return;
	mm_owner_unregister(po->pool, po->owner);
	/* it waits for callbacks in flight: none may still run now */
	po->in_flight_at_unregister = atomic_load(&po->in_flight);
	/* from here on any callback is one the allocator should not make */
	atomic_store(&po->unregistered, true);
}

void pattern_owner_fini(struct pattern_owner *po)
{
	pattern_owner_unregister(po);
	pthread_mutex_destroy(&po->lock);
	free(po->blocks);
	free(po->cover);
	free(po->where);
	munmap(po->mem, po->frames * MM_PAGE_SIZE);
}

/* po->lock held. Is [frame, frame + 2^order) clear of tracked blocks? */
static bool __range_clear(struct pattern_owner *po, uint64_t frame,
			  unsigned int order)
{
	if (frame + (1ULL << order) > po->frames)
		return false;
	for (uint64_t f = frame; f < frame + (1ULL << order); f++)
		if (po->cover[f])
			return false;
	return true;
}

static void __set_cover(struct pattern_owner *po, uint64_t frame,
			unsigned int order, uint32_t val)
{
	for (uint64_t f = frame; f < frame + (1ULL << order); f++)
		po->cover[f] = val;
}

static void __record(struct pattern_owner *po, uint64_t frame,
		     const struct po_block *b)
{
	po->blocks[frame] = *b;
	__set_cover(po, frame, b->order, (uint32_t)frame + 1);
	po->where[b->id - 1] = frame + 1;
}

static void __forget(struct pattern_owner *po, uint64_t frame)
{
	struct po_block *b = &po->blocks[frame];

	__set_cover(po, frame, b->order, 0);
	po->where[b->id - 1] = 0;
	memset(b, 0, sizeof(*b));
}

bool pattern_owner_track(struct pattern_owner *po, uint64_t frame,
			 unsigned int order, enum mm_migratetype mt,
			 uint64_t id)
{
	struct po_block b = { id + 1, (uint8_t)order, (uint8_t)mt, false };
	bool ok;

	if (id >= po->max_ids)
		return false;
	pthread_mutex_lock(&po->lock);
	ok = !po->where[id] && __range_clear(po, frame, order);
	if (ok) {
		pattern_fill(po, frame, order, id);
		__record(po, frame, &b);
		po->tracked++;
	} else {
		po->overlaps++;
	}
	pthread_mutex_unlock(&po->lock);
	return ok;
}

long pattern_owner_alloc(struct pattern_owner *po, struct mm_pcp *pcp,
			 unsigned int order, enum mm_migratetype mt,
			 uint64_t id)
{
	long frame = mm_alloc(po->pool, pcp, order, mt, po->owner);

	if (frame >= 0)
		pattern_owner_track(po, (uint64_t)frame, order, mt, id);
	return frame;
}

/* po->lock held: head frame of allocation @id, -1 when not held. */
static long __frame_of(struct pattern_owner *po, uint64_t id)
{
	return id < po->max_ids && po->where[id] ? (long)po->where[id] - 1 : -1;
}

long pattern_owner_untrack(struct pattern_owner *po, uint64_t id)
{
	long frame;

	pthread_mutex_lock(&po->lock);
	frame = __frame_of(po, id);
	if (frame >= 0) {
		po->corrupted += pattern_check(po, (uint64_t)frame,
					       po->blocks[frame].order, id);
		__forget(po, (uint64_t)frame);
		po->tracked--;
	}
	pthread_mutex_unlock(&po->lock);
	return frame;
}

int pattern_owner_free(struct pattern_owner *po, struct mm_pcp *pcp,
		       uint64_t id)
{
	long frame = pattern_owner_untrack(po, id);

	return frame < 0 ? -ENOENT : mm_free(po->pool, pcp, (uint64_t)frame);
}

long pattern_owner_frame(struct pattern_owner *po, uint64_t id)
{
	long frame;

	pthread_mutex_lock(&po->lock);
	frame = __frame_of(po, id);
	pthread_mutex_unlock(&po->lock);
	return frame;
}

bool pattern_owner_holds(struct pattern_owner *po, uint64_t id)
{
	return pattern_owner_frame(po, id) >= 0;
}

long pattern_owner_id_at(struct pattern_owner *po, uint64_t frame)
{
	long id = -1;

	pthread_mutex_lock(&po->lock);
	if (frame < po->frames && po->blocks[frame].id)
		id = (long)po->blocks[frame].id - 1;
	pthread_mutex_unlock(&po->lock);
	return id;
}

static int pin_op(struct pattern_owner *po, uint64_t id, bool pin)
{
	long frame;
	int ret = -ENOENT;

	pthread_mutex_lock(&po->lock);
	frame = __frame_of(po, id);
	if (frame >= 0) {
		ret = pin ? mm_pin(po->pool, (uint64_t)frame) :
			    mm_unpin(po->pool, (uint64_t)frame);
		if (!ret)
			po->blocks[frame].pinned = pin;
	}
	pthread_mutex_unlock(&po->lock);
	return ret;
}

/* The table keeps one pin state: tests pin a block at most once. */
int pattern_owner_pin(struct pattern_owner *po, uint64_t id)
{
	return pin_op(po, id, true);
}

int pattern_owner_unpin(struct pattern_owner *po, uint64_t id)
{
	return pin_op(po, id, false);
}

uint64_t pattern_owner_verify_all(struct pattern_owner *po)
{
	uint64_t bad = 0;

	pthread_mutex_lock(&po->lock);
	for (uint64_t f = 0; f < po->frames; f++) {
		const struct po_block *b = &po->blocks[f];

		if (b->id)
			bad += pattern_check(po, f, b->order, b->id - 1);
	}
	pthread_mutex_unlock(&po->lock);
	return bad;
}

/*
 * What the allocator itself says about the block it offers: it must be
 * an allocated head of ours, of the order offered, isolated for the move
 * while we are called. Called without po->lock: mm_frame_info takes the
 * pool's locks.
 */
static bool offered_block_is_ours(struct pattern_owner *po, uint64_t frame,
				  unsigned int order, struct mm_frame_info *fi)
{
	return mm_frame_info(po->pool, frame, fi) == 0 &&
	       fi->state == MM_FRAME_ALLOC && fi->order == order &&
	       fi->owner == po->owner && fi->moving;
}

/*
 * po->lock held. Account for a block the allocator offers, and refuse the
 * ones it must never offer: a block we do not hold (a stale frame, or one
 * not tracked yet), an unmovable or a pinned one. Refusing keeps the
 * content right, so the counters, not the patterns, report the mistake.
 */
static int __accept_offer(struct pattern_owner *po, uint64_t frame,
			  unsigned int order, const struct mm_frame_info *fi,
			  bool fi_ok)
{
	const struct po_block *b;

	if (atomic_load(&po->unregistered))
		atomic_fetch_add(&po->calls_after_unregister, 1);
	if (frame >= po->frames || !po->blocks[frame].id ||
	    po->blocks[frame].order != order) {
		po->unknown++;
		return -EBUSY;
	}
	b = &po->blocks[frame];
	if (!fi_ok || fi->mt != b->mt)
		po->foreign++;
	po->offered_mt[b->mt]++;
	if (b->pinned)
		po->offered_pinned++;
	return b->mt == MIGRATE_UNMOVABLE || b->pinned ? -EBUSY : 0;
}

static bool injected(unsigned int every, uint64_t calls)
{
	return every && calls % every == 0;
}

static int __po_migrate(void *priv, uint64_t old_frame, uint64_t new_frame,
			unsigned int order)
{
	struct pattern_owner *po = priv;
	struct mm_frame_info fi;
	bool fi_ok;
	int ret, unpin_err;

	if (po->delay_us)
		usleep(po->delay_us);
	if (po->hook) {
		ret = po->hook(po, PO_CALL_MIGRATE, old_frame, new_frame, order);
		if (ret != PO_HOOK_CONTINUE)
			return ret;
	}
	/*
	 * The block is isolated now: pinning it must wait for the move. A pin
	 * that got through is undone; an unpin refused on a block just pinned
	 * is the allocator disagreeing about the block.
	 */
	ret = mm_pin(po->pool, old_frame);
	unpin_err = ret == 0 ? mm_unpin(po->pool, old_frame) : 0;
	pthread_mutex_lock(&po->lock);
	if (ret == -EAGAIN)
		po->pin_eagain++;
	else if (ret == 0)
		po->pinned_while_moving++;
	if (unpin_err)
		po->foreign++;
	pthread_mutex_unlock(&po->lock);
	fi_ok = offered_block_is_ours(po, old_frame, order, &fi);

	pthread_mutex_lock(&po->lock);
	po->migrate_calls++;
	ret = __accept_offer(po, old_frame, order, &fi, fi_ok);
	if (!ret && injected(po->migrate_fail_every, po->migrate_calls)) {
		po->migrate_injected++;
		ret = -EBUSY;
	}
	if (!ret && !__range_clear(po, new_frame, order)) {
		/* the target overlaps a block we hold */
		po->overlaps++;
		ret = -EBUSY;
	}
	if (!ret) {
		struct po_block b = po->blocks[old_frame];

		po->corrupted += pattern_check(po, old_frame, order, b.id - 1);
		memcpy(frame_words(po, new_frame), frame_words(po, old_frame),
		       MM_PAGE_SIZE << order);
		__forget(po, old_frame);
		__record(po, new_frame, &b);
		po->migrations++;
		po->migrated_pages += 1ULL << order;
	}
	pthread_mutex_unlock(&po->lock);
	if (po->after)
		ret = po->after(po, old_frame, new_frame, order, ret);
	return ret;
}

static int __po_reclaim(void *priv, uint64_t frame, unsigned int order)
{
	struct pattern_owner *po = priv;
	struct mm_frame_info fi;
	bool fi_ok;
	int ret;

	if (po->delay_us)
		usleep(po->delay_us);
	if (po->hook) {
		ret = po->hook(po, PO_CALL_RECLAIM, frame, UINT64_MAX, order);
		if (ret != PO_HOOK_CONTINUE)
			return ret;
	}
	fi_ok = offered_block_is_ours(po, frame, order, &fi);

	pthread_mutex_lock(&po->lock);
	po->reclaim_calls++;
	ret = __accept_offer(po, frame, order, &fi, fi_ok);
	if (!ret && injected(po->reclaim_fail_every, po->reclaim_calls)) {
		po->reclaim_injected++;
		ret = -EBUSY;
	}
	if (!ret) {
		po->corrupted += pattern_check(po, frame, order,
					       po->blocks[frame].id - 1);
		__forget(po, frame);
		po->tracked--;
		po->reclaims++;
		po->reclaimed_pages += 1ULL << order;
	}
	pthread_mutex_unlock(&po->lock);
	return ret;
}

/* The entry points count callbacks in flight around the real work. */
static int po_migrate(void *priv, uint64_t old_frame, uint64_t new_frame,
		      unsigned int order)
{
	struct pattern_owner *po = priv;
	int ret;

	atomic_fetch_add(&po->in_flight, 1);
	ret = __po_migrate(priv, old_frame, new_frame, order);
	atomic_fetch_sub(&po->in_flight, 1);
	return ret;
}

static int po_reclaim(void *priv, uint64_t frame, unsigned int order)
{
	struct pattern_owner *po = priv;
	int ret;

	atomic_fetch_add(&po->in_flight, 1);
	ret = __po_reclaim(priv, frame, order);
	atomic_fetch_sub(&po->in_flight, 1);
	return ret;
}

static const struct mm_owner_ops po_ops[4] = {
	[0] = { NULL, NULL },
	[PO_MIGRATE] = { po_migrate, NULL },
	[PO_RECLAIM] = { NULL, po_reclaim },
	[PO_MIGRATE | PO_RECLAIM] = { po_migrate, po_reclaim },
};

uint64_t pattern_owner_fill(struct pattern_owner *po, struct mm_pcp *pcp,
			    enum mm_migratetype mt)
{
	uint64_t n = 0;

	while (n < po->max_ids && pattern_owner_alloc(po, pcp, 0, mt, n) >= 0)
		n++;
	return n;
}

uint64_t pattern_owner_thin(struct pattern_owner *po, struct mm_pcp *pcp,
			    uint64_t nr_ids, unsigned int keep_every,
			    uint64_t seed)
{
	uint64_t kept = 0;

	for (uint64_t id = 0; id < nr_ids; id++) {
		long frame = pattern_owner_frame(po, id);
		bool keep;

		if (frame < 0)
			continue;
		keep = seed ? rng_next(&seed) % keep_every == 0 :
			      (uint64_t)frame % keep_every == 0;
		if (keep)
			kept++;
		else
			pattern_owner_free(po, pcp, id);
	}
	return kept;
}

uint64_t pattern_owner_free_all(struct pattern_owner *po, struct mm_pcp *pcp,
				uint64_t nr_ids)
{
	uint64_t errors = 0;

	for (uint64_t id = 0; id < nr_ids; id++)
		if (pattern_owner_holds(po, id) &&
		    pattern_owner_free(po, pcp, id) != 0)
			errors++;
	return errors;
}

uint64_t free_pageblock_units(const struct mm_stats *st)
{
	uint64_t units = 0;

	for (unsigned int o = MM_PAGEBLOCK_ORDER; o < MM_MAX_ORDER; o++)
		units += st->nr_free[o] << (o - MM_PAGEBLOCK_ORDER);
	return units;
}
