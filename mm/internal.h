/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mm/ internals shared by its files; nothing outside mm/ includes this.
 *
 * Naming: a leading "__" means "the caller holds pool->lock", as in
 * Linux's __rmqueue/__free_one_page.
 */
#ifndef GPMM_MM_INTERNAL_H
#define GPMM_MM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "mm/mm.h"

#define NIL			UINT32_MAX
#define PCP_DEFAULT_HIGH	186
#define PCP_DEFAULT_BATCH	31
#define PCP_MAX_BATCH		1024

/*
 * Per-frame metadata, the pool's struct page: 16 bytes. next/prev link a
 * free block on its free list or an order-0 frame on a per-thread list;
 * only heads carry order, state, mt and owner.
 */
struct mm_frame {
	uint32_t next;
	uint32_t prev;
	uint32_t owner;
	uint8_t order;
	uint8_t state;		/* enum mm_frame_state | F_* flags */
	uint8_t mt;		/* free: list type; allocated: requested type */
	uint8_t pins;		/* allocated: pin count (saturates) */
};

/*
 * Flags of an allocated head, beside its state in the same byte so that
 * one compare-and-swap decides between a lock-free per-thread free and
 * the compaction code isolating the block.
 */
#define F_STATE_MASK	0x03
#define F_ISOLATED	0x04	/* being migrated or reclaimed, or a target */
#define F_FREED		0x08	/* its owner freed it while isolated */
#define F_LRU		0x10	/* on an LRU list */
#define F_ACTIVE	0x20	/* on the active LRU list */
#define F_PINNED	0x40	/* pins > 0: never moved */

/*
 * A cached frame's state is written by its pcp's owner under the pcp lock
 * only, while the buddy code (under pool->lock) may read it when looking
 * at a buddy: relaxed atomics make that read defined. It never reads as
 * MM_FRAME_FREE, so no merge can take a cached frame.
 */
static inline uint8_t frame_state(const struct mm_frame *f)
{
	return __atomic_load_n(&f->state, __ATOMIC_ACQUIRE) & F_STATE_MASK;
}

static inline uint8_t frame_flags(const struct mm_frame *f)
{
	return __atomic_load_n(&f->state, __ATOMIC_RELAXED) & ~F_STATE_MASK;
}

/*
 * A new state drops every flag. It is stored with release semantics: a
 * per-thread allocation writes the block's type and owner first, so that
 * whoever sees the state ALLOC (acquire) also sees who owns it.
 */
static inline void set_frame_state(struct mm_frame *f, uint8_t state)
{
	__atomic_store_n(&f->state, state, __ATOMIC_RELEASE);
}

/* Type and owner of a head that a per-thread list may be changing. */
static inline uint8_t frame_mt(const struct mm_frame *f)
{
	return __atomic_load_n(&f->mt, __ATOMIC_RELAXED);
}

static inline uint32_t frame_owner(const struct mm_frame *f)
{
	return __atomic_load_n(&f->owner, __ATOMIC_RELAXED);
}

static inline void set_frame_owner(struct mm_frame *f, uint8_t mt, uint32_t owner)
{
	__atomic_store_n(&f->mt, mt, __ATOMIC_RELAXED);
	__atomic_store_n(&f->owner, owner, __ATOMIC_RELAXED);
}

static inline void frame_set_flags(struct mm_frame *f, uint8_t flags)
{
	__atomic_fetch_or(&f->state, flags, __ATOMIC_RELAXED);
}

static inline void frame_clear_flags(struct mm_frame *f, uint8_t flags)
{
	__atomic_fetch_and(&f->state, (uint8_t)~flags, __ATOMIC_RELAXED);
}

/* Swap state byte @from for @to; false when it was anything else. */
static inline bool frame_cmpxchg(struct mm_frame *f, uint8_t from, uint8_t to)
{
	return __atomic_compare_exchange_n(&f->state, &from, to, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* A doubly linked list of frames by index: O(1) removal of a buddy. */
struct frame_list {
	uint32_t head;
	uint32_t tail;
	uint32_t count;
};

struct free_area {
	struct frame_list free_list[MIGRATE_TYPES];
	uint64_t nr_free;
};

/* Aligned so two threads' lists never share a cache line. */
struct mm_pcp {
	struct mm_pool *pool;
	atomic_flag lock;	/* owner's fast path; taken by remote drains */
	unsigned int count;
	/*
	 * The pool's pageblock flags while grouping is on, NULL while off:
	 * one field decides both the policy and where a freed frame's
	 * pageblock type is read from. Written under this pcp's lock.
	 */
	const uint8_t *pb_flags;
	uint64_t nr_alloc;	/* folded into pool counters on destroy */
	uint64_t nr_free;
	struct frame_list lists[MIGRATE_TYPES];
	struct mm_pcp *next_pcp;
} __attribute__((aligned(64)));

struct mm_pool {
	pthread_mutex_t lock;		/* like zone->lock */
	int fd;
	uint64_t nr_frames;
	uint64_t nr_pageblocks;
	uint64_t free_pages;
	bool grouping;
	unsigned int pcp_high;
	unsigned int pcp_batch;
	struct mm_frame *frames;
	uint8_t *pageblock_flags;	/* one flags byte per pageblock */
	struct free_area free_area[MM_MAX_ORDER];
	struct mm_counters counters;

	pthread_mutex_t pcp_list_lock;	/* taken before any pcp lock */
	struct mm_pcp *pcps;

	/*
	 * owners: callbacks run with owners_lock read-held, so unregister
	 * (write) waits for them. The table never moves and an entry is
	 * written before nr_owners covers it, so lookups need no lock. A
	 * retired slot waits on a queue (oldest first) to be used again.
	 */
	pthread_rwlock_t owners_lock;
	struct mm_owner *owners;	/* slot 1 is owners[0] */
	uint32_t nr_owners;		/* slots ever used; release/acquire */
	uint32_t retired_head, retired_tail;	/* slots, 0: none; under owners_lock */

	/*
	 * Pageblocks owned whole (owned.c), when on: each pageblock's owner
	 * (0: none; relaxed atomic), every owner's pageblocks on a list by
	 * pb_next/pb_prev, and by owner slot the owner's own free lists.
	 * Under pool->lock; the table's entries under owners_lock too.
	 */
	bool owned_blocks;
	uint32_t *pb_owner;
	uint32_t *pb_next, *pb_prev;
	struct owned_blocks **owned;

	struct frame_list lru[MIGRATE_TYPES][MM_LRU_LISTS];
	unsigned int policy;		/* MM_POLICY_* */

	/* compaction: cached scanner positions, like zone->compact_cached_* */
	pthread_mutex_t compact_lock;	/* one compaction at a time; lock order: vmm/core/vm.h */
	uint64_t compact_migrate_pb;
	uint64_t compact_free_pb;
	struct mm_worker *kcompactd;
	unsigned int kcompactd_target;

	/*
	 * Claims of a whole pageblock backed off after compaction failed to
	 * empty one (Linux's compaction deferral): the next 2^shift claims
	 * are skipped. Under pool->lock.
	 */
	unsigned int claim_defer_shift;
	unsigned int claim_considered;

	/* host memory behind the pool (hostmem.c); host_lock before pool->lock */
	uint8_t *base;			/* MAP_SHARED view of the memfd, never PMD-mapped */
	uint8_t *pb_host;		/* HOST_* per pageblock, atomic */
	bool host_huge;			/* make a pageblock huge when first used */
	pthread_mutex_t host_lock;
	uint64_t host_prep_pending;	/* pageblocks waiting to be made huge, atomic */
	int host_huge_errno;		/* why the last one failed */
	bool host_keep;			/* populated: keep the memory (under host_lock) */
	struct mm_worker *reporting;

	/*
	 * A file per pageblock (pbfile.c), when on: its descriptor (pb_fd:
	 * under host_lock), and the
	 * blocks waiting for fresh files (retiring: under pool->lock;
	 * retire_pending their count, atomic).
	 */
	bool pb_files;
	int *pb_fd;
	struct isolated *retiring;
	uint32_t nr_retiring;
	uint32_t retire_pending;
};

/*
 * An owner id is a slot (low 16 bits, 1..MM_MAX_OWNERS) and the slot's
 * generation (high 16 bits): a slot is used again once its owner
 * unregistered, under a new generation, so an id that outlived its owner
 * (a frame it still holds, a late callback) never names the next one.
 * The last slot stops short of 0xffff: no id is MM_OWNER_MIXED.
 */
#define MM_OWNER_SLOT_BITS	16
#define MM_OWNER_SLOT_MASK	((1U << MM_OWNER_SLOT_BITS) - 1)
#define MM_MAX_OWNERS		(MM_OWNER_SLOT_MASK - 1)

struct mm_owner {
	const struct mm_owner_ops *ops;
	void *priv;
	uint32_t id;		/* relaxed atomic: slot and generation */
	uint32_t next_retired;	/* the retired queue's link */
	bool live;		/* atomic (release/acquire): cleared by unregister */
};

/* An owner's pageblocks and the free room in them (owned.c). */
struct owned_blocks {
	uint32_t id;			/* the owner whose they are */
	uint32_t first_pb;		/* its pageblocks, by pb_next */
	uint64_t nr_pageblocks;
	uint64_t limit;			/* pageblocks it may hold */
	struct free_area free_area[MM_PAGEBLOCK_ORDER];
};

/* frame lists: inline, they are the per-thread fast path */
static inline void list_init(struct frame_list *l)
{
	l->head = l->tail = NIL;
	l->count = 0;
}

static inline void list_add(struct mm_pool *pool, struct frame_list *l, uint32_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	f->prev = NIL;
	f->next = l->head;
	if (l->head != NIL)
		pool->frames[l->head].prev = pfn;
	else
		l->tail = pfn;
	l->head = pfn;
	l->count++;
}

static inline void list_del(struct mm_pool *pool, struct frame_list *l, uint32_t pfn)
{
	struct mm_frame *f = &pool->frames[pfn];

	if (f->prev != NIL)
		pool->frames[f->prev].next = f->next;
	else
		l->head = f->next;
	if (f->next != NIL)
		pool->frames[f->next].prev = f->prev;
	else
		l->tail = f->prev;
	f->next = f->prev = NIL;
	l->count--;
}

static inline uint32_t list_pop(struct mm_pool *pool, struct frame_list *l)
{
	uint32_t pfn = l->head;

	if (pfn != NIL)
		list_del(pool, l, pfn);
	return pfn;
}

/*
 * Only a head (free, allocated or cached) knows its order; a tail keeps a
 * stale one, so a scan that starts inside a block steps over its tails one
 * by one until the next head. Cached frames are order 0 whatever their
 * state, so a per-thread list changing one under the scan does not change
 * the step. Callers hold pool->lock, which keeps every other head still.
 */
static inline uint64_t next_block(const struct mm_pool *pool, uint64_t pfn)
{
	const struct mm_frame *f = &pool->frames[pfn];

	return pfn + (frame_state(f) == MM_FRAME_TAIL ? 1 : 1UL << f->order);
}

/* @pfn takes every block head in [@start, @end) and each uncovered tail. */
#define for_each_block(pool, pfn, start, end) \
	for (uint64_t pfn = (start); pfn < (end); pfn = next_block((pool), pfn))

/* @pb takes every pageblock that a block of @order at @pfn overlaps. */
#define for_each_pageblock_in(pb, pfn, order)				\
	for (uint64_t pb = (pfn) >> MM_PAGEBLOCK_ORDER;			\
	     pb <= ((pfn) + (1UL << (order)) - 1) >> MM_PAGEBLOCK_ORDER; pb++)

/*
 * pageblock flags: a byte per pageblock, bits 0-1 the migratetype, bit 2
 * compaction's skip hint. A byte rather than a packed nibble: the type is
 * read on every free, and a byte load is the cheapest read there is.
 */
#define PB_MIGRATE_MASK		0x3U
#define PB_SKIP_MASK		0x4U

static inline unsigned int get_pageblock_flags_group(struct mm_pool *pool,
						     uint64_t pb, unsigned int mask)
{
	return __atomic_load_n(&pool->pageblock_flags[pb], __ATOMIC_RELAXED) & mask;
}

static inline enum mm_migratetype get_pageblock_migratetype(struct mm_pool *pool,
					      uint64_t pfn)
{
	return get_pageblock_flags_group(pool, pfn >> MM_PAGEBLOCK_ORDER,
					 PB_MIGRATE_MASK);
}

int pageblock_bitmap_init(struct mm_pool *pool);
void set_pageblock_migratetype(struct mm_pool *pool, uint64_t pfn,
			       enum mm_migratetype mt);
void set_pageblocks_migratetype(struct mm_pool *pool, uint64_t pfn,
				unsigned int order, enum mm_migratetype mt);
size_t pageblock_bitmap_bytes(const struct mm_pool *pool);
bool get_pageblock_skip(struct mm_pool *pool, uint64_t pb);
void set_pageblock_skip(struct mm_pool *pool, uint64_t pb, bool skip);

/*
 * The seed converts a whole pageblock once it has to break a block of at
 * least MAX_ORDER/2: having taken half a pageblock or more, the rest of
 * the block would otherwise be raided piece by piece by later requests of
 * the same type, each piece polluting the block further. Claiming it at
 * once keeps the next requests of this type inside it.
 */
#define STEAL_WHOLE_BLOCK_ORDER	(MM_MAX_ORDER / 2)

/* buddy core */
void __add_free_block(struct mm_pool *pool, uint64_t pfn, unsigned int order,
		      enum mm_migratetype mt);
void __del_free_block(struct mm_pool *pool, uint64_t pfn);
void expand(struct mm_pool *pool, uint64_t pfn, unsigned int low,
	    unsigned int high, enum mm_migratetype mt);
void __free_one_page(struct mm_pool *pool, uint64_t pfn, unsigned int order);
long __rmqueue(struct mm_pool *pool, unsigned int order,
	       enum mm_migratetype mt);
long __rmqueue_smallest(struct mm_pool *pool, unsigned int order,
			enum mm_migratetype mt);
void __mark_allocated(struct mm_pool *pool, uint64_t pfn, unsigned int order,
		      enum mm_migratetype mt, uint32_t owner);
uint64_t __block_head(struct mm_pool *pool, uint64_t pfn);
bool __have_free_block(struct mm_pool *pool, unsigned int order);

/* The list a freed frame joins: its pageblock's (patch 010), or the one list. */
static inline enum mm_migratetype free_list_type(struct mm_pool *pool, uint64_t pfn)
{
	return pool->grouping ? get_pageblock_migratetype(pool, pfn)
			      : MIGRATE_MOVABLE;
}

/* fallback */
long __rmqueue_fallback(struct mm_pool *pool, unsigned int order,
			enum mm_migratetype start_mt);
unsigned int move_freepages_block(struct mm_pool *pool, uint64_t pfn,
				  enum mm_migratetype mt);

/* owners and LRU (owner.c) */
struct mm_owner *__owner_of(struct mm_pool *pool, uint32_t id);
void __lru_add(struct mm_pool *pool, uint64_t pfn);
void __lru_del(struct mm_pool *pool, uint64_t pfn);
bool owner_has_reclaim(struct mm_pool *pool, uint32_t id);
bool owner_reclaims_cheaply(struct mm_pool *pool, uint32_t id);
bool owner_has_migrate(struct mm_pool *pool, uint32_t id);

/* migration and reclaim of one block (migrate.c) */
bool __isolate_block(struct mm_pool *pool, uint64_t pfn);

/* A free block held off the buddy lists: a migration target, a lump piece. */
struct isolated {
	uint32_t pfn;
	uint8_t order;
};

void __mark_isolated_free(struct mm_pool *pool, uint64_t pfn, unsigned int order);
unsigned int __isolate_free_blocks(struct mm_pool *pool, uint64_t start,
				   uint64_t end, struct isolated *held,
				   unsigned int *nr, unsigned int max);
void __release_isolated(struct mm_pool *pool, struct isolated *held,
			unsigned int *nr);
/* Undo an isolation; a free that came meanwhile is carried out. */
void __putback_isolated(struct mm_pool *pool, uint64_t pfn);
int migrate_block(struct mm_pool *pool, uint64_t pfn, uint64_t target);
int reclaim_block(struct mm_pool *pool, uint64_t pfn);
bool __block_is_movable(struct mm_pool *pool, uint64_t pfn);
int __mm_split(struct mm_pool *pool, uint64_t frame);
void __free_allocated(struct mm_pool *pool, uint64_t pfn);

/* slow paths (lumpy.c, compaction.c) */
bool lumpy_reclaim(struct mm_pool *pool, unsigned int order,
		   enum mm_migratetype mt);
int compact_for_order(struct mm_pool *pool, unsigned int order, bool direct);
void claim_block(struct mm_pool *pool, unsigned int order,
		 enum mm_migratetype mt);

/* A thread of mm/'s own doing @work every @interval_ms, signals blocked (thread.c). */
struct mm_worker;
typedef void (*mm_work_fn)(struct mm_pool *pool, void *arg);
int mm_worker_start(struct mm_worker **out, struct mm_pool *pool, unsigned int interval_ms,
		    mm_work_fn work, void *arg, const char *name);
void mm_worker_stop(struct mm_worker *w);

/* pageblocks owned whole (owned.c) */
void owned_blocks_exit(struct mm_pool *pool);
int __owned_register(struct mm_pool *pool, uint32_t id);
bool __owned_slot_free(struct mm_pool *pool, uint32_t slot);
struct owned_blocks *__owned_of(struct mm_pool *pool, uint32_t owner);
void __disown_pageblocks(struct mm_pool *pool, uint64_t pfn, unsigned int order);
struct free_area *__area_of(struct mm_pool *pool, uint64_t pfn, unsigned int order);
long __rmqueue_owned(struct mm_pool *pool, struct owned_blocks *ob, unsigned int order,
		     enum mm_migratetype mt, bool claim);
long __rmqueue_for(struct mm_pool *pool, unsigned int order, enum mm_migratetype mt,
		   uint32_t owner, bool claim);
uint32_t __pageblock_owner(struct mm_pool *pool, uint64_t pb);
uint64_t __owned_free_pages(const struct owned_blocks *ob);
void __owned_free_counts(struct mm_pool *pool, uint64_t *nr_free,
			 uint64_t (*nr_free_type)[MM_MAX_ORDER]);
/* __rmqueue_owned's "nothing within the owner's limit" */
#define RMQUEUE_OVER_LIMIT	(-2)

/* host memory (hostmem.c) */
int hostmem_init(struct mm_pool *pool, size_t size);
void hostmem_exit(struct mm_pool *pool);
void __pageblocks_taken(struct mm_pool *pool, uint64_t pfn, unsigned int order);
void hostmem_prepare_pending(struct mm_pool *pool);
bool __pageblock_host_taken(struct mm_pool *pool, uint64_t pb);
bool __pageblock_host_used(struct mm_pool *pool, uint64_t pb);
void __pageblock_host_renew(struct mm_pool *pool, uint64_t pb);

/* pbfile.c */
void pageblock_files_exit(struct mm_pool *pool);
int __frame_file(const struct mm_pool *pool, uint64_t frame, off_t *off);
bool __pageblocks_retire(struct mm_pool *pool, uint64_t pfn, unsigned int order);
void __retire_pending(struct mm_pool *pool);
void host_unlock(struct mm_pool *pool);
void __pool_unlock_retire(struct mm_pool *pool);
int64_t __pageblock_files_bytes(struct mm_pool *pool);

/*
 * Every drop of pool->lock: a pageblock that became wholly free under it
 * gets its fresh file now (pbfile.c), unless host_lock's holder does it.
 */
static inline void pool_unlock(struct mm_pool *pool)
{
	pthread_mutex_unlock(&pool->lock);
	if (__atomic_load_n(&pool->retire_pending, __ATOMIC_SEQ_CST))
		__pool_unlock_retire(pool);
}
uint64_t hostmem_report(struct mm_pool *pool, unsigned int min_passes);
void __hostmem_count(struct mm_pool *pool, uint64_t *used, uint64_t *huge);

/* per-thread lists */
long pcp_alloc(struct mm_pcp *pcp, enum mm_migratetype mt, uint32_t owner);
void pcp_free(struct mm_pcp *pcp, uint64_t pfn);
void pcp_lock_all(struct mm_pool *pool);
void pcp_set_grouping(struct mm_pool *pool, bool on);
void pcp_unlock_all(struct mm_pool *pool);

static inline bool valid_migratetype(int mt)
{
	return mt >= 0 && mt < MIGRATE_TYPES;
}

#endif /* GPMM_MM_INTERNAL_H */
