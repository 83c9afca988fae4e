// SPDX-License-Identifier: GPL-2.0
/* The payloads' virtio-mmio driver; see vdrv.h. */
#include "vdrv.h"

static uint64_t heap_next = VD_HEAP_BASE;

uint64_t vd_alloc(uint64_t bytes)
{
	uint64_t p = heap_next;

	bytes = (bytes + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	if (bytes > VD_HEAP_END - p)
		return 0;
	heap_next += bytes;
	memset((void *)(uintptr_t)p, 0, bytes);
	return p;
}

bool vdev_find(uint32_t id, struct vdev *d)
{
	/*
	 * Slots fill in order and reading past the last stops the VM (unclaimed
	 * MMIO): look only for a device the VM has.
	 */
	for (unsigned int i = 0; i < VIRTIO_MMIO_SLOTS; i++) {
		d->base = VIRTIO_MMIO_BASE + i * VIRTIO_MMIO_SLOT_SIZE;
		if (vd_read(d, VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC)
			return false;
		d->id = vd_read(d, VIRTIO_MMIO_DEVICE_ID);
		if (d->id == id)
			return true;
	}
	return false;
}

uint32_t vdev_negotiate(struct vdev *d, uint64_t features)
{
	vd_write(d, VIRTIO_MMIO_STATUS, 0);
	vd_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	vd_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	vd_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vd_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	vd_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vd_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	vd_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		 VIRTIO_STATUS_FEATURES_OK);
	return vd_read(d, VIRTIO_MMIO_STATUS);
}

bool vq_setup(struct vdev *d, struct vq *q, unsigned int index, uint16_t num)
{
	uint64_t desc = vd_alloc(VIRTQ_DESC_BYTES(num));
	uint64_t avail = vd_alloc(VIRTQ_AVAIL_BYTES(num) + 2);
	uint64_t used = vd_alloc(VIRTQ_USED_BYTES(num) + 2);

	*q = (struct vq){ .dev = d, .index = index, .num = num,
			  .desc = (volatile struct virtq_desc *)(uintptr_t)desc,
			  .avail = (volatile uint16_t *)(uintptr_t)avail,
			  .used = (volatile uint32_t *)(uintptr_t)used };
	vd_queue_regs(d, index, num, desc, avail, used);
	return vd_read(d, VIRTIO_MMIO_QUEUE_READY) == 1;
}

void vd_queue_regs(struct vdev *d, unsigned int index, uint32_t num, uint64_t desc,
		   uint64_t avail, uint64_t used)
{
	vd_write(d, VIRTIO_MMIO_QUEUE_SEL, index);
	vd_write(d, VIRTIO_MMIO_QUEUE_NUM, num);
	vd_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	vd_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	vd_write(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)avail);
	vd_write(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(avail >> 32));
	vd_write(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)used);
	vd_write(d, VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(used >> 32));
	vd_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
}

void vq_post(struct vq *q, const struct vseg *segs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		q->desc[i].addr = segs[i].addr;
		q->desc[i].len = segs[i].len;
		q->desc[i].flags = segs[i].flags | (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0);
		q->desc[i].next = (uint16_t)(i + 1 < n ? i + 1 : 0);
	}
	q->avail[2 + q->avail_idx % q->num] = 0;
	/* the entry before the index that publishes it (x86 keeps stores in order) */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	q->avail[1] = ++q->avail_idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	vd_write(q->dev, VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
}

bool vq_take_used(struct vq *q, uint32_t *len)
{
	volatile uint32_t *elem;

	if (vq_used_idx(q) == q->last_used)
		return false;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	elem = q->used + 1 + 2 * (q->last_used % q->num);
	*len = elem[1];
	q->last_used++;
	return true;
}

long vq_run(struct vq *q, const struct vseg *segs, unsigned int n)
{
	uint32_t len;

	vq_post(q, segs, n);
	return vq_take_used(q, &len) ? (long)len : -1;
}

void vd_fail(uint32_t code, const char *what)
{
	serial_puts("check failed (exit ");
	serial_put_dec(code);
	serial_puts("): ");
	serial_puts(what);
	serial_putc('\n');
	gpmm_exit(code);
}
