// SPDX-License-Identifier: GPL-2.0
/*
 * netevil: a hostile driver against virtio-net (gpmm run --net ...). The
 * device serves its queues on an I/O thread, not on the notifying vCPU,
 * so each check waits for the device's answer, bounded by count. Attacks
 * on the transmit queue, each on a freshly reset device:
 *
 *  - a buffer running past the end of RAM, one 4 GiB long, one in the PCI
 *    hole, a chain whose next is itself, a next past the table, an avail
 *    idx far past what was posted: NEEDS_RESET and a config interrupt;
 *  - the transmit queue set up twice, the first ring left full of garbage:
 *    only the second is served;
 *  - a chain longer than any packet, one shorter than the header: given
 *    back unused, the device goes on.
 *
 * Then a well-formed packet is sent and comes back used, and a guard area
 * no buffer points at is intact. Exits 0, or the number of the check that
 * failed; prints how many resets it made ("netevil: N resets").
 */
#include "vdrv.h"

#define QSIZE		8
#define RXQ		0
#define TXQ		1
#define GUARD		0x700000ULL
#define GUARD_LEN	0x10000ULL
#define BUF		0x680000ULL	/* packet buffers, outside the vdrv heap */
#define WAIT_LOOPS	200000000UL	/* a bound, not a time: the device answers at once */

static struct vdev net;
static struct vq rx, tx;
static uint64_t ram, resets;

static uint64_t guard_word(uint64_t off)
{
	return 0x6e65746775617264ULL ^ off;
}

static bool guard_intact(void)
{
	for (uint64_t off = 0; off < GUARD_LEN; off += 64)
		if (*gpa_ptr(uint64_t, GUARD + off) != guard_word(off))
			return false;
	return true;
}

static uint32_t status_of(void)
{
	return vd_read(&net, VIRTIO_MMIO_STATUS);
}

/* Reset, features (VERSION_1 only), both queues in fresh rings, DRIVER_OK. */
static void bring_up(uint32_t code)
{
	VD_CHECK(vdev_negotiate(&net, 1ULL << VIRTIO_F_VERSION_1) & VIRTIO_STATUS_FEATURES_OK,
		 code);
	VD_CHECK(vq_setup(&net, &rx, RXQ, QSIZE), code);
	VD_CHECK(vq_setup(&net, &tx, TXQ, QSIZE), code);
	vdev_driver_ok(&net);
}

static void set_desc(struct vq *q, unsigned int i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	q->desc[i].addr = addr;
	q->desc[i].len = len;
	q->desc[i].flags = flags;
	q->desc[i].next = next;
}

/* Chain @head becomes avail entry @q->avail_idx, avail idx moves by @step; notify. */
static void post(struct vq *q, uint16_t head, uint16_t step)
{
	q->avail[2 + q->avail_idx % q->num] = head;
	q->avail_idx = (uint16_t)(q->avail_idx + step);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	q->avail[1] = q->avail_idx;
	vd_write(q->dev, VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
}

static bool wait_broken(void)
{
	for (unsigned long i = 0; i < WAIT_LOOPS; i++) {
		if (status_of() & VIRTIO_STATUS_NEEDS_RESET)
			return true;
		cpu_relax();
	}
	return false;
}

static bool wait_used(struct vq *q, uint16_t idx)
{
	for (unsigned long i = 0; i < WAIT_LOOPS; i++) {
		if (vq_used_idx(q) == idx)
			return true;
		if (status_of() & VIRTIO_STATUS_NEEDS_RESET)
			return false;
		cpu_relax();
	}
	return false;
}

static void expect_broken(uint32_t code)
{
	VD_CHECK(wait_broken(), code);
	VD_CHECK(vd_read(&net, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG, code);
	VD_CHECK(vq_used_idx(&tx) == 0, code);
	VD_CHECK(guard_intact(), code);
	resets++;
}

/* A frame of @len bytes behind a zero header at BUF + @off. */
static uint64_t frame(uint64_t off, uint32_t len)
{
	uint8_t *p = (uint8_t *)(uintptr_t)(BUF + off);

	memset(p, 0, 12 + len);
	memset(p + 12, 0xff, 6);		/* broadcast */
	p[12 + 6] = 0x02;			/* a locally administered source */
	p[12 + 12] = 0x88;
	p[12 + 13] = 0xb5;			/* local experimental ethertype */
	return BUF + off;
}

/* One breaking chain per case: descriptor 0's fields, and how far avail idx moves. */
static const struct {
	uint64_t addr_from_end;	/* 0: use addr as is */
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next, step;
} breaking[] = {
	{ 8, 0, 64, 0, 0, 1 },				/* past the end of RAM */
	{ 0, BUF, 0xffffffffU, 0, 0, 1 },		/* 4 GiB */
	{ 0, 0xd0000000ULL, 64, 0, 0, 1 },		/* the virtio windows */
	{ 0, BUF, 64, VIRTQ_DESC_F_NEXT, 0, 1 },	/* next is itself */
	{ 0, BUF, 64, VIRTQ_DESC_F_NEXT, QSIZE, 1 },	/* next past the table */
	{ 0, BUF, 64, 0, 0, 200 },			/* avail idx 200 ahead */
};

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t pkt;
	uint32_t len;

	(void)ncpus;
	if (cpu)
		park();
	ram = ram_size;
	for (uint64_t off = 0; off < GUARD_LEN; off += 64)
		*gpa_ptr(uint64_t, GUARD + off) = guard_word(off);
	VD_CHECK(vdev_find(VIRTIO_ID_NET, &net), 1);

	for (unsigned int i = 0; i < sizeof(breaking) / sizeof(breaking[0]); i++) {
		bring_up(2);
		set_desc(&tx, 0, breaking[i].addr_from_end ? ram - breaking[i].addr_from_end :
			 breaking[i].addr, breaking[i].len, breaking[i].flags, breaking[i].next);
		post(&tx, 0, breaking[i].step);
		expect_broken(10 + i);
	}

	/* the transmit queue set up twice: the first ring, full of garbage, is never read */
	bring_up(20);
	memset((void *)tx.desc, 0xee, VIRTQ_DESC_BYTES(QSIZE));
	vd_write(&net, VIRTIO_MMIO_QUEUE_SEL, TXQ);
	vd_write(&net, VIRTIO_MMIO_QUEUE_READY, 0);
	VD_CHECK(vq_setup(&net, &tx, TXQ, QSIZE), 21);
	VD_CHECK(!(status_of() & VIRTIO_STATUS_NEEDS_RESET), 22);

	/* no packet: longer than any frame, shorter than the header; given back unused */
	set_desc(&tx, 0, BUF, 0x10000, VIRTQ_DESC_F_NEXT, 1);
	set_desc(&tx, 1, BUF + 0x10000, 0x10000, 0, 0);
	post(&tx, 0, 1);
	VD_CHECK(wait_used(&tx, 1), 23);
	set_desc(&tx, 2, BUF, 4, 0, 0);
	post(&tx, 2, 1);
	VD_CHECK(wait_used(&tx, 2), 24);

	/* and a good packet still goes */
	pkt = frame(0x30000, 60);
	set_desc(&tx, 3, pkt, 12 + 60, 0, 0);
	post(&tx, 3, 1);
	VD_CHECK(wait_used(&tx, 3), 25);
	VD_CHECK(vq_take_used(&tx, &len) && vq_take_used(&tx, &len) && vq_take_used(&tx, &len), 26);
	VD_CHECK(!(status_of() & VIRTIO_STATUS_NEEDS_RESET), 27);
	VD_CHECK(guard_intact(), 28);
	serial_puts("netevil: ");
	serial_put_dec(resets);
	serial_puts(" resets\n");
	return 0;
}
