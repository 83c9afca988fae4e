// SPDX-License-Identifier: GPL-2.0
/*
 * Real KVM guests in this process: payloads run, exit codes propagate,
 * demand faults and prefault back the RAM from the pool, a page moved by
 * vm_remap_page is seen moved from inside the guest, and every fault case
 * ends the VM with a report while the pool stays whole.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guests/abi.h"
#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "vmm/memory/guest_mem.h"

static void test_hello(void)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "hello", payload("hello"), 16, 1);
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.state, VM_SHUTDOWN);
	CU_ASSERT_EQUAL(res.exit_code, 0);
	CU_ASSERT(console_has(&res, "hello from gpmm guest\n"));
	CU_ASSERT(res.stats.first_exit_ns > res.stats.create_ns);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

static void test_exit_code(void)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "exitcode", payload("exitcode"), 8, 2);
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_EXITCODE);
	pool_close(pool);
}

/* memtest touches one word per page above 2 MiB: all through userfaults. */
static void test_memtest_demand(void)
{
	struct pool *pool = test_pool(128);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "memtest", payload("memtest"), 32, 2);
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.exit_code, 0);
	CU_ASSERT(console_has(&res, "memtest: 30 MiB ok on 2 cpus"));
	CU_ASSERT(console_has(&res, "memtest cpu 1:"));
	/* every page came through a fault, up to 64 KiB of them at a time */
	CU_ASSERT(res.stats.demand_faults * GMEM_FAULT_AROUND_PAGES >= (30u << 8));
	CU_ASSERT(res.stats.demand_faults <= (32u << 8));
	CU_ASSERT(res.stats.populated_pages >= (30u << 8));
	CU_ASSERT(res.stats.populated_pages <= (32u << 8));
	CU_ASSERT_EQUAL(res.stats.huge_first, 0);	/* --fault 4k */
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * Huge first: a 2 MiB range is backed whole by its first fault, from a
 * block gpmm zeroes. VM a leaves memtest's patterns in every block it
 * had; VM b on the same pool gets those blocks again (the pool keeps its
 * memory, release 0: they are not fresh zero pages from the kernel), and
 * memtest's first pass checks that its fresh RAM reads zero.
 */
static void test_huge_first_zeroed(void)
{
	struct pool_host host = { .huge = true, .release_ms = 0 };
	struct pool *pool = NULL;
	struct vm_config cfg;
	struct run_result a, b;

	CU_ASSERT_EQUAL_FATAL(pool_open_host(64 << 20, true, &host, &pool), 0);
	test_config(&cfg, "a", payload("memtest"), 48, 1);
	cfg.fault = VM_FAULT_HUGE;
	cfg.huge = true;
	cfg.huge_target = 100;
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &a), 0);
	CU_ASSERT_EQUAL(a.exit_code, 0);
	CU_ASSERT(a.stats.huge_first >= 20);
	CU_ASSERT(a.stats.demand_faults < 64);	/* one a range, not one a 64 KiB */
	CU_ASSERT(pool_is_whole(pool));
	test_config(&cfg, "b", payload("memtest"), 48, 1);
	cfg.fault = VM_FAULT_HUGE;
	cfg.huge = true;
	cfg.huge_target = 100;
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &b), 0);
	CU_ASSERT_EQUAL(b.exit_code, 0);
	CU_ASSERT(console_has(&b, "memtest: 46 MiB ok on 1 cpus"));
	CU_ASSERT(b.stats.huge_first >= 20);
	/* most of b's blocks were a's: gpmm cleared them, not the kernel */
	CU_ASSERT(b.stats.huge_first_kernel_zeroed * 2 < b.stats.huge_first);
	if (b.exit_code)
		fprintf(stderr, "%s", b.console.text);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * --fault auto keeps free blocks for others: a guest that fills most of a
 * small pool gets whole blocks first, then 4 KiB pages once the free
 * blocks fall to the watermark, and runs to the end either way.
 */
static void test_huge_first_watermark(void)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "auto", payload("memtest"), 62, 1);
	cfg.fault = VM_FAULT_AUTO;
	cfg.huge = true;
	cfg.huge_target = 100;
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.exit_code, 0);
	CU_ASSERT(res.stats.huge_first >= 10);
	CU_ASSERT(res.stats.huge_first_fallback >= 1);
	CU_ASSERT(res.stats.huge_first + res.stats.huge_first_fallback <= 31);
	CU_ASSERT(console_has(&res, "memtest: 60 MiB ok on 1 cpus"));
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

static void test_memtest_prefault(void)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "prefault", payload("memtest"), 16, 1);
	cfg.prefault = true;
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.exit_code, 0);
	CU_ASSERT_EQUAL(res.stats.demand_faults, 0);
	CU_ASSERT_EQUAL(res.stats.populated_pages, 16u << 8);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

struct remap_ctx {
	bool write_marker;
	int remap_ret;
	long old_frame, new_frame, after;
	struct mm_frame_info old_info;
	int info_ret;
};

/*
 * Checkpoint 1 of the remap payload: the VM is stopped; move the page to a
 * new frame and leave a marker in the new frame only, which the guest can
 * see only if its page really is the new frame now.
 */
static int remap_hook(struct vm *vm, uint32_t n, void *opaque)
{
	struct remap_ctx *c = opaque;
	uint64_t marker = GPMM_REMAP_MARKER;

	if (n != GPMM_CHECKPOINT_REMAP)
		return 0;
	c->old_frame = vm_gpa_to_frame(vm, GPMM_REMAP_GPA);
	c->new_frame = mm_alloc(vm->pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
	if (c->old_frame < 0 || c->new_frame < 0)
		return 0;
	c->remap_ret = vm_remap_page(vm, GPMM_REMAP_GPA, c->new_frame);
	c->after = vm_gpa_to_frame(vm, GPMM_REMAP_GPA);
	c->info_ret = mm_frame_info(vm->pool->mm, c->old_frame, &c->old_info);
	if (c->write_marker)
		memcpy((uint8_t *)pool_frame_ptr(vm->pool, c->new_frame) +
		       GPMM_REMAP_MARKER_OFF, &marker, sizeof(marker));
	return 0;
}

static void run_remap(struct remap_ctx *c, struct run_result *res)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct vm *vm;
	char err[256];

	test_config(&cfg, "remap", payload("remap"), 8, 2);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, res, &vm, err, sizeof(err)), 0);
	vm->checkpoint = remap_hook;
	vm->checkpoint_opaque = c;
	CU_ASSERT_EQUAL(vm_start(vm), 0);
	test_vm_finish(vm, res);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

static void test_remap_seen_by_guest(void)
{
	struct remap_ctx c = { .write_marker = true };
	struct run_result res;

	run_remap(&c, &res);
	CU_ASSERT_EQUAL(c.remap_ret, 0);
	CU_ASSERT(c.old_frame >= 0);
	CU_ASSERT(c.new_frame >= 0 && c.new_frame != c.old_frame);
	CU_ASSERT_EQUAL(c.after, c.new_frame);
	CU_ASSERT_EQUAL(c.info_ret, 0);
	CU_ASSERT_NOT_EQUAL(c.old_info.state, MM_FRAME_ALLOC);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_OK);
}

/* Without the marker the guest must notice: the check can fail. */
static void test_remap_check_can_fail(void)
{
	struct remap_ctx c = { .write_marker = false };
	struct run_result res;

	run_remap(&c, &res);
	CU_ASSERT_EQUAL(c.remap_ret, 0);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_REMAP_MARKER);
}

struct two_vm_arg {
	struct pool *pool;
	struct vm_config cfg;
	struct run_result res;
	int ret;
};

static void *run_thread(void *p)
{
	struct two_vm_arg *a = p;

	a->ret = run_payload(a->pool, &a->cfg, &a->res);
	return NULL;
}

static void test_two_vms_one_pool(void)
{
	struct pool *pool = test_pool(64);
	struct two_vm_arg a = { .pool = pool }, b = { .pool = pool };
	pthread_t ta, tb;

	test_config(&a.cfg, "a", payload("memtest"), 24, 2);
	test_config(&b.cfg, "b", payload("memtest"), 24, 1);
	pthread_create(&ta, NULL, run_thread, &a);
	pthread_create(&tb, NULL, run_thread, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CU_ASSERT_EQUAL(a.ret, 0);
	CU_ASSERT_EQUAL(b.ret, 0);
	CU_ASSERT_EQUAL(a.res.exit_code, 0);
	CU_ASSERT_EQUAL(b.res.exit_code, 0);
	CU_ASSERT(console_has(&a.res, "ok on 2 cpus"));
	CU_ASSERT(console_has(&b.res, "ok on 1 cpus"));
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

static void expect_create_error(struct pool *pool, struct vm_config *cfg,
				int want, const char *text)
{
	struct run_result res;
	char err[512] = "";
	struct vm *vm = NULL;
	int ret = test_vm_create(pool, cfg, &res, &vm, err, sizeof(err));

	CU_ASSERT_EQUAL(ret, want);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, text));
	if (!ret)
		vm_destroy(vm);
}

static void test_bad_configs(void)
{
	struct pool *pool = test_pool(32);
	struct vm_config cfg;
	char big[] = "/tmp/gpmm-big-XXXXXX";
	int fd = mkstemp(big);

	test_config(&cfg, "x", "/nonexistent/kernel.bin", 8, 1);
	expect_create_error(pool, &cfg, -ENOENT, "/nonexistent/kernel.bin");
	test_config(&cfg, "x", "/tmp", 8, 1);
	expect_create_error(pool, &cfg, -EINVAL, "not a non-empty regular file");
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, 8 << 20), 0);
	test_config(&cfg, "x", big, 8, 1);
	expect_create_error(pool, &cfg, -EFBIG, "fit above 1 MiB");
	test_config(&cfg, "x", payload("hello"), 64, 1);
	expect_create_error(pool, &cfg, -E2BIG, "larger than the pool");
	test_config(&cfg, "x", payload("hello"), 8, 0);
	expect_create_error(pool, &cfg, -EINVAL, "cpus");
	test_config(&cfg, "x", payload("hello"), 3, 1);
	expect_create_error(pool, &cfg, -EINVAL, "multiple of 2 MiB");
	close(fd);
	unlink(big);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

static void test_unmapped_mmio_stops_vm(void)
{
	struct pool *pool = test_pool(32);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "mmio", payload("mmio"), 8, 1);
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.state, VM_FAILED);
	CU_ASSERT_EQUAL(res.exit_code, VM_FAIL_EXIT_CODE);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.report, "unmapped MMIO address 0xc0000000"));
	CU_ASSERT_PTR_NOT_NULL(strstr(res.report, "rip "));
	CU_ASSERT(!console_has(&res, "still alive"));
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

static void test_triple_fault_stops_vm(void)
{
	struct pool *pool = test_pool(32);
	struct vm_config cfg;
	struct run_result res;

	test_config(&cfg, "triple", payload("triple"), 8, 2);
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.state, VM_FAILED);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.report, "triple fault"));
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* A vCPU that never exits on its own still stops; pause/resume work on it. */
static void test_spinning_vcpu_stops(void)
{
	struct pool *pool = test_pool(32);
	struct vm_config cfg;
	struct run_result res;
	struct vm *vm;
	char err[256];
	long frame = -1;

	test_config(&cfg, "spin", payload("spin"), 8, 2);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm_start(vm), 0);
	for (int i = 0; i < 200 && !console_has(&res, "spinning"); i++)
		usleep(10000);
	CU_ASSERT(console_has(&res, "spinning"));
	/* moving a page under a running guest is refused here */
	frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, 1);
	CU_ASSERT_EQUAL(vm_remap_page(vm, 0x100000, frame), -EBUSY);
	CU_ASSERT_EQUAL(vm_pause(vm, NULL), 0);
	CU_ASSERT_EQUAL(vm_get_state(vm), VM_PAUSED);
	CU_ASSERT_EQUAL(vm_remap_page(vm, 0x100000, frame), 0);
	CU_ASSERT_EQUAL(vm_resume(vm, NULL), 0);
	CU_ASSERT_EQUAL(vm_get_state(vm), VM_RUNNING);
	CU_ASSERT_EQUAL(vm_resume(vm, NULL), -EALREADY);
	usleep(20000);
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	test_vm_finish(vm, &res);
	CU_ASSERT_EQUAL(res.state, VM_SHUTDOWN);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * The pool runs dry while the guest runs: the VM stops with a clear
 * message, the pool stays consistent, and another VM then runs fine.
 */
static void test_pool_exhaustion(void)
{
	struct pool *pool = test_pool(32);
	struct vm_config cfg;
	struct run_result res;
	long hog[8];

	/* leave ~10 MiB: enough to boot, not for 30 MiB of memtest */
	for (int i = 0; i < 8; i++)
		hog[i] = mm_alloc(pool->mm, NULL, 9, MIGRATE_UNMOVABLE, 99);
	for (int i = 0; i < 8; i++)
		CU_ASSERT(hog[i] >= 0);
	test_config(&cfg, "hungry", payload("memtest"), 32, 1);
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.state, VM_FAILED);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.report, "the pool is exhausted"));
	for (int i = 0; i < 8; i++)
		if (hog[i] >= 0)
			CU_ASSERT_EQUAL(mm_free(pool->mm, NULL, hog[i]), 0);
	CU_ASSERT(pool_is_whole(pool));
	test_config(&cfg, "after", payload("hello"), 8, 1);
	CU_ASSERT_EQUAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.exit_code, 0);
	pool_close(pool);
}

/* Past 3 GiB the RAM continues above 4 GiB; the hole between is MMIO. */
static void test_ram_above_pci_hole(void)
{
	struct pool *pool = test_pool(4608);
	struct vm_config cfg;
	struct run_result res;
	struct vm *vm;
	char err[256];
	uint64_t v = 0x1234;

	test_config(&cfg, "high", payload("mmio"), 4096 + 512, 1);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm->nr_regions, 2);
	CU_ASSERT_EQUAL(vm->regions[0].size, VM_PCI_HOLE_START);
	CU_ASSERT_EQUAL(vm->regions[1].gpa, VM_HIGH_RAM_START);
	CU_ASSERT_EQUAL(vm->regions[1].size, (4096 + 512 - 3072) * (1ULL << 20));
	CU_ASSERT_PTR_NULL(vm_guest_ptr(vm, GPMM_MMIO_GPA, 4));
	CU_ASSERT_PTR_NULL(vm_guest_ptr(vm, VM_HIGH_RAM_START - 4, 8));
	CU_ASSERT_EQUAL(vm_write_guest(vm, VM_HIGH_RAM_START + (1 << 20), &v, 8), 0);
	CU_ASSERT(vm_gpa_to_frame(vm, VM_HIGH_RAM_START + (1 << 20)) >= 0);
	CU_ASSERT_EQUAL(vm_start(vm), 0);
	test_vm_finish(vm, &res);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.report, "unmapped MMIO address 0xc0000000"));
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

int register_vm_suite(void)
{
	static const struct suite_test tests[] = {
		{ "hello", test_hello },
		{ "exit code", test_exit_code },
		{ "memtest, demand faults", test_memtest_demand },
		{ "memtest, prefault", test_memtest_prefault },
		{ "huge first: fresh RAM reads zero", test_huge_first_zeroed },
		{ "huge first: 4 KiB under the watermark", test_huge_first_watermark },
		{ "remap seen by guest", test_remap_seen_by_guest },
		{ "remap check can fail", test_remap_check_can_fail },
		{ "two VMs, one pool", test_two_vms_one_pool },
		{ "bad configs", test_bad_configs },
		{ "unmapped MMIO stops VM", test_unmapped_mmio_stops_vm },
		{ "triple fault stops VM", test_triple_fault_stops_vm },
		{ "spinning vCPU stops", test_spinning_vcpu_stops },
		{ "pool exhaustion", test_pool_exhaustion },
		{ "RAM above the PCI hole", test_ram_above_pci_hole },
	};
	return SUITE("vm", tests);
}
