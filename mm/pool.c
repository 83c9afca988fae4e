// SPDX-License-Identifier: GPL-2.0
/*
 * The frame pool: one memfd whose 4 KiB offsets are the frames, and the
 * metadata that describes them. A metadata-only pool has no memfd: its
 * frames are numbers, and only the metadata takes host memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mm/internal.h"

static int pool_open_memfd(const char *name, size_t size)
{
	int fd = MM_FAULT_OR(MM_FAULT_MEMFD, -1,
			     memfd_create(name ? name : "gpmm-pool", MFD_CLOEXEC));

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * The frame metadata, zeroed: an anonymous mapping of its own, asked for
 * as transparent huge pages. Buddies, free-list neighbours and migration
 * targets are all over it, so on 4 KiB pages nearly every look-up in a
 * large pool would miss the TLB as well as the cache. Only what is
 * touched takes host memory.
 */
static size_t frames_bytes(uint64_t nr_frames)
{
	return nr_frames * sizeof(struct mm_frame);
}

static struct mm_frame *frames_alloc(uint64_t nr_frames)
{
	size_t bytes = frames_bytes(nr_frames);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE);	/* a hint only */
	return p;
}

static void frames_free(struct mm_frame *frames, uint64_t nr_frames)
{
	if (frames)
		munmap(frames, frames_bytes(nr_frames));
}

/*
 * Hand the whole pool to the buddy lists as the largest aligned blocks that
 * fit. Everything starts MOVABLE, as memmap_init_zone does in the seed, so
 * that unmovable allocations have to claim their own pageblocks instead of
 * leaking into every block from the first allocation on.
 */
static void pool_init_free_lists(struct mm_pool *pool)
{
	uint64_t pfn = 0;

	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		for (int t = 0; t < MIGRATE_TYPES; t++)
			list_init(&pool->free_area[o].free_list[t]);

	while (pfn < pool->nr_frames) {
		unsigned int order = MM_MAX_ORDER - 1;

		while ((pfn & ((1UL << order) - 1)) ||
		       pfn + (1UL << order) > pool->nr_frames)
			order--;
		set_pageblocks_migratetype(pool, pfn, order, MIGRATE_MOVABLE);
		__add_free_block(pool, pfn, order, MIGRATE_MOVABLE);
		pfn += 1UL << order;
	}
}

static int pool_check_config(const struct mm_pool_config *cfg, size_t *size)
{
	*size = cfg && cfg->size ? cfg->size : MM_DEFAULT_POOL_SIZE;
	if (*size % MM_PAGEBLOCK_SIZE)
		return -EINVAL;
	if ((*size >> MM_PAGE_SHIFT) >= NIL)	/* frame numbers are 32-bit */
		return -EINVAL;
	if (cfg && cfg->metadata_only && cfg->host_huge)	/* nothing to make huge */
		return -EINVAL;
	return 0;
}

int mm_pool_create(const struct mm_pool_config *cfg, struct mm_pool **out)
{
	struct mm_pool *pool;
	size_t size;
	int err;

	err = pool_check_config(cfg, &size);
	if (err)
		return err;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->nr_frames = size >> MM_PAGE_SHIFT;
	pool->nr_pageblocks = pool->nr_frames >> MM_PAGEBLOCK_ORDER;
	pool->grouping = cfg ? cfg->grouping : true;
	pool->pcp_high = cfg && cfg->pcp_high ? cfg->pcp_high : PCP_DEFAULT_HIGH;
	pool->pcp_batch = cfg && cfg->pcp_batch ? cfg->pcp_batch : PCP_DEFAULT_BATCH;
	if (pool->pcp_batch > pool->pcp_high)
		pool->pcp_batch = pool->pcp_high;
	if (pool->pcp_batch > PCP_MAX_BATCH)
		pool->pcp_batch = PCP_MAX_BATCH;
	pool->fd = -1;

	err = -ENOMEM;
	pool->frames = frames_alloc(pool->nr_frames);
	if (!pool->frames || pageblock_bitmap_init(pool))
		goto fail;
	if (!cfg || !cfg->metadata_only) {
		pool->fd = pool_open_memfd(cfg ? cfg->name : NULL, size);
		if (pool->fd < 0) {
			err = pool->fd;
			goto fail;
		}
	}
	pthread_mutex_init(&pool->lock, NULL);
	pthread_mutex_init(&pool->pcp_list_lock, NULL);
	pthread_mutex_init(&pool->compact_lock, NULL);
	pthread_rwlock_init(&pool->owners_lock, NULL);
	err = hostmem_init(pool, size);
	if (err)
		goto fail_host;
	pool->host_huge = cfg && cfg->host_huge;
	pool->policy = cfg ? cfg->policy : 0;
	pool->compact_free_pb = pool->nr_pageblocks;
	for (int t = 0; t < MIGRATE_TYPES; t++)
		for (int lru = MM_LRU_INACTIVE; lru < MM_LRU_LISTS; lru++)
			list_init(&pool->lru[t][lru]);
	pool_init_free_lists(pool);
	*out = pool;
	return 0;
fail_host:
	hostmem_exit(pool);
	pthread_rwlock_destroy(&pool->owners_lock);
	pthread_mutex_destroy(&pool->compact_lock);
	pthread_mutex_destroy(&pool->pcp_list_lock);
	pthread_mutex_destroy(&pool->lock);
	if (pool->fd >= 0)
		close(pool->fd);
fail:
	free(pool->pageblock_flags);
	frames_free(pool->frames, pool->nr_frames);
	free(pool);
	return err;
}

void mm_pool_destroy(struct mm_pool *pool)
{
	if (!pool)
		return;
	mm_kcompactd_stop(pool);
	while (pool->pcps)
		mm_pcp_destroy(pool->pcps);
	hostmem_exit(pool);
	pageblock_files_exit(pool);
	if (pool->fd >= 0)
		close(pool->fd);
	pthread_mutex_destroy(&pool->compact_lock);
	pthread_rwlock_destroy(&pool->owners_lock);
	free(pool->owners);
	owned_blocks_exit(pool);
	pthread_mutex_destroy(&pool->lock);
	pthread_mutex_destroy(&pool->pcp_list_lock);
	free(pool->pageblock_flags);
	frames_free(pool->frames, pool->nr_frames);
	free(pool);
}

int mm_pool_fd(const struct mm_pool *pool)
{
	return pool->fd;
}

uint64_t mm_pool_frames(const struct mm_pool *pool)
{
	return pool->nr_frames;
}

/*
 * The seed's CONFIG_PAGE_CLUSTERING as a run-time switch, so that one
 * binary measures both policies side by side. Turning it off mid-life is
 * safe: free blocks already on other lists are still found by the
 * fallback path, new frees all go to the MOVABLE list.
 */
void mm_set_grouping(struct mm_pool *pool, bool on)
{
	pthread_mutex_lock(&pool->lock);
	pool->grouping = on;
	pool_unlock(pool);
	pcp_set_grouping(pool, on);
}

void mm_set_policy(struct mm_pool *pool, unsigned int policy)
{
	pthread_mutex_lock(&pool->lock);
	pool->policy = policy & MM_POLICY_ALL;
	pool_unlock(pool);
}

bool mm_grouping(const struct mm_pool *pool)
{
	return pool->grouping;
}

double mm_metadata_bytes_per_frame(const struct mm_pool *pool)
{
	double bytes = (double)pool->nr_frames * sizeof(struct mm_frame) +
		       (double)pageblock_bitmap_bytes(pool) +
		       (double)pool->nr_pageblocks;	/* pb_host */

	return bytes / (double)pool->nr_frames;
}
