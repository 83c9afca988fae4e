// SPDX-License-Identifier: GPL-2.0
/*
 * Reclaim driven by the pool's watermarks, as kswapd drives Linux's, in
 * one VM process: the watermarks, and the ladder a VM climbs while the
 * pool is short, cheapest first. Memory the guest reports free comes back
 * without being asked (the balloon's free page reporting); then balloon
 * pressure (the guest picks what it can spare); then swap (swap.c picks,
 * by its clock). Zero pages on the way out cost no I/O (swap.c).
 */
#include <errno.h>
#include <pthread.h>

#include "devices/virtio/virtio_balloon.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/pressure.h"
#include "vmm/memory/swap.h"

#define PRESSURE_PERIOD_NS	1000000000ULL
/* what one balloon step asks or gives back: 8 pageblocks */
#define PRESSURE_STEP_BYTES	(8ULL << MM_PAGEBLOCK_SHIFT)
/* a guest that has not reached the last ask by then is passed over to swap */
#define PRESSURE_FOLLOW_NS	3000000000ULL
/* the balloon counts 4 KiB pages, the guest may stop a little short of an ask */
#define PRESSURE_SLACK_BYTES	(1ULL << MM_PAGEBLOCK_SHIFT)
#define PRESSURE_SWAP_RANGES	8

/*
 * The low watermark is 1/16 of the pool's pageblocks, at least 2, so that
 * a VM's fault rarely waits for another's reclaim. They count free
 * pageblocks, not frames: a pageblock is owned whole, and free frames
 * inside another VM's are no use. The high one is twice that: pressure
 * gives memory back only above it, so a guest is not asked to give and
 * take back the same pages every second.
 */
static uint64_t low_watermark(const struct mm_stats *st)
{
	return st->pageblocks / 16 > 2 ? st->pageblocks / 16 : 2;
}

/* A balloon the guest drives; its stats buffer goes back, for fresh ones next time. */
static bool balloon_ready(struct vm *vm, struct virtio_balloon_info *bi)
{
	return !virtio_balloon_query(&vm->mach, bi, true) &&
	       (bi->status & VIRTIO_STATUS_DRIVER_OK);
}

/*
 * What the guest says it can spare (its available memory: free and page
 * cache it can drop, Linux's MemAvailable) less a reserve of an eighth of
 * its RAM, from stats sent after the last ask; UINT64_MAX when it sends no
 * such figure (then deflate-on-OOM is what keeps it safe), 0 while the
 * stats predate the last ask.
 */
static uint64_t guest_spare(const struct vm *vm, const struct virtio_balloon_info *bi)
{
	uint64_t reserve = vm->cfg.ram_bytes / 8;

	for (unsigned int i = 0; i < bi->nr_stats; i++) {
		if (bi->stat_tag[i] != VIRTIO_BALLOON_S_AVAIL)
			continue;
		if (vm->pressure.asked_ns &&
		    vm_now_ns() - bi->stats_age_ns <= vm->pressure.asked_ns)
			return 0;
		return bi->stat_val[i] > reserve ? bi->stat_val[i] - reserve : 0;
	}
	return UINT64_MAX;
}

/*
 * Ladder step 2: ask the guest's balloon to hold one step more, never
 * leaving the guest less than its share (its floor) nor asking more than
 * it says it can spare (guest_spare). The guest knows best what to give
 * (its page cache first), and the balloon offers deflate-on-OOM, so a
 * guest short of memory takes pages back before its own OOM killer runs.
 * True while this step is the one to wait for: the ask was made, or the
 * guest is still inflating towards the last one.
 * A guest that has not got there in PRESSURE_FOLLOW_NS (a driver that
 * ignores the balloon, a guest that cannot spare more) is passed to swap.
 */
static bool balloon_press(struct vm *vm, uint64_t held, uint64_t share)
{
	struct vm_pressure *p = &vm->pressure;
	uint64_t floor = share << MM_PAGE_SHIFT, step, spare, now = vm_now_ns();
	struct virtio_balloon_info bi;

	if (!balloon_ready(vm, &bi))
		return false;
	if (bi.actual_bytes > bi.target_bytes + PRESSURE_SLACK_BYTES)
		return now - p->asked_ns < PRESSURE_FOLLOW_NS;
	if (bi.target_bytes <= floor)
		return false;
	step = bi.target_bytes - floor;
	if (step > PRESSURE_STEP_BYTES)
		step = PRESSURE_STEP_BYTES;
	if (step > (held - share) << MM_PAGE_SHIFT)
		step = (held - share) << MM_PAGE_SHIFT;
	spare = guest_spare(vm, &bi);
	if (spare < step)
		step = spare & ~(MM_PAGE_SIZE - 1);
	if (!step)
		return spare == 0 && now - p->asked_ns < PRESSURE_FOLLOW_NS;
	if (virtio_balloon_set_target(&vm->mach, bi.target_bytes - step))
		return false;
	p->asked_ns = now;
	swap_count(&p->taken_bytes, step);
	swap_count(&p->balloon_steps, 1);
	return true;
}

/*
 * Above the high watermark the balloon gets back what pressure took, a
 * step at a time and no more than the free pageblocks over the mark, so
 * the guest's deflate cannot push the pool under the low one at once.
 * It moves whatever target is set now by what it took, so an operator's
 * own target (QMP `balloon`) set meanwhile is raised by that much, not
 * replaced.
 */
static void balloon_relax(struct vm *vm, uint64_t free_blocks, uint64_t high)
{
	struct vm_pressure *p = &vm->pressure;
	uint64_t give = __atomic_load_n(&p->taken_bytes, __ATOMIC_RELAXED);
	struct virtio_balloon_info bi;

	if (!give || !balloon_ready(vm, &bi))
		return;
	if (give > PRESSURE_STEP_BYTES)
		give = PRESSURE_STEP_BYTES;
	if (give > (free_blocks - high) << MM_PAGEBLOCK_SHIFT)
		give = (free_blocks - high) << MM_PAGEBLOCK_SHIFT;
	if (!give || virtio_balloon_set_target(&vm->mach, bi.target_bytes + give))
		return;
	__atomic_sub_fetch(&p->taken_bytes, give, __ATOMIC_RELAXED);
	swap_count(&p->balloon_relaxes, 1);
}

/*
 * Ladder step 3: cold ranges to the swap file, those holding a whole
 * block first (each frees a pageblock), a few a second, until the VM is
 * back at its share or the pool above the low watermark.
 */
static void swap_press(struct vm *vm, struct mm_stats *st, uint64_t low, uint64_t share)
{
	for (int i = 0; i < PRESSURE_SWAP_RANGES && st->free_pageblocks < low; i++) {
		uint64_t before = vm_populated_pages(vm);
		bool block;

		if (before <= share)
			break;
		pthread_mutex_lock(&vm->mem_lock);
		block = !__swap_reclaim(vm, NULL, 0, true);
		if (!block && __swap_reclaim(vm, NULL, 0, false)) {
			pthread_mutex_unlock(&vm->mem_lock);
			break;
		}
		pthread_mutex_unlock(&vm->mem_lock);
		swap_count(&vm->swap.background, 1);
		st->free_pageblocks += block && vm_populated_pages(vm) < before;
	}
}

/*
 * A VM at or under its share is never pushed by the others: it pays only
 * for its own faults (swap.c's reclaim at a fault).
 */
void pressure_balance(struct vm *vm)
{
	uint64_t now = vm_now_ns(), low, share, held;
	struct mm_stats st;

	if (!pool_overcommitted(vm->pool) || now - vm->pressure.balance_ns < PRESSURE_PERIOD_NS)
		return;
	vm->pressure.balance_ns = now;
	if (pool_stats(vm->pool, &st))
		return;
	low = low_watermark(&st);
	if (st.free_pageblocks >= 2 * low) {
		balloon_relax(vm, st.free_pageblocks, 2 * low);
		return;
	}
	share = swap_fair_share(vm);
	held = vm_populated_pages(vm);
	if (held > share) {
		pthread_mutex_lock(&vm->mem_lock);
		__swap_age(vm);
		pthread_mutex_unlock(&vm->mem_lock);
	}
	if (st.free_pageblocks >= low || held <= share || balloon_press(vm, held, share))
		return;
	if (swap_enabled(vm))
		swap_press(vm, &st, low, share);
}
