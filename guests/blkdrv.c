// SPDX-License-Identifier: GPL-2.0
/*
 * blkdrv: a well-behaved virtio-blk driver against the test's image
 * (abi.h: GPMM_VBLK_*). Reads one sector, then three through three
 * buffers, writes two sectors and reads them back, flushes, asks for the
 * ID (printed as "blk id: ..."), and checks the answers to requests that
 * must fail: past the end (IOERR), a length that is not whole sectors
 * (IOERR), a type gpmm does not implement (UNSUPP). On a read-only disk
 * (F_RO offered) the write must fail with IOERR and the data stay.
 * Exits 0 when all is as expected, else the number of the failed check.
 */
#include "vdrv.h"

#define QSIZE	64

static struct vdev dev;
static struct vq q;
static volatile struct virtio_blk_req_hdr *hdr;
static volatile uint8_t *status;

/* One request: header, @n data buffers, status. The used length, or -1. */
static long request(uint32_t type, uint64_t sector, const struct vseg *data,
		    unsigned int n, uint8_t *st)
{
	struct vseg segs[8];

	hdr->type = type;
	hdr->ioprio = 0;
	hdr->sector = sector;
	*status = 0xee;
	segs[0] = (struct vseg){ (uintptr_t)hdr, sizeof(*hdr), 0 };
	for (unsigned int i = 0; i < n; i++)
		segs[1 + i] = data[i];
	segs[1 + n] = (struct vseg){ (uintptr_t)status, 1, VIRTQ_DESC_F_WRITE };
	long len = vq_run(&q, segs, n + 2);

	*st = *status;
	return len;
}

/* Do the 8-byte words of @buf hold what disk offset @off onwards should? */
static bool holds(uint64_t buf, uint64_t len, uint64_t off, bool written)
{
	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t want = written ? GPMM_VBLK_WRITTEN(off + i) : GPMM_VBLK_PATTERN(off + i);

		if (*gpa_ptr(uint64_t, buf + i) != want)
			return false;
	}
	return true;
}

static void read_checks(uint64_t buf)
{
	struct vseg one = { buf, 512, VIRTQ_DESC_F_WRITE };
	struct vseg three[3] = {
		{ buf + 0x1000, 512, VIRTQ_DESC_F_WRITE },
		{ buf + 0x3000, 512, VIRTQ_DESC_F_WRITE },
		{ buf + 0x2000, 512, VIRTQ_DESC_F_WRITE },
	};
	uint8_t st;

	VD_CHECK(request(VIRTIO_BLK_T_IN, 5, &one, 1, &st) == 513, 20);
	VD_CHECK(st == VIRTIO_BLK_S_OK, 21);
	VD_CHECK(holds(buf, 512, 5 * 512, false), 22);
	VD_CHECK(request(VIRTIO_BLK_T_IN, 10, three, 3, &st) == 1537, 23);
	VD_CHECK(st == VIRTIO_BLK_S_OK, 24);
	VD_CHECK(holds(buf + 0x1000, 512, 10 * 512, false), 25);
	VD_CHECK(holds(buf + 0x3000, 512, 11 * 512, false), 26);
	VD_CHECK(holds(buf + 0x2000, 512, 12 * 512, false), 27);
}

static void write_checks(uint64_t buf, bool ro)
{
	uint64_t off = GPMM_VBLK_WRITE_SECTOR * 512;
	struct vseg out = { buf, 1024, 0 }, in = { buf + 0x1000, 1024, VIRTQ_DESC_F_WRITE };
	uint8_t st;

	for (uint64_t i = 0; i < 1024; i += 8)
		*gpa_ptr(uint64_t, buf + i) = GPMM_VBLK_WRITTEN(off + i);
	VD_CHECK(request(VIRTIO_BLK_T_OUT, GPMM_VBLK_WRITE_SECTOR, &out, 1, &st) == 1, 30);
	VD_CHECK(st == (ro ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK), 31);
	VD_CHECK(request(VIRTIO_BLK_T_FLUSH, 0, NULL, 0, &st) == 1, 32);
	VD_CHECK(st == VIRTIO_BLK_S_OK, 33);
	VD_CHECK(request(VIRTIO_BLK_T_IN, GPMM_VBLK_WRITE_SECTOR, &in, 1, &st) == 1025, 34);
	VD_CHECK(holds(buf + 0x1000, 1024, off, !ro), 35);
}

static void error_checks(uint64_t buf)
{
	struct vseg one = { buf, 512, VIRTQ_DESC_F_WRITE }, two = { buf, 1024, VIRTQ_DESC_F_WRITE };
	struct vseg odd = { buf, 100, VIRTQ_DESC_F_WRITE };
	uint8_t st;

	VD_CHECK(request(VIRTIO_BLK_T_IN, GPMM_VBLK_SECTORS, &one, 1, &st) == 1, 40);
	VD_CHECK(st == VIRTIO_BLK_S_IOERR, 41);
	VD_CHECK(request(VIRTIO_BLK_T_IN, GPMM_VBLK_SECTORS - 1, &two, 1, &st) == 1 &&
		 st == VIRTIO_BLK_S_IOERR, 42);
	VD_CHECK(request(VIRTIO_BLK_T_IN, 1ULL << 63, &one, 1, &st) == 1 &&
		 st == VIRTIO_BLK_S_IOERR, 43);
	VD_CHECK(request(VIRTIO_BLK_T_IN, 0, &odd, 1, &st) == 1 && st == VIRTIO_BLK_S_IOERR, 44);
	VD_CHECK(request(99, 0, &one, 1, &st) == 1 && st == VIRTIO_BLK_S_UNSUPP, 45);
	VD_CHECK(request(VIRTIO_BLK_T_DISCARD, 0, NULL, 0, &st) == 1 &&
		 st == VIRTIO_BLK_S_UNSUPP, 46);
	/* the device is still fine after all that */
	VD_CHECK(!(vd_read(&dev, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET), 47);
}

static void id_check(uint64_t buf)
{
	struct vseg id = { buf, VIRTIO_BLK_ID_BYTES, VIRTQ_DESC_F_WRITE };
	char text[VIRTIO_BLK_ID_BYTES + 1];
	uint8_t st;
	long len = request(VIRTIO_BLK_T_GET_ID, 0, &id, 1, &st);

	VD_CHECK(len >= 2 && len <= VIRTIO_BLK_ID_BYTES + 1 && st == VIRTIO_BLK_S_OK, 50);
	memcpy(text, (const void *)(uintptr_t)buf, VIRTIO_BLK_ID_BYTES);
	text[len - 1] = '\0';
	serial_puts("blk id: ");
	serial_puts(text);
	serial_putc('\n');
}

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus)
{
	uint64_t offered, capacity, buf;
	bool ro;

	(void)ram_size;
	(void)ncpus;
	if (cpu)
		park();
	VD_CHECK(vdev_find(VIRTIO_ID_BLOCK, &dev), 10);
	vd_write(&dev, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	offered = (uint64_t)vd_read(&dev, VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	vd_write(&dev, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	offered |= vd_read(&dev, VIRTIO_MMIO_DEVICE_FEATURES);
	VD_CHECK(offered & (1ULL << VIRTIO_F_VERSION_1), 11);
	VD_CHECK(!(offered & (1ULL << VIRTIO_RING_F_INDIRECT_DESC)), 12);
	ro = offered & (1ULL << VIRTIO_BLK_F_RO);
	VD_CHECK(vdev_negotiate(&dev, offered) & VIRTIO_STATUS_FEATURES_OK, 13);
	VD_CHECK(vq_setup(&dev, &q, 0, QSIZE), 14);
	vdev_driver_ok(&dev);
	capacity = vd_read(&dev, VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_CAPACITY) |
		   (uint64_t)vd_read(&dev, VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_CAPACITY + 4) << 32;
	VD_CHECK(capacity == GPMM_VBLK_SECTORS, 15);
	hdr = (volatile struct virtio_blk_req_hdr *)(uintptr_t)vd_alloc(PAGE_SIZE);
	status = (volatile uint8_t *)hdr + 64;
	buf = vd_alloc(4 * PAGE_SIZE);

	read_checks(buf);
	write_checks(buf, ro);
	error_checks(buf);
	id_check(buf);
	serial_puts(ro ? "blkdrv: ok (read-only)\n" : "blkdrv: ok\n");
	return GPMM_EXIT_OK;
}
