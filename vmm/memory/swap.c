// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM swapped out to a file and faulted back: what lets a pool lend
 * more RAM than it holds.
 *
 * Reclaim writes out a whole 2 MiB guest range at a time (the seed's
 * lumpy reclaim: a range backed by one block frees a pageblock whole) and
 * gives its frames back to the pool; the first touch of a page of it
 * reads the range back, into one fresh 2 MiB block where the pool has one
 * (huge-backed again from that touch), else page by page.
 *
 * The file is the VM process's own, unlinked (O_TMPFILE, else a name
 * removed at once): its space goes back to the host when the process
 * ends, however it ends. It holds page @i of guest RAM at @i * 4 KiB
 * (regions end to end); a page not swapped out is a hole there, or data
 * nobody reads (the bitmap, not the file, says what is out).
 *
 * A range leaves as a page move does (page_move.c): its writers are held
 * by a write-protect window while it is copied; then one mremap() puts
 * an anonymous mapping, already registered for missing faults, in place
 * of the old ones. Unlike a discard's mmap-then-register, no touch can
 * fall between the two and read zeros where the guest's data was. A
 * registration survives mremap only for a userfaultfd that asked for
 * remap events, and mremap waits until its event is read: so swapped-out
 * ranges belong to a second userfaultfd whose thread (gpmm-swap) never
 * takes a lock, reads the events and passes the faults on to the fault
 * thread, which resolves them like its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "vmm/core/vcpu.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/page_move.h"
#include "vmm/memory/swap.h"
#include "vmm/sys/uffd.h"

/* A page read back this soon after it went out was reclaimed wrongly. */
#define SWAP_REFAULT_S		10
/* A range the clock armed this recently may not have had a chance to be written. */
#define SWAP_ARM_MIN_MS		200

int swap_file_open(struct vm_config *cfg, char *err, size_t errlen)
{
	const char *dir = !strcmp(cfg->swap_dir, "auto") ? "/var/tmp" : cfg->swap_dir;
	char path[PATH_MAX + 32];
	struct statfs sf;
	int fd;

	cfg->swap_fd = -1;
	err[0] = '\0';
	if (!dir[0])
		return 0;
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* a file system without O_TMPFILE (9p): a name, gone at once */
		snprintf(path, sizeof(path), "%s/gpmm-swap-XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0) {
		snprintf(err, errlen, "no swap file in %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (ftruncate(fd, (off_t)cfg->ram_bytes)) {
		int e = errno;

		close(fd);
		snprintf(err, errlen, "swap file in %s: %s", dir, strerror(e));
		return -e;
	}
	if (!fstatfs(fd, &sf) && sf.f_type == TMPFS_MAGIC)
		snprintf(err, errlen, "the swap file is on tmpfs (%s): what is swapped stays in"
			 " host RAM", dir);
	else
		err[0] = '\0';
	cfg->swap_fd = fd;
	return 0;
}

static uint64_t file_off(const struct vm *vm, const struct vm_region *r, uint64_t idx)
{
	uint64_t off = 0;

	for (const struct vm_region *p = vm->regions; p < r; p++)
		off += p->size;
	return off + (idx << MM_PAGE_SHIFT);
}

static uint32_t now_s(const struct vm *vm)
{
	return (uint32_t)((vm_now_ns() - vm->stats.create_ns) / 1000000000ULL) + 1;
}

/*
 * The clock's time: ms of CPU the guest's vCPU threads have had (guest
 * mode included), compared by difference (wraps after 49 days of it).
 * "Armed 200 ms ago and not written" must mean the guest ran for 200 ms
 * and did not write: a guest waiting for its faults, or descheduled on
 * a busy host, has had no chance to, however long the wall clock says.
 * A thread not started or gone adds nothing (its clock cannot be read).
 */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) | 6);	/* CPUCLOCK_SCHED, per thread */
}

static uint32_t guest_ms(const struct vm *vm)
{
	uint64_t ns = 0;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		pid_t tid = __atomic_load_n(&vm->vcpus[i].tid, __ATOMIC_RELAXED);
		struct timespec ts;

		if (tid > 0 && !clock_gettime(thread_cpu_clock(tid), &ts))
			ns += (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	}
	return (uint32_t)(ns / 1000000ULL);
}

bool __swap_any_out(const struct vm_region *r, uint64_t idx, uint64_t n)
{
	if (!r->swapped || !r->swapped_n[idx >> MM_PAGEBLOCK_ORDER])
		return false;
	for (uint64_t i = idx; i < idx + n; i++)
		if (__swap_page_out(r, i))
			return true;
	return false;
}

static void mark(struct vm_region *r, uint64_t idx, bool out)
{
	if (out)
		r->swapped[idx / 64] |= 1ULL << (idx % 64);
	else
		r->swapped[idx / 64] &= ~(1ULL << (idx % 64));
}

static int read_full(int fd, void *dst, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, dst, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		dst = (uint8_t *)dst + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int write_full(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n) {
		ssize_t w = pwritev(fd, iov, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (uint64_t)w;
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/*
 * A hole where @n pages of @r start at @idx: the file's copy of pages that
 * came back is not needed (the disk goes back), and a zero page going out
 * needs none. -errno: the file system keeps what it had there.
 */
static int punch(struct vm *vm, const struct vm_region *r, uint64_t idx, uint64_t n)
{
	if (fallocate(vm->swap.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)file_off(vm, r, idx), (off_t)(n << MM_PAGE_SHIFT)))
		return -errno;
	return 0;
}

/*
 * A range back soon after it went out was wrongly taken: likely one the
 * guest reads without writing, which write-protect sampling cannot see
 * (a kernel's text). The hand passes it by this many times before it
 * looks at it again, as Linux's workingset refault detection activates a
 * page: reclaim of it is rarer, never ruled out.
 */
#define SWAP_ACTIVE_TURNS	4

/* mem_lock held: @n pages of @range came back; a quick return says it was wrong. */
static void came_back(struct vm *vm, struct vm_region *r, uint64_t range, uint64_t n)
{
	r->swapped_n[range] -= (uint16_t)n;
	swap_count(&vm->swap.in_pages, n);
	__atomic_sub_fetch(&vm->swap.pages_now, n, __ATOMIC_RELAXED);
	if (now_s(vm) - r->swap_out_s[range] < SWAP_REFAULT_S) {
		swap_count(&vm->swap.refaults, n);
		r->active[range] = SWAP_ACTIVE_TURNS;
	}
}

int __swap_read_page(struct vm *vm, const struct vm_region *r, uint64_t idx, void *dst)
{
	uint64_t t0 = vm_now_ns();
	int ret = read_full(vm->swap.fd, dst, MM_PAGE_SIZE, file_off(vm, r, idx));

	swap_count(&vm->swap.in_ns, vm_now_ns() - t0);
	if (ret)
		swap_count(&vm->swap.errors, 1);
	return ret;
}

void __swap_page_back(struct vm *vm, struct vm_region *r, uint64_t idx)
{
	mark(r, idx, false);
	(void)punch(vm, r, idx, 1);
	came_back(vm, r, idx >> MM_PAGEBLOCK_ORDER, 1);
}

int __swap_read_range(struct vm *vm, const struct vm_region *r, uint64_t range, void *dst)
{
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER, t0 = vm_now_ns();
	int ret = read_full(vm->swap.fd, dst, MM_PAGEBLOCK_SIZE, file_off(vm, r, idx0));

	swap_count(&vm->swap.in_ns, vm_now_ns() - t0);
	if (ret) {
		swap_count(&vm->swap.errors, 1);
		return ret;
	}
	/* what was not out reads zero, whatever the file still holds there */
	for (uint64_t i = 0; i < MM_PAGEBLOCK_PAGES; i++)
		if (!__swap_page_out(r, idx0 + i))
			memset((uint8_t *)dst + (i << MM_PAGE_SHIFT), 0, MM_PAGE_SIZE);
	return 0;
}

void __swap_range_back(struct vm *vm, struct vm_region *r, uint64_t range)
{
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER;

	for (uint64_t i = idx0; i < idx0 + MM_PAGEBLOCK_PAGES; i++)
		mark(r, i, false);
	(void)punch(vm, r, idx0, MM_PAGEBLOCK_PAGES);
	swap_count(&vm->swap.in_ranges, 1);
	came_back(vm, r, range, r->swapped_n[range]);
}

/*
 * Replace [@hva, @hva + @len) with anonymous memory registered for missing
 * faults with the swap userfaultfd, in one step (mremap over it).
 */
static int arm_swapped(struct vm *vm, uint8_t *hva, uint64_t len)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	void *scratch = mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int ret = 0;

	if (scratch == MAP_FAILED)
		return errno == ENOMEM ? -EMFILE : -errno;
	madvise(scratch, len, MADV_DONTFORK);
	reg.range = (struct uffdio_range){ (uintptr_t)scratch, len };
	if (ioctl(vm->swap.uffd, UFFDIO_REGISTER, &reg) < 0)
		ret = -errno;
	if (!ret && mremap(scratch, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, hva) == MAP_FAILED)
		ret = -errno;
	if (ret)
		munmap(scratch, len);
	return ret;
}

/* A page of zeros needs no room in the file: a hole reads back as zeros. */
static bool page_is_zero(const void *p)
{
	const uint64_t *w = p;

	for (size_t i = 0; i < MM_PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/*
 * mem_lock held, writers held off: the backed pages of the range into the
 * file, a write per run of pages with data. A run of zero pages becomes a
 * hole instead (the cheapest reclaim: no I/O, no disk), or is written
 * where the file cannot punch one; *@zero counts the pages that went so.
 */
static int write_range(struct vm *vm, struct vm_region *r, uint64_t idx0, uint64_t *zero)
{
	struct iovec iov[MM_PAGEBLOCK_PAGES];
	uint64_t i = 0;

	while (i < MM_PAGEBLOCK_PAGES) {
		uint64_t off = file_off(vm, r, idx0 + i);
		bool z;
		int n = 0, ret;

		if (r->backing[idx0 + i] == NIL_FRAME) {
			i++;
			continue;
		}
		z = page_is_zero(pool_frame_ptr(vm->pool, r->backing[idx0 + i]));
		while (i + n < MM_PAGEBLOCK_PAGES && r->backing[idx0 + i + n] != NIL_FRAME) {
			void *page = pool_frame_ptr(vm->pool, r->backing[idx0 + i + n]);

			if (n && page_is_zero(page) != z)
				break;
			iov[n++] = (struct iovec){ page, MM_PAGE_SIZE };
		}
		if (z && !punch(vm, r, idx0 + i, (uint64_t)n))
			*zero += (uint64_t)n;
		else if ((ret = write_full(vm->swap.fd, iov, n, off)))
			return ret;
		i += (uint64_t)n;
	}
	return 0;
}

/* mem_lock held: the range is out; its frames go back, its pages are marked. */
static void __range_gone(struct vm *vm, struct vm_region *r, uint64_t range, bool block)
{
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER, n = 0;
	uint32_t first = r->backing[idx0];

	for (uint64_t i = idx0; i < idx0 + MM_PAGEBLOCK_PAGES; i++) {
		uint32_t frame = r->backing[i];

		if (frame == NIL_FRAME)
			continue;
		vm->pool->gpa_of[frame] = 0;
		r->backing[i] = NIL_FRAME;
		mark(r, i, true);
		n++;
		if (!block)
			gmem_free_frame(vm, NULL, frame, 0);
	}
	if (block)
		gmem_free_frame(vm, NULL, first, MM_PAGEBLOCK_ORDER);
	r->populated[range] = 0;
	r->referenced[range] = 0;
	r->huge[range] = RANGE_4K;
	r->swapped_n[range] += (uint16_t)n;
	r->swap_out_s[range] = now_s(vm);
	__atomic_sub_fetch(&vm->stats.populated_pages, n, __ATOMIC_RELAXED);
	swap_count(&vm->swap.out_ranges, 1);
	swap_count(&vm->swap.out_pages, n);
	swap_count(&vm->swap.pages_now, n);
	if (block)
		swap_count(&vm->swap.out_blocks, 1);
}

/* mem_lock held: whether a frame of the range is pinned (a device's ring, DMA). */
static bool range_pinned(struct vm *vm, struct vm_region *r, uint64_t idx0, bool block)
{
	uint32_t frames[MM_PAGEBLOCK_PAGES];
	size_t n = 0;

	if (block)
		return pool_frames_pinned(vm->pool, &r->backing[idx0], 1, NULL) != 0;
	for (uint64_t i = idx0; i < idx0 + MM_PAGEBLOCK_PAGES; i++)
		if (r->backing[i] != NIL_FRAME)
			frames[n++] = r->backing[i];
	return pool_frames_pinned(vm->pool, frames, n, NULL) != 0;
}

/*
 * mem_lock held: write out one 2 MiB range and free its frames. Writers
 * wait in the write-protect window from before the copy until the new
 * mapping is in; readers go on reading the old frames, intact until then.
 */
static int __swap_out_range(struct vm *vm, struct vm_region *r, uint64_t range)
{
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER;
	uint8_t *hva = r->hva + (idx0 << MM_PAGE_SHIFT);
	bool block = r->huge[range] != RANGE_4K;
	uint64_t zero = 0, t0 = vm_now_ns();
	int ret;

	if (!r->populated[range])
		return -ENOENT;
	if (range_pinned(vm, r, idx0, block))
		return -EBUSY;
	ret = migrate_window_open(vm, (uintptr_t)hva, MM_PAGEBLOCK_SIZE);
	if (ret)
		return ret;
	ret = write_range(vm, r, idx0, &zero);
	if (ret)
		swap_count(&vm->swap.errors, 1);
	else
		ret = arm_swapped(vm, hva, MM_PAGEBLOCK_SIZE);
	if (ret) {
		/*
		 * mremap may have unmapped the old mappings, and the window's
		 * protection outlives it: mapped anew, the guest keeps its pages
		 * as they were, writable
		 */
		if (!block || gmem_map(vm, hva, r->backing[idx0], MM_PAGEBLOCK_SIZE))
			for (uint64_t i = idx0; i < idx0 + MM_PAGEBLOCK_PAGES; i++)
				if (r->backing[i] != NIL_FRAME)
					gmem_map_back(vm, r->hva + (i << MM_PAGE_SHIFT),
						      &r->backing[i], 1, ret);
	}
	migrate_window_close(vm);
	swap_count(&vm->swap.out_ns, vm_now_ns() - t0);
	if (!ret) {
		__range_gone(vm, r, range, block);
		swap_count(&vm->swap.zero_pages, zero);
	}
	return ret;
}

/*
 * mem_lock held: write out the one page @idx of a 4 KiB range and take it
 * from the guest, as a range goes (the write-protect window, then one
 * mremap), leaving its frame to the caller: the pool frees it.
 */
static int __swap_out_page(struct vm *vm, struct vm_region *r, uint64_t idx)
{
	uint64_t range = idx >> MM_PAGEBLOCK_ORDER, zero = 0, t0 = vm_now_ns();
	uint8_t *hva = r->hva + (idx << MM_PAGE_SHIFT);
	uint32_t frame = r->backing[idx];
	struct iovec iov = { pool_frame_ptr(vm->pool, frame), MM_PAGE_SIZE };
	int ret = migrate_window_open(vm, (uintptr_t)hva, MM_PAGE_SIZE);

	if (ret)
		return ret;
	if (page_is_zero(iov.iov_base) && !punch(vm, r, idx, 1))
		zero = 1;
	else if ((ret = write_full(vm->swap.fd, &iov, 1, file_off(vm, r, idx))))
		swap_count(&vm->swap.errors, 1);
	if (!ret && (ret = arm_swapped(vm, hva, MM_PAGE_SIZE)))
		gmem_map_back(vm, hva, &r->backing[idx], 1, ret);
	migrate_window_close(vm);
	swap_count(&vm->swap.out_ns, vm_now_ns() - t0);
	if (ret)
		return ret;
	vm->pool->gpa_of[frame] = 0;
	r->backing[idx] = NIL_FRAME;
	mark(r, idx, true);
	r->populated[range]--;
	r->swapped_n[range]++;
	r->swap_out_s[range] = now_s(vm);
	__atomic_sub_fetch(&vm->stats.populated_pages, 1, __ATOMIC_RELAXED);
	swap_count(&vm->swap.out_pages, 1);
	swap_count(&vm->swap.pages_now, 1);
	swap_count(&vm->swap.zero_pages, zero);
	swap_count(&vm->swap.lumpy_pages, 1);
	return 0;
}

/*
 * mem_lock held: may the clock's view let page @idx go now? The VM swaps
 * and holds more than its share (a VM within it is not the one to pay);
 * the range is 4 KiB backed (a page of a 2 MiB backing would cost the
 * whole mapping); and the clock has no sign of use: not written since the
 * hand armed it long enough ago, not refaulted lately.
 */
static bool __page_may_go(struct vm *vm, const struct vm_region *r, uint64_t idx)
{
	uint64_t range = idx >> MM_PAGEBLOCK_ORDER;

	if (!swap_enabled(vm) || vm_populated_pages(vm) <= swap_fair_share(vm) ||
	    r->huge[range] != RANGE_4K || r->active[range] ||
	    (r->referenced[range] & RANGE_SEEN))
		return false;
	return !(r->referenced[range] & RANGE_ARMED) ||
	       guest_ms(vm) - r->armed_at[range] >= SWAP_ARM_MIN_MS;
}

int swap_reclaim_frame(struct vm *vm, uint64_t frame)
{
	struct vm_region *r;
	uint64_t idx;
	int ret = -EBUSY;

	pthread_mutex_lock(&vm->mem_lock);
	r = __gmem_frame_page(vm, frame, &idx);
	if (!r)
		ret = -ENOENT;
	else if (__page_may_go(vm, r, idx))
		ret = __swap_out_page(vm, r, idx);
	else
		swap_count(&vm->swap.lumpy_declined, 1);
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}

static uint64_t total_ranges(const struct vm *vm)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < vm->nr_regions; i++)
		n += vm->regions[i].size >> MM_PAGEBLOCK_SHIFT;
	return n;
}

static struct vm_region *range_at(struct vm *vm, uint64_t g, uint64_t *range)
{
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		uint64_t n = vm->regions[i].size >> MM_PAGEBLOCK_SHIFT;

		if (g < n) {
			*range = g;
			return &vm->regions[i];
		}
		g -= n;
	}
	return NULL;
}

/*
 * The clock sees writes, not only faults: a range the hand gives a second
 * chance is write-protected (its backed pages registered for write-protect
 * faults, outside any page move's window), and the first write to it says
 * it is hot (swap_wp_fault). Dirty logging would do the same for KVM but
 * forces 4 KiB EPT mappings on the whole VM; this costs the guest one fault
 * per written range per turn of the hand, and the hand turns only while
 * the pool is short. A range backed by one block loses its 2 MiB mapping
 * while protected (protecting a PMD-mapped shmem page splits the mapping)
 * and gets it back from that fault, which maps the block anew. Reads go
 * unseen: a range only read looks cold, goes out, and its next read is a
 * refault (counted). Where the host has no write-protect faults a range
 * is marked cold, as if never touched since: faults alone decide.
 */
static void __arm_range(struct vm *vm, struct vm_region *r, uint64_t range)
{
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER, i = 0;
	bool armed = false;

	r->referenced[range] = 0;
	if (r->swapped_n[range])
		return;
	if (r->huge[range] != RANGE_4K) {
		armed = !migrate_protect(vm, (uintptr_t)r->hva + (idx0 << MM_PAGE_SHIFT),
					 MM_PAGEBLOCK_SIZE);
	} else {
		while (i < MM_PAGEBLOCK_PAGES) {
			uint64_t n = 0;

			while (i + n < MM_PAGEBLOCK_PAGES && r->backing[idx0 + i + n] != NIL_FRAME)
				n++;
			if (n && !migrate_protect(vm, (uintptr_t)r->hva +
						  ((idx0 + i) << MM_PAGE_SHIFT), n << MM_PAGE_SHIFT))
				armed = true;
			i += n ? n : 1;
		}
	}
	if (armed) {
		r->referenced[range] = RANGE_ARMED;
		r->armed_at[range] = guest_ms(vm);
		swap_count(&vm->swap.armed, 1);
	}
}

/*
 * The fault thread: a write hit a protected page outside any window.
 * When the clock protected its range, the range is hot: marked seen, its
 * protection lifted (a block mapped anew, so it is 2 MiB mapped again),
 * its writers woken; true. False: not the clock's (a window that closed
 * since), for page_move.c to wake.
 */
bool swap_wp_fault(struct vm *vm, struct vm_region *r, uint64_t addr)
{
	uint64_t range = (addr - (uintptr_t)r->hva) >> MM_PAGEBLOCK_SHIFT;
	uint64_t idx0 = range << MM_PAGEBLOCK_ORDER;
	uint8_t *hva = r->hva + (idx0 << MM_PAGE_SHIFT);
	struct uffdio_range wake = { (uintptr_t)hva, MM_PAGEBLOCK_SIZE };
	bool ours;

	pthread_mutex_lock(&vm->mem_lock);
	ours = r->referenced && (r->referenced[range] & RANGE_ARMED);
	if (ours) {
		r->referenced[range] = 0;
		gmem_range_seen(vm, r, range);
		if ((r->huge[range] == RANGE_4K ||
		     gmem_map(vm, hva, r->backing[idx0], MM_PAGEBLOCK_SIZE)) &&
		    migrate_unprotect(vm, (uintptr_t)hva, MM_PAGEBLOCK_SIZE))
			swap_count(&vm->swap.errors, 1);
		swap_count(&vm->swap.sample_hits, 1);
	}
	pthread_mutex_unlock(&vm->mem_lock);
	if (ours)
		ioctl(vm->uffd, UFFDIO_WAKE, &wake);
	return ours;
}

/*
 * The clock: a range seen since the hand last passed it (faulted in,
 * written: above) gets a second chance, the first one that was not goes
 * out. A range armed less than SWAP_ARM_MIN_MS ago may not have had a
 * chance to be written: a fault's reclaims come one after another while
 * its vCPU waits, and a guest that just faulted a hot range in is often
 * stuck on its next one. Those are passed over for two turns of the hand;
 * when nothing else would do, the one touched longest ago goes (least
 * recently used, by touch order). @block: only a range backed by one
 * 2 MiB block, whose going frees a pageblock whole (lumpy reclaim).
 */
int __swap_reclaim(struct vm *vm, const struct vm_region *keep_r, uint64_t keep_range,
		   bool block)
{
	uint64_t total = total_ranges(vm), lru_range = 0;
	uint32_t now = guest_ms(vm);
	struct vm_region *lru = NULL;

	if (!swap_enabled(vm) || !total)
		return -ENOENT;
	for (uint64_t step = 0; step < 2 * total; step++) {
		uint64_t range;
		struct vm_region *r = range_at(vm, vm->swap.hand++ % total, &range);

		if (!r->populated[range] || (r == keep_r && range == keep_range) ||
		    (block && r->huge[range] == RANGE_4K))
			continue;
		if (r->active[range]) {
			r->active[range]--;
			continue;
		}
		if (r->referenced[range] & RANGE_SEEN) {
			__arm_range(vm, r, range);
			continue;
		}
		if ((r->referenced[range] & RANGE_ARMED) &&
		    now - r->armed_at[range] < SWAP_ARM_MIN_MS) {
			if (!lru || r->touched_at[range] < lru->touched_at[lru_range]) {
				lru = r;
				lru_range = range;
			}
			continue;
		}
		if (!__swap_out_range(vm, r, range))
			return 0;
	}
	if (lru && !__swap_out_range(vm, lru, lru_range))
		return 0;
	swap_count(&vm->swap.reclaim_failed, 1);
	return -ENOENT;
}

/*
 * Aging, ahead of need, as kswapd does between its watermarks: once a VM
 * holds more than its share of an overcommitted pool, the hand moves a
 * few ranges on now and then, arming the ones seen since it passed, so
 * that when a range must go the clock already knows which were written
 * since: a reclaim that had to arm everything at once would pick blind
 * (the hottest range of all, the one a guest's kernel and stacks live in,
 * looks no different from a cold one then). No range goes here. Called
 * after a fault is resolved and on the pressure tick, at most every
 * SWAP_AGE_MS.
 */
#define SWAP_AGE_MS		50
#define SWAP_AGE_RANGES		4

void __swap_age(struct vm *vm)
{
	uint64_t total = total_ranges(vm);
	uint32_t now = guest_ms(vm);

	if (!swap_enabled(vm) || !total || now - vm->swap.aged_ms < SWAP_AGE_MS ||
	    vm_populated_pages(vm) <= swap_fair_share(vm))
		return;
	vm->swap.aged_ms = now;
	for (int i = 0; i < SWAP_AGE_RANGES; i++) {
		uint64_t range;
		struct vm_region *r = range_at(vm, vm->swap.hand++ % total, &range);

		if (r->populated[range] && (r->referenced[range] & RANGE_SEEN))
			__arm_range(vm, r, range);
	}
}

/*
 * Reads the swap userfaultfd and never takes a lock: a remap event is
 * read so that the mremap waiting for it returns, a fault goes to the
 * fault thread through the pipe (each faulting thread waits for its one
 * message, so the pipe never fills).
 */
static void pass_on(void *opaque, const struct uffd_msg *msg)
{
	struct vm *vm = opaque;

	if (msg->event == UFFD_EVENT_PAGEFAULT &&
	    write(vm->swap.pipe[1], msg, sizeof(*msg)) != sizeof(*msg))
		swap_count(&vm->swap.errors, 1);
}

static void *swap_thread_fn(void *arg)
{
	struct vm *vm = arg;
	struct pollfd pfd[2] = {
		{ .fd = vm->swap.uffd, .events = POLLIN },
		{ .fd = vm->swap.stop, .events = POLLIN },
	};

	pthread_setname_np(pthread_self(), "gpmm-swap");
	uffd_read_loop(&(struct uffd_reader){ .pfd = pfd, .nfd = 2, .msg = pass_on,
		       .now = vm_now_ns, .opaque = vm });
	return NULL;
}

static int open_uffd(struct vm *vm, char *err, size_t errlen)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_REMAP };

	vm->swap.uffd = uffd_create(O_CLOEXEC | O_NONBLOCK);
	if (vm->swap.uffd < 0) {
		uffd_explain(vm->swap.uffd, err, errlen);
		return vm->swap.uffd;
	}
	if (ioctl(vm->swap.uffd, UFFDIO_API, &api) < 0) {
		snprintf(err, errlen, "swap: UFFDIO_API with remap events: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int alloc_maps(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];
		uint64_t pages = r->size >> MM_PAGE_SHIFT, ranges = (pages >> MM_PAGEBLOCK_ORDER) + 1;

		r->swapped = calloc(pages / 64 + 1, sizeof(*r->swapped));
		r->swapped_n = calloc(ranges, sizeof(*r->swapped_n));
		r->swap_out_s = calloc(ranges, sizeof(*r->swap_out_s));
		r->armed_at = calloc(ranges, sizeof(*r->armed_at));
		r->touched_at = calloc(ranges, sizeof(*r->touched_at));
		r->active = calloc(ranges, sizeof(*r->active));
		if (!r->swapped || !r->swapped_n || !r->swap_out_s || !r->armed_at ||
		    !r->touched_at || !r->active)
			return -ENOMEM;
	}
	return 0;
}

int swap_init(struct vm *vm, char *err, size_t errlen)
{
	int ret;

	vm->swap.fd = vm->swap.uffd = vm->swap.stop = vm->swap.pipe[0] = vm->swap.pipe[1] = -1;
	vm->swap.opened = true;
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		vm->regions[i].referenced = calloc((vm->regions[i].size >> MM_PAGEBLOCK_SHIFT) + 1, 1);
		if (!vm->regions[i].referenced)
			return -ENOMEM;
	}
	/* a pool that lends no more than it holds never needs it: the file goes */
	if (!vm->cfg.swap_dir[0] || vm->cfg.swap_fd < 0 || vm->cfg.ram != VM_RAM_POOL ||
	    (!strcmp(vm->cfg.swap_dir, "auto") && !pool_overcommitted(vm->pool))) {
		if (vm->cfg.swap_dir[0] && vm->cfg.swap_fd >= 0)
			close(vm->cfg.swap_fd);
		vm->cfg.swap_fd = -1;
		return 0;
	}
	if (!vm->mig.wp_supported) {
		snprintf(err, errlen, "swap needs userfaultfd write-protect on shared memory"
			 " (Linux 5.19 or later)");
		return -EOPNOTSUPP;
	}
	ret = alloc_maps(vm);
	if (!ret)
		ret = open_uffd(vm, err, errlen);
	/* never blocks the swap thread: 2048 faults fit, one per waiting thread */
	if (!ret && (pipe2(vm->swap.pipe, O_CLOEXEC) ||
		     fcntl(vm->swap.pipe[1], F_SETFL, O_NONBLOCK) ||
		     (vm->swap.stop = eventfd(0, EFD_CLOEXEC)) < 0)) {
		ret = -errno;
		snprintf(err, errlen, "swap: %s", strerror(errno));
	}
	if (!ret && (ret = -pthread_create(&vm->swap.thread, NULL, swap_thread_fn, vm)))
		snprintf(err, errlen, "cannot start the swap thread: %s", strerror(-ret));
	if (ret)
		return ret;
	vm->swap.running = true;
	vm->swap.fd = vm->cfg.swap_fd;
	vm->cfg.swap_fd = -1;
	return 0;
}

void swap_destroy(struct vm *vm)
{
	if (vm->swap.running) {
		uint64_t one = 1;

		if (write(vm->swap.stop, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(vm->swap.thread);
		pthread_join(vm->swap.thread, NULL);
		vm->swap.running = false;
	}
	int *fds[] = { &vm->swap.fd, &vm->swap.uffd, &vm->swap.pipe[0], &vm->swap.pipe[1],
		       &vm->swap.stop };

	/* a VM built without swap_init (a fuzzer's) has zeros there, not descriptors */
	for (size_t i = 0; vm->swap.opened && i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	vm->swap.fd = vm->swap.uffd = vm->swap.pipe[0] = vm->swap.pipe[1] = vm->swap.stop = -1;
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		struct vm_region *r = &vm->regions[i];

		gmem_free_maps((void **[]){ (void **)&r->swapped, (void **)&r->swapped_n,
					    (void **)&r->swap_out_s, (void **)&r->referenced,
					    (void **)&r->armed_at, (void **)&r->touched_at,
					    (void **)&r->active }, 7);
	}
}
