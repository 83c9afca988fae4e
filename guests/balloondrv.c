// SPDX-License-Identifier: GPL-2.0
/*
 * balloondrv: a well-behaved balloon driver whose every step the host
 * checks from a checkpoint (abi.h: GPMM_BALLOON_*, the list of steps).
 * Inflate and report requests carry the guest's own pages; afterwards the
 * guest checks that what it gave reads as zeros and what it kept still
 * holds its data. Exits 0, or the number of the failed check.
 */
#include "vdrv.h"

#define QSIZE		64
#define MIB		(1ULL << 20)
#define PAGES(bytes)	((bytes) / PAGE_SIZE)

static struct vdev dev;
static struct vq inflateq, deflateq, statsq, reportq;
static struct virtio_balloon_stat *stats;
static uint64_t stats_sent;

/* One word per page, its value tied to its address. */
static inline uint64_t word_gpa(uint64_t page_gpa)
{
	return page_gpa + ((page_gpa >> 12) * 56 & (PAGE_SIZE - 1));
}

static void touch(uint64_t start, uint64_t len)
{
	for (uint64_t p = start; p < start + len; p += PAGE_SIZE)
		*gpa_ptr(uint64_t, word_gpa(p)) = word_gpa(p) ^ 0x5a5a5a5a5a5a5a5aULL;
}

static bool kept(uint64_t start, uint64_t len)
{
	for (uint64_t p = start; p < start + len; p += PAGE_SIZE)
		if (*gpa_ptr(uint64_t, word_gpa(p)) != (word_gpa(p) ^ 0x5a5a5a5a5a5a5a5aULL))
			return false;
	return true;
}

/* Given-back pages read as zeros: their word, and the first and last. */
static bool zeroed(uint64_t start, uint64_t len)
{
	for (uint64_t p = start; p < start + len; p += PAGE_SIZE)
		if (*gpa_ptr(uint64_t, word_gpa(p)) || *gpa_ptr(uint64_t, p) ||
		    *gpa_ptr(uint64_t, p + PAGE_SIZE - 8))
			return false;
	return true;
}

/* A PFN list for [start, start + len), in memory touched now. */
static uint64_t pfn_list(uint64_t start, uint64_t len)
{
	uint64_t list = vd_alloc(PAGES(len) * 4);

	for (uint64_t i = 0; i < PAGES(len); i++)
		gpa_ptr(uint32_t, list)[i] = (uint32_t)((start >> 12) + i);
	return list;
}

static void send_stats(void)
{
	struct vseg s = { (uintptr_t)stats, 2 * sizeof(*stats), 0 };

	stats[0].tag = VIRTIO_BALLOON_S_MEMTOT;
	stats[0].val = GPMM_BALLOON_RAM;
	stats[1].tag = VIRTIO_BALLOON_S_MEMFREE;
	stats[1].val = ++stats_sent;
	vq_post(&statsq, &s, 1);
}

static void setup(void)
{
	uint64_t want = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_BALLOON_F_STATS_VQ) |
			(1ULL << VIRTIO_BALLOON_F_REPORTING);

	VD_CHECK(vdev_find(VIRTIO_ID_BALLOON, &dev), 10);
	VD_CHECK(vdev_negotiate(&dev, want) & VIRTIO_STATUS_FEATURES_OK, 11);
	VD_CHECK(vq_setup(&dev, &inflateq, 0, QSIZE) && vq_setup(&dev, &deflateq, 1, QSIZE) &&
		 vq_setup(&dev, &statsq, 2, QSIZE) && vq_setup(&dev, &reportq, 3, QSIZE), 12);
	/* no fifth queue without FREE_PAGE_HINT */
	vd_write(&dev, VIRTIO_MMIO_QUEUE_SEL, 4);
	VD_CHECK(vd_read(&dev, VIRTIO_MMIO_QUEUE_NUM_MAX) == 0, 13);
	stats = (struct virtio_balloon_stat *)(uintptr_t)vd_alloc(PAGE_SIZE);
	send_stats();		/* before DRIVER_OK, as Linux does */
	vdev_driver_ok(&dev);
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	const uint64_t A = GPMM_BALLOON_A, B = GPMM_BALLOON_B, C = GPMM_BALLOON_C;
	uint64_t list_a, list_b;
	struct vseg seg;
	uint32_t len;

	(void)ncpus;
	if (cpu)
		park();
	VD_CHECK(ram_size == GPMM_BALLOON_RAM, 1);
	setup();

	touch(A, 4 * MIB);
	list_a = pfn_list(A, 2 * MIB);
	list_b = pfn_list(B, 3 * MIB);
	gpmm_checkpoint(GPMM_CHECKPOINT_BALLOON(1));

	seg = (struct vseg){ list_a, PAGES(2 * MIB) * 4, 0 };
	VD_CHECK(vq_run(&inflateq, &seg, 1) == 0, 20);
	gpmm_checkpoint(GPMM_CHECKPOINT_BALLOON(2));
	VD_CHECK(zeroed(A, 2 * MIB), 21);
	VD_CHECK(kept(A + 2 * MIB, 2 * MIB), 22);

	touch(B, 4 * MIB);
	gpmm_checkpoint(GPMM_CHECKPOINT_BALLOON(3));
	seg = (struct vseg){ list_b, PAGES(3 * MIB) * 4, 0 };
	VD_CHECK(vq_run(&inflateq, &seg, 1) == 0, 30);
	gpmm_checkpoint(GPMM_CHECKPOINT_BALLOON(4));
	VD_CHECK(zeroed(B, 3 * MIB), 31);
	VD_CHECK(kept(B + 3 * MIB, MIB), 32);

	touch(C, 2 * MIB);
	gpmm_checkpoint(GPMM_CHECKPOINT_BALLOON(5));
	/* the host asked for stats in checkpoint 5: the buffer came back */
	VD_CHECK(vq_take_used(&statsq, &len), 40);
	send_stats();
	seg = (struct vseg){ C, 2 * MIB, VIRTQ_DESC_F_WRITE };
	VD_CHECK(vq_run(&reportq, &seg, 1) == 0, 41);
	gpmm_checkpoint(GPMM_CHECKPOINT_BALLOON(6));
	VD_CHECK(zeroed(C, 2 * MIB), 42);

	/* taking pages back needs no more than telling, and they work */
	seg = (struct vseg){ list_a, 4 * 4, 0 };
	VD_CHECK(vq_run(&deflateq, &seg, 1) == 0, 50);
	touch(A, 16 * 1024);
	VD_CHECK(kept(A, 16 * 1024), 51);
	VD_CHECK(!(vd_read(&dev, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET), 52);
	serial_puts("balloondrv: ok\n");
	return GPMM_EXIT_OK;
}
