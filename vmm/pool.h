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

struct pool {
	struct mm_pool *mm;
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
void pool_close(struct pool *pool);

static inline void *pool_frame_ptr(const struct pool *pool, uint64_t frame)
{
	return pool->base + (frame << MM_PAGE_SHIFT);
}

#endif
