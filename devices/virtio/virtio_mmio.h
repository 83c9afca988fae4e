/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtio-mmio transport (version 2 registers), one instance per device
 * model: a 4 KiB register window at VIRTIO_MMIO_BASE + slot * 4 KiB, GSI
 * 16 + slot, level-triggered (high while InterruptStatus is not 0), and
 * the device announced to the ACPI tables as LNRO0005.
 *
 * Locking: one mutex per device (dev->lock) covers the registers, the
 * queues and the device model's state. The model's callbacks run with it
 * held, on the vCPU thread that wrote QueueNotify (synchronously), or on
 * the thread of a host request (QMP). It comes before m->mem_lock in the
 * lock order (vm.h): guest memory accesses populate under mem_lock.
 *
 * A guest decides how much work a notify is (the balloon's PFN arrays), so
 * a model whose work grows with what the guest wrote does it with dev->lock
 * dropped, and holds the lock only for bounded steps (taking a chain,
 * pushing it back): a host request never waits behind a guest. Whatever
 * the other threads did meanwhile is the model's to check when it takes
 * the lock again: the queue's generation (virtq.gen) tells whether the
 * ring it took a chain from still exists.
 */
#ifndef GPMM_VIRTIO_MMIO_H
#define GPMM_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/virtio_queue.h"

#define VIRTIO_MMIO_MAX_QUEUES	4

struct virtio_mmio_dev;

/* What a device model gives the transport. Callbacks run with dev->lock held. */
struct virtio_mmio_model {
	const char *name;
	uint32_t device_id;
	unsigned int queue_max;		/* largest queue size offered */
	uint32_t config_len;		/* bytes of config space from 0x100 */
	/* Queues that exist under the features the driver chose (<= MAX_QUEUES). */
	unsigned int (*nr_queues)(struct virtio_mmio_dev *dev);
	/* @len is 1, 2, 4 or 8 and [@off, @off + @len) inside config_len. */
	void (*config_read)(struct virtio_mmio_dev *dev, uint32_t off, uint8_t *data,
			    unsigned int len);
	/* false: the driver may not write there (counted as a bad access). */
	bool (*config_write)(struct virtio_mmio_dev *dev, uint32_t off, const uint8_t *data,
			     unsigned int len);
	/*
	 * Serve queue @q (set up, checked, the driver's features accepted).
	 * -EINVAL with the reason in @why: the ring is broken. May drop and
	 * retake dev->lock (see above); returns with it held.
	 */
	int (*notify)(struct virtio_mmio_dev *dev, unsigned int q, char *why);
	/* The driver reset the device: forget everything the driver gave. */
	void (*reset)(struct virtio_mmio_dev *dev);
};

/* What the report shows of one device. */
struct virtio_mmio_info {
	const char *name;
	uint64_t base;
	unsigned int gsi;
	uint32_t status;
	uint64_t driver_features;
	uint64_t notifies;
	uint64_t bad_rings;		/* times the device went to NEEDS_RESET */
	uint64_t bad_accesses;		/* register accesses it ignored */
	uint64_t resets;
	uint64_t irq_errors;		/* KVM_IRQ_LINE refused: the host's problem */
};

struct virtio_mmio_dev {
	struct machine *m;
	const struct virtio_mmio_model *model;
	void *priv;			/* the device model's */
	pthread_mutex_t lock;
	uint64_t base;
	unsigned int gsi;
	uint64_t features;		/* offered, VERSION_1 included */
	/* registers */
	uint32_t status, isr, config_gen;
	uint32_t dev_features_sel, drv_features_sel, queue_sel;
	uint64_t driver_features;
	bool irq_high;
	struct virtq vq[VIRTIO_MMIO_MAX_QUEUES];
	/* counters, under lock */
	uint64_t notifies, bad_rings, bad_accesses, resets, irq_errors;
};

/*
 * Create the transport for @model in the next free slot, register its
 * window on the VM's bus and announce it for ACPI. -ENOSPC when all slots
 * are taken.
 */
__must_check int virtio_mmio_create(struct machine *m, const struct virtio_mmio_model *model,
				    uint64_t features, void *priv,
				    struct virtio_mmio_dev **out);
void virtio_mmio_destroy(struct virtio_mmio_dev *dev);

/* lock held: a used buffer is ready (InterruptStatus bit 0, line up). */
void __virtio_mmio_used(struct virtio_mmio_dev *dev);
/* lock held: the config space changed (generation bumped, bit 1, line up). */
void __virtio_mmio_config_changed(struct virtio_mmio_dev *dev);
/*
 * lock held: the ring is broken (@why says how): DEVICE_NEEDS_RESET, the
 * config interrupt, a line on the console. For models that find it outside
 * notify (an I/O thread); notify returns -EINVAL instead.
 */
void __virtio_mmio_broken(struct virtio_mmio_dev *dev, const char *why);
/* lock held: the driver accepted @bit. */
bool __virtio_mmio_has(const struct virtio_mmio_dev *dev, unsigned int bit);
/* lock held: a notify of queue @q is served now (features agreed, ring ready, not broken). */
bool __virtio_mmio_can_serve(struct virtio_mmio_dev *dev, unsigned int q);
/* lock held: the driver has set DRIVER_OK and the device is not broken. */
bool __virtio_mmio_live(const struct virtio_mmio_dev *dev);

/* The VM's virtio devices, for reports: up to @max, returns how many. */
unsigned int virtio_mmio_list(struct machine *m, struct virtio_mmio_info *out,
			      unsigned int max);

#endif
