// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/memory/pool_backend.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_proto.h"

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

int pool_open_remote(const char *path, const char *name, uint64_t ram_bytes,
		     struct pool **out, char *err, size_t errlen)
{
	struct pool *pool = calloc(1, sizeof(*pool));
	struct pool_client_info info;
	int ret;

	if (!pool)
		return -ENOMEM;
	ret = pool_client_connect(path, name, ram_bytes, &pool->client, &info, err, errlen);
	if (ret) {
		free(pool);
		return ret;
	}
	pool->fd = info.pool_fd;
	pool->size = info.frames << MM_PAGE_SHIFT;
	pool->remote_owner = info.owner;
	pool->host = (struct pool_host){ .huge = info.host_huge, .release_ms = info.release_ms };
	pool->gpa_of = calloc(info.frames, sizeof(*pool->gpa_of));
	ret = pool->gpa_of ? mm_map_pool_view(pool->fd, pool->size, &pool->base) : -ENOMEM;
	if (ret) {
		snprintf(err, errlen, "mapping the host pool: %s", strerror(-ret));
		pool_close(pool);
		return ret;
	}
	*out = pool;
	return 0;
}

void pool_close(struct pool *pool)
{
	if (!pool)
		return;
	if (pool->client) {
		/* the cache, now: what is left goes back when our socket closes */
		if (pool_client_drain(pool->client) && !pool_client_gone(pool->client))
			fprintf(stderr, "gpmm: the pool service refused frames back\n");
		if (pool->base)
			munmap(pool->base, pool->size);
		pool_client_close(pool->client);
		close(pool->fd);
	}
	mm_pool_destroy(pool->mm);
	free(pool->gpa_of);
	free(pool);
}

long pool_alloc_page(struct pool *pool, struct mm_pcp *pcp, uint32_t owner)
{
	if (pool->client)
		return pool_client_page(pool->client);
	return mm_alloc_nowait(pool->mm, pcp, 0, owner);
}

long pool_alloc_pages(struct pool *pool, struct mm_pcp *pcp, unsigned int order, uint32_t owner)
{
	long ret;

	if (pool->client)
		return pool_client_pages(pool->client, order);
	ret = mm_alloc_nowait(pool->mm, pcp, order, owner);
	if (ret >= 0 && mm_split(pool->mm, (uint64_t)ret)) {
		/* compaction looked at it first: leave it, a page will do */
		if (mm_free(pool->mm, pcp, (uint64_t)ret))
			return -EFAULT;
		return -EBUSY;
	}
	return ret;
}

long pool_alloc_block_nowait(struct pool *pool, uint32_t owner, uint64_t keep_free,
			     bool *zeroed)
{
	unsigned int bits = 0;
	uint32_t frame;
	long ret;

	if (pool->client) {
		ret = pool_client_alloc_keep(pool->client, MM_PAGEBLOCK_ORDER, 1,
					     POOL_ALLOC_NOWAIT | POOL_ALLOC_PREPARE, keep_free,
					     &frame, &bits);
		*zeroed = bits & 1;
		return ret < 0 ? ret : (long)frame;
	}
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

long pool_alloc_block(struct pool *pool, uint32_t owner, bool *host_huge)
{
	unsigned int bits = 0;
	uint32_t frame;
	long ret;

	if (pool->client) {
		ret = pool_client_alloc(pool->client, MM_PAGEBLOCK_ORDER, 1, POOL_ALLOC_PREPARE,
					&frame, &bits);
		*host_huge = bits & 2;
		return ret < 0 ? ret : (long)frame;
	}
	ret = mm_alloc(pool->mm, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, owner);
	if (ret >= 0)
		*host_huge = mm_pageblock_host_huge(pool->mm, (uint64_t)ret);
	return ret;
}

int pool_free(struct pool *pool, struct mm_pcp *pcp, uint64_t frame, unsigned int order)
{
	if (pool->client)
		return pool_client_free(pool->client, frame, order);
	return mm_free(pool->mm, pcp, frame);
}

int pool_split(struct pool *pool, uint64_t frame)
{
	if (pool->client)
		return pool_client_frame_op(pool->client, POOL_SPLIT, frame);
	return mm_split(pool->mm, frame);
}

int pool_pin(struct pool *pool, uint64_t frame)
{
	if (pool->client)
		return pool_client_frame_op(pool->client, POOL_PIN, frame);
	return mm_pin(pool->mm, frame);
}

int pool_unpin(struct pool *pool, uint64_t frame)
{
	if (pool->client)
		return pool_client_frame_op(pool->client, POOL_UNPIN, frame);
	return mm_unpin(pool->mm, frame);
}

long pool_frames_pinned(struct pool *pool, const uint32_t *frames, size_t n,
			size_t *unallocated)
{
	if (pool->client)
		return pool_client_pinned(pool->client, frames, n, unallocated);
	return mm_frames_pinned(pool->mm, frames, n, unallocated);
}

int pool_frames_info(struct pool *pool, const uint32_t *frames, size_t n,
		     struct mm_frame_info *infos)
{
	if (pool->client)
		return pool_client_info(pool->client, frames, n, infos);
	for (size_t i = 0; i < n; i++) {
		int ret = mm_frame_info(pool->mm, frames[i], &infos[i]);

		if (ret)
			return ret;
	}
	return 0;
}

int pool_stats(struct pool *pool, struct mm_stats *st)
{
	if (pool->client)
		return pool_client_stats(pool->client, st);
	return mm_stats(pool->mm, st);
}

int pool_pageblock_walk(struct pool *pool, mm_pageblock_fn fn, void *opaque)
{
	if (pool->client)
		return pool_client_walk(pool->client, fn, opaque);
	return mm_pageblock_walk(pool->mm, fn, opaque);
}

/* One VM per VM process: the service's owner id is that VM's. */
int pool_owner_register(struct pool *pool, const struct mm_owner_ops *ops, void *priv,
			uint32_t *id)
{
	if (!pool->client)
		return mm_owner_register(pool->mm, ops, priv, id);
	pool_client_set_owner(pool->client, ops, priv);
	*id = pool->remote_owner;
	return 0;
}

void pool_owner_unregister(struct pool *pool, uint32_t id)
{
	if (pool->client)
		pool_client_set_owner(pool->client, NULL, NULL);
	else
		mm_owner_unregister(pool->mm, id);
}

/* A VM process has one cache, the client's: no per-thread list of mm's. */
int pool_pcp_create(struct pool *pool, struct mm_pcp **out)
{
	*out = NULL;
	return pool->client ? 0 : mm_pcp_create(pool->mm, out);
}

void pool_pcp_destroy(struct mm_pcp *pcp)
{
	if (pcp)
		mm_pcp_destroy(pcp);
}
