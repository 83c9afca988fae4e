// SPDX-License-Identifier: GPL-2.0
/*
 * A file per pageblock (mm_set_pageblock_files): in a pool whose frames
 * are lent to other processes, each 2 MiB pageblock is a memfd of its
 * own, so a process is handed the files of the pageblocks it holds and
 * can map nothing else of the pool.
 *
 * A mapping cannot be revoked. So a pageblock that was taken (its frames
 * given to someone) never goes back on the free lists with the same file:
 * the moment it is wholly free again, __free_one_page stops merging there
 * and puts it on the retiring list, off the lists and out of every
 * allocator's reach. Whoever holds host_lock next retires it: the old
 * file is truncated to nothing (its memory goes back to the host; a
 * process that still maps it faults SIGBUS instead of reading or
 * allocating), a fresh empty file takes its place in the pool's view,
 * and the pageblock goes back on the free lists. The invariant: a
 * pageblock on the free lists has a file nobody was ever given.
 *
 * Locks: pb_fd[] changes only under host_lock (so making a pageblock
 * huge, which uses its file, never races a swap); the retiring list is
 * under pool->lock. Whoever drops pool->lock with pageblocks waiting
 * takes host_lock if it is free and retires them (pool_unlock); a holder
 * of host_lock retires what is waiting before it lets go (host_unlock),
 * so none is left behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mm/internal.h"

/* Pageblocks retired per trip off pool->lock. */
#define RETIRE_BATCH		32

static int pageblock_file_new(void)
{
	int fd = MM_FAULT_OR(MM_FAULT_MEMFD, -1,
			     memfd_create("gpmm-pageblock", MFD_CLOEXEC));

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, MM_PAGEBLOCK_SIZE) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Put @fd in @pb's place in the pool's view. */
static int pageblock_file_map(struct mm_pool *pool, uint64_t pb, int fd)
{
	void *at = pool->base + (pb << MM_PAGEBLOCK_SHIFT);

	if (MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
			mmap(at, MM_PAGEBLOCK_SIZE, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0)) == MAP_FAILED)
		return -errno;
	return 0;
}

int mm_set_pageblock_files(struct mm_pool *pool)
{
	int ret = 0;

	if (pool->fd < 0)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&pool->host_lock);
	pthread_mutex_lock(&pool->lock);
	if (pool->pb_files)
		goto out;
	ret = -EBUSY;	/* a frame given out before would stay in the shared memfd */
	if (pool->free_pages != pool->nr_frames)
		goto out;
	ret = -ENOMEM;
	pool->pb_fd = malloc(pool->nr_pageblocks * sizeof(*pool->pb_fd));
	pool->retiring = calloc(pool->nr_pageblocks, sizeof(*pool->retiring));
	if (!pool->pb_fd || !pool->retiring)
		goto out;
	ret = 0;
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++)
		pool->pb_fd[pb] = -1;
	for (uint64_t pb = 0; pb < pool->nr_pageblocks && !ret; pb++) {
		int fd = pageblock_file_new();

		ret = fd < 0 ? fd : pageblock_file_map(pool, pb, fd);
		if (fd >= 0 && ret)
			close(fd);
		else if (!ret)
			pool->pb_fd[pb] = fd;
	}
	if (!ret) {
		pool->pb_files = true;
		/* the shared memfd serves nothing now: what it held goes back */
		(void)fallocate(pool->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
				(off_t)(pool->nr_frames << MM_PAGE_SHIFT));
	}
out:
	if (ret && ret != -EBUSY)
		pageblock_files_exit(pool);
	pthread_mutex_unlock(&pool->lock);
	/* what a populated pool held in the shared memfd, in the new files */
	for (uint64_t pb = 0; !ret && pb < pool->nr_pageblocks; pb++)
		if (__pageblock_host_used(pool, pb))
			__pageblock_host_renew(pool, pb);
	host_unlock(pool);
	if (ret && ret != -EBUSY && pool->base)	/* the view back on the shared memfd */
		(void)mmap(pool->base, pool->nr_frames << MM_PAGE_SHIFT, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, pool->fd, 0);
	return ret;
}

void pageblock_files_exit(struct mm_pool *pool)
{
	for (uint64_t pb = 0; pool->pb_fd && pb < pool->nr_pageblocks; pb++)
		if (pool->pb_fd[pb] >= 0)
			close(pool->pb_fd[pb]);
	free(pool->pb_fd);
	free(pool->retiring);
	pool->pb_fd = NULL;
	pool->retiring = NULL;
	pool->pb_files = false;
}

/* The file and offset behind @frame: its pageblock's, or the shared memfd. */
int __frame_file(const struct mm_pool *pool, uint64_t frame, off_t *off)
{
	if (!pool->pb_files) {
		*off = (off_t)(frame << MM_PAGE_SHIFT);
		return pool->fd;
	}
	*off = (off_t)((frame & (MM_PAGEBLOCK_PAGES - 1)) << MM_PAGE_SHIFT);
	/* stable while the caller holds a frame there: a swap needs it wholly free */
	return __atomic_load_n(&pool->pb_fd[frame >> MM_PAGEBLOCK_ORDER], __ATOMIC_ACQUIRE);
}

/*
 * A block of @order >= a pageblock at @pfn has just become wholly free.
 * If one of its pageblocks was taken since its file was new, the block
 * goes to the retiring list instead of the free lists: true. Its
 * pageblocks belong to no owner from now. pool->lock held.
 */
bool __pageblocks_retire(struct mm_pool *pool, uint64_t pfn, unsigned int order)
{
	bool taken = false;

	for_each_pageblock_in(pb, pfn, order)
		taken |= __pageblock_host_taken(pool, pb);
	if (!taken)
		return false;
	if (pool->owned_blocks)
		__disown_pageblocks(pool, pfn, order);
	__mark_isolated_free(pool, pfn, order);
	pool->retiring[pool->nr_retiring++] = (struct isolated){ (uint32_t)pfn, (uint8_t)order };
	__atomic_store_n(&pool->retire_pending, pool->nr_retiring, __ATOMIC_SEQ_CST);
	pool->counters.pb_retired += 1UL << (order > MM_PAGEBLOCK_ORDER ? order - MM_PAGEBLOCK_ORDER : 0);
	return true;
}

/*
 * Truncate @pb's old file, whoever still maps it, and put a fresh one in
 * its place. host_lock held. On failure the pageblock keeps its old file
 * and stays off the lists: handing it out again would share it.
 */
static int pageblock_file_swap(struct mm_pool *pool, uint64_t pb)
{
	int fd = pageblock_file_new(), old = pool->pb_fd[pb], err;

	if (fd < 0)
		return fd;
	err = pageblock_file_map(pool, pb, fd);
	if (err) {
		close(fd);
		return err;
	}
	if (ftruncate(old, 0) < 0)
		err = -errno;	/* not reachable for a memfd; the file is ours alone now anyway */
	close(old);
	__atomic_store_n(&pool->pb_fd[pb], fd, __ATOMIC_RELEASE);
	return 0;
}

/* Retire a batch of the list; false once nothing is left (or all failed). host_lock held. */
static bool retire_batch(struct mm_pool *pool)
{
	struct isolated held[RETIRE_BATCH], failed[RETIRE_BATCH];
	unsigned int nr, nr_failed = 0;
	bool more;

	pthread_mutex_lock(&pool->lock);
	nr = pool->nr_retiring < RETIRE_BATCH ? pool->nr_retiring : RETIRE_BATCH;
	pool->nr_retiring -= nr;
	for (unsigned int i = 0; i < nr; i++)
		held[i] = pool->retiring[pool->nr_retiring + i];
	pthread_mutex_unlock(&pool->lock);

	for (unsigned int i = 0; i < nr; i++) {
		int err = 0;

		for_each_pageblock_in(pb, held[i].pfn, held[i].order)
			if (!err && __pageblock_host_taken(pool, pb)) {
				err = pageblock_file_swap(pool, pb);
				if (!err)
					__pageblock_host_renew(pool, pb);
			}
		if (err)
			failed[nr_failed++] = held[i];
		else
			held[i - nr_failed] = held[i];
	}
	nr -= nr_failed;

	pthread_mutex_lock(&pool->lock);
	__release_isolated(pool, held, &nr);
	for (unsigned int i = 0; i < nr_failed; i++)
		pool->retiring[pool->nr_retiring++] = failed[i];
	pool->counters.pb_retire_fail += nr_failed;
	__atomic_store_n(&pool->retire_pending, pool->nr_retiring, __ATOMIC_SEQ_CST);
	/* read under the lock: a freer queues more the moment it is dropped */
	more = pool->nr_retiring && !nr_failed;
	pthread_mutex_unlock(&pool->lock);
	return more;
}

/* host_lock held: retire everything waiting. */
void __retire_pending(struct mm_pool *pool)
{
	while (__atomic_load_n(&pool->retire_pending, __ATOMIC_SEQ_CST) && retire_batch(pool))
		;
}

/*
 * Let go of host_lock with nothing left waiting: a pageblock queued
 * while we held it was left to us by its freer (its trylock failed).
 */
void host_unlock(struct mm_pool *pool)
{
	for (;;) {
		__retire_pending(pool);
		pthread_mutex_unlock(&pool->host_lock);
		if (!__atomic_load_n(&pool->retire_pending, __ATOMIC_SEQ_CST) ||
		    pthread_mutex_trylock(&pool->host_lock))
			return;
	}
}

void __pool_unlock_retire(struct mm_pool *pool)
{
	if (!pthread_mutex_trylock(&pool->host_lock))
		host_unlock(pool);
}

/*
 * The file of the pageblock of @frame, a descriptor of the caller's own
 * (to send to the process that holds it), if @owner owns the pageblock
 * now (a holder tells one file from the next by its inode: each
 * retirement makes a new one). -ESRCH when @owner owns no such pageblock.
 */
int mm_pageblock_file(struct mm_pool *pool, uint64_t frame, uint32_t owner)
{
	uint64_t pb = frame >> MM_PAGEBLOCK_ORDER;
	int fd = -ESRCH;

	if (!pool->pb_files)
		return -EOPNOTSUPP;
	if (frame >= pool->nr_frames)
		return -ESRCH;
	pthread_mutex_lock(&pool->host_lock);
	if (__pageblock_owner(pool, pb) == owner && owner != MM_NO_OWNER) {
		fd = fcntl(pool->pb_fd[pb], F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			fd = -errno;
	}
	host_unlock(pool);
	return fd;
}

/*
 * This process's own users of a frame they hold (a VM of the daemon maps
 * it into guest memory): the descriptor stays the pageblock's while any
 * frame of it is allocated, so it needs no copy.
 */
int mm_frame_file(const struct mm_pool *pool, uint64_t frame, off_t *off)
{
	if (frame >= pool->nr_frames)
		return -EINVAL;
	return __frame_file(pool, frame, off);
}

/*
 * Host memory of the pageblocks' files, from the kernel. A file gets
 * memory only once its pageblock is taken or populated (HOST_USED), and
 * one given back is empty: the others are not asked.
 */
int64_t __pageblock_files_bytes(struct mm_pool *pool)
{
	int64_t bytes = 0;
	struct stat st;

	pthread_mutex_lock(&pool->host_lock);
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++)
		if (__pageblock_host_used(pool, pb) && !fstat(pool->pb_fd[pb], &st))
			bytes += (int64_t)st.st_blocks * 512;
	host_unlock(pool);
	return bytes;
}
