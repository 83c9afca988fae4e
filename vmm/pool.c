// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "vmm/pool.h"

/*
 * A VMM's pool groups by mobility and uses every means to make 2 MiB
 * blocks; plain buddy (grouping off) is there to measure against.
 */
int pool_open(uint64_t size, bool grouping, struct pool **out)
{
	struct mm_pool_config cfg = { .size = size, .grouping = grouping,
				      .policy = grouping ? MM_POLICY_ALL : 0,
				      .name = "gpmm-pool" };
	struct pool *pool = calloc(1, sizeof(*pool));
	int err;

	if (!pool)
		return -ENOMEM;
	err = mm_pool_create(&cfg, &pool->mm);
	if (err)
		goto fail;
	pool->fd = mm_pool_fd(pool->mm);
	pool->size = mm_pool_frames(pool->mm) << MM_PAGE_SHIFT;
	pool->base = mmap(NULL, pool->size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_NORESERVE, pool->fd, 0);
	if (pool->base == MAP_FAILED) {
		err = -errno;
		mm_pool_destroy(pool->mm);
		goto fail;
	}
	pool->gpa_of = calloc(pool->size >> MM_PAGE_SHIFT, sizeof(*pool->gpa_of));
	if (!pool->gpa_of) {
		err = -ENOMEM;
		munmap(pool->base, pool->size);
		mm_pool_destroy(pool->mm);
		goto fail;
	}
	*out = pool;
	return 0;
fail:
	free(pool);
	return err;
}

void pool_close(struct pool *pool)
{
	if (!pool)
		return;
	munmap(pool->base, pool->size);
	mm_pool_destroy(pool->mm);
	free(pool->gpa_of);
	free(pool);
}
