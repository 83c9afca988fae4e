// SPDX-License-Identifier: GPL-2.0
/*
 * Moving guest pages while the vCPUs run, and the write-protect window
 * that makes it safe (2 MiB assembly in huge_backing.c opens the same
 * window over a whole range); pins, and the owner callback compaction
 * calls to move a VM's page.
 *
 * The rule (DESIGN.md): no guest write may be lost and no vCPU may read a
 * torn page. Copy + remap alone loses writes made between the copy and the
 * remap, so the source is write-protected with userfaultfd first: a vCPU
 * (or any thread) writing it blocks in the kernel; we copy, map the new
 * frame with MAP_FIXED (KVM's MMU notifier drops the old EPT entry), and
 * wake the waiters, whose retried write lands in the new frame. Reads go
 * on meanwhile and see the old frame, which is intact until after the
 * remap. The time a writer waits is the stall we report.
 *
 * One migration at a time per VM, under mem_lock: the fault thread never
 * takes mem_lock for a write-protect fault, only mig.lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "vmm/memory/guest_mem.h"
#include "vmm/memory/page_move.h"
#include "vmm/memory/swap.h"
#include "vmm/core/samples.h"
#include "vmm/core/vm.h"

static void record_stall(struct vm *vm, uint64_t ns)
{
	vm->mig.stall_ns[vm->mig.nr_stalls++ % VM_STALL_SAMPLES] = ns;
}

/* mig.lock held: the earliest moment a write now seen can have happened. */
static uint64_t __earliest_fault(struct vm *vm)
{
	uint64_t t = vm->mig.drained_ns;

	return vm->mig.first_open_ns > t ? vm->mig.first_open_ns : t;
}

/*
 * Called by the fault thread: a writer hit a protected page. When its
 * window has closed already, the writer was woken then (release() wakes
 * the whole range): its stall ended at that moment and is counted now.
 */
void migrate_wp_fault(struct vm *vm, uint64_t addr)
{
	struct uffdio_range range = { .start = addr, .len = MM_PAGE_SIZE };
	uint64_t earliest;
	bool ours;

	pthread_mutex_lock(&vm->mig.lock);
	ours = vm->mig.len && addr >= vm->mig.start &&
	       addr - vm->mig.start < vm->mig.len;
	earliest = __earliest_fault(vm);
	if (!ours)
		record_stall(vm, vm->mig.released_ns > earliest ?
				 vm->mig.released_ns - earliest : 0);
	else if (vm->mig.nr_waiting < VM_MAX_WAITERS)
		vm->mig.waiting[vm->mig.nr_waiting++] = earliest;
	else
		vm->mig.stalls_unrecorded++;
	pthread_mutex_unlock(&vm->mig.lock);
	/* the migration is over already: its page is writable again */
	if (!ours)
		ioctl(vm->uffd, UFFDIO_WAKE, &range);
}

/* Called by the fault thread each time it has emptied its queue. */
void migrate_fault_queue_empty(struct vm *vm, uint64_t when)
{
	pthread_mutex_lock(&vm->mig.lock);
	vm->mig.drained_ns = when;
	vm->mig.first_open_ns = 0;
	pthread_mutex_unlock(&vm->mig.lock);
}

/*
 * While a page is protected, a vCPU that writes it waits for us; on cores
 * busy with vCPU threads, being preempted there turns a 30 us window into
 * a scheduler quantum. So the window's thread is raised for its length
 * (if we may; root may), two ways:
 *
 * - a 4 KiB window runs at nice -20: its thread gains virtual runtime 88x
 *   slower than a vCPU's, so neither a tick nor a waking vCPU preempts it.
 *   Not SCHED_FIFO: leaving the real-time class makes Linux 6.1 reschedule
 *   the thread at once (switched_to_fair), so on an overcommitted host each
 *   migration ended by waiting out another thread's slice, ~4 ms at HZ=250
 *   (measured in the test VM: 248 migrations/s on 6.1 against 10,638 on
 *   6.12, 3.5 ms of each spent returning to SCHED_OTHER);
 * - a 2 MiB window (512 copies, milliseconds) runs SCHED_FIFO, which no
 *   vCPU thread can preempt at all; there the one reschedule on the way
 *   out is paid once per 512 pages.
 */
static void window_priority(uint64_t len, bool high)
{
	struct sched_param sp = { .sched_priority = high ? 1 : 0 };

	/* 0: the calling thread, the only one the sandbox lets a thread name */
	if (len > MM_PAGE_SIZE)
		sched_setscheduler(0, high ? SCHED_FIFO : SCHED_OTHER, &sp);
	else
		setpriority(PRIO_PROCESS, 0, high ? -20 : 0);
}

/*
 * Write-protect (or unprotect) [start, start + len). Linux before 6.4 wants
 * the range of one UFFDIO_WRITEPROTECT inside a single VMA and answers
 * ENOENT otherwise; a range whose 4 KiB pages sit on scattered frames is
 * one VMA a page. Then it goes page by page, and a failure midway undoes
 * what was done, so that no page stays protected with nobody to wake it;
 * lifting skips pages that are not registered (mapped anew since).
 */
static int uffd_wp_range(int uffd, uint64_t start, uint64_t len, bool wp)
{
	struct uffdio_writeprotect arg = {
		.range = { start, len }, .mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};
	uint64_t off;

	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &arg) == 0)
		return 0;
	if (errno != ENOENT || len == MM_PAGE_SIZE)
		return -errno;
	for (off = 0; off < len; off += MM_PAGE_SIZE) {
		arg.range = (struct uffdio_range){ start + off, MM_PAGE_SIZE };
		/* lifting: a page mapped anew since (not registered) has nothing to lift */
		if (ioctl(uffd, UFFDIO_WRITEPROTECT, &arg) < 0 && (wp || errno != ENOENT))
			break;
	}
	if (off == len)
		return 0;
	int ret = -errno;

	if (wp && off)
		uffd_wp_range(uffd, start, off, false);
	return ret;
}

/* Register [start, start + len) (backed pages) for write-protect faults and protect it. */
static int protect(struct vm *vm, uint64_t start, uint64_t len)
{
	struct uffdio_register reg = {
		.range = { start, len }, .mode = UFFDIO_REGISTER_MODE_WP,
	};

	if (ioctl(vm->uffd, UFFDIO_REGISTER, &reg) < 0)
		return -errno;
	return uffd_wp_range(vm->uffd, start, len, true);
}

bool migrate_in_window(struct vm *vm, uint64_t addr)
{
	bool in;

	pthread_mutex_lock(&vm->mig.lock);
	in = vm->mig.len && addr >= vm->mig.start && addr - vm->mig.start < vm->mig.len;
	pthread_mutex_unlock(&vm->mig.lock);
	return in;
}

int migrate_protect(struct vm *vm, uint64_t start, uint64_t len)
{
	if (!vm->mig.wp_supported || vm->mig.unsafe_no_wp)
		return -EOPNOTSUPP;
	return protect(vm, start, len);
}

int migrate_unprotect(struct vm *vm, uint64_t start, uint64_t len)
{
	return uffd_wp_range(vm->uffd, start, len, false);
}

int migrate_window_open(struct vm *vm, uint64_t start, uint64_t len)
{
	int ret;

	if (!vm->mig.wp_supported)
		return -EOPNOTSUPP;
	if (vm->mig.unsafe_no_wp)
		return 0;
	window_priority(len, true);
	pthread_mutex_lock(&vm->mig.lock);
	vm->mig.start = start;
	vm->mig.len = len;
	vm->mig.nr_waiting = 0;
	if (!vm->mig.first_open_ns)
		vm->mig.first_open_ns = vm_now_ns();
	pthread_mutex_unlock(&vm->mig.lock);
	ret = protect(vm, start, len);
	if (ret) {
		pthread_mutex_lock(&vm->mig.lock);
		vm->mig.len = 0;
		pthread_mutex_unlock(&vm->mig.lock);
		window_priority(len, false);
	}
	return ret;
}

/*
 * The new mapping replaced the protected one: close the window, wake the
 * writers, and record how long each waited.
 */
void migrate_window_close(struct vm *vm)
{
	struct uffdio_range range;
	uint64_t now;

	pthread_mutex_lock(&vm->mig.lock);
	range = (struct uffdio_range){ vm->mig.start, vm->mig.len };
	vm->mig.len = 0;
	pthread_mutex_unlock(&vm->mig.lock);
	ioctl(vm->uffd, UFFDIO_WAKE, &range);
	now = vm_now_ns();
	if (range.len)
		window_priority(range.len, false);
	pthread_mutex_lock(&vm->mig.lock);
	vm->mig.released_ns = now;
	for (unsigned int i = 0; i < vm->mig.nr_waiting; i++)
		record_stall(vm, now > vm->mig.waiting[i] ? now - vm->mig.waiting[i] : 0);
	vm->mig.nr_waiting = 0;
	pthread_mutex_unlock(&vm->mig.lock);
}

uint64_t vm_stall_percentile(struct vm *vm, double pct)
{
	uint64_t n, *copy, v;

	pthread_mutex_lock(&vm->mig.lock);
	n = vm->mig.nr_stalls < VM_STALL_SAMPLES ? vm->mig.nr_stalls : VM_STALL_SAMPLES;
	copy = n ? malloc(n * sizeof(*copy)) : NULL;
	if (copy)
		memcpy(copy, vm->mig.stall_ns, n * sizeof(*copy));
	pthread_mutex_unlock(&vm->mig.lock);
	if (!copy)
		return 0;
	qsort(copy, n, sizeof(*copy), cmp_u64);
	v = copy[(uint64_t)((double)(n - 1) * pct / 100.0)];
	free(copy);
	return v;
}

static void count_failure(struct vm *vm, int ret)
{
	if (ret == -EBUSY)
		vm->migstats.fail_busy++;
	else if (ret == -ENOENT)
		vm->migstats.fail_gone++;
	else
		vm->migstats.fail_other++;
}

/*
 * Tests only: keep the window open until a writer waits on it, or hold_us
 * passes. Waiting for the event rather than for a fixed time makes the
 * stall path run however slowly the guest runs (nested, emulated).
 */
static void hold_window(struct vm *vm)
{
	uint64_t end = vm_now_ns() + (uint64_t)vm->mig.hold_us * 1000;

	while (vm_now_ns() < end) {
		pthread_mutex_lock(&vm->mig.lock);
		bool waited = vm->mig.nr_waiting > 0;
		pthread_mutex_unlock(&vm->mig.lock);
		if (waited)
			break;
		usleep(100);
	}
}

/* mem_lock held. */
static int __migrate_page(struct vm *vm, struct vm_region *r, uint64_t idx,
			  uint64_t new_frame, uint64_t *old)
{
	uint8_t *hva = r->hva + (idx << MM_PAGE_SHIFT);
	struct mm_frame_info info;
	uint32_t from = r->backing[idx];
	int ret;

	if (from == NIL_FRAME)
		return -ENOENT;
	if (r->huge[idx / MM_PAGEBLOCK_PAGES] ||
	    (pool_frames_info(vm->pool, &from, 1, &info) == 0 && info.pins))
		return -EBUSY;
	ret = migrate_window_open(vm, (uintptr_t)hva, MM_PAGE_SIZE);
	if (ret)
		return ret;
	if (vm->mig.hold_us)
		hold_window(vm);
	memcpy(pool_frame_ptr(vm->pool, new_frame), pool_frame_ptr(vm->pool, from),
	       MM_PAGE_SIZE);
	ret = gmem_map(vm, hva, new_frame, MM_PAGE_SIZE);
	if (ret)
		gmem_map_back(vm, hva, &from, 1, ret);
	migrate_window_close(vm);
	if (ret)
		return ret;
	r->backing[idx] = (uint32_t)new_frame;
	vm->pool->gpa_of[new_frame] = vm->pool->gpa_of[from];
	vm->pool->gpa_of[from] = 0;
	vm->migstats.pages++;
	vm->migstats.bytes += MM_PAGE_SIZE;
	*old = from;
	return 0;
}

int vm_migrate_page(struct vm *vm, uint64_t gpa, uint64_t new_frame,
		    uint64_t *old)
{
	struct vm_region *r = gmem_region(vm, gpa, 1);
	int ret;

	if (!r || new_frame >= pool_frames(vm->pool))
		return -EINVAL;
	pthread_mutex_lock(&vm->mem_lock);
	ret = __migrate_page(vm, r, (gpa - r->gpa) >> MM_PAGE_SHIFT, new_frame, old);
	if (ret)
		count_failure(vm, ret);
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}

/*
 * The owner callback compaction and lumpy reclaim call for guest RAM: find
 * the guest page @old backs and move it live. The allocator frees @old.
 *
 * Who may migrate a VM's pages: any thread (the daemon's assembler, direct
 * compaction from any allocating thread, kcompactd, QMP, benchmarks), all
 * serialised by mem_lock. So the frame-to-page lookup and the check that
 * the page is still on @old happen under mem_lock, before any copy: a
 * migration of the same page by another thread in between leaves @old no
 * longer the page's frame, and this one then answers -ENOENT (the
 * allocator puts @new back and keeps @old where it is).
 */
static int ram_migrate(void *priv, uint64_t old, uint64_t new, unsigned int order)
{
	struct vm *vm = priv;
	struct vm_region *r;
	uint64_t idx, from;
	int ret;

	if (order)
		return -EBUSY;
	pthread_mutex_lock(&vm->mem_lock);
	r = __gmem_frame_page(vm, old, &idx);
	if (!r)
		ret = -ENOENT;
	else
		ret = __migrate_page(vm, r, idx, new, &from);
	if (ret)
		count_failure(vm, ret);
	pthread_mutex_unlock(&vm->mem_lock);
	return ret;
}

/*
 * Lumpy reclaim's callback: the page behind @frame goes to the swap file
 * when the VM may give it (swap.c decides, from its clock); a page it
 * keeps is moved out of the lump instead. Only 4 KiB frames: a 2 MiB
 * backing goes whole, by the VM's own clock.
 */
static int ram_reclaim(void *priv, uint64_t frame, unsigned int order)
{
	return order ? -EBUSY : swap_reclaim_frame(priv, frame);
}

const struct mm_owner_ops vm_ram_owner_ops = {
	.migrate = ram_migrate,
	.reclaim = ram_reclaim,
	.reclaim_writes = true,
};

static int pin_op(struct vm *vm, uint64_t gpa, bool pin)
{
	long frame = vm_gpa_to_frame(vm, gpa);
	struct vm_region *r = gmem_region(vm, gpa, 1);
	int ret;

	if (frame < 0)
		return (int)frame;
	/* a page of a 2 MiB backing pins the whole block */
	if (r->huge[((gpa - r->gpa) >> MM_PAGE_SHIFT) / MM_PAGEBLOCK_PAGES])
		frame = r->backing[((gpa - r->gpa) >> MM_PAGE_SHIFT) & ~511ULL];
	do {
		ret = pin ? pool_pin(vm->pool, frame) : pool_unpin(vm->pool, frame);
	} while (ret == -EAGAIN);
	return ret;
}

int vm_pin_page(struct vm *vm, uint64_t gpa)
{
	return pin_op(vm, gpa, true);
}

int vm_unpin_page(struct vm *vm, uint64_t gpa)
{
	return pin_op(vm, gpa, false);
}
