// SPDX-License-Identifier: GPL-2.0
/*
 * balloonfollow: a balloon driver that follows the host's target, as
 * Linux's does, for the QMP `balloon` / `query-balloon` tests. It touches
 * the top GPMM_FOLLOW_TOUCHED of RAM, says "ready", then forever: on a
 * config interrupt it reads num_pages and inflates (pages from the top of
 * RAM down, never below GPMM_FOLLOW_FLOOR) or deflates (and uses the pages
 * again) towards it, writing `actual` after each step; when the host hands
 * its stats buffer back it sends fresh stats. It never exits by itself.
 */
#include "vdrv.h"

#define QSIZE		64
#define BATCH		256	/* PFNs per buffer, as Linux sends */

static struct vdev dev;
static struct vq inflateq, deflateq, statsq;
static struct virtio_balloon_stat *stats;
static uint32_t *pfns;
static uint64_t top_pfn, held, max_held, stats_sent;

static void send_stats(void)
{
	struct vseg s = { (uintptr_t)stats, 3 * sizeof(*stats), 0 };

	stats[0].tag = VIRTIO_BALLOON_S_MEMTOT;
	stats[0].val = (top_pfn + 1) << 12;
	stats[1].tag = VIRTIO_BALLOON_S_MEMFREE;
	stats[1].val = ++stats_sent;
	/* what it could still give: the host's pressure asks no more */
	stats[2].tag = VIRTIO_BALLOON_S_AVAIL;
	stats[2].val = (max_held - held) << 12;
	vq_post(&statsq, &s, 1);
}

/* Inflate or deflate by up to BATCH pages; true if anything moved. */
static bool step(uint32_t target)
{
	uint64_t want = target < max_held ? target : max_held, n;
	struct vseg s = { (uintptr_t)pfns, 0, 0 };

	if (want == held)
		return false;
	n = want > held ? want - held : held - want;
	n = n < BATCH ? n : BATCH;
	for (uint64_t i = 0; i < n; i++)
		pfns[i] = (uint32_t)(top_pfn - (want > held ? held + i : held - 1 - i));
	s.len = (uint32_t)(n * 4);
	if (want > held) {
		VD_CHECK(vq_run(&inflateq, &s, 1) == 0, 20);
		held += n;
	} else {
		VD_CHECK(vq_run(&deflateq, &s, 1) == 0, 21);
		held -= n;
		/* the pages are the guest's again: use them */
		for (uint64_t i = 0; i < n; i++)
			*gpa_ptr(uint64_t, (uint64_t)pfns[i] << 12) = pfns[i];
	}
	vd_write(&dev, VIRTIO_MMIO_CONFIG + VIRTIO_BALLOON_CFG_ACTUAL, (uint32_t)held);
	return true;
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t want = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_BALLOON_F_STATS_VQ);
	uint32_t len;

	(void)ncpus;
	if (cpu)
		park();
	top_pfn = (ram_size >> 12) - 1;
	max_held = (ram_size - GPMM_FOLLOW_FLOOR) >> 12;
	VD_CHECK(vdev_find(VIRTIO_ID_BALLOON, &dev), 10);
	VD_CHECK(vdev_negotiate(&dev, want) & VIRTIO_STATUS_FEATURES_OK, 11);
	VD_CHECK(vq_setup(&dev, &inflateq, 0, QSIZE) && vq_setup(&dev, &deflateq, 1, QSIZE) &&
		 vq_setup(&dev, &statsq, 2, QSIZE), 12);
	stats = (struct virtio_balloon_stat *)(uintptr_t)vd_alloc(PAGE_SIZE);
	pfns = (uint32_t *)(uintptr_t)vd_alloc(BATCH * 4);
	send_stats();
	vdev_driver_ok(&dev);
	for (uint64_t p = ram_size - GPMM_FOLLOW_TOUCHED; p < ram_size; p += PAGE_SIZE)
		*gpa_ptr(uint64_t, p) = p;
	serial_puts("balloonfollow: ready\n");
	for (;;) {
		uint32_t isr = vd_read(&dev, VIRTIO_MMIO_INTERRUPT_STATUS);
		bool moved;

		if (isr)
			vd_write(&dev, VIRTIO_MMIO_INTERRUPT_ACK, isr);
		moved = step(vd_read(&dev, VIRTIO_MMIO_CONFIG + VIRTIO_BALLOON_CFG_NUM_PAGES));
		if (vq_take_used(&statsq, &len)) {
			send_stats();
			moved = true;
		}
		/* a register read is a VM exit: poll about every millisecond when idle */
		for (int i = 0; !moved && i < 1000; i++)
			cpu_relax();
	}
}
