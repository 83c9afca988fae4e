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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/swap.h"

#define POOL_MIB	16
#define RAM_MIB		24

static char out_buf[1 << 16];

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

/* A VM's count at @path ("swap", "in_pages") in `gpmm frag NAME --json`; -1: no report. */
static long long vm_memory(const char *name, const char *group, const char *key)
{
	json_t *r = frag_json(name);
	json_t *m = json_object_get(json_array_get(json_object_get(r, "vms"), 0), "memory");
	long long v;

	if (group)
		m = json_object_get(m, group);
	v = json_is_integer(json_object_get(m, key)) ?
	    json_integer_value(json_object_get(m, key)) : -1;
	json_decref(r);
	return v;
}

/* memloop in VM @name said it touched all its RAM (bounded by count). */
static bool touched(const char *name)
{
	for (int i = 0; i < 1500; i++) {
		if (sh(NULL, 0, "grep -q 'MiB touched' %s/%s.con", test_run_dir(), name) == 0)
			return true;
		usleep(200000);
	}
	return false;
}

/* The process's swap file, seen from outside: an open descriptor of an unlinked file. */
static bool has_unlinked_swap(int pid)
{
	return sh(NULL, 0, "ls -l /proc/%d/fd | grep -q 'gpmm-swap.*(deleted)\\|/var/tmp/#.*(deleted)'",
		  pid) == 0;
}

/*
 * Two VM processes of 24 MiB on a 32 MiB pool service lent twice over (a
 * third is refused: 72 MiB would pass the 64 it may lend). Each process
 * has its own unlinked swap file; together they swap, no write is lost,
 * and one killed takes its swap file with it while the other runs on.
 */
static void test_service_overcommit(void)
{
	char ctl[128], pool[128], cmd[1024];
	const char *names[] = { "ocA", "ocB", "ocC" };
	int daemon, pid[3];
	long long in = 0;

	snprintf(ctl, sizeof(ctl), "%s/oc.sock", test_run_dir());
	snprintf(pool, sizeof(pool), "%s/oc-pool.sock", test_run_dir());
	snprintf(cmd, sizeof(cmd), "%s daemon --socket %s --pool-socket %s --pool 32M "
		 "--overcommit 2", gpmm_bin(), ctl, pool);
	daemon = spawn_bg("oc-daemon", cmd);
	CU_ASSERT_FATAL(daemon > 0 && log_says("oc-daemon", "lending the pool", 300));
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "%s run --host-pool=%s --kernel %s --ram %dM --name %s "
			 "--cpus 2 --console file:%s/%s.con", gpmm_bin(), pool, payload("memloop"),
			 RAM_MIB, names[i], test_run_dir(), names[i]);
		pid[i] = spawn_bg(names[i], cmd);
		CU_ASSERT(pid[i] > 0);
		if (i < 2)
			CU_ASSERT(touched(names[i]));
	}
	CU_ASSERT(log_says("ocC", "do not fit", 300));
	for (int i = 0; i < 1200 && in < 4096; i++) {
		usleep(250000);
		in = vm_memory("ocA", "swap", "in_pages") + vm_memory("ocB", "swap", "in_pages");
	}
	fprintf(stderr, "\n  pages back from swap: ocA %lld, ocB %lld\n",
		vm_memory("ocA", "swap", "in_pages"), vm_memory("ocB", "swap", "in_pages"));
	CU_ASSERT(in >= 4096);
	/* the one that got its RAM first gave some back for the other: its share is 12 MiB */
	for (int i = 0; i < 600 && vm_memory("ocA", "swap", "background_ranges") <= 0; i++)
		usleep(250000);
	CU_ASSERT(vm_memory("ocA", "swap", "background_ranges") > 0);
	CU_ASSERT_EQUAL(vm_memory("ocA", NULL, "promised_bytes"), RAM_MIB << 20);
	CU_ASSERT(has_unlinked_swap(pid[0]) && has_unlinked_swap(pid[1]));
	/* the service lends 64 MiB and promised 48 */
	{
		json_t *r = frag_json(ctl), *s = json_object_get(r, "pool_service");

		CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "lendable_bytes")), 64 << 20);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "lent_bytes")), 48 << 20);
		json_decref(r);
	}
	kill(pid[1], SIGKILL);
	in = vm_memory("ocA", "swap", "in_pages");
	for (int i = 0; i < 40; i++)
		usleep(250000);
	CU_ASSERT(vm_memory("ocA", "swap", "errors") == 0);
	CU_ASSERT(sh(NULL, 0, "grep -q 'lost write' %s/ocA.con %s/ocB.con", test_run_dir(),
		     test_run_dir()) != 0);
	CU_ASSERT_EQUAL(kill(pid[0], 0), 0);
	kill(pid[0], SIGTERM);
	sleep(1);
	kill(daemon, SIGTERM);
	sh(NULL, 0, "sleep 1; pkill -KILL -f 'oc-pool.sock' || true");
}

/*
 * `gpmm run` with a pool of its own, sandboxed as ever: --overcommit
 * lets 24 MiB of RAM on a 16 MiB pool, which the same VM without it is
 * refused; the report says what went out and came back.
 */
static void test_run_overcommit(void)
{
	char cmd[1024];
	long long in = 0;
	int pid;

	CU_ASSERT_NOT_EQUAL(sh(out_buf, sizeof(out_buf), "%s run --pool 16M --ram 24M --kernel %s "
			       "--console none 2>&1", gpmm_bin(), payload("memloop")), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out_buf, "--overcommit"));
	snprintf(cmd, sizeof(cmd), "%s run --pool 16M --overcommit 2 --ram 24M --cpus 2 --fault huge "
		 "--kernel %s --name ocrun --console file:%s/ocrun.con", gpmm_bin(),
		 payload("memloop"), test_run_dir());
	pid = spawn_bg("ocrun", cmd);
	CU_ASSERT_FATAL(pid > 0);
	for (int i = 0; i < 1200 && in < 4096; i++) {
		usleep(250000);
		in = vm_memory("ocrun", "swap", "in_pages");
	}
	CU_ASSERT(in >= 4096);
	CU_ASSERT(vm_memory("ocrun", "swap", "out_blocks") > 0);
	CU_ASSERT(vm_memory("ocrun", NULL, "used_bytes") <= 16 << 20);
	CU_ASSERT(has_unlinked_swap(pid));
	CU_ASSERT_EQUAL(sh(out_buf, sizeof(out_buf), "%s frag ocrun 2>&1", gpmm_bin()), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out_buf, "MiB swapped out; swap: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out_buf, "MiB promised of 32 it lends (overcommit 2.00)"));
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s destroy ocrun", gpmm_bin()), 0);
	CU_ASSERT(sh(NULL, 0, "grep -q 'lost write' %s/ocrun.con", test_run_dir()) != 0);
	waitpid(pid, NULL, WNOHANG);
}

int register_overcommit_suite(void)
{
	static const struct suite_test tests[] = {
		{ "admission lends the ratio, no more", test_no_overcommit_refused },
		{ "24 MiB memloop on a 16 MiB pool, 2 MiB swap", test_swap_huge },
		{ "24 MiB memloop on a 16 MiB pool, 4 KiB swap", test_swap_4k },
		{ "gpmm run --overcommit, sandboxed", test_run_overcommit },
		{ "VM processes on an overcommitted pool service", test_service_overcommit },
	};
	return SUITE("overcommit", tests);
}
