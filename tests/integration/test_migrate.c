// SPDX-License-Identifier: GPL-2.0
/*
 * Live migration under a guest that never stops writing (memloop): pages
 * moved one by one, by compaction through the owner callback, and whole
 * 2 MiB ranges assembled onto one block; the guest checks every word it
 * wrote and exits with GPMM_EXIT_FAIL on the first lost write.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guests/abi.h"
#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/page_move.h"

static struct vm *start_memloop_fault(struct pool *pool, struct run_result *res,
				      unsigned int ram_mib, unsigned int cpus,
				      enum vm_fault_policy fault)
{
	struct vm_config cfg;
	struct vm *vm;
	char err[256];

	test_config(&cfg, "memloop", payload("memloop"), ram_mib, cpus);
	cfg.fault = fault;
	cfg.huge = fault != VM_FAULT_4K;	/* huge-first makes 2 MiB backings */
	cfg.huge_target = 100;
	if (test_vm_create(pool, &cfg, res, &vm, err, sizeof(err)) || vm_start(vm))
		return NULL;
	for (int i = 0; i < 3000 && !console_has(res, "MiB touched"); i++)
		usleep(10000);
	CU_ASSERT(console_has(res, "MiB touched"));
	return vm;
}

static struct vm *start_memloop(struct pool *pool, struct run_result *res,
				unsigned int ram_mib, unsigned int cpus)
{
	return start_memloop_fault(pool, res, ram_mib, cpus, VM_FAULT_4K);
}

static void stop_and_check(struct vm *vm, struct run_result *res)
{
	CU_ASSERT_EQUAL(vm_get_state(vm), VM_RUNNING);
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	test_vm_finish(vm, res);
	CU_ASSERT_EQUAL(res->state, VM_SHUTDOWN);
	CU_ASSERT_EQUAL(res->exit_code, 0);
	CU_ASSERT(!console_has(res, "lost write"));
	if (console_has(res, "lost write"))
		fprintf(stderr, "%s", res->console.text);
}

/*
 * 10,000 single-page migrations while two vCPUs write everywhere. The
 * guest's 512 pages are small enough that its writers often hit a page
 * while it is protected: the stall path is exercised, not just the copy.
 */
static void test_migrate_pages_live(void)
{
	struct pool *pool = test_pool(64);
	struct run_result res;
	uint64_t seed = 42, moved = 0;
	struct vm *vm = start_memloop(pool, &res, 4, 2);

	CU_ASSERT_FATAL(vm != NULL);
	CU_ASSERT_FATAL(vm->mig.wp_supported);
	while (moved < 10000 && vm_get_state(vm) == VM_RUNNING) {
		/*
		 * every 25th window stays open until a write waits on it (20 ms
		 * at most): the stall path runs, however slow the guest is
		 */
		vm->mig.hold_us = moved % 25 ? 0 : 20000;
		uint64_t page, old;
		long frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		page = 0x200000 + ((seed >> 33) % 0x200000 & ~4095ULL);
		CU_ASSERT_FATAL(frame >= 0);
		if (vm_migrate_page(vm, page, frame, &old) == 0) {
			CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, old), 0);
			moved++;
		} else {
			CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, frame), 0);
		}
	}
	CU_ASSERT_EQUAL(moved, 10000);
	CU_ASSERT_EQUAL(vm->migstats.pages, 10000);
	CU_ASSERT(vm->mig.nr_stalls >= 20);
	if (vm->mig.nr_stalls < 20)
		fprintf(stderr, "stalls: %llu\n", (unsigned long long)vm->mig.nr_stalls);
	stop_and_check(vm, &res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * The control: copy + remap without write-protect loses writes, and the
 * guest catches it. Proves the test above can fail.
 */
static void test_copy_remap_loses_writes(void)
{
	struct pool *pool = test_pool(64);
	struct run_result res;
	uint64_t seed = 7;
	struct vm *vm = start_memloop(pool, &res, 4, 2);

	CU_ASSERT_FATAL(vm != NULL);
	vm->mig.unsafe_no_wp = true;
	for (int i = 0; i < 200000 && vm_get_state(vm) == VM_RUNNING; i++) {
		long frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
		uint64_t old, page;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		page = 0x200000 + ((seed >> 33) % 0x200000 & ~4095ULL);
		if (vm_migrate_page(vm, page, frame, &old) == 0)
			frame = (long)old;
		CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, (uint64_t)frame), 0);
	}
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	test_vm_finish(vm, &res);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_FAIL);
	CU_ASSERT(console_has(&res, "lost write"));
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* Compaction moves guest pages through the VM's owner callback. */
static void test_compaction_moves_guest_pages(void)
{
	struct pool *pool = test_pool(32);
	struct run_result res;
	struct vm *vm = start_memloop(pool, &res, 12, 1);
	long hog[64];
	int n = 0;

	CU_ASSERT_FATAL(vm != NULL);
	/* punch holes below the guest so compaction has somewhere to go */
	for (int i = 0; i < 64; i++)
		hog[n++] = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, MM_NO_OWNER);
	for (int i = 0; i < n; i += 2)
		CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, hog[i]), 0);
	for (int round = 0; round < 3; round++)
		mm_compact_all(pool->mm);
	CU_ASSERT(vm->migstats.pages > 0);
	stop_and_check(vm, &res);
	for (int i = 1; i < n; i += 2)
		CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, hog[i]), 0);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* Every 2 MiB range assembled live, then checked by the kernel's smaps. */
static void test_assemble_ranges_live(void)
{
	struct pool *pool = test_pool(64);
	struct run_result res;
	struct vm *vm = start_memloop(pool, &res, 10, 2);
	int done = 0;

	CU_ASSERT_FATAL(vm != NULL);
	for (uint64_t gpa = 0x200000; gpa < (10 << 20); gpa += 0x200000)
		done += vm_assemble_range(vm, gpa) == 0;
	CU_ASSERT_EQUAL(done, 4);
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 0x200000), -EALREADY);
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 0x201000), -EINVAL);
	/* the guest's backing of a range is one aligned block, in order */
	for (uint64_t i = 0; i < 512; i++)
		CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x400000 + i * 4096),
				vm_gpa_to_frame(vm, 0x400000) + (long)i);
	CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x400000) % 512, 0);
	/* the kernel's account (this process's smaps) against the bookkeeping */
	CU_ASSERT_EQUAL(smaps_pmd_kb(getpid()) * 1024, (long long)vm_huge_bytes(vm));
	CU_ASSERT_EQUAL(vm_block_bytes(vm), 4ULL << 21);
	usleep(300000);	/* the guest keeps writing over the new backings */
	/* back to 4 KiB, then a single page moves on its own */
	CU_ASSERT_EQUAL(vm_split_range(vm, 0x400000), 0);
	CU_ASSERT_EQUAL(vm_split_range(vm, 0x400000), -EINVAL);
	{
		long frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
		uint64_t old;

		CU_ASSERT_EQUAL(vm_migrate_page(vm, 0x400000 + 4096 * 7, frame, &old), 0);
		CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, old), 0);
	}
	stop_and_check(vm, &res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * Ranges backed whole at first touch are what an assembly makes: one
 * aligned block, in order, one PMD by the kernel's count; and they stay
 * movable: split back to 4 KiB, a page of one moves on its own, while the
 * guest writes everywhere and checks every word.
 */
static void test_huge_first_split_migrate(void)
{
	struct pool *pool = test_pool(64);
	struct run_result res;
	struct vm *vm = start_memloop_fault(pool, &res, 10, 2, VM_FAULT_HUGE);
	long frame;
	uint64_t old;

	CU_ASSERT_FATAL(vm != NULL);
	CU_ASSERT(vm->stats.huge_first >= 4);
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 0x400000), -EALREADY);
	CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x400000) % 512, 0);
	for (uint64_t i = 0; i < 512; i++)
		CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x400000 + i * 4096),
				vm_gpa_to_frame(vm, 0x400000) + (long)i);
	CU_ASSERT_EQUAL(smaps_pmd_kb(getpid()) * 1024, (long long)vm_huge_bytes(vm));
	CU_ASSERT_EQUAL(vm_split_range(vm, 0x400000), 0);
	frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
	CU_ASSERT_FATAL(frame >= 0);
	CU_ASSERT_EQUAL(vm_migrate_page(vm, 0x400000 + 4096 * 9, frame, &old), 0);
	CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x400000 + 4096 * 9), frame);
	CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, old), 0);
	usleep(300000);	/* the guest keeps writing and checking */
	stop_and_check(vm, &res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* A pinned page (a ring a device uses) stays where it is. */
static void test_pinned_page_stays(void)
{
	struct pool *pool = test_pool(32);
	struct run_result res;
	struct vm *vm = start_memloop(pool, &res, 8, 1);
	long before, frame;
	uint64_t old;

	CU_ASSERT_FATAL(vm != NULL);
	before = vm_gpa_to_frame(vm, 0x300000);
	CU_ASSERT_EQUAL(vm_pin_page(vm, 0x300000), 0);
	frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
	CU_ASSERT_EQUAL(vm_migrate_page(vm, 0x300000, frame, &old), -EBUSY);
	CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, frame), 0);
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 0x200000), -EBUSY);
	mm_compact_all(pool->mm);
	CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x300000), before);
	CU_ASSERT_EQUAL(vm_unpin_page(vm, 0x300000), 0);
	CU_ASSERT_EQUAL(vm_unpin_page(vm, 0x300000), -EINVAL);
	/* pins still held when the VM ends die with it: the frame comes back */
	CU_ASSERT_EQUAL(vm_pin_page(vm, 0x300000), 0);
	CU_ASSERT_EQUAL(vm_pin_page(vm, 0x300000), 0);
	stop_and_check(vm, &res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * Every frame of guest RAM comes through the VM's one per-thread list,
 * used under mem_lock: no list belongs to a vCPU (the fault thread once
 * allocated through each vCPU's list, which the vCPU freed at its exit
 * while the fault thread could still be using it). So once the guest has
 * touched its RAM, every frame cached on any list of the pool is on the
 * VM's list.
 */
static void test_one_list_per_vm(void)
{
	struct pool *pool = test_pool(64);
	struct run_result res;
	struct vm *vm = start_memloop(pool, &res, 8, 2);
	struct mm_stats st;

	CU_ASSERT_FATAL(vm != NULL);
	CU_ASSERT_EQUAL_FATAL(mm_stats(pool->mm, &st), 0);
	CU_ASSERT(mm_pcp_count(vm->mem_pcp) > 0);
	CU_ASSERT_EQUAL(st.pcp_pages, mm_pcp_count(vm->mem_pcp));
	stop_and_check(vm, &res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

struct stale_migrate {
	struct vm *vm;
	uint64_t old, new;
	int ret;
};

/* The compactor's side: the owner callback, once the window is open. */
static void *stale_migrate_fn(void *arg)
{
	struct stale_migrate *m = arg;

	for (int i = 0; i < 100000; i++) {
		pthread_mutex_lock(&m->vm->mig.lock);
		bool open = m->vm->mig.len != 0;
		pthread_mutex_unlock(&m->vm->mig.lock);
		if (open)
			break;
		usleep(100);
	}
	m->ret = vm_ram_owner_ops.migrate(m->vm, m->old, m->new, 0);
	return NULL;
}

/*
 * Two threads migrating one VM: while a direct migration holds page P's
 * window open (P moving from frame A to B), compaction asks the owner to
 * move A to N. When the direct one is done A backs nothing, so the owner
 * must answer -ENOENT and leave P on B. (It once read A's page without
 * the VM's lock, then moved P from B to N and answered -EIO, and the
 * allocator freed N under the guest.)
 */
static void test_two_migrators(void)
{
	struct pool *pool = test_pool(32);
	struct run_result res;
	struct vm_config cfg;
	struct stale_migrate m = { 0 };
	struct vm *vm;
	pthread_t t;
	char err[256];
	long a, b;
	uint64_t old;

	test_config(&cfg, "two", payload("spin"), 8, 1);
	cfg.prefault = true;
	CU_ASSERT_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(vm_start(vm) == 0);
	a = vm_gpa_to_frame(vm, 0x300000);
	b = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
	m = (struct stale_migrate){ vm, (uint64_t)a,
		(uint64_t)mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner), 1 };
	CU_ASSERT_FATAL(a >= 0 && b >= 0 && (long)m.new >= 0);
	vm->mig.hold_us = 1000000;	/* nothing writes: held the whole second */
	CU_ASSERT_FATAL(pthread_create(&t, NULL, stale_migrate_fn, &m) == 0);
	CU_ASSERT_EQUAL(vm_migrate_page(vm, 0x300000, (uint64_t)b, &old), 0);
	vm->mig.hold_us = 0;
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(old, (uint64_t)a);
	CU_ASSERT_EQUAL(m.ret, -ENOENT);
	CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, 0x300000), b);
	CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, old), 0);
	CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, m.new), 0);
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	test_vm_finish(vm, &res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * The pool's host memory follows use. A memloop guest touches its RAM,
 * then ends: the pool's RSS (the kernel's count: the memfd's blocks) must
 * fall by >= 90% of what the VM freed (the allocator's count) within 10 s,
 * looked at 100 times. The control keeps its memory (release 0): the
 * same run must not see it fall, so the fall is page reporting's doing.
 */
static int64_t rss_fall(unsigned int release_ms, int64_t *freed, double *secs)
{
	struct pool_host host = { .huge = true, .release_ms = release_ms };
	struct pool *pool = NULL;
	struct run_result res;
	struct mm_stats st;
	int64_t rss0, rss = -1, alloc0;
	struct vm *vm;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(pool_open_host(64 << 20, true, &host, &pool), 0);
	vm = start_memloop(pool, &res, 24, 1);
	CU_ASSERT_FATAL(vm != NULL);
	CU_ASSERT_EQUAL_FATAL(mm_stats(pool->mm, &st), 0);
	alloc0 = (int64_t)(st.allocated_pages[MIGRATE_MOVABLE] +
			   st.allocated_pages[MIGRATE_UNMOVABLE] +
			   st.allocated_pages[MIGRATE_RECLAIMABLE]) << MM_PAGE_SHIFT;
	rss0 = mm_pool_host_bytes(pool->mm);
	CU_ASSERT(rss0 >= alloc0);
	stop_and_check(vm, &res);
	mm_drain_all(pool->mm);
	CU_ASSERT_EQUAL_FATAL(mm_stats(pool->mm, &st), 0);
	*freed = alloc0 - (int64_t)((st.allocated_pages[MIGRATE_MOVABLE] +
				      st.allocated_pages[MIGRATE_UNMOVABLE] +
				      st.allocated_pages[MIGRATE_RECLAIMABLE]) << MM_PAGE_SHIFT);
	CU_ASSERT(*freed >= (22 << 20));	/* the guest's RAM was touched */
	t0 = vm_now_ns();
	for (int i = 0; i < 100; i++) {
		rss = mm_pool_host_bytes(pool->mm);
		if (rss0 - rss >= *freed * 9 / 10)
			break;
		usleep(100000);
	}
	*secs = (vm_now_ns() - t0) / 1e9;
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
	return rss0 - rss;
}

static void test_pool_gives_memory_back(void)
{
	int64_t freed, fell, kept_freed, kept_fell;
	double secs, kept_secs;

	fell = rss_fall(1000, &freed, &secs);
	kept_fell = rss_fall(0, &kept_freed, &kept_secs);
	fprintf(stderr, "\n  VM freed %.1f MiB; pool RSS fell %.1f MiB in %.1f s "
		"(release 0: fell %.1f MiB in %.1f s)\n", freed / 1048576.0, fell / 1048576.0,
		secs, kept_fell / 1048576.0, kept_secs);
	CU_ASSERT(fell >= freed * 9 / 10);
	CU_ASSERT(secs <= 10.5);
	CU_ASSERT_EQUAL(kept_fell, 0);
}

int register_migrate_suite(void)
{
	static const struct suite_test tests[] = {
		{ "10,000 live page migrations", test_migrate_pages_live },
		{ "copy + remap alone loses writes", test_copy_remap_loses_writes },
		{ "compaction moves guest pages", test_compaction_moves_guest_pages },
		{ "assemble 2 MiB ranges live", test_assemble_ranges_live },
		{ "huge-first ranges split and migrate live", test_huge_first_split_migrate },
		{ "pinned page stays", test_pinned_page_stays },
		{ "two threads migrate one VM", test_two_migrators },
		{ "one per-thread list per VM", test_one_list_per_vm },
		{ "a VM's end gives its memory back to the host", test_pool_gives_memory_back },
	};
	return SUITE("migrate", tests);
}
