// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "vmm/pool.h"

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

void pool_close(struct pool *pool)
{
	if (!pool)
		return;
	mm_pool_destroy(pool->mm);
	free(pool->gpa_of);
	free(pool);
}
