/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host side of the frame pool: mm/'s allocator plus one shared mapping
 * of the whole memfd, through which the VMM zeroes and copies frames.
 */
#ifndef GPMM_VMM_POOL_H
#define GPMM_VMM_POOL_H

#include <stdint.h>

#include "mm/mm.h"

struct pool {
	struct mm_pool *mm;
	uint8_t *base;		/* the whole pool, MAP_SHARED */
	uint64_t size;
	int fd;
	uint64_t *gpa_of;	/* frame -> guest address it backs, + 1; 0: none */
};

__must_check int pool_open(uint64_t size, bool grouping, struct pool **out);
void pool_close(struct pool *pool);

static inline void *pool_frame_ptr(const struct pool *pool, uint64_t frame)
{
	return pool->base + (frame << MM_PAGE_SHIFT);
}

#endif
