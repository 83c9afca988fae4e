/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpmm frame allocator: a pool of host frames (one memfd, 4 KiB a frame)
 * handed out by a buddy allocator that groups allocations by mobility.
 *
 * This is the public face of mm/. It knows nothing of KVM: callers speak
 * in frame numbers (offset in the pool memfd / 4 KiB) and owner cookies.
 * Every function that can fail returns a negative errno.
 */
#ifndef GPMM_MM_H
#define GPMM_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * An error return or a result that owns something (a frame, a count the
 * caller asked for): dropping it is a bug the compiler can see. A cast to
 * void does not silence it; handle the value.
 */
#ifndef __must_check
#define __must_check		__attribute__((warn_unused_result))
#endif

#define MM_PAGE_SHIFT		12
#define MM_PAGE_SIZE		(1UL << MM_PAGE_SHIFT)
#define MM_MAX_ORDER		11	/* orders 0 .. MM_MAX_ORDER - 1 */
#define MM_PAGEBLOCK_ORDER	9	/* 2 MiB: the unit of grouping */
#define MM_PAGEBLOCK_PAGES	(1UL << MM_PAGEBLOCK_ORDER)
#define MM_PAGEBLOCK_SHIFT	(MM_PAGEBLOCK_ORDER + MM_PAGE_SHIFT)	/* bytes */
#define MM_PAGEBLOCK_SIZE	(MM_PAGEBLOCK_PAGES << MM_PAGE_SHIFT)
#define MM_DEFAULT_POOL_SIZE	(1UL << 30)
#define MM_NO_OWNER		0

/* The seed's migratetypes; the order of the values is part of the ABI. */
enum mm_migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_MOVABLE,
	MIGRATE_TYPES
};

/* The two LRU lists of each migratetype (mm_stats.lru_pages[type][lru]). */
enum mm_lru {
	MM_LRU_INACTIVE,
	MM_LRU_ACTIVE,
	MM_LRU_LISTS
};

struct mm_pool;
struct mm_pcp;

/*
 * Fault injection (mm/fault.c), for tests of error paths: the sites are the
 * host calls and allocations whose failure a VM must survive. Compiled in
 * with GPMM_FAULT_INJECT (the Makefile's FAULT_INJECT=1, the default); off,
 * mm_fault_hit() is a constant false and costs nothing.
 */
enum mm_fault_site {
	MM_FAULT_MEMFD,		/* memfd_create */
	MM_FAULT_MMAP,		/* mmap of pool and guest memory */
	MM_FAULT_MADVISE,	/* madvise */
	MM_FAULT_KVM,		/* KVM ioctls */
	MM_FAULT_FRAME,		/* mm_alloc, mm_alloc_nowait: -ENOMEM */
	MM_FAULT_SYSCALL,	/* a vCPU thread makes a forbidden syscall (seccomp test) */
	MM_FAULT_LANDLOCK,	/* the kernel answers as one without Landlock */
	MM_FAULT_NR_SITES
};

#ifdef GPMM_FAULT_INJECT
bool mm_fault_hit(enum mm_fault_site site);
#else
static inline bool mm_fault_hit(enum mm_fault_site site) { return false; }
#endif
/* @call, unless @site fails now: then @fail, with errno ENOMEM. */
#define MM_FAULT_OR(site, fail, call) \
	(mm_fault_hit(site) ? (errno = ENOMEM, (fail)) : (call))
/* "site:N,site:N+,site:rand:PERMILLE,seed:S"; -EINVAL with a sentence. */
__must_check int mm_fault_configure(const char *spec, char *err, size_t errlen);
/* One line per site: name, calls, failures injected. */
void mm_fault_print(FILE *f);

/*
 * Linux's PAGE_ALLOC_COSTLY_ORDER. Up to this order a request that fails
 * is served again soon by frees and reclaim alone; above it, free blocks
 * that large only come back when something moves pages, so only those
 * requests pay for direct compaction.
 */
#define MM_COSTLY_ORDER		3

/* What the allocator may do when a request does not fit (policy bits). */
#define MM_POLICY_LUMPY		0x1	/* lumpy reclaim for order >= 1 */
#define MM_POLICY_COMPACT	0x2	/* direct compaction above MM_COSTLY_ORDER */
#define MM_POLICY_CLAIM_BLOCK	0x4	/* unmovable: compact a block free to host them */
/*
 * Unmovable and reclaimable requests never take part of another type's
 * pageblock while compaction can empty a whole one, and a per-thread
 * refill of theirs stops where their own lists end (see mm/alloc.c).
 */
#define MM_POLICY_CLAIM_WHOLE	0x8
#define MM_POLICY_ALL		0xf

struct mm_pool_config {
	size_t size;		/* bytes; a multiple of 2 MiB, 0 = 1 GiB */
	bool grouping;		/* group by mobility (false: plain buddy) */
	unsigned int policy;	/* MM_POLICY_* */
	unsigned int pcp_high;	/* per-thread list high mark, 0 = default */
	unsigned int pcp_batch;	/* refill/spill batch, 0 = default */
	const char *name;	/* memfd name, NULL = "gpmm-pool" */
	bool host_huge;		/* make a pageblock a host huge page when first used */
	/*
	 * Frames are numbers only: no memfd, no mapping, nothing of the host
	 * behind them (a trace replay, a model of a pool too big to hold).
	 * mm_pool_fd() is -1, mm_pool_base() NULL, host_huge is refused, and
	 * the host-memory calls below do nothing. Owners' migrate callbacks
	 * still run: they have nothing to copy.
	 */
	bool metadata_only;
};

/* Pool life cycle. mm_pool_create returns -EINVAL for a bad size (or
 * host_huge with metadata_only) and the errno of memfd_create/ftruncate/
 * allocation failures. */
__must_check int mm_pool_create(const struct mm_pool_config *cfg,
				struct mm_pool **out);
void mm_pool_destroy(struct mm_pool *pool);
int mm_pool_fd(const struct mm_pool *pool);
uint64_t mm_pool_frames(const struct mm_pool *pool);
void mm_set_grouping(struct mm_pool *pool, bool on);
bool mm_grouping(const struct mm_pool *pool);
void mm_set_policy(struct mm_pool *pool, unsigned int policy);

/*
 * Host memory. The memfd reserves nothing: a pageblock is populated when
 * it first serves allocations (and made one host transparent huge page
 * then, with cfg.host_huge), and page reporting gives wholly free
 * pageblocks back (FALLOC_FL_PUNCH_HOLE) once they stayed free from one
 * pass to the next, @delay_ms apart. Only whole free pageblocks go back.
 */
/* The view of the whole pool, never PMD-mapped (so smaps counts guests only). */
uint8_t *mm_pool_base(const struct mm_pool *pool);
/*
 * Such a view of a memfd @fd of @size bytes: starts one page off a 2 MiB
 * boundary.
 */
__must_check int mm_map_pool_view(int fd, size_t size, uint8_t **out);
/* The same place, mapping nothing (PROT_NONE): pageblocks mapped into it one by one. */
__must_check int mm_reserve_pool_view(size_t size, uint8_t **out);
/* -EOPNOTSUPP on a metadata-only pool: it has nothing to give back. */
__must_check int mm_page_reporting_start(struct mm_pool *pool,
					 unsigned int delay_ms);
void mm_page_reporting_stop(struct mm_pool *pool);
/*
 * Make up to @pageblocks free pageblocks host huge pages now, ahead of
 * use (a reservation: with page reporting on they go back when idle).
 * Returns how many were made.
 */
uint64_t mm_pool_populate(struct mm_pool *pool, uint64_t pageblocks);
/* Give back every wholly free pageblock now; how many went back. */
uint64_t mm_release_free(struct mm_pool *pool);
/* Host memory the pool's memfd holds, from the kernel (st_blocks), or -errno. */
int64_t mm_pool_host_bytes(const struct mm_pool *pool);
/* Was the pageblock of @frame made a host huge page (and not given back)? */
bool mm_pageblock_host_huge(struct mm_pool *pool, uint64_t frame);
/* Make the pageblock of @frame a host huge page now if it waits for it. */
void mm_pageblock_prepare(struct mm_pool *pool, uint64_t frame);
/*
 * The caller just allocated the whole pageblock at @frame: does it read
 * zero without being cleared (it had no host memory when taken)? Once.
 */
bool mm_pageblock_take_zeroed(struct mm_pool *pool, uint64_t frame);
/* MADV_COLLAPSE of the 2 MiB at @addr, with the retries kernels need. */
__must_check int mm_host_collapse(void *addr);

/*
 * Owners: whoever holds allocations registers the operations the
 * allocator may call to move or take back a block. Both are called
 * without the pool lock and may fail; the block stays as it was then.
 *
 * migrate: copy 2^order frames from @old to @new and switch every user of
 *          the memory to @new; 0 or -EBUSY (any error).
 * reclaim: give the block up (a page the guest reported free, a cache);
 *          on 0 the allocator frees it and the owner must forget it.
 *          Any error: not now (a page in use); lumpy reclaim then moves
 *          the block if it can migrate (compaction does not: it asks only
 *          owners whose reclaim writes nothing, below).
 * reclaim_writes: reclaim costs a write (a swap file) and the guest a
 *          fault to read it back: compaction moves such blocks and leaves
 *          reclaim to lumpy reclaim and mm_shrink, which exist to free
 *          memory, as Linux's compaction migrates and never reclaims.
 *
 * UNMOVABLE allocations and pinned ones are never offered to either.
 *
 * An owner in another process may not know in time whether it moved the
 * block: migrate then returns -EINPROGRESS, and both blocks become the
 * owner's allocations (@new of the same order and type); the owner frees
 * later whichever of the two it does not use.
 */
struct mm_owner_ops {
	int (*migrate)(void *priv, uint64_t old_frame, uint64_t new_frame,
		       unsigned int order);
	int (*reclaim)(void *priv, uint64_t frame, unsigned int order);
	bool reclaim_writes;
};

__must_check int mm_owner_register(struct mm_pool *pool,
				   const struct mm_owner_ops *ops,
				   void *priv, uint32_t *id);
/* Waits for a callback in flight; the owner's blocks become immovable. */
void mm_owner_unregister(struct mm_pool *pool, uint32_t id);
/*
 * Free every block @id owns, pinned or not (the owner is gone: a process
 * that died); returns the pages freed. Blocks being moved are freed when
 * their move ends. Call after mm_owner_unregister.
 */
uint64_t mm_free_owner(struct mm_pool *pool, uint32_t id);
/* Pages allocated to @id now (a walk of the pool). */
uint64_t mm_owner_pages(struct mm_pool *pool, uint32_t id);
/*
 * Pageblocks owned whole (a pool shared by VMs of different owners; call
 * before the first allocation and owner, else -EBUSY): each registered
 * owner's allocations come from pageblocks of its own, taken from the
 * pool's free 2 MiB blocks as it needs them and given back when wholly
 * free; compaction moves an owner's pages only within its own pageblocks.
 * An allocation that would take an owner past its limit fails -EDQUOT.
 */
__must_check int mm_set_owned_blocks(struct mm_pool *pool);
/*
 * A file per pageblock (needs a memfd; before the first allocation, else
 * -EBUSY): a pageblock wholly free again gets a fresh file before anyone
 * can take it, its old one truncated, so a file handed to the holder of
 * a pageblock (mm_pageblock_file) never reaches anyone else's data.
 */
__must_check int mm_set_pageblock_files(struct mm_pool *pool);
/*
 * A copy of the descriptor of @frame's pageblock if @owner owns it now;
 * -ESRCH if not.
 */
__must_check int mm_pageblock_file(struct mm_pool *pool, uint64_t frame, uint32_t owner);
/* The descriptor and offset behind a frame the caller holds (not a copy). */
int mm_frame_file(const struct mm_pool *pool, uint64_t frame, off_t *off);
__must_check int mm_owner_set_limit(struct mm_pool *pool, uint32_t owner, uint64_t pageblocks);
/* Pageblocks @owner holds now (0 without owned pageblocks): a count, not a walk. */
uint64_t mm_owner_pageblocks(struct mm_pool *pool, uint32_t owner);
/* Pins keep a block in place (a device ring in use). -EAGAIN: being moved. */
__must_check int mm_pin(struct mm_pool *pool, uint64_t frame);
__must_check int mm_unpin(struct mm_pool *pool, uint64_t frame);
/*
 * mm_split, mm_pin or mm_unpin of the block at @frame if @owner holds it,
 * checked and done under one lock; -EPERM when another owner does.
 */
enum mm_owned_op { MM_OWNED_SPLIT, MM_OWNED_PIN, MM_OWNED_UNPIN, MM_OWNED_OPS };
__must_check int mm_owned_op(struct mm_pool *pool, uint64_t frame, uint32_t owner,
			     enum mm_owned_op op);
/* Cache hint: the block at @frame will be freed or asked about soon. */
void mm_prefetch(struct mm_pool *pool, uint64_t frame);
/* Later, once mm_prefetch has brought it in: its LRU neighbours too. */
void mm_prefetch_links(struct mm_pool *pool, uint64_t frame);
/* Recency hint for the LRU: the block was used. */
void mm_touch(struct mm_pool *pool, uint64_t frame);
/* Reclaim up to @pages from the LRU tails of the types in @mask. */
uint64_t mm_shrink(struct mm_pool *pool, uint64_t pages, unsigned int mask);

enum mm_compact_result {
	COMPACT_SKIPPED,	/* too little free memory: reclaim first */
	COMPACT_COMPLETE,	/* scanners met without producing the block */
	COMPACT_SUCCESS,	/* a free block of the order exists now */
};

/* Direct compaction towards one free block of @order. */
enum mm_compact_result mm_compact(struct mm_pool *pool, unsigned int order);
/* Compact the whole pool (scanners meet), ignoring skip hints. */
void mm_compact_all(struct mm_pool *pool);

/*
 * Proactive compaction: a background thread that checks every
 * @interval_ms and compacts while the fragmentation score is above
 * @target + 10, down to @target (0..100, see mm_fragmentation_score).
 */
__must_check int mm_kcompactd_start(struct mm_pool *pool, unsigned int target,
				    unsigned int interval_ms);
void mm_kcompactd_stop(struct mm_pool *pool);

/*
 * Per-thread lists (the seed's per-cpu pages): one per allocating thread.
 * Only its owner thread allocates and frees through it; any thread may
 * drain it (mm_drain_all). Destroying it returns its frames to the pool.
 */
__must_check int mm_pcp_create(struct mm_pool *pool, struct mm_pcp **out);
void mm_pcp_destroy(struct mm_pcp *pcp);
unsigned int mm_pcp_count(const struct mm_pcp *pcp);

/*
 * Allocate 2^order frames, aligned, of the given migratetype, owned by
 * @owner (an opaque cookie, MM_NO_OWNER allowed). @pcp may be NULL; order-0
 * requests through a pcp are served from the per-thread list.
 * Returns the first frame number (>= 0) or -EINVAL (bad order/type) or
 * -ENOMEM (nothing fits, even after draining every per-thread list).
 */
__must_check long mm_alloc(struct mm_pool *pool, struct mm_pcp *pcp,
			   unsigned int order, enum mm_migratetype mt,
			   uint32_t owner);

/*
 * A MOVABLE allocation that never reclaims or compacts, which call back
 * into owners: for a caller holding a lock an owner's callback takes (a
 * VM's fault path under its memory lock). Only the per-thread lists are
 * spilled before it gives up with -ENOMEM.
 */
__must_check long mm_alloc_nowait(struct mm_pool *pool, struct mm_pcp *pcp,
				  unsigned int order, uint32_t owner);

/*
 * Free the block whose head is @frame. Returns 0, -EINVAL when @frame is
 * out of range or not the head of an allocated block, -EALREADY when it is
 * already free (a double free: counted in mm_stats.double_frees).
 */
__must_check int mm_free(struct mm_pool *pool, struct mm_pcp *pcp,
			 uint64_t frame);

/*
 * mm_free for a caller that answers for @owner only (a pool service
 * serving many processes): the order of the block freed, -EPERM when the
 * block is not @owner's, or mm_free's errors.
 */
__must_check int mm_free_owned(struct mm_pool *pool, uint64_t frame, uint32_t owner);

/*
 * Turn the allocated block at @frame into 2^order order-0 allocations of
 * the same owner and type, in place (a 2 MiB backing going back to 4 KiB
 * pages). -EBUSY while it is pinned or being moved.
 */
__must_check int mm_split(struct mm_pool *pool, uint64_t frame);

/* Spill every per-thread list back into the buddy lists (patch 006). */
void mm_drain_all(struct mm_pool *pool);

enum mm_frame_state {
	MM_FRAME_TAIL,		/* inside a block, not its head */
	MM_FRAME_FREE,		/* head of a free buddy block */
	MM_FRAME_ALLOC,		/* head of an allocated block */
	MM_FRAME_PCP,		/* order-0 frame cached on a per-thread list */
};

struct mm_frame_info {
	enum mm_frame_state state;
	unsigned int order;
	enum mm_migratetype mt;	/* allocation type, or free list type */
	uint32_t owner;
	unsigned int pins;
	bool moving;		/* isolated for migration or reclaim */
};

__must_check int mm_frame_info(struct mm_pool *pool, uint64_t frame,
			       struct mm_frame_info *info);

/*
 * The pins of a range of frames in one call, e.g. the 512 frames behind a
 * 2 MiB guest range, which may be scattered over the pool: the pool and
 * per-thread locks are taken once for all @n frames, not once a frame as
 * mm_frame_info does. A frame is pinned when the block covering it is.
 *
 * Returns how many of the @n frames are pinned (0: none is), or -EINVAL
 * when any frame is past the pool (then nothing is counted). When
 * @unallocated is not NULL it gets how many frames are free or cached on a
 * per-thread list. The pinned count holds until the caller's next
 * mm_unpin; the unallocated one only as long as nobody allocates or frees.
 */
__must_check long mm_frames_pinned(struct mm_pool *pool,
				   const uint32_t *frames, size_t n,
				   size_t *unallocated);
enum mm_migratetype mm_pageblock_migratetype(struct mm_pool *pool,
					     uint64_t pageblock);

/* Free memory in pageblock-sized pieces on the buddy lists (cheap: no walk). */
uint64_t mm_free_pageblocks(struct mm_pool *pool);

/* Statistics: a consistent snapshot taken under the pool lock. */
struct mm_counters {
	uint64_t alloc[MM_MAX_ORDER];		/* successful allocations */
	uint64_t alloc_fail;
	uint64_t frees;
	uint64_t fallback[MIGRATE_TYPES];	/* by requested type */
	uint64_t pageblock_steal;		/* whole blocks converted */
	uint64_t pcp_refill;
	uint64_t pcp_drain_all;
	uint64_t double_frees;
	uint64_t bad_frees;
	/* like /proc/vmstat */
	uint64_t compact_stall;
	uint64_t compact_success;
	uint64_t compact_fail;
	uint64_t compact_migrate_scanned;
	uint64_t compact_free_scanned;
	uint64_t compact_isolated;
	uint64_t pgmigrate_success;
	uint64_t pgmigrate_fail;
	uint64_t lumpy_attempt;
	uint64_t lumpy_success;
	uint64_t lumpy_reclaimed;	/* pages */
	uint64_t lumpy_migrated;	/* pages */
	uint64_t reclaim_success;	/* blocks */
	uint64_t reclaim_fail;
	uint64_t claim_block;		/* blocks compacted free for unmovable */
	uint64_t claim_deferred;	/* claims skipped after failed ones */
	uint64_t kcompactd_wake;
	uint64_t deferred_frees;	/* freed by owner while being moved */
	uint64_t host_huge;		/* pageblocks made host huge pages */
	uint64_t host_huge_fail;
	uint64_t host_released;		/* pageblocks given back to the host */
	uint64_t host_release_fail;
	uint64_t owned_claimed;		/* free pageblocks an owner took whole */
	uint64_t owned_released;	/* owned pageblocks wholly free again */
	uint64_t pb_retired;		/* pageblocks given a fresh file (pbfile.c) */
	uint64_t pb_retire_fail;	/* tries that failed: the pageblock waits */
};

struct mm_stats {
	uint64_t frames;
	uint64_t pageblocks;
	uint64_t free_pages;			/* on buddy free lists */
	uint64_t pcp_pages;			/* cached on per-thread lists */
	uint64_t nr_free[MM_MAX_ORDER];		/* buddyinfo */
	uint64_t nr_free_type[MIGRATE_TYPES][MM_MAX_ORDER]; /* pagetypeinfo */
	uint64_t pageblocks_type[MIGRATE_TYPES];
	uint64_t allocated_pages[MIGRATE_TYPES];
	uint64_t pinned_pages;
	uint64_t lru_pages[MIGRATE_TYPES][MM_LRU_LISTS];
	uint64_t mixed_pageblocks;	/* holding allocations of >1 type */
	uint64_t free_pageblocks;	/* pageblocks with no allocation */
	struct mm_counters counters;
	bool grouping;
	/* host memory: the kernel's count (memfd st_blocks) and ours */
	int64_t host_bytes;			/* -errno when unknown */
	uint64_t host_pageblocks;		/* served allocations since last given back */
	uint64_t host_huge_pageblocks;		/* of which made host huge pages */
	int host_huge_errno;			/* why the last one failed, 0 */
};

__must_check int mm_stats(struct mm_pool *pool, struct mm_stats *st);

/* One pageblock as the reports and the picture see it. */
#define MM_OWNER_MIXED	UINT32_MAX
struct mm_pageblock_info {
	enum mm_migratetype mt;		/* the pageblock's type */
	uint8_t alloc_types;		/* bit (1 << type) per type allocated in it */
	uint32_t owner;			/* MM_NO_OWNER, one owner, or MM_OWNER_MIXED */
	uint16_t free_pages;		/* on the buddy lists */
	uint16_t used_pages;		/* allocated (cached pages count as neither) */
	bool whole;			/* one allocation covers the whole block */
};

typedef void (*mm_pageblock_fn)(void *opaque, uint64_t pb,
				const struct mm_pageblock_info *info);

/* Call @fn for every pageblock, from a consistent snapshot (Linux's
 * walk_zones_in_node feeding /proc/pagetypeinfo). */
__must_check int mm_pageblock_walk(struct mm_pool *pool, mm_pageblock_fn fn,
				   void *opaque);
/*
 * @owner's pageblocks (pageblocks owned whole) from @first on, ascending,
 * at most @max: their count, -ENOENT for no such owner. Costs what the
 * owner holds, not the pool.
 */
__must_check long mm_owner_pageblock_walk(struct mm_pool *pool, uint32_t owner, uint64_t first,
					  uint64_t max, mm_pageblock_fn fn, void *opaque);
/* The same for pageblocks [@first, @first + @n) only, at their cost. */
__must_check int mm_pageblock_walk_range(struct mm_pool *pool, uint64_t first, uint64_t n,
					 mm_pageblock_fn fn, void *opaque);

/* Free blocks of @order on the buddy lists of @st: larger free blocks count as several. */
uint64_t mm_free_blocks(const struct mm_stats *st, unsigned int order);
/*
 * Formulas of Linux's mm/vmstat.c over a snapshot. The unusable free space
 * index is in [0, 1]; the fragmentation index is in [0, 1], or -1 when a
 * free block of @order exists (the allocation would succeed).
 */
double mm_unusable_index(const struct mm_stats *st, unsigned int order);
double mm_fragmentation_index(const struct mm_stats *st, unsigned int order);
/*
 * Linux's per-zone fragmentation score for proactive compaction: the
 * unusable free space index at the pageblock order, in 0..100.
 */
double mm_fragmentation_score(const struct mm_stats *st);
/* Share (0..1) of free memory sitting in free blocks of order >= @order. */
double mm_free_share_at_least(const struct mm_stats *st, unsigned int order);
/* Metadata the allocator keeps, in bytes per 4 KiB frame. */
double mm_metadata_bytes_per_frame(const struct mm_pool *pool);

const char *mm_migratetype_name(enum mm_migratetype mt);
__must_check int mm_migratetype_parse(const char *s,
				      enum mm_migratetype *mt);

/* /proc/buddyinfo and /proc/pagetypeinfo layouts. */
void mm_print_buddyinfo(const struct mm_stats *st, const char *name, FILE *f);
void mm_print_pagetypeinfo(const struct mm_stats *st, const char *name,
			   FILE *f);

#endif /* GPMM_MM_H */
