// SPDX-License-Identifier: GPL-2.0
/*
 * A client's view of the host pool: only the pageblocks it holds. The
 * service sends the file of each pageblock (mm/pbfile.c) with the frames
 * it lends there; the view, a reservation the size of the pool that maps
 * nothing else (PROT_NONE), maps each file at its pageblock's place, so
 * a frame's address is the same as in a view of the whole pool, and an
 * address of another VM's frame faults.
 *
 * Frames held per pageblock are counted as they come (ALLOC replies, the
 * new block of a move) and go (FREE, the old block of a move); a
 * pageblock whose count reaches zero is unmapped and its file closed, so
 * what the process can reach stays what it holds. A file that comes for
 * a pageblock already mapped is either the same one (dropped) or a new
 * one (the pageblock was wholly given back and lent again: it replaces
 * the old file, which the service has truncated).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/pool_service/pool_files.h"

struct pool_files {
	pthread_mutex_t lock;		/* a leaf: fd[], ino[], held[] and the view */
	uint64_t nr_pb;
	uint8_t *base;
	int *fd;
	ino_t *ino;
	uint32_t *held;
};

int pool_files_init(uint64_t frames, struct pool_files **out)
{
	struct pool_files *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->nr_pb = frames >> MM_PAGEBLOCK_ORDER;
	f->fd = malloc(f->nr_pb * sizeof(*f->fd));
	f->ino = calloc(f->nr_pb, sizeof(*f->ino));
	f->held = calloc(f->nr_pb, sizeof(*f->held));
	/* placed as a view of the whole pool is: one page off 2 MiB, never a PMD of its own */
	if (mm_reserve_pool_view(f->nr_pb << MM_PAGEBLOCK_SHIFT, &f->base))
		f->base = NULL;
	pthread_mutex_init(&f->lock, NULL);
	if (!f->fd || !f->ino || !f->held || !f->base) {
		pool_files_fini(f);
		return -ENOMEM;
	}
	for (uint64_t pb = 0; pb < f->nr_pb; pb++)
		f->fd[pb] = -1;
	*out = f;
	return 0;
}

/* @pb's place in the view back to nothing. lock held. */
static void __unmap_pb(struct pool_files *f, uint64_t pb)
{
	(void)mmap(f->base + (pb << MM_PAGEBLOCK_SHIFT), MM_PAGEBLOCK_SIZE, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	close(f->fd[pb]);
	f->fd[pb] = -1;
	f->ino[pb] = 0;
}

void pool_files_fini(struct pool_files *f)
{
	if (!f)
		return;
	for (uint64_t pb = 0; f->fd && pb < f->nr_pb; pb++)
		if (f->fd[pb] >= 0)
			close(f->fd[pb]);
	if (f->base)
		munmap(f->base, f->nr_pb << MM_PAGEBLOCK_SHIFT);
	pthread_mutex_destroy(&f->lock);
	free(f->fd);
	free(f->ino);
	free(f->held);
	free(f);
}

uint8_t *pool_files_base(const struct pool_files *f)
{
	return f->base;
}

int pool_files_install(struct pool_files *f, uint64_t pb, int fd)
{
	struct stat st;
	int ret = 0;

	if (pb >= f->nr_pb || fstat(fd, &st) || st.st_size != MM_PAGEBLOCK_SIZE) {
		close(fd);
		return -EPROTO;
	}
	pthread_mutex_lock(&f->lock);
	if (f->fd[pb] >= 0 && f->ino[pb] == st.st_ino) {
		close(fd);	/* the one we map */
	} else if (mmap(f->base + (pb << MM_PAGEBLOCK_SHIFT), MM_PAGEBLOCK_SIZE,
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd,
			0) == MAP_FAILED) {
		ret = -errno;
		close(fd);
	} else {
		if (f->fd[pb] >= 0)
			close(f->fd[pb]);
		f->fd[pb] = fd;
		f->ino[pb] = st.st_ino;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

void pool_files_hold(struct pool_files *f, uint64_t frame, unsigned int order, bool held)
{
	uint64_t pb = frame >> MM_PAGEBLOCK_ORDER;
	uint32_t n = 1U << (order < MM_PAGEBLOCK_ORDER ? order : MM_PAGEBLOCK_ORDER);

	pthread_mutex_lock(&f->lock);
	for (uint64_t end = pb + (order > MM_PAGEBLOCK_ORDER ? 1UL << (order - MM_PAGEBLOCK_ORDER) : 1);
	     pb < end && pb < f->nr_pb; pb++) {
		if (held) {
			f->held[pb] += n;
		} else {
			f->held[pb] = f->held[pb] > n ? f->held[pb] - n : 0;
			if (!f->held[pb] && f->fd[pb] >= 0)
				__unmap_pb(f, pb);
		}
	}
	pthread_mutex_unlock(&f->lock);
}

void pool_files_drop_all(struct pool_files *f)
{
	pthread_mutex_lock(&f->lock);
	for (uint64_t pb = 0; pb < f->nr_pb; pb++) {
		f->held[pb] = 0;
		if (f->fd[pb] >= 0)
			__unmap_pb(f, pb);
	}
	pthread_mutex_unlock(&f->lock);
}

int pool_files_fd(struct pool_files *f, uint64_t frame, off_t *off)
{
	uint64_t pb = frame >> MM_PAGEBLOCK_ORDER;
	int fd;

	if (pb >= f->nr_pb)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	fd = f->fd[pb] >= 0 ? f->fd[pb] : -ENOENT;
	pthread_mutex_unlock(&f->lock);
	*off = (off_t)((frame & (MM_PAGEBLOCK_PAGES - 1)) << MM_PAGE_SHIFT);
	return fd;
}
