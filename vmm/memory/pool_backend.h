/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame pool as VM code sees it: a shared view of the frames it may
 * reach (the whole pool, or a VM process's own pageblocks), through which
 * the VMM zeroes and copies frames, and the allocator's
 * calls, served by one of two backends chosen when the pool is opened:
 * this process's own mm/ allocator (pool_own.c), or the host pool service
 * in another process (vmm/pool_service/pool_remote.c). Each backend is a
 * table of operations; nothing else asks which one it is.
 */
#ifndef GPMM_POOL_BACKEND_H
#define GPMM_POOL_BACKEND_H

#include <errno.h>
#include <stdint.h>

#include "mm/mm.h"

/*
 * What the pool does with host memory: make pageblocks host huge pages
 * when first used; give wholly free pageblocks back after they stayed
 * free for @release_ms (0: never, the pool keeps its peak). @populate
 * takes the whole pool from the host at once, as huge pages, and keeps
 * it (a reservation, like QEMU's prealloc): release is off then.
 */
struct pool_host {
	bool huge;
	bool populate;
	unsigned int release_ms;
	/*
	 * Admission lends up to this % of the pool as guest RAM (100: every
	 * VM's RAM fits; more: overcommit, the VMs swap what does not).
	 */
	unsigned int overcommit_pct;
};

#define POOL_HOST_DEFAULTS	{ .huge = true, .release_ms = 1000, .overcommit_pct = 100 }

struct pool;
struct pool_client;

/*
 * What a backend does for the pool_* calls below (see there). Guest RAM
 * is always movable and never compacted for under a VM's memory lock:
 * only alloc_block (an assembly's block) may compact.
 */
struct pool_ops {
	const char *name;
	long (*alloc_page)(struct pool *pool, struct mm_pcp *pcp, uint32_t owner);
	long (*alloc_pages)(struct pool *pool, struct mm_pcp *pcp, unsigned int order,
			    uint32_t owner);
	long (*alloc_block_nowait)(struct pool *pool, uint32_t owner, uint64_t keep_free,
				   bool *zeroed);
	long (*alloc_block)(struct pool *pool, uint32_t owner, bool *host_huge);
	int (*free)(struct pool *pool, struct mm_pcp *pcp, uint64_t frame, unsigned int order);
	int (*split)(struct pool *pool, uint64_t frame);
	int (*pin)(struct pool *pool, uint64_t frame);
	int (*unpin)(struct pool *pool, uint64_t frame);
	long (*frames_pinned)(struct pool *pool, const uint32_t *frames, size_t n,
			      size_t *unallocated);
	int (*frames_info)(struct pool *pool, const uint32_t *frames, size_t n,
			   struct mm_frame_info *infos);
	int (*stats)(struct pool *pool, struct mm_stats *st);
	int (*pageblock_walk)(struct pool *pool, mm_pageblock_fn fn, void *opaque);
	int (*owner_register)(struct pool *pool, const struct mm_owner_ops *ops, void *priv,
			      uint32_t *id);
	void (*owner_unregister)(struct pool *pool, uint32_t id);
	int (*pcp_create)(struct pool *pool, struct mm_pcp **out);
	/* Optional: every frame of @owner back in one step (NULL: free each). */
	long (*release_all)(struct pool *pool, uint32_t owner);
	/* The descriptor and offset behind a frame the caller holds (not a copy). */
	int (*frame_file)(struct pool *pool, uint64_t frame, off_t *off);
	/* What the backend holds besides struct pool's common fields. */
	void (*close)(struct pool *pool);
};

/*
 * A pool is this process's own (mm != NULL: mm/ runs here) or the host
 * pool service's (client != NULL: `gpmm run --host-pool`, frames lent by
 * `gpmm daemon` in another process); ops is the backend's table.
 */
struct pool {
	const struct pool_ops *ops;
	struct mm_pool *mm;
	struct pool_client *client;
	uint32_t remote_owner;	/* the service's owner id for this process */
	uint8_t *base;		/* the whole pool, MAP_SHARED */
	uint64_t size;
	int fd;
	uint64_t *gpa_of;	/* frame -> guest address it backs, + 1; 0: none */
	struct pool_host host;
	uint64_t populated;	/* pageblocks made huge at start (host.populate) */
	uint64_t admitted;	/* RAM of the VMs it serves, bytes; atomic */
};

__must_check int pool_open_host(uint64_t size, bool grouping,
				const struct pool_host *host, struct pool **out);
/* With POOL_HOST_DEFAULTS. */
__must_check int pool_open(uint64_t size, bool grouping, struct pool **out);
/*
 * The host pool of the service on @path, for one VM of @ram_bytes named
 * @name. -errno with the service's reason in @err.
 */
__must_check int pool_open_remote(const char *path, const char *name, uint64_t ram_bytes,
				  struct pool **out, char *err, size_t errlen);
void pool_close(struct pool *pool);

/*
 * Admission, one count for every VM a pool serves (a `gpmm run`'s one VM,
 * the daemon's own VMs and the service's VM processes alike): @bytes of
 * RAM are promised only while the RAM of all its VMs fits in the pool's
 * size times its overcommit ratio (host.overcommit_pct; 100: the pool is
 * never promised twice). -E2BIG or -ENOSPC with the reason in @err.
 */
__must_check int pool_admit(struct pool *pool, uint64_t bytes, char *err, size_t errlen);
void pool_unadmit(struct pool *pool, uint64_t bytes);

/* The RAM a pool may promise: its size times the overcommit ratio. */
uint64_t pool_lendable(const struct pool *pool);

static inline bool pool_overcommitted(const struct pool *pool)
{
	return pool->host.overcommit_pct > 100;
}

static inline uint64_t pool_frames(const struct pool *pool)
{
	return pool->size >> MM_PAGE_SHIFT;
}

/*
 * The allocator's calls VM code makes, for either kind of pool. Guest RAM
 * is always movable and never compacted for under a VM's memory lock:
 * only pool_alloc_block (an assembly's block) may compact.
 */
/* 2^@order contiguous frames as as many order-0 allocations (fault-around). */
static inline __must_check long pool_alloc_pages(struct pool *pool, struct mm_pcp *pcp,
						 unsigned int order, uint32_t owner)
{
	return pool->ops->alloc_pages(pool, pcp, order, owner);
}

static inline __must_check long pool_alloc_page(struct pool *pool, struct mm_pcp *pcp,
						uint32_t owner)
{
	return pool->ops->alloc_page(pool, pcp, owner);
}

/*
 * A whole free pageblock, made huge, while more than @keep_free stay free
 * (0: no such limit); *@zeroed: it reads zero already.
 */
static inline __must_check long pool_alloc_block_nowait(struct pool *pool, uint32_t owner,
							uint64_t keep_free, bool *zeroed)
{
	return pool->ops->alloc_block_nowait(pool, owner, keep_free, zeroed);
}

/* A pageblock, compacting for it; *@host_huge: a host huge page already. */
static inline __must_check long pool_alloc_block(struct pool *pool, uint32_t owner,
						 bool *host_huge)
{
	return pool->ops->alloc_block(pool, owner, host_huge);
}

/* Free the block at @frame of @order (the service needs no order; a cache does). */
static inline __must_check int pool_free(struct pool *pool, struct mm_pcp *pcp, uint64_t frame,
					 unsigned int order)
{
	return pool->ops->free(pool, pcp, frame, order);
}

static inline __must_check int pool_split(struct pool *pool, uint64_t frame)
{
	return pool->ops->split(pool, frame);
}

static inline __must_check int pool_pin(struct pool *pool, uint64_t frame)
{
	return pool->ops->pin(pool, frame);
}

static inline __must_check int pool_unpin(struct pool *pool, uint64_t frame)
{
	return pool->ops->unpin(pool, frame);
}

static inline __must_check long pool_frames_pinned(struct pool *pool, const uint32_t *frames,
						   size_t n, size_t *unallocated)
{
	return pool->ops->frames_pinned(pool, frames, n, unallocated);
}

static inline __must_check int pool_frames_info(struct pool *pool, const uint32_t *frames,
						size_t n, struct mm_frame_info *infos)
{
	return pool->ops->frames_info(pool, frames, n, infos);
}

static inline __must_check int pool_stats(struct pool *pool, struct mm_stats *st)
{
	return pool->ops->stats(pool, st);
}

static inline __must_check int pool_pageblock_walk(struct pool *pool, mm_pageblock_fn fn,
						   void *opaque)
{
	return pool->ops->pageblock_walk(pool, fn, opaque);
}

static inline __must_check int pool_owner_register(struct pool *pool,
						   const struct mm_owner_ops *ops, void *priv,
						   uint32_t *id)
{
	return pool->ops->owner_register(pool, ops, priv, id);
}

static inline void pool_owner_unregister(struct pool *pool, uint32_t id)
{
	pool->ops->owner_unregister(pool, id);
}

static inline __must_check int pool_pcp_create(struct pool *pool, struct mm_pcp **out)
{
	return pool->ops->pcp_create(pool, out);
}

void pool_pcp_destroy(struct mm_pcp *pcp);

/*
 * A VM that ends gives every frame back at once where the backend can
 * (the service frees what it owns in one request, not a round trip per
 * frame): the frames given back, or -EOPNOTSUPP and the VM frees each.
 */
static inline __must_check long pool_release_all(struct pool *pool, uint32_t owner)
{
	return pool->ops->release_all ? pool->ops->release_all(pool, owner) : -EOPNOTSUPP;
}

/*
 * What to map for a frame the caller holds: the pool's memfd, or with a
 * file per pageblock (a served pool, a VM process's) its pageblock's.
 */
static inline int pool_frame_file(struct pool *pool, uint64_t frame, off_t *off)
{
	return pool->ops->frame_file(pool, frame, off);
}

static inline void *pool_frame_ptr(const struct pool *pool, uint64_t frame)
{
	return pool->base + (frame << MM_PAGE_SHIFT);
}

#endif
