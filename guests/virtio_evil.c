// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_evil: a hostile driver against virtio-blk (slot 0, the test's
 * image) and virtio-balloon (slot 1). It breaks every rule it can think of
 * and checks after each attack that gpmm answered as a device should:
 *
 *  - registers: odd widths and offsets, writes to read-only registers,
 *    status games (DRIVER_OK before FEATURES_OK, features gpmm did not
 *    offer or without VERSION_1, bits cleared, NEEDS_RESET set by the
 *    driver), queue set up before the features, notifies of queues that
 *    are not there or not ready: all ignored, no ring broken;
 *  - ring placement: sizes that are 0, not a power of two or too big;
 *    rings outside RAM, straddling its end, in the PCI hole, wrapping
 *    past 2^64, misaligned: NEEDS_RESET, the queue not ready;
 *  - ring contents: head and next indices out of range, descriptor loops,
 *    avail idx jumps, lengths up to 0xffffffff, buffers straddling the end
 *    of RAM, in the PCI hole, wrapping, indirect descriptors, readable
 *    after writable, requests without header or status, buffers in the
 *    wrong direction: NEEDS_RESET, and nothing written to the buffers it
 *    gave (sentinels checked);
 *  - balloon PFNs outside RAM: skipped, the request still answered.
 *
 * Then it proves gpmm alive: after a reset a well-formed read returns the
 * image's data, a write lands (sector GPMM_EVIL_WRITE_SECTOR), the balloon
 * takes a page. A guard area it never hands to a device must be intact.
 * Exits 0, or the number of the failed check; prints how many times a
 * device needed a reset ("evil: N resets").
 */
#include "vdrv.h"

#define QSIZE		16
#define GUARD		0x700000ULL	/* 64 KiB nobody but us touches */
#define GUARD_LEN	0x10000ULL
#define SENTINEL	0xa5
#define STATUS_SENTINEL	0xee

static struct vdev blk, balloon;
static struct vq q;
static uint64_t ram, hdr_gpa, data_gpa, status_gpa, resets;

static inline uint64_t guard_word(uint64_t off)
{
	return 0x6775617264000000ULL | off;
}

static bool guard_intact(void)
{
	for (uint64_t off = 0; off < GUARD_LEN; off += 64)
		if (*gpa_ptr(uint64_t, GUARD + off) != guard_word(off))
			return false;
	return true;
}

static uint32_t status_of(struct vdev *d)
{
	return vd_read(d, VIRTIO_MMIO_STATUS);
}

/* Fresh device, features agreed, queue 0 not set up yet. */
static void negotiate(struct vdev *d)
{
	uint64_t want = 1ULL << VIRTIO_F_VERSION_1;

	if (d->id == VIRTIO_ID_BALLOON)
		want |= 1ULL << VIRTIO_BALLOON_F_REPORTING;
	VD_CHECK(vdev_negotiate(d, want) & VIRTIO_STATUS_FEATURES_OK, 2);
}

/* Fresh device with queue @qi working; the heap is not reused. */
static void bring_up(struct vdev *d, unsigned int qi)
{
	static uint64_t rings[2][4];
	unsigned int which = d->id == VIRTIO_ID_BALLOON;

	negotiate(d);
	if (!rings[which][qi]) {
		VD_CHECK(vq_setup(d, &q, qi, QSIZE), 3);
		rings[which][qi] = (uintptr_t)q.desc;
	} else {
		/* same rings again, zeroed: the device starts from 0 after a reset */
		memset((void *)(uintptr_t)rings[which][qi], 0, 3 * PAGE_SIZE);
		q.dev = d;
		q.index = qi;
		q.avail_idx = q.last_used = 0;
		q.desc = (volatile struct virtq_desc *)(uintptr_t)rings[which][qi];
		q.avail = (volatile uint16_t *)(uintptr_t)(rings[which][qi] + PAGE_SIZE);
		q.used = (volatile uint32_t *)(uintptr_t)(rings[which][qi] + 2 * PAGE_SIZE);
		q.num = QSIZE;
		vd_write(d, VIRTIO_MMIO_QUEUE_SEL, qi);
		vd_write(d, VIRTIO_MMIO_QUEUE_NUM, QSIZE);
		vd_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)(uintptr_t)q.desc);
		vd_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
		vd_write(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)(uintptr_t)q.avail);
		vd_write(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
		vd_write(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)(uintptr_t)q.used);
		vd_write(d, VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
		vd_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
		VD_CHECK(vd_read(d, VIRTIO_MMIO_QUEUE_READY) == 1, 4);
	}
	vdev_driver_ok(d);
	VD_CHECK(status_of(d) == (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
				  VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK), 5);
}

/*
 * The attack just made must have broken the device: NEEDS_RESET set, a
 * config interrupt pending, the buffers untouched. Then reset it.
 */
static void expect_broken(struct vdev *d, uint32_t code)
{
	VD_CHECK(status_of(d) & VIRTIO_STATUS_NEEDS_RESET, code);
	VD_CHECK(vd_read(d, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG, code);
	for (uint64_t i = 0; i < 512; i += 64)
		VD_CHECK(*gpa_ptr(uint8_t, data_gpa + i) == SENTINEL, code);
	VD_CHECK(*gpa_ptr(uint8_t, status_gpa) == STATUS_SENTINEL, code);
	VD_CHECK(guard_intact(), code);
	vd_write(d, VIRTIO_MMIO_STATUS, 0);
	VD_CHECK(status_of(d) == 0 && vd_read(d, VIRTIO_MMIO_INTERRUPT_STATUS) == 0, code);
	resets++;
}

static void expect_fine(struct vdev *d, uint32_t code)
{
	VD_CHECK(!(status_of(d) & VIRTIO_STATUS_NEEDS_RESET), code);
	VD_CHECK(guard_intact(), code);
}

static void fill_sentinels(void)
{
	memset((void *)(uintptr_t)data_gpa, SENTINEL, 512);
	*gpa_ptr(uint8_t, status_gpa) = STATUS_SENTINEL;
}

static void set_desc(unsigned int i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	q.desc[i].addr = addr;
	q.desc[i].len = len;
	q.desc[i].flags = flags;
	q.desc[i].next = next;
}

/* A read of sector 0 in descriptors 0 (header), 1 (data), 2 (status). */
static void good_read_chain(void)
{
	volatile struct virtio_blk_req_hdr *h = (void *)(uintptr_t)hdr_gpa;

	h->type = VIRTIO_BLK_T_IN;
	h->ioprio = 0;
	h->sector = 0;
	set_desc(0, hdr_gpa, 16, VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, data_gpa, 512, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
	set_desc(2, status_gpa, 1, VIRTQ_DESC_F_WRITE, 0);
}

/* Publish head @head at the next avail slot, with avail->idx + @extra, and notify. */
static void publish(uint16_t head, uint16_t extra)
{
	q.avail[2 + q.avail_idx % q.num] = head;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	q.avail_idx++;
	q.avail[1] = (uint16_t)(q.avail_idx + extra);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	vd_write(q.dev, VIRTIO_MMIO_QUEUE_NOTIFY, q.index);
}

static void register_attacks(struct vdev *d)
{
	volatile uint8_t *b8 = (volatile uint8_t *)d->base;
	volatile uint16_t *b16 = (volatile uint16_t *)d->base;
	volatile uint64_t *b64 = (volatile uint64_t *)d->base;
	uint32_t id = vd_read(d, VIRTIO_MMIO_DEVICE_ID);

	/* read-only registers written */
	vd_write(d, VIRTIO_MMIO_MAGIC_VALUE, 0);
	vd_write(d, VIRTIO_MMIO_VERSION, 1);
	vd_write(d, VIRTIO_MMIO_DEVICE_ID, 99);
	vd_write(d, VIRTIO_MMIO_VENDOR_ID, 0);
	vd_write(d, VIRTIO_MMIO_DEVICE_FEATURES, ~0U);
	vd_write(d, VIRTIO_MMIO_QUEUE_NUM_MAX, 65535);
	vd_write(d, VIRTIO_MMIO_INTERRUPT_STATUS, ~0U);
	vd_write(d, VIRTIO_MMIO_CONFIG_GENERATION, 7);
	vd_write(d, 0x0f0, ~0U);		/* no register there */
	VD_CHECK(vd_read(d, VIRTIO_MMIO_MAGIC_VALUE) == VIRTIO_MMIO_MAGIC, 100);
	VD_CHECK(vd_read(d, VIRTIO_MMIO_VERSION) == 2, 101);
	VD_CHECK(vd_read(d, VIRTIO_MMIO_DEVICE_ID) == id, 102);
	VD_CHECK(vd_read(d, VIRTIO_MMIO_INTERRUPT_STATUS) == 0, 103);
	/* odd widths and offsets: ignored, read as 0 */
	VD_CHECK(b8[0] == 0 && b16[1] == 0 && b64[0] == 0, 104);
	VD_CHECK(*(volatile uint32_t *)(d->base + 1) == 0, 105);
	b8[VIRTIO_MMIO_STATUS] = VIRTIO_STATUS_ACKNOWLEDGE;
	b16[VIRTIO_MMIO_QUEUE_NOTIFY / 2] = 0;
	b64[VIRTIO_MMIO_QUEUE_DESC_LOW / 8] = ~0ULL;
	*(volatile uint32_t *)(d->base + VIRTIO_MMIO_STATUS + 2) = ~0U;
	VD_CHECK(status_of(d) == 0, 106);
	/* config space: past its end, and 8 bytes across its end */
	VD_CHECK(*(volatile uint32_t *)(d->base + 0xffc) == 0, 107);
	(void)*(volatile uint64_t *)(d->base + 0x1fc);
	*(volatile uint64_t *)(d->base + 0xff8) = ~0ULL;
	expect_fine(d, 108);
}

static void status_attacks(struct vdev *d)
{
	/* DRIVER_OK before FEATURES_OK */
	vd_write(d, VIRTIO_MMIO_STATUS, 0);
	vd_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		 VIRTIO_STATUS_DRIVER_OK);
	VD_CHECK(!(status_of(d) & VIRTIO_STATUS_DRIVER_OK), 110);
	/* a feature gpmm did not offer, and no VERSION_1: FEATURES_OK refused */
	VD_CHECK(!(vdev_negotiate(d, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << 60)) &
		   VIRTIO_STATUS_FEATURES_OK), 111);
	VD_CHECK(!(vdev_negotiate(d, 0) & VIRTIO_STATUS_FEATURES_OK), 112);
	VD_CHECK(!(vdev_negotiate(d, (1ULL << VIRTIO_F_VERSION_1) |
				  (1ULL << VIRTIO_RING_F_INDIRECT_DESC)) &
		   VIRTIO_STATUS_FEATURES_OK), 113);
	/* queues before the features are agreed */
	vd_write(d, VIRTIO_MMIO_STATUS, 0);
	vd_write(d, VIRTIO_MMIO_QUEUE_SEL, 0);
	vd_write(d, VIRTIO_MMIO_QUEUE_NUM, QSIZE);
	vd_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	VD_CHECK(vd_read(d, VIRTIO_MMIO_QUEUE_READY) == 0, 114);
	vd_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	/* agreed; then clearing bits, setting NEEDS_RESET ourselves */
	negotiate(d);
	vd_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	VD_CHECK(status_of(d) & VIRTIO_STATUS_FEATURES_OK, 115);
	vd_write(d, VIRTIO_MMIO_STATUS, status_of(d) | VIRTIO_STATUS_NEEDS_RESET);
	VD_CHECK(!(status_of(d) & VIRTIO_STATUS_NEEDS_RESET), 116);
	/* notifies of a queue not ready, of queues that do not exist */
	vd_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	vd_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, 7);
	vd_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, 0xffff);
	vd_write(d, VIRTIO_MMIO_QUEUE_SEL, 9);
	VD_CHECK(vd_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX) == 0, 117);
	vd_write(d, VIRTIO_MMIO_QUEUE_NUM, QSIZE);
	vd_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	expect_fine(d, 118);
}

/* Queue 0 configured with these rings, then QueueReady = 1. */
static void setup_queue(struct vdev *d, uint32_t num, uint64_t desc, uint64_t avail,
			uint64_t used)
{
	negotiate(d);
	vd_queue_regs(d, 0, num, desc, avail, used);
}

static void placement_attacks(struct vdev *d, uint64_t ring)
{
	const uint64_t desc = ring, avail = ring + PAGE_SIZE, used = ring + 2 * PAGE_SIZE;
	const struct {
		uint32_t num;
		uint64_t desc, avail, used;
	} bad[] = {
		{ 0, desc, avail, used },
		{ 3, desc, avail, used },
		{ 512, desc, avail, used },
		{ 65536, desc, avail, used },
		{ 0xffffffffU, desc, avail, used },
		{ QSIZE, 1ULL << 40, avail, used },			/* far outside RAM */
		{ QSIZE, ram - 64, avail, used },			/* straddles RAM's end */
		{ QSIZE, ram, avail, used },				/* just past it */
		{ QSIZE, 0xd0000000ULL, avail, used },			/* on our own registers */
		{ QSIZE, 0xfffffffffffffff0ULL, avail, used },		/* wraps past 2^64 */
		{ QSIZE, desc, 0xffffffffffffffeeULL, used },
		{ QSIZE, desc, avail, 0xfffffffffffffff8ULL },
		{ QSIZE, desc + 8, avail, used },			/* misaligned */
		{ QSIZE, desc, avail + 1, used },
		{ QSIZE, desc, avail, used + 2 },
	};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fill_sentinels();
		setup_queue(d, bad[i].num, bad[i].desc, bad[i].avail, bad[i].used);
		VD_CHECK(vd_read(d, VIRTIO_MMIO_QUEUE_READY) == 0, 120 + i);
		expect_broken(d, 120 + i);
	}
}

/* One ring attack against blk: a chain (set up by @fn), published, must break the device. */
static void chain_attack(uint32_t code, void (*fn)(void), uint16_t head, uint16_t extra)
{
	bring_up(&blk, 0);
	fill_sentinels();
	good_read_chain();
	fn();
	publish(head, extra);
	expect_broken(&blk, code);
}

static void nothing(void) { }
static void next_out_of_range(void) { q.desc[1].next = 99; }
static void loop2(void) { q.desc[2].flags |= VIRTQ_DESC_F_NEXT; q.desc[2].next = 1; }
static void self_loop(void) { q.desc[1].next = 1; }
static void huge_len(void) { set_desc(1, data_gpa, 0xffffffffU, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2); }
static void straddle(void) { set_desc(1, ram - 0x800, 0x1000, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2); }
static void in_hole(void) { set_desc(1, 0xd0000000ULL, 512, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2); }
static void wraps(void) { set_desc(1, 0xfffffffffffff000ULL, 0x2000, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2); }
static void indirect(void) { q.desc[1].flags |= VIRTQ_DESC_F_INDIRECT; }
static void read_after_write(void)
{
	/* header, status (writable), then the data as readable */
	set_desc(1, status_gpa, 1, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
	set_desc(2, data_gpa, 512, 0, 0);
}
static void short_header(void) { q.desc[0].len = 8; }
static void no_status(void) { q.desc[1].flags &= ~VIRTQ_DESC_F_WRITE; q.desc[2].flags &= ~VIRTQ_DESC_F_WRITE; }
/* every descriptor in use, and the last one leads back to the first */
static void full_loop(void)
{
	for (unsigned int i = 3; i < QSIZE; i++)
		set_desc(i, data_gpa, 8, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, (uint16_t)((i + 1) % QSIZE));
	q.desc[2].flags |= VIRTQ_DESC_F_NEXT;
	q.desc[2].next = 3;
}

static void ring_attacks(void)
{
	chain_attack(150, nothing, 500, 0);		/* head past the queue */
	chain_attack(151, nothing, 0, QSIZE + 1);	/* avail idx jumps */
	chain_attack(152, nothing, 0, 0x8000);
	chain_attack(153, next_out_of_range, 0, 0);
	chain_attack(154, loop2, 0, 0);
	chain_attack(155, self_loop, 0, 0);
	chain_attack(156, full_loop, 0, 0);
	chain_attack(157, huge_len, 0, 0);
	chain_attack(158, straddle, 0, 0);
	chain_attack(159, in_hole, 0, 0);
	chain_attack(160, wraps, 0, 0);
	chain_attack(161, indirect, 0, 0);
	chain_attack(162, read_after_write, 0, 0);
	chain_attack(163, short_header, 0, 0);
	chain_attack(164, no_status, 0, 0);
	/* a broken device ignores notifies until it is reset */
	bring_up(&blk, 0);
	fill_sentinels();
	good_read_chain();
	publish(7, QSIZE + 5);
	good_read_chain();
	vd_write(&blk, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	expect_broken(&blk, 165);
}

/* A well-formed blk request of @type on sector @sector, data in @data_len bytes. */
static long blk_request(uint32_t type, uint64_t sector, uint64_t data, uint32_t data_len,
			bool write_data, uint8_t *st)
{
	volatile struct virtio_blk_req_hdr *h = (void *)(uintptr_t)hdr_gpa;
	struct vseg s[3] = {
		{ hdr_gpa, 16, 0 },
		{ data, data_len, write_data ? 0 : VIRTQ_DESC_F_WRITE },
		{ status_gpa, 1, VIRTQ_DESC_F_WRITE },
	};
	long len;

	h->type = type;
	h->ioprio = 0;
	h->sector = sector;
	len = vq_run(&q, s, 3);
	*st = *gpa_ptr(uint8_t, status_gpa);
	return len;
}

static void balloon_attacks(void)
{
	uint64_t list = vd_alloc(PAGE_SIZE);
	uint32_t *pfn = (uint32_t *)(uintptr_t)list;
	struct vseg s;

	/* PFNs outside RAM are data, not ring structure: skipped, answered */
	bring_up(&balloon, 0);
	pfn[0] = 0xffffffffU;
	pfn[1] = (uint32_t)(0xd0000000ULL >> 12);
	pfn[2] = (uint32_t)(ram >> 12);
	s = (struct vseg){ list, 12, 0 };
	VD_CHECK(vq_run(&q, &s, 1) == 0, 170);
	/* num_pages is the device's */
	vd_write(&balloon, VIRTIO_MMIO_CONFIG + VIRTIO_BALLOON_CFG_NUM_PAGES, 12345);
	VD_CHECK(vd_read(&balloon, VIRTIO_MMIO_CONFIG + VIRTIO_BALLOON_CFG_NUM_PAGES) == 0, 171);
	expect_fine(&balloon, 172);

	/* an inflate buffer the device would write */
	fill_sentinels();
	s = (struct vseg){ data_gpa, 16, VIRTQ_DESC_F_WRITE };
	vq_post(&q, &s, 1);
	expect_broken(&balloon, 173);
	/* a report buffer the device would only read (queue 2: reporting) */
	bring_up(&balloon, 2);
	fill_sentinels();
	s = (struct vseg){ data_gpa, PAGE_SIZE, 0 };
	vq_post(&q, &s, 1);
	expect_broken(&balloon, 174);
	/* a huge PFN list straddling the end of RAM */
	bring_up(&balloon, 0);
	fill_sentinels();
	s = (struct vseg){ ram - 8, 0xffffffffU, 0 };
	vq_post(&q, &s, 1);
	expect_broken(&balloon, 175);
	/* a report of a range that is not whole pages: nothing taken */
	bring_up(&balloon, 2);
	s = (struct vseg){ data_gpa + 1, 0x1001, VIRTQ_DESC_F_WRITE };
	VD_CHECK(vq_run(&q, &s, 1) == 0, 176);
	VD_CHECK(*gpa_ptr(uint8_t, data_gpa + 0x10) == SENTINEL, 177);
	expect_fine(&balloon, 178);
}

static void alive(void)
{
	uint64_t off = GPMM_EVIL_WRITE_SECTOR * 512;
	uint64_t list = vd_alloc(PAGE_SIZE), page = vd_alloc(PAGE_SIZE);
	struct vseg s;
	uint8_t st;

	bring_up(&blk, 0);
	VD_CHECK(blk_request(VIRTIO_BLK_T_IN, 3, data_gpa, 512, false, &st) == 513, 200);
	VD_CHECK(st == VIRTIO_BLK_S_OK, 201);
	for (uint64_t i = 0; i < 512; i += 8)
		VD_CHECK(*gpa_ptr(uint64_t, data_gpa + i) == GPMM_VBLK_PATTERN(3 * 512 + i), 202);
	for (uint64_t i = 0; i < 512; i += 8)
		*gpa_ptr(uint64_t, data_gpa + i) = GPMM_VBLK_WRITTEN(off + i);
	VD_CHECK(blk_request(VIRTIO_BLK_T_OUT, GPMM_EVIL_WRITE_SECTOR, data_gpa, 512, true, &st) == 1, 203);
	VD_CHECK(st == VIRTIO_BLK_S_OK, 204);
	VD_CHECK(blk_request(VIRTIO_BLK_T_FLUSH, 0, data_gpa, 0, false, &st) >= 0, 205);

	bring_up(&balloon, 0);
	*gpa_ptr(uint64_t, page) = 42;
	*gpa_ptr(uint32_t, list) = (uint32_t)(page >> 12);
	s = (struct vseg){ list, 4, 0 };
	VD_CHECK(vq_run(&q, &s, 1) == 0, 206);
	VD_CHECK(*gpa_ptr(uint64_t, page) == 0, 207);	/* given back: zeros */
	expect_fine(&blk, 208);
	expect_fine(&balloon, 209);
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	(void)ncpus;
	if (cpu)
		park();
	ram = ram_size;
	for (uint64_t off = 0; off < GUARD_LEN; off += 64)
		*gpa_ptr(uint64_t, GUARD + off) = guard_word(off);
	VD_CHECK(vdev_find(VIRTIO_ID_BLOCK, &blk), 1);
	VD_CHECK(vdev_find(VIRTIO_ID_BALLOON, &balloon), 1);
	VD_CHECK(blk.base == VIRTIO_MMIO_BASE && balloon.base == VIRTIO_MMIO_BASE + 0x1000, 1);
	hdr_gpa = vd_alloc(PAGE_SIZE);
	status_gpa = hdr_gpa + 512;
	data_gpa = vd_alloc(PAGE_SIZE);

	register_attacks(&blk);
	register_attacks(&balloon);
	status_attacks(&blk);
	status_attacks(&balloon);
	placement_attacks(&blk, vd_alloc(3 * PAGE_SIZE));
	placement_attacks(&balloon, vd_alloc(3 * PAGE_SIZE));
	ring_attacks();
	balloon_attacks();
	alive();
	VD_CHECK(guard_intact(), 250);
	serial_puts("evil: ");
	serial_put_dec(resets);
	serial_puts(" resets\n");
	return GPMM_EXIT_OK;
}
