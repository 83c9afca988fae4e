// SPDX-License-Identifier: GPL-2.0
/*
 * The pool service's backend (pool_backend.h): a VM process's pool whose
 * frames the host pool service lends (`gpmm run --host-pool`), each
 * operation a request through the client (pool_client.c).
 */
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

static long remote_alloc_page(struct pool *pool, struct mm_pcp *pcp, uint32_t owner)
{
	return pool_client_page(pool->client);
}

static long remote_alloc_pages(struct pool *pool, struct mm_pcp *pcp, unsigned int order,
			       uint32_t owner)
{
	return pool_client_pages(pool->client, order);
}

static long remote_alloc_block_nowait(struct pool *pool, uint32_t owner, uint64_t keep_free,
				      bool *zeroed)
{
	unsigned int bits = 0;
	uint32_t frame;
	long ret = pool_client_alloc_keep(pool->client, MM_PAGEBLOCK_ORDER, 1,
					  POOL_ALLOC_NOWAIT | POOL_ALLOC_PREPARE, keep_free,
					  &frame, &bits);

	*zeroed = bits & 1;
	return ret < 0 ? ret : (long)frame;
}

static long remote_alloc_block(struct pool *pool, uint32_t owner, bool *host_huge)
{
	unsigned int bits = 0;
	uint32_t frame;
	long ret = pool_client_alloc(pool->client, MM_PAGEBLOCK_ORDER, 1, POOL_ALLOC_PREPARE,
				     &frame, &bits);

	*host_huge = bits & 2;
	return ret < 0 ? ret : (long)frame;
}

static int remote_free(struct pool *pool, struct mm_pcp *pcp, uint64_t frame,
		       unsigned int order)
{
	return pool_client_free(pool->client, frame, order);
}

static int remote_split(struct pool *pool, uint64_t frame)
{
	return pool_client_frame_op(pool->client, POOL_SPLIT, frame);
}

static int remote_pin(struct pool *pool, uint64_t frame)
{
	return pool_client_frame_op(pool->client, POOL_PIN, frame);
}

static int remote_unpin(struct pool *pool, uint64_t frame)
{
	return pool_client_frame_op(pool->client, POOL_UNPIN, frame);
}

static long remote_frames_pinned(struct pool *pool, const uint32_t *frames, size_t n,
				 size_t *unallocated)
{
	return pool_client_pinned(pool->client, frames, n, unallocated);
}

static int remote_frames_info(struct pool *pool, const uint32_t *frames, size_t n,
			      struct mm_frame_info *infos)
{
	return pool_client_info(pool->client, frames, n, infos);
}

static int remote_stats(struct pool *pool, struct mm_stats *st)
{
	return pool_client_stats(pool->client, st);
}

/* A VM process sees its own pageblocks of the pool: the rest is other VMs'. */
static int remote_pageblock_walk(struct pool *pool, mm_pageblock_fn fn, void *opaque)
{
	return pool_client_walk_own(pool->client, fn, opaque);
}

/* One VM per VM process: the service's owner id is that VM's. */
static int remote_owner_register(struct pool *pool, const struct mm_owner_ops *ops,
				 void *priv, uint32_t *id)
{
	pool_client_set_owner(pool->client, ops, priv);
	*id = pool->remote_owner;
	return 0;
}

static void remote_owner_unregister(struct pool *pool, uint32_t id)
{
	pool_client_set_owner(pool->client, NULL, NULL);
}

/* A VM process has one cache, the client's: no per-thread list of mm's. */
static int remote_pcp_create(struct pool *pool, struct mm_pcp **out)
{
	*out = NULL;
	return 0;
}

static void remote_close(struct pool *pool)
{
	/* the cache, now: what is left goes back when our socket closes */
	if (pool_client_drain(pool->client) && !pool_client_gone(pool->client))
		fprintf(stderr, "gpmm: the pool service refused frames back\n");
	pool_client_close(pool->client);	/* the view with it */
}

/* Guest memory maps the files of our own pageblocks: we have no other. */
static int remote_frame_file(struct pool *pool, uint64_t frame, off_t *off)
{
	return pool_client_frame_file(pool->client, frame, off);
}

/* Without a service there is no one to give frames back to. */
static long remote_release_all(struct pool *pool, uint32_t owner)
{
	return pool_client_gone(pool->client) ? -EOPNOTSUPP : pool_client_release(pool->client);
}

static const struct pool_ops remote_pool_ops = {
	.name = "pool service",
	.alloc_page = remote_alloc_page,
	.alloc_pages = remote_alloc_pages,
	.alloc_block_nowait = remote_alloc_block_nowait,
	.alloc_block = remote_alloc_block,
	.free = remote_free,
	.split = remote_split,
	.pin = remote_pin,
	.unpin = remote_unpin,
	.frames_pinned = remote_frames_pinned,
	.frames_info = remote_frames_info,
	.stats = remote_stats,
	.pageblock_walk = remote_pageblock_walk,
	.owner_register = remote_owner_register,
	.owner_unregister = remote_owner_unregister,
	.pcp_create = remote_pcp_create,
	.release_all = remote_release_all,
	.frame_file = remote_frame_file,
	.close = remote_close,
};

int pool_open_remote(const char *path, const char *name, uint64_t ram_bytes,
		     struct pool **out, char *err, size_t errlen)
{
	struct pool *pool = calloc(1, sizeof(*pool));
	struct pool_client_info info;
	int ret;

	if (!pool)
		return -ENOMEM;
	ret = pool_client_connect(path, name, ram_bytes, POOL_CLIENT_VM, &pool->client, &info,
				  err, errlen);
	if (ret) {
		free(pool);
		return ret;
	}
	pool->ops = &remote_pool_ops;
	pool->fd = -1;
	pool->base = info.base;
	pool->size = info.frames << MM_PAGE_SHIFT;
	pool->remote_owner = info.owner;
	pool->host = (struct pool_host){ .huge = info.host_huge, .release_ms = info.release_ms,
		.overcommit_pct = info.overcommit_pct ? info.overcommit_pct : 100 };
	pool->gpa_of = calloc(info.frames, sizeof(*pool->gpa_of));
	if (!pool->gpa_of) {
		snprintf(err, errlen, "no memory for the pool's map");
		pool_close(pool);
		return -ENOMEM;
	}
	*out = pool;
	return 0;
}
