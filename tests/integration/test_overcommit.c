// SPDX-License-Identifier: GPL-2.0
/*
 * Overcommit: a guest with more RAM than its pool holds, running on
 * because cold 2 MiB ranges go to its swap file and come back on touch.
 * memloop writes and checks every page pass after pass, so every pass
 * swaps; a page that came back wrong, or a write lost while its range
 * went out, ends the guest with "lost write".
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/swap.h"

#define POOL_MIB	16
#define RAM_MIB		24

static uint64_t load(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * memloop (two vCPUs) in 24 MiB of RAM on a 16 MiB pool lent twice over,
 * until 4 MiB worth of pages came back from the swap file 3 times over
 * (bounded by count, not time). @fault: how first touches and swapped
 * ranges are backed (huge: a range out whole from one block frees a
 * pageblock and comes back into one).
 */
static void run_overcommitted(enum vm_fault_policy fault)
{
	struct pool *pool = test_pool(POOL_MIB);
	uint64_t want = 3 * ((RAM_MIB - POOL_MIB) << 20 >> 12);
	struct run_result res;
	struct vm_config cfg;
	char err[256], fdpath[64], link[256];
	struct vm *vm = NULL;
	ssize_t n;

	CU_ASSERT_FATAL(pool != NULL);
	pool->host.overcommit_pct = 200;
	test_config(&cfg, "swapper", payload("memloop"), RAM_MIB, 2);
	cfg.fault = fault;
	cfg.huge = fault != VM_FAULT_4K;
	cfg.huge_target = 100;
	snprintf(cfg.swap_dir, sizeof(cfg.swap_dir), "auto");
	CU_ASSERT_EQUAL_FATAL(swap_file_open(&cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	CU_ASSERT_FATAL(swap_enabled(vm));
	/* the file is the process's, unlinked: nobody else can open it by name */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", vm->swap.fd);
	n = readlink(fdpath, link, sizeof(link) - 1);
	CU_ASSERT(n > 0 && (link[n] = '\0', strstr(link, "(deleted)") != NULL));
	CU_ASSERT_EQUAL_FATAL(vm_start(vm), 0);
	for (int i = 0; i < 6000 && load(&vm->swap.in_pages) < want &&
	     vm_get_state(vm) == VM_RUNNING; i++) {
		usleep(100000);
		/* the pool never lends more than it holds */
		CU_ASSERT(vm_populated_pages(vm) <= (uint64_t)POOL_MIB << 20 >> 12);
	}
	fprintf(stderr, "\n  %s: %llu ranges out (%llu whole blocks), %llu pages out, %llu back "
		"(%llu ranges whole), %llu within 10 s, %llu reclaims found nothing\n",
		fault == VM_FAULT_4K ? "4k" : "huge",
		(unsigned long long)load(&vm->swap.out_ranges),
		(unsigned long long)load(&vm->swap.out_blocks),
		(unsigned long long)load(&vm->swap.out_pages),
		(unsigned long long)load(&vm->swap.in_pages),
		(unsigned long long)load(&vm->swap.in_ranges),
		(unsigned long long)load(&vm->swap.refaults),
		(unsigned long long)load(&vm->swap.reclaim_failed));
	CU_ASSERT(load(&vm->swap.in_pages) >= want);
	CU_ASSERT_EQUAL(load(&vm->swap.errors), 0);
	/* what is out plus what came back is what went out */
	CU_ASSERT_EQUAL(load(&vm->swap.out_pages),
			load(&vm->swap.in_pages) + load(&vm->swap.pages_now));
	if (fault != VM_FAULT_4K) {
		CU_ASSERT(load(&vm->swap.out_blocks) > 0);
		CU_ASSERT(load(&vm->swap.in_ranges) > 0);
	}
	CU_ASSERT_EQUAL(vm_get_state(vm), VM_RUNNING);
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	test_vm_finish(vm, &res);
	CU_ASSERT_EQUAL(res.state, VM_SHUTDOWN);
	CU_ASSERT(!console_has(&res, "lost write"));
	if (res.state != VM_SHUTDOWN || console_has(&res, "lost write"))
		fprintf(stderr, "%s\n%s", res.report, res.console.text);
	CU_ASSERT(pool_is_whole(pool));
	close(cfg.swap_fd);
	pool_close(pool);
}

static void test_swap_huge(void)
{
	run_overcommitted(VM_FAULT_HUGE);
}

static void test_swap_4k(void)
{
	run_overcommitted(VM_FAULT_4K);
}

/* Without overcommit the same guest does not fit: refused before it runs. */
static void test_no_overcommit_refused(void)
{
	struct pool *pool = test_pool(POOL_MIB);
	struct run_result res;
	struct vm_config cfg;
	struct vm *vm = NULL;
	char err[256];

	CU_ASSERT_FATAL(pool != NULL);
	test_config(&cfg, "toobig", payload("memloop"), RAM_MIB, 1);
	CU_ASSERT_EQUAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "larger than the pool lends"));
	pool->host.overcommit_pct = 200;
	CU_ASSERT_EQUAL(pool_admit(pool, 24 << 20, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(pool_admit(pool, 10 << 20, err, sizeof(err)), -ENOSPC);
	pool_unadmit(pool, 24 << 20);
	pool_close(pool);
}

int register_overcommit_suite(void)
{
	static const struct suite_test tests[] = {
		{ "admission lends the ratio, no more", test_no_overcommit_refused },
		{ "24 MiB memloop on a 16 MiB pool, 2 MiB swap", test_swap_huge },
		{ "24 MiB memloop on a 16 MiB pool, 4 KiB swap", test_swap_4k },
	};
	return SUITE("overcommit", tests);
}
