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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guests/abi.h"
#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/swap.h"

#define POOL_MIB	16
#define RAM_MIB		24
#define HOTCOLD_RAM_MIB	48

static char out_buf[1 << 16];

static uint64_t load(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * A guest @name in @ram_mib with @cpus that swaps (its file opened as
 * `gpmm run` opens it), @fault backing its first touches and swapped ranges.
 */
static int swapper_config(struct vm_config *cfg, const char *name, unsigned int ram_mib,
			  unsigned int cpus, enum vm_fault_policy fault)
{
	char err[256];

	test_config(cfg, name, payload(name), ram_mib, cpus);
	cfg->fault = fault;
	cfg->huge = fault != VM_FAULT_4K;
	cfg->huge_target = 100;
	snprintf(cfg->swap_dir, sizeof(cfg->swap_dir), "auto");
	return swap_file_open(cfg, err, sizeof(err));
}

/* Stop a guest that checks its memory: it lost nothing, and the pool gets every frame back. */
static void stop_and_check(struct vm *vm, struct run_result *res, struct pool *pool)
{
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	test_vm_finish(vm, res);
	CU_ASSERT_EQUAL(res->state, VM_SHUTDOWN);
	CU_ASSERT(!console_has(res, "lost write"));
	if (res->state != VM_SHUTDOWN || console_has(res, "lost write"))
		fprintf(stderr, "%s\n%s", res->report, res->console.text);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
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
	CU_ASSERT_EQUAL_FATAL(swapper_config(&cfg, "memloop", RAM_MIB, 2, fault), 0);
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
	stop_and_check(vm, &res, pool);
}

static void test_swap_huge(void)
{
	run_overcommitted(VM_FAULT_HUGE);
}

static void test_swap_4k(void)
{
	run_overcommitted(VM_FAULT_4K);
}

/* Wait (bounded by count) for @needle on the console of a running VM; the pool bound holds. */
static bool wait_console(struct vm *vm, struct run_result *res, const char *needle)
{
	for (int i = 0; i < 6000 && vm_get_state(vm) == VM_RUNNING; i++) {
		if (console_has(res, needle))
			return true;
		usleep(100000);
		CU_ASSERT(vm_populated_pages(vm) <= vm->pool->size >> MM_PAGE_SHIFT);
	}
	return console_has(res, needle);
}

/* The reclaim counts when hotcold reached its checkpoint, before it reads its cold set. */
struct hotcold_seen {
	uint64_t out, zero, back, armed, hits, now;
	bool reached;
};

static int hotcold_hook(struct vm *vm, uint32_t n, void *opaque)
{
	struct hotcold_seen *s = opaque;

	if (n != GPMM_CHECKPOINT_HOTCOLD)
		return -EINVAL;
	*s = (struct hotcold_seen){
		.out = load(&vm->swap.out_pages), .zero = load(&vm->swap.zero_pages),
		.back = load(&vm->swap.refaults), .armed = load(&vm->swap.armed),
		.hits = load(&vm->swap.sample_hits), .now = load(&vm->swap.pages_now),
		.reached = true,
	};
	return 0;
}

/*
 * hotcold (one vCPU) in 48 MiB on @pool lent three times over, with @hook
 * at its checkpoint, until it has checked its cold set; still running.
 */
static struct vm *hotcold_run(struct pool *pool, enum vm_fault_policy fault,
			      vm_checkpoint_fn hook, void *opaque, struct run_result *res)
{
	struct vm_config cfg;
	struct vm *vm = NULL;
	char err[256];

	CU_ASSERT_FATAL(pool != NULL);
	pool->host.overcommit_pct = 300;
	CU_ASSERT_EQUAL_FATAL(swapper_config(&cfg, "hotcold", HOTCOLD_RAM_MIB, 1, fault), 0);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, res, &vm, err, sizeof(err)), 0);
	vm->checkpoint = hook;
	vm->checkpoint_opaque = opaque;
	CU_ASSERT_EQUAL_FATAL(vm_start(vm), 0);
	CU_ASSERT(wait_console(vm, res, "hotcold: cold set checked"));
	return vm;
}

/*
 * The clock sees writes: hotcold (a hot eighth of RAM rewritten and
 * checked pass after pass after the rest was written once, one page in
 * eight of it only read) in 48 MiB on a 16 MiB pool lent three times over. The
 * hand write-protects the ranges it passes; the hot set's writes keep it
 * in, the cold set goes out (its read-only pages as holes, no write), and
 * by the checkpoint at most one page in ten of those that went out came
 * back within 10 s (reclaimed wrongly). Then the guest reads its cold set
 * back and checks it: nothing lost. @fault: how ranges are backed.
 */
static void run_hot_cold(enum vm_fault_policy fault)
{
	struct pool *pool = test_pool(POOL_MIB);
	struct hotcold_seen seen = { 0 };
	struct run_result res;
	struct vm *vm = hotcold_run(pool, fault, hotcold_hook, &seen, &res);

	fprintf(stderr, "\n  hotcold %s: %llu pages out (%llu zero), %llu out at the checkpoint, "
		"%llu back within 10 s (%.1f%%); %llu ranges armed, %llu written before the "
		"hand came back\n", fault == VM_FAULT_4K ? "4k" : "huge",
		(unsigned long long)seen.out, (unsigned long long)seen.zero,
		(unsigned long long)seen.now, (unsigned long long)seen.back,
		seen.out ? 100.0 * (double)seen.back / (double)seen.out : 0.0,
		(unsigned long long)seen.armed, (unsigned long long)seen.hits);
	CU_ASSERT(seen.reached);
	/* 46 MiB written or read on a 16 MiB pool: 28 MiB at least is out */
	CU_ASSERT(seen.now >= 28 << 20 >> 12);
	CU_ASSERT(seen.zero > 0);
	/*
	 * armed, not necessarily found written: the hot set is armed while
	 * the cold one streams in, when the guest does not write it (counted,
	 * printed above); what the arming buys is the rate below
	 */
	CU_ASSERT(seen.armed > 0);
	CU_ASSERT(seen.back * 10 <= seen.out);
	CU_ASSERT_EQUAL(load(&vm->swap.errors), 0);
	CU_ASSERT_EQUAL(vm_get_state(vm), VM_RUNNING);
	stop_and_check(vm, &res, pool);
}

static void test_hot_cold_huge(void)
{
	run_hot_cold(VM_FAULT_HUGE);
}

static void test_hot_cold_4k(void)
{
	run_hot_cold(VM_FAULT_4K);
}

/* What taking every 2 MiB block the pool could make did, in one run. */
#define LUMPY_TAKE_MAX	40

struct lumpy_take {
	long blocks[LUMPY_TAKE_MAX];
	unsigned int nr, nr_alone;	/* taken in all; before lumpy reclaim was allowed */
	uint64_t free_before;		/* free pageblocks when it began */
	uint64_t lumpy_blocks, compact_blocks;	/* pool counters: who made blocks */
	uint64_t pool_reclaimed, pool_migrated;	/* pool counters: pages of the lumps */
	uint64_t vm_lumpy, vm_declined;		/* the VM's own bookkeeping */
	bool reached;
};

static void take_blocks(struct pool *pool, struct lumpy_take *t)
{
	while (t->nr < LUMPY_TAKE_MAX) {
		bool host_huge;
		long block = pool_alloc_block(pool, MM_NO_OWNER, &host_huge);

		if (block < 0)
			break;
		t->blocks[t->nr++] = block;
	}
}

/*
 * At hotcold's checkpoint (the guest waits in it): take 2 MiB blocks until
 * the pool can make no more, first with compaction alone, then with lumpy
 * reclaim too; count who made them, give them all back.
 */
static int lumpy_hook(struct vm *vm, uint32_t n, void *opaque)
{
	struct lumpy_take *t = opaque;
	struct mm_stats a, b;

	if (n != GPMM_CHECKPOINT_HOTCOLD || pool_stats(vm->pool, &a))
		return -EINVAL;
	t->free_before = a.free_pageblocks;
	mm_set_policy(vm->pool->mm, MM_POLICY_ALL & ~MM_POLICY_LUMPY);
	take_blocks(vm->pool, t);
	t->nr_alone = t->nr;
	mm_set_policy(vm->pool->mm, MM_POLICY_ALL);
	take_blocks(vm->pool, t);
	if (pool_stats(vm->pool, &b))
		return -EINVAL;
	t->lumpy_blocks = b.counters.lumpy_success - a.counters.lumpy_success;
	t->compact_blocks = b.counters.compact_success - a.counters.compact_success;
	t->pool_reclaimed = b.counters.lumpy_reclaimed - a.counters.lumpy_reclaimed;
	t->pool_migrated = b.counters.lumpy_migrated - a.counters.lumpy_migrated;
	t->vm_lumpy = load(&vm->swap.lumpy_pages);
	t->vm_declined = load(&vm->swap.lumpy_declined);
	for (unsigned int i = 0; i < t->nr; i++)
		if (pool_free(vm->pool, NULL, (uint64_t)t->blocks[i], MM_PAGEBLOCK_ORDER))
			return -EIO;
	t->reached = true;
	return 0;
}

/*
 * Lumpy reclaim on guest pages: hotcold, every range 4 KiB backed, in
 * 48 MiB on a 64 MiB pool lent three times over: it fits, but holds more
 * than its share, so its clock ages its ranges. At the checkpoint (the
 * cold set written long ago, the hot set rewritten pass after pass) the
 * host takes 2 MiB blocks until the pool can make none, first with
 * compaction alone (moving pages into free memory), then with lumpy
 * reclaim, which also sends the cold pages of a pageblock to the VM's
 * swap file: it makes blocks where compaction has nowhere left to move. The pool's count of pages its lumps reclaimed and the VM's
 * count of pages it gave them agree; then the guest reads its whole cold
 * set back and checks it.
 */
static void test_lumpy_guest_pages(void)
{
	struct pool *pool = test_pool(4 * POOL_MIB);
	struct lumpy_take take = { 0 };
	struct run_result res;
	struct vm *vm = hotcold_run(pool, VM_FAULT_4K, lumpy_hook, &take, &res);

	fprintf(stderr, "\n  lumpy: %llu pageblocks free; compaction alone then took the pool "
		"to %u blocks (%llu compactions succeeded), lumpy reclaim to %u (%llu lumps: "
		"%llu guest pages to swap, %llu moved); the VM gave %llu pages, kept %llu "
		"asked for\n", (unsigned long long)take.free_before, take.nr_alone,
		(unsigned long long)take.compact_blocks, take.nr,
		(unsigned long long)take.lumpy_blocks, (unsigned long long)take.pool_reclaimed,
		(unsigned long long)take.pool_migrated, (unsigned long long)take.vm_lumpy,
		(unsigned long long)take.vm_declined);
	CU_ASSERT(take.reached);
	CU_ASSERT(take.lumpy_blocks >= 1);
	CU_ASSERT(take.nr > take.nr_alone);
	CU_ASSERT(take.vm_lumpy > 0);
	CU_ASSERT_EQUAL(take.pool_reclaimed, take.vm_lumpy);
	CU_ASSERT_EQUAL(load(&vm->swap.errors), 0);
	CU_ASSERT_EQUAL(vm_get_state(vm), VM_RUNNING);
	stop_and_check(vm, &res, pool);
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
static long long vm_field(const char *name, const char *obj, const char *group,
			  const char *key)
{
	json_t *r = frag_json(name);
	json_t *m = json_object_get(json_array_get(json_object_get(r, "vms"), 0), obj);
	long long v;

	if (group)
		m = json_object_get(m, group);
	v = json_is_integer(json_object_get(m, key)) ?
	    json_integer_value(json_object_get(m, key)) : -1;
	json_decref(r);
	return v;
}

static long long vm_memory(const char *name, const char *group, const char *key)
{
	return vm_field(name, "memory", group, key);
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

/*
 * Blocks in use on the file system at @dir, by statvfs from this process
 * (not the VM's bookkeeping); -1 when it cannot be read.
 */
static long long fs_used_blocks(const char *dir)
{
	struct statvfs st;

	if (statvfs(dir, &st))
		return -1;
	return (long long)(st.f_blocks - st.f_bfree);
}

/* @name's console exists, the guest ran (it says so) and lost nothing. */
static bool console_clean(const char *name)
{
	return sh(NULL, 0, "grep -q 'MiB touched' %s/%s.con", test_run_dir(), name) == 0 &&
	       sh(NULL, 0, "grep -q 'lost write' %s/%s.con", test_run_dir(), name) == 1;
}

/* The process's swap file, seen from outside: an open descriptor of an unlinked file. */
static bool has_unlinked_swap(int pid)
{
	return sh(NULL, 0, "ls -l /proc/%d/fd 2>/dev/null | grep -q 'gpmm-swap.*(deleted)\\|/#[0-9]* (deleted)'",
		  pid) == 0;
}

/* memloop in VM process @name on the pool service at @pool; @swapdir: its swap file's place. */
static int spawn_memloop(const char *name, const char *pool, const char *swapdir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s run --host-pool=%s --kernel %s --ram %dM --name %s "
		 "--cpus 2 --console file:%s/%s.con%s%s", gpmm_bin(), pool, payload("memloop"),
		 RAM_MIB, name, test_run_dir(), name, swapdir ? " --swap " : "",
		 swapdir ? swapdir : "");
	return spawn_bg(name, cmd);
}

/* Pages ocA and ocB read back from swap so far, by their own reports. */
static long long back_from_swap(void)
{
	return vm_memory("ocA", "swap", "in_pages") + vm_memory("ocB", "swap", "in_pages");
}

/*
 * Two VM processes of 24 MiB on a 32 MiB pool service lent twice over (a
 * third is refused: 72 MiB would pass the 64 it may lend). Each process
 * has its own unlinked swap file; together they swap, no write is lost,
 * and one killed with SIGKILL takes its swap file's space with it (seen
 * by statvfs on a tmpfs of its own) while the other runs on. The service
 * itself is killed under them, and started again: the VM processes keep
 * what they hold and their swap, and go on swapping within it (no write
 * lost); a new VM process gets its RAM from the new service.
 */
static void test_service_overcommit(void)
{
	char ctl[128], pool[128], dcmd[512];
	const char *names[] = { "ocA", "ocB", "ocC" };
	char swapdir[128];
	int daemon, pid[4];
	long long in = 0, used, out_a = 0, out_b = 0;

	snprintf(ctl, sizeof(ctl), "%s/oc.sock", test_run_dir());
	snprintf(pool, sizeof(pool), "%s/oc-pool.sock", test_run_dir());
	snprintf(dcmd, sizeof(dcmd), "%s daemon --socket %s --pool-socket %s --pool 32M "
		 "--overcommit 2", gpmm_bin(), ctl, pool);
	/* ocA's swap file alone on a small tmpfs, so its blocks can be counted from here */
	snprintf(swapdir, sizeof(swapdir), "/tmp/gpmm-oc-swapA");
	CU_ASSERT_FATAL(mkdir(swapdir, 0700) == 0 || errno == EEXIST);
	CU_ASSERT_EQUAL_FATAL(mount("tmpfs", swapdir, "tmpfs", 0, "size=64m,mode=0700"), 0);
	CU_ASSERT_EQUAL(fs_used_blocks(swapdir), 0);
	daemon = spawn_bg("oc-daemon", dcmd);
	CU_ASSERT_FATAL(daemon > 0 && log_says("oc-daemon", "lending the pool", 300));
	for (int i = 0; i < 3; i++) {
		pid[i] = spawn_memloop(names[i], pool, i == 0 ? swapdir : NULL);
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
	/*
	 * ocA swaps on and off (memloop touches every page): at some moment it
	 * has ranges out, in its tmpfs (bounded by count, not time)
	 */
	for (int i = 0; i < 1200 && (used = fs_used_blocks(swapdir)) <= 0; i++)
		usleep(250000);
	fprintf(stderr, "  ocA swapped %lld KiB; its swap tmpfs holds %lld blocks\n",
		vm_memory("ocA", NULL, "swapped_bytes") >> 10, used);
	CU_ASSERT(used > 0);
	/*
	 * The service dies under the two, both short of their RAM: each swaps
	 * on within what it holds (1024 pages back between them, by count). A
	 * VM that held all of its RAM at that moment would never ask the dead
	 * service again, nor say it is gone (on 6.1 ocA held all of it once):
	 * the kill waits, bounded by count, for a moment when both have pages out.
	 */
	for (int i = 0; i < 1200 && (out_a <= 0 || out_b <= 0); i++) {
		out_a = vm_memory("ocA", NULL, "swapped_bytes");
		out_b = vm_memory("ocB", NULL, "swapped_bytes");
		if (out_a <= 0 || out_b <= 0)
			usleep(250000);
	}
	CU_ASSERT(out_a > 0 && out_b > 0);
	kill(daemon, SIGKILL);
	CU_ASSERT(log_says("ocA", "pool service is gone", 300));
	CU_ASSERT(log_says("ocB", "pool service is gone", 300));
	in = back_from_swap();
	for (int i = 0; i < 1200 && back_from_swap() < in + 1024; i++)
		usleep(250000);
	fprintf(stderr, "  the service gone: %lld pages back from swap\n", back_from_swap() - in);
	CU_ASSERT(back_from_swap() >= in + 1024);
	kill(pid[0], SIGKILL);
	/* not this process's child: its files are closed once it is dead, zombie or not */
	for (int i = 0; i < 300 && fs_used_blocks(swapdir) != 0; i++)
		usleep(100000);
	CU_ASSERT_EQUAL(fs_used_blocks(swapdir), 0);
	for (int i = 0; i < 40; i++)
		usleep(250000);
	CU_ASSERT(vm_memory("ocB", "swap", "errors") == 0);
	CU_ASSERT(console_clean("ocA"));
	CU_ASSERT(console_clean("ocB"));
	CU_ASSERT_EQUAL(kill(pid[1], 0), 0);
	/* a new service on the same sockets serves a new VM process beside ocB */
	daemon = spawn_bg("oc-daemon2", dcmd);
	CU_ASSERT_FATAL(daemon > 0 && log_says("oc-daemon2", "lending the pool", 300));
	pid[3] = spawn_memloop("ocD", pool, NULL);
	CU_ASSERT(pid[3] > 0 && touched("ocD"));
	CU_ASSERT(log_says("ocD", "guest RAM from the host pool service", 50));
	CU_ASSERT_EQUAL(vm_memory("ocB", "swap", "errors"), 0);
	CU_ASSERT(console_clean("ocB"));
	CU_ASSERT(console_clean("ocD"));
	CU_ASSERT_EQUAL(kill(pid[1], 0), 0);
	kill(pid[1], SIGTERM);
	kill(pid[3], SIGTERM);
	sleep(1);
	kill(daemon, SIGTERM);
	umount2(swapdir, MNT_DETACH);
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
	CU_ASSERT_PTR_NOT_NULL(strstr(out_buf, "MiB swapped out; balloon pressure holds 0.0 MiB"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out_buf, "MiB promised of 32 it lends (overcommit 2.00)"));
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s destroy ocrun", gpmm_bin()), 0);
	CU_ASSERT(sh(NULL, 0, "grep -q 'lost write' %s/ocrun.con", test_run_dir()) != 0);
	waitpid(pid, NULL, WNOHANG);
}

/*
 * Balloon pressure, the ladder's step before swap: a guest whose balloon
 * follows the host (balloonfollow touches its top 16 MiB) in 24 MiB on
 * a 16 MiB pool lent twice over. Under the low watermark the pool's
 * pressure lowers the balloon's target, never under the VM's share (12
 * MiB), the guest inflates and what it gave goes back to the pool.
 */
static void test_balloon_pressure(void)
{
	char cmd[1024];
	long long steps = 0, inflated = 0, taken, target;
	int pid;

	snprintf(cmd, sizeof(cmd), "%s run --pool 16M --overcommit 2 --ram 24M --kernel %s "
		 "--name ocbal --console file:%s/ocbal.con", gpmm_bin(), payload("balloonfollow"),
		 test_run_dir());
	pid = spawn_bg("ocbal", cmd);
	CU_ASSERT_FATAL(pid > 0);
	for (int i = 0; i < 1500 && (steps <= 0 || inflated <= 0); i++) {
		usleep(200000);
		steps = vm_memory("ocbal", "balloon_pressure", "steps");
		inflated = vm_field("ocbal", "balloon", NULL, "inflated_pages");
	}
	fprintf(stderr, "\n  pressure asked %lld times; the guest inflated %lld pages\n", steps,
		inflated);
	CU_ASSERT(steps > 0);
	CU_ASSERT(inflated > 0);
	taken = vm_memory("ocbal", "balloon_pressure", "taken_bytes");
	target = vm_field("ocbal", "balloon", NULL, "target_bytes");
	CU_ASSERT(taken > 0 && taken <= 12 << 20);
	CU_ASSERT_EQUAL(target, (24LL << 20) - taken);
	CU_ASSERT(vm_memory("ocbal", NULL, "used_bytes") <= 16 << 20);
	CU_ASSERT(sh(NULL, 0, "grep -q 'balloonfollow: ready' %s/ocbal.con", test_run_dir()) == 0);
	CU_ASSERT_EQUAL(sh(out_buf, sizeof(out_buf), "%s frag ocbal 2>&1", gpmm_bin()), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out_buf, "balloon pressure holds"));
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s destroy ocbal", gpmm_bin()), 0);
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
		{ "balloon pressure before swap", test_balloon_pressure },
		{ "a hot and a cold set, 2 MiB: the clock sees writes", test_hot_cold_huge },
		{ "a hot and a cold set, 4 KiB: the clock sees writes", test_hot_cold_4k },
		{ "lumpy reclaim frees pageblocks from cold guest pages", test_lumpy_guest_pages },
	};
	return SUITE("overcommit", tests);
}
