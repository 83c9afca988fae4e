// SPDX-License-Identifier: GPL-2.0
/*
 * The own pool: mm/'s allocator in this process (`gpmm run` without the
 * pool service, `gpmm daemon`, the benchmarks), as the pool backend's
 * table of operations (pool_backend.h), and what all backends share:
 * opening with the defaults, closing, a per-thread list's end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "vmm/memory/pool_backend.h"

static long own_alloc_page(struct pool *pool, struct mm_pcp *pcp, uint32_t owner)
{
	return mm_alloc_nowait(pool->mm, pcp, 0, owner);
}

static long own_alloc_pages(struct pool *pool, struct mm_pcp *pcp, unsigned int order,
			    uint32_t owner)
{
	long ret = mm_alloc_nowait(pool->mm, pcp, order, owner);

	if (ret >= 0 && mm_split(pool->mm, (uint64_t)ret)) {
		/* compaction looked at it first: leave it, a page will do */
		if (mm_free(pool->mm, pcp, (uint64_t)ret))
			return -EFAULT;
		return -EBUSY;
	}
	return ret;
}

static long own_alloc_block_nowait(struct pool *pool, uint32_t owner, uint64_t keep_free,
				   bool *zeroed)
{
	long ret;

	if (keep_free && mm_free_pageblocks(pool->mm) <= keep_free)
		return -ENOMEM;
	ret = mm_alloc_nowait(pool->mm, NULL, MM_PAGEBLOCK_ORDER, owner);
	if (ret < 0)
		return ret;
	/* another thread may have been making blocks huge as this one was taken */
	mm_pageblock_prepare(pool->mm, (uint64_t)ret);
	*zeroed = mm_pageblock_take_zeroed(pool->mm, (uint64_t)ret);
	return ret;
}

static long own_alloc_block(struct pool *pool, uint32_t owner, bool *host_huge)
{
	long ret = mm_alloc(pool->mm, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, owner);

	if (ret >= 0)
		*host_huge = mm_pageblock_host_huge(pool->mm, (uint64_t)ret);
	return ret;
}

static int own_free(struct pool *pool, struct mm_pcp *pcp, uint64_t frame, unsigned int order)
{
	return mm_free(pool->mm, pcp, frame);
}

static int own_split(struct pool *pool, uint64_t frame)
{
	return mm_split(pool->mm, frame);
}

static int own_pin(struct pool *pool, uint64_t frame)
{
	return mm_pin(pool->mm, frame);
}

static int own_unpin(struct pool *pool, uint64_t frame)
{
	return mm_unpin(pool->mm, frame);
}

static long own_frames_pinned(struct pool *pool, const uint32_t *frames, size_t n,
			      size_t *unallocated)
{
	return mm_frames_pinned(pool->mm, frames, n, unallocated);
}

static int own_frames_info(struct pool *pool, const uint32_t *frames, size_t n,
			   struct mm_frame_info *infos)
{
	for (size_t i = 0; i < n; i++) {
		int ret = mm_frame_info(pool->mm, frames[i], &infos[i]);

		if (ret)
			return ret;
	}
	return 0;
}

static int own_stats(struct pool *pool, struct mm_stats *st)
{
	return mm_stats(pool->mm, st);
}

static int own_pageblock_walk(struct pool *pool, mm_pageblock_fn fn, void *opaque)
{
	return mm_pageblock_walk(pool->mm, fn, opaque);
}

static int own_owner_register(struct pool *pool, const struct mm_owner_ops *ops, void *priv,
			      uint32_t *id)
{
	return mm_owner_register(pool->mm, ops, priv, id);
}

static void own_owner_unregister(struct pool *pool, uint32_t id)
{
	mm_owner_unregister(pool->mm, id);
}

static int own_pcp_create(struct pool *pool, struct mm_pcp **out)
{
	return mm_pcp_create(pool->mm, out);
}

/* The pool's memfd, or once served (a file per pageblock) the pageblock's. */
static int own_frame_file(struct pool *pool, uint64_t frame, off_t *off)
{
	return mm_frame_file(pool->mm, frame, off);
}

static void own_close(struct pool *pool)
{
	mm_pool_destroy(pool->mm);
}

static const struct pool_ops own_pool_ops = {
	.name = "own",
	.alloc_page = own_alloc_page,
	.alloc_pages = own_alloc_pages,
	.alloc_block_nowait = own_alloc_block_nowait,
	.alloc_block = own_alloc_block,
	.free = own_free,
	.split = own_split,
	.pin = own_pin,
	.unpin = own_unpin,
	.frames_pinned = own_frames_pinned,
	.frames_info = own_frames_info,
	.stats = own_stats,
	.pageblock_walk = own_pageblock_walk,
	.owner_register = own_owner_register,
	.owner_unregister = own_owner_unregister,
	.pcp_create = own_pcp_create,
	.frame_file = own_frame_file,
	.close = own_close,
};

/*
 * A VMM's pool groups by mobility and uses every means to make 2 MiB
 * blocks; plain buddy (grouping off) is there to measure against. Its
 * pageblocks become host huge pages when first used and go back to the
 * host when they stay free (mm/hostmem.c), unless @host says otherwise.
 */
int pool_open_host(uint64_t size, bool grouping, const struct pool_host *host,
		   struct pool **out)
{
	struct mm_pool_config cfg = { .size = size, .grouping = grouping,
				      .policy = grouping ? MM_POLICY_ALL : 0,
				      .name = "gpmm-pool", .host_huge = host->huge };
	struct pool *pool = calloc(1, sizeof(*pool));
	int err;

	if (!pool)
		return -ENOMEM;
	err = mm_pool_create(&cfg, &pool->mm);
	if (err)
		goto fail;
	pool->ops = &own_pool_ops;
	pool->fd = mm_pool_fd(pool->mm);
	pool->size = mm_pool_frames(pool->mm) << MM_PAGE_SHIFT;
	pool->base = mm_pool_base(pool->mm);
	pool->host = *host;
	pool->gpa_of = calloc(pool->size >> MM_PAGE_SHIFT, sizeof(*pool->gpa_of));
	err = pool->gpa_of ? 0 : -ENOMEM;
	if (host->populate) {
		pool->host.release_ms = 0;
		pool->populated = mm_pool_populate(pool->mm, pool->size >> MM_PAGEBLOCK_SHIFT);
	} else if (!err && host->release_ms) {
		err = mm_page_reporting_start(pool->mm, host->release_ms);
	}
	if (err) {
		free(pool->gpa_of);
		mm_pool_destroy(pool->mm);
		goto fail;
	}
	*out = pool;
	return 0;
fail:
	free(pool);
	return err;
}

int pool_open(uint64_t size, bool grouping, struct pool **out)
{
	static const struct pool_host defaults = POOL_HOST_DEFAULTS;

	return pool_open_host(size, grouping, &defaults, out);
}

void pool_close(struct pool *pool)
{
	if (!pool)
		return;
	if (pool->ops)
		pool->ops->close(pool);
	free(pool->gpa_of);
	free(pool);
}

uint64_t pool_lendable(const struct pool *pool)
{
	unsigned int pct = pool->host.overcommit_pct ? pool->host.overcommit_pct : 100;

	return pool->size / 100 * pct + pool->size % 100 * pct / 100;
}

int pool_admit(struct pool *pool, uint64_t bytes, char *err, size_t errlen)
{
	uint64_t cur = __atomic_load_n(&pool->admitted, __ATOMIC_RELAXED);
	uint64_t lendable = pool_lendable(pool);

	if (bytes > lendable) {
		snprintf(err, errlen, "ram %llu MiB is larger than the pool lends (%llu MiB%s):"
			 " give the pool more (--pool)%s", (unsigned long long)(bytes >> 20),
			 (unsigned long long)(lendable >> 20),
			 pool_overcommitted(pool) ? ", overcommitted" : "",
			 pool_overcommitted(pool) ? " or raise --overcommit" : "");
		return -E2BIG;
	}
	do {
		if (bytes > lendable - cur) {
			snprintf(err, errlen, "%llu MiB of RAM do not fit: the pool lends %llu of"
				 " %llu MiB already", (unsigned long long)(bytes >> 20),
				 (unsigned long long)(cur >> 20),
				 (unsigned long long)(lendable >> 20));
			return -ENOSPC;
		}
	} while (!__atomic_compare_exchange_n(&pool->admitted, &cur, cur + bytes, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 0;
}

void pool_unadmit(struct pool *pool, uint64_t bytes)
{
	__atomic_sub_fetch(&pool->admitted, bytes, __ATOMIC_RELAXED);
}

void pool_pcp_destroy(struct mm_pcp *pcp)
{
	if (pcp)
		mm_pcp_destroy(pcp);
}
