/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal virtio-mmio driver for the flat payloads: find a device in
 * gpmm's slots, negotiate, set up split queues, run one chain at a time.
 * gpmm serves a queue on the vCPU that writes QueueNotify, before that
 * write returns, so a chain is used (or not) by the time vq_run looks.
 *
 * Memory for rings and buffers comes from a bump allocator above 2 MiB
 * (below is the image, payload.ld); payloads keep their own tests clear of
 * [VD_HEAP_BASE, VD_HEAP_END).
 */
#ifndef GPMM_GUESTS_VDRV_H
#define GPMM_GUESTS_VDRV_H

#include "lib.h"
#include "../devices/virtio/virtio_abi.h"

#define VD_HEAP_BASE	0x200000ULL
#define VD_HEAP_END	0x600000ULL

struct vdev {
	uintptr_t base;
	uint32_t id;
};

struct vseg {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;		/* VIRTQ_DESC_F_WRITE: the device writes it */
};

struct vq {
	struct vdev *dev;
	unsigned int index;
	uint16_t num;
	volatile struct virtq_desc *desc;
	volatile uint16_t *avail;	/* flags, idx, ring[num] */
	volatile uint32_t *used;	/* flags|idx, then (id, len) pairs */
	uint16_t avail_idx;		/* the driver's next avail->idx */
	uint16_t last_used;
};

static inline uint32_t vd_read(const struct vdev *d, uint32_t off)
{
	return *(volatile uint32_t *)(d->base + off);
}

static inline void vd_write(const struct vdev *d, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(d->base + off) = v;
}

static inline uint16_t vq_used_idx(const struct vq *q)
{
	return (uint16_t)(q->used[0] >> 16);
}

/* The device with @id in gpmm's slots; it must be there (see vdrv.c). */
bool vdev_find(uint32_t id, struct vdev *d);
/*
 * Reset, then ACKNOWLEDGE, DRIVER, write @features, FEATURES_OK; returns
 * Status as read back (FEATURES_OK set if the device agreed).
 */
uint32_t vdev_negotiate(struct vdev *d, uint64_t features);
static inline void vdev_driver_ok(struct vdev *d)
{
	vd_write(d, VIRTIO_MMIO_STATUS, vd_read(d, VIRTIO_MMIO_STATUS) | VIRTIO_STATUS_DRIVER_OK);
}
/* Zeroed, page-aligned memory from the payload heap; 0 when it runs out. */
uint64_t vd_alloc(uint64_t bytes);
/* Set queue @index up with @num entries in fresh memory; true if it is ready. */
/* Program queue @index's size and ring addresses, whatever they are, then QueueReady = 1. */
void vd_queue_regs(struct vdev *d, unsigned int index, uint32_t num, uint64_t desc,
		   uint64_t avail, uint64_t used);
bool vq_setup(struct vdev *d, struct vq *q, unsigned int index, uint16_t num);
/* Publish a chain of @n buffers in descriptors 0..n-1 and notify. */
void vq_post(struct vq *q, const struct vseg *segs, unsigned int n);
/* The next used element: true and its length, or false if none is new. */
bool vq_take_used(struct vq *q, uint32_t *len);
/* vq_post, then the used length; -1 if the device did not use the chain. */
long vq_run(struct vq *q, const struct vseg *segs, unsigned int n);

/* Stop with @code and a line saying which check failed. */
__attribute__((noreturn)) void vd_fail(uint32_t code, const char *what);
#define VD_CHECK(cond, code) do { if (!(cond)) vd_fail(code, #cond); } while (0)

#endif
