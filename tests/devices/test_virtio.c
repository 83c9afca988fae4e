// SPDX-License-Identifier: GPL-2.0
/*
 * virtio devices through their MMIO window, on the machine double: the
 * config space and register rules, a driver that sets up a queue, and a
 * driver whose ring lies outside guest RAM.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/virtio_abi.h"
#include "devices/virtio/virtio_balloon.h"
#include "tests/devices/bus.h"
#include "tests/suite.h"

#define RAM		(1ULL << 20)
/* with no disk the balloon takes the first slot */
#define BALLOON_REG(off)	(VIRTIO_MMIO_BASE + (off))
#define BALLOON_CFG		BALLOON_REG(VIRTIO_MMIO_CONFIG)
#define BALLOON_GSI		VIRTIO_MMIO_GSI_BASE

/* Where the test driver keeps its inflate queue (queue 0) and PFN array. */
#define QSIZE		8
#define DESC_GPA	0x10000ULL
#define AVAIL_GPA	0x11000ULL
#define USED_GPA	0x12000ULL
#define PFNS_GPA	0x13000ULL

static struct machine_double dbl;

/* A machine whose registry made a balloon and no disk. */
static void balloon_up(bool reporting)
{
	struct machine_config cfg = { .balloon = true, .balloon_reporting = reporting };

	bus_up(&dbl, RAM, &cfg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev_priv(&dbl.m, &virtio_balloon_device));
	CU_ASSERT_PTR_NULL(dev_priv(&dbl.m, &virtio_blk_device));
}

static uint32_t reg_read(uint64_t addr, unsigned int len)
{
	return bus_read(&dbl, BUS_MMIO, addr, len);
}

static void reg_write(uint64_t addr, uint32_t val, unsigned int len)
{
	bus_write(&dbl, BUS_MMIO, addr, val, len);
}

/*
 * The driver may write `actual` a byte or a half at a time. A write at
 * offset 5 put its pointer past the 4-byte staging copy before taking
 * the offset of `actual` off again: undefined behaviour that UBSan
 * reported (found by the virtio fuzz target; SANITIZE=1 runs this test
 * under UBSan).
 */
static void test_balloon_actual_bytes(void)
{
	const uint64_t actual = BALLOON_CFG + VIRTIO_BALLOON_CFG_ACTUAL;

	balloon_up(true);
	for (uint32_t i = 0; i < 4; i++)
		reg_write(actual + i, 0x11 * (i + 1), 1);
	CU_ASSERT_EQUAL(reg_read(actual, 4), 0x44332211);
	reg_write(actual + 2, 0xbeef, 2);
	CU_ASSERT_EQUAL(reg_read(actual, 4), 0xbeef2211);
	/* num_pages is the host's: a write reaching into it changes nothing */
	reg_write(actual - 1, 0xffff, 2);
	CU_ASSERT_EQUAL(reg_read(actual, 4), 0xbeef2211);
	bus_down(&dbl);
}

/* A driver's bring-up as Linux's virtio_mmio does it, VERSION_1 only. */
static void driver_up(uint64_t desc, uint64_t avail, uint64_t used)
{
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), 0, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS),
		  VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL), 1, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES), 1U << (VIRTIO_F_VERSION_1 - 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK, 4);
	CU_ASSERT(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_FEATURES_OK);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_SEL), 0, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NUM), QSIZE, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_DESC_LOW), (uint32_t)desc, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_DESC_HIGH), (uint32_t)(desc >> 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_AVAIL_LOW), (uint32_t)avail, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_AVAIL_HIGH), (uint32_t)(avail >> 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_USED_LOW), (uint32_t)used, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_USED_HIGH), (uint32_t)(used >> 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_READY), 1, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK, 4);
}

/* Put one device-readable buffer of @len bytes at @gpa on queue 0, notify. */
static void offer_buffer(uint64_t gpa, uint32_t len)
{
	struct virtq_desc d = { .addr = gpa, .len = len };
	uint16_t head = 0, idx = 1;

	memcpy(dbl.ram + DESC_GPA, &d, sizeof(d));
	memcpy(dbl.ram + AVAIL_GPA + VIRTQ_AVAIL_RING(0), &head, 2);
	memcpy(dbl.ram + AVAIL_GPA + 2, &idx, 2);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NOTIFY), 0, 4);
}

/*
 * Inflate: each PFN the guest gives goes back through the machine's
 * discard, the page reads zero, the buffer comes back used and the
 * device's interrupt line goes up. A PFN outside guest RAM is counted and
 * never reaches the machine.
 */
static void test_balloon_inflate_discards(void)
{
	uint32_t pfns[] = { 0x40, 0x41, (uint32_t)(RAM >> 12) + 5 };
	struct virtio_balloon_info info;
	uint16_t used_idx = 0;

	balloon_up(true);
	driver_up(DESC_GPA, AVAIL_GPA, USED_GPA);
	CU_ASSERT_FALSE(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_NEEDS_RESET);
	memset(dbl.ram + 0x40000, 0xaa, 2 * 4096);
	memcpy(dbl.ram + PFNS_GPA, pfns, sizeof(pfns));
	offer_buffer(PFNS_GPA, sizeof(pfns));

	CU_ASSERT_EQUAL(dbl.log.discarded_bytes, 2 * 4096);
	CU_ASSERT_EQUAL(dbl.ram[0x40000], 0);
	CU_ASSERT_EQUAL(dbl.ram[0x41fff], 0);
	memcpy(&used_idx, dbl.ram + USED_GPA + 2, 2);
	CU_ASSERT_EQUAL(used_idx, 1);
	CU_ASSERT_EQUAL(dbl.log.irq_level[BALLOON_GSI], 1);
	CU_ASSERT_EQUAL_FATAL(virtio_balloon_query(&dbl.m, &info, false), 0);
	CU_ASSERT_EQUAL(info.inflated_pages, 2);
	CU_ASSERT_EQUAL(info.bad_pfns, 1);
	/* the driver acknowledges: the line goes down */
	reg_write(BALLOON_REG(VIRTIO_MMIO_INTERRUPT_ACK),
		  reg_read(BALLOON_REG(VIRTIO_MMIO_INTERRUPT_STATUS), 4), 4);
	CU_ASSERT_EQUAL(dbl.log.irq_level[BALLOON_GSI], 0);
	bus_down(&dbl);
}

/*
 * A ring the driver places past the end of guest RAM is refused when the
 * queue is made ready: the device wants a reset, nothing is read or
 * written outside RAM (the double's guard pages would fault), nothing is
 * discarded.
 */
static void test_ring_outside_ram(void)
{
	balloon_up(false);
	driver_up(RAM - 16, AVAIL_GPA, USED_GPA);
	CU_ASSERT(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_NEEDS_RESET);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NOTIFY), 0, 4);
	CU_ASSERT_EQUAL(dbl.log.discards, 0);
	bus_down(&dbl);
}

/* A stop requested mid-chain ends the device's work early. */
static void test_stop_ends_chain_walk(void)
{
	uint32_t pfns[] = { 0x40, 0x41 };

	balloon_up(true);
	driver_up(DESC_GPA, AVAIL_GPA, USED_GPA);
	memcpy(dbl.ram + PFNS_GPA, pfns, sizeof(pfns));
	dbl.stopping = true;
	offer_buffer(PFNS_GPA, sizeof(pfns));
	CU_ASSERT_EQUAL(dbl.log.discards, 0);
	bus_down(&dbl);
}

static const struct suite_test tests[] = {
	{ "balloon: actual written a byte at a time", test_balloon_actual_bytes },
	{ "balloon: inflate discards through the machine", test_balloon_inflate_discards },
	{ "a ring outside guest RAM: needs reset", test_ring_outside_ram },
	{ "a stopping machine: no chain served", test_stop_ends_chain_walk },
};

int register_virtio_suite(void)
{
	return SUITE("virtio", tests);
}
