// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's host memory, a pageblock at a time. The memfd starts empty
 * (ftruncate reserves nothing); a pageblock takes host memory when it
 * first serves allocations, and gives it back when it has been wholly free
 * for a while, so --pool is a ceiling, not a reservation.
 *
 * Two things happen at those two moments:
 *
 * - Huge pool blocks (pool->host_huge): a pageblock that starts serving
 *   allocations is populated and made one host transparent huge page
 *   (fallocate, then MADV_COLLAPSE through a 2 MiB window of its own). Its
 *   4 KiB frames can still be mapped one by one into guest windows; the
 *   huge page stays whole under them (DESIGN.md), and a later 2 MiB mapping
 *   of the whole block is PMD-mapped without the kernel copying anything.
 *   The host's own fragmentation then no longer matters to the block.
 *
 * - Page reporting (Linux's free page reporting, order >= pageblock): a
 *   pageblock that stayed inside a free buddy block from one pass of the
 *   reporter to the next is taken off the free lists, its range punched
 *   out of the memfd (FALLOC_FL_PUNCH_HOLE), and put back. Only free
 *   blocks of at least pageblock order are ever punched, so grouping's
 *   promise holds: memory goes back whole, never a partly used pageblock,
 *   and no allocated frame loses its contents.
 *
 * State per pageblock, pool->pb_host[pb]: HOST_USED is set under
 * pool->lock when a free block of pageblock order or more is broken or
 * taken (__pageblocks_taken); with it clear the pageblock holds no host
 * memory and is wholly free. HOST_IDLE marks a backed pageblock the
 * reporter found free on its last pass; taking the pageblock clears it.
 * HOST_PREP asks for the huge page; HOST_HUGE says it was made. HOST_ZERO
 * says the pageblock's last take found it without host memory: a whole
 * block allocated that way reads zero (mm_pageblock_take_zeroed).
 *
 * HOST_TAKEN, with a file per pageblock (pbfile.c): taken since its file
 * was new, so it needs a fresh one once wholly free again.
 *
 * A metadata-only pool (no memfd, pool->fd < 0) keeps the same states,
 * so its allocations behave the same, but has nothing to populate, make
 * huge or punch: those steps do nothing on it.
 *
 * Locks: host_lock serialises making blocks huge with punching them, so
 * a collapse never races a punch of the same range. Order: host_lock,
 * then pool->lock (never host_lock while pool->lock is held); nothing
 * else is taken under host_lock, and no owner callback runs under it.
 * Its holders let go through host_unlock (pbfile.c), which first gives
 * fresh files to pageblocks that became free meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mm/internal.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define HOST_USED		0x1
#define HOST_IDLE		0x2
#define HOST_PREP		0x4
#define HOST_HUGE		0x8
#define HOST_ZERO		0x10	/* its last take found it without host memory */
#define HOST_TAKEN		0x20	/* taken since its file was new (pbfile.c) */

/* Pageblocks punched per trip off pool->lock. */
#define REPORT_BATCH		32
#define COLLAPSE_TRIES		20

static uint8_t pb_host_get(struct mm_pool *pool, uint64_t pb)
{
	return __atomic_load_n(&pool->pb_host[pb], __ATOMIC_ACQUIRE);
}

static void pb_host_set(struct mm_pool *pool, uint64_t pb, uint8_t bits)
{
	__atomic_fetch_or(&pool->pb_host[pb], bits, __ATOMIC_RELEASE);
}

static void pb_host_clear(struct mm_pool *pool, uint64_t pb, uint8_t bits)
{
	__atomic_fetch_and(&pool->pb_host[pb], (uint8_t)~bits, __ATOMIC_RELEASE);
}

/* The first 2 MiB boundary at or above @va. */
static uint8_t *pageblock_align_up(uint8_t *va)
{
	return (uint8_t *)(((uintptr_t)va + MM_PAGEBLOCK_SIZE - 1) &
			   ~(uintptr_t)(MM_PAGEBLOCK_SIZE - 1));
}

/*
 * The view of the whole memfd through which frames are read and written
 * starts one page past a 2 MiB boundary on purpose: it can never map a
 * huge page by a PMD, so every PMD the kernel counts for this process
 * (smaps) is a guest window's, and its touches of a huge block never
 * compete with the guest's mappings. Collapses use a window of their own.
 */
int mm_reserve_pool_view(size_t size, uint8_t **out)
{
	size_t span = size + MM_PAGEBLOCK_SIZE;
	uint8_t *va, *view;

	va = MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
			 mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
	if (va == MAP_FAILED)
		return -errno;
	view = pageblock_align_up(va) + MM_PAGE_SIZE;
	if (view - MM_PAGEBLOCK_SIZE >= va)
		view -= MM_PAGEBLOCK_SIZE;
	if (view > va)
		munmap(va, (size_t)(view - va));
	if (va + span > view + size)
		munmap(view + size, (size_t)(va + span - (view + size)));
	*out = view;
	return 0;
}

int mm_map_pool_view(int fd, size_t size, uint8_t **out)
{
	uint8_t *view;
	int ret = mm_reserve_pool_view(size, &view);

	if (ret)
		return ret;
	if (mmap(view, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
		 fd, 0) == MAP_FAILED) {
		int err = -errno;

		munmap(view, size);
		return err;
	}
	*out = view;
	return 0;
}

int hostmem_init(struct mm_pool *pool, size_t size)
{
	pthread_mutex_init(&pool->host_lock, NULL);
	pool->pb_host = calloc(pool->nr_pageblocks + 1, 1);
	if (!pool->pb_host)
		return -ENOMEM;
	if (pool->fd < 0)	/* metadata only: no view to map */
		return 0;
	return mm_map_pool_view(pool->fd, size, &pool->base);
}

void hostmem_exit(struct mm_pool *pool)
{
	mm_page_reporting_stop(pool);
	if (pool->base)
		munmap(pool->base, pool->nr_frames << MM_PAGE_SHIFT);
	pthread_mutex_destroy(&pool->host_lock);
	free(pool->pb_host);
}

uint8_t *mm_pool_base(const struct mm_pool *pool)
{
	return pool->base;
}

/*
 * The pageblocks under [@pfn, @pfn + 2^@order) start serving allocations:
 * out of a free block of pageblock order or more, the only place a
 * pageblock without host memory can be. pool->lock held.
 */
void __pageblocks_taken(struct mm_pool *pool, uint64_t pfn, unsigned int order)
{
	for_each_pageblock_in(pb, pfn, order) {
		uint8_t st = pb_host_get(pool, pb);

		if (pool->pb_files)
			pb_host_set(pool, pb, HOST_TAKEN);
		if (st & HOST_IDLE)
			pb_host_clear(pool, pb, HOST_IDLE);
		if (st & HOST_USED) {
			pb_host_clear(pool, pb, HOST_ZERO);
			continue;
		}
		pb_host_set(pool, pb, HOST_ZERO);
		if (pool->host_huge) {
			pb_host_set(pool, pb, HOST_USED | HOST_PREP);
			__atomic_fetch_add(&pool->host_prep_pending, 1, __ATOMIC_RELEASE);
		} else {
			pb_host_set(pool, pb, HOST_USED);
		}
	}
}

bool __pageblock_host_taken(struct mm_pool *pool, uint64_t pb)
{
	return pb_host_get(pool, pb) & HOST_TAKEN;
}

bool __pageblock_host_used(struct mm_pool *pool, uint64_t pb)
{
	return pb_host_get(pool, pb) & HOST_USED;
}

/*
 * MADV_COLLAPSE answers EAGAIN while a page of the range is briefly held
 * elsewhere (locked, not yet on an LRU list): a bounded number of tries.
 * Linux 6.1 builds the huge page, drops the range's page tables and
 * answers EINVAL because it cannot map the new page itself; touched, the
 * range is PMD-mapped and a second call answers 0.
 */
int mm_host_collapse(void *addr)
{
	bool touched = false;

	for (int i = 1;; i++) {
		if (MM_FAULT_OR(MM_FAULT_MADVISE, -1,
				madvise(addr, MM_PAGEBLOCK_SIZE, MADV_COLLAPSE)) == 0)
			return 0;
		if (errno == EINVAL && !touched) {
			touched = true;
			(void)*(volatile uint8_t *)addr;
			continue;
		}
		if (errno != EAGAIN || i >= COLLAPSE_TRIES)
			return -errno;
		usleep(1000);
	}
}

/*
 * Populate the whole pageblock (a collapse fails on holes), then make it
 * one huge page through a 2 MiB-aligned window of its own, unmapped
 * after: the huge page lives on in the memfd. Frames already allocated in
 * it keep their contents: the kernel copies what is there into the page.
 */
static int make_pageblock_huge(struct mm_pool *pool, uint64_t pb)
{
	off_t off;
	int fd = __frame_file(pool, pb << MM_PAGEBLOCK_ORDER, &off);
	uint8_t *va, *win;
	int err;

	if (fallocate(fd, 0, off, MM_PAGEBLOCK_SIZE) < 0)
		return -errno;
	va = MM_FAULT_OR(MM_FAULT_MMAP, MAP_FAILED,
			 mmap(NULL, 2 * MM_PAGEBLOCK_SIZE, PROT_NONE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
	if (va == MAP_FAILED)
		return -errno;
	win = pageblock_align_up(va);
	if (mmap(win, MM_PAGEBLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, off) == MAP_FAILED)
		err = -errno;
	else
		err = mm_host_collapse(win);
	munmap(va, 2 * MM_PAGEBLOCK_SIZE);
	return err;
}

static void count_huge(struct mm_pool *pool, int err)
{
	pthread_mutex_lock(&pool->lock);
	if (err) {
		pool->counters.host_huge_fail++;
		pool->host_huge_errno = -err;
	} else {
		pool->counters.host_huge++;
	}
	pool_unlock(pool);
}

/*
 * Drop @pb's request for a huge page, if it has one, and its share of the
 * pending count that every allocation looks at: a request dropped without
 * it would keep allocators scanning for work that is not there.
 */
static bool take_prep(struct mm_pool *pool, uint64_t pb)
{
	if (!(__atomic_fetch_and(&pool->pb_host[pb], (uint8_t)~HOST_PREP, __ATOMIC_ACQ_REL) &
	      HOST_PREP))
		return false;
	__atomic_fetch_sub(&pool->host_prep_pending, 1, __ATOMIC_RELEASE);
	return true;
}

/*
 * @pb has a fresh file (pbfile.c), off the free lists: no host memory,
 * nothing to make huge, and its next take finds it so; unless the pool
 * keeps its memory (populated: a reservation), when the new file is made
 * one huge page at once. host_lock held.
 */
void __pageblock_host_renew(struct mm_pool *pool, uint64_t pb)
{
	int err;

	(void)take_prep(pool, pb);
	pb_host_clear(pool, pb, HOST_USED | HOST_IDLE | HOST_HUGE | HOST_ZERO | HOST_TAKEN);
	if (!pool->host_keep)
		return;
	err = make_pageblock_huge(pool, pb);
	pb_host_set(pool, pb, err ? HOST_USED : HOST_USED | HOST_HUGE);
	count_huge(pool, err);
}

/* Make pageblock @pb huge if it waits for it. host_lock held. */
static void prepare_one(struct mm_pool *pool, uint64_t pb)
{
	int err;

	/* released again meanwhile: nothing left to make huge */
	if (!take_prep(pool, pb) || !(pb_host_get(pool, pb) & HOST_USED))
		return;
	err = make_pageblock_huge(pool, pb);
	if (!err)
		pb_host_set(pool, pb, HOST_HUGE);
	count_huge(pool, err);
}

/*
 * Make every pageblock waiting for it a huge page. Whoever allocates next
 * pays, outside pool->lock; a second thread arriving meanwhile does not
 * wait for the first (trylock), it goes on with its 4 KiB frames.
 */
void hostmem_prepare_pending(struct mm_pool *pool)
{
	if (pthread_mutex_trylock(&pool->host_lock))
		return;
	for (uint64_t pb = 0; pb < pool->nr_pageblocks &&
	     __atomic_load_n(&pool->host_prep_pending, __ATOMIC_ACQUIRE); pb++)
		prepare_one(pool, pb);
	host_unlock(pool);
}

/*
 * A caller that maps the whole block at once (a first touch backed by a
 * 2 MiB block) needs it huge now, not after whoever holds host_lock is
 * done: it waits. host_lock's holders take nothing but pool->lock.
 */
void mm_pageblock_prepare(struct mm_pool *pool, uint64_t frame)
{
	if (frame >= pool->nr_frames)
		return;
	pthread_mutex_lock(&pool->host_lock);
	prepare_one(pool, frame >> MM_PAGEBLOCK_ORDER);
	host_unlock(pool);
}

/*
 * Only the holder of a whole pageblock may ask, right after allocating
 * it: nobody else can have written to it since its take found it without
 * host memory (never used, or given back), so it reads zero, as the
 * kernel hands back a punched hole. One answer per take.
 */
bool mm_pageblock_take_zeroed(struct mm_pool *pool, uint64_t frame)
{
	uint64_t pb = frame >> MM_PAGEBLOCK_ORDER;

	if (frame >= pool->nr_frames || frame % MM_PAGEBLOCK_PAGES)
		return false;
	return __atomic_fetch_and(&pool->pb_host[pb], (uint8_t)~HOST_ZERO, __ATOMIC_ACQ_REL) &
	       HOST_ZERO;
}

bool mm_pageblock_host_huge(struct mm_pool *pool, uint64_t frame)
{
	if (frame >= pool->nr_frames)
		return false;
	return pb_host_get(pool, frame >> MM_PAGEBLOCK_ORDER) & HOST_HUGE;
}

/*
 * Does the free block at @pfn qualify? Every backed pageblock in it was
 * already free on the reporter's previous pass (@min_passes 1), or need
 * not have been (0). Pageblocks seen free for the first time are marked
 * idle for the next pass.
 */
static bool __block_reportable(struct mm_pool *pool, uint64_t pfn,
			       unsigned int order, unsigned int min_passes)
{
	bool backed = false, ready = true;

	for_each_pageblock_in(pb, pfn, order) {
		uint8_t st = pb_host_get(pool, pb);

		if (!(st & HOST_USED))
			continue;
		backed = true;
		if (!(st & HOST_IDLE)) {
			pb_host_set(pool, pb, HOST_IDLE);
			ready = ready && !min_passes;
		}
	}
	return backed && ready;
}

typedef bool (*block_pred)(struct mm_pool *pool, uint64_t pfn,
			   unsigned int order, unsigned int arg);

/* Free blocks of pageblock order or more that @pred picks: off the lists. */
static unsigned int __isolate_free_pageblocks(struct mm_pool *pool,
					      struct isolated *held,
					      block_pred pred, unsigned int arg)
{
	unsigned int nr = 0;

	for (unsigned int o = MM_PAGEBLOCK_ORDER; o < MM_MAX_ORDER; o++)
		for (int t = 0; t < MIGRATE_TYPES; t++) {
			uint32_t pfn = pool->free_area[o].free_list[t].head;

			while (pfn != NIL && nr < REPORT_BATCH) {
				uint32_t next = pool->frames[pfn].next;

				if (pred(pool, pfn, o, arg)) {
					__del_free_block(pool, pfn);
					__mark_isolated_free(pool, pfn, o);
					held[nr++] = (struct isolated){ pfn, (uint8_t)o };
				}
				pfn = next;
			}
		}
	return nr;
}

/* A file per pageblock: each pageblock of the block punched in its own. */
static int punch_block(struct mm_pool *pool, const struct isolated *b)
{
	unsigned int step = pool->pb_files && b->order > MM_PAGEBLOCK_ORDER ?
			    MM_PAGEBLOCK_ORDER : b->order;

	for (uint64_t pfn = b->pfn; pfn < b->pfn + (1UL << b->order); pfn += 1UL << step) {
		off_t off;
		int fd = __frame_file(pool, pfn, &off);

		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			      (off_t)MM_PAGE_SIZE << step) < 0)
			return -errno;
	}
	return 0;
}

/*
 * One pass: isolate a batch, punch it with pool->lock dropped (others
 * allocate meanwhile; these blocks are out of their reach), put it back.
 */
static uint64_t report_batch(struct mm_pool *pool, unsigned int min_passes,
			     bool *more)
{
	struct isolated held[REPORT_BATCH];
	uint64_t released = 0;
	unsigned int nr, failed = 0;
	int err[REPORT_BATCH];

	pthread_mutex_lock(&pool->lock);
	nr = __isolate_free_pageblocks(pool, held, __block_reportable, min_passes);
	pool_unlock(pool);
	for (unsigned int i = 0; i < nr; i++)
		err[i] = punch_block(pool, &held[i]);
	pthread_mutex_lock(&pool->lock);
	for (unsigned int i = 0; i < nr; i++) {
		if (err[i]) {
			pool->counters.host_release_fail++;
			failed++;
			continue;
		}
		for_each_pageblock_in(pb, held[i].pfn, held[i].order) {
			if (pb_host_get(pool, pb) & HOST_USED)
				released++;
			(void)take_prep(pool, pb);
			pb_host_clear(pool, pb, HOST_USED | HOST_IDLE | HOST_HUGE | HOST_ZERO);
		}
	}
	pool->counters.host_released += released;
	/* a full batch may have left more; a failed punch would come back forever */
	*more = nr == REPORT_BATCH && !failed;
	__release_isolated(pool, held, &nr);
	pool_unlock(pool);
	return released;
}

/*
 * Give back every wholly free pageblock that was already free on the
 * previous pass (@min_passes 1: the reporter), or every one now (0).
 * Returns the pageblocks given back.
 */
uint64_t hostmem_report(struct mm_pool *pool, unsigned int min_passes)
{
	uint64_t released = 0;
	bool more = true;

	if (pool->fd < 0)
		return 0;
	pthread_mutex_lock(&pool->host_lock);
	while (more)
		released += report_batch(pool, min_passes, &more);
	host_unlock(pool);
	return released;
}

uint64_t mm_release_free(struct mm_pool *pool)
{
	return hostmem_report(pool, 0);
}

/* A free block with a pageblock that has no host memory behind it. */
static bool __block_unbacked(struct mm_pool *pool, uint64_t pfn,
			     unsigned int order, unsigned int unused)
{
	(void)unused;
	for_each_pageblock_in(pb, pfn, order)
		if (!(pb_host_get(pool, pb) & HOST_USED))
			return true;
	return false;
}

/*
 * Make a batch of free, unbacked blocks host huge pages while they are
 * off the lists; *@left counts down the pageblocks still wanted.
 */
static uint64_t populate_batch(struct mm_pool *pool, uint64_t *left, bool *more)
{
	struct isolated held[REPORT_BATCH];
	uint64_t made = 0;
	unsigned int nr;

	pthread_mutex_lock(&pool->lock);
	nr = __isolate_free_pageblocks(pool, held, __block_unbacked, 0);
	pool_unlock(pool);
	for (unsigned int i = 0; i < nr; i++)
		for_each_pageblock_in(pb, held[i].pfn, held[i].order) {
			int err;

			if (!*left)
				break;
			if (pb_host_get(pool, pb) & HOST_USED)
				continue;
			err = make_pageblock_huge(pool, pb);
			(*left)--;
			pb_host_set(pool, pb, err ? HOST_USED : HOST_USED | HOST_HUGE);
			made += !err;
			count_huge(pool, err);
		}
	pthread_mutex_lock(&pool->lock);
	*more = nr == REPORT_BATCH && *left;
	__release_isolated(pool, held, &nr);
	pool_unlock(pool);
	return made;
}

uint64_t mm_pool_populate(struct mm_pool *pool, uint64_t pageblocks)
{
	uint64_t made = 0;
	bool more = true;

	if (pool->fd < 0)
		return 0;
	pthread_mutex_lock(&pool->host_lock);
	pool->host_keep = pageblocks > 0;
	while (more && pageblocks)
		made += populate_batch(pool, &pageblocks, &more);
	host_unlock(pool);
	return made;
}

int64_t mm_pool_host_bytes(const struct mm_pool *pool)
{
	struct stat st;

	if (pool->fd < 0)
		return 0;
	if (pool->pb_files)
		return __pageblock_files_bytes((struct mm_pool *)pool);	/* host_lock */
	if (fstat(pool->fd, &st) < 0)
		return -errno;
	return (int64_t)st.st_blocks * 512;
}

/* The reporter: a pass every delay, like page_reporting_process. */
static void page_reporting_pass(struct mm_pool *pool, void *arg)
{
	(void)arg;
	if (__atomic_load_n(&pool->host_prep_pending, __ATOMIC_ACQUIRE))
		hostmem_prepare_pending(pool);
	(void)hostmem_report(pool, 1);
}

int mm_page_reporting_start(struct mm_pool *pool, unsigned int delay_ms)
{
	if (pool->reporting || !delay_ms)
		return -EINVAL;
	if (pool->fd < 0)
		return -EOPNOTSUPP;
	return mm_worker_start(&pool->reporting, pool, delay_ms, page_reporting_pass, NULL,
			       "gpmm-reporting");
}

void mm_page_reporting_stop(struct mm_pool *pool)
{
	mm_worker_stop(pool->reporting);
	pool->reporting = NULL;
}

/* pool->lock held: pageblocks with host memory, and those made huge. */
void __hostmem_count(struct mm_pool *pool, uint64_t *used, uint64_t *huge)
{
	*used = *huge = 0;
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++) {
		uint8_t st = pb_host_get(pool, pb);

		*used += !!(st & HOST_USED);
		*huge += !!(st & HOST_HUGE);
	}
}
