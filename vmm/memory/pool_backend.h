/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host side of the frame pool: mm/'s allocator plus its shared mapping
 * of the whole memfd, through which the VMM zeroes and copies frames.
 */
#ifndef GPMM_VMM_POOL_H
#define GPMM_VMM_POOL_H

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
};

#define POOL_HOST_DEFAULTS	{ .huge = true, .release_ms = 1000 }

struct pool_client;

/*
 * A pool is this process's own (mm != NULL: mm/ runs here) or the host
 * pool service's (client != NULL: `gpmm run --host-pool`, frames lent by
 * `gpmm daemon` in another process). VM code goes through the pool_*
 * functions below, which work on both.
 */
struct pool {
	struct mm_pool *mm;
	struct pool_client *client;
	uint32_t remote_owner;	/* the service's owner id for this process */
	uint8_t *base;		/* the whole pool, MAP_SHARED */
	uint64_t size;
	int fd;
	uint64_t *gpa_of;	/* frame -> guest address it backs, + 1; 0: none */
	struct pool_host host;
	uint64_t populated;	/* pageblocks made huge at start (host.populate) */
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

static inline uint64_t pool_frames(const struct pool *pool)
{
	return pool->size >> MM_PAGE_SHIFT;
}

/*
 * The allocator's calls VM code makes, for either kind of pool. Guest RAM
 * is always movable and never compacted for under a VM's memory lock:
 * only pool_alloc_block (an assembly's block) may compact.
 */
__must_check long pool_alloc_page(struct pool *pool, struct mm_pcp *pcp, uint32_t owner);
/* 2^@order contiguous frames as as many order-0 allocations (fault-around). */
__must_check long pool_alloc_pages(struct pool *pool, struct mm_pcp *pcp, unsigned int order,
				   uint32_t owner);
/*
 * A whole free pageblock, made huge, while more than @keep_free stay free
 * (0: no such limit); *@zeroed: it reads zero already.
 */
__must_check long pool_alloc_block_nowait(struct pool *pool, uint32_t owner, uint64_t keep_free,
					  bool *zeroed);
/* A pageblock, compacting for it; *@host_huge: a host huge page already. */
__must_check long pool_alloc_block(struct pool *pool, uint32_t owner, bool *host_huge);
/* Free the block at @frame of @order (the service needs no order; a cache does). */
__must_check int pool_free(struct pool *pool, struct mm_pcp *pcp, uint64_t frame,
			   unsigned int order);
__must_check int pool_split(struct pool *pool, uint64_t frame);
__must_check int pool_pin(struct pool *pool, uint64_t frame);
__must_check int pool_unpin(struct pool *pool, uint64_t frame);
__must_check long pool_frames_pinned(struct pool *pool, const uint32_t *frames, size_t n,
				     size_t *unallocated);
__must_check int pool_frames_info(struct pool *pool, const uint32_t *frames, size_t n,
				  struct mm_frame_info *infos);
__must_check int pool_stats(struct pool *pool, struct mm_stats *st);
__must_check int pool_pageblock_walk(struct pool *pool, mm_pageblock_fn fn, void *opaque);
__must_check int pool_owner_register(struct pool *pool, const struct mm_owner_ops *ops,
				     void *priv, uint32_t *id);
void pool_owner_unregister(struct pool *pool, uint32_t id);
__must_check int pool_pcp_create(struct pool *pool, struct mm_pcp **out);
void pool_pcp_destroy(struct mm_pcp *pcp);

static inline void *pool_frame_ptr(const struct pool *pool, uint64_t frame)
{
	return pool->base + (frame << MM_PAGE_SHIFT);
}

#endif
