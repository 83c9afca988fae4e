// SPDX-License-Identifier: GPL-2.0
/*
 * virtio devices with real guests: virtio-blk moves data between a payload
 * and an image file; the balloon gives guest memory back to the pool (the
 * pool's free count and the VM's populated pages, two independent counts,
 * must move by the same number of frames); QEMU's balloon commands over
 * QMP; gmem_discard on its own; and a hostile driver that must leave gpmm
 * running, its memory untouched and the pool whole.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/virtio/virtio_balloon.h"
#include "devices/device.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_net.h"
#include "guests/abi.h"
#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/page_move.h"
#include "vmm/control/qmp_client.h"
#include "vmm/control/report.h"
#include "vmm/sys/tap.h"

#define MIB		(1ULL << 20)
#define IMAGE_BYTES	(GPMM_VBLK_SECTORS * 512)

/* Frames the pool can hand out now: its free lists and every per-thread list. */
static uint64_t pool_free_pages(struct pool *pool)
{
	struct mm_stats st;

	if (mm_stats(pool->mm, &st))
		return 0;
	return st.free_pages + st.pcp_pages;
}

/* A temporary image in the payloads' pattern (abi.h); @path is a mkstemp template. */
static void make_image(char *path)
{
	uint64_t *buf = malloc(IMAGE_BYTES);
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(buf != NULL && fd >= 0);
	for (uint64_t off = 0; off < IMAGE_BYTES; off += 8)
		buf[off / 8] = GPMM_VBLK_PATTERN(off);
	CU_ASSERT_EQUAL(write(fd, buf, IMAGE_BYTES), (ssize_t)IMAGE_BYTES);
	close(fd);
	free(buf);
}

/*
 * Does the image hold the pattern everywhere but in [@from, @from + @len),
 * which must hold what a payload wrote? Returns the first wrong offset, or
 * -1 when all is right.
 */
static long long image_wrong_at(const char *path, uint64_t from, uint64_t len)
{
	uint64_t *buf = malloc(IMAGE_BYTES);
	int fd = open(path, O_RDONLY);
	long long bad = -1;

	CU_ASSERT_FATAL(buf != NULL && fd >= 0);
	CU_ASSERT_EQUAL(read(fd, buf, IMAGE_BYTES), (ssize_t)IMAGE_BYTES);
	for (uint64_t off = 0; off < IMAGE_BYTES && bad < 0; off += 8) {
		bool written = off >= from && off - from < len;
		uint64_t want = written ? GPMM_VBLK_WRITTEN(off) : GPMM_VBLK_PATTERN(off);

		if (buf[off / 8] != want)
			bad = (long long)off;
	}
	close(fd);
	free(buf);
	return bad;
}

static void run_blkdrv(bool readonly)
{
	char img[] = "/tmp/gpmm-vblk-XXXXXX", want_id[64];
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;

	make_image(img);
	test_config(&cfg, "blkdrv", payload("blkdrv"), 16, 1);
	snprintf(cfg.disk, sizeof(cfg.disk), "%s", img);
	cfg.disk_readonly = readonly;
	CU_ASSERT_EQUAL_FATAL(run_payload(pool, &cfg, &res), 0);
	CU_ASSERT_EQUAL(res.state, VM_SHUTDOWN);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_OK);
	CU_ASSERT(console_has(&res, readonly ? "blkdrv: ok (read-only)" : "blkdrv: ok\n"));
	snprintf(want_id, sizeof(want_id), "blk id: %s\n", basename(img));
	CU_ASSERT(console_has(&res, want_id));
	if (res.exit_code != GPMM_EXIT_OK)
		fprintf(stderr, "\n%s\n%s", res.console.text, res.report);
	/* the write is in the file (or, read-only, nothing is), and nothing else moved */
	CU_ASSERT_EQUAL(image_wrong_at(img, GPMM_VBLK_WRITE_SECTOR * 512, readonly ? 0 : 1024), -1);
	CU_ASSERT(pool_is_whole(pool));
	unlink(img);
	pool_close(pool);
}

static void test_blk_read_write_flush(void)
{
	run_blkdrv(false);
}

static void test_blk_readonly(void)
{
	run_blkdrv(true);
}

/* A disk that cannot be used stops vm_create with the reason; one image, one writer. */
static void test_blk_refusals(void)
{
	char img[] = "/tmp/gpmm-vblk-XXXXXX", err[512] = "";
	struct pool *pool = test_pool(64);
	struct run_result res, res2;
	struct vm_config cfg;
	struct vm *a = NULL, *b = NULL;

	test_config(&cfg, "nodisk", payload("hello"), 8, 1);
	snprintf(cfg.disk, sizeof(cfg.disk), "/nonexistent/disk.img");
	CU_ASSERT_EQUAL(test_vm_create(pool, &cfg, &res, &a, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot use disk /nonexistent/disk.img"));
	make_image(img);
	snprintf(cfg.disk, sizeof(cfg.disk), "%s", img);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &a, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(test_vm_create(pool, &cfg, &res2, &b, err, sizeof(err)), -EBUSY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "in use by another VM"));
	vm_destroy(a);
	CU_ASSERT_EQUAL(test_vm_create(pool, &cfg, &res2, &b, err, sizeof(err)), 0);
	vm_destroy(b);
	unlink(img);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* What the host sees at each of balloondrv's checkpoints (abi.h). */
struct balloon_seen {
	uint64_t free[7], populated[7], returned[7], blocks[7], split[7];
	long frame_a, block_b1, frame_b3_after;
	struct mm_frame_info info_a;
	int assembled[2], info_ret;
	bool range_b0_huge, range_b1_huge, b1_given_back;
	int populated_b0, populated_b1;
	struct virtio_balloon_info stats5, stats6;
	int query5, query6;
};

static int balloon_hook(struct vm *vm, uint32_t n, void *opaque)
{
	struct balloon_seen *s = opaque;
	unsigned int cp = n - GPMM_CHECKPOINT_BALLOON(0);

	if (cp < 1 || cp > 6)
		return 0;
	switch (cp) {
	case 1:
		s->frame_a = vm_gpa_to_frame(vm, GPMM_BALLOON_A);
		break;
	case 2:
		s->info_ret = mm_frame_info(vm->pool->mm, (uint64_t)s->frame_a, &s->info_a);
		break;
	case 3:
		/* both 2 MiB ranges of B onto one block each, before the guest gives them back */
		s->assembled[0] = vm_assemble_range(vm, GPMM_BALLOON_B);
		s->assembled[1] = vm_assemble_range(vm, GPMM_BALLOON_B + 2 * MIB);
		s->block_b1 = vm_gpa_to_frame(vm, GPMM_BALLOON_B + 2 * MIB);
		break;
	case 4:
		s->populated_b0 = vm_range_populated(vm, GPMM_BALLOON_B, &s->range_b0_huge);
		s->populated_b1 = vm_range_populated(vm, GPMM_BALLOON_B + 2 * MIB, &s->range_b1_huge);
		s->b1_given_back = vm_range_given_back(vm, GPMM_BALLOON_B + 2 * MIB);
		s->frame_b3_after = vm_gpa_to_frame(vm, GPMM_BALLOON_B + 3 * MIB);
		break;
	case 5:
		s->query5 = virtio_balloon_query(&vm->mach, &s->stats5, true);
		break;
	case 6:
		s->query6 = virtio_balloon_query(&vm->mach, &s->stats6, false);
		break;
	}
	s->free[cp] = pool_free_pages(vm->pool);
	s->populated[cp] = vm_populated_pages(vm);
	s->returned[cp] = __atomic_load_n(&vm->discard.bytes, __ATOMIC_RELAXED) >> 12;
	s->blocks[cp] = __atomic_load_n(&vm->discard.blocks, __ATOMIC_RELAXED);
	s->split[cp] = vm->migstats.ranges_split;
	return 0;
}

static uint64_t stat_of(const struct virtio_balloon_info *b, unsigned int tag)
{
	for (unsigned int i = 0; i < b->nr_stats; i++)
		if (b->stat_tag[i] == tag)
			return b->stat_val[i];
	return ~0ULL;
}

/*
 * Inflate and free page reporting return frames to the pool: at each step
 * the pool's free count rises by exactly the frames the VM's populated
 * count falls by, and by what the guest gave. A 2 MiB backing given back
 * whole is freed as one block; half of one is split first.
 */
static void test_balloon_returns_frames(void)
{
	struct pool *pool = test_pool(128);
	struct balloon_seen s = { 0 };
	struct virtio_balloon_info end;
	struct vm_config cfg;
	struct run_result res;
	struct vm *vm;
	char err[256];
	json_t *report, *b;

	test_config(&cfg, "balloondrv", payload("balloondrv"), GPMM_BALLOON_RAM >> 20, 1);
	cfg.balloon = true;
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	vm->checkpoint = balloon_hook;
	vm->checkpoint_opaque = &s;
	CU_ASSERT_EQUAL(vm_start(vm), 0);
	vm_wait(vm);
	CU_ASSERT_EQUAL(virtio_balloon_query(&vm->mach, &end, false), 0);
	report = report_build(pool, &vm, 1, false);
	CU_ASSERT_FATAL(report != NULL);
	b = json_object_get(json_array_get(json_object_get(report, "vms"), 0), "balloon");
	test_vm_finish(vm, &res);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_OK);
	CU_ASSERT(console_has(&res, "balloondrv: ok"));
	if (res.exit_code != GPMM_EXIT_OK)
		fprintf(stderr, "\n%s\n%s", res.console.text, res.report);

	/* 2: 512 pages of A inflated, 4 KiB-backed */
	CU_ASSERT_EQUAL(s.free[2] - s.free[1], 512);
	CU_ASSERT_EQUAL(s.populated[1] - s.populated[2], 512);
	CU_ASSERT_EQUAL(s.returned[2] - s.returned[1], 512);
	CU_ASSERT(s.frame_a >= 0);
	CU_ASSERT_EQUAL(s.info_ret, 0);
	CU_ASSERT_NOT_EQUAL(s.info_a.state, MM_FRAME_ALLOC);
	/* 4: B's first range whole (one block freed), the second split, half freed */
	CU_ASSERT_EQUAL(s.assembled[0], 0);
	CU_ASSERT_EQUAL(s.assembled[1], 0);
	CU_ASSERT_EQUAL(s.free[4] - s.free[3], 768);
	CU_ASSERT_EQUAL(s.populated[3] - s.populated[4], 768);
	CU_ASSERT_EQUAL(s.returned[4] - s.returned[3], 768);
	CU_ASSERT_EQUAL(s.blocks[4] - s.blocks[3], 1);
	CU_ASSERT_EQUAL(s.split[4] - s.split[3], 1);
	CU_ASSERT_EQUAL(s.populated_b0, 0);
	CU_ASSERT_EQUAL(s.populated_b1, 256);
	CU_ASSERT(!s.range_b0_huge && !s.range_b1_huge);
	CU_ASSERT(s.b1_given_back);
	CU_ASSERT_EQUAL(s.frame_b3_after, s.block_b1 + 256);	/* kept pages stay in place */
	/* 5, 6: stats asked for and sent again; C reported free */
	CU_ASSERT_EQUAL(s.query5, 0);
	CU_ASSERT_EQUAL(s.stats5.stats_updates, 1);
	CU_ASSERT_EQUAL(stat_of(&s.stats5, VIRTIO_BALLOON_S_MEMTOT), GPMM_BALLOON_RAM);
	CU_ASSERT_EQUAL(stat_of(&s.stats5, VIRTIO_BALLOON_S_MEMFREE), 1);
	CU_ASSERT_EQUAL(s.query6, 0);
	CU_ASSERT_EQUAL(s.stats6.stats_updates, 2);
	CU_ASSERT_EQUAL(stat_of(&s.stats6, VIRTIO_BALLOON_S_MEMFREE), 2);
	CU_ASSERT_EQUAL(s.stats6.reported_bytes, 2 * MIB);
	CU_ASSERT_EQUAL(s.free[6] - s.free[5], 512);
	CU_ASSERT_EQUAL(s.populated[5] - s.populated[6], 512);
	/* the balloon's own account, and the report's */
	CU_ASSERT_EQUAL(end.inflated_pages, 512 + 768);
	CU_ASSERT_EQUAL(end.deflated_pages, 4);
	CU_ASSERT_EQUAL(end.bad_pfns, 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(b, "returned_bytes")),
			(512 + 768 + 512) * 4096);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(b, "inflated_pages")), 512 + 768);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(b, "discard_failed")), 0);
	json_decref(report);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/*
 * gmem_discard alone, on a VM that is not running: bad ranges refused,
 * whole and partial 2 MiB backings, pinned pages kept with their data,
 * and the page a host thread touches afterwards faults in as zeros.
 */
static void test_discard_edges(void)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;
	struct vm *vm;
	char err[256];
	uint64_t v = 0x1234, got = 1, free0, pop0;
	bool huge = true;

	test_config(&cfg, "discard", payload("hello"), 16, 1);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(gmem_discard(vm, 4 * MIB + 1, 4096), -EINVAL);
	CU_ASSERT_EQUAL(gmem_discard(vm, 4 * MIB, 100), -EINVAL);
	CU_ASSERT_EQUAL(gmem_discard(vm, 4 * MIB, 0), -EINVAL);
	CU_ASSERT_EQUAL(gmem_discard(vm, 16 * MIB - 4096, 8192), -EINVAL);
	CU_ASSERT_EQUAL(gmem_discard(vm, 0xfffffffffffff000ULL, 0x2000), -EINVAL);
	CU_ASSERT_EQUAL(__atomic_load_n(&vm->discard.failed, __ATOMIC_RELAXED), 5);

	/* a whole assembled range: one block back */
	for (uint64_t g = 4 * MIB; g < 8 * MIB; g += 4096)
		CU_ASSERT_EQUAL(vm_write_guest(vm, g, &g, 8), 0);
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 4 * MIB), 0);
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 6 * MIB), 0);
	free0 = pool_free_pages(pool);
	pop0 = vm_populated_pages(vm);
	CU_ASSERT_EQUAL(gmem_discard(vm, 4 * MIB, 2 * MIB), 0);
	CU_ASSERT_EQUAL(pool_free_pages(pool) - free0, 512);
	CU_ASSERT_EQUAL(pop0 - vm_populated_pages(vm), 512);
	CU_ASSERT_EQUAL(__atomic_load_n(&vm->discard.blocks, __ATOMIC_RELAXED), 1);
	CU_ASSERT_EQUAL(vm_range_populated(vm, 4 * MIB, &huge), 0);
	CU_ASSERT(!huge);

	/* part of a pinned block: nothing moves; unpinned: split, two pages go */
	CU_ASSERT_EQUAL(vm_pin_page(vm, 7 * MIB), 0);
	free0 = pool_free_pages(pool);
	CU_ASSERT_EQUAL(gmem_discard(vm, 7 * MIB, 8192), -EBUSY);
	CU_ASSERT_EQUAL(pool_free_pages(pool), free0);
	CU_ASSERT_EQUAL(vm_unpin_page(vm, 7 * MIB), 0);
	CU_ASSERT_EQUAL(gmem_discard(vm, 7 * MIB, 8192), 0);
	CU_ASSERT_EQUAL(pool_free_pages(pool) - free0, 2);
	CU_ASSERT_EQUAL(vm_range_populated(vm, 6 * MIB, &huge), 510);
	CU_ASSERT(!huge);
	CU_ASSERT_EQUAL(vm_read_guest(vm, 7 * MIB + 8192, &got, 8), 0);
	CU_ASSERT_EQUAL(got, 7 * MIB + 8192);

	/* a pinned 4 KiB page stays, with its data; its neighbours go */
	for (uint64_t g = 10 * MIB; g < 10 * MIB + 16384; g += 4096)
		CU_ASSERT_EQUAL(vm_write_guest(vm, g, &v, 8), 0);
	CU_ASSERT_EQUAL(vm_pin_page(vm, 10 * MIB + 4096), 0);
	free0 = pool_free_pages(pool);
	CU_ASSERT_EQUAL(gmem_discard(vm, 10 * MIB, 16384), -EBUSY);
	CU_ASSERT_EQUAL(pool_free_pages(pool) - free0, 3);
	CU_ASSERT(vm_gpa_to_frame(vm, 10 * MIB + 4096) >= 0);
	CU_ASSERT_EQUAL(vm_read_guest(vm, 10 * MIB + 4096, &got, 8), 0);
	CU_ASSERT_EQUAL(got, v);
	CU_ASSERT_EQUAL(vm_unpin_page(vm, 10 * MIB + 4096), 0);

	/* nothing backed: nothing to do */
	free0 = pool_free_pages(pool);
	CU_ASSERT_EQUAL(gmem_discard(vm, 12 * MIB, 2 * MIB), 0);
	CU_ASSERT_EQUAL(pool_free_pages(pool), free0);

	/* a host thread touching a discarded page faults in a zeroed one */
	{
		volatile uint64_t *p = (volatile uint64_t *)(vm->regions[0].hva + 7 * MIB);
		uint64_t faults = __atomic_load_n(&vm->stats.demand_faults, __ATOMIC_RELAXED);

		pop0 = vm_populated_pages(vm);
		CU_ASSERT_EQUAL(*p, 0);
		CU_ASSERT_EQUAL(vm_populated_pages(vm), pop0 + 1);
		/* the fault thread counts it after it has woken us */
		for (int i = 0; i < 1000 && __atomic_load_n(&vm->stats.demand_faults,
							     __ATOMIC_RELAXED) == faults; i++)
			usleep(1000);
		CU_ASSERT_EQUAL(__atomic_load_n(&vm->stats.demand_faults, __ATOMIC_RELAXED),
				faults + 1);
	}
	vm_destroy(vm);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* The value map_missing's test hook writes into the page it touches. */
#define STRAY_VALUE	0x5eed5eed5eed5eedULL

static void touch_unarmed(uint8_t *hva, uint64_t len)
{
	(void)len;
	*(volatile uint64_t *)hva = STRAY_VALUE;
}

/*
 * A second writer (a device thread, a vCPU) writes the page again while
 * gpmm copies it into the pool: its write must not be lost. It is given
 * LATE_WRITE_MS to finish; a write that has to wait for the copy (a
 * userfaultfd fault) finishes after the discard.
 */
#define LATE_VALUE	0x1a7e1a7e1a7e1a7eULL
#define LATE_WRITE_MS	200

struct late_write {
	volatile uint64_t *p;
	pthread_t thread;
	int done;
	bool started;
};

static struct late_write late;

static void *late_writer(void *arg)
{
	struct late_write *w = arg;

	*w->p = LATE_VALUE;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void write_while_copied(uint8_t *hva)
{
	late.p = (volatile uint64_t *)hva;
	late.done = 0;
	late.started = pthread_create(&late.thread, NULL, late_writer, &late) == 0;
	for (int i = 0; late.started && i < LATE_WRITE_MS &&
	     !__atomic_load_n(&late.done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
}

/*
 * The first page of @gpa's discard, touched (by the hook) after its new
 * mapping and before its registration, must be a pool frame afterwards,
 * holding the value written: neither a host page outside the pool nor
 * zeros a later populate put over it; nor may a write made while that
 * page is copied into the pool be lost.
 */
static void check_touched_midway(struct vm *vm, uint64_t gpa, uint64_t len)
{
	uint64_t strays = __atomic_load_n(&vm->discard.strays, __ATOMIC_RELAXED);
	volatile uint64_t *p = (volatile uint64_t *)(vm->regions[0].hva + gpa);
	uint64_t got = 0;
	long frame;

	gmem_test_unarmed_hook = touch_unarmed;
	gmem_test_adopt_hook = write_while_copied;
	late.started = false;
	CU_ASSERT_EQUAL(gmem_discard(vm, gpa, len), 0);
	gmem_test_unarmed_hook = NULL;
	gmem_test_adopt_hook = NULL;
	CU_ASSERT_FATAL(late.started);
	pthread_join(late.thread, NULL);
	frame = vm_gpa_to_frame(vm, gpa);
	CU_ASSERT_FATAL(frame >= 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&vm->discard.strays, __ATOMIC_RELAXED), strays + 1);
	CU_ASSERT_EQUAL(*(uint64_t *)pool_frame_ptr(vm->pool, frame), LATE_VALUE);
	/* the window maps that frame: a write through it lands in the pool */
	*p = ~STRAY_VALUE;
	CU_ASSERT_EQUAL(*(uint64_t *)pool_frame_ptr(vm->pool, frame), ~STRAY_VALUE);
	/* and a populate does not put zeros over it */
	CU_ASSERT_EQUAL(vm_read_guest(vm, gpa, &got, 8), 0);
	CU_ASSERT_EQUAL(got, ~STRAY_VALUE);
	/* the rest of the range went back */
	CU_ASSERT_EQUAL(vm_gpa_to_frame(vm, gpa + 4096), -ENOENT);
}

/*
 * A page touched while it is given back (between map_missing's mapping and
 * its userfaultfd registration), on both discard paths: 4 KiB pages and a
 * whole 2 MiB block. The pool stays whole at the end.
 */
static void test_discard_touched_midway(void)
{
	struct pool *pool = test_pool(64);
	struct vm_config cfg;
	struct run_result res;
	struct vm *vm;
	char err[256];

	test_config(&cfg, "discard-touch", payload("hello"), 16, 1);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	for (uint64_t g = 4 * MIB; g < 8 * MIB; g += 4096)
		CU_ASSERT_EQUAL(vm_write_guest(vm, g, &g, 8), 0);
	/* 4 KiB pages */
	check_touched_midway(vm, 4 * MIB, 16384);
	/* a whole assembled 2 MiB range, given back as one block */
	CU_ASSERT_EQUAL(vm_assemble_range(vm, 6 * MIB), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&vm->discard.blocks, __ATOMIC_RELAXED), 0);
	check_touched_midway(vm, 6 * MIB, 2 * MIB);
	CU_ASSERT_EQUAL(__atomic_load_n(&vm->discard.blocks, __ATOMIC_RELAXED), 1);
	vm_destroy(vm);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

struct racer {
	struct vm *vm;
	bool stop;
	uint64_t moved, compactions, free_errors;
};

#define RACE_BASE	(8 * MIB)
#define RACE_RANGES	8
#define RACE_PAGES	(RACE_RANGES * 512)

/* Moves random pages of the race area live, as compaction's callback would. */
static void *race_migrator(void *arg)
{
	struct racer *r = arg;
	uint64_t seed = 7;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		long frame = mm_alloc(r->vm->pool->mm, NULL, 0, MIGRATE_MOVABLE, r->vm->owner);
		uint64_t old, gpa;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		gpa = RACE_BASE + ((seed >> 33) % RACE_PAGES) * 4096;
		if (frame < 0)
			continue;
		/* CUnit is not thread-safe: count here, assert on the test's thread */
		if (vm_migrate_page(r->vm, gpa, (uint64_t)frame, &old) == 0) {
			r->free_errors += mm_free(r->vm->pool->mm, NULL, old) != 0;
			r->moved++;
		} else {
			r->free_errors += mm_free(r->vm->pool->mm, NULL, (uint64_t)frame) != 0;
		}
		/* one CPU in the test VM: leave the discarding thread its share */
		usleep(50);
	}
	return NULL;
}

static void *race_compactor(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		mm_compact_all(r->vm->pool->mm);
		r->compactions++;
		usleep(5000);
	}
	return NULL;
}

/* Every page of the race area reads what the shadow says (0: given back or never written). */
static long race_check(struct vm *vm, const uint64_t *shadow)
{
	for (uint64_t i = 0; i < RACE_PAGES; i++) {
		uint64_t got = ~0ULL;

		if (vm_read_guest(vm, RACE_BASE + i * 4096 + (i % 512) * 8, &got, 8) ||
		    got != shadow[i])
			return (long)i;
	}
	return -1;
}

/*
 * gmem_discard against everything else that maps or frees this VM's
 * pages, all at once on a running VM: live 4 KiB migrations and whole-pool
 * compaction on other threads, 2 MiB assembly, writes and discards here.
 * Every page must read what was last written, or zeros once given back;
 * no frame may be freed twice or lost (the pool whole at the end).
 */
static void test_discard_races(void)
{
	struct pool *pool = test_pool(128);
	uint64_t *shadow = calloc(RACE_PAGES, sizeof(*shadow)), seed = 42, t_end;
	struct racer r = { 0 };
	struct mm_stats st;
	struct vm_config cfg;
	struct run_result res;
	pthread_t mig, comp;
	unsigned int ops[3] = { 0 };
	long bad = -1;
	char err[256];

	test_config(&cfg, "race", payload("spin"), 32, 1);
	CU_ASSERT_FATAL(shadow != NULL);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &r.vm, err, sizeof(err)), 0);
	CU_ASSERT_FATAL(r.vm->mig.wp_supported);
	CU_ASSERT_EQUAL(vm_start(r.vm), 0);
	pthread_create(&mig, NULL, race_migrator, &r);
	pthread_create(&comp, NULL, race_compactor, &r);
	t_end = vm_now_ns() + 20000000000ULL;
	for (unsigned int it = 1; it <= 400 && vm_now_ns() < t_end && bad < 0; it++) {
		uint64_t range, first, n;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		range = (seed >> 20) % RACE_RANGES;
		first = range * 512 + ((seed >> 40) % 512);
		n = 1 + (seed >> 50) % (range * 512 + 512 - first);
		switch ((seed >> 33) % 4) {
		case 0:		/* a whole range written: the assembler's food */
			first = range * 512;
			n = 512;
			/* fall through */
		case 1:
			for (uint64_t i = first; i < first + n; i++) {
				uint64_t v = (RACE_BASE + i * 4096) ^ ((uint64_t)it << 40);

				CU_ASSERT_EQUAL(vm_write_guest(r.vm, RACE_BASE + i * 4096 + (i % 512) * 8,
							       &v, 8), 0);
				shadow[i] = v;
			}
			ops[0]++;
			break;
		case 2:
			if (vm_assemble_range(r.vm, RACE_BASE + range * 2 * MIB) == 0)
				ops[1]++;
			break;
		case 3:
			/* half the time the whole range: a 2 MiB backing goes as one block */
			if (seed & 1) {
				first = range * 512;
				n = 512;
			}
			CU_ASSERT_EQUAL(gmem_discard(r.vm, RACE_BASE + first * 4096, n * 4096), 0);
			for (uint64_t i = first; i < first + n; i++)
				shadow[i] = 0;
			ops[2]++;
			break;
		}
		if (!(it % 8))
			bad = race_check(r.vm, shadow);
	}
	if (bad < 0)
		bad = race_check(r.vm, shadow);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(mig, NULL);
	pthread_join(comp, NULL);
	CU_ASSERT_EQUAL(bad, -1);
	if (bad >= 0)
		fprintf(stderr, "\npage 0x%llx of the race area reads wrong\n",
			(unsigned long long)(RACE_BASE + (uint64_t)bad * 4096));
	fprintf(stderr, "\n    [%u writes, %u assemblies, %u discards (%llu blocks whole); "
		"%llu pages moved live, %llu compactions] ", ops[0], ops[1], ops[2],
		(unsigned long long)__atomic_load_n(&r.vm->discard.blocks, __ATOMIC_RELAXED),
		(unsigned long long)r.moved, (unsigned long long)r.compactions);
	CU_ASSERT(ops[1] > 0 && ops[2] > 0 && r.moved > 0);
	CU_ASSERT_EQUAL(r.free_errors, 0);
	CU_ASSERT(__atomic_load_n(&r.vm->discard.blocks, __ATOMIC_RELAXED) > 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&r.vm->discard.failed, __ATOMIC_RELAXED), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&r.vm->migstats.free_errors, __ATOMIC_RELAXED), 0);
	vm_request_stop(r.vm, VM_SHUTDOWN, 0);
	test_vm_finish(r.vm, &res);
	CU_ASSERT_EQUAL(mm_stats(pool->mm, &st), 0);
	CU_ASSERT_EQUAL(st.counters.double_frees, 0);
	CU_ASSERT_EQUAL(st.counters.bad_frees, 0);
	CU_ASSERT(pool_is_whole(pool));
	free(shadow);
	pool_close(pool);
}

/* How many times @needle occurs in the console. */
static unsigned int console_count(struct run_result *res, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = res->console.text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * The hostile driver: gpmm survives, every broken ring was noticed (once
 * each: console lines, the devices' counters and the payload's own count
 * agree), the image holds only the one write the payload meant, the guard
 * area was untouched (checked by the payload), and the pool is whole.
 */
static void test_evil_driver(void)
{
	char img[] = "/tmp/gpmm-vblk-XXXXXX";
	struct virtio_mmio_info dev[VIRTIO_MMIO_SLOTS];
	struct pool *pool = test_pool(64);
	struct virtio_balloon_info bal;
	unsigned int nr, resets = 0;
	struct vm_config cfg;
	struct run_result res;
	const char *line;
	struct vm *vm;
	char err[256];

	make_image(img);
	test_config(&cfg, "evil", payload("virtio_evil"), 16, 1);
	snprintf(cfg.disk, sizeof(cfg.disk), "%s", img);
	cfg.balloon = true;
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm_start(vm), 0);
	vm_wait(vm);
	nr = virtio_mmio_list(&vm->mach, dev, VIRTIO_MMIO_SLOTS);
	CU_ASSERT_EQUAL(virtio_balloon_query(&vm->mach, &bal, false), 0);
	test_vm_finish(vm, &res);

	CU_ASSERT_EQUAL(res.state, VM_SHUTDOWN);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_OK);
	CU_ASSERT_STRING_EQUAL(res.report, "");
	if (res.exit_code != GPMM_EXIT_OK)
		fprintf(stderr, "\n%s\n%s", res.console.text, res.report);
	line = strstr(res.console.text, "evil: ");
	CU_ASSERT_FATAL(line && sscanf(line, "evil: %u resets", &resets) == 1);
	CU_ASSERT(resets >= 40);
	CU_ASSERT_EQUAL(console_count(&res, "; device needs reset\n"), resets);
	CU_ASSERT_EQUAL_FATAL(nr, 2);
	CU_ASSERT_STRING_EQUAL(dev[0].name, "virtio-blk");
	CU_ASSERT_STRING_EQUAL(dev[1].name, "virtio-balloon");
	CU_ASSERT_EQUAL(dev[0].bad_rings + dev[1].bad_rings, resets);
	CU_ASSERT(dev[0].bad_rings > 0 && dev[1].bad_rings > 0);
	CU_ASSERT(dev[0].bad_accesses > 0 && dev[1].bad_accesses > 0);
	CU_ASSERT_EQUAL(dev[0].irq_errors + dev[1].irq_errors, 0);
	CU_ASSERT_EQUAL(bal.bad_pfns, 3);
	CU_ASSERT_EQUAL(image_wrong_at(img, GPMM_EVIL_WRITE_SECTOR * 512, 512), -1);
	CU_ASSERT(pool_is_whole(pool));
	unlink(img);
	pool_close(pool);
}

/*
 * A hostile driver against virtio-net (guests/netevil.c) on a tap this
 * test attaches (root in the test VM): six chains that break the ring,
 * each answered with NEEDS_RESET and one console line; a queue set up
 * twice; two chains that are no packet, given back and counted by the
 * device; a good packet after them. gpmm ends with the guest's status 0,
 * its pool whole, the device's own counts matching what the guest did.
 */
static void test_net_evil_driver(void)
{
	struct virtio_mmio_info dev[VIRTIO_MMIO_SLOTS];
	struct pool *pool = test_pool(64);
	struct virtio_net_info info;
	unsigned int nr = 0, resets = 0;
	struct vm_config cfg;
	struct run_result res;
	const char *line;
	struct vm *vm;
	char err[256];

	test_config(&cfg, "netevil", payload("netevil"), 16, 1);
	cfg.balloon = false;
	CU_ASSERT_EQUAL_FATAL(net_spec_parse("tap=gpmmev0", &cfg.net[0], err, sizeof(err)), 0);
	cfg.nr_net = 1;
	if (tap_attach_all(&cfg, err, sizeof(err)))
		fprintf(stderr, "\n  %s\n", err);
	CU_ASSERT_FATAL(cfg.net[0].fd >= 0);
	CU_ASSERT_EQUAL_FATAL(test_vm_create(pool, &cfg, &res, &vm, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm_start(vm), 0);
	vm_wait(vm);
	nr = virtio_mmio_list(&vm->mach, dev, VIRTIO_MMIO_SLOTS);
	/*
	 * The used entry reaches the guest before the I/O thread's write to
	 * the tap returns and is counted: the guest may have ended first.
	 */
	for (int i = 0; i < 500; i++) {
		CU_ASSERT_EQUAL_FATAL(virtio_net_query(&vm->mach, 0, &info), 0);
		if (info.tx_packets + info.tx_errors)
			break;
		usleep(10000);
	}
	test_vm_finish(vm, &res);
	close(cfg.net[0].fd);

	CU_ASSERT_EQUAL(res.state, VM_SHUTDOWN);
	CU_ASSERT_EQUAL(res.exit_code, GPMM_EXIT_OK);
	if (res.exit_code != GPMM_EXIT_OK)
		fprintf(stderr, "\n%s\n%s", res.console.text, res.report);
	line = strstr(res.console.text, "netevil: ");
	CU_ASSERT_FATAL(line && sscanf(line, "netevil: %u resets", &resets) == 1);
	CU_ASSERT_EQUAL(resets, 6);
	CU_ASSERT_EQUAL(console_count(&res, "; device needs reset\n"), resets);
	CU_ASSERT_EQUAL_FATAL(nr, 1);
	CU_ASSERT_STRING_EQUAL(dev[0].name, "virtio-net");
	CU_ASSERT_EQUAL(dev[0].bad_rings, resets);
	CU_ASSERT_EQUAL(info.tx_dropped, 2);
	CU_ASSERT_EQUAL(info.tx_packets + info.tx_errors, 1);
	CU_ASSERT(pool_is_whole(pool));
	pool_close(pool);
}

/* The whole reply to a command (return or error), events skipped. */
static json_t *qmp_call(struct qmp_client *q, const char *cmd, json_t *args)
{
	json_t *msg = json_pack("{s:s}", "execute", cmd);
	char *text;
	json_t *reply;

	if (args)
		json_object_set_new(msg, "arguments", args);
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	CU_ASSERT_FATAL(text != NULL);
	CU_ASSERT_EQUAL(send(q->fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
	free(text);
	while ((reply = qmpc_read(q)) && json_object_get(reply, "event"))
		json_decref(reply);
	CU_ASSERT_FATAL(reply != NULL);
	return reply;
}

static long long ret_int(json_t *reply, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(reply, "return"), key));
}

static bool error_is(json_t *reply, const char *cls, const char *desc)
{
	json_t *e = json_object_get(reply, "error");
	const char *c = json_string_value(json_object_get(e, "class"));
	const char *d = json_string_value(json_object_get(e, "desc"));
	bool ok = c && d && !strcmp(c, cls) && !strcmp(d, desc);

	if (!ok) {
		char *text = json_dumps(reply, JSON_COMPACT);

		fprintf(stderr, "\nexpected error %s '%s', got %s\n", cls, desc, text);
		free(text);
	}
	json_decref(reply);
	return ok;
}

static int qmp_open(struct qmp_client *q, const char *sock)
{
	char err[256];

	for (int i = 0; i < 1000; i++) {
		if (qmpc_connect(q, sock, err, sizeof(err)) == 0)
			return 0;
		usleep(20000);
	}
	fprintf(stderr, "\n%s\n", err);
	return -1;
}

/* Poll query-balloon until "actual" is @want bytes (30 s at most). */
static long long wait_actual(struct qmp_client *q, long long want)
{
	long long actual = -1;

	for (int i = 0; i < 300 && actual != want; i++) {
		json_t *r = qmp_call(q, "query-balloon", NULL);

		actual = ret_int(r, "actual");
		json_decref(r);
		if (actual != want)
			usleep(100000);
	}
	return actual;
}

static long long vm_report_int(struct qmp_client *q, const char *obj, const char *key)
{
	json_t *r = qmp_call(q, "query-fragmentation", NULL);
	json_t *v = json_array_get(json_object_get(json_object_get(r, "return"), "vms"), 0);
	long long n;

	if (obj)
		v = json_object_get(v, obj);
	n = json_integer_value(json_object_get(v, key));
	json_decref(r);
	return n;
}

/*
 * QEMU's balloon commands against `gpmm run` with a guest that follows its
 * target: query-balloon says the guest's RAM less the balloon, `balloon`
 * moves it both ways, the frames the guest gives come back to the pool
 * (the report's populated bytes and the VM's returned bytes agree), the
 * stats come through, and the errors read as QEMU's.
 */
static void test_balloon_qmp(void)
{
	const long long ram = 64 << 20, target = ram - (8 << 20);
	char sock[256], out[4096];
	struct qmp_client q;
	long long pop_before, stats_seen;
	json_t *r;

	snprintf(sock, sizeof(sock), "%s/bal.qmp", test_run_dir());
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s run --kernel %s --ram 64M --pool 256M --qmp %s --name bal "
			   "> %s/bal.out 2>&1 &", gpmm_bin(), payload("balloonfollow"), sock,
			   test_run_dir()), 0);
	CU_ASSERT_FATAL(qmp_open(&q, sock) == 0);
	for (int i = 0; i < 600; i++) {
		if (sh(out, sizeof(out), "cat %s/bal.out", test_run_dir()) == 0 &&
		    strstr(out, "balloonfollow: ready"))
			break;
		usleep(100000);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(strstr(out, "balloonfollow: ready"));
	CU_ASSERT_EQUAL(wait_actual(&q, ram), ram);
	pop_before = vm_report_int(&q, NULL, "populated_bytes");

	r = qmp_call(&q, "balloon", json_pack("{s:I}", "value", (json_int_t)target));
	CU_ASSERT_PTR_NOT_NULL(json_object_get(r, "return"));
	json_decref(r);
	CU_ASSERT_EQUAL(wait_actual(&q, target), target);
	r = qmp_call(&q, "query-gpmm-balloon", NULL);
	CU_ASSERT_EQUAL(ret_int(r, "target"), target);
	CU_ASSERT_EQUAL(ret_int(r, "actual-pages"), 2048);
	CU_ASSERT_EQUAL(ret_int(r, "inflated-pages"), 2048);
	CU_ASSERT_EQUAL(ret_int(r, "returned-bytes"), 8 << 20);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(json_object_get(r,
			"return"), "stats"), "stat-total-memory")), ram);
	stats_seen = ret_int(r, "stats-updates");
	CU_ASSERT(stats_seen >= 1);
	json_decref(r);
	/* two counts of the same frames: the VM's populated pages, its returned bytes */
	CU_ASSERT_EQUAL(pop_before - vm_report_int(&q, NULL, "populated_bytes"), 8 << 20);
	CU_ASSERT_EQUAL(vm_report_int(&q, "balloon", "returned_bytes"), 8 << 20);
	/* the last query asked for fresh stats: they come */
	for (int i = 0; i < 100; i++) {
		r = qmp_call(&q, "query-gpmm-balloon", NULL);
		if (ret_int(r, "stats-updates") > stats_seen) {
			CU_ASSERT(json_integer_value(json_object_get(json_object_get(json_object_get(
				r, "return"), "stats"), "stat-free-memory")) > stats_seen);
			stats_seen = -1;
		}
		json_decref(r);
		if (stats_seen < 0)
			break;
		usleep(100000);
	}
	CU_ASSERT_EQUAL(stats_seen, -1);

	/* more than the RAM is all of it: the guest deflates and uses its pages again */
	r = qmp_call(&q, "balloon", json_pack("{s:I}", "value", (json_int_t)ram * 4));
	json_decref(r);
	CU_ASSERT_EQUAL(wait_actual(&q, ram), ram);
	for (int i = 0; i < 100 && vm_report_int(&q, NULL, "populated_bytes") != pop_before; i++)
		usleep(100000);
	CU_ASSERT_EQUAL(vm_report_int(&q, NULL, "populated_bytes"), pop_before);

	CU_ASSERT(error_is(qmp_call(&q, "balloon", NULL), "GenericError",
			   "Parameter 'value' is missing"));
	CU_ASSERT(error_is(qmp_call(&q, "balloon", json_pack("{s:i}", "value", 0)),
			   "GenericError", "Parameter 'target' expects a size"));
	CU_ASSERT(error_is(qmp_call(&q, "balloon", json_pack("{s:s}", "value", "1G")),
			   "GenericError", "Invalid parameter type for 'value', expected: integer"));
	r = qmp_call(&q, "quit", NULL);
	json_decref(r);
	qmpc_close(&q);

	/* no balloon: QEMU's answer */
	snprintf(sock, sizeof(sock), "%s/nobal.qmp", test_run_dir());
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s run --kernel %s --ram 8M --pool 32M --qmp %s --name nobal "
			   "--balloon off >/dev/null 2>&1 &", gpmm_bin(), payload("spin"), sock), 0);
	CU_ASSERT_FATAL(qmp_open(&q, sock) == 0);
	CU_ASSERT(error_is(qmp_call(&q, "query-balloon", NULL), "DeviceNotActive",
			   "No balloon device has been activated"));
	CU_ASSERT(error_is(qmp_call(&q, "balloon", json_pack("{s:i}", "value", 1 << 20)),
			   "DeviceNotActive", "No balloon device has been activated"));
	r = qmp_call(&q, "quit", NULL);
	json_decref(r);
	qmpc_close(&q);
}

int register_virtio_suite(void)
{
	static const struct suite_test tests[] = {
		{ "blk: read, write, flush, id, errors", test_blk_read_write_flush },
		{ "blk: read-only", test_blk_readonly },
		{ "blk: refused disks", test_blk_refusals },
		{ "discard: edges", test_discard_edges },
		{ "discard: a page touched mid-discard", test_discard_touched_midway },
		{ "discard: racing migration, assembly, compaction", test_discard_races },
		{ "balloon: inflate and reporting return frames", test_balloon_returns_frames },
		{ "balloon: QMP balloon and query-balloon", test_balloon_qmp },
		{ "evil driver: gpmm survives", test_evil_driver },
		{ "evil net driver: gpmm survives", test_net_evil_driver },
	};
	return SUITE("virtio", tests);
}
